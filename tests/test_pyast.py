"""The harness's parses survive a second thread parsing in the middle of them (CPython 3.11's AST converter keeps
one recursion counter per interpreter; CI at stop 49 lost an honest candidate to it on the build pool).

The race is forced, not waited for: a garbage-collector callback fires while the first thread is converting
its tree, lets a second thread parse, and waits for it (at most a second, so the serialised case cannot hang).
"""
from __future__ import annotations

import ast
import gc
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from multikernelbench.util import pyast

SOURCE = "\n".join(f"def f{i}(a, b):\n    return [x * {i} for x in range(a) if x % b]" for i in range(50))


def _inside_ast_parse() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code is ast.parse.__code__:
            return True
        frame = frame.f_back
    return False


def race(parse: Callable[[str], object]) -> tuple[bool, list[SystemError]]:
    """Parse SOURCE; in the middle of the conversion, another thread parses it too. Returns whether the
    interleaving happened and the SystemErrors either thread saw."""
    go, done = threading.Event(), threading.Event()
    errors: list[SystemError] = []
    fired: list[bool] = []
    me = threading.get_ident()

    def interleave(phase: str, _info: dict[str, int]) -> None:
        if phase == "start" and not fired and threading.get_ident() == me and _inside_ast_parse():
            fired.append(True)
            go.set()
            done.wait(1.0)

    def other() -> None:
        go.wait(10)
        try:
            parse(SOURCE)
        except SystemError as exc:
            errors.append(exc)
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    threshold = gc.get_threshold()
    gc.set_threshold(10)
    gc.callbacks.append(interleave)
    try:
        parse(SOURCE)
    except SystemError as exc:
        errors.append(exc)
    finally:
        gc.callbacks.remove(interleave)
        gc.set_threshold(*threshold)
        go.set()
        thread.join()
    return bool(fired), errors


def test_raw_ast_parse_loses_the_race_on_3_11() -> None:
    """The instrument works: plain ``ast.parse`` on this interpreter fails exactly as CI did."""
    fired, errors = race(ast.parse)
    assert fired
    if sys.version_info[:2] == (3, 11):
        assert errors and "recursion depth mismatch" in str(errors[0])


def test_harness_parse_survives_the_race() -> None:
    fired, errors = race(pyast.parse)
    assert fired
    assert errors == []


def test_harness_parse_is_ast_parse() -> None:
    assert ast.dump(pyast.parse(SOURCE)) == ast.dump(ast.parse(SOURCE))


def test_no_harness_module_parses_around_the_lock() -> None:
    """Every parse of the harness's packages goes through pyast (a new ``ast.parse`` on a build thread would
    bring the race back)."""
    root = Path(__file__).resolve().parents[1]
    offenders = [f"{path.relative_to(root)}:{n}"
                 for package in ("multikernelbench", "backends", "dataset_builder", "metrics")
                 for path in (root / package).rglob("*.py") if path.name != "pyast.py"
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if "ast.parse(" in line.split("#", 1)[0] and "pyast.parse(" not in line]
    assert offenders == []
