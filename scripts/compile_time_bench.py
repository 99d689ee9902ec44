"""Compile time of CUDA candidates: stock ``load_inline`` vs the cuda backend's builder, same candidates.

    python scripts/compile_time_bench.py --n 4 --concurrency 4 [--out FILE.json]

Each build runs in a fresh Python process (torch imported before the clock starts; the clock covers
executing the candidate module, i.e. its load_inline call: code generation, ninja, nvcc, g++, link, import).
Candidates are the trivial vector-add kernel of the issue (made distinct by a constant, so no two share a
cache entry) plus, with ``--solutions``, shipped CUDA solutions.

Phases:
1. ``stock``: torch's loader untouched, fresh TORCH_EXTENSIONS_DIR, no arch list (torch picks the device's).
2. ``fast, cold``: one build with an empty cache (pays the precompiled header once).
3. ``fast``: the same candidates as phase 1 (PCH now warm, build cache cold).
4. ``fast, cached``: the same again (content-keyed cache hit: an import).
Phases 1 and 3 run ``--concurrency`` builds at a time (the engine's compile workers build concurrently);
``--concurrency 1`` gives the single-candidate figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from multikernelbench.util.results_dir import default_out

TRIVIAL = r'''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i] + %(k)d.0f;
}

torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b) {
    auto out = torch::empty_like(a);
    int n = a.numel();
    add_kernel<<<(n + 255) / 256, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""
cpp_src = "torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);"
ext = load_inline(name="trivial_add_%(k)d", cpp_sources=cpp_src, cuda_sources=cuda_src,
                  functions=["add_cuda"], verbose=False)

class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.add_cuda(a, b)
'''


def child(args) -> None:
    import torch  # noqa: F401  (outside the clock, as in a long-lived worker)

    log = []
    if args.mode == "fast":
        from multikernelbench.backends.extbuild.cuda_build import FastExtensionBuilder

        b = FastExtensionBuilder(args.cache)
        b.install()
        log = b.log
    src = Path(args.src).read_text()
    t0 = time.perf_counter()
    exec(compile(src, args.src, "exec"), {"__name__": "candidate"})
    dt = time.perf_counter() - t0
    print("MKB_JSON " + json.dumps({"seconds": dt, "log": log}))


def run_one(mode: str, src: Path, work: Path, cache: Path, arch: str) -> dict:
    env = dict(os.environ)
    env["TORCH_EXTENSIONS_DIR"] = str(work / f"ext_{mode}_{src.stem}")
    env["MAX_JOBS"] = "4"
    env.pop("TORCH_CUDA_ARCH_LIST", None)
    env.pop("TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES", None)
    if mode == "fast":
        env["TORCH_CUDA_ARCH_LIST"] = arch
        env["TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES"] = "1"
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, __file__, "--child", "--mode", mode, "--src", str(src),
                          "--cache", str(cache)], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    line = [ln for ln in res.stdout.splitlines() if ln.startswith("MKB_JSON ")]
    if not line:
        return {"src": src.name, "mode": mode, "ok": False, "error": (res.stdout + res.stderr)[-1500:]}
    d = json.loads(line[0][9:])
    return {"src": src.name, "mode": mode, "ok": True, "seconds": d["seconds"], "process_wall": wall,
            "log": d["log"]}


def phase(mode, srcs, work, cache, arch, conc):
    with ThreadPoolExecutor(conc) as ex:
        return list(ex.map(lambda s: run_one(mode, s, work, cache, arch), srcs))


def p50(rows):
    xs = [r["seconds"] for r in rows if r.get("ok")]
    return statistics.median(xs) if xs else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--mode", default="fast")
    ap.add_argument("--src")
    ap.add_argument("--cache")
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--solutions", nargs="*", default=[])
    ap.add_argument("--out", type=Path, default=None,
                    help="result JSON (default: $OUT or ~/.cache/multikernelbench/benchmarks)")
    ap.add_argument("--fast-first", action="store_true", help="measure the builder before stock")
    args = ap.parse_args()
    if args.child:
        return child(args)
    from multikernelbench.backends.cuda import device_arch

    arch = device_arch() or "9.0"
    work = Path(tempfile.mkdtemp(prefix="mkb_ctb_"))
    cands = []
    for k in range(args.n + 1):
        p = work / f"trivial_{k}.py"
        p.write_text(TRIVIAL % {"k": k})
        cands.append(p)
    cands += [Path(s) for s in args.solutions]
    cold_src, same = cands[0], cands[1:]
    cache = work / "cache"
    out = args.out or default_out("compile_time.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    partial: dict = {"arch": arch, "concurrency": args.concurrency, "rows": []}

    def save(name, rows):  # after every phase, so a run cut short still leaves its numbers
        partial["rows"] += rows
        partial[f"{name}_p50_s"] = p50(rows)
        out.write_text(json.dumps(partial, indent=1) + "\n")
        for r in rows:
            print(f"{r['mode']:6s} {r['src']:40s} {r.get('seconds', float('nan')):8.2f}s ok={r['ok']}", flush=True)

    fast_first = getattr(args, "fast_first", False)
    stock = fast = []
    if fast_first:  # the builder's phases first, so a short session still measures them
        cold = phase("fast", [cold_src], work, cache, arch, 1)
        save("fast_cold", cold)
        fast = phase("fast", same, work, cache, arch, args.concurrency)
        save("fast", fast)
    stock = phase("stock", same, work, cache, arch, args.concurrency)
    save("stock", stock)
    print(f"stock: p50 {p50(stock)}", flush=True)
    if not fast_first:
        cold = phase("fast", [cold_src], work, cache, arch, 1)
        save("fast_cold", cold)
        print(f"fast cold (PCH build): {cold[0].get('seconds')}", flush=True)
        fast = phase("fast", same, work, cache, arch, args.concurrency)
        save("fast", fast)
    print(f"fast: p50 {p50(fast)}", flush=True)
    cached = phase("fast", same, work, cache, arch, args.concurrency)
    save("cached", cached)
    result = {"arch": arch, "concurrency": args.concurrency, "candidates": [c.name for c in same],
              "stock_p50_s": p50(stock), "fast_p50_s": p50(fast), "fast_cold_pch_s": cold[0].get("seconds"),
              "cached_p50_s": p50(cached),
              "rows": stock + cold + fast + cached, "cpu_count": os.cpu_count()}
    out.write_text(json.dumps(result, indent=1) + "\n")
    for r in stock + cold + fast + cached:
        if not r.get("ok"):
            print(f"FAILED {r['mode']} {r['src']}: {r.get('error', '')[-300:]}")
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))


if __name__ == "__main__":
    main()
