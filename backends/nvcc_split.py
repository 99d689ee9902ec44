"""An nvcc front door that runs the host and device halves of one ``nvcc -c`` at the same time.

For a ``.cu`` that includes torch's headers, nvcc spends nearly all its time in three passes over ~400k
lines of headers, one after another: cudafe++ (host front end), cicc (device front end + NVVM) and the host
compiler on cudafe++'s output. The first two are independent except for one small file, the *module id*,
which cudafe++ writes and cicc reads (it names the anonymous namespace identically on both sides). So:

1. ``nvcc --dryrun <args>`` lists the exact commands (and environment) stock nvcc would run.
2. The module id file is written up front, with a fresh identifier, and cudafe++ is told to read it instead
   of generating it.
3. The host chain (preprocess → cudafe++) and the device chain (preprocess → cicc → ptxas → fatbinary)
   run concurrently; the final host compile (which includes the fatbinary through cicc's stub) runs after
   both.

Every command is stock nvcc's own, with its own flags; only the order changes and the module id's spelling
(an arbitrary identifier both halves agree on). Anything this module does not recognise — another nvcc
layout, relocatable device code, several source files, no ``-c`` — runs plain nvcc unchanged, as does any
failure of the dry run. On a compile error the failing half's messages are printed as nvcc would print
them (host first, as nvcc runs it first) and the exit status is that command's.

Usage (what :class:`~multikernelbench.backends.cuda_build.FastExtensionBuilder` writes into build.ninja):
``python /path/to/nvcc_split.py /path/to/nvcc <nvcc arguments>`` (standard library only, so it is run as a
script: ``-m multikernelbench.backends.nvcc_split`` works too but imports torch through the package).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

_ENV_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_UNSUPPORTED = ("-rdc", "--relocatable-device-code", "-dc", "--device-c", "-dw", "--device-w", "-dlink",
                "--device-link", "-E", "--preprocess", "-M", "-MM", "--generate-dependencies", "-ptx", "--ptx",
                "-cubin", "--cubin", "-fatbin", "--fatbin", "--keep", "-keep", "--dryrun", "-dryrun", "-lib", "--lib",
                "-link", "--link", "-run", "--run", "-cuda", "--cuda", "-G", "--device-debug")


@dataclass
class Plan:
    """Stock nvcc's commands for one ``-c``, split into what may run side by side."""

    env_lines: list[str]
    host: list[str]
    device: list[str]
    final: list[str]
    module_id_file: str
    notes: list[str] = field(default_factory=list)


def dry_run(nvcc: str, args: list[str]) -> tuple[list[str], list[str]]:
    """(environment assignments, commands) that ``nvcc --dryrun`` prints, in order."""
    out = subprocess.run([nvcc, "--dryrun", *args], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"nvcc --dryrun exited {out.returncode}: {out.stderr[-500:]}")
    env, cmds = [], []
    for line in out.stderr.splitlines() + out.stdout.splitlines():
        if not line.startswith("#$ "):
            continue
        body = line[3:].rstrip()
        if _ENV_LINE.match(body):
            env.append(body)
        elif body:
            cmds.append(body)
    return env, cmds


def _tool(cmd: str) -> str:
    try:
        first = shlex.split(cmd)[0]
    except (ValueError, IndexError):
        return ""
    return os.path.basename(first.replace("$CICC_PATH/", ""))


def plan(env: list[str], cmds: list[str]) -> Plan | None:
    """The split, or None when the command list is not the single-source ``-c`` layout this relies on."""
    cudafe = [i for i, c in enumerate(cmds) if _tool(c) == "cudafe++"]
    if len(cudafe) != 1 or not cmds or " -c " not in f" {cmds[-1]} ":
        return None
    i = cudafe[0]
    host, device, final = cmds[:i + 1], cmds[i + 1:-1], cmds[-1:]
    words = shlex.split(cmds[i])
    if "--gen_module_id_file" not in words or "--module_id_file_name" not in words:
        return None
    module_id = words[words.index("--module_id_file_name") + 1]
    if not any(_tool(c) == "cicc" for c in device) or any(_tool(c) in ("nvlink", "cudafe++") for c in device):
        return None
    # The host chain's outputs must not feed the device chain (only the module id, handled up front).
    produced = [w for c in host for w in _outputs(c)]
    if not produced or any(p in c for p in produced for c in device):
        return None
    host = host[:-1] + [cmds[i].replace("--gen_module_id_file ", "", 1)]
    return Plan(env, host, device, final, module_id)


