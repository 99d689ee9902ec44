"""How many calls one GPU sample may make is bounded by the device memory their input slots and outputs take.

On an 80 GB H100 a call that returns at once on 2 GiB inputs (a kernel that skips its work; an honest index
into a huge tensor is alike) was planned at the batch cap, one fresh 2 GiB slot per call, and the worker ran
out of memory before any output was checked. CPU (CI): the sizes the bound is computed from; ``gpu``: the
bound itself, with a real sampler.
"""

from __future__ import annotations

import pytest
import torch

from multikernelbench.engine.fresh import FreshInputs
from multikernelbench.engine.messages import FreshGrant
from multikernelbench.timing.loop import Fresh, tensor_bytes


def test_tensor_bytes_counts_nested_tensors_and_nothing_else():
    x = torch.zeros(10, 3)
    assert tensor_bytes([x, (torch.zeros(4, dtype=torch.float16), {"k": torch.zeros(2, dtype=torch.int64)}),
                         5, "s", None]) == 120 + 8 + 16
    assert tensor_bytes(x) == 120 and tensor_bytes(3.0) == 0


def test_a_slot_reports_its_inputs_bytes():
    fresh = FreshInputs(lambda *a, **k: FreshGrant(seeds=[1, 2]),
                        lambda seed: [torch.full((256, 4), float(seed)), 7], positions=16, edge=2)
    assert fresh.slot_bytes("candidate") == 0  # no slot yet: unknown, never a bound
    fresh.renew("candidate", 2)
    assert fresh.slot_bytes("candidate") == 256 * 4 * 4
    assert Fresh().slot_bytes("candidate") == 0


class _HugeSlots(Fresh):
    """Input slots the size of a quarter of the device each (the sampler only asks their size)."""

    def slot_bytes(self, name: str) -> int:
        return torch.cuda.get_device_properties(0).total_memory // 4


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_fast_call_on_huge_inputs_is_not_batched_past_the_memory():
    from multikernelbench.timing.cuda_events import CudaEventSampler

    x = torch.zeros(16, device="cuda")
    sampler = CudaEventSampler()
    plan = sampler.plan("candidate", lambda j: x + 1, _HugeSlots())
    assert plan.calls == 1  # 0.2 of the free memory holds no two slots of a quarter of the device
    small = sampler.plan("candidate", lambda j: x + 1, Fresh())
    assert small.calls > 1  # unknown slot sizes keep the batch
