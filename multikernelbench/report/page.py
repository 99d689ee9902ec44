"""Assemble the report: markdown (tables, plots as PNG files beside it) and one self-contained HTML page
(inline CSS and script, plots as base64 PNGs, a sortable per-sample table) that can be mailed or archived
without its folder.
"""

from __future__ import annotations

import base64
import html
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from multikernelbench.report.data import ReportData
from multikernelbench.report.inline import inline_html
from multikernelbench.report.plots import render_figures
from multikernelbench.report.samples import sample_rows, samples_html
from multikernelbench.report.tables import Table, all_tables

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
.scroll { overflow-x: auto; max-width: 100%; margin: 0.5em 0 1.5em; }
table { border-collapse: collapse; font-size: 0.9em; }
code { background: #f3f3f3; padding: 0 0.2em; border-radius: 3px; font-size: 0.95em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
tbody th { text-align: left; font-weight: normal; }
th.group { text-align: center; background: #f0f0f0; }
.note { color: #555; font-size: 0.9em; }
figure { margin: 1em 0 2em; } img { max-width: 100%; }
table.samples td:nth-child(-n+5), table.samples th:nth-child(-n+5) { text-align: left; }
table.samples td { vertical-align: top; }
table.samples td:nth-child(2), table.samples td:nth-child(4), table.samples td:nth-child(n+6) { white-space: nowrap; }
table.samples td:nth-child(3) { overflow-wrap: anywhere; min-width: 8em; }
table.samples td.reason { min-width: 16em; max-width: 26em; }
table.samples details pre { white-space: pre-wrap; font-size: 0.85em; max-height: 30em; overflow: auto; }
table.samples th[aria-sort="ascending"]::after { content: " ▲"; }
table.samples th[aria-sort="descending"]::after { content: " ▼"; }
"""


@dataclass
class Report:
    tables: list[Table]
    figures: list[tuple[str, str, bytes]]  # (stem, caption, png bytes)
    markdown: str
    html: str
    left_out: list[str]  # one line per figure not drawn (nothing to draw), shown in both pages


def _header_lines(data: ReportData) -> list[str]:
    lines = [f"Results store: `{data.source}`" if data.source else "",
             f"Generated {time.strftime('%Y-%m-%d %H:%M:%S')}; k = {', '.join(map(str, data.ks))}; "
             f"α = {', '.join(f'{a:g}' for a in data.alphas)}."]
    if data.baseline is not None and data.compared:
        lines.append(f"Eager baseline (SOL score, roofline scatter): `{data.baseline.source}`, measured on "
                     f"{data.baseline.label}, {len(data.baseline.rows)} task rows.")
    elif data.baseline is not None:
        lines.append(f"Eager baseline file `{data.baseline.source}` (measured on {data.baseline.label}): not used, "
                     "no result was measured on that hardware.")
    if data.measured_host:
        lines.append(f"CPU peaks of {data.measured_host} measured for this report (cached for the next).")
    return [x for x in lines if x]


def render_markdown(data: ReportData, tables: list[Table], figures, plot_dir: str = "plots",
                    left_out: Sequence[str] = ()) -> str:
    parts = ["# multikernelbench report", "", *_header_lines(data), ""]
    if not data.groups:
        parts += ["The results store holds no labelled results.", ""]
    parts += [t.to_markdown() for t in tables]
    notes = data.notes()
    if notes:
        parts += ["### Notes", ""] + [f"- {n}" for n in notes] + [""]
    for stem, caption, _ in figures:
        parts += [f"![{caption}]({plot_dir}/{stem}.png)", ""]
    parts += [f"- {line}" for line in left_out] + ([""] if left_out else [])
    return "\n".join(parts)


def render_html(data: ReportData, tables: list[Table], figures, left_out: Sequence[str] = ()) -> str:
    e = html.escape
    body = ["<h1>multikernelbench report</h1>"] + [f"<p>{inline_html(line)}</p>" for line in _header_lines(data)]
    if not data.groups:
        body.append("<p>The results store holds no labelled results.</p>")
    body += [t.to_html() for t in tables]
    notes = data.notes()
    if notes:
        body.append("<h3>Notes</h3><ul>" + "".join(f"<li>{inline_html(n)}</li>" for n in notes) + "</ul>")
    for stem, caption, png in figures:
        b64 = base64.b64encode(png).decode("ascii")
        body.append(f'<figure id="fig-{e(stem)}"><img alt="{e(caption)}" src="data:image/png;base64,{b64}">'
                    f"<figcaption>{inline_html(caption)}</figcaption></figure>")
    body += [f'<p class="note left-out">{inline_html(line)}</p>' for line in left_out]
    body.append(samples_html(sample_rows(data)))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>multikernelbench report</title><style>{CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def build_report(data: ReportData, plots: bool = True) -> Report:
    tables = all_tables(data)
    figures, left_out = render_figures(data) if plots else ([], [])
    return Report(tables, figures, render_markdown(data, tables, figures, left_out=left_out),
                  render_html(data, tables, figures, left_out), left_out)


def write_report(report: Report, out_dir: str | Path) -> dict[str, Path]:
    """Write ``report.md``, ``report.html`` and ``plots/*.png`` under ``out_dir``; returns their paths."""
    out = Path(out_dir)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    paths = {"markdown": out / "report.md", "html": out / "report.html"}
    paths["markdown"].write_text(report.markdown, encoding="utf-8")
    paths["html"].write_text(report.html, encoding="utf-8")
    for stem, _, png in report.figures:
        paths[stem] = out / "plots" / f"{stem}.png"
        paths[stem].write_bytes(png)
    return paths
