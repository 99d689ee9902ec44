"""Faster builds of torch C++/CUDA extensions, without changing what a candidate may write.

Stock ``load_inline`` of a trivial CUDA kernel took 49 s on the H200 host; nearly all of it is the compilers
reading torch's headers (``nvcc -c`` of a bare .cu takes under a second). This module installs, inside a
worker, wrappers around torch's extension loader that keep the candidate's source, flags and resulting
module exactly as stock, and change only how the build is carried out:

* **Build cache keyed by content.** The build directory is ``<cache>/<sha256 of every load_inline argument,
  torch/CUDA versions and target arch>``. The compile worker and the device worker (and any re-evaluation
  of the same code) share it, so the second load is an import. Concurrent builders of one key take a lock.
* **Precompiled header for the g++ part.** ``main.cpp`` (the pybind11 bindings that load_inline writes)
  starts with ``#include <torch/extension.h>``. When a ``.gch`` of that header exists for exactly the
  ``cflags``/``post_cflags`` in ``build.ninja`` it is force-included, so g++ skips ~400k lines of headers;
  GCC only uses a PCH whose flags match, otherwise it silently reads the text header (still correct). The
  ``.gch`` (~0.7 GB) is made by ``cuda_warm.warm_pch`` in a trusted process the parent starts before the
  compile pool (``cuda_warm.PchWarmer``); a worker never builds it (building it inside workers, under their
  256 MB file-size limit and a shared lock, is what made builds end one at a time on the H200). While the
  warmer is making it, main.cpp's compile waits for it, bounded (:data:`PCH_WAIT_S`, ``warm_wait``).
* **A light header for ``main.cpp``.** :mod:`multikernelbench.backends.extbuild.light_main`: ATen and torch's
  pybind11 glue instead of the whole C++ frontend, precompiled by the warmer, where the same checks as the
  ``.cu``'s light path find no way the meaning could differ; the full header when they do or the compile fails.
* **nvcc's host and device halves side by side.** :mod:`multikernelbench.backends.extbuild.nvcc_split` runs stock
  nvcc's own commands (from ``--dryrun``) with cudafe++ and cicc concurrently instead of one after the
  other; anything it does not recognise runs plain nvcc.
* **A light header path for the ``.cu``.** :mod:`multikernelbench.backends.extbuild.nvcc_light` compiles it with
  ``<torch/extension.h>`` read as ``<torch/types.h>`` (which load_inline puts first in every ``cuda.cu``
  anyway) unless :mod:`multikernelbench.backends.extbuild.light_headers` finds a way the meaning could differ, and
  with the stock header, in the same build, when that compile fails.
* **No nvcc dependency pass.** ``TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES=1`` (set through the
  backend's worker environment) drops nvcc's ``-MD`` pre-pass; dependency tracking is useless for a
  one-shot build in a fresh, content-keyed directory.
* **The device's real architecture.** ``TORCH_CUDA_ARCH_LIST`` is set to the device's compute capability
  (``9.0`` on the H200): SASS for sm_90, no PTX-only build and no extra targets.

* **A precompiled prefix for nvcc's final host compile.** :mod:`multikernelbench.backends.extbuild.host_pch`: the
  part of cudafe++'s output that load_inline's prelude produces is the same text for every build of a flag
  set (the split driver derives the module id from the flags); the warmer precompiles it once and each build
  whose output starts with exactly that text includes it (same object, ~3 s instead of ~12 s).

How they enter: the ``.cu`` speed-ups (split, light headers, host prefix) through ``PYTORCH_NVCC``, the variable torch
reads when it writes build.ninja (:mod:`multikernelbench.backends.extbuild.nvcc_driver`, one step each); the
``main.cpp`` precompiled header as the one build.ninja edit left (:class:`MainPchStep`), since torch's ``cxx``
also links. Each is a step with ``applies()`` and ``apply()``.

nvcc itself has no precompiled headers (cudafe++'s and cicc's EDG ones crash on use), so the .cu's own front-end
passes (cudafe++, cicc) still read the torch headers the candidate includes. A fork server that shared their
parse of the prelude was built and removed (no end-to-end gain on the H200, and a confused deputy: see
``benchmarks/throughput/README.md``). ``scripts/compile_time_bench.py`` measures stock vs this.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from multikernelbench.backends.extbuild import light_main, nvcc_driver, warm_wait
from multikernelbench.util.filelock import file_lock

RECIPE_VERSION = "mkb-cuda-build-5"  # 4: module id from the flags, precompiled host prefix; 5: PYTORCH_NVCC driver
_PCH_HEADER = "mkb_torch_extension_pch.h"
_PCH_GCH = _PCH_HEADER + ".gch"  # GCC uses the .gch beside the header it is asked to include
#: How long a build's main.cpp compile waits for a PCH the warmer is making right now. Making the PCH takes
#: longer than compiling main.cpp without it (dev host, alone: 26.9 s against 14.8 s; with it 5.8 s; the H200's
#: took 37.5 s beside a run's first builds), so only a PCH that is nearly done is worth waiting for. At 30 s the
#: first builds of a run waited for one that came at +42 s and main.cpp, not the .cu, decided when the first
#: result came (H200, 2026-12-03); at 10 s they compile without it and the .cu decides again.
PCH_WAIT_S = 10.0


def _ninja_vars(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_]+) = (.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def nvcc_command() -> list[str]:
    """The nvcc a build would run without this builder: torch's own choice (``CUDA_HOME/bin/nvcc``), or the
    command a user put in ``PYTORCH_NVCC`` before (a ``ccache nvcc``), which the driver then wraps."""
    import torch.utils.cpp_extension as ce

    own = os.environ.get("PYTORCH_NVCC", "")
    if own:
        return nvcc_driver.underlying(shlex.split(own))
    try:
        nvcc = ce._join_cuda_home("bin", "nvcc")
    except OSError:  # no CUDA_HOME found at torch's import (a CPU build of torch): nvcc from PATH
        nvcc = shutil.which("nvcc") or "nvcc"
    wrap = getattr(ce, "_wrap_compiler", None)  # torch >= 2.12 puts a ccache it finds in front, as here
    return list(wrap(nvcc)) if wrap else [nvcc]


def wants_pch(ninja_text: str) -> bool:
    """A build that compiles a ``main.cpp`` and does not include a precompiled header yet."""
    has_main = "main.o: compile" in ninja_text or re.search(r"build \S+\.o: compile \S+main\.cpp", ninja_text)
    return bool(has_main) and _PCH_HEADER not in ninja_text


class MainPchStep:
    """The precompiled ``torch/extension.h`` force-included into ``main.cpp``'s compile: the one speed-up that
    still edits build.ninja (its ``cflags``, and the light ``main.cpp`` driver in front of the ``compile`` rule:
    backends/extbuild/light_main.py), since g++ is torch's ``cxx`` for the link too. ``applies``: the
    build compiles a ``main.cpp`` and has no PCH yet; ``apply``: :meth:`FastExtensionBuilder._add_pch`."""

    name = "main_pch"

    def applies(self, builder: FastExtensionBuilder, build_dir: Path) -> bool:
        return builder.pch and wants_pch((build_dir / "build.ninja").read_text())

    def apply(self, builder: FastExtensionBuilder, build_dir: Path) -> None:
        try:
            builder._add_pch(build_dir)
        except Exception as exc:  # noqa: BLE001 - never fail a build because the PCH could not be made
            builder.log.append({"pch_error": repr(exc)[:500]})


def _drop_stale_baton(build_dir: Path) -> None:
    """Remove torch's build baton (``<build_dir>/lock``) left by a process killed mid-build. Called only under
    this builder's own lock for the folder (an ``flock``, which dies with its holder): every live builder of the
    folder goes through that lock, so a baton found while holding it has no owner. Left in place, it made the
    next load of that folder wait forever in torch's ``FileBaton.wait`` (a correct candidate became a timeout
    once a killed run had left it in a reused build root)."""
    (Path(build_dir) / "lock").unlink(missing_ok=True)


class FastExtensionBuilder:
    """Installs the wrappers (see module docstring). Call :meth:`install` once per worker process."""

    HEADER_REPORT = nvcc_driver.HEADER_REPORT
    HOST_PCH_REPORT = nvcc_driver.HOST_PCH_REPORT
    #: The steps that edit build.ninja (the nvcc ones enter through ``PYTORCH_NVCC``: :meth:`driver_options`).
    NINJA_STEPS = (MainPchStep(),)

    def __init__(self, cache_root: Path | str, *, pch: bool = True, cache: bool = True,
                 split_nvcc: bool = True, pch_root: Path | str | None = None, light_headers: bool = True,
                 light_shared: Path | str | None = None, host_pch: bool = True, light_ahead: bool = True,
                 light_ops: bool = True, light_main: bool = True) -> None:
        self.cache_root = Path(cache_root)
        #: Where precompiled headers live (keyed by compiler + flags, so one folder serves every run).
        self.pch_root = Path(pch_root) if pch_root else self.cache_root / "pch"
        self.pch = pch
        self.cache = cache
        self.split_nvcc = split_nvcc
        #: Compile each ``.cu`` with the light header path first (backends/extbuild/light_headers.py), stock on failure.
        self.light_headers = light_headers
        self.light_root = self.cache_root / "light"
        #: Start the light compile before its analysis is there (backends/extbuild/nvcc_light.py).
        self.light_ahead = light_ahead
        #: Light builds read only the operators' headers their .cu names (backends/extbuild/ops_headers.py).
        self.light_ops = light_ops
        #: main.cpp against the light header when the warmer made it (backends/extbuild/light_main.py).
        self.light_main = light_main
        #: Analyses made by the trusted warmer (:func:`warm_light`), read-only to builds.
        self.light_shared = Path(light_shared) if light_shared else None
        #: The warmer's precompiled host prefixes (backends/extbuild/host_pch.py) and its shared light-header shim,
        #: beside its analyses: only with a warmer (``light_shared``), which alone writes them.
        self.host_pch_root = self.light_shared.parent / "host" if self.light_shared and host_pch else None
        shared_shim = self.light_shared.parent / "include" if self.light_shared else None
        #: Only once the parent has written it (``CudaBackend.prepare_builds``): a build cannot write there.
        self.shim_root = shared_shim if shared_shim and (shared_shim / "torch" / "extension.h").exists() else None
        self.log: list[dict[str, Any]] = []  # what each load did (hit/miss, seconds, pch used)
        self._installed = False

    # ---- keys ---------------------------------------------------------------------------------------
    def _key(self, bound: dict[str, Any]) -> str:
        import torch

        material = {k: v for k, v in bound.items() if k not in ("verbose", "build_directory")}
        material["_env"] = {
            "torch": torch.__version__, "cuda": torch.version.cuda, "python": sys.version_info[:2],
            "arch": os.environ.get("TORCH_CUDA_ARCH_LIST", ""), "recipe": RECIPE_VERSION,
            "cxx": os.environ.get("CXX", ""), "light_headers": self.light_headers, "light_ops": self.light_ops,
            "light_main": self.light_main,
        }
        blob = json.dumps(material, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:24]

    # ---- load_inline wrapper ----------------------------------------------------------------------------
    def install(self) -> None:
        if self._installed:
            return
        import torch.utils.cpp_extension as ce

        orig_load_inline = ce.load_inline
        orig_ninja = ce._run_ninja_build
        sig = inspect.signature(orig_load_inline)
        builder = self

        def load_inline(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            params = dict(bound.arguments)
            if not builder.cache or params.get("build_directory"):
                folder = Path(params.get("build_directory") or ce._get_build_directory(params["name"], False))
                with file_lock(folder.with_name(folder.name + ".mkb-build.lock")):
                    _drop_stale_baton(folder)
                    return orig_load_inline(*args, **kwargs)
            key = builder._key(params)
            build_dir = builder.cache_root / key
            name = params["name"]
            done = build_dir / "mkb_done"
            t0 = time.perf_counter()
            with file_lock(builder.cache_root / f"{key}.lock"):
                if done.exists():
                    module = ce._import_module_from_library(name, str(build_dir), params["is_python_module"])
                    builder.log.append({"name": name, "key": key, "hit": True,
                                        "seconds": time.perf_counter() - t0})
                    return module
                build_dir.mkdir(parents=True, exist_ok=True)
                _drop_stale_baton(build_dir)
                params["build_directory"] = str(build_dir)
                module = orig_load_inline(**params)
                done.write_text(name)
            builder.log.append({"name": name, "key": key, "hit": False, "seconds": time.perf_counter() - t0,
                                "headers": builder.header_paths(build_dir)})
            return module

        def run_ninja_build(build_directory, verbose, error_prefix):
            for step in builder.NINJA_STEPS:
                if step.applies(builder, Path(build_directory)):
                    step.apply(builder, Path(build_directory))
            return orig_ninja(build_directory, verbose, error_prefix)

        load_inline.__wrapped__ = orig_load_inline  # type: ignore[attr-defined]
        ce.load_inline = load_inline
        ce._run_ninja_build = run_ninja_build
        opts = self.driver_options()
        if opts.enabled():
            # Read by torch when it writes build.ninja, in this process (a compile or device worker, or a
            # script's): every .cu compile of its builds runs the driver (nvcc_driver.py).
            os.environ["PYTORCH_NVCC"] = opts.env_value(nvcc_command())
        self._installed = True

    def driver_options(self) -> nvcc_driver.DriverOptions:
        """This builder's nvcc speed-ups as the driver's options (:mod:`.nvcc_driver`)."""
        return nvcc_driver.DriverOptions(
            split=self.split_nvcc, host_pch=self.host_pch_root, light=self.light_headers,
            shim=self.shim_root or self.light_root / "include", cache=self.light_root, shared=self.light_shared,
            ahead=self.light_ahead, ops=self.light_ops)

    @classmethod
    def header_paths(cls, build_dir: Path) -> list[dict[str, Any]]:
        """What the nvcc_light driver reported for each ``.cu`` of ``build_dir`` ("light" or "stock" and why)."""
        try:
            lines = (Path(build_dir) / cls.HEADER_REPORT).read_text().splitlines()
        except OSError:
            return []
        rows = []
        for line in lines:
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
        return rows

    # ---- precompiled header ---------------------------------------------------------------------------
    def _pch_paths(self, text: str) -> tuple[str, list[str], str, Path, Path]:
        v = _ninja_vars(text)
        cxx, cflags, post = v.get("cxx", "c++"), v.get("cflags", ""), v.get("post_cflags", "")
        flags = [f for f in shlex.split(cflags) + shlex.split(post) if not f.startswith("-DTORCH_EXTENSION_NAME=")]
        sig = hashlib.sha256(json.dumps([cxx, flags]).encode()).hexdigest()[:16]
        pch_dir = self.pch_root / sig
        return cxx, flags, sig, pch_dir / _PCH_HEADER, pch_dir / _PCH_GCH

    def _add_pch(self, build_dir: Path) -> None:
        """Force-include the precompiled torch/extension.h when one exists for exactly these flags; otherwise
        build with the text header. A build never makes the PCH: the .gch (~0.7 GB) is over a worker's
        file-size limit, and building it under a shared lock in every worker is what made builds finish one
        at a time (see :func:`~multikernelbench.backends.extbuild.cuda_warm.warm_pch`, run by the trusted parent
        instead). While the warmer is making it right now, the ``main.cpp`` compile waits for it (up to
        :data:`PCH_WAIT_S`, beside the ``.cu`` compile, which takes longer), then includes whichever is
        there: ``-include`` of the header finds the .gch beside it, or reads the text, the same code."""
        ninja = build_dir / "build.ninja"
        text = ninja.read_text()
        if not wants_pch(text):
            return
        _, _, sig, header, gch = self._pch_paths(text)
        marker = build_dir / "mkb_pch_used"
        # A folder built before keeps what it was built with: ninja reruns a command whose text changed, so a
        # PCH that appeared since the compile worker built it would rebuild main.o inside the device
        # worker's load (seen as load timeouts in a first demo run while the warmer finished).
        built_before = (build_dir / ".ninja_log").exists()
        if built_before:
            used = marker.read_text().split() if marker.exists() else None
            waiting = used is not None and "wait" in used[1:]
            light = used is not None and "light" in used[1:]
            if used is None or (not waiting and not light and not gch.exists()) or (light and not
                                                                                   light_main.ready(gch.parent)):
                self.log.append({"pch_missing" if not gch.exists() else "pch_not_used_by_earlier_build": sig})
                return
        else:
            # The light header needs no wait: its driver falls back to the full header's text if need be.
            light = self.light_main and header.exists() and light_main.ready(gch.parent)
            waiting = not gch.exists() and not light
            if waiting and not (header.exists() and warm_wait.marked(self.pch_root)):
                self.log.append({"pch_missing": sig})
                return
        new = re.sub(r"^cflags = ", f"cflags = -include {shlex.quote(str(header))} -Winvalid-pch ", text,
                     count=1, flags=re.M)
        if light:
            drive = shlex.join([sys.executable, str(Path(light_main.__file__)), str(gch.parent), str(header), "--"])
            new = re.sub(r"^(rule compile\n  command = )", lambda m: f"{m.group(1)}{drive} ", new, count=1,
                         flags=re.M)
        if waiting:
            wait = shlex.join([sys.executable, str(Path(warm_wait.__file__)), str(gch), str(self.pch_root),
                               str(PCH_WAIT_S)])
            new = re.sub(r"^(rule compile\n  command = )", lambda m: f"{m.group(1)}{wait} && ", new, count=1,
                         flags=re.M)
        ninja.write_text(new)
        marker.write_text(sig + (" wait" if waiting else "") + (" light" if light else ""))
        self.log.append({"pch_waited" if waiting else "pch_used": sig, **({"light_main": True} if light else {})})

    def _make_light_main(self, cxx: str, flags: list[str], set_dir: Path) -> dict[str, Any] | None:
        """Trusted side of backends/extbuild/light_main.py for one flag set (None when off); a failure is
        reported and leaves that set's builds on the full header."""
        if not self.light_main:
            return None
        try:
            return light_main.make(shlex.split(cxx), flags, set_dir, warm_wait.probe_dir_prefix(os.getpid()))
        except Exception as exc:  # noqa: BLE001 - a warmer that cannot make it reports it and goes on
            return {"state": "error", "error": repr(exc)[:500]}

    def build_pch_from(self, build_dir: Path, wait: bool = False) -> dict[str, Any]:
        """:meth:`build_pch_from_text` of ``build_dir``'s build.ninja."""
        return self.build_pch_from_text((build_dir / "build.ninja").read_text(), wait)

    def build_pch_from_text(self, ninja_text: str, wait: bool = False) -> dict[str, Any]:
        """Trusted side: make the PCH for the flags of a build.ninja (its text) unless it exists or another
        process is making it right now (a non-blocking lock: a second warmer does not queue behind the first). ``wait``:
        block until that other process is done instead, then use its .gch (or make it, if it failed); for a
        caller that wants the PCH before it starts, such as a test session."""
        import fcntl

        cxx, flags, sig, header, gch = self._pch_paths(ninja_text)
        if gch.exists() and (not self.light_main or light_main.ready(gch.parent)):
            return {"sig": sig, "state": "present"}
        lock_path = self.pch_root / f"{sig}.lock"
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        with open(lock_path, "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not wait:
                    return {"sig": sig, "state": "being built elsewhere"}
                fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                header.parent.mkdir(parents=True, exist_ok=True)
                if not header.exists():
                    header.write_text("#pragma once\n#include <torch/extension.h>\n")
                # The light main.cpp first: most builds use it, and the full one is their fallback's.
                lm = self._make_light_main(cxx, flags, gch.parent)
                if gch.exists():
                    return {"sig": sig, "state": "present", **({"light_main": lm} if lm else {})}
                t0 = time.perf_counter()
                tmp = gch.with_name(f"{gch.name}.{os.getpid()}.tmp")
                cmd = shlex.split(cxx) + ["-x", "c++-header", str(header), "-o", str(tmp)] + flags
                out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                if out.returncode != 0:
                    tmp.unlink(missing_ok=True)
                    return {"sig": sig, "state": "failed", "output": out.stdout.decode(errors="replace")[-2000:]}
                os.replace(tmp, gch)  # readers see a whole .gch or none
                return {"sig": sig, "state": "built", "seconds": time.perf_counter() - t0,
                        "bytes": gch.stat().st_size, **({"light_main": lm} if lm else {})}
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
