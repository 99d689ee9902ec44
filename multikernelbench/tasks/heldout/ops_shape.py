"""Ops that look across elements: normalisations, softmax / log-softmax, pooling and reductions.

Flop convention (the suite's): batch norm (eval) 4 per element; layer / group / instance norm 7; RMS norm 4;
L2 normalisation 3; softmax and log-softmax 5; a pool one op per window element of each output; a reduction
one op per input element (logsumexp 3: max, exp-and-add, the final log is per row and not counted).
"""

from __future__ import annotations

import random
from dataclasses import replace

from multikernelbench.tasks.heldout.draft import Draft
from multikernelbench.tasks.heldout.vocabulary import register

AFFINE = ("with torch.no_grad():", "    {m}.weight.uniform_(0.5, 1.5)", "    {m}.bias.uniform_(-0.5, 0.5)")


def _per_element(d: Draft, what: str, k: int) -> tuple[tuple[str, str, bool], ...]:
    n = f'_numel(s["t{len(d.steps) + 1}"])'
    return ((what, n if k == 1 else f"{k} * {n}", False),)


def _channels(d: Draft) -> bool:
    v = d.current
    return not v.channel_reduced and d.channel_key(v) is not None


def _spatial(d: Draft) -> bool:
    v = d.current
    return v.is_conv and not v.spatial_reduced


@register("batch_norm", "norm", applies=lambda d: _channels(d) and (d.current.is_conv or len(d.current.dims) == 2))
def batch_norm(d: Draft, rng: random.Random) -> None:
    v = d.current
    nd = max(1, len(v.spatial_axes))
    key = d.init_arg(d.channel_key_of(v))
    m = d.member("bn", f"nn.BatchNorm{nd}d({key})", AFFINE + (
        "    {m}.running_mean.uniform_(-0.5, 0.5)", "    {m}.running_var.uniform_(0.5, 2.0)"))
    ax = v.channel_axis
    d.emit("batch_norm", "batch norm (inference)", "bn", f"{m}({v.name})", v, _per_element(d, "batch norm", 4),
           ("batch_norm",), (("batch norm weight, bias, running mean and variance", f"4 * {v.ref(ax)}"),))


@register("group_norm", "norm", applies=lambda d: _channels(d) and d.current.is_conv)
def group_norm(d: Draft, rng: random.Random) -> None:
    v = d.current
    groups = rng.choice((2, 4, 8))
    key = d.channel_key_of(v)
    d.require_multiple(key, groups)
    m = d.member("gn", f"nn.GroupNorm({groups}, {d.init_arg(key)})", AFFINE)
    d.emit("group_norm", f"group norm ({groups} groups)", "groupnorm", f"{m}({v.name})", v,
           _per_element(d, "group norm", 7), ("group_norm", groups),
           (("group norm weight and bias", f"2 * {v.ref(1)}"),))


@register("instance_norm", "norm", applies=lambda d: _channels(d) and _spatial(d))
def instance_norm(d: Draft, rng: random.Random) -> None:
    v = d.current
    nd = len(v.spatial_axes)
    m = d.member("inorm", f"nn.InstanceNorm{nd}d({d.init_arg(d.channel_key_of(v))}, affine=True)", AFFINE)
    d.emit("instance_norm", "instance norm", "instnorm", f"{m}({v.name})", v, _per_element(d, "instance norm", 7),
           ("instance_norm",), (("instance norm weight and bias", f"2 * {v.ref(1)}"),))


@register("layer_norm", "norm", applies=lambda d: _channels(d) and d.current.layout == "rows")
def layer_norm(d: Draft, rng: random.Random) -> None:
    v = d.current
    m = d.member("ln", f"nn.LayerNorm({d.init_arg(d.channel_key_of(v))})", AFFINE)
    ax = v.channel_axis
    d.emit("layer_norm", "layer norm", "layernorm", f"{m}({v.name})", v, _per_element(d, "layer norm", 7),
           ("layer_norm",), (("layer norm weight and bias", f"2 * {v.ref(ax)}"),))


