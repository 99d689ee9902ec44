"""scripts/suite_cpu.py gives a test file the CPU of the processes its tests started, which ``--suite-profile``
alone misses until they are reaped: a real pytest session under the sampler, one file whose test leaves a busy
child running past its end (never reaped by it), one that sleeps."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_BURNS = '''
import subprocess, sys, time

def test_leaves_a_busy_child():
    # Burns ~1.2 s of CPU, most of it after this test returns; reaped only at interpreter exit, by nobody here.
    subprocess.Popen([sys.executable, "-c", "import time\\nt = time.process_time()\\n"
                      "while time.process_time() - t < 1.2: pass"])
    time.sleep(0.2)  # its start well inside this test (start times in /proc are whole clock ticks)
'''

_SLEEPS = '''
import time

def test_sleeps():
    time.sleep(2.0)
'''


def _tool():
    spec = importlib.util.spec_from_file_location("suite_cpu", REPO / "scripts" / "suite_cpu.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_late_child_counts_to_the_file_that_started_it(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_a.py").write_text(_BURNS)
    (tmp_path / "test_b.py").write_text(_SLEEPS)
    procs, profile = tmp_path / "procs.jsonl", tmp_path / "profile.jsonl"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")},
           "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "suite_cpu.py"), "run", str(procs), "--",
                           sys.executable, "-m", "pytest", "-q", "-p", "tests._suite_profile", "-p", "no:cacheprovider",
                           "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path),
                           str(tmp_path / "test_a.py"), str(tmp_path / "test_b.py"), "--suite-profile", str(profile)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [json.loads(x) for x in profile.read_text().splitlines()]
    assert all("pid" in r for r in rows), rows
    a = next(r for r in rows if "test_a.py" in r["test"])
    assert a["children_cpu_s"] < 0.3, a  # the profile alone does not see the child: it outlived the test
    tool = _tool()
    per_file, kinds = tool.attribute([json.loads(x) for x in procs.read_text().splitlines()], rows)
    files = {Path(k).name: v for k, v in per_file.items()}
    assert files["test_a.py"] >= 0.8, per_file  # the child's ~1.2 s, less what the sampler's ends miss
    assert files.get("test_b.py", 0.0) < 0.3, per_file
    out = subprocess.run([sys.executable, str(REPO / "scripts" / "suite_cpu.py"), "report", str(procs), str(profile)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "test_a.py" in out.stdout, out.stdout + out.stderr
