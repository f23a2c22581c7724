r"""Evaluator dispatch: the certified δ of one GPARV family at one (n, ε), and the maximum over families.

:func:`max_delta` is the quantity every bound of the library is built from,
:math:`\max_{(x,x')} \tfrac1n E[(\sum_i G_i)_+]` over a list of GPARV families, each family evaluated by
the requested evaluator (:func:`_evaluate`): the exact evaluator (:mod:`shuffleamp.exact`: enumeration,
binomial mixture, Bromwich integral, continuous part) with the certified FFT engine
(:mod:`shuffleamp.fft_engine`) as its fallback, or the FFT engine directly.  :func:`estimator` is the
uncertified saddle-point estimate that places the first bracket of an ε search.
"""

from __future__ import annotations

from . import exact as _exact
from ._numerics import check_time
from ._registry import DEFAULT_EVALUATOR
from .decomposition import Decomposition, PackedFamilies
from .errors import ResourceLimitError
from .fft_engine import DEFAULT_MAX_GRID, delta_fft, saddle_estimate

__all__ = ["max_delta", "estimator", "DEFAULT_RTOL", "DEFAULT_RTOL_LOWER", "LOWER_MODE"]

#: Default relative δ accuracy for upper bounds (spread rounding) and lower bounds (floor rounding).
DEFAULT_RTOL = 1e-3
DEFAULT_RTOL_LOWER = 1e-4
#: Discretisation of lower bounds: spread minus its certified bias (see fft_engine._spread_bias_bound).
LOWER_MODE = "spread_lower"
#: The exact evaluator hands GPARVs with a continuous part (Laplace) to the certified FFT engine up to this n.
CONTINUOUS_FFT_MAX_N = 300


def _atomic(families) -> bool:
    """Whether every family is a :class:`Decomposition` (the kernels' packed layout applies)."""
    return isinstance(families, PackedFamilies) or all(isinstance(f, Decomposition) for f in families)


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
            best, info = ev.delta, ev.to_dict()
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