def _outputs(cmd: str) -> list[str]:
    words = shlex.split(cmd)
    outs = []
    for flag in ("-o", "--gen_c_file_name"):
        if flag in words and words.index(flag) + 1 < len(words):
            outs.append(words[words.index(flag) + 1])
    return outs


def module_identifier(source: str) -> str:
    """An identifier unique to this build (content, process, time), spelled like nvcc's own."""
    stem = re.sub(r"\W", "_", Path(source).name)
    digest = hashlib.sha256(f"{os.path.abspath(source)}:{os.getpid()}:{time.time_ns()}".encode()).hexdigest()[:8]
    return f"_{digest}_{len(stem)}_{stem}_mkb"


def _script(cmds: list[str]) -> str:
    # nvcc's own clean-up ("rm x.fatbin") ignores a file that was never written; so does this.
    cmds = [("rm -f " + c[3:]) if c.startswith("rm ") else c for c in cmds]
    return "\n".join(["set -e"] + cmds) + "\n"


def environment(env_lines: list[str]) -> dict[str, str]:
    """The variables nvcc would export to its tools (PATH with nvvm/bin first, CICC_PATH, ...). Some of
    nvcc's lines are lists of words (``SYSTEM_INCLUDES="-isystem" "dir"``): the words are joined by spaces;
    the commands themselves carry their flags expanded, so only the path-like variables matter."""
    env = dict(os.environ)
    for line in env_lines:
        name, value = line.split("=", 1)
        try:
            env[name] = " ".join(shlex.split(value))
        except ValueError:
            env[name] = value.strip()
    return env


def run_split(p: Plan, source: str) -> int:
    Path(p.module_id_file).write_text(module_identifier(source))
    env = environment(p.env_lines)
    # Each chain in a process group of its own (same session, so the harness's session-wide kill still
    # reaches it), so that a failed host half can stop the device half's compilers, not just its shell.
    host = subprocess.Popen(["bash", "-c", _script(p.host)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, process_group=0)
    device = subprocess.Popen(["bash", "-c", _script(p.device)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, process_group=0)
    h_out, h_err = host.communicate()
    if host.returncode != 0:  # nvcc would have stopped here: the device half's messages would not exist
        try:
            os.killpg(device.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        device.communicate()
        _echo(h_out, h_err)
        return host.returncode
    d_out, d_err = device.communicate()
    _echo(h_out, h_err)
    _echo(d_out, d_err)
    if device.returncode != 0:
        return device.returncode
    final = subprocess.run(["bash", "-c", _script(p.final)], env=env)
    return final.returncode


def _echo(out: bytes, err: bytes) -> None:
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    sys.stderr.buffer.write(err)
    sys.stderr.flush()


def _sources(args: list[str]) -> list[str]:
    return [a for a in args if a.endswith((".cu", ".cup")) and not a.startswith("-")]


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(f"usage: python {__file__} NVCC ARGS...", file=sys.stderr)
        return 2
    nvcc, args = argv[0], argv[1:]
    plain = lambda: subprocess.run([nvcc, *args]).returncode  # noqa: E731 - the stock path
    sources = _sources(args)
    if "-c" not in args or len(sources) != 1 or any(a.split("=", 1)[0] in _UNSUPPORTED for a in args) \
            or os.environ.get("MKB_NVCC_SPLIT") == "0":
        return plain()
    try:
        p = plan(*dry_run(nvcc, args))
    except Exception:  # noqa: BLE001 - any surprise means stock nvcc, never a failed build
        p = None
    if p is None:
        return plain()
    return run_split(p, sources[0])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
