"""The registry of primitive op kinds a generated task is composed from.

Each op kind is registered with ``@register(name, family, applies=...)`` on a function that appends one
step to a :class:`~multikernelbench.tasks.heldout.draft.Draft`; ``applies`` says whether the op can follow
the draft's current tensor (a group norm needs channels, a pool needs spatial axes left). The composer
(compose.py) only sees names, families and these predicates, so adding an op is one decorated function.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from multikernelbench.tasks.heldout.draft import Draft

FAMILIES = ("anchor", "pointwise", "norm", "softmax", "pool", "reduce", "combine")


@dataclass(frozen=True)
class OpKind:
    name: str
    family: str
    applies: Callable[[Draft], bool]
    apply: Callable[[Draft, random.Random], None]


OPS: dict[str, OpKind] = {}


def register(name: str, family: str, applies: Callable[[Draft], bool] = lambda d: True):
    if family not in FAMILIES:
        raise ValueError(f"unknown op family {family!r}")

    def deco(fn: Callable[[Draft, random.Random], None]):
        if name in OPS:
            raise ValueError(f"op kind {name!r} registered twice")
        OPS[name] = OpKind(name, family, applies, fn)
        return fn

    return deco


def ops_of(family: str) -> list[OpKind]:
    """Registered op kinds of one family, in registration order (deterministic; compose.py imports the op
    modules, whose decorators fill the registry)."""
    return [o for o in OPS.values() if o.family == family]

