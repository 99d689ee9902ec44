"""Shared fixtures: a build cache reused by every test in the session (C++ builds take ~20 s each)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def build_root(tmp_path_factory) -> Path:
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


#: extra_cflags of test candidates that are not the backend's warmed variants, on purpose: the matmul.square
#: honest twin (tests/data/honest_twins) and the three tricks of solutions/cpu/wrong/ built from the same
#: code add -falign-loops=64 so that their shared inner loop is placed alike (see test_fresh_inputs).
TEST_VARIANTS = (("-O3", "-march=native", "-fopenmp", "-falign-loops=64"),)


@pytest.fixture(scope="session", autouse=True)
def warm_cpu_pch():
    """Start the CPU backend's precompiled-header warmer once, at the start of the session, in the background
    (the default shared folder, ~/.cache/multikernelbench/pch). Each engine run starts its own warmer and
    stops it when the run ends; a run shorter than one PCH build (~55 s on 2 cores) would never finish it,
    and every later C++ build of the session would read torch's headers as text. Builds never wait for it.
    Besides the backend's own variants it warms TEST_VARIANTS, the flags of the test candidates that keep
    other flags on purpose (made once per machine; then each such build takes ~20 s of CPU instead of ~40)."""
    from multikernelbench.backends.cpu import CpuBackend
    from multikernelbench.backends.cuda_build import PchWarmer

    backend = CpuBackend()
    warmer = PchWarmer(backend.pch_root(), {}, with_cuda=False, variants=backend.WARM_VARIANTS + TEST_VARIANTS)
    yield warmer
    warmer.stop()
