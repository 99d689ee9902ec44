"""The worker's audit hook lets GPU JIT runtimes run their toolchain during a forward (Triton's ptxas, its
C launcher build with cc, its ``ldconfig -p``), and nothing else: the same executables called from
candidate code are still blocked. Runs in a subprocess because the hook cannot be removed once added."""

from __future__ import annotations

import subprocess
import sys
import textwrap

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

    # A function defined in a file that Triton's runtime would own (same relative path).
    fake = os.path.join(tempfile.mkdtemp(), "site", "triton", "runtime", "build.py")
    os.makedirs(os.path.dirname(fake))
    ns = {"run": run}
    exec(compile("def build(argv):\n    return run(argv)\n", fake, "exec"), ns)

    print("candidate_cc", run(["cc", "--version"]))
    print("candidate_sh", run(["sh", "-c", "true"]))
    print("triton_cc", ns["build"](["cc", "--version"]))
    print("triton_sh", ns["build"](["sh", "-c", "true"]))
    print("violations", len(g.violations), g.violations[0] if g.violations else "")
''')


def test_jit_toolchain_allowed_only_from_the_jit_runtime(tmp_path):
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert out["candidate_cc"] == "blocked"
    assert out["candidate_sh"] == "blocked"
    assert out["triton_cc"] == "ran"
    assert out["triton_sh"] == "blocked"  # only compilers / ldconfig, even from Triton's files
    assert out["violations"].startswith("3 process creation (subprocess.Popen of cc)"), out["violations"]
