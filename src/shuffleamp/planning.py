"""Planning queries for budget owners: the largest ε0, or the smallest n, that meets a target (ε, δ).

Both are searches (:func:`shuffleamp._numerics.inverse_monotone`) on the *certified* optimal upper
bound (:func:`shuffleamp.delta`): a candidate is feasible when the certified upper δ at the target
ε is <= the target δ.  The answer returned is always a candidate that was evaluated and found
feasible, so it is certified on its own, without relying on monotonicity; monotonicity (δ
increasing in ε0, decreasing in n) only makes the search efficient and tight.  :func:`min_n` is an
exact integer search: the answer n is feasible and n − 1 was evaluated and found infeasible.

References
----------
Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (arXiv:2504.07414), Theorem 13 (the certified upper bound searched here).
"""

from __future__ import annotations

from typing import Callable

from . import _validate
from ._numerics import inverse_monotone
from ._registry import DEFAULT_EVALUATOR
from .bounds import delta as _delta
from .errors import OutOfRegimeError, ParameterError
from .results import PlanningResult

__all__ = ["PlanningResult", "max_eps0", "min_n", "with_eps0"]


def with_eps0(mechanism, eps0: float):
    """The same kind of mechanism with another ε0 (k-RR, BLH, RAPPOR, OUE, HR, Laplace).

    Parameters
    ----------
    mechanism : Mechanism
    eps0 : float
        New local ε0 (nats).

    Returns
    -------
    Mechanism

    Raises
    ------
    ParameterError
        For matrix or composed mechanisms, whose ε0 is not a free parameter.
    """
    return mechanism.with_eps0(eps0)


def _single_mechanism(mechanism):
    """``mechanism`` if it is one mechanism; a population or any other object is a ParameterError."""
    if not hasattr(mechanism, "upper_decompositions") and hasattr(mechanism, "describe") \
            and hasattr(mechanism, "eps0"):
        raise ParameterError("mechanism", "is a population (per-group eps0 and its own n): planning "
                             "searches one mechanism's eps0 or n; plan each group's mechanism, or "
                             "evaluate the population with shuffleamp.epsilon / shuffleamp.delta")
    return _validate.mechanism(mechanism)


def _upper_delta(make: Callable, n_of: Callable, target_epsilon: float, rtol: float):
    """Memoised certified upper δ at the target ε, as ``fn(x) -> (δ, None)`` for the root search.

    ``make(x)`` is the mechanism and ``n_of(x)`` the number of users of candidate ``x``;
    ``fn.cache`` holds every evaluation (its length is the evaluation count).
    """
    cache: dict = {}

    def fn(x):
        if x not in cache:
            cache[x] = _delta(make(x), n_of(x), target_epsilon, rtol=rtol).upper
        return cache[x], None
    fn.cache = cache
    return fn


