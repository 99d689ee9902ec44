"""backends/extbuild/nvcc_split.py with the real nvcc (CPU only: objects are compiled, never run).

The split must produce an object equivalent to stock nvcc's (same defined symbols; one anonymous-namespace id
shared by the host stub and the embedded device code), report compile errors once with nvcc's status, and
step aside (plain nvcc) for layouts it does not handle."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from multikernelbench.backends.extbuild import nvcc_split
from multikernelbench.backends.extbuild.cuda_build import split_nvcc_in_ninja

NVCC = shutil.which("nvcc")
pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc not installed")

SRC = r"""
namespace { __global__ void scale(float* x, float a) { x[threadIdx.x] *= a; } }
__global__ void fill(float* x) { x[threadIdx.x] = 2.f; }
void launch(float* x) { fill<<<1, 32>>>(x); scale<<<1, 32>>>(x, 3.f); }
"""
FLAGS = ["-gencode=arch=compute_90,code=sm_90", "--compiler-options", "-fPIC"]


def _split(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, nvcc_split.__file__, NVCC, *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def _defined(obj: Path) -> set[str]:
    out = subprocess.run(["nm", "--defined-only", str(obj)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def _anon_ids(obj: Path) -> set[str]:
    return set(re.findall(rb"_GLOBAL__N__(\w+?_cu_\w*?)\d+scale", obj.read_bytes()))


def test_plan_splits_host_and_device_chains(tmp_path):
    (tmp_path / "k.cu").write_text(SRC)
    env, cmds = nvcc_split.dry_run(NVCC, [*FLAGS, "-c", str(tmp_path / "k.cu"), "-o", str(tmp_path / "k.o")])
    plan = nvcc_split.plan(env, cmds)
    assert plan is not None, cmds
    assert nvcc_split._tool(plan.host[-1]) == "cudafe++" and "--gen_module_id_file" not in plan.host[-1]
    assert any(nvcc_split._tool(c) == "cicc" for c in plan.device)
    assert " -c " in plan.final[0] and plan.module_id_file in plan.host[-1]


@pytest.mark.slow
def test_split_object_matches_stock(tmp_path):
    (tmp_path / "k.cu").write_text(SRC)
    stock = subprocess.run([NVCC, *FLAGS, "-c", "k.cu", "-o", "stock.o"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
    split = _split([*FLAGS, "-c", "k.cu", "-o", "split.o"], tmp_path)
    assert stock.returncode == 0 and split.returncode == 0, split.stderr
    # Two ids differ by design: the anonymous namespace's, and nvcc's per-run temporary file name.
    plain = lambda names: {re.sub(r"tmpxft_[0-9a-f]+_[0-9a-f]+", "tmpxft", n)  # noqa: E731
                           for n in names if "_GLOBAL__N_" not in n}
    assert plain(_defined(tmp_path / "split.o")) == plain(_defined(tmp_path / "stock.o"))
    ids = _anon_ids(tmp_path / "split.o")
    # One id, used by the host-side stub and the embedded device code alike, and it is ours.
    assert len(ids) == 1 and next(iter(ids)).endswith(b"_mkb"), ids
    assert (tmp_path / "split.o").read_bytes().count(next(iter(ids))) >= 2


@pytest.mark.slow
def test_compile_error_is_reported_once_with_nvccs_status(tmp_path):
    (tmp_path / "bad.cu").write_text(SRC + "\nint broken( { }\n")
    stock = subprocess.run([NVCC, *FLAGS, "-c", "bad.cu", "-o", "bad.o"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300)
    split = _split([*FLAGS, "-c", "bad.cu", "-o", "bad2.o"], tmp_path)
    assert stock.returncode != 0 and split.returncode == stock.returncode
    assert "error" in split.stderr and split.stderr.count("bad.cu(") == stock.stderr.count("bad.cu(")
    assert not (tmp_path / "bad2.o").exists()


@pytest.mark.slow
def test_unhandled_layout_runs_plain_nvcc(tmp_path):
    (tmp_path / "k.cu").write_text(SRC)
    res = _split([*FLAGS, "-rdc=true", "-c", "k.cu", "-o", "rdc.o"], tmp_path)
    assert res.returncode == 0, res.stderr
    ids = _anon_ids(tmp_path / "rdc.o")
    assert ids and not any(i.endswith(b"_mkb") for i in ids)  # nvcc's own id: the split stepped aside


def test_ninja_rewrite_only_touches_a_bare_nvcc(tmp_path):
    ninja = tmp_path / "build.ninja"
    ninja.write_text("ninja_required_version = 1.3\ncxx = c++\nnvcc = /usr/local/cuda/bin/nvcc\n"
                     "rule cuda_compile\n  command = $nvcc $cuda_cflags -c $in -o $out\n")
    assert split_nvcc_in_ninja(ninja)
    line = [ln for ln in ninja.read_text().splitlines() if ln.startswith("nvcc = ")][0]
    assert line.endswith(f"{nvcc_split.__file__} /usr/local/cuda/bin/nvcc")
    assert "command = $nvcc $cuda_cflags" in ninja.read_text()
    wrapped = tmp_path / "wrapped.ninja"
    wrapped.write_text("nvcc = ccache /usr/local/cuda/bin/nvcc\n")
    assert not split_nvcc_in_ninja(wrapped)
    assert wrapped.read_text() == "nvcc = ccache /usr/local/cuda/bin/nvcc\n"


def test_torch_written_ninja_file_gets_the_split(tmp_path, monkeypatch):
    """The build.ninja that this torch's load_inline writes for a .cu source has the ``nvcc = <path>`` line
    the rewrite expects (a torch that changes its layout fails here, not silently on the device)."""
    import inspect

    import torch.utils.cpp_extension as ce

    monkeypatch.delenv("PYTORCH_NVCC", raising=False)
    if not ce.CUDA_HOME:  # a CPU build of torch finds no CUDA_HOME at import; nvcc's own folder is it
        monkeypatch.setattr(ce, "CUDA_HOME", str(Path(NVCC).resolve().parent.parent))
    monkeypatch.setenv("TORCH_NO_COMPILER_WRAPPER", "1")  # a ccache on PATH would wrap nvcc (left alone)
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    (tmp_path / "k.cu").write_text(SRC)
    (tmp_path / "main.cpp").write_text("int main_stub;\n")
    params = inspect.signature(ce._write_ninja_file_to_build_library).parameters
    given = dict(path=str(tmp_path / "build.ninja"), name="k", sources=[str(tmp_path / "main.cpp"),
                 str(tmp_path / "k.cu")], extra_cflags=[], extra_cuda_cflags=[], extra_sycl_cflags=[],
                 extra_ldflags=[], extra_include_paths=[], with_cuda=True, with_sycl=False, is_standalone=False)
    ce._write_ninja_file_to_build_library(**{k: v for k, v in given.items() if k in params})
    text = (tmp_path / "build.ninja").read_text()
    assert split_nvcc_in_ninja(tmp_path / "build.ninja"), text
    new = (tmp_path / "build.ninja").read_text()
    assert nvcc_split.__file__ in new and "command = $nvcc" in new


@pytest.mark.slow
def test_failed_host_half_stops_the_device_compilers(tmp_path):
    """A host-only error ends the build at once; the device chain's cicc (seconds of unrolled work here)
    must not keep running orphaned after the driver returns."""
    kernels = "\n".join(f"""__global__ void k{i}(float* x, int n) {{
  float acc = 0.f;
  #pragma unroll
  for (int j = 0; j < 512; ++j) acc += __sinf(x[(threadIdx.x * {i + 1} + j) % n]) * (j & 7);
  x[threadIdx.x] = acc;
}}""" for i in range(12))  # ~10 s of cicc on the dev host; the host error comes in ~0.3 s
    (tmp_path / "slow.cu").write_text('#ifndef __CUDA_ARCH__\nint host_only_error = "not an int";\n#endif\n' + kernels)
    t0 = time.monotonic()
    res = _split([*FLAGS, "-c", "slow.cu", "-o", "slow.o"], tmp_path)
    assert res.returncode != 0 and "host_only_error" in res.stderr, res.stderr
    assert time.monotonic() - t0 < 6.0  # did not wait for the device half
    time.sleep(0.5)
    left = subprocess.run(["pgrep", "-f", str(tmp_path / "slow.cu")], capture_output=True, text=True).stdout
    assert not left.strip(), left
