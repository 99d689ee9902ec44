"""``mkb`` entry point.

Each module in this package that defines ``add_parser(subparsers)`` contributes one subcommand; the parser
it adds sets ``func`` (called with the parsed args, returning an exit code). Discovering modules keeps each
subcommand in its own file, so new stages plug in without touching a central if-chain.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import multikernelbench.cli as cli_pkg


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mkb", description="multikernelbench: LLM-written kernels, measured.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(cli_pkg.__path__), key=lambda m: m.name):
        if info.name in ("main",) or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"multikernelbench.cli.{info.name}")
        if hasattr(module, "add_parser"):
            module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # `mkb tasks --json | head` is normal use
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
