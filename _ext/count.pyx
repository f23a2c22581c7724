# cython: language_level=3
"""Cython kernels of :mod:`shuffleamp.exact_count` (no validation here).

* ``binom_window``: binomial PMF on an index window, by the ratio recurrence from the mode
  (linear space, exact ratios), normalised on the window;
* ``pair_extremes``: ``lower_set_extremes`` of the binary-RR count pair built on the fly from
  the others' count law;
* ``lower_set_extremes``: one pass over the cumulative count laws giving the largest
  hockey-stick value (δ at ε) or the largest ε at δ over lower sets, with certified bands.
"""

import numpy as np
cimport numpy as cnp
from libc.math cimport exp, expl, log, log1p, sqrt, floor, ceil, fabs, INFINITY
from libc.stdint cimport int64_t

cnp.import_array()

cdef extern from "float.h":
    long double LDBL_EPSILON


def long_double_epsilon():
    """Machine epsilon of the C ``long double`` these kernels accumulate in (2^-63 on x86-64, 2^-112 where
    it is IEEE quad, 2^-52 where it is a plain double): error bounds are charged with it."""
    return float(LDBL_EPSILON)


def binom_window(int64_t N, double p, double logit, int64_t lo, int64_t hi):
    """PMF of Bin(N, p) on k = lo..hi, normalised to sum 1 on the window.

    ``logit`` = log(p / (1 - p)) (passed exactly: ±eps0). Every entry is obtained from the (clipped)
    mode, set to 1, by the exact ratio f(k+1)/f(k) = (N-k)/(k+1) * p/(1-p) (or its inverse going
    down), multiplied in ``long double`` (machine epsilon ``u`` = :func:`long_double_epsilon`): the odds
    e^logit (``expl``, a few ulp) and three roundings per step, so the relative error of entry k is at
    most 8 |k - mode| u; the normalising sum (also in long double) adds W u and the final rounding to
    double one double ulp.  Callers charge 8 (W + 4) u + 4 double ulp.  The window is where the mass is,
    so nothing underflows (the Chernoff tails are >= 1e-300 there).
    """
    cdef int64_t W = hi - lo + 1, k, mode, i
    cdef cnp.ndarray[cnp.float64_t, ndim=1] out = np.empty(W, dtype=np.float64)
    cdef double[::1] o = out
    cdef cnp.ndarray[cnp.longdouble_t, ndim=1] work = np.empty(W, dtype=np.longdouble)
    cdef long double[::1] w = work
    cdef long double v, tot, odds = expl(<long double>logit), inv = expl(-<long double>logit)
    mode = <int64_t>((N + 1) * p)
    if mode > N:
        mode = N
    if mode < lo:
        mode = lo
    if mode > hi:
        mode = hi
    with nogil:
        w[mode - lo] = 1.0
        v = 1.0
        for k in range(mode, hi):           # f(k+1)/f(k)
            v = v * ((<long double>(N - k) / <long double>(k + 1)) * odds)
            w[k + 1 - lo] = v
        v = 1.0
        for k in range(mode, lo, -1):       # f(k-1)/f(k)
            v = v * ((<long double>k / <long double>(N - k + 1)) * inv)
            w[k - 1 - lo] = v
        tot = 0.0
        for i in range(W):
            tot += w[i]
        tot = 1.0 / tot
        for i in range(W):
            o[i] = <double>(w[i] * tot)
    return out


cdef inline double _kl(double x, double p, double q, bint has_q) noexcept nogil:
    """KL(Bern(x) || Bern(p)) in nats (``q`` = 1 - p when ``has_q``): the formula of exact_count._kl."""
    cdef double a = 0.0, b = 0.0
    if x != 0.0:
        a = x * log(x / p)
    if x != 1.0:
        b = (1.0 - x) * (log1p(-x) - (log(q) if has_q else log1p(-p)))
    return a + b


