"""Usage errors: a wrong argument ends in one line that names it and the closest valid names, exit status 2.

Why one exception type: every subcommand checks its arguments *before* it writes anything (a results store, a
generations file) and raises :class:`UsageError`; ``mkb``'s entry point catches it once and prints
``mkb <command>: <message>``. The checks for the names every command takes — task ids, categories, backends,
files and folders — live here so every command words them alike and suggests the same way (difflib).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from pathlib import Path

#: The exit status of a usage error (argparse's own, so scripts see one code for every wrong argument).
USAGE_EXIT = 2


class UsageError(Exception):
    """A wrong argument: the message is one line a person can act on; nothing has been written yet."""


def closest(value: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """The valid names nearest to ``value``; a name that ``value`` is a prefix or part of counts as near."""
    names = sorted(set(choices))
    near = difflib.get_close_matches(value, names, n=n, cutoff=0.6)
    for name in names:
        if len(near) >= n:
            break
        if value and name not in near and (name.startswith(value) or f".{value}" in name):
            near.append(name)
    return near


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """``"; did you mean a, b?"`` or ``""`` — the tail of an error message."""
    near = closest(value, choices)
    return f"; did you mean {', '.join(near)}?" if near else ""


def unknown(kind: str, value: str, choices: Sequence[str], listing: str = "") -> UsageError:
    """``unknown task 'x'; did you mean y?`` (with ``listing``, e.g. "see `mkb tasks`", when nothing is near)."""
    tail = did_you_mean(value, choices)
    if not tail:
        tail = f" ({listing})" if listing else f" (valid: {', '.join(sorted(choices))})"
    return UsageError(f"unknown {kind} {value!r}{tail}")


def check_backend(name: str) -> str:
    from multikernelbench.backends import backend_names

    names = backend_names()
    if name not in names:
        raise unknown("backend", name, names)
    return name


def select_tasks(categories: Sequence[str] | None = None, ids: Sequence[str] | None = None,
                 suite: list | None = None) -> list:
    """The suite (``suite``: already loaded) filtered by category and id, every name checked (an unknown one is
    a UsageError, never an empty selection)."""
    from multikernelbench.tasks import load_suite

    suite = load_suite() if suite is None else suite
    known_cats = sorted({t.category for t in suite})
    for cat in categories or ():
        if cat not in known_cats:
            raise unknown("category", cat, known_cats)
    known_ids = [t.id for t in suite]
    for task_id in ids or ():
        if task_id not in known_ids:
            raise unknown("task", task_id, known_ids, listing="`mkb tasks` lists them")
    return [t for t in suite if (not categories or t.category in categories) and (not ids or t.id in ids)]


def _missing(what: str, path: Path) -> UsageError:
    parent = path.parent if str(path.parent) else Path(".")
    siblings = [p.name for p in parent.iterdir()] if parent.is_dir() else []
    tail = did_you_mean(path.name, siblings)
    if not parent.is_dir():
        tail = f" (nor does its folder {parent})"
    return UsageError(f"{what} {path} does not exist{tail}")


def check_dir(path: Path, what: str) -> Path:
    path = Path(path)
    if not path.is_dir():
        if path.exists():
            raise UsageError(f"{what} {path} is not a folder")
        raise _missing(what, path)
    return path


def check_file(path: Path, what: str) -> Path:
    path = Path(path)
    if not path.is_file():
        if path.exists():
            raise UsageError(f"{what} {path} is not a file")
        raise _missing(what, path)
    return path
