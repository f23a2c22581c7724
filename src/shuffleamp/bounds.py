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
from ._numerics import inverse_monotone
from ._registry import (DEFAULT_EVALUATOR, EVALUATORS, EXACT_COUNT_INFO, METHODS, OPTIMAL_INFO, OPTIMAL_REGIME,
                        OPTIMAL_SOURCE, Method)
from .decomposition import dedupe
from .fft_engine import DEFAULT_MAX_GRID, delta_fft, saddle_estimate
from .errors import OutOfRegimeError, ParameterError, ResourceLimitError
from .results import BoundResult

__all__ = ["delta", "epsilon", "case_deltas", "BoundResult", "Method", "METHODS", "METHOD_REGISTRY",
           "EVALUATORS", "DEFAULT_EVALUATOR", "DEFAULT_RTOL", "DEFAULT_RTOL_LOWER", "method",
           "max_delta", "estimator", "solve_epsilon"]

#: Default relative δ accuracy for upper bounds (spread rounding) and lower bounds (floor rounding).
DEFAULT_RTOL = 1e-3
DEFAULT_RTOL_LOWER = 1e-4
#: Discretisation of lower bounds: spread minus its certified bias (see fft_engine._spread_bias_bound).
LOWER_MODE = "spread_lower"


# ---------------------------------------------------------------------------- families
def _families(mechanism, method: str, which: str) -> list:
    """GPARV families (objects with ``.gparv(eps)``) whose maximum gives the optimal bound.

    ``which="upper"``: the mechanism's upper decompositions and their swaps, de-duplicated by law;
    ``which="lower"``: its Theorem-14 lower-bound decompositions and their swaps (the same datasets
    in the reverse ordering), de-duplicated by law.
    """
    if which == "upper":
        fams = []
        for d in mechanism.upper_decompositions():
            fams.append(d)
            s = d.swapped()
            if s is not d:
                fams.append(s)
        return dedupe(fams)
    # both orderings of every lower-bound dataset: H(M(X0)||M(X1)) and H(M(X1)||M(X0)) are both
    # divergences of a concrete neighbouring pair (the swap exchanges a and b)
    fams = []
    for d in mechanism.lower_decompositions():
        fams.append(d)
        s = getattr(d, "swapped", lambda: d)()
        if s is not d:
            fams.append(s)
    return dedupe(fams)


# ---------------------------------------------------------------------------- evaluator dispatch
def _evaluate(g, n: int, mode: str, rtol: float, max_grid: int, evaluator: str):
    """Certified δ of one GPARV by the requested evaluator; returns (Evaluation, fallback reason or None).

    ``"exact"`` (default) uses :func:`shuffleamp.exact.delta_exact` (Bromwich integral or exact
    enumeration, no discretisation) and falls back to the certified FFT engine ("auto") for
    GPARVs it does not support or when the integration would exceed its work budget; the
    fallback is recorded in the evaluation info.
    """
    if evaluator == "exact":
        reason = _exact.unsupported_reason(g)
        if reason is None:
            try:
                return _exact.delta_exact(g, n, mode=mode), None
            except ResourceLimitError as e:
                reason = f"exact work budget exceeded ({e}); certified FFT engine used"
        return delta_fft(g, n, mode=mode, rtol=rtol, max_grid=max_grid, evaluator="auto"), reason
    return delta_fft(g, n, mode=mode, rtol=rtol, max_grid=max_grid, evaluator=evaluator), None


def max_delta(families, n: int, epsilon: float, mode: str = "spread", rtol: float = DEFAULT_RTOL,
              max_grid: int = DEFAULT_MAX_GRID, evaluator: str = DEFAULT_EVALUATOR) -> tuple[float, dict]:
    """Maximum over GPARV families of the certified δ at one (n, ε).

    Parameters
    ----------
    families : sequence
        Objects with ``.gparv(epsilon)`` (decompositions, Laplace families, mixtures).
    n : int
        Number of users.
    epsilon : float
        Central ε (nats).
    mode : str
        ``"spread"`` (certified upper bound) or ``"spread_lower"`` (certified lower bound); the exact
        evaluator reads them as upper / lower.
    rtol, max_grid, evaluator
        See :func:`delta`.

    Returns
    -------
    (float, dict)
        The maximum and the evaluation record of the maximising family (``pair`` is its label,
        ``delta_error`` the evaluator's error bound, ``fallback`` the reason if the exact evaluator
        fell back to the FFT engine).
    """
    best, info = 0.0, None
    for f in families:
        ev, fallback = _evaluate(f.gparv(epsilon), n, mode, rtol, max_grid, evaluator)
        if info is None or ev.delta > best:
            best, info = ev.delta, ev.as_dict()
            info["pair"] = getattr(f, "label", "")
            info["delta_error"] = ev.charged
            if fallback:
                info["fallback"] = fallback
    return best, info


