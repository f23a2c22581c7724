r"""Evaluator dispatch: the certified δ of one GPARV family at one (n, ε), and the maximum over families.

:func:`max_delta` is the quantity every bound of the library is built from,
:math:`\max_{(x,x')} \tfrac1n E[(\sum_i G_i)_+]` over a list of GPARV families, each family evaluated by
the requested evaluator (:func:`_evaluate`): the exact evaluator (:mod:`shuffleamp.exact`: enumeration,
binomial mixture, Bromwich integral, continuous part) with the certified FFT engine
(:mod:`shuffleamp.fft_engine`) as its fallback, or the FFT engine directly.  :func:`estimator` is the
uncertified saddle-point estimate that places the first bracket of an ε search.
"""

from __future__ import annotations

from typing import Protocol

from . import exact as _exact
from ._numerics import check_time
from ._registry import DEFAULT_EVALUATOR
from .decomposition import Decomposition, PackedFamilies
from .errors import ResourceLimitError
from .fft_engine import DEFAULT_MAX_GRID, delta_fft, saddle_estimate
from .results import Evaluation

__all__ = ["max_delta", "estimator", "selection", "FamilyEvaluator", "FAMILY_EVALUATORS", "DEFAULT_RTOL",
           "DEFAULT_RTOL_LOWER", "LOWER_MODE"]

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


class FamilyEvaluator(Protocol):
    r"""The evaluator interface: a certified δ of one GPARV family at one (n, ε).

    ``evaluate(f, g, n, epsilon, mode, rtol, max_grid)`` returns a
    :class:`~shuffleamp.results.Evaluation` whose ``delta`` is a certified upper (``mode`` "spread") or
    lower ("spread_lower") bound on :math:`\tfrac1n E[(G_1+\dots+G_n)_+]` for :math:`G = ` ``f.gparv(epsilon)``
    (``g``, or None for an atomic :class:`~shuffleamp.decomposition.Decomposition`, which the compiled loop
    evaluates without building the GPARV), with its error charged (``charged``).  An evaluator may refuse with
    :class:`~shuffleamp.errors.ResourceLimitError` when its work budget would be exceeded; the selection
    policy (:func:`selection`) then tries the next one.
    """

    def __call__(self, f, g, n: int, epsilon: float, mode: str, rtol: float, max_grid: int) -> Evaluation: ...


def _continuous(f, g, n, epsilon, mode, rtol, max_grid):
    """A GPARV with a continuous part (Laplace): the continuous-part integral when cheap (large n), else a finite
    law in convex order (certified side) evaluated as atoms (:func:`shuffleamp.exact.delta_continuous`)."""
    key = (f.law_key(), int(n)) if hasattr(f, "law_key") else None
    return _exact.delta_continuous(g, n, mode=mode, key=key)


def _exact_atoms(f, g, n, epsilon, mode, rtol, max_grid):
    """The exact evaluator of a finite law, no discretisation: :func:`shuffleamp.exact.delta_exact_family` (the
    compiled loop for atomic decompositions) or :func:`shuffleamp.exact.delta_exact`; within it enumeration,
    meet in the middle, the binomial mixture or the Bromwich integral by the exact module's work model
    (``exact.ENUMERATE_MAX``, ``exact.MAX_WORK``, ``exact.WORK_RATE``)."""
    if g is None:
        return _exact.delta_exact_family(f, n, epsilon, mode=mode)
    return _exact.delta_exact(g, n, mode=mode)


def _fft(f, g, n, epsilon, mode, rtol, max_grid):
    """The certified FFT engine (:func:`shuffleamp.fft_engine.delta_fft`, its own choice "auto")."""
    g = f.gparv(epsilon) if g is None else g
    return delta_fft(g, n, mode=mode, rtol=rtol, max_grid=max_grid, evaluator="auto")


#: The evaluators of ``evaluator="exact"`` by name (each a :class:`FamilyEvaluator`).
FAMILY_EVALUATORS: dict[str, FamilyEvaluator] = {"continuous": _continuous, "exact": _exact_atoms, "fft": _fft}


def selection(g, n: int, unsupported: str | None) -> tuple[str, ...]:
    r"""The selection policy of ``evaluator="exact"``: the evaluators to try, in order, for one family.

    ``g`` is the family's GPARV (None for an atomic decomposition), ``unsupported`` the exact evaluator's reason
    for not handling it (:func:`shuffleamp.exact.unsupported_reason`).  The certified FFT engine ends every list
    (it always answers).  The cost model:

    * a law the exact evaluator does not support goes to the FFT engine;
    * a continuous part of positive mass is integrated directly (:func:`_continuous`);
    * at n <= :data:`CONTINUOUS_FFT_MAX_N` a continuous part goes to the FFT engine next: there
      :math:`|\psi|^n` stays large at high frequencies, so the Bromwich integral would need 1e5+ nodes of
      hundreds of atoms;
    * otherwise the exact evaluator of finite laws (:func:`_exact_atoms`), whose own work model picks
      enumeration, the binomial mixture or the Bromwich integral.
    """
    if unsupported is not None:
        return ("fft",)
    first = ("continuous",) if g is not None and g.continuous is not None and g.continuous.mass > 0 else ()
    if g is not None and g.continuous is not None and n <= CONTINUOUS_FFT_MAX_N:
        return (*first, "fft")
    return (*first, "exact", "fft")


def _evaluate(f, epsilon: float, n: int, mode: str, rtol: float, max_grid: int, evaluator: str):
    """Certified δ of family ``f`` at ε by the requested evaluator; returns (Evaluation, fallback reason or None).

    ``"exact"`` (default) tries the evaluators of :func:`selection` in order (no discretisation unless it ends
    at the certified FFT engine, "auto"); the FFT engine answers for GPARVs the exact evaluator does not
    support or when the exact integration would exceed its work budget, and that fallback is recorded in the
    evaluation info.  Any other ``evaluator`` is an engine of :func:`shuffleamp.fft_engine.delta_fft`.
    """
    if evaluator != "exact":
        return delta_fft(f.gparv(epsilon), n, mode=mode, rtol=rtol, max_grid=max_grid, evaluator=evaluator), None
    g = None if isinstance(f, Decomposition) else f.gparv(epsilon)
    reason = None if g is None else _exact.unsupported_reason(g)
    for name in selection(g, n, reason):
        if name == "fft":
            return _fft(f, g, n, epsilon, mode, rtol, max_grid), reason
        try:
            return FAMILY_EVALUATORS[name](f, g, n, epsilon, mode, rtol, max_grid), None
        except ResourceLimitError as e:
            if e.parameter in ("max_seconds", "max_memory_gb"):
                raise
            if name == "exact":
                reason = f"exact work budget exceeded ({e}); certified FFT engine used"
    raise AssertionError("unreachable: the FFT engine ends every selection")  # pragma: no cover


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
