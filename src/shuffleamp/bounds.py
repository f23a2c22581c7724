r"""Public bounds: δ(ε) and ε(δ) for a shuffled ε0-LDP randomizer.

``method="optimal"`` (default) is the blanket / general-clone optimal decomposition
bound of Su, Cheng, Wang (IEEE S&P 2026, arXiv:2504.07414, Theorem 13):

.. math::

    \delta^*(\varepsilon) = \max_{(x,x')} \tfrac1n E\Big[\Big(\sum_{i=1}^n G_i^{x,x'}\Big)_+\Big],

with the maximum over the mechanism's neighbouring input pairs in both directions.
The lower bound is the exact divergence of the x₂ = … = xₙ dataset (Theorem 14),
maximised over the mechanism's documented datasets.

Every other ``method`` is a comparison method implemented in :mod:`shuffleamp.baselines`
(standard clone, its closed form, corrected stronger clone, privacy-blanket Hoeffding / Bennett,
Erlingsson et al., and the *unsound* variation-ratio and μ-GDP values), each labelled by
``sound``, ``kind`` and ``settings["regime"]``.  ``"optimal"`` is the default and the only
method with a certified lower bound.

Where things are: the GPARV families of a mechanism and their caches in :mod:`shuffleamp.families`; the
certified δ of a family (the evaluator interface and its selection policy) in :mod:`shuffleamp.evaluate`; the
ε search (compiled for atomic decompositions, else in Python) in :mod:`shuffleamp.search`.  This module holds
the methods (the optimal method: binary RR's routing, the decomposition bound, the pruning strategy of the ε
search over many families, the lower-bound fallbacks) and the public :func:`delta` / :func:`epsilon`.

Certified vs estimated: ``upper`` is a certified upper bound and ``lower`` a certified
lower bound on the true shuffled δ (resp. ε), up to IEEE rounding of order 1e-15 in
the discretisation; the *tightness* (how far ``upper`` is above the exact optimal
value) is governed by ``rtol`` and is an estimate.  See :mod:`shuffleamp.fft_engine`.

References
----------
P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (short version: arXiv:2504.07414), Theorems 13 and 14.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from . import _validate, baselines, fft_engine
from . import exact as _exact
from . import exact_count as _ec
from ._numerics import (DEFAULT_MAX_MEMORY_GB, DEFAULT_MAX_SECONDS, budget, check_work, current_budget,
                        root_of_estimate)
from ._registry import (DEFAULT_EVALUATOR, EVALUATORS, EXACT_COUNT_INFO, METHODS, OPTIMAL_INFO, OPTIMAL_REGIME,
                        OPTIMAL_SOURCE, Method, Settings)
from .decomposition import Decomposition, PackedFamilies, chernoff_bounds, dedupe
from .families import (_FAMILY_CACHE, FAMILY_CACHE_SIZE, LAZY_FAMILIES, PACK_CACHE_SIZE,  # noqa: F401
                       _cached_families, _families, _packed, _with_swaps, _with_swaps_packed)
from .evaluate import (ATOM_NODE_SECONDS, DECOMPOSITION_MAX_EPS0,  # noqa: F401
                       DECOMPOSITION_MAX_N, DEFAULT_RTOL, DEFAULT_RTOL_LOWER, EVALUATIONS_PER_SEARCH,
                       LOWER_BAND_RTOL, LOWER_MODE, NODES_PER_EVALUATION, SKIP_DECOMPOSITION_RTOL, _atomic,
                       binary_rr_plan, estimator, max_atoms, max_delta, search_cost)
from .fft_engine import DEFAULT_MAX_GRID
from .search import (EXPENSIVE_NODES, SOFT_GAP, _chord_bracket, estimate_root, keep_largest_roots,  # noqa: F401
                     search_families, search_work_rate, solve_epsilon)
from .errors import OutOfRegimeError, ParameterError, ResourceLimitError
from .results import BoundResult

__all__ = ["delta", "epsilon", "case_deltas", "BoundResult", "Method", "METHODS", "METHOD_REGISTRY",
           "EVALUATORS", "DEFAULT_EVALUATOR", "DEFAULT_RTOL", "DEFAULT_RTOL_LOWER", "method",
           "max_delta", "estimator", "solve_epsilon"]



def case_deltas(mechanism, n: int, epsilon: float, *, kind: str = "upper", rtol: float = DEFAULT_RTOL,
                max_grid: int = DEFAULT_MAX_GRID, evaluator: str = DEFAULT_EVALUATOR) -> list[dict]:
    """δ of every case (family) of a mechanism, largest first: which neighbouring pair is worst.

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism (most useful for a joint composition: one case per Hamming pattern).
    n : int
        Number of users.
    epsilon : float
        Central ε (nats).
    kind : {"upper", "lower"}
        Upper: blanket GPARVs (both orientations, certified upper per case; Su, Cheng, Wang,
        IEEE S&P 2026, Theorem 13);
        lower: Theorem-14 GPARVs (certified lower per dataset).
    rtol, max_grid, evaluator
        See :func:`delta` (the same evaluator dispatch).

    Returns
    -------
    list of dict
        ``{"label": str, "delta": float}`` sorted by decreasing ``delta``.

    Raises
    ------
    ParameterError
        Bad ``kind``, ``n``, ``epsilon`` or ``evaluator``.
    """
    _validate.choice(kind, "kind", {"upper", "lower"})
    _validate.choice(evaluator, "evaluator", set(EVALUATORS))
    n = _validate.count(n, "n")
    epsilon = _validate.epsilon(epsilon)
    out = []
    if kind == "upper":
        for f in mechanism.upper_decompositions():
            s = f.swapped()
            val = max_delta((f,) if s is f else (f, s), n, epsilon, "spread", rtol, max_grid, evaluator)[0]
            out.append({"label": f.label, "delta": val})
    else:
        for f in _families(mechanism, "optimal", "lower"):
            out.append({"label": f.label,
                        "delta": max_delta((f,), n, epsilon, LOWER_MODE, rtol, max_grid, evaluator)[0]})
    out.sort(key=lambda r: -r["delta"])
    return out


# ---------------------------------------------------------------------------- count projections (lower)
#: At most this many lower-bound datasets get count projections (the fallback lower bound).
MAX_PROJECTION_FAMILIES = 16
#: The projection fallback runs when the Theorem-14 lower bound is below this fraction of the upper.
PROJECTION_TRIGGER = 0.5
#: At most this many count projections are evaluated per point (the best-separated ones first).
PROJECTION_EVALS = 4

_PROJECTION_NOTE = (
    "weak lower bound: the Theorem-14 evaluation of the lower-bound datasets could not resolve this regime "
    "(its certified error exceeds the answer, e.g. an n-fold sum with exponentially rare atoms); the lower "
    "bound is the exact divergence of the count of shuffled reports in one output set S of the same dataset "
    "(a post-processing, so valid but blind to the rest of the histogram)")
_ZERO_NOTE = ("lower bound 0: no evaluated concrete dataset (Theorem-14 datasets, both orderings, and their "
              "count projections) has a certified divergence above the target here")


def _projection_sets(families) -> list:
    """(alpha, beta, gamma, label) of the count projections of the Theorem-14 datasets.

    For a dataset decomposition ``Decomposition(a=R(x0), b=R(x1), c=R(x2), beta=0)`` (components are
    output sets, merged by ratio), the sets are: components with a > b, with a < b, and the single
    components of largest and smallest a/b.
    """
    from .decomposition import Decomposition

    out, seen = [], set()
    for f in families:
        if len(seen) >= 4 * MAX_PROJECTION_FAMILIES:
            break
        if not isinstance(f, Decomposition) or f.beta > 1e-12 or abs(f.c.sum() - 1.0) > 1e-9:
            continue
        a, b, c = f.a, f.b, f.c
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(b > 0, a / np.where(b > 0, b, 1.0), np.inf)
        masks = [a > b, a < b]
        for j in (int(np.argmax(r)), int(np.argmin(r))):
            m = np.zeros(a.shape, dtype=bool)
            m[j] = True
            masks.append(m)
        for m in masks:
            if not m.any() or m.all():
                continue
            al, be, ga = (min(max(float(v[m].sum()), 0.0), 1.0) for v in (a, b, c))
            key = (al, be, ga)              # exact masses: the projected pair must be the dataset's own
            if al == be or key in seen:
                continue
            seen.add(key)
            out.append((al, be, ga, f.label))
    return out


def _projection_score(alpha: float, beta: float, gamma: float, n: int) -> float:
    """How far apart the two count laws of a projection are, in standard deviations of the other users'
    count (a deterministic ranking only: the bound of every evaluated projection is certified)."""
    return abs(alpha - beta) / math.sqrt((n - 1) * gamma * (1.0 - gamma) + 1.0)


def _projection_lower(ctx: Settings, n: int, x: float, want_eps: bool):
    """Best certified lower value over the count projections: (value, label) or (0, None).

    Only the :data:`PROJECTION_EVALS` projections with the largest :func:`_projection_score` are
    evaluated (each costs O(sqrt n)); any subset of concrete dataset pairs gives a valid lower bound.
    """
    if "projection_sets" not in ctx.memo:
        ctx.memo["projection_sets"] = _projection_sets(ctx.lower_families)
    sets = sorted(ctx.memo["projection_sets"], key=lambda t: -_projection_score(t[0], t[1], t[2], n))
    best, lab, done = 0.0, None, set()
    for alpha, beta, gamma, label in sets[:PROJECTION_EVALS]:
        # a dataset's swap projects to (beta, alpha, gamma): projection_pair_bounds takes the maximum over both
        # orderings, so its value is the same (bit for bit) and, not larger, it would not replace the label
        key = (min(alpha, beta), max(alpha, beta), gamma)
        if key in done:
            continue
        done.add(key)
        try:
            lo = _ec.projection_pair_bounds(alpha, beta, gamma, n, x, want_eps)[1]
        except ResourceLimitError:
            continue
        if lo > best:
            best, lab = lo, f"count projection of {label}"
    return best, lab


def _improve_lower(ctx: Settings, n: int, x: float, want_eps: bool, up: float, lo, rec: dict, cap: float):
    """Max of the Theorem-14 lower bound and, where that one is weak, the count projections; sets the
    record's ``lower_engine`` / ``lower_note``."""
    lo = 0.0 if lo is None else lo
    if up <= 0.0:                 # the upper bound is 0: so is the exact value, and the lower 0 is exact
        return 0.0
    if ctx.lower_families and lo <= PROJECTION_TRIGGER * up:
        p, lab = _projection_lower(ctx, n, x, want_eps)
        p = min(p, cap)
        if p > lo:
            lo = p
            rec["lower_engine"] = "count-projection"
            rec["lower_pair"] = lab
            rec["lower_note"] = _PROJECTION_NOTE
    if lo <= 0.0:
        rec["lower_note"] = _ZERO_NOTE
    return min(lo, up)


