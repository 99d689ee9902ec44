"""The trusted CUDA/C++ cache warmer's process: which products it makes, in which order, and its log.

    python -m multikernelbench.backends.extbuild.warm_jobs --warm-pch ROOT [--light] [--side-by-side] ...

Started by :class:`cuda_warm.PchWarmer` (which holds what each product is); here is only the schedule: the
products as jobs in lanes, run in threads, each job's report one JSON line of the log with its wall time, and
each folder's warming mark removed when the last job filling it is done.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from multikernelbench.backends.extbuild import cuda_warm, warm_wait


def _say(**fields: Any) -> None:
    """One line of the warmer's log (JSON, with the wall time: the parent's trace places it on the run's clock)."""
    print(json.dumps({**fields, "t": round(time.time(), 3)}), flush=True)


Job = tuple[str, Path, Callable[[], Any]]  # (report key, folder it fills, make)


def plan(pch_root: Path, texts: list, sets: list | None, side_by_side: bool,
         make_pch: Callable[[list], Any]) -> list[list[Job]]:
    """The warmer's jobs in lanes (each lane's jobs one after another, the lanes side by side). ``texts``: the
    ``extra_cflags`` sets' build.ninja texts (main.cpp's PCH); ``sets``: the ``extra_cuda_cflags`` sets' ninja
    variables (light analyses and host prefixes; None: C++ only).

    Side by side (a host with cores to spare) every product of every flag set is a lane of its own: the H200's
    first builds waited for the second set's host prefix while the first one was made (27.5 s, then 33.8 s,
    2026-12-03). On a small host (a niced warmer) the analyses come first and the PCH after them, beside the
    host prefixes: more jobs at once on 2 cores only made each of them later."""
    whole: list[list[Job]] = [[("pch", pch_root, partial(make_pch, texts))]]
    pch: list[list[Job]] = ([[("pch", pch_root, partial(make_pch, [t]))] for t in texts] if side_by_side and texts
                            else whole)
    if sets is None:
        return pch
    light_root = cuda_warm.light_root_of(pch_root)
    groups = [[s] for s in sets] if side_by_side and sets else [sets]  # an empty group still unmarks
    host: list[Job] = [("host_pch", light_root / "host", partial(cuda_warm.warm_host_pch, light_root, g))
                       for g in groups]
    light: list[Job] = [("light", light_root / "analysis", partial(cuda_warm.warm_light, light_root, flag_sets=g))
                        for g in groups]
    if side_by_side:
        return [[job] for job in light + host] + pch
    return [host, light + whole[0]]


def run_lanes(lanes: list[list[Job]], say: Callable[..., None] | None = None) -> None:
    """Run the lanes in threads; each job's report is one log line. A folder's warming mark stands until the
    last job filling it is done (builds wait while it stands: see :mod:`warm_wait`)."""
    import threading

    say = say or _say
    left: dict[Path, int] = {}
    for lane in lanes:
        for _, folder, _ in lane:
            left[folder] = left.get(folder, 0) + 1
    lock = threading.Lock()

    def job(name: str, folder: Path, make: Callable[[], Any]) -> None:
        # The mark goes before the report: a reader that sees a folder's last line finds it unmarked (the
        # other order lost that race on CI's stop 66).
        try:
            report = make()
        except Exception as exc:  # noqa: BLE001 - reported; the builds go on without it
            report = [{"state": "error", "error": repr(exc)[:500]}]
        finally:
            with lock:
                left[folder] -= 1
                if not left[folder]:
                    warm_wait.unmark(folder)
        say(**{name: report})

    def run(lane: list[Job]) -> None:
        for j in lane:
            job(*j)

    threads = [threading.Thread(target=run, args=(lane,), name=f"warm-{i}") for i, lane in enumerate(lanes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main() -> None:
    """The warmer process started by :class:`cuda_warm.PchWarmer`."""
    import argparse

    _say(event="started")

    ap = argparse.ArgumentParser()
    ap.add_argument("--warm-pch", required=True, help="PCH root folder")
    ap.add_argument("--variants", default=None, help="JSON list of extra_cflags lists")
    ap.add_argument("--cpu", action="store_true", help="C++-only extensions (no CUDA include paths)")
    ap.add_argument("--wait", action="store_true", help="wait for a header another process is making")
    ap.add_argument("--light", action="store_true", help="first the light-header analyses (nvcc flags)")
    ap.add_argument("--cuda-variants", default=None, help="JSON list of extra_cuda_cflags lists (default: --variants)")
    ap.add_argument("--side-by-side", action="store_true",
                    help="make the analyses, host prefixes and PCH at once (a host with cores to spare)")
    a = ap.parse_args()
    variants = tuple(tuple(v) for v in json.loads(a.variants)) if a.variants else cuda_warm.WARM_VARIANTS
    cuda_variants = tuple(tuple(v) for v in json.loads(a.cuda_variants)) if a.cuda_variants else variants
    # Every flag set first (asking torch's loader patches it process-wide), then the products side by side:
    # builds wait on each of them (the analyses before a .cu starts, main.cpp's PCH, the host prefix at the
    # end of a .cu), and one after another the PCH came ~30 s into a run, after the first builds had given up
    # waiting for it (H200, 2026-12-02: those builds took 43-48 CPU-s, later ones 30-37).
    texts = cuda_warm.ninja_texts(variants, with_cuda=not a.cpu)
    sets: list[tuple[tuple[str, ...], dict[str, str]]] | None = None
    if a.light:
        try:
            sets = cuda_warm.host_pch_flags(cuda_variants)
        except Exception as exc:  # noqa: BLE001
            _say(host_pch=[{"state": "error", "error": repr(exc)[:500]}])
            sets = []
    run_lanes(plan(Path(a.warm_pch), texts, sets, a.side_by_side,
                   lambda chosen: cuda_warm.warm_pch(a.warm_pch, variants, with_cuda=not a.cpu, wait=a.wait,
                                                      texts=chosen)))


if __name__ == "__main__":
    main()
