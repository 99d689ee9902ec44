"""The worker's audit hook lets GPU JIT runtimes run their toolchain during a forward (Triton's ptxas, its
C launcher build with cc, its ``ldconfig -p``), and nothing else: the same executables called from
candidate code are still blocked. Runs in a subprocess because the hook cannot be removed once added."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(r'''
    import os, subprocess, sys, tempfile
    from multikernelbench.anticheat import guard

    g = guard.install([os.getcwd(), tempfile.gettempdir()])
    g.in_forward = True

    def run(argv):
        try:
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return "ran"
        except PermissionError:
            return "blocked"
        except FileNotFoundError:  # allowed by the hook, but not installed on this machine
            return "ran"

    def spawn(argv):
        import shutil
        try:
            quiet = [(os.POSIX_SPAWN_OPEN, fd, "/dev/null", os.O_WRONLY, 0) for fd in (1, 2)]
            pid = os.posix_spawn(shutil.which(argv[0]) or argv[0], argv, dict(os.environ), file_actions=quiet)
            os.waitpid(pid, 0)
            return "ran"
        except PermissionError:
            return "blocked"

    # A function whose code belongs to the installed Triton package (as its runtime/build.py would), and
    # the same function from a look-alike path outside it.
    import importlib.util
    tdir = importlib.util.find_spec("triton").submodule_search_locations[0]
    ns, fake_ns = {"run": run, "spawn": spawn}, {"run": run}
    exec(compile("def build(argv):\n    return run(argv)\ndef pspawn(argv):\n    return spawn(argv)\n",
                 os.path.join(tdir, "runtime", "build.py"), "exec"), ns)
    exec(compile("def build(argv):\n    return run(argv)\n", "/tmp/x/triton/runtime/build.py", "exec"), fake_ns)

    print("candidate_cc", run(["cc", "--version"]))
    print("candidate_sh", run(["sh", "-c", "true"]))
    print("triton_cc", ns["build"](["cc", "--version"]))
    print("triton_sh", ns["build"](["sh", "-c", "true"]))
    print("triton_file", ns["build"](["file", "-b", sys.executable]))
    print("lookalike_cc", fake_ns["build"](["cc", "--version"]))
    print("triton_spawn_cc", ns["pspawn"](["cc", "--version"]))
    print("candidate_spawn_cc", spawn(["cc", "--version"]))
    print("violations", len(g.violations), g.violations[0] if g.violations else "")
''')


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton not installed")
def test_jit_toolchain_allowed_only_from_the_jit_runtime(tmp_path):
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert out["candidate_cc"] == "blocked"
    assert out["candidate_sh"] == "blocked"
    assert out["triton_cc"] == "ran"
    assert out["triton_sh"] == "blocked"  # only compilers / ldconfig / file, even from Triton's files
    assert out["triton_file"] == "ran"
    assert out["lookalike_cc"] == "blocked"
    assert out["triton_spawn_cc"] == "ran" and out["candidate_spawn_cc"] == "blocked"  # os.posix_spawn too
    assert out["violations"].startswith("5 process creation (subprocess.Popen of cc)"), out["violations"]
