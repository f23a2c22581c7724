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
from ._numerics import (DEFAULT_MAX_MEMORY_GB, DEFAULT_MAX_SECONDS, budget, check_time, check_work,
                        epsilon_for_delta, inverse_monotone)
from ._registry import (DEFAULT_EVALUATOR, EVALUATORS, EXACT_COUNT_INFO, METHODS, OPTIMAL_INFO, OPTIMAL_REGIME,
                        OPTIMAL_SOURCE, Method)
from .decomposition import Decomposition, PackedFamilies, chernoff_bounds, dedupe, law_key, pack
from .fft_engine import DEFAULT_MAX_GRID, delta_fft, saddle_estimate
from .errors import OutOfRegimeError, ParameterError, ResourceLimitError
from .results import BoundResult

__all__ = ["delta", "epsilon", "case_deltas", "BoundResult", "Method", "METHODS", "METHOD_REGISTRY",
           "EVALUATORS", "DEFAULT_EVALUATOR", "DEFAULT_RTOL", "DEFAULT_RTOL_LOWER", "method",
           "max_delta", "estimator", "solve_epsilon"]

#: Default relative δ accuracy for upper bounds (spread rounding) and lower bounds (floor rounding).
DEFAULT_RTOL = 1e-3
DEFAULT_RTOL_LOWER = 1e-4
_DBL_EPS = float(np.finfo(np.float64).eps)
#: The exact evaluator hands GPARVs with a continuous part (Laplace) to the certified FFT engine up to this n.
CONTINUOUS_FFT_MAX_N = 300
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
        packed = getattr(mechanism, "_upper_packed", None)      # many families: objects built on access
        return _with_swaps(packed() if packed is not None else mechanism.upper_decompositions())
    # both orderings of every lower-bound dataset: H(M(X0)||M(X1)) and H(M(X1)||M(X0)) are both
    # divergences of a concrete neighbouring pair (the swap exchanges a and b)
    packed = getattr(mechanism, "_lower_packed", None)
    return _with_swaps(packed() if packed is not None else mechanism.lower_decompositions())


def _with_swaps(decs) -> list:
    """``dedupe([d0, d0.swapped(), d1, d1.swapped(), ...])`` (the same list), without building the swaps
    that it would drop: a decomposition whose swapped law key is known (``_swap_key``, set by the batch
    constructors and by :meth:`Decomposition.law_key`) is swapped only when that key is new.  A
    :class:`~shuffleamp.decomposition.PackedFamilies` of base decompositions gives the same entries as a
    :class:`~shuffleamp.decomposition.PackedFamilies` (:func:`_with_swaps_packed`: objects built on access)."""
    if isinstance(decs, PackedFamilies):
        return _with_swaps_packed(decs)
    out, seen = [], set()
    for d in decs:
        if type(d) is Decomposition:
            key = law_key(d)                       # ("dec", d.law_key()): caches _swap_key when cheap
            if key not in seen:
                seen.add(key)
                out.append(d)
            sk = d.__dict__.get("_swap_key")
            if sk is not None:
                skey = ("dec", sk)
                if skey not in seen:              # law_key(d.swapped()) == skey: the swap is built with it
                    seen.add(skey)
                    out.append(d.swapped())
                continue
            todo = (d.swapped(),)
        else:
            s = getattr(d, "swapped", lambda: d)()
            todo = (d, s) if s is not d else (d,)
        for f in todo:
            k = law_key(f)
            if k not in seen:
                seen.add(k)
                out.append(f)
    return out


def _with_swaps_packed(decs: PackedFamilies) -> PackedFamilies:
    """:func:`_with_swaps` of a :class:`~shuffleamp.decomposition.PackedFamilies` of base decompositions (each
    with its law key and swap key): the same entries in the same order, from the keys alone."""
    pos, swapped, seen = [], [], set()
    keys, skeys = decs.keys, decs.swap_keys
    for e, p in enumerate(decs.pos):
        # law_key(d) = ("dec", key), law_key(d.swapped()) = ("dec", skey): every entry is a Decomposition, so
        # the raw keys decide the same
        key, skey = keys[p], skeys[p]
        sw = decs.swapped[e]
        if sw:
            key, skey = skey, key
        if key not in seen:
            seen.add(key)
            pos.append(p)
            swapped.append(sw)
        if skey not in seen:
            seen.add(skey)
            pos.append(p)
            swapped.append(not sw)
    return decs.with_entries(pos, swapped)


def _atomic(families) -> bool:
    """Whether every family is a :class:`Decomposition` (the kernels' packed layout applies)."""
    return isinstance(families, PackedFamilies) or all(isinstance(f, Decomposition) for f in families)


