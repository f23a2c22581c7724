# cython: language_level=3
"""Hot loops of shuffleamp (thin Cython kernels; all validation happens in Python).

* directed discretisation of GPARV atoms and continuous cells onto l*Z;
* the tilted characteristic function of a grid GPARV raised to the n-th power,
  with a running round-off bound;
* exact oracles: multinomial brute force over GPARV atoms (small n), and
  binomial-mixture sums with closed-form binomial tails for three- and
  four-atom GPARVs (O(sqrt n) and O(n) terms).
"""

import numpy as np
cimport numpy as cnp
from libc.math cimport (ceil, floor, exp, log, log1p, sqrt, cos, sin, atan2, fabs, lgamma,
                        fmod, expm1, M_PI, INFINITY)
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free
from cython.parallel cimport prange
cimport openmp
from scipy.special.cython_special cimport betainc, betaincc

cnp.import_array()

cdef double DBL_EPS = 2.220446049250313e-16


# --------------------------------------------------------------------------- discretisation
def discretize_atoms(const double[::1] values, const double[::1] probs, double l, str mode):
    """Directed discretisation of atoms onto l*Z.

    mode "ceil": index i with i*l >= v (smallest); "floor": largest i with i*l <= v;
    "spread": mass split between floor(v/l) and floor(v/l)+1 preserving the mean.
    Returns (idx int64[M], w float64[M]), not merged.
    """
    cdef Py_ssize_t K = values.shape[0], j, m = 0
    cdef int imode = 0 if mode == "ceil" else (1 if mode == "floor" else 2)
    cdef cnp.ndarray[cnp.int64_t, ndim=1] idx = np.empty(2 * K, dtype=np.int64)
    cdef cnp.ndarray[cnp.float64_t, ndim=1] w = np.empty(2 * K, dtype=np.float64)
    cdef double v, frac
    cdef int64_t i
    for j in range(K):
        v = values[j]
        if imode == 0:
            i = <int64_t>ceil(v / l)
            while i * l < v:
                i += 1
            while (i - 1) * l >= v:
                i -= 1
            idx[m] = i; w[m] = probs[j]; m += 1
        elif imode == 1:
            i = <int64_t>floor(v / l)
            while i * l > v:
                i -= 1
            while (i + 1) * l <= v:
                i += 1
            idx[m] = i; w[m] = probs[j]; m += 1
        else:
            i = <int64_t>floor(v / l)
            while i * l > v:
                i -= 1
            while (i + 1) * l <= v:
                i += 1
            frac = (v - i * l) / l
            if frac < 0.0:
                frac = 0.0
            if frac > 1.0:
                frac = 1.0
            idx[m] = i; w[m] = probs[j] * (1.0 - frac); m += 1
            if frac > 0.0:
                idx[m] = i + 1; w[m] = probs[j] * frac; m += 1
    return idx[:m], w[:m]


def discretize_cells(const double[::1] mass, const double[::1] moment, const double[::1] edges,
                     double l, int64_t i_lo, str mode):
    """Directed discretisation of continuous mass given per cell (edges[k], edges[k+1]] = ((i_lo+k)l, (i_lo+k+1)l]."""
    cdef Py_ssize_t K = mass.shape[0], k, m = 0
    cdef int imode = 0 if mode == "ceil" else (1 if mode == "floor" else 2)
    cdef cnp.ndarray[cnp.int64_t, ndim=1] idx = np.empty(2 * K, dtype=np.int64)
    cdef cnp.ndarray[cnp.float64_t, ndim=1] w = np.empty(2 * K, dtype=np.float64)
    cdef double mu, frac
    for k in range(K):
        if mass[k] <= 0.0:
            continue
        if imode == 0:
            idx[m] = i_lo + k + 1; w[m] = mass[k]; m += 1
        elif imode == 1:
            idx[m] = i_lo + k; w[m] = mass[k]; m += 1
        else:
            mu = moment[k] / mass[k]
            frac = (mu - edges[k]) / l
            if frac < 0.0:
                frac = 0.0
            if frac > 1.0:
                frac = 1.0
            idx[m] = i_lo + k; w[m] = mass[k] * (1.0 - frac); m += 1
            idx[m] = i_lo + k + 1; w[m] = mass[k] * frac; m += 1
    return idx[:m], w[:m]


# --------------------------------------------------------------------------- tilted CF power
cdef struct pw_t:
    double re
    double im
    double err


