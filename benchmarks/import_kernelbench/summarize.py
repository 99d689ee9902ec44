"""Summarise import tables (``import_table.json`` that `mkb tasks import --out DIR` writes) per category.

    python benchmarks/import_kernelbench/summarize.py DIR|LOG [DIR|LOG ...]

Prints a markdown table: problems, imported, imported with 3 derived (gate-passing) test shapes, flagged, not
imported; then the reasons, grouped by their first words.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path


def reason_class(text: str) -> str:
    text = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
    text = re.sub(r"\(.*?\)", "", text)
    return text.split(":")[0].strip()[:90]


_LINE = re.compile(r"^(\S+): (imported|NOT imported) \((\d+) derived test shapes(.*)\) \[")


def from_log(path: Path) -> list[dict]:
    """Rows from the importer's progress log (an import still running has no table yet)."""
    rows = []
    for line in path.read_text().splitlines():
        m = _LINE.match(line)
        if m:
            notes = [n for n in m.group(4).lstrip("; ").split("; ") if n]
            ok = m.group(2) == "imported"
            rows.append({"task_id": m.group(1), "imported": ok, "derived_shapes": int(m.group(3)),
                         "flags": notes if ok else [], "why": "" if ok else "; ".join(notes)})
    return rows


def main(argv: list[str]) -> int:
    by_id = {r["task_id"]: r for d in argv for r in (from_log(Path(d)) if Path(d).is_file() else
                                                     json.loads((Path(d) / "import_table.json").read_text()))}
    rows = list(by_id.values())  # a later table or log (a retry) replaces an earlier row of the same task
    per: dict[str, Counter] = defaultdict(Counter)
    reasons: Counter = Counter()
    for r in rows:
        cat = r["task_id"].rsplit(".", 1)[0]
        c = per[cat]
        c["problems"] += 1
        if r["imported"]:
            c["imported"] += 1
            c["3 derived"] += r["derived_shapes"] >= 3
            c["flagged"] += bool(r["flags"]) or r["derived_shapes"] < 3
            if not r["flags"] and r["derived_shapes"] < 3:
                reasons[("flag", "fewer than 3 scaled shapes pass: repeated with other seeds")] += 1
            for f in r["flags"]:
                reasons[("flag", reason_class(f))] += 1
        else:
            c["not imported"] += 1
            reasons[("not imported", reason_class(r["why"]))] += 1
    cols = ("problems", "imported", "3 derived", "flagged", "not imported")
    print("| category | " + " | ".join(cols) + " |")
    print("|---|" + "---|" * len(cols))
    total: Counter = Counter()
    for cat in sorted(per):
        total.update(per[cat])
        print(f"| {cat} | " + " | ".join(str(per[cat][c]) for c in cols) + " |")
    print("| **all** | " + " | ".join(str(total[c]) for c in cols) + " |")
    print("\n| kind | reason | problems |\n|---|---|---|")
    for (kind, why), n in reasons.most_common():
        print(f"| {kind} | {why} | {n} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