# ---------------------------------------------------------------------------- evaluator dispatch
def _evaluate(f, epsilon: float, n: int, mode: str, rtol: float, max_grid: int, evaluator: str):
    """Certified δ of family ``f`` at ε by the requested evaluator; returns (Evaluation, fallback reason or None).

    ``"exact"`` (default) uses :func:`shuffleamp.exact.delta_exact_family` (the compiled Bromwich /
    enumeration loop for atomic decompositions, :func:`shuffleamp.exact.delta_exact` otherwise; no
    discretisation) and falls back to the certified FFT engine ("auto") for GPARVs it does not
    support or when the integration would exceed its work budget; the fallback is recorded in the
    evaluation info.
    """
    if evaluator == "exact":
        g = None if isinstance(f, Decomposition) else f.gparv(epsilon)
        reason = None if g is None else _exact.unsupported_reason(g)
        if reason is None and g is not None and g.continuous is not None and g.continuous.mass > 0:
            # continuous part (Laplace): the continuous-part integral when cheap (large n), else a finite
            # law in convex order (certified side) evaluated as atoms
            key = (f.law_key(), int(n)) if hasattr(f, "law_key") else None
            try:
                return _exact.delta_continuous(g, n, mode=mode, key=key), None
            except ResourceLimitError as e:
                if e.parameter in ("max_seconds", "max_memory_gb"):
                    raise
        if reason is None and g is not None and g.continuous is not None and n <= CONTINUOUS_FFT_MAX_N:
            # cost model: at small n |psi|^n of a continuous part stays large at high frequencies, so the
            # Bromwich integral needs 1e5+ nodes of hundreds of atoms; the certified FFT engine is cheaper
            return delta_fft(g, n, mode=mode, rtol=rtol, max_grid=max_grid, evaluator="auto"), None
        if reason is None:
            try:
                if g is None:
                    return _exact.delta_exact_family(f, n, epsilon, mode=mode), None
                return _exact.delta_exact(g, n, mode=mode), None
            except ResourceLimitError as e:
                if e.parameter in ("max_seconds", "max_memory_gb"):
                    raise
                reason = f"exact work budget exceeded ({e}); certified FFT engine used"
        g = f.gparv(epsilon) if g is None else g
        return delta_fft(g, n, mode=mode, rtol=rtol, max_grid=max_grid, evaluator="auto"), reason
    return delta_fft(f.gparv(epsilon), n, mode=mode, rtol=rtol, max_grid=max_grid, evaluator=evaluator), None


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
        check_time("delta evaluation")
        ev, fallback = _evaluate(f, epsilon, n, mode, rtol, max_grid, evaluator)
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
class _ChordConverged(Exception):
    """Raised inside the root search once the convex chord bracket is narrow enough."""


def _chord_bracket(pts: dict, target: float):
    r"""Certified chord root of a δ-bound convex in :math:`x = e^\varepsilon`, and an estimate of the lowest root.

    ``pts`` maps evaluated ε to (certified upper δ, info).  With ``bad`` the largest ε whose value
    exceeds ``target`` and ``ok`` the smallest evaluated ε above it with value <= ``target``, the
    chord between them reaches ``target`` at ``eps_c``; by convexity the true δ* lies below the chord,
    so δ*(eps_c) <= target (certified).  The secant through ``bad`` and the evaluated point just below
    it, extended beyond ``bad``, lies below a convex function, so (for exact values) the root is
    >= ``eps_e``: an *estimate* of how tight ``eps_c`` is.  Returns (eps_c, eps_e, eps_bad, eps_ok) or
    None when no crossing is bracketed.
    """
    eps = sorted(pts)
    bad = [e for e in eps if pts[e][0] > target]
    if not bad:
        return None
    e_bad = bad[-1]
    oks = [e for e in eps if e > e_bad and pts[e][0] <= target]
    if not oks:
        return None
    e_ok = oks[0]
    x_b, x_o = math.exp(e_bad), math.exp(e_ok)
    v_b, v_o = pts[e_bad][0], pts[e_ok][0]
    x_c = x_b + (v_b - target) / (v_b - v_o) * (x_o - x_b)
    # rounding of the chord root: move it right (towards the feasible side) by a few ulps of the data
    x_c = min(x_c + 1e-12 * (x_o - x_b) + 8.0 * _DBL_EPS * x_o, x_o)
    eps_c = min(math.log(x_c) * (1.0 + 4.0 * _DBL_EPS) + 1e-300, e_ok)
    eps_c = max(eps_c, e_bad)
    below = [e for e in eps if e < e_bad]
    eps_e = e_bad
    if below:
        e_p = below[-1]
        x_p, v_p = math.exp(e_p), pts[e_p][0]
        if v_p > v_b:
            x_e = x_b + (v_b - target) * (x_b - x_p) / (v_p - v_b)
            eps_e = min(max(math.log(x_e), e_bad), eps_c)
    return eps_c, eps_e, e_bad, e_ok


#: Near ε0 an accepted chord may be looser than ``eps_rtol`` when the next evaluation is expensive:
#: relative gap between the certified chord root and the estimated lowest root accepted then.
SOFT_GAP = 1e-5
#: Largest relative gap accepted when the time budget runs out during the upper search.
BUDGET_GAP = 1e-4
#: An evaluation is "expensive" (the soft gap applies) above this many integrand nodes / FFT points
#: (a deterministic proxy of its cost, so that answers do not depend on the machine's load).
EXPENSIVE_NODES = 1e5


def _cost(info) -> float:
    """Nodes (exact evaluator) or FFT length of an evaluation record (0 if unknown)."""
    try:
        return float((info or {}).get("N", 0) or 0)
    except (TypeError, ValueError):  # pragma: no cover - defensive
        return 0.0


def _near_hi_walk(target: float, eps_hi: float, estimate) -> list:
    """ε points for the walk towards ``eps_hi`` when the estimated root is within 2% of e^{eps_hi} (else [])."""
    if estimate is None:
        return []
    from scipy.optimize import brentq
    E = math.exp(eps_hi)

    def pe(e):
        return math.log(max(estimate(e), 1e-300)) - math.log(target)
    try:
        if not (pe(0.0) > 0 > pe(eps_hi * (1 - 1e-15))):
            return []
        g = brentq(pe, 0.0, eps_hi * (1 - 1e-15), xtol=1e-9 * eps_hi, maxiter=100)
    except (ValueError, RuntimeError, ArithmeticError):  # pragma: no cover - defensive
        return []
    u_g, u = E - math.exp(g), 0.02 * E
    if u_g >= u:
        return []
    out = []
    while u > u_g and E - u > 1.0:
        out.append(math.log(E - u))
        u /= 8.0
    return out