@register("rms_norm", "norm", applies=lambda d: _channels(d) and d.current.layout == "rows")
def rms_norm(d: Draft, rng: random.Random) -> None:
    v = d.current
    m = d.member("rms", f"nn.Parameter(torch.rand({d.init_arg(d.channel_key_of(v))}) + 0.5)")
    ax = v.channel_axis
    expr = f"{v.name} * torch.rsqrt({v.name}.pow(2).mean(-1, keepdim=True) + 1e-6) * {m}"
    d.emit("rms_norm", "RMS norm", "rmsnorm", expr, v, _per_element(d, "RMS norm", 4), ("rms_norm",),
           (("RMS norm weight", v.ref(ax)),))


@register("l2_normalize", "norm", applies=_channels)
def l2_normalize(d: Draft, rng: random.Random) -> None:
    v = d.current
    ax = v.channel_axis
    d.emit("l2_normalize", "L2-normalise over channels", "l2norm", f"F.normalize({v.name}, dim={ax})", v,
           _per_element(d, "L2 normalisation", 3), ("l2_normalize",))


@register("softmax", "softmax", applies=_channels)
def softmax(d: Draft, rng: random.Random) -> None:
    v = d.current
    ax = v.channel_axis
    log = rng.random() < 0.4
    fn = "log_softmax" if log else "softmax"
    d.emit("softmax", f"{fn.replace('_', '-')} over channels", fn.replace("_", ""),
           f"torch.{fn}({v.name}, dim={ax})", v, _per_element(d, fn, 5), ("softmax", log))


@register("pool", "pool", applies=_spatial)
def pool(d: Draft, rng: random.Random) -> None:
    """2-wide pooling with stride 2 over every spatial axis (the lower bound of ranges keeps sizes >= 2)."""
    from multikernelbench.tasks.heldout.draft import SPATIAL_NAMES
    from multikernelbench.tasks.heldout.ops_anchor import SIZE_PREFIX

    v = d.current
    nd = len(v.spatial_axes)
    kind = rng.choice(("max", "avg"))
    sizes = [d.size_var(SIZE_PREFIX[SPATIAL_NAMES[v.layout][a - 2]], f"{v.dims[a]} // 2") for a in v.spatial_axes]
    out = replace(v, dims=(v.dims[0], v.dims[1], *sizes))
    n = f'_numel(s["t{len(d.steps) + 1}"])'
    d.emit("pool", f"{kind} pool 2", f"{kind}pool", f"F.{kind}_pool{nd}d({v.name}, 2)", out,
           ((f"{kind} pool", f"{2 ** nd} * {n}", False),), ("pool", kind))


REDUCTIONS = {"sum": ("torch.sum", 1), "mean": ("torch.mean", 1), "amax": ("torch.amax", 1),
              "amin": ("torch.amin", 1), "logsumexp": ("torch.logsumexp", 3)}


@register("reduce_channels", "reduce", applies=lambda d: _channels(d) and bool(d.steps))
def reduce_channels(d: Draft, rng: random.Random) -> None:
    v = d.current
    name = rng.choice(tuple(REDUCTIONS))
    fn, k = REDUCTIONS[name]
    ax = v.channel_axis
    out = replace(v, dims=tuple("1" if i == ax else x for i, x in enumerate(v.dims)), channel_reduced=True)
    d.emit("reduce_channels", f"{name} over channels", f"ch{name}", f"{fn}({v.name}, dim={ax}, keepdim=True)", out,
           ((f"{name} over channels", f"{k} * {v.numel}" if k > 1 else v.numel, False),), ("reduce_channels", name))


@register("reduce_spatial", "reduce", applies=lambda d: _spatial(d) and bool(d.steps))
def reduce_spatial(d: Draft, rng: random.Random) -> None:
    v = d.current
    name = rng.choice(("mean", "amax", "sum", "logsumexp"))
    fn, k = REDUCTIONS[name]
    axes = v.spatial_axes
    dim = axes[0] if len(axes) == 1 else tuple(axes)
    out = replace(v, dims=(v.dims[0], v.dims[1], *["1"] * len(axes)), spatial_reduced=True)
    d.emit("reduce_spatial", f"global {name} over space", f"sp{name}", f"{fn}({v.name}, dim={dim}, keepdim=True)",
           out, ((f"global {name}", f"{k} * {v.numel}" if k > 1 else v.numel, False),), ("reduce_spatial", name))
