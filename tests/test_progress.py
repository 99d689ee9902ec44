"""Progress on stderr: plain periodic lines off a terminal (CI logs, pipes), rich bars on one; never silent."""

from __future__ import annotations

import io
import time

import pytest

from multikernelbench.engine.progress import Progress, fmt_duration

RELU = "activation.relu [0123456789ab]"


@pytest.mark.slow
def test_plain_lines_when_not_a_terminal():
    buf = io.StringIO()
    with Progress(stream=buf, tty=False, interval_s=0.3, min_gap_s=0.0) as bar:
        bar.add("compile", 3)
        bar.add("evaluate", 3)
        bar.advance("compile")  # a static verdict: done at once, carried to the evaluate stage
        bar.advance("evaluate")
        bar.activity(RELU, "build start")
        time.sleep(1.1)
        bar.advance("compile")
        bar.activity(RELU, "build end after 1.1 s: ok")
        time.sleep(0.7)  # nothing finishes: a heartbeat line still comes
        bar.advance("compile")
        bar.activity(RELU, "device stage start (lane None)")
        bar.activity(RELU, "check start (running on shape {'batch': 3})")
        time.sleep(0.4)
        bar.advance("evaluate")
        bar.activity(RELU, "time start (timing on shape {'batch': 256})")
        time.sleep(0.4)
        bar.advance("evaluate")
    lines = buf.getvalue().splitlines()
    assert len(lines) >= 6 and all(line.startswith("[mkb ") for line in lines)
    assert any("building 2/3, ETA ~" in line for line in lines)  # an ETA once a real build finished
    assert any("now: activation.relu (building)" in line for line in lines)
    assert any("now: activation.relu (checking on shape {'batch': 3})" in line for line in lines)
    assert any("activation.relu (timing on shape {'batch': 256})" in line for line in lines)
    heartbeats = [line for line in lines if "building 2/3 |" in line or "building 2/3," in line]
    assert len(heartbeats) >= 2  # the same state printed again while nothing finished
    assert lines[-1].endswith("(done)") and "checking+timing 3/3" in lines[-1]


@pytest.mark.slow
def test_eta_ignores_work_that_finished_at_once():
    bar = Progress(stream=io.StringIO(), tty=False, interval_s=60, min_gap_s=60)
    with bar:
        bar.add("compile", 4)
        bar.add("evaluate", 4)
        for _ in range(2):  # two static verdicts
            bar.advance("compile")
            bar.advance("evaluate")
        assert "ETA" not in bar.status_line()  # nothing real finished yet: no made-up estimate
        time.sleep(1.2)
        bar.advance("compile")
        line = bar.status_line()
    # one real build in ~1.2 s, one left: about a second, not the ~0.4 s that counting the free ones would give
    eta = line.split("building 3/4, ETA ~")[1].split(" ")[0]
    assert eta in ("0:01", "0:02"), line


def test_disabled_is_silent():
    buf = io.StringIO()
    with Progress(enabled=False, stream=buf, tty=False, interval_s=0.1) as bar:
        bar.add("compile", 1)
        bar.activity(RELU, "build start")
        time.sleep(0.3)
        bar.advance("compile")
    assert buf.getvalue() == ""


def test_terminal_bars_render():
    buf = io.StringIO()
    with Progress(stream=buf, tty=True) as bar:
        bar.add("compile", 2)
        bar.add("evaluate", 2)
        bar.activity(RELU, "build start")
        bar.advance("compile")
        bar.advance("compile")
        bar.advance("evaluate")
        bar.advance("evaluate")
    out = buf.getvalue()
    assert "building" in out and "checking+timing" in out and "2/2" in out


def test_fmt_duration():
    assert fmt_duration(None) == "?"
    assert fmt_duration(59.4) == "0:59"
    assert fmt_duration(3725) == "1:02:05"
