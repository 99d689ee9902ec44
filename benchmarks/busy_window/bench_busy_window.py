"""What the busy-thread watch after a timed forward costs and what it still sees (issue #44).

The worker watches its other threads for CPU work left running after the candidate's forward returned
(``anticheat.runtime.busy_threads``), inside the GPU's exclusive clock turn. This prints, for the exact window
(schedstat, the default where the kernel keeps it) and the old tick window (200 ms, ``window_s=0.2``): the wall
each watch costs with no background thread, and how often a background thread busy a given share of the time
(bursts of 2 ms) is reported, out of ``--trials`` watches, optionally with ``--load`` busy processes beside it.

    python benchmarks/busy_window/bench_busy_window.py --trials 20 --load 4
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import threading
import time

from multikernelbench.anticheat.runtime import busy_threads


def _burn(stop: threading.Event, share: float) -> None:
    on = 0.002
    off = on * (1 - share) / share
    while not stop.is_set():
        end = time.perf_counter() + on
        while time.perf_counter() < end:
            pass
        time.sleep(off)


def _spin_forever() -> None:
    while True:
        pass


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--load", type=int, default=0, help="busy processes beside the watch")
    args = ap.parse_args()
    hogs = [multiprocessing.Process(target=_spin_forever, daemon=True) for _ in range(args.load)]
    for h in hogs:
        h.start()
    try:
        print(f"load: {args.load} busy processes; {args.trials} watches per cell")
        print("| window | wall per watch, no thread (p50 ms) | reported at share 0.05 | 0.15 | 0.3 | 1.0 |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, window in (("exact (default)", None), ("ticks, 200 ms", 0.2)):
            walls = []
            for _ in range(args.trials):
                t0 = time.perf_counter()
                busy_threads(window_s=window)
                walls.append((time.perf_counter() - t0) * 1e3)
            cells = []
            for share in (0.05, 0.15, 0.3, 1.0):
                stop = threading.Event()
                t = threading.Thread(target=_burn, args=(stop, share), daemon=True)
                t.start()
                seen = sum(bool(busy_threads(window_s=window)) for _ in range(args.trials))
                stop.set()
                t.join()
                cells.append(f"{seen} / {args.trials}")
            print(f"| {label} | {statistics.median(walls):.0f} | " + " | ".join(cells) + " |")
    finally:
        for h in hogs:
            h.kill()


if __name__ == "__main__":
    main()
