"""Executing mode of the metric: kernel sources in, sample records out, via the evaluation engine.

Running model-written code is dangerous, so this refuses unless the caller opted in exactly as the engine
requires (``allow_code_execution=True`` or ``MKB_ALLOW_CODE_EXECUTION=1``); the check comes before the
engine is even imported.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

OPT_IN_ENV = "MKB_ALLOW_CODE_EXECUTION"


class CodeExecutionNotAllowed(PermissionError):
    """Raised when kernel sources would be run without the explicit opt-in."""


def execution_allowed(allow_code_execution: bool = False) -> bool:
    return bool(allow_code_execution) or os.environ.get(OPT_IN_ENV, "") == "1"


def require_opt_in(allow_code_execution: bool = False) -> None:
    if not execution_allowed(allow_code_execution):
        raise CodeExecutionNotAllowed(
            "predictions are kernel sources, and scoring them means compiling and running untrusted "
            f"model-written code. Opt in with allow_code_execution=True or {OPT_IN_ENV}=1, preferably "
            "inside a sandbox (container or VM) without credentials.")


def records_from_sources(sources: Sequence[Sequence[str]], task_ids: Sequence[str], backend: str | None = None,
                         allow_code_execution: bool = False, config: Any = None) -> list[list[dict[str, Any]]]:
    """Evaluate ``sources[i][j]`` (sample j of task ``task_ids[i]``) and return the scorer's records."""
    require_opt_in(allow_code_execution)
    if len(sources) != len(task_ids):
        raise ValueError(f"{len(sources)} source lists but {len(task_ids)} task ids")
    raise NotImplementedError("the evaluation engine (multikernelbench.engine.runner) is not available yet")