def _solve_convex_upper(fn, target: float, eps_hi: float, rel_tol: float, estimate=None, pts=None, walk=()):
    """Upper ε search for a δ-bound convex in e^ε that vanishes at ``eps_hi`` (see :func:`solve_epsilon`)."""
    pts = {} if pts is None else pts
    count = [0]
    abs_tol = 1e-12 * eps_hi
    last = [0.0]

    def ev(e):
        e = float(e)
        if e not in pts:
            pts[e] = fn(e)
            last[0] = _cost(pts[e][1])
            count[0] += 1
        return pts[e]

    def gap():
        c = _chord_bracket(pts, target)
        return (math.inf, None) if c is None else (c[0] - c[1], c)

    def wrapped(e):
        out = ev(e)
        g, c = gap()
        if c is None:
            return out
        if g <= max(rel_tol * c[0], abs_tol) or (g <= SOFT_GAP * c[0] and last[0] > EXPENSIVE_NODES):
            raise _ChordConverged
        return out

    ev(eps_hi)
    if pts[eps_hi][0] > 0.0:        # not zero at eps_hi: no chord to (eps_hi, 0); plain search
        return None
    feasible, info = None, None
    try:
        # near eps_hi (small n, small δ) evaluations cost ~ 1 / (e^{eps_hi} - e^ε): walk in from far,
        # cheap points; a nearly linear δ(x) converges on a few of them
        for e in walk:
            wrapped(e)
        br = inverse_monotone(wrapped, target, 0.0, eps_hi, side="upper", rel_tol=rel_tol, abs_tol=abs_tol,
                              estimate=estimate, accelerate=True)
        feasible, info = br.feasible, br.feasible_info
    except _ChordConverged:
        pass
    except ResourceLimitError as exc:
        g, c = gap()
        if exc.parameter != "max_seconds" or c is None or not g <= BUDGET_GAP * c[0]:
            raise
    g, c = gap()
    # verify the chord root by a direct evaluation while that is cheap, so that the answer is an evaluated
    # ε whose own certified δ is <= target (a failed check becomes a new infeasible end)
    for _check in range(4):
        if c is None or (feasible is not None and c[0] >= feasible) or last[0] > EXPENSIVE_NODES:
            break
        eps_c = c[0]
        try:
            v, i_c = ev(eps_c)
        except ResourceLimitError as exc:
            if exc.parameter != "max_seconds":
                raise
            break
        if v <= target:
            return eps_c, i_c, count[0]
        g, c = gap()
    if c is not None and (feasible is None or c[0] < feasible):
        eps_c, eps_e, e_bad, e_ok = c
        if e_ok - eps_e <= max(rel_tol * e_ok, abs_tol):
            # the feasible end is within the tolerance: return that evaluated, self-certified point (a direct
            # evaluation at the chord root can exceed the target by its error bound, e.g. near eps0)
            return e_ok, pts[e_ok][1], count[0]
        info = dict(pts[e_ok][1] or {})
        info["chord"] = {"epsilon_infeasible": e_bad, "epsilon_feasible": e_ok,
                         "delta_infeasible": pts[e_bad][0], "delta_feasible": pts[e_ok][0],
                         "epsilon_lowest_root_estimate": eps_e}
        return eps_c, info, count[0]
    if feasible is None:
        return eps_hi, pts[eps_hi][1], count[0]
    return feasible, info, count[0]


def _solve_convex_lower(fn, target: float, eps_hi: float, eps_up: float, rel_tol: float, up_pts: dict, walk):
    r"""Lower ε near ``eps_hi`` from the walk points, by the convexity of the lower δ in :math:`x = e^\varepsilon`.

    For :math:`x_p < x_b` and a convex :math:`\delta_L`, :math:`\delta_L(x) \ge \delta_L(x_b) +
    (\delta_L(x_b) - \delta_L(x_p))(x - x_b)/(x_b - x_p)` for :math:`x \ge x_b`; with the certified lower
    value :math:`L_b \le \delta_L(x_b)` and an upper value :math:`U_p \ge \delta_L(x_p)` (the upper bound
    evaluated at :math:`x_p`, since the dataset's δ is below the optimal bound) the line stays below, and
    where it exceeds ``target`` the true ε* is larger.  Returns (ε, info, evaluations) or None if the
    walk does not reach within ``rel_tol`` (or :data:`SOFT_GAP` on expensive evaluations) of ``eps_up``.
    """
    best, best_info, count = None, None, 0
    prev = None
    for e in walk:
        if e not in up_pts:
            break
        L, info = fn(e)
        cost = _cost(info)
        count += 1
        if L <= target:             # the lower root is below the walk: the plain search finds it
            return None
        if L > target and (best is None or e > best):
            best, best_info = e, info
        if prev is not None and L > target:
            e_p = prev
            U_p = up_pts[e_p][0]
            x_p, x_b = math.exp(e_p), math.exp(e)
            if U_p > L:
                x_l = x_b + (L - target) / (U_p - L) * (x_b - x_p)
                x_l = max(x_l - 1e-12 * (x_b - x_p) - 8.0 * _DBL_EPS * x_l, x_b)
                e_l = min(math.log(x_l) * (1.0 - 4.0 * _DBL_EPS), eps_up)
                if e_l > best:
                    best = e_l
                    best_info = dict(info or {})
                    best_info["secant"] = {"epsilon_upper_point": e_p, "delta_upper_point": U_p,
                                           "epsilon_lower_point": e, "delta_lower_point": L}
        prev = e
        if best is not None and (eps_up - best <= rel_tol * eps_up
                                 or (eps_up - best <= SOFT_GAP * eps_up and cost > EXPENSIVE_NODES)):
            return best, best_info, count
    return None


