"""Shared fixtures: a build cache reused by every test in the session (C++ builds take ~20 s each)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _xdist_worker() -> bool:
    return bool(os.environ.get("PYTEST_XDIST_WORKER"))


#: Test files by measured wall time on the 2-core host, longest first (cold run of 2026-12-01, seconds):
#: README's command gives each file to one of two pytest-xdist workers, and a long file handed out last
#: leaves the other worker idle at the end (~2 min of the 25-min run at 4082451, when files went out by test
#: count). Files not named here follow in collection order; a renamed file only loses its place.
LONGEST_FIRST = ("test_prompt_exemplars.py", "test_anticheat_cpu.py", "test_suite_selfcheck.py",
                 "test_engine_python.py", "test_pipeline.py", "test_heldout.py", "test_backend_pallas_interp.py",
                 "test_cli_baseline.py", "test_demo.py", "test_cli_errors.py", "test_suite_gates.py",
                 "test_fresh_inputs.py", "test_hfcache.py")


def pytest_configure(config):
    """pytest-xdist's ``--dist loadfile`` hands files out by test count unless told to keep the collection's
    order (``--no-loadscope-reorder``); set here rather than in addopts, which would break a run without xdist."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    """Longest files first; stable, so every worker collects the same order."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Under pytest-xdist (README's test command runs two workers): a test marked ``timing`` (it compares
    measured speeds against a margin) runs alone. It takes an exclusive lock on a file that every worker
    shares, every other test a shared one, each for its whole protocol (setup, including module fixtures
    set up for it, call and teardown), so the other worker waits between two of its tests while it runs.
    Without xdist there is nothing to wait for."""
    if not _xdist_worker():
        yield
        return
    import fcntl

    path = item.config._tmp_path_factory.getbasetemp().parent / "mkb-timing.lock"  # the workers' common parent
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX if item.get_closest_marker("timing") else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


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
    from multikernelbench.backends.cuda_warm import PchWarmer, missing_pch_variants

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
