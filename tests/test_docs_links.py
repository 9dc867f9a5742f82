"""Every relative link and image in README.md, CHANGELOG.md and docs/ resolves: the file exists, and
a ``#fragment`` names a heading of that page (as GitHub makes anchors of headings)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from doc_pages import PAGES, ROOT
from dpplanner.help_docs import anchor

#: [text](target) and ![alt](target), the target up to a space or the closing parenthesis.
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~)")


def _prose(text: str) -> str:
    """The page without its fenced code blocks and inline code (their brackets are not links)."""
    out, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def anchors(page: Path) -> set[str]:
    found, seen = set(), {}
    for line in _prose(page.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            base = anchor(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def links() -> list[tuple[str, str]]:
    return [(page.relative_to(ROOT).as_posix(), target) for page in PAGES
            for target in LINK.findall(_prose(page.read_text(encoding="utf-8")))]


def test_the_pages_have_links_to_check():
    assert len(links()) > 30


@pytest.mark.parametrize("page, target", links())
def test_a_relative_link_resolves(page, target):
    if re.match(r"[a-z][a-z0-9+.-]*:", target):       # http:, https:, mailto:
        return
    path, _, fragment = target.partition("#")
    source = ROOT / page
    resolved = (source.parent / path).resolve() if path else source
    assert resolved.exists(), f"{page}: the link {target!r} names {resolved}, which does not exist"
    assert ROOT in resolved.parents or resolved == ROOT, f"{page}: {target!r} leaves the repository"
    if fragment:
        assert resolved.suffix == ".md", f"{page}: {target!r}: a fragment of a file that is not a page"
        assert fragment in anchors(resolved), \
            f"{page}: {target!r}: no heading of {resolved.name} has the anchor #{fragment}"


def test_anchor_follows_github():
    assert anchor("macOS (Apple silicon / Intel)") == "macos-apple-silicon--intel"
    assert anchor("The `.dpplan` file format") == "the-dpplan-file-format"
    assert anchor("Composing the noise itself: `compose_mechanisms`") == \
        "composing-the-noise-itself-compose_mechanisms"


def test_the_pages_link_only_to_what_the_packaged_app_ships():
    """The Help window follows these links inside the packaged app, which carries README.md,
    CHANGELOG.md and docs/ (packaging/dpplanner.spec) and nothing else of the repository."""
    shipped = [ROOT / "docs", ROOT / "README.md", ROOT / "CHANGELOG.md"]
    for page, target in links():
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or not page.startswith("docs/"):
            continue
        path = target.partition("#")[0]
        resolved = ((ROOT / page).parent / path).resolve() if path else ROOT / page
        assert any(resolved == s or s in resolved.parents for s in shipped), \
            f"{page}: {target!r} leads outside what the packaged app ships"