cdef int64_t _side(int64_t N, double p, double q, bint has_q, double log_tau, int64_t k_far,
                   int64_t k_near) noexcept nogil:
    """Window end on one side: the largest |k - mean| between k_near and k_far with
    exp(-N KL(k/N || p)) <= tau, by bisection over integers."""
    cdef int64_t good, bad, mid
    cdef double Nd = <double>N
    if -Nd * _kl(<double>k_far / Nd, p, q, has_q) > log_tau:
        return k_far
    good = k_far
    bad = k_near
    while (good - bad > 1) or (bad - good > 1):
        mid = (good + bad) // 2 if good + bad >= 0 else -((-(good + bad)) // 2)
        if -Nd * _kl(<double>mid / Nd, p, q, has_q) <= log_tau:
            good = mid
        else:
            bad = mid
    return good + 1 if good < bad else good - 1


def chernoff_window(int64_t N, double p, double tau, double q):
    """Window [lo, hi] of Bin(N, p) with mass <= tau below lo and <= tau above hi (Chernoff bound
    P(X <= k) <= exp(-N KL(k/N || p)) and its mirror), ``q`` = 1 - p when > 0 (else log1p(-p) is used);
    N >= 1 and 0 < p < 1, or p rounded to 1 with q > 0 (the caller, ``exact_count._binom_window``, handles
    the point masses)."""
    cdef double mean = <double>N * p, log_tau = log(tau)
    cdef bint has_q = q > 0.0
    cdef int64_t lo_near, hi_near, lo, hi
    with nogil:
        lo_near = <int64_t>floor(mean)
        if lo_near > N:
            lo_near = N
        hi_near = <int64_t>ceil(mean)
        if hi_near < 0:
            hi_near = 0
        lo = 0 if lo_near <= 0 else _side(N, p, q, has_q, log_tau, 0, lo_near)
        hi = N if hi_near >= N else _side(N, p, q, has_q, log_tau, N, hi_near)
    return lo, hi


cdef inline void _score_bin(double F0, double F1, Py_ssize_t i, double r_hi, double r_lo, double eta,
                            double tau, double x, double e, double slack, bint want_eps,
                            double* up, double* lw, Py_ssize_t* arg) noexcept nogil:
    """One lower set {C <= i} of :func:`lower_set_extremes` / :func:`pair_extremes`: the certified bands
    of the cumulative sums F0, F1 (relative ``rho``, absolute ``eta sqrt(i+1)``, ``tau`` for the lower
    tail below the window) and the running maxima ``up`` / ``lw`` (``arg``: index of ``lw``)."""
    cdef double h0, l0, h1, l1, v
    cdef double a = eta * sqrt(<double>(i + 1))
    h0 = F0 * r_hi + a + tau
    l0 = F0 * r_lo - a
    h1 = F1 * r_hi + a + tau
    l1 = F1 * r_lo - a
    if l1 < 0.0:
        l1 = 0.0
    if want_eps:
        if h0 > x:
            v = INFINITY if l1 <= 0.0 else (h0 * (1.0 + slack) - x) / l1
            if v > up[0]:
                up[0] = v
        if l0 * (1.0 - slack) > x:
            v = (l0 * (1.0 - slack) - x) / h1
            if v > lw[0]:
                lw[0] = v
                arg[0] = i
    else:
        v = h0 - e * l1
        if v > up[0]:
            up[0] = v
        v = l0 - e * h1
        if v > lw[0]:
            lw[0] = v
            arg[0] = i


cdef tuple _finish(double up, double lw, Py_ssize_t arg, bint want_eps):
    """(upper, lower, arg) of the extremes: for ``want_eps`` the log of the maximised ratios."""
    if want_eps:
        up = -INFINITY if up <= 0.0 else log(up)
        lw = -INFINITY if lw <= 0.0 else log(lw)
    return up, lw, arg