def solve_epsilon(fn, target: float, eps_hi: float, side: str, rel_tol: float, estimate=None,
                  convex: bool = False):
    r"""Conservative ε for a decreasing certified δ-bound ``fn(ε) -> (δ, info)`` on [0, ``eps_hi``].

    side="upper": the smallest *evaluated* ε with fn(ε) <= target (each such ε is certified on its
    own, so soundness does not rely on monotonicity).  side="lower": the largest evaluated ε with
    fn(ε) > target (fn a certified lower bound, so the true ε* exceeds it), else 0.  The search is
    :func:`shuffleamp._numerics.inverse_monotone`; ``estimate`` only places the first bracket.
    Returns (ε, info at ε, number of fn evaluations).

    With ``convex=True`` (side "upper"), ``fn`` bounds a δ* that is convex in :math:`x = e^\varepsilon`
    and vanishes at ``eps_hi``: every GPARV family here has the form
    :math:`G = (A - e^\varepsilon B)/C` with :math:`B \ge 0` for a latent law that does not depend on ε
    ([SCW] Theorem 12), so :math:`(\sum_i G_i)_+` is convex in :math:`x` for every outcome and so is
    its mean; a maximum over families stays convex.  Between an evaluated infeasible ε and the next
    feasible one, δ* is then below the chord of the two certified values, and the chord's root is a
    certified ε (``info["chord"]`` records the two ends).  The search stops as soon as that root is
    within ``rel_tol`` of the secant estimate of the lowest possible root; near ``eps_hi`` (small n)
    it first evaluates far, cheap points.

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
    convex : bool
        Whether ``fn`` bounds a δ* convex in e^ε (see above); side "upper" only.

    Returns
    -------
    (float, object, int)
        The conservative ε, the ``info`` of its evaluation, and the number of evaluations.
    """
    if convex and side == "upper":
        out = _solve_convex_upper(fn, target, eps_hi, rel_tol, estimate,
                                  walk=_near_hi_walk(target, eps_hi, estimate))
        if out is not None:
            return out
    return epsilon_for_delta(fn, target, eps_hi, side, rel_tol, estimate)


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


def _projection_lower(ctx: dict, n: int, x: float, want_eps: bool):
    """Best certified lower value over the count projections: (value, label) or (0, None).

    Only the :data:`PROJECTION_EVALS` projections with the largest :func:`_projection_score` are
    evaluated (each costs O(sqrt n)); any subset of concrete dataset pairs gives a valid lower bound.
    """
    if "projection_sets" not in ctx:
        ctx["projection_sets"] = _projection_sets(ctx["lower_families"])
    sets = sorted(ctx["projection_sets"], key=lambda t: -_projection_score(t[0], t[1], t[2], n))
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


def _improve_lower(ctx: dict, n: int, x: float, want_eps: bool, up: float, lo, rec: dict, cap: float):
    """Max of the Theorem-14 lower bound and, where that one is weak, the count projections; sets the
    record's ``lower_engine`` / ``lower_note``."""
    lo = 0.0 if lo is None else lo
    if up <= 0.0:                 # the upper bound is 0: so is the exact value, and the lower 0 is exact
        return 0.0
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
#: Up-front cost model of one ε(δ) / δ(ε) call: seconds per atom x integration node, nodes per
#: evaluation and evaluations per search assumed for the largest family (a refusal estimate only).
ATOM_NODE_SECONDS = 3e-8
NODES_PER_EVALUATION = 1e3
EVALUATIONS_PER_SEARCH = 30


#: Families of recently used mechanisms: (mechanism, which) -> tuple of families.  Only instances of frozen
#: dataclasses are cached here (immutable: validated once in __post_init__, compared by their fields or, with
#: eq=False, by identity); a bounded LRU, so a long-running service does not grow without bound.  Composed
#: mechanisms (``_families_cacheable``) keep theirs on the instance.
_FAMILY_CACHE: dict = {}
FAMILY_CACHE_SIZE = 128


def _cached_families(mechanism, which: str) -> list:
    """:func:`_families` of the optimal method, cached per (immutable) mechanism."""
    params = getattr(type(mechanism), "__dataclass_params__", None)
    key = None
    if params is not None and params.frozen:
        key = (type(mechanism), mechanism, which)
        try:
            hit = _FAMILY_CACHE.pop(key, None)
        except TypeError:           # a field that is not hashable: no caching
            key, hit = None, None
        if hit is not None:
            _FAMILY_CACHE[key] = hit          # most recently used last
            return hit if isinstance(hit, PackedFamilies) else list(hit)
    elif getattr(type(mechanism), "_families_cacheable", False):
        # immutable composed mechanisms: cached on the instance (lives and dies with it)
        cache = mechanism.__dict__.setdefault("_families_cache", {})
        hit = cache.get(which)
        if hit is None:
            hit = cache[which] = tuple(_families(mechanism, "optimal", which))
        return list(hit)
    fams = _families(mechanism, "optimal", which)
    if isinstance(fams, PackedFamilies) and len(fams) <= LAZY_FAMILIES:
        fams = list(fams)                 # few families: the plain list (searched in full)
    if key is not None:
        # a PackedFamilies is read-only (its entries' objects are built once, on access): cached as it is
        _FAMILY_CACHE[key] = fams if isinstance(fams, PackedFamilies) else tuple(fams)
        while len(_FAMILY_CACHE) > FAMILY_CACHE_SIZE:
            _FAMILY_CACHE.pop(next(iter(_FAMILY_CACHE)))
    return fams


def _optimal_prepare(mechanism, ctx: dict) -> None:
    ctx["upper_families"] = _cached_families(mechanism, "upper")
    ctx["lower_families"] = _cached_families(mechanism, "lower")
    e0 = _ec.binary_rr_eps0(mechanism)
    # above the count law's eps0 limit the decomposition bound answers alone
    ctx["binary_rr_eps0"] = e0 if e0 is not None and e0 <= _ec.MAX_EPS0 else None
    atoms = max([f.a.size for fams in (ctx["upper_families"], ctx["lower_families"])
                 if not isinstance(fams, PackedFamilies) for f in fams if isinstance(f, Decomposition)]
                + [fams.max_atoms for fams in (ctx["upper_families"], ctx["lower_families"])
                   if isinstance(fams, PackedFamilies)], default=0)
    check_work(atoms * ATOM_NODE_SECONDS * NODES_PER_EVALUATION * EVALUATIONS_PER_SEARCH,
               f"evaluating GPARVs of {atoms} atoms (a mechanism with fewer distinct output ratios is cheaper)")


