"""Engine behaviour on candidates that need no C++ build: every status path with real worker processes."""

from __future__ import annotations

import textwrap

import pytest

from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.runner import CodeExecutionNotAllowed, evaluate_candidates
from multikernelbench.flags import FlagKind
from multikernelbench.records import FailureKind, Status

pytestmark = pytest.mark.slow

RELU = "activation.relu"

HEAD = "import torch\nimport torch.nn as nn\n"


def cand(body: str, task_id: str = RELU, label: str = "c") -> Candidate:
    return Candidate(task_id=task_id, source=HEAD + textwrap.dedent(body), label=label)


def quick_config(build_root, seed: int, *, timing: dict | None = None, **engine):
    """EngineConfig for harness tests on plain-PyTorch candidates: short timing, and the "own kernel" checks
    and the static filter off (they would catch these candidates before the path under test)."""
    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.engine.config import EngineConfig, TimingConfig

    t = {"min_runs": 3, "max_runs": 5, "budget_s": 0.2, "warmup": 1, **(timing or {})}
    return EngineConfig(build_root=build_root, allow_code_execution=True, seed=seed, timing=TimingConfig(**t),
                        anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False), **engine)


CASES = {
    "honest": ("""
        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.clamp_min(x, 0.0)
        """, Status.CORRECT, None),
    "wrong_value": ("""
        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.clamp_min(x, 0.0) * 1.01
        """, Status.INCORRECT, FailureKind.VALUE_MISMATCH),
    "wrong_shape": ("""
        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.clamp_min(x, 0.0)[:, :-1]
        """, Status.INCORRECT, FailureKind.SHAPE_MISMATCH),
    "wrong_dtype": ("""
        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.clamp_min(x, 0.0).double()
        """, Status.INCORRECT, FailureKind.DTYPE_MISMATCH),
    "modifies_input": ("""
        class ModelNew(nn.Module):
            def forward(self, x):
                return x.clamp_min_(0.0).clone()
        """, Status.INCORRECT, FailureKind.INPUT_MODIFIED),
    "raises": ("""
        class ModelNew(nn.Module):
            def forward(self, x):
                raise RuntimeError("kernel launch failed")
        """, Status.RUNTIME_ERROR, FailureKind.EXCEPTION),
    "no_modelnew": ("""
        class Model(nn.Module):
            pass
        """, Status.RUNTIME_ERROR, FailureKind.MISSING_MODELNEW),
    "syntax_error": ("""
        class ModelNew(nn.Module)
            pass
        """, Status.COMPILE_ERROR, None),
    "os_exit": ("""
        import os
        class ModelNew(nn.Module):
            def forward(self, x):
                os._exit(3)
        """, Status.CRASH, FailureKind.SIGNAL),
    "sys_exit": ("""
        import sys
        class ModelNew(nn.Module):
            def forward(self, x):
                sys.exit(0)
        """, Status.RUNTIME_ERROR, FailureKind.EXCEPTION),
    "segfault": ("""
        import ctypes
        class ModelNew(nn.Module):
            def forward(self, x):
                ctypes.string_at(0)
        """, Status.CRASH, FailureKind.SIGNAL),
    "hangs": ("""
        class ModelNew(nn.Module):
            def forward(self, x):
                while True:
                    pass
        """, Status.TIMEOUT, None),
    "subclass_output": ("""
        class Fake(torch.Tensor):
            pass
        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.clamp_min(x, 0.0).as_subclass(Fake)
        """, Status.INCORRECT, FailureKind.BAD_OUTPUT_TYPE),
    "caches_by_shape": ("""
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.cache = {}
            def forward(self, x):
                key = (tuple(x.shape), x.data_ptr())
                if key not in self.cache:
                    self.cache[key] = torch.clamp_min(x, 0.0)
                return self.cache[key]
        """, Status.INCORRECT, FailureKind.TIMED_OUTPUT_MISMATCH),
    "floods_stdout": ("""
        import sys
        class ModelNew(nn.Module):
            def forward(self, x):
                chunk = "x" * (1 << 20)
                for _ in range(64):
                    sys.stdout.write(chunk)
                return torch.clamp_min(x, 0.0)
        """, Status.RUNTIME_ERROR, FailureKind.RESOURCE_LIMIT),  # Python ignores SIGXFSZ: EFBIG surfaces
}


