"""scripts/throughput/clock_phases.py: a clock turn's phases and the gaps between turns, read from a trace written
by the engine's own writer (engine/trace.py), by inference on the lines that traces have carried so far and
exactly from the turns' own edges (engine/gpu_turns.py) and the timing request's split (engine/session.py).

The real run is the local executor's only (not the ``executor`` fixture): its lanes write one trace timed from one
start, while each Ray lane actor writes its own, with offsets from the actor's start."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from multikernelbench.engine.gpu_turns import GpuTurns
from multikernelbench.engine.messages import Timed
from multikernelbench.engine.session import timed_split
from multikernelbench.engine.trace import Trace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

from throughput.clock_phases import Phase, find_gaps, find_turns, read_events, summarize  # noqa: E402

A, B, C = "activation.relu [aaaaaaaaaaaa]", "matmul.square [bbbbbbbbbbbb]", "loss.mse_mean [cccccccccccc]"


def _write(path: Path, lines: list[tuple[float, str, str]]) -> Path:
    trace = Trace(path)
    for at, who, what in lines:
        trace(who, what, at=trace.wall0 + at)
    return path


def test_inferred_turns_split_into_their_phases_and_the_gaps_into_ready_and_unready(tmp_path):
    """A trace as the H200 runs wrote it: no turn edges. A's turn starts with its clean worker's start and ends
    where B's check needs a turn; what follows A's timing request is the parent's verification, not timing."""
    path = _write(tmp_path / "trace.log", [
        (0.5, A, "check start (running on shape {'batch': 3})"),
        (1.0, A, "check end after 0.5 s"),
        (1.2, A, "setup start (starting the worker)"),
        (1.2, A, "setup end after 0.0 s"),
        (1.3, A, "time start (timing the reference in a clean worker)"),
        (1.7, A, "time end after 0.4 s"),
        (1.9, A, "time start (timing on shape {'batch': 4096})"),
        (2.6, A, "time end after 0.7 s"),
        (3.0, B, "check start (running on shape {'n': 3})"),
        (3.1, A, "end_workers start (ending the workers in a shared turn)"),
        (3.2, A, "end_workers end after 0.1 s"),
        (3.4, C, "check start (running on shape {'batch': 3})"),
        (3.5, B, "check end after 0.5 s"),
        (3.8, C, "check end after 0.4 s"),
        (4.0, B, "time start (timing on shape {'n': 8192})"),
        (5.0, B, "time end after 1.0 s"),
        (5.2, B, "end_workers start (ending the workers in a shared turn)"),
    ])
    events, partial = read_events(path)
    turns = find_turns(events)
    assert not partial and [t.who for t in turns] == [A, B]
    a, b = turns
    assert (a.start, a.end, a.exact, a.ready_at) == (1.2, 3.0, False, 1.0)
    got = {p: round(v, 2) for p, v in a.phases.items()}
    assert got == {Phase.CLEAN_START: 0.1, Phase.CLEAN_TIMING: 0.4, Phase.CLEAN_END: 0.2, Phase.TIMING: 0.7,
                   Phase.AFTER: 0.4}
    assert (b.start, b.end, b.ready_at) == (4.0, 5.2, 3.5)
    assert {p: round(v, 2) for p, v in b.phases.items()} == {Phase.TIMING: 1.0, Phase.AFTER: 0.2}
    (gap,) = find_gaps(turns, events)
    # 3.0-3.5: no candidate ready (B still checking); 3.5-4.0: B ready, C's check still running until 3.8
    assert (round(gap.unready, 2), round(gap.ready_draining, 2), round(gap.ready_free, 2)) == (0.5, 0.3, 0.2)
    assert {k: round(v, 2) for k, v in gap.draining_by.items()} == {"check": 0.3}  # what B's clock waited on
    s = summarize(turns, [gap])
    assert {k: round(v, 2) for k, v in s.draining_by_s.items()} == {"check": 0.3}
    assert s.phases[Phase.TIMING] == (2, pytest.approx(1.7), pytest.approx(0.85))


def test_traced_edges_and_split_attribute_the_request_to_samples_renewals_and_the_rest(tmp_path):
    path = _write(tmp_path / "trace.log", [
        (1.0, A, "check end after 0.5 s"),
        (2.0, A, "clock turn taken after waiting 0.40 s"),
        (2.1, A, "time start (timing on shape {'batch': 4096})"),
        (2.2, A, "time split: measure 0.800 s, samples 0.100 s, renewals 0.300 s, runs 20, fresh calls 25"),
        (3.1, A, "time end after 1.0 s"),
        (3.8, A, "clock turn given back after 1.80 s"),
        (3.9, A, "end_workers start (ending the workers in a shared turn)"),
    ])
    (turn,) = find_turns(read_events(path)[0])
    assert turn.exact and (turn.start, turn.end) == (2.0, 3.8) and turn.ready_at == pytest.approx(1.6)
    got = {p: round(v, 2) for p, v in turn.phases.items()}
    assert got == {Phase.ENTRY: 0.1, Phase.OUTSIDE_TIMER: 0.2, Phase.SAMPLES: 0.1, Phase.RENEWALS: 0.3,
                   Phase.WARMUP_PLAN: 0.4, Phase.AFTER: 0.7}