def estimator(families, n: int):
    """Cheap uncertified ``ε ↦ δ`` estimate (saddle point) used only to place the first root bracket.

    Parameters
    ----------
    families : sequence of GparvFamily
        The mechanism's decompositions (cases); each maps ε to a GPARV via ``gparv(epsilon)``.
    n : int
        Number of users, >= 1.

    Returns
    -------
    callable
        ``est(epsilon) -> float``: the largest saddle-point estimate of δ over the families
        (ε in nats).  Never a certified number.
    """
    def est(e):
        return max(saddle_estimate(f.gparv(e), n) for f in families)
    return est


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


# ---------------------------------------------------------------------------- ε search
def solve_epsilon(fn, target: float, eps_hi: float, side: str, rel_tol: float, estimate=None):
    """Conservative ε for a decreasing certified δ-bound ``fn(ε) -> (δ, info)`` on [0, ``eps_hi``].

    side="upper": the smallest *evaluated* ε with fn(ε) <= target (each such ε is certified on its
    own, so soundness does not rely on monotonicity).  side="lower": the largest evaluated ε with
    fn(ε) > target (fn a certified lower bound, so the true ε* exceeds it), else 0.  The search is
    :func:`shuffleamp._numerics.inverse_monotone`; ``estimate`` only places the first bracket.
    Returns (ε, info at ε, number of fn evaluations).

    Parameters
    ----------
    fn : callable
        ``fn(ε) -> (δ, info)``: a certified upper (``side="upper"``) or lower (``"lower"``) bound on δ.
    target : float
        Target δ in (0, 1).
    eps_hi : float
        Right end of the search (ε0 for a pure ε0-LDP randomizer, where δ = 0).
    side : {"upper", "lower"}
        Which conservative end to return.
    rel_tol : float
        Relative width of the final bracket.
    estimate : callable, optional
        Cheap uncertified δ(ε) that places the first bracket.

    Returns
    -------
    (float, object, int)
        The conservative ε, the ``info`` of its evaluation, and the number of evaluations.
    """
    br = inverse_monotone(fn, target, 0.0, eps_hi, side=side, rel_tol=rel_tol, abs_tol=1e-12 * eps_hi,
                          estimate=estimate, accelerate=True)
    if side == "upper":
        if br.feasible is None:      # cannot happen for pure ε0-LDP (δ(ε0) = 0); be conservative
            return eps_hi, br.infeasible_info, br.evaluations
        return br.feasible, br.feasible_info, br.evaluations
    if br.infeasible is None:
        return 0.0, br.feasible_info if br.feasible == 0.0 else None, br.evaluations
    return br.infeasible, br.infeasible_info, br.evaluations


# ---------------------------------------------------------------------------- count projections (lower)
#: At most this many lower-bound datasets get count projections (the fallback lower bound).
MAX_PROJECTION_FAMILIES = 16
#: The projection fallback runs when the Theorem-14 lower bound is below this fraction of the upper.
PROJECTION_TRIGGER = 0.5

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


def _projection_lower(ctx: dict, n: int, x: float, want_eps: bool):
    """Best certified lower value over the count projections: (value, label) or (0, None)."""
    if "projection_sets" not in ctx:
        ctx["projection_sets"] = _projection_sets(ctx["lower_families"])
    best, lab = 0.0, None
    for alpha, beta, gamma, label in ctx["projection_sets"]:
        try:
            lo = _ec.projection_pair_bounds(alpha, beta, gamma, n, x, want_eps)[1]
        except ResourceLimitError:
            continue
        if lo > best:
            best, lab = lo, f"count projection of {label}"
    return best, lab


