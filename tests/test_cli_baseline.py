"""``mkb baseline`` on the CPU backend, through the engine: real torch.compile in the worker, resumable
output, and a compile that does not finish in time leaves the eager time (instead of hanging the run)."""

from __future__ import annotations

import json
import subprocess
import sys


def _baseline(tmp_path, out, *extra: str) -> list[dict]:
    cmd = [sys.executable, "-m", "multikernelbench.cli.main", "baseline", "--backend", "cpu", "--out", str(out),
           "--timing-budget-s", "0.2", "--db", str(tmp_path / f"{out.stem}.sqlite"), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_precompiled_then_timed_and_resumed(tmp_path):
    out = tmp_path / "b.jsonl"
    rows = _baseline(tmp_path, out, "--task", "activation.relu")
    assert [r["task_id"] for r in rows] == ["activation.relu"]
    r = rows[0]
    assert "compile_error" not in r and "error" not in r, r
    assert r["eager"]["median_ms"] > 0 and r["compiled"]["median_ms"] > 0
    assert r["shape"] == {"batch": 256, "dim": 8192}
    again = _baseline(tmp_path, out, "--task", "activation.relu", "--task", "reduce.sum_dim", "--no-compile")
    assert [r["task_id"] for r in again] == ["activation.relu", "reduce.sum_dim"]  # relu not measured twice


def test_compile_that_does_not_finish_is_abandoned(tmp_path):
    rows = _baseline(tmp_path, tmp_path / "c.jsonl", "--task", "reduce.sum_dim", "--compile-timeout-s", "0.5")
    (r,) = rows
    assert r["compile_error"].startswith("no torch.compile baseline: timeout"), r
    assert "compiled" not in r and r["eager"]["median_ms"] > 0


def test_shards_split_the_suite_without_overlap(tmp_path):
    ids = ["--task", "activation.relu", "--task", "reduce.sum_dim", "--task", "activation.tanh", "--no-compile"]
    a = _baseline(tmp_path, tmp_path / "s0.jsonl", *ids, "--shard", "0/2")
    b = _baseline(tmp_path, tmp_path / "s1.jsonl", *ids, "--shard", "1/2")
    got_a, got_b = {r["task_id"] for r in a}, {r["task_id"] for r in b}
    assert not got_a & got_b
    assert got_a | got_b == {"activation.relu", "reduce.sum_dim", "activation.tanh"}
