"""Per-pipeline summaries (the JSON fields) and the markdown table printed at the end."""

from __future__ import annotations

from .common import percentile, rnd


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
