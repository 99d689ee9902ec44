"""A reward for RL trainers (verl's ``custom_reward_function`` signature) that asks ``mkb serve`` for it.

verl calls ``compute_score(data_source, solution_str, ground_truth, extra_info)`` once per sample; point its
``custom_reward_function.path`` at this file (or import :func:`compute_score`). The task id comes from
``ground_truth`` (or ``extra_info["task_id"]``), the service from ``extra_info["mkb_url"]`` or the
``MKB_SERVE_URL`` environment variable, the token from ``MKB_SERVE_TOKEN``. The trainer's process holds
nothing but the response text: the expected outputs, seeds and timing stay in the service. A restart of the
service costs a delay, not a sample: the client retries with backoff, the service keeps accepted jobs, and a
job it no longer knows is submitted again (multikernelbench/client.py).

The reward is speedup-shaped and bounded: 0 for anything that is not a correct kernel (no code, compile
error, wrong output, crash, timeout, a detected cheat); a correct kernel earns ``CORRECT_FLOOR`` plus a share
that grows with log2 of its speedup over PyTorch eager, reaching 1 at ``SPEEDUP_CAP`` (a correct but slow
kernel still beats a wrong one; a lucky 50x on a tiny task cannot dominate a batch).
"""

from __future__ import annotations

import math
import os
from typing import Any

from multikernelbench.extract import extract_code

CORRECT_FLOOR = 0.3
SPEEDUP_CAP = 4.0


def shaped_reward(result: dict) -> float:
    """The reward of one result record (``EvalResult.to_dict()``)."""
    if result.get("status") != "correct":
        return 0.0
    speedup = result.get("speedup")
    if not speedup or speedup <= 0:  # correct, untimed (a correctness-only service)
        return CORRECT_FLOOR
    share = max(0.0, min(1.0, math.log2(1.0 + speedup) / math.log2(1.0 + SPEEDUP_CAP)))
    return CORRECT_FLOOR + (1.0 - CORRECT_FLOOR) * share


def compute_score(data_source: str, solution_str: str, ground_truth: Any, extra_info: dict | None = None,
                  **_: Any) -> float:
    from multikernelbench.client import Client, ServiceError

    extra = extra_info or {}
    task_id = extra.get("task_id") or (ground_truth if isinstance(ground_truth, str) else None)
    if not task_id:
        raise ValueError("compute_score needs the task id as ground_truth or extra_info['task_id']")
    source = extract_code(solution_str)
    if not source:
        return 0.0
    url = extra.get("mkb_url") or os.environ.get("MKB_SERVE_URL", "http://127.0.0.1:8088")
    with Client(url, os.environ.get("MKB_SERVE_TOKEN"), client_name=extra.get("mkb_client")) as client:
        try:
            result = client.evaluate(task_id, source, fresh_shapes=extra.get("fresh_shapes"))
        except ServiceError as exc:
            if exc.status == 500:  # the harness failed on it: no signal either way
                return 0.0
            raise
    return shaped_reward(result)
