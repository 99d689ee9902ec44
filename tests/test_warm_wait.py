"""Builds wait, bounded, for what the trusted warmer is making right now (backends/extbuild/warm_wait.py): the light-header
analysis (nvcc_light) and the PCH (main.cpp's compile). Real processes, a real C++ build."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time

import pytest

from multikernelbench.backends.extbuild import warm_wait


def _sleeper(seconds: float = 60) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])


@pytest.mark.slow
def test_waits_while_a_live_warmer_marks_the_folder_and_returns_when_the_file_arrives(tmp_path):
    proc = _sleeper()
    try:
        warm_wait.mark(tmp_path, proc.pid)
        target = tmp_path / "analysis.json"
        threading.Timer(1.0, target.write_text, args=("{}",)).start()
        t0 = time.monotonic()
        assert warm_wait.wait_for(target, tmp_path, 30)
        assert 0.8 < time.monotonic() - t0 < 20
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_no_mark_a_dead_warmer_or_the_bound_ends_the_wait(tmp_path):
    target = tmp_path / "never.json"
    t0 = time.monotonic()
    assert not warm_wait.wait_for(target, tmp_path, 30)  # nobody marked the folder
    proc = _sleeper(0)
    proc.wait()
    warm_wait.mark(tmp_path, proc.pid)  # a warmer that died without unmarking
    assert not warm_wait.wait_for(target, tmp_path, 30)
    assert time.monotonic() - t0 < 5
    live = _sleeper()
    try:
        warm_wait.mark(tmp_path, live.pid)
        t0 = time.monotonic()
        assert not warm_wait.wait_for(target, tmp_path, 1.0)
        assert 0.9 < time.monotonic() - t0 < 10
        warm_wait.unmark(tmp_path, live.pid + 1)  # not its mark: stays
        assert warm_wait.warmer_active(tmp_path)
        warm_wait.unmark(tmp_path, live.pid)
        assert not (tmp_path / warm_wait.MARKER).exists()
    finally:
        live.kill()
        live.wait()


@pytest.mark.slow
def test_a_stopped_warmer_leaves_no_mark(tmp_path):
    from multikernelbench.backends.extbuild.cuda_warm import PchWarmer, light_root_of

    warmer = PchWarmer(tmp_path / "pch", {}, with_cuda=True, light=True)
    assert warm_wait.warmer_active(tmp_path / "pch")  # marked by the parent at once, before its imports
    assert warm_wait.warmer_active(light_root_of(tmp_path / "pch") / "analysis")
    warmer.stop()
    assert not list(tmp_path.rglob(warm_wait.MARKER))


_CPP = "torch::Tensor twice(torch::Tensor x) { return x * 2; }"

_LOAD = textwrap.dedent("""
    import sys, torch
    from torch.utils.cpp_extension import load_inline
    from multikernelbench.backends.extbuild.cuda_build import FastExtensionBuilder
    b = FastExtensionBuilder(sys.argv[1], pch=True, cache=False, split_nvcc=False, pch_root=sys.argv[2])
    b.install()
    m = load_inline(name="mkb_warm_wait_twice", cpp_sources=[sys.argv[3]], functions=["twice"],
                    build_directory=sys.argv[4])
    assert torch.equal(m.twice(torch.arange(4.0)), torch.arange(4.0) * 2)
    print(b.log)
""")


@pytest.mark.slow
def test_main_cpp_waits_for_the_pch_being_made_and_a_reload_does_not_rebuild(tmp_path, cpu_pch):
    """The session's PCH for no extra flags stands in for the warmer's product: a "warmer" process marks a
    cold PCH folder holding only the header, and puts the .gch in place 2 s after the build began. The build's main.cpp
    compile waits for it (the build.ninja's compile rule runs the waiter first), the module is right, and
    loading the built folder again in another process (the device worker's load) runs no compile."""
    from multikernelbench.backends.extbuild.cuda_warm import pch_dirs

    (warm,) = pch_dirs(cpu_pch, ((),)).values()
    gchs = list(warm.glob("*.gch"))
    assert gchs, f"no session PCH in {warm}"
    cold = tmp_path / "pch" / warm.name
    cold.mkdir(parents=True)
    for header in warm.glob("*.h"):
        (cold / header.name).write_text(header.read_text())
    gch = cold / gchs[0].name
    build = tmp_path / "build"
    build.mkdir()
    # The "warmer" finishes 2 s after the build has begun (its build.ninja written), whatever the build's
    # start-up costs; it gives up after 5 minutes.
    maker = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import os, time
        end = time.time() + 300
        while not os.path.exists({str(build / "build.ninja")!r}) and time.time() < end:
            time.sleep(0.05)
        time.sleep(2)
        os.symlink({str(gchs[0])!r}, {str(gch)!r})
    """)])
    warm_wait.mark(tmp_path / "pch", maker.pid)
    args = [sys.executable, "-c", _LOAD, str(tmp_path / "ext"), str(tmp_path / "pch"), _CPP, str(build)]
    first = subprocess.run(args, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    assert maker.wait(timeout=30) == 0 and gch.exists()
    assert "'pch_waited'" in first.stdout, first.stdout
    ninja = (build / "build.ninja").read_text()
    assert "warm_wait.py" in ninja and "-include" in ninja, ninja
    log = (build / ".ninja_log").read_text()
    warm_wait.unmark(tmp_path / "pch", maker.pid)
    again = subprocess.run(args, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (build / ".ninja_log").read_text() == log  # nothing recompiled: the command text is the same
    assert "'pch_waited'" in again.stdout, again.stdout
