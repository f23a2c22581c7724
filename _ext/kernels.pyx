# cython: language_level=3
"""Production kernels of shuffleamp (thin Cython loops; all validation happens in Python).

* directed discretisation of GPARV atoms and continuous cells onto l*Z;
* the tilted characteristic function of a grid GPARV raised to the n-th power,
  with a running round-off bound (FFT and spectral paths of :mod:`shuffleamp.fft_engine`);
* the log-MGF K(t) of a finite law, its tilted moments, tilted weights and the saddle point
  of n K(t) - 2 log t (the single log-MGF implementation, wrapped by ``shuffleamp._numerics``);
* the Bromwich-integral integrand and characteristic-function modulus bounds, and the exact
  multinomial enumeration used at small n by :mod:`shuffleamp.exact`.

Threading: every ``prange`` loop takes its thread count from :func:`num_threads` (one policy:
serial below ``PARALLEL_MIN_WORK`` elementary evaluations, else OpenMP's maximum), and the FFT
backend of :mod:`shuffleamp.fft_engine` uses the same function.

References
----------
Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (arXiv:2504.07414): the GPARV functional E[(G_1+...+G_n)_+]/n evaluated here.
"""

import numpy as np
from libc.math cimport (ceil, floor, exp, log, log1p, log10, sqrt, cos, sin, atan2, fabs, lgamma,
                        fmod, expm1, pow, isfinite, rint, M_PI, INFINITY, NAN)
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free, realloc
from libc.string cimport memset, memcpy
from cython.parallel cimport prange
cimport openmp
from scipy.special.cython_special cimport betainc, betaincc

cdef double DBL_EPS = 2.220446049250313e-16


# --------------------------------------------------------------------------- threading policy
#: below this many elementary evaluations (atoms x frequencies, or FFT points) a loop runs on one
#: thread: starting threads costs more than it saves
DEF PARALLEL_MIN_WORK = 262144


cdef inline int _num_threads(double work) noexcept nogil:
    if work < PARALLEL_MIN_WORK:
        return 1
    return openmp.omp_get_max_threads()


def num_threads(double work):
    """Number of threads for a loop of ``work`` elementary evaluations (the one threading policy).

    Parameters
    ----------
    work : float
        Atom x frequency evaluations of a kernel loop, or the length of an FFT.

    Returns
    -------
    int
        1 below ``PARALLEL_MIN_WORK`` (262144), else ``omp_get_max_threads()`` (which follows
        ``OMP_NUM_THREADS``).
    """
    return _num_threads(work)


# --------------------------------------------------------------------------- discretisation
def discretize_atoms(const double[::1] values, const double[::1] probs, double l, str mode):
    """Directed discretisation of atoms onto l*Z.

    mode "ceil": index i with i*l >= v (smallest); "floor": largest i with i*l <= v;
    "spread": mass split between floor(v/l) and floor(v/l)+1 preserving the mean.
    Returns (idx int64[M], w float64[M]), not merged.

    Parameters
    ----------
    values, probs : float64[::1], shape (K,)
        Atoms and their masses.
    l : float
        Grid step (> 0).
    mode : {"ceil", "floor", "spread"}
        Direction of the rounding.

    Returns
    -------
    idx : int64 ndarray, shape (M,)
    w : float64 ndarray, shape (M,)
        Grid indices and masses (M <= 2K), not merged.
    """
    cdef Py_ssize_t K = values.shape[0], m = 0
    cdef int imode = 0 if mode == "ceil" else (1 if mode == "floor" else 2)
    idx_a = np.empty(2 * K, dtype=np.int64)
    w_a = np.empty(2 * K, dtype=np.float64)
    cdef int64_t[::1] idx = idx_a
    cdef double[::1] w = w_a
    with nogil:
        m = _discretize_atoms(values, probs, l, imode, idx, w)
    return idx_a[:m], w_a[:m]


cdef inline int64_t _grid_floor(double v, double l) noexcept nogil:
    """The largest grid index i with i * l <= v (as computed in floating point)."""
    cdef int64_t i = <int64_t>floor(v / l)
    while i * l > v:
        i -= 1
    while (i + 1) * l <= v:
        i += 1
    return i


cdef Py_ssize_t _discretize_atoms(const double[::1] values, const double[::1] probs, double l, int imode,
                                  int64_t[::1] idx, double[::1] w) noexcept nogil:
    """The loop of :func:`discretize_atoms` (without the GIL); returns the number of entries written."""
    cdef Py_ssize_t K = values.shape[0], j, m = 0
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
            idx[m] = _grid_floor(v, l); w[m] = probs[j]; m += 1
        else:
            i = _grid_floor(v, l)
            frac = (v - i * l) / l
            if frac < 0.0:
                frac = 0.0
            if frac > 1.0:
                frac = 1.0
            idx[m] = i; w[m] = probs[j] * (1.0 - frac); m += 1
            if frac > 0.0:
                idx[m] = i + 1; w[m] = probs[j] * frac; m += 1
    return m


def discretize_cells(const double[::1] mass, const double[::1] moment, const double[::1] edges,
                     double l, int64_t i_lo, str mode):
    """Directed discretisation of continuous mass given per cell (edges[k], edges[k+1]] = ((i_lo+k)l, (i_lo+k+1)l].

    Parameters
    ----------
    mass, moment : float64[::1], shape (K,)
        Mass and first moment of the continuous part in each cell.
    edges : float64[::1], shape (K + 1,)
        Cell edges.
    l : float
        Grid step.
    i_lo : int
        Grid index of ``edges[0]``.
    mode : {"ceil", "floor", "spread"}
        Direction of the rounding (spread preserves each cell's mean).

    Returns
    -------
    idx : int64 ndarray, w : float64 ndarray
        Grid indices and masses, not merged.
    """
    cdef Py_ssize_t K = mass.shape[0], k, m = 0
    cdef int imode = 0 if mode == "ceil" else (1 if mode == "floor" else 2)
    idx_a = np.empty(2 * K, dtype=np.int64)
    w_a = np.empty(2 * K, dtype=np.float64)
    cdef int64_t[::1] idx = idx_a
    cdef double[::1] w = w_a
    cdef double mu, frac
    with nogil:
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
    return idx_a[:m], w_a[:m]


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


def tilted_cf_power(const int64_t[::1] idx, const double[::1] wt, int64_t N, double n, int64_t j0):
    """X[k] = (sum_j wt_j exp(-2 pi i k idx_j / N))^n * exp(+2 pi i k j0 / N), k = 0..N//2.

    ``wt`` are tilted, normalised masses (sum 1).  Phases are computed exactly (integer
    reduction mod N) every RESYNC frequencies and advanced by a complex rotation in between,
    so the relative error of the inner sum is <= (K * (RESYNC + 4)) eps.  Returns
    (X complex128[N//2+1], err) where ``err = sum_k mult_k |X_k - X_k^exact|`` bounds the l1
    error fed to the inverse rFFT (mult_k = 2 except at k = 0 and k = N/2).

    Parameters
    ----------
    idx : int64[::1], shape (K,)
        Grid indices of the atoms.
    wt : float64[::1], shape (K,)
        Tilted masses (sum 1).
    N : int
        Window length.
    n : float
        Power (number of users).
    j0 : int
        First grid index of the window.

    Returns
    -------
    X : complex128 ndarray, shape (N // 2 + 1,)
    err : float
        l1 bound on the error of X.
    """
    cdef Py_ssize_t M = N // 2 + 1
    cdef Py_ssize_t K = idx.shape[0]
    X = np.empty(M, dtype=np.complex128)
    cdef double[:, ::1] Xv = X.view(np.float64).reshape(M, 2)
    errs = np.empty(M, dtype=np.float64)
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
    cdef int nth = _num_threads(<double>M * <double>K)
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


def cf_power_inplace(phi, int64_t N, double n, int64_t j0, double c_terms):
    """In place: phi[k] <- phi[k]^n * exp(+2 pi i k j0/N) for a CF obtained by rFFT (dense GPARVs).

    ``c_terms`` is the relative round-off of phi in units of eps (about 5*log2(N) for an FFT).
    Returns the l1 error bound as in :func:`tilted_cf_power`.

    Parameters
    ----------
    phi : complex128 ndarray, shape (M,)
        Characteristic function on the half spectrum; overwritten.
    N, n, j0 : as in :func:`tilted_cf_power`
    c_terms : float
        Relative round-off of phi in units of eps.

    Returns
    -------
    float
        l1 error bound.
    """
    cdef double complex[::1] phi_c = phi          # type check: contiguous complex128
    cdef Py_ssize_t M = phi_c.shape[0], k
    cdef double[:, ::1] pv = phi.view(np.float64).reshape(M, 2)
    errs = np.empty(M, dtype=np.float64)
    cdef double[::1] ev = errs
    cdef pw_t o
    cdef int nth = _num_threads(<double>M)
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

    Parameters
    ----------
    q : float64[::1], shape (L,)
        Tilted pmf on the window.
    j0 : int
        Grid index of ``q[0]``.
    eta : float
        Tilt per grid unit.

    Returns
    -------
    tuple of 4 floats
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


# --------------------------------------------------------------------------- exact enumeration (small n)
cdef double _logp(double p) noexcept nogil:
    return log(p) if p > 0.0 else -INFINITY


cdef double _brute(const double[::1] v, const double[::1] lp, int K, int j, int rem, double acc_s,
                   double acc_lw, double* pos_mass) noexcept nogil:
    """E[(G_1+...+G_n)_+] (not divided by n) by enumerating the multinomial count vectors of the ``rem`` summands
    left over atoms j..K-1 (log masses ``lp``; the leaf weights are exp of their log-weights); the mass of the
    positive sums is added to ``pos_mass``.  Cost C(n+K-1, K-1) leaves; each leaf's log-weight carries an
    absolute rounding error of order (n |log p| + log n!) eps and each partial sum one of order n max|v| eps,
    which the caller (``_positive_part_law``, status ST_ENUMERATION) charges."""
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


include "_small_n.pxi"


# --------------------------------------------------------------------------- spectral evaluation
def cf_at(const int64_t[::1] idx, const double[::1] wt, const int64_t[::1] ks, int64_t N, double n,
          int64_t j0, bint power=True):
    """phi(k) = sum_j wt_j exp(-2 pi i k idx_j / N) at the given integer frequencies ``ks``.

    With ``power=True`` returns (X, err) where X[i] = phi(ks[i])^n exp(+2 pi i ks[i] j0 / N) and
    err[i] bounds |X_computed - X_exact| (as in tilted_cf_power, with exact integer phase
    reduction at every frequency).  With ``power=False`` returns (|phi|, unused zeros).

    Parameters
    ----------
    idx : int64[::1], wt : float64[::1], shape (K,)
        Grid atoms and tilted masses.
    ks : int64[::1], shape (M,)
        Frequencies.
    N : int
        Period.
    n : float
        Power.
    j0 : int
        Phase shift (grid index of the window start).
    power : bool
        Raise to the n-th power (True) or return moduli.

    Returns
    -------
    X : complex128 ndarray, shape (M,)
    err : float64 ndarray, shape (M,)
    """
    cdef Py_ssize_t M = ks.shape[0], K = idx.shape[0], i, j
    X = np.empty(M, dtype=np.complex128)
    cdef double[:, ::1] Xv = X.view(np.float64).reshape(M, 2)
    errs = np.zeros(M, dtype=np.float64)
    cdef double[::1] ev = errs
    cdef int64_t[::1] red = np.empty(K, dtype=np.int64)
    cdef double twopi_N = 2.0 * M_PI / <double>N, c_terms = 2.0 * <double>K + 4.0
    cdef double re, im, ph
    cdef int64_t kk
    cdef pw_t o
    cdef int nth = _num_threads(<double>M * <double>K)
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
    """K(t) = log E[e^{tG}] for atoms ``v`` with masses ``p`` summing to one (see _log_mgf).

    Parameters
    ----------
    v, p : float64[::1], shape (K,)
        Atoms and masses (sum 1).
    t : float
        Argument.

    Returns
    -------
    float
    """
    return _log_mgf(v, p, t)


DEF TILT_KEEP = 64           # _tilt keeps the tilted weights of laws of at most this many atoms (one exp each)


cdef void _tilt(const double[::1] v, const double[::1] p, double t, double* m1, double* m2) noexcept nogil:
    """Mean and variance of the law tilted by e^{t v} (stable shift by the largest exponent)."""
    cdef Py_ssize_t j, k = v.shape[0]
    cdef double mx = _max_exponent(v, p, t), w, s0 = 0.0, s1 = 0.0, s2 = 0.0, mu
    cdef double wk[TILT_KEEP]
    cdef bint keep = k <= TILT_KEEP
    for j in range(k):
        if p[j] > 0.0:
            w = p[j] * exp(t * v[j] - mx)
            if keep:
                wk[j] = w
            s0 += w
            s1 += w * v[j]
    mu = s1 / s0
    for j in range(k):
        if p[j] > 0.0:
            w = wk[j] if keep else p[j] * exp(t * v[j] - mx)
            s2 += w * (v[j] - mu) * (v[j] - mu)
    m1[0] = mu
    m2[0] = s2 / s0


cdef double _tilt_mean(const double[::1] v, const double[::1] p, double t) noexcept nogil:
    """The mean of :func:`_tilt` alone (the same operations, so the same number)."""
    cdef Py_ssize_t j
    cdef double mx = _max_exponent(v, p, t), w, s0 = 0.0, s1 = 0.0
    for j in range(v.shape[0]):
        if p[j] > 0.0:
            w = p[j] * exp(t * v[j] - mx)
            s0 += w
            s1 += w * v[j]
    return s1 / s0


def tilted_moments(const double[::1] v, const double[::1] p, double t):
    """(mean, variance) of the law ``p`` tilted by e^{t v}, i.e. (K'(t), K''(t)) (see _tilt).

    Parameters
    ----------
    v, p : float64[::1], shape (K,)
        Atoms and masses.
    t : float
        Tilt.

    Returns
    -------
    (float, float)
    """
    cdef double m1, m2
    with nogil:
        _tilt(v, p, t, &m1, &m2)
    return m1, m2


def tilted_weights(const double[::1] v, const double[::1] p, double t):
    """Masses of the law tilted by e^{t v}: p_j e^{t v_j} / sum_i p_i e^{t v_i} (float64[K], sum 1).

    Shifted by the largest exponent (as _tilt), so no overflow for large |t v|.

    Parameters
    ----------
    v, p : float64[::1], shape (K,)
        Atoms and masses.
    t : float
        Tilt.

    Returns
    -------
    float64 ndarray, shape (K,)
    """
    out_a = np.zeros(v.shape[0], dtype=np.float64)
    cdef double[::1] out = out_a
    with nogil:
        _tilted_weights(v, p, t, out)
    return out_a


cdef void _tilted_weights(const double[::1] v, const double[::1] p, double t, double[::1] out) noexcept nogil:
    """out_j = p_j e^{t v_j} / sum_i p_i e^{t v_i} (entries with p_j = 0 are left untouched, callers zero them)."""
    cdef Py_ssize_t j, k = v.shape[0]
    cdef double mx = _max_exponent(v, p, t), s0 = 0.0
    for j in range(k):
        if p[j] > 0.0:
            out[j] = p[j] * exp(t * v[j] - mx)
            s0 += out[j]
    for j in range(k):
        out[j] = out[j] / s0


def saddle_point(const double[::1] v, const double[::1] p, double n):
    """Root theta > 0 of n K'(theta) = 2 / theta (the saddle point of n K - 2 log theta).

    K' is increasing and -2/theta is increasing, so the root is unique when G has a positive
    atom.  Safeguarded Newton inside a bisection bracket; returns (theta, mean, variance)
    of the tilted law.

    Parameters
    ----------
    v, p : float64[::1], shape (K,)
        Atoms and masses (sum 1).
    n : float
        Number of summands.

    Returns
    -------
    (theta, mean, variance) : floats
    """
    cdef double t, m1, m2
    with nogil:
        _saddle_point(v, p, n, &t, &m1, &m2)
    return t, m1, m2


cdef void _saddle_point(const double[::1] v, const double[::1] p, double n, double* t_out, double* m1_out,
                        double* m2_out) noexcept nogil:
    """Body of :func:`saddle_point` (no Python objects, callable from prange loops)."""
    cdef double lo, hi, t, m1, m2, h, dh, vabs = 0.0, tn
    cdef Py_ssize_t j
    cdef int it
    for j in range(v.shape[0]):
        vabs = max(vabs, fabs(v[j]))
    hi = 1.0 / vabs
    m1 = _tilt_mean(v, p, hi)
    it = 0
    while n * m1 - 2.0 / hi < 0.0 and it < 2000:
        hi *= 2.0
        m1 = _tilt_mean(v, p, hi)
        it += 1
    lo = hi
    it = 0
    while n * m1 - 2.0 / lo > 0.0 and it < 2000:
        lo *= 0.5
        m1 = _tilt_mean(v, p, lo)
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
    t_out[0] = t
    m1_out[0] = m1
    m2_out[0] = m2


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
    cdef double wr, wi, dr, di, err
    _psi(q, d, tt, &wr, &wi, &dr, &di, &err)
    _node_value(wr, wi, err, n, nmu, theta, tt, gr, absg, rel)