def _improve_lower(ctx: dict, n: int, x: float, want_eps: bool, up: float, lo, rec: dict, cap: float):
    """Max of the Theorem-14 lower bound and, where that one is weak, the count projections; sets the
    record's ``lower_engine`` / ``lower_note``."""
    lo = 0.0 if lo is None else lo
    if ctx["lower_families"] and lo <= PROJECTION_TRIGGER * up:
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
def _optimal_prepare(mechanism, ctx: dict) -> None:
    ctx["upper_families"] = _families(mechanism, "optimal", "upper")
    ctx["lower_families"] = _families(mechanism, "optimal", "lower")
    ctx["binary_rr_eps0"] = _ec.binary_rr_eps0(mechanism)


def _exact_count_side(ctx: dict, n: int, x: float, want_eps: bool, up: float, lo, rec: dict):
    """Binary RR inside the default method: upper = min(exact-count, decomposition) upper and
    lower = max of both lowers; each side's engine is recorded."""
    rec["upper_engine"] = "decomposition"
    rec["lower_engine"] = rec.get("lower_engine", "decomposition")
    e0 = ctx.get("binary_rr_eps0")
    if e0 is None:
        return up, lo
    if n > _ec.DEFAULT_MAX_N:
        rec["exact_count"] = {"skipped": f"n > {_ec.DEFAULT_MAX_N:.0e}: decomposition only (method='exact-count' "
                                         "runs the count law up to its memory limit)"}
        return up, lo
    fn = _ec.epsilon_binary_rr if want_eps else _ec.delta_binary_rr
    try:
        r = fn(e0, n, x, max_pairs=_ec.DEFAULT_BOUNDS_PAIRS)
    except ResourceLimitError as exc:
        rec["exact_count"] = {"skipped": str(exc)}
        return up, lo
    rec["exact_count"] = {"upper": r.upper, "lower": r.lower, "worst_m": int(r.worst_m),
                          "converged": bool(r.converged), "pairs": r.settings["pairs_evaluated"]}
    rec["decomposition"] = {"upper": up, "lower": lo}
    if r.upper < up:
        up, rec["upper_engine"] = r.upper, "exact-count"
    if lo is None or r.lower > lo:
        lo, rec["lower_engine"] = r.lower, "exact-count"
        rec.pop("lower_note", None)
        rec.pop("lower_pair", None)
    return up, min(lo, up)


def _optimal_delta(mechanism, n: int, eps: float, ctx: dict):
    up, info_u = max_delta(ctx["upper_families"], n, eps, "spread", ctx["rtol"], ctx["max_grid"], ctx["evaluator"])
    lo, info_l = None, None
    rec = {"upper": info_u}
    if ctx["lower_families"]:
        lo, info_l = max_delta(ctx["lower_families"], n, eps, LOWER_MODE, ctx["rtol_lower"], ctx["max_grid"],
                               ctx["evaluator"])
        rec["lower"] = info_l
        lo = _improve_lower(ctx, n, eps, False, up, min(lo, up), rec, 1.0)
    else:
        rec["lower"] = None
    up, lo = _exact_count_side(ctx, n, eps, False, up, lo, rec)
    return up, lo, rec


def _optimal_epsilon(mechanism, n: int, target: float, ctx: dict):
    eps_hi = float(mechanism.eps0)
    up_f, lo_f = ctx["upper_families"], ctx["lower_families"]
    up, info_u, cnt_u = solve_epsilon(
        lambda e: max_delta(up_f, n, e, "spread", ctx["rtol"], ctx["max_grid"], ctx["evaluator"]),
        target, eps_hi, "upper", ctx["eps_rtol"], estimator(up_f, n))
    rec = {"upper": info_u, "upper_evaluations": cnt_u}
    lo = None
    if lo_f:
        lo, info_l, cnt_l = solve_epsilon(
            lambda e: max_delta(lo_f, n, e, LOWER_MODE, ctx["rtol_lower"], ctx["max_grid"], ctx["evaluator"]),
            target, eps_hi, "lower", ctx["eps_rtol"], estimator(lo_f, n))
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


def _optimal_settings(mechanism, ctx: dict, evals) -> dict:
    evaluator = ctx["evaluator"]
    s = {"evaluator": evaluator}
    if evaluator == "exact":
        s["exact_rtol"] = _exact.DEFAULT_RTOL
    else:
        s.update(rounding_upper="spread", rounding_lower=LOWER_MODE)
    s.update(rtol=ctx["rtol"], rtol_lower=ctx["rtol_lower"], max_grid=ctx["max_grid"])
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
    if ctx.get("binary_rr_eps0") is not None:
        s["exact_count"] = ("binary randomized response: the exact count law (shuffleamp.exact_count) joins the "
                            f"decomposition bound, pair budget {_ec.DEFAULT_BOUNDS_PAIRS}; upper = min and lower = max "
                            "of the two engines (see upper_engine / lower_engine)")
    s.update(grid=evals, regime=OPTIMAL_REGIME, source=OPTIMAL_SOURCE)
    return s


