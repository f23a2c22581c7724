"""Hypothesis strategies and the worker-side runner of the fuzz campaign (``tests/test_fuzz.py``).

A case is a plain, picklable *spec* (nested tuples) that :func:`build` turns into a mechanism inside
the worker process, plus the public call to make.  :func:`run_call` runs one call with
RuntimeWarnings turned into errors and reports the outcome as data (never raises), so that the
parent (``tests/oracle.ApiWorker``: one spawned process, killed and recreated after a timeout)
can check it:

* ``{"ok": (upper, lower)}`` (lower may be None),
* ``{"error": name, "typed": bool, "message": str}``, where ``typed`` means the exception is one of
  :mod:`shuffleamp.errors` (anything else -- OverflowError, ZeroDivisionError, a RuntimeWarning,
  an internal ArithmeticError -- is a failure of the library).

Spec grammar::

    ("krr", eps0, k)  ("blh" | "rappor" | "oue", eps0, d or None)  ("hr", eps0, d)
    ("laplace", eps0)  ("matrix", rows, eps0 or None)
    ("joint", (spec, ...))  ("parallel", ((weight, spec), ...))  ("subsample", q, spec)
    ("raw", value)   -- passed through unchanged (bad inputs: None, strings, objects)
"""

from __future__ import annotations

import math
import time

from hypothesis import strategies as st

#: ε0 range the generators draw from (the full documented range is probed by the extremes).
EPS0_LO, EPS0_HI = 0.02, 12.0


# ---------------------------------------------------------------------------- building (worker side)
def build(spec):
    """The mechanism described by ``spec`` (see the module docstring); may raise typed errors."""
    import shuffleamp as sa
    from shuffleamp import mechanisms as M

    kind = spec[0]
    if kind == "raw":
        return spec[1]
    if kind == "krr":
        return M.KRR(spec[1], spec[2])
    if kind in ("blh", "rappor", "oue"):
        return {"blh": M.BLH, "rappor": M.RAPPOR, "oue": M.OUE}[kind](spec[1], spec[2])
    if kind == "hr":
        return M.HadamardResponse(spec[1], spec[2])
    if kind == "laplace":
        return M.Laplace(spec[1])
    if kind == "matrix":
        return M.MatrixMechanism([list(r) for r in spec[1]], eps0=spec[2])
    if kind == "joint":
        return sa.joint(*[build(s) for s in spec[1]])
    if kind == "parallel":
        return sa.parallel([(w, build(s)) for w, s in spec[1]])
    if kind == "subsample":
        return sa.subsample(build(spec[2]), spec[1])
    raise ValueError(f"unknown spec {spec!r}")


def _outcome_of(exc: BaseException) -> dict:
    from shuffleamp import errors
    return {"error": type(exc).__name__, "typed": isinstance(exc, errors.ShuffleampError),
            "parameter": getattr(exc, "parameter", None), "message": str(exc)[:300]}


def run_call(spec, fname: str, n, x, kwargs: dict | None = None) -> dict:
    """Build ``spec`` and call ``shuffleamp.<fname>(mech, n, x, **kwargs)``; the outcome as a dict.

    ``fname`` is ``"delta"`` or ``"epsilon"``.  RuntimeWarnings (overflow, invalid value, division
    by zero in numpy) are errors here: a warning leaking to the user's stderr is a defect.
    """
    import warnings

    import shuffleamp
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            mech = build(spec)
            r = getattr(shuffleamp, fname)(mech, n, x, **(kwargs or {}))
            up = r.upper if r.upper is not None else r.estimate     # estimate-kind methods (gdp)
            out = {"ok": (float(up), None if r.lower is None else float(r.lower))}
    except BaseException as exc:   # reported as data, checked by the parent
        out = _outcome_of(exc)
    out["seconds"] = time.perf_counter() - t0
    return out