def _count_law(ctx: dict, n: int, x: float, want_eps: bool):
    """Binary RR's exact count law at one point (ε at δ = x, or δ at ε = x): (result, None), or (None, the
    reason it did not run: n above its default limit, or a ResourceLimitError)."""
    if n > _ec.DEFAULT_MAX_N:
        return None, (f"n > {_ec.DEFAULT_MAX_N:.0e}: decomposition only (method='exact-count' runs the count law "
                      "up to its memory limit)")
    fn = _ec.epsilon_binary_rr if want_eps else _ec.delta_binary_rr
    try:
        return fn(ctx["binary_rr_eps0"], n, x, max_pairs=_ec.DEFAULT_BOUNDS_PAIRS), None
    except ResourceLimitError as exc:
        return None, str(exc)


def _ec_summary(r, error: bool = False) -> dict:
    """The record of an exact-count result (with its error bound when ``error``)."""
    out = {"upper": r.upper, "lower": r.lower}
    if error:
        out["error"] = r.error
    out.update(worst_m=int(r.worst_m), converged=bool(r.converged), pairs=r.settings["pairs_evaluated"])
    return out


def _exact_count_side(ctx: dict, n: int, x: float, want_eps: bool, up: float, lo, rec: dict):
    """Binary RR inside the default method: upper = min(exact-count, decomposition) upper and
    lower = max of both lowers; each side's engine is recorded."""
    rec["upper_engine"] = "decomposition"
    rec["lower_engine"] = rec.get("lower_engine", "decomposition")
    if ctx.get("binary_rr_eps0") is None:
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


#: Binary RR in the default method: run the exact count law first and the decomposition only where it can
#: improve on it (:func:`_binary_rr_point`).  False: both engines always run in full (tests compare them).
BINARY_RR_FIRST = True
#: ... and skips the decomposition entirely when the count law's certified bracket is within this relative
#: width (the decomposition could improve the answer by at most that much).
SKIP_DECOMPOSITION_RTOL = 1e-9
#: ... and otherwise runs the decomposition's upper only below this n and this eps0: elsewhere the count law's
#: initial bracket was below the decomposition's upper in every sampled case (measured over random eps0 in
#: [0.05, 10], n in [2, 1e5], delta in [1e-12, 1e-2]: the decomposition won only at eps0 < 0.07, n < 500, by
#: < 0.5 %; see bench/results_exact_count.md), and its search costs 10-200 ms at moderate n.
DECOMPOSITION_MAX_N = 600
DECOMPOSITION_MAX_EPS0 = 0.25
#: The decomposition's lower runs when the count law's worst dataset carries a numerical band wider than
#: this (relative): at large n and small eps0 (windows of ~1e5 entries) it is then slightly higher.
LOWER_BAND_RTOL = 1e-6


def _binary_rr_point(mechanism, n: int, x: float, want_eps: bool, ctx: dict):
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
    e0 = ctx["binary_rr_eps0"]
    r, _skipped = _count_law(ctx, n, x, want_eps)
    if r is None:
        return None
    tight = r.upper - r.lower <= SKIP_DECOMPOSITION_RTOL * r.lower
    if n < DECOMPOSITION_MAX_N and e0 < DECOMPOSITION_MAX_EPS0 and (not tight or not want_eps):
        # (a delta query here always takes the decomposition's one evaluation: an epsilon query's upper
        # may come from it, and delta(epsilon_upper) <= delta must hold between the two queries)
        if want_eps:
            return _optimal_epsilon_families(mechanism, n, x, ctx, ctx["upper_families"], [])
        up, info_u = max_delta(ctx["upper_families"], n, x, "spread", ctx["rtol"], ctx["max_grid"],
                               ctx["evaluator"])
        rec = {"upper": info_u, "lower": None}
        return (*_exact_count_side(ctx, n, x, False, up, None, rec), rec)
    up, lo = r.upper, r.lower
    if want_eps:
        up = min(up, float(mechanism.eps0))
    rec = {"upper": None, "lower": None}
    lower_engine = "exact-count"
    if r.settings["worst_pair_upper"] - r.lower > LOWER_BAND_RTOL * r.lower and ctx["lower_families"]:
        # at large n the count law's own band (recurrence round-off over ~1e5 entries) is wider than the
        # decomposition's evaluation of the same datasets (others all 0 / all 1): take the better lower
        if want_eps:
            fn_lo = lambda e: max_delta(ctx["lower_families"], n, e, LOWER_MODE, ctx["rtol_lower"],  # noqa: E731
                                        ctx["max_grid"], ctx["evaluator"])
            d_lo, info_l, cnt_l = solve_epsilon(fn_lo, x, float(mechanism.eps0), "lower", ctx["eps_rtol"],
                                                estimator(ctx["lower_families"], n))
            rec["lower_evaluations"] = cnt_l
        else:
            d_lo, info_l = max_delta(ctx["lower_families"], n, x, LOWER_MODE, ctx["rtol_lower"], ctx["max_grid"],
                                     ctx["evaluator"])
        rec["lower"] = info_l
        if d_lo > lo:
            lo, lower_engine = d_lo, "decomposition"
    rec.update({"upper_engine": "exact-count", "lower_engine": lower_engine,
           "exact_count": _ec_summary(r),
           "decomposition": {"skipped": (f"the exact count law's bracket is within {SKIP_DECOMPOSITION_RTOL:g}"
                                          if tight else "the exact count law's block bounds are below it here")
                             + " (bounds.BINARY_RR_FIRST)" + ("" if rec["lower"] is None else
                                                              "; its lower bound was run")}})
    return up, min(lo, up), rec


