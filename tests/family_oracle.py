r"""Exact laws of general-clone decompositions and the shuffled δ by enumeration, for the family-construction tests.

Written for the tests only, in exact arithmetic (``fractions.Fraction`` of the input floats, ``mpmath`` for the
logarithms of the merge key); nothing here calls the library:

* :func:`merge_exact` -- a decomposition's components grouped by their exact likelihood ratios
  :math:`(a_j/c_j, b_j/c_j)`, masses summed exactly (Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for
  Privacy Amplification via Shuffling", IEEE S&P 2026, Theorem 7: components with equal ratios give the same
  GPARV value, so the merged decomposition has the same law);
* :func:`merge_key` -- the documented merge key :math:`\mathrm{round}(\log \max(r, 10^{-300}) / \mathrm{rtol})`
  (log-ratios clipped at 800) of an exact ratio, with a flag when the exact value is so close to a half-integer
  that a floating-point evaluation may round either way;
* :func:`shuffled_delta` -- the hockey-stick divergence :math:`D_{e^\varepsilon}(P_0 \| P_1)` of the shuffled
  histograms of component labels: user 1 draws component j with probability :math:`a_j` (:math:`P_0`) or
  :math:`b_j` (:math:`P_1`), each of the other n - 1 users draws component j with probability :math:`c_j` or
  the left-over symbol with probability β; every sequence of the other users' outputs is enumerated
  (``itertools.product``), no GPARV theory;
* :func:`pair_decompositions` / :func:`triple_decompositions` -- a randomizer matrix's primary decomposition of
  every ordered input pair (Theorem 5: :math:`c = \min_x P[x]`) and its Theorem-14 datasets
  (:math:`c = P[x_2]`, β = 0), in exact arithmetic, merged by the documented rule.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import defaultdict
from fractions import Fraction

import mpmath
import numpy as np

#: A floating-point evaluation of the merge key carries a few ulp of (1 + |log r|) before the division by rtol:
#: within this many such ulps of a half-integer the key may round either way.
KEY_ULPS = 8


def exact(x) -> Fraction:
    """The exact value of a float."""
    return Fraction(float(x))


def exact_list(xs) -> list:
    return [exact(x) for x in np.ravel(np.asarray(xs, dtype=np.float64))]


def merge_exact(a, b, c) -> list:
    """Components grouped by exact ratio pair: ``[(r0, r1, A, B, C)]`` sorted by ``(r0, r1)``, Fractions.

    Components with ``a = b = c = 0`` are dropped; a component with ``c = 0`` and ``a + b > 0`` raises
    ``ValueError`` (not absolutely continuous)."""
    groups: dict = {}
    for x, y, z in zip(a, b, c):
        if z == 0:
            if x or y:
                raise ValueError("a component with c = 0 and a + b > 0")
            continue
        key = (x / z, y / z)
        g = groups.setdefault(key, [Fraction(0)] * 3)
        g[0] += x
        g[1] += y
        g[2] += z
    return [(r0, r1, *groups[(r0, r1)]) for r0, r1 in sorted(groups)]


@functools.lru_cache(maxsize=1 << 16)
def merge_key(r: Fraction, rtol: float) -> tuple[int, bool]:
    """``(round(min(log(max(r, 1e-300)), 800) / rtol), ambiguous)`` of an exact ratio (mpmath, 60 digits)."""
    with mpmath.workdps(60):
        x = max(mpmath.mpf(r.numerator) / r.denominator, mpmath.mpf(Fraction(1e-300).numerator) /
                Fraction(1e-300).denominator)
        u = min(mpmath.log(x), mpmath.mpf(800)) / mpmath.mpf(exact(rtol).numerator) * exact(rtol).denominator
        k = int(mpmath.nint(u))
        margin = KEY_ULPS * 2.0 ** -52 * (1 + abs(float(mpmath.log(x)))) / rtol
        amb = abs(abs(u - mpmath.floor(u)) - mpmath.mpf(0.5)) < margin
    return k, bool(amb)


def merge_documented(a, b, c, rtol: float) -> list:
    """The documented merge: components whose exact ratios have the same :func:`merge_key` pair are one
    component.  ``[(k0, k1, ambiguous, A, B, C)]`` sorted by ``(k0, k1)`` (exact ratios grouped first)."""
    out: dict = {}
    for r0, r1, A, B, C in merge_exact(a, b, c):
        (k0, m0), (k1, m1) = merge_key(r0, rtol), merge_key(r1, rtol)
        g = out.setdefault((k0, k1), [False, Fraction(0), Fraction(0), Fraction(0)])
        g[0] = g[0] or m0 or m1
        g[1] += A
        g[2] += B
        g[3] += C
    return [(k0, k1, *out[(k0, k1)]) for k0, k1 in sorted(out)]


def rounded(x: Fraction, digits: int) -> float:
    """``x`` rounded to ``digits`` decimals (exactly), as the nearest float."""
    s = 10 ** digits
    return float(Fraction(round(x * s), s))


def others_law(c, beta, m: int) -> dict:
    """Law of the histogram of ``m`` users, each drawing component j w.p. ``c[j]`` or the left-over symbol
    (index ``len(c)``) w.p. ``beta``: every sequence of outputs enumerated."""
    k = len(c)
    symbols = [(j, c[j]) for j in range(k) if c[j] > 0] + ([(k, beta)] if beta > 0 else [])
    law: dict = defaultdict(Fraction)
    for seq in itertools.product(symbols, repeat=m):
        h = [0] * (k + 1)
        w = Fraction(1)
        for j, q in seq:
            h[j] += 1
            w *= q
        law[tuple(h)] += w
    return law


def shuffled_delta(a, b, c, beta, n: int, epsilon: float) -> Fraction:
    """Exact :math:`D_{e^\\varepsilon}(P_0 \\| P_1)` of the shuffled histograms (module docstring), with
    :math:`e^\\varepsilon` the float ``math.exp(epsilon)`` taken exactly."""
    rest = others_law(c, beta, n - 1)
    P0: dict = defaultdict(Fraction)
    P1: dict = defaultdict(Fraction)
    for j in range(len(c)):
        if a[j] == 0 and b[j] == 0:
            continue
        for h, w in rest.items():
            g = list(h)
            g[j] += 1
            g = tuple(g)
            P0[g] += a[j] * w
            P1[g] += b[j] * w
    E = exact(math.exp(epsilon))
    return sum((max(P0[g] - E * P1[g], Fraction(0)) for g in P0), Fraction(0))


def merged_delta(a, b, c, beta, n: int, epsilon: float) -> Fraction:
    """:func:`shuffled_delta` of the decomposition merged by exact ratio (the same value, fewer symbols)."""
    g = merge_exact(a, b, c)
    return shuffled_delta([x[2] for x in g], [x[3] for x in g], [x[4] for x in g], beta, n, epsilon)


def _documented(rows_a, rows_b, rows_c, rtol):
    g = merge_documented(rows_a, rows_b, rows_c, rtol)
    return [x[3] for x in g], [x[4] for x in g], [x[5] for x in g]


def pair_decompositions(P, rtol: float) -> list:
    """Exact primary decompositions ``(a, b, c, beta)`` of every ordered pair of rows of ``P`` (x0 != x1),
    merged by the documented rule (:func:`merge_documented`: a matrix computed in floating point has ratios
    that differ by an ulp where they are equal), duplicates removed."""
    rows = [exact_list(r) for r in np.asarray(P, dtype=np.float64)]
    c = [min(col) for col in zip(*rows)]
    beta = 1 - sum(c)
    out, seen = [], set()
    for x0, x1 in itertools.permutations(range(len(rows)), 2):
        a, b, cc = _documented(rows[x0], rows[x1], c, rtol)
        key = (tuple(a), tuple(b), tuple(cc))
        if key not in seen:
            seen.add(key)
            out.append((a, b, cc, beta))
    return out


def triple_decompositions(P, rtol: float) -> list:
    """Exact Theorem-14 decompositions ``(a, b, c, 0)`` of every dataset (x0 | x1; others x2) of ``P`` (rows
    normalised exactly), merged by the documented rule, duplicates removed."""
    rows = []
    for r in np.asarray(P, dtype=np.float64):
        e = exact_list(r)
        s = sum(e)
        rows.append([x / s for x in e])
    out, seen = [], set()
    for x0, x1 in itertools.permutations(range(len(rows)), 2):
        for x2 in range(len(rows)):
            a, b, c = _documented(rows[x0], rows[x1], rows[x2], rtol)
            key = (tuple(a), tuple(b), tuple(c))
            if key not in seen:
                seen.add(key)
                out.append((a, b, c, Fraction(0)))
    return out
