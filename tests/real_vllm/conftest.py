"""Fixtures for the real-vLLM tests (marker ``vllm``; run them with ``bash scripts/vllm_check.sh``).

Every test here starts a real vLLM engine on the CPU (~1-2 min on 2 cores) against a tiny random model
written to disk once per session. Where ``vllm`` is not importable (the project's main environment and CI)
the test module skips itself at collection with the reason, before any model is built.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """The vLLM-loadable random GPT-2 of ``tiny_model.save_tiny_model`` (its output is noise)."""
    from multikernelbench.sampling.tiny_model import save_tiny_model

    return save_tiny_model(tmp_path_factory.mktemp("tiny-vllm-model"), seed=0)


@pytest.fixture(scope="session", autouse=True)
def warm_cpu_pch():
    """Overrides tests/conftest.py's precompiled-header warmer: nothing here builds C++ (noise has no
    kernels), and a ~1 min header build would compete with the vLLM engine for the host's two cores."""
    yield None
