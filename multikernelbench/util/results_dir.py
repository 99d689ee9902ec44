"""Where a measurement script writes when it is given no ``--out``: one rule for every script in ``scripts/``.

``$OUT/<name>`` on the device machine (its runner collects ``$OUT``), else
``~/.cache/multikernelbench/benchmarks/<name>``. Never the source tree: ``benchmarks/<topic>/`` is updated by
hand from these files, with the command that made them, so a stray run cannot overwrite committed results.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def default_out(name: str, env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("OUT"):
        return Path(env["OUT"]) / name
    return Path.home() / ".cache" / "multikernelbench" / "benchmarks" / name