# ---------------------------------------------------------------------------- the optimal method
def _optimal_prepare(mechanism, ctx: Settings) -> Settings:
    """The settings with the mechanism's families and binary RR's ε0 (refused up front when too costly)."""
    e0 = _ec.binary_rr_eps0(mechanism)
    # above the count law's eps0 limit the decomposition bound answers alone
    ctx = ctx.with_(upper_families=_cached_families(mechanism, "upper"),
                    lower_families=_cached_families(mechanism, "lower"),
                    binary_rr_eps0=e0 if e0 is not None and e0 <= _ec.MAX_EPS0 else None)
    lists = (ctx.upper_families, ctx.lower_families)
    check_work(search_cost(lists).seconds,
               f"evaluating GPARVs of {max_atoms(lists)} atoms (a mechanism with fewer distinct output ratios "
               "is cheaper)")
    return ctx


def _count_law(ctx: Settings, n: int, x: float, want_eps: bool):
    """Binary RR's exact count law at one point (ε at δ = x, or δ at ε = x): (result, None), or (None, the
    reason it did not run: n above its default limit, or a ResourceLimitError).  Computed once per point of a
    call (kept in ``ctx.memo``): the routing and the engines' comparison read the same result."""
    key = ("count_law", n, x, want_eps)
    hit = ctx.memo.get(key)
    if hit is None:
        hit = ctx.memo[key] = _count_law_run(ctx, n, x, want_eps)
    return hit


def _count_law_run(ctx: Settings, n: int, x: float, want_eps: bool):
    if n > _ec.DEFAULT_MAX_N:
        return None, (f"n > {_ec.DEFAULT_MAX_N:.0e}: decomposition only (method='exact-count' runs the count law "
                      "up to its memory limit)")
    try:
        return _ec.default_point(ctx.binary_rr_eps0, n, x, want_eps), None
    except ResourceLimitError as exc:
        return None, str(exc)


def _ec_summary(r, error: bool = False) -> dict:
    """The record of an exact-count result (with its error bound when ``error``)."""
    out = {"upper": r.upper, "lower": r.lower}
    if error:
        out["error"] = r.error
    out.update(worst_m=int(r.worst_m), converged=bool(r.converged), pairs=r.settings["pairs_evaluated"])
    return out


def _exact_count_side(ctx: Settings, n: int, x: float, want_eps: bool, up: float, lo, rec: dict):
    """Binary RR inside the default method: upper = min(exact-count, decomposition) upper and
    lower = max of both lowers; each side's engine is recorded."""
    rec["upper_engine"] = "decomposition"
    rec["lower_engine"] = rec.get("lower_engine", "decomposition")
    if ctx.binary_rr_eps0 is None:
        return up, lo
    r, skipped = _count_law(ctx, n, x, want_eps)
    if r is None:
        rec["exact_count"] = {"skipped": skipped}
        return up, lo
    rec["exact_count"] = _ec_summary(r)
    rec["decomposition"] = {"upper": up, "lower": lo}
    if r.upper < up:
        up, rec["upper_engine"] = r.upper, "exact-count"
    if lo is None or r.lower > lo:
        lo, rec["lower_engine"] = r.lower, "exact-count"
        rec.pop("lower_note", None)
        rec.pop("lower_pair", None)
    return up, min(lo, up)


