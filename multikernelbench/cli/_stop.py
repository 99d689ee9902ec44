"""What ``mkb eval``, ``mkb demo`` and ``mkb generate`` say when stopped by Ctrl-C (see util/interrupt.py):
how much their store holds, read at that moment, and the command line that resumes (the same one: finished
work is skipped on a rerun)."""

from __future__ import annotations

import shlex
import sqlite3
import sys
from pathlib import Path

from multikernelbench.util.interrupt import StopNotice


def _resume() -> str:
    return "rerun `" + shlex.join(["mkb", *sys.argv[1:]]) + "` (finished work is skipped)"


def _stored_results(db: Path) -> str:
    if not Path(db).exists():
        return "Nothing was stored yet."
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.5)
    try:
        (n,) = conn.execute("SELECT COUNT(*) FROM results").fetchone()
    except sqlite3.OperationalError:  # the file exists, its tables not yet
        return "Nothing was stored yet."
    finally:
        conn.close()
    return f"{n} result(s) are kept in {db}."


def _stored_lines(path: Path) -> str:
    if not Path(path).exists():
        return "Nothing was stored yet."
    with open(path, "rb") as fh:
        n = sum(1 for line in fh if line.strip())
    return f"{n} record(s) are kept in {path}."


def results_notice(args) -> StopNotice:
    return StopNotice(f"mkb {args.command}", _resume(), lambda: _stored_results(args.db))


def generations_notice(args) -> StopNotice:
    return StopNotice(f"mkb {args.command}", _resume(), lambda: _stored_lines(args.out))