def pair_extremes(const double[::1] f, double q0, double q1, double rho, double eta, double tau,
                  double x, bint want_eps):
    """:func:`lower_set_extremes` of the count pair P_b(c) = q_b f(c-1) + (1 - q_b) f(c), b = 0, 1
    (c = 0 .. W, W = len(f)), built on the fly (no arrays): one pass over the window.

    Binary RR: ``q0 + q1 = 1`` (q0 = p0, q1 = p1, each computed without cancellation), and the
    complement ``1 - q_b`` is taken as the other probability, not computed as ``1.0 - q_b``: that
    subtraction would be exact for the rounded q_b but would lose up to ``1 / (1 - q_b)`` relative
    accuracy against the true complement (3e-13 at eps0 = 8), more than the bands allow.
    Each P_b entry is formed with two roundings on top of ``f``'s own error; ``rho`` must include
    them (the caller adds 4 machine epsilons).
    """
    cdef Py_ssize_t W = f.shape[0], i, arg = -1
    cdef long double F0 = 0.0, F1 = 0.0     # cumulative sums in long double: their round-off is negligible
    cdef double e = 0.0, up, lw, fprev, fcur, a0, a1
    cdef double r_hi = 1.0 + rho, r_lo = 1.0 - rho
    cdef double slack = 8 * 2.220446049250313e-16
    if want_eps:
        up = 0.0
        lw = 0.0
    else:
        e = exp(x)
        up = tau
        lw = 0.0
    with nogil:
        fprev = 0.0
        for i in range(W + 1):
            fcur = f[i] if i < W else 0.0
            a0 = q0 * fprev + q1 * fcur       # 1 - q0 = q1 (binary RR): no cancellation
            a1 = q1 * fprev + q0 * fcur
            fprev = fcur
            F0 += a0
            F1 += a1
            _score_bin(<double>F0, <double>F1, i, r_hi, r_lo, eta, tau, x, e, slack, want_eps, &up, &lw, &arg)
    return _finish(up, lw, arg, want_eps)


def lower_set_extremes(const double[::1] P0, const double[::1] P1, double rho, double eta,
                       double tau, double x, bint want_eps):
    """Certified extremes over the lower sets {C <= t} of a count pair (P0, P1).

    Every entry of the window arrays carries a relative error <= rho plus an absolute part whose
    vector has 2-norm <= eta (so each entry's absolute error is <= eta, and the cumulative sum of the
    first t entries errs by <= eta sqrt(t) by Cauchy-Schwarz); the mass outside the window (both
    laws) is <= tau.  With F_b the window cumulative sums:

    * ``want_eps=False`` (x = ε): returns (upper, lower) of max_t F0(t) - e^ε F1(t) (clipped at 0);
    * ``want_eps=True`` (x = δ): returns (upper, lower) of max_t log((F0(t) - δ) / F1(t))
      (-inf when no t has F0(t) > δ).
    Also returns the t-index (0-based in the window) of the lower value.
    """
    cdef Py_ssize_t W = P0.shape[0], i, arg = -1
    cdef long double F0 = 0.0, F1 = 0.0
    cdef double e = 0.0, up, lw
    cdef double r_hi = 1.0 + rho, r_lo = 1.0 - rho
    # want_eps: the ratios (F0 - delta)/F1 are maximised and the log taken once at the end; the
    # numerators carry 8 ulp of their own size, so that the delta evaluated at the returned upper
    # epsilon (h0 - e^eps l1, rounded) stays <= delta despite the cancellation h0 - delta
    cdef double slack = 8 * 2.220446049250313e-16
    if want_eps:
        up = 0.0
        lw = 0.0
    else:
        e = exp(x)
        up = tau
        lw = 0.0
    for i in range(W):
        F0 += P0[i]
        F1 += P1[i]
        _score_bin(<double>F0, <double>F1, i, r_hi, r_lo, eta, tau, x, e, slack, want_eps, &up, &lw, &arg)
    return _finish(up, lw, arg, want_eps)


