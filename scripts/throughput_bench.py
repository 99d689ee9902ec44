"""Throughput of ``mkb eval`` side by side with a KernelBench-style pipeline, on the same candidates.

    python scripts/throughput_bench.py --backend cuda            # on the GPU host (default n=48, 540 s)
    python scripts/throughput_bench.py --backend cpu --n 4 --kb-procs 2   # pilot on a CPU-only machine

Candidates: ``--n`` distinct variants of the shipped solutions (``solutions/<backend>/*.py``, about 3/4, spread
over every shipped task) and of fast-failing wrong ones (``solutions/<backend>/wrong/``, about 1/4: compile
error, raises at run time, wrong result). Each variant gets a unique ``// variant N`` line before its
``#include <torch/extension.h>`` and a unique ``load_inline(name=...)``, so its code hash and its extension both
differ from every other variant's: no build cache can share two of them. They are written to
``<work>/solutions/<task id>/vNNN_<kind>.py`` (wrong ones keep their ``# task:`` / ``# expect:`` headers).

Pipelines (one after the other, ``--order``; each with a fresh, empty build cache and its own time cap):

* ``mkb``: ``mkb eval --backend B --solutions <work>/solutions --db <fresh sqlite> --allow-code-execution --json
  --no-progress --build-root <fresh dir> --compile-workers N --trace <file>`` as a subprocess (its own process
  group), plus ``--mkb-args``. Per-candidate results come from the JSON lines it prints (``json_printer``:
  ``candidate``, ``status``, ``compile_time_s``, ``started_at``, ``finished_at``, ``speedup``, ...); device
  seconds per candidate from the ``--trace`` lines (first line naming the candidate with "device" in it up
  to its last line), or, without a trace, from ``finished_at`` on one device lane.
* ``kernelbench_style``: stock ``torch.utils.cpp_extension.load_inline``, no project code in the build path.
  A spawn ``multiprocessing.Pool`` of ``--kb-procs`` processes builds every candidate by executing its module
  (which calls ``load_inline`` at import), each with its own fresh ``TORCH_EXTENSIONS_DIR`` (as KernelBench's
  ``batch_compile``); then each built candidate is evaluated SEQUENTIALLY in a fresh subprocess (crash
  isolation, ``--kb-eval-timeout``): load the module again (cache hit), build ``Model`` (the task's reference,
  from the task source via ``multikernelbench.tasks``) and ``ModelNew`` with the same seed, 5 correctness
  trials over the task's test shapes, then CUDA-event timing of candidate and reference (3 warm-up, 100
  trials) on the bench shape. Device seconds = wall time of that subprocess.

``--backend cpu`` does the same with the shipped C++ solutions, the reference on the CPU, host-clock timing and
the CPU bench shapes.

Output (``--out``, default ``$OUT/throughput_h200.json`` or a temp dir; never the source tree unless asked):
``{"mkb": {...}, "kernelbench_style": {...}, "host": {...}, "command": "..."}``; each pipeline holds ``n``
(candidates finished), ``candidates_per_hour`` (n / wall * 3600), ``build_p50_s``, ``build_p95_s``,
``device_p50_s``, ``wall_s``, ``complete`` and per-candidate ``rows``. A pipeline that runs past its cap is
killed (its process group and every descendant) and reported with what finished and ``"complete": false``.
Standard library + torch (+ the project's task loader in the KernelBench-style eval child) only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _ensure_importable() -> None:
    """The task loader comes from the installed package; a plain checkout works too (children inherit the path)."""
    import importlib.util

    if importlib.util.find_spec("multikernelbench") is None:
        sys.path.insert(0, str(REPO))
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)


PIPELINES = ("mkb", "kernelbench_style")
EV = "KBEV "  # prefix of the KernelBench-style child's event lines (candidates may print anything)
RESULT = "KBRESULT "  # prefix of an eval child's result line
INCLUDE = "#include <torch/extension.h>"
# Wrong kinds that fail fast (no hangs, no OOM), per backend: file stem in solutions/<backend>/wrong/.
WRONG_KINDS = {
    "cuda": ("relu_compile_error", "relu_raises", "relu_skips_tail"),
    "cpu": ("compile_error", "wrong_result", "wrong_shape"),
}
_HEADER = re.compile(r"^#\s*(task|expect)\s*:\s*(.+?)\s*$", re.M)
_NAME = re.compile(r'(\bname\s*=\s*")([A-Za-z_][A-Za-z0-9_]*)(")')


# ------------------------------------------------------------------------------------------------- helpers
class Interrupted(Exception):
    """SIGTERM/SIGINT in the main process (e.g. an outer `timeout`): kill the running pipeline, write what is there."""


_SIGNALLED: list[str] = []


def _on_signal(signum, frame) -> None:
    if not _SIGNALLED:  # raise once; a second signal must not interrupt the clean-up
        _SIGNALLED.append(signal.Signals(signum).name)
        raise Interrupted(_SIGNALLED[0])


def log(msg: str) -> None:
    print(f"[throughput {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def percentile(values, q: float):
    """Linear interpolation between closest ranks (numpy's default); None for no values."""
    xs = sorted(float(v) for v in values if v is not None)
    if not xs:
        return None
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def last_line(text, limit: int = 200) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[-1][:limit] if lines else ""


def rnd(x, nd: int = 3):
    return None if x is None else round(float(x), nd)


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(entry))
    return kids


