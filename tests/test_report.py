"""``mkb report`` on a store of synthetic results: the HTML's and markdown's numbers against the metric
module's output for the same records (built here, independently of the report's own grouping)."""

from __future__ import annotations

import base64
import random
import statistics
from collections import Counter, defaultdict
from html.parser import HTMLParser
from pathlib import Path

import pytest

evaluate = pytest.importorskip("evaluate")
pytest.importorskip("matplotlib")

from multikernelbench.cli.main import main  # noqa: E402
from multikernelbench.records import CorrectnessReport, EvalResult, FailureKind, Status  # noqa: E402
from multikernelbench.report import outcome  # noqa: E402
from multikernelbench.store import Label, ResultStore  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MODELS = ("model-a", "model-b")
BACKENDS = ("cpu", "cuda")
CATEGORIES = ("activation", "convolution", "reduce")
# (status, failure) pool: every failure mode of the breakdown appears
POOL = [(Status.CORRECT, None)] * 5 + [
    (Status.COMPILE_ERROR, None), (Status.RUNTIME_ERROR, FailureKind.EXCEPTION),
    (Status.INCORRECT, FailureKind.VALUE_MISMATCH), (Status.INCORRECT, FailureKind.SHAPE_MISMATCH),
    (Status.TIMEOUT, None), (Status.CRASH, FailureKind.SIGNAL), (Status.CHEAT_DETECTED, None)]
EXPECTED_OUTCOME = {Status.CORRECT: "correct", Status.COMPILE_ERROR: "compile error",
                    Status.RUNTIME_ERROR: "runtime error", Status.TIMEOUT: "timeout", Status.CRASH: "crash",
                    Status.CHEAT_DETECTED: "cheat"}


def synthetic_store(path: Path):
    """Write the store; return what each (model, backend) should score: per task, its records in order."""
    rng = random.Random(2024)
    expected: dict = defaultdict(dict)  # (model, backend) -> {task_id: [(record, EvalResult)]}
    store = ResultStore(path)
    for model in MODELS:
        for backend in BACKENDS:
            for cat in CATEGORIES:
                for t in range(2):
                    tid = f"{cat}.task{t}"
                    # model-b on cuda has only 2 samples of one task: k=3 must be n/a there
                    n = 2 if (model, backend, tid) == ("model-b", "cuda", "reduce.task1") else 3
                    samples = []
                    order = list(range(n))
                    rng.shuffle(order)  # insertion order must not matter, sample_index does
                    for s in order:
                        status, failure = rng.choice(POOL)
                        correct = status is Status.CORRECT
                        speedup = round(rng.lognormvariate(0, 0.8), 4) if correct and rng.random() < 0.9 else None
                        roof = round(rng.random(), 4) if correct and rng.random() < 0.8 else None
                        result = EvalResult(task_id=tid, task_hash="h" + tid, backend=backend, candidate=f"{model}/{s}",
                                            code_hash=f"{model}-{backend}-{tid}-{s}", status=status, failure=failure,
                                            speedup=speedup, roofline_fraction=roof,
                                            correctness=CorrectnessReport(trials=3, passed=3 if correct else 0))
                        store.put(result, Label(model=model, sample_index=s, category=cat))
                        samples.append((s, result))
                    samples.sort(key=lambda x: x[0])
                    expected[(model, backend)][tid] = [r for _, r in samples]
            # a result whose backend was unavailable: reported in the notes, never scored
            store.put(EvalResult(task_id="activation.task0", task_hash="hx", backend=backend, candidate="u",
                                 code_hash=f"{model}-{backend}-unavailable", status=Status.UNAVAILABLE),
                      Label(model=model, sample_index=7, category="activation"))
    store.close()
    return expected


