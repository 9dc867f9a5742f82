"""Does an (edited) release script still match its plan? The opposite direction of ``export``.

Three things are compared with what dpplanner writes for the plan today: the PLAN block (every
number the script builds and checks with), its digest line, and the script's code outside the
blocks a user may edit (DATA and CUSTOM) and the header's date. Each difference is reported with
where it is; no difference means the script releases exactly what the plan certified. A theorem
is the same theorem by its registry name or its label (scripts exported before the PLAN block
carried labels name it by its name).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from dpplanner.engine.theorems import REGISTRY
from dpplanner.model.plan import Plan

from .export import DIGEST_LINE, plan_digest, render_script, script_plan

_EDITABLE = (("# ==== DATA:", "# ==== end of DATA"), ("# ==== CUSTOM:", "# ==== end of CUSTOM"))
_PLAN = ("# ==== PLAN:", "# ==== end of PLAN")


@dataclass(frozen=True)
class CheckResult:
    matches: bool
    differences: tuple[str, ...]


def check_script(text: str, plan: Plan) -> CheckResult:
    """Compare a script's text with the script ``plan`` exports (ExportError if it cannot)."""
    want_plan = script_plan(plan)
    diffs: list[str] = []
    try:
        got_plan, got_digest = _plan_block(text)
    except ValueError as exc:
        return CheckResult(False, (str(exc),))
    diffs += _compare("PLAN", _by_label(got_plan), want_plan)
    if got_digest != plan_digest(got_plan):
        diffs.append("PLAN_DIGEST does not match the PLAN block (the block was edited by hand)")
    diffs += _code_differences(text, render_script(plan))
    return CheckResult(not diffs, tuple(diffs))


def _plan_block(text: str) -> tuple[dict, str]:
    lines = _between(text.splitlines(), *_PLAN)
    if lines is None:
        raise ValueError("no PLAN block found (the '# ==== PLAN' and '# ==== end of PLAN' lines)")
    body = "\n".join(lines)
    cut = body.rfind(DIGEST_LINE)
    if not body.startswith("PLAN = ") or cut < 0:
        raise ValueError("the PLAN block must hold 'PLAN = {...}' and then 'PLAN_DIGEST = ...'")
    try:
        plan = ast.literal_eval(body[len("PLAN = "):cut])
        digest = ast.literal_eval(body[cut + len(DIGEST_LINE):].strip())
    except (SyntaxError, ValueError) as exc:
        raise ValueError(f"the PLAN block is not a Python literal any more: {exc}") from None
    if not isinstance(plan, dict):
        raise ValueError("PLAN is not a dictionary")
    return plan, digest


def _by_label(block: dict) -> dict:
    """``block`` with its theorem and its totals' keys by the registry's labels, as exported
    today (a name is only wording: the digest is checked over the block as written)."""
    label = {t.name: t.label for t in REGISTRY}
    out = dict(block)
    if isinstance(out.get("theorem"), str):
        out["theorem"] = label.get(out["theorem"], out["theorem"])
    totals = out.get("totals")
    if isinstance(totals, dict):
        renamed = {label.get(k, k) if isinstance(k, str) else k: v for k, v in totals.items()}
        if len(renamed) == len(totals):     # (a theorem twice, by name and label, stays a difference)
            out["totals"] = renamed
    return out


def _compare(where: str, got, want) -> list[str]:
    """Every path at which two JSON-like values differ, e.g. PLAN.statistics[2].scale."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = []
        for key in want.keys() | got.keys():
            if key not in got:
                out.append(f"{where}.{key} is missing (the plan has {want[key]!r})")
            elif key not in want:
                out.append(f"{where}.{key} is not in the plan")
            else:
                out += _compare(f"{where}.{key}", got[key], want[key])
        return sorted(out)
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{where} has {len(got)} entries; the plan has {len(want)}"]
        out = []
        for i, (g, w) in enumerate(zip(got, want)):
            out += _compare(f"{where}[{i}]", g, w)
        return out
    if got != want or type(got) is not type(want) and not _same_number(got, want):
        return [f"{where} is {got!r}; the plan has {want!r}"]
    return []


def _same_number(a, b) -> bool:
    return isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b \
        and not isinstance(a, bool) and not isinstance(b, bool)


def _between(lines: list[str], start: str, end: str):
    begin = next((i for i, line in enumerate(lines) if line.startswith(start)), None)
    stop = next((i for i, line in enumerate(lines) if line.startswith(end)), None)
    if begin is None or stop is None or stop < begin:
        return None
    return lines[begin + 1:stop]


def _fixed_code(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the code a user must not edit: all but the editable blocks, the
    PLAN block (compared above) and the generated header line."""
    lines = text.splitlines()
    skip = set()
    for start, end in _EDITABLE + (_PLAN,):
        begin = next((i for i, line in enumerate(lines) if line.startswith(start)), None)
        stop = next((i for i, line in enumerate(lines) if line.startswith(end)), None)
        if begin is not None and stop is not None:
            skip.update(range(begin + 1, stop))
    return [(i + 1, line) for i, line in enumerate(lines)
            if i not in skip and not line.startswith("# Generated by dpplanner")]


def _code_differences(text: str, reference: str) -> list[str]:
    got, want = _fixed_code(text), _fixed_code(reference)
    if [g for _, g in got] == [w for _, w in want]:
        return []
    for (number, g), (_, w) in zip(got, want):
        if g != w:
            return [f"the script's code differs from the generated one at line {number}: "
                    f"{g.strip()!r} (generated: {w.strip()!r})"]
    return [f"the script's code has {len(got)} fixed lines; the generated one has {len(want)}"]