def _optimal_delta(mechanism, n: int, eps: float, ctx: dict):
    if BINARY_RR_FIRST and ctx.get("binary_rr_eps0") is not None:
        out = _binary_rr_point(mechanism, n, eps, False, ctx)
        if out is not None:
            return out
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


#: Above this many families (large matrices, joint compositions) the ε search runs on the LAZY_KEEP
#: families with the largest certified δ at a screening ε, and the full maximum is certified at the end.
LAZY_FAMILIES = 12
LAZY_KEEP = 4


#: Packed layouts (:func:`shuffleamp.decomposition.pack`) of the last few family lists screened, keyed by the
#: families' ids (the entry holds the families, so the ids stay theirs): one ε search screens the same list
#: several times.
_PACK_CACHE: dict = {}
PACK_CACHE_SIZE = 8


def _packed(families):
    """``pack(families)`` of atomic decompositions, cached (read-only arrays)."""
    packed = isinstance(families, PackedFamilies)
    key = ("packed", id(families)) if packed else tuple(map(id, families))
    hit = _PACK_CACHE.pop(key, None)
    if hit is None:
        p = families.pack() if packed else pack(families)
        for x in p:
            x.setflags(write=False)
        hit = (families if packed else tuple(families), p)
    _PACK_CACHE[key] = hit                  # most recently used last
    try:
        while len(_PACK_CACHE) > PACK_CACHE_SIZE:
            _PACK_CACHE.pop(next(iter(_PACK_CACHE)), None)
    except (RuntimeError, StopIteration):   # pragma: no cover - another thread resized it: trimmed next time
        pass
    return hit[1]


def _chernoff_bounds(families, n: int, eps: float, stop: float = 0.0) -> np.ndarray:
    r"""Certified Chernoff bounds :math:`\delta \le e^{nK(\theta)}/(e\theta n)` of many families at one ε
    (:func:`shuffleamp.decomposition.chernoff_bounds`: any θ > 0 is valid, found by a compiled safeguarded
    Newton search, stopped early once a bound is below ``stop``; ``inf`` for families that are not atomic
    decompositions)."""
    if families and _atomic(families):
        return chernoff_bounds(families, n, eps, packed=_packed(families), stop=stop)
    return chernoff_bounds(families, n, eps, stop=stop)


