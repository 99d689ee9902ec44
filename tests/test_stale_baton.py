"""A build killed mid-way must not make the next load of its folder wait forever (backends/extbuild/cuda_build.py).

torch's loader guards a build folder with a *baton*, a plain file ``<folder>/lock`` that it removes when the
build ends. A process killed mid-build never removes it, and the next load of that folder (a reused build root,
a rerun) waited in ``FileBaton.wait`` until its timeout: a correct candidate became a ``timeout`` (seen in CI on
a shared exemplar build root). The builder holds an ``flock`` of its own around every load and drops a baton it
finds while holding it. Real processes, a real SIGKILL during a real build.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

_LOAD = textwrap.dedent("""
    import sys, torch
    from multikernelbench.backends.extbuild.cuda_build import FastExtensionBuilder
    FastExtensionBuilder(sys.argv[1], pch=True, cache=False, split_nvcc=False, pch_root=sys.argv[2]).install()
    from torch.utils.cpp_extension import load_inline  # after install, as a candidate in a worker imports it
    m = load_inline(name="mkb_stale_baton", cpp_sources=["torch::Tensor twice(torch::Tensor x) { return x * 2; }"],
                    functions=["twice"], build_directory=sys.argv[3])
    assert torch.equal(m.twice(torch.arange(4.0)), torch.arange(4.0) * 2)
    print("loaded")
""")


@pytest.mark.slow
def test_a_build_killed_midway_leaves_no_baton_that_blocks_the_next_load(tmp_path, cpu_pch):
    build = tmp_path / "build"
    build.mkdir()
    # The first build's compiler says it started and then hangs: it is killed in the middle of the build, every
    # time, before anything is written (a compiler killed while writing its object is another story).
    hang = tmp_path / "hang.sh"
    hang.write_text(f"#!/bin/sh\ntouch {tmp_path / 'compiling'}\nexec sleep 600\n")
    hang.chmod(0o755)
    args = [sys.executable, "-c", _LOAD, str(tmp_path / "ext"), str(cpu_pch), str(build)]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                             env={**os.environ, "CXX": str(hang)})
    try:
        end = time.monotonic() + 300
        while not (tmp_path / "compiling").exists() and first.poll() is None and time.monotonic() < end:
            time.sleep(0.02)
        assert (tmp_path / "compiling").exists(), first.communicate(timeout=5) if first.poll() is not None else ""
        os.killpg(first.pid, signal.SIGKILL)  # mid-build: the loader, ninja and the compiler go together
    finally:
        first.kill()
        first.communicate()
    assert (build / "lock").exists() and not list(build.glob("*.so"))  # the killed build's leftovers
    again = subprocess.run(args, capture_output=True, text=True, timeout=150)  # waited forever before the fix
    assert again.returncode == 0 and "loaded" in again.stdout, again.stderr[-3000:]
    assert not (build / "lock").exists()
