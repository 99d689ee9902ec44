"""The report's per-sample view: one row per evaluated candidate (task, candidate file, status, reason, times,
speedup), what ``code_eval`` users get as ``details``, as an HTML table that sorts by any column and filters by
text and status.

The page stays self-contained: the behaviour is a few lines of plain inline JavaScript (no library, nothing
fetched). Every cell carries its sort key in ``data-v`` (numbers as numbers, a missing value as empty, which
sorts last either way), so the browser never parses displayed text such as ``2.13x`` or ``n/a``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from multikernelbench.records import Status
from multikernelbench.report.data import ReportData
from multikernelbench.store import StoredResult

NA = "n/a"
#: (header, numeric?) in display order; the JavaScript sorts numeric columns by value.
COLUMNS = (("Model / platform", False), ("task", False), ("candidate", False), ("status", False),
           ("reason", False), ("candidate ms", True), ("eager ms", True), ("speedup", True))


@dataclass(frozen=True)
class SampleRow:
    group: str
    task_id: str
    candidate: str
    status: Status
    reason: str
    candidate_ms: float | None
    eager_ms: float | None
    speedup: float | None
    speedup_low: float | None = None  # the 95% interval (timing/interval.py)
    speedup_high: float | None = None
    detail: str = ""  # the whole stored message (a traceback, a compiler's output), shown on demand


def speedup_cell(r: SampleRow) -> tuple[str, str]:
    """(sort key, ``1.36x ±0.05``); the ± is half the 95% interval's width."""
    if r.speedup is None:
        return "", NA
    text = f"{r.speedup:.2f}x"
    if r.speedup_low is not None and r.speedup_high is not None:
        text += f" ±{(r.speedup_high - r.speedup_low) / 2:.2f}"
    return repr(float(r.speedup)), text


def reason_of(stored: StoredResult) -> str:
    """Why a sample got its status: the failure kind and the first line of the engine's message (its cause:
    reasons.py); for a correct sample its flags (warnings that did not fail it), else nothing."""
    r = stored.result
    if r.status is Status.CORRECT:
        return "; ".join(f.text for f in r.flags)
    first = r.message.strip().splitlines()[0] if r.message.strip() else ""
    kind = r.failure.value if r.failure is not None else ""
    return f"{kind}: {first}" if kind and first else kind or first


def sample_rows(data: ReportData) -> list[SampleRow]:
    rows = []
    for g in data.groups:
        for tid in g.group.task_ids():
            for stored in g.group.tasks[tid]:
                r = stored.result
                reason = reason_of(stored)
                full = r.message.strip()
                rows.append(SampleRow(g.name, tid, r.candidate, r.status, reason,
                                      r.candidate_timing.median_ms if r.candidate_timing else None,
                                      r.eager_timing.median_ms if r.eager_timing else None, r.speedup,
                                      r.speedup_low, r.speedup_high,
                                      full if full and "\n" in full else ""))
    return rows


def _num(value: float | None, fmt: str) -> tuple[str, str]:
    return ("", NA) if value is None else (repr(float(value)), fmt.format(value))


def _attrs(i: int, r: SampleRow) -> str:
    """The reason cell's class; the speedup cell's tooltip with the interval's bounds (an interval far from
    symmetric reads better as bounds than as ±)."""
    name = COLUMNS[i][0]
    if name == "reason":
        return ' class="reason"'
    if name == "speedup" and r.speedup_low is not None and r.speedup_high is not None:
        return f' title="95% interval {r.speedup_low:.3g}x to {r.speedup_high:.3g}x"'
    return ""


def _reason_html(r: SampleRow) -> str:
    """The cause in full; the whole message (traceback, compiler output) folded under it, opened on demand."""
    e = html.escape
    if not r.detail:
        return e(r.reason)
    return f"<details><summary>{e(r.reason)}</summary><pre>{e(r.detail)}</pre></details>"


def samples_html(rows: list[SampleRow]) -> str:
    """The table, its filter controls and the script; empty when there is no sample."""
    if not rows:
        return ""
    e = html.escape
    statuses = sorted({r.status.value for r in rows})
    head = "".join(f'<th data-type="{"num" if num else "text"}" title="click to sort">{e(name)}</th>'
                   for name, num in COLUMNS)
    body = []
    for r in rows:
        cells = [(r.group, e(r.group)), (r.task_id, e(r.task_id)), (r.candidate, e(r.candidate)),
                 (r.status.value, e(r.status.value)), (r.reason, _reason_html(r)),
                 *[(v, e(t)) for v, t in (_num(r.candidate_ms, "{:.4g}"), _num(r.eager_ms, "{:.4g}"),
                                          speedup_cell(r))]]
        body.append(f'<tr data-status="{e(r.status.value)}">'
                    + "".join(f'<td data-v="{e(v)}"{_attrs(i, r)}>{t}</td>' for i, (v, t) in enumerate(cells))
                    + "</tr>")
    options = "".join(f'<option value="{e(s)}">{e(s)}</option>' for s in statuses)
    return (
        '<h3>Samples</h3>\n<p class="note">Every evaluated candidate. Click a column header to sort (again to '
        "reverse); type to filter on any text; pick a status to show only it.</p>\n"
        '<p><input id="samples-filter" type="search" placeholder="filter: task, file, reason..." size="40"> '
        f'<select id="samples-status"><option value="">all statuses</option>{options}</select> '
        f'<span id="samples-count">{len(rows)} of {len(rows)} samples</span></p>\n'
        f'<div class="scroll"><table id="samples" class="samples"><thead><tr>{head}</tr></thead><tbody>\n'
        + "\n".join(body) + f"\n</tbody></table></div>\n<script>{SCRIPT}</script>")


SCRIPT = """
(function () {
  var table = document.getElementById("samples"), body = table.tBodies[0];
  var filter = document.getElementById("samples-filter"), status = document.getElementById("samples-status");
  var count = document.getElementById("samples-count"), heads = table.tHead.rows[0].cells;
  function apply() {
    var text = filter.value.toLowerCase(), want = status.value, shown = 0;
    Array.prototype.forEach.call(body.rows, function (row) {
      var ok = (!want || row.getAttribute("data-status") === want) &&
               (!text || row.textContent.toLowerCase().indexOf(text) >= 0);
      row.hidden = !ok;
      if (ok) shown++;
    });
    count.textContent = shown + " of " + body.rows.length + " samples";
  }
  function key(row, i) { return row.cells[i].getAttribute("data-v"); }
  Array.prototype.forEach.call(heads, function (th, i) {
    th.style.cursor = "pointer";
    th.addEventListener("click", function () {
      var asc = th.getAttribute("aria-sort") !== "ascending", numeric = th.getAttribute("data-type") === "num";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a, i), y = key(b, i);
        if (x === "" || y === "") return (x === "") - (y === "");  // missing values last, both ways
        var c = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
        return asc ? c : -c;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
  filter.addEventListener("input", apply);
  status.addEventListener("change", apply);
  apply();
})();
"""
