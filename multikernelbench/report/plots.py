"""The report's figures, as PNG bytes (embedded in the HTML as base64, also written next to the markdown).

matplotlib is imported lazily with the non-interactive Agg backend, so the rest of the package (and the
markdown tables) work without the ``report`` extra and nothing here tries to open a window.
"""

from __future__ import annotations

import io

from multikernelbench.report.data import ReportData


def _pyplot():
    try:
        import matplotlib
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("plots need matplotlib: pip install 'multikernelbench[report]'") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    _pyplot().close(fig)
    return buf.getvalue()


def _grouped_bars(data: ReportData, values, ylabel: str, title: str) -> bytes:
    """One panel per platform; x = categories, one bar per model; ``values(group) -> {category: value}``."""
    plt = _pyplot()
    backends, cats = data.backends, data.categories
    fig, axes = plt.subplots(len(backends) or 1, 1, figsize=(max(6.0, 0.6 * len(cats) + 2), 3.2 * max(1, len(backends))),
                             squeeze=False)
    for ax, backend in zip(axes[:, 0], backends or [""]):
        series = [g for g in data.groups if g.group.backend == backend]
        width = 0.8 / max(1, len(series))
        for i, g in enumerate(series):
            vals = values(g)
            xs = [j + (i - (len(series) - 1) / 2) * width for j, c in enumerate(cats) if c in vals]
            ax.bar(xs, [vals[c] for c in cats if c in vals], width=width, label=g.group.row_name)
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels(cats, rotation=45, ha="right")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title} - {backend}" if backend else title)
        if series:
            ax.legend(fontsize="small")
        if not any(values(g) for g in series):
            ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center")
    fig.tight_layout()
    return _png(fig)


def pass_rate_by_category(data: ReportData) -> bytes:
    def values(g):
        per = (g.scores or {}).get("per_category", {})
        return {c: 100 * s["pass@1"] for c, s in per.items()}

    return _grouped_bars(data, values, "Pass@1 (%)", "Pass@1 per category")


def roofline_by_category(data: ReportData) -> bytes:
    import statistics

    def values(g):
        return {c: statistics.median(v) for c, v in g.roofline_by_category.items() if v}

    return _grouped_bars(data, values, "median roofline fraction", "Roofline fraction of correct kernels")


def speedup_cdf(data: ReportData) -> bytes:
    """Empirical CDF of the speedups of correct samples, one line per model and platform, log x axis."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    drawn = False
    for g in data.groups:
        xs = sorted(g.speedups)
        if not xs:
            continue
        ys = [(i + 1) / len(xs) for i in range(len(xs))]
        ax.step(xs, ys, where="post", label=f"{g.name} (n={len(xs)})")
        drawn = True
    ax.axvline(1.0, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("speedup over eager PyTorch (log scale)")
    ax.set_ylabel("fraction of correct samples ≤ x")
    ax.set_title("Speedup distribution (CDF)")
    if drawn:
        ax.legend(fontsize="small")
    else:
        ax.text(0.5, 0.5, "no correct sample with a measured speedup", transform=ax.transAxes, ha="center")
    fig.tight_layout()
    return _png(fig)


def roofline_scatter(data: ReportData) -> bytes:
    """Per task: x = the eager baseline's roofline fraction, y = the best correct candidate's, log-log, one
    series per model and platform; above the diagonal the candidate beat eager, y = 1 is the bound."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.2, 5.6))
    xs_all, ys_all = [], []
    for g in data.groups:
        pts = g.baseline.points
        if not pts:
            continue
        xs, ys = [p.baseline_fraction for p in pts], [p.best_fraction for p in pts]
        ax.scatter(xs, ys, s=18, alpha=0.75, label=f"{g.name} on {g.baseline.hardware_text} (n={len(pts)})")
        xs_all += xs
        ys_all += ys
    lo = min(xs_all + ys_all + [0.1]) / 1.5
    hi = max(xs_all + ys_all + [1.0]) * 1.2
    ax.plot([lo, hi], [lo, hi], color="grey", linestyle="--", linewidth=1, label="same as eager")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ref = data.baseline.label if data.baseline is not None else "no baseline"
    ax.set_xlabel(f"eager baseline roofline fraction ({ref})")
    ax.set_ylabel("best correct candidate's roofline fraction")
    ax.set_title("Candidates vs the eager baseline on the roofline")
    if xs_all:
        ax.legend(fontsize="small")
    else:
        ax.text(0.5, 0.5, "no task with both a usable baseline and a correct\nsample with a roofline fraction",
                transform=ax.transAxes, ha="center")
    fig.tight_layout()
    return _png(fig)


#: (file stem, caption, builder); the order of the figures in the report.
FIGURES = (
    ("pass_rate_by_category", "Pass@1 per category, per platform", pass_rate_by_category),
    ("speedup_cdf", "Distribution of speedups of correct samples", speedup_cdf),
    ("roofline_by_category", "Median roofline fraction of correct samples per category", roofline_by_category),
    ("roofline_scatter", "Roofline fraction per task: best correct candidate vs the eager baseline",
     roofline_scatter),
)


def render_figures(data: ReportData) -> list[tuple[str, str, bytes]]:
    return [(stem, caption, build(data)) for stem, caption, build in FIGURES]
