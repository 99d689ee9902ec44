"""Build time of the shipped CPU solutions: stock ``load_inline`` vs the cpu backend's precompiled header.

    python scripts/cpu_build_bench.py [--n 6] [--solutions solutions/cpu] [--pch-root DIR] [--out FILE.json]

Every build runs in a fresh Python process with a fresh, empty extensions folder, one build at a time
(``MAX_JOBS=1``, as in the engine's compile workers). torch is imported before the clock starts; the clock
covers executing the candidate module, i.e. its ``load_inline`` call (code generation, ninja, g++, link,
import). Each solution is built twice, once per mode, and the order alternates (stock first for even
solutions, PCH first for odd ones) so a drifting machine load falls on both modes alike.

* ``stock``: torch's loader untouched.
* ``pch``: the cpu backend's builder (``FastExtensionBuilder(pch=True, cache=False, split_nvcc=False)``,
  exactly as ``backends/cpu.py`` installs it in a worker): ``main.cpp`` force-includes the precompiled
  ``torch/extension.h`` for its flags. The PCH is warmed first with ``warm_pch`` for the flag sets of the
  chosen solutions, in its own process (a no-op when the shared PCH folder already has them; ``--pch-root``
  of an empty folder measures making it); its cost is reported separately.

Besides wall seconds, each build reports the CPU seconds of its process and children (g++, ninja): on a
shared machine wall time grows with other people's load, CPU time much less. The JSON (``--out``, default
outside the checkout) holds every build; the summary prints p50/p95 per mode.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from multikernelbench.util.results_dir import default_out

ROOT = Path(__file__).resolve().parents[1]


def cflags_of(path: Path) -> tuple[str, ...] | None:
    """The ``extra_cflags`` literal of a solution's ``load_inline`` call (None when there is none)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "extra_cflags":
                    try:
                        return tuple(ast.literal_eval(kw.value))
                    except ValueError:
                        return None
    return None


# ---- child: one build ---------------------------------------------------------------------------------
def child(args) -> None:
    import torch  # noqa: F401  (outside the clock, as in the engine's pre-imported workers)
    import torch.utils.cpp_extension  # noqa: F401

    log: list = []
    if args.mode == "pch":
        from multikernelbench.backends.extbuild.cuda_build import FastExtensionBuilder

        b = FastExtensionBuilder(args.pch_root, pch=True, cache=False, split_nvcc=False, pch_root=args.pch_root)
        b.install()
        log = b.log
    src = Path(args.src).read_text()
    self0, kids0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    exec(compile(src, args.src, "exec"), {"__name__": "candidate"})
    dt = time.perf_counter() - t0
    self1, kids1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(getattr(b, f) - getattr(a, f) for a, b in ((self0, self1), (kids0, kids1))
              for f in ("ru_utime", "ru_stime"))
    print("MKB_JSON " + json.dumps({"seconds": dt, "cpu_seconds": cpu, "log": log}), flush=True)


def build_once(mode: str, src: Path, work: Path, pch_root: Path, timeout: float) -> dict:
    ext_dir = Path(tempfile.mkdtemp(prefix=f"ext_{mode}_", dir=work))
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=str(ext_dir), MAX_JOBS="1")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--mode", mode, "--src", str(src),
           "--pch-root", str(pch_root)]
    t0 = time.perf_counter()
    row: dict = {"src": src.name, "mode": mode, "ok": False, "started": time.time(),
                 "loadavg_before": os.getloadavg()[0]}
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, cwd=work)
        line = [ln for ln in res.stdout.splitlines() if ln.startswith("MKB_JSON ")]
        if line:
            row.update(json.loads(line[0][9:]), ok=True)
        else:
            row["error"] = (res.stdout + res.stderr)[-1500:]
    except subprocess.TimeoutExpired:
        row["error"] = f"timed out after {timeout:.0f} s"
    row["process_wall"] = time.perf_counter() - t0
    shutil.rmtree(ext_dir, ignore_errors=True)
    return row


def quantile(xs: list[float], q: float) -> float | None:
    """Nearest-rank quantile (p50 of an even count is the mean of the middle two, as statistics.median)."""
    if not xs:
        return None
    if q == 0.5:
        return statistics.median(xs)
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(q * len(s) + 0.5)) - 1))]


def summarize(rows: list[dict]) -> dict:
    out = {}
    for mode in ("stock", "pch"):
        ok = [r for r in rows if r["mode"] == mode and r.get("ok")]
        wall = [r["seconds"] for r in ok]
        cpu = [r["cpu_seconds"] for r in ok]
        out[mode] = {"n": len(ok), "failed": sum(1 for r in rows if r["mode"] == mode and not r.get("ok")),
                     "p50_s": quantile(wall, 0.5), "p95_s": quantile(wall, 0.95),
                     "cpu_p50_s": quantile(cpu, 0.5), "cpu_p95_s": quantile(cpu, 0.95)}
        if mode == "pch":
            out[mode]["pch_used"] = sum(1 for r in ok if any("pch_used" in e for e in r.get("log", [])))
    if out["stock"]["p50_s"] and out["pch"]["p50_s"]:
        out["speedup_p50"] = out["stock"]["p50_s"] / out["pch"]["p50_s"]
    return out


