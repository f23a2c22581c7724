r"""Public bounds: δ(ε) and ε(δ) for a shuffled ε0-LDP randomizer.

``method="optimal"`` (default) is the blanket / general-clone optimal decomposition
bound of Su–Cheng–Wang (seed000 digest Theorem 13):

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
value) is governed by ``rtol`` and is an estimate.  See :mod:`shuffleamp.engine`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import brentq

from . import __version__, _validate, fft_engine
from . import exact as _exact
from .fft_engine import DEFAULT_MAX_GRID, delta_fft, saddle_estimate
from .errors import ParameterError, ResourceLimitError
from .gparv import Decomposition

#: Every ``method=`` value; all but "optimal" are implemented in :mod:`shuffleamp.baselines`.
METHODS = ("optimal", "clone", "clone-closed-form", "stronger-clone", "blanket-hoeffding", "blanket-bennett",
           "erlingsson", "variation-ratio", "gdp")
#: Validity regime of the default method (``settings["regime"]``).
OPTIMAL_REGIME = ("any pure ε0-LDP randomizer of the catalogue (all ordered input pairs for matrices); "
                  "certified upper and lower bounds")
OPTIMAL_SOURCE = "Su–Cheng–Wang optimal blanket / general-clone decomposition (seed000 digest Thm 13, 14)"
#: Default relative δ accuracy for upper bounds (spread rounding) and lower bounds (floor rounding).
DEFAULT_RTOL = 1e-3
DEFAULT_RTOL_LOWER = 1e-4
#: Discretisation of lower bounds: spread minus its certified bias (see engine._spread_bias_bound).
LOWER_MODE = "spread_lower"


@dataclass(frozen=True)
class BoundResult:
    """Named result of :func:`epsilon` or :func:`delta`.

    Attributes
    ----------
    quantity : {"epsilon", "delta"}
        What ``upper`` and ``lower`` are.
    upper : float or ndarray of float64 or None
        Upper bound (ε in nats, or δ): certified when ``sound`` is True; a *claimed* bound whose
        proof is known to be broken when ``sound`` is False (variation-ratio).  None for
        ``kind="estimate"``.
    lower : float or ndarray of float64 or None
        Certified lower bound (exact divergence of a concrete neighbouring dataset), or None
        if the method has none (every method except ``"optimal"``).
    method : str
        One of :data:`METHODS` (see :mod:`shuffleamp.baselines`).
    n : int or ndarray of int64
        Number of users.
    epsilon, delta : float or ndarray or None
        The given parameter (the other one is the answer).
    mechanism : dict
        ``mechanism.describe()``.
    settings : dict
        Numerical settings: evaluator, rounding, rtol, grid (l, N) of the final evaluation(s),
        FFT backend.  Deterministic (no timings), so identical calls give identical output.
        ``settings["regime"]`` states the method's validity regime and ``settings["source"]``
        the paper and digest section.
    sound : bool
        True: ``upper`` is a certified (proven) bound.  False: comparison only, never a guarantee.
    kind : {"upper", "estimate"}
        ``"upper"`` (with ``lower`` as a certified lower bound when present) or ``"estimate"``
        (a heuristic value, in ``estimate``; ``upper`` is None).
    estimate : float or ndarray of float64 or None
        The value of a ``kind="estimate"`` method (μ-GDP), else None.
    """

    quantity: str
    upper: Any
    lower: Any
    method: str
    n: Any
    epsilon: Any
    delta: Any
    mechanism: dict
    settings: dict = field(default_factory=dict)
    sound: bool = True
    kind: str = "upper"
    estimate: Any = None

    @property
    def value(self):
        """The method's number: ``upper`` for bounds, ``estimate`` for estimates."""
        return self.estimate if self.kind == "estimate" else self.upper

    def to_dict(self) -> dict:
        """JSON-serialisable dict (arrays become lists) with the CLI's key names.

        Estimates (``kind="estimate"``) additionally carry ``<quantity>_estimate``; their
        ``<quantity>_upper`` is null.
        """
        def conv(x):
            if isinstance(x, np.ndarray):
                return x.tolist()
            if isinstance(x, np.generic):
                return x.item()
            return x

        q = self.quantity
        other = "delta" if q == "epsilon" else "epsilon"
        out = {
            f"{q}_upper": conv(self.upper),
            f"{q}_lower": conv(self.lower),
            other: conv(getattr(self, other)),
            "n": conv(self.n),
            "eps0": self.mechanism.get("eps0"),
            "mechanism": self.mechanism,
            "method": self.method,
            "sound": self.sound,
            "kind": self.kind,
            "settings": self.settings,
            "version": __version__,
        }
        if self.kind == "estimate":
            out[f"{q}_estimate"] = conv(self.estimate)
        if self.method == "optimal":
            out["evaluator"] = self.settings.get("evaluator")
            out["delta_error"] = self.delta_error
        return out

    @property
    def delta_error(self):
        """Certified error bound of the upper δ evaluation at the answer (δ units), as charged by
        the evaluator (``settings["grid"]``): float, list for array inputs, or None if unknown.

        For ``evaluator="exact"`` it is the whole error of the Bromwich / enumeration value; for
        the FFT engine it is the tail, aliasing and round-off charge (the discretisation's own
        bias is certified one-sided but not included)."""
        grid = self.settings.get("grid")

        def one(rec):
            info = (rec or {}).get("upper") if isinstance(rec, dict) else None
            if info is None:
                return None
            return info.get("delta_error", info.get("charged"))

        if isinstance(grid, list):
            return [one(r) for r in grid]
        return one(grid)


