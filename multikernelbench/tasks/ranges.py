"""Declared shape ranges (``SHAPE_RANGES`` in a task file) and the fresh shapes drawn from them.

A kernel tuned to the visible test shapes (sizes baked in as constants, a tile that only divides 64) passes
every check on those shapes. ``mkb eval --fresh-shapes K`` also checks it on K shapes drawn at evaluation
time from the task's declared ranges, never shown in a prompt. A task declares, per named size it allows to
vary, ``key: (low, high)`` or ``key: (low, high, multiple)`` (inclusive; the value is a multiple of
``multiple``, e.g. channels divisible by a group count). Every combination within the ranges must be a
valid shape for the reference. Sizes not listed keep the value of one test shape, picked per draw; a task
without ``SHAPE_RANGES`` has no fresh shapes (the evaluation says so rather than guessing ranges).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class RangeError(ValueError):
    """A malformed SHAPE_RANGES declaration (the message says which key and why)."""


@dataclass(frozen=True)
class SizeRange:
    low: int
    high: int
    multiple: int = 1

    def values(self) -> range:
        return range(math.ceil(self.low / self.multiple) * self.multiple, self.high + 1, self.multiple)

    def __contains__(self, value: Any) -> bool:
        return isinstance(value, int) and self.low <= value <= self.high and value % self.multiple == 0


def parse_ranges(decl: Mapping[str, Any] | None,
                 test_shapes: Sequence[Mapping[str, Any]] = ()) -> dict[str, SizeRange] | None:
    """``SHAPE_RANGES`` as typed ranges, checked: ints, low <= high, low >= 1, non-empty, and every test
    shape inside (a range that excludes a visible shape is a typo). None when the task declares none."""
    if decl is None:
        return None
    if not isinstance(decl, Mapping) or not decl:
        raise RangeError(f"SHAPE_RANGES must be a non-empty dict of key -> (low, high[, multiple]), got {decl!r}")
    out: dict[str, SizeRange] = {}
    for key, spec in decl.items():
        if not isinstance(spec, (tuple, list)) or len(spec) not in (2, 3) or \
                not all(isinstance(x, int) and not isinstance(x, bool) for x in spec):
            raise RangeError(f"SHAPE_RANGES[{key!r}] must be (low, high) or (low, high, multiple) ints, got {spec!r}")
        r = SizeRange(*spec)
        if r.low < 1 or r.high < r.low or r.multiple < 1 or not r.values():
            raise RangeError(f"SHAPE_RANGES[{key!r}] = {spec!r} is empty or below 1")
        for i, shape in enumerate(test_shapes):
            if key not in shape:
                raise RangeError(f"SHAPE_RANGES names {key!r}, which test shape {i} does not have")
            if shape[key] not in r:
                raise RangeError(f"test shape {i} has {key}={shape[key]!r}, outside SHAPE_RANGES[{key!r}] = {spec!r}")
        out[key] = r
    return out


def draw_shapes(ranges: Mapping[str, SizeRange], test_shapes: Sequence[Mapping[str, Any]], count: int,
                seed: int) -> list[dict[str, Any]]:
    """``count`` shapes within ``ranges``, each unlike every test shape where the ranges allow it."""
    rng = random.Random(seed)
    visible = [dict(s) for s in test_shapes]
    shapes: list[dict[str, Any]] = []
    for _ in range(count):
        for _attempt in range(16):
            shape = dict(rng.choice(visible))
            for key in sorted(ranges):
                shape[key] = rng.choice(ranges[key].values())
            if shape not in visible and shape not in shapes:
                break
        shapes.append(shape)
    return shapes


def task_ranges(task) -> dict[str, SizeRange] | None:
    """The ranges a task's source declares (executes the source, as the harness does for every task)."""
    from multikernelbench.tasks.module import materialize

    return parse_ranges(getattr(materialize(task), "SHAPE_RANGES", None), task.test_shapes)
