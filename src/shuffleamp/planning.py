"""Planning queries for budget owners: the largest ε0, or the smallest n, that meets a target (ε, δ).

Both are bracketing searches on the *certified* optimal upper bound (:func:`shuffleamp.delta`):
a candidate is feasible when the certified upper δ at the target ε is <= the target δ.  The
answer returned is always a candidate that was evaluated and found feasible (the conservative
end of the final bracket), so it is certified on its own, without relying on monotonicity;
monotonicity (δ increasing in ε0, decreasing in n) only makes the search efficient and tight.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from . import _validate, mechanisms
from .bounds import DEFAULT_EVALUATOR
from .bounds import delta as _delta
from .errors import OutOfRegimeError, ParameterError


@dataclass(frozen=True)
class PlanningResult:
    """Answer of :func:`max_eps0` or :func:`min_n`.

    Attributes
    ----------
    quantity : {"eps0", "n"}
        What ``value`` is.
    value : float or int
        Largest feasible ε0 (nats) or smallest feasible n: certified feasible.
    infeasible_bound : float or int or None
        The nearest candidate found infeasible (the other end of the final bracket), or None.
    target_epsilon, delta : float
        The target.
    mechanism : dict
        Description of the mechanism (``eps0`` is the answer's for ``max_eps0``).
    delta_at_value : float
        Certified upper δ at the target ε for the returned value.
    evaluations : int
        Number of bound evaluations.
    """

    quantity: str
    value: float | int
    infeasible_bound: float | int | None
    target_epsilon: float
    delta: float
    n: int | None
    mechanism: dict
    delta_at_value: float
    evaluations: int

    def to_dict(self) -> dict:
        from . import __version__
        out = {f"{self.quantity}": self.value, f"{self.quantity}_infeasible": self.infeasible_bound,
               "target_epsilon": self.target_epsilon, "delta": self.delta, "n": self.n,
               "mechanism": self.mechanism, "delta_upper_at_answer": self.delta_at_value,
               "evaluations": self.evaluations, "method": "optimal", "evaluator": DEFAULT_EVALUATOR,
               "version": __version__}
        return out


def with_eps0(mechanism, eps0: float):
    """The same kind of mechanism with another ε0 (k-RR, BLH, RAPPOR, OUE, HR, Laplace).

    Raises
    ------
    ParameterError
        For matrix or composed mechanisms, whose ε0 is not a free parameter.
    """
    desc = dict(mechanism.describe())
    name = desc.pop("mechanism")
    if name not in ("krr", "blh", "rappor", "oue", "hr", "laplace"):
        raise ParameterError("mechanism", f"{name!r}: its eps0 is not a free parameter, so max_eps0 "
                             "cannot vary it (pass a factory eps0 -> mechanism instead)")
    desc.pop("eps0", None)
    params = {k: v for k, v in desc.items() if v is not None}
    return mechanisms.make(name, eps0=eps0, **params)


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
        Search ceiling (nats).  If even ``eps0_max`` is feasible it is returned.
    rel_tol : float
        Relative width of the final bracket.
    rtol : float
        Accuracy setting passed to the bound evaluations.

    Returns
    -------
    PlanningResult
        ``value`` is a certified-feasible ε0 (the lower end of the final bracket).

    Notes
    -----
    Any ε0 <= target_epsilon is trivially feasible (a shuffled ε0-LDP protocol is ε0-DP), which
    gives the left end of the first bracket.
    """
    n = _validate.count(n, "n")
    target_epsilon = _validate.real("target_epsilon", target_epsilon, lo=0.0, lo_open=True)
    delta = _validate.delta(delta)
    eps0_max = _validate.real("eps0_max", eps0_max, lo=0.0, lo_open=True, hi=700.0)
    rel_tol = _validate.real("rel_tol", rel_tol, lo=1e-9, hi=0.5)
    factory: Callable = mechanism if callable(mechanism) and not hasattr(mechanism, "describe") else \
        (lambda e: with_eps0(mechanism, e))
    count = 0
    cache: dict[float, float] = {}

    def upper_delta(e0: float) -> float:
        nonlocal count
        if e0 not in cache:
            count += 1
            cache[e0] = _delta(factory(e0), n, target_epsilon, rtol=rtol).upper
        return cache[e0]

    lo = min(target_epsilon, eps0_max)         # feasible: a shuffled eps0-LDP protocol is eps0-DP
    hi = min(2.0 * lo, eps0_max)
    while upper_delta(hi) <= delta:            # exponential search upwards from the target
        if hi >= eps0_max:
            return PlanningResult("eps0", hi, None, target_epsilon, delta, n, factory(hi).describe(),
                                  upper_delta(hi), count)
        lo, hi = hi, min(2.0 * hi, eps0_max)
    while hi / lo - 1 > rel_tol:
        mid = math.sqrt(lo * hi)
        if upper_delta(mid) <= delta:
            lo = mid
        else:
            hi = mid
    d_lo = upper_delta(lo) if lo in cache else 0.0
    return PlanningResult("eps0", lo, hi, target_epsilon, delta, n, factory(lo).describe(), d_lo, count)


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
        ``value`` is a certified-feasible n (the upper end of the final integer bracket).

    Raises
    ------
    OutOfRegimeError
        If even ``n_max`` users do not meet the target.
    """
    target_epsilon = _validate.real("target_epsilon", target_epsilon, lo=0.0, lo_open=True)
    delta = _validate.delta(delta)
    n_max = _validate.count(n_max, "n_max", minimum=1)
    count = 0
    cache: dict[int, float] = {}

    def upper_delta(n: int) -> float:
        nonlocal count
        if n not in cache:
            count += 1
            cache[n] = _delta(mechanism, n, target_epsilon, rtol=rtol).upper
        return cache[n]

    if upper_delta(1) <= delta:
        return PlanningResult("n", 1, None, target_epsilon, delta, 1, mechanism.describe(), cache[1], count)
    lo, hi = 1, 2
    while upper_delta(hi) > delta:
        lo, hi = hi, min(hi * 4, n_max)
        if lo == n_max:
            raise OutOfRegimeError(f"even n = {n_max} users do not reach (epsilon={target_epsilon}, "
                                   f"delta={delta}) at eps0={mechanism.eps0}")
    while hi - lo > max(1, int(hi * 1e-6)):
        mid = (lo + hi) // 2
        if upper_delta(mid) <= delta:
            hi = mid
        else:
            lo = mid
    return PlanningResult("n", hi, lo, target_epsilon, delta, hi, mechanism.describe(), cache[hi], count)
