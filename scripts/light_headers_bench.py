"""Stock ``nvcc -c`` vs the light header path (``backends/extbuild/nvcc_light.py``) on the ``cuda.cu`` of shipped solutions.

    python scripts/light_headers_bench.py [--solutions solutions/cuda/X.py ...] [--rounds 1] [--out FILE.json]

Needs nvcc and torch's headers, no GPU (a CPU build of torch works: see nvcc_split_bench.py for the one
header it lacks). Each ``.cu`` is what ``load_inline`` writes (its three implicit headers, then the
solution's ``cuda_sources``), compiled with torch's extension flags, one compile at a time:

* ``stock``: plain nvcc, as torch's loader runs it;
* ``light``: the nvcc_light driver around plain nvcc, as the cuda backend's builder runs it (the builder also
  puts nvcc_split.py in between; left out here so that the number is the headers' alone).

The light path's analysis (two ``nvcc -E`` runs, made once per flag set by the trusted warmer in a real run)
is made first and timed on its own (``analysis_s``). Per file: seconds per mode, which path the driver took,
and whether the two objects export the same functions and call the same torch functions (``symbols``). Default files: the five candidates of ``throughput_bench.py
--per-build`` (one per category, in its order).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nvcc_split_bench as nsb  # noqa: E402  (the .cu and flags exactly as load_inline writes them)

REPO = Path(__file__).resolve().parent.parent
DEFAULT = ["activation.relu", "architecture.deep_mlp", "attention.causal_softmax", "broadcast.add_row_bias",
           "convolution.conv2d_1x1"]


def symbols(obj: Path) -> dict[str, list[str]]:
    """What the object exports (strong external definitions: the candidate's functions, kernels, launch stubs)
    and which torch functions it calls (undefined symbols in at/c10/torch). Weak inline instantiations, local
    labels and ``.cold`` parts differ between the two header sets (GCC's inlining budget grows with the size of
    the translation unit) and say nothing about meaning; tests/test_cuda_light_headers.py checks the same."""
    norm = lambda n: re.sub(r"tmpxft_[0-9a-f]+_[0-9a-f]+", "tmpxft", n)  # noqa: E731
    out = subprocess.run(["nm", "--defined-only", "--extern-only", str(obj)], capture_output=True, text=True).stdout
    strong = {norm(p[2]) for p in (ln.split() for ln in out.splitlines()) if len(p) == 3 and p[1] in "TDBRS"}
    out = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True).stdout
    calls = {ln.split()[-1] for ln in out.splitlines() if re.search(r"_ZN?K?(2at|3c10|5torch)", ln)}
    return {"defined": sorted(strong), "undefined": sorted(calls)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--solutions", nargs="*", default=None)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--arch", default="9.0")
    ap.add_argument("--out")
    args = ap.parse_args()
    from multikernelbench.backends.cuda import nvcc_path
    from multikernelbench.backends.extbuild import nvcc_light

    nvcc = nvcc_path()
    if not nvcc:
        sys.exit("nvcc not found")
    paths = [Path(s) for s in args.solutions] if args.solutions else \
        [REPO / "solutions" / "cuda" / f"{n}.py" for n in DEFAULT]
    work = Path(tempfile.mkdtemp(prefix="mkb_light_bench_"))
    nsb.ensure_stub(work / "stub")
    shim, cache = work / "light" / "include", work / "light" / "analysis"
    nvcc_light.write_shim(shim)
    rows, analysis = [], {}
    for path in paths:
        src, extra = nsb.cuda_source_of(path)
        name = path.stem
        cu = work / f"{name}.cu"
        cu.write_text(nsb.PRELUDE + src)
        flags = nsb.base_flags(args.arch, work / "stub") + extra
        key = nvcc_light.analysis_key([nvcc], nvcc_light.analysis_flags(flags))
        if key not in analysis:
            t0 = time.perf_counter()
            nvcc_light.header_diff([nvcc], nvcc_light.analysis_flags(flags), shim, cache)
            analysis[key] = round(time.perf_counter() - t0, 1)
            print(f"analysis for {' '.join(extra) or 'no extra flags'}: {analysis[key]} s", flush=True)
        for r in range(args.rounds):
            order = ("stock", "light") if r % 2 == 0 else ("light", "stock")
            for mode in order:
                obj = work / f"{name}.{mode}.o"
                report = work / f"{name}.{mode}.report.jsonl"
                report.unlink(missing_ok=True)
                cmd = [nvcc] if mode == "stock" else [
                    sys.executable, str(Path(nvcc_light.__file__)), "--shim", str(shim), "--cache", str(cache),
                    "--report", str(report), "--", nvcc]
                r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
                res = subprocess.run(cmd + flags + ["-c", str(cu), "-o", str(obj)], capture_output=True, text=True)
                secs = time.perf_counter() - t0
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
                took = json.loads(report.read_text().splitlines()[-1]) if report.exists() else {}
                rows.append({"file": name, "mode": mode, "round": r, "seconds": round(secs, 2), "cpu_s": round(cpu, 2),
                             "load1": round(os.getloadavg()[0], 1), "rc": res.returncode,
                             "path": took.get("path", "stock" if mode == "stock" else "?"), "why": took.get("why"),
                             "log": (res.stdout + res.stderr)[-1500:] if res.returncode else ""})
                print(f"{name:36s} {mode:5s} round {r}: {secs:6.1f} s wall {cpu:6.1f} s CPU rc={res.returncode} "
                      f"path={rows[-1]['path']} load {rows[-1]['load1']}", flush=True)
        a, b = symbols(work / f"{name}.stock.o"), symbols(work / f"{name}.light.o")
        rows.append({"file": name, "same_defined": a["defined"] == b["defined"],
                     "same_undefined": a["undefined"] == b["undefined"],
                     "only_stock": sorted(set(a["defined"] + a["undefined"]) - set(b["defined"] + b["undefined"]))[:20],
                     "only_light": sorted(set(b["defined"] + b["undefined"]) - set(a["defined"] + a["undefined"]))[:20]})
    print("\n| file | stock s (CPU s) | light s (CPU s) | light / stock (CPU) | path | same defined | same undefined |")
    print("|---|---:|---:|---:|---|---|---|")
    summary = {}
    for path in paths:
        name = path.stem
        med = {m: statistics.median([r["seconds"] for r in rows if r.get("file") == name and r.get("mode") == m
                                     and r["rc"] == 0] or [float("nan")]) for m in ("stock", "light")}
        cpu = {m: statistics.median([r["cpu_s"] for r in rows if r.get("file") == name and r.get("mode") == m
                                     and r["rc"] == 0] or [float("nan")]) for m in ("stock", "light")}
        same = next(r for r in rows if r.get("file") == name and "same_defined" in r)
        took = next(r["path"] for r in rows if r.get("file") == name and r.get("mode") == "light")
        summary[name] = {**med, "stock_cpu_s": cpu["stock"], "light_cpu_s": cpu["light"],
                         "ratio": round(med["light"] / med["stock"], 3),
                         "cpu_ratio": round(cpu["light"] / cpu["stock"], 3), "path": took,
                         "same_defined": same["same_defined"], "same_undefined": same["same_undefined"]}
        print(f"| {name} | {med['stock']:.1f} ({cpu['stock']:.1f}) | {med['light']:.1f} ({cpu['light']:.1f}) "
              f"| {med['light'] / med['stock']:.2f} ({cpu['light'] / cpu['stock']:.2f}) | {took} "
              f"| {same['same_defined']} | {same['same_undefined']} |")
    if args.out:
        Path(args.out).write_text(json.dumps({"nvcc": nvcc, "arch": args.arch, "std": nsb.cxx_standard(),
                                              "analysis_s": analysis, "summary": summary, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
