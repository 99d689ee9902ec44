"""Shared fixtures: a build cache reused by every test in the session (C++ builds take ~20 s each)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: ``--fast-limit``: the fast tier's rule (tests not marked ``slow`` stay cheap), checked when asked. A root
#: session's temporary folders outside ``/tmp/pytest-of-root``, whose mode every new pytest session resets
#: (tests/_private_temp.py: what made builds fail with EACCES under ``drop_root``). The ``executor`` fixture: one
#: test on both executors, the local threads and Ray (tests/_executors.py). ``--suite-profile PATH``: each test's
#: start, wall and CPU, for finding a full run's idle time (tests/_suite_profile.py). The in-process engine runs
#: share one zygote per test process; ``own_zygotes`` opts a test out (tests/_kept_zygotes.py).
pytest_plugins = ("tests._fast_tier", "tests._private_temp", "tests._executors", "tests._suite_profile",
                  "tests._kept_zygotes")


def _xdist_worker() -> bool:
    return bool(os.environ.get("PYTEST_XDIST_WORKER"))


#: Files whose tests are marked ``timing`` (they run alone under xdist, see pytest_runtest_protocol): handed out
#: first, so each waits at most for the other worker's timing file, not for a long build-heavy test of a file
#: that happens to be running there (a C++ exemplar run or a backend's module fixture: 100-550 s on 2 cores).
#: (test_sandbox_kernel and test_worker_isolation time nothing but are marked ``timing`` to run alone too.)
TIMING_FIRST = ("test_fresh_inputs.py", "test_timing_integrity.py", "test_timing_evidence.py", "test_sandbox_kernel.py",
                "test_worker_isolation.py", "test_malloc_state.py")

#: Then the other test files by measured wall time on the 2-core host, longest first (seconds in the comments:
#: summed test durations: the 25 slowest of CI's run of 2026-12-05 (28:44 of pytest) where a file has one there,
#: else the full run of 2026-12-04 ~11:05, else a cold run with a fresh HOME at 662bb66, else a one-process run of
#: the file; on loaded hosts, so only the order matters): README's command gives each file to one of two
#: pytest-xdist workers, and a long file handed out last leaves the other worker idle at the end. Files not named
#: here follow in collection order; a renamed file only loses its place (tests/test_suite_order.py checks the
#: names).
LONGEST_FIRST = TIMING_FIRST + (
    "test_prompt_exemplars.py",  # 368+ (CPU exemplars 306, OpenCL 62)
    "test_anticheat_cpu.py",  # 373
    "test_cuda_light_headers.py",  # 233 (+ test_host_pch's real round since 2026-12-05: 123 on CI)
    "test_pipeline.py",  # 208 (130+ on CI)
    "test_suite_selfcheck.py",  # 203 (127+ on CI)
    "test_exemplars_numba_helion.py",  # 160
    "test_ray_cluster.py",  # 150
    "test_engine_python.py",  # 150
    "test_demo.py",  # 144
    "test_backend_helion_cpu.py",  # 113
    "test_verdict_outputs.py",  # 112
    "test_suite_gates.py",  # 109
    "test_heldout.py",  # 90
    "test_cli_baseline.py",  # 88
    "test_serve_lanes.py",  # 87+ (two sleeper tests on CI; was not named: handed out among the last)
    "test_backend_opencl.py",  # 87
    "test_backend_numba_cuda_cpu.py",  # 75
    "test_serve_attacks.py",  # 75
    "test_backend_pallas_interp.py",  # 72
    "test_build_toolchain.py",  # 70 (one process, warm: a second venv's C++ build, then this one's)
    "test_ctrl_c.py",  # 68
    "test_hfcache.py",  # 56
    "test_kernelbench_import.py",  # 51
    "test_cli_errors.py",  # 47
    "test_install_by_name.py",  # 41
    "test_pch_warmer.py",  # 41
    "test_prefetch.py",  # 35
    "test_metrics_module.py",  # 30
    "test_cli_resume.py",  # 28
    "test_serve_restart.py",  # 24
    "test_prompts.py",  # 23
    "test_build_gate.py",  # 20
)


def pytest_configure(config):
    """pytest-xdist's ``--dist loadfile`` hands files out by test count unless told to keep the collection's
    order (``--no-loadscope-reorder``); set here rather than in addopts, which would break a run without xdist."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    # Ray's authentication mode, fixed for every Ray session of the suite (before any starts: each xdist worker
    # configures before collecting). ``ray.init()`` of a local cluster otherwise writes RAY_AUTH_MODE=token into
    # os.environ and switches the process to token mode for good; test_worker_isolation then restores its saved
    # environment, which removes the variable, and the next module's cluster (test_ray_cluster, same worker) ran
    # its nodes without token mode beside a driver in it: the GCS's calls to the driver came without the token,
    # the GCS took the driver for dead and cancelled every lane actor (five failures in two CI-like runs,
    # whenever the two files met on one worker in that order). tests/test_ray_env.py replays that sequence.
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")