def run_calls(spec, fname: str, points, kwargs: dict | None = None) -> list:
    """:func:`run_call` at several ``(n, x)`` points with one mechanism (one round trip)."""
    return [run_call(spec, fname, n, x, kwargs) for n, x in points]


def run_oracle_pairs(rows, n: int, eps: float, pairs) -> dict:
    """Certified upper δ of the matrix mechanism and the brute-force divergence of concrete pairs.

    ``pairs`` is a list of ``(X0, X1)`` neighbouring datasets (tuples of row indices, differing in
    the first user only).  Returns ``{"upper": float, "lower": float, "truth": [float, ...]}``
    (or an error outcome).
    """
    import warnings

    import numpy as np

    import oracle
    import shuffleamp
    from shuffleamp import mechanisms as M
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            mech = M.MatrixMechanism([list(r) for r in rows])
            r = shuffleamp.delta(mech, n, eps)
            P = mech.matrix()
            truth = [oracle.shuffled_divergence(np.asarray(P), list(X0), list(X1), eps) for X0, X1 in pairs]
        return {"upper": float(r.upper), "lower": float(r.lower), "truth": truth}
    except BaseException as exc:
        return _outcome_of(exc)


# ---------------------------------------------------------------------------- strategies (parent side)
def eps0s(lo: float = EPS0_LO, hi: float = EPS0_HI):
    """ε0 log-uniform-ish in [lo, hi] (floats; both ends reachable)."""
    return st.floats(math.log(lo), math.log(hi)).map(lambda t: round(math.exp(t), 6)).map(
        lambda v: min(max(v, lo), hi))


def counts(lo: int, hi: int):
    """Integers log-uniform in [lo, hi]."""
    return st.floats(math.log(lo), math.log(hi)).map(lambda t: int(min(max(round(math.exp(t)), lo), hi)))


def matrices(max_rows: int = 4, max_cols: int = 4, eps0_max: float = 6.0):
    """Random row-stochastic matrices with all entries > 0 (pure LDP), as tuples of tuples.

    Entries are ``exp(u)`` with ``u`` in ``[0, eps0_max / 2]``, rows normalised, so the tight ε0 is at
    most ``eps0_max``.
    """
    def mk(shape):
        D, Y = shape
        cell = st.floats(0.0, eps0_max / 2)
        return st.lists(st.lists(cell, min_size=Y, max_size=Y), min_size=D, max_size=D).map(
            lambda U: tuple(tuple(math.exp(u) / sum(math.exp(w) for w in row) for u in row) for row in U))

    return st.tuples(st.integers(2, max_rows), st.integers(2, max_cols)).flatmap(mk).filter(
        lambda rows: len({r for r in rows}) > 1)


def base_specs(eps0=None, matrix_rows: int = 4, matrix_cols: int = 4):
    """Every base mechanism of the catalogue with random parameters."""
    e = eps0 if eps0 is not None else eps0s()
    return st.one_of(
        st.tuples(st.just("krr"), e, counts(2, 10 ** 6)),
        st.tuples(st.sampled_from(["blh", "rappor", "oue"]), e, st.one_of(st.none(), st.integers(2, 40))),
        st.tuples(st.just("hr"), e, st.sampled_from([4, 8, 16, 64, 1024, 2 ** 20])),
        st.tuples(st.just("laplace"), e),
        st.tuples(st.just("matrix"), matrices(matrix_rows, matrix_cols), st.none()),
    )


def finite_specs(eps0=None):
    """Base mechanisms with a finite domain d >= 3 (joint / parallel components share the input)."""
    e = eps0 if eps0 is not None else eps0s(hi=6.0)
    return st.one_of(
        st.tuples(st.just("krr"), e, st.integers(2, 12)),
        st.tuples(st.sampled_from(["blh", "rappor", "oue"]), e, st.integers(2, 12)),
    )


