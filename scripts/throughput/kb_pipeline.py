"""The KernelBench-style pipeline: stock ``load_inline`` builds in a spawn pool, then a fresh process per
candidate evaluates it (``kb_eval``)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

from .common import ENTRY, EV, RESULT, kill_tree, last_line, log, rnd, run_streamed, tail
from .summary import summarize


def run_kernelbench_style(args, work: Path, manifest: list[dict], cap_s: float) -> dict:
    root = work / "kb"
    root.mkdir()
    cmd = [sys.executable, str(ENTRY), "_kb", "--work", str(work), "--backend", args.backend,
           "--procs", str(args.kb_procs), "--eval-timeout", str(args.kb_eval_timeout),
           "--build-timeout", str(args.kb_build_timeout), "--seed", str(args.seed)]
    env = dict(os.environ)
    for k in ("MKB_EXT_CACHE", "TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES", "TORCH_EXTENSIONS_DIR"):
        env.pop(k, None)  # stock torch loader, nothing of the engine's build path
    rows = {m["label"]: {"label": m["label"], "task_id": m["task_id"], "kind": m["kind"],
                         "expected": m["expected"]} for m in manifest}
    phases: dict[str, float] = {}

    def on_line(line: str, t: float) -> None:
        if not line.startswith(EV):
            return
        d = json.loads(line[len(EV):])
        ev = d.pop("event")
        if ev == "phase":
            phases[d["phase"]] = rnd(t, 2)
            return
        r = rows.get(d.get("label"))
        if r is None:
            return
        if ev == "build":
            r["build_s"] = rnd(d.get("build_s"))
            if not d.get("ok"):
                r.update(status=d.get("status", "compile_error"), t_done_s=rnd(t, 2), message=last_line(d.get("error")))
        elif ev == "eval":
            r.update(status=d.get("status"), device_s=rnd(d.get("device_s")), t_done_s=rnd(t, 2),
                     speedup=rnd(d.get("speedup"), 4), cand_ms=rnd(d.get("cand_ms"), 5),
                     ref_ms=rnd(d.get("ref_ms"), 5), phases_s=d.get("phases_s"),
                     message=(d.get("message") or "")[:200])

    log(f"kernelbench_style: {shlex.join(cmd)}")
    run = run_streamed(cmd, env, cap_s, on_line, root / "stderr.log", cwd=str(root))
    extra_out = {"procs": args.kb_procs, "phases_at_s": phases, "command": shlex.join(cmd)}
    if run["rc"] != 0 or run["killed"] or not any(r.get("status") for r in rows.values()):
        extra_out["stderr_tail"] = tail(root / "stderr.log")
    return summarize(list(rows.values()), len(manifest), run, cap_s, extra_out)


def _emit(event: str, **fields) -> None:
    print(EV + json.dumps({"event": event, **fields}), flush=True)


def _kb_worker_init() -> None:
    os.dup2(2, 1)  # whatever a candidate or the build prints goes to stderr, not into the event stream
    import torch  # noqa: F401  (imported once per worker, outside the per-build clock)
    import torch.utils.cpp_extension  # noqa: F401


def _kb_build_one(label: str, path: str, ext_dir: str) -> dict:
    """KernelBench's build_compile_cache: point TORCH_EXTENSIONS_DIR at a fresh folder and execute the module."""
    os.makedirs(ext_dir, exist_ok=True)
    os.environ["TORCH_EXTENSIONS_DIR"] = ext_dir
    src = Path(path).read_text()
    t0 = time.perf_counter()
    try:
        exec(compile(src, path, "exec"), {"__name__": f"kb_build_{abs(hash(label))}"})  # noqa: S102
        return {"label": label, "ok": True, "build_s": time.perf_counter() - t0}
    except BaseException as exc:  # a compile error, or anything else the module raised at import
        return {"label": label, "ok": False, "build_s": time.perf_counter() - t0, "status": "compile_error",
                "error": f"{type(exc).__name__}: {str(exc)[-1500:]}"}


def kb_child(argv: list[str]) -> int:
    import multiprocessing as mp

    ap = argparse.ArgumentParser(prog="throughput_bench.py _kb")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--backend", required=True)
    ap.add_argument("--procs", type=int, default=16)
    ap.add_argument("--eval-timeout", type=float, default=120.0)
    ap.add_argument("--build-timeout", type=float, default=600.0)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args(argv)
    manifest = json.loads((a.work / "manifest.json").read_text())
    ext_root = a.work / "kb" / "ext"
    ext_root.mkdir(parents=True, exist_ok=True)
    # ---- builds: a pool of spawned processes, each build with its own fresh TORCH_EXTENSIONS_DIR ----
    built: dict[str, dict] = {}
    lock = threading.Lock()
    done_evt = threading.Event()

    def on_done(res: dict) -> None:
        with lock:
            built[res["label"]] = res
            _emit("build", **res)
            if len(built) == len(manifest):
                done_evt.set()

    pool = mp.get_context("spawn").Pool(a.procs, initializer=_kb_worker_init)
    for i, m in enumerate(manifest):
        ext_dir = str(ext_root / f"c{i:03d}")
        pool.apply_async(_kb_build_one, (m["label"], m["path"], ext_dir), callback=on_done,
                         error_callback=lambda exc, lb=m["label"]: on_done(
                             {"label": lb, "ok": False, "build_s": None, "status": "crash", "error": repr(exc)}))
        m["ext_dir"] = ext_dir
    last = (time.monotonic(), 0)
    while not done_evt.wait(1.0):
        with lock:
            k = len(built)
        if k != last[1]:
            last = (time.monotonic(), k)
        elif time.monotonic() - last[0] > a.build_timeout:
            for m in manifest:  # stuck builds: the pool cannot cancel one, so stop it
                if m["label"] not in built:
                    on_done({"label": m["label"], "ok": False, "build_s": None, "status": "timeout",
                             "error": f"no build finished for {a.build_timeout:.0f} s"})
            break
    pool.terminate()
    pool.join()
    _emit("phase", phase="builds_done")
    # ---- sequential evaluation, one fresh process per candidate ----
    specs = json.loads((a.work / "tasks.json").read_text())
    for m in manifest:
        b = built.get(m["label"])
        if not b or not b.get("ok"):
            continue
        spec_path = a.work / "kb" / f"eval_{m['variant']:03d}.json"
        spec_path.write_text(json.dumps({"label": m["label"], "path": m["path"], "task": specs[m["task_id"]],
                                         "backend": a.backend, "seed": a.seed}))
        env = dict(os.environ)
        env["TORCH_EXTENSIONS_DIR"] = m["ext_dir"]
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "_kb_eval", str(spec_path)],
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=a.eval_timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            kill_tree(proc, grace_s=1.0)
            out, err = proc.communicate()
            timed_out = True
        device_s = time.monotonic() - t0
        lines = [ln for ln in out.decode("utf-8", "replace").splitlines() if ln.startswith(RESULT)]
        if timed_out:
            res = {"status": "timeout", "message": f"eval ran past {a.eval_timeout:.0f} s"}
        elif lines:
            res = json.loads(lines[-1][len(RESULT):])
        else:
            why = f"signal {-proc.returncode}" if proc.returncode and proc.returncode < 0 else f"rc {proc.returncode}"
            res = {"status": "crash", "message": f"eval process died ({why}): "
                   + err.decode("utf-8", "replace").strip()[-300:]}
        sys.stderr.write(err.decode("utf-8", "replace")[-2000:])
        res.pop("label", None)
        _emit("eval", label=m["label"], device_s=device_s, **res)
    _emit("phase", phase="evals_done")
    return 0
