"""The ``mkb`` pipeline: ``mkb eval`` as a subprocess; per-candidate results from its JSON lines, device seconds
from its ``--trace``."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from pathlib import Path

from .common import last_line, log, rnd, run_streamed, tail, trace_line
from .host import _cmd_out
from .summary import summarize


def parse_trace(path: Path) -> dict[str, dict]:
    """label -> {'device_start', 'last'} in the trace's own clock (seconds since the run started)."""
    out: dict[str, dict] = {}
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        parsed = trace_line(line)
        if parsed is None:
            continue
        t, who, what = parsed
        rec = out.setdefault(who, {"device_start": None, "last": None, "build_end": None, "build_s": None})
        if "build end" in what:
            rec["build_end"] = t
            m = re.search(r"after ([0-9.]+) s", what)
            rec["build_s"] = float(m.group(1)) if m else None
        elif rec["device_start"] is None and "device" in what:
            rec["device_start"] = t
        rec["last"] = t
    return out


def _rows(build_root: Path, name: str):
    """The JSON lines of every ``name`` report under the build root (unparsable lines skipped)."""
    for rep in build_root.rglob(name):
        for line in rep.read_text(errors="replace").splitlines():
            try:
                yield json.loads(line)
            except ValueError:
                continue


def header_paths(build_root: Path) -> dict:
    """Which header path each ``.cu`` of the build root took (the nvcc_light driver's reports): counts per path,
    the reasons for stock, the analysis/compile seconds, and how many builds used the warmer's PCH for main.cpp
    (and its light header: backends/extbuild/light_main.py), so a run shows whether the light paths and the PCH
    were used."""
    paths: dict[str, int] = {}
    why: dict[str, int] = {}
    secs: dict[str, list[float]] = {"analysis_s": [], "ops_s": [], "light_s": [], "stock_s": [], "main_s": []}
    ops_why: dict[str, int] = {}  # why a .cu did not take the ops path (backends/extbuild/ops_headers.py)
    for row in _rows(build_root, "mkb_cuda_headers.jsonl"):
        paths[row.get("path", "?")] = paths.get(row.get("path", "?"), 0) + 1
        for w in row.get("why") or []:
            why[w[:120]] = why.get(w[:120], 0) + 1
        for w in row.get("ops_why") or []:
            ops_why[w[:120]] = ops_why.get(w[:120], 0) + 1
        for k in ("analysis_s", "ops_s", "light_s", "stock_s"):
            if isinstance(row.get(k), (int, float)):
                secs[k].append(row[k])
    host: dict[str, int] = {}
    split_keys = ("final_s", "final_cpu_s", "host_wall_s", "host_cpu_s", "device_wall_s", "device_cpu_s")
    secs.update({k: [] for k in split_keys})
    for row in _rows(build_root, "mkb_cuda_host_pch.jsonl"):  # nvcc_split: the final compile's precompiled prefix
        host[str(row.get("host_pch", "?"))[:80]] = host.get(str(row.get("host_pch", "?"))[:80], 0) + 1
        for k in split_keys:
            if isinstance(row.get(k), (int, float)):
                secs[k].append(row[k])
    main: dict[str, int] = {}  # main.cpp's header (backends/extbuild/light_main.py): light / full
    for row in _rows(build_root, "mkb_main_light.jsonl"):
        main[str(row.get("path", "?"))] = main.get(str(row.get("path", "?")), 0) + 1
        if isinstance(row.get("seconds"), (int, float)):
            secs["main_s"].append(row["seconds"])
    pch = [p.read_text().split() for p in build_root.rglob("mkb_pch_used")]
    return {"paths": paths, "why": why, "ops_why": ops_why, "builds": sum(1 for _ in build_root.rglob("build.ninja")),
            "pch_used": len(pch), "pch_waited": sum(1 for words in pch if "wait" in words[1:]),
            "host_pch": host, "main_paths": main,
            **{f"{k}_p50": rnd(sorted(v)[len(v) // 2]) for k, v in secs.items() if v}}


def _head(path: Path, n: int) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()[:n]
    except OSError:
        return []


_EVENTS = ("build start", "build end", "device stage start", "end_workers end")


def _events(path: Path) -> list[str]:
    """The trace's timeline without the per-check lines: builds, device stages and the warmer's steps."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [line for line in lines if " warmer: " in line or " runner: " in line or any(e in line for e in _EVENTS)]


def cpu_summary(series: list[list[float]]) -> dict:
    """How busy the host's cores were during the run (``common.CpuSampler``): the mean, the share of samples with
    at least 90 % of the cores busy, and the series itself."""
    cores = os.cpu_count() or 1
    busy = [b for _, b in series]
    return {"cores": cores, "mean_busy": rnd(sum(busy) / len(busy), 2) if busy else None,
            "saturated_share": rnd(sum(b >= 0.9 * cores for b in busy) / len(busy), 3) if busy else None,
            "series": series}


_EVENT = re.compile(r"^\S+ \+\s*([0-9.]+)s (.+?): (.*)$")


def account(p: dict) -> str:
    """One line on where a run's time went (printed under the table, so a device call's log tail shows it):
    cores busy, the first build's start and the first result, when the warmer's products were ready (trace
    clock: seconds after the runner started), and the split driver's CPU seconds per chain (p50)."""
    parts = []
    cpu = p.get("cpu") or {}
    if cpu.get("mean_busy") is not None:
        parts.append(f"cores busy {cpu['mean_busy']}/{cpu['cores']} (saturated {cpu['saturated_share']:.0%} of seconds)")
    firsts: dict[str, float] = {}
    for line in p.get("trace_events") or []:
        m = _EVENT.match(line)
        if not m:
            continue
        t, who, what = float(m.group(1)), m.group(2), m.group(3)
        if "build start" in what:
            firsts.setdefault("first build", t)
        elif who == "runner" and what.startswith("zygote ready"):
            firsts.setdefault("zygote", t)
        elif who == "warmer":
            for key in ("light", "host_pch", "pch"):
                if what.startswith(f'{{"{key}"'):
                    firsts.setdefault(f"warmer {key}", t)
    if firsts:
        parts.append(", ".join(f"{k} +{v:.1f}s" for k, v in sorted(firsts.items(), key=lambda kv: kv[1])))
    done = sorted(r["t_done_s"] for r in p.get("rows") or [] if r.get("t_done_s") is not None)
    if done:
        parts.append(f"first result {done[0]:.1f}s after launch")
    hp = p.get("header_paths") or {}
    chains = [f"{k[:-6]} {hp[k]}" for k in ("host_cpu_s_p50", "device_cpu_s_p50", "final_cpu_s_p50") if k in hp]
    if chains:
        parts.append("CPU-s p50 per chain: " + ", ".join(chains))
    if hp.get("main_paths"):
        parts.append("main.cpp " + ", ".join(f"{k} {v}" for k, v in sorted(hp["main_paths"].items()))
                     + (f" (p50 {hp['main_s_p50']} s)" if "main_s_p50" in hp else ""))
    return "; ".join(parts)


def mkb_options() -> str:
    return _cmd_out([sys.executable, "-m", "multikernelbench.cli.main", "eval", "--help"], 180)


def device_seconds(rows: dict[str, dict], tr: dict[str, dict], manifest: list[dict]) -> str:
    """Each row's device seconds: from the trace (one clock), else estimated from finished_at on one device
    lane. Returns which source gave them ("trace", "lane_estimate" or "none")."""
    source = "none"
    hashes = {m["label"]: m["code_hash"] for m in manifest}
    for r in rows.values():
        rec = tr.get(f"{r['task_id']} [{(r.get('code_hash') or hashes[r['label']])[:12]}]")
        if rec and r.get("build_s") is None and rec["build_s"] is not None:
            r["build_s"] = rec["build_s"]  # a build that finished before the cap, its result did not (0.1 s resolution)
        if not r.get("status"):
            continue
        if rec and rec["device_start"] is not None and rec["last"] is not None:
            r["device_s"] = rnd(rec["last"] - rec["device_start"])
            source = "trace"
    if source != "trace":
        lane = sorted((r for r in rows.values() if r.get("status") and r.get("finished_at")
                       and r["status"] not in ("compile_error", "cheat_detected", "unavailable")),
                      key=lambda r: r["finished_at"])
        prev = None
        for r in lane:
            ready = (r.get("started_at") or r["finished_at"]) + (r.get("build_s") or 0.0)
            start = max(ready, prev) if prev is not None else ready
            r["device_s"] = rnd(max(0.0, r["finished_at"] - start))
            prev = r["finished_at"]
            source = "lane_estimate"
    return source


def run_mkb(args, work: Path, manifest: list[dict], cap_s: float) -> dict:
    root = work / "mkb"
    root.mkdir()
    build_root = (args.mkb_build_root or root / "build").resolve()  # fresh and empty unless given
    build_root.mkdir(parents=True, exist_ok=True)
    db, trace = root / "results.sqlite", root / "trace.log"
    extra = shlex.split(args.mkb_args or "")
    helptext = args.mkb_help
    cmd = [sys.executable, "-m", "multikernelbench.cli.main", "eval", "--backend", args.backend,
           "--solutions", str(work / "solutions"), "--db", str(db), "--allow-code-execution", "--json",
           "--no-progress", "--build-root", str(build_root)]
    if "--compile-workers" not in extra and (not helptext or "--compile-workers" in helptext):
        cmd += ["--compile-workers", str(args.compile_workers)]
    use_trace = "--trace" not in extra and (not helptext or "--trace" in helptext)
    if use_trace:
        cmd += ["--trace", str(trace)]
    cmd += extra
    env = dict(os.environ)
    env["MKB_ALLOW_CODE_EXECUTION"] = "1"
    env.pop("MKB_EXT_CACHE", None)  # the engine's extension cache must be the fresh one under --build-root
    by_label = {m["label"]: m for m in manifest}
    rows = {m["label"]: {"label": m["label"], "task_id": m["task_id"], "kind": m["kind"],
                         "expected": m["expected"]} for m in manifest}
    stray: list[str] = []

    def on_line(line: str, t: float) -> None:
        if not line.startswith("{"):
            if line.strip():
                stray.append(line[:300])
            return
        try:
            d = json.loads(line)
        except ValueError:
            stray.append(line[:300])
            return
        label = d.get("candidate")
        if label not in by_label or "status" not in d:
            stray.append(line[:300])
            return
        ct = d.get("candidate_timing") or {}
        et = d.get("eager_timing") or {}
        rows[label].update({
            "status": d.get("status"), "build_s": rnd(d.get("compile_time_s")), "t_done_s": rnd(t, 2),
            "speedup": rnd(d.get("speedup"), 4), "cand_ms": rnd(ct.get("median_ms"), 5),
            "ref_ms": rnd(et.get("median_ms"), 5), "code_hash": d.get("code_hash"),
            "started_at": d.get("started_at"), "finished_at": d.get("finished_at"),
            "message": last_line(d.get("message")),
        })

    log(f"mkb: {shlex.join(cmd)}")
    run = run_streamed(cmd, env, cap_s, on_line, root / "stderr.log", cwd=str(root))
    source = device_seconds(rows, parse_trace(trace) if use_trace else {}, manifest)
    for r in rows.values():
        r.pop("started_at", None)
        r.pop("finished_at", None)
    extra_out = {"device_s_source": source, "compile_workers": args.compile_workers, "command": shlex.join(cmd),
                 "header_paths": header_paths(build_root), "trace_head": _head(trace, 120),
                 "trace_events": _events(trace), "cpu": cpu_summary(run.get("cpu_busy") or [])}
    if run["rc"] != 0 or run["killed"] or not any(r.get("status") for r in rows.values()):
        extra_out["stderr_tail"] = tail(root / "stderr.log")
    if stray:
        extra_out["stdout_other"] = stray[-20:]
    return summarize(list(rows.values()), len(manifest), run, cap_s, extra_out)
