"""``mkb baseline`` on the CPU backend: real torch.compile in spawned precompile workers, resumable output,
and a precompile phase that gives up (instead of hanging, as multiprocessing.Pool did on the H200)."""

from __future__ import annotations

import json
import subprocess
import sys


def _baseline(tmp_path, out, *extra: str) -> list[dict]:
    cmd = [sys.executable, "-m", "multikernelbench.cli.main", "baseline", "--backend", "cpu", "--out", str(out),
           "--timing-budget-s", "0.2", "--inductor-cache", str(tmp_path / "inductor"), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_precompiled_then_timed_and_resumed(tmp_path):
    out = tmp_path / "b.jsonl"
    rows = _baseline(tmp_path, out, "--task", "activation.relu", "--precompile-workers", "1")
    assert [r["task_id"] for r in rows] == ["activation.relu"]
    r = rows[0]
    assert "compile_error" not in r and "precompile_error" not in r, r
    assert r["eager"]["median_ms"] > 0 and r["compiled"]["median_ms"] > 0
    assert r["shape"] == {"batch": 256, "dim": 8192}
    again = _baseline(tmp_path, out, "--task", "activation.relu", "--task", "reduce.sum_dim", "--no-compile")
    assert [r["task_id"] for r in again] == ["activation.relu", "reduce.sum_dim"]  # relu not measured twice


def test_precompile_that_does_not_finish_is_abandoned(tmp_path):
    rows = _baseline(tmp_path, tmp_path / "c.jsonl", "--task", "reduce.sum_dim", "--precompile-workers", "1",
                     "--precompile-timeout-s", "0.5")
    (r,) = rows
    assert r["compile_error"].startswith("not compiled: precompile did not finish"), r
    assert "compiled" not in r and r["eager"]["median_ms"] > 0


def test_shards_split_the_suite_without_overlap(tmp_path):
    ids = ["--task", "activation.relu", "--task", "reduce.sum_dim", "--task", "activation.tanh", "--no-compile"]
    a = _baseline(tmp_path, tmp_path / "s0.jsonl", *ids, "--shard", "0/2")
    b = _baseline(tmp_path, tmp_path / "s1.jsonl", *ids, "--shard", "1/2")
    got_a, got_b = {r["task_id"] for r in a}, {r["task_id"] for r in b}
    assert not got_a & got_b
    assert got_a | got_b == {"activation.relu", "reduce.sum_dim", "activation.tanh"}
