"""Cost of handing a verified output to the parent (issue #40) against sampling it in the worker.

Per output size: the old path (the worker indexes the secret positions with tensor ops and sends ~6k values) and
the new ones, each timed end to end between two processes (a spawned child stands for the worker; spawned, not
forked, so that the parent's CUDA context never reaches a child). On the CPU: the raw bytes through the engine's
own framing (``whole``), or the values at the positions read with numpy above ``raw_outputs.RAW_LIMIT``
(``new``). On a GPU, what the engine does for an output over 1 MiB (engine/fresh.py ``_exported``): the worker
exports its allocation's CUDA IPC handle and the parent maps it, gathers its own positions and unmaps
(``ipc``); ``ipc_stage`` adds the device-to-device staging copy a Pallas output pays (Backend.stages_outputs).
Prints a table; the per-candidate cost is the per-output figure times the verified outputs of a timing (2 per
sample, the reference's as well as the candidate's: see engine/fresh.py).

    python benchmarks/verdict_outputs/bench_raw_outputs.py [--device cuda] [--repeat 20]
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import time
from multiprocessing.connection import Connection
from typing import Any

import torch

from multikernelbench.engine import cuda_ipc, protocol
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


def worker_loop(conn: Connection, numel: int, device: str, mode: str) -> None:
    """The child ("worker"): on each request, read the output the way ``mode`` says and send it; IPC modes keep
    the exported memory alive until the parent's next request (its answer), as the worker does."""
    t = torch.randn(numel, device=device)
    if t.is_cuda:
        torch.cuda.synchronize()
    keep: list[Any] = []
    while conn.recv_bytes(16):
        keep.clear()
        if mode == "old":
            payload: Any = [old_path(t, 7)]
        elif mode.startswith("ipc"):
            payload = [[cuda_ipc.export(t, 0, keep, stage=mode == "ipc_stage")]]
        else:
            payload = [[new_record(t, mode == "whole")]]
        protocol.send(conn, {"op": "bench"}, payload)


def parent_round(conn: Connection, mode: str) -> float:
    """The parent: ask, receive, and (new paths) sample at the positions; ms end to end."""
    t0 = time.perf_counter()
    conn.send_bytes(b"go")
    _header, got = protocol.recv(conn)
    if mode != "old":
        positions = secret_positions(7, POSITIONS, EDGE)
        rec = got[0][0]
        if "ipc" in rec:
            with cuda_ipc.IpcReader() as ipc:  # mapped, gathered and unmapped before the worker goes on
                ipc.values(rec, 0, positions, POSITIONS + 2 * EDGE)
        elif gathered_values(rec, 0, len(positions)) is None:
            values_at(rebuild(rec, 0, copy=False), positions, POSITIONS + 2 * EDGE)
    return (time.perf_counter() - t0) * 1e3


def timed(numel: int, device: str, mode: str, repeat: int) -> float:
    """Median over ``repeat`` rounds (after one unmeasured round) with a spawned child as the worker."""
    ctx = multiprocessing.get_context("spawn")
    conn, child_end = ctx.Pipe()
    child = ctx.Process(target=worker_loop, args=(child_end, numel, device, mode), daemon=True)
    child.start()
    child_end.close()
    parent_round(conn, mode)  # the child's first request pays its CUDA context and first allocation
    times = [parent_round(conn, mode) for _ in range(repeat)]
    conn.send_bytes(b"")
    child.join(30)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    modes = ("old", "ipc", "ipc_stage") if args.device.startswith("cuda") else ("old", "whole", "new")
    print(f"device {args.device}; ms per verified output (median of {args.repeat}), end to end between two "
          f"processes; modes: {', '.join(modes)} (module docstring); the last mode is what the engine does above "
          f"1 MiB on this device; per candidate: (last - old) x 4 outputs per sample x 20 / 40 samples")
    print(f"{'elements':>12} {'MB':>8} " + " ".join(f"{m + ' ms':>13}" for m in modes)
          + f" {'last-old':>9} {'per candidate, s (20 / 40 samples)':>36}")
    for numel in (4096, 1 << 16, 1 << 20, 1 << 21, 1 << 23, 1 << 27):  # 1<<21: relu's CPU bench output
        if numel > 1 << 23 and not args.device.startswith("cuda"):
            continue
        res = {mode: timed(numel, args.device, mode, args.repeat) for mode in modes}
        extra = res[modes[-1]] - res["old"]
        # Per sample: 2 verified outputs of the candidate and 2 of the reference (balanced renewals).
        per = [extra * 4 * n / 1e3 for n in (20, 40)]
        print(f"{numel:>12} {numel * 4 / 1e6:>8.1f} " + " ".join(f"{res[m]:>13.2f}" for m in modes)
              + f" {extra:>9.2f} {per[0]:>17.2f} / {per[1]:.2f}")
    if args.device == "cpu":
        cpu_costs(args.repeat)


def cpu_costs(repeat: int) -> None:
    """In one process, no socket: the worker's read + encode and the parent's decode + sampling (CPU work that
    a loaded host measures more steadily than the end-to-end round trip)."""
    def med(fn) -> float:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    positions = secret_positions(7, POSITIONS, EDGE)
    print(f"\nin-process CPU work, ms per verified output (median of {repeat})")
    print(f"{'elements':>12} {'old worker':>11} {'old parent':>11} {'new worker':>11} {'new parent':>11}")
    for numel in (4096, 1 << 16, 1 << 20, 1 << 21, 1 << 23):
        t = torch.randn(numel)
        old_blob = protocol.encode({"op": "b"}, [old_path(t, 7)])
        new_blob = protocol.encode({"op": "b"}, [[new_record(t, False)]])

        def parent_new() -> None:
            rec = protocol.decode(new_blob)[1][0][0]
            if gathered_values(rec, 0, len(positions)) is None:
                values_at(rebuild(rec, 0, copy=False), positions, POSITIONS + 2 * EDGE)

        print(f"{numel:>12} {med(lambda: protocol.encode({'op': 'b'}, [old_path(t, 7)])):>11.3f} "
              f"{med(lambda: protocol.decode(old_blob)):>11.3f} "
              f"{med(lambda: protocol.encode({'op': 'b'}, [[new_record(t, False)]])):>11.3f} {med(parent_new):>11.3f}")


if __name__ == "__main__":
    main()
