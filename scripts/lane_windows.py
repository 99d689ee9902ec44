"""Did any step of one candidate run inside another's clock? Reads an ``mkb eval --trace`` file (lanes sharing a
GPU: docs/lanes.md) and prints the clocks, the foreign steps found inside them, and how many check windows of
different candidates overlapped; exits 1 when a foreign step was found.

    python scripts/lane_windows.py /tmp/mkb_tp_lanes_auto/mkb/trace.log
"""

from __future__ import annotations

import sys

from multikernelbench.engine.trace_windows import check, request_spans


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    found = check(request_spans(argv[0]))
    print(found.summary())
    for line in found.foreign[:20]:
        print("  " + line)
    return 1 if found.foreign else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