def _binary_rr_point(mechanism, n: int, x: float, want_eps: bool, ctx: Settings):
    """Binary RR in the default method: the exact count law first, the decomposition only where it can help.

    The count law (:mod:`shuffleamp.exact_count`) brackets the exact worst case over every dataset.
    When its certified bracket is within :data:`SKIP_DECOMPOSITION_RTOL` (relative; upper within that of a
    concrete dataset's certified lower), no decomposition bound can improve either side by more, so
    none is run.  Otherwise only the decomposition's upper runs, and only where it was seen to be below
    the count law's block bounds (n < :data:`DECOMPOSITION_MAX_N`, eps0 < :data:`DECOMPOSITION_MAX_EPS0`);
    the decomposition's lower runs only when the count law's own band on its worst dataset is wider than
    :data:`LOWER_BAND_RTOL` (large n): its dataset pairs (user 1's bit flipped, the others all 0 or all 1,
    both orderings) are the pairs m = 0 and m = n - 1 that the count law evaluates exactly, but at large
    n the count law's band is wider than the decomposition's evaluation of them.  Returns None when the count law does not run (n above its limit, or a
    ResourceLimitError): the usual path then runs unchanged.  Soundness is unaffected either way
    (upper = min and lower = max of certified bounds).
    """
    e0 = ctx.binary_rr_eps0
    r, _skipped = _count_law(ctx, n, x, want_eps)
    if r is None:
        return None
    tight = r.upper - r.lower <= SKIP_DECOMPOSITION_RTOL * r.lower
    if binary_rr_plan(e0, n, want_eps, tight) == "decomposition-upper":
        # (a delta query here always takes the decomposition's one evaluation: an epsilon query's upper
        # may come from it, and delta(epsilon_upper) <= delta must hold between the two queries)
        if want_eps:
            return _optimal_epsilon_families(mechanism, n, x, ctx, ctx.upper_families, [])
        up, info_u = max_delta(ctx.upper_families, n, x, "spread", ctx.rtol, ctx.max_grid,
                               ctx.evaluator)
        rec = {"upper": info_u, "lower": None}
        return (*_exact_count_side(ctx, n, x, False, up, None, rec), rec)
    up, lo = r.upper, r.lower
    if want_eps:
        up = min(up, float(mechanism.eps0))
    rec = {"upper": None, "lower": None}
    lower_engine = "exact-count"
    if r.settings["worst_pair_upper"] - r.lower > LOWER_BAND_RTOL * r.lower and ctx.lower_families:
        # at large n the count law's own band (recurrence round-off over ~1e5 entries) is wider than the
        # decomposition's evaluation of the same datasets (others all 0 / all 1): take the better lower
        if want_eps:
            fn_lo = lambda e: max_delta(ctx.lower_families, n, e, LOWER_MODE, ctx.rtol_lower,  # noqa: E731
                                        ctx.max_grid, ctx.evaluator)
            d_lo, info_l, cnt_l = solve_epsilon(fn_lo, x, float(mechanism.eps0), "lower", ctx.eps_rtol,
                                                estimator(ctx.lower_families, n))
            rec["lower_evaluations"] = cnt_l
        else:
            d_lo, info_l = max_delta(ctx.lower_families, n, x, LOWER_MODE, ctx.rtol_lower, ctx.max_grid,
                                     ctx.evaluator)
        rec["lower"] = info_l
        if d_lo > lo:
            lo, lower_engine = d_lo, "decomposition"
    rec.update({"upper_engine": "exact-count", "lower_engine": lower_engine,
           "exact_count": _ec_summary(r),
           "decomposition": {"skipped": (f"the exact count law's bracket is within {SKIP_DECOMPOSITION_RTOL:g}"
                                          if tight else "the exact count law's block bounds are below it here")
                             + ("" if rec["lower"] is None else
                                                              "; its lower bound was run")}})
    return up, min(lo, up), rec


def _optimal_delta(mechanism, n: int, eps: float, ctx: Settings):
    """δ(ε) of the optimal method at one point: binary RR's routing (:func:`_binary_rr_point`), else
    :func:`_decomposition_delta`.  Returns (upper, lower, record)."""
    if ctx.binary_rr_eps0 is not None:
        out = _binary_rr_point(mechanism, n, eps, False, ctx)
        if out is not None:
            return out
    return _decomposition_delta(mechanism, n, eps, _at_n(mechanism, n, ctx))


#: An ε query through ``decompositions_at`` searches the lower bound over this many lower-bound datasets (orderings
#: included): those with the largest estimated root (any subset of datasets gives a certified lower bound).  Two
#: keep both orderings of Laplace's concrete pair: the uncertified ranking picks the weaker one at small n (e.g.
#: ε0 = 3, n = 2: lower 0.996 instead of 1.154), at no measurable cost.
AT_N_LOWER_KEEP = 2


def _at_n(mechanism, n: int, ctx: Settings, target: float | None = None) -> Settings:
    """``ctx`` with the mechanism's finite decompositions for n users (``decompositions_at(n)``: continuous
    randomizers whose certified discretisation depends on n) under the exact evaluator, else ``ctx`` itself.
    For an ε query at δ = ``target`` the lower-bound datasets are cut to the AT_N_LOWER_KEEP with the largest
    saddle-point estimate of the root (uncertified; it only ranks)."""
    at = getattr(mechanism, "decompositions_at", None)
    if at is None or ctx.evaluator != "exact":
        return ctx
    slow = getattr(mechanism, "refuse_slow_epsilon", None)
    if target is not None and slow is not None:
        slow(n)                       # an up-front refusal of an ε search that would take seconds
    up, lo = at(n)
    lo = list(lo)
    if target is not None:
        lo = keep_largest_roots(lo, n, target, float(mechanism.eps0), AT_N_LOWER_KEEP)
    return ctx.with_(upper_families=list(up), lower_families=lo)


def _decomposition_delta(mechanism, n: int, eps: float, ctx: Settings):
    """The decomposition bound at one ε: the certified maximum over the upper families (Theorem 13) and over the
    lower-bound datasets (Theorem 14), improved by count projections, and for binary RR the exact count law
    beside it in full (upper = min, lower = max of both; both recorded)."""
    up, info_u = max_delta(ctx.upper_families, n, eps, "spread", ctx.rtol, ctx.max_grid, ctx.evaluator)
    lo, info_l = None, None
    rec = {"upper": info_u}
    if ctx.lower_families:
        lo, info_l = max_delta(ctx.lower_families, n, eps, LOWER_MODE, ctx.rtol_lower, ctx.max_grid,
                               ctx.evaluator)
        rec["lower"] = info_l
        lo = _improve_lower(ctx, n, eps, False, up, min(lo, up), rec, 1.0)
    else:
        rec["lower"] = None
    up, lo = _exact_count_side(ctx, n, eps, False, up, lo, rec)
    return up, lo, rec


#: Above LAZY_FAMILIES families (large matrices, joint compositions; :data:`shuffleamp.families.LAZY_FAMILIES`)
#: the ε search runs on the LAZY_KEEP families with the largest certified δ at a screening ε, and the full
#: maximum is certified at the end.
LAZY_KEEP = 4


def _chernoff_bounds(families, n: int, eps: float, stop: float = 0.0) -> np.ndarray:
    r"""Certified Chernoff bounds :math:`\delta \le e^{nK(\theta)}/(e\theta n)` of many families at one ε
    (:func:`shuffleamp.decomposition.chernoff_bounds`: any θ > 0 is valid, found by a compiled safeguarded
    Newton search, stopped early once a bound is below ``stop``; ``inf`` for families that are not atomic
    decompositions)."""
    if families and _atomic(families):
        return chernoff_bounds(families, n, eps, packed=_packed(families), stop=stop)
    return chernoff_bounds(families, n, eps, stop=stop)


def _screen(families, n: int, eps: float, mode: str, rtol: float, ctx: Settings, keep: int,
            bound_only: bool = False, max_evals: int | None = None):
    """The ``keep`` families with the largest certified δ at ``eps``, and the certified maximum over all.

    Families are visited by decreasing Chernoff bound (:func:`_chernoff_bounds`, certified for upper
    bounds); the exact evaluation stops once the next Chernoff bound is below the ``keep``-th largest
    value found, so the maximum over the families not evaluated is below it.  Returns (kept families,
    certified upper maximum, info of the maximiser) for an upper ``mode``; for a lower mode the
    Chernoff order only ranks and the maximum is the maximum of the evaluated lower bounds;
    ``max_evals`` (lower modes only: any subset of datasets gives a valid lower bound) caps the number of
    exact evaluations.
    """
    ch = _chernoff_bounds(families, n, eps)
    order = np.argsort(-ch, kind="stable")
    vals, infos, done = [], [], []
    for i in order:
        if len(vals) >= keep and ch[i] <= sorted(vals)[-keep]:
            break
        if max_evals is not None and len(vals) >= max_evals:
            break
        v, info = max_delta((families[i],), n, eps, mode, rtol, ctx.max_grid, ctx.evaluator)
        vals.append(v)
        infos.append(info)
        done.append(i)
    top = np.argsort(vals, kind="stable")[::-1][:keep]
    return [families[done[j]] for j in top], float(vals[top[0]]), infos[top[0]]


