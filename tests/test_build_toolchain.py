"""A build folder left by another environment is built again in the build stage, not taken as built.

Build folders are named by code hash alone, so two venvs on one machine (CI's fresh venv beside an old
``~/.cache/multikernelbench``) share them. Stop 56's CI: every cached C++ build had been made by an earlier
venv, the build stage took them as built, and the device worker's load (torch's loader, seeing other flags)
compiled them again under the quick demo's 3 s request timeout: 0 of 3 correct kernels, 4 timeouts. The
marker now records ``Backend.toolchain()`` (engine/build_stage.py)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from multikernelbench.anticheat.config import AntiCheatConfig
from multikernelbench.backends import get_backend
from multikernelbench.engine.build_stage import MARKER, BuildStage, read_marker
from multikernelbench.engine.candidates import Candidate
from multikernelbench.engine.config import EngineConfig
from multikernelbench.engine.trace import Trace

RELU = "activation.relu"

PY_RELU = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def forward(self, x):
            return torch.clamp_min(x, 0.0)
    """)

CPP_RELU = textwrap.dedent('''
    import torch
    import torch.nn as nn
    from torch.utils.cpp_extension import load_inline

    _CPP = r"""
    #include <torch/extension.h>
    torch::Tensor relu_forward(torch::Tensor x) {
        auto xc = x.contiguous();
        auto out = torch::empty_like(xc);
        const float* in = xc.data_ptr<float>();
        float* o = out.data_ptr<float>();
        for (int64_t i = 0, n = xc.numel(); i < n; ++i) o[i] = in[i] > 0.f ? in[i] : 0.f;
        return out;
    }
    """

    # No extra flags: a flag set with a precompiled header here (CpuBackend.WARM_VARIANTS), as the demo's
    # kernels have; the other venv's build reads torch's headers as text (its paths have no header made).
    _ext = load_inline(name="mkb_test_toolchain_relu", cpp_sources=_CPP, functions=["relu_forward"],
                       verbose=False)

    class ModelNew(nn.Module):
        def forward(self, x):
            return _ext.relu_forward(x)
    ''')


def config(build_root: Path, options: dict, **kw) -> EngineConfig:
    return EngineConfig(build_root=build_root, allow_code_execution=True, seed=3, skip_timing=True,
                        anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False),
                        backend_options=options, **kw)


def stage_for(build_root: Path, options: dict, trace: Trace | None = None) -> BuildStage:
    cfg = config(build_root, options)
    return BuildStage(get_backend("cpu", **options), cfg, trace or Trace(None))


@pytest.mark.slow
def test_the_marker_names_the_toolchain_and_another_ones_build_is_a_miss(suite, tmp_path):
    """Real compile workers; a Python candidate, so the 'build' is executing the module (about a second)."""
    cand = Candidate(task_id=RELU, source=PY_RELU, label="py")
    first = stage_for(tmp_path, {"pch": False})
    out = first.build(suite[RELU], cand)
    assert out.ok and not out.cached, out.message
    folder = first.build_dir(cand)
    assert json.loads((folder / MARKER).read_text())["toolchain"] == first.toolchain
    assert first.build(suite[RELU], cand).cached  # same environment: the cache answers

    other = stage_for(tmp_path, {})  # another environment: here, precompiled headers on
    assert other.toolchain != first.toolchain
    assert read_marker(folder) is not None and read_marker(folder, other.toolchain) is None
    again = other.build(suite[RELU], cand)
    assert again.ok and not again.cached, "a build made by another toolchain was taken as built"
    assert read_marker(folder, other.toolchain) is not None


def test_toolchain_follows_the_interpreter_the_compiler_and_the_options(monkeypatch):
    base = get_backend("cpu").toolchain()
    assert base["python"] and "torch" in base and base["options"] == "{}"
    monkeypatch.setenv("CXX", "clang++")
    assert get_backend("cpu").toolchain() != base
    monkeypatch.delenv("CXX")
    assert get_backend("cpu", pch=False).toolchain() != base
    assert get_backend("cpu").toolchain() == base


BUILD_ELSEWHERE = textwrap.dedent("""
    import sys
    from pathlib import Path

    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.backends import get_backend
    from multikernelbench.engine.build_stage import BuildStage
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.trace import Trace
    from multikernelbench.tasks import load_suite

    import torch
    assert torch.__file__.startswith(sys.argv[2]), torch.__file__  # this environment's torch path
    cfg = EngineConfig(build_root=Path(sys.argv[1]), allow_code_execution=True, seed=3, skip_timing=True,
                       anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))
    task = {t.id: t for t in load_suite()}["activation.relu"]
    out = BuildStage(get_backend("cpu"), cfg, Trace(None)).build(task, Candidate("activation.relu", sys.stdin.read(), "cpp"))
    assert out.ok, out.message
    """)


def _link_or_copy(src: str, dst: str) -> None:
    """A hard link where the file system allows one (1-2 s for the whole tree, no disk), else a copy."""
    import os
    import shutil

    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def second_venv(where: Path) -> Path:
    """Another venv of this interpreter whose site-packages is a copy of this one's (hard-linked where it can
    be): the same packages at another path, as a second ``pip install`` makes them. Its Python, not a
    PYTHONPATH trick: the workers' read scope is the interpreter's own folders (engine/kernel_sandbox.py)."""
    import shutil
    import subprocess
    import sys
    import sysconfig

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    mine = Path(sysconfig.get_paths()["purelib"])
    theirs = where / mine.relative_to(sys.prefix)
    shutil.rmtree(theirs)
    shutil.copytree(mine, theirs, symlinks=True, copy_function=_link_or_copy)
    return where / "bin" / "python"


