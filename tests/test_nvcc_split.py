"""backends/extbuild/nvcc_split.py with the real nvcc (CPU only: objects are compiled, never run).

The split must produce an object equivalent to stock nvcc's (same defined symbols; one anonymous-namespace id
shared by the host stub and the embedded device code), report compile errors once with nvcc's status, and
step aside (plain nvcc) for layouts it does not handle."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from multikernelbench.backends.extbuild import nvcc_driver, nvcc_split

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


def test_the_split_wraps_only_a_bare_nvcc():
    """The driver's split step (backends/extbuild/nvcc_driver.py) goes around nvcc itself; a ``ccache nvcc`` a user
    put in ``PYTORCH_NVCC`` is run as it is (the light step, which any compiler command suits, still applies)."""
    opts = nvcc_driver.DriverOptions(split=True)
    args = ["-O3", "-c", "/b/k.cu", "-o", "/b/k.o"]
    cmd = nvcc_driver.command(opts, ["/usr/local/cuda/bin/nvcc"], args)
    assert cmd[1] == nvcc_split.__file__ and cmd[2:] == ["/usr/local/cuda/bin/nvcc", *args]
    assert nvcc_driver.command(opts, ["ccache", "/usr/local/cuda/bin/nvcc"], args) == \
        ["ccache", "/usr/local/cuda/bin/nvcc", *args]
    assert nvcc_driver.split_command(["ccache", "/usr/local/cuda/bin/nvcc", *args]) == \
        (["ccache", "/usr/local/cuda/bin/nvcc"], args)


def test_torch_written_ninja_file_enters_the_driver(tmp_path, monkeypatch):
    """The build.ninja this torch's load_inline writes, in a process where the builder is installed, runs the
    driver as its ``nvcc`` (torch reads ``PYTORCH_NVCC`` when it writes the file: a torch that stops doing so fails
    here, not silently on the device), and the driver's compile of a .cu is the split one."""
    import inspect

    import torch.utils.cpp_extension as ce

    from multikernelbench.backends.extbuild.cuda_build import FastExtensionBuilder

    monkeypatch.setenv("PYTORCH_NVCC", "")  # recorded as unset, so that the undo removes what install() sets
    monkeypatch.delenv("PYTORCH_NVCC")
    if not ce.CUDA_HOME:  # a CPU build of torch finds no CUDA_HOME at import; nvcc's own folder is it
        monkeypatch.setattr(ce, "CUDA_HOME", str(Path(NVCC).resolve().parent.parent))
    monkeypatch.setenv("TORCH_NO_COMPILER_WRAPPER", "1")  # a ccache on PATH would wrap nvcc (left alone)
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    monkeypatch.setattr(ce, "load_inline", ce.load_inline)  # install() replaces these two: undone after the test
    monkeypatch.setattr(ce, "_run_ninja_build", ce._run_ninja_build)
    FastExtensionBuilder(tmp_path / "cache", light_headers=False).install()
    line = nvcc_driver.DriverOptions(split=True).env_value([ce._join_cuda_home("bin", "nvcc")])
    import os

    assert os.environ["PYTORCH_NVCC"] == line
    (tmp_path / "k.cu").write_text(SRC)
    (tmp_path / "main.cpp").write_text("int main_stub;\n")
    params = inspect.signature(ce._write_ninja_file_to_build_library).parameters
    given = dict(path=str(tmp_path / "build.ninja"), name="k", sources=[str(tmp_path / "main.cpp"),
                 str(tmp_path / "k.cu")], extra_cflags=[], extra_cuda_cflags=[], extra_sycl_cflags=[],
                 extra_ldflags=[], extra_include_paths=[], with_cuda=True, with_sycl=False, is_standalone=False)
    ce._write_ninja_file_to_build_library(**{k: v for k, v in given.items() if k in params})
    text = (tmp_path / "build.ninja").read_text()
    assert f"nvcc = {line}\n" in text and "command = $nvcc" in text, text
    # What ninja runs for the .cu: the driver, which runs the split (no GPU needed to compile).
    res = subprocess.run([*shlex.split(line), *FLAGS, "-c", "k.cu", "-o", "k.o"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert any(i.endswith(b"_mkb") for i in _anon_ids(tmp_path / "k.o"))  # the split's module id


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
