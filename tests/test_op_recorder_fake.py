"""The dispatcher recorder ignores ops that cannot touch data (fake/meta tensors, tensor-free ops) and still
records every op on a real tensor.

Why: Helion compiles a kernel at its first call, inside the candidate's forward, by tracing the kernel body
(torch.relu, torch.addmm, ...) on FakeTensors; the recorder saw those ops and every correct Helion candidate
came back cheat_detected ("forward calls library compute op(s) aten::relu"). The attack side: compute done
under a fake mode yields no values, and real compute beside it is still seen."""

from __future__ import annotations

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

from multikernelbench.anticheat.runtime import OpRecorder


def test_fake_and_meta_ops_are_not_recorded():
    rec = OpRecorder()
    with rec:
        with FakeTensorMode() as mode:
            a = mode.from_tensor(torch.randn(4, 4))
            torch.relu(a @ a)
        m = torch.empty(3, 3, device="meta")
        torch.relu(m).sum()
        torch.promote_types(torch.float32, torch.float16)
    assert not any(op.endswith(("relu", "mm", "sum", "promote_types")) for op in rec.ops), rec.ops


def test_real_compute_is_recorded_even_beside_fake_tracing():
    x = torch.randn(8)
    rec = OpRecorder()
    with rec:
        with FakeTensorMode() as mode:
            torch.relu(mode.from_tensor(torch.randn(4)))
        torch.relu(x)  # the real answer, computed by a library op
        x.new_tensor([1.0]) + x  # a real tensor mixed into an op
    assert rec.ops.get("aten::relu") == 1, rec.ops
    assert "aten::add" in rec.ops, rec.ops
