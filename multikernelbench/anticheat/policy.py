"""Evaluation policies: which rule decides that a correct candidate did the task's work itself.

``mkb`` (default): the task's compute must run in the candidate's own kernel, the static reference-op /
library-op / reference-model rules and the runtime dispatcher and own-kernel evidence enforce it
(``AntiCheatConfig.require_custom_kernel``). ``kernelbench``: PyTorch ops are allowed in ``forward``, as
KernelBench's own evaluation allows, so exactly that family is off; every other defence stays on (timing
integrity and the clock audit, fresh inputs, the sandbox, precision, streams and threads, patches).

The policy is stored on every result and is part of its store key, so a result judged under one policy is
never served, counted or averaged as a result of the other.
"""

from __future__ import annotations

from multikernelbench.anticheat.config import AntiCheatConfig

MKB = "mkb"
KERNELBENCH = "kernelbench"
POLICIES = (MKB, KERNELBENCH)


class PolicyError(ValueError):
    """An unknown policy name."""


def apply(policy: str, anticheat: AntiCheatConfig) -> AntiCheatConfig:
    """``anticheat`` switched for ``policy`` (in place, returned): kernelbench turns off only the own-kernel
    family; mkb leaves the switches as given (harness self-tests turn that family off themselves)."""
    if policy not in POLICIES:
        raise PolicyError(f"unknown policy {policy!r}: use one of {', '.join(POLICIES)}")
    if policy == KERNELBENCH:
        anticheat.require_custom_kernel = False
    return anticheat
