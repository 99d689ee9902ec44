"""The precompiled headers' cap (backends/extbuild/pch_cache.py): least recently used flag sets go, the run's own,
a locked one and a recently used one stay; a CPU run prunes when it starts (CpuBackend.prepare_builds)."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from multikernelbench.backends.cpu import CpuBackend
from multikernelbench.backends.extbuild import light_main
from multikernelbench.backends.extbuild.cuda_build import _PCH_GCH
from multikernelbench.backends.extbuild.cuda_warm import pch_dirs
from multikernelbench.backends.extbuild.pch_cache import prune, sets

MB = 1 << 20


def _set(root: Path, sig: str, mb: int, age_s: float) -> Path:
    folder = root / sig
    folder.mkdir(parents=True)
    (folder / "torch_extension.h.gch").write_bytes(os.urandom(mb * MB))  # real blocks: sizes are on-disk
    t = time.time() - age_s
    os.utime(folder, (t, t))
    return folder


def test_least_recently_used_sets_go_first_and_kept_locked_or_recent_ones_stay(tmp_path):
    old, older, mine, locked, fresh = (_set(tmp_path, f"{i:016x}", 2, age)
                                       for i, age in enumerate((5e5, 9e5, 8e5, 7e5, 60)))
    (tmp_path / "not-a-set").mkdir()
    fd = os.open(tmp_path / f"{locked.name}.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # a warmer writing this set
    try:
        report = prune(tmp_path, max_bytes=int(4.5 * MB), keep=[mine])
    finally:
        os.close(fd)
    assert [s.path for s in report.removed] == [older, old]  # LRU first, until the rest fits
    assert {s.path for s in report.busy} == {mine, locked, fresh}  # over the cap still, and said so
    assert not older.exists() and not old.exists() and mine.exists() and locked.exists() and fresh.exists()
    assert (tmp_path / "not-a-set").exists() and report.kept_bytes == 6 * MB
    assert [s.path for s in sets(tmp_path)] == [mine, locked, fresh]


def test_nothing_goes_under_the_cap(tmp_path):
    a = _set(tmp_path, "a" * 16, 1, 9e5)
    assert prune(tmp_path, max_bytes=10 * MB).removed == [] and a.exists()


def test_a_cpu_run_prunes_stale_sets_and_touches_its_own(tmp_path):
    """Its own sets' folders (where the flags put them) hold a stand-in .gch, so no warmer starts; a stale set of
    another venv beyond the cap goes, the run's own are touched (used now) and stay."""
    backend = CpuBackend(pch_root=str(tmp_path), pch_cache_gb=0.001)  # 1 MB
    own = list(pch_dirs(tmp_path, backend.WARM_VARIANTS).values())
    for folder in own:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / _PCH_GCH).write_bytes(os.urandom(MB))
        shim, header, gch, analysis = light_main.paths(folder)  # and the light main.cpp header's products
        (shim / "torch").mkdir(parents=True)
        for p in (shim / "torch" / "extension.h", header, gch, analysis):
            p.write_text("x")
        os.utime(folder, (1.0, 1.0))  # older than the stale one: kept because the run asks for it
    stale = _set(tmp_path, "f" * 16, 2, 9e5)
    assert backend.prepare_builds(tmp_path / "builds") is None  # every header there: no warmer
    assert not stale.exists()
    assert all(f.exists() and time.time() - f.stat().st_mtime < 60 for f in own)
    kept = CpuBackend(pch_root=str(tmp_path), pch_cache_gb=0.0)  # 0: never prune
    again = _set(tmp_path, "e" * 16, 2, 9e5)
    assert kept.prepare_builds(tmp_path / "builds") is None and again.exists()