OPTIMAL = Method(OPTIMAL_INFO, _optimal_delta, _optimal_epsilon, _optimal_prepare, _optimal_settings,
                 lambda mechanism: OPTIMAL_REGIME)


# ---------------------------------------------------------------------------- the exact-count method
def _ec_prepare(mechanism, ctx: dict) -> None:
    e0 = _ec.binary_rr_eps0(mechanism)
    if e0 is None:
        raise OutOfRegimeError(f"exact-count: {getattr(mechanism, 'name', type(mechanism).__name__)} is not binary "
                               "randomized response (k-RR with k = 2, or a symmetric 2 x 2 matrix)")
    ctx["binary_rr_eps0"] = e0


def _ec_record(r) -> dict:
    return {"upper": r.upper, "lower": r.lower, "error": r.error, "worst_m": int(r.worst_m),
            "converged": bool(r.converged), "pairs": r.settings["pairs_evaluated"]}


def _ec_delta(mechanism, n: int, eps: float, ctx: dict):
    r = _ec.delta_binary_rr(ctx["binary_rr_eps0"], n, eps, max_pairs=_ec.DEFAULT_BOUNDS_PAIRS)
    return r.upper, r.lower, _ec_record(r)


def _ec_epsilon(mechanism, n: int, target: float, ctx: dict):
    r = _ec.epsilon_binary_rr(ctx["binary_rr_eps0"], n, target, max_pairs=_ec.DEFAULT_BOUNDS_PAIRS)
    up = min(r.upper, float(mechanism.eps0))
    return up, min(r.lower, up), _ec_record(r)


