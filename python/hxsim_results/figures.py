"""hxsim's standard figures with matplotlib, sized for a paper: load sweeps (accepted load, latency
and Jain's index against offered load, one curve per series) and a run's time series.

Every function returns the matplotlib Figure (and draws into axes you pass, if you do), so a figure
can be adjusted before `fig.savefig(...)`. Sizes follow `hxsim plot`: 7 in wide with 9 pt text by
default (:func:`paper_figure`).
"""

import math

import matplotlib.pyplot as plt

from .read import open_run, points, swept_keys

#: Routing names as the papers write them (as `hxsim plot` labels them).
ROUTING_LABELS = {
    "dor": "DOR", "minimal": "Minimal", "valiant": "Valiant", "omniwar": "OmniWAR", "polarized": "Polarized",
    "surepath-omni": "OmniSP", "surepath-polarized": "PolSP", "dal": "DAL", "sp": "SP", "ecmp": "ECMP",
    "allpath": "AllPath",
}

#: The sweep metrics drawn against offered load: column, panel title, y label.
METRICS = {
    "accepted_load": ("Throughput", "Accepted load\n(phits/cycle/server)"),
    "average_latency": ("Latency", "Average latency\n(cycles)"),
    "jain_index": ("Fairness", "Jain's index\nof injected load"),
}

_MARKERS = ["o", "s", "^", "D", "v", "X"]


def paper_figure(ncols=3, width_in=7.0, font_pt=9.0, aspect=0.82, nrows=1):
    """A figure `width_in` inches wide with `ncols` x `nrows` panels, each `aspect` times as tall as
    wide, and its text at `font_pt` (7 in and 9 pt: a two-column paper's text width and caption
    size). Returns `(fig, axes)`, `axes` a flat list."""
    with plt.rc_context({"font.size": font_pt, "axes.titlesize": font_pt, "axes.labelsize": font_pt,
                         "xtick.labelsize": font_pt, "ytick.labelsize": font_pt, "legend.fontsize": font_pt}):
        panel = width_in / ncols
        fig, axes = plt.subplots(nrows, ncols, figsize=(width_in, panel * aspect * nrows + 0.8), squeeze=False)
    return fig, list(axes.flat)


def series_label(values):
    """Legend text of one series from its `{key: value}`: routing names as in the papers, other
    keys as `name=value` (the last part of the dotted key)."""
    parts = []
    for k, v in values.items():
        if k == "routing.algorithm":
            parts.append(ROUTING_LABELS.get(v, str(v)))
        else:
            parts.append(f"{k.rsplit('.', 1)[-1]}={v}")
    return ", ".join(parts)


def _series(df, keys):
    """The rows of `df` grouped by the values of `keys`, in order of first appearance: a list of
    (label, rows)."""
    if not keys:
        return [("", df)]
    out = []
    for vals, rows in df.groupby(keys, sort=False):
        vals = vals if isinstance(vals, tuple) else (vals,)
        out.append((series_label(dict(zip(keys, vals))), rows))
    return out