def machine() -> dict:
    try:
        cxx = subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        cxx = "unknown"
    import torch

    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = ""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count()
    from multikernelbench.backends.cpu import cpu_model_name

    return {"cores": cores, "cpu": cpu_model_name(), "cxx": cxx,
            "torch": torch.__version__, "python": platform.python_version(), "commit": commit}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="pch", help=argparse.SUPPRESS)
    ap.add_argument("--src", help=argparse.SUPPRESS)
    ap.add_argument("--solutions", type=Path, default=ROOT / "solutions" / "cpu",
                    help="folder of solutions (its *.py, not wrong/)")
    ap.add_argument("--n", type=int, default=0, help="only the first N solutions, spread over the folder (0 = all)")
    ap.add_argument("--pch-root", type=Path, default=None,
                    help="PCH folder (default: the cpu backend's shared ~/.cache/multikernelbench/pch)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per build")
    ap.add_argument("--out", type=Path, default=None,
                    help="result JSON (default: $OUT or ~/.cache/multikernelbench/benchmarks/cpu_builds.json)")
    args = ap.parse_args()
    if args.child:
        return child(args)

    srcs = sorted(args.solutions.glob("*.py"))
    if args.n and args.n < len(srcs):  # spread the subset over the folder (both categories)
        step = len(srcs) / args.n
        srcs = [srcs[int(i * step)] for i in range(args.n)]
    work = Path(tempfile.mkdtemp(prefix="mkb_cpu_build_bench_"))
    from multikernelbench.backends.cpu import CpuBackend

    pch_root = args.pch_root or CpuBackend().pch_root()
    out = args.out or default_out("cpu_builds.json")
    out.parent.mkdir(parents=True, exist_ok=True)

    variants: list[tuple[str, ...]] = []
    for src in srcs:
        flags = cflags_of(src) or ()
        if flags not in variants:
            variants.append(flags)
    print(f"warming the PCH in {pch_root} for {len(variants)} flag sets ...", flush=True)
    t0 = time.perf_counter()
    warm = subprocess.run([sys.executable, "-m", "multikernelbench.backends.extbuild.warm_jobs", "--warm-pch", str(pch_root),
                           "--variants", json.dumps([list(v) for v in variants]), "--cpu"],
                          capture_output=True, text=True)
    warm_s = time.perf_counter() - t0
    try:
        warm_report = json.loads(warm.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        warm_report = [{"state": "error", "output": (warm.stdout + warm.stderr)[-1500:]}]
    print(f"  {warm_s:.0f} s: {[w.get('state') for w in warm_report]}", flush=True)

    result: dict = {"machine": machine(), "solutions": [s.name for s in srcs], "pch_root": str(pch_root),
                    "warm_pch_s": warm_s, "warm_pch": warm_report, "loadavg_start": os.getloadavg(), "rows": []}
    for i, src in enumerate(srcs):
        modes = ("stock", "pch") if i % 2 == 0 else ("pch", "stock")
        for mode in modes:
            row = build_once(mode, src, work, pch_root, args.timeout)
            result["rows"].append(row)
            print(f"{mode:5s} {src.name:32s} {row.get('seconds', float('nan')):7.1f} s wall "
                  f"{row.get('cpu_seconds', float('nan')):7.1f} s cpu  load {row['loadavg_before']:.1f}"
                  + ("" if row["ok"] else f"  FAILED: {row.get('error', '')[-200:]}"), flush=True)
            result["summary"] = summarize(result["rows"])
            out.write_text(json.dumps(result, indent=1) + "\n")  # after every build: a cut run keeps its rows
    result["loadavg_end"] = os.getloadavg()
    result["summary"] = summarize(result["rows"])
    out.write_text(json.dumps(result, indent=1) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    s = result["summary"]
    for mode in ("stock", "pch"):
        m = s[mode]
        fmt = lambda x: "n/a" if x is None else f"{x:.1f} s"  # noqa: E731
        print(f"{mode:5s}: n={m['n']} p50 {fmt(m['p50_s'])} p95 {fmt(m['p95_s'])} "
              f"(cpu p50 {fmt(m['cpu_p50_s'])} p95 {fmt(m['cpu_p95_s'])})"
              + (f", PCH used in {m['pch_used']}/{m['n']}" if mode == "pch" else ""))
    if "speedup_p50" in s:
        print(f"stock/pch p50: {s['speedup_p50']:.2f}x")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
