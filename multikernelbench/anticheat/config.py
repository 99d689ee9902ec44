"""Switches and bounds of the anti-cheat checks (a dataclass inside EngineConfig; everything defaults ON).

``require_custom_kernel`` is the one switch harness tests turn off when they submit plain-PyTorch
candidates on purpose (the reference itself as a self-check, status-path tests with Python candidates):
it disables exactly the checks that say "the task's compute must run in the candidate's own kernel" (the
static reference-op / library-op / reference-model rules and the runtime dispatcher and own-kernel
checks) and leaves every other defence on.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class AntiCheatConfig:
    #: Run the AST/C++-string rules in the parent before compiling (cheap first filter).
    static_checks: bool = True
    #: The task's compute must happen in the candidate's own kernel: no reference op, no library compute
    #: op (aten/cuBLAS/cuDNN) in the candidate's forward, and at least one of its own kernels must run.
    require_custom_kernel: bool = True
    #: Runtime evidence from the worker: patched functions, leftover threads and child processes,
    #: sandbox violations (writes outside the work dir, network, process creation), output aliasing.
    runtime_checks: bool = True
    #: A measured speedup over eager PyTorch above this is treated as a measurement exploit.
    max_speedup: float = 1000.0
    #: A candidate time implying more than this fraction of the hardware roofline is impossible.
    max_roofline_fraction: float = 1.5
    #: The parent's clock audit of every timing request (anticheat/clock_audit.py): work moved outside the timed
    #: call, requests out of the loop's order. Thresholds: max(floor, rel x the candidate's claimed sample time,
    #: sigmas x the clean worker's interval noise).
    clock_audit: bool = True
    clock_floor_ms: float = 0.1
    clock_rel: float = 0.1
    clock_sigmas: float = 6.0
    #: Time the reference once per task and run in a clean worker (no candidate code): the noise floor of the
    #: clock audit, and a cross-check of the reference's speed in the candidate's worker.
    clean_reference: bool = True
    #: The candidate's worker timing the reference this much slower than the clean worker (and beyond 4x their
    #: combined spread) is flagged, and the speedup is taken against the clean reference.
    reference_slowdown: float = 1.25
    #: Before the timing that confirms a load-sensitive clock finding, wait up to this long (doubling pauses)
    #: for the host to stop being oversubscribed (engine/host_load.py); 0 re-times at once.
    quiet_wait_s: float = 30.0
    #: aten ops the candidate's forward may call besides the documented helper allow-list.
    extra_allowed_ops: list[str] = field(default_factory=list)
