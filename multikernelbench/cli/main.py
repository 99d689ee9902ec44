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
from typing import NoReturn

import multikernelbench.cli as cli_pkg
from multikernelbench.cli._usage import USAGE_EXIT, UsageError
from multikernelbench.util.interrupt import on_ctrl_c


class OneLineParser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (no usage block) with a pointer to ``--help``; subparsers
    inherit the class."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_EXIT, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("multikernelbench")
    except PackageNotFoundError:  # run from a checkout that was never installed
        from multikernelbench import __version__

        return __version__


EXAMPLES = """examples:
  mkb demo                                     a real evaluation of shipped CPU kernels, ending in a table
  mkb tasks --category activation              the tasks of one category (shapes for this machine)
  mkb prompt activation.relu --backend cuda    the prompt a model gets for one task
  mkb generate --model gpt-5-mini --backend cuda --category activation --samples 4 --out gens.jsonl
  mkb generate --hf ./my-model --backend cpu --task activation.relu --out gens.jsonl
  mkb eval --backend cpu --solutions my_solutions --db results.sqlite --allow-code-execution
  mkb eval --backend cuda --generations gens.jsonl --db results.sqlite --allow-code-execution
  mkb report --db results.sqlite               tables, plots and an HTML page

`mkb COMMAND --help` for a command's options."""


def command_names() -> list[str]:
    """The subcommand modules of this package (one per command, named as the command), found without importing
    them."""
    return sorted(info.name for info in pkgutil.iter_modules(cli_pkg.__path__)
                  if info.name != "main" and not info.name.startswith("_"))


def chosen_command(argv: list[str] | None) -> str | None:
    """The command ``argv`` names (its first argument that is not an option), when it is one of ours."""
    first = next((a for a in (argv or []) if not a.startswith("-")), None)
    return first if first in command_names() else None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """With ``argv`` naming a command, only that command's module is imported: several import torch (~1-3 s),
    and a wrong argument to another command should be answered before that."""
    parser = OneLineParser(prog="mkb", description="multikernelbench: LLM-written kernels, measured.",
                           epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mkb (multikernelbench) {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    only = chosen_command(argv)
    first = next((a for a in (argv or []) if not a.startswith("-")), None)
    for name in command_names():
        if only is not None and name != only:
            continue
        if only is None and first is not None:  # not a command: argparse names the valid ones, no import
            sub.add_parser(name)
            continue
        module = importlib.import_module(f"multikernelbench.cli.{name}")
        if hasattr(module, "add_parser"):
            module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
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
