"""``scripts/suite_hygiene.py`` on a crafted baseline: which tasks it lists (thresholds at their edges), the
bound side and action it suggests, stale rows and tasks without a row against a given suite, and the printed
table and JSON of a real run of the script."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from multikernelbench.baselines import load_baseline

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "suite_hygiene.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("suite_hygiene", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["suite_hygiene"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


hyg = _load_script()

MEM = {"flops": 10 ** 6, "bytes": 10 ** 9}  # memory-bound on the H200's measured peaks
CMP = {"flops": 10 ** 13, "bytes": 10 ** 6}  # compute-bound


def _row(tid, fraction, eager_ms=1.0, costs=MEM, **extra):
    row = {"task_id": tid, "task_hash": "h-" + tid, "hardware": "NVIDIA H200", "backend": "cuda",
           "dtype": "float32", "eager": {"median_ms": eager_ms}, "compiled": {"median_ms": eager_ms / 2},
           "eager_roofline_fraction": fraction, **costs}
    row.update(extra)
    return row


ROWS = [
    _row("activation.near", 0.95),
    _row("activation.edge", 0.9),  # exactly at --near: listed
    _row("activation.below", 0.8999),
    _row("matmul.peak", 0.92, costs=CMP),
    _row("fusion.copyspeed", 1.01),
    _row("fusion.overcount", 1.2),
    _row("reduce.tiny", 0.3, eager_ms=0.05),
    _row("reduce.tiny_near", 0.95, eager_ms=0.1),
    _row("reduce.edge_time", 0.3, eager_ms=0.25),  # exactly --min-ms: not launch-bound
    {"task_id": "loss.broken", "task_hash": "h-loss.broken", "hardware": "NVIDIA H200",
     "error": "runtime_error: CUDA out of memory"},
    _row("loss.fine", 0.5, eager_ms=2.0),
    _row("loss.flagged", 0.5, eager_ms=2.0, flags=["timing: work escaped the clock on 3 of 5 samples"]),
    _row("loss.changed", 0.99),  # stale against the suite below: its numbers are not judged
    _row("math.removed", 0.99),  # not in the suite any more: nothing to fix
]


@pytest.fixture
def baseline_file(tmp_path):
    path = tmp_path / "baseline.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def _by_id(result):
    return {f.task_id: f for f in result.findings}


def test_thresholds_bound_side_and_actions(baseline_file):
    result = hyg.hygiene(load_baseline(baseline_file), near=0.9, min_ms=0.25)
    found = _by_id(result)
    assert set(found) == {"activation.near", "activation.edge", "matmul.peak", "fusion.copyspeed",
                          "fusion.overcount", "reduce.tiny", "reduce.tiny_near", "loss.broken", "loss.changed",
                          "math.removed", "loss.flagged"}
    assert found["loss.flagged"].issues == ["flagged"] and "escaped the clock" in found["loss.flagged"].detail
    assert found["activation.near"].issues == ["near_roofline"] and found["activation.near"].bound == "memory"
    assert "fuse more work per byte" in found["activation.near"].action
    assert found["matmul.peak"].bound == "compute" and "shape or dtype" in found["matmul.peak"].action
    assert found["fusion.copyspeed"].issues == ["eager_over_bound"]
    assert "copy bandwidth" in found["fusion.copyspeed"].action
    assert "overcounted" in found["fusion.overcount"].action
    tiny = found["reduce.tiny"]
    assert tiny.issues == ["launch_bound"] and tiny.scale_to_min_ms == pytest.approx(5.0)
    assert "5.0x more work" in tiny.action
    assert found["reduce.tiny_near"].issues == ["near_roofline", "launch_bound"]
    assert found["loss.broken"].issues == ["not_timed"] and "out of memory" in found["loss.broken"].detail
    assert result.counts()["reduce"] == {"launch_bound": 2, "near_roofline": 1}


def test_suite_adds_stale_and_missing_and_drops_removed(baseline_file):
    suite = {r["task_id"]: r["task_hash"] for r in ROWS if r["task_id"] != "math.removed"}
    suite["loss.changed"] = "h-new-content"
    suite["pooling.unmeasured"] = "h-pool"
    found = _by_id(hyg.hygiene(load_baseline(baseline_file), suite=suite))
    assert found["loss.changed"].issues == ["stale"] and "h-new-content" in found["loss.changed"].detail
    assert found["pooling.unmeasured"].issues == ["no_row"]
    assert "math.removed" not in found
    assert sum(f.task_id == "loss.changed" for f in found.values()) == 1  # judged as stale only


def test_script_prints_table_and_writes_json(baseline_file, tmp_path):
    out = tmp_path / "h.json"
    run = subprocess.run([sys.executable, str(SCRIPT), "--baseline", str(baseline_file), "--out", str(out),
                          "--no-suite", "--near", "0.94"], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "## reduce (launch_bound 2, near_roofline 1)" in lines
    row = next(line for line in lines if line.startswith("reduce.tiny "))
    assert row.split()[1:4] == ["0.0500", "0.300", "memory"]
    assert not any(line.startswith("activation.edge") for line in lines)  # 0.9 < --near 0.94
    data = json.loads(out.read_text())
    assert data["thresholds"] == {"near_roofline": 0.94, "min_ms": 0.25} and data["hardware"] == ["NVIDIA H200"]
    assert [t["task_id"] for t in data["tasks"]["reduce"]] == ["reduce.tiny", "reduce.tiny_near"]
    assert data["counts"]["activation"] == {"near_roofline": 1}
    bad = subprocess.run([sys.executable, str(SCRIPT), "--baseline", str(tmp_path / "none.jsonl"), "--no-suite",
                          "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert bad.returncode == 1 and "does not exist" in bad.stderr


def test_a_marked_task_at_the_bound_is_listed_as_marked_not_as_work(baseline_file):
    notes = {"activation.near": "at copy speed on the H200", "reduce.tiny": "a note on a launch-bound task"}
    found = _by_id(hyg.hygiene(load_baseline(baseline_file), notes=notes))
    assert found["activation.near"].issues == ["near_roofline", "marked_no_headroom"]
    assert found["activation.near"].action == "marked NO_HEADROOM in the task file: at copy speed on the H200"
    # a note does not excuse a task that is launch-bound, not at the bound
    assert found["reduce.tiny"].issues == ["launch_bound"] and "grow the bench shape" in found["reduce.tiny"].action
    assert "fuse more work per byte" not in found["activation.near"].action
