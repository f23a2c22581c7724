r"""Brute force over every dataset of BLH, RAPPOR and OUE, and their large-n information constants.

Independent of the library's decompositions and lower-bound datasets: written from the mechanisms'
definitions alone.

**Reduction to m bits.**  A dataset whose inputs take the m distinct values ``V = {v_0, ..., v_{m-1}}``
(the target's two values first) only ever sees, of a report y, the bits ``u_v(y)`` for v in V:

* BLH, ``y = (h, b)``, ``u_v = [h(v) = b]``: the hash values ``h(v)`` of distinct v are independent fair bits
  and ``b = RR(h(x))``, so under ``R(x)`` the bits ``u_v`` are independent, ``Pr[u_x = 1] = E/(1+E)`` and
  ``Pr[u_v = 1] = 1/2`` for ``v != x``;
* RAPPOR, ``u_v = y[v]``: independent, ``Pr[u_x = 1] = t/(1+t)``, ``Pr[u_v = 1] = 1/(1+t)``, ``t = e^{ε0/2}``;
* OUE, ``u_v = y[v]``: independent, ``Pr[u_x = 1] = 1/2``, ``Pr[u_v = 1] = 1/(1+E)``.

The remaining coordinates of y (the hash values at other inputs; the other bits) have the same law under
every row in V and are independent of ``u_V``, so the columns of the full matrix restricted to the rows V
are proportional within a class of equal ``u_V``: the class counts are a sufficient statistic of the
shuffled histogram for every dataset over V, and summing the columns of a class leaves every divergence
unchanged.  :func:`bit_matrix` is that m x 2^m matrix; ``test_bit_oracle.py`` checks it against the full
matrix of :mod:`oracle` (equal-column lumping only) at small d.  The divergence of a dataset over m values
does not depend on d >= m (the ``d = None`` limit included).

**Every dataset.**  Up to the order of users, the labels of the inputs and the direction of the pair, a
neighbouring pair is ``X0 = (0, rest)``, ``X1 = (1, rest)`` with ``rest`` given by the number of other users
at 0 and at 1 and the sorted counts of the other users at "third" values (each third value used at least
once); :func:`datasets` lists them (at most ``max_third`` third values, at most ``d - 2``).

**Large-n information.**  With the other users' inputs fixed and n large, the log-likelihood ratio of the
shuffled output is asymptotically normal with variance ``I / n`` where, for others spread with weights
``w_x`` over the inputs, ``I = v^T (sum_x w_x Cov_x)^+ v``, ``v = R(x_1^0) - R(x_1^1)``,
``Cov_x = diag(R(x)) - R(x) R(x)^T`` (the histogram of the others is a sum of independent categorical
vectors; the target adds a mean shift v).  ``A -> v^T A^+ v`` is convex (the matrix-fractional function, on
the positive semidefinite matrices whose range contains v, here every ``Cov_x`` restricted to the sum-zero
subspace) and ``sum_x w_x Cov_x`` is linear in w, so I is maximal at a vertex: all others at one value
``x_2``, where ``I = sum_y v(y)^2 / R(x_2)(y)`` (:func:`information_constant`).  A decomposition bound whose
others are blanket-only has the constant ``sum_y v(y)^2 / (gamma omega(y))``
(:func:`blanket_information_constant`).  The Gaussian profiles of the two constants
(:func:`gaussian_epsilon`) are the large-n limits of the worst dataset's ε and of the decomposition upper's;
this is an asymptotic argument (first order in n^-1/2), not a certified bound.
"""

from __future__ import annotations

import math

import numpy as np

import oracle as O

MECHANISMS = ("blh", "rappor", "oue")


