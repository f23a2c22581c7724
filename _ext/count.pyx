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
from libc.math cimport exp, log, sqrt, INFINITY
from libc.stdint cimport int64_t

cnp.import_array()


def binom_window(int64_t N, double p, double logit, int64_t lo, int64_t hi):
    """PMF of Bin(N, p) on k = lo..hi, normalised to sum 1 on the window.

    ``logit`` = log(p / (1 - p)) (passed exactly: ±eps0). Every entry is obtained from the (clipped)
    mode, set to 1, by the exact ratio f(k+1)/f(k) = (N-k)/(k+1) * p/(1-p) (or its inverse going
    down), multiplied in linear space: three roundings per step, so the relative error of entry k
    is at most 3 |k - mode| machine epsilons (plus one for the odds and the normalisation).  The
    window is where the mass is, so nothing underflows (the Chernoff tails are >= 1e-300 there).
    """
    cdef int64_t W = hi - lo + 1, k, mode, i
    cdef cnp.ndarray[cnp.float64_t, ndim=1] out = np.empty(W, dtype=np.float64)
    cdef double[::1] o = out
    cdef double v, tot, odds = exp(logit), inv = exp(-logit)
    mode = <int64_t>((N + 1) * p)
    if mode > N:
        mode = N
    if mode < lo:
        mode = lo
    if mode > hi:
        mode = hi
    with nogil:
        o[mode - lo] = 1.0
        v = 1.0
        for k in range(mode, hi):           # f(k+1)/f(k)
            v = v * ((<double>(N - k) / <double>(k + 1)) * odds)
            o[k + 1 - lo] = v
        v = 1.0
        for k in range(mode, lo, -1):       # f(k-1)/f(k)
            v = v * ((<double>k / <double>(N - k + 1)) * inv)
            o[k - 1 - lo] = v
        tot = 0.0
        for i in range(W):
            tot += o[i]
        tot = 1.0 / tot
        for i in range(W):
            o[i] *= tot
    return out


def pair_extremes(const double[::1] f, double q0, double q1, double rho, double eta, double tau,
                  double x, bint want_eps):
    """:func:`lower_set_extremes` of the count pair P_b(c) = q_b f(c-1) + (1 - q_b) f(c), b = 0, 1
    (c = 0 .. W, W = len(f)), built on the fly (no arrays): one pass over the window.

    Each P_b entry is formed with two roundings on top of ``f``'s own error; ``rho`` must include
    them (the caller adds 4 machine epsilons).
    """
    cdef Py_ssize_t W = f.shape[0], i, arg = -1
    cdef double F0 = 0.0, F1 = 0.0, h0, l0, h1, l1, e = 0.0, up, lw, v, fprev, fcur, a0, a1
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
            a0 = q0 * fprev + (1.0 - q0) * fcur
            a1 = q1 * fprev + (1.0 - q1) * fcur
            fprev = fcur
            F0 += a0
            F1 += a1
            h0 = F0 * r_hi + eta * sqrt(<double>(i + 1)) + tau
            l0 = F0 * r_lo - eta * sqrt(<double>(i + 1))
            h1 = F1 * r_hi + eta * sqrt(<double>(i + 1)) + tau
            l1 = F1 * r_lo - eta * sqrt(<double>(i + 1))
            if l1 < 0.0:
                l1 = 0.0
            if want_eps:
                if h0 > x:
                    v = INFINITY if l1 <= 0.0 else (h0 * (1.0 + slack) - x) / l1
                    if v > up:
                        up = v
                if l0 * (1.0 - slack) > x:
                    v = (l0 * (1.0 - slack) - x) / h1
                    if v > lw:
                        lw = v
                        arg = i
            else:
                v = h0 - e * l1
                if v > up:
                    up = v
                v = l0 - e * h1
                if v > lw:
                    lw = v
                    arg = i
    if want_eps:
        up = -INFINITY if up <= 0.0 else log(up)
        lw = -INFINITY if lw <= 0.0 else log(lw)
    return up, lw, arg


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
    cdef double F0 = 0.0, F1 = 0.0, h0, l0, h1, l1, e, up, lw, v
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
        h0 = F0 * r_hi + eta * sqrt(<double>(i + 1)) + tau      # tau: lower tail below the window
        l0 = F0 * r_lo - eta * sqrt(<double>(i + 1))
        h1 = F1 * r_hi + eta * sqrt(<double>(i + 1)) + tau
        l1 = F1 * r_lo - eta * sqrt(<double>(i + 1))
        if l1 < 0.0:
            l1 = 0.0
        if want_eps:
            if h0 > x:
                v = INFINITY if l1 <= 0.0 else (h0 * (1.0 + slack) - x) / l1
                if v > up:
                    up = v
            if l0 * (1.0 - slack) > x:
                v = (l0 * (1.0 - slack) - x) / h1
                if v > lw:
                    lw = v
                    arg = i
        else:
            v = h0 - e * l1
            if v > up:
                up = v
            v = l0 - e * h1
            if v > lw:
                lw = v
                arg = i
    if want_eps:
        up = -INFINITY if up <= 0.0 else log(up)
        lw = -INFINITY if lw <= 0.0 else log(lw)
    return up, lw, arg
