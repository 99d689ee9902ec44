"""The report's tables, as plain data rendered to markdown and to HTML.

A table is built once and rendered twice, so the markdown and the HTML page always show the same numbers.
Scores are percentages with one decimal (as in the MultiKernelBench paper); a cell that cannot be computed
says ``n/a`` rather than showing a misleading zero.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from multikernelbench.baselines import Match
from multikernelbench.report.data import OUTCOMES, ReportData
from multikernelbench.report.inline import inline_html
from multikernelbench.scoring import compilation_key, fast_key, pass_key, speedup_key

NA = "n/a"
_SUBSCRIPT = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


@dataclass
class Table:
    id: str
    title: str
    columns: list[str]  # leaf headers; the first heads the row labels
    rows: list[list[str]]
    groups: list[tuple[str, int]] | None = None  # (label, span) over columns[1:], e.g. one per platform
    note: str = ""

    def leaf_headers(self) -> list[str]:
        """Headers with their group prefixed (markdown has no column groups)."""
        if not self.groups:
            return list(self.columns)
        out, i = [self.columns[0]], 1
        for label, span in self.groups:
            out.extend(f"{label} {c}" for c in self.columns[i:i + span])
            i += span
        return out

    def to_markdown(self) -> str:
        head = self.leaf_headers()
        lines = [f"### {self.title}", ""]
        if self.note:
            lines += [self.note, ""]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        e = html.escape
        parts = [f'<h3>{inline_html(self.title)}</h3>']
        if self.note:
            parts.append(f"<p class=\"note\">{inline_html(self.note)}</p>")
        parts.append(f'<div class="scroll"><table id="{e(self.id)}"><thead>')
        if self.groups:
            parts.append('<tr><th rowspan="2">' + e(self.columns[0]) + "</th>"
                         + "".join(f'<th colspan="{span}" class="group">{e(label)}</th>' for label, span in self.groups)
                         + "</tr><tr>" + "".join(f"<th>{e(c)}</th>" for c in self.columns[1:]) + "</tr>")
        else:
            parts.append("<tr>" + "".join(f"<th>{e(c)}</th>" for c in self.columns) + "</tr>")
        parts.append("</thead><tbody>")
        for row in self.rows:
            parts.append("<tr><th>" + e(row[0]) + "</th>" + "".join(f"<td>{e(c)}</td>" for c in row[1:]) + "</tr>")
        parts.append("</tbody></table></div>")
        return "\n".join(parts)


def pct(value: float | None) -> str:
    return NA if value is None else f"{100 * value:.1f}"


def speedup_text(value: float | None) -> str:
    return NA if value is None else f"{value:.2f}x"


def fraction_text(value: float | None) -> str:
    return NA if value is None else f"{value:.3f}"


def speedup_label(alpha: float, k: int) -> str:
    return f"SpeedUp{f'{alpha:g}'.translate(_SUBSCRIPT)}@{k}"


def main_table(data: ReportData) -> Table:
    """Rows = models, column groups = platforms, cells = Comp@k / Pass@k / SpeedUp_alpha@k (in %)."""
    cell_keys = []  # (header, key, k)
    for k in data.ks:
        cell_keys += [(f"Comp@{k}", compilation_key(k), k), (f"Pass@{k}", pass_key(k), k)]
        cell_keys += [(speedup_label(a, k), speedup_key(a, k), k) for a in data.alphas]
    columns = ["Model"] + [h for _ in data.backends for h, _, _ in cell_keys]
    rows = []
    for name in data.rows:
        row = [name]
        for backend in data.backends:
            g = data.find(name, backend)
            for _, key, k in cell_keys:
                scores = g.scores if g is not None and k in g.ks else None
                row.append(pct(scores[key]) if scores is not None else NA)
        rows.append(row)
    return Table("main", "Main results (%)", columns, rows, groups=[(b, len(cell_keys)) for b in data.backends],
                 note="Unbiased estimators over each task's samples; SpeedUpₐ@k counts correct samples with "
                      "speedup ≥ α over the eager PyTorch reference.")


def category_table(data: ReportData) -> Table:
    """Pass@1 (%) per category, one row per model and platform."""
    cats = data.categories
    rows = []
    for g in data.groups:
        per = (g.scores or {}).get("per_category", {})
        rows.append([g.name] + [pct(per[c]["pass@1"]) if c in per else NA for c in cats])
    return Table("category", "Pass@1 per category (%)", ["Model / platform"] + cats, rows)


def failure_table(data: ReportData) -> Table:
    """Counts of every sample's outcome (correct first, then each failure mode)."""
    rows = [[g.name] + [str(g.failures.get(o, 0)) for o in OUTCOMES] + [str(sum(g.failures.values()))]
            for g in data.groups]
    return Table("failures", "Outcomes of all samples (counts)", ["Model / platform", *OUTCOMES, "total"], rows)


