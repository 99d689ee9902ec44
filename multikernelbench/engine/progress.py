"""Progress of an evaluation run on stderr (stdout stays clean for --json output); a no-op when disabled.

Two renderings of the same state:

* **A terminal** (stderr is a TTY and ``TERM`` is not ``dumb``): live rich bars, one per stage
  ("building k/n", "checking+timing k/n"), each with its elapsed time, an ETA and what is running now.
* **Anything else** (CI logs, pipes, files): plain lines, one when a stage moves (at most one per
  ``min_gap_s``) and a heartbeat every ``interval_s`` even when nothing finished, so a log is never silent for
  minutes: ``[mkb 0:42] building 5/7, ETA ~0:30 | checking+timing 3/10 | now: relu (building)``.

The runner drives it with ``add(stage, total)`` and ``advance(stage)`` (stages ``compile`` and ``evaluate``).
Optional, for the "now:" part: ``activity(who, what)`` takes the engine's trace lines (same signature as
:class:`multikernelbench.engine.trace.Trace`: ``build start``, ``device stage start (lane 0)``,
``check start (running on shape [..])``, ``time start (timing on shape [..])``, ``... end after 3.1 s``) and
shows each running candidate's current phase (building, loading, checking, timing).

ETA: a stage's remaining count divided by its rate of real completions since it became active. Work that
finishes without real work is left out of the rate: compile-stage completions in the first second (static
verdicts, cached builds) and evaluate-stage completions that come right after a compile completion (a build
that failed, so nothing is evaluated). The evaluate stage becomes active at its first ``device stage start``
trace line, else when the first build succeeds (backends that overlap builds and device work) or all builds
are done. Until a stage has a real completion its ETA shows as ``?``.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID

#: How each stage is named on screen.
TITLES = {"compile": "building", "evaluate": "checking+timing", "pch": "precompiling headers"}
#: Compile completions this soon after the stage starts did no real work (static verdict, cached build).
INSTANT_S = 1.0
#: An evaluate completion this soon after a compile completion is a failed build carried over (no device work).
CARRIED_S = 0.25

_TRACE_START = re.compile(r"^(\w+) start(?: \((.*)\))?$")
_WHO = re.compile(r"^(.*) \[[0-9a-f]+\]$")


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    s = int(round(max(0.0, seconds)))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def stderr_is_terminal(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stderr
    try:
        return bool(stream.isatty()) and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):
        return False


def _phase(what: str) -> str | None:
    """A trace line's text -> the phase to show ('building', 'loading', 'checking', 'timing'), or None when
    the line ends a phase (or names nothing worth showing)."""
    if what == "build start":
        return "building"
    if what.startswith("device stage start"):
        return "starting"
    m = _TRACE_START.match(what)
    if not m:
        return None
    kind, detail = m.group(1), (m.group(2) or "")
    if kind == "load":
        return "loading"
    if kind == "check":
        return "checking" + (detail.replace("running", "", 1) if detail.startswith("running on shape") else "")
    if kind == "time":
        return detail.replace("timing the reference", "timing reference") if detail else "timing"
    return detail or kind


@dataclass
class _Stage:
    name: str
    total: int
    created: float
    done: int = 0
    free: int = 0  # completions that did no real work (see the module docstring)
    active_since: float | None = None
    finished_at: float | None = None

    @property
    def title(self) -> str:
        return TITLES.get(self.name, self.name)

    def eta(self, now: float) -> float | None:
        left = self.total - self.done
        if left <= 0:
            return 0.0
        real = self.done - self.free
        if real <= 0 or self.active_since is None:
            return None
        return left * max(now - self.active_since, 0.0) / real


@dataclass
class _State:
    stages: dict[str, _Stage] = field(default_factory=dict)
    running: dict[str, str] = field(default_factory=dict)  # who -> phase
    lanes: dict[str, str] = field(default_factory=dict)  # "(lane 0)" -> who is on it
    last_compile_done: float = float("-inf")
    first_compile_done: float | None = None


class Progress:
    """See the module docstring. ``stream``/``tty``/``interval_s``/``min_gap_s`` are for tests and callers
    that want another cadence; the defaults suit a person at a terminal and a CI log alike."""

    def __init__(self, enabled: bool = True, *, stream: TextIO | None = None, tty: bool | None = None,
                 interval_s: float = 15.0, min_gap_s: float = 2.0) -> None:
        self.enabled = enabled
        self.stream = stream
        self.tty = stderr_is_terminal(stream) if tty is None else tty
        self.interval_s = interval_s
        self.min_gap_s = min_gap_s
        self._state = _State()
        self._lock = threading.RLock()
        self._t0 = time.monotonic()
        self._bar: RichProgress | None = None
        self._ids: dict[str, TaskID] = {}
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._last_line = float("-inf")
        self._dirty = False

    # ---- lifecycle ------------------------------------------------------------------------------------------
    def __enter__(self) -> Progress:
        if not self.enabled:
            return self
        self._t0 = time.monotonic()
        if self.tty:
            self._start_rich()
        else:
            self._ticker = threading.Thread(target=self._tick, name="mkb-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc) -> None:
        if not self.enabled:
            return
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
            self._line(final=True)
        if self._bar is not None:
            self._refresh_rich()
            self._bar.__exit__(*exc)

    # ---- the runner's interface ----------------------------------------------------------------------------
    def add(self, name: str, total: int) -> None:
        if not self.enabled:
            return
        with self._lock:
            self._state.stages[name] = _Stage(name, total, time.monotonic())
            if name != "evaluate":  # evaluate's clock starts with its first real work (see advance)
                self._state.stages[name].active_since = time.monotonic()
            if self._bar is not None:
                self._ids[name] = self._bar.add_task(self._state.stages[name].title, total=total, eta="", now="")

    def advance(self, name: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        with self._lock:
            st = self._state
            stage = st.stages.get(name)
            if stage is None:
                return
            stage.done += 1
            if name == "compile":
                if now - stage.created < INSTANT_S:
                    stage.free += 1
                st.last_compile_done = now
                if st.first_compile_done is None:
                    st.first_compile_done = now
            elif name == "evaluate":
                if now - st.last_compile_done < CARRIED_S:
                    stage.free += 1
                elif stage.active_since is None:
                    stage.active_since = self._evaluate_active_since(now)
            if stage.done >= stage.total and stage.finished_at is None:
                stage.finished_at = now
            self._dirty = True
        if self._bar is not None:
            self._refresh_rich()
        else:
            self._maybe_line(force=stage.done >= stage.total)

    # ---- optional: what is running now ---------------------------------------------------------------------
    def activity(self, who: str, what: str) -> None:
        """A trace line (``who``: ``task [hash]``; ``what``: e.g. ``check start (running on shape [8, 4096])``)."""
        if not self.enabled:
            return
        phase = _phase(what)
        now = time.monotonic()
        with self._lock:
            if what.startswith("build end") or what.startswith("device stage end"):
                self._state.running.pop(who, None)
            elif phase is not None:
                if what.startswith("device stage start"):
                    lane = what[len("device stage start"):].strip()
                    previous = self._state.lanes.get(lane)
                    if previous is not None and previous != who:
                        self._state.running.pop(previous, None)  # the lane's previous candidate is done
                    self._state.lanes[lane] = who
                    ev = self._state.stages.get("evaluate")
                    if ev is not None and ev.active_since is None:
                        ev.active_since = now
                self._state.running[who] = phase
        if self._bar is not None:
            self._refresh_rich()

    def finished(self, who: str) -> None:
        """A candidate's device stage is over (trace lines end builds, and a lane's next ``device stage start``
        ends its previous candidate; this ends the last one at once). Harmless twice."""
        if not self.enabled:
            return
        with self._lock:
            self._state.running.pop(who, None)

    # ---- state -> text ---------------------------------------------------------------------------------------
    def _evaluate_active_since(self, now: float) -> float:
        """When the device stage began, for a run whose trace lines are not wired in: the end of the compile
        stage when it is over (backends that start device work after the last build, as the CPU backend),
        else the first build's end (backends that overlap the two)."""
        comp = self._state.stages.get("compile")
        if comp is not None and comp.finished_at is not None:
            return comp.finished_at
        return self._state.first_compile_done if self._state.first_compile_done is not None else now

    def _now_text(self, limit: int = 3) -> str:
        items = list(self._state.running.items())
        if not items:
            return ""
        parts = []
        for who, phase in items[:limit]:
            m = _WHO.match(who)
            parts.append(f"{m.group(1) if m else who} ({phase})")
        more = f" +{len(items) - limit} more" if len(items) > limit else ""
        return ", ".join(parts) + more

    def status_line(self) -> str:
        """One plain line: elapsed, every stage's k/n and ETA, what is running now."""
        now = time.monotonic()
        with self._lock:
            parts = []
            for stage in self._state.stages.values():
                text = f"{stage.title} {stage.done}/{stage.total}"
                if stage.done < stage.total:
                    eta = stage.eta(now)
                    text += f", ETA ~{fmt_duration(eta)}" if eta is not None else ""
                parts.append(text)
            line = f"[mkb {fmt_duration(now - self._t0)}] " + " | ".join(parts)
            now_text = self._now_text()
        return line + (f" | now: {now_text}" if now_text else "")

    # ---- plain lines -----------------------------------------------------------------------------------------
    def _write(self, text: str) -> None:
        stream = self.stream or sys.stderr
        try:
            stream.write(text + "\n")
            stream.flush()
        except (ValueError, OSError):
            pass

    def _line(self, final: bool = False) -> None:
        with self._lock:
            if not self._state.stages:
                return
            self._last_line = time.monotonic()
            self._dirty = False
        self._write(self.status_line() + (" (done)" if final else ""))

    def _maybe_line(self, force: bool = False) -> None:
        if force or time.monotonic() - self._last_line >= self.min_gap_s:
            self._line()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            since = time.monotonic() - self._last_line
            if (self._dirty and since >= self.min_gap_s) or since >= self.interval_s:
                self._line()

    # ---- rich bars -------------------------------------------------------------------------------------------
    def _start_rich(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress
        from rich.table import Column

        console = Console(file=self.stream, stderr=self.stream is None)
        bar = self._bar = RichProgress(
            TextColumn("{task.description:>15}", table_column=Column(no_wrap=True)), BarColumn(bar_width=24),
            MofNCompleteColumn(table_column=Column(no_wrap=True)),
            TimeElapsedColumn(table_column=Column(no_wrap=True)),
            TextColumn("{task.fields[eta]}", table_column=Column(min_width=9, no_wrap=True)),
            # What is running now takes the rest of the line and is cut, never wrapped.
            TextColumn("{task.fields[now]}", style="dim",
                       table_column=Column(ratio=1, overflow="ellipsis", no_wrap=True)),
            console=console, transient=False, refresh_per_second=4, expand=True)
        bar.__enter__()
        self._ticker = None
        threading.Thread(target=self._rich_tick, name="mkb-progress", daemon=True).start()

    def _rich_tick(self) -> None:
        while not self._stop.wait(1.0):
            self._refresh_rich()

    def _refresh_rich(self) -> None:
        if self._bar is None:
            return
        now = time.monotonic()
        with self._lock:
            now_text = self._now_text()
            for name, stage in self._state.stages.items():
                if name not in self._ids:
                    continue
                eta = stage.eta(now)
                eta_text = "" if stage.done >= stage.total else f"ETA ~{fmt_duration(eta)}"
                # "now:" on the row of the stage that is running: builds while building, then the device stage.
                comp = self._state.stages.get("compile")
                building = comp is not None and comp.done < comp.total
                show_now = (name == "compile") == building
                self._bar.update(self._ids[name], completed=stage.done, eta=eta_text,
                                 now=now_text if show_now and stage.done < stage.total else "")