def _screen_eps(families, n: int, target: float, eps_hi: float) -> float:
    """A screening ε: the saddle-point estimate of the root for the first family (uncertified placement)."""
    if isinstance(families[0], Decomposition):
        g = estimate_root(families[:1], n, target, eps_hi * (1 - 1e-12))
        return g if 0.0 < g < eps_hi else 0.5 * eps_hi
    g = root_of_estimate(estimator(families[:1], n), target, 0.0, eps_hi * (1 - 1e-12), 1e-6 * eps_hi, maxiter=60)
    return 0.5 * eps_hi if g is None else g


#: Below this n (where one certified evaluation costs 1e4+ integration nodes) the families of the ε search
#: are chosen by saddle-point estimates (:func:`_lower_subset`, :func:`_upper_subset`); above it the lazy
#: maximum screens them by certified evaluations (cheap there) and every lower-bound family is searched.
PRUNE_MAX_N = 10**4
#: The lower ε search runs on at most this many lower-bound datasets (families), those with the largest
#: saddle-point estimate of δ near the root (:func:`_lower_subset`): any subset of concrete datasets gives a
#: certified lower bound, and the best one or two decide it.  None: every family.
LOWER_KEEP = 2
#: ... the second one only when its estimate is within this factor of the best one's (a near tie that the
#: estimate could rank wrongly: its relative error differs between families by < 1% in the suite's cases).
LOWER_KEEP_RATIO = 0.97
#: Below LOWER_SMALL_N the saddle-point estimate is off by tens of percent (n = 4: 20-40 %, reordering the
#: datasets): up to LOWER_KEEP_SMALL families within LOWER_KEEP_RATIO_SMALL of the best estimate are kept.
LOWER_SMALL_N = 100
LOWER_KEEP_SMALL = 4
LOWER_KEEP_RATIO_SMALL = 0.5


#: Passes (one saddle-point estimate per family each) of the root search that places the ranking of
#: :func:`_lower_subset`, and its relative bracket width.
LOWER_RANK_PASSES = 12
LOWER_RANK_RTOL = 1e-2


def _lower_subset(lo_f, n: int, target: float, eps_hi: float, e_guess=None) -> list:
    """The lower-bound families the lower ε search evaluates: the :data:`LOWER_KEEP` with the largest
    saddle-point estimate of δ near the estimated root of the largest estimate (a root search of a few
    vectorised passes, started at ``e_guess``).  An uncertified ranking: a subset of the concrete datasets
    still gives a certified lower bound, only possibly a looser one; the family with the largest estimated
    root has the largest estimate there.  All of them when ranking is not possible (not atomic
    decompositions, non-finite estimates)."""
    keep_max, ratio = ((LOWER_KEEP, LOWER_KEEP_RATIO) if n >= LOWER_SMALL_N or LOWER_KEEP is None
                       else (max(LOWER_KEEP, LOWER_KEEP_SMALL), LOWER_KEEP_RATIO_SMALL))
    if (LOWER_KEEP is None or len(lo_f) <= keep_max
            or not _atomic(lo_f)):
        return list(lo_f)
    lt = math.log(target)

    def pas(e):
        est = _log_estimates(lo_f, n, e)
        return est, (float(np.max(est)) - lt if not np.isnan(est).any() else math.nan)
    hi = eps_hi * (1 - 1e-12)
    a, b, va, vb = 0.0, hi, math.nan, math.nan
    e = e_guess if e_guess is not None and 0.0 < e_guess < hi else 0.5 * hi
    rank = None            # estimates at the largest point found with max estimate > target
    for _ in range(LOWER_RANK_PASSES):
        est, v = pas(e)
        if math.isnan(v):
            return list(lo_f)
        if v > 0.0:
            a, va, rank = e, v, est
        else:
            b, vb = e, v
        if b - a <= LOWER_RANK_RTOL * b:
            break
        if a == 0.0:
            e = 0.25 * b                  # no point above the target yet: the lower root may be far below
        elif b >= hi:
            e = 0.5 * (a + hi)
        else:
            e = a + va * (b - a) / (va - vb) if math.isfinite(vb) else 0.5 * (a + b)
            w = b - a                     # secant of the log estimate, kept off the bracket ends
            e = min(max(e, a + 0.1 * w), b - 0.1 * w)
    if rank is None:
        rank = pas(a)[0] if a > 0.0 else pas(0.0)[0]
    if np.isnan(rank).any() or not np.isfinite(rank).any():
        return list(lo_f)
    order = np.argsort(-rank, kind="stable")
    keep = [int(order[0])]
    for j in order[1:keep_max]:
        if rank[j] >= rank[order[0]] + math.log(ratio):
            keep.append(int(j))
    return [lo_f[j] for j in sorted(keep)]


#: The lazy maximum (more than :data:`LAZY_FAMILIES` upper families) searches on the UPPER_KEEP families
#: with the largest saddle-point estimate near the estimated root (:func:`_upper_subset`) ...
UPPER_KEEP = 2
#: ... picked among the UPPER_RANK largest estimates at the first family's estimated root.
UPPER_RANK = 8


def _log_estimates(families, n: int, eps: float) -> np.ndarray:
    """log saddle-point estimate of δ at ``eps`` of each atomic decomposition (uncertified; ranks families)."""
    from ._ext import kernels
    a, b, c, beta, off = _packed(families)
    return kernels.log_estimates(a, b, c, beta, off, float(eps), float(n))


def _upper_subset(up_f, n: int, target: float, eps_hi: float):
    """(screening ε, families) of the lazy maximum: the :data:`UPPER_KEEP` upper families with the largest
    saddle-point estimate of δ at the estimated root of the :data:`UPPER_RANK` best-ranked ones (an
    uncertified choice: the answer is certified over every family afterwards).  Families None when ranking
    is not possible (the certified screen :func:`_screen` then chooses)."""
    e0 = _screen_eps(up_f, n, target, eps_hi)
    if len(up_f) <= LAZY_FAMILIES or not _atomic(up_f):
        return e0, None
    est = _log_estimates(up_f, n, e0)
    if np.isnan(est).any() or not np.isfinite(est).any():
        return e0, None
    top = [up_f[int(i)] for i in np.argsort(-est, kind="stable")[:UPPER_RANK]]
    e1 = estimate_root(top, n, target, eps_hi * (1 - 1e-12))
    e_s = e1 if 0.0 < e1 < eps_hi else e0
    est = _log_estimates(top, n, e_s)
    if np.isnan(est).any() or not np.isfinite(est).any():
        return e0, None
    return e_s, [top[int(i)] for i in sorted(np.argsort(-est, kind="stable")[:UPPER_KEEP])]


def _certify_max(families, done: set, n: int, eps: float, v_sub: float, info_sub, ctx: Settings):
    """Certified maximum of the upper δ over ``families`` at ``eps``, given ``v_sub``, the certified maximum
    over those whose ``id`` is in ``done`` (and its record ``info_sub``): the others are evaluated by
    decreasing certified Chernoff bound (:func:`_chernoff_bounds`) while that bound exceeds the maximum so far
    (the rest are below it).  Returns (maximum, record of the maximiser)."""
    ch = _chernoff_bounds(families, n, eps, stop=float(v_sub))   # only bounds above v_sub matter
    best, info = float(v_sub), info_sub
    for i in np.argsort(-ch, kind="stable"):
        if ch[i] <= best:
            break
        if id(families[i]) in done:
            continue
        v, inf_ = max_delta((families[i],), n, eps, "spread", ctx.rtol, ctx.max_grid, ctx.evaluator)
        if v > best or info is None:
            best, info = max(best, v), inf_
    return best, info


