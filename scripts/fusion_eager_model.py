"""Eager-time model used for benchmarks/baseline_cuda_h200/fusion_reshape.md: trace a task's aten ops on meta
tensors at a shape, cost each kernel on the H200 table (see that file). Run from the repo root."""

import json
import math
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import multikernelbench.tasks.gen as G
from multikernelbench.tasks.module import exec_source
from multikernelbench.tasks.record import torch_dtype

HW = json.load(open(Path(__file__).resolve().parents[1] / "multikernelbench/hardware/nvidia_h200.json"))
BW = HW["copy_bandwidth_gbps"] * 1e9
PEAK = {"float32": HW["fp32_matmul_tflops"] * 1e12, "bfloat16": HW["bf16_matmul_tflops"] * 1e12}


def _m(*size, dtype=torch.float32):
    return torch.empty(*size, device="meta", dtype=dtype)


G.randn = lambda gen, *s, mean=0.0, std=1.0: _m(*s)
G.uniform = lambda gen, *s, low=0.0, high=1.0: _m(*s)
G.positive = lambda gen, *s, low=0.1, high=2.0: _m(*s)
G.randint = lambda gen, lo, hi, *s: _m(*s, dtype=torch.int64)
G.permutation = lambda gen, n: _m(n, dtype=torch.int64)


class FakeGen:
    device = torch.device("meta")


VIEWISH = {
    "aten.view",
    "aten.t",
    "aten.transpose",
    "aten.expand",
    "aten.unsqueeze",
    "aten.squeeze",
    "aten._unsafe_view",
    "aten.permute",
    "aten.reshape",
    "aten.slice",
    "aten.select",
    "aten.alias",
    "aten.detach",
    "aten.as_strided",
    "aten.split",
    "aten.unbind",
    "aten.chunk",
    "aten.split_with_sizes",
    "aten.unflatten",
    "aten.flatten",
    "aten._reshape_alias",
    "aten.lift_fresh",
}
GEMM = {"aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm", "aten.matmul"}
CONV = {"aten.convolution", "aten.cudnn_convolution", "aten._convolution"}


def tbytes(t):
    return t.numel() * t.element_size()


class Rec(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.overloadpacket._qualified_op_name.replace("::", ".")
        ins = [a for a in torch.utils._pytree.tree_leaves((args, kwargs)) if isinstance(a, torch.Tensor)]
        outs = [a for a in torch.utils._pytree.tree_leaves(out) if isinstance(a, torch.Tensor)]
        self.ops.append((name, func, ins, outs, args))
        return out


def trace(source, category, name, shape, dtype):
    mod = exec_source(source, f"{category}.{name}")
    init = list(mod.get_init_inputs(dict(shape)))
    with torch.device("meta"):
        model = mod.Model(*init)
    model = model.to(dtype=torch_dtype(dtype)).eval()
    ins = list(mod.get_inputs(dict(shape), FakeGen()))
    ins = [x.to(torch_dtype(dtype)) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in ins]
    rec = Rec()
    with torch.no_grad(), rec:
        model(*ins)
    return rec.ops


# calibration knobs
CAL = dict(
    gemm_eff={"float32": 1.0, "bfloat16": 1.0}, bw_eff=1.0, launch_us=4.0, conv_eff={"float32": 1.0, "bfloat16": 1.0}
)
# reductions/normalizations that the CUDA implementation runs as several passes
MULTIPASS = {"aten.logsumexp": 3.0, "aten.native_group_norm": 2.0}


def cost(ops, dtype, cal=CAL, detail=False):
    total = 0.0
    rows = []
    for name, func, ins, outs, _args in ops:
        if name in VIEWISH or getattr(func, "is_view", False):
            continue
        seen = set()
        rb = 0
        for t in ins:
            key = id(t)
            if key in seen:
                continue
            seen.add(key)
            rb += (
                tbytes(t) if not (t.dim() and 0 in t.stride() and t.numel() > 1) else tbytes(t)
            )  # expand handled below
        wb = sum(tbytes(t) for t in outs)
        # inputs that are expanded views: count real storage
        rb = 0
        seen = set()
        for t in ins:
            if id(t) in seen:
                continue
            seen.add(id(t))
            real = 1
            for s, st in zip(t.shape, t.stride(), strict=True):
                if st != 0:
                    real *= s
            rb += real * t.element_size()
        if name in GEMM:
            a, b = [x for x in ins if x.dim() >= 2][-2:]
            flops = 2 * outs[0].numel() * a.shape[-1]
            c = flops / (PEAK[dtype] * cal["gemm_eff"][dtype])
            mm_ = (rb + wb) / (BW * cal["bw_eff"])
            # small-K GEMMs do not fully overlap their output write with the math (matmul.small_k,
            # bmm_nt, matmul_4d rows: measured = max + 0.4..1.3 x min); 0.5 is the middle, on the fast side
            t = max(c, mm_) + cal.get("gemm_beta", 0.5) * min(c, mm_)
            kind = "gemm"
        elif name in CONV:
            w = ins[1]
            flops = 2 * outs[0].numel() * w.shape[1] * math.prod(w.shape[2:])
            t = max(flops / (PEAK[dtype] * cal["conv_eff"][dtype]), (rb + wb) / (BW * cal["bw_eff"]))
            kind = "conv"
        else:
            t = MULTIPASS.get(name, 1.0) * (rb + wb) / (BW * cal["bw_eff"])
            kind = "mem"
        t += cal["launch_us"] * 1e-6
        total += t
        rows.append((name, kind, rb, wb, t))
    return (total, rows) if detail else total
