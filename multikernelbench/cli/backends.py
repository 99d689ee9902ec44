"""``mkb backends``: which platforms this machine can evaluate, and why not the others."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from multikernelbench.backends import available_backends


def add_parser(sub) -> None:
    p = sub.add_parser("backends", help="list platforms and whether their toolchain/device is present")
    p.set_defaults(func=run)


def run(args) -> int:
    table = Table(title="backends")
    table.add_column("backend")
    table.add_column("available")
    table.add_column("reason")
    for name, reason in available_backends().items():
        table.add_row(name, "[green]yes[/green]" if not reason else "[red]no[/red]", reason)
    Console().print(table)
    return 0
