"""The one A/B loop every timer runs, and the seams it offers.

Callables are interleaved sample by sample so that clock drift, thermal state and background load hit
candidate and references alike, in an order that turns round every round (A, B, C, C, B, A, A, B, C, ...): a
fixed order gives each callable a fixed position, and whatever a position costs (which output buffer the
allocator hands back, what the previous sample left on the device) becomes a systematic difference between
identical callables that a quiet GPU resolves into a confident wrong speedup. A callable stops once the relative
standard error of its mean is under target or its wall budget is spent (with ``TimingConfig.adaptive``, a
candidate and its reference stop together once their speedup is decided: timing/stopping.py). Two seams:

* a :class:`Sampler` says how one sample is measured on a device (host clock around one call; CUDA events
  around one call, K calls, or a K-call graph replay) — chosen by the backend;
* a :class:`Fresh` hook is called outside the clock before every sample (``renew``: write fresh input data
  into the input slots the sample will use) and after it (``observe``: the outputs it produced). With the
  engine's hook no timed call ever sees data an earlier call saw, and any sample's outputs may be checked
  against the reference afterwards, so a kernel that recognises its inputs gains nothing.

Callables take a slot index ``j`` (``fn(j)`` runs on the inputs in slot ``j`` and returns its output).

Each ``renew`` says which phase it belongs to (:class:`Phase`): the engine's parent timestamps every request
for fresh inputs, and checks with its own clock that the wall time between two sample requests holds the
sample the worker claims and little else (anticheat/clock_audit.py); ``start`` marks where the renewal ends and
the timed call begins (anticheat/call_marks.py). The loop resolves ``renew``/``start``/``observe`` on the hook's
class once, on entry, so an instance attribute set by candidate code cannot stand in for them.
"""

from __future__ import annotations

import abc
import enum
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from multikernelbench.records import StopReason, TimingStats
from multikernelbench.timing.config import TimingConfig
from multikernelbench.timing.stats import summarize
from multikernelbench.timing.stopping import PairRule, own_stop

Fn = Callable[[int], Any]
T = TypeVar("T")

#: Every callable is sampled at least this often (or ``max_runs`` times when that is lower), whatever its
#: budget: the parent's clock audit compares medians over rounds (anticheat/clock_audit.py), and a candidate that
#: spends its budget in the renewals must not be able to leave it one or two noisy rounds to judge.
AUDIT_MIN_SAMPLES = 4


def round_order(active: Sequence[T], rnd: int) -> list[T]:
    """The order of round ``rnd``'s samples: the callables' own order in even rounds, reversed in odd ones (the
    parent's clock audit checks this order, anticheat/clock_audit.py ``intervals``)."""
    return list(active) if rnd % 2 == 0 else list(reversed(active))


class Phase(str, enum.Enum):
    """Why inputs are renewed: the parent's clock audit checks only ``sample`` intervals, and checks that
    they come in the loop's A/B order (warm-up and planning calls are untimed)."""

    WARMUP = "warmup"
    PLAN = "plan"  # a sampler's own probe calls (CUDA: choosing K, capturing a graph)
    SAMPLE = "sample"  # one timed sample follows
    FINAL = "final"  # after the loop (the observed call, the last verification)
    #: A mark, not a renewal: the sample's inputs are renewed and its timed call starts now (``Fresh.start``).
    START = "start"


def tensor_bytes(obj: Any) -> int:
    """Bytes of the tensors in a call's inputs or outputs (nested lists, tuples and dicts; anything else: 0)."""
    if callable(getattr(obj, "element_size", None)) and callable(getattr(obj, "numel", None)):  # a tensor
        return int(obj.numel()) * int(obj.element_size())
    if isinstance(obj, (list, tuple)):
        return sum(tensor_bytes(o) for o in obj)
    if isinstance(obj, dict):
        return sum(tensor_bytes(o) for o in obj.values())
    return 0


class Fresh:
    """Hooks around each sample, outside the clock. The default does nothing (inputs stay as they are)."""

    def renew(self, name: str, calls: int, phase: Phase = Phase.PLAN) -> None:
        """Before a sample of ``name`` that makes ``calls`` calls on slots 0..calls-1."""

    def start(self, name: str, calls: int) -> None:
        """After ``renew`` and just before the timed sample of ``name``: the engine's hook tells the parent, which
        reads the worker's CPU clock then, so that the renewal's CPU time is judged apart from the timed call's
        (anticheat/call_marks.py)."""

    def observe(self, name: str, outputs: list[Any]) -> None:
        """After that sample: ``outputs[j]`` is what the call on slot ``j`` returned."""

    def slot_bytes(self, name: str) -> int:
        """Bytes of one input slot of ``name`` (0: unknown). A sampler that makes K calls per sample needs K
        slots: it bounds K by the device memory they would take."""
        return 0

    def finish(self) -> None:
        """Called by the owner of the hook (not by the loop) once it has made its last call."""


NoFresh = Fresh


@dataclass
class Plan:
    """How one callable is sampled: ``body()`` makes ``calls`` calls and returns their outputs."""

    calls: int
    body: Callable[[], list[Any]]
    method: str
    resources: list[Any] = field(default_factory=list)  # e.g. a CUDA graph, released by the sampler


