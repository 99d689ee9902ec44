"""The compute-heavy ops a task is built around: linear / matmul and 1-3d convolutions (plain and transposed).

Starters create the first input; anchors change the channel or feature count (a new shape key) and, for
convolutions, the spatial sizes (new size variables). Their multiply-adds are the flops torch's
FlopCounterMode counts, which the cost tests compare with.
"""

from __future__ import annotations

import random

from multikernelbench.tasks.heldout.draft import SPATIAL_NAMES, Draft, Role, Value
from multikernelbench.tasks.heldout.vocabulary import register

SIZE_PREFIX = {"length": "l", "depth": "d", "height": "h", "width": "w"}


def start_input(d: Draft, layout: str, rng: random.Random) -> Value:
    """The first input ``x``: (batch, [seq,] f0) rows, or (batch, c0, spatial...)."""
    batch = d.key("batch", Role("batch"))
    if layout == "rows":
        seq = [d.key("seq", Role("seq"))] if rng.random() < 0.5 else []
        dims = (batch, *seq, d.key("f", Role("features")))
    else:
        dims = (batch, d.key("c", Role("channels")), *(d.key(n, Role("spatial")) for n in SPATIAL_NAMES[layout]))
    d.add_input(dims)
    return d.start(Value("x", dims, layout))


def _conv_size(size: str, k: int, stride: int, pad: int, dil: int, transposed: bool, op: int) -> str:
    if transposed:
        const = -stride - 2 * pad + dil * (k - 1) + op + 1
        base = f"{size} * {stride}" if stride > 1 else size
    else:
        const = 2 * pad - dil * (k - 1) - 1 + stride
        base = size
        if stride > 1:
            return f"({size} {'+' if const >= 0 else '-'} {abs(const)}) // {stride}" if const else f"{size} // {stride}"
    return base if const == 0 else f"{base} {'+' if const > 0 else '-'} {abs(const)}"