cdef inline pw_t _power_one(double re, double im, double n, int64_t k, int64_t j0, int64_t N,
                            double c_terms) noexcept nogil:
    """X = z^n * exp(+2 pi i k j0 / N) and a bound on |X_computed - X_exact| (relative terms)."""
    cdef double r = sqrt(re * re + im * im)
    cdef double a, lr, mag, ph, rel
    cdef pw_t out
    out.re = 0.0
    out.im = 0.0
    out.err = 0.0
    if r <= 0.0:
        return out
    lr = n * log(r)
    if lr < -745.0:
        # |z^n| underflows: X = 0 with |error| <= |z (1 + rel)|^n, still < 1e-300
        out.err = exp(n * log(r + c_terms * DBL_EPS)) if r + c_terms * DBL_EPS < 1.0 else 2.0
        return out
    a = atan2(im, re)
    mag = exp(lr)
    ph = fmod(n * a, 2.0 * M_PI) + 2.0 * M_PI * <double>((k * (j0 % N) % N + N) % N) / <double>N
    out.re = mag * cos(ph)
    out.im = mag * sin(ph)
    # relative error of z is <= c_terms*eps/|z|; raising to n multiplies it by n;
    # the phase n*a carries an absolute error <= 4*eps*(n*pi + 2pi)
    rel = n * c_terms * DBL_EPS / r + 4.0 * DBL_EPS * (n * M_PI + 2.0 * M_PI)
    if rel > 30.0:
        out.err = 2.0
    else:
        out.err = mag * expm1(rel)
        if out.err > 2.0:
            out.err = 2.0
    return out


#: frequencies between exact re-synchronisations of the phase recurrence
DEF RESYNC = 8


#: below this many frequencies the kernels run on one thread (threading overhead dominates)
DEF PARALLEL_MIN = 131072


def tilted_cf_power(const int64_t[::1] idx, const double[::1] wt, int64_t N, double n, int64_t j0):
    """X[k] = (sum_j wt_j exp(-2 pi i k idx_j / N))^n * exp(+2 pi i k j0 / N), k = 0..N//2.

    ``wt`` are tilted, normalised masses (sum 1).  Phases are computed exactly (integer
    reduction mod N) every RESYNC frequencies and advanced by a complex rotation in between,
    so the relative error of the inner sum is <= (K * (RESYNC + 4)) eps.  Returns
    (X complex128[N//2+1], err) where ``err = sum_k mult_k |X_k - X_k^exact|`` bounds the l1
    error fed to the inverse rFFT (mult_k = 2 except at k = 0 and k = N/2).
    """
    cdef Py_ssize_t M = N // 2 + 1
    cdef Py_ssize_t K = idx.shape[0]
    cdef cnp.ndarray[cnp.complex128_t, ndim=1] X = np.empty(M, dtype=np.complex128)
    cdef double[:, ::1] Xv = X.view(np.float64).reshape(M, 2)
    cdef cnp.ndarray[cnp.float64_t, ndim=1] errs = np.empty(M, dtype=np.float64)
    cdef double[::1] ev = errs
    cdef int64_t[::1] red = np.empty(K, dtype=np.int64)
    cdef double[::1] stc = np.empty(K, dtype=np.float64)
    cdef double[::1] sts = np.empty(K, dtype=np.float64)
    cdef Py_ssize_t nblocks = (M + RESYNC - 1) // RESYNC
    cdef Py_ssize_t b, k, k0, k1, j
    cdef double twopi_N = 2.0 * M_PI / <double>N, c_terms = <double>K * (RESYNC + 4.0) + 4.0
    cdef double re, im, ph, cr, ci, tr
    cdef double *cur_r
    cdef double *cur_i
    cdef pw_t o
    cdef int nth = 1 if M < PARALLEL_MIN else openmp.omp_get_max_threads()
    for j in range(K):
        red[j] = ((idx[j] % N) + N) % N
        ph = twopi_N * <double>red[j]
        stc[j] = cos(ph)
        sts[j] = -sin(ph)
    with nogil:
        for b in prange(nblocks, schedule="static", num_threads=nth):
            cur_r = <double*>malloc(K * sizeof(double))
            cur_i = <double*>malloc(K * sizeof(double))
            k0 = b * RESYNC
            k1 = k0 + RESYNC
            if k1 > M:
                k1 = M
            for j in range(K):
                ph = twopi_N * <double>((<int64_t>k0 * red[j]) % N)
                cur_r[j] = cos(ph)
                cur_i[j] = -sin(ph)
            for k in range(k0, k1):
                re = 0.0
                im = 0.0
                for j in range(K):
                    re = re + wt[j] * cur_r[j]
                    im = im + wt[j] * cur_i[j]
                    tr = cur_r[j] * stc[j] - cur_i[j] * sts[j]
                    cur_i[j] = cur_r[j] * sts[j] + cur_i[j] * stc[j]
                    cur_r[j] = tr
                o = _power_one(re, im, n, k, j0, N, c_terms)
                Xv[k, 0] = o.re
                Xv[k, 1] = o.im
                ev[k] = o.err
            free(cur_r)
            free(cur_i)
    return X, _mult_sum(errs, N)