def _optimal_epsilon(mechanism, n: int, target: float, ctx: Settings):
    """ε(δ) of the optimal method at one point: binary RR's routing (:func:`_binary_rr_point`), else
    :func:`_decomposition_epsilon`.  Returns (upper, lower, record)."""
    if ctx.binary_rr_eps0 is not None:
        out = _binary_rr_point(mechanism, n, target, True, ctx)
        if out is not None:
            return out
    return _decomposition_epsilon(mechanism, n, target, _at_n(mechanism, n, ctx, target))


def _decomposition_epsilon(mechanism, n: int, target: float, ctx: Settings):
    """The decomposition bound's ε at one δ: the ε search over the families (:func:`_optimal_epsilon_families`),
    on a subset of them when there are many (lazy maximum, certified over all at the end), and for binary RR
    the exact count law beside it in full (upper = min, lower = max of both; both recorded)."""
    up_f, lo_f = ctx.upper_families, ctx.lower_families
    eps_hi = float(mechanism.eps0)
    lo_sub = _lower_datasets_to_search(up_f, lo_f, n, target, eps_hi) if len(up_f) <= LAZY_FAMILIES else None
    if lo_sub is not None and len(lo_sub) <= LAZY_FAMILIES:
        # few families: one search of the certified maximum over every upper family
        up, lo, rec = _optimal_epsilon_families(mechanism, n, target, ctx, up_f, lo_sub)
        if len(lo_sub) < len(lo_f):
            rec["lower_families"] = {"used": len(lo_sub), "total": len(lo_f)}
        return up, lo, rec
    # many families: the pruning strategy (search a dominating subset, certify the maximum over all)
    return _lazy_epsilon(mechanism, n, target, ctx, up_f, lo_f)


def _lower_datasets_to_search(up_f, lo_f, n: int, target: float, eps_hi: float):
    """The lower-bound datasets searched next to few upper families: all of them, or below PRUNE_MAX_N the
    ranked subset of :func:`_lower_subset` (any subset of datasets gives a certified lower bound)."""
    if n < PRUNE_MAX_N and LOWER_KEEP is not None and len(lo_f) > LOWER_KEEP:
        e_r = _screen_eps(up_f, n, target, eps_hi) if all(isinstance(f, Decomposition) for f in up_f) \
            else None                                   # a start: the first family's estimated root
        return _lower_subset(lo_f, n, target, eps_hi, e_r)
    return lo_f


def _lazy_epsilon(mechanism, n: int, target: float, ctx: Settings, up_f, lo_f):
    """The pruning strategy of the ε search over many families (lazy maximum): search on the families that
    dominate near the root (below PRUNE_MAX_N: estimated, else screened by certified evaluations, cheap there),
    then certify the full maximum at the answer (:func:`_certify_max`), adding families until it holds."""
    eps_hi = float(mechanism.eps0)
    small = n < PRUNE_MAX_N
    if small:
        e_s, up_sub = _upper_subset(up_f, n, target, eps_hi)
        lo_sub = _lower_subset(lo_f, n, target, eps_hi, e_s)
    else:
        e_s, up_sub, lo_sub = _screen_eps(up_f, n, target, eps_hi), None, lo_f
    if len(lo_sub) > LAZY_FAMILIES:   # a subset of the lower-bound datasets: still a lower bound
        lo_sub = _screen(lo_f, n, e_s, LOWER_MODE, ctx.rtol_lower, ctx, LAZY_KEEP, max_evals=2 * LAZY_KEEP)[0]
    if up_sub is None:
        up_sub = _screen(up_f, n, e_s, "spread", ctx.rtol, ctx, LAZY_KEEP)[0] if len(up_f) > LAZY_FAMILIES \
            else up_f
    for _round in range(4):
        up, lo, rec = _optimal_epsilon_families(mechanism, n, target, ctx, up_sub, lo_sub if _round == 0 else [],
                                                verify=True)
        if _round == 0:
            lo_first, lo_rec = lo, {k: rec[k] for k in ("lower", "lower_evaluations") if k in rec}
        info = rec["upper"] or {}
        chord = info.get("chord")
        done = {id(f) for f in up_sub}

        def full(e, v_sub, i_sub):
            # certified maximum over all families: the subset's certified maximum at e (from the search) and
            # every other family whose certified Chernoff bound exceeds it
            return _certify_max(up_f, done, n, e, v_sub, i_sub, ctx)
        if chord is not None:
            e_bad, e_ok = chord["epsilon_infeasible"], chord["epsilon_feasible"]
            v_ok, i_ok = full(e_ok, chord["delta_feasible"], info) if e_ok < eps_hi else (0.0, info)
            if v_ok <= target:
                v_bad = full(e_bad, chord["delta_infeasible"], None)[0]
                pts = {e_bad: (v_bad, None), e_ok: (v_ok, i_ok)}
                eps_c, eps_e, _, _ = _chord_bracket(pts, target)
                info = dict(i_ok or {})
                info["chord"] = dict(chord, delta_infeasible=v_bad, delta_feasible=v_ok,
                                     epsilon_lowest_root_estimate=chord.get("epsilon_lowest_root_estimate"))
                rec["upper"] = info
                up = eps_c
                break
            e_chk = e_ok
        else:
            e_chk = up
            v, i_chk = full(up, info.get("delta", math.inf), info) if up < eps_hi else (0.0, info)
            if v <= target:
                rec["upper"] = i_chk
                break
        # another family dominates at the answer: add the worst ones there and search again
        extra = _screen(up_f, n, e_chk, "spread", ctx.rtol, ctx, LAZY_KEEP)[0]
        up_sub = dedupe(list(up_sub) + extra)
    else:
        up, _, rec = _optimal_epsilon_families(mechanism, n, target, ctx, up_f, [])
    rec.update(lo_rec)
    rec["lazy_families"] = {"upper": len(up_sub), "upper_total": len(up_f), "lower": len(lo_sub),
                            "lower_total": len(lo_f)}
    lo = None if lo_first is None else min(lo_first, up)
    return up, lo, rec


def _optimal_epsilon_families(mechanism, n: int, target: float, ctx: Settings, up_f, lo_f, verify: bool | None = None):
    """Upper and lower ε of the optimal method over the given families: the ε search
    (:func:`shuffleamp.search.search_families`: compiled for atomic decompositions, else in Python), then the
    count-projection fallback of the lower and binary RR's count law (:func:`_finish_epsilon`)."""
    eps_hi = float(mechanism.eps0)
    upper, lower = search_families(up_f, lo_f, n, target, eps_hi, ctx, verify)
    return _finish_epsilon(ctx, n, target, eps_hi, upper, lower)


def _finish_epsilon(ctx: Settings, n: int, target: float, eps_hi: float, upper, lower):
    """The record of both ε searches ((ε, info, evaluations) each; ``lower`` None without lower-bound
    datasets), the count-projection fallback of the lower and binary RR's count law: (up, lo, record)."""
    up, info_u, cnt_u = upper
    rec = {"upper": info_u, "upper_evaluations": cnt_u}
    lo = None
    if lower is not None:
        lo, info_l, cnt_l = lower
        rec.update(lower=info_l, lower_evaluations=cnt_l)
        lo = _improve_lower(ctx, n, target, True, up, min(lo, up), rec, eps_hi)
    up, lo = _exact_count_side(ctx, n, target, True, up, lo, rec)
    return up, lo, rec


def _ran_fft(evals) -> bool:
    """True if any evaluation record comes from the discretised engine."""
    recs = evals if isinstance(evals, list) else [evals]
    for rec in recs:
        for info in (rec or {}).values():
            if isinstance(info, dict) and info.get("evaluator") in ("fft", "spectral", "none"):
                return True
    return False


