"""The fast tier's rule (tests/_fast_tier.py) fails an unmarked test over ``--fast-limit``, only when asked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_TESTS = '''
import time
import pytest

@pytest.fixture(scope="module")
def costly():
    time.sleep(0.4)

def test_quick():
    pass

def test_sleeps_unmarked():
    time.sleep(0.4)

def test_pays_a_module_fixture(costly):
    pass

@pytest.mark.slow
def test_sleeps_marked():
    time.sleep(0.4)
'''


def _run(tmp_path: Path, *extra: str) -> tuple[int, str]:
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n")
    (tmp_path / "test_inner.py").write_text(_TESTS)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests._fast_tier", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path),
                           str(tmp_path / "test_inner.py"), *extra],
                          cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})  # no hypothesis: ~2 s
    return proc.returncode, proc.stdout + proc.stderr


def test_unmarked_tests_over_the_limit_fail_when_asked(tmp_path):
    code, out = _run(tmp_path, "--fast-limit", "0.2")
    assert code == 1, out
    assert "2 failed, 2 passed" in out, out
    assert "FAILED" in out and "test_sleeps_unmarked" in out and "test_pays_a_module_fixture" in out, out
    assert "over --fast-limit 0.2 s: mark it @pytest.mark.slow" in out, out
    assert "FAILED test_inner.py::test_sleeps_marked" not in out and "FAILED test_inner.py::test_quick" not in out


def test_no_limit_without_the_option(tmp_path):
    code, out = _run(tmp_path)
    assert code == 0 and "4 passed" in out, out
