"""Cost of handing a verified output to the parent as raw bytes (issue #40) against sampling it in the worker.

Per output size: the old path (the worker indexes the secret positions with tensor ops and sends ~6k values) and
the new one (the worker copies the raw bytes with ctypes, they cross a real socketpair through the engine's own
framing, the parent rebuilds and samples them), each timed end to end in one process pair. Prints a table;
the per-candidate cost is this per-output figure times the verified outputs of a timing (2 per sample, the
reference's as well as the candidate's: see engine/fresh.py).

    python benchmarks/verdict_outputs/bench_raw_outputs.py [--device cuda] [--repeat 20]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import threading
import time
from multiprocessing.connection import Connection

import torch

from multikernelbench.engine import protocol
from multikernelbench.engine.checking import sample_flat, sample_positions
from multikernelbench.engine.raw_outputs import (gathered_record, gathered_values, needs_positions, read_raw, rebuild,
                                                 secret_positions, values_at)

POSITIONS, EDGE = 4096, 1024


def old_path(t: torch.Tensor, seed: int) -> list[torch.Tensor]:
    positions = sample_positions(seed, POSITIONS, EDGE)
    return [sample_flat(t.detach().contiguous(), positions, POSITIONS + 2 * EDGE).to("cpu").clone()]


def new_record(t: torch.Tensor, whole: bool) -> dict:
    if whole or not needs_positions(t):
        return dict(read_raw(t, 0))
    return gathered_record(t, 0, secret_positions(7, POSITIONS, EDGE), POSITIONS + 2 * EDGE)


def one_round(conn_w: Connection, conn_p: Connection, t: torch.Tensor, mode: str) -> float:
    def worker() -> None:
        payload = [old_path(t, 7)] if mode == "old" else [[new_record(t, mode == "whole")]]
        protocol.send(conn_w, {"op": "bench"}, payload)

    t0 = time.perf_counter()
    sender = threading.Thread(target=worker)  # the socket buffer is small: the parent reads meanwhile
    sender.start()
    _header, got = protocol.recv(conn_p)
    sender.join()
    if mode != "old":
        positions = secret_positions(7, POSITIONS, EDGE)
        rec = got[0][0]
        if gathered_values(rec, 0, len(positions)) is None:
            values_at(rebuild(rec, 0, copy=False), positions, POSITIONS + 2 * EDGE)
    return (time.perf_counter() - t0) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    s1, s2 = socket.socketpair()  # what the engine's worker channel is
    cw, cp = Connection(os.dup(s1.fileno())), Connection(os.dup(s2.fileno()))
    print(f"device {args.device}; ms per verified output (median of {args.repeat}); old = sampled with tensor ops "
          "in the worker; whole = every byte to the parent; new = whole up to raw_outputs.RAW_LIMIT, above it the "
          "values at the positions read with numpy")
    print(f"{'elements':>12} {'MB':>8} {'old ms':>8} {'whole ms':>9} {'new ms':>8} {'new-old':>8} "
          f"{'per candidate, s (20 / 40 samples)':>36}")
    for numel in (4096, 1 << 16, 1 << 20, 1 << 21, 1 << 23):  # 1<<21: activation.relu's CPU bench output
        t = torch.randn(numel, device=args.device)
        res = {mode: statistics.median([one_round(cw, cp, t, mode) for _ in range(args.repeat)])
               for mode in ("old", "whole", "new")}
        extra = res["new"] - res["old"]
        # Per sample: 2 verified outputs of the candidate and 2 of the reference (balanced renewals).
        per = [extra * 4 * n / 1e3 for n in (20, 40)]
        print(f"{numel:>12} {numel * 4 / 1e6:>8.1f} {res['old']:>8.2f} {res['whole']:>9.2f} {res['new']:>8.2f} {extra:>8.2f} "
              f"{per[0]:>17.2f} / {per[1]:.2f}")


if __name__ == "__main__":
    main()
