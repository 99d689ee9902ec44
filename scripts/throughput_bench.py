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

``--per-build``: instead of the pipelines, each of ``--n`` candidates (default 5, distinct shipped solutions)
built three ways, every build in a fresh process with its own empty cache: ``stock`` (torch's
``load_inline``), ``builder`` (the cuda backend's FastExtensionBuilder as before the light header path) and
``light`` (the same builder with the light header path); the modes run one after the other, the candidates of
one mode side by side. Result: ``{"per_build": {...}, "host": {...}, "command": ...}``.

The code lives in ``scripts/throughput/`` (one module per part); this file is the entry point.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _ensure_importable() -> None:
    """The package ``throughput`` sits beside this file; the task loader comes from the installed project, or
    from this checkout (the children inherit the path)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if importlib.util.find_spec("multikernelbench") is None:
        sys.path.insert(0, str(REPO))
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)


if __name__ == "__main__":
    _ensure_importable()
    if len(sys.argv) > 1 and sys.argv[1] == "_kb":
        from throughput.kb_pipeline import kb_child

        sys.exit(kb_child(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "_kb_eval":
        from throughput.kb_eval import kb_eval_child

        sys.exit(kb_eval_child(sys.argv[2]))
    if len(sys.argv) > 1 and sys.argv[1] == "_build_one":
        from throughput.per_build import build_one_child

        sys.exit(build_one_child(sys.argv[2:]))
    from throughput.cli import main

    sys.exit(main())
