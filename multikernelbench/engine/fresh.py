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
  sample is about to start; the parent's answer to that request says, now that the sample is over, which of
  them to hand over (each sample with probability ``verify_fraction``). The worker copies their raw bytes
  without a tensor op (engine/raw_outputs.py: a candidate's RecordFunction callback sees nothing to answer) and
  they travel with its next request; the parent samples them at secret positions, recomputes the reference for
  exactly those seeds on its own device and compares. A kernel cannot be honest only on verified calls: which
  calls are verified is decided after they ran.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from multikernelbench.engine import cuda_ipc
from multikernelbench.engine.messages import FreshAsk, FreshGrant
from multikernelbench.engine.raw_outputs import (
    OddOutput,
    RawTensor,
    gathered_record,
    gathered_values,
    needs_positions,
    read_raw,
    rebuild,
    secret_positions,
    values_at,
)
from multikernelbench.timing.config import TimingConfig
from multikernelbench.timing.loop import Fresh, Phase, tensor_bytes
from multikernelbench.wire import Series


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

    def __init__(self, ask: Callable[..., FreshGrant], make: Callable[[int], list[Any]],
                 positions: int, edge: int, pin: Callable[[], list[str]] | None = None, marks: bool = False,
                 stage: bool = False) -> None:
        self._ask = ask
        #: Every large CUDA output copied before its handle is sent (Backend.stages_outputs): renewals that cost
        #: the same whichever allocator made the output.
        self._stage = stage
        #: Whether each timed call's start is marked to the parent (CPU backends: anticheat/call_marks.py).
        self._marks = marks
        self._make = make
        #: Called before every renewal of a reference callable (not the candidate's): puts back the settings
        #: that decide the reference's speed and says which had changed (anticheat/speed_state.py).
        self._pin = pin
        self.state_changes: list[str] = []
        self.positions, self.edge = positions, edge
        self.slots: dict[str, list[list[Any]]] = {}
        self._held: dict[str, list[Any]] = {}
        #: Raw outputs read for the parent's last grants, not yet sent (then: the ones the Timed reply carries).
        self._pending: list[list[Any]] = []  # per verified call: a RawTensor (or IPC/gathered record) per output
        #: CUDA outputs handed over by IPC handle (engine/cuda_ipc.py), kept alive until the parent has read
        #: them: those of the records not yet sent, and those of the records sent last (the parent reads them
        #: before answering that request, or, for the Timed reply's, before sending this worker anything else:
        #: the caller keeps :attr:`sent` until then).
        self._keep: list[Any] = []
        self.sent: list[Any] = []
        self.values: list[list[Any]] = []
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
        grant = self._ask(FreshAsk(fn=name, calls=calls, phase=Phase(phase).value), payload=self._take_pending())
        self._sample_held(name, grant.verify)
        slots = self.slots.setdefault(name, [])
        for j, seed in enumerate(grant.seeds):
            new = self._make(int(seed))
            if j < len(slots):
                for dst, src in zip(slots[j], new, strict=True):
                    if isinstance(dst, torch.Tensor):
                        dst.copy_(src)  # same storage: graphs and pointer-keyed caches see the change
            else:
                slots.append(new)
        self.calls += len(grant.seeds)
        self.seconds += time.perf_counter() - t0

    def start(self, name: str, calls: int) -> None:
        """The mark between this sample's renewal and its timed call: the parent reads the worker's CPU clock when
        it arrives (anticheat/call_marks.py); the (empty) answer is awaited, so nothing of the harness runs
        between the parent's reading and the call. The raw outputs read in this renewal travel with it, so their
        sending is the renewal's CPU time (calibrated in the clean worker, which sends its reference's alike),
        not the call part's."""
        if self._marks:
            self._ask(FreshAsk(fn=name, calls=calls, phase=Phase.START.value), payload=self._take_pending())

    def observe(self, name: str, outputs: list[Any]) -> None:
        self._held[name] = outputs

    def slot_bytes(self, name: str) -> int:
        slots = self.slots.get(name)
        return tensor_bytes(slots[0]) if slots else 0

    def finish(self) -> None:
        for name in list(self._held):
            self._sample_held(name, self._ask(FreshAsk(fn=name, calls=0, phase=Phase.FINAL.value),
                                              payload=self._take_pending()).verify)
        self.values = self._take_pending() or []  # the last ones travel in the Timed reply

    def _take_pending(self) -> list[list[RawTensor]] | None:  # (or IPC/gathered records: see _sample_held)
        pending, self._pending = self._pending, []
        self.sent, self._keep = self._keep, []  # the request before this one was answered: its memory is free
        return pending or None

    def _sample_held(self, name: str, verify: list[list[int]]) -> None:
        """The raw bytes of each held output the parent asked for, read without a tensor op (a candidate's
        RecordFunction callback sees nothing: engine/raw_outputs.py); they leave with the next request. The
        positions compared are chosen by the parent. Outputs too large to send whole (``raw_outputs.RAW_LIMIT``): on
        CUDA an IPC handle of their memory travels and the parent reads them (engine/cuda_ipc.py; the positions never
        enter this process); on the CPU the positions enter, after the call, and the values are read with numpy."""
        held = self._held.pop(name, None)
        limit = self.positions + 2 * self.edge
        for entry in verify:
            slot = int(entry[0])
            if held is None or slot >= len(held):
                raise BadTimedOutput(f"no output held for slot {slot} of {name}")
            pseed = int(entry[1]) if len(entry) > 1 else None
            records: list[Any] = []
            try:
                for i, t in enumerate(flatten(held[slot])):
                    if needs_positions(t) and t.device.type == "cuda":
                        records.append(self._exported(t, i))
                    elif pseed is not None and needs_positions(t):
                        positions = secret_positions(pseed, self.positions, self.edge)
                        records.append(gathered_record(t, i, positions, limit))
                    else:
                        records.append(read_raw(t, i))
            except OddOutput as exc:
                raise BadTimedOutput(f"timed {exc}") from None
            self._pending.append(records)  # a reference's too: the parent treats both alike (renewal balance)
            if name == Series.CANDIDATE:
                self.meta.append([[r["shape"], r["dtype"]] for r in records])

    def _exported(self, t: torch.Tensor, index: int) -> Any:
        """A large CUDA output's IPC record, its tensor (and any staging copy) kept alive; its whole bytes by
        ``cudaMemcpy`` to the host where even that fails (slow, still no tensor op)."""
        try:
            return cuda_ipc.export(t, index, self._keep, stage=self._stage)
        except OddOutput:
            return read_raw(t, index)


# ---- parent side -----------------------------------------------------------------------------------------

@dataclass
class TimedCheck:
    """One verified call: the seed of its inputs and the seed of the positions sampled from its output."""

    fn: str
    seed: int
    positions_seed: int
    #: Filled when the worker's raw bytes of this call's outputs arrived: each output's values at the
    #: positions (the parent's secret, drawn here) and its [shape, dtype].
    values: list[torch.Tensor] | None = None
    meta: list[list[Any]] | None = None


@dataclass
class FreshPlanner:
    """Answers the worker's FreshAsk messages: fresh secret seeds, and which held outputs to verify."""

    cfg: TimingConfig
    next_seed: Callable[[], int] = lambda: secrets.randbits(62)
    rng: Any = field(default_factory=secrets.SystemRandom)
    checks: list[TimedCheck] = field(default_factory=list)
    positions: int = 4096  # EngineConfig.timed_check_positions
    edge: int = 1024  # EngineConfig.timed_check_edge
    #: Whether the worker is told each verified call's positions seed (after the call), for outputs too large to
    #: send whole (engine/raw_outputs.py RAW_LIMIT) that it reads itself: CPU backends. Off for GPU backends: their
    #: large outputs travel as IPC handles and the parent reads them (engine/cuda_ipc.py); a worker that knew the
    #: positions could write correct values there alone.
    send_positions: bool = True
    #: Why raw outputs that arrived could not be read (judged by timed_outputs.verify_timed).
    errors: list[str] = field(default_factory=list)
    _last: dict[str, list[int]] = field(default_factory=dict)
    #: Per verify entry granted and not yet answered with raw bytes: its check (None: a reference's) and seed.
    _outstanding: list[tuple[TimedCheck | None, int]] = field(default_factory=list)

    def take(self, raws: Any) -> None:
        """Raw outputs of the worker's latest verified calls (in grant order): sampled now at positions only
        this process knows; the reference's alike, then dropped (the renewals stay balanced for the audit)."""
        if raws is None:
            return
        if not isinstance(raws, list) or len(raws) > len(self._outstanding):
            self.errors.append(f"the worker sent {len(raws) if isinstance(raws, list) else 'no list of'} raw "
                               f"output set(s) for {len(self._outstanding)} outstanding")
            return
        with cuda_ipc.IpcReader() as ipc:  # every mapping closed before the worker is answered
            for one in raws:
                check, pseed = self._outstanding.pop(0)
                positions = secret_positions(pseed, self.positions, self.edge)
                try:
                    values, meta = self._sampled(one, positions, ipc)
                except ValueError as exc:
                    self.errors.append(str(exc))
                    continue
                if check is not None:
                    check.values, check.meta = values, meta

    def _sampled(self, one: Any, positions: Any, ipc: cuda_ipc.IpcReader) -> tuple[list[Any], list[Any]]:
        """One verified call's outputs at ``positions``: (values, [shape, dtype] each); ValueError when a record
        is malformed. IpcUnavailable (the parent cannot map a handle) goes up: a harness error, no verdict."""
        limit = self.positions + 2 * self.edge
        values, meta = [], []
        for i, rec in enumerate(one if isinstance(one, list) else [None]):
            sampled: tuple[torch.Tensor, list[Any]] | None
            if isinstance(rec, dict) and "ipc" in rec:
                sampled = ipc.values(rec, i, positions, limit)
            elif isinstance(rec, dict) and "gathered" in rec and not self.send_positions:
                raise ValueError(f"output {i}: values at positions this worker was never told")
            else:
                sampled = gathered_values(rec, i, len(positions))
            if sampled is None:
                t = rebuild(rec, i, copy=False)
                sampled = values_at(t, positions, limit), [list(t.shape), str(t.dtype)]
            values.append(sampled[0])
            meta.append(sampled[1])
        return values, meta

    def answer(self, ask: FreshAsk, raws: Any = None) -> FreshGrant:
        self.take(raws)
        if ask.phase == Phase.START.value:  # a mark (anticheat/call_marks.py): no seeds, nothing verified
            return FreshGrant(seeds=[], verify=[])
        verify: list[list[int]] = []
        previous = self._last.get(ask.fn)
        if previous:
            # The reference's held outputs are sampled the same way (the worker drops their values): reading back a
            # sample costs a device sync and a copy, and the parent's clock audit compares the candidate's renewals
            # with the reference's (anticheat/clock_audit.py). Measured on the H200 before: ~0.6 ms more per
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
                    verify.append([slot, pseed] if self.send_positions else [slot])
                    check = TimedCheck(ask.fn, previous[slot], pseed) if candidate else None
                    if check is not None:
                        self.checks.append(check)
                    self._outstanding.append((check, pseed))
        seeds = [self.next_seed() for _ in range(max(0, int(ask.calls)))]
        self._last[ask.fn] = seeds
        return FreshGrant(seeds=seeds, verify=verify)
