"""scripts/throughput/: a pipeline run past its cap is ended whole (util.procs.kill_session), compilers that
moved to process groups of their own included; and the candidates are what the benchmark says they are."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from tests._procs import alive

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from throughput import common, per_build  # noqa: E402
from throughput.candidates import generate_candidates, make_variant  # noqa: E402

# A "pipeline" that starts a "compiler" in a process group of its own (as ninja does), reports its pid, and
# never ends.
PIPELINE = r"""
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], process_group=0)
print(child.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.slow
def test_a_pipeline_past_its_cap_is_killed_with_its_compilers(tmp_path):
    pids: list[int] = []
    t0 = time.monotonic()
    run = common.run_streamed([sys.executable, "-c", PIPELINE], dict(os.environ), 2.0,
                              lambda line, t: pids.append(int(line)), tmp_path / "stderr.log")
    assert run["killed"] and not run["interrupted"] and time.monotonic() - t0 < 30
    assert len(pids) == 1
    end = time.monotonic() + 5
    while alive(pids[0]) and time.monotonic() < end:
        time.sleep(0.05)
    assert not alive(pids[0])  # the grandchild in its own process group went with the session


def test_variants_differ_and_per_build_picks_distinct_tasks(tmp_path):
    src = (common.REPO / "solutions" / "cuda" / "activation.relu.py").read_text()
    a, name_a = make_variant(src, 1)
    b, name_b = make_variant(src, 2)
    assert a != b and name_a != name_b and "// variant 1" in a
    known = {"activation.relu", "architecture.deep_mlp", "attention.causal_softmax", "broadcast.add_row_bias",
             "convolution.conv2d_1x1", "index.index_select"}
    manifest = generate_candidates("cuda", 5, common.REPO / "solutions" / "cuda", tmp_path, known, 0.0)
    picked = per_build.pick(manifest, 5)
    assert len({m["task_id"] for m in picked}) == 5 and all(m["kind"] == "ok" for m in picked)
    assert len({m["code_hash"] for m in manifest}) == len(manifest)


@pytest.mark.slow
def test_the_run_records_how_busy_the_cores_were(tmp_path):
    """common.CpuSampler: a child that spins one core for ~2.5 s shows up in the run's busy-core series (read
    from /proc/stat), and mkb_pipeline.account summarises it with the trace's build and warmer events."""
    from throughput.mkb_pipeline import account, cpu_summary

    spin = "import time\nend = time.time() + 2.5\nwhile time.time() < end: pass\n"
    run = common.run_streamed([sys.executable, "-c", spin], dict(os.environ), 30.0, lambda line, t: None,
                              tmp_path / "stderr.log")
    series = run["cpu_busy"]
    assert len(series) >= 2 and max(b for _, b in series) >= 0.5, series
    events = ["12:00:01 +     4.0s act.relu [0123456789ab]: build start",
              '12:00:09 +    12.0s warmer: {"pch": [{"state": "built"}]}']
    line = account({"cpu": cpu_summary(series), "trace_events": events, "rows": [{"t_done_s": 30.5}],
                    "header_paths": {"host_cpu_s_p50": 12.9}})
    assert "cores busy" in line and "first build +4.0s" in line and "warmer pch +12.0s" in line, line
    assert "first result 30.5s" in line and "host_cpu 12.9" in line, line


def test_lane_summary_counts_busy_and_idle_lane_time():
    from throughput.lanes import lane_summary

    ev = ["t +   10.0s a [aaa]: build end after 9.0 s: ok",
          "t +   10.0s a [aaa]: device stage start (lane 0)",
          "t +   12.5s a [aaa]: end_workers end after 0.1 s",
          "t +   20.0s b [bbb]: build end after 19.0 s: ok",
          "t +   20.0s b [bbb]: device stage start (lane 0)",
          "t +   23.0s b [bbb]: end_workers end after 0.1 s",
          "t +   21.0s c [ccc]: build end after 20.0 s: compile_error"]
    rows = [{"device_s": 2.5, "t_done_s": 12.6}, {"device_s": 3.0, "t_done_s": 23.1}, {"t_done_s": 21.1}]
    s = lane_summary({"trace_events": ev, "rows": rows, "n": 3, "n_candidates": 3}, at=22.0)
    assert (s["lane_busy_s"], s["lane_idle_s"], s["last_build_end_s"]) == (5.5, 7.5, 20.0)
    assert (s["first_result_s"], s["done_by_22s"], s["device_mean_s"]) == (12.6, 2, 2.75)
