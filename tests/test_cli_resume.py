"""`mkb eval` killed mid-run resumes without redoing finished work (real subprocesses, real SIGKILL)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

TASKS = ["activation.relu", "activation.sigmoid", "activation.tanh", "activation.elu", "reduce.sum_dim",
         "reduce.mean_dim"]

SOURCE = '''import time
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, *args):
        super().__init__()

    def forward(self, x):
        time.sleep(0.2)
        return torch.zeros_like(x)  # wrong on purpose: this test is about resuming, not about kernels
'''


def _rows(db: Path) -> dict[str, float]:
    if not db.exists():
        return {}
    try:
        with sqlite3.connect(db) as conn:
            return dict(conn.execute("SELECT task_id, created FROM results").fetchall())
    except sqlite3.OperationalError:
        return {}


def _cmd(sols: Path, db: Path, build_root: Path) -> list[str]:
    return [sys.executable, "-m", "multikernelbench.cli.main", "eval", "--backend", "cpu", "--solutions",
            str(sols), "--db", str(db), "--build-root", str(build_root), "--allow-code-execution",
            "--no-progress", "--json", "--seed", "5", "--compile-workers", "1"]


def test_kill_and_resume(tmp_path, build_root):
    sols = tmp_path / "sols"
    sols.mkdir()
    for task_id in TASKS:
        (sols / f"{task_id}.py").write_text(SOURCE + f"# {task_id}\n")  # distinct code hashes
    db = tmp_path / "r.sqlite"
    proc = subprocess.Popen(_cmd(sols, db, build_root), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and len(_rows(db)) < 2:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    first = _rows(db)
    assert 2 <= len(first) < len(TASKS), "the run should have been killed mid-way"

    out = subprocess.run(_cmd(sols, db, build_root), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    second = _rows(db)
    assert set(second) == set(TASKS)
    for task_id, created in first.items():
        assert second[task_id] == created, f"{task_id} was evaluated again"
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert sorted(r["task_id"] for r in lines) == sorted(TASKS)
    assert all(r["status"] == "incorrect" for r in lines)


def test_eval_refuses_without_opt_in(tmp_path):
    sols = tmp_path / "sols"
    sols.mkdir()
    (sols / "activation.relu.py").write_text(SOURCE)
    env = {k: v for k, v in os.environ.items() if k != "MKB_ALLOW_CODE_EXECUTION"}
    cmd = [a for a in _cmd(sols, tmp_path / "x.sqlite", tmp_path / "b") if a != "--allow-code-execution"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 3
    assert "--allow-code-execution" in out.stderr and "MKB_ALLOW_CODE_EXECUTION" in out.stderr
