r"""The ε search: every inverse query ε(δ) of the library, in one module.

* :func:`shuffleamp._numerics.inverse_monotone` is the one bracketing root search with conservative ends (each
  end an evaluated, self-certified point); :func:`solve_epsilon` applies it to a decreasing certified δ-bound
  (the comparison methods, and bounds not known to be convex).  The planning and accounting queries call
  ``inverse_monotone`` directly (integer, log or increasing scales).
* :func:`search_families` is the ε search of the optimal method: the certified maximum over GPARV families is
  convex in :math:`x = e^\varepsilon` ([SCW] Theorem 12), so the root between two evaluated points is
  certified by the chord (:func:`_chord_bracket`) and the search stops as soon as that chord root is within
  the tolerance of an estimate of the lowest root.  When every family is an atomic decomposition and the
  evaluator is "exact", the whole search runs compiled (:func:`epsilon_search`, ``kernels.epsilon_search``:
  evaluations in C, one call, no Python per point; on expensive evaluations its first trial points are placed
  by searches on cheaper evaluations at a coarse tolerance, :data:`COARSE_RTOL`, and only the placed points
  are evaluated at the default tolerance: coarse values place points, they certify nothing).  Other families
  (a continuous part, the FFT engine) are evaluated in Python, one family at a time: their search
  (:func:`_solve_convex_upper`, :func:`_solve_convex_lower`) places points with ``inverse_monotone`` and
  certifies them with the compiled search's own formulas (``kernels.chord_root``,
  ``kernels.convexity_lower``, ``kernels.near_hi_walk``); it also takes over, seeded with the compiled
  search's points, the cases the compiled search declines (:data:`SEARCH_STATUS`).

Why two point placements and not one: the compiled loop cannot call a Python evaluator without giving up
what makes it fast (no GIL, no Python per point), and the Python evaluators cannot run inside it; the
certified parts (chord root, convexity extension, walk near ε0) are one implementation, shared.  Why the
convex search and the plain one are both kept: convexity gives a certified root between evaluated points and
a far cheaper approach to ε0 at small n (the walk); a bound not known to be convex (the comparison methods)
has only the plain, self-certified search.

Soundness: side "upper" returns an evaluated ε whose certified δ is <= the target, or a chord root
certified by convexity; side "lower" returns an ε whose certified lower δ exceeds the target (else 0).

References
----------
P. Su, H. Cheng, P. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (short version: arXiv:2504.07414), Theorem 12 (the GPARV form behind the convexity).
"""

from __future__ import annotations

import contextlib
import contextvars
import math

import numpy as np

from . import exact as _exact
from ._ext import kernels
from ._registry import Settings
from ._numerics import check_time, current_budget, epsilon_for_delta, inverse_monotone, root_of_estimate
from .decomposition import Decomposition, pack
from .errors import ResourceLimitError
from .evaluate import LOWER_MODE, estimator, max_delta

__all__ = ["solve_epsilon", "search_families", "epsilon_search", "estimate_root", "keep_largest_roots", "SEARCH_STATUS", "SOFT_GAP", "search_work_rate",
           "BUDGET_GAP", "EXPENSIVE_NODES"]

class _ChordConverged(Exception):
    """Raised inside the root search once the convex chord bracket is narrow enough."""


def _chord_bracket(pts: dict, target: float):
    r"""Certified chord root of a δ-bound convex in :math:`x = e^\varepsilon`, and an estimate of the lowest root.

    ``pts`` maps evaluated ε to (certified upper δ, info).  With ``bad`` the largest ε whose value
    exceeds ``target`` and ``ok`` the smallest evaluated ε above it with value <= ``target``, the
    chord between them reaches ``target`` at ``eps_c``; by convexity the true δ* lies below the chord,
    so δ*(eps_c) <= target (certified).  The secant through ``bad`` and the evaluated point just below
    it, extended beyond ``bad``, lies below a convex function, so (for exact values) the root is
    >= ``eps_e``: an *estimate* of how tight ``eps_c`` is.  The formulas are the compiled search's
    (``kernels.chord_root``, without its estimate from the feasible side).  Returns (eps_c, eps_e, eps_bad,
    eps_ok) or None when no crossing is bracketed.
    """
    if not pts:
        return None
    E = np.fromiter(pts, dtype=np.float64, count=len(pts))
    V = np.fromiter((v[0] for v in pts.values()), dtype=np.float64, count=len(pts))
    eps_c, eps_e, ib, io = kernels.chord_root(E, V, float(target), False)
    if ib < 0 or io < 0:
        return None
    return eps_c, eps_e, float(E[ib]), float(E[io])


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
    """ε points for the walk towards ``eps_hi`` when the estimated root is within 2% of e^{eps_hi} (else []): the
    compiled search's walk (``kernels.near_hi_walk``) from the root of ``estimate``."""
    if estimate is None:
        return []
    g = root_of_estimate(estimate, target, 0.0, eps_hi * (1 - 1e-15), 1e-9 * eps_hi)
    return [] if g is None else kernels.near_hi_walk(eps_hi, g)


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
                e_l = kernels.convexity_lower(x_p, U_p, x_b, L, target, eps_up)
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