@pytest.fixture(scope="module")
def outcomes(suite, build_root):
    # These candidates are plain PyTorch on purpose and test the status paths of the engine itself. The request
    # timeout is what ``hangs`` spins for (20 s of a core before, most of this fixture's CPU); every other request
    # here takes well under a second, and 8 s is what the suite's other spinning candidates get (anticheat's
    # infinite_loop, test_pipeline's).
    cfg = quick_config(build_root, 99, timing={"max_runs": 10, "budget_s": 0.3}, backend="cpu", run_timeout_s=8.0,
                       output_limit_mb=16.0, compile_workers=2)
    cands = [cand(body, label=name) for name, (body, _, _) in CASES.items()]
    results = evaluate_candidates([suite[RELU]], cands, cfg)
    return {c.label: r for c, r in zip(cands, results, strict=True)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_status(outcomes, name):
    _, status, failure = CASES[name]
    result = outcomes[name]
    assert result.status == status, result.message
    if failure is not None:
        assert result.failure == failure, result.message
    if status != Status.CORRECT:
        assert result.message


def test_honest_has_timing(outcomes):
    r = outcomes["honest"]
    assert r.speedup is not None and r.speedup > 0
    assert r.candidate_timing.runs >= 3 and r.eager_timing.runs >= 3
    # the speedup's interval, from the paired A/B rounds (timing/interval.py), stored with it
    assert r.speedup_low is not None and r.speedup_low <= r.speedup <= r.speedup_high
    assert r.correctness.trials == r.correctness.passed == 6
    assert r.timing_shape == {"batch": 256, "dim": 8192}


def test_timeout_says_where_the_worker_was_stuck(outcomes):
    """The worker's stacks at the timeout (faulthandler on SIGUSR1) name the candidate's spinning line."""
    msg = outcomes["hangs"].message
    assert "stacks at the timeout" in msg and "in forward" in msg, msg


def test_mismatch_message_names_shape_and_error(outcomes):
    msg = outcomes["wrong_value"].message
    assert "max abs error" in msg and "shape" in msg


def test_opt_in_required(suite, build_root):
    from multikernelbench.engine.config import EngineConfig

    with pytest.raises(CodeExecutionNotAllowed):
        evaluate_candidates([suite[RELU]], [cand(CASES["honest"][0])],
                            EngineConfig(build_root=build_root, allow_code_execution=False))


def _running(cmdline_part: str) -> list[int]:
    import os

    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if cmdline_part.encode() in f.read().replace(b"\0", b" "):
                        found.append(int(entry))
            except OSError:
                pass
    return found


def test_no_process_outlives_its_worker(suite, build_root):
    """A helper process in its own process group (as ninja starts compilers) is still ended with the worker."""
    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.engine.config import EngineConfig

    marker = "sleep 987.5"
    body = """
        import subprocess
        subprocess.Popen(["sleep", "987.5"], process_group=0)
        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.clamp_min(x, 0.0)
        """
    cfg = EngineConfig(build_root=build_root, allow_code_execution=True, seed=3, skip_timing=True,
                       anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))
    evaluate_candidates([suite[RELU]], [cand(body, label="spawner")], cfg)
    assert not _running(marker), "a process started by the candidate survived its worker"


