"""`mkb demo` end to end on a subset: real C++ builds, a real compile error, the table and the store."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys


def test_demo_subset(tmp_path, build_root):
    db = tmp_path / "demo.sqlite"
    cmd = [sys.executable, "-m", "multikernelbench.cli.main", "demo", "--task", "activation.tanh", "--task",
           "reduce.sum_dim", "--db", str(db), "--build-root", str(build_root), "--no-progress",
           "--timing-budget", "0.5"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    assert out.returncode == 0, out.stdout + out.stderr
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT l.candidate, r.status, r.record FROM labels l JOIN results r "
            "ON r.task_id = l.task_id AND r.code_hash = l.code_hash ORDER BY l.candidate").fetchall()
        models = {m for (m,) in conn.execute("SELECT DISTINCT model FROM labels")}
    statuses = {candidate: status for candidate, status, _ in rows}
    assert statuses == {
        "activation.tanh.py": "correct",
        "reduce.sum_dim.py": "correct",
        "wrong/compile_error.py": "compile_error",  # targets activation.tanh
        "wrong/wrong_shape.py": "incorrect",  # targets reduce.sum_dim
    }
    assert models == {"shipped"}
    assert "0 unexpected" in out.stdout and "activation.tanh" in out.stdout  # the table was printed
    for _, status, record in rows:
        if status == "correct":
            assert json.loads(record)["speedup"] > 0
