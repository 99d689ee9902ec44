"""Draw one task's op graph: a starter (input and anchor) and then 1-5 more ops chosen among those that apply.

Families of tasks (the category of a generated task) follow the anchor: ``gemm`` (linear or matmul),
``conv`` (1-3d), ``conv_transposed`` (1-3d) and ``elementwise`` (no anchor: norms, softmax, reductions and
activations on an input). The weights below make the mix lean on fused epilogues, as the suite's fusion
category does; at most one reduction and one extra anchor per task keep the graphs readable.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from multikernelbench.tasks.heldout import ops_pointwise, ops_shape  # noqa: F401  (they register their ops)
from multikernelbench.tasks.heldout.draft import Draft
from multikernelbench.tasks.heldout.ops_anchor import conv, start_input, start_matmul
from multikernelbench.tasks.heldout.vocabulary import OPS, ops_of

FAMILY_WEIGHTS = {"gemm": 3, "conv": 4, "conv_transposed": 2, "elementwise": 2}
FOLLOW_WEIGHTS = {"pointwise": 5, "norm": 2.5, "combine": 2, "softmax": 1, "pool": 1, "reduce": 1, "anchor": 0.7}
CONV_LAYOUT_WEIGHTS = {"1d": 2, "2d": 4, "3d": 1.5}


def _weighted(rng: random.Random, weights: Mapping[str, float]) -> str:
    names = list(weights)
    return rng.choices(names, weights=[weights[n] for n in names], k=1)[0]


def start(d: Draft, rng: random.Random) -> None:
    if d.family == "gemm":
        if rng.random() < 0.5:
            start_input(d, "rows", rng)
            OPS["linear"].apply(d, rng)
        else:
            start_matmul(d, rng)
    elif d.family in ("conv", "conv_transposed"):
        start_input(d, _weighted(rng, CONV_LAYOUT_WEIGHTS), rng)
        conv(d, rng, transposed=d.family == "conv_transposed")
    else:
        start_input(d, _weighted(rng, {"rows": 2, **CONV_LAYOUT_WEIGHTS}), rng)


def follow(d: Draft, rng: random.Random) -> bool:
    """Append one more op; False when nothing applies."""
    used = {s.kind for s in d.steps}
    families = dict(FOLLOW_WEIGHTS)
    if {"reduce_channels", "reduce_spatial"} & used:
        families.pop("reduce")
    if sum(OPS[k].family == "anchor" for k in used if k in OPS) >= 2 or d.family == "elementwise":
        families.pop("anchor")
    while families:
        family = _weighted(rng, families)
        options = [o for o in ops_of(family) if o.applies(d)]
        if d.steps and d.steps[-1].kind in ("scale", "channel_affine", "batch_norm", "softmax"):
            options = [o for o in options if o.name != d.steps[-1].kind]
        if options:
            rng.choice(options).apply(d, rng)
            return True
        families.pop(family)
    return False


def draw(rng: random.Random) -> Draft:
    """A new graph of 2-6 ops (the anchor counts as one)."""
    d = Draft(family=_weighted(rng, FAMILY_WEIGHTS))
    start(d, rng)
    total = rng.choice((2, 3, 3, 4, 4, 5, 6))
    while len(d.steps) < total and follow(d, rng):
        pass
    return d