def bit_probabilities(name: str, eps0: float) -> tuple[float, float]:
    """``(Pr[u_v = 1] for v != x, Pr[u_x = 1])`` of one report of ``R(x)`` (see the module docstring)."""
    E = math.exp(eps0)
    if name == "blh":
        return 0.5, E / (1 + E)
    if name == "rappor":
        t = math.exp(eps0 / 2)
        return 1 / (1 + t), t / (1 + t)
    if name == "oue":
        return 1 / (1 + E), 0.5
    raise ValueError(name)


def bit_matrix(name: str, eps0: float, m: int) -> np.ndarray:
    """The m x 2^m matrix of the bits ``u_V`` of one report (row x in 0..m-1, column index with bit v = u_v)."""
    lo, hi = bit_probabilities(name, eps0)
    cols = np.arange(2 ** m)
    bits = (cols[None, :] >> np.arange(m)[:, None]) & 1            # (m, 2^m)
    P = np.empty((m, 2 ** m))
    for x in range(m):
        p = np.where(np.arange(m) == x, hi, lo)[:, None]
        P[x] = np.prod(np.where(bits == 1, p, 1 - p), axis=0)
    return P


def full_bit_rows(name: str, eps0: float, d: int, rows) -> np.ndarray:
    """The full d-input matrix written from the definition, restricted to ``rows`` (for the reduction test).

    BLH: columns ``2 h + b`` over all 2^d hash functions; RAPPOR / OUE: columns over ``{0,1}^d``.
    """
    E = math.exp(eps0)
    if name == "blh":
        hs = np.arange(2 ** d)
        out = np.empty((len(rows), 2 ** (d + 1)))
        for i, x in enumerate(rows):
            hx = (hs >> x) & 1
            out[i, 0::2] = np.where(hx == 0, E, 1.0) / ((E + 1) * 2 ** d)
            out[i, 1::2] = np.where(hx == 1, E, 1.0) / ((E + 1) * 2 ** d)
        return out
    lo, hi = bit_probabilities(name, eps0)
    ys = np.arange(2 ** d)
    bits = (ys[None, :] >> np.arange(d)[:, None]) & 1
    out = np.empty((len(rows), 2 ** d))
    for i, x in enumerate(rows):
        p = np.where(np.arange(d) == x, hi, lo)[:, None]
        out[i] = np.prod(np.where(bits == 1, p, 1 - p), axis=0)
    return out


def _partitions(total: int, parts: int, largest: int):
    """Non-increasing tuples of ``parts`` positive integers <= largest summing to total."""
    if parts == 0:
        if total == 0:
            yield ()
        return
    for first in range(min(total, largest), 0, -1):
        if first * parts < total:
            break
        for rest in _partitions(total - first, parts - 1, first):
            yield (first,) + rest


def datasets(n: int, *, d: int | None, max_third: int):
    """Every neighbouring pair up to symmetry: ``(c0, c1, thirds)`` with c0 <= c1 others at the target's values
    0 and 1 and ``thirds`` the sorted counts at distinct third values (``len(thirds) <= max_third``, ``<= d - 2``)."""
    cap = max_third if d is None else min(max_third, d - 2)
    others = n - 1
    for c0 in range(others + 1):
        for c1 in range(c0, others + 1 - c0):
            left = others - c0 - c1
            for k in range(0, min(cap, left) + 1):
                for thirds in _partitions(left, k, left):
                    yield c0, c1, thirds


def dataset_pair(c0: int, c1: int, thirds) -> tuple[tuple, tuple, int]:
    """``(X0, X1, m)``: the two datasets as row indices of :func:`bit_matrix` with m values."""
    rest = [0] * c0 + [1] * c1
    for j, c in enumerate(thirds):
        rest += [2 + j] * c
    return (0, *rest), (1, *rest), 2 + len(thirds)


#: Refuse histogram state spaces larger than this (memory / time guard).
MAX_STATES = 4_000_000


