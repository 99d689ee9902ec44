"""Print one line per result of `mkb eval --json` output, and check each against what its solution expects.

    python scripts/summarize_eval.py RESULTS.jsonl [SOLUTIONS_DIR]

With SOLUTIONS_DIR, a candidate whose file declares ``# expect: <status>`` must have that status and every
other one ``correct``; the last line counts the unexpected ones (exit status 1 when there are any). Used by
scripts/device_run.sh on the GPU host, where the output's tail is all an operator sees.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from multikernelbench.flags import FlagKind, from_row, of_kind


def main(argv: list[str]) -> int:
    rows = []
    for line in Path(argv[0]).read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    unexpected = 0
    f = lambda x: "-" if x is None else f"{x:.3g}"  # noqa: E731
    for r in rows:
        expect = r.get("expect") or "correct"
        ok = r["status"] == expect
        unexpected += not ok
        ct = r.get("candidate_timing") or {}
        fresh = next((x.text for x in of_kind(from_row(r.get("flags"), r.get("flag_kinds")), FlagKind.FRESH_INPUTS)),
                     "")
        print(f"{'ok ' if ok else 'BAD'} {r.get('candidate', '')[:44]:44s} {r['status']:14s} build={f(r.get('compile_time_s'))}s "
              f"t={f(ct.get('median_ms'))}ms x_eager={f(r.get('speedup'))} x_compile={f(r.get('speedup_compile'))} "
              f"roofline={f(r.get('roofline_fraction'))} {ct.get('method', '')} {fresh[:70]} "
              f"{'' if ok else r.get('message', '')[:200]}")
    print(f"{len(rows)} results, {unexpected} unexpected")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