cdef void _hull_max(double[::1] A, double[::1] B, Py_ssize_t P, const double[::1] xs,
                    double[::1] out, Py_ssize_t[::1] hull, double slack) noexcept nogil:
    """out[k] >= max_t A[t] - xs[k] B[t] over the P points (B non-decreasing), by the upper hull, plus
    ``slack`` times the terms at the next hull vertex (0 for a value that only needs to be attained)."""
    cdef Py_ssize_t t, H = 0, i1, i2, lo, hi, mid, k, K = xs.shape[0], j
    cdef double x, v, best
    for t in range(P):
        if H >= 1 and B[t] == B[hull[H - 1]]:
            if A[t] <= A[hull[H - 1]]:
                continue
            H -= 1
        while H >= 2:
            i1 = hull[H - 2]
            i2 = hull[H - 1]
            # pop i2 if it lies on or below the chord i1 -> t
            if (A[i2] - A[i1]) * (B[t] - B[i1]) <= (A[t] - A[i1]) * (B[i2] - B[i1]):
                H -= 1
            else:
                break
        hull[H] = t
        H += 1
    for k in range(K):
        x = xs[k]
        # first hull vertex whose next edge has slope < x (the values rise along edges of slope > x)
        lo = 0
        hi = H - 1
        while lo < hi:
            mid = (lo + hi) // 2
            i1 = hull[mid]
            i2 = hull[mid + 1]
            if A[i2] - A[i1] > x * (B[i2] - B[i1]):
                lo = mid + 1
            else:
                hi = mid
        best = -INFINITY
        for j in range(lo - 1, lo + 2):
            if 0 <= j < H:
                v = A[hull[j]] - x * B[hull[j]]
                if v > best:
                    best = v
        # rounding of the values and of the hull tests: 8 ulp of the terms at the next vertex
        j = lo + 1 if lo + 1 < H else H - 1
        out[k] = best + slack * (A[hull[j]] + x * B[hull[j]])


def pair_profile(const double[::1] f, double q0, double q1, double rho, double eta, double tau,
                 const double[::1] xs):
    """Certified (upper, lower) of max over lower sets of F0(t) - x F1(t), for every x in ``xs`` (x >= 1).

    Same pair (``q0 + q1 = 1``) and bands as :func:`pair_extremes`, for many ε at once: the upper values are the
    support function of the points (l1(t), h0(t)) (with l1 replaced by its suffix minimum, which
    only raises the values), the lower values that of (h1(t), l0(t)) (h1 non-decreasing); both by
    the upper convex hull in O(W + K log W).  Upper values carry 8 ulp of the terms against the
    rounding of the hull tests; lower values are attained at a lower set (any vertex is valid).
    """
    cdef Py_ssize_t W = f.shape[0], P = W + 2, i, K = xs.shape[0]
    cdef cnp.ndarray[cnp.float64_t, ndim=1] Au = np.empty(P), Bu = np.empty(P)
    cdef cnp.ndarray[cnp.float64_t, ndim=1] Al = np.empty(P), Bl = np.empty(P)
    cdef cnp.ndarray[cnp.float64_t, ndim=1] up = np.empty(K), lw = np.empty(K)
    cdef cnp.ndarray[cnp.intp_t, ndim=1] hull = np.empty(P, dtype=np.intp)
    cdef double[::1] au = Au, bu = Bu, al = Al, bl = Bl, u = up, l = lw
    cdef Py_ssize_t[::1] hv = hull
    cdef long double F0 = 0.0, F1 = 0.0
    cdef double fprev = 0.0, fcur, r_hi = 1.0 + rho, r_lo = 1.0 - rho, m
    cdef double slack = 8 * 2.220446049250313e-16, hmax = 0.0
    with nogil:
        au[0] = tau          # the empty lower set
        bu[0] = 0.0
        al[0] = 0.0
        bl[0] = 0.0
        for i in range(W + 1):
            fcur = f[i] if i < W else 0.0
            F0 += q0 * fprev + q1 * fcur      # 1 - q0 = q1 (binary RR): no cancellation
            F1 += q1 * fprev + q0 * fcur
            fprev = fcur
            au[i + 1] = <double>F0 * r_hi + eta * sqrt(<double>(i + 1)) + tau
            bu[i + 1] = <double>F1 * r_lo - eta * sqrt(<double>(i + 1))
            if bu[i + 1] < 0.0:
                bu[i + 1] = 0.0
            al[i + 1] = <double>F0 * r_lo - eta * sqrt(<double>(i + 1))
            bl[i + 1] = <double>F1 * r_hi + eta * sqrt(<double>(i + 1)) + tau
            if au[i + 1] > hmax:
                hmax = au[i + 1]
        m = bu[P - 1]
        for i in range(P - 2, -1, -1):      # suffix minimum: B non-decreasing, values only raised
            if bu[i] > m:
                bu[i] = m
            else:
                m = bu[i]
        m = bl[0]
        for i in range(1, P):               # prefix maximum: values only lowered
            if bl[i] < m:
                bl[i] = m
            else:
                m = bl[i]
        _hull_max(au, bu, P, xs, u, hv, slack)
        _hull_max(al, bl, P, xs, l, hv, 0.0)
        for i in range(K):
            if u[i] > 1.0:
                u[i] = 1.0
            if l[i] < 0.0:
                l[i] = 0.0
    return up, lw