SAMPLED_CASES = {
    "honest": CASES["honest"],
    # Right on every test shape; at the (larger) timing shape only the very last element is wrong: the
    # sampled check must still see it (the first and last 4096 positions are always compared).
    "wrong_last_element_when_timed": ("""
        class ModelNew(nn.Module):
            def forward(self, x):
                y = torch.clamp_min(x, 0.0)
                if x.numel() >= 256 * 8192:
                    y.view(-1)[-1] += 1.0
                return y
        """, Status.INCORRECT, FailureKind.TIMED_OUTPUT_MISMATCH),
    "wrong_shape_when_timed": ("""
        class ModelNew(nn.Module):
            def forward(self, x):
                y = torch.clamp_min(x, 0.0)
                return y.reshape(-1) if x.numel() >= 256 * 8192 else y
        """, Status.INCORRECT, FailureKind.TIMED_OUTPUT_MISMATCH),
    "caches_by_shape": (CASES["caches_by_shape"][0], Status.INCORRECT, FailureKind.TIMED_OUTPUT_MISMATCH),
}


@pytest.fixture(scope="module")
def sampled_outcomes(suite, build_root):
    """Verified timed outputs larger than positions + 2 * edge are compared at sampled positions."""
    cfg = quick_config(build_root, 7, backend="cpu", run_timeout_s=20.0, compile_workers=2,
                       timed_check_positions=500, timed_check_edge=16)
    cands = [cand(body, label=name) for name, (body, _, _) in SAMPLED_CASES.items()]
    results = evaluate_candidates([suite[RELU]], cands, cfg)
    return {c.label: r for c, r in zip(cands, results, strict=True)}


@pytest.mark.parametrize("name", sorted(SAMPLED_CASES))
def test_sampled_timed_output_check(sampled_outcomes, name):
    _, status, failure = SAMPLED_CASES[name]
    result = sampled_outcomes[name]
    assert result.status == status, result.message
    assert result.failure == failure, result.message
    if status != Status.CORRECT:
        assert "sample of the output" in result.message or "shape" in result.message, result.message


def test_sample_positions_cover_both_ends():
    import torch

    from multikernelbench.engine.checking import sample_flat, sample_positions

    t = torch.arange(10_000)
    pos = sample_positions(1, 50, 16)
    got = sample_flat(t, pos, 100)
    assert got.numel() == 50 + 32
    assert set(range(16)) <= set(got.tolist()) and set(range(10_000 - 16, 10_000)) <= set(got.tolist())
    assert torch.equal(sample_flat(t, pos, 20_000), t)  # small outputs are compared whole
    assert not torch.equal(sample_positions(1, 50, 16), sample_positions(2, 50, 16))


def test_trace_file_records_every_phase(suite, build_root, tmp_path):
    """``--trace``: build, device start, load, each check and timing request leave a line as they happen."""
    trace = tmp_path / "trace.log"
    cfg = quick_config(build_root, 11, trace_path=trace)
    # A source of its own: the session's build cache would otherwise skip the build of the shared "honest" one.
    source = CASES["honest"][0].replace("clamp_min(x, 0.0)", "clamp_min(x, 0.0)  # traced run")
    (r,) = evaluate_candidates([suite[RELU]], [cand(source, label="traced")], cfg)
    assert r.status == Status.CORRECT, r.message
    text = trace.read_text()
    for needle in ("build start", "build end after", "device stage start", "load start", "check start",
                   "time start", "time end after"):
        assert needle in text, (needle, text)
    # One set of trials per worker that loaded it: a clock-audit finding under load times again in a fresh
    # worker, which runs the trials again first (engine/device_stage.py; CI at 135fcdd under load: 12 == 6).
    passes = 1 + text.count("clock audit finding: timing again in a fresh worker")
    assert text.count("check end after") == r.correctness.trials * passes, (passes, text)
    stamps = [float(line.split("+", 1)[1].split("s", 1)[0]) for line in text.splitlines()]
    assert stamps == sorted(stamps)  # one clock for the whole run