def cf_power_inplace(cnp.ndarray[cnp.complex128_t, ndim=1] phi, int64_t N, double n, int64_t j0,
                     double c_terms):
    """In place: phi[k] <- phi[k]^n * exp(+2 pi i k j0/N) for a CF obtained by rFFT (dense GPARVs).

    ``c_terms`` is the relative round-off of phi in units of eps (about 5*log2(N) for an FFT).
    Returns the l1 error bound as in :func:`tilted_cf_power`.
    """
    cdef Py_ssize_t M = phi.shape[0], k
    cdef double[:, ::1] pv = phi.view(np.float64).reshape(M, 2)
    cdef cnp.ndarray[cnp.float64_t, ndim=1] errs = np.empty(M, dtype=np.float64)
    cdef double[::1] ev = errs
    cdef pw_t o
    cdef int nth = 1 if M < PARALLEL_MIN else openmp.omp_get_max_threads()
    for k in prange(M, nogil=True, schedule="static", num_threads=nth):
        # rFFT uses exp(-2 pi i k m / N): the same convention as tilted_cf_power
        o = _power_one(pv[k, 0], pv[k, 1], n, k, j0, N, c_terms)
        pv[k, 0] = o.re
        pv[k, 1] = o.im
        ev[k] = o.err
    return _mult_sum(errs, N)


cdef double _mult_sum(double[::1] errs, int64_t N) noexcept:
    cdef Py_ssize_t M = errs.shape[0], k
    cdef double s = 0.0
    for k in range(M):
        if k == 0 or (N % 2 == 0 and k == M - 1):
            s += errs[k]
        else:
            s += 2.0 * errs[k]
    return s


def positive_part_sums(const double[::1] q, int64_t j0, double eta):
    """Sums over the window j = j0 + m (m = 0..len(q)-1), j >= 1, with f(j) = j exp(-eta j):

    returns (sum f(j) max(q_m, 0), sum f(j) q_m, sum f(j), sum max(q_m,0) [j>=1]).
    """
    cdef Py_ssize_t L = q.shape[0], m
    cdef int64_t j
    cdef double f, s_pos = 0.0, s_raw = 0.0, s_f = 0.0, s_mass = 0.0, qq
    with nogil:
        for m in range(L):
            j = j0 + m
            if j < 1:
                continue
            f = <double>j * exp(-eta * <double>j)
            qq = q[m]
            s_raw += f * qq
            s_f += f
            if qq > 0.0:
                s_pos += f * qq
                s_mass += qq
    return s_pos, s_raw, s_f, s_mass


# --------------------------------------------------------------------------- exact oracles
cdef double _logp(double p) noexcept nogil:
    return log(p) if p > 0.0 else -INFINITY


cdef double _brute(const double[::1] v, const double[::1] lp, int K, int j, int rem, double acc_s,
                   double acc_lw, double* pos_mass) noexcept nogil:
    cdef int c
    cdef double tot = 0.0, s, lw, w
    if j == K - 1:
        c = rem
        if c > 0 and lp[j] == -INFINITY:
            return 0.0
        s = acc_s + c * v[j]
        if s <= 0.0:
            return 0.0
        lw = acc_lw + (c * lp[j] if c > 0 else 0.0) - lgamma(c + 1.0)
        w = exp(lw)
        pos_mass[0] += w
        return s * w
    for c in range(rem + 1):
        if c > 0 and lp[j] == -INFINITY:
            break
        lw = acc_lw + (c * lp[j] if c > 0 else 0.0) - lgamma(c + 1.0)
        tot += _brute(v, lp, K, j + 1, rem - c, acc_s + c * v[j], lw, pos_mass)
    return tot


def multinomial_positive_part(const double[::1] values, const double[::1] probs, int n):
    """(E[(G_1+...+G_n)_+], P(G_1+...+G_n > 0)) by enumerating all multinomial count vectors.

    Cost is C(n+K-1, K-1) leaves.  ``probs`` must sum to one.  Each leaf's log-weight
    carries an absolute rounding error of order (n |log p| + log n!) * eps and each partial
    sum ``s`` one of order n * max|v| * eps; the caller charges both.
    """
    cdef int K = values.shape[0], j
    cdef double[::1] lp = np.empty(K, dtype=np.float64)
    cdef double tot, pos = 0.0
    for j in range(K):
        lp[j] = _logp(probs[j])
    with nogil:
        tot = _brute(values, lp, K, 0, n, 0.0, lgamma(n + 1.0), &pos)
    return tot, pos


