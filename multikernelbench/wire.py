"""What travels between a worker and the parent beside the message headers, typed once for both sides.

Why: the timing series (``"candidate"``, ``"eager"``, ``"compiled"``), the tensor payloads of
:class:`~multikernelbench.engine.messages.Checked` and :class:`~multikernelbench.engine.messages.Timed` and the
behaviour evidence a worker reports were strings agreed on in comments; a typo on one side silently became a
missing series or a finding that never fired. The worker builds these types and the parent reads them, so the
type checker sees both ends. Values on the wire are unchanged (the enum is a ``str``; the dicts stay dicts).

Evidence comes from a process that ran candidate code: its *shape* is declared here, but the parent never
trusts it to be well formed (anticheat/judge.py treats missing or malformed evidence as a finding).
"""

from __future__ import annotations

import enum
from typing import Any, TypedDict


class Series(str, enum.Enum):
    """A timed callable, by its name in ``Timed.stats``/``series``/``calls`` and in ``FreshAsk.fn``."""

    CANDIDATE = "candidate"  # the candidate's ModelNew
    EAGER = "eager"  # the task's reference Model, run eagerly: the speedup's denominator
    COMPILED = "compiled"  # torch.compile of the reference (when the compile baseline is measured)

    def __str__(self) -> str:  # the wire name, also in f-strings and messages
        return self.value


#: The series a clean worker, the clock audit and the clean-reference cross-check take as "the reference".
REFERENCE = Series.EAGER


class KernelEvidence(TypedDict, total=False):
    """A backend's own-kernel probe (``Backend.kernel_probe``): which kernels ran during one forward."""

    own_kernels: list[str]
    library_kernels: list[str]
    method: str  # how the probe saw them ("extension c_call", "torch.profiler CUDA", ...)


class Evidence(TypedDict, total=False):
    """Behaviour evidence in a reply's ``evidence`` field; every key optional (absent = nothing seen, or runtime
    checks off). Judged by :mod:`multikernelbench.anticheat.judge`."""

    patched: list[str]  # harness/library functions whose identity or code changed since the snapshot
    violations: list[str]  # the audit hook's sandbox violations
    new_threads: list[str]  # Python threads started by candidate code and still alive
    children: list[int]  # pids of live child processes
    busy_threads: list[str]  # OS threads still burning CPU after the forward returned
    speed_state: list[str]  # settings deciding the reference's speed that had changed (put back)
    ops: dict[str, int]  # aten ops recorded during the forward (``namespace::name`` -> count)
    kernels: KernelEvidence
    aliases: list[int]  # outputs sharing memory with an input


class CheckPayload(TypedDict):
    """Payload of ``Checked``: the candidate's outputs and its inputs as it left them, each as the raw bytes of
    its storage (``engine.raw_outputs.RawTensor``: read without a tensor op; rebuilt by the parent)."""

    outputs: list[Any]
    inputs_after: list[Any]


class TimedPayload(TypedDict):
    """Payload of ``Timed``: the raw outputs (``engine.raw_outputs.RawTensor``) of the verified timed calls not yet
    sent with a FreshAsk, in grant order; the parent samples them at positions the worker never learns."""

    verified: list[list[Any]]