BUILD_THERE = textwrap.dedent("""
    import sys
    from pathlib import Path

    import torch

    from multikernelbench.anticheat.config import AntiCheatConfig
    from multikernelbench.backends import get_backend
    from multikernelbench.engine.build_stage import BuildStage
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.trace import Trace
    from multikernelbench.tasks import load_suite

    assert torch.__file__.startswith(sys.prefix), (torch.__file__, sys.prefix)  # this venv's own copy
    cfg = EngineConfig(build_root=Path(sys.argv[1]), allow_code_execution=True, seed=3, skip_timing=True,
                       anticheat=AntiCheatConfig(static_checks=False, require_custom_kernel=False))
    task = {t.id: t for t in load_suite()}["activation.relu"]
    cand = Candidate("activation.relu", sys.stdin.read(), "cpp")
    out = BuildStage(get_backend("cpu"), cfg, Trace(None)).build(task, cand)
    assert out.ok and not out.cached, out.message
    """)


@pytest.mark.slow
@pytest.mark.usefixtures("cpu_pch")
def test_a_cpp_build_from_another_venv_is_rebuilt_before_the_device_stage(suite, tmp_path):
    """The CI failure, end to end: a real C++ build made by a second venv (torch's loader writes that venv's
    include paths into the build's command line), then evaluated from this one under the quick demo's 3 s
    request timeout. The build stage builds it again, and the worker's load only loads; before the marker
    named the toolchain, the build stage took the folder as built and the load compiled it: a timeout."""
    import os
    import subprocess

    from multikernelbench.engine.device_stage import CandidateEvaluation
    from multikernelbench.engine.reference import ReferenceService, SeedSource
    from multikernelbench.records import EvalResult, Status

    python = second_venv(tmp_path / "venv-b")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(python), "-c", BUILD_THERE, str(tmp_path / "builds")], input=CPP_RELU, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    task = suite[RELU]
    cand = Candidate(task_id=RELU, source=CPP_RELU, label="cpp")
    trace_path = tmp_path / "trace.log"
    cfg = config(tmp_path / "builds", {}, run_timeout_s=3.0, trace_path=trace_path)
    backend = get_backend("cpu")
    trace = Trace(trace_path)
    stage = BuildStage(backend, cfg, trace)
    built = stage.build(task, cand)
    assert built.ok and not built.cached, built.message or "another venv's build was taken as built"
    result = EvalResult(task_id=RELU, task_hash=task.content_hash, backend="cpu", candidate=cand.label,
                        code_hash=cand.code_hash, status=Status.RUNTIME_ERROR)
    CandidateEvaluation(task, cand.source, stage.build_dir(cand), backend, cfg, SeedSource(3),
                        ReferenceService(backend.device()), trace=trace).run(result)
    assert result.status == Status.CORRECT, result.message


def test_a_lane_replaces_another_venvs_folder_with_the_shipped_build(tmp_path):
    """The cluster's lanes (cluster/remote.py ``Lane.evaluate``) unpack a shipped build unless this node has a
    complete one: one of another venv used to count, and its load compiled again in the device stage."""
    from multikernelbench.cluster.shipping import pack_build, unpack_build
    from multikernelbench.engine.build_stage import write_marker

    lane = get_backend("cpu").toolchain()
    other = {**lane, "python": "/elsewhere/venv/bin/python"}
    built = tmp_path / "builder" / "0123456789abcdef0123"
    built.mkdir(parents=True)
    (built / "ext.so").write_text("the builder's")
    write_marker(built, 1.5, lane)
    data = pack_build(built)

    here = tmp_path / "lane" / built.name
    here.mkdir(parents=True)
    (here / "ext.so").write_text("another venv's")
    write_marker(here, 2.0, other)
    assert unpack_build(data, here, lane), "another venv's folder was kept"
    assert (here / "ext.so").read_text() == "the builder's" and read_marker(here, lane) == 1.5
    assert not unpack_build(data, here, lane)  # now this toolchain's: kept

    # A builder unlike this lane: its folder, once unpacked, stands for the next lane (one may be loading it).
    from_elsewhere = tmp_path / "builder2" / built.name
    from_elsewhere.mkdir(parents=True)
    (from_elsewhere / "ext.so").write_text("a builder unlike the lane")
    write_marker(from_elsewhere, 3.0, other)
    data2 = pack_build(from_elsewhere)
    there = tmp_path / "lane2" / built.name
    assert unpack_build(data2, there, lane) and not unpack_build(data2, there, lane)


PLANTS_A_MARKER = textwrap.dedent("""
    import json
    from pathlib import Path

    # The build folder is this worker's to write: leave what the build stage writes after a good build, then fail.
    Path(__file__).with_name("mkb_compiled.json").write_text(json.dumps({"seconds": 1.0, "toolchain": @TOOLCHAIN@}))
    raise RuntimeError("this candidate never builds")
    """)


@pytest.mark.slow
def test_a_marker_the_candidate_plants_does_not_make_its_failed_build_built(suite, tmp_path):
    """Only the build stage's marker counts: a failed build's folder loses any marker, so a rerun (or another
    candidate with the same code) builds again and fails again, not 'compiled' from a planted file. (With one,
    Compilation@k counted the candidate compiled on every later run.)"""
    stage = stage_for(tmp_path, {"pch": False})
    cand = Candidate(task_id=RELU, source=PLANTS_A_MARKER.replace("@TOOLCHAIN@", repr(stage.toolchain)), label="p")
    first = stage.build(suite[RELU], cand)
    assert not first.ok and "never builds" in first.message, first.message
    assert not (stage.build_dir(cand) / MARKER).exists()
    again = stage.build(suite[RELU], cand)
    assert not again.ok and not again.cached, "a planted marker made a failed build cached"