def gparv_bruteforce(const double[::1] values, const double[::1] probs, int n):
    """Exact (1/n) E[(G_1+...+G_n)_+] by enumerating all multinomial count vectors (Theorem 12).

    Cost is C(n+K-1, K-1); meant for small n (<= ~60) and K <= 6 atoms (test oracle).
    """
    return multinomial_positive_part(values, probs, n)[0] / n


cdef inline double bdtr(double k, long m, double p) noexcept nogil:
    """P(X <= k), X ~ Bin(m, p), via the regularized incomplete beta I_{1-p}(m-k, k+1).

    (scipy's ``bdtr``/``bdtrc`` lose accuracy for m ~ 1e8 -- off by a factor 2.4 at the median
    for m = 7.3e8 -- while Boost's ``betainc`` agrees with ``scipy.stats.binom``.)
    """
    if k < 0:
        return 0.0
    if k >= m:
        return 1.0
    return betaincc(k + 1.0, <double>(m - <long>k), p)


cdef inline double bdtrc(double k, long m, double p) noexcept nogil:
    """P(X > k), X ~ Bin(m, p), via I_p(k+1, m-k)."""
    if k < 0:
        return 1.0
    if k >= m:
        return 0.0
    return betainc(k + 1.0, <double>(m - <long>k), p)


cdef double _stirlerr(double n) noexcept nogil:
    """log(n!) - log(sqrt(2 pi n) (n/e)^n), accurate for all n >= 1 (series for n > 15)."""
    cdef double nn
    if n <= 15.0:
        return lgamma(n + 1.0) - (n + 0.5) * log(n) + n - 0.9189385332046728
    nn = n * n
    if n > 500.0:
        return (0.08333333333333333 - 0.002777777777777778 / nn) / n
    if n > 80.0:
        return (0.08333333333333333 - (0.002777777777777778 - 0.0007936507936507937 / nn) / nn) / n
    if n > 35.0:
        return (0.08333333333333333 - (0.002777777777777778 - (0.0007936507936507937
                - 0.0005952380952380953 / nn) / nn) / nn) / n
    return (0.08333333333333333 - (0.002777777777777778 - (0.0007936507936507937
            - (0.0005952380952380953 - 0.0008417508417508417 / nn) / nn) / nn) / nn) / n


cdef double _bd0(double x, double np_) noexcept nogil:
    """x log(x/np) + np - x, without cancellation when x is close to np."""
    cdef double v, s, s1, ej
    cdef int j
    if fabs(x - np_) < 0.1 * (x + np_):
        v = (x - np_) / (x + np_)
        s = (x - np_) * v
        ej = 2.0 * x * v
        v = v * v
        for j in range(1, 1000):
            ej *= v
            s1 = s + ej / (2 * j + 1)
            if s1 == s:
                return s1
            s = s1
        return s
    return x * log(x / np_) + np_ - x


cdef double _binom_pmf(long k, long m, double p) noexcept nogil:
    """Binomial pmf with relative accuracy ~1e-14 for any m (saddle-point form with stirlerr and bd0)."""
    cdef double q = 1.0 - p, x, lc, lf
    if k < 0 or k > m:
        return 0.0
    if p <= 0.0:
        return 1.0 if k == 0 else 0.0
    if p >= 1.0:
        return 1.0 if k == m else 0.0
    if k == 0:
        return exp(m * log1p(-p))
    if k == m:
        return exp(m * log(p))
    x = <double>k
    lc = _stirlerr(<double>m) - _stirlerr(x) - _stirlerr(<double>(m - k)) - _bd0(x, m * p) - _bd0(<double>(m - k), m * q)
    lf = 1.8378770664093453 + log(x) + log1p(-x / m)
    return exp(lc - 0.5 * lf)


