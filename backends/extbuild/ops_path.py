"""The ops path's files and analysis, for the nvcc_light driver and the trusted warmer (see :mod:`ops_headers`).

Per flag set (made once, by the warmer into its shared analysis folder, or by a build into its own cache):

* ``<key>.ops.json``: the :class:`~ops_headers.OpsIndex` (which per-operator headers declare which names;
  which operators every ops build needs because torch's own headers call them);
* ``ops-<key>/``: the *base* folder for ``-I``: the light ``torch/extension.h`` and an ``ATen/Functions.h``
  with only those operators. It is the same for every build of the flag set, so the warmer precompiles the
  host prefix of a probe compiled with it (``host_pch``), exactly as for the light shim.

Per build, the operators the ``.cu`` names beyond the base come through a folder of its own, placed first,
whose ``torch/extension.h`` includes ``<torch/types.h>`` and then those operators' headers: the candidate's
``#include <torch/extension.h>`` comes after load_inline's prelude, so the prelude's text (and the host prefix)
stays the base's. The split driver leaves that folder out of the module id and the host prefix's key
(named to it in ``host_pch.EXTRA_INCLUDE_ENV``): the
prefix is still compared byte for byte, and a ``-I`` folder that only the candidate's own include reaches
does not change what the precompiled part means.

Standard library only: it runs inside the nvcc driver, a plain script.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__:
    from . import light_headers, ops_headers, probe_store
else:  # run as a script (the build's nvcc)
    import light_headers  # type: ignore[no-redef]
    import ops_headers  # type: ignore[no-redef]
    import probe_store  # type: ignore[no-redef]

PROBE = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n#include <torch/extension.h>\n"
_EXT_FIRST = re.compile(r"\A(?:\s*#[^\n]*\n|\s*\n)*?\s*#\s*include\s*<torch/extension\.h>")


def key(light_key: str, functions_text: str) -> str:
    """Names one flag set's ops analysis: its light analysis's key, the ops version, the installed Functions.h."""
    return hashlib.sha256(json.dumps([light_key, ops_headers.OPS_VERSION,
                                      hashlib.sha256(functions_text.encode()).hexdigest()]).encode()).hexdigest()[:20]


def write_folder(folder: Path, functions_text: str, ops: set[str] | frozenset[str]) -> None:
    """A folder for ``-I``: the light ``torch/extension.h`` and an ``ATen/Functions.h`` with ``ops`` only."""
    for rel, text in (("torch/extension.h", light_headers.SHIM_TEXT),
                      ("ATen/Functions.h", ops_headers.shim_text(functions_text, ops))):
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)


def extra_text(ops: set[str]) -> str:
    """The per-build ``torch/extension.h``: the light one, then the extra operators' headers."""
    lines = "".join(f"#include <ATen/ops/{x}.h>\n" for x in sorted(ops))
    return f"// multikernelbench ops path: the light header and this .cu's operators\n#pragma once\n" \
           f"#include <torch/types.h>\n{lines}"


def extension_first(cu_source: str) -> bool:
    """The candidate's ``#include <torch/extension.h>`` comes before any code (after load_inline's prelude and
    other directives): operators its header adds are declared before every use."""
    return bool(_EXT_FIRST.match(light_headers.strip_comments_and_strings(cu_source)))


def _settle(cmd: list[str], flags: list[str], probe: Path, folder: Path, functions_text: str,
            index: ops_headers.OpsIndex, rounds: int = 8) -> None:
    """Compile the probe with the base operators until it compiles: torch's headers also call operators
    unqualified inside ``namespace at``, which the scan of qualified calls misses. Each failure's missing
    names add their operators to ``index.always``; a name no operator declares, or no progress, marks the
    index unusable (``index.broken``): builds then take the light path."""
    for _ in range(rounds):
        write_folder(folder, functions_text, ops_headers.KEEP | set(index.always))
        res = subprocess.run([*cmd, *flags, "-I", str(folder), "-c", str(probe), "-o", str(probe.with_suffix(".o"))],
                             capture_output=True, text=True, timeout=600)
        if res.returncode == 0:
            return
        names = ops_headers.missing_names(res.stdout + res.stderr)
        new = {x for n in names for x in index.where.get(n, ()) if x != "?"} - set(index.always)
        if not new:
            index.broken = f"the base headers do not compile: {(res.stderr or res.stdout).strip()[-300:]}"
            return
        index.always = sorted(set(index.always) | new)
    index.broken = f"the base headers still fail after {rounds} rounds"


def make(cmd: list[str], flags: list[str], shim: Path, folder: Path, light_key: str,
         functions_text: str) -> tuple[ops_headers.OpsIndex, Path]:
    """The index and base folder for these flags in ``folder`` (made there once, under a lock): the light
    probe preprocessed with every operator (the light ``shim``) and with the :data:`~ops_headers.KEEP` ones
    (two ``nvcc -E`` side by side), then the base settled by compiling the probe (~10-20 s of CPU in all)."""
    k = key(light_key, functions_text)
    base = folder / f"ops-{k}"

    def build() -> str:
        with tempfile.TemporaryDirectory(prefix="mkb-ops-") as tmp:
            probe, none = Path(tmp) / "probe.cu", Path(tmp) / "none"
            probe.write_text(PROBE)
            write_folder(none, functions_text, ops_headers.KEEP)
            with ThreadPoolExecutor(2) as pool:
                every_f = pool.submit(probe_store.preprocess, cmd, flags, probe, ["-I", str(shim)])
                none_f = pool.submit(probe_store.preprocess, cmd, flags, probe, ["-I", str(none)])
                every, none_pp = every_f.result(), none_f.result()
            index = ops_headers.analyse(none_pp, every, ops_headers.operators(functions_text))
            _settle(cmd, flags, probe, Path(tmp) / "base", functions_text, index)
            if not index.broken:
                staged = folder / f".ops-{k}.{os.getpid()}.tmp"
                shutil.rmtree(staged, ignore_errors=True)
                write_folder(staged, functions_text, ops_headers.KEEP | set(index.always))
                shutil.rmtree(base, ignore_errors=True)
                os.replace(staged, base)
        return index.to_json()

    index = ops_headers.OpsIndex.from_json(probe_store.made_once(folder / f"{k}.ops.json", build))
    return index, base


def find(cmd: list[str], flags: list[str], shim: Path, cache: Path, shared: tuple[Path, ...], light_key: str,
         functions_text: str) -> tuple[ops_headers.OpsIndex, Path] | None:
    """The warmer's index and base when a ``shared`` folder is given, else this build's own, made in ``cache``.

    With a warmer, a build never makes its own and never waits for it: the index is ~15-30 CPU-s, and ``cache``
    is the candidate's own folder, so every build of a run would pay it (on an H100 host the first builds of a
    cold machine waited for the warmer's instead, first result 36 s). None: not there (yet), the light path."""
    k = key(light_key, functions_text)
    if not shared:
        return make(cmd, flags, shim, cache, light_key, functions_text)
    for folder in shared:
        try:
            index = ops_headers.OpsIndex.from_json((folder / f"{k}.ops.json").read_text())
        except (OSError, ValueError, TypeError):
            continue
        if index.broken or (folder / f"ops-{k}" / "ATen" / "Functions.h").is_file():
            return index, folder / f"ops-{k}"
    return None
