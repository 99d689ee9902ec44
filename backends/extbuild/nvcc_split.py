"""An nvcc front door that runs the host and device halves of one ``nvcc -c`` at the same time.

For a ``.cu`` that includes torch's headers, nvcc spends nearly all its time in three passes over ~400k
lines of headers, one after another: cudafe++ (host front end), cicc (device front end + NVVM) and the host
compiler on cudafe++'s output. The first two are independent except for one small file, the *module id*,
which cudafe++ writes and cicc reads (it names the anonymous namespace identically on both sides). So:

1. ``nvcc --dryrun <args>`` lists the exact commands (and environment) stock nvcc would run.
2. The module id file is written up front, with an identifier derived from the flags (the same for every
   build of a flag set: :func:`module_identifier`), and cudafe++ is told to read it instead of generating it.
3. The host chain (preprocess → cudafe++) and the device chain (preprocess → cicc → ptxas → fatbinary)
   run concurrently; the final host compile (which includes the fatbinary through cicc's stub) runs after
   both, with the warmer's precompiled prelude prefix when ``--host-pch`` names its folder and the build's
   cudafe++ output starts with exactly that text (:mod:`host_pch`).

Every command is stock nvcc's own, with its own flags; only the order changes, the module id's spelling (an
identifier both halves agree on) and, with ``--host-pch``, the final compile reading the prefix it shares
with every build of its flag set from a precompiled header instead of as text. Anything this module does not recognise — another nvcc
layout, relocatable device code, several source files, no ``-c`` — runs plain nvcc unchanged, as does any
failure of the dry run. On a compile error the failing half's messages are printed as nvcc would print
them (host first, as nvcc runs it first) and the exit status is that command's.

Usage (what :mod:`~multikernelbench.backends.extbuild.nvcc_driver`'s split step runs):
``python /path/to/nvcc_split.py /path/to/nvcc <nvcc arguments>`` (standard library only, so it is run as a
script: ``-m multikernelbench.backends.extbuild.nvcc_split`` works too but imports torch through the package).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

if __package__:
    from . import host_pch
else:  # run as a script (the build's nvcc): beside this file, without importing the package (and torch)
    import host_pch  # type: ignore[no-redef]

#: How long the final compile waits for the precompiled prefix the warmer is making right now (with it the
#: final compile is ~3 s on the dev host, without it ~12 s).
HOST_PCH_WAIT_S = 10.0

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

def _own_group() -> dict:
    """A process group of its own for a child: ``process_group=0`` (set in the child without a Python pre-exec
    hook, safe beside threads) exists from Python 3.11; on 3.10, pyproject's floor, ``os.setpgrp`` does it."""
    return {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}



