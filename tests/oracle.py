r"""Brute-force oracle for shuffled finite randomizers, independent of the GPARV theory.

Nothing here uses decompositions, blankets or GPARVs.  For a row-stochastic matrix
``P[x, y] = Pr[R(x) = y]`` and a dataset ``X = (x_1, ..., x_n)`` (a list of row indices) the
shuffled output is the multiset of the n reports, i.e. the histogram ``h in N^Y`` with
``sum(h) = n``.  Its law is the coefficient list of the multivariate polynomial

.. math::

    \prod_{i=1}^{n} \Big(\sum_y P[x_i, y]\, z_y\Big),

computed here by multiplying in one linear factor per user (a convolution over histograms).
Histograms are encoded as integers ``sum_y h_y (n+1)^y`` so that "add one report y" is
"add (n+1)^y" and equal histograms are merged by sorting.  All probabilities are carried in
``numpy.longdouble`` (80-bit extended precision on x86-64), so the only float64 rounding left
in a divergence is that of the inputs ``P`` and ``e^epsilon``.

The hockey-stick divergence of two histogram laws is
``D_alpha(P0 || P1) = sum_h max(0, P0(h) - alpha P1(h))``; :func:`shuffled_divergence`
returns the maximum of both directions, :func:`worst_dataset_divergence` maximises it over
all neighbouring dataset pairs (up to the obvious symmetries: the order of the users, and the
direction of the pair).

Optional *lumping* of outputs whose columns are exactly equal on the rows in use is a
sufficient-statistic reduction: given the lumped count m, the split between two outputs with
identical columns is Binomial(m, 1/2) for every dataset, so both hypotheses share it and the
divergence is unchanged (the tests check this against the unlumped computation).
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np

LD = np.longdouble

#: Refuse histogram state spaces larger than this (memory / time guard).
MAX_STATES = 3_000_000


def _as_matrix(P) -> np.ndarray:
    P = np.array(P, dtype=np.float64)
    if P.ndim != 2:
        raise ValueError("P must be a 2-D matrix")
    if (P < 0).any() or not np.isfinite(P).all():
        raise ValueError("P must be finite and non-negative")
    if not np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-9):
        raise ValueError("P must be row-stochastic")
    return P


def lump_equal_columns(P: np.ndarray, rows=None) -> np.ndarray:
    """Sum the columns of ``P`` that are exactly equal on ``rows`` (all rows by default).

    Returns the reduced matrix (same rows as ``P``).  Valid (divergence-preserving) for datasets
    that only use inputs from ``rows``.
    """
    P = np.asarray(P, dtype=np.float64)
    sub = P if rows is None else P[sorted(set(int(r) for r in rows))]
    _, inv = np.unique(sub.T, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    out = np.zeros((P.shape[0], int(inv.max()) + 1))
    for y, g in enumerate(inv):
        out[:, g] += P[:, y]
    return out


def _n_states(n: int, Y: int) -> int:
    return math.comb(n + Y - 1, Y - 1)


def histogram_law(P, X, *, lump: bool = True):
    """Exact law of the shuffled histogram of the reports of dataset ``X``.

    Parameters
    ----------
    P : array_like, shape (D, Y)
        Row-stochastic matrix, rows = inputs.
    X : sequence of int
        The n users' inputs (row indices); the order is irrelevant.
    lump : bool
        Lump outputs with equal columns on the rows of ``X`` (exact; see the module docstring).

    Returns
    -------
    keys : ndarray of int64
        Sorted integer codes of the histograms with positive probability
        (code = sum_y h_y (n+1)^y in the possibly lumped output alphabet).
    probs : ndarray of longdouble
        Their probabilities (sum to 1 up to rounding).
    """
    P = _as_matrix(P)
    X = tuple(sorted(int(x) for x in X))
    if not X:
        raise ValueError("empty dataset")
    if lump:
        P = lump_equal_columns(P, X)
    return _law_cached(P.tobytes(), P.shape, X)


@lru_cache(maxsize=4096)
def _law_cached(pbytes: bytes, shape: tuple, X: tuple):
    P = np.frombuffer(pbytes, dtype=np.float64).reshape(shape)
    n, Y = len(X), shape[1]
    base = n + 1
    if Y * math.log2(base) > 62:
        raise ValueError(f"histogram codes overflow int64 (Y={Y}, n={n})")
    if _n_states(n, Y) > MAX_STATES:
        raise ValueError(f"too many histograms: C({n + Y - 1}, {Y - 1}) = {_n_states(n, Y)}")
    unit = np.array([base ** y for y in range(Y)], dtype=np.int64)
    keys = np.zeros(1, dtype=np.int64)
    probs = np.ones(1, dtype=LD)
    for x in X:
        row = P[x].astype(LD)
        nz = row > 0
        k = (keys[:, None] + unit[None, nz]).ravel()
        p = (probs[:, None] * row[None, nz]).ravel()
        order = np.argsort(k, kind="stable")
        k, p = k[order], p[order]
        start = np.flatnonzero(np.concatenate(([True], k[1:] != k[:-1])))
        keys = k[start]
        probs = np.add.reduceat(p, start)
    keys.setflags(write=False)
    probs.setflags(write=False)
    return keys, probs


def decode(key: int, n: int, Y: int) -> tuple:
    """Histogram vector of an integer code from :func:`histogram_law`."""
    base = n + 1
    out = []
    for _ in range(Y):
        key, r = divmod(int(key), base)
        out.append(r)
    return tuple(out)


def on_common_alphabet(law0, law1, dtype=np.float64):
    """The probabilities of two laws ``(keys, probs)`` on the union of their keys (zeros where a law has
    none), as two arrays of ``dtype`` in the order of the sorted keys."""
    k0, p0 = law0
    k1, p1 = law1
    keys = np.union1d(k0, k1)
    q0 = np.zeros(keys.size, dtype=dtype)
    q1 = np.zeros(keys.size, dtype=dtype)
    q0[np.searchsorted(keys, k0)] = np.asarray(p0, dtype=dtype)
    q1[np.searchsorted(keys, k1)] = np.asarray(p1, dtype=dtype)
    return q0, q1


def hockey_stick(law0, law1, alpha) -> float:
    """``sum_h max(0, P0(h) - alpha P1(h))`` for two laws ``(keys, probs)`` over the same alphabet."""
    q0, q1 = on_common_alphabet(law0, law1, LD)
    diff = q0 - LD(alpha) * q1
    return float(np.sum(diff[diff > 0], dtype=LD))


def _pair_laws(P, X0, X1, lump: bool):
    P = _as_matrix(P)
    if len(X0) != len(X1):
        raise ValueError("neighbouring datasets must have the same size")
    if lump:   # lump on the union of the rows of both datasets, so both laws share an alphabet
        P = lump_equal_columns(P, list(X0) + list(X1))
    return histogram_law(P, X0, lump=False), histogram_law(P, X1, lump=False)


def directed_divergence(P, X0, X1, epsilon: float, *, lump: bool = True) -> float:
    """``D_{e^eps}(M(X0) || M(X1))`` for the shuffled histogram law M (one direction)."""
    l0, l1 = _pair_laws(P, X0, X1, lump)
    return hockey_stick(l0, l1, math.exp(float(epsilon)))


def shuffled_divergence(P, X0, X1, epsilon: float, *, lump: bool = True) -> float:
    """``max(D_{e^eps}(M(X0)||M(X1)), D_{e^eps}(M(X1)||M(X0)))`` (both directions)."""
    l0, l1 = _pair_laws(P, X0, X1, lump)
    a = math.exp(float(epsilon))
    return max(hockey_stick(l0, l1, a), hockey_stick(l1, l0, a))


def clump_datasets(x0: int, x1: int, x2: int, n: int):
    """The Theorem-14-shaped pair ``(x0, x2, ..., x2)``, ``(x1, x2, ..., x2)`` of size n."""
    return [x0] + [x2] * (n - 1), [x1] + [x2] * (n - 1)


def neighbouring_pairs(D: int, n: int):
    """All neighbouring dataset pairs up to user order and pair direction.

    Yields ``(X0, X1)`` with ``X0 = (x0,) + rest``, ``X1 = (x1,) + rest``, ``x0 < x1`` and ``rest``
    a multiset (sorted tuple) of n - 1 inputs.  Count: C(D, 2) * C(D + n - 2, n - 1).
    """
    for x0, x1 in itertools.combinations(range(D), 2):
        for rest in itertools.combinations_with_replacement(range(D), n - 1):
            yield (x0,) + rest, (x1,) + rest


def worst_dataset_divergence(P, n: int, epsilon: float, *, return_argmax: bool = False,
                             max_pairs: int = 20_000):
    """Max over all neighbouring dataset pairs of :func:`shuffled_divergence` (both directions).

    Exhaustive (up to symmetry, see :func:`neighbouring_pairs`); meant for tiny n and D
    (n <= 4, D <= 4 in the tests, a bit more is fine).  Outputs with equal columns over *all*
    rows are lumped once (exact).

    Returns the maximum, or ``(maximum, X0, X1)`` with ``return_argmax=True``.
    """
    P = lump_equal_columns(_as_matrix(P))
    D = P.shape[0]
    n_pairs = math.comb(D, 2) * math.comb(D + n - 2, n - 1)
    if n_pairs > max_pairs:
        raise ValueError(f"{n_pairs} dataset pairs (> max_pairs={max_pairs})")
    a = math.exp(float(epsilon))
    best, arg = -1.0, None
    for X0, X1 in neighbouring_pairs(D, n):
        l0 = histogram_law(P, X0, lump=False)
        l1 = histogram_law(P, X1, lump=False)
        for val, pair in ((hockey_stick(l0, l1, a), (X0, X1)), (hockey_stick(l1, l0, a), (X1, X0))):
            if val > best:
                best, arg = val, pair
    return (best, *arg) if return_argmax else best


def worst_clump_divergence(P, n: int, epsilon: float, *, return_argmax: bool = False):
    """Max of :func:`directed_divergence` over all datasets ``(x0 | x1; x2, ..., x2)``, x0 != x1 (any x2)."""
    P = lump_equal_columns(_as_matrix(P))
    D = P.shape[0]
    a = math.exp(float(epsilon))
    best, arg = -1.0, None
    for x0, x1 in itertools.permutations(range(D), 2):
        for x2 in range(D):
            X0, X1 = clump_datasets(x0, x1, x2, n)
            val = hockey_stick(histogram_law(P, X0, lump=False), histogram_law(P, X1, lump=False), a)
            if val > best:
                best, arg = val, (x0, x1, x2)
    return (best, arg) if return_argmax else best


def heterogeneous_histogram_law(rows):
    """Exact law of the shuffled histogram of independent users with output laws ``rows``."""
    law = {(0,) * len(rows[0]): 1.0}
    for r in rows:
        new = {}
        for h, p in law.items():
            for y, q in enumerate(r):
                if q > 0:
                    h2 = list(h)
                    h2[y] += 1
                    h2 = tuple(h2)
                    new[h2] = new.get(h2, 0.0) + p * q
        law = new
    return law


def heterogeneous_divergence(rows0, rows1, eps) -> float:
    """Hockey-stick divergence D_{e^eps} of the shuffled histograms of two lists of per-user output laws."""
    a, b = heterogeneous_histogram_law(rows0), heterogeneous_histogram_law(rows1)
    e = math.exp(eps)
    return sum(max(p - e * b.get(h, 0.0), 0.0) for h, p in a.items())


def gparv_positive_part(values, probs, n: int) -> float:
    r"""``(1/n) E[(G_1 + ... + G_n)_+]`` for a finite law, by enumerating the multinomial count vectors.

    Independent of the library's kernels: weights are exact integer multinomial coefficients times
    ``longdouble`` powers of the masses, and partial sums are carried in ``longdouble``.  Cost
    ``C(n + K - 1, K - 1)`` count vectors (small n and K only).
    """
    v = [LD(float(x)) for x in values]
    p = [LD(float(x)) for x in probs]
    K = len(v)
    if math.comb(n + K - 1, K - 1) > MAX_STATES:
        raise ValueError(f"too many count vectors: C({n + K - 1}, {K - 1})")
    total = LD(0)
    for cuts in itertools.combinations(range(n + K - 1), K - 1):     # stars and bars
        counts = [b - a - 1 for a, b in zip((-1,) + cuts, cuts + (n + K - 1,))]
        s = sum((c * x for c, x in zip(counts, v)), LD(0))
        if s <= 0:
            continue
        coef = math.factorial(n)
        for c in counts:
            coef //= math.factorial(c)
        w = LD(coef)
        for c, q in zip(counts, p):
            if c:
                w *= q ** c
        total += s * w
    return float(total / n)


# ============================================================================ test utility
# Not part of the oracle: run public API calls in a spawned worker process, so that an engine
# hang (compiled code that never returns) becomes a test failure instead of blocking the run.

#: An API call that does not return within this many seconds is reported as a hang.
API_TIMEOUT = 60.0


def _api_call(fname: str, mech, n: int, x: float, kwargs: dict):
    import warnings

    import shuffleamp
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = getattr(shuffleamp, fname)(mech, n, x, **kwargs)
    return float(r.upper), (None if r.lower is None else float(r.lower))


def kernel(name: str, *args):
    """``<name>(*args)`` from the test oracles (``tests/exact_oracles.py``) or ``shuffleamp._ext.kernels`` (the
    first that has it; module-level, so it can run in the worker)."""
    import exact_oracles
    from shuffleamp._ext import kernels
    mod = next(m for m in (exact_oracles, kernels) if hasattr(m, name))
    out = getattr(mod, name)(*args)
    return tuple(float(x) for x in out) if isinstance(out, tuple) else float(out)


class ApiHang(AssertionError):
    """The API call did not return within API_TIMEOUT seconds."""


class Bounds:
    """(upper, lower) of one API call."""

    def __init__(self, ul):
        self.upper, self.lower = ul

    def __repr__(self):
        return f"Bounds(upper={self.upper!r}, lower={self.lower!r})"


class ApiWorker:
    """A single spawned worker process (recreated after a hang).

    ``call`` runs a public API function and returns :class:`Bounds`; ``run`` runs any picklable
    module-level function (for example a compiled kernel).  Outcomes are memoised (results and
    exceptions), so that re-running an example (hypothesis replays a failing one) does not pay
    for a hang twice.
    """

    _ex = None
    _memo: dict = {}

    @classmethod
    def run(cls, fn, *args, timeout: float = API_TIMEOUT, label: str | None = None):
        import concurrent.futures as cf
        import multiprocessing as mp
        key = (getattr(fn, "__module__", ""), getattr(fn, "__qualname__", repr(fn)), repr(args))
        if key not in cls._memo:
            if cls._ex is None:
                cls._ex = cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"))
            fut = cls._ex.submit(fn, *args)
            try:
                out = fut.result(timeout=timeout)
            except cf.TimeoutError:
                cls.shutdown(kill=True)
                what = label or f"{getattr(fn, '__name__', fn)}{args!r}"
                out = ApiHang(f"{what} did not return within {timeout} s (hang)")
            except Exception as exc:   # exception raised by fn: re-raised as is
                out = exc
            cls._memo[key] = out
        out = cls._memo[key]
        if isinstance(out, BaseException):
            raise out
        return out

    @classmethod
    def call(cls, fname: str, mech, n: int, x: float, timeout: float = API_TIMEOUT, **kwargs) -> Bounds:
        label = f"shuffleamp.{fname}({mech!r}, {n!r}, {x!r}, **{kwargs})"
        return Bounds(cls.run(_api_call, fname, mech, int(n), float(x), kwargs,
                              timeout=timeout, label=label))

    @classmethod
    def shutdown(cls, kill: bool = False):
        if cls._ex is None:
            return
        if kill:   # only the worker this class started
            for p in list(getattr(cls._ex, "_processes", {}).values()):
                p.kill()
        cls._ex.shutdown(wait=not kill, cancel_futures=True)
        cls._ex = None


def api_delta(mech, n: int, eps: float, **kwargs) -> Bounds:
    return ApiWorker.call("delta", mech, n, eps, **kwargs)


def api_epsilon(mech, n: int, delta: float, **kwargs) -> Bounds:
    return ApiWorker.call("epsilon", mech, n, delta, **kwargs)


def positive_part_mp(values, probs, n: int, dps: int = 40) -> float:
    r"""``(1/n) E[(G_1 + ... + G_n)_+]`` for a law of 2 or 3 atoms, by exact nested binomial sums in mpmath.

    With counts N_1 ~ Bin(n, p_1) and N_2 | N_1 ~ Bin(n - N_1, p_2 / (1 - p_1)) (the third atom takes the
    rest), every term is an mpmath product of binomial coefficients and powers at ``dps`` digits:
    independent of the library's kernels and of floating-point window truncation.  O(n^2) terms.
    """
    import mpmath as mp

    with mp.workdps(dps):
        v = [mp.mpf(float(x)) for x in values]
        p = [mp.mpf(float(x)) for x in probs]
        tot = sum(p)
        p = [x / tot for x in p]
        total = mp.mpf(0)
        if len(v) == 2:
            for j in range(n + 1):
                s = j * v[0] + (n - j) * v[1]
                if s > 0:
                    total += mp.binomial(n, j) * p[0] ** j * p[1] ** (n - j) * s
            return float(total / n)
        if len(v) != 3:
            raise ValueError("positive_part_mp: 2 or 3 atoms")
        q2 = p[1] / (1 - p[0])
        for j1 in range(n + 1):
            w1 = mp.binomial(n, j1) * p[0] ** j1 * (1 - p[0]) ** (n - j1)
            m = n - j1
            for j2 in range(m + 1):
                s = j1 * v[0] + j2 * v[1] + (m - j2) * v[2]
                if s > 0:
                    total += w1 * mp.binomial(m, j2) * q2 ** j2 * (1 - q2) ** (m - j2) * s
        return float(total / n)


def positive_part_dominant_mp(values, probs, n: int, dom: int, m_max: int, dps: int = 30):
    r"""``(1/n) E[(G_1 + ... + G_n)_+]`` for a law with one dominant atom ``values[dom] <= 0``, by exact sums in
    mpmath over M = the number of users NOT on the dominant atom (M ~ Bin(n, 1 - p_dom), exact binomial
    pmf at ``dps`` digits even for n ~ 1e9) and, given M, over every composition of M among the other
    2 or 3 atoms (multinomial).  M is summed over 0..m_max; the rest is bounded: with v_dom <= 0,
    S_+ <= M max_j (v_j)_+, and the terms M pmf(M) decrease geometrically beyond m_max (ratio at most
    rho = r(m_max + 1) (m_max + 2) / (m_max + 1) < 1, r the pmf ratio), so the tail is at most
    (m_max + 1) pmf(m_max + 1) max(v)_+ / (1 - rho).

    Returns
    -------
    (value, tail) : (float, float)
        The sum over M <= m_max (divided by n) and the bound of the rest (divided by n): the truth is in
        [value, value + tail] up to the float conversion.
    """
    import mpmath as mp

    with mp.workdps(dps):
        v = [mp.mpf(float(x)) for x in values]
        p = [mp.mpf(float(x)) for x in probs]
        tot = sum(p)
        p = [x / tot for x in p]
        if v[dom] > 0:
            raise ValueError("positive_part_dominant_mp: the dominant atom must be <= 0")
        others = [j for j in range(len(v)) if j != dom]
        if len(others) not in (2, 3):
            raise ValueError("positive_part_dominant_mp: 3 or 4 atoms")
        q = 1 - p[dom]
        r = [p[j] / q for j in others]
        vo = [v[j] for j in others]
        fact = [mp.mpf(1)]
        for i in range(1, m_max + 2):
            fact.append(fact[-1] * i)
        pw = [[rr ** i for i in range(m_max + 1)] for rr in r]

        def pmf(M):
            return mp.binomial(n, M) * q ** M * (1 - q) ** (n - M)

        total = mp.mpf(0)
        for M in range(min(m_max, n) + 1):
            base = v[dom] * (n - M)
            inner = mp.mpf(0)
            if len(others) == 2:
                for i in range(M + 1):
                    s = base + i * vo[0] + (M - i) * vo[1]
                    if s > 0:
                        inner += fact[M] / (fact[i] * fact[M - i]) * pw[0][i] * pw[1][M - i] * s
            else:
                for i in range(M + 1):
                    for j in range(M - i + 1):
                        s = base + i * vo[0] + j * vo[1] + (M - i - j) * vo[2]
                        if s > 0:
                            inner += (fact[M] / (fact[i] * fact[j] * fact[M - i - j])
                                      * pw[0][i] * pw[1][j] * pw[2][M - i - j] * s)
            if inner > 0:
                total += pmf(M) * inner
        vpos = max(max(vo), mp.mpf(0))
        a = m_max + 1
        ratio = (n - a) / mp.mpf(a + 1) * q / (1 - q)
        rho = ratio * (a + 1) / a
        if not rho < 1:
            raise ValueError("positive_part_dominant_mp: m_max too small for a geometric tail bound")
        tail = a * pmf(a) * vpos / (1 - rho)
        return float(total / n), float(tail / n)


def composed_delta_exact(p, q, R: int, eps: float) -> float:
    r"""Exact :math:`D_{e^\varepsilon}(p^{\otimes R}\|q^{\otimes R})` of the R-fold product of two laws on a
    common alphabet, infinite-loss atoms (``q = 0 < p``) included.

    The product's outcomes are grouped by how often each distinct finite privacy loss log(p/q) occurs (merged
    to 1e-12; a multinomial law), and an outcome with an infinite-loss component adds its whole p-mass: the
    divergence is :math:`1-(1-a)^R` plus the finite part, a the p-mass of the infinite-loss atoms.
    """
    from itertools import combinations_with_replacement

    from scipy.special import gammaln
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    inf_mass = float(np.sum(p[(p > 0) & (q == 0)]))
    keep = (p > 0) & (q > 0)
    loss = np.round(np.log(p[keep] / q[keep]), 12)
    vals, inv = np.unique(loss, return_inverse=True)
    mass = np.bincount(inv, weights=p[keep])
    s = vals.size
    assert math.comb(R + s - 1, s - 1) <= 300_000, "enumeration too large for a unit test"
    combos = np.array(list(combinations_with_replacement(range(s), R)), dtype=np.int64)
    counts = np.zeros((combos.shape[0], s))
    for j in range(R):
        counts[np.arange(combos.shape[0]), combos[:, j]] += 1
    logw = gammaln(R + 1) - gammaln(counts + 1).sum(axis=1) + counts @ np.log(mass)
    total_loss = counts @ vals
    finite = float(np.sum(np.exp(logw) * np.maximum(-np.expm1(eps - total_loss), 0.0)))
    return -math.expm1(R * math.log1p(-inf_mass)) + finite if inf_mass < 1 else 1.0
