"""The report's figures, as PNG bytes (embedded in the HTML as base64, also written next to the markdown).

matplotlib is imported lazily with the non-interactive Agg backend, so the rest of the package (and the
markdown tables) work without the ``report`` extra and nothing here tries to open a window. A figure with
nothing to draw is left out (its builder returns None) and the report says so in one line, rather than
showing an empty frame labelled "no data".
"""

from __future__ import annotations

import io
import math

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


def _grouped_bars(data: ReportData, values, ylabel: str, title: str) -> bytes | None:
    """One panel per platform; x = categories, one bar per model; ``values(group) -> {category: value}``;
    None when no group has a value."""
    if not any(values(g) for g in data.groups):
        return None
    plt = _pyplot()
    backends, cats = data.backends, data.categories
    fig, axes = plt.subplots(len(backends) or 1, 1, figsize=(max(6.0, 0.6 * len(cats) + 2), 3.2 * max(1, len(backends))),
                             squeeze=False)
    for ax, backend in zip(axes[:, 0], backends or [""], strict=True):
        series = [g for g in data.groups if g.group.backend == backend]
        width = 0.8 / max(1, len(series))
        drawn = 0
        for i, g in enumerate(series):
            vals = values(g)
            if not vals:  # a model without a bar has no legend entry either
                continue
            xs = [j + (i - (len(series) - 1) / 2) * width for j, c in enumerate(cats) if c in vals]
            ax.bar(xs, [vals[c] for c in cats if c in vals], width=width, label=g.group.row_name)
            drawn += 1
        ax.set_xticks(range(len(cats)))
        ax.set_xticklabels(cats, rotation=45, ha="right")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)  # bars are read by their height: the axis starts at zero
        ax.set_title(f"{title} - {backend}" if backend else title)
        if drawn:
            ax.legend(fontsize="small")
        if not any(values(g) for g in series):
            ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center")
    fig.tight_layout()
    return _png(fig)


def pass_rate_by_category(data: ReportData) -> bytes | None:
    def values(g):
        per = (g.scores or {}).get("per_category", {})
        return {c: 100 * s["pass@1"] for c, s in per.items()}

    return _grouped_bars(data, values, "Pass@1 (%)", "Pass@1 per category")


def roofline_by_category(data: ReportData) -> bytes | None:
    import statistics

    def values(g):
        return {c: statistics.median(v) for c, v in g.roofline_by_category.items() if v}

    return _grouped_bars(data, values, "median roofline fraction", "Roofline fraction of correct kernels")


def speedup_ticks(lo: float, hi: float, most: int = 9) -> list[float]:
    """Powers of two covering [lo, hi], always with 1, every ``step``-th one so there are at most ``most``:
    read as 0.5×, 1×, 2×, 4×.

    >>> speedup_ticks(0.6, 3.1)
    [0.5, 1, 2, 4]
    >>> speedup_ticks(0.001, 1000)
    [0.000244140625, 0.001953125, 0.015625, 0.125, 1, 8, 64, 512, 4096]
    """
    first, last = min(0, math.floor(math.log2(lo))), max(0, math.ceil(math.log2(hi)))
    step = max(1, math.ceil((last - first + 1) / most))
    return [2 ** e for e in range(math.floor(first / step) * step, last + step, step)]


def speedup_text(x: float) -> str:
    """``0.5×``, ``1×``, ``4×``, ``0.0039×``: plain numbers, never ``2×10^0``."""
    return f"{x:.2g}×" if x < 0.1 else f"{x:g}×"


def speedup_cdf(data: ReportData) -> bytes | None:
    """Empirical CDF of the speedups of correct samples, one line per model and platform, log x axis with
    ticks at powers of two."""
    series = [(g, sorted(g.speedups)) for g in data.groups if g.speedups]
    if not series:
        return None
    plt = _pyplot()
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    fig, ax = plt.subplots(figsize=(7, 4))
    ticks = speedup_ticks(min(xs[0] for _, xs in series), max(xs[-1] for _, xs in series))
    left, right = ticks[0] / 1.2, ticks[-1] * 1.2
    for g, xs in series:
        # From 0 at the left edge to 1 at the right one, a marker on every sample: two samples are a staircase
        # of two steps (not a vertical line), and every sample can be counted.
        steps = [left] + xs + [right]
        ys = [0.0] + [(i + 1) / len(xs) for i in range(len(xs))] + [1.0]
        (line,) = ax.step(steps, ys, where="post", label=f"{g.name} (n={len(xs)})")
        ax.plot(xs, ys[1:-1], "o", color=line.get_color(), markersize=4 if len(xs) > 30 else 6)
    ax.axvline(1.0, color="grey", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.04)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: speedup_text(x)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(left, right)
    ax.set_xlabel("speedup over eager PyTorch (log scale)")
    ax.set_ylabel("fraction of correct samples ≤ x")
    ax.set_title("Speedup distribution (CDF)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return _png(fig)


def roofline_scatter(data: ReportData) -> bytes | None:
    """Per task: x = the eager baseline's roofline fraction, y = the best correct candidate's, log-log, one
    series per model and platform; above the diagonal the candidate beat eager, y = 1 is the bound."""
    if not any(g.baseline.points for g in data.groups):
        return None
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
    ax.legend(fontsize="small")
    fig.tight_layout()
    return _png(fig)


#: (file stem, caption, builder, why a figure may be left out); the order of the figures in the report.
FIGURES = (
    ("pass_rate_by_category", "Pass@1 per category, per platform", pass_rate_by_category,
     "no scorable task"),
    ("speedup_cdf", "Distribution of speedups of correct samples", speedup_cdf,
     "no correct sample with a measured speedup"),
    ("roofline_by_category", "Median roofline fraction of correct samples per category", roofline_by_category,
     "no correct sample with a roofline fraction (no measured peak table for its hardware)"),
    ("roofline_scatter", "Roofline fraction per task: best correct candidate vs the eager baseline",
     roofline_scatter, "no task with a baseline row on its own hardware and a correct sample with a roofline "
                       "fraction"),
)


def render_figures(data: ReportData) -> tuple[list[tuple[str, str, bytes]], list[str]]:
    """``(figures, left_out)``: the drawn figures as (stem, caption, PNG), and one line per figure left out."""
    figures, left_out = [], []
    for stem, caption, build, why_empty in FIGURES:
        png = build(data)
        if png is None:
            left_out.append(f"{caption}: not drawn, {why_empty}.")
        else:
            figures.append((stem, caption, png))
    return figures, left_out