cdef double _cond_pos(double A, double d, long m, double pi) noexcept nogil:
    """E[(A + d X)_+] for X ~ Bin(m, pi), by binomial tails in a cancellation-free form.

    With Y ~ Bin(m-1, pi) and X = Y + Bernoulli(pi):
    E[(X - t)_+] = (m pi - t) P(Y >= t) + pi (m - t) P(Y = t-1) and
    E[(u - X)_+] = (u - m pi) P(Y <= u-1) + u (1 - pi) P(Y = u),
    whose terms are of the size of the result (the naive A P(X >= t) + d E[X 1{X >= t}]
    cancels catastrophically at m ~ 1e8).
    """
    cdef double t, u, mean, xs, ept, eut
    if m <= 0 or d == 0.0 or pi <= 0.0:
        return A if A > 0.0 else 0.0
    if pi >= 1.0:
        t = A + d * m
        return t if t > 0.0 else 0.0
    mean = m * pi
    if d > 0.0:
        xs = -A / d
        # outside [0, m] the answer is immediate; deciding it first also keeps the integer
        # corrections below finite (for |xs| >= 2**53, t + 1.0 == t and they would never end)
        if xs < 0.0:
            return A + d * mean
        if xs >= m:
            return 0.0
        t = floor(xs) + 1.0                    # smallest integer with A + d t > 0
        while t - 1.0 > xs:
            t -= 1.0
        while t <= xs:
            t += 1.0
        if t <= 0.0:
            return A + d * mean
        if t > m:
            return 0.0
        ept = (mean - t) * bdtrc(t - 1.0, m - 1, pi) + pi * (m - t) * _binom_pmf(<long>t - 1, m - 1, pi)
        return d * (ept + (t - xs) * bdtrc(t - 1.0, m, pi))
    else:
        xs = A / (-d)
        if xs <= 0.0:
            return 0.0
        if xs > m:
            return A + d * mean
        u = ceil(xs) - 1.0                     # largest integer with A + d u > 0
        while u + 1.0 < xs:
            u += 1.0
        while u >= xs:
            u -= 1.0
        if u < 0.0:
            return 0.0
        if u >= m:
            return A + d * mean
        if u >= 1.0:
            eut = (u - mean) * bdtr(u - 1.0, m - 1, pi) + u * (1.0 - pi) * _binom_pmf(<long>u, m - 1, pi)
        else:
            eut = 0.0
        return (-d) * (eut + (xs - u) * bdtr(u, m, pi))


cdef void _window(long m, double p, double width, long* lo, long* hi) noexcept nogil:
    cdef double mu = m * p, sd = sqrt(m * p * (1.0 - p))
    cdef double a = floor(mu - width * sd - 10.0), b = ceil(mu + width * sd + 10.0)
    lo[0] = <long>a if a > 0 else 0
    hi[0] = <long>b if b < m else m


cdef double _sum_window(long m, double p, long lo, long hi, double A0, double dA,
                        long m_in0, long dm_in, double dterm, double pi_in, double* mass) noexcept nogil:
    """sum_{k=lo..hi} pmf(k; m, p) * E[(A0 + dA*k + dterm*X)_+], X ~ Bin(m_in0 + dm_in*k, pi_in).

    pmf values are produced from the window mode outward by the exact ratio recurrence.
    Also returns in ``mass`` the pmf mass OUTSIDE the window, from closed-form binomial tails.
    """
    cdef long mode = <long>floor((m + 1) * p), k
    cdef double pk, tot = 0.0, ms = 0.0, q = 1.0 - p
    if mode < lo:
        mode = lo
    if mode > hi:
        mode = hi
    pk = _binom_pmf(mode, m, p)
    k = mode
    while k <= hi:
        ms += pk
        tot += pk * _cond_pos(A0 + dA * k, dterm, m_in0 + dm_in * k, pi_in)
        if k == m:
            break
        pk *= (<double>(m - k) / <double>(k + 1)) * (p / q)
        k += 1
    pk = _binom_pmf(mode, m, p)
    k = mode
    while k > lo:
        pk *= (<double>k / <double>(m - k + 1)) * (q / p)
        k -= 1
        ms += pk
        tot += pk * _cond_pos(A0 + dA * k, dterm, m_in0 + dm_in * k, pi_in)
    mass[0] = _outside(m, p, lo, hi)
    return tot


cdef double _outside(long m, double p, long lo, long hi) noexcept nogil:
    """P(X < lo) + P(X > hi) for X ~ Bin(m, p)."""
    cdef double out = 0.0
    if lo > 0:
        out += bdtr(<double>(lo - 1), m, p)
    if hi < m:
        out += bdtrc(<double>hi, m, p)
    return out