def composed_specs():
    """joint / parallel / subsample compositions of small finite mechanisms."""
    comp = finite_specs(eps0s(0.05, 3.0))
    joint = st.lists(comp, min_size=2, max_size=3).map(lambda cs: ("joint", tuple(cs)))

    def par(cs):
        return st.lists(st.floats(0.05, 1.0), min_size=len(cs), max_size=len(cs)).map(
            lambda ws: ("parallel", tuple((w / sum(ws), c) for w, c in zip(ws, cs))))

    # parallel components must share the input domain: same k / d for all
    same_domain = st.integers(3, 8).flatmap(lambda d: st.lists(st.one_of(
        st.tuples(st.just("krr"), eps0s(0.05, 4.0), st.just(d)),
        st.tuples(st.sampled_from(["blh", "rappor", "oue"]), eps0s(0.05, 4.0), st.just(d))),
        min_size=2, max_size=3))
    parallel = same_domain.flatmap(par)
    sub = st.tuples(st.just("subsample"), st.floats(0.01, 1.0), base_specs(eps0s(0.05, 6.0)).filter(
        lambda s: s[0] != "laplace"))
    return st.one_of(joint, parallel, sub)


#: ε0 values at the edges of the supported range and beyond (inputs that once failed with internal names).
EXTREME_EPS0 = (1e-12, 1e-6, 15.0, 20.0, 30.0, 40.0, 60.0, 100.0, 400.0, 700.0, 701.0, 1e6)


def extreme_specs():
    """Base mechanisms at extreme ε0 / domain sizes (may be rejected, but only with typed errors)."""
    e = st.sampled_from(EXTREME_EPS0)
    return st.one_of(
        st.tuples(st.just("krr"), e, st.sampled_from([2, 3, 10, 2 ** 40, 2 ** 62])),
        st.tuples(st.sampled_from(["blh", "rappor", "oue"]), e, st.sampled_from([None, 2, 3, 5, 12, 10 ** 6])),
        st.tuples(st.just("hr"), e, st.sampled_from([4, 8, 2 ** 30])),
        st.tuples(st.just("matrix"), st.sampled_from([
            ((1 - 1e-300, 1e-300), (1e-300, 1 - 1e-300)),
            ((1 - 1e-12, 1e-12), (1e-12, 1 - 1e-12)),
            ((0.5, 0.5), (0.5 + 1e-15, 0.5 - 1e-15)),
        ]), st.none()),
    )


#: Values that are not valid parameters of any kind.
BAD_VALUES = (None, "1", "abc", b"1", True, float("nan"), float("inf"), -1.0, 0.0, 1 + 2j, [], [1.0, None],
              object(), 2 ** 70, -(2 ** 70), 1e400)


def bad_specs():
    """Mechanisms with one bad parameter (must raise a typed error naming a user parameter)."""
    bad = st.sampled_from(BAD_VALUES)
    return st.one_of(
        st.tuples(st.just("krr"), bad, st.just(5)),
        st.tuples(st.just("krr"), st.just(1.0), bad),
        st.tuples(st.sampled_from(["blh", "rappor", "oue"]), bad, st.none()),
        st.tuples(st.sampled_from(["blh", "rappor", "oue"]), st.just(1.0), bad),
        st.tuples(st.just("hr"), st.just(1.0), st.one_of(bad, st.sampled_from([3, 6, 12]))),
        st.tuples(st.just("laplace"), bad),
        st.tuples(st.just("matrix"), st.sampled_from([((1.0, 0.0), (0.0, 1.0)), ((0.5, 0.5),),
                                                       ((0.6, 0.6), (0.5, 0.5)), ((-0.1, 1.1), (0.5, 0.5))]),
                  st.none()),
        st.tuples(st.just("raw"), bad),
    )


def ns(lo: int = 1, hi: int = 10 ** 9):
    """Numbers of users, log-uniform in [lo, hi]."""
    return counts(lo, hi)


def deltas(lo: float = 1e-12, hi: float = 1e-2):
    """Target δ log-uniform in [lo, hi]."""
    return st.floats(math.log(lo), math.log(hi)).map(lambda t: min(max(math.exp(t), lo), hi))
