"""``--per-build``: the same candidates built three ways, whole builds (``.cu``, ``main.cpp``, link), each in a
fresh process with its own empty extension folder.

* ``stock``: torch's ``load_inline`` as a KernelBench-style harness calls it (``TORCH_EXTENSIONS_DIR`` set, the
  device's architecture, nothing of this project in the build path).
* ``builder``: the cuda backend's FastExtensionBuilder as it was before the light header path (PCH for
  ``main.cpp``, nvcc's halves side by side, no dependency pass), ``light_headers=False``.
* ``light``: the same builder with the light header path (backends/extbuild/light_headers.py).

The PCH and the light-header analyses are made first by the trusted warmer (``PchWarmer``, not timed; its
seconds are reported), as a run of ``mkb eval`` does before its compile pool. Modes run one after the other;
within a mode the candidates build side by side (``--n`` processes), light first and stock last. Each build reports its wall seconds (the
candidate module's execution, ``import torch`` excluded), the CPU seconds of its compilers (``RUSAGE_CHILDREN``),
which header path each ``.cu`` took, and the exported symbols of the ``.so`` it made: the three builds of one
candidate must export the same ones (``same_exports``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

from .common import ENTRY, RESULT, kill_tree, log, percentile, rnd

MODES = ("light", "builder", "stock")  # longest last: a cut run loses the baseline the field notes have


def pick(manifest: list[dict], n: int) -> list[dict]:
    """``n`` correct candidates of distinct tasks (the manifest spreads them over categories)."""
    out, seen = [], set()
    for m in manifest:
        if m["kind"] == "ok" and m["task_id"] not in seen:
            out.append(m)
            seen.add(m["task_id"])
        if len(out) == n:
            break
    return out


def _exports(so: Path) -> list[str]:
    """Strong dynamic definitions (``PyInit_<name>``, the candidate's functions and kernels, their stubs). Weak
    ones (inline instantiations) differ with the size of the translation unit, not with its meaning (see
    tests/test_cuda_light_headers.py)."""
    out = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True, text=True).stdout
    return sorted({p[2] for p in (line.split() for line in out.splitlines()) if len(p) == 3 and p[1] in "TDBR"})


def build_one_child(argv: list[str]) -> int:
    """In a fresh process: build one candidate one way; print one ``RESULT`` line."""
    ap = argparse.ArgumentParser(prog="throughput_bench.py _build_one")
    ap.add_argument("--mode", choices=MODES, required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--pch-root", type=Path, required=True)
    a = ap.parse_args(argv)
    import torch.utils.cpp_extension  # noqa: F401  (outside the clock, like the engine's warm workers)

    ext = a.dir / "ext"
    ext.mkdir(parents=True, exist_ok=True)
    builder = None
    if a.mode == "stock":
        os.environ["TORCH_EXTENSIONS_DIR"] = str(ext)
    else:
        from multikernelbench.backends.extbuild.cuda_build import FastExtensionBuilder
        from multikernelbench.backends.extbuild.cuda_warm import light_root_of

        builder = FastExtensionBuilder(ext, pch=True, split_nvcc=True, pch_root=a.pch_root,
                                       light_headers=a.mode == "light",
                                       light_shared=light_root_of(a.pch_root) / "analysis")
        builder.install()
    res: dict = {"mode": a.mode, "path": a.path}
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    real_stdout = os.dup(1)
    os.dup2(2, 1)  # whatever the candidate or the build prints goes to stderr
    try:
        src = Path(a.path).read_text()
        exec(compile(src, a.path, "exec"), {"__name__": "per_build_candidate"})  # noqa: S102
        res["ok"] = True
    except BaseException as exc:  # a failed build is a result too
        res.update(ok=False, error=f"{type(exc).__name__}: {str(exc)[-1500:]}")
    finally:
        os.dup2(real_stdout, 1)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    res["build_s"] = time.perf_counter() - t0
    res["cpu_s"] = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if builder is not None:
        res["headers"] = [h for entry in builder.log for h in entry.get("headers", [])]
        res["pch"] = [k for entry in builder.log for k in entry if k.startswith("pch")]
    sos = sorted(ext.rglob("*.so"))
    if sos:
        names = _exports(sos[0])
        res.update(so=str(sos[0]), n_exports=len(names),
                   exports_sha=hashlib.sha256("\n".join(names).encode()).hexdigest()[:16],
                   pybind_defs=_pybind_defs(sos[0]))
    print(RESULT + json.dumps(res), flush=True)
    return 0


def _pybind_defs(so: Path) -> list[str]:
    """The function names the module's ``PYBIND11_MODULE`` block registers: load_inline writes them into
    ``main.cpp`` beside the ``.so``."""
    try:
        text = (so.parent / "main.cpp").read_text()
    except OSError:
        return []
    return sorted(set(re.findall(r'm\.def\("([^"]+)"', text)))


def _run_mode(mode: str, cands: list[dict], work: Path, pch_root: Path, env: dict, cap_s: float) -> list[dict]:
    procs = []
    for m in cands:
        d = work / "per_build" / mode / f"v{m['variant']:03d}"
        d.mkdir(parents=True)
        err = open(d / "stderr.log", "wb")
        cmd = [sys.executable, str(ENTRY), "_build_one", "--mode", mode, "--path", m["path"], "--dir", str(d),
               "--pch-root", str(pch_root)]
        procs.append((m, subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                          stderr=err, start_new_session=True), err, d))
    rows, end = [], time.monotonic() + cap_s
    for m, proc, err, d in procs:
        try:
            out, _ = proc.communicate(timeout=max(1.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            kill_tree(proc, grace_s=1.0)
            out, _ = proc.communicate()
        err.close()
        lines = [ln for ln in out.decode("utf-8", "replace").splitlines() if ln.startswith(RESULT)]
        row = json.loads(lines[-1][len(RESULT):]) if lines else {
            "mode": mode, "ok": False, "error": f"no result (rc {proc.returncode}): "
            + (d / "stderr.log").read_text(errors="replace")[-500:]}
        row.update(label=m["label"], task_id=m["task_id"])
        rows.append(row)
    return rows


def run_per_build(args, work: Path, manifest: list[dict], cap_s: float) -> dict:
    from multikernelbench.backends.extbuild.cuda_warm import PchWarmer

    cands = pick(manifest, args.n)
    pch_root = (args.pch_root or work / "pch").resolve()
    env = dict(os.environ)
    for k in ("MKB_EXT_CACHE", "TORCH_EXTENSIONS_DIR", "TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES"):
        env.pop(k, None)
    env.setdefault("MAX_JOBS", "4")
    t0 = time.monotonic()
    warmer = PchWarmer(pch_root, {"TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES": "1"}, with_cuda=True,
                       background=False, wait=True, light=True)
    warmer.wait(timeout=max(10.0, cap_s / 3))
    warm_s = time.monotonic() - t0
    warmer.stop()
    log(f"per-build: warmer {warm_s:.0f} s; {len(cands)} candidates: {[c['task_id'] for c in cands]}")
    result: dict = {"candidates": [c["label"] for c in cands], "warm_s": rnd(warm_s, 1), "pch_root": str(pch_root),
                    "modes": {}, "rows": []}
    for mode in MODES:
        left = cap_s - (time.monotonic() - t0)
        if left < 10:
            result["modes"][mode] = {"skipped": "budget spent"}
            continue
        m0 = time.monotonic()
        mode_env = dict(env)
        if mode != "stock":
            mode_env["TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES"] = "1"
        rows = _run_mode(mode, cands, work, pch_root, mode_env, left / (len(MODES) - MODES.index(mode)))
        wall = time.monotonic() - m0
        ok = [r for r in rows if r.get("ok")]
        secs = [r["build_s"] for r in ok]
        result["modes"][mode] = {
            "n_ok": len(ok), "n": len(rows), "wall_s": rnd(wall, 1), "build_p50_s": rnd(percentile(secs, 50)),
            "build_max_s": rnd(max(secs) if secs else None), "cpu_s_sum": rnd(sum(r.get("cpu_s", 0) for r in rows), 1),
            "cores_busy_per_build": rnd(sum(r.get("cpu_s", 0) for r in ok) / sum(secs), 2) if secs else None,
            "light_path": sum(1 for r in rows for h in r.get("headers", []) if h.get("path") == "light"),
        }
        result["rows"] += rows
        log(f"per-build {mode}: {result['modes'][mode]}")
    by_label: dict[str, dict] = {}
    for r in result["rows"]:
        by_label.setdefault(r["label"], {})[r["mode"]] = r
    result["same_exports"] = {
        label: len({(r.get("exports_sha"), tuple(r.get("pybind_defs", []))) for r in modes.values() if r.get("ok")}) == 1
        for label, modes in by_label.items()}
    return result


def markdown_per_build(res: dict) -> str:
    lines = ["| mode | built | wall s (n side by side) | build p50 s | build max s | CPU s (sum) | cores/build | .cu light |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for mode in MODES:
        p = res["modes"].get(mode, {})
        if "skipped" in p or not p:
            lines.append(f"| {mode} | skipped | | | | | | |")
            continue
        lines.append(f"| {mode} | {p['n_ok']} / {p['n']} | {p['wall_s']} | {p['build_p50_s']} | {p['build_max_s']} "
                     f"| {p['cpu_s_sum']} | {p['cores_busy_per_build']} | {p['light_path']} |")
    return "\n".join(lines)
