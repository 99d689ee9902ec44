"""A precompiled header for nvcc's last step: the host compiler's pass over cudafe++'s output.

nvcc ends every ``-c`` with ``gcc -c -x c++ X.cudafe1.cpp``: cudafe++'s host-side rewrite of the whole
translation unit, ~13 MB for a ``.cu`` that starts with load_inline's ``#include <torch/types.h>``. That
compile was ~12 s of a ~33 s light build on the dev host (``benchmarks/compile_time_cuda``), and all of it is
the same for every candidate compiled with the same flags: cudafe++ writes the declarations of the headers
load_inline puts first (``torch/types.h``, ``cuda.h``, ``cuda_runtime.h``) before anything of the candidate,
and they come out byte for byte the same once the *module id* (which names the anonymous namespaces) is the
same — :mod:`nvcc_split` derives it from the flags, not from the build.

So, per flag set:

* **The trusted warmer** (:func:`make`, from ``cuda_warm``) runs nvcc's host chain on a probe ``cuda.cu``
  that holds only load_inline's prelude, keeps its ``cudafe1.cpp`` up to the first line of the probe's own
  code (the *prefix*: everything the prelude produced), writes it as ``prefix.h`` and compiles that with the
  exact flags of nvcc's final command, ``-x c++-header``, into ``prefix.h.gch``.
* **A build** (:func:`apply`, from ``nvcc_split`` before the final command) compares its own ``cudafe1.cpp``
  with the prefix, byte for byte; only if it starts with exactly that text is the text replaced by
  ``#include "<root>/prefix.h"``. GCC then loads the ``.gch`` (or, if it finds it unusable, reads
  ``prefix.h``: the same text). Anything else — another flag set, no warmer, a prefix that differs in one
  byte — leaves the file as it was.

The object is the stock one: the compiler sees the same tokens in the same order, and the file keeps its name
(``_GLOBAL__sub_I_<file>``); ``tests/test_host_pch.py`` checks the two objects are byte-identical for a shipped
solution. A build only reads the root (the warmer's, read-only to builds), as with the other shared headers.

Standard library only: it runs inside the nvcc driver, a plain script.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import time
from pathlib import Path

if __package__:
    from . import warm_wait
else:  # imported by a driver run as a script: beside this file, without the package (and torch)
    import warm_wait  # type: ignore[no-redef]

VERSION = "mkb-host-pch-1"
PRELUDE = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"  # what load_inline writes
HEADER = "prefix.h"
GCH = HEADER + ".gch"
#: Names the ops path's per-build ``-I`` folder (nvcc_light.py sets it for its compile): left out of the key
#: and of the split driver's module id, like the other per-build paths.
EXTRA_INCLUDE_ENV = "MKB_OPS_EXTRA_INCLUDE"
_MARK = re.compile(r'^# \d+ "(.*)"')


def final_parts(final_cmd: str) -> tuple[list[str], str, str] | None:
    """(the command's words without its input and ``-o OUT``, input, output) of nvcc's last command, or None
    when it is not one ``-c -x c++`` compile of a ``.cudafe1.cpp``."""
    try:
        words = shlex.split(final_cmd)
    except ValueError:
        return None
    inputs = [i for i, w in enumerate(words) if w.endswith(".cudafe1.cpp")]
    if len(inputs) != 1 or "-c" not in words or "-o" not in words or words.count("-o") != 1:
        return None
    o = words.index("-o")
    if o + 1 >= len(words) or "-x" not in words or words[words.index("-x") + 1] != "c++":
        return None
    src, out = words[inputs[0]], words[o + 1]
    rest = [w for i, w in enumerate(words) if i not in (inputs[0], o, o + 1)]
    return rest, src, out


def key(final_cmd: str, ignore: tuple[str, ...] = ()) -> str | None:
    """Names one flag set's header: the final command's words, less its input and output and the ``-I``
    folders of ``ignore`` (the ops path's per-build folder, which only the candidate's own include reaches:
    ops_path.py)."""
    parts = final_parts(final_cmd)
    if parts is None:
        return None
    return hashlib.sha256(json.dumps([VERSION, without_includes(parts[0], ignore)]).encode()).hexdigest()[:20]


def without_includes(words: list[str], ignore: tuple[str, ...]) -> list[str]:
    """``words`` less ``-I DIR`` / ``-IDIR`` for each DIR of ``ignore`` (also the split driver's module id)."""
    out: list[str] = []
    skip = False
    for i, w in enumerate(words):
        if skip:
            skip = False
        elif w == "-I" and words[i + 1:i + 2] and words[i + 1] in ignore:
            skip = True
        elif not (w.startswith("-I") and w[2:] in ignore):
            out.append(w)
    return out


def _split(text: str) -> tuple[str, str, str] | None:
    """(first line, main file name, the rest) of a cudafe1.cpp, whose first line names the main file."""
    nl = text.find("\n")
    m = _MARK.match(text[:nl]) if nl > 0 else None
    return (text[:nl + 1], m.group(1), text[nl + 1:]) if m else None


def prefix_of(probe_text: str) -> str | None:
    """The part of a probe's cudafe1.cpp that load_inline's prelude produced: after the first line (which names
    the main file) up to the first line marker back in the main file. None if the main file's name appears
    inside it (then it would not be the same text for another build)."""
    parts = _split(probe_text)
    if parts is None:
        return None
    _, main, rest = parts
    pos = 0
    while True:
        nl = rest.find("\n", pos)
        if nl < 0:
            return None
        m = _MARK.match(rest[pos:nl])
        if m and m.group(1) == main:
            prefix = rest[:pos]
            return prefix if f'"{main}"' not in prefix and prefix else None
        pos = nl + 1


def apply(root: Path, final_cmd: str, wait_s: float = 0.0, ignore: tuple[str, ...] = ()) -> dict:
    """Rewrite the final command's cudafe1.cpp to include the shared prefix header, when it starts with exactly
    that prefix. Returns a report row (``host_pch``: "used" or why not). ``wait_s``: how long to wait for a
    header the warmer is making right now."""
    parts = final_parts(final_cmd)
    if parts is None:
        return {"host_pch": "not a cudafe1.cpp compile"}
    folder = root / key(final_cmd, ignore)  # type: ignore[operator]
    if wait_s > 0:
        warm_wait.wait_for(folder / GCH, root, wait_s)
    if not (folder / GCH).exists():
        return {"host_pch": "no header for these flags"}
    try:
        prefix = (folder / HEADER).read_text()
        src = Path(parts[1])
        text = src.read_text()
    except OSError as exc:
        return {"host_pch": f"unreadable: {exc!r}"[:200]}
    split = _split(text)
    if split is None or not split[2].startswith(prefix):
        return {"host_pch": "prefix differs"}
    first, _, rest = split
    tmp = src.with_name(src.name + ".mkb.tmp")
    tmp.write_text(first + f'#include "{folder / HEADER}"\n' + rest[len(prefix):])
    os.replace(tmp, src)
    return {"host_pch": "used"}


def make(root: Path, host_cmds: list[str], final_cmd: str, env: dict[str, str], cudafe_out: str) -> dict:
    """Trusted side: run the probe's host chain (``host_cmds``, which write ``cudafe_out``), cut its prefix and
    compile it with the final command's flags. Written under a temporary name and renamed: a build sees the
    ``.gch`` only when it is whole."""
    t0 = time.perf_counter()
    k, parts = key(final_cmd), final_parts(final_cmd)
    if k is None or parts is None:
        return {"state": "skipped", "why": "not a cudafe1.cpp compile"}
    folder = root / k
    if (folder / GCH).exists():
        return {"state": "present", "key": k}
    folder.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(["bash", "-c", "set -e\n" + "\n".join(host_cmds)], env=env, capture_output=True,
                         timeout=900)
    if res.returncode != 0:
        return {"state": "failed", "key": k, "error": res.stderr.decode(errors="replace")[-500:]}
    prefix = prefix_of(Path(cudafe_out).read_text())
    if prefix is None:
        return {"state": "failed", "key": k, "error": "no prelude prefix in the probe's cudafe1.cpp"}
    pid = os.getpid()
    header_tmp = folder / f"{HEADER}.{pid}.tmp"
    header_tmp.write_text(prefix)
    os.replace(header_tmp, folder / HEADER)  # same text whoever writes it; the .gch below is what builds wait on
    words, gch_tmp = parts[0], folder / f"{GCH}.{pid}.tmp"
    words = [("c++-header" if i > 0 and words[i - 1] == "-x" else w) for i, w in enumerate(words) if w != "-c"]
    res = subprocess.run([*words, str(folder / HEADER), "-o", str(gch_tmp)], env=env, capture_output=True,
                         timeout=900)
    if res.returncode != 0:
        gch_tmp.unlink(missing_ok=True)
        return {"state": "failed", "key": k, "error": res.stderr.decode(errors="replace")[-500:]}
    os.replace(gch_tmp, folder / GCH)
    return {"state": "made", "key": k, "seconds": round(time.perf_counter() - t0, 1),
            "prefix_bytes": len(prefix.encode())}
