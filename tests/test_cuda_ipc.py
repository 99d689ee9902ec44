"""Large CUDA outputs read by the parent through a CUDA IPC handle (engine/cuda_ipc.py; issue #40, item 1).

On the CPU (CI): the parent refuses what a worker could forge — a malformed IPC record, values at positions it
never told a GPU worker — and a CPU tensor is never exported. Marked ``gpu`` (the lead's device run): a real
second process exports an output, the parent reads it at secret positions through the handle and gets the same
values; exporting runs no aten op (a candidate's RecordFunction callback sees nothing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from multikernelbench.engine import cuda_ipc
from multikernelbench.engine.fresh import FreshPlanner
from multikernelbench.engine.raw_outputs import OddOutput, secret_positions
from multikernelbench.timing.config import TimingConfig

GOOD = {"ipc": "00" * 64, "offset": 0, "extent": 4 * 600 * 700, "shape": [600, 700], "stride": [700, 1],
        "dtype": "torch.float32"}


@pytest.mark.parametrize("change", [
    {"ipc": 5}, {"ipc": "00"}, {"dtype": "torch.quint8"}, {"shape": [600]}, {"offset": -4}, {"offset": 2},
    {"extent": 4 * 600 * 700 + 4}, {"stride": [1, -600]}, {"shape": "600x700"},
])
def test_a_malformed_ipc_record_is_refused_before_any_mapping(change):
    with cuda_ipc.IpcReader() as reader, pytest.raises(ValueError):
        reader.values({**GOOD, **change}, 0, secret_positions(1, 16, 2), limit=20)


def test_a_cpu_tensor_is_not_exported():
    with pytest.raises(OddOutput):
        cuda_ipc.export(torch.zeros(1 << 20), 0, [])


def test_values_at_positions_a_gpu_worker_was_never_told_are_refused():
    """A GPU worker is not sent the positions seed (``send_positions`` off), so values "gathered" at positions are
    forged: refused as malformed, never compared."""
    planner = FreshPlanner(TimingConfig(), send_positions=False, positions=16, edge=2)
    rec = {"gathered": torch.zeros(20 * 4, dtype=torch.uint8), "shape": [1 << 20], "dtype": "torch.float32"}
    with pytest.raises(ValueError, match="never told"):
        planner._sampled([rec], secret_positions(7, 16, 2), cuda_ipc.IpcReader())
    planner.send_positions = True  # a CPU worker's gathered values are read as before
    values, meta = planner._sampled([rec], secret_positions(7, 16, 2), cuda_ipc.IpcReader())
    assert values[0].numel() == 20 and meta == [[[1 << 20], "torch.float32"]]


_CHILD = """
import json, sys, torch
from multikernelbench.engine import cuda_ipc
g = torch.Generator(device="cuda").manual_seed(11)
t = torch.randn(2048, 1000, device="cuda", generator=g).t()  # strided, 8 MB
torch.cuda.synchronize()
keep = []
print(json.dumps(cuda_ipc.export(t, 0, keep, stage=sys.argv[1] == "stage")), flush=True)
sys.stdin.readline()  # alive until the parent has read it
"""


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize(("alloc", "stage"), [("", ""), ("expandable_segments:True", ""), ("", "stage")])
def test_the_parent_reads_another_process_output_at_its_positions(alloc, stage):
    """``expandable_segments``: torch's allocator maps virtual memory the driver cannot export (as JAX's is on the
    H100): the worker copies it into memory of its own first, and the parent reads the same values. ``stage``:
    exportable memory copied all the same (Backend.stages_outputs) reads the same."""
    env = {**os.environ, "PYTORCH_CUDA_ALLOC_CONF": alloc} if alloc else None
    child = subprocess.Popen([sys.executable, "-c", _CHILD, stage], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env=env)
    try:
        rec = json.loads(child.stdout.readline())
        positions = secret_positions(99, 4096, 1024)
        with cuda_ipc.IpcReader() as reader:
            got, meta = reader.values(rec, 0, positions, limit=4096 + 2048)
    finally:
        child.stdin.write("\n")
        child.stdin.close()
        child.wait(timeout=60)
    g = torch.Generator(device="cuda").manual_seed(11)
    want = torch.randn(2048, 1000, device="cuda", generator=g).t().contiguous().reshape(-1).cpu()
    assert meta == [[1000, 2048], "torch.float32"]
    assert torch.equal(got, want[torch.from_numpy(np.mod(positions, want.numel()))])


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_exporting_runs_no_aten_op():
    t = torch.randn(3000, 700, device="cuda")
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        rec = cuda_ipc.export(t, 0, [])
    assert [e.name for e in prof.events() if e.name.startswith("aten::")] == []
    assert rec["extent"] == t.numel() * 4 and len(bytes.fromhex(rec["ipc"])) == 64


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_staging_copies_exportable_memory_too():
    """Every large output of a staging backend pays the copy, so the reference's renewals cost what the
    candidate's do (the honest Pallas upsample convicted on an H100 when only its own outputs were copied)."""
    t = torch.randn(3000, 700, device="cuda")
    torch.cuda.synchronize()
    plain, staged = [], []
    cuda_ipc.export(t, 0, plain)
    cuda_ipc.export(t, 0, staged, stage=True)
    assert [type(k) for k in plain] == [torch.Tensor]
    assert [type(k) for k in staged] == [cuda_ipc.Staging, torch.Tensor]


def test_only_a_gpu_pallas_backend_stages_its_outputs():
    from multikernelbench.backends.base import Backend
    from multikernelbench.backends.pallas import PallasBackend

    assert Backend.stages_outputs is False and PallasBackend.stages_outputs is True
    assert PallasBackend(interpret=True).stages_outputs is False  # interpret mode: CPU tensors, nothing exported