def _screen(families, n: int, eps: float, mode: str, rtol: float, ctx: dict, keep: int,
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
        v, info = max_delta((families[i],), n, eps, mode, rtol, ctx["max_grid"], ctx["evaluator"])
        vals.append(v)
        infos.append(info)
        done.append(i)
    top = np.argsort(vals, kind="stable")[::-1][:keep]
    return [families[done[j]] for j in top], float(vals[top[0]]), infos[top[0]]


def _screen_eps(families, n: int, target: float, eps_hi: float) -> float:
    """A screening ε: the saddle-point estimate of the root for the first family (uncertified placement)."""
    if KERNEL_SEARCH and isinstance(families[0], Decomposition):
        g = _exact.estimate_root(families[:1], n, target, eps_hi * (1 - 1e-12))
        return g if 0.0 < g < eps_hi else 0.5 * eps_hi
    from scipy.optimize import brentq
    est = estimator(families[:1], n)

    def pe(e):
        return math.log(max(est(e), 1e-300)) - math.log(target)
    try:
        if pe(0.0) > 0 > pe(eps_hi * (1 - 1e-12)):
            return float(brentq(pe, 0.0, eps_hi * (1 - 1e-12), xtol=1e-6 * eps_hi, maxiter=60))
    except (ValueError, RuntimeError, ArithmeticError):  # pragma: no cover - defensive
        pass
    return 0.5 * eps_hi


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
    e1 = _exact.estimate_root(top, n, target, eps_hi * (1 - 1e-12))
    e_s = e1 if 0.0 < e1 < eps_hi else e0
    est = _log_estimates(top, n, e_s)
    if np.isnan(est).any() or not np.isfinite(est).any():
        return e0, None
    return e_s, [top[int(i)] for i in sorted(np.argsort(-est, kind="stable")[:UPPER_KEEP])]


def _certify_max(families, done: set, n: int, eps: float, v_sub: float, info_sub, ctx: dict):
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
        v, inf_ = max_delta((families[i],), n, eps, "spread", ctx["rtol"], ctx["max_grid"], ctx["evaluator"])
        if v > best or info is None:
            best, info = max(best, v), inf_
    return best, info


def _optimal_epsilon(mechanism, n: int, target: float, ctx: dict):
    if BINARY_RR_FIRST and ctx.get("binary_rr_eps0") is not None:
        out = _binary_rr_point(mechanism, n, target, True, ctx)
        if out is not None:
            return out
    up_f, lo_f = ctx["upper_families"], ctx["lower_families"]
    eps_hi = float(mechanism.eps0)
    small = n < PRUNE_MAX_N
    if len(up_f) <= LAZY_FAMILIES:
        lo_sub = lo_f
        if small and LOWER_KEEP is not None and len(lo_f) > LOWER_KEEP:
            e_r = _screen_eps(up_f, n, target, eps_hi) if all(isinstance(f, Decomposition) for f in up_f) \
                else None                                   # a start: the first family's estimated root
            lo_sub = _lower_subset(lo_f, n, target, eps_hi, e_r)
        if len(lo_sub) <= LAZY_FAMILIES:
            up, lo, rec = _optimal_epsilon_families(mechanism, n, target, ctx, up_f, lo_sub)
            if len(lo_sub) < len(lo_f):
                rec["lower_families"] = {"used": len(lo_sub), "total": len(lo_f)}
            return up, lo, rec
    # lazy maximum: search on the families that dominate near the root (below PRUNE_MAX_N: estimated, else
    # screened by certified evaluations, cheap there), then certify the full maximum
    if small:
        e_s, up_sub = _upper_subset(up_f, n, target, eps_hi)
        lo_sub = _lower_subset(lo_f, n, target, eps_hi, e_s)
    else:
        e_s, up_sub, lo_sub = _screen_eps(up_f, n, target, eps_hi), None, lo_f
    if len(lo_sub) > LAZY_FAMILIES:   # a subset of the lower-bound datasets: still a lower bound
        lo_sub = _screen(lo_f, n, e_s, LOWER_MODE, ctx["rtol_lower"], ctx, LAZY_KEEP, max_evals=2 * LAZY_KEEP)[0]
    if up_sub is None:
        up_sub = _screen(up_f, n, e_s, "spread", ctx["rtol"], ctx, LAZY_KEEP)[0] if len(up_f) > LAZY_FAMILIES \
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
        extra = _screen(up_f, n, e_chk, "spread", ctx["rtol"], ctx, LAZY_KEEP)[0]
        up_sub = dedupe(list(up_sub) + extra)
    else:
        up, _, rec = _optimal_epsilon_families(mechanism, n, target, ctx, up_f, [])
    rec.update(lo_rec)
    rec["lazy_families"] = {"upper": len(up_sub), "upper_total": len(up_f), "lower": len(lo_sub),
                            "lower_total": len(lo_f)}
    lo = None if lo_first is None else min(lo_first, up)
    return up, lo, rec


#: Run both ε searches in the compiled kernel (:func:`shuffleamp.exact.epsilon_search`) when every family is
#: an atomic decomposition and the evaluator is "exact"; False forces the Python search (tests compare both).
KERNEL_SEARCH = True
#: The compiled search evaluates a converged chord root directly (True, default) so that the upper answer is
#: an evaluated ε whose own certified δ is <= target (``delta(mechanism, n, epsilon_upper) <= delta`` holds
#: between the two queries), or returns it as the certified chord root (False): the same number (the chord of
#: two certified values of the convex δ* lies above δ*), one evaluation fewer, but a direct evaluation there
#: can exceed the target by its error bound.  The lazy maximum over many families always keeps the check.
KERNEL_VERIFY_CHORD = True


def _point_info(U, L, St, Th, Nd, labels, upper: bool) -> dict:
    """``max_delta``'s record of one evaluated point of the kernel search (per-family arrays U, L, ...)."""
    vals = U if upper else L
    j = 0
    for i in range(1, len(vals)):     # first maximum, as max_delta
        if vals[i] > vals[j]:
            j = i
    ev = _exact._kernel_evaluation(float(U[j]), float(L[j]), int(St[j]), float(Th[j]), Nd[j], upper)
    info = ev.as_dict()
    info["pair"] = labels[j]
    info["delta_error"] = ev.charged
    return info


def _kernel_epsilon(up_f, lo_f, n: int, target: float, eps_hi: float, ctx: dict, verify: bool | None = None):
    """Both searches by ``kernels.epsilon_search``: ((up, info_u, count_u), (lo, info_l, count_l) or None), or
    (None, seeds) when the kernel does not handle the case; ``seeds`` are its evaluated points (upper, lower)
    as ``{eps: (delta, info)}`` for the Python search."""
    r = _exact.epsilon_search(up_f, lo_f, n, target, eps_hi, ctx["eps_rtol"], SOFT_GAP, EXPENSIVE_NODES,
                              KERNEL_VERIFY_CHORD if verify is None else verify)
    ulab = [getattr(f, "label", "") for f in up_f]
    llab = [getattr(f, "label", "") for f in lo_f]

    def uinfo(i):
        return _point_info(r["u_U"][i], r["u_L"][i], r["u_status"][i], r["u_theta"][i], r["u_nodes"][i], ulab, True)

    def linfo(i):
        return _point_info(r["l_U"][i], r["l_L"][i], r["l_status"][i], r["l_theta"][i], r["l_nodes"][i], llab, False)

    if r["status"] != 0:
        ok_u = [i for i in range(len(r["u_eps"])) if (r["u_status"][i] >= 0).all()]
        ok_l = [i for i in range(len(r["l_eps"])) if (r["l_status"][i] >= 0).all()]
        return None, ({float(r["u_eps"][i]): (float(r["u_value"][i]), uinfo(i)) for i in ok_u},
                      {float(r["l_eps"][i]): (float(r["l_value"][i]), linfo(i)) for i in ok_l})
    up = float(r["upper"])
    info_u = uinfo(r["upper_index"])
    if r["upper_kind"] == 2:
        e_bad, e_ok, v_bad, v_ok, eps_e = r["chord"]
        info_u["chord"] = {"epsilon_infeasible": e_bad, "epsilon_feasible": e_ok, "delta_infeasible": v_bad,
                           "delta_feasible": v_ok, "epsilon_lowest_root_estimate": eps_e}
    upper = (up, info_u, len(r["u_eps"]))
    if not lo_f:
        return upper, None
    lo = float(r["lower"])
    info_l = linfo(r["lower_index"]) if r["lower_index"] >= 0 else None
    if r["lower_kind"] == 2:
        e_p, U_p, e_b, L_b = r["secant"]
        info_l["secant"] = {"epsilon_upper_point": e_p, "delta_upper_point": U_p, "epsilon_lower_point": e_b,
                            "delta_lower_point": L_b}
    return upper, (lo, info_l, len(r["l_eps"]))


def _optimal_epsilon_families(mechanism, n: int, target: float, ctx: dict, up_f, lo_f, verify: bool | None = None):
    """Upper and lower ε of the optimal method over the given families: the compiled search when every family
    is an atomic decomposition (:func:`_kernel_epsilon`), else (or when it does not handle the case) the Python
    search (:func:`_solve_convex_upper`, :func:`solve_epsilon`, :func:`_solve_convex_lower`)."""
    eps_hi = float(mechanism.eps0)
    seeds_u, seeds_l = {}, {}
    if (KERNEL_SEARCH and ctx["evaluator"] == "exact" and up_f
            and all(isinstance(f, Decomposition) for f in list(up_f) + list(lo_f))):
        check_time("epsilon search")
        first, second = _kernel_epsilon(up_f, lo_f, n, target, eps_hi, ctx, verify)
        if first is not None:
            return _finish_epsilon(ctx, n, target, eps_hi, first, second)
        seeds_u, seeds_l = second
    est_u = estimator(up_f, n)
    walk = _near_hi_walk(target, eps_hi, est_u)
    up_pts: dict = dict(seeds_u)
    out = _solve_convex_upper(
        lambda e: max_delta(up_f, n, e, "spread", ctx["rtol"], ctx["max_grid"], ctx["evaluator"]),
        target, eps_hi, ctx["eps_rtol"], est_u, pts=up_pts, walk=walk)
    if out is None:
        out = solve_epsilon(
            lambda e: up_pts[e] if e in up_pts else
            max_delta(up_f, n, e, "spread", ctx["rtol"], ctx["max_grid"], ctx["evaluator"]),
            target, eps_hi, "upper", ctx["eps_rtol"], est_u)
    upper, lower = out, None
    up = upper[0]
    if lo_f:
        lo_pts: dict = {}

        def fn_lo(e):
            lo_pts[e] = seeds_l[e] if e in seeds_l else max_delta(lo_f, n, e, LOWER_MODE, ctx["rtol_lower"],
                                                                  ctx["max_grid"], ctx["evaluator"])
            return lo_pts[e]
        try:
            out = _solve_convex_lower(fn_lo, target, eps_hi, up, ctx["eps_rtol"], up_pts, walk) if walk else None
            if out is None:
                out = solve_epsilon(fn_lo, target, eps_hi, "lower", ctx["eps_rtol"], estimator(lo_f, n))
        except ResourceLimitError as exc:
            if exc.parameter != "max_seconds":
                raise
            # the lower bound may be loose but never unsound: the largest evaluated ε whose certified
            # lower δ exceeds the target (else 0), flagged
            above = [e for e, (v, _) in lo_pts.items() if v > target]
            e_l = max(above, default=0.0)
            info = dict(lo_pts[e_l][1] or {}) if above else {}
            info["budget_exhausted"] = True
            out = (e_l, info, len(lo_pts))
        lower = out
    return _finish_epsilon(ctx, n, target, eps_hi, upper, lower)


def _finish_epsilon(ctx: dict, n: int, target: float, eps_hi: float, upper, lower):
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
        s["exact_count"] = ("binary randomized response: the exact count law (shuffleamp.exact_count) runs first, "
                            f"pair budget {_ec.DEFAULT_BOUNDS_PAIRS}, and the decomposition bound only where it can "
                            "improve on it (grid: decomposition); upper = min and lower = max of the engines run "
                            "(see upper_engine / lower_engine)")
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
    return _ec_summary(r, error=True)


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
def _common(mechanism, method_name, rtol, rtol_lower, max_grid, evaluator, max_seconds, max_memory_gb):
    _validate.mechanism(mechanism)
    max_seconds = _validate.real("max_seconds", max_seconds, lo=0.0, lo_open=True, allow_inf=True)
    max_memory_gb = _validate.real("max_memory_gb", max_memory_gb, lo=0.0, lo_open=True, allow_inf=True)
    if not (isinstance(max_seconds, float) and isinstance(max_memory_gb, float)):
        raise ParameterError("max_seconds" if not isinstance(max_seconds, float) else "max_memory_gb",
                             "must be a scalar")
    m = method(method_name)
    _validate.choice(evaluator, "evaluator", set(EVALUATORS))
    rtol = _validate.real("rtol", rtol, lo=1e-9, hi=0.5)
    rtol_lower = _validate.real("rtol_lower", rtol_lower, lo=1e-9, hi=0.5)
    max_grid = _validate.count(max_grid, "max_grid", minimum=1024)
    # the evaluator dispatch and the ε search are handed to the methods (baselines do not import bounds)
    return m, {"rtol": rtol, "rtol_lower": rtol_lower, "max_grid": max_grid, "evaluator": evaluator,
               "max_delta": max_delta, "estimator": estimator, "solve_eps": solve_epsilon,
               "max_seconds": max_seconds, "max_memory_gb": max_memory_gb}


def _broadcast(n, other):
    n_arr = np.asarray(n)
    o_arr = np.asarray(other, dtype=np.float64)
    scalar = n_arr.ndim == 0 and o_arr.ndim == 0
    nb, ob = np.broadcast_arrays(n_arr, o_arr)
    return scalar, nb, ob


def _run(quantity: str, m: Method, mechanism, n, other, ctx: dict) -> BoundResult:
    """Evaluate method ``m`` at every broadcast point of (n, other) and build the result.

    The whole call runs under one :class:`shuffleamp._numerics.Budget` (``max_seconds``,
    ``max_memory_gb``): the evaluators refuse with ResourceLimitError rather than exceed it.
    """
    with budget(ctx["max_seconds"], ctx["max_memory_gb"]):
        return _run_budgeted(quantity, m, mechanism, n, other, ctx)


def _run_budgeted(quantity: str, m: Method, mechanism, n, other, ctx: dict) -> BoundResult:
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
            m.prepare(mechanism, ctx)
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
        return _population_bound("delta", mechanism, n, epsilon, method, evaluator)
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
            lower = 0.0 if (m.name == "optimal" and ctx.get("lower_families")) else None
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
        return _population_bound("epsilon", mechanism, n, delta, method, evaluator, eps_rtol)
    m, ctx = _common(mechanism, method, rtol, rtol_lower, max_grid, evaluator, max_seconds, max_memory_gb)
    n = _validate.count(_required(n, "n"), "n")
    delta = _validate.delta(_required(delta, "delta"))
    ctx["eps_rtol"] = _validate.real("eps_rtol", eps_rtol, lo=1e-12, hi=0.1)
    return _run("epsilon", m, mechanism, n, delta, ctx)