def test_a_clock_writes_its_turns_edges_with_the_wait(tmp_path):
    """engine/gpu_turns.py: the exclusive side's edges in the owner's trace; a clock that waited for another
    says how long."""
    turns = GpuTurns()
    trace = Trace(tmp_path / "t.log")
    first, second = SimpleNamespace(trace=trace, who=A), SimpleNamespace(trace=trace, who=B)
    inside = threading.Event()

    def hold() -> None:
        with turns.exclusive(first):
            inside.set()
            time.sleep(0.3)

    t = threading.Thread(target=hold)
    t.start()
    inside.wait(5)
    with turns.exclusive(second):
        pass
    t.join()
    lines = (tmp_path / "t.log").read_text().splitlines()
    assert [line.split(": ", 1)[1].rsplit(" after", 1)[0] for line in lines] == [
        "clock turn taken", "clock turn given back", "clock turn taken", "clock turn given back"]
    assert lines[0].split(": ")[0].endswith(A) and lines[2].split(": ")[0].endswith(B)
    assert float(lines[2].split("waiting ")[1].split()[0]) >= 0.2
    with pytest.raises(RuntimeError):  # the line is written, the turn is still given back
        with turns.exclusive(first):
            raise RuntimeError
    assert turns.state() == (0, False, 0)


def test_timed_split_reports_the_workers_account_and_nothing_it_cannot_read():
    reply = Timed(stats={}, wall_ms=800.0, verified_meta=[], fresh_calls=25, fresh_ms=300.0,
                  series={"candidate": [1.0, 2.0], "eager": [3.0]}, calls={"candidate": 10, "eager": 1})
    assert timed_split(reply) == ("time split: measure 0.800 s, samples 0.033 s, renewals 0.300 s, runs 3, "
                                  "fresh calls 25")
    bad = Timed(stats={}, wall_ms="soon", verified_meta=[], fresh_calls=1, fresh_ms=0.0)  # type: ignore[arg-type]
    assert timed_split(bad) is None
    phased = Timed(stats={}, wall_ms=800.0, verified_meta=[], fresh_calls=25, fresh_ms=300.0,
                   phase_ms={"warmup": 150.0, "plan": 250.0, "other": 1.0})
    assert timed_split(phased) == ("time split: measure 0.800 s, samples 0.000 s, renewals 0.300 s, runs 0, "
                                   "fresh calls 25, warmup 0.150 s, plan 0.250 s")
    odd = Timed(stats={}, wall_ms=800.0, verified_meta=[], fresh_calls=25, fresh_ms=300.0,
                phase_ms="warmup plan")  # type: ignore[arg-type]
    assert timed_split(odd) is None


def test_the_timers_warmup_and_plan_walls_split_the_request_where_the_worker_sent_them(tmp_path):
    path = _write(tmp_path / "trace.log", [
        (2.0, A, "clock turn taken after waiting 0.40 s"),
        (2.1, A, "time start (timing on shape {'batch': 4096})"),
        (2.2, A, "time split: measure 0.800 s, samples 0.100 s, renewals 0.300 s, runs 20, fresh calls 25, "
                 "warmup 0.150 s, plan 0.250 s"),
        (3.1, A, "time end after 1.0 s"),
        (3.8, A, "clock turn given back after 1.80 s"),
    ])
    (turn,) = find_turns(read_events(path)[0])
    got = {p: round(v, 2) for p, v in turn.phases.items()}
    assert got == {Phase.ENTRY: 0.1, Phase.OUTSIDE_TIMER: 0.2, Phase.SAMPLES: 0.1, Phase.WARMUP: 0.15,
                   Phase.PLAN: 0.25, Phase.LOOP_RENEWALS: 0.3, Phase.AFTER: 0.7}


@pytest.mark.slow
def test_a_real_run_traces_its_clock_turn_and_the_requests_split(suite, build_root, tmp_path):
    """The engine itself (one lane, CPU backend, a real worker) writes the lines the script reads exactly."""
    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.config import EngineConfig, TimingConfig
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.records import Status

    source = ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
              "        return torch.clamp_min(x, 0.0)  # clock phases\n")
    cfg = EngineConfig(build_root=build_root, allow_code_execution=True, seed=31, trace_path=tmp_path / "t.log",
                       timing=TimingConfig(min_runs=3, max_runs=5, budget_s=0.2, warmup=1),
                       anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))
    (r,) = evaluate_candidates([suite["activation.relu"]], [Candidate("activation.relu", source, label="p")], cfg)
    assert r.status == Status.CORRECT, r.message
    events, _ = read_events(tmp_path / "t.log")
    turns = [t for t in find_turns(events) if Phase.COMPILE not in t.phases]
    retimed = sum("clock audit finding" in e.what for e in events)  # a loaded host may time again (two turns more)
    assert len(turns) == 1 + 2 * retimed and all(t.exact for t in turns), events
    assert turns[0].phases.get(Phase.SAMPLES, 0.0) >= 0.0
    assert Phase.WARMUP in turns[0].phases and Phase.PLAN in turns[0].phases  # the worker's own walls
    assert Phase.CLEAN_TIMING in turns[0].phases