def test_same_source_twice_builds_once(suite, build_root, tmp_path):
    """Two candidates with one source share a build folder: the second waits for the first build and
    reuses it instead of racing it (CI once read the first one's half-written cache marker)."""
    trace = tmp_path / "trace.log"
    cfg = quick_config(build_root, 12, trace_path=trace, compile_workers=2)
    source = CASES["honest"][0].replace("clamp_min(x, 0.0)", "clamp_min(x, 0.0)  # built once")
    results = evaluate_candidates([suite[RELU]], [cand(source, label="a"), cand(source, label="b")], cfg)
    assert [r.status for r in results] == [Status.CORRECT, Status.CORRECT], [r.message for r in results]
    assert trace.read_text().count("build start") == 1, trace.read_text()
    assert all(r.compile_time_s is not None for r in results)


def test_candidate_budget_caps_a_slow_but_never_stuck_candidate(suite, build_root):
    """Each check is far below the per-request timeout, but six of them exceed the candidate's budget."""
    cfg = quick_config(build_root, 13, run_timeout_s=30.0, candidate_timeout_s=4.0)
    slow = cand("""
        import time
        class ModelNew(nn.Module):
            def forward(self, x):
                time.sleep(1.5)
                return torch.clamp_min(x, 0.0)
        """, label="slow")
    (r,) = evaluate_candidates([suite[RELU]], [slow], cfg)
    assert r.status == Status.TIMEOUT, r.message
    assert "4 s device-stage budget" in r.message and "in forward" in r.message, r.message
    assert 1 <= r.correctness.trials < 6


def test_compile_baseline_is_timed_in_the_worker(suite, build_root, tmp_path):
    """``--compile-baseline``: torch.compile of the reference, compiled inside the device worker (inductor
    runs g++ there, outside the candidate's forward) and timed beside eager and the candidate."""
    cfg = quick_config(build_root, 14, timing={"budget_s": 0.3, "compile_baseline": True}, run_timeout_s=240.0)
    source = CASES["honest"][0].replace("clamp_min(x, 0.0)", "clamp_min(x, 0.0)  # compile baseline")
    (r,) = evaluate_candidates([suite[RELU]], [cand(source, label="cb")], cfg)
    assert r.status == Status.CORRECT, r.message
    assert r.compile_timing is not None and r.compile_timing.runs >= 3 and r.speedup_compile > 0


def test_compile_baseline_that_times_out_costs_only_the_baseline(suite, build_root):
    """The harness's torch.compile baseline outruns its own timeout: the worker is killed, the result is
    flagged, and the candidate is loaded again in a fresh worker and timed against eager."""
    cfg = quick_config(build_root, 15, timing={"budget_s": 0.3, "compile_baseline": True,
                                               "compile_baseline_timeout_s": 0.3}, run_timeout_s=60.0)
    source = CASES["honest"][0].replace("clamp_min(x, 0.0)", "clamp_min(x, 0.0)  # baseline too slow")
    (r,) = evaluate_candidates([suite[RELU]], [cand(source, label="cb_slow")], cfg)
    assert r.status == Status.CORRECT, r.message
    assert r.compile_timing is None and r.speedup_compile is None and r.speedup > 0
    assert any(f.kind is FlagKind.NO_COMPILE_BASELINE and f.text.startswith("no torch.compile baseline: timeout")
               for f in r.flags), r.flags


def test_patch_during_timing_is_caught_with_compile_baseline(suite, build_root):
    """torch.compile rebinds torch internals, so patch evidence is re-based after it; a candidate that
    patches the clock only once timing has begun must still be caught (it was not, before)."""
    cfg = quick_config(build_root, 16, timing={"budget_s": 0.3, "compile_baseline": True}, run_timeout_s=120.0)
    late = cand("""
        import time
        CALLS = [0]
        class ModelNew(nn.Module):
            def forward(self, x):
                CALLS[0] += 1
                if CALLS[0] > 8:  # after the six correctness trials
                    time.perf_counter = lambda: 0.0
                return torch.clamp_min(x, 0.0)
        """, label="late_patch")
    (r,) = evaluate_candidates([suite[RELU]], [late], cfg)
    assert r.status == Status.CHEAT_DETECTED, r.message
    assert "time.perf_counter" in r.message, r.message
