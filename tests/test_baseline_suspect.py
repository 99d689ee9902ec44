"""Untrusted baseline rows: scripts/mark_suspect_baseline.py marks a row whose median is far above its
fastest sample or whose independent repeat disagrees, and the baseline reader never uses a marked row."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from multikernelbench.baselines import Match, load_baseline

REPO = Path(__file__).resolve().parents[1]


def _row(task_id: str, eager: tuple[float, float], compiled: tuple[float, float] | None = None, **extra) -> dict:
    def stats(mn: float, med: float) -> dict:
        return {"min_ms": mn, "median_ms": med, "runs": 20, "method": "cuda_event"}

    row = {"task_id": task_id, "task_hash": f"h-{task_id}", "hardware": "NVIDIA H200", "backend": "cuda",
           "dtype": "float32", "flops": 1000, "bytes": 4_000_000, "eager": stats(*eager), **extra}
    if compiled:
        row["compiled"] = stats(*compiled)
    return row


def test_skewed_and_disagreeing_rows_are_marked_and_not_used(tmp_path):
    base = [_row("t.clean", (1.0, 1.01), (0.8, 0.81)), _row("t.skewed", (1.0, 1.2)),
            _row("t.compiled_skewed", (1.0, 1.0), (0.5, 0.6)), _row("t.repeat_off", (2.0, 2.0)),
            _row("t.repeat_ok", (3.0, 3.0)), _row("t.failed", (1.0, 1.0), error="timeout: x")]
    repeat = [_row("t.repeat_off", (2.0, 2.2)), _row("t.repeat_ok", (3.0, 3.05)), _row("t.clean", (1.0, 1.02))]
    src, rep, out, report = (tmp_path / n for n in ("b.jsonl", "r.jsonl", "m.jsonl", "spread.txt"))
    src.write_text("".join(json.dumps(r) + "\n" for r in base))
    rep.write_text("".join(json.dumps(r) + "\n" for r in repeat))
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "mark_suspect_baseline.py"), str(src), "--repeat",
                           str(rep), "--out", str(out), "--report", str(report)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    marked = {json.loads(line)["task_id"]: json.loads(line) for line in out.read_text().splitlines()}
    assert set(marked) == {r["task_id"] for r in base}  # nothing dropped
    suspect = {t for t, r in marked.items() if "suspect" in r}
    assert suspect == {"t.skewed", "t.compiled_skewed", "t.repeat_off"}, suspect
    assert "+10.0% in an independent repeat" in marked["t.repeat_off"]["suspect"]
    text = report.read_text()
    assert "3 marked suspect" in text and "eager: |diff| median 1.67%, max 10.0%, 1/3 over 3%" in text, text

    baseline = load_baseline(out)
    assert baseline.match("t.skewed", "h-t.skewed")[0] is Match.SUSPECT
    assert baseline.eager_fraction("t.skewed", "h-t.skewed") is None
    assert baseline.match("t.clean", "h-t.clean")[0] is Match.OK
    assert baseline.match("t.failed", "h-t.failed")[0] is Match.FAILED


@pytest.mark.slow
def test_the_packaged_baseline_covers_the_suite():
    """Every suite task has a row in the shipped H200 baseline (measured, failed or suspect: listed)."""
    from multikernelbench.tasks import load_suite

    baseline = load_baseline()
    missing = [t.id for t in load_suite() if t.id not in baseline.rows]
    assert not missing, missing[:10]


def test_list_skewed_names_the_rows_a_quiet_remeasure_takes(tmp_path):
    """``--list-skewed`` prints the ids of skewed rows over all given files (a later file's row for a task
    replaces an earlier one), and nothing else."""
    first, more = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in [
        _row("t.clean", (1.0, 1.01)), _row("t.skewed", (1.0, 1.2)), _row("t.fixed_later", (1.0, 1.3))]))
    more.write_text("".join(json.dumps(r) + "\n" for r in [
        _row("t.fixed_later", (1.0, 1.0)), _row("t.compiled_skewed", (1.0, 1.0), (0.5, 0.6))]))
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "mark_suspect_baseline.py"), str(first),
                           "--list-skewed", "--also", str(more)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split()) == ["t.compiled_skewed", "t.skewed"]