def plot_load_sweep(sweep, metrics=("accepted_load", "average_latency", "jain_index"), where=None, axes=None,
                    width_in=7.0, font_pt=9.0, title=None):
    """Each metric of `metrics` against offered load, one curve per combination of the other swept
    keys that vary (routing first), as `hxsim plot` draws a load sweep. `sweep`: a sweep file or
    its :func:`points` frame; `where`: `{key: value}` to keep only those points (e.g. one traffic
    pattern); `title`: above the panels. Points whose measured window was not steady are drawn
    hollow. Returns the Figure."""
    df = points(sweep) if isinstance(sweep, str) else sweep
    keys = swept_keys(sweep) if isinstance(sweep, str) else [c for c in df.columns if "." in c]
    for k, v in (where or {}).items():
        df = df[df[k] == v]
    if "traffic.load" not in df.columns or df.empty:
        raise ValueError("no points with a traffic.load axis to draw")
    varying = [k for k in keys if k != "traffic.load" and not k.startswith("simulation.") and df[k].nunique() > 1]
    varying.sort(key=lambda k: k != "routing.algorithm")
    if axes is None:
        fig, axes = paper_figure(len(metrics), width_in, font_pt)
    else:
        fig = axes[0].figure
    groups = _series(df, varying)
    with plt.rc_context({"font.size": font_pt}):
        for ax, metric in zip(axes, metrics):
            panel_title, ylabel = METRICS.get(metric, (metric, metric))
            for i, (label, rows) in enumerate(groups):
                rows = rows.sort_values("traffic.load")
                color, marker = f"C{i % 10}", _MARKERS[i % len(_MARKERS)]
                ax.plot(rows["traffic.load"], rows[metric], color=color, marker=marker, markersize=3.5,
                        linewidth=1.0, label=label or None)
                if "steady_state" in rows:
                    bad = rows[rows["steady_state"] == 0]
                    ax.plot(bad["traffic.load"], bad[metric], linestyle="none", marker=marker, markersize=6,
                            markerfacecolor="white", markeredgecolor="black")
            if metric == "accepted_load":
                lo, hi = df["traffic.load"].min(), df["traffic.load"].max()
                ax.plot([lo, hi], [lo, hi], linestyle="--", color="grey", linewidth=0.8)
            ax.set_title(panel_title, fontsize=font_pt, fontweight="bold")
            ax.set_xlabel("Offered load\n(phits/cycle/server)", fontsize=font_pt)
            ax.set_ylabel(ylabel, fontsize=font_pt)
            ax.tick_params(labelsize=font_pt)
            if metric != "jain_index":
                ax.set_ylim(bottom=0)
            ax.grid(True, color="0.9")
        top = 1.0
        if title:
            fig.suptitle(title, fontsize=font_pt * 1.1, fontweight="bold")
            top = 1.0 - 1.6 * font_pt / 72 / fig.get_figheight()
        # A legend strip under the panels; none for a single, unlabelled series.
        bottom = 0.0
        if any(label for label, _ in groups):
            handles, labels = axes[0].get_legend_handles_labels()
            fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), frameon=False,
                       fontsize=font_pt)
            bottom = math.ceil(len(labels) / 6) * 1.6 * font_pt / 72 / fig.get_figheight()
        fig.tight_layout(rect=(0, bottom, 1, top))
    return fig


def plot_latency(sweep, where=None, ax=None, width_in=3.4, font_pt=9.0):
    """Average latency against offered load alone (one column of a two-column paper wide by
    default), one curve per series; see :func:`plot_load_sweep`. Returns the Figure."""
    axes = None if ax is None else [ax]
    return plot_load_sweep(sweep, metrics=("average_latency",), where=where, axes=axes, width_in=width_in,
                           font_pt=font_pt)


def _window(config_text):
    """(warmup end, measurement end) in cycles from a run's config (TOML), or None (fixed
    workloads, or no TOML reader: Python before 3.11)."""
    try:
        import tomllib
    except ImportError:
        return None
    cfg = tomllib.loads(config_text)
    traffic, sim = cfg.get("traffic", {}), cfg.get("simulation", {})
    if traffic.get("mode") == "fixed" or "warmup_cycles" not in sim:
        return None
    return sim["warmup_cycles"], sim["warmup_cycles"] + sim["measure_cycles"]


def plot_timeseries(path, point=None, width_in=7.0, font_pt=9.0):
    """A run's time series (or a sweep point's): injected and accepted load, mean latency and
    packets in flight against cycles, the measurement window dotted. Returns the Figure."""
    run = open_run(path, point)
    ts = run["timeseries"]
    fig, axes = paper_figure(3, width_in, font_pt)
    panels = [
        ("Load", "Load (phits/cycle/server)", [("injected_load", "injected load", "C0"),
                                              ("accepted_load", "accepted load", "C1")]),
        ("Latency", "Mean latency (cycles)", [("mean_latency", "mean latency", "C2")]),
        ("Packets in flight", "Packets in the network", [("in_flight", "packets in flight", "C4")]),
    ]
    window = _window(run["attrs"].get("config", ""))
    for ax, (title, ylabel, cols) in zip(axes, panels):
        for col, label, color in cols:
            ax.plot(ts["cycle"], ts[col], color=color, linewidth=1.0, label=label)
        if window:
            for x in window:
                ax.axvline(x, color="grey", linestyle=":", linewidth=0.8)
        ax.set_title(title, fontsize=font_pt, fontweight="bold")
        ax.set_xlabel("Cycle" + ("\n(measurement window dotted)" if window else ""), fontsize=font_pt)
        ax.set_ylabel(ylabel, fontsize=font_pt)
        ax.tick_params(labelsize=font_pt)
        ax.set_ylim(bottom=0)
        ax.grid(True, color="0.9")
    handles = [h for ax in axes for h in ax.get_lines() if not h.get_label().startswith("_")]
    fig.legend(handles, [h.get_label() for h in handles], loc="lower center", ncol=4, frameon=False,
               fontsize=font_pt)
    fig.tight_layout(rect=(0, 1.6 * font_pt / 72 / fig.get_figheight(), 1, 1))
    return fig