def exact_three_atom(double v1, double p1, double v2, double p2, double v3, long n, double width=14.0):
    """Exact E[(sum_{i<=n} G_i)_+]/n for a three-atom G (v1 w.p. p1, v2 w.p. p2, v3 otherwise).

    C = #(atoms 1 or 2) ~ Bin(n, p1+p2); given C, N1 ~ Bin(C, p1/(p1+p2)) enters through a
    closed-form binomial tail.  O(sqrt n) terms.  Returns (lo, hi): the window sum, and it
    plus the dropped window mass times max(S_+) (charged pessimistically).
    """
    cdef double pc = p1 + p2, tot, dropped, vmax
    cdef long lo, hi
    if pc <= 0.0:
        tot = v3 * n if v3 > 0 else 0.0
        return tot / n, tot / n
    with nogil:
        _window(n, pc, width, &lo, &hi)
        # S = n v3 + C (v2 - v3) + N1 (v1 - v2)
        tot = _sum_window(n, pc, lo, hi, n * v3, v2 - v3, 0, 1, v1 - v2, p1 / pc, &dropped)
    vmax = max(v1, v2, v3, 0.0)
    return tot / n, (tot + dropped * n * vmax) / n


def exact_four_atom(double v1, double p1, double v2, double p2, double v3, double p3, double v4,
                    long n, double width=14.0):
    """Exact E[(sum G_i)_+]/n for a four-atom G (atoms v1..v4, masses p1, p2, p3, 1-p1-p2-p3).

    Conditions on N1 ~ Bin(n, p1) and N2 | N1 ~ Bin(n - N1, p2/(1-p1)); N3 | N1, N2 enters by a
    closed-form binomial tail.  O(n) terms with windows.  Returns (lo, hi) as exact_three_atom.
    """
    cdef double tot = 0.0, mass_in, part, pk, q1 = 1.0 - p1
    cdef double p4 = 1.0 - p1 - p2 - p3
    cdef double pi2 = p2 / q1 if q1 > 0 else 0.0
    cdef double pi3 = p3 / (p3 + p4) if (p3 + p4) > 0 else 0.0
    cdef double dropped = 0.0, vmax
    cdef long lo1, hi1, lo2, hi2, k, m
    with nogil:
        _window(n, p1, width, &lo1, &hi1)
        dropped = _outside(n, p1, lo1, hi1)
        k = lo1
        while k <= hi1:
            pk = _binom_pmf(k, n, p1)
            if pk > 0.0:
                m = n - k
                _window(m, pi2, width, &lo2, &hi2)
                # S = k v1 + N2 v2 + (m - N2) v4 + N3 (v3 - v4), N3 ~ Bin(m - N2, pi3)
                part = _sum_window(m, pi2, lo2, hi2, k * v1 + m * v4, v2 - v4, m, -1, v3 - v4, pi3, &mass_in)
                tot += pk * part
                dropped += pk * mass_in
            k += 1
    vmax = max(max(v1, v2), max(max(v3, v4), 0.0))
    return tot / n, (tot + dropped * n * vmax) / n


# --------------------------------------------------------------------------- spectral evaluation
def cf_at(const int64_t[::1] idx, const double[::1] wt, const int64_t[::1] ks, int64_t N, double n,
          int64_t j0, bint power=True):
    """phi(k) = sum_j wt_j exp(-2 pi i k idx_j / N) at the given integer frequencies ``ks``.

    With ``power=True`` returns (X, err) where X[i] = phi(ks[i])^n exp(+2 pi i ks[i] j0 / N) and
    err[i] bounds |X_computed - X_exact| (as in tilted_cf_power, with exact integer phase
    reduction at every frequency).  With ``power=False`` returns (|phi|, unused zeros).
    """
    cdef Py_ssize_t M = ks.shape[0], K = idx.shape[0], i, j
    cdef cnp.ndarray[cnp.complex128_t, ndim=1] X = np.empty(M, dtype=np.complex128)
    cdef double[:, ::1] Xv = X.view(np.float64).reshape(M, 2)
    cdef cnp.ndarray[cnp.float64_t, ndim=1] errs = np.zeros(M, dtype=np.float64)
    cdef double[::1] ev = errs
    cdef int64_t[::1] red = np.empty(K, dtype=np.int64)
    cdef double twopi_N = 2.0 * M_PI / <double>N, c_terms = 2.0 * <double>K + 4.0
    cdef double re, im, ph
    cdef int64_t kk
    cdef pw_t o
    cdef int nth = 1 if M * K < 4 * PARALLEL_MIN else openmp.omp_get_max_threads()
    for j in range(K):
        red[j] = ((idx[j] % N) + N) % N
    for i in prange(M, nogil=True, schedule="static", num_threads=nth):
        kk = ((ks[i] % N) + N) % N
        re = 0.0
        im = 0.0
        for j in range(K):
            ph = twopi_N * <double>((kk * red[j]) % N)
            re = re + wt[j] * cos(ph)
            im = im - wt[j] * sin(ph)
        if power:
            o = _power_one(re, im, n, kk, j0, N, c_terms)
            Xv[i, 0] = o.re
            Xv[i, 1] = o.im
            ev[i] = o.err
        else:
            Xv[i, 0] = sqrt(re * re + im * im)
            Xv[i, 1] = 0.0
    return X, errs