class Tables(HTMLParser):
    """Body rows of every ``<table id=...>``, as lists of cell texts (the row header first)."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.images: list[str] = []
        self._id = None
        self._in_body = False
        self._row = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._id = attrs.get("id")
            self.tables[self._id] = []
        elif tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""
        elif tag == "img":
            self.images.append(attrs.get("src", ""))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[self._id].append(self._row)
            self._row = None
        elif tag == "tbody":
            self._in_body = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def pct(x):
    return f"{100 * x:.1f}"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    expected = synthetic_store(root / "results.sqlite")
    rc = main(["report", "--store", str(root / "results.sqlite"), "--out", str(root / "out"),
               "-k", "1", "-k", "3", "--alpha", "1.0", "--alpha", "1.5", "--quiet"])
    assert rc == 0
    html = (root / "out" / "report.html").read_text()
    parser = Tables()
    parser.feed(html)
    metric = evaluate.load(str(REPO / "metrics" / "mkb_speedup"))
    scores = {}
    for key, tasks in expected.items():
        ids = sorted(tasks)
        preds = [[{"compiled": r.status.compiled, "correct": r.status is Status.CORRECT, "speedup": r.speedup}
                  for r in tasks[tid]] for tid in ids]
        ks = [1, 3] if min(len(v) for v in tasks.values()) >= 3 else [1]
        scores[key] = metric.compute(predictions=preds, references=ids, k=ks, alphas=[1.0, 1.5],
                                     categories=[tid.split(".")[0] for tid in ids])
    return root, expected, parser, scores, (root / "out" / "report.md").read_text()


@pytest.mark.slow
def test_main_table_matches_metric(built):
    _, _, parser, scores, _ = built
    rows = {r[0]: r[1:] for r in parser.tables["main"]}
    assert sorted(rows) == sorted(MODELS)
    keys = ["compilation@{k}", "pass@{k}", "speedup_1.0@{k}", "speedup_1.5@{k}"]
    for model in MODELS:
        cells = iter(rows[model])
        for backend in BACKENDS:
            s = scores[(model, backend)]
            for k in (1, 3):
                for template in keys:
                    key = template.format(k=k)
                    want = pct(s[key]) if key in s else "n/a"
                    assert next(cells) == want, (model, backend, key)
        assert next(cells, None) is None
    assert rows["model-b"][-4:] == ["n/a"] * 4  # cuda, k=3: one task has only 2 samples


@pytest.mark.slow
def test_category_table_matches_metric(built):
    _, _, parser, scores, _ = built
    rows = parser.tables["category"]
    assert [r[0] for r in rows] == [f"{m} / {b}" for m in MODELS for b in BACKENDS]
    for row in rows:
        model, backend = row[0].split(" / ")
        per = scores[(model, backend)]["per_category"]
        assert row[1:] == [pct(per[c]["pass@1"]) for c in sorted(CATEGORIES)]


def test_summary_table_matches_metric_and_records(built):
    _, expected, parser, scores, _ = built
    assert len(parser.tables["summary"]) == len(MODELS) * len(BACKENDS)
    for row in parser.tables["summary"]:
        model, backend = row[0].split(" / ")
        s = scores[(model, backend)]
        results = [r for rs in expected[(model, backend)].values() for r in rs]
        roof = [r.roofline_fraction for r in results if r.status is Status.CORRECT and r.roofline_fraction is not None]
        geo = "n/a" if s["geomean_speedup"] is None else f"{s['geomean_speedup']:.2f}x"
        assert row[1:] == [str(s["num_tasks"]), str(s["num_samples"]), str(s["num_correct_samples"]),
                           pct(s["fast_1.0"]), pct(s["fast_1.5"]), geo, f"{statistics.median(roof):.3f}"]


def test_failure_table_counts_every_sample(built):
    _, expected, parser, _, _ = built
    header = ["correct", "compile error", "runtime error", "mismatch", "shape mismatch", "timeout", "crash", "refused",
              "cheat", "harness error"]
    assert len(parser.tables["failures"]) == len(MODELS) * len(BACKENDS)
    for row in parser.tables["failures"]:
        model, backend = row[0].split(" / ")
        counts = Counter()
        for rs in expected[(model, backend)].values():
            for r in rs:
                if r.status is Status.INCORRECT:
                    counts["shape mismatch" if r.failure is FailureKind.SHAPE_MISMATCH else "mismatch"] += 1
                else:
                    counts[EXPECTED_OUTCOME[r.status]] += 1
        want = [str(counts[h]) for h in header] + [str(sum(counts.values()))]
        assert row[1:] == want


def test_html_embeds_the_plots_with_data_and_is_self_contained(built):
    """Three figures have data; the roofline scatter has none (no result was measured on the baseline's
    hardware), so it is left out with one line instead of an empty frame."""
    root, _, parser, _, md = built
    assert len(parser.images) == 3
    for src in parser.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    html = (root / "out" / "report.html").read_text()
    assert "http://" not in html and "https://" not in html and "<script src" not in html  # inline script only
    for stem in ("pass_rate_by_category", "speedup_cdf", "roofline_by_category"):
        assert (root / "out" / "plots" / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
    assert not (root / "out" / "plots" / "roofline_scatter.png").exists() and 'id="fig-roofline_scatter"' not in html
    line = "Roofline fraction per task: best correct candidate vs the eager baseline: not drawn, no task with"
    assert html.count(line) == 1 and md.count(line) == 1


def test_per_sample_table_lists_every_scored_sample(built):
    _, expected, parser, _, _ = built
    rows = parser.tables["samples"]
    want = sorted((f"{model} / {backend}", tid, r.candidate, r.status.value)
                  for (model, backend), tasks in expected.items() for tid, results in tasks.items() for r in results)
    assert sorted(tuple(r[:4]) for r in rows) == want
    by_file = {(r[0], r[1], r[2]): r for r in rows}
    for (model, backend), tasks in expected.items():
        for tid, results in tasks.items():
            for r in results:
                row = by_file[(f"{model} / {backend}", tid, r.candidate)]
                assert row[7] == ("n/a" if r.speedup is None else f"{r.speedup:.2f}x")
                if r.status is Status.CORRECT:
                    assert row[4] == ""
                elif r.failure is not None:
                    assert row[4].startswith(r.failure.value)


def test_speedup_axis_reads_as_plain_multiples():
    from multikernelbench.report.plots import speedup_text, speedup_ticks

    assert [speedup_text(x) for x in speedup_ticks(0.6, 3.1)] == ["0.5×", "1×", "2×", "4×"]
    ticks = speedup_ticks(0.003, 40.0)
    assert 1 in ticks and len(ticks) <= 9 and ticks[0] <= 0.003 and ticks[-1] >= 40
    assert all("10^" not in speedup_text(x) and "e" not in speedup_text(x) for x in ticks)


def test_markdown_shows_the_same_rows_and_notes(built):
    _, _, parser, _, md = built
    for table_id in ("main", "category", "summary", "failures"):
        for row in parser.tables[table_id]:
            assert "| " + " | ".join(row) + " |" in md, (table_id, row)
    assert "k=3 is not reported" in md
    assert md.count("backend unavailable were not scored") == len(MODELS) * len(BACKENDS)


def test_outcome_maps_shape_mismatch_from_either_field():
    base = dict(task_id="t", task_hash="h", backend="cpu", candidate="c", code_hash="x")
    assert outcome(EvalResult(status=Status.INCORRECT, **base)) == "mismatch"
    assert outcome(EvalResult(status=Status.INCORRECT, failure=FailureKind.SHAPE_MISMATCH, **base)) == "shape mismatch"
    via_report = EvalResult(status=Status.RUNTIME_ERROR, correctness=CorrectnessReport(failure=FailureKind.SHAPE_MISMATCH),
                            **base)
    assert outcome(via_report) == "shape mismatch"
    assert outcome(EvalResult(status=Status.CHEAT_DETECTED, **base)) == "cheat"
    # blocked by the sandbox but not gaming: counted apart from the cheats (a typed failure kind)
    assert outcome(EvalResult(status=Status.COMPILE_ERROR, failure=FailureKind.ENVIRONMENT_REFUSED, **base)) == "refused"


def test_missing_store_is_a_clear_error(tmp_path, capsys):
    assert main(["report", "--store", str(tmp_path / "nope.sqlite"), "--quiet"]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "nope.sqlite").exists()