def dry_run(nvcc: str, args: list[str], env: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(environment assignments, commands) that ``nvcc --dryrun`` prints, in order."""
    out = subprocess.run([nvcc, "--dryrun", *args], capture_output=True, text=True, timeout=120, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"nvcc --dryrun exited {out.returncode}: {out.stderr[-500:]}")
    assigns: list[str] = []
    cmds: list[str] = []
    for line in out.stderr.splitlines() + out.stdout.splitlines():
        if not line.startswith("#$ "):
            continue
        body = line[3:].rstrip()
        if _ENV_LINE.match(body):
            assigns.append(body)
        elif body:
            cmds.append(body)
    return assigns, cmds


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


_PER_BUILD_VALUE = ("-o", "-MF", "--output-file")


def module_identifier(source: str, args: list[str], ignore: tuple[str, ...] = ()) -> str:
    """The module id, spelled like nvcc's own, from the compile's flags (less what differs per build: output
    paths, the extension's name) and the source's file name: the same for every build of a flag set, so that
    cudafe++ writes the prelude's declarations identically and :mod:`host_pch` can precompile them. Unique
    per translation unit is all it must be (it names the TU's anonymous namespaces; the symbols it appears in
    are hidden), and an extension is one ``.cu``. ``ignore``: ``-I`` folders that differ per build too (the ops
    path's folder of extra operators, ops_path.py), which would otherwise change the prelude's text."""
    stem = re.sub(r"\W", "_", Path(source).name)
    flags, skip = [], False
    for a in host_pch.without_includes(args, ignore):
        if skip:
            skip = False
        elif a in _PER_BUILD_VALUE:
            skip = True
        elif a != source and not a.startswith("-DTORCH_EXTENSION_NAME="):
            flags.append(a)
    digest = hashlib.sha256("\0".join(flags).encode()).hexdigest()
    return f"_{digest[:16]}_{len(stem)}_{stem}_mkb"  # "_mkb": ours, not nvcc's (tests tell them apart by it)


def _ops_extra() -> tuple[str, ...]:
    """The ops path's per-build folder of extra operators (named by nvcc_light in ``host_pch.EXTRA_INCLUDE_ENV``,
    see ops_path.py): left out of the module id and the host prefix's key, like the other per-build paths."""
    extra = os.environ.get(host_pch.EXTRA_INCLUDE_ENV)
    return (extra,) if extra else ()


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


def run_split(p: Plan, source: str, args: list[str], host_pch_root: Path | None = None,
              report: Path | None = None) -> int:
    Path(p.module_id_file).write_text(module_identifier(source, args, _ops_extra()))
    env = environment(p.env_lines)
    t_start, cpu = time.time(), _children_cpu()
    # Each chain in a process group of its own (same session, so the harness's session-wide kill still
    # reaches it), so that a failed host half can stop the device half's compilers, not just its shell.
    # SIGTERM stops both chains too (nvcc_light stops a light attempt that a late analysis rules out).
    chains: list[subprocess.Popen] = []

    def stop(signum, _frame):
        for chain in chains:
            try:
                os.killpg(chain.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    host = subprocess.Popen(["bash", "-c", _script(p.host)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **_own_group())
    chains.append(host)
    device = subprocess.Popen(["bash", "-c", _script(p.device)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, **_own_group())
    chains.append(device)
    h_out, h_err = host.communicate()
    # Each chain's wall and CPU seconds (its reaped compilers' rusage), for the throughput benchmark's account
    # of where a build's time goes.
    row: dict = {"source": source, "host_wall_s": round(time.time() - t_start, 3),
                 "host_cpu_s": round(_children_cpu() - cpu, 3)}
    if host.returncode != 0:  # nvcc would have stopped here: the device half's messages would not exist
        try:
            os.killpg(device.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        device.communicate()
        _echo(h_out, h_err)
        return host.returncode
    cpu = _children_cpu()
    d_out, d_err = device.communicate()
    row.update(device_wall_s=round(time.time() - t_start, 3), device_cpu_s=round(_children_cpu() - cpu, 3))
    _echo(h_out, h_err)
    _echo(d_out, d_err)
    if device.returncode != 0:
        return device.returncode
    if host_pch_root is not None and len(p.final) == 1:
        try:
            # The ops path's per-build folder of extra operators is not part of the prefix's key (ops_path.py).
            row.update(host_pch.apply(host_pch_root, p.final[0], wait_s=HOST_PCH_WAIT_S, ignore=_ops_extra()))
        except Exception as exc:  # noqa: BLE001 - never fail a build over its header
            row["host_pch"] = f"error: {exc!r}"[:300]
    t0, cpu = time.perf_counter(), _children_cpu()
    final = subprocess.run(["bash", "-c", _script(p.final)], env=env)
    row.update(final_s=round(time.perf_counter() - t0, 3), final_cpu_s=round(_children_cpu() - cpu, 3),
               t_start=round(t_start, 3), t_end=round(time.time(), 3))
    if report is not None and "host_pch" in row:
        with open(report, "a") as fh:
            fh.write(json.dumps(row) + "\n")
    return final.returncode


def _children_cpu() -> float:
    """User + system seconds of every child process reaped so far (and of their reaped descendants)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def make_host_pch(nvcc: str, args: list[str], root: Path, tmp_root: str | None = None) -> dict:
    """Trusted warmer's side of :mod:`host_pch`: ``args`` compile a probe that holds only load_inline's prelude
    (with exactly a build's flags); its host chain runs here (nvcc's temporary files in a folder of their
    own, removed after) and its prelude part is precompiled under ``root``."""
    import tempfile

    sources = _sources(args)
    if len(sources) != 1:
        return {"state": "skipped", "why": "not one source"}
    with tempfile.TemporaryDirectory(prefix="mkb-host-pch-", dir=tmp_root) as tmp:
        env = {**os.environ, "TMPDIR": tmp}
        p = plan(*dry_run(nvcc, args, env))
        if p is None or len(p.final) != 1:
            return {"state": "skipped", "why": "nvcc's commands are not the split layout"}
        outs = _outputs(p.host[-1])
        if not outs:
            return {"state": "skipped", "why": "no cudafe++ output"}
        Path(p.module_id_file).write_text(module_identifier(sources[0], args))
        return host_pch.make(root, p.host, p.final[0], {**environment(p.env_lines), "TMPDIR": tmp}, outs[-1])


def _echo(out: bytes, err: bytes) -> None:
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    sys.stderr.buffer.write(err)
    sys.stderr.flush()


def _sources(args: list[str]) -> list[str]:
    return [a for a in args if a.endswith((".cu", ".cup")) and not a.startswith("-")]


def main(argv: list[str]) -> int:
    opts: dict[str, Path] = {}
    while len(argv) >= 2 and argv[0] in ("--host-pch", "--report"):
        opts[argv[0]] = Path(argv[1])
        argv = argv[2:]
    if len(argv) < 2:
        print(f"usage: python {__file__} [--host-pch DIR] [--report FILE] NVCC ARGS...", file=sys.stderr)
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
    return run_split(p, sources[0], args, opts.get("--host-pch"), opts.get("--report"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
