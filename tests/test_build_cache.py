"""The build cache's cap and ``mkb cache`` (issue #41, quotas): least recently used candidates' builds go first,
never one in use, never the harness's own folders; a run ends under its cap."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from multikernelbench.engine import build_cache

MB = 1_000_000


def _build(root: Path, name: str, mb: float, age_s: float, backend: str = "cpu") -> Path:
    folder = root / backend / name
    folder.mkdir(parents=True)
    (folder / "mod.so").write_bytes(b"\0" * int(mb * MB))
    then = time.time() - age_s
    os.utime(folder, (then, then))
    return folder


@pytest.fixture
def cache(tmp_path) -> Path:
    root = tmp_path / "builds"
    _build(root, "a" * 20, 3, age_s=3 * 86400)
    _build(root, "b" * 20, 3, age_s=2 * 86400)
    _build(root, "c" * 20, 3, age_s=3600)
    _build(root, "d" * 20, 3, age_s=30)  # used half a minute ago: maybe loaded right now
    _build(root, "e" * 20, 1, age_s=5 * 86400, backend="cuda")
    (root / "cpu" / "reference").mkdir()  # the harness's own: never pruned
    (root / "cpu" / "reference" / "x.bin").write_bytes(b"\0" * 4 * MB)
    return root


def test_entries_are_the_candidates_builds_oldest_first(cache):
    got = build_cache.entries(cache)
    assert [e.path.name[0] for e in got] == ["e", "a", "b", "c", "d"]
    assert sum(e.size_bytes for e in got) == 13 * MB


def test_prune_to_a_size_removes_the_least_recently_used(cache):
    report = build_cache.prune(cache, max_bytes=7 * MB)
    assert sorted(e.path.name[0] for e in report.removed) == ["a", "b", "e"]
    assert report.kept_bytes == 6 * MB and report.freed_bytes == 7 * MB
    assert (cache / "cpu" / ("c" * 20)).is_dir() and (cache / "cpu" / "reference" / "x.bin").is_file()


def test_a_recent_or_building_folder_is_never_removed(cache):
    held = open(cache / "cpu" / ("a" * 20) / build_cache.LOCK, "a+")
    fcntl.flock(held, fcntl.LOCK_EX)  # a build running in it
    try:
        report = build_cache.prune(cache, max_bytes=0)
    finally:
        held.close()
    kept = sorted(e.path.name[0] for e in report.busy)
    assert kept == ["a", "d"], kept
    assert (cache / "cpu" / ("a" * 20)).is_dir() and (cache / "cpu" / ("d" * 20)).is_dir()
    assert not (cache / "cpu" / ("c" * 20)).exists()


def test_prune_by_age(cache):
    report = build_cache.prune(cache, older_than_s=86400)
    assert sorted(e.path.name[0] for e in report.removed) == ["a", "b", "e"]


def _mkb(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "multikernelbench.cli.main", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.slow
def test_mkb_cache_list_and_prune(cache):
    listed = _mkb("cache", "list", "--build-root", str(cache))
    assert listed.returncode == 0, listed.stderr
    assert "5 builds, 13.0 MB" in listed.stdout
    usage = _mkb("cache", "prune", "--build-root", str(cache))
    assert usage.returncode != 0 and "--max-gb or --older-than-days" in usage.stderr
    pruned = _mkb("cache", "prune", "--build-root", str(cache), "--older-than-days", "1")
    assert pruned.returncode == 0, pruned.stderr
    assert "removed 3 builds (7.0 MB)" in pruned.stdout
    assert [e.path.name[0] for e in build_cache.entries(cache)] == ["c", "d"]


@pytest.mark.slow
def test_a_run_ends_under_its_cap_and_keeps_what_it_used(suite, tmp_path):
    """A real CPU evaluation with a cap of 2 MB over a cache holding 9 MB of older builds: the old ones go, the
    build the run just made (used seconds ago) stays, and the cache's mtime marks it used."""
    from multikernelbench.engine.candidates import Candidate
    from multikernelbench.engine.config import EngineConfig
    from multikernelbench.engine.runner import Runner
    from multikernelbench.records import Status

    root = tmp_path / "builds"
    for k, name in enumerate("abc"):
        _build(root, name * 20, 3, age_s=86400 * (k + 1))
    relu = suite["activation.relu"]
    src = (Path(__file__).resolve().parents[1] / "solutions" / "cpu" / "activation.relu.py").read_text()
    cand = Candidate(task_id=relu.id, source=src, label="relu")
    runner = Runner(EngineConfig(backend="cpu", build_root=root, allow_code_execution=True, skip_timing=True,
                                 build_cache_gb=0.002), progress=False)
    result = runner.evaluate([relu], [cand])[0]
    assert result.status == Status.CORRECT, result.message
    assert runner.pruned is not None and len(runner.pruned.removed) == 3
    left = build_cache.entries(root)
    assert [e.path.name for e in left] == [cand.code_hash] and time.time() - left[0].last_used < 600
