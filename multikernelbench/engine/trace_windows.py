"""The device windows of a run, read back from its ``--trace`` file: did any step of one candidate run inside
another's clock?

Why from the trace: lanes sharing a GPU promise that nothing of another candidate runs there while a clock
runs (engine/gpu_turns.py). The trace stamps every worker request's start and end in one clock, written inside
the turn that covers the request, so the windows it shows are ordered as the turns were: a test (CPU lanes,
tests/test_lane_turns.py) and a GPU run (``python scripts/lane_windows.py TRACE``) check the promise alike.
Stamps have 0.1 s resolution and are monotone, so windows that only touch are apart, never overlapping.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

Span = tuple[float, float]

#: Worker requests that run on the device, as the trace names them (``Message.op()``), the ends of workers and the
#: parent's check of the timed calls' outputs (``verify``: its reference runs on the device too). Builds and
#: torch.compile's own compiling (outside its turns) run on the CPU beside clocks by design.
DEVICE_STEPS = ("load", "check", "prepare", "time", "end_workers", "verify")
#: The clocks: timing requests (the candidate's and the clean reference's) and a compile request's device turns.
CLOCKS = ("time", "turn")


def _parse(line: str) -> tuple[float, str, str] | None:
    """``HH:MM:SS +   12.3s <who>: <what>`` -> (12.3, who, what)."""
    try:
        head, rest = line.split("+", 1)[1].split("s ", 1)
        who, what = rest.split(": ", 1)
        return float(head), who, what
    except ValueError:
        return None


def request_spans(trace: Path | str) -> dict[str, dict[str, list[Span]]]:
    """Per candidate (its trace name) and step kind: its windows, each start paired with the next end (one
    candidate's steps follow one another in its lane). ``turn``: a compile request's device turns."""
    opened: dict[tuple[str, str], float] = {}
    out: dict[str, dict[str, list[Span]]] = {}
    for line in Path(trace).read_text(errors="replace").splitlines():
        parsed = _parse(line)
        if parsed is None:
            continue
        stamp, who, what = parsed
        if what == "device turn taken":
            kind, edge = "turn", "start"
        elif what == "device turn given back":
            kind, edge = "turn", "end"
        else:
            kind, _, rest = what.partition(" ")
            edge = rest.split(" ", 1)[0]
            if kind not in DEVICE_STEPS:
                continue
        if edge == "start":
            opened[(who, kind)] = stamp
        elif edge == "end" and (who, kind) in opened:
            out.setdefault(who, {}).setdefault(kind, []).append((opened.pop((who, kind)), stamp))
    return out


@dataclass
class Windows:
    """What :func:`check` found."""

    clocks: int = 0
    clock_s: float = 0.0
    #: Steps of one candidate inside another's clock, one line each (the promise broken).
    foreign: list[str] = field(default_factory=list)
    #: Pairs of different candidates' check windows that overlapped (lanes checking side by side).
    overlapping_checks: int = 0

    def summary(self) -> str:
        return (f"{self.clocks} clocks ({self.clock_s:.1f} s); {len(self.foreign)} foreign steps inside a clock; "
                f"{self.overlapping_checks} overlapping check pairs of different candidates")


def check(spans: dict[str, dict[str, list[Span]]]) -> Windows:
    out = Windows()
    for who, kinds in spans.items():
        for clock in CLOCKS:
            for t0, t1 in kinds.get(clock, []):
                out.clocks += 1
                out.clock_s += t1 - t0
                for other, theirs in spans.items():
                    if other == who:
                        continue
                    for kind, windows in theirs.items():
                        out.foreign += [f"{other} {kind} {a}-{b} inside {who} {clock} {t0}-{t1}"
                                        for a, b in windows if a < t1 and t0 < b]
    names = sorted(spans)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            out.overlapping_checks += sum(1 for a0, a1 in spans[a].get("check", [])
                                          for b0, b1 in spans[b].get("check", []) if a0 < b1 and b0 < a1)
    return out