def phase_rows(const double[::1] fp, double rho, double tau, double r0, double drift):
    """The ε- and jb-independent parts of the phase-comparison value of :func:`phase_segments_max` for one base
    window: a (6, len) array of rows f, F, A3, B3, eA3, eB3 over the indices of ``fp`` (entries 2 .. len - 3; the
    others 0), from which :func:`phase_segments_max` forms A = f + jb A3, B = F + jb B3 and their envelopes for any
    ``jb``, and H = alpha A - beta B with its envelope eH = alpha eA + beta eB for any alpha, beta >= 0.

    ``fp``: a count law whose entries are the true values times a common factor within ``rho``, times a factor
    that changes by at most ``drift`` per entry, times an independent factor within ``r0`` (a
    ``binom_window`` output: drift = 8 u, r0 = EPS/2 + 2 u; any window with a plain per-entry band ``rho``:
    drift = 0, r0 = rho), padded with at least 4 zeros on each side (true values in [0, ``tau``] there).
    A3 = -f(x-2)/2 + f(x-1) - f(x+1) + f(x+2)/2, B3 = (f(x+1) - f(x) - f(x-1) + f(x-2))/2 (double sums; F(x-1)
    accumulated in long double and rounded).  The stencils' envelopes eA3, eB3: relative ``rho`` + 2 EPS on the
    value of each stencil, ``drift`` |offset| + ``r0`` on each entry of a stencil for the non-common part of the
    entry errors, 4 EPS of the stencil's absolute sum for its own rounding and ``tau`` per padded entry;
    :func:`phase_segments_max` adds ``rho`` f + ``tau`` (A), (``rho`` + (len + 2) u + EPS) F + ``tau`` (B) and
    16 EPS of the terms for forming A, B and H.
    """
    cdef Py_ssize_t L = fp.shape[0], i
    cdef long double F = 0.0
    cdef double eps = 2.220446049250313e-16
    cdef double a3, b3, fm2, fm1, f0, fp1, fp2, absA, absB, dA, dB
    cdef double s1 = drift + r0, s2 = 2 * drift + r0
    if L < 9:
        raise ValueError("fp must be padded with 4 zeros on each side")
    cdef cnp.ndarray[cnp.float64_t, ndim=2] out = np.zeros((6, L))
    cdef double[:, ::1] o = out
    with nogil:
        F = <long double>fp[0]
        for i in range(2, L - 2):
            F += fp[i - 1]                   # F(i - 1)
            fm2 = fp[i - 2]
            fm1 = fp[i - 1]
            f0 = fp[i]
            fp1 = fp[i + 1]
            fp2 = fp[i + 2]
            a3 = (-0.5 * fm2 + fm1) + (0.5 * fp2 - fp1)
            b3 = 0.5 * ((fp1 - f0) + (fm2 - fm1))
            absA = 0.5 * fm2 + fm1 + fp1 + 0.5 * fp2
            absB = 0.5 * (fp1 + f0 + fm1 + fm2)
            dA = 0.5 * fm2 * s2 + fm1 * s1 + fp1 * s1 + 0.5 * fp2 * s2
            dB = 0.5 * (fp1 * s1 + f0 * r0 + fm1 * s1 + fm2 * s2)
            o[0, i] = f0
            o[1, i] = <double>F
            o[2, i] = a3
            o[3, i] = b3
            o[4, i] = (rho + 2 * eps) * (fabs(a3) + 2 * dA) + (1.0 + 4 * rho) * dA + 4 * eps * absA + 3 * tau
            o[5, i] = (rho + 2 * eps) * (fabs(b3) + 2 * dB) + (1.0 + 4 * rho) * dB + 4 * eps * absB + 2 * tau
    return out


