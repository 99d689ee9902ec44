"""``main.cpp`` compiled against a light ``<torch/extension.h>``: ATen and the Python bindings, not the C++ frontend.

Why: ``load_inline`` puts the candidate's ``cpp_sources`` and the pybind11 module into ``main.cpp``, which starts
with ``#include <torch/extension.h>``. Precompiled, that header still costs ~8 CPU-s per build (dev host, an
empty ``main.cpp``: 9.0 s), because GCC instantiates the templates the headers' inline code asks for at the end
of *every* translation unit ("phase lang. deferred": 75 % of it), and ``torch/all.h`` (nn, optim, data, jit,
serialize, ...) asks for many. Read as ``<torch/types.h>`` plus torch's pybind11 glue (:data:`LIGHT_TEXT`), the
same ``main.cpp`` takes 4.7 s with its own precompiled header (a CUDA build's ``main.cpp`` is a third of its
non-nvcc CPU; a C++ candidate's whole source is in ``main.cpp``).

Same meaning, or the full header: the light set is a subset of the full one, so what can change is what
:mod:`~multikernelbench.backends.extbuild.light_headers` checks for a ``.cu`` (macros, names only the full set
declares in ``torch``/``at``/``c10`` or globally, unqualified lookup into them), compared here with the
``main.cpp`` compiler's own preprocessor; a source with any such hazard compiles with the full header, and a
light compile that fails compiles again with it (the driver below, in ninja's ``compile`` rule). The residual
risks are that module's (an overload or specialisation the full set adds for a name both declare, ADL).

Trust: the light header, its ``.gch`` and the analysis are made by the trusted warmer beside the full PCH
(:func:`make`), read-only to builds; a build that finds them incomplete uses the full header as before.

Standard library only: the driver runs as a plain script in ninja's command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script by ninja: the sibling modules by path
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import light_headers as lh
    import probe_store
else:
    from multikernelbench.backends.extbuild import light_headers as lh
    from multikernelbench.backends.extbuild import probe_store

#: What main.cpp's ``<torch/extension.h>`` becomes: the tensor API ``cuda.cu`` already gets (torch/types.h),
#: pybind11 with torch's type casters, and ``torch::wrap_pybind_function`` (which load_inline's bindings call).
LIGHT_TEXT = ("// multikernelbench light main.cpp: <torch/extension.h> read as ATen and torch's pybind11 glue.\n"
              "// See backends/extbuild/light_main.py.\n#pragma once\n#include <torch/types.h>\n"
              "#include <torch/csrc/utils/pybind.h>\n#include <torch/csrc/Exceptions.h>\n")
FOLDER = "light_main"  # inside a PCH set's folder (<pch_root>/<flags signature>/)
HEADER = "mkb_torch_light_main.h"
ANALYSIS = "analysis.json"
REPORT = "mkb_main_light.jsonl"  # one line per main.cpp compile, in the build folder (benchmarks read it)


def paths(set_dir: Path) -> tuple[Path, Path, Path, Path]:
    """(shim include folder, header, its .gch, analysis) of one PCH set's light main."""
    root = Path(set_dir) / FOLDER
    return root / "include", root / HEADER, root / (HEADER + ".gch"), root / ANALYSIS


def ready(set_dir: Path) -> bool:
    """The warmer made all of it (the analysis is written last)."""
    shim, header, gch, analysis = paths(set_dir)
    return (shim / "torch" / "extension.h").is_file() and header.is_file() and gch.is_file() and analysis.is_file()