cdef inline void _node_value(double wr, double wi, double err, double n, double nmu, double theta, double tt,
                             double* gr, double* absg, double* rel) noexcept nogil:
    """Re g, |g| and the relative rounding bound of g(tt) = psi^n e^{i tt n mu} / (theta + i tt)^2 from
    w = psi(tt) - 1 = wr + i wi and a bound ``err`` on the rounding error of w."""
    cdef double la, ar, rho, L, ph, zr, zi, den, mag
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

    Parameters
    ----------
    q, d : float64[::1], shape (K,)
        Tilted masses and centred atoms.
    n, nmu, theta : float
        Number of summands, n times the tilted mean, tilt.
    t : float64[::1], shape (m,)
        Nodes.
    gr, absg, rel : float64[::1], shape (m,)
        Outputs (written in place).

    Returns
    -------
    None
    """
    cdef Py_ssize_t i, m = t.shape[0]
    cdef int nt = _num_threads(<double>m * <double>q.shape[0])
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


#: Cells per run of ``_modulus_run`` (one anchor of sin/cos per atom at most every MOD_RUN cells).
DEF MOD_RUN = 32
MODULUS_RUN = MOD_RUN


cdef void _modulus_run(const double[::1] q, const double[::1] d, double s2, const double* c, const double* h,
                       Py_ssize_t m, double* out) noexcept nogil:
    """``_modulus_bound`` of m cells (centres c, half-widths h) with psi advanced by rotation along runs.

    Where the centres are equally spaced (|c_i - (c_0 + s D)| <= 1e-6 h_i, D = c_1 - c_0 of the run), psi and
    psi' at t' = c_0 + s D (exact real) are formed from z_j = e^{i c_0 d_j} multiplied s times by
    rho_j = e^{i D d_j}: k complex products per cell instead of k sin/cos pairs; a cell off the run starts a new
    one.  Rounding (eps = 2^-52): each anchor/step value is within 2 eps of the exact unit complex number of
    its rounded angle and each product adds 3 eps, the rounded angles are within eps |d_j| (|c_0| + s |D|) of
    t' d_j, and the two sums of k terms add k eps each, so with L1 = sum q_j |d_j|
        |psi_computed - psi(t')| <= E = eps ((|c_0| + s |D|) L1 + 6 + 8 s + 2 k) (1 + 1e-6),
    and |psi'| is within max|d_j| E.  The Taylor bound is taken around t' over half-width h_i + dl with
    dl >= |c_i - t'|, which contains [c_i - h_i, c_i + h_i]."""
    cdef Py_ssize_t k = q.shape[0], i, j, i0 = 0, st
    cdef double L1 = 0.0, dmax = 0.0, c0 = 0.0, D = 0.0, a, x, y, sr, si, pr, pi_, E, dl, hh, r, tp = 0.0
    cdef bint anchor
    cdef double* zr = <double*>malloc(4 * k * sizeof(double))
    cdef double* zi
    cdef double* rr
    cdef double* ri
    if zr == NULL:
        for i in range(m):
            _modulus_bound(q, d, s2, c[i], h[i], &out[i])
        return
    zi = zr + k
    rr = zr + 2 * k
    ri = zr + 3 * k
    for j in range(k):
        L1 += q[j] * fabs(d[j])
        if fabs(d[j]) > dmax:
            dmax = fabs(d[j])
    for i in range(m):
        anchor = i == 0
        if not anchor:
            tp = c0 + (i - i0) * D
            anchor = not (fabs(c[i] - tp) <= 1e-6 * h[i])
        if anchor:
            i0 = i
            c0 = c[i]
            tp = c0
            D = c[i + 1] - c[i] if i + 1 < m else 0.0
            for j in range(k):
                a = c0 * d[j]
                zr[j] = cos(a)
                zi[j] = sin(a)
                a = D * d[j]
                rr[j] = cos(a)
                ri[j] = sin(a)
        else:
            for j in range(k):
                x = zr[j] * rr[j] - zi[j] * ri[j]
                y = zr[j] * ri[j] + zi[j] * rr[j]
                zr[j] = x
                zi[j] = y
        sr = 0.0
        si = 0.0
        pr = 0.0
        pi_ = 0.0
        for j in range(k):
            sr += q[j] * zr[j]
            si += q[j] * zi[j]
            pr += (q[j] * d[j]) * zr[j]
            pi_ += (q[j] * d[j]) * zi[j]
        st = i - i0
        E = DBL_EPS * ((fabs(c0) + st * fabs(D)) * L1 + 6.0 + 8.0 * st + 2.0 * k) * (1.0 + 1e-6)
        dl = fabs(c[i] - tp) + 2.0 * DBL_EPS * (fabs(c0) + st * fabs(D))
        hh = (h[i] + dl) * (1.0 + 1e-12)
        r = sqrt(sr * sr + si * si) + E + 4.0 * DBL_EPS
        r = r + (sqrt(pr * pr + pi_ * pi_) + dmax * E) * (1.0 + 1e-12) * hh + 0.5 * s2 * (1.0 + 1e-12) * hh * hh
        out[i] = r if r < 1.0 else 1.0
    free(zr)


cdef void _modulus_cells(const double[::1] q, const double[::1] d, double s2, const double* c, const double* h,
                         Py_ssize_t m, double* out) noexcept nogil:
    """``_modulus_run`` over consecutive runs of MOD_RUN cells (the runs of ``cf_modulus_bound``)."""
    cdef Py_ssize_t i0 = 0
    while i0 < m:
        _modulus_run(q, d, s2, c + i0, h + i0, m - i0 if m - i0 < MOD_RUN else MOD_RUN, out + i0)
        i0 += MOD_RUN


def cf_modulus_bound(const double[::1] q, const double[::1] d, double s2, const double[::1] c,
                     const double[::1] h, double[::1] out):
    """Certified bound on max |psi(t)| over [c_i - h_i, c_i + h_i]:
    |psi(c)| + |psi'(c)| h + s2 h^2 / 2 (Taylor; |psi''| <= E_q (V - mu)^2 = s2), capped at 1.

    Cells are taken in runs of ``MODULUS_RUN``; along equally spaced centres psi is advanced by rotation
    (``_modulus_run``, its rounding charged), so the bound of a cell depends on its run, never on threads.

    Parameters
    ----------
    q, d : float64[::1], shape (K,)
        Tilted masses and centred atoms.
    s2 : float
        Tilted variance.
    c, h : float64[::1], shape (m,)
        Cell centres and half-widths.
    out : float64[::1], shape (m,)
        Output (written in place).

    Returns
    -------
    None
    """
    cdef Py_ssize_t i, m = c.shape[0], nr = (m + MOD_RUN - 1) // MOD_RUN
    cdef int nt = _num_threads(<double>m * <double>q.shape[0] / 8.0)
    if h.shape[0] != m or out.shape[0] != m:
        raise ValueError("cf_modulus_bound: c, h and out differ in length")
    if m == 0:
        return
    with nogil:
        for i in prange(nr, schedule="static", num_threads=nt):
            _modulus_run(q, d, s2, &c[i * MOD_RUN], &h[i * MOD_RUN],
                         m - i * MOD_RUN if m - i * MOD_RUN < MOD_RUN else MOD_RUN, &out[i * MOD_RUN])


# --------------------------------------------------------------------------- batched privacy profile
# The exact evaluator of finite atomic laws (``_positive_part_law``: closed cases, binomial-mixture sums, meet in
# the middle, enumeration, and the Bromwich integral ``_bromwich_atoms``): its one implementation, called per
# epsilon in one nogil prange (``profile_bromwich``) or on given atoms (``positive_part``).  The integral itself is
# ``_bromwich_law`` (end of this module), the one implementation for every law (finite laws, personalized
# populations, laws given through Python hooks).  Status codes:
DEF ST_EXACT = 0          # Bromwich integral (evaluator "exact")
DEF ST_CHERNOFF = 1       # certified Chernoff bound (evaluator "chernoff")
DEF ST_TRIVIAL = 2        # certified E[G_+] (evaluator "trivial")
DEF ST_CLOSED = 3         # no positive atom, or no negative atom (evaluator "exact", no integral)
DEF ST_ENUMERATION = 4    # exact multinomial enumeration (evaluator "enumeration")
DEF ST_SMALL_N = 6         # exact meet-in-the-middle over multisets (evaluator "enumeration")
DEF ST_FALLBACK = -1      # not handled here: the caller evaluates this epsilon one by one
DEF ST_RESOURCE = -2      # the work budget would be exceeded: the caller evaluates it one by one (and raises)
DEF ST_WORK_NEEDED = -3   # over an explicit work cap (strict_work): work_out holds the integrand nodes needed
# ST_MIXTURE = 5: exact binomial-mixture sums (evaluator "binomial-mixture"), in _mixture.pxi
include "_mixture.pxi"


cdef struct seg_t:
    double a
    double b
    double m


cdef struct dvec:
    double* x
    Py_ssize_t n
    Py_ssize_t cap


cdef struct svec:
    seg_t* x
    Py_ssize_t n
    Py_ssize_t cap


cdef struct prof_par:
    double n
    double rtol
    double max_work
    double strict_work      # > 0: an explicit work cap (refuse before integrating beyond it, ST_WORK_NEEDED)
    double tail_work
    double t0_factor
    double theta_lo
    double theta_hi
    double central_widths
    double tail_const
    const double* xg
    const double* wg
    Py_ssize_t gl_nodes


cdef inline void* _room(void* x, Py_ssize_t n, Py_ssize_t* cap, size_t size) noexcept nogil:
    """The buffer ``x`` of ``n`` entries of ``size`` bytes with room for one more: ``x`` itself while
    ``n < cap``, else reallocated to twice the capacity (at least 64; ``cap`` updated); NULL when out of
    memory (``x`` then unchanged)."""
    cdef Py_ssize_t c
    cdef void* y
    if n < cap[0]:
        return x
    c = 64 if cap[0] < 32 else 2 * cap[0]
    y = realloc(x, c * size)
    if y != NULL:
        cap[0] = c
    return y


cdef int _dpush(dvec* v, double x) noexcept nogil:
    cdef double* y = <double*>_room(v.x, v.n, &v.cap, sizeof(double))
    if y == NULL:
        return -1
    v.x = y
    v.x[v.n] = x
    v.n += 1
    return 0


cdef int _spush(svec* v, double a, double b, double m) noexcept nogil:
    cdef seg_t* y = <seg_t*>_room(v.x, v.n, &v.cap, sizeof(seg_t))
    if y == NULL:
        return -1
    v.x = y
    v.x[v.n].a = a
    v.x[v.n].b = b
    v.x[v.n].m = m
    v.n += 1
    return 0


cdef double _pairwise_sum(const double* a, Py_ssize_t n) noexcept nogil:
    """numpy's pairwise summation of a contiguous float64 array (bit-identical to ``np.sum``)."""
    cdef Py_ssize_t i, j, n2
    cdef double res
    cdef double r[8]
    if n < 8:
        res = -0.0
        for i in range(n):
            res += a[i]
        return res
    if n <= 128:
        for j in range(8):
            r[j] = a[j]
        i = 8
        while i < n - (n % 8):
            for j in range(8):
                r[j] += a[i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        while i < n:
            res += a[i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise_sum(a, n2) + _pairwise_sum(a + n2, n - n2)


cdef int _stable_sort_segs(seg_t* x, Py_ssize_t m) noexcept nogil:
    """Sort segments by left end, stably (equal left ends keep their order): the order of a stable insertion
    sort, in O(m log m).  Runs that are already in order are merged bottom-up (the refined cells of a widening
    pass arrive as a sorted run after the coarser ones).  Returns -1 if out of memory."""
    cdef Py_ssize_t i, nr = 1, r, lo, mid, hi, a, b, o
    cdef Py_ssize_t* st
    cdef seg_t* buf
    cdef seg_t* src
    cdef seg_t* dst
    cdef seg_t* sw
    for i in range(1, m):
        if x[i].a < x[i - 1].a:
            nr += 1
    if nr == 1:
        return 0
    st = <Py_ssize_t*>malloc((nr + 1) * sizeof(Py_ssize_t))
    buf = <seg_t*>malloc(m * sizeof(seg_t))
    if st == NULL or buf == NULL:
        free(st)
        free(buf)
        return -1
    # run starts (maximal non-decreasing runs)
    st[0] = 0
    r = 1
    for i in range(1, m):
        if x[i].a < x[i - 1].a:
            st[r] = i
            r += 1
    st[nr] = m
    src = x
    dst = buf
    while nr > 1:
        r = 0
        i = 0
        while i < nr:
            lo = st[i]
            if i + 1 < nr:
                mid = st[i + 1]
                hi = st[i + 2]
                a = lo
                b = mid
                o = lo
                while a < mid and b < hi:
                    if src[b].a < src[a].a:        # strictly smaller only: stable
                        dst[o] = src[b]
                        b += 1
                    else:
                        dst[o] = src[a]
                        a += 1
                    o += 1
                while a < mid:
                    dst[o] = src[a]
                    a += 1
                    o += 1
                while b < hi:
                    dst[o] = src[b]
                    b += 1
                    o += 1
            else:
                hi = st[i + 1]
                for o in range(lo, hi):
                    dst[o] = src[o]
            st[r] = lo
            r += 1
            i += 2
        st[r] = m
        nr = r
        sw = src
        src = dst
        dst = sw
    if src != x:
        memcpy(x, src, m * sizeof(seg_t))
    free(st)
    free(buf)
    return 0


cdef double _tail_bound(svec* segs, double T, double tail_const, dvec* tmp) noexcept nogil:
    """The tail bound of the Bromwich integral over the segments (sorted in place by left end, stable): ``tail_const
    / T^2 * int_0^{T/2} A(w) dw / w`` with A(w) <= the cumulative segment masses (A(w) <= w on a segment starting
    at 0), times 1 + 1e-9; NaN if out of memory."""
    cdef Py_ssize_t i
    cdef double A = 0.0, bb, half = 0.5 * T
    if _stable_sort_segs(segs.x, segs.n):
        return NAN
    tmp.n = 0
    for i in range(segs.n):
        if not (segs.x[i].a < half):
            continue
        bb = segs.x[i].b if segs.x[i].b < half else half
        A = A + segs.x[i].m
        if segs.x[i].a <= 0.0:
            if _dpush(tmp, bb - segs.x[i].a):
                return NAN
        else:
            if _dpush(tmp, A * log(bb / segs.x[i].a)):
                return NAN
    return tail_const / (T * T) * _pairwise_sum(tmp.x, tmp.n) * (1.0 + 1e-9)


def tail_bound(const double[::1] a, const double[::1] b, const double[::1] m, double T, double tail_const):
    """The tail bound of the Bromwich integral (``_tail_bound``: segments sorted stably by left end, then
    ``tail_const / T^2 * int_0^{T/2} A(w) dw / w``) of segments [a_i, b_i] with masses m_i.

    For tests only: the integral of every law (``_bromwich_law``) calls ``_tail_bound`` (the one implementation)
    on its own segments, and no production code calls this entry point.  It exists so that the tests can compare
    the production tail bound, on given segments in any order, with its defining sum evaluated in mpmath (no
    production entry point returns the tail bound alone).

    Parameters
    ----------
    a, b, m : float64[::1], shape (s,)
        Segment ends and bounds of the integral of |psi|^n over each.
    T, tail_const : float
        Truncation point and the Fejer-kernel constant.

    Returns
    -------
    float
    """
    cdef svec segs
    cdef dvec tmp
    cdef Py_ssize_t i, s = a.shape[0]
    cdef double out
    if b.shape[0] != s or m.shape[0] != s:
        raise ValueError("tail_bound: a, b and m differ in length")
    memset(&segs, 0, sizeof(svec))
    memset(&tmp, 0, sizeof(dvec))
    for i in range(s):
        if _spush(&segs, a[i], b[i], m[i]):
            free(segs.x)
            raise MemoryError()
    out = _tail_bound(&segs, T, tail_const, &tmp)
    free(segs.x)
    free(tmp.x)
    return out


cdef Py_ssize_t _merge_runs(double* a, double* b, Py_ssize_t m, double width) noexcept nogil:
    """Merge consecutive cells [a_i, b_i] (increasing) into panels no wider than ``width``, in place.

    Cell i joins the open panel [A, B] when it starts where the panel ends (|a_i - B| <= 4e-16 max(1, |B|):
    the ends of neighbouring cells are computed separately and may differ by an ulp) and b_i - A <= width;
    the panel is then [A, b_i].  A panel covers exactly the union of its cells (closing ulp gaps, counting
    ulp overlaps once).  Returns the number of panels (written to a[:m'], b[:m']).

    The one rule of the Bromwich integral of every law (``_bromwich_law``): a Gauss–Legendre panel of
    width <= 2 beta keeps its certified error bound (Bernstein ellipse rho >= 1 + sqrt 2), so the cells
    kept after refinement (often 4-8 times narrower) need not cost GL_NODES nodes each."""
    cdef Py_ssize_t i, out = 0
    cdef double tol
    for i in range(m):
        if out > 0:
            tol = 4e-16 * (fabs(b[out - 1]) if fabs(b[out - 1]) > 1.0 else 1.0)
            if fabs(a[i] - b[out - 1]) <= tol and b[i] - a[out - 1] <= width:
                b[out - 1] = b[i]
                continue
        a[out] = a[i]
        b[out] = b[i]
        out += 1
    return out


#: A panel whose centre c has |c| max|d_j| >= ROTATION_MIN_ANGLE forms e^{i t d_j} at its Gauss–Legendre
#: nodes by rotation (``_law_panels``); closer to t = 0 the cancellation-free half-angle form of ``_psi`` is kept.
DEF ROT_MIN = 8.0
ROTATION_MIN_ANGLE = ROT_MIN
#: ... and so does any panel where the rotation's rounding charge n eps ((|c| + 2h) L1 + 2k + 14) is below
#: ROTATION_MAX_REL (small n: the cancellation near t = 0 costs nothing there).
DEF ROT_REL = 1e-10
ROTATION_MAX_REL = ROT_REL
#: Offset tables kept per evaluation (panel half-widths seen most recently) ...
DEF ROT_SLOTS = 4
#: ... and reused, corrected by e^{i (h - h_s) x_g d_j}, for a half-width h within ROT_NEAR h of a kept one.
DEF ROT_NEAR = 1e-9


cdef void _rotated_nodes(const double[::1] q, const double* an, const double* of, Py_ssize_t k, Py_ssize_t G,
                         double L1, double c, double h, const double* xg, double n, double nmu, double theta,
                         double* out, double extra=0.0) noexcept nogil:
    """Re g, |g| and rel (``out[0:G]``, ``out[G:2G]``, ``out[2G:3G]``) at the nodes t = c + h xg[j] of one panel
    from the anchors ``an`` (cos, sin of c d_j) and offsets ``of`` (cos, sin of (h xg[g]) d_j, node-major); the
    rounding bound of w is charged as derived in ``_law_panels``."""
    cdef Py_ssize_t j, kk
    cdef double err = DBL_EPS * ((fabs(c) + 2.0 * h) * L1 + 2.0 * k + 10.0 + extra), wr, wi, x, y
    for j in range(G):
        wr = 0.0
        wi = 0.0
        for kk in range(k):
            x = an[2 * kk] * of[2 * (j * k + kk)] - an[2 * kk + 1] * of[2 * (j * k + kk) + 1]
            y = an[2 * kk] * of[2 * (j * k + kk) + 1] + an[2 * kk + 1] * of[2 * (j * k + kk)]
            wr += q[kk] * (x - 1.0)
            wi += q[kk] * y
        _node_value(wr, wi, err, n, nmu, theta, c + h * xg[j], &out[j], &out[G + j], &out[2 * G + j])


cdef void _corrected_offsets(const double* src, double dh, const double* xg, const double[::1] d, Py_ssize_t k,
                             Py_ssize_t G, double* out) noexcept nogil:
    """Offsets e^{i (h_s + dh) x_g d_j} from those of h_s (``src``) times 1 - delta^2/2 + i delta, delta = dh x_g d_j
    (|dh| <= ROT_NEAR h_s: the neglected terms are <= |delta|^3/6)."""
    cdef Py_ssize_t j, kk
    cdef double dx, dl, cr, x, y
    for j in range(G):
        dx = dh * xg[j]
        for kk in range(k):
            dl = dx * d[kk]
            cr = 1.0 - 0.5 * dl * dl
            x = src[2 * (j * k + kk)]
            y = src[2 * (j * k + kk) + 1]
            out[2 * (j * k + kk)] = x * cr - y * dl
            out[2 * (j * k + kk) + 1] = x * dl + y * cr


cdef struct rot_t:
    double* an
    double* of
    double* oc
    double sh[ROT_SLOTS]
    int ns
    int nxt
    int tried
    double L1
    double dmax
    Py_ssize_t hg


cdef void _rot_init(rot_t* R, const double[::1] q, const double[::1] d, const double* xg,
                    Py_ssize_t G) noexcept nogil:
    cdef Py_ssize_t j, kk
    memset(R, 0, sizeof(rot_t))
    for kk in range(q.shape[0]):
        R.L1 += q[kk] * fabs(d[kk])
        if fabs(d[kk]) > R.dmax:
            R.dmax = fabs(d[kk])
    R.hg = (G + 1) // 2
    for j in range(G):
        if xg[G - 1 - j] != -xg[j]:
            R.hg = G


cdef void _panel_node_values(const double[::1] q, const double[::1] d, double n, double nmu, double theta,
                             double c, double h, const double* xg, Py_ssize_t G, rot_t* R,
                             double* out) noexcept nogil:
    """Re g, |g| and rel at the Gauss–Legendre nodes c + h xg of one panel (``out[0:G]``, ``[G:2G]``,
    ``[2G:3G]``), formed as ``_law_panels`` forms them (see its docstring); ``R`` carries the offset tables from
    panel to panel of one call."""
    cdef Py_ssize_t j, jj, kk, k = q.shape[0], KG = 2 * q.shape[0] * G
    cdef double a, hx, extra = 0.0
    cdef double* ofp
    cdef int si, slot = -1, near = -1
    cdef bint rot = (fabs(c) * R.dmax >= ROT_MIN
                     or n * DBL_EPS * ((fabs(c) + 2.0 * h) * R.L1 + 2.0 * k + 14.0) <= ROT_REL)
    if rot and R.an == NULL and not R.tried:
        R.tried = 1
        R.an = <double*>malloc((2 * k + (ROT_SLOTS + 1) * KG) * sizeof(double))
        if R.an != NULL:
            R.of = R.an + 2 * k
            R.oc = R.of + ROT_SLOTS * KG
    if not (rot and R.an != NULL):
        for j in range(G):
            _bromwich_node(q, d, n, nmu, theta, c + h * xg[j], &out[j], &out[G + j], &out[2 * G + j])
        return
    for kk in range(k):
        a = c * d[kk]
        R.an[2 * kk] = cos(a)
        R.an[2 * kk + 1] = sin(a)
    for si in range(R.ns):
        if R.sh[si] == h:
            slot = si
            break
        if near < 0 and fabs(h - R.sh[si]) <= ROT_NEAR * h:
            near = si
    if slot >= 0:
        ofp = R.of + slot * KG
    elif near >= 0:
        _corrected_offsets(R.of + near * KG, h - R.sh[near], xg, d, k, G, R.oc)
        ofp = R.oc
        extra = 4.0
    else:
        if R.ns < ROT_SLOTS:
            slot = R.ns
            R.ns += 1
        else:
            slot = R.nxt
            R.nxt = (R.nxt + 1) % ROT_SLOTS
        R.sh[slot] = h
        ofp = R.of + slot * KG
        for j in range(R.hg):
            hx = h * xg[j]
            for kk in range(k):
                a = hx * d[kk]
                ofp[2 * (j * k + kk)] = cos(a)
                ofp[2 * (j * k + kk) + 1] = sin(a)
        for j in range(R.hg, G):
            jj = G - 1 - j
            for kk in range(k):
                ofp[2 * (j * k + kk)] = ofp[2 * (jj * k + kk)]
                ofp[2 * (j * k + kk) + 1] = -ofp[2 * (jj * k + kk) + 1]
    _rotated_nodes(q, R.an, ofp, k, G, R.L1, c, h, xg, n, nmu, theta, out, extra)


def panel_nodes(const double[::1] q, const double[::1] d, double n, double nmu, double theta,
                const double[::1] pa, const double[::1] pb, const double[::1] xg):
    """Integrand of the Bromwich representation at the Gauss–Legendre nodes of consecutive panels [pa_i, pb_i],
    formed exactly as one ``_law_panels`` call of the compiled profile forms them (rotation and offset tables
    carried from panel to panel): the n-fold sum's ``panel_nodes`` hook of ``shuffleamp.exact._AtomLaw``.

    Parameters
    ----------
    q, d : float64[::1], shape (K,)
        Tilted masses and centred atoms.
    n, nmu, theta : float
        Number of summands, n times the tilted mean, tilt.
    pa, pb : float64[::1], shape (m,)
        Panel ends, in the order the integral takes them.
    xg : float64[::1], shape (G,)
        Nodes on [-1, 1].

    Returns
    -------
    (ndarray, ndarray, ndarray), each shape (m * G,)
        Re g, |g| and the relative rounding bound, panel-major (node j of panel i at i * G + j), as
        ``bromwich_nodes`` at t = c_i + h_i xg_j.
    """
    cdef Py_ssize_t m = pa.shape[0], G = xg.shape[0], i, j
    cdef rot_t R
    if pb.shape[0] != m:
        raise ValueError("panel_nodes: pa and pb differ in length")
    gr_a = np.empty(m * G)
    ag_a = np.empty(m * G)
    rl_a = np.empty(m * G)
    nd_a = np.empty(3 * G if G > 0 else 1)
    cdef double[::1] gr = gr_a, ag = ag_a, rl = rl_a, nd = nd_a
    if m == 0 or G == 0:
        return gr_a, ag_a, rl_a
    with nogil:
        _rot_init(&R, q, d, &xg[0], G)
        for i in range(m):
            _panel_node_values(q, d, n, nmu, theta, 0.5 * (pa[i] + pb[i]), 0.5 * (pb[i] - pa[i]), &xg[0], G, &R,
                               &nd[0])
            for j in range(G):
                gr[i * G + j] = nd[j]
                ag[i * G + j] = nd[G + j]
                rl[i * G + j] = nd[2 * G + j]
        free(R.an)
    return gr_a, ag_a, rl_a


cdef struct bufs_t:
    dvec ca
    dvec cb
    dvec na
    dvec nb
    dvec ka
    dvec kb
    dvec krn
    dvec r
    dvec sa
    dvec sb
    dvec tmp
    svec segs


cdef void _bufs_free(bufs_t* B) noexcept nogil:
    free(B.ca.x); free(B.cb.x); free(B.na.x); free(B.nb.x); free(B.ka.x); free(B.kb.x); free(B.krn.x)
    free(B.r.x); free(B.sa.x); free(B.sb.x); free(B.tmp.x); free(B.segs.x)
    memset(B, 0, sizeof(bufs_t))


cdef int _bromwich_atoms(const double[::1] v, const double[::1] p, double[::1] q, double[::1] d,
                         const prof_par* P, bufs_t* B, double* value, double* err, double* theta_out,
                         double* work_out) noexcept nogil:
    """The Bromwich integral of E[S_+]/n for one finite law; returns a status.  The integral is ``_bromwich_law``
    (the one implementation, for every law) on the n-fold sum (``_bromwich_atoms_law``).  With
    ``P.strict_work > 0`` (an explicit cap) it refuses before integrating beyond it (ST_WORK_NEEDED).  Buffers
    in ``B`` are grown as needed (the caller frees them).
    """
    return _bromwich_atoms_law(v, p, q, d, P, B, value, err, theta_out, work_out)


cdef Py_ssize_t _gparv_atoms(const double[::1] A, const double[::1] Bm, const double[::1] C, double beta,
                             double eps, double[::1] v, double[::1] p) noexcept nogil:
    """Atoms of ``Decomposition.gparv(eps)`` as ``Gparv`` and ``LogMgf`` hold them.

    (a_j - e^eps b_j)/c_j w.p. c_j and 0 w.p. beta; positive masses only, sorted (stable), exactly
    equal values merged (masses summed in order), masses divided by their (numpy pairwise) sum.
    Returns the number of atoms, or -1 if an atom is not finite.
    """
    cdef Py_ssize_t K = A.shape[0], j, i, m = 0, out = 0
    cdef double e = exp(eps), x, w, s
    for j in range(K + 1):
        if j < K:
            x = (A[j] - e * Bm[j]) / C[j]
            w = C[j]
        else:
            x = 0.0
            w = beta
        if not isfinite(x):
            return -1
        if w > 0.0:
            i = m
            while i > 0 and v[i - 1] > x:
                v[i] = v[i - 1]
                p[i] = p[i - 1]
                i -= 1
            v[i] = x
            p[i] = w
            m += 1
    for j in range(m):
        if out > 0 and v[out - 1] == v[j]:
            p[out - 1] += p[j]
        else:
            v[out] = v[j]
            p[out] = p[j]
            out += 1
    if out == 0:
        return -1
    s = _pairwise_sum(&p[0], out)
    for j in range(out):
        p[j] = p[j] / s
    return out


cdef int _positive_part_law(const double[::1] v, const double[::1] p, Py_ssize_t kk, bint increasing,
                            const unsigned char[::1] enum_ok, const prof_par* P, double[::1] q, double[::1] d,
                            double* value_out, double* err_out, double* theta, double* work) noexcept nogil:
    """E[(G_1+...+G_n)_+]/n of the finite law (v[:kk], p[:kk]) (masses summing to 1) and its error bound: the
    one dispatch of the exact evaluator of finite laws (closed cases, binomial-mixture sums, meet in the middle,
    multinomial enumeration, Bromwich integral).  ``increasing``: the atoms are strictly increasing (needed by
    the pruned meet in the middle).  ``q``, ``d``: scratch of length >= kk.  Returns the status."""
    cdef Py_ssize_t j
    cdef int st, nn
    cdef double vmax, vmin, value = 0.0, err = 0.0, x, lw, lmax = 0.0, amax = 0.0, tot, pos = 0.0
    cdef bufs_t B
    theta[0] = 0.0
    work[0] = 0.0
    vmax = v[0]
    vmin = v[0]
    for j in range(1, kk):
        if v[j] > vmax:
            vmax = v[j]
        if v[j] < vmin:
            vmin = v[j]
    if vmax <= 0.0:
        st = ST_CLOSED
    elif vmin >= 0.0:                    # S >= 0: E[S_+]/n = E[G]
        for j in range(kk):
            value += p[j] * v[j]
        err = 4.0 * DBL_EPS * kk * value
        st = ST_CLOSED
    else:
        st = ST_FALLBACK
        # exact binomial-mixture sums within their step budget, unless a small enumeration is allowed
        # (the budget also stays below the meet-in-the-middle cost where that path is chosen);
        # enum_ok[1] == 0 (enumerate_max = 0) disables every combinatorial path
        if (kk <= MIX_MAX_ATOMS and enum_ok[1]
                and not (enum_ok[kk] and _enum_leaves(P.n, kk) <= MIX_ENUM_FIRST)):
            st = _mixture(v[:kk], p[:kk], P.n, P.rtol, -1.0, MIX_TRIAL_STEPS, &value, &err, work)   # -1: the budget of _mix_budget
        if (st == ST_FALLBACK and enum_ok[1] and _small_n_chosen(P.n, kk)     # enum_ok[1]: enumeration allowed
                and _mitm_positive_part(&v[0], &p[0], kk, <int>P.n, SMALL_N_CAP, &value, &err) == 0):
            # many atoms at small n: exact meet-in-the-middle over multisets (cheaper than enumerating
            # C(n+k-1, k-1) count vectors or integrating)
            work[0] = 0.0
            value = value / P.n
            err = err / P.n
            st = ST_SMALL_N
        elif (st == ST_FALLBACK and enum_ok[1] and not enum_ok[kk] and increasing and _pruned_chosen(P.n, kk)
                and _mitm_positive_part(&v[0], &p[0], kk, <int>P.n, PRUNED_CAP, &value, &err, True) == 0):
            # otherwise the integral: the pruned meet in the middle when the multisets that can reach a
            # positive sum are few (exact; abandoned within its step cap otherwise)
            work[0] = 0.0
            value = value / P.n
            err = err / P.n
            st = ST_SMALL_N
        elif st == ST_FALLBACK and enum_ok[kk]:
            work[0] = 0.0
            nn = <int>P.n
            for j in range(kk):
                q[j] = log(p[j])
                if fabs(q[j]) > lmax:
                    lmax = fabs(q[j])
                if fabs(v[j]) > amax:
                    amax = fabs(v[j])
            tot = _brute(v[:kk], q[:kk], <int>kk, 0, nn, 0.0, lgamma(nn + 1.0), &pos)
            # leaf weights: log-weight error (n |log p| + log n!) eps; partial sums: n max|v| eps each
            lw = 8.0 * DBL_EPS * (P.n * lmax + lgamma(P.n + 1.0) + kk)
            x = 2.0 * DBL_EPS * P.n * amax * (kk + 1)
            value = tot / P.n
            err = (tot * expm1(lw) + x * pos) / P.n
            st = ST_ENUMERATION
        elif st == ST_FALLBACK:
            value = 0.0
            err = 0.0
            work[0] = 0.0
            memset(&B, 0, sizeof(bufs_t))
            st = _bromwich_atoms(v[:kk], p[:kk], q[:kk], d[:kk], P, &B, &value, &err, theta, work)
            _bufs_free(&B)
    value_out[0] = value
    err_out[0] = err
    return st


cdef int _profile_one(const double[::1] A, const double[::1] Bm, const double[::1] C, double beta, double eps,
                      const unsigned char[::1] enum_ok, const prof_par* P, double[::1] v, double[::1] p,
                      double[::1] q, double[::1] d, double* upper, double* lower, double* theta,
                      double* work) noexcept nogil:
    """``shuffleamp.exact.delta_exact(dec.gparv(eps), n, mode)`` for both modes (finite atomic laws)."""
    cdef Py_ssize_t kk
    cdef int st
    cdef double value = 0.0, err = 0.0, x
    theta[0] = 0.0
    work[0] = 0.0
    if not isfinite(eps):
        return ST_FALLBACK
    kk = _gparv_atoms(A, Bm, C, beta, eps, v, p)
    if kk < 1:
        return ST_FALLBACK
    # the atoms of _gparv_atoms are sorted and exactly equal values merged: strictly increasing
    st = _positive_part_law(v, p, kk, True, enum_ok, P, q, d, &value, &err, theta, work)
    if st < 0:
        return st
    x = value + err
    if x <= 0.0 and v[kk - 1] > 0.0:
        x = 4.9406564584124654e-324        # true value positive but below the float range
    upper[0] = 1.0 if 1.0 < x else x
    x = value - err
    lower[0] = 0.0 if 0.0 > x else x
    return st


cdef void _set_par(prof_par* P, double n, double rtol, double max_work, double tail_work, double t0_factor,
                   double theta_lo, double theta_hi, double central_widths, double tail_const,
                   const double[::1] xg, const double[::1] wg) noexcept:
    """The evaluation constants of ``shuffleamp.exact`` (one filling for every entry point)."""
    P.n = n
    P.rtol = rtol
    P.max_work = max_work
    P.strict_work = 0.0
    P.tail_work = tail_work
    P.t0_factor = t0_factor
    P.theta_lo = theta_lo
    P.theta_hi = theta_hi
    P.central_widths = central_widths
    P.tail_const = tail_const
    P.xg = &xg[0]
    P.wg = &wg[0]
    P.gl_nodes = xg.shape[0]


def profile_bromwich(const double[::1] a, const double[::1] b, const double[::1] c, double beta, double n,
                     const double[::1] eps, const unsigned char[::1] enum_ok, double rtol,
                     const double[::1] xg, const double[::1] wg, double max_work, double tail_work,
                     double t0_factor, double theta_lo, double theta_hi, double central_widths,
                     double tail_const):
    """Certified delta(eps) of one atomic GPARV family at many eps in one nogil loop (the privacy profile).

    For each ``eps[i]``: the GPARV :math:`G_\\varepsilon` with atoms :math:`(a_j - e^{\\varepsilon} b_j)/c_j`
    w.p. :math:`c_j` and 0 w.p. ``beta``, and :math:`\\delta = \\tfrac1n E[(G_1+\\dots+G_n)_+]` evaluated
    exactly as ``shuffleamp.exact.delta_exact`` does for finite atomic laws (closed cases, multinomial
    enumeration at small n, Bromwich integral with its certified error bound, Chernoff and trivial
    bounds), both modes at once.  The epsilons are spread over threads by :func:`num_threads`.

    Parameters
    ----------
    a, b, c : float64[::1], shape (K,)
        Decomposition masses (``c > 0``).
    beta : float
        Left-over mass (the atom at 0).
    n : float
        Number of users (an integer value).
    eps : float64[::1], shape (m,)
        Central epsilons (nats).
    enum_ok : uint8[::1], shape (K + 2,)
        ``enum_ok[k]`` is 1 when a law with ``k`` atoms is to be enumerated.
    rtol : float
        Relative accuracy target of the Bromwich evaluation.
    xg, wg : float64[::1], shape (G,)
        Gauss–Legendre nodes and weights on [-1, 1].
    max_work, tail_work, t0_factor, theta_lo, theta_hi, central_widths, tail_const : float
        The constants ``MAX_WORK``, ``TAIL_WORK``, ``T0_FACTOR``, ``THETA_RANGE``, ``CENTRAL_WIDTHS``
        and ``TAIL_CONST`` of :mod:`shuffleamp.exact`.

    Returns
    -------
    upper, lower : float64 ndarray, shape (m,)
        Certified upper and lower bounds on delta (as ``delta_exact(...).delta`` in each mode).
    status : int32 ndarray, shape (m,)
        0 Bromwich integral, 1 Chernoff bound, 2 trivial bound, 3 closed form, 4 enumeration,
        5 binomial-mixture sums, 6 meet-in-the-middle enumeration of multisets (small n, many atoms);
        -1 not handled here, -2 work budget exceeded (the caller evaluates these one by one).
    theta : float64 ndarray, shape (m,)
        Saddle point (0 where not computed).
    nodes : float64 ndarray, shape (m,)
        Integrand and modulus-bound evaluations.
    """
    cdef Py_ssize_t m = eps.shape[0], K = a.shape[0], i
    cdef prof_par P
    if xg.shape[0] != wg.shape[0] or b.shape[0] != K or c.shape[0] != K or enum_ok.shape[0] < K + 2:
        raise ValueError("profile_bromwich: inconsistent array lengths")
    _set_par(&P, n, rtol, max_work, tail_work, t0_factor, theta_lo, theta_hi, central_widths, tail_const, xg, wg)
    up_a = np.zeros(m, dtype=np.float64)
    lo_a = np.zeros(m, dtype=np.float64)
    st_a = np.zeros(m, dtype=np.int32)
    th_a = np.zeros(m, dtype=np.float64)
    wk_a = np.zeros(m, dtype=np.float64)
    cdef double[::1] up = up_a, lo = lo_a, th = th_a, wk = wk_a
    cdef int[::1] st = st_a
    cdef double[:, ::1] V = np.empty((m, K + 1)), Pm = np.empty((m, K + 1))
    cdef double[:, ::1] Q = np.empty((m, K + 1)), D = np.empty((m, K + 1))
    # a few hundred integrand evaluations of K + 1 atoms per epsilon
    cdef int nth = _num_threads(<double>m * <double>(K + 1) * 256.0)
    with nogil:
        for i in prange(m, schedule="dynamic", chunksize=8, num_threads=nth):
            st[i] = _profile_one(a, b, c, beta, eps[i], enum_ok, &P, V[i], Pm[i], Q[i], D[i],
                                 &up[i], &lo[i], &th[i], &wk[i])
    return up_a, lo_a, st_a, th_a, wk_a


def positive_part(const double[::1] values, const double[::1] probs, double n,
                  const unsigned char[::1] enum_ok, double rtol, const double[::1] xg, const double[::1] wg,
                  double max_work, double strict_work, double tail_work, double t0_factor, double theta_lo,
                  double theta_hi, double central_widths, double tail_const):
    """Certified E[(G_1+...+G_n)_+]/n of one finite law: the exact evaluator of ``profile_bromwich`` on given atoms.

    The one implementation of the exact evaluator of finite laws (``_positive_part_law``): closed cases,
    binomial-mixture sums, meet in the middle, multinomial enumeration and the Bromwich integral with its
    certified error bound (Chernoff and trivial bounds out of range), chosen by the same rule as in
    ``profile_bromwich``.  Releases the GIL.

    Parameters
    ----------
    values, probs : float64[::1], shape (K,)
        Atoms and masses (positive, summing to 1).  The pruned meet in the middle is used only when the
        atoms are strictly increasing.
    n : float
        Number of summands (an integer value), >= 1.
    enum_ok : uint8[::1], shape (K + 2,)
        ``enum_ok[k]`` is 1 when a law with ``k`` atoms is to be enumerated.  ``enum_ok[1] == 0`` disables the
        binomial-mixture sums and both meets in the middle; the multinomial enumeration then runs only where
        ``enum_ok[K] == 1`` (the library's vectors, ``shuffleamp.exact._enum_ok``, are 0 from ``enum_ok[1]`` on
        when they are 0 there, so ``enum_ok[1] == 0`` disables every combinatorial path; a vector with
        ``enum_ok[1] == 0`` and ``enum_ok[K] == 1`` runs the multinomial enumeration alone, status 4).
    rtol : float
        Relative accuracy target.
    xg, wg : float64[::1], shape (G,)
        Gauss–Legendre nodes and weights on [-1, 1].
    max_work : float
        Work cap (atom x frequency evaluations) of the Bromwich integral (status -2 beyond).
    strict_work : float
        An explicit work cap (> 0; 0: none): refuse before integrating when the central panels alone exceed it,
        or before kept cells would exceed ``max_work`` (status -3, ``work`` = the integrand nodes needed).
    tail_work, t0_factor, theta_lo, theta_hi, central_widths, tail_const : float
        As in :func:`profile_bromwich`.

    Returns
    -------
    (int, float, float, float, float)
        Status (as :func:`profile_bromwich`; -3 see ``strict_work``), value, error bound (value - err <=
        E[S_+]/n <= value + err), saddle point θ (0 where not computed) and work (nodes, or mixture steps).
    """
    cdef Py_ssize_t k = values.shape[0], j
    cdef prof_par P
    cdef double value = 0.0, err = 0.0, theta = 0.0, work = 0.0
    cdef bint increasing = True
    cdef int st
    if probs.shape[0] != k or k < 1 or enum_ok.shape[0] < k + 2 or xg.shape[0] != wg.shape[0]:
        raise ValueError("positive_part: inconsistent array lengths")
    for j in range(1, k):
        if not (values[j] > values[j - 1]):
            increasing = False
    _set_par(&P, n, rtol, max_work, tail_work, t0_factor, theta_lo, theta_hi, central_widths, tail_const, xg, wg)
    P.strict_work = strict_work
    cdef double[::1] q = np.empty(k), d = np.empty(k)
    with nogil:
        st = _positive_part_law(values, probs, k, increasing, enum_ok, &P, q, d, &value, &err, &theta, &work)
    return st, value, err, theta, work


# --------------------------------------------------------------------------- epsilon search
# The epsilon(delta) search of the optimal bound (``shuffleamp.search.search_families``) for atomic
# decompositions in one nogil call: every certified evaluation is ``_profile_one`` (the compiled exact
# evaluator), the first point comes from the saddle-point estimate computed here, and the upper answer is the
# certified chord root of a delta-bound convex in x = e^eps (``_chord_root``).  The certified formulas
# (``_chord_root``, ``_convexity_lower``, ``_near_hi_walk``) are the ones the Python search of families
# evaluated in Python calls (``chord_root``, ``convexity_lower``, ``near_hi_walk``).  Anything unusual returns
# a "not handled" status and the Python search runs (seeded with the points evaluated here).
from scipy.special.cython_special cimport log_ndtr

DEF COARSE_MAX_STEPS = 24   # coarse points of one chord search of the coarse placement
DEF COARSE_MIN_GAIN = 4.0   # the coarse placement's second round needs a default evaluation >= 4x a coarse one
DEF COARSE_FIRST_GAP = 1e-4 # the first round's coarse chord gap (its ratio is a prior: a loose placement)
DEF COARSE_MARGIN = 1e-3    # the coarse placement's second round aims at target (1 - COARSE_MARGIN)
DEF SR_DONE = 0           # both sides found
DEF SR_NOT_ZERO = 1       # the certified delta at eps_hi is above the target: no feasible point
DEF SR_EVAL = 2           # an evaluation was not handled by _profile_one (status < 0)
DEF SR_NO_CONVERGENCE = 3 # no converged bracket within the point cap
DEF SR_WORK = 4           # the work cap of the whole search was reached
DEF MAX_SEARCH_POINTS = 48


cdef double _log_saddle_estimate(const double[::1] v, const double[::1] p, double n) noexcept nogil:
    """The saddle-point estimate of delta (the one implementation; uncertified, it only places searches): log of an
    estimate of E[(G_1+...+G_n)_+] / n for the finite law of atoms ``v`` (any order, at least one positive) with
    masses ``p`` (positive, summing to one).  With theta solving n K'(theta) = 2 / theta (``_saddle_point``), the
    tilted sum is taken as N(mu, s^2), mu = n K'(theta), s^2 = n K''(theta), and
    int_0^inf x e^{-theta x} N(x; mu, s^2) dx = e^{-theta mu + theta^2 s^2 / 2} (m Phi(m/s) + s phi(m/s)),
    m = mu - theta s^2.  Not capped at 0 (the callers cap)."""
    cdef double th, m1, v1, nK, mu, s2, s, mm, z, inner, log_inner
    _saddle_point(v, p, n, &th, &m1, &v1)
    nK = n * _log_mgf(v, p, th)
    mu = n * m1
    s2 = n * v1
    s = sqrt(s2 if s2 > 1e-300 else 1e-300)
    mm = mu - th * s2
    z = mm / s
    # m Phi(z) + s phi(z) = s (z Phi(z) + phi(z)); its log, stably for negative z
    if z > -30.0:
        inner = z * exp(log_ndtr(z)) + exp(-0.5 * z * z) / sqrt(2.0 * M_PI)
        log_inner = log(inner if inner > 1e-300 else 1e-300)
    else:                   # z Phi(z) + phi(z) ~ phi(z) / z^2
        log_inner = -0.5 * z * z - 0.5 * log(2.0 * M_PI) - 2.0 * log(-z)
    return nK - th * mu + 0.5 * th * th * s2 + log(s) + log_inner - log(n)


def log_saddle_estimate(const double[::1] v, const double[::1] p, double n):
    """log of the saddle-point estimate of E[(G_1+...+G_n)_+] / n (``_log_saddle_estimate``, the one implementation;
    uncertified: it only places searches).  The production entry point of ``shuffleamp.fft_engine.saddle_estimate``.

    Parameters
    ----------
    v, p : float64[::1], shape (K,)
        Atoms (any order, at least one positive) and masses (positive, summing to one).
    n : float
        Number of summands, >= 1.

    Returns
    -------
    float
        The log estimate (not capped at 0).
    """
    cdef double out
    if p.shape[0] != v.shape[0] or v.shape[0] < 1:
        raise ValueError("log_saddle_estimate: inconsistent array lengths")
    with nogil:
        out = _log_saddle_estimate(v, p, n)
    return out


cdef double _log_estimate_one(const double[::1] A, const double[::1] Bm, const double[::1] C, double beta,
                              double eps, double n, double[::1] v, double[::1] p) noexcept nogil:
    """``_log_saddle_estimate`` of ``dec.gparv(eps)`` for an atomic decomposition, capped at 0 (-inf without a
    positive atom, NaN if the atoms are not finite).  An uncertified estimate."""
    cdef Py_ssize_t kk
    cdef double log_val
    kk = _gparv_atoms(A, Bm, C, beta, eps, v, p)
    if kk < 1:
        return NAN
    if v[kk - 1] <= 0.0:
        return -INFINITY
    log_val = _log_saddle_estimate(v[:kk], p[:kk], n)
    return log_val if log_val < 0.0 else 0.0


cdef double _log_estimate(const double[::1] A, const double[::1] Bm, const double[::1] C, const double[::1] beta,
                          const Py_ssize_t[::1] off, double eps, double n, double[::1] v,
                          double[::1] p) noexcept nogil:
    """Largest log saddle-point estimate over the packed families (``bounds.estimator``)."""
    cdef Py_ssize_t f
    cdef double best = -INFINITY, x
    for f in range(beta.shape[0]):
        x = _log_estimate_one(A[off[f]:off[f + 1]], Bm[off[f]:off[f + 1]], C[off[f]:off[f + 1]], beta[f], eps, n,
                              v, p)
        if x != x:
            return NAN
        if x > best:
            best = x
    return best


cdef double _estimate_root(const double[::1] A, const double[::1] Bm, const double[::1] C, const double[::1] beta,
                           const Py_ssize_t[::1] off, double n, double target, double hi, double[::1] v,
                           double[::1] p, double* slope) noexcept nogil:
    """Root in (0, hi) of the log estimate minus log target (Illinois regula falsi, bisection where a side
    is -inf); 0 when the estimate is already below the target at 0, NaN when it is above it at ``hi``.  ``slope`` receives -d log estimate / d eps there."""
    cdef double a = 0.0, b = hi, fa, fb, c, fc, lt = log(target)
    cdef int it, side = 0
    slope[0] = NAN
    fa = _log_estimate(A, Bm, C, beta, off, a, n, v, p) - lt
    fb = _log_estimate(A, Bm, C, beta, off, b, n, v, p) - lt
    if fa <= 0.0:
        return 0.0          # the estimate is below the target already at eps = 0: try eps = 0 first
    if not (fb < 0.0):
        return NAN
    for it in range(200):
        if isfinite(fa) and isfinite(fb):
            c = b - fb * (b - a) / (fb - fa)
            if not (c > a and c < b):
                c = 0.5 * (a + b)
        else:
            c = 0.5 * (a + b)
        fc = _log_estimate(A, Bm, C, beta, off, c, n, v, p) - lt
        if fc != fc:
            return NAN
        if fc > 0.0:
            a, fa = c, fc
            if side == 1 and isfinite(fb):
                fb *= 0.5
            side = 1
        else:
            b, fb = c, fc
            if side == -1 and isfinite(fa):
                fa *= 0.5
            side = -1
        if b - a <= 1e-9 * hi or fc == 0.0:
            break
    c = 0.5 * (a + b)
    # slope from two nearby points (the Illinois halving spoils fa / fb)
    fa = _log_estimate(A, Bm, C, beta, off, c * (1.0 - 1e-4), n, v, p)
    fb = _log_estimate(A, Bm, C, beta, off, c * (1.0 + 1e-4), n, v, p)
    if isfinite(fa) and isfinite(fb) and fa > fb:
        slope[0] = (fa - fb) / (2e-4 * c)
    return c


DEF ST_SKIPPED = 20       # epsilon_search: not evaluated, certified below the maximum (_family_bound)
DEF SKIP_CHERNOFF_MAX_N = 1e4   # epsilon_search: Chernoff bounds in the skip rule below this n


cdef double _slope_bound(const double[::1] Bm, const double[::1] C, double beta) noexcept nogil:
    """Upper bound on -d delta / d x (x = e^eps) of one family: (sum_j b_j) / (sum_j c_j + beta), rounded up.

    delta(x) = E[(G_1 + ... + G_n)_+] / n with G = (a_j - x b_j) / c_j w.p. c_j / s (s = sum c + beta, the
    normalisation of ``_gparv_atoms``) and 0 otherwise; lowering x by h raises each G_i by h b_J / c_J >= 0,
    so (S + h T)_+ <= S_+ + h T gives delta(x - h) <= delta(x) + h E[T] / n = delta(x) + h sum_j b_j / s.
    NaN when some b_j < 0 (delta need not be monotone then: no skipping for that family)."""
    cdef Py_ssize_t j
    cdef double sb = 0.0, sc = beta
    for j in range(Bm.shape[0]):
        if not (Bm[j] >= 0.0) or not (C[j] > 0.0):
            return NAN
        sb += Bm[j]
        sc += C[j]
    return sb / sc * (1.0 + 64.0 * DBL_EPS * (Bm.shape[0] + 2))


cdef double _chernoff_family(const double[::1] A, const double[::1] Bm, const double[::1] C, double beta,
                             double eps, double n, double[::1] v, double[::1] p) noexcept nogil:
    """Certified Chernoff bound on one family's delta at ``eps``: E[S_+] / n <= e^{n K(theta)} / (e theta n) for
    every theta > 0 (s_+ <= e^{theta s - 1} / theta), at the saddle point of :func:`_saddle_point`; 0 without a
    positive atom; +inf when not available.  Rounded up: the exponent gets 16 (k + 4) ulps of
    1 + |n K| + n theta max|v| + |log(theta n)| (the rounding of ``_log_mgf`` is a few ulps of theta max|v| per
    atom)."""
    cdef Py_ssize_t kk, j
    cdef double th, m1, m2, K, lb, vmax = 0.0, x
    kk = _gparv_atoms(A, Bm, C, beta, eps, v, p)
    if kk < 1:
        return INFINITY
    if v[kk - 1] <= 0.0:
        return 0.0
    if v[0] >= 0.0:
        return INFINITY           # no negative atom: closed form, evaluated directly
    _saddle_point(v[:kk], p[:kk], n, &th, &m1, &m2)
    if not (th > 0.0 and isfinite(th)):
        return INFINITY
    for j in range(kk):
        vmax = max(vmax, fabs(v[j]))
    K = _log_mgf(v[:kk], p[:kk], th)
    lb = n * K - 1.0 - log(th * n)
    if not isfinite(lb):
        return INFINITY
    lb += 16.0 * DBL_EPS * (kk + 4) * (1.0 + fabs(n * K) + n * th * vmax + fabs(log(th * n)))
    x = exp(lb)
    return x if x < 1.0 else 1.0


cdef double _family_bound(const double[:, ::1] Uh, const double* Eh, int mh, Py_ssize_t f, double eps,
                          double sb) noexcept nogil:
    """Certified upper bound on family f's delta at ``eps`` from its certified upper bounds ``Uh[i, f]`` at
    the evaluated points ``Eh[i]`` (i < mh): delta is non-increasing in eps (points below eps give
    Uh[i, f]) and, above eps, delta(x) <= delta(x_i) + (x_i - x) sb (:func:`_slope_bound`, x = e^eps).
    +inf without history.  Rounded up (relative 1e-12 and a few ulps of
    e^eps_i)."""
    cdef int i
    cdef double best = INFINITY, x = exp(eps), xi, y, ei
    if sb != sb:
        return INFINITY
    for i in range(mh):
        y = Uh[i, f]
        ei = Eh[i]
        if not (y >= 0.0):
            continue
        if ei > eps:
            xi = exp(ei)
            y = y + ((xi - x) + 8.0 * DBL_EPS * xi) * sb
        if y < best:
            best = y
    if best < INFINITY:
        best = best * (1.0 + 1e-12) + 1e-300
    return best


cdef int _search_eval(const double[::1] A, const double[::1] Bm, const double[::1] C, const double[::1] beta,
                      const Py_ssize_t[::1] off, double eps, const unsigned char[::1] enum_ok, const prof_par* P,
                      double[::1] v, double[::1] p, double[::1] q, double[::1] d, double[::1] Uf, double[::1] Lf,
                      int[::1] St, double[::1] Th, double[::1] Nd, int lower_side, double* value,
                      double* work, double* nodes, const double[:, ::1] Uh, const double* Eh, int mh,
                      const double[::1] sb, double[::1] bnd, Py_ssize_t[::1] order,
                      int chernoff, double skip_below=INFINITY, Py_ssize_t only=-1) noexcept nogil:
    """Certified delta of every packed family at ``eps`` (``_profile_one``); ``value`` = the maximum of
    the upper bounds (or of the lower bounds when ``lower_side``), ``nodes`` those of the maximiser (first
    maximum, as ``bounds.max_delta``).  Returns the first negative ``_profile_one`` status, else 0.

    Upper side with a history (``mh`` > 0 earlier points ``Eh`` of the same families, upper bounds ``Uh``)
    and/or ``chernoff`` (certified Chernoff bounds at ``eps``, :func:`_chernoff_family`): families are
    evaluated by decreasing certified bound (:func:`_family_bound`, the smaller of both), and a family whose
    bound is below the largest value evaluated so far is not evaluated (status ``ST_SKIPPED``, ``Uf`` = that
    bound, ``Lf`` = 0): it cannot be the maximum, so ``value`` is the certified maximum over every family.

    Lower side with a history (upper bounds ``Uh`` of the same lower-bound datasets) and/or ``chernoff``
    (for datasets whose delta is non-increasing in eps: finite slope bound ``sb``): a dataset is not
    evaluated when its bound is below the largest lower value so far *and* at most ``skip_below`` (the
    search's target; the upper side passes +inf).  Its lower value there cannot be the maximum, nor exceed the target (so no convexity
    extension starts from it); and since its bound needs delta non-increasing in eps (finite slope bound),
    its lower value stays <= the target at every larger eps, where its upper value here could serve an
    extension.  So the lower search takes the same steps and returns the same number as with every dataset
    evaluated.

    ``only`` >= 0: that family alone is evaluated; the others are recorded as skipped with an infinite bound (the
    caller certifies them afterwards: :func:`_others_below`)."""
    cdef Py_ssize_t f, nf = beta.shape[0], i, t
    cdef int st, have = 0
    cdef Py_ssize_t ibest = -1
    cdef double best = 0.0, x
    if only >= 0:
        for f in range(nf):
            Uf[f] = INFINITY
            Lf[f] = 0.0
            St[f] = ST_SKIPPED
            Th[f] = 0.0
            Nd[f] = 0.0
        st = _profile_one(A[off[only]:off[only + 1]], Bm[off[only]:off[only + 1]], C[off[only]:off[only + 1]],
                          beta[only], eps, enum_ok, P, v, p, q, d, &Uf[only], &Lf[only], &Th[only], &Nd[only])
        St[only] = st
        work[0] += Nd[only] * (off[only + 1] - off[only] + 1)
        if st < 0:
            return st
        value[0] = Lf[only] if lower_side else Uf[only]
        nodes[0] = Nd[only]
        return 0
    for f in range(nf):
        bnd[f] = INFINITY
        if nf > 1:
            if mh > 0:
                bnd[f] = _family_bound(Uh, Eh, mh, f, eps, sb[f])
            if chernoff and (not lower_side or sb[f] == sb[f]):
                x = _chernoff_family(A[off[f]:off[f + 1]], Bm[off[f]:off[f + 1]], C[off[f]:off[f + 1]], beta[f],
                                     eps, P.n, v, p)
                if x < bnd[f]:
                    bnd[f] = x
        # insertion sort by decreasing bound (stable: index order among equal bounds, e.g. no history)
        i = f
        while i > 0 and bnd[order[i - 1]] < bnd[f]:
            order[i] = order[i - 1]
            i -= 1
        order[i] = f
    for t in range(nf):
        f = order[t]
        if have and bnd[f] < best and bnd[f] <= skip_below:
            # certified: delta_f(eps) <= bnd[f] < best (upper side: so for the remaining families, in this order)
            Uf[f] = bnd[f]
            Lf[f] = 0.0
            St[f] = ST_SKIPPED
            Th[f] = 0.0
            Nd[f] = 0.0
            continue
        st = _profile_one(A[off[f]:off[f + 1]], Bm[off[f]:off[f + 1]], C[off[f]:off[f + 1]], beta[f], eps,
                          enum_ok, P, v, p, q, d, &Uf[f], &Lf[f], &Th[f], &Nd[f])
        St[f] = st
        work[0] += Nd[f] * (off[f + 1] - off[f] + 1)
        if st < 0:
            return st
        x = Lf[f] if lower_side else Uf[f]
        if not have or x > best or (x == best and f < ibest):
            best = x
            ibest = f
            nodes[0] = Nd[f]
        have = 1
    value[0] = best
    return 0


cdef void _chord_root(const double* E, const double* V, int m, double t, double* eps_c, double* eps_e,
                      int* ib_out, int* io_out, bint feasible_side=True) noexcept nogil:
    """The certified chord root over the points (E, V) of a delta-bound convex in x = e^eps: ``eps_c`` between
    the largest infeasible point and the next feasible one, and the estimate ``eps_e`` of the lowest root
    (secant of the two infeasible points below it extended right, and with ``feasible_side`` of the two
    feasible points above it extended left: both lie below a convex function there).  ib/io = -1 if no
    bracket.  The one implementation of the chord root (``chord_root`` for the Python search)."""
    cdef int i, ib = -1, io = -1, ip = -1, io2 = -1
    cdef double xb, xo, vb, vo, xc, ec, ee, xp, vp, xe, xo2, vo2
    for i in range(m):
        if V[i] > t and (ib < 0 or E[i] > E[ib]):
            ib = i
    ib_out[0] = ib
    io_out[0] = -1
    if ib < 0:
        return
    for i in range(m):
        if E[i] > E[ib] and V[i] <= t and (io < 0 or E[i] < E[io]):
            io = i
    io_out[0] = io
    if io < 0:
        return
    xb = exp(E[ib])
    xo = exp(E[io])
    vb = V[ib]
    vo = V[io]
    xc = xb + (vb - t) / (vb - vo) * (xo - xb)
    # rounding of the chord root: move it right (towards the feasible side) by a few ulps of the data
    xc = xc + 1e-12 * (xo - xb) + 8.0 * DBL_EPS * xo
    if xc > xo:
        xc = xo
    ec = log(xc) * (1.0 + 4.0 * DBL_EPS) + 1e-300
    if ec > E[io]:
        ec = E[io]
    if ec < E[ib]:
        ec = E[ib]
    for i in range(m):
        if E[i] < E[ib] and (ip < 0 or E[i] > E[ip]):
            ip = i
        if E[i] > E[io] and (io2 < 0 or E[i] < E[io2]):
            io2 = i
    ee = E[ib]
    if ip >= 0:
        xp = exp(E[ip])
        vp = V[ip]
        if vp > vb:
            xe = xb + (vb - t) * (xb - xp) / (vp - vb)
            xe = log(xe)
            if xe < E[ib]:
                xe = E[ib]
            ee = xe if xe < ec else ec
    if io2 >= 0 and feasible_side:
        xo2 = exp(E[io2])
        vo2 = V[io2]
        if vo > vo2:
            xe = xo - (t - vo) * (xo2 - xo) / (vo - vo2)
            if xe > 0.0:
                xe = log(xe)
                if xe < E[ib]:
                    xe = E[ib]
                if xe > ec:
                    xe = ec
                if xe > ee:
                    ee = xe
    eps_c[0] = ec
    eps_e[0] = ee


cdef int _near_hi_walk(double eps_hi, double g, double* walk, int cap) noexcept nogil:
    """Points of the walk towards ``eps_hi`` when the estimated root ``g`` is within 2% of e^{eps_hi} (else none):
    x = e^{eps_hi} - u for u = 0.02 e^{eps_hi}, divided by 8 while above e^{eps_hi} - e^g (at most ``cap``).
    Near eps_hi (small n, small delta) an evaluation costs ~ 1 / (e^{eps_hi} - e^eps): the far points are cheap
    and a nearly linear delta(x) converges on a few of them.  Returns the number of points."""
    cdef double Ebig = exp(eps_hi), ug, u
    cdef int nwalk = 0
    ug = Ebig - exp(g)
    u = 0.02 * Ebig
    if ug < u:
        while u > ug and Ebig - u > 1.0 and nwalk < cap:
            walk[nwalk] = log(Ebig - u)
            nwalk += 1
            u /= 8.0
    return nwalk


cdef double _convexity_lower(double xp, double Up, double xb, double Lb, double target, double eps_up) noexcept nogil:
    """Certified lower epsilon from the convexity of a dataset's delta_L in x = e^eps: with a certified lower
    value Lb <= delta_L(xb) > target and an upper value Up >= delta_L(xp) (Up > Lb) at xp < xb, the line through
    them stays below delta_L beyond xb, so the true root lies above where it crosses ``target`` (rounded down,
    at most ``eps_up``)."""
    cdef double xl, el
    xl = xb + (Lb - target) / (Up - Lb) * (xb - xp)
    xl = xl - 1e-12 * (xb - xp) - 8.0 * DBL_EPS * xl
    if xl < xb:
        xl = xb
    el = log(xl) * (1.0 - 4.0 * DBL_EPS)
    if el > eps_up:
        el = eps_up
    return el


def chord_root(const double[::1] E, const double[::1] V, double target, bint feasible_side=True):
    """The certified chord root of evaluated points (E, V) of a delta-bound convex in x = e^eps (``_chord_root``).

    Parameters
    ----------
    E, V : float64[::1], shape (m,)
        Evaluated epsilons (any order) and certified upper deltas.
    target : float
        Target delta.
    feasible_side : bool
        Also estimate the lowest root from the two feasible points above the bracket (see ``_chord_root``).

    Returns
    -------
    (float, float, int, int)
        The certified chord root, the estimate of the lowest root, and the indices of the infeasible and
        feasible ends (-1 when no crossing is bracketed; then the epsilons are NaN).
    """
    cdef double ec = NAN, ee = NAN
    cdef int ib = -1, io = -1
    if V.shape[0] != E.shape[0]:
        raise ValueError("chord_root: E and V differ in length")
    if E.shape[0]:
        _chord_root(&E[0], &V[0], <int>E.shape[0], target, &ec, &ee, &ib, &io, feasible_side)
    if ib < 0 or io < 0:
        return NAN, NAN, ib, io
    return ec, ee, ib, io


def convexity_lower(double xp, double Up, double xb, double Lb, double target, double eps_up):
    """``_convexity_lower``: the certified lower epsilon of a dataset from its lower value ``Lb`` at ``xb`` and an
    upper value ``Up`` of its delta at ``xp`` < ``xb`` (x = e^eps; needs Up > Lb > target)."""
    if not (Up > Lb and xp < xb):
        raise ValueError("convexity_lower: needs Up > Lb and xp < xb")
    return _convexity_lower(xp, Up, xb, Lb, target, eps_up)


def near_hi_walk(double eps_hi, double g):
    """``_near_hi_walk``: the walk towards ``eps_hi`` from the estimated root ``g`` (a list of epsilons)."""
    cdef double walk[64]
    cdef int m = _near_hi_walk(eps_hi, g, walk, 64)
    return [walk[i] for i in range(m)]


cdef void _nearest_two(const double* V, int m, double lt, int* j1, int* j2) noexcept nogil:
    """Indices of the two positive values of V whose log is nearest ``lt`` (nearest first; -1 if missing)."""
    cdef int i, i1 = -1, i2 = -1
    cdef double x
    for i in range(m):
        if V[i] > 0.0:
            x = fabs(log(V[i]) - lt)
            if i1 < 0 or x < fabs(log(V[i1]) - lt):
                i2 = i1
                i1 = i
            elif i2 < 0 or x < fabs(log(V[i2]) - lt):
                i2 = i
    j1[0] = i1
    j2[0] = i2


cdef double _secant_root(const double* E, const double* V, int m, double t) noexcept nogil:
    """Root of the secant of log V through the two points whose V is nearest t, when both are within 1% of
    t (an estimate of the root, used only to decide that the lower search is tight); NaN otherwise."""
    cdef int i1 = -1, i2 = -1
    cdef double lt = log(t)
    _nearest_two(V, m, lt, &i1, &i2)
    if i1 < 0 or i2 < 0 or fabs(log(V[i2]) - lt) > 0.01 or log(V[i1]) == log(V[i2]):
        return NAN
    return E[i1] + (lt - log(V[i1])) * (E[i2] - E[i1]) / (log(V[i2]) - log(V[i1]))


cdef double _next_point(const double* E, const double* V, int m, double t, double b, double o, double slope,
                        double rel_tol, double aim, int* stall, int has_b, int has_o) noexcept nogil:
    """Next evaluation point inside the bracket (b, o): secant of log V through the two points whose log V
    is nearest log t, safeguarded by bisection (outside the bracket, or after three steps that did not halve
    it), nudged by ``aim * rel_tol`` relative towards the side the caller wants and away from duplicates."""
    cdef int i, i1 = -1, i2 = -1, near = -1
    cdef double lt = log(t), r, dist, dmin = INFINITY, x, xb, xo
    _nearest_two(V, m, lt, &i1, &i2)
    r = NAN
    if i1 >= 0 and i2 >= 0 and log(V[i1]) != log(V[i2]):
        r = E[i1] + (lt - log(V[i1])) * (E[i2] - E[i1]) / (log(V[i2]) - log(V[i1]))
    elif i1 >= 0 and slope > 0.0:
        r = E[i1] + (log(V[i1]) - lt) / slope
    if i1 >= 0 and r == r and not (has_b and has_o):
        # one-sided so far: overshoot the predicted root by 10% of the step, to bracket it
        if not has_b:
            r = r - 0.1 * fabs(r - E[i1])
        else:
            r = r + 0.1 * fabs(r - E[i1])
    if not has_b and r == r and r <= b:
        # the secant of log V reaches the target only below the search range: try its left end
        return b
    if not (r > b and r < o) or stall[0] >= 3:
        # chord root in x between the bracket ends when the feasible end has V = 0, else the midpoint
        r = 0.5 * (b + o)
        stall[0] = 0
    r = r * (1.0 + aim * rel_tol)
    for i in range(m):
        dist = fabs(E[i] - r)
        if dist < dmin:
            dmin = dist
            near = i
    if near >= 0 and dmin < 0.25 * rel_tol * fabs(r):
        r = E[near] + (0.5 if V[near] > t else -0.5) * rel_tol * fabs(E[near])
    if not (r > b and r < o):
        r = 0.5 * (b + o)
    if not has_b and r < 1e-9 * o:
        r = 0.0
    return r


cdef inline int _chord_step(const double* E, const double* V, int m, double t, int ib, double o, int has_o,
                            double slope, double rel_tol, double aim, int* stall, double* prev_width,
                            double* x_out) noexcept nogil:
    """The next point of a chord search over the evaluated points (E, V)[:m] for the level ``t`` (the one step of
    the upper search, the lower search and the coarse placement): with an infeasible end ``ib`` >= 0, inside
    (E[ib], ``o``) -- ``o`` the next feasible point, or with ``has_o`` = 0 the search's right end -- counting a
    stall when the bracket did not halve (``prev_width``); without one, left of the smallest point
    (:func:`_next_point`, nudged by ``aim``).  Sets ``x_out``; returns 1 when that point repeats an evaluated one
    (the search makes no progress), else 0."""
    cdef int i, j
    cdef double width, x
    if ib >= 0:
        width = o - E[ib]
        if width > 0.5 * prev_width[0]:
            stall[0] += 1
        else:
            stall[0] = 0
        prev_width[0] = width
        x = _next_point(E, V, m, t, E[ib], o, slope, rel_tol, aim, stall, 1, has_o)
    else:
        j = 0
        for i in range(m):
            if E[i] < E[j]:
                j = i
        x = _next_point(E, V, m, t, 0.0, E[j], slope, rel_tol, aim, stall, 0, 1)
    x_out[0] = x
    for i in range(m):
        if E[i] == x:
            return 1
    return 0


cdef int _coarse_chord(const double[::1] ua, const double[::1] ub, const double[::1] uc, const double[::1] ubeta,
                       const Py_ssize_t[::1] uoff, const unsigned char[::1] enum_ok, const prof_par* Pc,
                       double[::1] v, double[::1] p, double[::1] q, double[::1] d, double[::1] cE, double[::1] cV,
                       double[:, ::1] cU, double[:, ::1] cL, int[:, ::1] cS, double[:, ::1] cT, double[:, ::1] cNd,
                       double[::1] cN, int* nc, double tc, double eps_hi, double rel_tol, double total_work,
                       double slope, double* work, double* ec_out, int* io_out, const double[::1] usb,
                       double[::1] bnd, Py_ssize_t[::1] order, int use_ch, int skip) noexcept nogil:
    """Chord search on the coarse points (cE, cV)[:nc] (evaluated at ``Pc``'s tolerance) for the level ``tc``,
    placed as the upper search places its points (``_next_point``), until the chord gap is within
    ``rel_tol``: sets the chord root ``ec_out`` and its feasible end ``io_out``; returns 0, or 1 when it gives
    up (point cap, work cap, an evaluation not handled, a repeated point)."""
    cdef int M = <int>cE.shape[0], st, m = nc[0], ib = -1, io = -1, stall = 0, steps = 0
    cdef double x, ec = NAN, ee = NAN, prev_width = INFINITY
    while True:
        _chord_root(&cE[0], &cV[0], m, tc, &ec, &ee, &ib, &io)
        if ib >= 0 and io >= 0 and ec - ee <= max(rel_tol * ec, 1e-12 * eps_hi):
            ec_out[0] = ec
            io_out[0] = io
            return 0
        if m >= M or steps >= COARSE_MAX_STEPS or work[0] > total_work:
            return 1
        if _chord_step(&cE[0], &cV[0], m, tc, ib if io >= 0 else -1, cE[io] if io >= 0 else NAN, 1, slope,
                       rel_tol, 0.3, &stall, &prev_width, &x):
            return 1
        cE[m] = x
        st = _search_eval(ua, ub, uc, ubeta, uoff, x, enum_ok, Pc, v, p, q, d, cU[m], cL[m], cS[m], cT[m], cNd[m],
                          0, &cV[m], work, &cN[m], cU, &cE[0], m if skip else 0, usb, bnd, order, use_ch)
        m += 1
        steps += 1
        nc[0] = m
        if st < 0:
            return 1


cdef double _coarse_place(const double[::1] ua, const double[::1] ub, const double[::1] uc,
                          const double[::1] ubeta, const Py_ssize_t[::1] uoff, const unsigned char[::1] enum_ok,
                          const prof_par* P, const prof_par* Pc, double[::1] v, double[::1] p, double[::1] q,
                          double[::1] d, double[::1] uE, double[::1] uV, double[:, ::1] uU, double[:, ::1] uL,
                          int[:, ::1] uS, double[:, ::1] uT, double[:, ::1] uNd, double[::1] uN, int* nu,
                          double[::1] cE, double[::1] cV, double[:, ::1] cU, double[:, ::1] cL, int[:, ::1] cS,
                          double[:, ::1] cT, double[:, ::1] cNd, double[::1] cN, int* nc, double g, double target,
                          double eps_hi, double rel_tol, double soft_gap, double expensive, double coarse_nodes,
                          double total_work, double slope, double* work, double* nodes_last, double* rho_out,
                          int* status, const double[::1] usb, double[::1] bnd, Py_ssize_t[::1] order, int use_ch,
                          int skip) noexcept nogil:
    """Coarse placement of the upper search's first trial points (``epsilon_search``'s ``coarse_rtol``).

    On entry the upper points (uE, uV)[:nu] hold eps_hi only (nu = 1, evaluated at the default tolerance,
    ``P``).  The estimated root g is evaluated at the coarse tolerance (``Pc``); when that costs at most
    ``coarse_nodes`` integrand nodes, nothing more is done (the search goes on as without coarse points).
    Else two rounds: a chord search on the coarse values (:func:`_coarse_chord`, to a chord gap of
    COARSE_FIRST_GAP relative in the first round, rel_tol in the second) for the level target / rho,
    with rho the ratio of the default-tolerance value to the coarse one -- first its prior
    sqrt(rtol / coarse_rtol) (the Bromwich integral's error bound, which dominates these values, scales so:
    its truncation point grows as rtol^-1/2), then the ratio measured at the first round's point, where the
    coarse value is evaluated too, and the level lowered by COARSE_MARGIN relative -- and an evaluation at the
    default tolerance at its chord root (nudged right by rel_tol / 2), appended to (uE, uV).  The first round's point is
    the answer when its certified delta is <= target and the second round would not move it left by more
    than rel_tol; else the smaller of the two rounds' points whose certified delta is <= target, if the
    second's is and the secant of log delta through both puts the root within the search's tolerance of it
    (rel_tol, or soft_gap after an evaluation of more than ``expensive`` nodes, as the search's own stop).

    The second round runs only when the first round's point costs at least COARSE_MIN_GAIN times as many
    nodes at the default tolerance as at the coarse one.

    Returns the answer, else NaN (the points appended are then ordinary evaluated points of the search).
    Coarse values never certify anything: they only place points.  ``status`` is set to SR_EVAL when an
    evaluation at the default tolerance is not handled."""
    cdef int st, i, j, io = -1, n_u, rnd
    cdef double x, ec = NAN, rho, x_prev = NAN, sl, gap, lev
    # coarse point 0: eps_hi (its certified value: 0 or <= target, a feasible end at every level); point 1: g
    cE[0] = eps_hi
    for j in range(uU.shape[1]):
        cU[0, j] = uU[0, j]
    cV[0] = uV[0]
    cE[1] = g
    st = _search_eval(ua, ub, uc, ubeta, uoff, g, enum_ok, Pc, v, p, q, d, cU[1], cL[1], cS[1], cT[1], cNd[1], 0,
                      &cV[1], work, &cN[1], cU, &cE[0], 1 if skip else 0, usb, bnd, order, use_ch)
    nc[0] = 2
    if st < 0 or not (cN[1] > coarse_nodes):
        return NAN
    rho = sqrt(P.rtol / Pc.rtol)
    for rnd in range(2):
        rho_out[0] = rho
        # the level: target / rho, lowered in the second round by COARSE_MARGIN (relative; the ratio measured at
        # the first round's point drifts by up to ~1e-3 relative over its distance to the root)
        lev = target / rho * (1.0 if rnd == 0 else 1.0 - COARSE_MARGIN)
        if not (cV[0] <= lev):
            return NAN
        if _coarse_chord(ua, ub, uc, ubeta, uoff, enum_ok, Pc, v, p, q, d, cE, cV, cU, cL, cS, cT, cNd, cN, nc,
                         lev, eps_hi, COARSE_FIRST_GAP if rnd == 0 else rel_tol, total_work, slope, work, &ec, &io, usb, bnd, order,
                         use_ch, skip):
            return NAN
        x = ec * (1.0 + 0.5 * rel_tol)
        if not (x < eps_hi):
            x = ec
        n_u = nu[0]
        if rnd == 1 and x - x_prev <= rel_tol * x_prev and x >= x_prev and uV[n_u - 1] <= target:
            # the first round's point is feasible and the second round would not move it left
            return x_prev
        for i in range(n_u):
            if uE[i] == x:
                return NAN
        uE[n_u] = x
        st = _search_eval(ua, ub, uc, ubeta, uoff, x, enum_ok, P, v, p, q, d, uU[n_u], uL[n_u], uS[n_u], uT[n_u],
                          uNd[n_u], 0, &uV[n_u], work, &uN[n_u], uU, &uE[0], n_u if skip else 0, usb, bnd, order,
                          use_ch)
        nodes_last[0] = uN[n_u]
        nu[0] = n_u + 1
        if st < 0:
            status[0] = SR_EVAL
            return NAN
        if rnd == 1:
            if not (uV[n_u] <= target):
                return NAN
            # the smaller of the two rounds' feasible points, when the secant of log delta through both
            # (evaluated at the default tolerance) puts the root within the search's tolerance of it (else the
            # search goes on from these points)
            j = n_u - 1 if (uV[n_u - 1] <= target and x_prev < x) else n_u
            if not (uV[n_u - 1] > 0.0 and uV[n_u] > 0.0 and x_prev != x):
                return NAN
            sl = (log(uV[n_u]) - log(uV[n_u - 1])) / (x - x_prev)
            if not (sl < 0.0):
                return NAN
            gap = (log(target) - log(uV[j])) / (-sl)
            if gap <= max(rel_tol * uE[j], 1e-12 * eps_hi) or (gap <= soft_gap * uE[j] and uN[j] > expensive):
                return uE[j]
            return NAN
        # the ratio at this point: its coarse value (unless it is already a coarse point)
        j = -1
        for i in range(nc[0]):
            if cE[i] == x:
                j = i
        if j < 0:
            j = nc[0]
            if j >= cE.shape[0]:
                return NAN
            cE[j] = x
            st = _search_eval(ua, ub, uc, ubeta, uoff, x, enum_ok, Pc, v, p, q, d, cU[j], cL[j], cS[j], cT[j],
                              cNd[j], 0, &cV[j], work, &cN[j], cU, &cE[0], j if skip else 0, usb, bnd, order,
                              use_ch)
            nc[0] = j + 1
            if st < 0:
                return NAN
        if not (cV[j] > 0.0 and uV[n_u] > 0.0):
            return NAN
        if uN[n_u] < COARSE_MIN_GAIN * cN[j]:
            # coarse evaluations are not much cheaper here: the search goes on at the default tolerance
            return NAN
        rho = uV[n_u] / cV[j]
        x_prev = x
    return NAN


cdef Py_ssize_t _lead_family(const double[::1] A, const double[::1] Bm, const double[::1] C, const double[::1] beta,
                             const Py_ssize_t[::1] off, const double[::1] sb, double eps, double n, double[::1] v,
                             double[::1] p) noexcept nogil:
    """The lower-bound dataset with the largest saddle-point estimate of delta at ``eps`` (uncertified: it only
    chooses which dataset the lower search evaluates first, :func:`_others_below`); -1 when an estimate is not
    finite, a dataset's delta need not be monotone in eps (no finite slope bound) or there is one dataset."""
    cdef Py_ssize_t f, nf = beta.shape[0], lead = -1
    cdef double best = -INFINITY, x
    if nf < 2:
        return -1
    for f in range(nf):
        if sb[f] != sb[f]:
            return -1
        x = _log_estimate_one(A[off[f]:off[f + 1]], Bm[off[f]:off[f + 1]], C[off[f]:off[f + 1]], beta[f], eps, n,
                              v, p)
        if not isfinite(x):
            return -1
        if lead < 0 or x > best:
            best = x
            lead = f
    return lead


cdef int _others_below(const double[::1] A, const double[::1] Bm, const double[::1] C, const double[::1] beta,
                       const Py_ssize_t[::1] off, Py_ssize_t lead, const double[::1] lE, const double[::1] lV,
                       double[:, ::1] lU, double[:, ::1] lL, int[:, ::1] lS, double[:, ::1] lT, double[:, ::1] lNd,
                       int nl, double target, const unsigned char[::1] enum_ok, const unsigned char[::1] enum_none,
                       const prof_par* P, const prof_par* Ps, double[::1] v, double[::1] p, double[::1] q,
                       double[::1] d, double* work) noexcept nogil:
    """After a lower search that evaluated the dataset ``lead`` alone (points lE, its lower values lV): 1 when
    every other dataset is certified to be below it at every point, so that the search over all datasets takes
    the same steps and returns the same number; else 0 (the caller then searches over all of them).

    The lower search reads, at each point, the largest lower value over the datasets (and the integrand nodes
    of its first maximiser), and the convexity extensions from datasets whose lower value exceeds the target.
    A dataset f whose delta is non-increasing in eps (finite slope bound: every b_j >= 0, as
    :func:`_lead_family` requires) with a certified upper value U_f(e_j) at e_j <= e_i has, at point i, a lower
    value L_f(e_i) <= delta_f(e_i) <= delta_f(e_j) <= U_f(e_j).  So U_f(e_j) < lV[i] and U_f(e_j) <= target
    mean that the full search's L_f(e_i) is neither the maximum there nor above the target (no extension
    starts from it; one that would start from the lead reads only the lead's own upper values and the optimal
    bound's).  The points are swept by increasing eps; where the bound carried from the left does not
    hold, f is bounded at the point itself: its certified Chernoff bound, then its Bromwich integral at the
    screening tolerance ``Ps`` (no enumeration or mixture sums: ``enum_none``), then its evaluation of the full
    search itself (``P``, ``enum_ok``), whose lower value is then compared directly (the tie rule of
    :func:`_search_eval`: the first maximum).  Datasets not evaluated at a point are recorded as skipped
    (status ST_SKIPPED, ``lU`` = the bound used, ``lL`` = 0); evaluated ones with their values."""
    cdef Py_ssize_t f, nf = beta.shape[0]
    cdef int idx[MAX_SEARCH_POINTS]
    cdef int i, t, u, st
    cdef double bound, x, U, L, th, nd
    for t in range(nl):
        u = t
        while u > 0 and lE[idx[u - 1]] > lE[t]:
            idx[u] = idx[u - 1]
            u -= 1
        idx[u] = t
    for f in range(nf):
        if f == lead:
            continue
        bound = INFINITY
        for t in range(nl):
            i = idx[t]
            lU[i, f] = INFINITY
            lL[i, f] = 0.0
            lS[i, f] = ST_SKIPPED
            lT[i, f] = 0.0
            lNd[i, f] = 0.0
            if not (bound < lV[i] and bound <= target):
                x = _chernoff_family(A[off[f]:off[f + 1]], Bm[off[f]:off[f + 1]], C[off[f]:off[f + 1]], beta[f],
                                     lE[i], P.n, v, p)
                if x < lV[i] and x <= target:
                    bound = x
                elif Ps.rtol > P.rtol:
                    st = _profile_one(A[off[f]:off[f + 1]], Bm[off[f]:off[f + 1]], C[off[f]:off[f + 1]], beta[f],
                                      lE[i], enum_none, Ps, v, p, q, d, &U, &L, &th, &nd)
                    work[0] += nd * (off[f + 1] - off[f] + 1)
                    if st >= 0 and U < lV[i] and U <= target:
                        bound = U
            if bound < lV[i] and bound <= target:
                lU[i, f] = bound
                continue
            # the full search's own evaluation of f at this point
            st = _profile_one(A[off[f]:off[f + 1]], Bm[off[f]:off[f + 1]], C[off[f]:off[f + 1]], beta[f], lE[i],
                              enum_ok, P, v, p, q, d, &U, &L, &th, &nd)
            work[0] += nd * (off[f + 1] - off[f] + 1)
            if st < 0 or not (L <= target and (L < lV[i] or (L == lV[i] and f > lead))):
                return 0
            lU[i, f] = U
            lL[i, f] = L
            lS[i, f] = st
            lT[i, f] = th
            lNd[i, f] = nd
            bound = U
    return 1


def epsilon_search(const double[::1] ua, const double[::1] ub, const double[::1] uc, const double[::1] ubeta,
                   const Py_ssize_t[::1] uoff, const double[::1] la, const double[::1] lb, const double[::1] lc,
                   const double[::1] lbeta, const Py_ssize_t[::1] loff, double n, double target, double eps_hi,
                   double rel_tol, const unsigned char[::1] enum_ok, double rtol, const double[::1] xg,
                   const double[::1] wg, double max_work, double tail_work, double t0_factor, double theta_lo,
                   double theta_hi, double central_widths, double tail_const, double total_work, double soft_gap,
                   double expensive, int skip=1, int verify_root=1, double coarse_rtol=0.0,
                   double coarse_nodes=INFINITY, Py_ssize_t coarse_atoms=0, double screen_rtol=0.0,
                   double lead_min_n=INFINITY):
    """Certified epsilon(delta) of the optimal bound for atomic decompositions: both searches in one nogil call.

    Upper side: the certified delta* = max over the upper families is convex in x = e^eps and 0 at eps_hi
    (Su, Cheng, Wang, IEEE S&P 2026, Theorem 12: G = (A - e^eps B)/C with B >= 0), so the chord root between
    the largest infeasible evaluated point and the next feasible one is a certified epsilon; the search stops
    when it is within ``rel_tol`` of the estimated lowest root (``shuffleamp.search``).
    Lower side: the largest epsilon at which a lower-bound dataset's certified divergence exceeds the target,
    or the certified convexity extension (``_convexity_lower``) from its lower bound at
    one point and an upper bound of its divergence (its own, or the optimal bound's) at a smaller point.

    Parameters
    ----------
    ua, ub, uc, ubeta, uoff : arrays
        Upper families packed: family f has masses ``ua[uoff[f]:uoff[f+1]]`` (same for ub, uc) and
        left-over mass ``ubeta[f]``.
    la, lb, lc, lbeta, loff : arrays
        Lower-bound families, packed the same way (zero families: no lower search).
    n, target, eps_hi, rel_tol : float
        Users, target delta, right end (eps0), relative tolerance of the answer.
    enum_ok, rtol, xg, wg, max_work, tail_work, t0_factor, theta_lo, theta_hi, central_widths, tail_const
        As :func:`profile_bromwich`.
    total_work : float
        Atom x node evaluations the whole search may spend before returning "not handled".
    soft_gap, expensive : float
        ``bounds.SOFT_GAP`` and ``bounds.EXPENSIVE_NODES``.
    skip : int
        1 (default): at an upper point, a family whose certified bound from its earlier points
        (:func:`_family_bound`: delta non-increasing in eps, slope in e^eps at most sum b / s) is below the
        largest value evaluated there is not evaluated (status 20 in ``u_status``, ``u_U`` holds the bound);
        the maximum is the same certified number; at a lower point, a dataset whose bound from its earlier points
        is below the largest lower value there and at most the target is not evaluated (the same steps and
        number, see :func:`_search_eval`).  0: every family at every point.
        With ``skip`` and n < ``SKIP_CHERNOFF_MAX_N`` (1e4, where one evaluation costs 1e4+ integration nodes)
        the bound is also the family's certified Chernoff bound at the point (:func:`_chernoff_family`), also
        at the first point of the search (near the root it is several times the delta of the lower-bound
        datasets of BLH, RAPPOR and OUE, 3.5-4.5x at n = 1e4..1e7: it sets aside only datasets well below the
        others).  With ``skip``, n >= ``lead_min_n`` and several lower-bound datasets whose delta is
        non-increasing in eps, the lower search first evaluates the dataset with the largest saddle-point
        estimate at its first point alone (:func:`_lead_family`), then certifies that every other dataset is
        below it at every point and never above the target (:func:`_others_below`): the search over all of
        them would then have taken the same steps, so its answer is returned; otherwise that search runs from
        the start.  The same number either way, with the others mostly bounded at one point each.
    verify_root : int
        1 (default): a converged chord root is evaluated directly while evaluations are cheap (at most
        ``expensive`` nodes), so that the upper answer is an evaluated epsilon whose own certified delta is
        <= target (``upper_kind`` 1; a failed check becomes a new infeasible end).  0: the converged chord
        root is returned as it is (``upper_kind`` 2); it is certified by the convexity of delta* in e^eps
        (the chord of two certified upper values lies above delta*), and it is the same number as the
        verified root (one evaluation fewer; the lower search never uses the point at the root, which lies
        above every lower point).
    coarse_rtol, coarse_nodes, coarse_atoms : float, float, int
        ``coarse_rtol`` > 0 (default 0: off): for families of at least ``coarse_atoms`` atoms (the largest),
        when the estimated root (without a walk near eps_hi) costs more than ``coarse_nodes`` integrand nodes
        at the relative tolerance ``coarse_rtol``, the upper search
        places its first trial points with evaluations at that tolerance (cheaper, looser values) and
        evaluates only the placed points at the default tolerance ``rtol`` (:func:`_coarse_place`: two
        points, the second placed with the ratio of both tolerances' values measured at the first).  A placed
        point whose certified delta at ``rtol`` is <= target is the answer (``upper_kind`` 1, an evaluated
        epsilon at the default tolerance); else the placed points are ordinary points of the search, which
        goes on as without ``coarse_rtol``.  The coarse values only place points: no answer, bracket or chord
        uses them (``c_eps``, ``c_value``, ``c_nodes``, ``coarse_ratio`` record them).
    screen_rtol, lead_min_n : float
        The lead dataset's search alone (see ``skip``) from ``lead_min_n`` users on (default: never); below, the
        search over all datasets with the skip rule.  ``screen_rtol``: relative tolerance of the Bromwich
        integral that bounds the other datasets after it (:func:`_others_below`; default 0: not used, the
        Chernoff bound and then the default evaluation bound them).

    Returns
    -------
    dict
        ``status`` (0 handled, > 0 not handled: 1 delta(eps_hi) > target, 2 evaluation not handled, 3 no
        convergence, 4 work cap), ``upper``, ``lower``, the chord / secant records, and the evaluated points
        of both sides (``u_eps``, ``u_U``, ``u_L``, ``u_status``, ``u_theta``, ``u_nodes`` per family;
        ``l_*`` likewise), ``lower_lead`` (the dataset searched alone first, -1 if none) and ``lower_searches``
        (1, or 2 when the lead's search was not certified to be the search over all datasets).
    """
    cdef Py_ssize_t nfu = ubeta.shape[0], nfl = lbeta.shape[0], K = 1, f, i, j
    cdef prof_par P
    if xg.shape[0] != wg.shape[0] or uoff.shape[0] != nfu + 1 or loff.shape[0] != nfl + 1 or nfu < 1:
        raise ValueError("epsilon_search: inconsistent array lengths")
    for f in range(nfu):
        K = max(K, uoff[f + 1] - uoff[f])
    for f in range(nfl):
        K = max(K, loff[f + 1] - loff[f])
    if enum_ok.shape[0] < K + 2:
        raise ValueError("epsilon_search: enum_ok too short")
    _set_par(&P, n, rtol, max_work, tail_work, t0_factor, theta_lo, theta_hi, central_widths, tail_const, xg, wg)
    cdef int M = MAX_SEARCH_POINTS
    ue_a = np.zeros(M); uv_a = np.zeros(M); un_a = np.zeros(M)
    uU_a = np.zeros((M, nfu)); uL_a = np.zeros((M, nfu)); uS_a = np.zeros((M, nfu), dtype=np.int32)
    uT_a = np.zeros((M, nfu)); uN_a = np.zeros((M, nfu))
    le_a = np.zeros(M); lv_a = np.zeros(M); ln_a = np.zeros(M)
    lU_a = np.zeros((M, max(nfl, 1))); lL_a = np.zeros((M, max(nfl, 1)))
    lS_a = np.zeros((M, max(nfl, 1)), dtype=np.int32)
    lT_a = np.zeros((M, max(nfl, 1))); lN_a = np.zeros((M, max(nfl, 1)))
    cdef double[::1] uE = ue_a, uV = uv_a, uN = un_a, lE = le_a, lV = lv_a, lN = ln_a
    cdef double[:, ::1] uU = uU_a, uL = uL_a, uT = uT_a, uNd = uN_a, lU = lU_a, lL = lL_a, lT = lT_a, lNd = lN_a
    cdef int[:, ::1] uS = uS_a, lS = lS_a
    cdef double[::1] v = np.zeros(K + 1), p = np.zeros(K + 1), q = np.zeros(K + 1), d = np.zeros(K + 1)
    cdef double[::1] usb = np.zeros(nfu), lsb = np.zeros(max(nfl, 1)), bnd = np.zeros(max(nfu, nfl))
    cdef int use_ch = 1 if (skip and n < SKIP_CHERNOFF_MAX_N) else 0
    cdef Py_ssize_t[::1] order = np.zeros(max(nfu, nfl), dtype=np.intp)
    cdef int status = SR_DONE, nu = 0, nl = 0, st, ib = -1, io = -1, stall = 0, ipu, k, nwalk = 0, has_ok
    cdef double work = 0.0, g = NAN, slope = NAN, gl = NAN, slope_l = NAN, eps_c = NAN, eps_e = NAN
    cdef double up = NAN, lo = NAN, x, prev_width = INFINITY, lo_best, r_hi, xb, xp
    cdef double el, Up, Lb, sec_p = NAN, sec_b = NAN, sec_Up = NAN, sec_Lb = NAN, nodes_last = 0.0
    cdef double chord_b = NAN, chord_o = NAN, chord_vb = NAN, chord_vo = NAN, lb_c = NAN, lb_e = NAN
    cdef int lo_kind = 0, lo_idx = -1, up_kind = 0, up_idx = -1, conv = 0, ia, ja, checks = 0, verify = 0
    cdef double walk[64]
    cdef double abs_tol = 1e-12 * eps_hi
    # coarse placement (coarse_rtol > 0): points cE, values cV at the tolerance coarse_rtol
    cdef prof_par Pc
    _set_par(&Pc, n, coarse_rtol if coarse_rtol > 0.0 else rtol, max_work, tail_work, t0_factor, theta_lo,
             theta_hi, central_widths, tail_const, xg, wg)
    ce_a = np.zeros(M); cv_a = np.zeros(M); cn_a = np.zeros(M)
    cU_a = np.zeros((M, nfu)); cL_a = np.zeros((M, nfu)); cS_a = np.zeros((M, nfu), dtype=np.int32)
    cT_a = np.zeros((M, nfu)); cN_a = np.zeros((M, nfu))
    cdef double[::1] cE = ce_a, cV = cv_a, cN = cn_a
    cdef double[:, ::1] cU = cU_a, cL = cL_a, cT = cT_a, cNd = cN_a
    cdef int[:, ::1] cS = cS_a
    cdef int nc = 0, cib = -1, cio = -1, cstall = 0, cdone = 0
    # several lower-bound datasets: the others' screening evaluations (_others_below) at the tolerance screen_rtol,
    # Bromwich integral only (enum_none: no enumeration or mixture sums)
    cdef prof_par Ps
    _set_par(&Ps, n, screen_rtol if screen_rtol > rtol else rtol, max_work, tail_work, t0_factor, theta_lo,
             theta_hi, central_widths, tail_const, xg, wg)
    cdef unsigned char[::1] enum_none = np.zeros(K + 2, dtype=np.uint8)
    cdef Py_ssize_t lead = -1, lead_used = -1
    cdef int attempt, lower_runs = 0
    cdef double x0 = NAN, nodes0 = 0.0
    cdef double rho = NAN, tc = NAN, ec = NAN, ee = NAN, cprev = INFINITY
    for f in range(nfu):
        usb[f] = _slope_bound(ub[uoff[f]:uoff[f + 1]], uc[uoff[f]:uoff[f + 1]], ubeta[f])
    for f in range(nfl):
        lsb[f] = _slope_bound(lb[loff[f]:loff[f + 1]], lc[loff[f]:loff[f + 1]], lbeta[f])
    with nogil:
        # ---------------- upper side
        uE[0] = eps_hi
        st = _search_eval(ua, ub, uc, ubeta, uoff, eps_hi, enum_ok, &P, v, p, q, d, uU[0], uL[0], uS[0], uT[0],
                          uNd[0], 0, &uV[0], &work, &uN[0], uU, &uE[0], 0, usb, bnd, order, use_ch)
        nu = 1
        if st < 0:
            status = SR_EVAL
        elif uV[0] > target:
            # (a certified value in (0, target] at eps_hi, e.g. a denormal Chernoff bound of an atom rounded
            # just above 0, is a feasible chord end like any other: the chord needs convexity, not a zero)
            status = SR_NOT_ZERO
        if status == SR_DONE:
            g = _estimate_root(ua, ub, uc, ubeta, uoff, n, target, eps_hi * (1.0 - 1e-15), v, p, &slope)
            if g == g and g > 0.0:
                # near eps_hi (small n, small delta) evaluations cost ~ 1 / (e^{eps_hi} - e^eps): walk in from far,
                # cheap points first
                nwalk = _near_hi_walk(eps_hi, g, walk, 64)
        if (status == SR_DONE and coarse_rtol > 0.0 and K >= coarse_atoms and nwalk == 0 and g == g and g > 0.0
                and g < eps_hi and work <= total_work):
            up = _coarse_place(ua, ub, uc, ubeta, uoff, enum_ok, &P, &Pc, v, p, q, d, uE, uV, uU, uL, uS, uT, uNd,
                               uN, &nu, cE, cV, cU, cL, cS, cT, cNd, cN, &nc, g, target, eps_hi, rel_tol, soft_gap,
                               expensive, coarse_nodes, total_work, slope, &work, &nodes_last, &rho, &status, usb,
                               bnd, order, use_ch, skip)
            if up == up:
                up_kind = 1
                for i in range(nu):
                    if uE[i] == up:
                        up_idx = i
                # the largest infeasible point at the default tolerance (the lower search starts below it)
                for i in range(nu):
                    if uV[i] > target and (chord_b != chord_b or uE[i] > chord_b):
                        chord_b = uE[i]
        k = 0
        while status == SR_DONE and up != up:
            # convergence of the chord
            _chord_root(&uE[0], &uV[0], nu, target, &eps_c, &eps_e, &ib, &io)
            if ib >= 0:
                chord_b = uE[ib]
            if ib >= 0 and io >= 0:
                if uE[io] - eps_e <= max(rel_tol * uE[io], abs_tol):
                    # the feasible end itself is within the tolerance: an evaluated, self-certified answer
                    # (also eps_hi, where delta is certified <= target: near eps0 at tiny delta a direct
                    # evaluation at the chord root can exceed the target by its error bound)
                    up = uE[io]
                    up_kind = 1
                    up_idx = io
                    break
                if (eps_c - eps_e <= max(rel_tol * eps_c, abs_tol)
                        or (eps_c - eps_e <= soft_gap * eps_c and nodes_last > expensive)):
                    # verify the chord root by a direct evaluation while that is cheap, so that the answer is
                    # an evaluated epsilon whose own certified delta is <= target
                    conv = 1
                    if verify_root and nodes_last <= expensive and checks < 4:
                        for i in range(nu):
                            if uE[i] == eps_c:
                                conv = 2
                        if conv == 1:
                            conv = 0
                            checks += 1
                            verify = 1
                    if conv:
                        conv = 1
                        break
            if nu >= M:
                status = SR_NO_CONVERGENCE
                break
            if work > total_work:
                status = SR_WORK
                break
            if verify:
                x = eps_c
            elif k < nwalk:
                x = walk[k]
                k += 1
                if ib >= 0 and io >= 0 and not (x > uE[ib] and x < uE[io]):
                    continue
            elif nu == 1 and g == g and g >= 0.0 and g < eps_hi:
                x = g
            else:
                # (eps_hi is feasible: an infeasible end ib always has its feasible end io)
                if _chord_step(&uE[0], &uV[0], nu, target, ib, uE[io] if io >= 0 else NAN, 1, slope, rel_tol, 0.3,
                               &stall, &prev_width, &x):
                    status = SR_NO_CONVERGENCE
                    break
            uE[nu] = x
            st = _search_eval(ua, ub, uc, ubeta, uoff, x, enum_ok, &P, v, p, q, d, uU[nu], uL[nu], uS[nu], uT[nu],
                              uNd[nu], 0, &uV[nu], &work, &uN[nu], uU, &uE[0], nu if skip else 0, usb, bnd,
                              order, use_ch)
            nodes_last = uN[nu]
            nu += 1
            if st < 0:
                status = SR_EVAL
                break
            if verify and uV[nu - 1] <= target:
                up = x
                up_kind = 1
                up_idx = nu - 1
                break
            verify = 0
            if x == 0.0 and uV[nu - 1] <= target:
                # feasible at eps = 0: the answer is 0 (an evaluated point)
                up = 0.0
                up_kind = 1
                up_idx = nu - 1
                break
        if conv:
            up = eps_c
            up_kind = 2
            chord_o = uE[io]
            chord_vb = uV[ib]
            chord_vo = uV[io]
            up_idx = io
        # ---------------- lower side
        if status == SR_DONE and nfl > 0 and up == up:
            gl = _estimate_root(la, lb, lc, lbeta, loff, n, target, eps_hi * (1.0 - 1e-15), v, p, &slope_l)
            if slope_l > 0.0:
                slope = slope_l
            x0 = chord_b if chord_b == chord_b else up      # the largest infeasible upper point: just below the root
            if gl == gl and g == g and g > 0.0 and gl * (up / g) < x0:
                x0 = gl * (up / g)       # the lower datasets' estimated root, corrected as the upper one was
            nodes0 = nodes_last
            # with several datasets, first the one with the largest estimate alone; when every other one is
            # certified below it at every point (_others_below), that is the search over all of them, step for
            # step; else the search over all of them from the start
            lead = _lead_family(la, lb, lc, lbeta, loff, lsb, x0, n, v, p) if skip and n >= lead_min_n else -1
            lead_used = lead
            for attempt in range(2):
                if attempt == 1:
                    if lead < 0 or (status == SR_DONE and lo == lo
                                    and _others_below(la, lb, lc, lbeta, loff, lead, lE, lV, lU, lL, lS, lT,
                                                      lNd, nl, target, enum_ok, enum_none, &P, &Ps, v, p, q, d,
                                                      &work)):
                        break
                    lead = -1
                    status = SR_DONE
                    nl = 0
                    lo = NAN
                    lo_kind = 0
                    lo_idx = -1
                    sec_p = NAN
                    sec_Up = NAN
                    sec_b = NAN
                    sec_Lb = NAN
                    nodes_last = nodes0
                lower_runs += 1
                has_ok = 0
                stall = 0
                prev_width = INFINITY
                x = x0
                k = 0
                while True:
                    lo_best = -1.0
                    ib = -1
                    io = -1
                    for i in range(nl):
                        if lV[i] > target and (ib < 0 or lE[i] > lE[ib]):
                            ib = i
                    if ib >= 0:
                        lo_best = lE[ib]
                        lo_kind = 1
                        lo_idx = ib
                        for i in range(nl):
                            if lE[i] > lE[ib] and lV[i] <= target and (io < 0 or lE[i] < lE[io]):
                                io = i
                        # certified convexity extensions: lower bound L_f at b, an upper bound of the same
                        # dataset's divergence at p < b (its own upper bound, or the optimal bound's)
                        for i in range(nl):
                            for f in range(nfl):
                                Lb = lL[i, f]
                                if not (Lb > target):
                                    continue
                                xb = exp(lE[i])
                                for j in range(nl + nu):
                                    if j < nl:
                                        if not (lE[j] < lE[i]):
                                            continue
                                        xp = exp(lE[j])
                                        Up = lU[j, f]
                                    else:
                                        if not (uE[j - nl] < lE[i]):
                                            continue
                                        xp = exp(uE[j - nl])
                                        Up = uV[j - nl]
                                    if not (Up > Lb):
                                        continue
                                    el = _convexity_lower(xp, Up, xb, Lb, target, up)
                                    if el > lo_best:
                                        lo_best = el
                                        lo_kind = 2
                                        lo_idx = i
                                        sec_p = log(xp)
                                        sec_Up = Up
                                        sec_b = lE[i]
                                        sec_Lb = Lb
                        # tightness: the root of the lower-bound datasets' delta lies below eps_up, and (an
                        # estimate) below the chord of their lower values between the bracket ends
                        r_hi = up
                        if io >= 0:
                            _chord_root(&lE[0], &lV[0], nl, target, &lb_c, &lb_e, &ia, &ja)
                            if ia >= 0 and ja >= 0 and lb_c < r_hi:
                                r_hi = lb_c
                        x = _secant_root(&lE[0], &lV[0], nl, target)
                        if x == x and x >= lo_best and x < r_hi:
                            r_hi = x
                        if r_hi - lo_best <= max(rel_tol * r_hi, abs_tol) or (
                                r_hi - lo_best <= soft_gap * r_hi and nodes_last > expensive):
                            lo = lo_best
                            break
                    else:
                        # no evaluated point with a lower delta above the target
                        for i in range(nl):
                            if lE[i] == 0.0:
                                lo = 0.0          # even eps = 0 is not certified infeasible: lower bound 0
                                lo_kind = 0
                                lo_idx = i
                        if lo == lo:
                            break
                    if nl >= M:
                        status = SR_NO_CONVERGENCE
                        break
                    if work > total_work:
                        status = SR_WORK
                        break
                    if nl > 0:
                        # the right end: the smallest certified-feasible lower point, else the upper answer
                        if _chord_step(&lE[0], &lV[0], nl, target, ib, up if io < 0 else lE[io], 1 if io >= 0 else 0,
                                       slope, rel_tol, -0.3, &stall, &prev_width, &x):
                            status = SR_NO_CONVERGENCE
                            break
                    lE[nl] = x
                    st = _search_eval(la, lb, lc, lbeta, loff, x, enum_ok, &P, v, p, q, d, lU[nl], lL[nl], lS[nl],
                                      lT[nl], lNd[nl], 1, &lV[nl], &work, &lN[nl], lU, &lE[0], nl if skip else 0, lsb,
                                      bnd, order, skip, target, lead)
                    nodes_last = lN[nl]
                    nl += 1
                    if st < 0:
                        status = SR_EVAL
                        break
    return {"status": status, "upper": up, "upper_kind": up_kind, "upper_index": up_idx,
            "chord": (chord_b, chord_o, chord_vb, chord_vo, eps_e), "lower": lo, "lower_kind": lo_kind,
            "lower_index": lo_idx, "secant": (sec_p, sec_Up, sec_b, sec_Lb), "estimate": g,
            "u_eps": ue_a[:nu], "u_value": uv_a[:nu], "u_U": uU_a[:nu], "u_L": uL_a[:nu], "u_status": uS_a[:nu],
            "u_theta": uT_a[:nu], "u_nodes": uN_a[:nu],
            "l_eps": le_a[:nl], "l_value": lv_a[:nl], "l_U": lU_a[:nl], "l_L": lL_a[:nl], "l_status": lS_a[:nl],
            "l_theta": lT_a[:nl], "l_nodes": lN_a[:nl], "work": work,
            "c_eps": ce_a[:nc], "c_value": cv_a[:nc], "c_nodes": cn_a[:nc], "coarse_ratio": rho,
            "lower_lead": lead_used, "lower_searches": lower_runs}


def estimate_root(const double[::1] a, const double[::1] b, const double[::1] c, const double[::1] beta,
                  const Py_ssize_t[::1] off, double n, double target, double hi):
    """Root in (0, hi) of the largest saddle-point estimate of delta over packed atomic families, minus the target.

    The estimate is ``_log_saddle_estimate`` of each family's law (uncertified: it only places searches).

    Parameters
    ----------
    a, b, c, beta, off : arrays
        Packed families, as :func:`epsilon_search`.
    n, target, hi : float
        Users, target delta, right end of the search.

    Returns
    -------
    (float, float)
        The root (0 when the estimate is below the target at 0, NaN when it is above it at ``hi``) and
        -d log estimate / d eps there
        (NaN if unknown).
    """
    cdef Py_ssize_t K = 1, f
    cdef double g, slope
    if off.shape[0] != beta.shape[0] + 1 or beta.shape[0] < 1:
        raise ValueError("estimate_root: inconsistent array lengths")
    for f in range(beta.shape[0]):
        K = max(K, off[f + 1] - off[f])
    cdef double[::1] v = np.zeros(K + 1), p = np.zeros(K + 1)
    with nogil:
        g = _estimate_root(a, b, c, beta, off, n, target, hi, v, p, &slope)
    return g, slope


def log_estimates(const double[::1] a, const double[::1] b, const double[::1] c, const double[::1] beta,
                  const Py_ssize_t[::1] off, double eps, double n):
    """log saddle-point estimate of delta of each packed atomic family at one eps (uncertified; ranks families).

    Parameters
    ----------
    a, b, c, beta, off : arrays
        Packed families, as :func:`epsilon_search`.
    eps, n : float
        Central epsilon (nats) and users.

    Returns
    -------
    float64 ndarray, shape (F,)
        ``_log_saddle_estimate`` of ``dec.gparv(eps)`` per family, capped at 0 (-inf without a positive atom,
        NaN if the atoms are not finite).
    """
    cdef Py_ssize_t F = beta.shape[0], K = 1, f
    if off.shape[0] != F + 1:
        raise ValueError("log_estimates: inconsistent array lengths")
    for f in range(F):
        K = max(K, off[f + 1] - off[f])
    out_a = np.empty(F)
    cdef double[::1] out = out_a, v = np.zeros(K + 1), p = np.zeros(K + 1)
    with nogil:
        for f in range(F):
            out[f] = _log_estimate_one(a[off[f]:off[f + 1]], b[off[f]:off[f + 1]], c[off[f]:off[f + 1]], beta[f],
                                       eps, n, v, p)
    return out_a


include "_families.pxi"
include "_screening.pxi"


# --------------------------------------------------------------------------- the Bromwich integral of any law
# The one implementation of the Bromwich integral (``_bromwich_law``): its contour, integration cells, skipping
# rule, panel merge, Gauss–Legendre error bound, tail bound and Chernoff / trivial fallbacks (module docstring of
# ``shuffleamp.exact``), for every law.  A law (``law_t``) is what varies: the integrand's values at the
# Gauss–Legendre nodes of a run of panels, the bound of the integrand's modulus on a cell (the outer function of
# a modulus bound of the characteristic function), and the outer function's log-ratio on the real line.  Kinds:
#   LAW_ATOMS       the n-fold sum of a finite law, F(w) = w^n / n (``_bromwich_atoms``);
#   LAW_POPULATION  the mixture over blanket counts of a personalized population, F = the outer function Φ̃ of
#                   ``shuffleamp.personalized`` (Gauss–Laguerre rule or pmf window; ``bromwich_population``);
#   LAW_HOOKS       a law given through Python hooks (``bromwich_hooks``: a continuous part with a closed-form
#                   MGF, ``shuffleamp.exact._MixedLaw``), called with the GIL.
from libc.math cimport hypot

DEF LAW_ATOMS = 0
DEF LAW_POPULATION = 1
DEF LAW_HOOKS = 2
#: Panels per node evaluation of a law (the node buffer holds 3 G of them).
DEF LAW_PANEL_CHUNK = 256
#: Largest number of Gauss–Laguerre nodes of a population's outer function (``bromwich_population`` refuses more).
DEF POP_RULE_MAX = 256


cdef struct pop_t:
    int rule                # 1: Gauss–Laguerre rule (groups x rule nodes), 0: pmf window
    Py_ssize_t G            # groups (rule) or window length (pmf)
    Py_ssize_t R            # rule nodes (rule)
    const double* gam       # (G,) blanket probabilities of the other users' groups (rule)
    const double* N         # (G,) their counts (rule)
    const double* x         # (R,) rule abscissae x_k (s_k = e^{-x_k}) (rule)
    const double* logc      # (R,) log rule weights c_k (rule)
    const double* bT        # (R, G) b_kg = γ_g s_k W / (1 - γ_g + γ_g s_k W) at the contour (rule)
    const double* w0        # (R,) normalised weights of the rule nodes at the contour (rule)
    const double* lognu     # (G,) log p_m - log(m + 1) (pmf)
    const double* mp1       # (G,) m + 1 (pmf)
    const double* a         # (G,) normalised p_m e^{(m+1) K(theta)} / (m + 1) (pmf)
    double ref              # log Φ(e^{K(theta)}) in this module's arithmetic
    double n_eff            # E M' + 1


cdef struct law_t:
    int kind
    void* obj               # LAW_HOOKS: the Python hooks object (borrowed; the caller holds it)
    const pop_t* pop        # LAW_POPULATION
    double n                # summands (LAW_ATOMS) / mean count n_eff (LAW_POPULATION: rounding charges)
    double nmu              # n mu (LAW_ATOMS)
    double mu               # tilted mean
    double s2               # tilted variance (modulus bounds)
    double Kth              # K(theta) of the finite part
    double theta
    double L1               # E_theta |G - mu| (first cell width 0.5 / L1)
    double nK               # log F(M(theta))
    double norm             # divisor of the integral
    double trivial          # certified bound E[G_+] of delta (inf: none)
    double s0               # bell width
    double nK_err           # rounding bound of nK
    double k                # work units per integrand evaluation (atoms)


cdef void _law_scalars(law_t* L, int kind, double theta, double L1, double nK, double norm, double trivial,
                       double s0, double nK_err, double k) noexcept nogil:
    """A law of ``kind`` with its integral's scalars given by the caller (Python hooks or a population's compiled
    nodes), the other fields zero."""
    memset(L, 0, sizeof(law_t))
    L.kind = kind
    L.theta = theta
    L.L1 = L1
    L.nK = nK
    L.norm = norm
    L.trivial = trivial
    L.s0 = s0
    L.nK_err = nK_err
    L.k = k


cdef double _pop_log_phi(const pop_t* Q, double K) noexcept nogil:
    """log Φ̃(e^K) for real K (``shuffleamp.personalized._Mixture.log_phi``), max-shifted log-sum-exp."""
    cdef Py_ssize_t i, g
    cdef double mx = -INFINITY, s, em, tot = 0.0, y
    cdef double ys[POP_RULE_MAX]
    if Q.rule:
        for i in range(Q.R):
            em = expm1(K - Q.x[i])
            s = 0.0
            for g in range(Q.G):
                s += Q.N[g] * log1p(Q.gam[g] * em)
            y = Q.logc[i] - Q.x[i] + s
            ys[i] = y
            if y > mx:
                mx = y
        if not isfinite(mx):
            return K + mx if mx == -INFINITY else NAN
        for i in range(Q.R):
            tot += exp(ys[i] - mx)
        return K + mx + log(tot)
    for i in range(Q.G):
        y = Q.lognu[i] + Q.mp1[i] * K
        if y > mx:
            mx = y
    if not isfinite(mx):
        return mx if mx == -INFINITY else NAN
    for i in range(Q.G):
        tot += exp(Q.lognu[i] + Q.mp1[i] * K - mx)
    return mx + log(tot)


cdef void _pop_node(const pop_t* Q, const double[::1] q, const double[::1] d, double theta, double mu, double L1,
                    double t, double* gr, double* ag, double* rel) noexcept nogil:
    """Re g, |g| and the relative rounding estimate of g(t) = Φ̃(M(theta + it)) / Φ̃(M(theta)) / (theta + it)^2
    (``shuffleamp.personalized._PopLaw.nodes``): log(M(theta + it) / M(theta)) = log1p(psi - 1) + i t mu, then
    the outer function, e^v sum_k w0_k prod_g (1 + b_kg (e^v - 1))^{N_g} (rule) or sum_m a_m e^{(m+1) v} (pmf).
    Rule: the groups come sorted by count N_g; for each run of equal counts c the factors 1 + x_g (|.| <= 1) are
    multiplied in the form z <- z + x + z x of z = product - 1 (no cancellation near t = 0, where the x_g are
    small) and the run's power formed as exp(c Log(1 + z)), exact modulo 2 pi i c (log1p form while |z| < 1/2); a
    product whose modulus falls below 1e-100 is closed and the run continues with a new one (no underflow).
    Rounding (first-order estimate, as everywhere in these node values): each step adds at most
    3 u (|z| + |x| + |z x|) <= 12 u to z, so the run's power e^{c Log(1 + z)} (modulus <= 1) moves by at most
    12 u c per factor and e^{S_k} by at most 12 u sum_g N_g <= 6 eps n_eff; this is the extra n_eff in the
    charge 8 eps (1 + max_k |S_k| + n_eff (2 + |v|)).  These errors are relative to each term's modulus: the
    charge relative to the sum is multiplied by sum_k |term_k| / |sum_k term_k| (cancellation among the rule
    nodes or the window's counts at large t)."""
    cdef Py_ssize_t i, g
    cdef double wr, wi, dr, di, e, vr, vi, va, er, ei, b, xr, xi, Sr, Si, mS, smax = 0.0, sr = 0.0, si = 0.0
    cdef double ex_, ev, cv, sv, valr, vali, zr, zi, den, rl, c, av, mag = 0.0
    cdef const double* bk
    _psi(q, d, t, &wr, &wi, &dr, &di, &e)
    vr = 0.5 * log1p(wr * (2.0 + wr) + wi * wi)
    vi = atan2(wi, 1.0 + wr) + t * mu
    va = sqrt(vr * vr + vi * vi)
    if Q.rule:
        er = expm1(vr) * cos(vi) - 2.0 * sin(0.5 * vi) * sin(0.5 * vi)
        ei = exp(vr) * sin(vi)
        for i in range(Q.R):
            Sr = 0.0
            Si = 0.0
            bk = Q.bT + i * Q.G
            g = 0
            while g < Q.G:
                # a run of groups with the same count c: c Log prod_g (1 + b_kg (e^v - 1)) equals the sum of the
                # terms c Log(1 + ...) up to multiples of 2 pi i c, which e^S does not see (c an integer); one
                # log and one atan2 per run instead of per group
                c = Q.N[g]
                zr = 0.0                                   # z - 1 of the run's product so far
                zi = 0.0
                while g < Q.G and Q.N[g] == c:
                    # (1 + z)(1 + x) - 1 = z + x + z x, x = b (e^v - 1): accurate relative to |z| near t = 0
                    xr = er * bk[g]
                    xi = ei * bk[g]
                    b = zr + xr + (zr * xr - zi * xi)
                    zi = zi + xi + (zr * xi + zi * xr)
                    zr = b
                    g += 1
                    if (1.0 + zr) * (1.0 + zr) + zi * zi < 1e-200:
                        break                      # the run goes on with a new product (no underflow)
                if fabs(zr) + fabs(zi) < 0.5:
                    Sr += c * (0.5 * log1p(zr * (2.0 + zr) + zi * zi))
                else:
                    Sr += c * (0.5 * log((1.0 + zr) * (1.0 + zr) + zi * zi))
                Si += c * atan2(zi, 1.0 + zr)
            mS = sqrt(Sr * Sr + Si * Si)
            if mS > smax and isfinite(mS):          # S = -inf: the term is exactly 0
                smax = mS
            ex_ = Q.w0[i] * exp(Sr)
            mag += ex_
            sr += ex_ * cos(Si)
            si += ex_ * sin(Si)
        ev = exp(vr)
        cv = cos(vi)
        sv = sin(vi)
        valr = ev * (cv * sr - sv * si)
        vali = ev * (cv * si + sv * sr)
        rl = 8.0 * DBL_EPS * (1.0 + smax + Q.n_eff * (2.0 + va))
        mag = ev * mag
    else:
        for i in range(Q.G):
            ex_ = Q.a[i] * exp(vr * Q.mp1[i])
            mag += ex_
            sr += ex_ * cos(vi * Q.mp1[i])
            si += ex_ * sin(vi * Q.mp1[i])
        valr = sr
        vali = si
        rl = 8.0 * DBL_EPS * (1.0 + (Q.mp1[Q.G - 1] - 1.0) * (1.0 + va))
    # the terms' errors are relative to their moduli: relative to the sum, times sum |terms| / |sum|
    av = hypot(valr, vali)
    if mag > av:
        rl = rl * (mag / av if av > 1e-300 * mag else 1e300)
    zr = theta * theta - t * t
    zi = 2.0 * theta * t
    den = zr * zr + zi * zi
    gr[0] = (valr * zr + vali * zi) / den
    ag[0] = hypot(valr, vali) / sqrt(den)
    rel[0] = rl + 8.0 * DBL_EPS * Q.n_eff * (1.0 + t * L1)


cdef int _law_nodes(law_t* L, const double[::1] q, const double[::1] d, const double* pa, const double* pb,
                    Py_ssize_t m, rot_t* R, const prof_par* P, double* out) noexcept nogil:
    """Re g, |g| and rel at the Gauss–Legendre nodes of the panels [pa_i, pb_i] (``out + 3 G i``: G values each);
    0, or -1 (out of memory, or a Python hook raised)."""
    cdef Py_ssize_t i, j, G = P.gl_nodes
    cdef double c, h
    cdef double* o
    if L.kind == LAW_ATOMS:
        for i in range(m):
            _panel_node_values(q, d, L.n, L.nmu, L.theta, 0.5 * (pa[i] + pb[i]), 0.5 * (pb[i] - pa[i]), P.xg, G,
                               R, out + 3 * G * i)
        return 0
    if L.kind == LAW_POPULATION:
        for i in range(m):
            c = 0.5 * (pa[i] + pb[i])
            h = 0.5 * (pb[i] - pa[i])
            o = out + 3 * G * i
            for j in range(G):
                _pop_node(L.pop, q, d, L.theta, L.mu, L.L1, c + h * P.xg[j], &o[j], &o[G + j], &o[2 * G + j])
        return 0
    with gil:
        return _hook_nodes(<object>L.obj, pa, pb, m, G, out)


cdef int _law_modulus(law_t* L, const double[::1] q, const double[::1] d, const double* c, const double* h,
                      Py_ssize_t m, double* out) noexcept nogil:
    """Bound of |F(M(theta) psi)| / F(M(theta)) on the cells c_i +- h_i (``out``); 0 or -1."""
    cdef Py_ssize_t i
    cdef double lp
    if L.kind == LAW_HOOKS:
        with gil:
            return _hook_modulus(<object>L.obj, c, h, m, out)
    _modulus_cells(q, d, L.s2, c, h, m, out)
    if L.kind == LAW_ATOMS:
        for i in range(m):
            out[i] = pow(out[i], L.n)
        return 0
    # Φ̃(e^K r) / Φ̃(e^K) (non-negative Taylor coefficients: a bound given |psi| <= r), rounded up
    for i in range(m):
        lp = _pop_log_phi(L.pop, L.Kth + log(out[i])) - L.pop.ref
        out[i] = exp(lp if lp < 0.0 else 0.0) * (1.0 + 1e-12)
        if not (out[i] <= 1.0):
            out[i] = 1.0
    return 0


cdef double _law_ell(law_t* L, const double[::1] v, const double[::1] p, double x) noexcept nogil:
    """log F(M(x)) - log F(M(theta)) for real x (bounds |F(M(z))| on the line Re z = x)."""
    if L.kind == LAW_ATOMS:
        return L.n * (_log_mgf(v, p, x) - L.Kth)
    if L.kind == LAW_POPULATION:
        return _pop_log_phi(L.pop, _log_mgf(v, p, x)) - L.pop.ref
    with gil:
        return _hook_ell(<object>L.obj, x)


cdef int _hook_nodes(object hooks, const double* pa, const double* pb, Py_ssize_t m, Py_ssize_t G,
                     double* out) noexcept:
    cdef Py_ssize_t i, j
    cdef double[::1] gr, ag, rl
    try:
        a = np.array(<double[:m]>pa, dtype=np.float64)
        b = np.array(<double[:m]>pb, dtype=np.float64)
        r = hooks.nodes(a, b)
        gr = np.ascontiguousarray(r[0], dtype=np.float64)
        ag = np.ascontiguousarray(r[1], dtype=np.float64)
        rl = np.ascontiguousarray(r[2], dtype=np.float64)
        if gr.shape[0] != m * G or ag.shape[0] != m * G or rl.shape[0] != m * G:
            raise ValueError("law hooks: nodes() returned arrays of the wrong length")
        for i in range(m):
            for j in range(G):
                out[3 * G * i + j] = gr[i * G + j]
                out[3 * G * i + G + j] = ag[i * G + j]
                out[3 * G * i + 2 * G + j] = rl[i * G + j]
        return 0
    except BaseException as exc:
        hooks.error = exc
        return -1


cdef int _hook_modulus(object hooks, const double* c, const double* h, Py_ssize_t m, double* out) noexcept:
    cdef Py_ssize_t i
    cdef double[::1] r
    try:
        r = np.ascontiguousarray(hooks.modulus(np.array(<double[:m]>c, dtype=np.float64),
                                               np.array(<double[:m]>h, dtype=np.float64)), dtype=np.float64)
        if r.shape[0] != m:
            raise ValueError("law hooks: modulus() returned an array of the wrong length")
        for i in range(m):
            out[i] = r[i]
        return 0
    except BaseException as exc:
        hooks.error = exc
        return -1


cdef double _hook_ell(object hooks, double x) noexcept:
    try:
        return float(hooks.ell(x))
    except BaseException as exc:
        hooks.error = exc
        return NAN


cdef int _law_panels(law_t* L, const double[::1] q, const double[::1] d, double beta, double log_ell,
                     const double* pa, const double* pb, Py_ssize_t m, const prof_par* P, dvec* tmp, double* nd,
                     double* val, double* gl, double* ro) noexcept nogil:
    """Gauss–Legendre sums over the panels [pa_i, pb_i] and their certified error bound on Bernstein ellipses
    (module docstring of ``shuffleamp.exact``); ``nd``: node buffer of 3 G LAW_PANEL_CHUNK values.  Node values
    of the n-fold sum (``_panel_node_values``, one offset table per call):

    Nodes t = c + h x_g of a panel with |c| max|d_j| >= ROT_MIN: e^{i t d_j} is formed as the product of an
    anchor e^{i c d_j} (one sin/cos pair per atom and panel) and an offset e^{i h x_g d_j} (recomputed only
    when h changes; the Gauss–Legendre nodes are antisymmetric, x_{G-1-g} = -x_g exactly, so the offsets of
    the mirrored nodes are conjugates).  The same holds wherever the charge below is negligible
    (n eps (...) <= ROT_REL, small n).  Up to ROT_SLOTS offset tables are kept; a half-width within ROT_NEAR
    of a kept one reuses its table times e^{i (h - h_s) x_g d_j} (second-order form, 8 u per atom more).
    Rounding (u = eps/2; sin/cos within 1 ulp): the anchor is within
    u |c d_j| + 2 sqrt2 u of e^{i c d_j}, the offset within 2.01 u h |d_j| + 2 sqrt2 u of e^{i h x_g d_j}
    (x_g and h x_g rounded), the complex product adds 2 sqrt2 u, so |z_j - e^{i t* d_j}| <= u (1.01 |c d_j|
    + 2.01 h |d_j| + 9) at the exact node t* = c + h x_g; forming w = sum_j q_j (z_j - 1) adds at most
    2.01 sqrt2 (k + 3) u.  With L1 = sum_j q_j |d_j| the charged bound is
        err = eps (|c| L1 + 2 h L1 + 2 k + 10) >= u (2 |c| L1 + 4 h L1 + 4 k + 20),
    charged exactly as ``_psi``'s bound (``_node_value``)."""
    cdef Py_ssize_t i, i0, j, mc, G = P.gl_nodes
    cdef double c, h, W, rB, reach, tmin, log_gl, theta = L.theta, sv = 0.0, sr = 0.0
    cdef double* o
    cdef rot_t R
    cdef int rc = 0
    _rot_init(&R, q, d, P.xg, G)
    tmp.n = 0
    i0 = 0
    while i0 < m:
        mc = m - i0 if m - i0 < LAW_PANEL_CHUNK else LAW_PANEL_CHUNK
        if _law_nodes(L, q, d, pa + i0, pb + i0, mc, &R, P, nd):
            rc = -1
            break
        for i in range(mc):
            c = 0.5 * (pa[i0 + i] + pb[i0 + i])
            h = 0.5 * (pb[i0 + i] - pa[i0 + i])
            o = nd + 3 * G * i
            for j in range(G):
                W = h * P.wg[j]
                sv += W * o[j]
                sr += W * (o[G + j] * o[2 * G + j])
            rB = beta / h + sqrt(1.0 + (beta / h) * (beta / h))
            reach = 0.5 * h * (rB + 1.0 / rB)
            tmin = fabs(c) - reach
            if tmin < 0.0:
                tmin = 0.0
            log_gl = (log_ell - log((theta - beta) * (theta - beta) + tmin * tmin) + log((64.0 / 15.0) * h)
                      - 2 * G * log(rB) - log(rB * rB - 1.0))
            if log_gl > 700.0:
                log_gl = 700.0
            if _dpush(tmp, exp(log_gl)):
                rc = -1
                break
        if rc:
            break
        i0 += mc
    free(R.an)
    if rc:
        return -1
    val[0] = sv
    gl[0] = _pairwise_sum(tmp.x, tmp.n) * (1.0 + 1e-9)
    ro[0] = sr
    return 0


cdef int _bromwich_law(law_t* L, const double[::1] v, const double[::1] p, const double[::1] q,
                       const double[::1] d, const prof_par* P, bufs_t* B, double* value, double* err,
                       double* work_out) noexcept nogil:
    """The Bromwich integral of one law (its one implementation); returns a status.

    ``v, p``: the law's finite part (its K for ``_law_ell``), ``q, d``: tilted masses and centred atoms (node
    values and modulus bounds).  The steps (integration cells, skipping decisions, error terms) are those of the
    module docstring of ``shuffleamp.exact``.  With ``P.strict_work > 0`` (an explicit cap) it refuses before
    integrating beyond it (ST_WORK_NEEDED, ``work_out`` = the integrand nodes needed).  Buffers in ``B`` are
    grown as needed (the caller frees them)."""
    cdef double theta = L.theta, log_chernoff, chernoff, tiny = 4.9406564584124654e-324
    cdef double s0, beta, log_ell, x, y, work = 0.0, trivial = L.trivial
    cdef double total = 0.0, glsum = 0.0, rosum = 0.0, pruned = 0.0, tail = 0.0, err_I, scale
    cdef double* nd
    cdef int st
    work_out[0] = 0.0
    # s_+ <= e^{theta s} / (e theta): delta <= F(M(theta)) / (e theta norm)
    log_chernoff = L.nK - 1.0 - log(theta * L.norm) if isfinite(theta) else NAN
    chernoff = exp(log_chernoff if log_chernoff < 700.0 else 700.0) if isfinite(log_chernoff) else INFINITY
    if not isfinite(theta) or not (P.theta_lo < theta < P.theta_hi):
        # (theta^2 + t^2)^2 would leave the double range: keep to certified bounds
        x = chernoff if chernoff <= trivial else trivial
        x = x if x <= 1.0 else 1.0
        value[0] = 0.0
        err[0] = x if x >= tiny else tiny
        return ST_CHERNOFF
    if log_chernoff < -700.0:            # below the double range (a positive atom of denormal mass, say)
        value[0] = 0.0
        err[0] = chernoff if chernoff >= tiny else tiny
        return ST_CHERNOFF
    if L.nK - log(M_PI * L.norm) > 700.0:  # e^{nK} out of range: the trivial bound E[G_+]
        value[0] = 0.0
        err[0] = trivial if trivial <= 1.0 else 1.0
        return ST_TRIVIAL
    s0 = L.s0
    beta = 0.5 * theta if 0.5 * theta <= s0 else s0
    x = _law_ell(L, v, p, theta - beta)
    y = _law_ell(L, v, p, theta + beta)
    log_ell = y if y > x else x
    nd = <double*>malloc((3 * P.gl_nodes * LAW_PANEL_CHUNK + 1) * sizeof(double))
    if nd == NULL:
        return ST_FALLBACK
    st = _bromwich_law_cells(L, v, p, q, d, P, B, nd, beta, log_ell, 2.0 * beta, &total, &glsum, &rosum,
                             &pruned, &tail, &work)
    free(nd)
    if st != ST_EXACT:
        work_out[0] = work if st == ST_WORK_NEEDED else 0.0
        return st
    err_I = glsum + rosum + pruned + tail
    scale = exp(L.nK - log(M_PI * L.norm))
    x = total * scale
    y = err_I * scale + fabs(x) * expm1(L.nK_err)
    work_out[0] = work
    chernoff = trivial if trivial < chernoff else chernoff
    if not (x + y <= chernoff):      # badly scaled integrand (or NaN): the Chernoff bound is better
        value[0] = 0.0
        err[0] = chernoff
        return ST_CHERNOFF
    value[0] = x if x >= 0.0 else 0.0
    err[0] = y + (-x if -x > 0.0 else 0.0)
    return ST_EXACT


cdef int _bromwich_law_cells(law_t* L, const double[::1] v, const double[::1] p, const double[::1] q,
                             const double[::1] d, const prof_par* P, bufs_t* B, double* nd, double beta,
                             double log_ell, double twohp, double* total_out, double* glsum_out,
                             double* rosum_out, double* pruned_out, double* tail_out,
                             double* work_out) noexcept nogil:
    """The integration of ``_bromwich_law``: central panels over [0, CENTRAL_WIDTHS s0], then cells of width
    0.5 / L1 up to T (skipped when negligible, refined 8-fold while wider than 2 beta, merged into panels), T
    widened 4-fold until the tail bound is small; returns ST_EXACT or a failure status (``work_out`` then holds
    the work, or the integrand nodes needed for ST_WORK_NEEDED)."""
    cdef Py_ssize_t j, i, nc, ncell
    cdef double k = L.k, theta = L.theta, x, work = 0.0, s0 = L.s0
    cdef double total, glsum, rosum, val, gl, ro, scale_I, tau, A_c, pruned, T_done, T, w0, tail = 0.0
    cdef double a_, b_, rn, bound, wn, thr_m
    cdef dvec sw
    work_out[0] = 0.0
    # central panels [0, CENTRAL_WIDTHS s0]
    nc = <Py_ssize_t>ceil(P.central_widths * s0 / twohp)
    if nc < 1:
        nc = 1
    if P.strict_work > 0.0 and <double>nc * P.gl_nodes * k > P.strict_work:
        work_out[0] = <double>nc * P.gl_nodes       # the central panels alone exceed the explicit cap
        return ST_WORK_NEEDED
    B.na.n = 0
    for i in range(nc + 1):
        if _dpush(&B.na, twohp * <double>i):
            return ST_FALLBACK
    if _law_panels(L, q, d, beta, log_ell, B.na.x, B.na.x + 1, nc, P, &B.tmp, nd, &total, &glsum, &rosum):
        return ST_FALLBACK
    work += nc * P.gl_nodes
    scale_I = fabs(total) if fabs(total) > 1e-300 else 1e-300
    tau = P.rtol * scale_I
    B.tmp.n = 0
    B.segs.n = 0
    B.sa.n = 0
    B.sb.n = 0
    B.r.n = 0
    for i in range(nc):
        if (_dpush(&B.sa, 0.5 * (B.na.x[i] + B.na.x[i + 1])) or _dpush(&B.sb, 0.5 * (B.na.x[i + 1] - B.na.x[i]))
                or _dpush(&B.r, 0.0)):
            return ST_FALLBACK
    if _law_modulus(L, q, d, B.sa.x, B.sb.x, nc, B.r.x):
        return ST_FALLBACK
    for i in range(nc):
        x = (B.na.x[i + 1] - B.na.x[i]) * B.r.x[i]
        if _spush(&B.segs, B.na.x[i], B.na.x[i + 1], x) or _dpush(&B.tmp, x):
            return ST_FALLBACK
    work += nc
    A_c = _pairwise_sum(B.tmp.x, B.tmp.n)
    pruned = 0.0
    T_done = B.na.x[nc]
    T = theta * sqrt(P.t0_factor / P.rtol)
    if 2.0 * T_done > T:
        T = 2.0 * T_done
    w0 = 0.5 / (L.L1 if L.L1 > 1e-300 else 1e-300)
    while True:
        x = ceil((T - T_done) / w0)
        if not (x < 1e8):
            return ST_FALLBACK
        ncell = <Py_ssize_t>x if x > 0.0 else 0
        B.ca.n = 0
        B.cb.n = 0
        for i in range(ncell):
            a_ = T_done + w0 * <double>i
            b_ = a_ + w0
            if _dpush(&B.ca, a_) or _dpush(&B.cb, b_ if b_ <= T else T):
                return ST_FALLBACK
        while B.ca.n > 0:
            if work * k > P.max_work:
                return ST_RESOURCE
            B.r.n = 0
            B.sa.n = 0
            B.sb.n = 0
            for i in range(B.ca.n):
                if (_dpush(&B.sa, 0.5 * (B.ca.x[i] + B.cb.x[i])) or _dpush(&B.sb, 0.5 * (B.cb.x[i] - B.ca.x[i]))
                        or _dpush(&B.r, 0.0)):
                    return ST_FALLBACK
            if _law_modulus(L, q, d, B.sa.x, B.sb.x, B.ca.n, B.r.x):
                return ST_FALLBACK
            work += B.ca.n
            B.tmp.n = 0
            B.ka.n = 0
            B.kb.n = 0
            B.krn.n = 0
            thr_m = 0.01 * A_c / T
            for i in range(B.ca.n):
                a_ = B.ca.x[i]
                b_ = B.cb.x[i]
                rn = B.r.x[i]
                bound = (b_ - a_) * rn / (theta * theta + a_ * a_)
                # skip a cell when it is negligible both for the integral and for A(w) of the tail bound
                if bound <= 0.25 * tau * (b_ - a_) / T and rn <= thr_m:
                    if _spush(&B.segs, a_, b_, (b_ - a_) * rn) or _dpush(&B.tmp, bound):
                        return ST_FALLBACK
                elif _dpush(&B.ka, a_) or _dpush(&B.kb, b_) or _dpush(&B.krn, rn):
                    return ST_FALLBACK
            pruned += _pairwise_sum(B.tmp.x, B.tmp.n)
            B.sa.n = 0
            B.sb.n = 0
            B.na.n = 0
            B.nb.n = 0
            for i in range(B.ka.n):
                a_ = B.ka.x[i]
                b_ = B.kb.x[i]
                if b_ - a_ <= twohp * (1.0 + 1e-9):
                    if _spush(&B.segs, a_, b_, (b_ - a_) * B.krn.x[i]) or _dpush(&B.sa, a_) or _dpush(&B.sb, b_):
                        return ST_FALLBACK
                else:
                    wn = (b_ - a_) / 8.0
                    for j in range(8):
                        x = a_ + wn * <double>j
                        if _dpush(&B.na, x) or _dpush(&B.nb, x + wn):
                            return ST_FALLBACK
            if B.sa.n and P.strict_work > 0.0 and (work + <double>B.sa.n * P.gl_nodes) * k > P.max_work:
                work_out[0] = work + <double>B.sa.n * P.gl_nodes
                return ST_WORK_NEEDED
            if B.sa.n:
                # work is counted per cell (GL_NODES each) as before the merge, so that the work caps and
                # the widening of [0, T] decide as they did (the merge only makes each unit cheaper)
                work += B.sa.n * P.gl_nodes
                B.sa.n = _merge_runs(B.sa.x, B.sb.x, B.sa.n, twohp * (1.0 + 1e-9))
                if _law_panels(L, q, d, beta, log_ell, B.sa.x, B.sb.x, B.sa.n, P, &B.tmp, nd, &val, &gl, &ro):
                    return ST_FALLBACK
                total += val
                glsum += gl
                rosum += ro
            sw = B.ca
            B.ca = B.na
            B.na = sw
            sw = B.cb
            B.cb = B.nb
            B.nb = sw
        T_done = T
        tail = _tail_bound(&B.segs, T, P.tail_const, &B.tmp)
        if tail != tail:
            return ST_FALLBACK
        # small n: stop widening once the work budget is spent and report the larger error bound
        if tail <= 0.25 * tau or work * k > P.tail_work:
            break
        T *= 4.0
    total_out[0] = total
    glsum_out[0] = glsum
    rosum_out[0] = rosum
    pruned_out[0] = pruned
    tail_out[0] = tail
    work_out[0] = work
    return ST_EXACT


cdef int _bromwich_atoms_law(const double[::1] v, const double[::1] p, double[::1] q, double[::1] d,
                             const prof_par* P, bufs_t* B, double* value, double* err, double* theta_out,
                             double* work_out) noexcept nogil:
    """The Bromwich integral of E[S_+]/n for one finite law (``_bromwich_law`` on the n-fold sum, F(w) = w^n/n):
    its saddle point, tilt, K, certified trivial bound E[G_+] and the rounding bound of n K(theta)."""
    cdef Py_ssize_t k = v.shape[0], j
    cdef double n = P.n, theta, mu, var, L1 = 0.0, s2 = 0.0, trivial = 0.0, Kth, x, y
    cdef law_t L
    theta_out[0] = 0.0
    work_out[0] = 0.0
    _saddle_point(v, p, n, &theta, &mu, &var)
    if not isfinite(theta):
        theta = INFINITY
    elif not isfinite(mu):
        return ST_FALLBACK
    else:
        for j in range(k):
            q[j] = 0.0
        _tilted_weights(v, p, theta, q)
        for j in range(k):
            d[j] = v[j] - mu
            L1 += q[j] * fabs(d[j])
            s2 += q[j] * (d[j] * d[j])
    theta_out[0] = theta
    # (sum G_i)_+ <= sum (G_i)_+: delta <= E[G_+] (rounded up)
    for j in range(k):
        if v[j] > 0.0:
            trivial += p[j] * v[j]
    trivial = trivial * (1.0 + 4.0 * k * DBL_EPS)
    memset(&L, 0, sizeof(law_t))
    L.kind = LAW_ATOMS
    L.n = n
    L.norm = n
    L.k = <double>k
    L.theta = theta
    L.trivial = trivial
    L.L1 = L1
    L.s2 = s2
    if isfinite(theta):
        Kth = _log_mgf(v, p, theta)
        L.Kth = Kth
        L.nK = n * Kth
        L.mu = mu
        L.nmu = n * mu
        L.s0 = 1.0 / sqrt(n * s2 + 2.0 / (theta * theta))
        x = 0.0
        for j in range(k):
            y = theta * v[j]
            x += p[j] * fabs(expm1(y if y < 700.0 else 700.0))
        L.nK_err = n * ((k + 4) * DBL_EPS * (x + fabs(Kth)))
    else:
        L.Kth = NAN
        L.nK = NAN
    return _bromwich_law(&L, v, p, q, d, P, B, value, err, work_out)


cdef int _law_entry_par(prof_par* P, double rtol, const double[::1] xg, const double[::1] wg, double max_work,
                        double strict_work, double tail_work, double t0_factor, double theta_lo, double theta_hi,
                        double central_widths, double tail_const) except -1:
    if xg.shape[0] != wg.shape[0] or xg.shape[0] < 1:
        raise ValueError("Bromwich integral: xg and wg differ in length")
    _set_par(P, 1.0, rtol, max_work, tail_work, t0_factor, theta_lo, theta_hi, central_widths, tail_const, xg, wg)
    P.strict_work = strict_work
    return 0


def bromwich_hooks(hooks, const double[::1] v, const double[::1] p, const double[::1] q, const double[::1] d,
                   double theta, double L1, double nK, double norm, double trivial, double s0, double nK_err,
                   double k, double rtol, const double[::1] xg, const double[::1] wg, double max_work,
                   double strict_work, double tail_work, double t0_factor, double theta_lo, double theta_hi,
                   double central_widths, double tail_const):
    """The Bromwich integral (``_bromwich_law``, the one implementation) of a law given through Python hooks.

    The law enters through ``hooks``, an object with ``nodes(a, b)`` (Re g, |g| and the relative rounding
    estimate at the Gauss–Legendre nodes ``xg`` of the panels [a_i, b_i], panel-major, each float64 of shape
    (m G,)), ``modulus(c, h)`` (a bound of |F(M(theta) psi)| / F(M(theta)) on the cells c_i +- h_i, shape (m,)),
    ``ell(x)`` (log F(M(x)) - log F(M(theta)) for real x) and a writable attribute ``error`` (None; an exception
    a hook raised is stored there and the call returns status -1, the caller re-raises it).  Called with the
    GIL; everything else runs without it.

    Parameters
    ----------
    hooks : object
        As above.
    v, p, q, d : float64[::1], shape (K,)
        The law's finite part: atoms, masses, tilted masses and centred atoms (panel rotation bookkeeping only).
    theta, L1, nK, norm, trivial, s0, nK_err, k : float
        Tilt, E_theta|G - mu|, log F(M(theta)), the integral's divisor, a certified bound of delta (inf: none),
        the bell width, the rounding bound of nK and the work units per integrand evaluation.
    rtol, xg, wg, max_work, strict_work, tail_work, t0_factor, theta_lo, theta_hi, central_widths, tail_const
        As in :func:`positive_part`.

    Returns
    -------
    (int, float, float, float)
        Status (0 integral, 1 Chernoff, 2 trivial; -1 not evaluated, -2 work cap, -3 explicit work cap with
        ``work`` = the integrand nodes needed), value, error bound and work.
    """
    cdef prof_par P
    cdef law_t L
    cdef bufs_t B
    cdef double value = 0.0, err = 0.0, work = 0.0
    cdef int st
    _law_entry_par(&P, rtol, xg, wg, max_work, strict_work, tail_work, t0_factor, theta_lo, theta_hi,
                   central_widths, tail_const)
    if q.shape[0] < 1 or d.shape[0] != q.shape[0] or p.shape[0] != v.shape[0]:
        raise ValueError("bromwich_hooks: inconsistent array lengths")
    _law_scalars(&L, LAW_HOOKS, theta, L1, nK, norm, trivial, s0, nK_err, k)
    L.obj = <void*>hooks
    memset(&B, 0, sizeof(bufs_t))
    with nogil:
        st = _bromwich_law(&L, v, p, q, d, &P, &B, &value, &err, &work)
        _bufs_free(&B)
    return st, value, err, work


cdef void _pop_fill(pop_t* Q, bint rule, const double[::1] gam, const double[::1] N, const double[:, ::1] b,
                    const double[::1] w0, const double[::1] mp1, const double[::1] a, double n_eff) noexcept nogil:
    """A population's target law as the integrand reads it, from arrays whose lengths the caller has checked:
    the rule's groups and nodes (``rule``) or the pmf window; the rule's abscissae and log weights and the
    window's log masses, which only the integral reads, are left for the caller to set."""
    memset(Q, 0, sizeof(pop_t))
    Q.rule = 1 if rule else 0
    if rule:
        Q.G = gam.shape[0]
        Q.R = w0.shape[0]
        Q.gam = &gam[0]
        Q.N = &N[0]
        Q.bT = &b[0, 0]
        Q.w0 = &w0[0]
    else:
        Q.G = a.shape[0]
        Q.mp1 = &mp1[0]
        Q.a = &a[0]
    Q.n_eff = n_eff


def bromwich_population(const double[::1] v, const double[::1] p, const double[::1] q, const double[::1] d,
                        double theta, double mu, double L1, double s2, double nK, double trivial, double s0,
                        double nK_err, bint rule, const double[::1] gam, const double[::1] N, const double[::1] x,
                        const double[::1] logc, const double[:, ::1] b, const double[::1] w0,
                        const double[::1] lognu, const double[::1] mp1, const double[::1] a, double n_eff,
                        double rtol, const double[::1] xg, const double[::1] wg, double max_work,
                        double strict_work, double tail_work, double t0_factor, double theta_lo, double theta_hi,
                        double central_widths, double tail_const):
    """The Bromwich integral (``_bromwich_law``) of a personalized population's target law: the integrand
    Φ̃(M(z)) / z^2 of ``shuffleamp.personalized`` (module docstring, Steps 4-5), nodes and modulus bounds compiled
    (no Python loop over groups, nodes or counts).  Releases the GIL.

    Parameters
    ----------
    v, p : float64[::1], shape (K,)
        The target's privacy-loss law (atoms, masses); its K gives the outer function's argument.
    q, d : float64[::1], shape (K,)
        Masses tilted at ``theta`` and atoms centred at the tilted mean ``mu``.
    theta, mu, L1, s2 : float
        Tilt, tilted mean, E_theta|L - mu| and the tilted variance.
    nK, trivial, s0, nK_err : float
        log Φ̃(M(theta)), a certified bound of delta (inf: none), the bell width and the rounding bound of nK.
    rule : bool
        The outer function is the Gauss–Laguerre rule (else the pmf window).
    gam, N : float64[::1], shape (G,)
        Rule: blanket probabilities of the other users' groups and their counts.
    x, logc : float64[::1], shape (R,)
        Rule: abscissae x_k (s_k = e^{-x_k}) and log weights c_k.
    b : float64[:, ::1], shape (R, G)
        Rule: b_kg = γ_g s_k W / (1 - γ_g + γ_g s_k W), W = e^{K(theta)}.
    w0 : float64[::1], shape (R,)
        Rule: the normalised weights c_k s_k P(s_k W) / sum of them.
    lognu, mp1, a : float64[::1], shape (W,)
        Pmf window: log p_m - log(m + 1), m + 1, and p_m W^{m+1} / (m + 1) normalised.
    n_eff : float
        E M' + 1 (rounding estimates).
    rtol, xg, wg, max_work, strict_work, tail_work, t0_factor, theta_lo, theta_hi, central_widths, tail_const
        As in :func:`positive_part`.

    Returns
    -------
    (int, float, float, float)
        As :func:`bromwich_hooks`.
    """
    cdef prof_par P
    cdef law_t L
    cdef pop_t Q
    cdef bufs_t B
    cdef double value = 0.0, err = 0.0, work = 0.0
    cdef int st
    _law_entry_par(&P, rtol, xg, wg, max_work, strict_work, tail_work, t0_factor, theta_lo, theta_hi,
                   central_widths, tail_const)
    if (v.shape[0] < 1 or p.shape[0] != v.shape[0] or q.shape[0] != v.shape[0] or d.shape[0] != v.shape[0]
            or N.shape[0] != gam.shape[0] or logc.shape[0] != x.shape[0] or w0.shape[0] != x.shape[0]
            or mp1.shape[0] != lognu.shape[0] or a.shape[0] != lognu.shape[0]):
        raise ValueError("bromwich_population: inconsistent array lengths")
    if rule and (x.shape[0] < 1 or x.shape[0] > POP_RULE_MAX or gam.shape[0] < 1 or b.shape[0] != x.shape[0]
                 or b.shape[1] != gam.shape[0]):
        raise ValueError("bromwich_population: inconsistent rule arrays")
    if not rule and lognu.shape[0] < 1:
        raise ValueError("bromwich_population: empty pmf window")
    _pop_fill(&Q, rule, gam, N, b, w0, mp1, a, n_eff)
    if rule:
        Q.x = &x[0]
        Q.logc = &logc[0]
    else:
        Q.lognu = &lognu[0]
    _law_scalars(&L, LAW_POPULATION, theta, L1, nK, 1.0, trivial, s0, nK_err, <double>v.shape[0])
    L.pop = &Q
    L.n = n_eff
    L.mu = mu
    L.s2 = s2
    memset(&B, 0, sizeof(bufs_t))
    with nogil:
        if isfinite(theta):
            L.Kth = _log_mgf(v, p, theta)
            Q.ref = _pop_log_phi(&Q, L.Kth)
        st = _bromwich_law(&L, v, p, q, d, &P, &B, &value, &err, &work)
        _bufs_free(&B)
    return st, value, err, work


def population_nodes(const double[::1] q, const double[::1] d, double theta, double mu, double L1,
                     const double[::1] t, bint rule, const double[::1] gam, const double[::1] N,
                     const double[:, ::1] b, const double[::1] w0, const double[::1] mp1, const double[::1] a,
                     double n_eff):
    """The node values of :func:`bromwich_population` at real frequencies ``t``: (Re g, |g|, relative rounding
    estimate), g(t) = Φ̃(M(theta + it)) / Φ̃(M(theta)) / (theta + it)^2; arguments as there.  The production entry
    point of the population integrand's nodes outside the compiled integral: ``shuffleamp.personalized`` reads a
    population law's node values through it (``_PopLaw.nodes`` and its ``panel_nodes`` hook)."""
    cdef Py_ssize_t i, m = t.shape[0]
    cdef pop_t Q
    if rule:
        if b.shape[0] != w0.shape[0] or b.shape[1] != gam.shape[0] or N.shape[0] != gam.shape[0] or not w0.shape[0]:
            raise ValueError("population_nodes: inconsistent rule arrays")
    elif a.shape[0] != mp1.shape[0] or not a.shape[0]:
        raise ValueError("population_nodes: inconsistent pmf arrays")
    _pop_fill(&Q, rule, gam, N, b, w0, mp1, a, n_eff)
    gr_a = np.empty(m)
    ag_a = np.empty(m)
    rl_a = np.empty(m)
    cdef double[::1] gr = gr_a, ag = ag_a, rl = rl_a
    with nogil:
        for i in range(m):
            _pop_node(&Q, q, d, theta, mu, L1, t[i], &gr[i], &ag[i], &rl[i])
    return gr_a, ag_a, rl_a