cdef inline void _seg_max(const double[:, ::1] R, double jb, double alpha, double beta, double rho, double tau,
                          double rb, Py_ssize_t lo, Py_ssize_t hi, double* vout, Py_ssize_t* aout,
                          double* wout) noexcept nogil:
    """The pass of :func:`phase_segments_max` over the centres lo .. hi - 1 with the arrays formed from the rows."""
    cdef Py_ssize_t i, t, arg = -1
    cdef double eps = 2.220446049250313e-16, ajb = jb if jb >= 0 else -jb
    cdef double h[4]
    cdef double e[4]
    cdef double A, B, eA, eB, f0, Fd, a3, b3
    cdef double ym, y0, y1, y2, d1, d2, d3, qa, qb, qc, disc, q, ww, val, pv, wv, best = -INFINITY, wbest = 0.0
    cdef double roots[2]
    cdef int nr, r
    for t in range(4):
        h[t] = 0.0
        e[t] = 0.0
    for i in range(lo - 2, hi + 1):
        for t in range(3):
            h[t] = h[t + 1]
            e[t] = e[t + 1]
        f0 = R[0, i]
        Fd = R[1, i]
        a3 = R[2, i]
        b3 = R[3, i]
        A = f0 + jb * a3
        B = Fd + jb * b3
        if f0 == 0.0 and Fd == 0.0 and a3 == 0.0 and b3 == 0.0 and R[4, i] == 0.0 and R[5, i] == 0.0:
            eA = 0.0                         # an entry phase_rows leaves at 0 (the first and last two)
            eB = 0.0
        else:
            eA = rho * f0 + tau + ajb * R[4, i] + 16 * eps * (f0 + ajb * fabs(a3))
            eB = rb * Fd + tau + ajb * R[5, i] + 16 * eps * (Fd + ajb * fabs(b3))
        h[3] = alpha * A - beta * B
        e[3] = alpha * eA + beta * eB
        if i >= lo + 1:              # h = H(x-2), H(x-1), H(x), H(x+1) for x = i - 1
            ym = h[3]
            y0 = h[2]
            y1 = h[1]
            y2 = h[0]
            pv = y0 if y0 > y1 else y1
            ww = -ym if -ym > -y2 else -y2
            if ww < 0.0:
                ww = 0.0
            q = (1.15 * pv if pv > 0.0 else pv) + 0.15 * ww
            q += (e[2] + e[1] + 0.09 * e[3] + 0.07 * e[0]
                  + 64 * eps * (fabs(ym) + fabs(y0) + fabs(y1) + fabs(y2)))
            if q <= best:
                continue
            d1 = y1 - y0
            d2 = y1 - 2.0 * y0 + ym
            d3 = y2 - 3.0 * y1 + 3.0 * y0 - ym
            val = y0
            wv = 0.0
            if y1 > y0:
                val = y1
                wv = 1.0
            qa = 0.5 * d3
            qb = d2
            qc = d1 - 0.5 * d2 - d3 / 6.0
            nr = 0
            if qa == 0.0:
                if qb != 0.0:
                    roots[0] = -qc / qb
                    nr = 1
            else:
                disc = qb * qb - 4.0 * qa * qc
                if disc >= 0.0:
                    q = -0.5 * (qb + (sqrt(disc) if qb >= 0 else -sqrt(disc)))
                    roots[0] = q / qa
                    nr = 1
                    if q != 0.0:
                        roots[1] = qc / q
                        nr = 2
            for r in range(nr):
                ww = roots[r]
                if ww > 0.0 and ww < 1.0:
                    pv = y0 + ww * d1 + (ww * ww - ww) * 0.5 * d2 + (ww * ww * ww - ww) * d3 / 6.0
                    if pv > val:
                        val = pv
                        wv = ww
            val += (e[2] + e[1] + 0.09 * e[3] + 0.07 * e[0]
                    + 64 * eps * (fabs(ym) + fabs(y0) + fabs(y1) + fabs(y2)))
            if val > best:
                best = val
                arg = i - 1
                wbest = wv
    vout[0] = best
    aout[0] = arg
    wout[0] = wbest