def solve_epsilon(fn, target: float, eps_hi: float, side: str, rel_tol: float, estimate=None):
    r"""Conservative ε for a decreasing certified δ-bound ``fn(ε) -> (δ, info)`` on [0, ``eps_hi``].

    side="upper": the smallest *evaluated* ε with fn(ε) <= target (each such ε is certified on its
    own, so soundness does not rely on monotonicity).  side="lower": the largest evaluated ε with
    fn(ε) > target (fn a certified lower bound, so the true ε* exceeds it), else 0.  The search is
    :func:`shuffleamp._numerics.inverse_monotone`; ``estimate`` only places the first bracket.  Used by the
    comparison methods and for bounds that are not known to be convex in :math:`e^\varepsilon`; the optimal
    bound's families go through :func:`search_families`.

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
    return epsilon_for_delta(fn, target, eps_hi, side, rel_tol, estimate)


# ---------------------------------------------------------------------------- the search over GPARV families
#: Both ε searches run in the compiled kernel (:func:`epsilon_search`) when every family is
#: an atomic decomposition and the evaluator is "exact" (:func:`search_families`).  The compiled search
#: evaluates a converged chord root directly (True, default) so that the upper answer is an evaluated ε whose
#: own certified δ is <= target (``delta(mechanism, n, epsilon_upper) <= delta`` holds between the two
#: queries), or returns it as the certified chord root (False): the same number (the chord of
#: two certified values of the convex δ* lies above δ*), one evaluation fewer, but a direct evaluation there
#: can exceed the target by its error bound.  The lazy maximum over many families always keeps the check.
KERNEL_VERIFY_CHORD = True


_SEARCH_RATE: contextvars.ContextVar = contextvars.ContextVar("search_work_rate", default=None)


@contextlib.contextmanager
def search_work_rate(rate: float):
    """Within the block, the compiled ε search (:func:`epsilon_search`) may spend the time left in the call's
    budget at ``rate`` atom x frequency evaluations per second (default: ``exact.WORK_RATE``, conservative).

    The search is one uninterrupted compiled call, so its allowance is the time left at an assumed rate; a
    search declined for its allowance (status 4) is redone point by point in Python, slower per point and with
    more points, so an allowance below the search's real cost costs time instead of saving it.  Callers whose
    laws are known to need large evaluations (the Gaussian cuts, :func:`shuffleamp.gaussian.ladder_point`) raise
    it to a measured rate.

    Parameters
    ----------
    rate : float
        Atom x frequency evaluations per second, > 0.
    """
    token = _SEARCH_RATE.set(float(rate))
    try:
        yield
    finally:
        _SEARCH_RATE.reset(token)


#: Coarse placement of the compiled upper search (``kernels.epsilon_search``'s ``coarse_rtol``): for laws
#: of at least :data:`COARSE_MIN_ATOMS` atoms (the Gaussian cuts' 241; the few-atom laws of k-RR, BLH, OUE,
#: whose coarse evaluations cost as much as the default ones, never), when the
#: estimated root costs more than :data:`COARSE_MIN_NODES` integrand nodes at the relative tolerance
#: :data:`COARSE_RTOL` (about 10x that at the default tolerance: the Gaussian cuts' 0.7 - 1.1e6), the first
#: trial points are placed by chord searches on evaluations at :data:`COARSE_RTOL` (about 8x cheaper; their
#: values scaled by their ratio to the default tolerance's), and only the placed points are evaluated at the
#: default tolerance.  A placed point whose certified δ there is <= target is the answer (an evaluated ε, as
#: with :data:`KERNEL_VERIFY_CHORD`); else the search goes on as without the placement.  Coarse values only
#: place points: no answer, bracket or chord uses them.  0 turns the placement off.
COARSE_RTOL = 1e-3
COARSE_MIN_NODES = 5e4
COARSE_MIN_ATOMS = 64


#: Several lower-bound datasets (BLH, RAPPOR, OUE: others at a third value and at x_1^1, both orderings): the
#: compiled lower search evaluates the dataset with the largest saddle-point estimate alone, then certifies that
#: every other one stays below it at every point (``kernels.epsilon_search``'s ``screen_rtol``: by monotonicity
#: in ε from a certified Chernoff bound, or from a Bromwich integral at this relative tolerance, cheaper than the
#: default one and without the enumeration or mixture sums; else by the default evaluation), so that the answer
#: is the search over all of them, step for step; when that fails, the search over all of them runs.
SCREEN_RTOL = 1e-3
#: ... from this many users on (below, an evaluation costs 1e4+ integration nodes and the enumeration is
#: cheaper than any screening integral: the search over all datasets skips them by their Chernoff bounds).
LEAD_MIN_N = 1000


#: ``kernels.epsilon_search`` status -> why the Python search runs instead
SEARCH_STATUS = {1: "delta(eps0) > target", 2: "an evaluation the compiled loop does not handle",
                 3: "no converged bracket within the point cap", 4: "work cap of the search"}


def estimate_root(families, n: int, target: float, hi: float) -> float:
    """Uncertified root in (0, ``hi``) of the largest saddle-point estimate of δ over atomic decompositions.

    ``kernels.estimate_root`` of the packed families (the estimate of
    :func:`shuffleamp.fft_engine.saddle_estimate`, without building GPARV objects); used only to place
    searches (the compiled counterpart of :func:`shuffleamp._numerics.root_of_estimate` for atomic
    decompositions).

    Parameters
    ----------
    families : sequence of Decomposition
        Atomic decompositions (at least one).
    n : int
        Number of users, >= 1.
    target : float
        Target δ.
    hi : float
        Right end of the search (nats).

    Returns
    -------
    float
        The root; 0 when the estimate is below ``target`` already at 0, NaN when it is above it at ``hi``.
    """
    a, b, c, beta, off = pack(families)
    return float(kernels.estimate_root(a, b, c, beta, off, float(n), float(target), float(hi))[0])


def keep_largest_roots(families, n: int, target: float, hi: float, keep: int) -> list:
    """The ``keep`` families with the largest estimated root of δ = ``target`` (:func:`estimate_root` of each
    alone; NaN, above ``target`` at ``hi``, ranks as ``hi``).  Uncertified: it only ranks, for searches over a
    subset of lower-bound datasets (any subset gives a certified lower bound)."""
    families = list(families)
    if len(families) <= keep:
        return families

    def score(f):
        r = estimate_root([f], n, target, hi)
        return hi if math.isnan(r) else r
    return sorted(families, key=score, reverse=True)[:keep]


def epsilon_search(upper_families, lower_families, n: int, target: float, eps_hi: float, rel_tol: float,
                   soft_gap: float, expensive: float, verify: bool = True) -> dict:
    r"""Both ε(δ) searches of the optimal bound for atomic decompositions in one compiled call.

    A thin wrapper of ``kernels.epsilon_search`` (see its docstring for the certified logic: chord root of
    the convex upper bound in :math:`x = e^\varepsilon`, largest certified-infeasible ε or convexity
    extension for the lower bound).  Every evaluation is the one of
    :func:`shuffleamp.exact.delta_exact_family` (same evaluator, rtol and work cap per evaluation).

    Parameters
    ----------
    upper_families, lower_families : sequence of Decomposition
        Atomic decompositions (upper bound: maximum over the first; lower bound: over the second, may be empty).
    n : int
        Number of users, >= 1.
    target : float
        Target δ in (0, 1).
    eps_hi : float
        ε0 (the certified δ is 0 there for a pure ε0-LDP randomizer).
    rel_tol : float
        Relative tolerance of the answer (``eps_rtol``).
    soft_gap, expensive : float
        Looser gap accepted after an evaluation of more than ``expensive`` nodes.
    verify : bool, optional
        Evaluate a converged chord root directly (True, default) or return it as the certified chord root
        (False: the same number, one evaluation fewer; see the kernel's ``verify_root``).

    Returns
    -------
    dict
        The kernel's record (``status`` 0 when handled; see ``SEARCH_STATUS`` otherwise).
    """
    ua, ub, uc, ubeta, uoff = pack(upper_families)
    la, lb, lc, lbeta, loff = pack(lower_families)
    K = max([f.a.size for f in list(upper_families) + list(lower_families)], default=1)
    cap = _exact.work_cap()
    b = current_budget()
    # the whole search may spend the time left in the call at the assumed rate (it is not interrupted)
    total = 10.0 * _exact.MAX_WORK if b is None else max((_SEARCH_RATE.get() or _exact.WORK_RATE) * b.remaining(), 1e5)
    return kernels.epsilon_search(
        ua, ub, uc, ubeta, uoff, la, lb, lc, lbeta, loff, float(n), float(target), float(eps_hi), float(rel_tol),
        _exact._enum_ok(int(n), K, _exact.ENUMERATE_MAX), float(_exact.DEFAULT_RTOL), _exact._XG, _exact._WG,
        float(cap), float(_exact.TAIL_WORK), float(_exact.T0_FACTOR), float(_exact.THETA_RANGE[0]),
        float(_exact.THETA_RANGE[1]), float(_exact.CENTRAL_WIDTHS), float(_exact.TAIL_CONST), float(total),
        float(soft_gap), float(expensive), verify_root=1 if verify else 0, coarse_rtol=float(COARSE_RTOL),
        coarse_nodes=float(COARSE_MIN_NODES), coarse_atoms=int(COARSE_MIN_ATOMS), screen_rtol=float(SCREEN_RTOL),
        lead_min_n=float(LEAD_MIN_N))


def _point_info(U, L, St, Th, Nd, labels, upper: bool) -> dict:
    """``max_delta``'s record of one evaluated point of the kernel search (per-family arrays U, L, ...)."""
    vals = U if upper else L
    j = 0
    for i in range(1, len(vals)):     # first maximum, as max_delta
        if vals[i] > vals[j]:
            j = i
    ev = _exact._kernel_evaluation(float(U[j]), float(L[j]), int(St[j]), float(Th[j]), Nd[j], upper)
    info = ev.to_dict()
    info["pair"] = labels[j]
    info["delta_error"] = ev.charged
    return info


def _kernel_epsilon(up_f, lo_f, n: int, target: float, eps_hi: float, ctx: Settings, verify: bool | None = None):
    """Both searches by ``kernels.epsilon_search``: ((up, info_u, count_u), (lo, info_l, count_l) or None), or
    (None, seeds) when the kernel does not handle the case; ``seeds`` are its evaluated points (upper, lower)
    as ``{eps: (delta, info)}`` for the Python search."""
    r = epsilon_search(up_f, lo_f, n, target, eps_hi, ctx.eps_rtol, SOFT_GAP, EXPENSIVE_NODES,
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


def search_families(up_f, lo_f, n: int, target: float, eps_hi: float, ctx: Settings, verify: bool | None = None):
    """Upper and lower ε of the certified maximum over GPARV families (upper families ``up_f``, lower-bound
    datasets ``lo_f``) at δ = ``target`` on [0, ``eps_hi``]: the compiled search when every family is an atomic
    decomposition and the evaluator is "exact" (:func:`_kernel_epsilon`), else (or when it does not handle the
    case, seeded with its evaluated points) the Python search (:func:`_solve_convex_upper`,
    :func:`solve_epsilon`, :func:`_solve_convex_lower`).  ``ctx`` carries the evaluator settings (``rtol``,
    ``rtol_lower``, ``max_grid``, ``evaluator``, ``eps_rtol`` of :class:`shuffleamp._registry.Settings`).
    Returns (upper, lower): (ε, info, evaluations) each, ``lower`` None without lower-bound datasets."""
    seeds_u, seeds_l = {}, {}
    if (ctx.evaluator == "exact" and up_f
            and all(isinstance(f, Decomposition) for f in list(up_f) + list(lo_f))):
        check_time("epsilon search")
        first, second = _kernel_epsilon(up_f, lo_f, n, target, eps_hi, ctx, verify)
        if first is not None:
            return first, second
        seeds_u, seeds_l = second
    est_u = estimator(up_f, n)
    walk = _near_hi_walk(target, eps_hi, est_u)
    up_pts: dict = dict(seeds_u)
    out = _solve_convex_upper(
        lambda e: max_delta(up_f, n, e, "spread", ctx.rtol, ctx.max_grid, ctx.evaluator),
        target, eps_hi, ctx.eps_rtol, est_u, pts=up_pts, walk=walk)
    if out is None:
        out = solve_epsilon(
            lambda e: up_pts[e] if e in up_pts else
            max_delta(up_f, n, e, "spread", ctx.rtol, ctx.max_grid, ctx.evaluator),
            target, eps_hi, "upper", ctx.eps_rtol, est_u)
    upper, lower = out, None
    up = upper[0]
    if lo_f:
        lo_pts: dict = {}

        def fn_lo(e):
            lo_pts[e] = seeds_l[e] if e in seeds_l else max_delta(lo_f, n, e, LOWER_MODE, ctx.rtol_lower,
                                                                  ctx.max_grid, ctx.evaluator)
            return lo_pts[e]
        try:
            out = _solve_convex_lower(fn_lo, target, eps_hi, up, ctx.eps_rtol, up_pts, walk) if walk else None
            if out is None:
                out = solve_epsilon(fn_lo, target, eps_hi, "lower", ctx.eps_rtol, estimator(lo_f, n))
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
    return upper, lower
