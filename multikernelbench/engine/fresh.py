"""Fresh inputs for every timed call, and verification of timed outputs (both sides of the conversation).

The attack this defeats: a kernel that fingerprints its inputs (a few values, hashed inside its own C++)
and returns a stored answer when it has seen them before. Two rotating input sets, or one refresh after
timing, leave every call correct for the data it was given, so the memo was timed as a 65x speedup.

How, for every backend alike (the hook sits in :mod:`multikernelbench.timing.loop`):

* **No timed call sees data an earlier call saw.** Before each sample (outside the clock) the worker asks
  the parent for seeds (:class:`~multikernelbench.engine.messages.FreshAsk`) and regenerates the inputs of
  the slots that sample will use, in place (same tensors, so CUDA graphs replay on them). Seeds come one
  sample at a time from the trusted parent, so the worker never holds a future seed a candidate could read
  from memory to precompute answers. Reference and candidate get the same treatment.
* **Timed outputs stay verified.** The outputs of the candidate's last sample are held until its next
  sample is about to start; the parent's answer to that request says, now that the sample is over, whether
  to sample them and at which secret positions (each sample with probability ``verify_fraction``). The
  parent later recomputes the reference for exactly those seeds on its own device and compares. A kernel
  cannot be honest only on verified calls: which calls are verified is decided after they ran.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from multikernelbench.engine.checking import sample_flat, sample_positions
from multikernelbench.engine.messages import FreshAsk, FreshGrant
from multikernelbench.timing.config import TimingConfig
from multikernelbench.wire import Series
from multikernelbench.timing.loop import Fresh, Phase


class BadTimedOutput(Exception):
    """A timed output that is not a plain dense tensor (the worker reports it as BAD_OUTPUT_TYPE)."""


def flatten(out: Any) -> list[Any]:
    """A candidate's output (a tensor, or nested tuples/lists of them) as a flat list."""
    if isinstance(out, (tuple, list)):
        flat: list[Any] = []
        for o in out:
            flat.extend(flatten(o))
        return flat
    return [out]


# ---- worker side -----------------------------------------------------------------------------------------

class FreshInputs(Fresh):
    """Input slots per timed callable, renewed from parent-granted seeds before every sample."""

    def __init__(self, ask: Callable[[FreshAsk], FreshGrant], make: Callable[[int], list[Any]],
                 positions: int, edge: int, pin: Callable[[], list[str]] | None = None) -> None:
        self._ask = ask
        self._make = make
        #: Called before every renewal of a reference callable (not the candidate's): puts back the settings
        #: that decide the reference's speed and says which had changed (engine/speed_state.py).
        self._pin = pin
        self.state_changes: list[str] = []
        self.positions, self.edge = positions, edge
        self.slots: dict[str, list[list[Any]]] = {}
        self._held: dict[str, list[Any]] = {}
        self.values: list[list[torch.Tensor]] = []  # sampled outputs, in the order the parent asked for them
        self.meta: list[list[list[Any]]] = []
        self.calls = 0
        self.seconds = 0.0

    def inputs(self, name: str, slot: int) -> list[Any]:
        return self.slots[name][slot]

    def renew(self, name: str, calls: int, phase: Phase = Phase.PLAN) -> None:
        t0 = time.perf_counter()
        if name != Series.CANDIDATE and self._pin is not None:
            for change in self._pin():
                if change not in self.state_changes:
                    self.state_changes.append(change)
        grant = self._ask(FreshAsk(fn=name, calls=calls, phase=Phase(phase).value))
        self._sample_held(name, grant.verify)
        slots = self.slots.setdefault(name, [])
        for j, seed in enumerate(grant.seeds):
            new = self._make(int(seed))
            if j < len(slots):
                for dst, src in zip(slots[j], new):
                    if isinstance(dst, torch.Tensor):
                        dst.copy_(src)  # same storage: graphs and pointer-keyed caches see the change
            else:
                slots.append(new)
        self.calls += len(grant.seeds)
        self.seconds += time.perf_counter() - t0

    def observe(self, name: str, outputs: list[Any]) -> None:
        self._held[name] = outputs

    def finish(self) -> None:
        for name in list(self._held):
            self._sample_held(name, self._ask(FreshAsk(fn=name, calls=0, phase=Phase.FINAL.value)).verify)

    def _sample_held(self, name: str, verify: list[list[int]]) -> None:
        held = self._held.pop(name, None)
        for slot, positions_seed in verify:
            if held is None or slot >= len(held):
                raise BadTimedOutput(f"no output held for slot {slot} of {name}")
            flat = flatten(held[slot])
            positions = sample_positions(int(positions_seed), self.positions, self.edge)
            limit = self.positions + 2 * self.edge
            values, meta = [], []
            for i, t in enumerate(flat):
                if type(t) is not torch.Tensor or t.layout != torch.strided:  # noqa: E721
                    raise BadTimedOutput(f"timed output {i} is a {type(t).__module__}.{type(t).__qualname__}, "
                                         "not a plain dense torch.Tensor")
                values.append(sample_flat(t.detach().contiguous(), positions, limit).to("cpu").clone())
                meta.append([list(t.shape), str(t.dtype)])
            if name == Series.CANDIDATE:  # a reference's sample only balances the renewal cost (see answer)
                self.values.append(values)
                self.meta.append(meta)


# ---- parent side -----------------------------------------------------------------------------------------

@dataclass
class TimedCheck:
    """One verified call: the seed of its inputs and the seed of the positions sampled from its output."""

    fn: str
    seed: int
    positions_seed: int


@dataclass
class FreshPlanner:
    """Answers the worker's FreshAsk messages: fresh secret seeds, and which held outputs to verify."""

    cfg: TimingConfig
    next_seed: Callable[[], int] = lambda: secrets.randbits(62)
    rng: Any = field(default_factory=secrets.SystemRandom)
    checks: list[TimedCheck] = field(default_factory=list)
    _last: dict[str, list[int]] = field(default_factory=dict)

    def answer(self, ask: FreshAsk) -> FreshGrant:
        verify: list[list[int]] = []
        previous = self._last.get(ask.fn)
        if previous:
            # The reference's held outputs are sampled the same way (the worker drops their values): reading back a
            # sample costs a device sync and a copy, and the parent's clock audit compares the candidate's renewals
            # with the reference's (engine/clock_audit.py). Measured on the H200 before: ~0.6 ms more per
            # candidate sample, enough to flag an honest Numba kernel of 5.8 ms.
            final = ask.calls == 0
            wanted = self.rng.random() < self.cfg.verify_fraction
            candidate = ask.fn == Series.CANDIDATE
            if candidate and final and len(self.checks) < self.cfg.min_verified:
                wanted = True  # the last sample makes up for too few verified ones
            if wanted:
                slots = sorted(self.rng.sample(range(len(previous)), min(2, len(previous))))
                for slot in slots:
                    pseed = self.next_seed()
                    verify.append([slot, pseed])
                    if candidate:
                        self.checks.append(TimedCheck(ask.fn, previous[slot], pseed))
        seeds = [self.next_seed() for _ in range(max(0, int(ask.calls)))]
        self._last[ask.fn] = seeds
        return FreshGrant(seeds=seeds, verify=verify)
