"""Start the dpplanner window: ``dpplanner [PLAN]`` (argument parsing and startup only)."""

from __future__ import annotations

import argparse
import sys

import dpplanner


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="dpplanner",
        description="Plan differential-privacy budgets in a desktop window. "
                    "For the command line, use dpplanner-cli.")
    parser.add_argument("plan", nargs="?", help="a .dpplan file to open")
    parser.add_argument("--version", action="version", version=f"dpplanner {dpplanner.__version__}")
    parser.add_argument("--smoke-test", action="store_true",
                        help="open the window offscreen, compute, save and reload a plan, then exit "
                             "(0 on success); used to test the installed or packaged app")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.smoke_test:
        from dpplanner.gui import smoke

        return smoke.run()
    from dpplanner.gui.app import run

    return run(args.plan)


if __name__ == "__main__":
    sys.exit(main())
