"""The report's per-sample table in a real headless browser: sorting by a numeric column (both ways, missing
values last), filtering by text and by status, and the shown-count line, all done by the page's own inline
script.

A driver script appended to a copy of the page clicks and types through DOM events, then writes what the table
shows into a ``<pre>``; ``chromium --headless --dump-dom`` prints the DOM after the page's scripts ran. Skipped
where no Chromium is installed (Debian: ``apt-get install chromium``, which .ci/run does as root: ~45 s of apt on
the 2-core host, 113 MB).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest

from multikernelbench.cli.main import main
from multikernelbench.records import CorrectnessReport, EvalResult, FailureKind, Status, TimingStats
from multikernelbench.store import Label, ResultStore

pytestmark = pytest.mark.browser

BROWSER = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)

# (task, candidate, status, failure, message, speedup)
SAMPLES = [
    ("activation.relu", "relu_fast.py", Status.CORRECT, None, "", 3.5),
    ("activation.relu", "relu_crash.py", Status.CRASH, FailureKind.SIGNAL, "worker died: SIGSEGV", None),
    ("activation.tanh", "tanh_ok.py", Status.CORRECT, None, "", 0.8),
    ("activation.tanh", "tanh_bad.py", Status.INCORRECT, FailureKind.VALUE_MISMATCH, "max abs err 0.3", None),
    ("reduce.sum_dim", "sum_ok.py", Status.CORRECT, None, "", 12.0),
]

DRIVER = """
<script>
(function () {
  var table = document.getElementById("samples"), heads = table.tHead.rows[0].cells, out = {};
  function col(name) { for (var i = 0; i < heads.length; i++) if (heads[i].textContent === name) return i; }
  function visible(i) {
    return Array.prototype.filter.call(table.tBodies[0].rows, function (r) { return !r.hidden; })
      .map(function (r) { return r.cells[i].textContent; });
  }
  var speed = col("speedup"), file = col("candidate");
  heads[speed].click();
  out.asc = visible(speed);
  heads[speed].click();
  out.desc = visible(speed);
  var filter = document.getElementById("samples-filter"), status = document.getElementById("samples-status");
  filter.value = "relu";
  filter.dispatchEvent(new Event("input"));
  out.relu = visible(file);
  out.relu_count = document.getElementById("samples-count").textContent;
  filter.value = "";
  filter.dispatchEvent(new Event("input"));
  status.value = "correct";
  status.dispatchEvent(new Event("change"));
  out.correct = visible(file).sort();
  var pre = document.createElement("pre");
  pre.id = "driver-result";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""


@pytest.mark.slow
@pytest.mark.skipif(BROWSER is None, reason="no chromium on PATH (apt-get install chromium); the per-sample "
                                             "table's script is then checked only as HTML by test_report.py")
def test_samples_table_sorts_and_filters_in_a_headless_browser(tmp_path):
    store = ResultStore(tmp_path / "r.sqlite")
    for i, (tid, cand, status, failure, message, speedup) in enumerate(SAMPLES):
        timing = TimingStats(1.0, 1.0, 1.0, 1.0, 0.0, 5, 0.01, "host_perf_counter") if speedup else None
        store.put(EvalResult(task_id=tid, task_hash="h" + tid, backend="cpu", candidate=cand, code_hash=f"c{i}",
                             status=status, failure=failure, message=message, speedup=speedup,
                             candidate_timing=timing, eager_timing=timing,
                             correctness=CorrectnessReport(trials=3, passed=3 if speedup else 0)),
                  Label(model="m", sample_index=i, category=tid.split(".")[0]))
    store.close()
    assert main(["report", "--db", str(tmp_path / "r.sqlite"), "--out", str(tmp_path / "rep"), "--no-plots",
                 "--no-baseline", "--quiet"]) == 0
    page = (tmp_path / "rep" / "report.html").read_text()
    driven = tmp_path / "driven.html"
    driven.write_text(page.replace("</body>", DRIVER + "</body>"))
    proc = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", driven.as_uri()],
                          capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="driver-result">(.*?)</pre>', proc.stdout, re.S)
    assert found, (proc.stdout[-2000:], proc.stderr[-2000:])
    out = json.loads(html.unescape(found.group(1)))
    assert out["asc"] == ["0.80x", "3.50x", "12.00x", "n/a", "n/a"]  # by value, not as text; n/a last
    assert out["desc"] == ["12.00x", "3.50x", "0.80x", "n/a", "n/a"]  # reversed, n/a still last
    assert sorted(out["relu"]) == ["relu_crash.py", "relu_fast.py"] and out["relu_count"] == "2 of 5 samples"
    assert out["correct"] == ["relu_fast.py", "sum_ok.py", "tanh_ok.py"]


LAYOUT_DRIVER = """
<script>
(function () {
  var out = {}, doc = document.documentElement;
  out.page_overflow = doc.scrollWidth - window.innerWidth;  // > 0: something sticks out of the page
  out.backticks = Array.prototype.filter.call(document.querySelectorAll("p, li, figcaption, h3"),
    function (el) { return el.textContent.indexOf("`") >= 0; }).length;
  out.code = document.querySelectorAll("p code").length;
  var details = document.querySelector("table.samples details");
  out.closed = !details.open;
  details.querySelector("summary").click();
  out.opened = details.open && details.querySelector("pre").textContent.indexOf("Traceback") >= 0;
  var heads = document.getElementById("samples").tHead.rows[0].cells, names = [], speed = [];
  for (var i = 0; i < heads.length; i++) {
    if (heads[i].textContent === "candidate") names = i;
    if (heads[i].textContent === "speedup") speed = i;
  }
  out.candidates = Array.prototype.map.call(document.getElementById("samples").tBodies[0].rows,
    function (r) { return r.cells[names].textContent; });
  out.speedups = Array.prototype.map.call(document.getElementById("samples").tBodies[0].rows,
    function (r) { return r.cells[speed].textContent; });
  var pre = document.createElement("pre");
  pre.id = "driver-result";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""

TRACEBACK = ("running on shape {'batch': 3}: Traceback (most recent call last):\n"
             '  File "/w/candidate.py", line 9, in forward\n    return x.foo()\n'
             "AttributeError: 'Tensor' object has no attribute 'foo'\n")


@pytest.mark.slow
@pytest.mark.skipif(BROWSER is None, reason="no chromium on PATH (apt-get install chromium)")
def test_report_layout_in_a_headless_browser(tmp_path):
    """Issue #45: the page fits its window (wide tables scroll in their own box), prose shows code, not
    backticks, a reason's whole message opens on demand, two samples with the same code are two rows with
    their own names, and a speedup shows its interval."""
    store = ResultStore(tmp_path / "r.sqlite")
    timing = TimingStats(1.0, 1.0, 1.0, 1.0, 0.0, 5, 0.01, "host_perf_counter")
    same = EvalResult(task_id="activation.relu", task_hash="h", backend="cpu", candidate="sample_0.py",
                      code_hash="same", status=Status.CORRECT, speedup=1.36, speedup_low=1.31, speedup_high=1.41,
                      candidate_timing=timing, eager_timing=timing, correctness=CorrectnessReport(3, 3))
    store.put(same, Label(model="m", sample_index=0, category="activation"))
    store.put_label(EvalResult(**{**same.__dict__, "candidate": "sample_1.py"}),
                    Label(model="m", sample_index=1, category="activation"))
    store.put(EvalResult(task_id="activation.tanh", task_hash="h2", backend="cpu", candidate="x" * 120 + ".py",
                         code_hash="bad", status=Status.RUNTIME_ERROR, failure=FailureKind.EXCEPTION,
                         message=TRACEBACK), Label(model="m", sample_index=0, category="activation"))
    store.close()
    out_dir = tmp_path / "rep"
    assert main(["report", "--db", str(tmp_path / "r.sqlite"), "--out", str(out_dir), "--no-baseline",
                 "--quiet"]) == 0
    page = (out_dir / "report.html").read_text()
    driven = tmp_path / "driven.html"
    driven.write_text(page.replace("</body>", LAYOUT_DRIVER + "</body>"))
    args = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,900"]
    proc = subprocess.run(args + ["--dump-dom", driven.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="driver-result">(.*?)</pre>', proc.stdout, re.S)
    assert found, (proc.stdout[-2000:], proc.stderr[-2000:])
    out = json.loads(html.unescape(found.group(1)))
    assert out["page_overflow"] <= 0, out  # the 120-character file name scrolls inside the table's box
    assert out["backticks"] == 0 and out["code"] >= 1, out
    assert out["closed"] and out["opened"], out
    assert sorted(out["candidates"])[:2] == ["sample_0.py", "sample_1.py"], out
    assert "1.36x ±0.05" in out["speedups"], out
    # the cause, not the traceback's header, is what the row shows
    assert "AttributeError: 'Tensor' object has no attribute 'foo'" in html.unescape(page)
