"""`python -m fuxi_notebook demo`: run the demo agent (no API key needed)."""

from __future__ import annotations

import argparse
import asyncio
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuxi_notebook")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("demo", help="an agent fixes a failing test in a tiny project")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import demo_main

        return asyncio.run(demo_main())
    return 2


if __name__ == "__main__":
    sys.exit(main())