# ---------------------------------------------------------------------------- families
def _clone_decomposition(eps0: float) -> Decomposition:
    """Standard clone (FMT22) as a GC decomposition (digest §2.1, derived): k = 2."""
    E = math.exp(eps0)
    return Decomposition([E / (E + 1), 1 / (E + 1)], [1 / (E + 1), E / (E + 1)],
                         [1 / (2 * E), 1 / (2 * E)], 1 - 1 / E, label="standard clone")


def _families(mechanism, method: str, which: str) -> list:
    """GPARV families (objects with .gparv(eps)) whose max gives the optimal bound."""
    if which == "upper":
        fams = []
        for d in mechanism.upper_decompositions():
            fams.append(d)
            s = d.swapped()
            if s is not d:
                fams.append(s)
        return _dedupe(fams)
    return list(mechanism.lower_decompositions())


def _dedupe(fams: list) -> list:
    """Drop families whose GPARV law equals an earlier one's for every ε."""
    out, seen = [], set()
    for f in fams:
        key = f.law_key() if isinstance(f, Decomposition) else id(f)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def _delta_one(g, n: int, mode: str, rtol: float, max_grid: int, evaluator: str):
    """Certified δ of one GPARV by the requested evaluator; returns (Evaluation, fallback reason or None).

    ``"exact"`` (default) uses :func:`shuffleamp.exact.delta_exact` (Bromwich integral or exact
    enumeration, no discretisation) and falls back to the certified FFT engine ("auto") for
    GPARVs whose continuous part has no closed-form MGF or when the integration would exceed its
    work budget; the fallback is recorded in the evaluation info.
    """
    if evaluator == "exact":
        try:
            return _exact.delta_exact(g, n, mode=mode), None
        except NotImplementedError:
            reason = "continuous GPARV without a closed-form MGF: certified FFT engine used"
        except ResourceLimitError as e:
            reason = f"exact work budget exceeded ({e}); certified FFT engine used"
        return delta_fft(g, n, mode=mode, rtol=rtol, max_grid=max_grid, evaluator="auto"), reason
    return delta_fft(g, n, mode=mode, rtol=rtol, max_grid=max_grid, evaluator=evaluator), None


def _delta_point(fams, n: int, eps: float, mode: str, rtol: float, max_grid: int, evaluator: str = "exact"):
    """max over families of the certified engine value; returns (value, evaluation dict)."""
    best, info = 0.0, None
    for f in fams:
        ev, fallback = _delta_one(f.gparv(eps), n, mode, rtol, max_grid, evaluator)
        if info is None or ev.delta > best:
            best, info = ev.delta, ev.as_dict()
            info["pair"] = getattr(f, "label", "")
            info["delta_error"] = ev.charged
            if fallback:
                info["fallback"] = fallback
    return best, info


