"""Engine configuration as dataclasses (built from CLI flags or YAML; no module-level state)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.timing.config import TimingConfig

__all__ = ["EngineConfig", "TimingConfig"]


@dataclass
class EngineConfig:
    backend: str = "cpu"
    #: Backend options (``--backend-option key=value``), e.g. ``pch=false`` or ``pch_root=DIR``; they reach the
    #: workers unchanged through the Setup message.
    backend_options: dict = field(default_factory=dict)
    build_root: Path = field(default_factory=lambda: Path.home() / ".cache" / "multikernelbench" / "builds")
    compile_timeout_s: float = 300.0
    run_timeout_s: float = 120.0  # per worker request (load, one correctness trial batch, timing)
    #: The whole device stage of one candidate (load, every trial, timing, timed-output read-back); each
    #: request's own timeout is cut to what is left, so a candidate that is slow at every step (but never
    #: slow enough for one request to time out) cannot hold the device for many minutes. 0 = no cap.
    candidate_timeout_s: float = 900.0
    #: Concurrent builds; 0 = the backend's choice for this machine's cores (Backend.default_compile_workers).
    compile_workers: int = 0
    #: Nice value of build workers (and their compilers) for backends whose device stage runs on a device
    #: (not the CPU): that stage yields nothing to builds. 0 leaves builds at the engine's priority.
    build_nice: int = 5
    #: GPU indices to spread the device stage over (one device worker and one reference service each);
    #: None = every visible GPU. Backends that do not run on a GPU use one lane.
    gpus: tuple[int, ...] | None = None
    #: Device lanes per GPU. Lanes sharing a GPU take its turns (engine/gpu_turns.py): loads, checks and worker
    #: ends side by side, every clock alone on the GPU. 0 = chosen at the run's start from the GPUs' free memory
    #: and the usable cores (engine/lane_count.py; 1 where the memory cannot be read); 1 runs one candidate
    #: at a time. None = the backend's ``default_lanes_per_gpu`` (0 for CUDA, where the shipped set's speedups
    #: with 4 lanes were measured within run-to-run spread of 1 lane; 1 elsewhere until measured there).
    lanes_per_gpu: int | None = None
    #: CPU lanes (``device_workers`` > 1) take turns on one pseudo-device as a GPU's lanes do (checks shared,
    #: clocks exclusive). Off: they take none (correctness-only runs need none). Lets a machine without a GPU
    #: test the turns (tests/test_lane_turns.py).
    cpu_lanes_take_turns: bool = False
    #: Work moved out of the exclusive clock turn: a lane alone on its GPU starts the next candidate's worker
    #: (fork, set-up, device context; no candidate code) while the current one loads and is checked
    #: (engine/prefetch.py); lanes sharing a GPU start the clean reference worker and make the timing shape's
    #: models in a shared turn (engine/device_clean.py, the Prepare request); the verification's reference is
    #: computed while the worker ends its timing (engine/verify_ahead.py). Off: all of it inside the turn (A/B).
    prefetch_workers: bool = True
    #: Cores one build is taken to keep busy before any build is measured (the build gate's first wave);
    #: 0 = the backend's ``build_cores_estimate``.
    build_cores_estimate: float = 0.0
    #: Builds admitted beside others run one nice step lower per build already running (BuildStage._nice);
    #: False: all at ``build_nice`` (an A/B of the ordering).
    build_rank_nice: bool = True
    #: Device lanes for backends that do not run on a GPU (CPU, interpreters). Parallel CPU lanes share the
    #: cores, so they only suit correctness-only runs (the suite self-check); timing wants 1.
    device_workers: int = 1
    threads: int = 0  # torch/OpenMP threads in device workers (0 = all cores of the worker)
    timing: TimingConfig = field(default_factory=TimingConfig)
    memory_limit_gb: float = 16.0  # address-space limit of workers (RLIMIT_AS); 0 disables
    output_limit_mb: float = 256.0  # RLIMIT_FSIZE of workers: caps stdout floods and runaway writes
    #: Cap on what a candidate's work dirs and build folder hold together, checked after the build and after
    #: the device stage (engine/disk_quota.py): over it, ``runtime_error`` and the build folder removed. 0: none.
    disk_quota_mb: float = 256.0
    #: At a run's end the least recently used candidates' build folders beyond this many GB are removed
    #: (engine/build_cache.py; ``mkb cache prune`` on demand). 0: no cap.
    build_cache_gb: float = 20.0
    #: A harness running as root starts its compile and device workers as ``worker_uid``/``worker_gid``
    #: (engine/worker_uid.py), so file permissions apply to candidate code too, and ``RLIMIT_NPROC`` at
    #: ``worker_max_processes`` binds (counted over all workers of that uid). No effect when the harness is not
    #: root, nor on a host whose GPU device nodes only root may open (checked: engine/worker_uid.py). Each
    #: worker's start gives its writable folders to the uid it runs as (a build folder a run with the other
    #: setting left behind included). Every ancestor of those folders must stay searchable for the uid while a run is
    #: on: the EACCES builds seen with this on (torch's baton in ``<build>/mkb_cpu_*/``, 2026-12-04) came from
    #: another pytest session resetting ``/tmp/pytest-of-root`` to 0700 (tests/_private_temp.py). On by default
    #: since 2026-12-05: the full suite passed with it on (a local ``.ci/run`` and CI, both as root) and the
    #: H200 kept every CUDA status and 1,206 candidates/h with it (benchmarks/shipped_sets_h200/, throughput/).
    drop_root: bool = True
    worker_uid: int = 65534
    worker_gid: int = 65534
    worker_max_processes: int = 8192
    check_timed_outputs: bool = True
    #: A verified timed call's output is compared at this many secret random flat positions plus its first
    #: and last ``timed_check_edge`` elements (the whole output when it is smaller than that).
    timed_check_positions: int = 4096
    timed_check_edge: int = 1024
    allow_code_execution: bool = False  # must be set by the user (flag or MKB_ALLOW_CODE_EXECUTION=1)
    #: Run untrusted code even where the kernel lacks a sandbox layer (Landlock or seccomp; see
    #: engine/kernel_sandbox.py). Off: such a run refuses to start. Results record the level either way.
    allow_weak_sandbox: bool = False
    seed: int | None = None  # None = fresh secret seed material per run (the default)
    skip_timing: bool = False
    #: ``--fresh-shapes K``: after the test shapes pass, check K more shapes drawn per run from each task's
    #: SHAPE_RANGES (tasks/ranges.py); tasks without ranges are flagged, not checked.
    fresh_shapes: int = 0
    #: The suite baseline (``mkb baseline``): no candidate is built or loaded; each "candidate" stands for its
    #: task's reference, timed eager (and compiled) through the same workers, fresh inputs and timer.
    reference_only: bool = False
    #: Seconds after which no new build or device stage starts (0 = none): bounded sessions (a device call
    #: with a time limit) end cleanly; unstarted candidates are neither stored nor emitted, so a rerun with
    #: the same store picks them up.
    stop_after_s: float = 0.0
    #: Reference-only runs: compile each reference ahead of its turn in the build pool (engine/warmup.py).
    #: Off by default: measured on the H200, a warm-cache compile in the device worker still costs ~6 s of
    #: the ~9 s cold one (imports, tracing, loading), so more lanes per GPU overlap compiles more cheaply.
    reference_warmup: bool = False
    trace_path: Path | None = None  # append one line per build/check/timing phase (see engine/trace.py)
    zygote: bool = True  # fork workers from a pre-imported process instead of starting fresh interpreters
    #: ``mkb eval --ray [ADDRESS]``: run builds as Ray tasks and device stages as Ray actors
    #: (multikernelbench/cluster/). None = the local runner; "local" = start a Ray instance on this machine;
    #: anything else is ray.init's address ("auto", "ray://host:10001", "host:6379").
    ray_address: str | None = None
    #: Anti-cheat switches; harness self-tests on plain-PyTorch candidates set require_custom_kernel=False.
    anticheat: AntiCheatConfig = field(default_factory=AntiCheatConfig)
    #: ``--policy``: ``mkb`` or ``kernelbench`` (anticheat/policy.py); stored on every result, part of its key.
    policy: str = "mkb"
