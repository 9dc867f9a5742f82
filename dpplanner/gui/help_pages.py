"""Plain-language help: one short page per composition theorem, and the About box."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

import dpplanner

PAGES: dict[str, tuple[str, str]] = {
    "basic": ("Basic composition", """
<p>Add up the budgets: releasing statistics that are (ε<sub>1</sub>, δ<sub>1</sub>), …,
(ε<sub>k</sub>, δ<sub>k</sub>)-differentially private is (Σε<sub>i</sub>, Σδ<sub>i</sub>)-DP in total.</p>
<p><b>When it applies:</b> always - also when later queries are chosen after seeing earlier answers,
and also when the budgets themselves are chosen adaptively.</p>
<p><b>When to use it:</b> for a handful of statistics, or with δ<sub>g</sub> = 0, where nothing beats it.
For many statistics it is far too pessimistic.</p>
<p>Sources: Dwork, McSherry, Nissim, Smith (2006); Dwork et al. (2006); Dwork &amp; Roth, Thm 3.16.</p>"""),
    "advanced": ("Advanced composition", """
<p>With a little extra δ, the total ε grows like the square root of the number of statistics
instead of linearly: roughly ε·√(2k ln(1/δ′)) for k statistics of ε each.</p>
<p><b>When it applies:</b> the per-statistic budgets are fixed before any answer is released.</p>
<p><b>When to use it:</b> a quick, well-known bound for many small-ε statistics. dpplanner reports the
best of the Dwork-Rothblum-Vadhan form, the Kairouz-Oh-Viswanath heterogeneous closed form and
Steinke's form, and says which one won.</p>
<p>Sources: Dwork, Rothblum, Vadhan (2010); Kairouz, Oh, Viswanath (2015) Thm 3.5.</p>"""),
    "kov": ("Optimal homogeneous composition (KOV)", """
<p>The exact smallest total ε when every statistic has the <i>same</i> (ε, δ).</p>
<p><b>When it applies:</b> only when all statistics are identical; otherwise the row says
"n/a" and the tooltip explains why.</p>
<p>Source: Kairouz, Oh, Viswanath (2015) Thm 3.3.</p>"""),
    "optimal": ("Optimal composition", """
<p>The exact smallest total ε any analysis can prove for a fixed list of (ε<sub>i</sub>, δ<sub>i</sub>)
releases. Computing it exactly is hard in general, so dpplanner computes it to the accuracy η
you choose and shows a <b>certified bracket</b> [lower, upper]: the true optimum lies inside, and
the number reported as the total is the upper end, so it is always safe to use.</p>
<p><b>When it applies:</b> the budgets are fixed in advance (the usual case for a planned release).</p>
<p>Sources: Kairouz, Oh, Viswanath (2015); Murtagh &amp; Vadhan (2016/2018); for plans of many
different ε, the "connect the dots" discretisation of Doroshenko et al. (2022), whose error
dpplanner bounds and subtracts for the lower end.</p>"""),
    "concurrent": ("Concurrent composition", """
<p>For interactive mechanisms that run at the same time and whose questions may interleave.
For (ε, δ)-DP the total is the same as optimal composition.</p>
<p><b>When to use it:</b> when several analysts (or several interactive tools) query the data in
parallel.</p>
<p>Sources: Vadhan &amp; Wang (2021); Lyu (2022); Vadhan &amp; Zhang (2023).</p>"""),
    "filter": ("Privacy filters", """
<p>When the budget of each next statistic may itself depend on earlier answers, ordinary
composition theorems do not apply. A privacy filter keeps a running account and halts before the
global budget is exceeded. The row shows the global ε a filter needs to admit the whole plan.</p>
<p><b>When to use it:</b> exploratory releases where the plan is not fixed in advance.</p>
<p>Sources: Rogers, Roth, Ullman, Vadhan (2016); Whitehouse, Ramdas, Rogers, Wu (2023).</p>"""),
}


def about_html() -> str:
    return (f"<h3>dpplanner {dpplanner.__version__}</h3>"
            "<p>Plan differential-privacy budgets: compose (ε<sub>i</sub>, δ<sub>i</sub>) releases "
            "under every composition theorem, with a sound optimal-composition engine. Every total "
            "ε shown is a valid upper bound.</p><p>MIT licence.</p>")


class HelpDialog(QDialog):
    """A small non-modal reader for one page."""

    def __init__(self, title: str, html: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setHtml(f"<h3>{title}</h3>{html}")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        self.resize(520, 380)