def _optimal_settings(mechanism, ctx: Settings, evals) -> dict:
    evaluator = ctx.evaluator
    s = {"evaluator": evaluator}
    if evaluator == "exact":
        s["exact_rtol"] = _exact.DEFAULT_RTOL
    else:
        s.update(rounding_upper="spread", rounding_lower=LOWER_MODE)
    s.update(rtol=ctx.rtol, rtol_lower=ctx.rtol_lower, max_grid=ctx.max_grid)
    if evaluator != "exact" or _ran_fft(evals):
        s["fft_backend"] = fft_engine.backend_name()
    recs = evals if isinstance(evals, list) else [evals]
    for key in ("upper_engine", "lower_engine"):
        vals = [(r or {}).get(key) for r in recs]
        s[key] = vals if isinstance(evals, list) else vals[0]
    notes = [r.get("lower_note") for r in recs if r and r.get("lower_note")]
    if notes:
        s["lower_note"] = notes[0] + ("" if len(notes) == len(recs) else
                                      f" (at {len(notes)} of {len(recs)} points)")
    if ctx.binary_rr_eps0 is not None:
        s["exact_count"] = ("binary randomized response: the exact count law (shuffleamp.exact_count) runs first, "
                            f"tolerance {_ec.DEFAULT_POINT_RTOL:g} within a pair budget from n (exact_count.default_pairs), and the decomposition bound only where it can "
                            "improve on it (grid: decomposition); upper = min and lower = max of the engines run "
                            "(see upper_engine / lower_engine)")
    s.update(grid=evals, regime=OPTIMAL_REGIME, source=OPTIMAL_SOURCE)
    return s


OPTIMAL = Method(OPTIMAL_INFO, _optimal_delta, _optimal_epsilon, _optimal_prepare, _optimal_settings,
                 lambda mechanism: OPTIMAL_REGIME)


# ---------------------------------------------------------------------------- the exact-count method
def _ec_prepare(mechanism, ctx: Settings) -> Settings:
    e0 = _ec.binary_rr_eps0(mechanism)
    if e0 is None:
        raise OutOfRegimeError(f"exact-count: {getattr(mechanism, 'name', type(mechanism).__name__)} is not binary "
                               "randomized response (k-RR with k = 2, or a symmetric 2 x 2 matrix)")
    return ctx.with_(binary_rr_eps0=e0)


def _ec_record(r) -> dict:
    return _ec_summary(r, error=True)


def _ec_delta(mechanism, n: int, eps: float, ctx: Settings):
    r = _ec.default_point(ctx.binary_rr_eps0, n, eps, False)
    return r.upper, r.lower, _ec_record(r)


def _ec_epsilon(mechanism, n: int, target: float, ctx: Settings):
    r = _ec.default_point(ctx.binary_rr_eps0, n, target, True)
    up = min(r.upper, float(mechanism.eps0))
    return up, min(r.lower, up), _ec_record(r)


def _ec_settings(mechanism, ctx: Settings, evals) -> dict:
    return {"evaluator": "exact count law (binomial windows, certified branch and bound over datasets)",
            "tail": _ec.TAIL, "rtol": _ec.DEFAULT_POINT_RTOL, "max_pairs": "exact_count.default_pairs(n)",
            "points": evals,
            "regime": EXACT_COUNT_INFO.regime, "source": EXACT_COUNT_INFO.source}


EXACT_COUNT = Method(EXACT_COUNT_INFO, _ec_delta, _ec_epsilon, _ec_prepare, _ec_settings)

#: Every method, by name: "optimal" and the comparison methods of :mod:`shuffleamp.baselines`.
METHOD_REGISTRY: dict[str, Method] = {m.name: m for m in (OPTIMAL, EXACT_COUNT, *baselines.BASELINE_METHODS)}
if tuple(METHOD_REGISTRY) != METHODS:  # pragma: no cover - registry and names are kept together
    raise ImportError("shuffleamp: method registry out of sync with _registry.METHODS")


def method(name: str) -> Method:
    """The registry entry of a ``method=`` value.

    Parameters
    ----------
    name : str
        One of :data:`shuffleamp._registry.METHODS` (``"optimal"`` or a comparison method).

    Returns
    -------
    Method
        The entry (name, soundness, kind, source, evaluators).

    Raises
    ------
    ParameterError
        ``'method'`` if unknown.
    """
    _validate.choice(name, "method", set(METHODS))
    return METHOD_REGISTRY[name]


# ---------------------------------------------------------------------------- public API
def _common(mechanism, method_name, rtol, rtol_lower, max_grid, evaluator, max_seconds, max_memory_gb):
    _validate.mechanism(mechanism)
    max_seconds, max_memory_gb = _validate.budget_limits(max_seconds, max_memory_gb)
    m = method(method_name)
    _validate.choice(evaluator, "evaluator", set(EVALUATORS))
    rtol = _validate.real("rtol", rtol, lo=1e-9, hi=0.5)
    rtol_lower = _validate.real("rtol_lower", rtol_lower, lo=1e-9, hi=0.5)
    max_grid = _validate.count(max_grid, "max_grid", minimum=1024)
    # the methods' settings; they call the evaluator dispatch (evaluate) and the ε search (search) directly
    return m, Settings(rtol=rtol, rtol_lower=rtol_lower, max_grid=max_grid, evaluator=evaluator,
                       max_seconds=max_seconds, max_memory_gb=max_memory_gb)


def _broadcast(n, other):
    n_arr = np.asarray(n)
    o_arr = np.asarray(other, dtype=np.float64)
    scalar = n_arr.ndim == 0 and o_arr.ndim == 0
    nb, ob = np.broadcast_arrays(n_arr, o_arr)
    return scalar, nb, ob


def _run(quantity: str, m: Method, mechanism, n, other, ctx: Settings) -> BoundResult:
    """Evaluate method ``m`` at every broadcast point of (n, other) and build the result.

    The whole call runs under one :class:`shuffleamp._numerics.Budget` (``max_seconds``,
    ``max_memory_gb``): the evaluators refuse with ResourceLimitError rather than exceed it.
    """
    with budget(ctx.max_seconds, ctx.max_memory_gb):
        return _run_budgeted(quantity, m, mechanism, n, other, ctx)


def _run_budgeted(quantity: str, m: Method, mechanism, n, other, ctx: Settings) -> BoundResult:
    own = getattr(mechanism, "bound_point", None)
    if own is not None and m.name != "optimal":
        # the comparison methods assume a pure eps0-LDP randomizer; these randomizers are not
        raise OutOfRegimeError(f"method {m.name!r} assumes a pure eps0-LDP randomizer; {mechanism.name!r} is not "
                               "(use method='optimal')")
    if own is not None:
        # randomizers beyond pure LDP (shuffleamp.gaussian) evaluate their own points (charged truncations)
        import sys

        def point(mech, ni, oi, c):
            return own(quantity, ni, oi, c, sys.modules[__name__])
    else:
        if m.prepare is not None:
            ctx = m.prepare(mechanism, ctx)
        point = m.epsilon if quantity == "epsilon" else m.delta
    given = "delta" if quantity == "epsilon" else "epsilon"
    label = f"{quantity}_upper" if m.name == "optimal" else f"{m.name} {quantity}"
    if type(n) is int and type(other) in (float, int):
        # one point given as Python scalars (the common call): no broadcasting arrays
        scalar, shape, pts = True, (), [((), n, float(other))]
    else:
        scalar, nb, ob = _broadcast(n, other)
        shape = nb.shape
        pts = ((i, int(nb[i]), float(ob[i])) for i in np.ndindex(shape))
    ups = np.empty(shape)
    los = np.empty(shape)
    has_lower = True
    evals = []
    for i, ni, oi in pts:
        try:
            up, lo, rec = point(mechanism, ni, oi, ctx)
        except OutOfRegimeError as exc:
            if not scalar:
                exc.add_note(f"at n={ni}, {given}={oi:g}")
            raise
        _validate.finite_result(label, float(up))
        ups[i] = up
        if lo is None:
            has_lower = False
        else:
            los[i] = lo
        evals.append(rec)
    if quantity == "delta":
        ups = np.minimum(ups, 1.0)
    value = float(ups) if scalar else ups
    lower = ((float(los) if scalar else los) if has_lower else None)
    settings = m.settings(mechanism, ctx, evals[0] if scalar else evals)
    eps_arg, delta_arg = (None, other) if quantity == "epsilon" else (other, None)
    if m.kind == "estimate":
        return BoundResult(quantity, None, None, m.name, n, eps_arg, delta_arg, mechanism.describe(), settings,
                           sound=m.sound, kind=m.kind, estimate=value)
    return BoundResult(quantity, value, lower, m.name, n, eps_arg, delta_arg, mechanism.describe(), settings,
                       sound=m.sound, kind=m.kind)


