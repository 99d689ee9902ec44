"""cuda backend: clear unavailability on CPU-only machines (CI); timer and builder on a GPU (marked gpu)."""

from __future__ import annotations

import pytest
import torch

from multikernelbench.backends.registry import available_backends, get_backend


def test_unavailable_reason_without_gpu():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    reason = available_backends()["cuda"]
    assert reason and ("CUDA" in reason or "cuda" in reason)


def test_worker_env_targets_real_arch_and_fast_build(tmp_path):
    b = get_backend("cuda", arch="9.0")
    env = b.worker_env(tmp_path / "cand")
    assert env["TORCH_CUDA_ARCH_LIST"] == "9.0"  # SASS for sm_90, not PTX-only
    assert env["TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES"] == "1"
    assert env["MKB_EXT_CACHE"] == str(tmp_path / "cand" / "ext")  # the candidate's own: its sandbox writes it
    assert env["MKB_PCH_ROOT"] == str(tmp_path / "_ext_cache" / "pch")  # shared, read-only for workers
    assert env["MKB_PCH_ROOT"] in env["MKB_SANDBOX_READ"].split(":")  # the worker's sandbox may read it
    stock = get_backend("cuda", arch="9.0", fast_build=False).worker_env(tmp_path / "cand")
    assert "MKB_EXT_CACHE" not in stock


def test_roofline_fraction_uses_committed_peaks():
    from multikernelbench.roofline import bound_ms, load_peaks, roofline_fraction

    peaks = load_peaks("NVIDIA H200")
    if peaks is None:
        pytest.skip("no committed H200 peak table")
    # 1 GB of compulsory traffic, negligible flops: memory-bound
    b = bound_ms(peaks, "float32", 0, 10**9)
    assert b == pytest.approx(1e9 / (peaks["copy_bandwidth_gbps"] * 1e9) * 1e3)
    assert roofline_fraction("NVIDIA H200", "float32", 0, 10**9, 2 * b) == pytest.approx(0.5)
    assert roofline_fraction("unknown device", "float32", 0, 10**9, 1.0) is None


gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")


@pytest.mark.gpu
@gpu
def test_event_timer_modes():
    from multikernelbench.engine.config import TimingConfig
    from multikernelbench.timing.cuda_events import cuda_event_timer

    big = [torch.randn(64 << 20, device="cuda") for _ in range(2)]
    small = [torch.randn(1 << 16, device="cuda") for _ in range(2)]
    timer = cuda_event_timer(TimingConfig(warmup=2, min_runs=5, max_runs=50, budget_s=0.5))
    stats = timer.measure({"big": lambda i: torch.relu(big[i % 2]), "small": lambda i: torch.relu(small[i % 2])})
    assert stats["big"].method.startswith("cuda_event") and stats["big"].median_ms > 0.05
    assert stats["small"].method.startswith("cuda_graph") and stats["small"].median_ms < 0.05
    assert timer.sampler.details["flush_bytes"] >= 2 * timer.sampler.details["l2_bytes"]


@pytest.mark.gpu
@gpu
def test_side_stream_work_is_inside_the_clock():
    from multikernelbench.engine.config import TimingConfig
    from multikernelbench.timing.cuda_events import cuda_event_timer

    x = torch.randn(4096, 4096, device="cuda")
    side = torch.cuda.Stream()

    def escaping(i):  # launches on a side stream and never joins it
        with torch.cuda.stream(side):
            for _ in range(20):
                torch.mm(x, x)

    timer = cuda_event_timer(TimingConfig(warmup=1, min_runs=3, max_runs=5, budget_s=1.0), allow_graphs=False)
    st = timer.measure({"esc": escaping})["esc"]
    assert "side_streams" in st.method and st.median_ms > 1.0  # 20 fp32 4096^3 products take ms, not us


@pytest.mark.gpu
@gpu
def test_busy_host_is_not_taken_for_side_streams():
    """Honest host-bound work (many small launches) timed while every core is busy: late wake-ups of the
    host must not be read as work escaping onto another stream."""
    import os
    import subprocess
    import sys

    from multikernelbench.engine.config import TimingConfig
    from multikernelbench.timing.cuda_events import cuda_event_timer

    x = torch.randn(1 << 20, device="cuda")

    def many_small(i):
        y = x
        for _ in range(200):
            y = y * 1.0001
        return y

    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * (os.cpu_count() or 2))]
    try:
        timer = cuda_event_timer(TimingConfig(warmup=2, min_runs=10, max_runs=30, budget_s=2.0), allow_graphs=False)
        st = timer.measure({"eager": many_small})["eager"]
    finally:
        for p in burners:
            p.kill()
    assert "side_streams" not in st.method, st


@pytest.mark.gpu
@pytest.mark.slow
@gpu
def test_fast_builder_caches_by_content(tmp_path):
    from multikernelbench.backends.extbuild.cuda_build import FastExtensionBuilder

    b = FastExtensionBuilder(tmp_path / "cache")
    b.install()
    from torch.utils.cpp_extension import load_inline

    src = "__global__ void k(float* x){ x[threadIdx.x] += 1.f; }\n" \
          "#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x){ k<<<1, x.numel()>>>(x.data_ptr<float>()); return x; }"
    m1 = load_inline(name="mkb_t_cache", cpp_sources="torch::Tensor f(torch::Tensor x);", cuda_sources=src, functions=["f"])
    m2 = load_inline(name="mkb_t_cache", cpp_sources="torch::Tensor f(torch::Tensor x);", cuda_sources=src, functions=["f"])
    assert [e["hit"] for e in b.log if "hit" in e] == [False, True]
    assert m2.f(torch.zeros(4, device="cuda")).sum().item() == 4
    del m1


@pytest.mark.gpu
@gpu
def test_compile_baseline_on_the_gpu(tmp_path):
    """The in-worker torch.compile baseline on CUDA (inductor -> Triton, ptxas and the launcher's cc inside the
    sandboxed device worker), with the trace on: the step never exercised on the H200 so far."""
    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.config import EngineConfig, TimingConfig
    from multikernelbench.engine.runner import evaluate_candidates
    from multikernelbench.records import Status
    from multikernelbench.tasks import load_suite

    task = next(t for t in load_suite() if t.id == "activation.relu")
    source = ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
              "    def forward(self, x):\n        return torch.clamp_min(x, 0.0)\n")
    cfg = EngineConfig(backend="cuda", build_root=tmp_path, allow_code_execution=True, seed=5, run_timeout_s=240.0,
                       trace_path=tmp_path / "trace.log",
                       timing=TimingConfig(min_runs=3, max_runs=20, budget_s=0.5, compile_baseline=True),
                       anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))
    (r,) = evaluate_candidates([task], [Candidate(task_id=task.id, source=source, label="torch_only")], cfg)
    print((tmp_path / "trace.log").read_text())
    assert r.status == Status.CORRECT, r.message
    assert r.compile_timing is not None and r.speedup_compile > 0