# ---------------------------------------------------------------------------- validation
#: ``"exact"`` (default): Bromwich integral / enumeration (:mod:`shuffleamp.exact`); ``"fft"``,
#: ``"spectral"``, ``"auto"``: the certified discretised engine (:mod:`shuffleamp.engine`).
EVALUATORS = ("exact", "fft", "spectral", "auto")
DEFAULT_EVALUATOR = "exact"


def _common(mechanism, method, rtol, rtol_lower, max_grid, evaluator=DEFAULT_EVALUATOR):
    if not hasattr(mechanism, "upper_decompositions") or not hasattr(mechanism, "eps0"):
        raise ParameterError("mechanism", f"must be a shuffleamp mechanism, got {type(mechanism).__name__}")
    _validate.choice(method, "method", set(METHODS))
    _validate.choice(evaluator, "evaluator", set(EVALUATORS))
    rtol = _validate.real("rtol", rtol, lo=1e-9, hi=0.5)
    rtol_lower = _validate.real("rtol_lower", rtol_lower, lo=1e-9, hi=0.5)
    max_grid = _validate.count(max_grid, "max_grid", minimum=1024)
    return rtol, rtol_lower, max_grid


def _settings(method, rtol, rtol_lower, max_grid, evals, evaluator=DEFAULT_EVALUATOR) -> dict:
    return {
        "evaluator": evaluator,
        "exact_rtol": _exact.DEFAULT_RTOL if evaluator == "exact" else None,
        "rounding_upper": None if evaluator == "exact" else "spread",
        "rounding_lower": None if evaluator == "exact" else LOWER_MODE,
        "rtol": rtol,
        "rtol_lower": rtol_lower,
        "max_grid": max_grid,
        "fft_backend": fft_engine.backend_name(),
        "grid": evals,
        "regime": OPTIMAL_REGIME,
        "source": OPTIMAL_SOURCE,
    }


def _broadcast(n, other):
    n_arr = np.asarray(n)
    o_arr = np.asarray(other, dtype=np.float64)
    scalar = n_arr.ndim == 0 and o_arr.ndim == 0
    nb, ob = np.broadcast_arrays(n_arr, o_arr)
    return scalar, nb, ob


# ---------------------------------------------------------------------------- δ(ε)
def delta(mechanism, n, epsilon, *, method: str = "optimal", rtol: float = DEFAULT_RTOL,
          rtol_lower: float = DEFAULT_RTOL_LOWER, max_grid: int = DEFAULT_MAX_GRID,
          evaluator: str = DEFAULT_EVALUATOR) -> BoundResult:
    r"""Shuffled δ at a given ε: certified upper and lower bounds.

    Parameters
    ----------
    mechanism : Mechanism
        A randomizer from :mod:`shuffleamp.mechanisms`.
    n : int or array_like of int
        Number of users (>= 1).  Broadcast against ``epsilon``.
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
        enumeration at small n): no discretisation; its error bound (``delta_error`` in
        ``settings["grid"]``) is added to ``upper`` and subtracted from ``lower``.  Laplace enters
        through its closed-form MGF; a continuous part without one, or an integration beyond the
        work budget, falls back to the certified FFT engine, recorded as ``fallback``.
        ``"fft"``: the discretised, certified engine of :mod:`shuffleamp.engine`, inverting the
        tilted window by FFT; ``"spectral"``: the same quantity by Parseval sums over the
        non-negligible frequencies; ``"auto"``: spectral unless it needs too many frequencies.

    Returns
    -------
    BoundResult
        ``quantity="delta"``; ``upper``/``lower`` are floats, or float64 arrays of the
        broadcast shape of (n, epsilon).

    Raises
    ------
    ParameterError
        NaN / out-of-range ``n``, ``epsilon``, ``rtol``, unknown ``method``.
    OutOfRegimeError
        A comparison method asked for a value outside its validity regime.

    Notes
    -----
    Source: seed000 digest Theorem 13 (upper), Theorem 14 (lower), Algorithm 7 with
    the rework documented in :mod:`shuffleamp.engine`.
    """
    rtol, rtol_lower, max_grid = _common(mechanism, method, rtol, rtol_lower, max_grid, evaluator)
    n = _validate.count(n, "n")
    epsilon = _validate.epsilon(epsilon)
    if method != "optimal":
        from . import baselines
        return baselines._run("delta", method, mechanism, n, epsilon, rtol=rtol, max_grid=max_grid,
                              evaluator=evaluator)
    scalar, nb, eb = _broadcast(n, epsilon)
    up_f = _families(mechanism, method, "upper")
    lo_f = _families(mechanism, method, "lower")
    ups = np.empty(nb.shape)
    los = np.empty(nb.shape) if lo_f else None
    evals = []
    for i in np.ndindex(nb.shape):
        ni, ei = int(nb[i]), float(eb[i])
        ups[i], info_u = _delta_point(up_f, ni, ei, "spread", rtol, max_grid, evaluator)
        info_l = None
        if lo_f:
            los[i], info_l = _delta_point(lo_f, ni, ei, LOWER_MODE, rtol_lower, max_grid, evaluator)
            los[i] = min(los[i], ups[i])
        evals.append({"upper": info_u, "lower": info_l})
    up = float(ups) if scalar else ups
    lo = (float(los) if scalar else los) if lo_f else None
    for v in np.atleast_1d(ups):
        _validate.finite_result("delta_upper", float(v))
    return BoundResult("delta", min(up, 1.0) if scalar else np.minimum(ups, 1.0), lo, method,
                       n, epsilon, None, mechanism.describe(),
                       _settings(method, rtol, rtol_lower, max_grid, evals[0] if scalar else evals, evaluator))