def _required(value, name: str):
    if value is None:
        raise ParameterError(name, "is required (only a population carries its own n)" if name == "n"
                             else "is required")
    return value


def _is_population(mechanism) -> bool:
    """True for a :class:`shuffleamp.personalized.Population` (imported only then: a layer-8 module)."""
    if hasattr(mechanism, "upper_decompositions"):
        return False
    from .personalized import Population
    return isinstance(mechanism, Population)


def _population_bound(quantity: str, pop, n, other, method: str, evaluator: str, eps_rtol: float = 1e-7, *,
                      max_seconds=DEFAULT_MAX_SECONDS, max_memory_gb=DEFAULT_MAX_MEMORY_GB):
    """``delta``/``epsilon`` of a population: the certified per-group bound of :mod:`shuffleamp.personalized`
    (``method="optimal"``), or the μ-GDP estimate of Chen–Cao–Ge for its per-user ε0 (``"gdp"``,
    ``sound=False``: asymptotic, see :data:`shuffleamp.baselines.GDP_INFO`), within the call's budget
    (``max_seconds``, ``max_memory_gb``)."""
    max_seconds, max_memory_gb = _validate.budget_limits(max_seconds, max_memory_gb)
    with budget(max_seconds, max_memory_gb):
        return _population_bound_budgeted(quantity, pop, n, other, method, evaluator, eps_rtol)


#: Share of the time left that one sub-population query of a population may take (a refused sub-query only drops
#: that candidate; the population's own evaluation keeps the rest of the budget).
SUB_QUERY_SHARE = 0.25


def _sub_seconds(pop) -> float:
    """Time for one sub-population's single-mechanism query: SUB_QUERY_SHARE of the call's time left divided among the
    groups (at least a tenth of a second, so that a refusal is the sub-query's own ResourceLimitError)."""
    b = current_budget()
    left = b.remaining() if b is not None else DEFAULT_MAX_SECONDS
    return max(SUB_QUERY_SHARE * left / max(len(pop.groups), 1), 0.1)


def _population_bound_budgeted(quantity: str, pop, n, other, method: str, evaluator: str, eps_rtol: float):
    from . import personalized as _pop
    given = "delta" if quantity == "epsilon" else "epsilon"
    _validate.choice(method, "method", set(METHODS))
    _validate.choice(evaluator, "evaluator", set(EVALUATORS))
    _pop._check_n(pop, n)
    other = _required(other, given)
    if method == "optimal":
        if evaluator != "exact":
            raise ParameterError("evaluator", "a population is evaluated by the exact (Bromwich) evaluator only")
        def single(mech, users):
            """The single mechanism's certified (upper, lower) at ``users`` (a sub-population's bound; (None, None)
            when it would not fit in the call's budget: one candidate fewer, the population's own answer stands)."""
            try:
                r = (epsilon(mech, users, other, eps_rtol=eps_rtol, max_seconds=_sub_seconds(pop))
                     if quantity == "epsilon" else delta(mech, users, other, max_seconds=_sub_seconds(pop)))
            except ResourceLimitError:
                return None, None
            return float(r.upper), (None if r.lower is None else float(r.lower))
        if quantity == "epsilon":
            return _pop.epsilon(pop, other, eps_rtol=eps_rtol, sub=single)
        return _pop.delta(pop, other, sub=single)
    if method != "gdp":
        raise ParameterError("method", f"a population supports 'optimal' (certified, per group) and 'gdp' "
                                       f"(estimate), got {method!r}")
    eps0, counts = _pop.gdp_inputs(pop)
    d0 = _pop.gdp_deltas(pop)                                           # (1 - δ_i) of (ε_i, δ_i) groups
    q = baselines.gdp_q(np.append(eps0, eps0[:1]), np.append(d0, d0[:1]))[:-1]          # one q_i per group
    den = float(counts @ q - q.max())                                   # Σ_i q_i − max_i q_i over users
    if not den > 0:
        raise OutOfRegimeError("gdp: Σ q_i − max q_i = 0 (μ is infinite)")
    mu = math.sqrt(2.0 / den)
    if quantity == "epsilon":
        value = baselines.gdp_epsilon_mu(mu, _validate.delta(other))
    else:
        value = baselines.gdp_delta_mu(mu, _validate.epsilon(other))
    info = baselines.GDP_INFO
    settings = {"evaluator": "closed form (GDP)", "mu": mu, "regime": info.regime, "source": info.source,
                "errata": "not a bound: the Berry-Esseen/TV step drops a slack of the order of mu; the "
                          "stronger-clone decomposition it relies on is not implied by LDP in general "
                          "(Su-Cheng-Wang list this paper among those that propagated the error); mu ignores "
                          "the differing user's own eps0, so one value is given for every group"}
    eps_arg, delta_arg = (None, other) if quantity == "epsilon" else (other, None)
    return BoundResult(quantity, None, None, "gdp", pop.n, eps_arg, delta_arg, pop.describe(), settings,
                       sound=False, kind="estimate", estimate=value)


