"""nvcc front door for the light header path: ``<torch/extension.h>`` read as ``<torch/types.h>``, stock on failure.

    python nvcc_light.py --shim DIR --cache DIR [--shared DIR] --report FILE --nvcc-words N -- NVCC_COMMAND... ARGS...

(what :mod:`~multikernelbench.backends.extbuild.nvcc_driver`'s light step runs, the build's ``nvcc`` being that driver; ``NVCC_COMMAND`` is nvcc itself or the :mod:`nvcc_split` driver around it).

For one ``nvcc -c X.cu``:

1. The header difference for exactly these flags (macro tables and namespace-scope names, see
   :mod:`light_headers`) is read from ``--shared`` (made by the trusted PCH warmer for the common flag sets)
   or ``--cache``, or made there once (two ``nvcc -E -dD`` runs of a four-line probe, under a lock; ~5-8 s
   of CPU on the dev host).
2. If the ``.cu`` has none of the hazards :func:`light_headers.light_hazards` looks for, it is compiled with
   ``-I DIR`` appended (``DIR/torch/extension.h`` is :data:`light_headers.SHIM_TEXT`; ``-I`` directories are
   searched before torch's ``-isystem`` ones, and after any ``-I`` the candidate passed, as stock would).
   Before it, when the trusted warmer's ops analysis for these flags is there and the ``.cu`` allows it, the
   *ops path* (:mod:`ops_headers`, :mod:`ops_path`): the same compile reading only the per-operator headers
   the ``.cu`` names (~25-30 % less CPU); the light compile runs only if that one fails.
3. If that compile fails, or a hazard was found, or anything in 1-2 goes wrong, the unchanged command runs:
   the stock build, with stock's messages and exit status. The light attempt's messages are not shown.

When the analysis is not there yet (a run's first builds start before the warmer has made it: ~8 s of
waiting on each of their critical paths on the H200), the light compile starts at once, beside the wait, once
the source alone shows no hazard (pybind11, unqualified lookup); if the analysis then finds one, the light
compile is stopped (its process group; the split driver stops its chains on SIGTERM) and stock runs, as in
3. The light object is used only when the analysis, made before it is used, finds no hazard: the same rule
as when the analysis came first.

``--report`` receives one JSON line per compile: ``{"source", "path": "light"|"stock", "why", "light_s",
"stock_s", "speculative"}``. Anything this driver does not recognise (no ``-c``, not exactly one ``.cu``) runs unchanged.
Standard library only (run as a script, like nvcc_split.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__:
    from . import host_pch, light_headers, ops_headers, ops_path, probe_store, warm_wait
else:  # run as a script (the build's nvcc): beside this file, without importing the package (and torch)
    import host_pch  # type: ignore[no-redef]
    import light_headers  # type: ignore[no-redef]
    import ops_headers  # type: ignore[no-redef]
    import ops_path  # type: ignore[no-redef]
    import probe_store  # type: ignore[no-redef]
    import warm_wait  # type: ignore[no-redef]

#: How long a build waits for the warmer's analysis of its flags before making its own (the warmer's takes
#: ~10 s of nvcc -E per flag set; making one here costs the same, on this build's critical path).
SHARED_WAIT_S = 60.0

_DROP_WITH_VALUE = ("-o", "-MF", "--output-file")

def _own_group() -> dict:
    """A process group of its own for a child: ``process_group=0`` (set in the child without a Python pre-exec
    hook, safe beside threads) exists from Python 3.11; on 3.10, pyproject's floor, ``os.setpgrp`` does it."""
    return {"process_group": 0} if sys.version_info >= (3, 11) else {"preexec_fn": os.setpgrp}



