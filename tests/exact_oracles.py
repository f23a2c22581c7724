r"""Exact oracles for the positive part of a sum of i.i.d. finite random variables, written for the tests only.

For a law :math:`G` with atoms ``values`` and masses ``probs``, both functions return

.. math::   \frac{1}{n}\, \mathbb{E}\Big[\Big(\sum_{i=1}^{n} G_i\Big)_+\Big],

the quantity the GPARV theorems of Su, Cheng, Wang ("Decomposition-based optimal bounds for privacy
amplification via shuffling", IEEE S&P 2026, Theorems 12-14) equate to the shuffled δ.  They share no code
with the library's kernels (no Bromwich integral, no compiled binomial sums): plain numpy and
``scipy.stats.binom`` tails (Boost's incomplete beta) with a numpy saddle-point binomial pmf (Loader), so a test comparing the library with them compares two independent computations.

* :func:`positive_part_bruteforce` enumerates every count vector :math:`(N_1, \dots, N_K)` of the
  multinomial law (small n, few atoms);
* :func:`positive_part_exact` conditions on the counts of all atoms but the two heaviest (enumerated within
  ±``width`` standard deviations of the exponentially tilted law, what is left out charged to the upper end
  by a Chernoff bound) and sums the last binomial level in closed form.  Returns ``(lo, hi)``.  The closed
  form,

  .. math::   \mathbb{E}[(B + dN)\,1\{N \ge t\}] = (B + d m\pi)\,P(N \ge t) + d\, m\pi(1-\pi)\, P(N' = t-1),

  :math:`N \sim \mathrm{Bin}(m, \pi)`, :math:`N' \sim \mathrm{Bin}(m-1, \pi)` (and its mirror for
  :math:`d < 0`), cancels only by the factor :math:`z^2` of the tail's standard score, so the relative
  round-off stays near 1e-13 even at n = 1e9.

* :func:`positive_part_tilted_mc` estimates it by importance sampling from the tilted multinomial, with a
  standard error (any number of atoms, any n).

``exact_three_atom`` / ``exact_four_atom`` / ``gparv_bruteforce`` keep the call signatures the tests used
for the former compiled oracles.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import gammaln
from scipy.stats import binom

__all__ = ["positive_part_bruteforce", "positive_part_exact", "gparv_bruteforce", "exact_three_atom",
           "exact_four_atom", "MAX_BRUTE_STATES", "MAX_EXACT_STATES"]

#: Largest number of count vectors :func:`positive_part_bruteforce` enumerates.
MAX_BRUTE_STATES = 20_000_000
#: Conditioning states lighter than this are dropped by :func:`positive_part_exact` (their mass charged).
TINY_WEIGHT = 1e-40
#: Largest number of conditioning states :func:`positive_part_exact` builds.
MAX_EXACT_STATES = 40_000_000


def _law(values, probs):
    v = np.asarray(values, dtype=np.float64).ravel()
    p = np.asarray(probs, dtype=np.float64).ravel()
    if v.shape != p.shape or v.size == 0:
        raise ValueError("values and probs must be non-empty and of equal length")
    if (p < 0).any() or not math.isclose(float(p.sum()), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ValueError("probs must be non-negative and sum to 1")
    keep = p > 0
    return v[keep], p[keep]


def positive_part_bruteforce(values, probs, n: int) -> float:
    r""":math:`\frac1n E[(\sum_{i\le n} G_i)_+]` by enumerating every multinomial count vector.

    Each count vector's probability is :math:`\exp(\log n! - \sum_j \log N_j! + \sum_j N_j \log p_j)`
    (``gammaln``), its sum :math:`\sum_j N_j v_j` in float64; cost :math:`\binom{n+K-1}{K-1}`.
    """
    v, p = _law(values, probs)
    n = int(n)
    K = v.size
    if math.comb(n + K - 1, K - 1) > MAX_BRUTE_STATES:
        raise ValueError(f"too many count vectors for brute force (n = {n}, {K} atoms)")
    logp = np.log(p)
    used = np.zeros(1, dtype=np.int64)
    s = np.zeros(1)
    lw = np.zeros(1)
    for j in range(K - 1):
        parts_u, parts_s, parts_w = [], [], []
        for c in range(n + 1):
            m = used + c <= n
            if not m.any():
                break
            parts_u.append(used[m] + c)
            parts_s.append(s[m] + c * v[j])
            parts_w.append(lw[m] - gammaln(c + 1.0) + c * logp[j])
        used, s, lw = np.concatenate(parts_u), np.concatenate(parts_s), np.concatenate(parts_w)
    c = n - used
    s = s + c * v[K - 1]
    lw = lw - gammaln(c + 1.0) + c * logp[K - 1] + gammaln(n + 1.0)
    pos = s > 0
    return float(np.sum(s[pos] * np.exp(lw[pos]))) / n


_S = (1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188)
_LN_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _stirlerr(x):
    """log(x!) - log(sqrt(2 pi x) (x/e)^x), elementwise (x >= 1): the series for x > 15, log-gamma below."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    big = x > 15
    xb = x[big]
    xx = xb * xb
    out[big] = (_S[0] - (_S[1] - (_S[2] - (_S[3] - _S[4] / xx) / xx) / xx) / xx) / xb
    xs = x[~big]
    out[~big] = gammaln(xs + 1.0) - (xs + 0.5) * np.log(xs) + xs - _LN_SQRT_2PI
    return out


