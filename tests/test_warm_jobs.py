"""The CUDA/C++ warmer's schedule (backends/extbuild/warm_jobs.py) and its log in a run's trace (engine/trace.HelperLog).

Side by side, every product of every flag set is its own lane, and a folder's warming mark (what builds wait
on) stands until the last job filling it is done; the trace copies the warmer's lines while it runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from multikernelbench.backends.extbuild import warm_wait
from multikernelbench.backends.extbuild.cuda_warm import PchWarmer, light_root_of
from multikernelbench.backends.extbuild.warm_jobs import plan, run_lanes
from multikernelbench.engine.trace import HelperLog, Trace


def _shape(lanes):
    return [[(name, folder.name) for name, folder, _ in lane] for lane in lanes]


def test_side_by_side_gives_every_flag_set_its_own_lane(tmp_path):
    sets = [(("-O3",), {}), ((), {})]
    wide = plan(tmp_path / "pch", ["text a", "text b"], sets, True, lambda texts: texts)
    assert sorted(_shape(wide)) == sorted([[("light", "analysis")], [("light", "analysis")],
                                           [("host_pch", "host")], [("host_pch", "host")],
                                           [("pch", "pch")], [("pch", "pch")]])
    assert sorted(make() for lane in wide for name, _, make in lane if name == "pch") == [["text a"], ["text b"]]
    narrow = plan(tmp_path / "pch", ["text a", "text b"], sets, False, lambda texts: texts)
    assert _shape(narrow) == [[("host_pch", "host")], [("light", "analysis"), ("pch", "pch")]]
    assert _shape(plan(tmp_path / "pch", ["a", "b"], None, True, lambda texts: texts)) == [[("pch", "pch")]] * 2
    assert _shape(plan(tmp_path / "pch", ["a", "b"], None, False, lambda texts: texts)) == [[("pch", "pch")]]
    # No flag set could be read: each folder still gets a job, so its mark still goes.
    assert sorted(_shape(plan(tmp_path / "pch", ["t"], [], True, lambda texts: texts))) == sorted(
        [[("light", "analysis")], [("host_pch", "host")], [("pch", "pch")]])


def test_a_folder_stays_marked_until_its_last_job_is_done(tmp_path):
    folder, other = tmp_path / "host", tmp_path / "pch"
    for f in (folder, other):
        warm_wait.mark(f)
    release = threading.Event()
    said: list[dict] = []

    def slow():
        assert release.wait(30)
        return ["slow"]

    def failing():
        raise OSError("disk full")

    lanes = [[("host_pch", folder, lambda: ["quick"])], [("host_pch", folder, slow)], [("pch", other, failing)]]
    pch_marked_when_said: list[bool] = []

    def say(**kw):
        # what a reader of the log sees at the moment of the line: the failed folder's job is its only one
        if "pch" in kw:
            pch_marked_when_said.append((other / warm_wait.MARKER).exists())
        said.append(kw)

    runner = threading.Thread(target=run_lanes, args=(lanes, say))
    runner.start()
    end = time.monotonic() + 30
    while len(said) < 2 and time.monotonic() < end:
        time.sleep(0.01)
    assert {"host_pch": ["quick"]} in said
    assert "disk full" in json.dumps(said) and pch_marked_when_said == [False]
    assert not (other / warm_wait.MARKER).exists()
    assert (folder / warm_wait.MARKER).exists()  # one of its two jobs is still running
    release.set()
    runner.join(30)
    assert {"host_pch": ["slow"]} in said and not (folder / warm_wait.MARKER).exists()


@pytest.mark.slow
def test_the_warmer_process_runs_its_flag_sets_side_by_side(tmp_path):
    """The real warmer process, C++ only, two flag sets g++ rejects (each fails at once, after torch's loader
    wrote its build.ninja): one report line per set, and no mark left."""
    bad = (("-fmkb-no-such-flag",), ("-fmkb-no-such-flag-either",))
    warmer = PchWarmer(tmp_path, {}, with_cuda=False, variants=bad, niced=False)
    assert warmer.wait(timeout=300) == 0
    warmer.stop()
    rows = [json.loads(line) for line in warmer.log_text.splitlines()]
    pch = [r["pch"] for r in rows if "pch" in r]
    assert len(pch) == 2 and all(len(r) == 1 and r[0]["state"] == "failed" for r in pch), rows
    assert not list(tmp_path.rglob(warm_wait.MARKER))
    assert not list(light_root_of(tmp_path).rglob(warm_wait.MARKER))


def test_the_trace_copies_a_helpers_lines_while_it_runs(tmp_path):
    log = tmp_path / "warm.log"
    go = tmp_path / "go"
    helper = PchWarmer.__new__(PchWarmer)  # only its log reading: the process is the one below
    helper.log_path, helper.log_text, helper._seen = log, "", 0
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import json, os, time
        with open({str(log)!r}, "a", buffering=1) as fh:
            fh.write(json.dumps({{"light": ["first"], "t": time.time()}}) + "\\n")
            fh.write("not json\\n")
            end = time.time() + 60
            while not os.path.exists({str(go)!r}) and time.time() < end:
                time.sleep(0.02)
            fh.write(json.dumps({{"pch": ["second"], "t": time.time()}}) + "\\n")
            fh.write('{{"half": ')
    """)])
    trace = Trace(tmp_path / "trace.log")
    follower = HelperLog(helper, trace, "warmer", every_s=0.05)
    try:
        end = time.monotonic() + 30
        while "first" not in _text(trace.path) and time.monotonic() < end:
            time.sleep(0.02)
        assert "first" in _text(trace.path) and writer.poll() is None  # copied while the helper still runs
        go.touch()
        assert writer.wait(timeout=30) == 0
    finally:
        writer.kill()
        follower.close()
    lines = _text(trace.path).splitlines()
    assert [line.split(": ", 1)[1] for line in lines] == ['{"light": ["first"]}', '{"pch": ["second"]}'], lines
    assert all(" warmer: " in line for line in lines)


def _text(path: Path | None) -> str:
    return path.read_text() if path is not None and os.path.exists(path) else ""