def conv(d: Draft, rng: random.Random, transposed: bool = False, pointwise: bool = False) -> None:
    v = d.current
    nd = len(v.spatial_axes)
    cin = d.channel_key_of(v)
    cout = d.key("c", Role("channels"))
    if pointwise:
        k, stride, pad, dil, groups, op = 1, 1, 0, 1, 1, 0
    elif transposed:
        k = rng.choice((2, 3, 4) if nd < 3 else (2, 3))
        stride = rng.choice((1, 2, 2))
        pad = rng.choice(range(0, min(k - 1, 1) + 1))
        dil, groups = 1, 1
        op = 1 if stride == 2 and rng.random() < 0.3 else 0
    else:
        k = rng.choice((1, 3, 3, 5) if nd < 3 else (1, 3, 3))
        stride = rng.choice((1, 1, 2)) if k > 1 else 1
        pad = rng.choice((0, k // 2))
        dil = 2 if nd < 3 and k == 3 and stride == 1 and rng.random() < 0.2 else 1
        if dil == 2 and pad:
            pad = 2
        groups = rng.choice((1, 1, 1, 2, 4)) if k > 1 else 1
        op = 0
    if groups > 1:
        d.require_multiple(cin, groups)
        d.require_multiple(cout, groups)
    sizes = []
    for axis in v.spatial_axes:
        old = v.dims[axis]
        expr = _conv_size(old, k, stride, pad, dil, transposed, op)
        prefix = SIZE_PREFIX[SPATIAL_NAMES[v.layout][axis - 2]]
        sizes.append(old if expr == old else d.size_var(prefix, expr))
    out = Value("", (v.dims[0], cout, *sizes), v.layout)
    bias = rng.random() < 0.8
    kind = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"
    cls = f"nn.ConvTranspose{nd}d" if transposed else f"nn.Conv{nd}d"
    extras = "".join([f", stride={stride}" if stride > 1 else "", f", padding={pad}" if pad else "",
                      f", output_padding={op}" if op else "", f", dilation={dil}" if dil > 1 else "",
                      f", groups={groups}" if groups > 1 else "", "" if bias else ", bias=False"])
    m = d.member("conv", f"{cls}({d.init_arg(cin)}, {d.init_arg(cout)}, {k}{extras})")
    kvol = k ** nd
    name = f"t{len(d.steps) + 1}"
    if transposed:
        mac = f'2 * {v.numel} * s["{name}"][1] * {kvol}'
    else:
        mac = f'2 * _numel(s["{name}"]) * ({v.ref(1)}{f" // {groups}" if groups > 1 else ""}) * {kvol}'
    kernel = "1x1 (pointwise)" if pointwise else (f"k{k}" if nd == 1 else "x".join([str(k)] * nd))
    label = " ".join([kind, kernel]
                     + [f"stride {stride}"] * (stride > 1) + [f"dilation {dil}"] * (dil > 1)
                     + [f"{groups} groups"] * (groups > 1))
    flops = [(label, mac, True)] + [("bias", f'_numel(s["{name}"])', False)] * bias
    weight = f'{v.ref(1)} * s["{name}"][1]{f" // {groups}" if groups > 1 else ""} * {kvol}'
    params = [(f"{label} weight", weight)] + [("bias", f's["{name}"][1]')] * bias
    d.emit(kind, label, ("convt" if transposed else "conv") + f"{nd}d", f"{m}({v.name})", out, flops,
           (kind, k, stride, pad, dil, groups, op, bias), tuple(params))


def _conv_input(d: Draft) -> bool:
    v = d.current
    return v.is_conv and not v.channel_reduced and not v.spatial_reduced


@register("conv", "anchor", applies=lambda d: not d.steps and d.current.is_conv)
def conv_first(d: Draft, rng: random.Random) -> None:
    conv(d, rng)


@register("conv_transpose", "anchor", applies=lambda d: not d.steps and d.current.is_conv)
def conv_transpose_first(d: Draft, rng: random.Random) -> None:
    conv(d, rng, transposed=True)


@register("pointwise_conv", "anchor", applies=lambda d: bool(d.steps) and _conv_input(d))
def pointwise_conv(d: Draft, rng: random.Random) -> None:
    conv(d, rng, pointwise=True)


@register("linear", "anchor", applies=lambda d: d.current.layout == "rows" and not d.current.channel_reduced)
def linear(d: Draft, rng: random.Random) -> None:
    v = d.current
    fin = d.channel_key_of(v)
    fout = d.key("f", Role("features"))
    bias = rng.random() < 0.8
    m = d.member("linear", f"nn.Linear({d.init_arg(fin)}, {d.init_arg(fout)}{'' if bias else ', bias=False'})")
    out = Value("", (*v.dims[:-1], fout), "rows")
    name = f"t{len(d.steps) + 1}"
    ax = v.channel_axis
    flops = [("linear", f'2 * _numel(s["{name}"]) * {v.ref(ax)}', True)]
    flops += [("bias", f'_numel(s["{name}"])', False)] * bias
    params = [("linear weight", f'{v.ref(ax)} * s["{name}"][{ax}]')] + [("bias", f's["{name}"][{ax}]')] * bias
    d.emit("linear", "linear", "linear", f"{m}({v.name})", out, flops, ("linear", bias), tuple(params))


def start_matmul(d: Draft, rng: random.Random) -> None:
    """``x @ y``: (m, k) @ (k, n), or batched (batch, m, k) @ (batch, k, n); y scaled by 1/sqrt(k)."""
    batched = rng.random() < 0.6
    lead = (d.key("batch", Role("batch")),) if batched else ()
    m, k = d.key("seq", Role("seq")), d.key("f", Role("features"))
    n = d.key("f", Role("features"))
    x = Value("x", (*lead, m, k), "rows")
    d.add_input(x.dims)
    y = d.add_input((*lead, k, n), maker="randn(gen, *{s}, std={s}[-2] ** -0.5)", name="y")
    d.start(x)
    name = f"t{len(d.steps) + 1}"
    out = Value("", (*lead, m, n), "rows")
    flops = [("matmul", f'2 * _numel(s["{name}"]) * {x.ref(len(lead) + 1)}', True)]
    d.emit("matmul", "batched matmul" if batched else "matmul", "bmm" if batched else "matmul",
           f"torch.{'bmm' if batched else 'matmul'}(x, {y})", out, flops, ("matmul", batched))