def summary_table(data: ReportData) -> Table:
    """Per model and platform: sizes, fast_alpha on first samples, geomean speedup, median roofline fraction."""
    columns = ["Model / platform", "tasks", "samples", "correct samples"]
    columns += [f"fast{f'{a:g}'.translate(_SUBSCRIPT)} (%)" for a in data.alphas]
    columns += ["geomean speedup", "median roofline fraction"]
    rows = []
    for g in data.groups:
        s = g.scores or {}
        row = [g.name, str(s.get("num_tasks", 0)), str(s.get("num_samples", 0)), str(s.get("num_correct_samples", 0))]
        row += [pct(s.get(fast_key(a))) for a in data.alphas]
        row += [speedup_text(s.get("geomean_speedup")), fraction_text(g.median_roofline)]
        rows.append(row)
    return Table("summary", "Speed summary", columns, rows,
                 note="fastₐ: share of tasks whose first sample is correct with speedup ≥ α. Geomean speedup and "
                      "median roofline fraction are over correct samples (n/a when there are none).")


def sol_table(data: ReportData) -> Table:
    """Mean SOL score (all tasks, then per category) per model and platform."""
    cats = data.categories
    rows = []
    for g in data.with_sol:
        s = g.scores or {}
        per = s.get("per_category", {})
        rows.append([g.name, fraction_text(s.get("sol_mean")), str(s.get("sol_num_tasks", 0))]
                    + [fraction_text(per[c].get("sol_mean")) if c in per else NA for c in cats])
    where = " / ".join(x for x in [data.baseline.label if data.compared and data.baseline is not None else "",
                                    "own run's eager times" if data.own_eager else ""] if x) or "no baseline"
    return Table("sol", "Speed-of-light score per category", ["Model / platform", "all", "SOL tasks"] + cats,
                 rows, note=f"Mean over tasks of each task's mean sample score: 0 wrong, 0.5 at the eager baseline "
                            f"({where}), 1.0 at the roofline bound, log scale between (metric card: "
                            "metrics/mkb_speedup). n/a: no task with a usable baseline.")


def baseline_table(data: ReportData) -> Table:
    """Which hardware each figure comes from, and how the baseline covers each group's tasks."""
    ref = data.baseline.label if data.baseline is not None else NA
    columns = ["Model / platform", "results hardware", "baseline hardware", "tasks", "baseline ok", "stale",
               "missing", "not timed", "suspect", "SOL tasks", "eager ≥ bound", "faster than bound"]
    rows = []
    for g in data.compared:
        m, s = g.baseline.matches, g.scores or {}
        rows.append([g.name, g.baseline.hardware_text, ref, str(len(g.group.tasks))]
                    + [str(m.get(x, 0)) for x in (Match.OK, Match.STALE, Match.MISSING, Match.FAILED,
                                                                  Match.SUSPECT)]
                    + [str(s.get("sol_num_tasks", 0)), str(s.get("sol_tasks_degenerate", 0)),
                       str(s.get("sol_samples_above_bound", 0))])
    source = data.baseline.source if data.baseline is not None else ""
    return Table("baseline", "Hardware and baseline", columns, rows,
                 note=f"Baseline file: {source}. A row counts only for the task content it measured (stale: the "
                      "task changed since), suspect: kept but not trusted (the row says why); 'eager ≥ bound': tasks left out of SOL because the eager reference "
                      "already reaches the roofline; 'faster than bound': correct samples clamped to SOL 1.0 "
                      "(a cost-model error or a cheat to check).")


def task_set_table(data: ReportData) -> Table | None:
    """Suite vs held-out (generated) tasks per model and platform; None when no held-out task was evaluated."""
    from multikernelbench.report.task_sets import SETS, set_scores

    scores = set_scores(data)
    if scores is None:
        return None
    alpha = f"{data.alphas[0] if data.alphas else 1.0:g}".translate(_SUBSCRIPT)
    rows = []
    for name, per in scores.items():
        suite, held = (per[s] for s in SETS)
        gap = (NA if suite.pass_at_1 is None or held.pass_at_1 is None
               else f"{100 * (suite.pass_at_1 - held.pass_at_1):+.1f}")
        rows.append([name, str(suite.tasks), pct(suite.pass_at_1), pct(suite.fast), str(held.tasks),
                     pct(held.pass_at_1), pct(held.fast), gap])
    return Table("task_sets", "Suite vs held-out tasks",
                 ["Model / platform", "suite tasks", "suite Pass@1", f"suite fast{alpha}", "held-out tasks",
                  "held-out Pass@1", f"held-out fast{alpha}", "Pass@1 gap (pp)"], rows,
                 note="Held-out tasks are generated from a seed (`mkb tasks generate`) and cannot have been "
                      "seen in training; a large positive gap suggests the suite leaked into the model.")


def all_tables(data: ReportData) -> list[Table]:
    tables = [main_table(data), category_table(data), summary_table(data)]
    split = task_set_table(data)
    if split is not None:
        tables.append(split)
    if data.with_sol:  # only results measured on the baseline's own hardware are set against it
        tables.append(sol_table(data))
    if data.compared:
        tables.append(baseline_table(data))
    return tables + [failure_table(data)]