def _ec_settings(mechanism, ctx: dict, evals) -> dict:
    return {"evaluator": "exact count law (binomial windows, certified branch and bound over datasets)",
            "tail": _ec.TAIL, "max_pairs": _ec.DEFAULT_BOUNDS_PAIRS, "points": evals,
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
def _common(mechanism, method_name, rtol, rtol_lower, max_grid, evaluator):
    _validate.mechanism(mechanism)
    m = method(method_name)
    _validate.choice(evaluator, "evaluator", set(EVALUATORS))
    rtol = _validate.real("rtol", rtol, lo=1e-9, hi=0.5)
    rtol_lower = _validate.real("rtol_lower", rtol_lower, lo=1e-9, hi=0.5)
    max_grid = _validate.count(max_grid, "max_grid", minimum=1024)
    # the evaluator dispatch and the ε search are handed to the methods (baselines do not import bounds)
    return m, {"rtol": rtol, "rtol_lower": rtol_lower, "max_grid": max_grid, "evaluator": evaluator,
               "max_delta": max_delta, "estimator": estimator, "solve_eps": solve_epsilon}


def _broadcast(n, other):
    n_arr = np.asarray(n)
    o_arr = np.asarray(other, dtype=np.float64)
    scalar = n_arr.ndim == 0 and o_arr.ndim == 0
    nb, ob = np.broadcast_arrays(n_arr, o_arr)
    return scalar, nb, ob


def _run(quantity: str, m: Method, mechanism, n, other, ctx: dict) -> BoundResult:
    """Evaluate method ``m`` at every broadcast point of (n, other) and build the result."""
    if m.prepare is not None:
        m.prepare(mechanism, ctx)
    point = m.epsilon if quantity == "epsilon" else m.delta
    given = "delta" if quantity == "epsilon" else "epsilon"
    label = f"{quantity}_upper" if m.name == "optimal" else f"{m.name} {quantity}"
    scalar, nb, ob = _broadcast(n, other)
    ups = np.empty(nb.shape)
    los = np.empty(nb.shape)
    has_lower = True
    evals = []
    for i in np.ndindex(nb.shape):
        ni, oi = int(nb[i]), float(ob[i])
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


def _population_bound(quantity: str, pop, n, other, method: str, evaluator: str, eps_rtol: float = 1e-7):
    """``delta``/``epsilon`` of a population: the certified per-group bound of :mod:`shuffleamp.personalized`
    (``method="optimal"``), or the μ-GDP estimate of Chen–Cao–Ge for its per-user ε0 (``"gdp"``,
    ``sound=False``: asymptotic, see :data:`shuffleamp.baselines.GDP_INFO`)."""
    from . import personalized as _pop
    given = "delta" if quantity == "epsilon" else "epsilon"
    _validate.choice(method, "method", set(METHODS))
    _validate.choice(evaluator, "evaluator", set(EVALUATORS))
    _pop._check_n(pop, n)
    other = _required(other, given)
    if method == "optimal":
        if evaluator != "exact":
            raise ParameterError("evaluator", "a population is evaluated by the exact (Bromwich) evaluator only")
        if quantity == "epsilon":
            return _pop.epsilon(pop, other, eps_rtol=eps_rtol)
        return _pop.delta(pop, other)
    if method != "gdp":
        raise ParameterError("method", f"a population supports 'optimal' (certified, per group) and 'gdp' "
                                       f"(estimate), got {method!r}")
    eps0, counts = _pop.gdp_inputs(pop)
    q = baselines.gdp_q(np.append(eps0, eps0[:1]), None)[:-1]          # one q_i per group
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
          evaluator: str = DEFAULT_EVALUATOR) -> BoundResult:
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

    Returns
    -------
    BoundResult or PopulationResult
        ``quantity="delta"``; ``upper``/``lower`` are floats, or float64 arrays of the
        broadcast shape of (n, epsilon).  A population gives a ``PopulationResult`` (per group and worst).

    Raises
    ------
    ParameterError
        NaN / out-of-range ``n``, ``epsilon``, ``rtol``, unknown ``method``.
    OutOfRegimeError
        A comparison method asked for a value outside its validity regime.

    References
    ----------
    .. [SCW] P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
       Shuffling", IEEE S&P 2026 (arXiv:2504.07414): Theorem 13 (upper bound, maximum over the
       neighbouring input pairs of :math:`\tfrac1n E[(\sum_{i\le n} G_i)_+]`) and Theorem 14 (lower bound).
    """
    if _is_population(mechanism):
        return _population_bound("delta", mechanism, n, epsilon, method, evaluator)
    m, ctx = _common(mechanism, method, rtol, rtol_lower, max_grid, evaluator)
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
            lower = 0.0 if (m.name == "optimal" and ctx.get("lower_families")) else None
            info = {"evaluator": "pure-dp", "note": f"epsilon >= eps0 = {eps0:g}: delta = 0 exactly"}
            return 0.0, lower, {"upper": info, "lower": info if lower is not None else None}
        return point(mechanism, n, eps, ctx)

    return dataclasses.replace(m, delta=delta_point)


def epsilon(mechanism, n=None, delta=None, *, method: str = "optimal", rtol: float = DEFAULT_RTOL,
            rtol_lower: float = DEFAULT_RTOL_LOWER, max_grid: int = DEFAULT_MAX_GRID,
            eps_rtol: float = 1e-7, evaluator: str = DEFAULT_EVALUATOR) -> BoundResult:
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
    rtol, rtol_lower, max_grid, evaluator
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
        NaN / out-of-range ``n``, ``delta``, ``rtol``, unknown ``method``.
    OutOfRegimeError
        A comparison method asked for a value outside its validity regime.

    Notes
    -----
    The search is :func:`shuffleamp._numerics.inverse_monotone` on log δ(ε) over [0, ε0]
    (δ(ε0) = 0 for a pure ε0-LDP randomizer, since shuffling is post-processing), returning the
    conservative end of the final bracket.

    References
    ----------
    Su, Cheng, Wang, IEEE S&P 2026 (arXiv:2504.07414), Theorems 13 and 14; see :func:`delta`.
    """
    if _is_population(mechanism):
        return _population_bound("epsilon", mechanism, n, delta, method, evaluator, eps_rtol)
    m, ctx = _common(mechanism, method, rtol, rtol_lower, max_grid, evaluator)
    n = _validate.count(_required(n, "n"), "n")
    delta = _validate.delta(_required(delta, "delta"))
    ctx["eps_rtol"] = _validate.real("eps_rtol", eps_rtol, lo=1e-12, hi=0.1)
    return _run("epsilon", m, mechanism, n, delta, ctx)