class Sampler(abc.ABC):
    """Device-specific measurement of one sample."""

    @abc.abstractmethod
    def plan(self, name: str, fn: Fn, fresh: Fresh) -> Plan:
        """Decide how ``fn`` is sampled (may run it a few times, each after ``fresh.renew``)."""

    @abc.abstractmethod
    def sample(self, plan: Plan) -> tuple[float, bool, list[Any]]:
        """(ms per call, whether work escaped the clock's stream, the outputs per slot)."""

    #: Seconds of back-to-back warm-up calls before sampling when the config does not say (none measured a
    #: need yet: see Timer.measure).
    warmup_s: float = 0.0

    def settle(self) -> None:  # noqa: B027 - a hook: nothing to do unless a subclass has
        """Wait until queued device work is done (between warm-up calls)."""

    def release(self, plans: dict[str, Plan]) -> None:  # noqa: B027 - a hook: nothing to do unless a subclass has
        """Free what plans hold (graphs)."""


class Timer:
    """Times several callables alternately with one sampler; ``measure`` returns name -> TimingStats."""

    def __init__(self, cfg: TimingConfig, sampler: Sampler) -> None:
        self.cfg = cfg
        self.sampler = sampler
        #: After ``measure``: every sample's time per call, in the order taken, and the calls per sample, per
        #: callable (the worker reports them; the parent matches them with its own clock).
        self.series: dict[str, list[float]] = {}
        self.calls: dict[str, int] = {}
        #: After ``measure``: wall ms of its warm-up calls and of the sampler's planning (each with the input
        #: renewals inside it), reported beside the samples so a clock's turn can be split (issue #44).
        self.phase_ms: dict[str, float] = {}

    @property
    def method(self) -> str:
        return getattr(self.sampler, "method", type(self.sampler).__name__)

    def measure(self, fns: dict[str, Fn], fresh: Fresh | None = None,
                pair: tuple[str, str] | None = None) -> dict[str, TimingStats]:
        """``pair``: (candidate, reference) names that stop together by their speedup when ``cfg.adaptive``
        (timing/stopping.py); every other callable stops by its own rule."""
        cfg, sampler = self.cfg, self.sampler
        fresh = fresh if fresh is not None else Fresh()
        # Resolved on the class, once: an attribute candidate code sets on the instance is never called.
        renew, start, observe = type(fresh).renew, type(fresh).start, type(fresh).observe
        warm_s = cfg.warmup_s if cfg.warmup_s is not None else sampler.warmup_s
        t_warm = time.perf_counter()
        for name, fn in fns.items():
            for _ in range(cfg.warmup):
                renew(fresh, name, 1, Phase.WARMUP)
                out = fn(0)
                sampler.settle()
                observe(fresh, name, [out])
            # Then, when asked, back-to-back calls on the same inputs (untimed: no fresh data needed) until
            # the device has been busy for ``warm_s``, for a device whose clocks drop when idle. Off by default:
            # on the H200 the SM clock stays at 1980 MHz when idle, and 3 s of warm-up changed nothing against
            # 0.25 s (benchmarks/baseline_cuda_h200/2026-12-01b, call 4).
            t_end = time.perf_counter() + warm_s
            while time.perf_counter() < t_end:
                fn(0)
                sampler.settle()
        t_plan = time.perf_counter()
        plans = {name: sampler.plan(name, fn, fresh) for name, fn in fns.items()}
        self.phase_ms = {"warmup": (t_plan - t_warm) * 1e3, "plan": (time.perf_counter() - t_plan) * 1e3}
        samples: dict[str, list[float]] = {name: [] for name in fns}
        spent = {name: 0.0 for name in fns}
        escaped = {name: 0 for name in fns}
        floor = min(cfg.max_runs, AUDIT_MIN_SAMPLES)
        rule = (PairRule(cfg, *pair, floor=floor)
                if cfg.adaptive and pair is not None and pair[0] in fns and pair[1] in fns else None)
        stopped: dict[str, StopReason] = {}
        rnd = 0
        try:
            while True:
                # A callable stops at max_runs, or once it has its floor of samples and has converged or spent
                # its own budget (whatever the others did); an adaptive pair stops together, by its speedup.
                for n in fns:
                    if n not in stopped and (rule is None or n not in (rule.candidate, rule.reference)):
                        why = own_stop(samples[n], spent[n], cfg, floor)
                        if why is not None:
                            stopped[n] = why
                if rule is not None and rule.candidate not in stopped:
                    why = rule.stop(samples, spent)
                    if why is not None:
                        stopped[rule.candidate] = stopped[rule.reference] = why
                active = [n for n in fns if n not in stopped]
                if not active:
                    break
                for name in round_order(active, rnd):
                    plan = plans[name]
                    # Renewing inputs is outside the clock but inside the budget, so the wall time of a
                    # measurement stays bounded when making fresh inputs costs more than the call itself.
                    t0 = time.perf_counter()
                    renew(fresh, name, plan.calls, Phase.SAMPLE)
                    start(fresh, name, plan.calls)
                    ms, esc, outputs = sampler.sample(plan)
                    spent[name] += time.perf_counter() - t0
                    observe(fresh, name, outputs)
                    samples[name].append(ms)
                    escaped[name] += int(esc)
                rnd += 1
        finally:
            sampler.release(plans)
        self.series = {name: list(s) for name, s in samples.items()}
        self.calls = {name: plan.calls for name, plan in plans.items()}
        out = {}
        for name, s in samples.items():
            method = plans[name].method
            # Samples whose device-wide end came later than the current stream's always use the later end
            # (that only ever lengthens them), but the callable is flagged only when most samples escaped:
            # work on a side stream outlives every call, while a host descheduled inside the sync (builds
            # loading every core beside the timed worker, seen on the H200) delays a few samples at random.
            if escaped[name] * 2 > len(s):
                method += f"+side_streams({escaped[name]}/{len(s)})"
            out[name] = summarize(s, method, stopped.get(name))
        return out