# --------------------------------------------------------------------------- exact (Bromwich) evaluation
cdef inline double _log_mgf(const double[::1] v, const double[::1] p, double t) noexcept nogil:
    """log sum_j p_j e^{t v_j} for sum_j p_j = 1: log1p/expm1 form when |t v| < 0.5 (relative accuracy
    in K itself, so that n K(t) is accurate at n ~ 1e9), max-shifted log-sum-exp otherwise."""
    cdef Py_ssize_t j, k = v.shape[0]
    cdef double x, m = -INFINITY, acc = 0.0
    for j in range(k):
        x = fabs(t * v[j])
        if x > m:
            m = x
    if m < 0.5:
        for j in range(k):
            acc += p[j] * expm1(t * v[j])
        return log1p(acc)
    m = _max_exponent(v, p, t)
    for j in range(k):
        if p[j] > 0.0:
            acc += p[j] * exp(t * v[j] - m)
    return m + log(acc)


cdef inline double _max_exponent(const double[::1] v, const double[::1] p, double t) noexcept nogil:
    """max over atoms of positive mass of t * v_j (the shift of a stable log-sum-exp)."""
    cdef Py_ssize_t j
    cdef double x, m = -INFINITY
    for j in range(v.shape[0]):
        if p[j] > 0.0:
            x = t * v[j]
            if x > m:
                m = x
    return m


def log_mgf(const double[::1] v, const double[::1] p, double t):
    """K(t) = log E[e^{tG}] for atoms ``v`` with masses ``p`` summing to one (see _log_mgf)."""
    return _log_mgf(v, p, t)


cdef void _tilt(const double[::1] v, const double[::1] p, double t, double* m1, double* m2) noexcept nogil:
    """Mean and variance of the law tilted by e^{t v} (stable shift by the largest exponent)."""
    cdef Py_ssize_t j, k = v.shape[0]
    cdef double mx = _max_exponent(v, p, t), w, s0 = 0.0, s1 = 0.0, s2 = 0.0, mu
    for j in range(k):
        if p[j] > 0.0:
            w = p[j] * exp(t * v[j] - mx)
            s0 += w
            s1 += w * v[j]
    mu = s1 / s0
    for j in range(k):
        if p[j] > 0.0:
            w = p[j] * exp(t * v[j] - mx)
            s2 += w * (v[j] - mu) * (v[j] - mu)
    m1[0] = mu
    m2[0] = s2 / s0


def saddle_point(const double[::1] v, const double[::1] p, double n):
    """Root theta > 0 of n K'(theta) = 2 / theta (the saddle point of n K - 2 log theta).

    K' is increasing and -2/theta is increasing, so the root is unique when G has a positive
    atom.  Safeguarded Newton inside a bisection bracket; returns (theta, mean, variance)
    of the tilted law.
    """
    cdef double lo, hi, t, m1, m2, h, dh, vabs = 0.0, tn
    cdef Py_ssize_t j
    cdef int it
    for j in range(v.shape[0]):
        vabs = max(vabs, fabs(v[j]))
    with nogil:
        hi = 1.0 / vabs
        _tilt(v, p, hi, &m1, &m2)
        it = 0
        while n * m1 - 2.0 / hi < 0.0 and it < 2000:
            hi *= 2.0
            _tilt(v, p, hi, &m1, &m2)
            it += 1
        lo = hi
        _tilt(v, p, lo, &m1, &m2)
        it = 0
        while n * m1 - 2.0 / lo > 0.0 and it < 2000:
            lo *= 0.5
            _tilt(v, p, lo, &m1, &m2)
            it += 1
        t = 0.5 * (lo + hi) if lo < hi else lo
        for it in range(200):
            _tilt(v, p, t, &m1, &m2)
            h = n * m1 - 2.0 / t
            if h > 0.0:
                hi = t
            else:
                lo = t
            dh = n * m2 + 2.0 / (t * t)
            tn = t - h / dh
            if not (tn > lo and tn < hi):
                tn = 0.5 * (lo + hi)
            if fabs(tn - t) <= 1e-15 * t or hi - lo <= 1e-15 * hi:
                t = tn
                break
            t = tn
        _tilt(v, p, t, &m1, &m2)
    return t, m1, m2


