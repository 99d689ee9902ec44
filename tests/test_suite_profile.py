"""``--suite-profile`` (tests/_suite_profile.py) writes one line per test, and its figures tell waiting from work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_TESTS = '''
import subprocess, sys, time

def test_sleeps():
    time.sleep(0.5)

def test_burns():
    t = time.process_time()
    while time.process_time() - t < 0.5:
        pass

def test_burns_in_a_child():
    subprocess.run([sys.executable, "-c", "import time\\nt = time.process_time()\\n"
                    "while time.process_time() - t < 0.5: pass"], check=True)
'''


def _run(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_inner.py").write_text(_TESTS)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests._suite_profile", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path),
                           str(tmp_path / "test_inner.py"), *extra],
                          cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")},
                               "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})  # a session of its own, not an xdist worker


def test_each_test_gets_its_wall_and_cpu(tmp_path):
    out = tmp_path / "profile.jsonl"
    proc = _run(tmp_path, "--suite-profile", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {r["test"].split("::")[-1]: r for r in map(json.loads, out.read_text().splitlines())}
    assert set(rows) == {"test_sleeps", "test_burns", "test_burns_in_a_child"}, rows
    sleeps, burns, child = rows["test_sleeps"], rows["test_burns"], rows["test_burns_in_a_child"]
    assert sleeps["wall_s"] >= 0.5 and sleeps["cpu_s"] + sleeps["children_cpu_s"] < 0.3, sleeps
    assert burns["cpu_s"] >= 0.5 and burns["children_cpu_s"] < 0.1, burns
    assert child["children_cpu_s"] >= 0.5 and child["cpu_s"] < 0.3, child
    assert all(r["worker"] == "main" and r["start"] > 0 for r in rows.values())
    assert sleeps["start"] < burns["start"] < child["start"]


def test_nothing_written_without_the_option(tmp_path):
    proc = _run(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 passed" in proc.stdout and not list(tmp_path.glob("*.jsonl"))


def _script(monkeypatch):
    """scripts/ is no package: loaded from its file (registered for the run: its dataclass needs its module)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("suite_profile", REPO / "scripts" / "suite_profile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "suite_profile", module)
    spec.loader.exec_module(module)
    return module


def test_the_summary_names_the_idle_worker_and_the_waiting_tests(tmp_path, monkeypatch):
    """scripts/suite_profile.py: gw1 ran out of files 20 s before gw0's end; the sleeper waited 29 of its 30 s."""
    rows = [{"test": "tests/test_a.py::test_builds", "worker": "gw0", "start": 100.0, "wall_s": 60.0, "cpu_s": 1.0,
             "children_cpu_s": 55.0},
            {"test": "tests/test_b.py::test_sleeps", "worker": "gw1", "start": 100.0, "wall_s": 30.0, "cpu_s": 0.5,
             "children_cpu_s": 0.5},
            {"test": "tests/test_b.py::test_quick", "worker": "gw1", "start": 130.0, "wall_s": 10.0,
             "cpu_s": 9.0, "children_cpu_s": 0.0}]
    path = tmp_path / "profile.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    script = _script(monkeypatch)
    lines = script.report(script.read(path))
    assert lines[0] == "3 tests, 60 s from the first start to the last end, 66 CPU-s", lines
    assert "  gw1: +0 s to +40 s (idle after its last test: 20 s), tests 40 s wall, 10 CPU-s" in lines, lines
    assert "  gw0: +0 s to +60 s (idle after its last test: 0 s), tests 60 s wall, 56 CPU-s" in lines, lines
    files = lines[lines.index("files by wall (top 25): wall s, CPU-s") + 1:][:2]
    assert files == ["  tests/test_a.py: 60, 56", "  tests/test_b.py: 40, 10"], lines
    waiting = lines[lines.index("tests by wall not spent on CPU (top 25): wall s, CPU-s") + 1]
    assert waiting == "  tests/test_b.py::test_sleeps: 30, 1", lines