def _units(T: int, n: int) -> np.ndarray:
    """Per-output increments of the packed histogram code: ``(T, W)`` uint64.

    One 64-bit word with ``n + 1`` as the base when ``(n + 1)^T`` fits in 62 bits (the fast case), else 4 bits
    per output (n <= 15) over as many words as needed."""
    if T * math.log2(n + 1) <= 62:
        return np.array([[(n + 1) ** y] for y in range(T)], dtype=np.uint64)
    if n > 15:
        raise ValueError("n <= 15 (4-bit counts)")
    W = -(-4 * T // 64)
    unit = np.zeros((T, W), dtype=np.uint64)
    for y in range(T):
        unit[y, (4 * y) // 64] = np.uint64(1) << np.uint64((4 * y) % 64)
    return unit


def _add_user(keys, probs, row, unit):
    """The law after one more user with output law ``row`` (the product by one linear factor)."""
    W = unit.shape[1]
    nz = np.flatnonzero(row > 0)
    k = (keys[:, None, :] + unit[None, nz, :]).reshape(-1, W)
    p = (probs[:, None] * row[None, nz].astype(O.LD)).ravel()
    order = np.argsort(k[:, 0], kind="stable") if W == 1 else np.lexsort(k.T[::-1])
    k, p = k[order], p[order]
    start = np.flatnonzero(np.concatenate(([True], np.any(k[1:] != k[:-1], axis=1))))
    return k[start], np.add.reduceat(p, start)


def pair_laws(P: np.ndarray, x0: int, x1: int, rest) -> tuple:
    """Exact laws of the shuffled histograms of ``(x0, rest)`` and ``(x1, rest)`` (extended precision).

    The same product of one linear factor per user as :func:`oracle.histogram_law`; the other users' law is
    built once and shared.  Histogram codes: see :func:`_units`.  Returns two ``(keys, probs)`` with keys an
    ``(S, W)`` uint64 array (sorted, distinct) and probs longdouble.
    """
    P = np.asarray(P, dtype=np.float64)
    n, T = len(rest) + 1, P.shape[1]
    if math.comb(n + T - 1, T - 1) > MAX_STATES:
        raise ValueError(f"too many histograms: C({n + T - 1}, {T - 1})")
    unit = _units(T, n)
    keys = np.zeros((1, unit.shape[1]), dtype=np.uint64)
    probs = np.ones(1, dtype=O.LD)
    for x in rest:
        keys, probs = _add_user(keys, probs, P[x], unit)
    return _add_user(keys, probs, P[x0], unit), _add_user(keys, probs, P[x1], unit)


def hockey_stick_pair(law0, law1, epsilon: float) -> tuple[float, float]:
    """``(D_{e^eps}(law0 || law1), D_{e^eps}(law1 || law0))`` of two :func:`pair_laws` results."""
    (k0, p0), (k1, p1) = law0, law1
    allk = np.concatenate([k0, k1])
    if allk.shape[1] == 1:
        _, inv = np.unique(allk[:, 0], return_inverse=True)
    else:
        _, inv = np.unique(allk, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    q0 = np.zeros(int(inv.max()) + 1, dtype=O.LD)
    q1 = np.zeros_like(q0)
    q0[inv[:len(k0)]] = p0          # keys are distinct within a law
    q1[inv[len(k0):]] = p1
    a = O.LD(math.exp(float(epsilon)))
    d01, d10 = q0 - a * q1, q1 - a * q0
    return float(np.sum(d01[d01 > 0], dtype=O.LD)), float(np.sum(d10[d10 > 0], dtype=O.LD))


def dataset_divergences(name: str, eps0: float, c0: int, c1: int, thirds, epsilons) -> list[float]:
    """Exact shuffled divergence of the pair at each ε, the larger of both directions (extended precision)."""
    X0, X1, m = dataset_pair(c0, c1, thirds)
    l0, l1 = pair_laws(bit_matrix(name, eps0, m), X0[0], X1[0], X0[1:])
    return [max(hockey_stick_pair(l0, l1, e)) for e in epsilons]


def dataset_divergence(name: str, eps0: float, c0: int, c1: int, thirds, epsilon: float) -> float:
    """Exact shuffled divergence of the pair, the larger of both directions (extended precision)."""
    return dataset_divergences(name, eps0, c0, c1, thirds, [epsilon])[0]


def worst_datasets(name: str, eps0: float, n: int, epsilons, *, d: int | None = None, max_third: int = 2):
    """Every dataset's divergence at each ε: ``{eps: [(delta, (c0, c1, thirds)), ...] largest first}``."""
    eps = list(np.atleast_1d(epsilons))
    rows = [(dataset_divergences(name, eps0, c0, c1, th, eps), (c0, c1, th))
            for c0, c1, th in datasets(n, d=d, max_third=max_third)]
    return {e: sorted(((r[0][i], r[1]) for r in rows), key=lambda t: -t[0]) for i, e in enumerate(eps)}


def describe(c0: int, c1: int, thirds) -> str:
    """Short label: counts of the other users at x_1^0, x_1^1 and at each third value."""
    parts = []
    if c0:
        parts.append(f"{c0} at x0")
    if c1:
        parts.append(f"{c1} at x1")
    if thirds:
        parts.append("third " + "+".join(map(str, thirds)))
    return ", ".join(parts)


def information_constant(name: str, eps0: float, weights) -> float:
    """``v^T (sum_x w_x Cov_x)^+ v`` over the values 0 .. m-1 (``weights`` has length m; target 0 vs 1)."""
    w = np.asarray(weights, dtype=float)
    w = w / w.sum()
    P = bit_matrix(name, eps0, len(w))
    v = P[0] - P[1]
    C = sum(wx * (np.diag(P[x]) - np.outer(P[x], P[x])) for x, wx in enumerate(w) if wx > 0)
    return float(v @ np.linalg.pinv(C, rcond=1e-13, hermitian=True) @ v)


def blanket_information_constant(name: str, eps0: float) -> float:
    """``sum_y v(y)^2 / (gamma omega(y))`` of the d -> infinity mechanism, ``gamma omega(y) = min_x R(x)(y)``.

    In the bit form ``R(x)(y) = base(y) rho(u_x(y))`` with ``base`` the law of every bit at its "other" value
    and ``rho(1) = hi/lo``, ``rho(0) = (1-hi)/(1-lo)``; with infinitely many inputs some input has
    ``u_x(y) = 0`` for every report, so ``min_x R(x)(y) = base(y) rho(0)`` and the sum is
    ``E_base[(rho(u_0) - rho(u_1))^2] / rho(0) = 2 lo (1 - lo) (rho(1) - rho(0))^2 / rho(0)``.
    """
    lo, hi = bit_probabilities(name, eps0)
    r1, r0 = hi / lo, (1 - hi) / (1 - lo)
    return 2 * lo * (1 - lo) * (r1 - r0) ** 2 / r0


def gaussian_epsilon(information: float, n: int, delta: float) -> float:
    """ε at δ of the Gaussian profile with ``mu = sqrt(information / n)`` (Dong, Roth, Su, "Gaussian
    Differential Privacy", JRSS-B 2022, Corollary 2.13): the large-n limit of a pair whose log-likelihood ratio
    is asymptotically N(mu^2/2, mu^2).  An approximation, not a bound."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    mu = math.sqrt(information / n)

    def excess(e):
        return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta

    return brentq(excess, 0.0, mu * (mu + 40.0), xtol=1e-16, rtol=1e-13)


__all__ = ["MAX_STATES", "MECHANISMS", "bit_matrix", "bit_probabilities", "blanket_information_constant",
           "dataset_divergence", "dataset_divergences", "dataset_pair", "datasets", "describe", "full_bit_rows",
           "gaussian_epsilon", "hockey_stick_pair", "information_constant", "pair_laws", "worst_datasets"]
