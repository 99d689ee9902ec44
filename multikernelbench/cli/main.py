"""``mkb`` entry point.

Each module in this package that defines ``add_parser(subparsers)`` contributes one subcommand; the parser
it adds sets ``func`` (called with the parsed args, returning an exit code). Discovering modules keeps each
subcommand in its own file, so new stages plug in without touching a central if-chain.

Wrong arguments are handled here, once: argparse's own errors and a command's
:class:`~multikernelbench.cli._usage.UsageError` both print one line (``mkb <command>: <what is wrong>``) and
exit with status 2, before the command has written anything.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import pkgutil
import sys

import multikernelbench.cli as cli_pkg
from multikernelbench.cli._usage import USAGE_EXIT, UsageError
from multikernelbench.util.interrupt import on_ctrl_c


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (no usage block) with a pointer to ``--help``; subparsers
    inherit the class."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(USAGE_EXIT, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("multikernelbench")
    except PackageNotFoundError:  # run from a checkout that was never installed
        from multikernelbench import __version__

        return __version__


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="mkb", description="multikernelbench: LLM-written kernels, measured.")
    parser.add_argument("--version", action="version", version=f"mkb (multikernelbench) {_version()}")
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
    notice = getattr(args, "stop_notice", None)  # commands that Ctrl-C stops cleanly (util/interrupt.py)
    try:
        with on_ctrl_c(notice(args)) if notice is not None else contextlib.nullcontext():
            return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"mkb {args.command}: {exc}", file=sys.stderr)
        return USAGE_EXIT
    except BrokenPipeError:  # `mkb tasks --json | head` is normal use
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