# ---------------------------------------------------------------------------- ε(δ)
def _solve_eps(fn, target: float, eps_hi: float, side: str, rel_tol: float, estimate=None):
    """Conservative ε for a decreasing certified δ-bound ``fn(ε) -> (δ, info)``.

    side="upper": the smallest *evaluated* ε with fn(ε) <= target.  Each such ε is certified
    on its own (fn is a certified upper bound there), so soundness does not rely on monotonicity.
    side="lower": the largest evaluated ε with fn(ε) > target (fn a certified lower bound, so
    the true ε* exceeds it), else 0.
    ``estimate(ε)`` (cheap, uncertified) only places the first bracket.  The final bracket is
    narrower than ``rel_tol`` times its own left end (floor 1e-12 * eps_hi).
    Returns (ε, info at ε, number of fn evaluations).
    """
    cache: dict[float, float] = {}
    infos: dict[float, Any] = {}

    def f(e):
        e = float(min(max(e, 0.0), eps_hi))
        if e not in cache:
            cache[e], infos[e] = fn(e)
        return cache[e]

    def phi(e):
        return math.log(max(f(e), 1e-300)) - math.log(target)

    # 1. first bracket from the estimate
    guess = None
    if estimate is not None:
        def pe(e):
            return math.log(max(estimate(e), 1e-300)) - math.log(target)
        try:
            if pe(0.0) > 0 > pe(eps_hi):
                guess = brentq(pe, 0.0, eps_hi, xtol=1e-6 * eps_hi, maxiter=100)
        except (ValueError, RuntimeError, ArithmeticError):  # pragma: no cover - defensive
            guess = None
    if guess is None or not (0.0 < guess < eps_hi):
        guess = 0.5 * eps_hi
    a, b = guess * 0.97, min(guess * 1.03, eps_hi)
    step = 0.03 * guess
    while a > 0.0 and f(a) <= target:
        b, step = a, 2.0 * step
        a = max(a - step, 0.0)
    if a <= 0.0 and f(0.0) <= target:
        return 0.0, infos[0.0], len(cache)
    while b < eps_hi and f(b) > target:
        a, step = b, 2.0 * step
        b = min(b + step, eps_hi)
    if f(b) > target:
        # cannot happen for pure eps0-LDP mechanisms (δ(ε0) = 0); be conservative
        return (eps_hi if side == "upper" else b), infos[b], len(cache)
    # 2. brentq inside [a, b], then tighten to a relative width keeping the conservative end
    xtol = max(rel_tol * a, 1e-12 * eps_hi)
    try:
        brentq(phi, a, b, xtol=xtol, rtol=1e-12, maxiter=100)
    except (ValueError, RuntimeError):  # pragma: no cover - defensive
        pass
    ok = [e for e, v in cache.items() if v <= target]
    bad = [e for e, v in cache.items() if v > target]
    e_hi, e_lo = min(ok), max([e for e in bad if e < min(ok)], default=0.0)
    if side == "lower":
        e_lo = max(bad, default=0.0)
        e_hi = min([e for e in ok if e > e_lo], default=eps_hi)
    while e_hi - e_lo > xtol:
        mid = 0.5 * (e_lo + e_hi)
        if f(mid) <= target:
            e_hi = mid
        else:
            e_lo = mid
    if side == "upper":
        return e_hi, infos[e_hi], len(cache)
    if e_lo not in infos:
        return 0.0, None, len(cache)
    return e_lo, infos[e_lo], len(cache)


