"""The numba_cuda and helion exemplars are correct kernels, checked on the CPU the way the engine runs them
here: Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) and Triton's interpreter running the Triton code
Helion generates (``TRITON_INTERPRET=1``, with the backend's libdevice support for the interpreter). Both
switches must be set before numba/triton are imported, hence the subprocess. On a GPU host the gpu test runs
the same files natively."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from tests.test_prompt_exemplars import REPO, _interpret_check


@pytest.mark.slow
def test_numba_cuda_exemplars_in_simulator():
    pytest.importorskip("numba_cuda")
    _interpret_check("numba_cuda", {"NUMBA_ENABLE_CUDASIM": "1"})


@pytest.mark.slow
def test_helion_exemplars_in_triton_interpreter():
    pytest.importorskip("helion")
    _interpret_check("helion", {"TRITON_INTERPRET": "1", "HELION_AUTOTUNE_EFFORT": "none",
                                "TRITON_F32_DEFAULT": "ieee"})


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")
@pytest.mark.parametrize("backend", ["numba_cuda", "helion"])
def test_gpu_exemplars_numba_helion(backend):
    proc = subprocess.run([sys.executable, "-m", "multikernelbench.prompts.exemplar_check", "--backend", backend,
                           "--device", "cuda"], cwd=REPO, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "HELION_AUTOTUNE_EFFORT": "none", "TRITON_F32_DEFAULT": "ieee"})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
