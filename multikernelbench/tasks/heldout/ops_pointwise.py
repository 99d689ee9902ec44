"""Elementwise ops: activations, constant and learned scales and shifts, and binary ops with broadcasting.

Every one costs 1 flop per output element (the suite's convention for simple elementwise ops; a gate
``a * sigmoid(b)`` counts 2). Learned per-channel parameters are drawn away from 0 and 1 so they matter.
"""

from __future__ import annotations

import random

from multikernelbench.tasks.heldout.draft import Draft, Value
from multikernelbench.tasks.heldout.vocabulary import register

# name -> (forward expression with {x}, label); parameters drawn below for the parametrised ones
ACTIVATIONS = {
    "relu": ("torch.relu({x})", "ReLU"),
    "gelu": ("F.gelu({x})", "GELU"),
    "gelu_tanh": ("F.gelu({x}, approximate=\"tanh\")", "GELU (tanh)"),
    "silu": ("F.silu({x})", "SiLU"),
    "tanh": ("torch.tanh({x})", "tanh"),
    "sigmoid": ("torch.sigmoid({x})", "sigmoid"),
    "leaky_relu": ("F.leaky_relu({x}, {a})", "leaky ReLU ({a})"),
    "elu": ("F.elu({x}, alpha={a})", "ELU ({a})"),
    "selu": ("F.selu({x})", "SELU"),
    "hardswish": ("F.hardswish({x})", "hardswish"),
    "hardsigmoid": ("F.hardsigmoid({x})", "hardsigmoid"),
    "mish": ("F.mish({x})", "Mish"),
    "softplus": ("F.softplus({x})", "softplus"),
    "hardtanh": ("F.hardtanh({x}, {a}, {b})", "hardtanh [{a}, {b}]"),
}
PARAMS = {"leaky_relu": ((0.01, 0.1, 0.2),), "elu": ((0.5, 1.0),), "hardtanh": ((-1.0, -0.5, 0.0), (0.5, 1.0, 6.0))}


def _one_per_element(d: Draft, what: str) -> tuple[tuple[str, str, bool], ...]:
    return ((what, f'_numel(s["t{len(d.steps) + 1}"])', False),)


@register("activation", "pointwise")
def activation(d: Draft, rng: random.Random) -> None:
    prev = d.steps[-1].signature if d.steps else None
    names = [n for n in ACTIVATIONS if not (prev and prev[:2] == ("activation", n))]
    name = rng.choice(names)
    args = [rng.choice(choices) for choices in PARAMS.get(name, ())]
    fmt = dict(zip("ab", args, strict=False))  # one or two operands
    expr, label = ACTIVATIONS[name]
    v = d.current
    what = label.format(**fmt)
    d.emit("activation", what, name, expr.format(x=v.name, **fmt), v, _one_per_element(d, what),
           ("activation", name, *args))


@register("scale", "pointwise")
def const_scale(d: Draft, rng: random.Random) -> None:
    v = d.current
    op, c = rng.choice((("*", 2.0), ("*", 0.5), ("*", -1.5), ("/", 3.0), ("+", 0.5), ("-", 1.0)))
    what = {"*": "scale by", "/": "divide by", "+": "add", "-": "subtract"}[op] + f" {c:g}"
    d.emit("scale", what, {"*": "scale", "/": "div", "+": "addc", "-": "subc"}[op], f"{v.name} {op} {c}", v,
           _one_per_element(d, what), ("scale", op, c))


def _channel_param_shape(v: Value) -> tuple[str, str]:
    """(constructor size text, numel expression) of a parameter with one value per channel, broadcastable."""
    ax = v.channel_axis
    if v.layout == "rows":
        return f"{v.dims[ax]}", v.ref(ax)
    return ", ".join([v.dims[ax]] + ["1"] * len(v.spatial_axes)), v.ref(ax)


def _has_channels(d: Draft) -> bool:
    return not d.current.channel_reduced and d.channel_key(d.current) is not None


@register("channel_affine", "pointwise", applies=_has_channels)
def channel_affine(d: Draft, rng: random.Random) -> None:
    """A learned per-channel bias or scale (a Parameter of the Model)."""
    v = d.current
    d.init_arg(d.channel_key_of(v))  # the parameter is sized by the constructor argument
    size, numel = _channel_param_shape(v)
    if rng.random() < 0.5:
        m = d.member("bias", f"nn.Parameter(torch.randn({size}) * 0.5)")
        expr, what, slug = f"{v.name} + {m}", "learned per-channel bias", "bias"
    else:
        m = d.member("scale", f"nn.Parameter(torch.rand({size}) + 0.5)")
        expr, what, slug = f"{v.name} * {m}", "learned per-channel scale", "chscale"
    d.emit("channel_affine", what, slug, expr, v, _one_per_element(d, what), ("channel_affine", slug),
           ((what, numel),))


def _broadcast_dims(v: Value, rng: random.Random) -> tuple[tuple[str, ...], str]:
    dims = list(v.dims)
    ax = v.channel_axis
    if v.layout == "rows":
        choice = rng.choice(("a per-feature input", "a per-row input"))
        keep = {ax} if choice == "a per-feature input" else set(range(ax))
    else:
        choice = rng.choice(("a per-channel input", "an input shared by all channels"))
        keep = {1} if choice == "a per-channel input" else {0, *v.spatial_axes}
    return tuple(dims[i] if i in keep else "1" for i in range(len(dims))), choice


@register("residual_input", "combine")
def residual_input(d: Draft, rng: random.Random) -> None:
    """``t + r`` with a second input of the same size, or ``t * r`` / ``t + r`` with a broadcast input."""
    v = d.current
    sig: tuple[str | int, ...]  # the kind, then what tells this variant apart (signature.py)
    if rng.random() < 0.5:
        r = d.add_input(v.dims)
        what, expr, sig = "add a residual input", f"{v.name} + {r}", ("residual_input", "same")
    else:
        dims, along = _broadcast_dims(v, rng)
        if rng.random() < 0.5:
            r = d.add_input(dims)
            what, expr, op = f"add {along}", f"{v.name} + {r}", "+"
        else:
            r = d.add_input(dims, maker="uniform(gen, *{s}, low=0.5, high=1.5)")
            what, expr, op = f"multiply by {along}", f"{v.name} * {r}", "*"
        sig = ("residual_input", along, op, dims.count("1"))
    d.emit("residual_input", what, "add" if "+" in expr else "mul", expr, v, _one_per_element(d, what), sig)


def _earlier_same_size(d: Draft) -> list[Value]:
    cur = d.current
    return [v for v in d.values[:-2] if v.dims == cur.dims and v.name.startswith("t")]


@register("skip", "combine", applies=lambda d: bool(_earlier_same_size(d)))
def skip(d: Draft, rng: random.Random) -> None:
    """A DAG edge: combine the current tensor with an earlier intermediate of the same size."""
    v = d.current
    earlier = rng.choice(_earlier_same_size(d))
    back = len(d.values) - 1 - d.values.index(earlier)
    if rng.random() < 0.6:
        expr, what, slug, flops = f"{v.name} + {earlier.name}", f"add back step {earlier.name}", "skipadd", 1
    else:
        expr, what, slug, flops = (f"{v.name} * torch.sigmoid({earlier.name})", f"gate by sigmoid of {earlier.name}",
                                   "skipgate", 2)
    n = f'_numel(s["t{len(d.steps) + 1}"])'
    d.emit("skip", what, slug, expr, v, ((what, n if flops == 1 else f"2 * {n}", False),), ("skip", slug, back))
