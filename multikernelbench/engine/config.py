"""Engine configuration as dataclasses (built from CLI flags or YAML; no module-level state)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from multikernelbench.anticheat.config import AntiCheatConfig


@dataclass
class TimingConfig:
    warmup: int = 3
    min_runs: int = 10
    max_runs: int = 200
    target_rse: float = 0.01  # stop once the standard error of the mean is this fraction of the mean
    budget_s: float = 10.0  # wall budget per timed callable
    input_sets: int = 2  # distinct input sets rotated across timed calls (defeats caching by pointer)
    compile_baseline: bool = False  # also time torch.compile of the reference
    #: Its own request before timing: a compile that fails or takes longer loses the compiled baseline
    #: (flagged on the result), never the candidate's verdict.
    compile_baseline_timeout_s: float = 300.0


@dataclass
class EngineConfig:
    backend: str = "cpu"
    build_root: Path = field(default_factory=lambda: Path.home() / ".cache" / "multikernelbench" / "builds")
    compile_timeout_s: float = 300.0
    run_timeout_s: float = 120.0  # per worker request (load, one correctness trial batch, timing)
    #: The whole device stage of one candidate (load, every trial, timing, timed-output read-back); each
    #: request's own timeout is cut to what is left, so a candidate that is slow at every step (but never
    #: slow enough for one request to time out) cannot hold the device for many minutes. 0 = no cap.
    candidate_timeout_s: float = 900.0
    compile_workers: int = 2
    device_workers: int = 1
    threads: int = 0  # torch/OpenMP threads in device workers (0 = all cores of the worker)
    timing: TimingConfig = field(default_factory=TimingConfig)
    memory_limit_gb: float = 16.0  # address-space limit of workers (RLIMIT_AS); 0 disables
    output_limit_mb: float = 256.0  # RLIMIT_FSIZE of workers: caps stdout floods and runaway writes
    check_timed_outputs: bool = True
    #: Timed outputs up to this many elements are compared whole; larger ones at this many secret random
    #: positions plus their first/last 4096 elements (drawn after timing, so the candidate cannot know them).
    timed_check_full_limit: int = 1 << 22
    timed_check_samples: int = 1 << 20
    allow_code_execution: bool = False  # must be set by the user (flag or MKB_ALLOW_CODE_EXECUTION=1)
    seed: int | None = None  # None = fresh secret seed material per run (the default)
    skip_timing: bool = False
    trace_path: Path | None = None  # append one line per build/check/timing phase (see engine/trace.py)
    zygote: bool = True  # fork workers from a pre-imported process instead of starting fresh interpreters
    #: Anti-cheat switches; harness self-tests on plain-PyTorch candidates set require_custom_kernel=False.
    anticheat: AntiCheatConfig = field(default_factory=AntiCheatConfig)
