"""dpplanner-cli export-opendp and check-opendp: from a plan to its OpenDP release script and back."""

from __future__ import annotations

import json
import os
from pathlib import Path

from dpplanner.model.files import read_regular_file
from dpplanner.release import ExportError, check_script, export_script

#: Largest script read by check-opendp (a generated script of 20,000 statistics is a few MB).
MAX_SCRIPT_BYTES = 50 * 1024 * 1024


def cmd_export_opendp(args, load, print_json, user_error) -> int:
    plan = load(args.plan)
    try:
        text = export_script(plan, args.output)
    except ExportError as exc:
        raise user_error(str(exc)) from None
    customs = sum(1 for s in plan if s.kind.value == "custom")
    if args.json:
        print_json({"script": args.output, "statistics": len(plan), "custom_to_fill": customs,
                    "lines": text.count("\n")})
        return 0
    print(f"wrote {args.output}: {len(plan)} statistics, pinned to opendp==0.16.*")
    if customs:
        print(f"fill in the {customs} custom statistic(s) in its CUSTOM block: until then it refuses to run")
    print(f"run it with: python {args.output} DATA.csv  (set the columns in its DATA block or with --column)")
    return 0


def cmd_check_opendp(args, load, print_json, user_error) -> int:
    plan = load(args.plan)
    path = Path(args.script)
    if not os.path.lexists(path):
        raise user_error(f"{path}: no such file")
    try:
        text = read_regular_file(path, MAX_SCRIPT_BYTES).decode("utf-8")
    except UnicodeDecodeError:
        raise user_error(f"{path}: the file is not UTF-8 text") from None
    try:
        result = check_script(text, plan)
    except ExportError as exc:
        raise user_error(str(exc)) from None
    if args.json:
        print_json({"script": str(path), "matches": result.matches,
                    "differences": list(result.differences)})
    elif result.matches:
        print(f"{path} matches the plan: it releases exactly the noise the plan certified")
    else:
        print(f"{path} does NOT match the plan:")
        for d in result.differences:
            print(f"  - {d}")
    return 0 if result.matches else 1


def add_commands(sub, load, print_json, user_error) -> None:
    """Register both commands on the CLI's subparsers."""
    def bind(func):
        return lambda args: func(args, load, print_json, user_error)

    p = sub.add_parser("export-opendp", help="write the plan's OpenDP release script",
                       description="Write a self-contained Python script (pinned to opendp==0.16.*) "
                                   "that reads a CSV, checks every measurement against the plan and "
                                   "releases the statistics with their errors.")
    p.add_argument("plan", metavar="PLAN", help=".dpplan file or example name")
    p.add_argument("-o", "--output", metavar="SCRIPT", required=True, help="where to write the script")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.set_defaults(func=bind(cmd_export_opendp))
    p = sub.add_parser("check-opendp", help="tell whether a release script still matches its plan "
                                            "(exit status 1 when it does not)",
                       description="Compare an exported (possibly edited) release script with the one "
                                   "the plan exports today: its PLAN block, digest and fixed code.")
    p.add_argument("script", metavar="SCRIPT", help="the release script")
    p.add_argument("plan", metavar="PLAN", help=".dpplan file or example name")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    p.set_defaults(func=bind(cmd_check_opendp))


__all__ = ["add_commands", "json"]