cdef inline void _psi(const double[::1] q, const double[::1] d, double t, double* wr, double* wi,
                      double* dr, double* di, double* err) noexcept nogil:
    """w = psi(t) - 1 and psi'(t)/i for psi(t) = sum_j q_j e^{i t d_j}, with e^{ia} - 1 formed as
    -2 sin^2(a/2) + i sin(a) (no cancellation), and a first-order bound on the rounding error of w."""
    cdef Py_ssize_t j, k = q.shape[0]
    cdef double a, hs, hc, s, c2, ar = 0.0, ai = 0.0, br = 0.0, bi = 0.0, e = 0.0
    for j in range(k):
        a = t * d[j]
        hs = sin(0.5 * a)
        hc = cos(0.5 * a)
        s = 2.0 * hs * hc
        c2 = -2.0 * hs * hs
        ar += q[j] * c2
        ai += q[j] * s
        br += q[j] * d[j] * (1.0 + c2)
        bi += q[j] * d[j] * s
        e += q[j] * (fabs(a) if fabs(a) < 2.0 else 2.0)
    wr[0] = ar
    wi[0] = ai
    dr[0] = br
    di[0] = bi
    err[0] = (4.0 + k) * DBL_EPS * e + 2.0 * DBL_EPS * sqrt(ar * ar + ai * ai)


cdef void _bromwich_node(const double[::1] q, const double[::1] d, double n, double nmu, double theta,
                         double tt, double* gr, double* absg, double* rel) noexcept nogil:
    """One node of bromwich_nodes (all temporaries local, so prange threads share nothing)."""
    cdef double wr, wi, dr, di, err, la, ar, rho, L, ph, zr, zi, den, mag
    _psi(q, d, tt, &wr, &wi, &dr, &di, &err)
    la = 0.5 * log1p(2.0 * wr + wr * wr + wi * wi)
    ar = atan2(wi, 1.0 + wr)
    rho = exp(la)
    L = n * la
    ph = n * ar + tt * nmu
    zr = theta * theta - tt * tt
    zi = 2.0 * theta * tt
    den = zr * zr + zi * zi
    mag = exp(L)
    gr[0] = mag * (cos(ph) * zr + sin(ph) * zi) / den
    absg[0] = mag / sqrt(den)
    rel[0] = (n * err / rho * 1.01 if rho > 0.0 else INFINITY) + 8.0 * DBL_EPS * (1.0 + fabs(L) + fabs(ph))


def bromwich_nodes(const double[::1] q, const double[::1] d, double n, double nmu, double theta,
                   const double[::1] t, double[::1] gr, double[::1] absg, double[::1] rel):
    """Integrand of the Bromwich representation at real nodes t >= 0.

    g(t) = psi(t)^n e^{i t n mu} / (theta + i t)^2, psi(t) = sum_j q_j e^{i t d_j}, where q is the
    law tilted at theta and d_j = v_j - mu (so M(theta+it)^n = M(theta)^n g(t) (theta+it)^2).
    psi^n is formed as exp(n log1p(psi - 1)) with the principal logarithm (exact for integer n).
    Writes Re g to ``gr``, |g| to ``absg`` and a first-order relative rounding bound to ``rel``.
    """
    cdef Py_ssize_t i, m = t.shape[0]
    cdef int nt = 2 if m * q.shape[0] > 200000 else 1
    with nogil:
        for i in prange(m, schedule="static", num_threads=nt):
            _bromwich_node(q, d, n, nmu, theta, t[i], &gr[i], &absg[i], &rel[i])


cdef void _modulus_bound(const double[::1] q, const double[::1] d, double s2, double c, double hh,
                         double* out) noexcept nogil:
    cdef double wr, wi, dr, di, err, r
    _psi(q, d, c, &wr, &wi, &dr, &di, &err)
    r = sqrt((1.0 + wr) * (1.0 + wr) + wi * wi) + err + 4.0 * DBL_EPS
    r = r + sqrt(dr * dr + di * di) * (1.0 + 1e-12) * hh + 0.5 * s2 * (1.0 + 1e-12) * hh * hh
    out[0] = r if r < 1.0 else 1.0


def cf_modulus_bound(const double[::1] q, const double[::1] d, double s2, const double[::1] c,
                     const double[::1] h, double[::1] out):
    """Certified bound on max |psi(t)| over [c_i - h_i, c_i + h_i]:
    |psi(c)| + |psi'(c)| h + s2 h^2 / 2 (Taylor; |psi''| <= E_q (V - mu)^2 = s2), capped at 1."""
    cdef Py_ssize_t i, m = c.shape[0]
    cdef int nt = 2 if m * q.shape[0] > 200000 else 1
    with nogil:
        for i in prange(m, schedule="static", num_threads=nt):
            _modulus_bound(q, d, s2, c[i], h[i], &out[i])