def phase_segments_max(const double[:, ::1] rows, double jb, double alpha, double beta, double rho, double tau,
                       const int64_t[::1] cuts):
    """Certified max over the count x and the lattice offset 0 <= w <= 1 of the phase-comparison value
    V(x, w) = sum_u l_u(w) H(x - u), u = -1, 0, 1, 2 (cubic Lagrange weights) of :mod:`shuffleamp.exact_count`
    (module notes, facts 7 and 9), over each segment of centres x = cuts[s] .. cuts[s+1] - 1 (indices, each clipped
    to 4 .. len - 4), with H = alpha A - beta B and its envelope formed on the fly from the rows of
    :func:`phase_rows` for ``jb`` (with the same ``rho`` and ``tau``).
    V is the cubic through (u, H(x - u)); its maximum over [0, 1] is taken at the ends and at the roots of
    its derivative, plus 64 EPS of the four values (the rounding of the roots), plus
    eH(x) + eH(x-1) + 0.09 eH(x+1) + 0.07 eH(x-2) (|l_0|, |l_1| <= 1, |l_-1| <= 1/12, |l_2| <= 0.065).
    A centre whose cheap bound (positive weights sum to at most 1.15, negative ones to at least -0.15)
    cannot beat the best value so far is skipped.
    Returns arrays (value, index of x, the maximising w there) per segment; (-inf, -1, 0) for an empty one."""
    cdef Py_ssize_t L = rows.shape[1], S = cuts.shape[0] - 1, s, lo, hi
    cdef double rb = rho + (L + 2) * <double>LDBL_EPSILON + 2.220446049250313e-16
    if L < 9 or rows.shape[0] != 6:
        raise ValueError("rows must be the (6, len) output of phase_rows")
    if S < 0:
        S = 0
    cdef cnp.ndarray[cnp.float64_t, ndim=1] vals = np.empty(S)
    cdef cnp.ndarray[cnp.intp_t, ndim=1] args = np.empty(S, dtype=np.intp)
    cdef cnp.ndarray[cnp.float64_t, ndim=1] ws = np.empty(S)
    cdef double[::1] vv = vals, wv = ws
    cdef Py_ssize_t[::1] av = args
    with nogil:
        for s in range(S):
            lo = cuts[s]
            hi = cuts[s + 1]
            if lo < 4:
                lo = 4
            if hi > L - 3:
                hi = L - 3
            if hi <= lo:
                vv[s] = -INFINITY
                av[s] = -1
                wv[s] = 0.0
            else:
                _seg_max(rows, jb, alpha, beta, rho, tau, rb, lo, hi, &vv[s], &av[s], &wv[s])
    return vals, args, ws
