"""Plots of certified shuffled privacy: ε versus n, ε versus ε0, total ε versus rounds, and a plan.

matplotlib is an optional dependency (``pip install 'shuffleamp[plot]'``), imported when a plot
is drawn; figures are built on matplotlib's Agg canvas (no display, no global pyplot state) and
written as PNG, SVG or PDF according to the file's suffix.

Every curve is the certified upper bound (solid line) with the band down to the certified lower
bound (shaded), as computed by :func:`shuffleamp.sweep.sweep` (ε versus n or ε0) or
:func:`shuffleamp.accounting.compose_rounds` (total over rounds); comparison methods are drawn
as dashed lines (upper value only; unsound ones labelled so).  ε is in nats.

References
----------
P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
Shuffling", IEEE S&P 2026 (arXiv:2504.07414), Theorems 13 and 14; V. Doroshenko, B. Ghazi,
P. Kamath, R. Kumar, P. Manurangsi, "Connect the Dots: Tighter Discrete Approximations of
Privacy Loss Distributions", PETS 2022 (composition over rounds).
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any, Mapping, Sequence

from ._registry import DEFAULT_EVALUATOR
from .errors import ParameterError, ShuffleampError
from .sweep import _build, expand_grid, parse_values, progress_bar, sweep, to_records

__all__ = ["plot", "plot_plan", "MissingDependencyError", "FORMATS"]

#: Legend title: how to read a curve.
LEGEND_TITLE = "line: certified upper bound; shaded: down to the certified lower bound"
#: File suffixes :func:`plot` writes.
FORMATS = (".png", ".svg", ".pdf")


class MissingDependencyError(ShuffleampError, ImportError):
    """An optional dependency needed for the request is not installed (the message says which extra)."""


def _figure(figsize=(8.0, 5.0)):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingDependencyError("plotting needs matplotlib: pip install 'shuffleamp[plot]'") from None
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _check_path(path) -> str | None:
    if path is None:
        return None
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in FORMATS:
        raise ParameterError("output", f"the file name must end in .png, .svg or .pdf, got {os.fspath(path)!r}")
    return suffix[1:]


def _save(fig, path, fmt) -> None:
    if path is None:
        return
    try:
        fig.savefig(path, format=fmt, dpi=150)
    except OSError as exc:
        raise ParameterError("output", f"cannot write {os.fspath(path)!r}: {exc.strerror or exc}") from None


def _fmt(v) -> str:
    if isinstance(v, float):
        return format(v, "g")
    return str(v)


_GREEK = {"eps0": "ε0", "delta": "δ", "epsilon": "ε"}


def _series(rows: Sequence[Mapping], inputs: Sequence[str], x: str) -> tuple[list, list[str], list[str]]:
    """Group rows into curves: everything but ``x`` identifies a curve.

    Returns (groups as (key, rows) in first-seen order, the varying key columns, the constant ones)."""
    keys = [c for c in inputs if c != x]
    groups: dict = {}
    for r in rows:
        groups.setdefault(tuple(r.get(c) for c in keys), []).append(r)
    varying = [c for i, c in enumerate(keys) if len({k[i] for k in groups}) > 1]
    constant = [c for c in keys if c not in varying]
    return list(groups.items()), varying, constant


def _label(key_cols: Sequence[str], key: tuple, show: Sequence[str]) -> str:
    d = dict(zip(key_cols, key))
    mech = d.get("mechanism", "")
    params = [f"{c}={_fmt(d[c])}" for c in key_cols if c not in ("mechanism", "eps0", "n", "delta", "epsilon",
                                                                  "method", "evaluator") and d.get(c) is not None]
    text = f"{mech} ({', '.join(params)})" if params else str(mech)
    extra = [f"{_GREEK.get(c, c)}={_fmt(d[c])}" for c in show if c in ("eps0", "n", "delta", "epsilon")
             and d.get(c) is not None]
    if "evaluator" in show and d.get("evaluator"):
        extra.append(f"evaluator {d['evaluator']}")
    if extra:
        text += ", " + ", ".join(extra)
    return text


def _given_text(constant: Sequence[str], key_cols, key) -> str:
    d = dict(zip(key_cols, key))
    parts = [f"{_GREEK.get(c, c)} = {_fmt(d[c])}" for c in ("eps0", "n", "delta", "epsilon") if c in constant
             and d.get(c) is not None]
    return ", ".join(parts)


_STYLES = ("--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)))


def _draw_bounds(ax, xs, ups, los, *, color, label, method="optimal", sound=True, marker=None, style="--"):
    pairs = [(a, u, l) for a, u, l in zip(xs, ups, los) if u is not None]
    if not pairs:
        return
    px = [p[0] for p in pairs]
    pu = [p[1] for p in pairs]
    if method == "optimal":
        ax.plot(px, pu, color=color, lw=1.8, marker=marker, ms=3, label=label)
        low = [(a, l) for a, _, l in pairs if l is not None]
        if low:
            ax.fill_between([a for a, _ in low], [l for _, l in low], [u for (a, u, l) in pairs if l is not None],
                            color=color, alpha=0.25, lw=0)
    else:
        tag = method + (", upper only" if sound else ", UNSOUND, comparison only")
        ax.plot(px, pu, color=color, lw=1.4, ls=style, marker=marker, ms=3, label=f"{label} [{tag}]")


def plot(path=None, *, x: str | None = None, mechanism: Any = "krr", eps0: Any = None, n: Any = None,
         delta: Any = None, epsilon: Any = None, method: Any = "optimal", evaluator: Any = DEFAULT_EVALUATOR,
         rounds: Any = None, rtol: float = 1e-3, scheduler: Any = None, progress: bool | None = None,
         title: str | None = None, data=None, **params):
    """Plot certified shuffled ε against n, ε0 or the number of rounds, and write it to a file.

    Parameters
    ----------
    path : str or path-like, optional
        Output file; the suffix chooses the format: ``.png``, ``.svg`` or ``.pdf``.  None: only
        return the figure.
    x : {"n", "eps0", "rounds"}, optional
        Horizontal axis.  Default: ``"rounds"`` when ``rounds`` is given, else ``"n"`` when
        several n are given, else ``"eps0"`` when several ε0 are given, else ``"n"``.
        ``"n"`` is drawn on a log scale; ε (vertical) is on a log scale in nats.
    mechanism, eps0, n, delta, epsilon, method, evaluator, rtol, scheduler, progress, **params
        The grid, as for :func:`shuffleamp.sweep.sweep` (lists and range strings such as
        ``"1e3:1e8:log:20"``).  Every combination of the values other than the x axis is one
        curve; several mechanisms and methods may be compared on one figure.
    rounds : int, list or str, optional
        Numbers of rounds R (``x="rounds"``): the certified total ε over R rounds of each
        configuration, composed by :func:`shuffleamp.accounting.compose_rounds` (method
        ``"optimal"`` only; needs ``delta``), next to basic composition R·ε (dotted).
    title : str, optional
        Figure title (default: what is plotted and the fixed parameters).
    data : pandas.DataFrame or Records, optional
        A table from :func:`shuffleamp.sweep.sweep` to draw instead of computing one
        (``x`` ``"n"`` or ``"eps0"``).

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ParameterError
        A bad grid (see :func:`shuffleamp.sweep.sweep`), an unknown ``x``, ``rounds`` without
        ``delta`` or with a method other than ``"optimal"``, an output name without a supported
        suffix (parameter ``"output"``).
    MissingDependencyError
        matplotlib is not installed.

    References
    ----------
    Su, Cheng, Wang, IEEE S&P 2026 (arXiv:2504.07414), Theorems 13 and 14 (the bounds drawn);
    Doroshenko et al., PETS 2022 (PLD composition over rounds).
    """
    fmt = _check_path(path)
    if x is None:
        if rounds is not None:
            x = "rounds"
        elif n is not None and len(parse_values(n, "n")) > 1:
            x = "n"
        elif eps0 is not None and len(parse_values(eps0, "eps0")) > 1:
            x = "eps0"
        else:
            x = "n"
    if x not in ("n", "eps0", "rounds"):
        raise ParameterError("x", f"must be 'n', 'eps0' or 'rounds', got {x!r}")
    if x == "rounds":
        if parse_values(evaluator, "evaluator") != [DEFAULT_EVALUATOR]:
            raise ParameterError("evaluator", "not used for totals over rounds (the accountant has its own grid)")
        if scheduler not in (None, "serial"):
            raise ParameterError("scheduler", "totals over rounds run in this process (no Dask)")
        return _plot_rounds(path, fmt, mechanism=mechanism, eps0=eps0, n=n, delta=delta, epsilon=epsilon,
                            method=method, rounds=rounds, progress=progress, title=title, **params)
    if rounds is not None:
        raise ParameterError("rounds", f"only used with x='rounds', not x={x!r}")
    fig = _figure()
    if data is None:
        if n is None:
            raise ParameterError("n", "required")
        data = sweep(mechanism, eps0=eps0, n=n, delta=delta, epsilon=epsilon, method=method, evaluator=evaluator,
                     rtol=rtol, scheduler=scheduler, progress=progress, errors="record", details=True,
                     as_frame=False, **params)
    rec = to_records(data)
    cols = rec.columns
    q = "epsilon" if "epsilon_upper" in cols else "delta"
    if f"{q}_upper" not in cols or x not in cols:
        raise ParameterError("data", f"needs the columns {x!r} and '{q}_upper' (a table from shuffleamp.sweep)")
    result_cols = {f"{q}_upper", f"{q}_lower", f"{q}_estimate", "sound", "delta_error", "error"}
    inputs = [c for c in cols if c not in result_cols]
    groups, varying, constant = _series(rec, inputs, x)
    key_cols = [c for c in inputs if c != x]
    ax = fig.add_subplot()
    # one colour per configuration, one line style per comparison method
    mi = key_cols.index("method") if "method" in key_cols else None
    configs = list(dict.fromkeys(tuple(v for i, v in enumerate(k) if i != mi) for k, _ in groups))
    palette = _colors(len(configs))
    others = [m for m in dict.fromkeys(k[mi] for k, _ in groups) if m != "optimal"] if mi is not None else []
    for key, rows in groups:
        rows = sorted(rows, key=lambda r: r[x])
        d = dict(zip(key_cols, key))
        color = palette[configs.index(tuple(v for i, v in enumerate(key) if i != mi))]
        method = d.get("method") or "optimal"
        style = "-" if method == "optimal" else _STYLES[others.index(method) % len(_STYLES)]
        sound = all(r.get("sound") is not False for r in rows)
        _draw_bounds(ax, [r[x] for r in rows], [r.get(f"{q}_upper") for r in rows],
                     [r.get(f"{q}_lower") for r in rows], color=color, label=_label(key_cols, key, varying),
                     method=method, sound=sound, marker="o" if len(rows) <= 25 else None, style=style)
    if x == "n":
        ax.set_xscale("log")
        ax.set_xlabel("n (number of users shuffled together, log scale)")
    else:
        ax.set_xlabel("local ε0 (nats)")
    ax.set_yscale("log")
    ax.set_ylabel("central ε (nats, log scale)" if q == "epsilon" else "central δ (log scale)")
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    given = _given_text(constant, key_cols, groups[0][0]) if groups else ""
    what = "central ε" if q == "epsilon" else "central δ"
    ax.set_title(title or f"Shuffled {what} versus {'n' if x == 'n' else 'ε0'}" + (f" ({given})" if given else ""),
                 fontsize=11)
    ax.legend(fontsize=8, loc="best", title=LEGEND_TITLE, title_fontsize=8)
    failed = sum(1 for r in rec if r.get("error"))
    if failed:
        fig.text(0.01, 0.005, f"{failed} point(s) not drawn (out of regime or failed)", fontsize=7, color="0.4")
    _save(fig, path, fmt)
    return fig


def _colors(k: int) -> list:
    base = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22"]
    return [base[i % len(base)] for i in range(k)]


def _plot_rounds(path, fmt, *, mechanism, eps0, n, delta, epsilon, method, rounds, progress, title, **params):
    from .accounting import compose_rounds

    if rounds is None:
        raise ParameterError("rounds", "required for x='rounds' (e.g. '1:365:log:12')")
    if delta is None or epsilon is not None:
        raise ParameterError("delta", "x='rounds' plots the total epsilon at a given delta: give delta (not epsilon)")
    if n is None:
        raise ParameterError("n", "required")
    r_values = [int(v) if isinstance(v, (int, float)) and v == int(v) else v for v in parse_values(rounds, "rounds")]
    from . import _validate

    r_values = sorted({_validate.count(v, "rounds") for v in r_values})
    methods = parse_values(method, "method")
    if methods != ["optimal"]:
        raise ParameterError("method", "the total over rounds is computed for the optimal bound only")
    points, columns = expand_grid(mechanism, eps0=eps0, n=n, delta=delta, **params)
    fig = _figure()
    for p in {id(p["_spec"]): p for p in points}.values():
        _build(p["_spec"])
    inputs = columns
    groups, varying, constant = _series([p["_row"] for p in points], inputs, "__none__")
    key_cols = list(inputs)
    ax = fig.add_subplot()
    colors = _colors(len(points))
    with progress_bar(len(points) * len(r_values), progress=progress, desc="rounds", unit="total") as bar:
        for p, color in zip(points, colors):
            mech = _build(p["_spec"])
            row = p["_row"]
            ups, los = [], []
            for R in r_values:
                acc = compose_rounds([(mech, row["n"], R)], delta=row["delta"])
                ups.append(float(acc.upper))
                los.append(float(acc.lower))
                bar.update(1)
            label = _label(key_cols, tuple(row.get(c) for c in key_cols), varying)
            _draw_bounds(ax, r_values, ups, los, color=color, label=label, marker="o" if len(r_values) <= 25 else None)
            ax.plot(r_values, [R * _one_round(mech, row["n"], row["delta"] / R) for R in r_values], color=color,
                    lw=1.0, ls=":", label=f"{label}: basic composition R·ε(δ/R) (certified, loose)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("R (number of shuffled rounds one user takes part in, log scale)")
    ax.set_ylabel("total central ε over R rounds (nats, log scale)")
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    given = _given_text(constant, key_cols, tuple(points[0]["_row"].get(c) for c in key_cols)) if points else ""
    ax.set_title(title or ("Total shuffled ε over rounds (PLD composition)" + (f", {given}" if given else "")),
                 fontsize=11)
    ax.legend(fontsize=8, loc="best", title=LEGEND_TITLE, title_fontsize=8)
    _save(fig, path, fmt)
    return fig


def _one_round(mech, n: int, delta: float) -> float:
    from .bounds import epsilon as _epsilon

    return float(_epsilon(mech, n, delta).upper)


def plot_plan(plan, path=None, *, curve: Mapping | None = None, title: str | None = None, points: int = 24,
              progress: bool | None = None):
    """Draw a plan's certified grand total ε against the day, each collection's contribution and the budget.

    The grand total (a user in every collection; day t counts min(t, rounds) rounds of each collection) is
    drawn as its certified upper bound (a line) with a band down to its certified lower bound; each
    collection's own total as a thin line; the budget's ε as a horizontal dashed line.  Every total is at the
    plan's δ (:func:`shuffleamp.config.plan_delta`); both axes are logarithmic, ε in nats.

    Parameters
    ----------
    plan : Plan or path-like
        A plan without list-valued fields (:func:`shuffleamp.config.load_plan`) or a plan file.
    path : str or path-like or None
        Output file (``.png``, ``.svg`` or ``.pdf``); None only returns the figure.
    curve : dict, optional
        :func:`shuffleamp.plans.total_over_days` of ``plan``, if already computed.
    title : str, optional
        Figure title.
    points : int, default 24
        Number of log-spaced days evaluated (with 1, each collection's last day and the plan's last day).
    progress : bool or None
        A tqdm bar on stderr while the totals are computed (None: on a terminal only).

    Returns
    -------
    matplotlib.figure.Figure
        One axes; ``fig.plan_curve`` is the plotted data (the ``curve`` dict).

    Raises
    ------
    ParameterError
        An output name without a supported suffix (parameter ``"output"``), a plan with scenarios
        (``"plan"``).
    MissingDependencyError
        matplotlib is not installed.
    """
    from .plans import _as_plan, total_over_days

    fmt = _check_path(path)
    plan = _as_plan(plan)
    if curve is None:
        curve = total_over_days(plan, points=points, progress=progress)
    fig = _figure(figsize=(9.0, 5.5))
    ax = fig.add_subplot()
    days = curve["days"]
    colors = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
    for i, (name, ups) in enumerate(curve["collections"].items()):
        ax.plot(days, ups, color=colors[i % len(colors)], lw=1.4, ls="--", zorder=4, gid=f"collection:{name}",
                label=f"collection {name!r}: total (upper, certified)")
    lo = [max(v, 1e-300) for v in curve["lower"]]
    ax.fill_between(days, lo, curve["upper"], color="#d62728", alpha=0.18, lw=0, gid="grand-total-band",
                    label="grand total: down to the certified lower bound")
    ax.plot(days, curve["upper"], color="#d62728", lw=2.2, marker="o", ms=3, gid="grand-total-upper",
            label="grand total, every collection (upper, certified)")
    b = curve.get("budget")
    if b:
        ax.axhline(b["epsilon"], color="k", ls=":", lw=1.5, gid="budget", label=f"budget ε = {_fmt(b['epsilon'])}")
    if days[-1] > days[0]:
        ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(days[0], days[-1])
    ax.set_xlabel("day (one shuffled round of every collection per day)")
    ax.set_ylabel(f"total central ε (nats) at δ = {curve['delta']:.3g}")
    ax.grid(True, which="both", alpha=0.25)
    ax.set_title(title or "Certified total ε of the plan over time", fontsize=11)
    fig.legend(*ax.get_legend_handles_labels(), fontsize=8, loc="outside lower center", ncol=2)
    fig.plan_curve = curve
    _save(fig, path, fmt)
    return fig


class _CallableModule(types.ModuleType):
    """``shuffleamp.plot`` is also the function (see :mod:`shuffleamp.sweep`)."""

    def __call__(self, *args, **kwargs):
        return plot(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