def descendants(pid: int) -> list[int]:
    kids = _children_map()
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _signal_all(pgid: int, pids, sig) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for p in pids:
        try:
            os.kill(p, sig)
        except (ProcessLookupError, PermissionError):
            pass


def kill_tree(proc: subprocess.Popen, grace_s: float = 3.0) -> None:
    """SIGTERM then SIGKILL to the process group we created and to every descendant (some of which may have
    moved to their own process groups), each by its pid."""
    seen = set(descendants(proc.pid))
    _signal_all(proc.pid, seen, signal.SIGTERM)
    end = time.monotonic() + grace_s
    while time.monotonic() < end and proc.poll() is None:
        seen |= set(descendants(proc.pid))
        time.sleep(0.2)
    seen |= set(descendants(proc.pid))
    _signal_all(proc.pid, seen, signal.SIGKILL)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def run_streamed(cmd: list[str], env: dict, cap_s: float, on_line, stderr_path: Path, cwd=None) -> dict:
    """Run ``cmd`` in its own process group; ``on_line(line, t)`` for each stdout line as it arrives (t = seconds
    since launch); killed (whole tree) after ``cap_s``."""
    t0 = time.monotonic()
    with open(stderr_path, "wb") as err:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=err, start_new_session=True)

    def reader() -> None:
        for raw in proc.stdout:
            try:
                on_line(raw.decode("utf-8", "replace").rstrip("\n"), time.monotonic() - t0)
            except Exception as exc:  # a parse problem must not stop the reader (the pipe would fill up)
                log(f"could not handle a line: {exc!r}")

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    killed = interrupted = False
    try:
        proc.wait(timeout=max(1.0, cap_s))
    except subprocess.TimeoutExpired:
        killed = True
        log(f"cap of {cap_s:.0f} s reached: killing {cmd[1:3]} (process group {proc.pid})")
        kill_tree(proc)
    except Interrupted as exc:
        killed = interrupted = True
        log(f"{exc}: killing {cmd[1:3]} (process group {proc.pid})")
        kill_tree(proc)
    wall = time.monotonic() - t0
    th.join(timeout=10)
    if not killed:  # stragglers left in the group by a normal exit
        _signal_all(proc.pid, [], signal.SIGKILL)
    return {"rc": proc.returncode, "killed": killed, "interrupted": interrupted, "wall_s": wall}