def make(cxx: list[str], flags: list[str], set_dir: Path, tmp_prefix: str = "mkb-light-main-") -> dict:
    """Trusted side: the light header, its precompiled ``.gch`` and the analysis for one flag set (the flags
    main.cpp's compile uses, without the output and source). Called under the full PCH's lock by the warmer;
    ``tmp_prefix`` names its probe folder (the warmer's, so that stopping the warmer removes it)."""
    shim, header, gch, analysis = paths(set_dir)
    if ready(set_dir):
        return {"state": "present"}
    t0 = time.perf_counter()
    probe_store.write_if_changed(shim / "torch" / "extension.h", LIGHT_TEXT)
    probe_store.write_if_changed(header, LIGHT_TEXT)
    tmp = gch.with_name(f"{gch.name}.{os.getpid()}.tmp")
    out = subprocess.run([*cxx, "-x", "c++-header", str(header), "-o", str(tmp), *flags],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if out.returncode != 0:
        tmp.unlink(missing_ok=True)
        return {"state": "failed", "output": out.stdout.decode(errors="replace")[-1500:]}
    os.replace(tmp, gch)
    with tempfile.TemporaryDirectory(prefix=tmp_prefix) as d:
        probe = Path(d) / "probe.cpp"
        probe.write_text("#include <torch/extension.h>\n")
        light_pp = probe_store.preprocess(cxx, flags, probe, ["-I", str(shim)], keep_macros=("-dD",))
        full_pp = probe_store.preprocess(cxx, flags, probe, [], keep_macros=("-dD",))
    diff = lh.diff(light_pp, full_pp)
    probe_store.write_if_changed(analysis, diff.to_json())
    return {"state": "made", "seconds": round(time.perf_counter() - t0, 1), "bytes": gch.stat().st_size,
            "macros": len(diff.macros), "files": diff.full_only_files}


def hazards(source: str, set_dir: Path) -> list[str]:
    """Why this main.cpp must use the full header ([] = light may be tried); unreadable analysis: a reason."""
    try:
        diff = lh.HeaderDiff.from_json(paths(set_dir)[3].read_text())
    except (OSError, ValueError, TypeError) as exc:
        return [f"no light main analysis ({type(exc).__name__})"]
    return lh.light_hazards(source, diff, python_ok=True)


def light_command(full: list[str], full_header: str, set_dir: Path) -> list[str]:
    """The compile command with the light header in place of the full one: ``-include <full PCH header>``
    swapped for the light one, and the shim's ``torch/extension.h`` first on the include path (``-I`` is searched
    before torch's ``-isystem`` folders), so main.cpp's own include of it finds the light text."""
    shim, header, _, _ = paths(set_dir)
    out: list[str] = []
    i = 0
    while i < len(full):
        if full[i] == "-include" and i + 1 < len(full) and full[i + 1] == full_header:
            out += ["-include", str(header), "-I", str(shim)]
            i += 2
            continue
        out.append(full[i])
        i += 1
    return out


def _source_of(cmd: list[str]) -> Path | None:
    for i, a in enumerate(cmd[:-1]):
        if a == "-c":
            return Path(cmd[i + 1])
    return None


def main(argv: list[str]) -> int:
    """``light_main.py SET_DIR FULL_HEADER -- <the compile command with -include FULL_HEADER>``: compile light
    when the source has no hazard, else (or when that fails) the command as given. Reports one JSON line."""
    set_dir, full_header, sep, *cmd = argv
    if sep != "--" or not cmd:
        print("usage: light_main.py SET_DIR FULL_HEADER -- COMMAND...", file=sys.stderr)
        return 2
    src = _source_of(cmd)
    why = hazards(src.read_text(errors="replace"), Path(set_dir)) if src else ["no -c source"]
    row: dict = {"source": str(src), "why": why[:3]}
    t0 = time.perf_counter()
    if not why:
        light = subprocess.run(light_command(cmd, full_header, Path(set_dir)), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
        if light.returncode == 0:
            sys.stdout.buffer.write(light.stdout)
            _report({**row, "path": "light", "seconds": round(time.perf_counter() - t0, 2)})
            return 0
        first = next((ln for ln in light.stdout.decode(errors="replace").splitlines() if "error" in ln), "")
        row["why"] = [f"light compile failed: {first[:200]}"]
    rc = subprocess.run(cmd).returncode
    _report({**row, "path": "full", "seconds": round(time.perf_counter() - t0, 2)})
    return rc


def _report(row: dict) -> None:
    try:
        with open(REPORT, "a") as fh:
            fh.write(json.dumps(row) + "\n")
    except OSError:
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