def max_eps0(mechanism, n, target_epsilon, delta, *, eps0_max: float = 20.0, rel_tol: float = 1e-4,
             rtol: float = 1e-3) -> PlanningResult:
    r"""Largest ε0 whose shuffled optimal upper bound meets (target_epsilon, delta) for n users.

    Parameters
    ----------
    mechanism : Mechanism or callable
        A mechanism whose kind is kept (its own ε0 is ignored), or a factory ``eps0 -> Mechanism``.
    n : int
        Number of users (>= 1).
    target_epsilon : float
        Target central ε in nats (> 0).
    delta : float
        Target δ in (0, 1).
    eps0_max : float
        Search ceiling (nats), at most the mechanisms' limit of 150 nats.  If even ``eps0_max`` is
        feasible it is returned.
    rel_tol : float
        Relative width of the final bracket (geometric bisection).
    rtol : float
        Accuracy setting passed to the bound evaluations.

    Returns
    -------
    PlanningResult
        ``value`` is a certified-feasible ε0 (the lower end of the final bracket).

    Raises
    ------
    ParameterError
        Bad ``n``, ``target_epsilon``, ``delta``, ``eps0_max`` or ``rel_tol``; ``'mechanism'`` for a
        mechanism whose ε0 is not a free parameter (matrix, composed), a population
        (:mod:`shuffleamp.personalized`) or anything that is not a mechanism.

    Notes
    -----
    Any ε0 <= target_epsilon is trivially feasible (a shuffled ε0-LDP protocol is ε0-DP), which
    gives the left end of the first bracket.
    """
    n = _validate.count(n, "n")
    target_epsilon = _validate.real("target_epsilon", target_epsilon, lo=0.0, lo_open=True)
    delta = _validate.delta(delta)
    eps0_max = _validate.real("eps0_max", eps0_max, lo=0.0, lo_open=True, hi=_validate.EPS0_MAX)
    rel_tol = _validate.real("rel_tol", rel_tol, lo=1e-9, hi=0.5)
    if not (callable(mechanism) and not hasattr(mechanism, "describe")):
        _single_mechanism(mechanism)
    factory: Callable = mechanism if callable(mechanism) and not hasattr(mechanism, "describe") else \
        (lambda e: with_eps0(mechanism, e))
    lo = min(target_epsilon, eps0_max)         # feasible: a shuffled eps0-LDP protocol is eps0-DP
    fn = _upper_delta(factory, lambda e: n, target_epsilon, rtol)
    br = inverse_monotone(fn, delta, lo,
                          min(2.0 * lo, eps0_max), increasing=True, rel_tol=rel_tol, scale="log",
                          expand=True, limit=eps0_max)
    value = br.feasible if br.feasible is not None else lo
    d_value = br.feasible_value if br.feasible is not None else 0.0
    return PlanningResult("eps0", value, br.infeasible, target_epsilon, delta, n, factory(value).describe(),
                          d_value, len(fn.cache), DEFAULT_EVALUATOR)


def min_n(mechanism, target_epsilon, delta, *, n_max: int = 10**12, rtol: float = 1e-3) -> PlanningResult:
    r"""Smallest n for which the shuffled optimal upper bound meets (target_epsilon, delta).

    Parameters
    ----------
    mechanism : Mechanism
        The randomizer (with its ε0).
    target_epsilon : float
        Target central ε in nats (> 0).
    delta : float
        Target δ in (0, 1).
    n_max : int
        Search ceiling.
    rtol : float
        Accuracy setting passed to the bound evaluations.

    Returns
    -------
    PlanningResult
        ``value`` is the smallest certified-feasible n found by an exact integer search
        (``infeasible_bound == value - 1`` was evaluated and found infeasible, unless ``value == 1``).

    Raises
    ------
    ParameterError
        Bad ``target_epsilon``, ``delta`` or ``n_max``; ``'mechanism'`` for a population
        (:mod:`shuffleamp.personalized`: it carries its own n) or anything that is not a mechanism.
    OutOfRegimeError
        If even ``n_max`` users do not meet the target.
    """
    _single_mechanism(mechanism)
    target_epsilon = _validate.real("target_epsilon", target_epsilon, lo=0.0, lo_open=True)
    delta = _validate.delta(delta)
    n_max = _validate.count(n_max, "n_max", minimum=1)
    fn = _upper_delta(lambda n: mechanism, lambda n: n, target_epsilon, rtol)
    if fn(1)[0] <= delta:
        return PlanningResult("n", 1, None, target_epsilon, delta, 1, mechanism.describe(), fn(1)[0],
                              len(fn.cache), DEFAULT_EVALUATOR)
    br = inverse_monotone(fn, delta, 1, min(2, n_max), scale="integer", expand=True, expand_factor=4,
                          limit=n_max)
    if br.feasible is None:
        raise OutOfRegimeError(f"even n = {n_max} users do not reach (epsilon={target_epsilon}, "
                               f"delta={delta}) at eps0={mechanism.eps0}")
    infeasible = br.infeasible if br.infeasible is not None else 1     # n = 1 was evaluated infeasible
    return PlanningResult("n", br.feasible, infeasible, target_epsilon, delta, br.feasible,
                          mechanism.describe(), br.feasible_value, len(fn.cache), DEFAULT_EVALUATOR)