def tail(path: Path, n: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


# ------------------------------------------------------------------------------------------------- candidates
def read_headers(source: str) -> dict[str, str]:
    head = "\n".join(source.splitlines()[:10])
    return {m.group(1): m.group(2) for m in _HEADER.finditer(head)}


def make_variant(source: str, number: int) -> tuple[str, str]:
    """A distinct build of ``source``: a ``// variant N`` line in the C++/CUDA source and a unique extension name."""
    if source.count(INCLUDE) != 1:
        raise ValueError(f"expected exactly one {INCLUDE!r}")
    names = _NAME.findall(source)
    if len(names) != 1:
        raise ValueError(f"expected exactly one load_inline name=..., found {len(names)}")
    source = source.replace(INCLUDE, f"// variant {number}\n{INCLUDE}", 1)
    new_name = f"{names[0][1]}_v{number}"
    source = _NAME.sub(lambda m: f"{m.group(1)}{new_name}{m.group(3)}", source, count=1)
    return source, new_name


def _spread(paths: list[Path]) -> list[Path]:
    """Round-robin over categories (activation.x, reduce.y, ...) so that small --n still spans categories."""
    by_cat: dict[str, list[Path]] = {}
    for p in sorted(paths):
        by_cat.setdefault(p.stem.split(".")[0], []).append(p)
    out, lists = [], list(by_cat.values())
    while any(lists):
        for lst in lists:
            if lst:
                out.append(lst.pop(0))
    return out


def generate_candidates(backend: str, n: int, src_root: Path, out_dir: Path, known: set[str],
                        wrong_fraction: float) -> list[dict]:
    correct_src = [p for p in _spread(list(src_root.glob("*.py"))) if p.stem in known]
    wrong_src = []
    for kind in WRONG_KINDS.get(backend, ()):
        p = src_root / "wrong" / f"{kind}.py"
        if p.exists() and read_headers(p.read_text()).get("task") in known:
            wrong_src.append(p)
    if not correct_src:
        raise SystemExit(f"no shipped solutions for known tasks under {src_root}")
    n_wrong = int(round(n * wrong_fraction)) if wrong_src else 0
    if n >= 2 and wrong_src and wrong_fraction > 0:
        n_wrong = max(1, n_wrong)
    n_correct = n - n_wrong
    plan = [(correct_src[i % len(correct_src)], "correct") for i in range(n_correct)]
    plan += [(wrong_src[j % len(wrong_src)], "wrong") for j in range(n_wrong)]
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for number, (path, sort) in enumerate(plan, start=1):
        base = path.read_text()
        headers = read_headers(base)
        task_id = headers.get("task") or path.stem
        kind = "ok" if sort == "correct" else path.stem
        source, ext_name = make_variant(base, number)
        rel = Path(task_id) / f"v{number:03d}_{kind}.py"
        (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (out_dir / rel).write_text(source)
        rows.append({"label": str(rel), "task_id": task_id, "variant": number, "kind": kind,
                     "code_hash": hashlib.sha256(source.encode()).hexdigest()[:20],  # as the engine keys it
                     "expected": headers.get("expect", "correct") if sort == "wrong" else "correct",
                     "from": str(path.relative_to(REPO) if REPO in path.parents else path),
                     "ext_name": ext_name, "path": str(out_dir / rel)})
    # mkb takes candidates sorted by (task id, label) (discover_solutions); the KernelBench-style pipeline
    # builds and evaluates in the same order, so a pipeline cut by its cap has seen the same mix.
    rows.sort(key=lambda r: (r["task_id"], r["label"]))
    return rows


def task_specs(task_ids: set[str]) -> dict[str, dict]:
    from multikernelbench.tasks import load_suite

    specs = {}
    for t in load_suite(ids=sorted(task_ids)):
        specs[t.id] = {"id": t.id, "source": t.source, "test_shapes": list(t.test_shapes),
                       "bench_shape": t.bench_shape, "cpu_bench_shape": t.cpu_bench_shape, "dtype": t.dtype,
                       "atol": t.atol, "rtol": t.rtol}
    return specs


def known_task_ids() -> set[str]:
    from multikernelbench.tasks import load_suite

    return {t.id for t in load_suite()}


# ------------------------------------------------------------------------------------------------- host
def _cmd_out(cmd: list[str], timeout: float = 30) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout.strip()
    except Exception:
        return ""


def cuda_arch() -> str:
    out = _cmd_out(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"]).split()
    if out and out[0].replace(".", "").isdigit():
        return out[0]
    out = _cmd_out([sys.executable, "-c",
                    "import torch; m, n = torch.cuda.get_device_capability(0); print(f'{m}.{n}')"], 120).split()
    return out[-1] if out else ""


def host_info(backend: str, arch: str) -> dict:
    info = {"hostname": platform.node(), "platform": platform.platform(), "python": platform.python_version(),
            "cpu_count": os.cpu_count(), "backend": backend}
    try:
        info["usable_cores"] = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        import torch

        info["torch"] = torch.__version__
        info["torch_cuda"] = torch.version.cuda
    except Exception as exc:
        info["torch"] = f"unavailable: {exc!r}"
    if backend == "cuda":
        info["gpu"] = _cmd_out(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                "--format=csv,noheader"])
        info["arch"] = arch
        nvcc = shutil.which("nvcc") or (os.path.join(os.environ["CUDA_HOME"], "bin", "nvcc")
                                        if os.environ.get("CUDA_HOME") else None)
        if nvcc:
            lines = _cmd_out([nvcc, "--version"]).splitlines()
            info["nvcc"] = lines[-1] if lines else ""
    info["gxx"] = (_cmd_out(["g++", "--version"]).splitlines() or [""])[0]
    try:
        info["git_commit"] = _cmd_out(["git", "-C", str(REPO), "rev-parse", "HEAD"])
    except Exception:
        pass
    return info


# ------------------------------------------------------------------------------------------------- summaries
def summarize(rows: list[dict], total: int, run: dict, cap_s: float, extra: dict) -> dict:
    done = [r for r in rows if r.get("status")]
    statuses: dict[str, int] = {}
    for r in done:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    # Builds and device stages that finished count even where the candidate's evaluation did not.
    builds = [r.get("build_s") for r in rows if r.get("build_s") is not None]
    devices = [r.get("device_s") for r in rows if r.get("device_s") is not None]
    wall = run.get("wall_s") or 0.0
    complete = (len(done) == total) and not run.get("killed") and run.get("rc") == 0
    out = {
        "n": len(done), "n_candidates": total, "complete": complete,
        "candidates_per_hour": rnd(len(done) / wall * 3600.0, 1) if wall > 0 else None,
        "build_p50_s": rnd(percentile(builds, 50)), "build_p95_s": rnd(percentile(builds, 95)),
        "device_p50_s": rnd(percentile(devices, 50)), "device_p95_s": rnd(percentile(devices, 95)),
        "wall_s": rnd(wall, 2), "cap_s": rnd(cap_s, 1), "rc": run.get("rc"), "killed": bool(run.get("killed")),
        "interrupted": bool(run.get("interrupted")),
        "statuses": dict(sorted(statuses.items())),
        "as_expected": sum(1 for r in done if r.get("status") == r.get("expected")),
        "unexpected": [f"{r['label']}: {r.get('status')} (expected {r.get('expected')})"
                       for r in done if r.get("status") != r.get("expected")],
        "n_built": len(builds), "n_device": len(devices),
    }
    out.update(extra)
    out["rows"] = rows
    return out


# ------------------------------------------------------------------------------------------------- mkb
_TRACE = re.compile(r"^\S+ \+\s*([0-9.]+)s (.+? \[[0-9a-f]+\]): (.*)$")


def parse_trace(path: Path) -> dict[str, dict]:
    """label -> {'device_start', 'last'} in the trace's own clock (seconds since the run started)."""
    out: dict[str, dict] = {}
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        m = _TRACE.match(line)
        if not m:
            continue
        t, who, what = float(m.group(1)), m.group(2), m.group(3)
        rec = out.setdefault(who, {"device_start": None, "last": None, "build_end": None, "build_s": None})
        if "build end" in what:
            rec["build_end"] = t
            m = re.search(r"after ([0-9.]+) s", what)
            rec["build_s"] = float(m.group(1)) if m else None
        elif rec["device_start"] is None and "device" in what:
            rec["device_start"] = t
        rec["last"] = t
    return out


def mkb_options() -> str:
    return _cmd_out([sys.executable, "-m", "multikernelbench.cli.main", "eval", "--help"], 180)


def run_mkb(args, work: Path, manifest: list[dict], cap_s: float) -> dict:
    root = work / "mkb"
    root.mkdir()
    build_root = root / "build"  # fresh, empty
    build_root.mkdir()
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
    # Device seconds per candidate: from the trace (one clock), else from finished_at on one device lane.
    source = "none"
    tr = parse_trace(trace) if use_trace else {}
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
    for r in rows.values():
        r.pop("started_at", None)
        r.pop("finished_at", None)
    extra_out = {"device_s_source": source, "compile_workers": args.compile_workers, "command": shlex.join(cmd)}
    if run["rc"] != 0 or run["killed"] or not any(r.get("status") for r in rows.values()):
        extra_out["stderr_tail"] = tail(root / "stderr.log")
    if stray:
        extra_out["stdout_other"] = stray[-20:]
    return summarize(list(rows.values()), len(manifest), run, cap_s, extra_out)


# ------------------------------------------------------------------------------------------------- KernelBench style
def run_kernelbench_style(args, work: Path, manifest: list[dict], cap_s: float) -> dict:
    root = work / "kb"
    root.mkdir()
    cmd = [sys.executable, str(Path(__file__).resolve()), "_kb", "--work", str(work), "--backend", args.backend,
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


def _outputs(x) -> list:
    import torch

    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out += _outputs(v)
        return out
    return [x]


def _compare(ref, new, atol: float, rtol: float) -> str:
    """'' when the outputs match (KernelBench: shape check, then allclose), else why not."""
    import torch

    r, c = _outputs(ref), _outputs(new)
    if len(r) != len(c):
        return f"{len(c)} outputs, expected {len(r)}"
    for i, (a, b) in enumerate(zip(r, c)):
        if not isinstance(a, torch.Tensor):
            continue
        if not isinstance(b, torch.Tensor):
            return f"output {i} is {type(b).__name__}, not a tensor"
        if tuple(a.shape) != tuple(b.shape):
            return f"output {i} shape {tuple(b.shape)}, expected {tuple(a.shape)}"
        a64, b64 = a.detach().to(torch.float64), b.detach().to(torch.float64)
        if not torch.allclose(b64, a64, atol=atol, rtol=rtol):
            err = (b64 - a64).abs().max().item()
            return f"output {i} differs: max abs error {err:.3g}"
    return ""


def kb_eval_child(spec_path: str) -> int:
    """One candidate, KernelBench-style: load, 5 correctness trials, CUDA-event (or host-clock) timing."""
    t_start = time.perf_counter()
    spec = json.loads(Path(spec_path).read_text())
    import torch

    from multikernelbench.tasks.module import exec_source, make_inputs, make_model

    task, backend = spec["task"], spec["backend"]
    on_gpu = backend == "cuda"
    device = torch.device("cuda", 0) if on_gpu else torch.device("cpu")
    phases: dict[str, float] = {"import": time.perf_counter() - t_start}
    res: dict = {"label": spec["label"]}

    def finish(status: str, message: str = "") -> int:
        res.update(status=status, message=message, phases_s={k: round(v, 3) for k, v in phases.items()})
        print(RESULT + json.dumps(res), flush=True)
        return 0

    if on_gpu and task["dtype"] == "float32":  # fp32 means fp32 on both sides, as the engine checks it
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    t0 = time.perf_counter()
    try:
        ns: dict = {"__name__": "kb_eval_candidate"}
        exec(compile(Path(spec["path"]).read_text(), spec["path"], "exec"), ns)  # noqa: S102
        model_new_cls = ns["ModelNew"]
    except BaseException as exc:
        phases["load"] = time.perf_counter() - t0
        return finish("runtime_error", f"loading: {type(exc).__name__}: {str(exc)[-300:]}")
    phases["load"] = time.perf_counter() - t0
    mod = exec_source(task["source"], task["id"])
    dtype, atol, rtol = task["dtype"], float(task["atol"]), float(task["rtol"])
    seed = int(spec.get("seed", 42))

    def sync() -> None:
        if on_gpu:
            torch.cuda.synchronize(device)

    # ---- correctness: 5 trials over the test shapes; models built with one seed, inputs with one per trial ----
    t0 = time.perf_counter()
    trials = 5
    with torch.no_grad():
        for trial in range(trials):
            shape = task["test_shapes"][trial % len(task["test_shapes"])]
            try:
                inputs = make_inputs(mod, shape, seed + 1000 + trial, dtype, device)
                ref = make_model(mod.Model, mod, shape, seed, dtype, device)
                expect = ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                sync()
            except BaseException as exc:  # the harness's own reference failed: not the candidate's fault
                phases["correctness"] = time.perf_counter() - t0
                return finish("harness_error", f"reference: {exc!r}"[:300])
            try:
                new = make_model(model_new_cls, mod, shape, seed, dtype, device)
                got = new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                sync()
            except BaseException as exc:
                phases["correctness"] = time.perf_counter() - t0
                return finish("runtime_error", f"trial {trial}: {type(exc).__name__}: {str(exc)[-300:]}")
            why = _compare(expect, got, atol, rtol)
            if why:
                phases["correctness"] = time.perf_counter() - t0
                return finish("incorrect", f"trial {trial} shape {shape}: {why}")
    phases["correctness"] = time.perf_counter() - t0
    # ---- timing on the bench shape: 3 warm-up calls, 100 timed calls each, mean (KernelBench) ----
    t0 = time.perf_counter()
    shape = task["bench_shape"] if on_gpu else task["cpu_bench_shape"]

    def time_calls(fn, args, warmup: int = 3, n: int = 100) -> list[float]:
        for _ in range(warmup):
            fn(*args)
            sync()
        times = []
        for _ in range(n):
            if on_gpu:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn(*args)
                end.record()
                torch.cuda.synchronize(device)
                times.append(start.elapsed_time(end))
            else:
                s = time.perf_counter()
                fn(*args)
                times.append((time.perf_counter() - s) * 1e3)
        return times

    try:
        with torch.no_grad():
            inputs = make_inputs(mod, shape, seed, dtype, device)
            new = make_model(model_new_cls, mod, shape, seed, dtype, device)
            cand = time_calls(new, inputs)
            del new
            ref = make_model(mod.Model, mod, shape, seed, dtype, device)
            refs = time_calls(ref, inputs)
    except BaseException as exc:
        phases["timing"] = time.perf_counter() - t0
        return finish("runtime_error", f"timing: {type(exc).__name__}: {str(exc)[-300:]}")
    phases["timing"] = time.perf_counter() - t0
    cand_ms, ref_ms = sum(cand) / len(cand), sum(refs) / len(refs)
    res.update(cand_ms=cand_ms, ref_ms=ref_ms, speedup=ref_ms / cand_ms if cand_ms > 0 else None)
    phases["total"] = time.perf_counter() - t_start
    return finish("correct")


# ------------------------------------------------------------------------------------------------- main
def default_out() -> Path:
    if os.environ.get("OUT"):
        return Path(os.environ["OUT"]) / "throughput_h200.json"
    return Path(tempfile.gettempdir()) / "mkb_throughput" / "throughput_h200.json"


def markdown(result: dict, order: list[str]) -> str:
    lines = ["| pipeline | done / cands | complete | cand/h | build p50 s | build p95 s | device p50 s | wall s "
             "| as expected | statuses |",
             "|---|---:|:---:|---:|---:|---:|---:|---:|---:|---|"]

    def f(x):
        return "n/a" if x is None else (f"{x:.1f}" if isinstance(x, float) else str(x))

    for name in order:
        p = result[name]
        if p.get("skipped"):
            lines.append(f"| {name} | skipped | | | | | | | | |")
            continue
        st = ", ".join(f"{k} {v}" for k, v in p["statuses"].items())
        lines.append(f"| {name} | {p['n']} / {p['n_candidates']} | {'yes' if p['complete'] else 'NO'} "
                     f"| {f(p['candidates_per_hour'])} | {f(p['build_p50_s'])} | {f(p['build_p95_s'])} "
                     f"| {f(p['device_p50_s'])} | {f(p['wall_s'])} | {p['as_expected']} / {p['n']} | {st} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    t_begin = time.monotonic()
    from_cli = argv is None
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--n", type=int, default=48, help="distinct candidates (default 48)")
    ap.add_argument("--wrong-fraction", type=float, default=0.25, help="share of wrong candidates (default 1/4)")
    ap.add_argument("--solutions-src", type=Path, default=None,
                    help="shipped solutions to make variants of (default solutions/<backend>)")
    ap.add_argument("--compile-workers", type=int, default=0,
                    help="mkb eval --compile-workers (default 0: the engine's choice, half the cores for CUDA)")
    ap.add_argument("--mkb-args", default="", help='extra arguments passed to mkb eval, e.g. "--timing-budget 2"')
    ap.add_argument("--kb-procs", type=int, default=16, help="KernelBench-style build pool size (default 16)")
    ap.add_argument("--kb-eval-timeout", type=float, default=120.0, help="seconds per KernelBench-style eval")
    ap.add_argument("--kb-build-timeout", type=float, default=300.0,
                    help="KernelBench-style builds: give up when none finishes for this long")
    ap.add_argument("--order", choices=("mkb-first", "kb-first"), default="mkb-first")
    ap.add_argument("--only", choices=PIPELINES, default=None, help="run one pipeline (the other is reported skipped)")
    ap.add_argument("--budget-s", type=float, default=540.0, help="overall deadline in seconds (default 540)")
    ap.add_argument("--pipeline-budget-s", type=float, default=None,
                    help="cap per pipeline (default: what is left after setup, halved)")
    ap.add_argument("--seed", type=int, default=42, help="seed of the KernelBench-style models and inputs")
    ap.add_argument("--out", type=Path, default=None, help="result JSON (default $OUT/throughput_h200.json or a temp dir)")
    ap.add_argument("--work", type=Path, default=None, help="work folder (default: a fresh temp dir)")
    args = ap.parse_args(argv)
    command = shlex.join(["python", sys.argv[0] if from_cli else "scripts/throughput_bench.py", *argv])
    out_path = args.out or default_out()
    out_path.parent.mkdir(parents=True, exist_ok=True)
    if args.work:
        args.work.mkdir(parents=True, exist_ok=False)
        work = args.work.resolve()
    else:
        work = Path(tempfile.mkdtemp(prefix="mkb_throughput_"))
    log(f"work folder {work}")

    arch = ""
    if args.backend == "cuda":
        arch = os.environ.get("TORCH_CUDA_ARCH_LIST") or cuda_arch()
        if arch:
            os.environ["TORCH_CUDA_ARCH_LIST"] = arch  # both pipelines build the device's architecture
        log(f"TORCH_CUDA_ARCH_LIST={arch or '(unset: torch picks)'}")

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    args.mkb_help = mkb_options() if args.only in (None, "mkb") else ""  # which options this engine has
    known = known_task_ids()
    src_root = (args.solutions_src or REPO / "solutions" / args.backend).resolve()
    manifest = generate_candidates(args.backend, args.n, src_root, work / "solutions", known, args.wrong_fraction)
    (work / "manifest.json").write_text(json.dumps(manifest, indent=1))
    (work / "tasks.json").write_text(json.dumps(task_specs({m["task_id"] for m in manifest})))
    kinds: dict[str, int] = {}
    for m in manifest:
        kinds[m["kind"]] = kinds.get(m["kind"], 0) + 1
    log(f"{len(manifest)} candidates over {len({m['task_id'] for m in manifest})} tasks: {kinds}")
    host = host_info(args.backend, arch)
    host["candidate_kinds"] = kinds

    order = ["mkb", "kernelbench_style"] if args.order == "mkb-first" else ["kernelbench_style", "mkb"]
    todo = [p for p in order if args.only in (None, p)]
    margin = 15.0  # kill grace, trace parsing, writing
    deadline = t_begin + args.budget_s
    share = args.pipeline_budget_s or (deadline - time.monotonic() - margin) / max(1, len(todo))
    result: dict = {"mkb": {"skipped": True}, "kernelbench_style": {"skipped": True}, "host": host,
                    "command": command}

    def write() -> None:
        tmp = out_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1, default=str))
        os.replace(tmp, out_path)

    for name in todo:
        cap = min(share, deadline - time.monotonic() - margin)
        if _SIGNALLED or cap < 10:
            why = f"interrupted ({_SIGNALLED[0]})" if _SIGNALLED else "budget spent"
            log(f"{name}: skipped: {why}")
            result[name] = {"skipped": True, "reason": why, "n": 0, "complete": False}
            continue
        log(f"{name}: starting with a cap of {cap:.0f} s")
        try:
            fn = run_mkb if name == "mkb" else run_kernelbench_style
            result[name] = fn(args, work, manifest, cap)
        except Interrupted as exc:  # outside a running pipeline's wait (its own kill path handles that one)
            result[name] = {"error": f"interrupted ({exc})", "n": 0, "complete": False}
        except Exception as exc:  # one pipeline's failure must not lose the other's numbers
            result[name] = {"error": f"{exc!r}", "traceback": traceback.format_exc()[-3000:], "n": 0,
                            "complete": False}
        p = result[name]
        log(f"{name}: {p.get('n')} / {len(manifest)} in {p.get('wall_s')} s; statuses {p.get('statuses')}")
        write()
    host["total_s"] = round(time.monotonic() - t_begin, 1)
    if _SIGNALLED:
        host["interrupted_by"] = _SIGNALLED[0]
    write()
    for name in order:
        p = result[name]
        if p.get("error"):
            print(f"{name}: ERROR {p['error']}")
        if p.get("unexpected"):
            print(f"{name}: {len(p['unexpected'])} unexpected: " + "; ".join(p["unexpected"][:6]))
        if p.get("stderr_tail") and not p.get("n"):
            print(f"{name}: stderr tail:\n" + p["stderr_tail"][-1200:])
    print()
    print(f"Throughput, {args.backend}, {len(manifest)} candidates ({kinds}), host {host.get('gpu') or host.get('cpu_model', '')}")
    print()
    try:
        print(markdown(result, order))
    except Exception as exc:
        print(f"(table failed: {exc!r})")
    print()
    print(f"wrote {out_path} (total {host['total_s']} s; work folder {work})")
    return 0


if __name__ == "__main__":
    _ensure_importable()
    if len(sys.argv) > 1 and sys.argv[1] == "_kb":
        sys.exit(kb_child(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "_kb_eval":
        sys.exit(kb_eval_child(sys.argv[2]))
    sys.exit(main())
