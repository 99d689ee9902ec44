"""``mkb baseline`` on the CPU backend, through the engine: real torch.compile in the worker (compiled ahead
by the warm-up stage into a shared cache, which the device worker then hits), resumable output, a time
budget that ends the run cleanly, and a compile that does not finish in time leaves the eager time (instead
of hanging the run)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def _baseline(tmp_path, out, *extra: str) -> list[dict]:
    cmd = [sys.executable, "-m", "multikernelbench.cli.main", "baseline", "--backend", "cpu", "--out", str(out),
           "--timing-budget-s", "0.2", "--db", str(tmp_path / f"{out.stem}.sqlite"),
           "--build-root", str(tmp_path / "builds"), *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_precompiled_then_timed_and_resumed(tmp_path):
    out = tmp_path / "b.jsonl"
    trace = tmp_path / "trace.txt"
    rows = _baseline(tmp_path, out, "--task", "activation.relu", "--trace", str(trace), "--warmup-workers", "1")
    assert [r["task_id"] for r in rows] == ["activation.relu"]
    r = rows[0]
    assert "compile_error" not in r and "error" not in r and "flags" not in r, r
    assert r["eager"]["median_ms"] > 0 and r["compiled"]["median_ms"] > 0
    assert r["shape"] == {"batch": 256, "dim": 8192}
    assert r["warmup_s"] > 0 and r["mkb_version"] and r["measured_on"]
    lines = trace.read_text().splitlines()
    warm_end = next(i for i, line in enumerate(lines) if "reference warm-up end" in line)
    assert lines[warm_end].endswith(": ok"), lines[warm_end]
    assert warm_end < next(i for i, line in enumerate(lines) if "device stage start" in line)
    # The device worker compiled from the warm-up's cache: a miss (e.g. another thread count, which inductor's
    # CPU code keys on) would have added a second graph.
    graphs = [f for f in (tmp_path / "builds" / "cpu" / "reference-compile-cache" / "inductor" / "fxgraph").rglob("*")
              if f.is_file()]
    assert len(graphs) == 1, graphs
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


def test_budget_stops_starting_tasks_and_nothing_is_lost(tmp_path):
    """A budget already spent when the run starts: no task starts, nothing is written or stored, and the
    next run (without the budget) measures them all."""
    out = tmp_path / "d.jsonl"
    ids = ["--task", "activation.relu", "--task", "activation.tanh", "--no-compile"]
    cmd = [sys.executable, "-m", "multikernelbench.cli.main", "baseline", "--backend", "cpu", "--out", str(out),
           "--db", str(tmp_path / "d.sqlite"), "--build-root", str(tmp_path / "builds"), "--budget-s", "0.001", *ids]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "measured 0; 2 remaining" in proc.stdout, proc.stdout
    assert not out.exists() or not out.read_text().strip()
    rows = _baseline(tmp_path, out, *ids)
    assert sorted(r["task_id"] for r in rows) == ["activation.relu", "activation.tanh"]