def _bd0(x, mu):
    """x log(x/mu) + mu - x without cancellation (series in (x-mu)/(x+mu) when x is near mu)."""
    x = np.asarray(x, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    with np.errstate(divide="ignore"):          # mu = 0 (a mass of 0): the pmf is 0, as exp(-inf) gives
        out = x * np.log(x / mu) + mu - x
    near = np.abs(x - mu) < 0.1 * (x + mu)
    if np.any(near):
        xn, mn = x[near], mu[near]
        v = (xn - mn) / (xn + mn)
        acc = (xn - mn) * v
        ej = 2 * xn * v
        v2 = v * v
        for j in range(1, 40):
            ej = ej * v2
            acc = acc + ej / (2 * j + 1)
        out[near] = acc
    return out


def _pmf(k, m, pi):
    """Binomial pmf P(Bin(m, pi) = k), elementwise, 0 outside 0 <= k <= m: Loader's saddle-point form
    (stirlerr and bd0), accurate to about 1e-15 relative at any m (a difference of log-gamma values loses
    log10(m) digits)."""
    k = np.asarray(k, dtype=np.float64)
    m = np.asarray(m, dtype=np.float64)
    k, m = np.broadcast_arrays(k, m)
    pi = float(pi) if np.ndim(pi) == 0 else np.broadcast_to(pi, k.shape)
    out = np.zeros(k.shape)
    ok = (k >= 0) & (k <= m) & (m >= 0)
    if not np.any(ok):
        return out
    kk, mm = k[ok], m[ok]
    pp = pi if np.ndim(pi) == 0 else pi[ok]
    pp = np.broadcast_to(pp, kk.shape)
    res = np.empty(kk.shape)
    e0 = kk == 0
    en = (kk == mm) & ~e0
    mid = ~e0 & ~en
    with np.errstate(divide="ignore"):          # p in {0, 1}: log 0 = -inf, exp(-inf) = 0 exactly
        res[e0] = np.exp(mm[e0] * np.log1p(-pp[e0]))
        res[en] = np.exp(mm[en] * np.log(pp[en]))
    if np.any(mid):
        x, n_, p_ = kk[mid], mm[mid], pp[mid]
        q_ = 1.0 - p_
        lc = _stirlerr(n_) - _stirlerr(x) - _stirlerr(n_ - x) - _bd0(x, n_ * p_) - _bd0(n_ - x, n_ * q_)
        lf = math.log(2 * math.pi) + np.log(x) + np.log1p(-x / n_)
        res[mid] = np.exp(lc - 0.5 * lf)
    out[ok] = res
    return out


def _cdf(k, m, pi):
    """P(Bin(m, pi) <= k), elementwise (``scipy.stats.binom``, Boost's incomplete beta)."""
    return binom.cdf(np.floor(k), m, pi)


def _sf(k, m, pi):
    """P(Bin(m, pi) > k), elementwise (``scipy.stats.binom``)."""
    return binom.sf(np.floor(k), m, pi)


def _last_level(B, d, m, pi):
    """E[(B + d N)_+] for N ~ Bin(m, pi), elementwise (arrays of equal shape)."""
    out = np.maximum(B, 0.0)                      # m = 0 or d = 0 or pi in {0, 1}
    mf = m.astype(np.float64)
    gen = (m > 0) & (d != 0.0) & (pi > 0.0) & (pi < 1.0)
    one = (m > 0) & (d != 0.0) & ((pi <= 0.0) | (pi >= 1.0))
    out[one] = np.maximum(B[one] + d[one] * mf[one] * (pi[one] >= 1.0), 0.0)
    up = gen & (d > 0)
    if up.any():
        Bu, du, mu, pu = B[up], d[up], m[up], pi[up]
        t = np.floor(-Bu / du) + 1.0                # smallest N with B + d N > 0
        t = np.clip(t, 0.0, mu + 1.0)
        tail = _sf(t - 1.0, mu, pu)                 # P(N >= t)
        pmf1 = _pmf(t - 1.0, mu - 1, pu)            # P(N' = t - 1)
        val = (Bu + du * mu * pu) * tail + du * mu * pu * (1.0 - pu) * pmf1
        out[up] = np.maximum(val, 0.0)
    dn = gen & (d < 0)
    if dn.any():
        Bd, dd, md, pd = B[dn], d[dn], m[dn], pi[dn]
        u = np.ceil(Bd / -dd) - 1.0                 # largest N with B + d N > 0
        u = np.clip(u, -1.0, md)
        head = _cdf(u, md, pd)                      # P(N <= u)
        pmf1 = _pmf(u, md - 1, pd)                  # P(N' = u)
        val = (Bd + dd * md * pd) * head - dd * md * pd * (1.0 - pd) * pmf1
        out[dn] = np.maximum(val, 0.0)
    return out


def _chernoff_theta(v, p, n):
    """θ > 0 minimising the Chernoff bound M(θ)^n / (e θ) of E[S_+] (S the sum of n draws), and log M(θ)."""
    from scipy.optimize import minimize_scalar
    from scipy.special import logsumexp

    logp = np.log(p)

    def h(log_theta):
        return n * float(logsumexp(logp + math.exp(log_theta) * v)) - log_theta

    res = minimize_scalar(h, bounds=(-30.0, 8.0), method="bounded", options={"xatol": 1e-12})
    theta = math.exp(res.x)
    return theta, float(logsumexp(logp + theta * v))


def positive_part_exact(values, probs, n: int, width: float = 11.0) -> tuple[float, float]:
    r""":math:`\frac1n E[(\sum_{i\le n} G_i)_+]` as ``(lo, hi)`` by conditioning on the lighter atoms' counts.

    The counts of all atoms but the two heaviest are enumerated level by level (conditional binomials), each
    within ±``width`` standard deviations of its *exponentially tilted* conditional law (θ minimising the
    Chernoff bound :math:`M(\theta)^n/(e\theta)`, so the windows sit where :math:`S > 0` has its mass); the
    last two atoms are summed in closed form.  What the windows leave out is charged to ``hi`` by the
    Chernoff bound :math:`E[S_+ 1_O] \le M(\theta)^n Q_\theta(O)/(e\theta)`, :math:`Q_\theta` the tilted
    multinomial; states whose sum cannot become positive are dropped exactly.

    Parameters
    ----------
    values, probs : array_like, shape (K,)
        Atoms and masses (sum 1).
    n : int
        Number of summands.
    width : float
        Window half-width of each enumerated count, in standard deviations of its tilted law.

    Returns
    -------
    (lo, hi) : floats
        ``lo`` sums the windows only; ``hi`` adds the Chernoff charge of what they leave out.
    """
    v, p = _law(values, probs)
    n = int(n)
    if v.size == 1 or not (v > 0).any():
        x = max(float(v[0]), 0.0) if v.size == 1 else 0.0
        return x, x
    theta, log_m = _chernoff_theta(v, p, n)
    order = np.argsort(p, kind="stable")          # lightest first: the heaviest two are summed in closed form
    v, p = v[order], p[order]
    lq = np.log(p) + theta * v - log_m
    q = np.exp(lq)                                # tilted masses
    K = v.size
    m = np.array([n], dtype=np.int64)             # users not yet assigned
    A = np.zeros(1)                               # partial sum
    w = np.ones(1)                                # probability of the conditioning state
    wq = np.ones(1)                               # its tilted probability
    rest, rest_q = 1.0, float(q.sum())
    charged = 0.0                                 # tilted mass left out
    for j in range(K - 2):
        pi = min(p[j] / rest, 1.0) if rest > 0 else 0.0
        pq = min(q[j] / rest_q, 1.0) if rest_q > 0 else 0.0
        rest -= p[j]
        rest_q -= q[j]
        mf = m.astype(np.float64)
        sd = np.sqrt(mf * pq * (1.0 - pq))
        lo = np.clip(np.floor(mf * pq - width * sd - 3), 0, m).astype(np.int64)
        hi = np.clip(np.ceil(mf * pq + width * sd + 3), 0, m).astype(np.int64)
        outside = _cdf(lo - 1, m, pq) + _sf(hi, m, pq)
        charged += float(np.sum(wq * np.clip(outside, 0.0, 1.0)))
        cnt = hi - lo + 1
        total = int(cnt.sum())
        if total > MAX_EXACT_STATES:
            raise ValueError(f"too many conditioning states for the exact oracle ({total}; n = {n}, {K} atoms)")
        idx = np.repeat(np.arange(m.size), cnt)
        c = lo[idx] + (np.arange(total) - np.repeat(np.cumsum(cnt) - cnt, cnt))
        w = w[idx] * _pmf(c, m[idx], pi)
        wq = wq[idx] * _pmf(c, m[idx], pq)
        A = A[idx] + c * v[j]
        m = m[idx] - c
        # exact pruning: a state whose largest reachable sum is <= 0 contributes nothing
        keep = (A + m * max(float(v[j + 1:].max()), 0.0) > 0) & (w > 0)
        w, wq, A, m = w[keep], wq[keep], A[keep], m[keep]
    pa, pb = p[K - 2], p[K - 1]
    pi = pa / (pa + pb)
    B = A + m * v[K - 1]
    d = np.full(B.shape, v[K - 2] - v[K - 1])
    e = _last_level(B, d, m, np.full(B.shape, pi))
    tot = float(np.sum(w * e))
    charge = math.exp(n * log_m) / (math.e * theta) * charged
    return tot / n, (tot + charge) / n


# ------------------------------------------------------------------ the signatures of the former compiled oracles
def gparv_bruteforce(values, probs, n: int) -> float:
    """:func:`positive_part_bruteforce` (brute-force enumeration)."""
    return positive_part_bruteforce(values, probs, n)


def exact_three_atom(v1, p1, v2, p2, v3, n, width: float = 11.0) -> tuple[float, float]:
    """:func:`positive_part_exact` of the atoms v1, v2, v3 with masses p1, p2, 1 - p1 - p2."""
    return positive_part_exact([v1, v2, v3], [p1, p2, max(1.0 - p1 - p2, 0.0)], n, width)


def exact_four_atom(v1, p1, v2, p2, v3, p3, v4, n, width: float = 11.0) -> tuple[float, float]:
    """:func:`positive_part_exact` of the atoms v1..v4 with masses p1, p2, p3, 1 - p1 - p2 - p3."""
    return positive_part_exact([v1, v2, v3, v4], [p1, p2, p3, max(1.0 - p1 - p2 - p3, 0.0)], n, width)


# ------------------------------------------------------------------ any number of atoms, any n: tilted Monte Carlo
def positive_part_tilted_mc(values, probs, n: int, samples: int = 400_000, seed: int = 0) -> tuple[float, float]:
    r"""Importance-sampling estimate of :math:`\frac1n E[(\sum_{i\le n} G_i)_+]` with its standard error.

    The counts :math:`(N_j)` are drawn from the exponentially tilted multinomial,
    :math:`q_j \propto p_j e^{\theta v_j}`, and weighted by :math:`M(\theta)^n e^{-\theta S}`, where
    :math:`M(\theta) = \sum_j p_j e^{\theta v_j}` and θ minimises the Chernoff bound
    :math:`M(\theta)^n / (e\theta)` (so the tilted mean of S is 1/θ, where :math:`S_+ e^{-\theta S}` peaks:
    the relative standard error is about 1/sqrt(samples)).  Seeded numpy sampling only: independent of every
    evaluator of the library, for any number of atoms and any n (one multinomial draw per sample).

    Returns
    -------
    (estimate, standard_error) : floats
    """
    v, p = _law(values, probs)
    n = int(n)
    if not (v > 0).any():
        return 0.0, 0.0
    theta, log_m = _chernoff_theta(v, p, n)
    q = np.exp(np.log(p) + theta * v - log_m)
    q = q / q.sum()
    rng = np.random.default_rng(seed)
    total, total2, done = 0.0, 0.0, 0
    while done < samples:
        size = min(200_000, samples - done)
        counts = rng.multinomial(n, q, size=size)
        s = counts @ v
        x = np.where(s > 0, s * np.exp(-theta * s), 0.0)
        total += float(x.sum())
        total2 += float((x * x).sum())
        done += size
    mean = total / samples
    var = max(total2 / samples - mean * mean, 0.0)
    scale = math.exp(n * log_m) / n
    return mean * scale, math.sqrt(var / samples) * scale


def clone_pair_blocks(eps0: float, m: int):
    """The clone pair of Feldman, McMillan and Talwar (FOCS 2021, Theorem 3.1) with m users at local level eps0,
    enumerated: for each number c of the m - 1 others that are clones (Binomial(m - 1, e^-eps0), blocks of mass
    below 1e-30 skipped), the joint (P, Q) arrays over the count of reports in favour of x0 (numpy, exact up to
    floating point).  Yields (P, Q) per block; the blocks' masses add up to the pair's."""
    E = math.exp(eps0)
    p_delta = E / (E + 1)
    c = np.arange(m)
    pc = binom.pmf(c, m - 1, 1 / E)
    for ci in c[pc > 1e-30]:
        a = np.arange(ci + 1)
        pa = binom.pmf(a, ci, 0.5) * pc[ci]
        P = np.zeros(ci + 2)
        Q = np.zeros(ci + 2)
        P[a] += pa * (1 - p_delta)
        P[a + 1] += pa * p_delta
        Q[a + 1] += pa * (1 - p_delta)
        Q[a] += pa * p_delta
        yield P, Q


def binary_rr_enumerated_worst_delta(eps0, n, eps):
    """Exact worst-case δ(ε) of shuffled binary randomized response by enumeration.

    Every dataset (all 2^(n-1) bit vectors of users 2..n) and every report vector (2^n):
    count law by brute force, hockey stick over every count, both orderings."""
    E = math.exp(eps0)
    p1 = E / (E + 1)
    best = 0.0
    for others in itertools.product((0, 1), repeat=n - 1):
        laws = []
        for b in (0, 1):
            x = (b,) + others
            law = np.zeros(n + 1)
            for y in itertools.product((0, 1), repeat=n):
                pr = 1.0
                for xi, yi in zip(x, y):
                    pr *= p1 if xi == yi else 1 - p1
                law[sum(y)] += pr
            laws.append(law)
        for P, Q in ((laws[0], laws[1]), (laws[1], laws[0])):
            best = max(best, float(np.maximum(P - math.exp(eps) * Q, 0).sum()))
    return best


def binary_rr_probs(eps0):
    """(p0, p1) = (1/(e^eps0 + 1), e^eps0/(e^eps0 + 1)): binary RR's probabilities of reporting 1 for inputs 0, 1."""
    E = math.exp(eps0)
    return 1 / (E + 1), E / (E + 1)


def binary_rr_count_law(eps0, N, m):
    """PMF over 0..N of the count of ones reported by N users of whom m hold 1: Bin(m, p1) + Bin(N - m, p0)
    (scipy binomials, direct convolution)."""
    p0, p1 = binary_rr_probs(eps0)
    return np.convolve(binom.pmf(np.arange(m + 1), m, p1), binom.pmf(np.arange(N - m + 1), N - m, p0))


def binary_rr_stencil_G(f, eps0, eps):
    """G(c) = alpha f(c) - beta F(c - 1) for c = -3 .. N + 3 (f padded with the exact zeros outside), with
    alpha = p1 - e^eps p0 and beta = e^eps - 1: the function the phase-comparison bound of
    shuffleamp.exact_count compares across datasets."""
    p0, p1 = binary_rr_probs(eps0)
    al, be = p1 - math.exp(eps) * p0, math.expm1(eps)
    fp = np.concatenate((np.zeros(3), f, np.zeros(3)))
    F = np.concatenate(([0.0], np.cumsum(fp)[:-1]))
    return al * fp - be * F


def binary_rr_count_laws(eps0, n):
    """(P0, P1): arrays of shape (n, n + 1), row m = the count laws when user 1 holds 0 / 1 and m of the
    other n - 1 users hold 1 (scipy binomials, direct convolution, every count)."""
    p0, p1 = binary_rr_probs(eps0)
    N = n - 1
    P0 = np.zeros((n, n + 1))
    P1 = np.zeros((n, n + 1))
    for m in range(N + 1):
        f = binary_rr_count_law(eps0, N, m)
        P0[m, :-1] += p1 * f
        P0[m, 1:] += p0 * f
        P1[m, :-1] += p0 * f
        P1[m, 1:] += p1 * f
    return P0, P1


def _expm1_i(t):
    """e^{it} - 1 without cancellation: -2 sin^2(t/2) + i sin t."""
    return -2.0 * np.sin(t / 2) ** 2 + 1j * np.sin(t)


def _log1p_complex(z):
    """log(1 + z) for complex z near 0 with relative precision: 0.5 log1p(2 Re z + |z|^2) + i arg(1 + z)."""
    return 0.5 * np.log1p(2 * z.real + np.abs(z) ** 2) + 1j * np.arctan2(z.imag, 1.0 + z.real)


def binary_rr_worst_delta_fft(eps0, n, eps, batch=512):
    r"""Exact worst-case δ(ε) of shuffled binary RR over *every* dataset at large n (n ~ 1e4), by FFT.

    For every m = 0..n-1 (ones among users 2..n) the count law's characteristic function,
    :math:`(p_1 + p_0 z)(p_0 + p_1 z)^m (p_1 + p_0 z)^{n-1-m}` (user 1 holds 0) and
    :math:`(p_0 + p_1 z)^{m+1}(p_1 + p_0 z)^{n-1-m}` (holds 1), is sampled at the L-th roots of unity
    (powers as ``exp(m log(.))``, exact for integer powers, each factor's mean phase taken out first and its
    logarithm formed as log1p of a cancellation-free difference, so that m times it keeps its precision; the count is shifted by an integer near its mean, the same for
    both hypotheses) and inverted by a real FFT: the law of the count modulo L.  With L >= n + 1 that is the law itself; with L = 4096 < n + 1 it is the law folded onto one
    window of L consecutive counts, and both hypotheses are folded alike, so the hockey stick differs from the
    exact one by at most the mass outside the window around the mean, :math:`2 e^{-L^2/(2n)}` (Hoeffding;
    below 1e-180 for n <= 2e4).  The hockey stick is summed over every count, both orderings, and maximised
    over m.  numpy only (no windows chosen from the answer, no symmetry or lower-set argument).

    Parameters
    ----------
    eps : float or sequence of float
        Central ε values (evaluated on the same laws).

    Returns
    -------
    (delta, worst_m, error) : arrays over ``eps``
        ``error``: the folded mass plus the FFT round-off, L (1 + e^ε) 1e-16 per unit of the largest pmf
        entry (pmf entries are computed to about 1e-17 absolute).
    """
    eps = np.atleast_1d(np.asarray(eps, dtype=np.float64))
    E = math.exp(eps0)
    p1, p0 = E / (E + 1), 1 / (E + 1)
    L = n + 1 if n + 1 <= 4096 else 4096
    om = 2 * np.pi * np.arange(L // 2 + 1) / L
    # logs of the factors with their mean phase removed (small near ω = 0, so m times them keeps its
    # precision): a user holding 1 contributes p0 + p1 e^{iω} = e^{iω p1} (p0 e^{-iω p1} + p1 e^{iω p0})
    la = _log1p_complex(p0 * _expm1_i(-om * p1) + p1 * _expm1_i(om * p0))
    lb = _log1p_complex(p1 * _expm1_i(-om * p0) + p0 * _expm1_i(om * p1))
    N = n - 1
    ee = np.exp(eps)
    best = np.zeros(eps.size)
    arg = np.zeros(eps.size, dtype=np.int64)
    top = 0.0
    for start in range(0, N + 1, batch):
        m = np.arange(start, min(start + batch, N + 1))
        mu = m * p1 + (N - m) * p0                       # mean count of the others; rotate by round(mu)
        frac = mu - np.round(mu)
        base = m[:, None] * la[None, :] + (N - m)[:, None] * lb[None, :] + 1j * frac[:, None] * om[None, :]
        # user 1 (no power): holds 0 -> p1 + p0 e^{iω}, holds 1 -> p0 + p1 e^{iω}
        P0 = np.fft.irfft(np.exp(base) * (p1 + p0 * np.exp(1j * om))[None, :], n=L, axis=1)
        P1 = np.fft.irfft(np.exp(base) * (p0 + p1 * np.exp(1j * om))[None, :], n=L, axis=1)
        top = max(top, float(P0.max()), float(P1.max()))
        for j, e in enumerate(ee):
            d = np.maximum(np.maximum(P0 - e * P1, 0.0).sum(axis=1), np.maximum(P1 - e * P0, 0.0).sum(axis=1))
            i = int(np.argmax(d))
            if d[i] > best[j]:
                best[j], arg[j] = float(d[i]), int(m[i])
    folded = 0.0 if L >= n + 1 else 2 * math.exp(-L * L / (2.0 * n))
    return best, arg, L * (1 + ee) * 1e-16 * top + (1 + ee) * folded


# ------------------------------------------------------------------ k-RR populations: the personalized bound
def blanket_mixture_bounds(values, probs, gammas, counts, width=10.0):
    r"""``(lo, hi)`` of :math:`\sum_m P(M'=m)\,E[(\sum_{i\le m+1} L_i)_+]/(m+1)` for a law L of at most three
    atoms, M' Poisson-binomial (:math:`\mathrm{Bin}(N_h, \gamma_h)` per entry of ``gammas`` / ``counts``): the
    heterogeneous blanket bound of a target (Su-Cheng-Wang Theorem 12 averaged over the blanket count).

    The atoms are ordered :math:`A \ge C \ge B` (two atoms: C = B with mass 0).  Given j = m + 1 draws,
    u ~ Bin(j, P(A)) draws at A and v | u ~ Bin(j-u, P(B)/(P(B)+P(C))) at B: every u that can make the sum
    positive (u > -Cj/(A-C)) within ±``width`` standard deviations is summed with binomial pmfs, v in closed
    form (:func:`_last_level`); M' over ±``width`` standard deviations per group.  What is left out is charged
    to ``hi`` (the sum is at most A j, and the mixture's terms are at most E[L_+] <= max(A, 0)).
    """
    from scipy.stats import binom as _binom

    v = np.asarray(values, dtype=np.float64).ravel()
    q = np.asarray(probs, dtype=np.float64).ravel()
    keep = q > 0
    v, q = v[keep], q[keep]
    if v.size > 3:
        raise ValueError("at most three atoms")
    order = np.argsort(-v, kind="stable")
    v, q = v[order], q[order]
    if v.size == 1 or v[0] <= 0:
        x = max(float(v[0]), 0.0) if v.size else 0.0
        return x, x
    A, pa = float(v[0]), float(q[0])
    if v.size == 2:
        B, pb, C, pc = float(v[1]), float(q[1]), float(v[1]), 0.0
    else:
        C, pc, B, pb = float(v[1]), float(q[1]), float(v[2]), float(q[2])
    pm, lo_m, charged = np.ones(1), 0, 0.0
    for gm, N in zip(gammas, counts):
        N, gm = int(N), float(gm)
        if N == 0:
            continue
        mu, sd = N * gm, math.sqrt(N * gm * (1 - gm))
        a, b = max(0, int(mu - width * sd - 5)), min(N, int(mu + width * sd + 5))
        ks = np.arange(a, b + 1)
        pm = np.convolve(pm, _binom.pmf(ks, N, gm))
        charged += float(_binom.cdf(a - 1, N, gm) + _binom.sf(b, N, gm))
        lo_m += a
    j = np.arange(lo_m, lo_m + pm.size) + 1                  # j = m + 1 draws of L
    ok = pm > 0
    j, pm = j[ok], pm[ok]
    EL = A * pa                                              # E[L_+] <= A P(A) + max(C, 0) P(C)
    EL += max(C, 0.0) * pc
    su = np.sqrt(j * pa * (1 - pa))
    ustar = np.floor(-C * j / (A - C)) + 1 if A > C else np.zeros_like(j)
    ulo = np.maximum(np.maximum(ustar, j * pa - width * su - 5), 0).astype(np.int64)
    uhi = np.minimum(np.maximum(ulo, j * pa + width * su + 5), j).astype(np.int64)
    cnt = uhi - ulo + 1
    jj = np.repeat(j, cnt)
    uu = np.repeat(ulo, cnt) + (np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    wu = _pmf(uu, jj, pa)
    base = C * jj + (A - C) * uu
    pi = pb / (pb + pc) if pb + pc > 0 else 0.0
    ev = _last_level(base.astype(np.float64), np.full(base.shape, B - C), (jj - uu).astype(np.int64),
                     np.full(base.shape, pi))
    weight = np.repeat(pm / j, cnt)
    val = float(np.sum(weight * wu * ev))
    # left out: u below ulo where it could matter (below the bulk's window) and above uhi
    below = np.where(ulo > ustar, _binom.cdf(ulo - 1, j, pa), 0.0)
    above = _binom.sf(uhi, j, pa)
    charge = float(np.sum(pm * A * (below + above))) + charged * EL
    return val, val + charge


#: A population's certified upper δ against the bracket of the oracles above: relative slack of the tightness
#: side (the library's certified error is ~1e-7 - 5e-7 relative at the n of the population tests) ...
POPULATION_TIGHT_REL = 1e-5
#: ... and relative round-off allowed on the soundness side (the oracle's own binomial sums).
POPULATION_ROUND_REL = 1e-12


def assert_within_bracket(up, lo, hi, tight=True, where=()):
    """A certified upper δ ``up`` against an oracle's bracket ``(lo, hi)`` of the true value: sound,
    ``up >= lo (1 - POPULATION_ROUND_REL)``, and with ``tight`` tight, ``up <= hi (1 + POPULATION_TIGHT_REL)``
    (``where``: values shown when an assertion fails)."""
    assert up >= lo * (1 - POPULATION_ROUND_REL), (*where, up, lo)          # sound
    if tight:
        assert up <= hi * (1 + POPULATION_TIGHT_REL), (*where, up, hi)      # tight


def assert_blanket_mixture(up, values, probs, gammas, counts, lo_min):
    """A population law's certified upper δ ``up`` against :func:`blanket_mixture_bounds` of the same law, blanket
    probabilities and counts, both sides (:func:`assert_within_bracket`), once the oracle's own bracket is
    tight: ``lo > lo_min`` and ``hi <= lo (1 + 1e-9)``.  Returns ``(lo, hi)``."""
    lo, hi = blanket_mixture_bounds(values, probs, gammas, np.asarray(counts).astype(int))
    assert lo_min < lo and hi <= lo * (1 + 1e-9), (lo, hi)
    assert_within_bracket(up, lo, hi)
    return lo, hi


def krr_population_bounds(eps0s, counts, k, eps, width=10.0):
    r"""Per group g, ``(lo, hi)`` of the certified δ(ε) of a k-RR population (k >= 3, one ε0 per group),
    written out independently of the library from its derivation (Su-Cheng-Wang Theorems 12-13 with a
    common blanket, the uniform law ω on the k outputs):

    * *personalized*: :math:`\sum_m P(M'=m)\,E[(\sum_{i\le m+1} L_i)_+]/(m+1)`, M' the number of blanket
      draws among the other users (Poisson-binomial: :math:`\mathrm{Bin}(N_h, \gamma_h)` per group,
      :math:`\gamma_h = k/(e^{\varepsilon_{0,h}}+k-1)`, :math:`N_h` the group's users other than the target),
      L the target's ratio at a uniform output: :math:`A = k(E_t-e^\varepsilon)/(E_t+k-1)` (prob 1/k),
      :math:`B = k(1-e^\varepsilon E_t)/(E_t+k-1)` (1/k), :math:`C = k(1-e^\varepsilon)/(E_t+k-1)`
      ((k-2)/k), summed by :func:`blanket_mixture_bounds` (``personalized_only`` returns this part alone,
      for k >= 2).
    * *everyone at the largest ε0*: :math:`\lambda_g\,\delta^*` with
      :math:`\lambda_g = \frac{(E_g-1)/(E_g+k-1)}{(E_b-1)/(E_b+k-1)}` and δ* the homogeneous k-RR bound at
      the largest ε0 with every user (four atoms, :func:`positive_part_exact`).

    The certified value is the minimum of the two; returns ``[(lo, hi), ...]`` per group.
    """
    return _krr_population_bounds(eps0s, counts, k, eps, width, False)


def krr_personalized_bounds(eps0s, counts, k, eps, width=10.0):
    """Per group ``(lo, hi)`` of the personalized (heterogeneous blanket) part of
    :func:`krr_population_bounds` alone (any k >= 2)."""
    return _krr_population_bounds(eps0s, counts, k, eps, width, True)


def _krr_population_bounds(eps0s, counts, k, eps, width, personalized_only):
    eps0s = [float(e) for e in eps0s]
    counts = [int(c) for c in counts]
    n = sum(counts)
    e = math.exp(eps)
    gam = [k / (math.exp(x) + k - 1) for x in eps0s]
    if not personalized_only:
        # everyone at the largest eps0: the homogeneous four-atom law
        Eb = math.exp(max(eps0s))
        q = 1.0 / (Eb + k - 1)
        hom = positive_part_exact([Eb - e, 1 - e * Eb, 1 - e, 0.0], [q, q, (k - 2) * q, 1 - k * q], n)
    out = []
    for g, x in enumerate(eps0s):
        Et = math.exp(x)
        A, B, C = k * (Et - e) / (Et + k - 1), k * (1 - e * Et) / (Et + k - 1), k * (1 - e) / (Et + k - 1)
        others = [c - (1 if h == g else 0) for h, c in enumerate(counts)]
        if A <= 0:
            out.append((0.0, 0.0))
            continue
        pers, pers_hi = blanket_mixture_bounds([A, B, C], [1 / k, 1 / k, (k - 2) / k], gam, others, width)
        if personalized_only:
            out.append((pers, pers_hi))
            continue
        lam = ((Et - 1) / (Et + k - 1)) / ((Eb - 1) / (Eb + k - 1))
        out.append((min(pers, lam * hom[0]), min(pers_hi, lam * hom[1])))
    return out
