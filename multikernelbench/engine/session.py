"""One worker as the parent sees it: typed requests under a deadline, typed replies, one place that turns
every way a request can fail into a verdict.

Used by the build stage and the device stage alike, so a timeout, a crash, a failed request and a piece of
behaviour evidence mean the same thing wherever they happen.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from multikernelbench.anticheat import judge, refusals
from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.engine.messages import DeviceTurn, Done, ErrorKind, Failed, FreshAsk, Message, Setup, Timed
from multikernelbench.engine.sandbox import Limits, Worker, WorkerDied, WorkerTimeout
from multikernelbench.engine.trace import Trace
from multikernelbench.records import FailureKind, Status

_KIND_TO_FAILURE = {
    ErrorKind.BAD_OUTPUT_TYPE: FailureKind.BAD_OUTPUT_TYPE,
    ErrorKind.MISSING_MODELNEW: FailureKind.MISSING_MODELNEW,
    ErrorKind.OUT_OF_MEMORY: FailureKind.RESOURCE_LIMIT,
    ErrorKind.FILE_TOO_LARGE: FailureKind.RESOURCE_LIMIT,
}


class Verdict(Exception):
    """Ends an evaluation early with a final status."""

    def __init__(self, status: Status, message: str, failure: FailureKind | None = None):
        super().__init__(message)
        self.status, self.message, self.failure = status, message, failure


def failed_verdict(reply: Failed, what: str) -> Verdict:
    failure = _KIND_TO_FAILURE.get(reply.kind, FailureKind.EXCEPTION)
    status = Status.INCORRECT if reply.kind == ErrorKind.BAD_OUTPUT_TYPE else Status.RUNTIME_ERROR
    return Verdict(status, f"{what}: {reply.error}", failure)


def timed_split(reply: Timed) -> str | None:
    """The worker's own account of a Time request as a trace line: its timer's wall (warm-up, planning, samples
    and input renewals), the timed samples' sum and the renewals'. Why: a clock holds its GPU's exclusive turn,
    and only the samples need it; scripts/throughput/clock_phases.py splits the request by this line (issue
    #44), with the timer's warm-up and planning walls when it sent them. The numbers come from the worker and are
    only reported here (the clock audit judges them); None when they are not numbers. No name from the reply goes
    into the line, so it cannot forge another one."""
    try:
        samples_ms = sum(sum(float(v) for v in s) * int(reply.calls.get(name, 1)) for name, s in reply.series.items())
        runs = sum(len(s) for s in reply.series.values())
        phases = "".join(f", {key} {float(reply.phase_ms[key]) / 1e3:.3f} s" for key in ("warmup", "plan")
                         if key in reply.phase_ms)
        return (f"time split: measure {float(reply.wall_ms) / 1e3:.3f} s, samples {samples_ms / 1e3:.3f} s, "
                f"renewals {float(reply.fresh_ms) / 1e3:.3f} s, runs {runs}, fresh calls {int(reply.fresh_calls)}"
                f"{phases}")
    except (TypeError, ValueError, AttributeError, OverflowError):
        return None


class WorkerSession:
    """A started worker plus how to talk to it. ``deadline`` (monotonic seconds), when set, caps every
    request's timeout: the candidate's whole device stage has a budget."""

    def __init__(self, role: str, env: dict[str, str], limits: Limits, setup: Setup, *, zygote: Any = None,
                 anticheat: AntiCheatConfig | None = None, trace: Trace | None = None, who: str = "",
                 deadline: float | None = None, setup_timeout_s: float = 120.0) -> None:
        self.worker = Worker(role, env, limits, zygote=zygote)
        self.anticheat = anticheat
        self.shared = refusals.shared_folders(setup.build_dir)  # never "a folder of its own" (refusals.py)
        self.trace = trace
        self.who = who
        self.deadline = deadline
        self.budget_cut = False
        self.worker.start()
        self.call(setup, timeout=setup_timeout_s, what="starting the worker", judge_evidence=False, expect=Done)

    def _timeout(self, timeout: float) -> float:
        if self.deadline is None:
            return timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Verdict(Status.TIMEOUT, "the candidate's device-stage budget ran out")
        if left < timeout:
            self.budget_cut = True
            return left
        return timeout

    def call(self, request: Message, payload: Any = None, *, timeout: float, what: str,
             expect: type | tuple[type, ...] = Message, on_fresh: Callable[[FreshAsk, Any], Message] | None = None,
             on_turn: Callable[[DeviceTurn], Message] | None = None,
             judge_evidence: bool = True) -> tuple[Any, Any]:
        """Send ``request`` and return the final reply, an instance of ``expect``. Raises :class:`Verdict` on a
        timeout, a dead worker, a :class:`Failed` reply, a reply of another type (the channel is reachable from
        candidate code: a stray message is a protocol violation, not a harness error), or (with an anti-cheat
        config) convicting behaviour evidence in any reply, failed or not. ``on_fresh`` answers the worker's
        FreshAsk messages during a Time request, ``on_turn`` its DeviceTurn messages during a CompileBaseline
        (without a handler either one is a stray message)."""
        kind = request.op()
        timeout = self._timeout(timeout)
        deadline = time.monotonic() + timeout
        t0 = time.perf_counter()
        if self.trace is not None:
            self.trace(self.who, f"{kind} start ({what})")
        try:
            self.worker.send(request.to_header(), payload)
            while True:
                header, data = self.worker.receive(deadline, f"reply to {kind!r} within {timeout:.0f} s")
                reply = Message.from_header(header)
                if isinstance(reply, FreshAsk) and on_fresh is not None:
                    self.worker.send(on_fresh(reply, data).to_header())  # data: raw outputs (fresh.py)
                    continue
                if isinstance(reply, DeviceTurn) and on_turn is not None:
                    self.worker.send(on_turn(reply).to_header())
                    continue
                break
            self._trace_split(reply)
        except WorkerTimeout as exc:
            raise Verdict(Status.TIMEOUT, f"{what}: {exc}") from None
        except WorkerDied as exc:
            failure = FailureKind.RESOURCE_LIMIT if exc.signal_name in ("SIGXFSZ", "SIGXCPU") else FailureKind.SIGNAL
            raise Verdict(Status.CRASH, f"{what}: {exc}", failure) from None
        except (ValueError, TypeError) as exc:  # a message that is no message: the worker misbehaved
            self.worker.kill()
            raise Verdict(Status.CRASH, f"{what}: unreadable message from the worker: {exc!r}") from None
        finally:
            if self.trace is not None:
                self.trace(self.who, f"{kind} end after {time.perf_counter() - t0:.1f} s")
        if judge_evidence and self.anticheat is not None:
            building = kind in ("compile", "load")
            findings = judge.behaviour_findings(getattr(reply, "evidence", None), self.anticheat, building,
                                               self.shared)
            if findings:
                raise Verdict(Status.CHEAT_DETECTED, f"{what}: " + "; ".join(findings))
            refused = judge.refusal_message(getattr(reply, "evidence", None), self.anticheat, building, self.shared)
            if refused:  # blocked, but not gaming: the stage's error, saying what the harness allows
                raise Verdict(Status.COMPILE_ERROR if building else Status.RUNTIME_ERROR,
                              f"{what}: {refused}", FailureKind.ENVIRONMENT_REFUSED)
        if isinstance(reply, Failed):
            raise failed_verdict(reply, what)
        if not isinstance(reply, expect):
            self.worker.kill()
            raise Verdict(Status.CHEAT_DETECTED, f"{what}: the worker answered {type(reply).__name__} to {kind} "
                          "(something other than the harness wrote to its channel)")
        return reply, data

    def _trace_split(self, reply: Message) -> None:
        split = timed_split(reply) if self.trace is not None and isinstance(reply, Timed) else None
        if self.trace is not None and split is not None:
            self.trace(self.who, split)

    def stdout(self) -> str:
        return self.worker.captured_stdout()

    def close(self) -> None:
        self.worker.close()
