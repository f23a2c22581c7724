"""The optimal method's decomposition bound with binary RR's exact count law run in full beside it.

For binary randomized response the default method answers with the exact count law first and runs the
decomposition bound (Su, Cheng, Wang, IEEE S&P 2026, Theorems 13 and 14) only where it can improve on it.
Tests that check the decomposition side against an independent computation run both engines in full here:
upper = min and lower = max of both, each engine's numbers in ``settings["grid"]`` (``"decomposition"``,
``"exact_count"``).  For any other mechanism this is the default method.
"""

import dataclasses
from shuffleamp import bounds


def both_engines(quantity, mechanism, n, value, *, evaluator="exact", eps_rtol=1e-7):
    """``shuffleamp.epsilon`` (quantity "epsilon", value = δ) or ``shuffleamp.delta`` (value = ε) of the
    optimal method without binary RR's routing: a :class:`shuffleamp.results.BoundResult`."""
    m, ctx = bounds._common(mechanism, "optimal", bounds.DEFAULT_RTOL, bounds.DEFAULT_RTOL_LOWER,
                            bounds.DEFAULT_MAX_GRID, evaluator, bounds.DEFAULT_MAX_SECONDS,
                            bounds.DEFAULT_MAX_MEMORY_GB)
    m = dataclasses.replace(m, delta=bounds._decomposition_delta, epsilon=bounds._decomposition_epsilon)
    if quantity == "epsilon":
        ctx = ctx.with_(eps_rtol=eps_rtol)
    return bounds._run(quantity, m, mechanism, n, value, ctx)
