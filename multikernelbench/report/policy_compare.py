"""``mkb report --compare-policies``: per task, where the ``mkb`` and ``kernelbench`` verdicts differ.

The same labelled sample (model, strategy, task, backend, sample index) judged under both policies is one
pair; a pair whose statuses differ is listed with both verdicts and the mkb message (usually the rule that
only mkb enforces: library compute in forward, no own kernel ran).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from multikernelbench.store import StoredResult


@dataclass(frozen=True)
class Difference:
    task_id: str
    model: str
    sample_index: int
    mkb: str
    kernelbench: str
    why: str


def compare(stored: Iterable[StoredResult]) -> tuple[int, list[Difference], Counter]:
    """(pairs judged under both policies, the pairs that differ, counts of (mkb, kernelbench) verdicts)."""
    by_key: dict[tuple, dict[str, StoredResult]] = {}
    for s in stored:
        key = (s.label.model, s.label.strategy, s.result.task_id, s.result.backend, s.label.sample_index)
        by_key.setdefault(key, {})[s.result.policy] = s
    pairs = 0
    diffs: list[Difference] = []
    counts: Counter = Counter()
    for (model, _strategy, task_id, _backend, idx), per in sorted(by_key.items()):
        if "mkb" not in per or "kernelbench" not in per:
            continue
        pairs += 1
        a, b = per["mkb"].result, per["kernelbench"].result
        counts[(a.status.value, b.status.value)] += 1
        if a.status != b.status:
            diffs.append(Difference(task_id, model, idx, a.status.value, b.status.value,
                                    " ".join(a.message.split())[:160]))
    return pairs, diffs, counts


def render(pairs: int, diffs: list[Difference], counts: Counter) -> str:
    lines = [f"{pairs} samples judged under both policies; {len(diffs)} verdicts differ", "",
             "| mkb | kernelbench | samples |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {n} |" for (a, b), n in sorted(counts.items())]
    if diffs:
        lines += ["", "| task | model | sample | mkb | kernelbench | why (mkb) |", "|---|---|---|---|---|---|"]
        lines += [f"| {d.task_id} | {d.model} | {d.sample_index} | {d.mkb} | {d.kernelbench} | "
                  f"{d.why.replace('|', '/')} |" for d in diffs]
    return "\n".join(lines)