def pytest_collection_modifyitems(config, items):
    """Longest files first; stable, so every worker collects the same order."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


class _TimingLock:
    """Per worker: the shared file lock of pytest_runtest_protocol. A ``timing`` test holds it exclusively, and
    keeps holding it through the following tests of its file that are ``timing`` too (one wait per file, not one
    per test: between two of them the other worker would otherwise start a test of its own, maybe a long one).
    Writers first: a worker waiting for the exclusive lock holds a second lock, the gate, which every test takes
    briefly before its shared lock, so the other worker starts nothing new meanwhile and the wait is bounded by
    the test running there (plain flock would let shared holders take turns past a waiting writer)."""

    def __init__(self, folder: Path) -> None:
        self.main = open(folder / "mkb-timing.lock", "a")
        self.gate = open(folder / "mkb-timing.gate", "a")
        self.exclusive = False

    def acquire(self, timing: bool) -> None:
        import fcntl

        if self.exclusive:
            return
        fcntl.flock(self.gate, fcntl.LOCK_EX)
        if timing:
            fcntl.flock(self.main, fcntl.LOCK_EX)  # the gate stays held: nothing new starts over there
            self.exclusive = True
            return
        try:
            fcntl.flock(self.main, fcntl.LOCK_SH)
        finally:
            fcntl.flock(self.gate, fcntl.LOCK_UN)

    def release(self, keep: bool) -> None:
        import fcntl

        if keep:
            return
        fcntl.flock(self.main, fcntl.LOCK_UN)
        if self.exclusive:
            fcntl.flock(self.gate, fcntl.LOCK_UN)
            self.exclusive = False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Under pytest-xdist (README's test command runs two workers): a test marked ``timing`` (it compares
    measured speeds against a margin) runs alone. It takes an exclusive lock on a file that every worker
    shares, every other test a shared one, each for its whole protocol (setup, including module fixtures
    set up for it, call and teardown), so the other worker waits between two of its tests while it runs
    (:class:`_TimingLock`). Without xdist there is nothing to wait for."""
    if not _xdist_worker():
        yield
        return
    config = item.config
    lock = getattr(config, "_mkb_timing_lock", None)
    if lock is None:
        lock = config._mkb_timing_lock = _TimingLock(config._tmp_path_factory.getbasetemp().parent)
    timing = item.get_closest_marker("timing") is not None
    lock.acquire(timing)
    keep = timing and nextitem is not None and nextitem.path == item.path \
        and nextitem.get_closest_marker("timing") is not None
    try:
        yield
    finally:
        lock.release(keep)


@pytest.fixture(scope="session")
def cpu_pch():
    """The cpu backend's precompiled headers (its ``WARM_VARIANTS``: no flags, and the flag set of the shipped
    solutions and the prompts' exemplars), made before the session's first C++ build and waited for.

    A run's own warmer never makes a build wait, which is right for a run but wrong for a test session on a
    fresh machine (CI's every run): the niced warmer got little CPU beside two busy test workers, so nearly
    every C++ build of the session read torch's headers as text, twice the CPU of a PCH build (measured: 39 of
    44 builds of a cold run). Here both headers are made side by side at normal priority (~1 min on 2 cores,
    once per machine: they stay in ~/.cache/multikernelbench/pch); under pytest-xdist each header is made by
    one worker while the other waits for it. Requested by ``build_root`` and by the files that build C++ in
    folders of their own."""
    from multikernelbench.backends.cpu import CpuBackend
    from multikernelbench.backends.extbuild.cuda_warm import PchWarmer, missing_pch_variants

    backend = CpuBackend()
    missing = missing_pch_variants(backend.pch_root(), backend.WARM_VARIANTS)
    warmers = [PchWarmer(backend.pch_root(), {}, with_cuda=False, variants=(v,), background=False, wait=True)
               for v in missing]
    try:
        for w in warmers:
            assert w.wait(timeout=900) == 0, w.log_path.read_text()[-2000:]
    finally:
        for w in warmers:
            w.stop()
    still = missing_pch_variants(backend.pch_root(), backend.WARM_VARIANTS)
    assert not still, f"no precompiled header for {still}"
    return backend.pch_root()


@pytest.fixture(scope="session")
def build_root(tmp_path_factory, cpu_pch) -> Path:
    if _xdist_worker():
        # pytest-xdist: one folder for all workers (their base temps share a parent), so a candidate built by
        # one is found built by the others; two builders of one folder take its lock and build it once.
        root = tmp_path_factory.getbasetemp().parent / "mkb-builds"
        root.mkdir(exist_ok=True)
        return root
    return tmp_path_factory.mktemp("mkb-builds")


@pytest.fixture(scope="session")
def suite():
    from multikernelbench.tasks import load_suite

    return {t.id: t for t in load_suite()}


@pytest.fixture
def engine_config(build_root):
    from multikernelbench.engine.config import EngineConfig, TimingConfig

    def make(**overrides):
        timing = overrides.pop("timing", TimingConfig(min_runs=3, max_runs=20, budget_s=0.5, warmup=1))
        cfg = EngineConfig(backend="cpu", build_root=build_root, allow_code_execution=True, timing=timing,
                           run_timeout_s=60.0, compile_timeout_s=600.0, seed=1234)
        for k, v in overrides.items():
            setattr(cfg, k, v)
        return cfg

    return make
