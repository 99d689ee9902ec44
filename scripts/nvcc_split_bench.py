"""Stock ``nvcc -c`` vs ``backends/extbuild/nvcc_split.py`` on the same torch-extension ``.cu`` files, side by side.

    python scripts/nvcc_split_bench.py --rounds 2 [--solutions solutions/cuda/*.py] [--out FILE.json]

Needs nvcc and torch's headers, no GPU: the ``.cu`` is compiled to an object file exactly as
``load_inline`` would compile ``cuda.cu`` (torch 2.x flags for an extension, the candidate's
``extra_cuda_cflags``, ``-gencode`` for ``--arch``). Each round compiles every file once with stock nvcc
and once split, alternating which goes first, one compile at a time; the objects are compared by their
defined symbols (the anonymous-namespace id is expected to differ, nothing else). Prints per-file medians
and the ratio. CPU builds of torch lack ``c10/cuda/impl/cuda_cmake_macros.h``; an empty stand-in is
written to a temporary include folder when it is missing (it only holds build-configuration macros).
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

TRIVIAL = r"""
#include <torch/extension.h>
__global__ void add_kernel(const float* a, const float* b, float* c, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
torch::Tensor add(torch::Tensor a, torch::Tensor b) {
  auto c = torch::empty_like(a);
  long n = a.numel();
  add_kernel<<<(n + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n);
  return c;
}
"""
PRELUDE = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"  # what load_inline prepends


def cuda_source_of(path: Path) -> tuple[str, list[str]]:
    """The ``cuda_sources`` and ``extra_cuda_cflags`` of a solution's load_inline call, without running it."""
    tree = ast.parse(path.read_text())
    consts = {t.id: n.value.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
              and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str) for t in n.targets
              if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "load_inline":
            kw = {k.arg: k.value for k in node.keywords}
            src = kw.get("cuda_sources")
            text = src.value if isinstance(src, ast.Constant) else consts.get(getattr(src, "id", ""), "")
            flags = []
            if isinstance(kw.get("extra_cuda_cflags"), ast.List):
                flags = [e.value for e in kw["extra_cuda_cflags"].elts if isinstance(e, ast.Constant)]
            return text, flags
    raise ValueError(f"{path}: no load_inline(cuda_sources=...) found")


def base_flags(arch: str, stub_dir: Path) -> list[str]:
    import torch.utils.cpp_extension as ce

    inc = ce.include_paths()
    py_inc = sysconfig.get_paths()["include"]
    cc = arch.replace(".", "")
    flags = ["-DTORCH_EXTENSION_NAME=bench_ext", "-DTORCH_API_INCLUDE_EXTENSION_H", f"-I{stub_dir}"]
    for d in inc + [py_inc]:
        flags += ["-isystem", d]
    flags += list(ce.COMMON_NVCC_FLAGS) + [f"-gencode=arch=compute_{cc},code=sm_{cc}", "--compiler-options",
                                           "-fPIC", cxx_standard()]
    return flags


def cxx_standard() -> str:
    """The -std= this torch's load_inline passes to nvcc (c++17 up to torch 2.11 or so, c++20 later)."""
    import inspect

    import torch.utils.cpp_extension as ce

    return "-std=c++20" if "-std=c++20" in inspect.getsource(ce._write_ninja_file_to_build_library) else "-std=c++17"


def ensure_stub(stub_dir: Path) -> None:
    import torch.utils.cpp_extension as ce

    if any(Path(d, "c10/cuda/impl/cuda_cmake_macros.h").exists() for d in ce.include_paths()):
        return
    p = stub_dir / "c10/cuda/impl/cuda_cmake_macros.h"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("#pragma once\n")


def compile_once(mode: str, nvcc: str, cu: Path, flags: list[str], obj: Path) -> tuple[float, int, str]:
    from multikernelbench.backends.extbuild import nvcc_split

    cmd = [nvcc] if mode == "stock" else [sys.executable, nvcc_split.__file__, nvcc]  # as the builder runs it
    t0 = time.perf_counter()
    res = subprocess.run(cmd + flags + ["-c", str(cu), "-o", str(obj)], capture_output=True, text=True)
    return time.perf_counter() - t0, res.returncode, (res.stdout + res.stderr)[-2000:]


def symbols(obj: Path) -> tuple[frozenset, int]:
    """Defined symbols, with those that carry the anonymous-namespace id (which differs by design) only
    counted."""
    out = subprocess.run(["nm", "--defined-only", str(obj)], capture_output=True, text=True).stdout
    # nvcc names the static initialiser after its temporary file (tmpxft_<pid>_...): differs run to run.
    names = {re.sub(r"tmpxft_[0-9a-f]+_[0-9a-f]+", "tmpxft", line.split()[-1]) for line in out.splitlines()
             if line.strip()}
    return frozenset(n for n in names if "_GLOBAL__N_" not in n), sum("_GLOBAL__N_" in n for n in names)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--arch", default="9.0")
    ap.add_argument("--solutions", nargs="*", default=[])
    ap.add_argument("--out")
    args = ap.parse_args()
    from multikernelbench.backends.cuda import nvcc_path

    nvcc = nvcc_path()
    if not nvcc:
        sys.exit("nvcc not found")
    work = Path(tempfile.mkdtemp(prefix="mkb_nvsplit_"))
    ensure_stub(work / "stub")
    files = {"trivial_add": (TRIVIAL, ["-O3"])}
    for s in args.solutions:
        files[Path(s).stem] = cuda_source_of(Path(s))
    rows = []
    for name, (src, extra) in files.items():
        cu = work / f"{name}.cu"
        cu.write_text(PRELUDE + src)
        flags = base_flags(args.arch, work / "stub") + extra
        for r in range(args.rounds):
            order = ("stock", "split") if r % 2 == 0 else ("split", "stock")
            for mode in order:
                obj = work / f"{name}.{mode}.o"
                secs, rc, log = compile_once(mode, nvcc, cu, flags, obj)
                rows.append({"file": name, "mode": mode, "round": r, "seconds": secs, "rc": rc,
                             "log": log if rc else ""})
                print(f"{name:36s} {mode:5s} round {r}: {secs:6.1f} s rc={rc}", flush=True)
        same = symbols(work / f"{name}.stock.o") == symbols(work / f"{name}.split.o")
        rows.append({"file": name, "same_symbols": same})
    print("\nfile                                  stock p50   split p50   split/stock  same symbols")
    summary = {}
    for name in files:
        med = {m: statistics.median([r["seconds"] for r in rows if r.get("file") == name and r.get("mode") == m
                                     and r["rc"] == 0] or [float("nan")]) for m in ("stock", "split")}
        same = next(r["same_symbols"] for r in rows if r.get("file") == name and "same_symbols" in r)
        summary[name] = {**med, "ratio": med["split"] / med["stock"], "same_symbols": same}
        print(f"{name:36s} {med['stock']:9.1f}   {med['split']:9.1f}   {med['split'] / med['stock']:10.2f}  {same}")
    if args.out:
        Path(args.out).write_text(json.dumps({"nvcc": nvcc, "arch": args.arch, "std": cxx_standard(),
                                              "summary": summary, "rows": rows},
                                             indent=1))


if __name__ == "__main__":
    main()
