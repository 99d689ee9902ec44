"""The order in which README's test command hands files to its two workers (tests/conftest.py).

A file whose tests are marked ``timing`` but missing from ``TIMING_FIRST`` is handed out mid-run: its worker then
holds the timing gate and idles until the other worker's current test ends (a C++ exemplar run: ~300 s on CI),
which is what happened to test_malloc_state.py. A name in ``LONGEST_FIRST`` that no longer exists means a
renamed long file lost its place and may be handed out last.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from types import ModuleType

TESTS = Path(__file__).resolve().parent


def _load_conftest() -> ModuleType:
    """This folder's conftest by its path: ``import conftest`` finds whichever conftest module pytest loaded
    first under that name (tests/real_vllm/ has one too: the full suite failed to collect this file so)."""
    spec = importlib.util.spec_from_file_location("mkb_tests_conftest", TESTS / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_CONFTEST = _load_conftest()
LONGEST_FIRST: tuple[str, ...] = _CONFTEST.LONGEST_FIRST
TIMING_FIRST: tuple[str, ...] = _CONFTEST.TIMING_FIRST


def _marks_timing(source: str) -> bool:
    """``pytest.mark.timing`` in the code (a decorator or a ``pytestmark``), not in a comment or a string."""
    return any(isinstance(n, ast.Attribute) and n.attr == "timing" and isinstance(n.value, ast.Attribute)
               and n.value.attr == "mark" and isinstance(n.value.value, ast.Name) and n.value.value.id == "pytest"
               for n in ast.walk(ast.parse(source)))


def _timing_files() -> set[str]:
    return {p.name for p in TESTS.glob("test_*.py") if _marks_timing(p.read_text())}


def test_every_timing_file_is_handed_out_first():
    found = _timing_files()
    # the scan sees the mark as a decorator and in a pytestmark, alone or in a list
    assert {"test_malloc_state.py", "test_fresh_inputs.py", "test_sandbox_kernel.py"} <= found, found
    assert not _marks_timing('"""pytest.mark.timing"""\n# @pytest.mark.timing\n')
    assert found <= set(TIMING_FIRST), sorted(found - set(TIMING_FIRST))


def test_the_ordered_names_are_files_of_the_suite():
    missing = [name for name in LONGEST_FIRST if not (TESTS / name).is_file()]
    assert not missing, missing
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST), "a file named twice"