def _estimator(fams, n):
    def est(e):
        return max(saddle_estimate(f.gparv(e), n) for f in fams)
    return est


def epsilon(mechanism, n, delta, *, method: str = "optimal", rtol: float = DEFAULT_RTOL,
            rtol_lower: float = DEFAULT_RTOL_LOWER, max_grid: int = DEFAULT_MAX_GRID,
            eps_rtol: float = 1e-7, evaluator: str = DEFAULT_EVALUATOR) -> BoundResult:
    r"""Shuffled ε at a given δ: certified upper and lower bounds (nats).

    Parameters
    ----------
    mechanism : Mechanism
        A randomizer from :mod:`shuffleamp.mechanisms`.
    n : int or array_like of int
        Number of users (>= 1).  Broadcast against ``delta``.
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
    BoundResult
        ``quantity="epsilon"``.  ``upper`` is the right end of the final bracket, an ε at which
        the certified δ upper bound is <= ``delta``; ``lower`` is the left end of the lower
        bracket, an ε at which the certified lower δ exceeds ``delta`` (so the true ε* is larger),
        or 0 if even ε = 0 does not.  Both lie in [0, eps0].

    Raises
    ------
    ParameterError
        NaN / out-of-range ``n``, ``delta``, ``rtol``, unknown ``method``.
    OutOfRegimeError
        A comparison method asked for a value outside its validity regime.

    Notes
    -----
    The search uses brentq on log δ(ε) over [0, ε0] (δ(ε0) = 0 for pure ε0-LDP, digest
    Property 2) and then returns the conservative end of the bracket.
    """
    rtol, rtol_lower, max_grid = _common(mechanism, method, rtol, rtol_lower, max_grid, evaluator)
    n = _validate.count(n, "n")
    delta = _validate.delta(delta)
    eps_rtol = _validate.real("eps_rtol", eps_rtol, lo=1e-12, hi=0.1)
    if method != "optimal":
        from . import baselines
        return baselines._run("epsilon", method, mechanism, n, delta, rtol=rtol, max_grid=max_grid,
                              evaluator=evaluator, eps_rtol=eps_rtol)
    scalar, nb, db = _broadcast(n, delta)
    up_f = _families(mechanism, method, "upper")
    lo_f = _families(mechanism, method, "lower")
    eps_hi = float(mechanism.eps0)
    ups = np.empty(nb.shape)
    los = np.empty(nb.shape) if lo_f else None
    evals = []
    for i in np.ndindex(nb.shape):
        ni, di = int(nb[i]), float(db[i])
        ups[i], info_u, cnt_u = _solve_eps(
            lambda e: _delta_point(up_f, ni, e, "spread", rtol, max_grid, evaluator), di, eps_hi, "upper", eps_rtol,
            _estimator(up_f, ni))
        rec = {"upper": info_u, "upper_evaluations": cnt_u}
        if lo_f:
            los[i], info_l, cnt_l = _solve_eps(
                lambda e: _delta_point(lo_f, ni, e, LOWER_MODE, rtol_lower, max_grid, evaluator), di, eps_hi, "lower",
                eps_rtol, _estimator(lo_f, ni))
            los[i] = min(los[i], ups[i])
            rec.update(lower=info_l, lower_evaluations=cnt_l)
        evals.append(rec)
    for v in np.atleast_1d(ups):
        _validate.finite_result("epsilon_upper", float(v))
    up = float(ups) if scalar else ups
    lo = (float(los) if scalar else los) if lo_f else None
    return BoundResult("epsilon", up, lo, method, n, None, delta, mechanism.describe(),
                       _settings(method, rtol, rtol_lower, max_grid, evals[0] if scalar else evals, evaluator))