def delta(mechanism, n=None, epsilon=None, *, method: str = "optimal", rtol: float = DEFAULT_RTOL,
          rtol_lower: float = DEFAULT_RTOL_LOWER, max_grid: int = DEFAULT_MAX_GRID,
          evaluator: str = DEFAULT_EVALUATOR, max_seconds: float = DEFAULT_MAX_SECONDS,
          max_memory_gb: float = DEFAULT_MAX_MEMORY_GB) -> BoundResult:
    r"""Shuffled δ at a given ε: certified upper and lower bounds.

    Parameters
    ----------
    mechanism : Mechanism or Population
        A randomizer from :mod:`shuffleamp.mechanisms` or :mod:`shuffleamp.compose`, or a
        heterogeneous population from :func:`shuffleamp.population` (then the result is
        a :class:`~shuffleamp.personalized.PopulationResult` with one entry per group and the worst
        group's values; only ``method`` ``"optimal"`` and ``"gdp"``, ``evaluator="exact"``).
    n : int or array_like of int
        Number of users (>= 1).  Broadcast against ``epsilon``.  For a population: omit it (it is the
        population's total) or pass that same total.
    epsilon : float or array_like of float
        Central ε in nats (>= 0).
    method : str
        ``"optimal"`` (default): the optimal blanket / general-clone bound.  Any other value of
        :data:`METHODS` selects a comparison method of :mod:`shuffleamp.baselines` (upper value
        only, labelled by ``sound`` / ``kind`` / ``settings["regime"]``; ``"variation-ratio"``
        and ``"gdp"`` are unsound and for comparison only).
    rtol : float
        FFT/spectral engine only: requested relative accuracy of the upper δ (grid choice; estimate).
    rtol_lower : float
        FFT/spectral engine only: requested relative accuracy of the lower δ.
    max_grid : int
        FFT/spectral engine only: largest FFT length; coarser (still sound) grids are used beyond it.
    evaluator : {"exact", "fft", "spectral", "auto"}
        ``"exact"`` (default): the Bromwich-integral evaluator of :mod:`shuffleamp.exact` (or exact
        enumeration at small n): no discretisation; its error bound (``delta_error``) is added to
        ``upper`` and subtracted from ``lower``.  Laplace enters through its closed-form MGF; a
        continuous part without one, or an integration beyond the work budget, falls back to the
        certified FFT engine, recorded as ``fallback``.  ``"fft"``: the discretised, certified engine,
        inverting the tilted window by FFT; ``"spectral"``: the same quantity by Parseval sums over
        the non-negligible frequencies; ``"auto"``: spectral unless it needs too many frequencies.
    max_seconds : float
        Time budget of the whole call in seconds (default 10; ``inf`` for none).  Work that is
        estimated to exceed it, or still running when it is spent, raises ResourceLimitError
        naming ``max_seconds``; raise it for very large mechanisms (matrices, joint compositions).
    max_memory_gb : float
        Working-memory budget in GiB (default 2): an evaluation whose estimated memory exceeds it
        raises ResourceLimitError naming ``max_memory_gb`` before allocating.

    Returns
    -------
    BoundResult or PopulationResult
        ``quantity="delta"``; ``upper``/``lower`` are floats, or float64 arrays of the
        broadcast shape of (n, epsilon).  A population gives a ``PopulationResult`` (per group and worst).

    Raises
    ------
    ParameterError
        NaN / out-of-range ``n``, ``epsilon``, ``rtol``, ``max_seconds``, ``max_memory_gb``, unknown
        ``method``.
    ResourceLimitError
        The evaluation would exceed ``max_seconds`` or ``max_memory_gb`` (parameter names the one).
    OutOfRegimeError
        A comparison method asked for a value outside its validity regime.

    References
    ----------
    .. [SCW] P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
       Shuffling", IEEE S&P 2026 (arXiv:2504.07414): Theorem 13 (upper bound, maximum over the
       neighbouring input pairs of :math:`\tfrac1n E[(\sum_{i\le n} G_i)_+]`) and Theorem 14 (lower bound).
    """
    if _is_population(mechanism):
        return _population_bound("delta", mechanism, n, epsilon, method, evaluator, max_seconds=max_seconds,
                                 max_memory_gb=max_memory_gb)
    m, ctx = _common(mechanism, method, rtol, rtol_lower, max_grid, evaluator, max_seconds, max_memory_gb)
    n = _validate.count(_required(n, "n"), "n")
    epsilon = _validate.epsilon(_required(epsilon, "epsilon"))
    if m.name in _GPARV_METHODS:
        m = _pure_dp_short_circuit(m, float(mechanism.eps0))
    return _run("delta", m, mechanism, n, epsilon, ctx)


#: Methods whose δ is the hockey-stick divergence of a GPARV pair, hence exactly 0 at ε >= ε0 (the
#: closed-form comparison methods keep their own validity regimes, which exclude ε >= ε0).
_GPARV_METHODS = frozenset({"optimal", "clone", "stronger-clone", "variation-ratio"})


def _pure_dp_short_circuit(m: Method, eps0: float) -> Method:
    """``m`` with δ = 0 exactly at every ε >= ε0 (no evaluation, so no e^ε overflow at huge ε).

    Sound: the randomizer is pure ε0-LDP (for a composition, ``eps0`` is its composed pure level:
    the sum for joint, the maximum for parallel / subsample), so changing one user's input changes
    the law of the shuffled (post-processed) output by a factor at most e^{ε0} under replace-one
    neighbours, hence the hockey-stick divergence at ε >= ε0 is 0 -- and so is every GPARV
    functional (1/n)E[(G_1+...+G_n)_+], whose atoms are all <= 0 there.
    """
    point = m.delta

    def delta_point(mechanism, n, eps, ctx):
        if eps0 > 0 and eps >= eps0:
            lower = 0.0 if (m.name == "optimal" and ctx.lower_families) else None
            info = {"evaluator": "pure-dp", "note": f"epsilon >= eps0 = {eps0:g}: delta = 0 exactly"}
            return 0.0, lower, {"upper": info, "lower": info if lower is not None else None}
        return point(mechanism, n, eps, ctx)

    return dataclasses.replace(m, delta=delta_point)


def epsilon(mechanism, n=None, delta=None, *, method: str = "optimal", rtol: float = DEFAULT_RTOL,
            rtol_lower: float = DEFAULT_RTOL_LOWER, max_grid: int = DEFAULT_MAX_GRID,
            eps_rtol: float = 1e-7, evaluator: str = DEFAULT_EVALUATOR, max_seconds: float = DEFAULT_MAX_SECONDS,
            max_memory_gb: float = DEFAULT_MAX_MEMORY_GB) -> BoundResult:
    r"""Shuffled ε at a given δ: certified upper and lower bounds (nats).

    Parameters
    ----------
    mechanism : Mechanism or Population
        A randomizer, or a population (see :func:`delta`).
    n : int or array_like of int
        Number of users (>= 1).  Broadcast against ``delta``.  For a population: omit it or pass its total.
    delta : float or array_like of float
        Target δ in (0, 1).
    method : str
        ``"optimal"`` (default) or a comparison method; see :func:`delta`.
    rtol, rtol_lower, max_grid, evaluator, max_seconds, max_memory_gb
        See :func:`delta`.
    eps_rtol : float
        Width of the final root bracket relative to the ε found.

    Returns
    -------
    BoundResult or PopulationResult
        ``quantity="epsilon"`` (a ``PopulationResult`` for a population).  ``upper`` is an evaluated ε at which the certified δ upper bound
        is <= ``delta``; ``lower`` an evaluated ε at which the certified lower δ exceeds ``delta``
        (so the true ε* is larger), or 0 if even ε = 0 does not.  Both lie in [0, eps0].

    Raises
    ------
    ParameterError
        NaN / out-of-range ``n``, ``delta``, ``rtol``, ``max_seconds``, ``max_memory_gb``, unknown
        ``method``.
    ResourceLimitError
        The search would exceed ``max_seconds`` or ``max_memory_gb`` (parameter names the one).
    OutOfRegimeError
        A comparison method asked for a value outside its validity regime.

    Notes
    -----
    The search is :func:`shuffleamp._numerics.inverse_monotone` on log δ(ε) over [0, ε0]
    (δ(ε0) = 0 for a pure ε0-LDP randomizer, since shuffling is post-processing), returning the
    conservative end of the final bracket.  For finite mechanisms (atomic decompositions, default
    evaluator) both searches run in one compiled call (``shuffleamp._ext.kernels.epsilon_search``):
    a secant on log δ from a saddle-point estimate, the certified chord root of the upper bound
    (convex in :math:`e^\varepsilon`) checked by a direct evaluation, and the largest ε at which a
    lower-bound dataset's certified divergence exceeds ``delta`` (or its certified convexity
    extension); unusual cases fall back to the Python search.

    References
    ----------
    Su, Cheng, Wang, IEEE S&P 2026 (arXiv:2504.07414), Theorems 13 and 14; see :func:`delta`.
    """
    if _is_population(mechanism):
        return _population_bound("epsilon", mechanism, n, delta, method, evaluator, eps_rtol,
                                 max_seconds=max_seconds, max_memory_gb=max_memory_gb)
    m, ctx = _common(mechanism, method, rtol, rtol_lower, max_grid, evaluator, max_seconds, max_memory_gb)
    n = _validate.count(_required(n, "n"), "n")
    delta = _validate.delta(_required(delta, "delta"))
    ctx = ctx.with_(eps_rtol=_validate.real("eps_rtol", eps_rtol, lo=1e-12, hi=0.1))
    return _run("epsilon", m, mechanism, n, delta, ctx)