def analysis_flags(args: list[str]) -> list[str]:
    """The compile's flags without ``-c``, its source, output and dependency-file options and the extension's
    name (which differs per build and does not change the headers)."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in _DROP_WITH_VALUE:
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.endswith((".cu", ".cup")) or a.startswith("-DTORCH_EXTENSION_NAME="):
            continue
        out.append(a)
    return out


def analysis_key(cmd: list[str], flags: list[str]) -> str:
    """Names one flag set's analysis: the compiler (its last word: nvcc, also under the split driver) and the
    flags (:func:`analysis_flags`)."""
    return hashlib.sha256(json.dumps([light_headers.ANALYSIS_VERSION, light_headers.SHIM_TEXT,
                                      os.path.basename(cmd[-1]), flags]).encode()).hexdigest()[:20]


def header_diff(cmd: list[str], flags: list[str], shim: Path, cache: Path,
                shared: tuple[Path, ...] = ()) -> light_headers.HeaderDiff:
    """The analysis for these flags: from a ``shared`` folder (made by the trusted warmer; read-only to a
    build) if there or being made there right now (waited for, up to :data:`SHARED_WAIT_S`), else from
    ``cache`` (made here once, under a lock, on first use)."""
    key = analysis_key(cmd, flags)
    for folder in shared:
        warm_wait.wait_for(folder / f"{key}.json", folder, SHARED_WAIT_S)  # returns at once unless it is coming
        try:
            return light_headers.HeaderDiff.from_json((folder / f"{key}.json").read_text())
        except (OSError, ValueError, TypeError):
            continue
    def make() -> str:
        with tempfile.TemporaryDirectory(prefix="mkb-light-") as tmp:
            probe = Path(tmp) / "probe.cu"
            probe.write_text("#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"
                             "#include <torch/extension.h>\n")
            # Side by side (each is one nvcc -E, one core): the first builds of a run wait for this.
            with ThreadPoolExecutor(2) as pool:
                full_f = pool.submit(probe_store.preprocess, cmd, flags, probe, [])
                light_f = pool.submit(probe_store.preprocess, cmd, flags, probe, ["-I", str(shim)])
                full, light = full_f.result(), light_f.result()
        return light_headers.diff(light, full).to_json()

    return light_headers.HeaderDiff.from_json(probe_store.made_once(cache / f"{key}.json", make))


def write_shim(shim: Path) -> None:
    probe_store.write_if_changed(shim / "torch" / "extension.h", light_headers.SHIM_TEXT)


def _report(path: Path | None, row: dict) -> None:
    if path is not None:
        with open(path, "a") as fh:
            fh.write(json.dumps(row) + "\n")


def analysis_ready(cmd: list[str], flags: list[str], cache: Path, shared: tuple[Path, ...] = ()) -> bool:
    """The analysis for these flags exists already (a build that finds it does not start its light compile
    before knowing the answer)."""
    key = analysis_key(cmd, flags)
    return any((folder / f"{key}.json").exists() for folder in (*shared, cache))


class _LightCompile:
    """The light compile, in a process group of its own so that :meth:`stop` reaches all its compilers (the
    split driver's chains, in groups of their own, are stopped by its SIGTERM handler). Its messages go to
    files, not pipes: nobody reads them while the analysis runs, and a full pipe would stall a compile that
    prints much."""

    def __init__(self, command: list[str], shim: Path, first: Path | None = None) -> None:
        """``-I shim`` appended; ``first``: a folder before it (the ops path's extra operators), named to the
        split driver by :data:`host_pch.EXTRA_INCLUDE_ENV`."""
        self.files = (tempfile.TemporaryFile(), tempfile.TemporaryFile())
        self.t0, self.seconds = time.perf_counter(), 0.0
        includes = ["-I", str(first)] if first else []
        env = {**os.environ, host_pch.EXTRA_INCLUDE_ENV: str(first)} if first else None
        self.proc = subprocess.Popen([*command, *includes, "-I", str(shim)], stdout=self.files[0],
                                     stderr=self.files[1], env=env, **_own_group())

    def finish(self) -> tuple[int, bytes, bytes]:
        """Wait for it: its exit status, stdout and stderr."""
        rc = self.proc.wait()
        self.seconds = time.perf_counter() - self.t0
        texts = []
        for fh in self.files:
            fh.seek(0)
            texts.append(fh.read())
            fh.close()
        return rc, texts[0], texts[1]

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.finish()


def _first_error(out: bytes, err: bytes) -> str:
    """The first line of a failed compile's messages that says "error" (else their end), for the report."""
    text = err.decode(errors="replace") + out.decode(errors="replace")
    return next((ln for ln in text.splitlines() if "error" in ln), text.strip()[-200:]).strip()[:300]


def _ops_compile(command: list[str], code: str, args: list[str], cmd: list[str], flags: list[str], a,
                 row: dict) -> tuple[int, bytes, bytes] | None:
    """The ops compile (:mod:`ops_headers`, :mod:`ops_path`) when the ``.cu`` allows it: its exit status and
    messages, or None (why in ``row["ops_why"]``)."""
    try:
        header = ops_headers.functions_header(ops_headers.include_dirs(args))
        if header is None:
            row["ops_why"] = ["no ATen/Functions.h on the include path"]
            return None
        text = header.read_text()
        found = ops_path.find(cmd, flags, a.shim, a.cache, tuple(a.shared), analysis_key(cmd, flags), text)
        if found is None:
            row["ops_why"] = ["the warmer has no ops analysis for these flags (yet)"]
            return None
        index, base = found
        ops, why = ops_headers.plan(code, index)
        extra = ops - ops_headers.KEEP - set(index.always)
        if extra and not ops_path.extension_first(code):
            why.append("names operators beyond the base before any #include <torch/extension.h>")
    except Exception as exc:  # noqa: BLE001 - any surprise means the light path
        why = [f"ops analysis failed: {exc!r}"[:300]]
    row["ops_why"] = why
    if why:
        return None
    with tempfile.TemporaryDirectory(prefix="mkb-ops-") as tmp:
        first = None
        if extra:
            first = Path(tmp)
            (first / "torch").mkdir()
            (first / "torch" / "extension.h").write_text(ops_path.extra_text(extra))
        compile_ = _LightCompile(command, base, first)
        result = compile_.finish()
    row["ops_extra"], row["ops_s"] = sorted(extra), round(compile_.seconds, 3)
    return result


def _try_ops(command: list[str], code: str, args: list[str], cmd: list[str], flags: list[str], a,
             row: dict) -> bool:
    """True when the ops compile built (its messages printed, the row reported); False to go on with the
    light compile."""
    result = _ops_compile(command, code, args, cmd, flags, a, row)
    if result is None:
        return False
    rc, out, err = result
    if rc != 0:
        row["ops_why"] = [f"ops compile failed: {_first_error(out, err)}"]
        return False
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    row["path"] = "ops"
    _report(a.report, row)
    return True


def main(argv: list[str]) -> int:
    import argparse

    if "--" not in argv:
        print(f"usage: python {__file__} --shim DIR --cache DIR [--report FILE] -- NVCC ARGS...", file=sys.stderr)
        return 2
    cut = argv.index("--")
    ap = argparse.ArgumentParser(prog="nvcc_light.py")
    ap.add_argument("--shim", type=Path, required=True)
    ap.add_argument("--cache", type=Path, required=True, help="where this build may write its analysis")
    ap.add_argument("--shared", type=Path, action="append", default=[],
                    help="read-only folders with analyses made by the trusted warmer (looked at first)")
    ap.add_argument("--report", type=Path, default=None)
    ap.add_argument("--no-ahead", action="store_true",
                    help="wait for the analysis before the light compile starts (an A/B switch)")
    ap.add_argument("--no-ops", action="store_true",
                    help="no ops path: every operator's header, as the light path reads them (an A/B switch)")
    ap.add_argument("--nvcc-words", type=int, default=1,
                    help="how many leading words of the command are the compiler (3 for nvcc_split: python, script, nvcc)")
    a = ap.parse_args(argv[:cut])
    command = argv[cut + 1:]
    cmd, args = command[:a.nvcc_words], command[a.nvcc_words:]
    stock = lambda: subprocess.run(command).returncode  # noqa: E731 - the unchanged build
    sources = [x for x in args if x.endswith((".cu", ".cup")) and not x.startswith("-")]
    if "-c" not in args or len(sources) != 1:
        return stock()
    row: dict = {"source": sources[0], "path": "stock", "why": []}
    t0 = time.perf_counter()
    light: _LightCompile | None = None
    try:
        write_shim(a.shim)
        code = Path(sources[0]).read_text(errors="replace")
        row["why"] = light_headers.light_hazards(code, light_headers.HeaderDiff())  # what the source alone says
        if not row["why"]:
            flags = analysis_flags(args)
            if not a.no_ahead and not analysis_ready(cmd, flags, a.cache, tuple(a.shared)):
                light = _LightCompile(command, a.shim)  # beside the analysis: see the module docstring
                row["speculative"] = True
            d = header_diff(cmd, flags, a.shim, a.cache, tuple(a.shared))
            row["why"] = light_headers.light_hazards(code, d)
    except Exception as exc:  # noqa: BLE001 - any surprise means the stock build, never a failed one
        row["why"] = [f"analysis failed: {exc!r}"[:300]]
    row["analysis_s"] = round(time.perf_counter() - t0, 3)
    if row["why"] and light is not None:
        light.stop()  # ruled out after all: its compilers stop, the stock build starts
    elif not row["why"]:
        if light is None and not a.no_ops:  # no light compile running already: the ops path first
            done = _try_ops(command, code, args, cmd, analysis_flags(args), a, row)
            if done:
                return 0
        light = light or _LightCompile(command, a.shim)
        rc, out, err = light.finish()
        row["light_s"] = round(light.seconds, 3)
        if rc == 0:
            sys.stdout.buffer.write(out)
            sys.stderr.buffer.write(err)
            row["path"] = "light"
            _report(a.report, row)
            return 0
        row["why"] = [f"light compile failed: {_first_error(out, err)}"]
    t0 = time.perf_counter()
    rc = stock()
    row["stock_s"] = round(time.perf_counter() - t0, 3)
    row["rc"] = rc
    _report(a.report, row)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
