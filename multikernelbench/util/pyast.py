"""``ast.parse`` that is safe to call from several threads at once.

CPython 3.11 keeps the AST converter's recursion counter in one per-interpreter state: two threads converting a
tree at the same moment (a garbage collection inside one conversion runs a finaliser, the finaliser gives up the
GIL, the other thread starts its own conversion) clobber each other's counter and one of them raises
``SystemError: AST constructor recursion depth mismatch`` (CPython gh-106905). The pipeline builds candidates on a
thread pool and every build parses the candidate and its reference for the static checks, so a run of honest
candidates lost one to this race (CI at stop 49). Every parse in the harness goes through :func:`parse`, which
holds one process-wide lock: the race is process-wide, so the lock has to be too. Parsing a candidate takes
about a millisecond; the builds it serialises spend their time in compilers.
"""
from __future__ import annotations

import ast
import threading

_CONVERTER = threading.RLock()  # re-entrant: a finaliser that parses during a parse must not hang


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, one thread at a time."""
    with _CONVERTER:
        return ast.parse(source, filename)
