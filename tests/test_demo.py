"""`mkb demo` end to end on a subset: real C++ builds, a real segfault, the table and the store."""

from __future__ import annotations

import sqlite3
import subprocess
import sys


def test_demo_subset(tmp_path, build_root):
    db = tmp_path / "demo.sqlite"
    cmd = [sys.executable, "-m", "multikernelbench.cli.main", "demo", "--task", "activation.relu", "--task",
           "reduce.sum_dim", "--db", str(db), "--build-root", str(build_root), "--no-progress",
           "--timing-budget", "0.5"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stdout + out.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT task_id, status FROM results ORDER BY task_id, status").fetchall()
        labels = conn.execute("SELECT model, candidate FROM labels").fetchall()
    statuses = {}
    for task_id, status in rows:
        statuses.setdefault(task_id, []).append(status)
    assert sorted(statuses["activation.relu"]) == ["correct", "crash"]  # shipped kernel + wrong/segfault.py
    assert sorted(statuses["reduce.sum_dim"]) == ["correct", "incorrect"]  # + wrong/wrong_shape.py
    assert {m for m, _ in labels} == {"shipped"} and len(labels) == 4
    assert "0 unexpected" in out.stdout and "speedup" in out.stdout
