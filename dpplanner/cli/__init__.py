"""dpplanner-cli: the plan tools without a window.

Every command reads a .dpplan file (or the name of a shipped example, e.g. "census"), goes
through the same validation as the window, and prints plain text or, with --json, one JSON
document. Exit status: 0 on success, 2 on bad input (the message goes to stderr, no traceback).

Modules: ``arguments`` (the commands and options), ``totals_commands`` (compose, curve, report,
validate), ``budget_commands`` (allocate, target), ``release_commands`` (export-opendp,
check-opendp), ``output`` (reading PLAN, tables, JSON), ``long_work`` (--time-limit and the words
of the progress line), ``terminal`` (safe output, the progress line, Ctrl+C).
"""

from __future__ import annotations

import sys
from typing import Optional, Sequence

from dpplanner.cli import terminal
from dpplanner.cli.arguments import build_parser
from dpplanner.cli.long_work import LongWork, checked_time_limit
from dpplanner.cli.output import UserError
from dpplanner.model.files import PlanFileError
from dpplanner.model.typed import parse_text
from dpplanner.model.validation import BUDGET_RULES, PlanError


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; what it prints is safe for a terminal (``terminal``)."""
    command = next((a for a in (argv if argv is not None else sys.argv[1:]) if not a.startswith("-")), "")
    return terminal.on_terminal(lambda: _run(argv), f"dpplanner-cli {command}".rstrip())


def _run(argv: Optional[Sequence[str]]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage/help
        return int(exc.code or 0)
    if getattr(args, "points", None) is not None and args.points < 2:
        print("dpplanner-cli: error: --points must be at least 2", file=sys.stderr)
        return 2
    if getattr(args, "eta", None) is not None:
        try:        # the plan's own rule for eta: one source of ranges and messages
            args.eta = parse_text(BUDGET_RULES["eta"], args.eta, "--eta")
        except PlanError as exc:
            print(f"dpplanner-cli: error: {exc}", file=sys.stderr)
            return 2
    try:
        if hasattr(args, "time_limit"):     # the limit's clock starts before the plan is read
            args.work = LongWork(checked_time_limit(args.time_limit))
        return args.func(args)
    except (UserError, PlanFileError, PlanError, ValueError) as exc:  # ValueError: engine checks
        print(f"dpplanner-cli: error: {terminal.plain(str(exc))}", file=sys.stderr)
        return 2


__all__ = ["main", "build_parser"]
