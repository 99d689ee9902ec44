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
