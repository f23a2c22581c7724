# Certified screening (included from kernels.pyx): the Chernoff θ search of
# decomposition.chernoff_bounds, one family at a time in C instead of padded numpy passes.
#
# Only the θ is found here; the certified bound exp(nK(θ))/(eθn) (with its Berry-Esseen refinement and
# rounding margins) is evaluated by decomposition.chernoff_bounds at the returned θ, and it is valid for
# EVERY θ > 0, so this search decides tightness, never soundness.

from libc.float cimport DBL_EPSILON


cdef inline double _lse_shift(const double[::1] v, const double[::1] lp, Py_ssize_t k, double th) noexcept nogil:
    """max_j θ v_j + lp_j: the shift of the log-sum-exp forms below (-inf for k = 0)."""
    cdef Py_ssize_t j
    cdef double zm = -INFINITY, z
    for j in range(k):
        z = th * v[j] + lp[j]
        if z > zm:
            zm = z
    return zm


cdef void _chernoff_moments(const double[::1] v, const double[::1] lp, Py_ssize_t k, double th,
                            double* K, double* m1, double* var) noexcept nogil:
    """log E[e^{θV}] (log-sum-exp form) and the tilted mean and variance of the atoms (v, exp(lp))."""
    cdef Py_ssize_t j
    cdef double zm, w, S = 0.0, s1 = 0.0, s2 = 0.0, mu
    zm = _lse_shift(v, lp, k, th)
    for j in range(k):
        w = exp(th * v[j] + lp[j] - zm)
        S += w
        s1 += w * v[j]
        s2 += w * v[j] * v[j]
    mu = s1 / S
    K[0] = zm + log(S)
    m1[0] = mu
    var[0] = s2 / S - mu * mu
    if not (var[0] > 0.0):
        var[0] = 0.0


def chernoff_log_theta(const double[::1] a, const double[::1] b, const double[::1] c, const double[::1] beta,
                       const Py_ssize_t[::1] off, double eps, double n, int iterations,
                       double log_stop=-INFINITY):
    """log θ of the Chernoff bound of each packed atomic family at one ε (see ``chernoff_bounds``).

    The safeguarded Newton search of ``decomposition.chernoff_bounds`` on n K'(θ) = 1/θ in u = log θ
    (bracket [-40, 40], bisection when a step leaves the bracket, stop at |Δu| < 1e-4, a bracket narrower
    than 1e-4 or a bound that already underflows), started at the Gaussian approximation.

    Parameters
    ----------
    a, b, c, beta, off : arrays
        Packed families, as :func:`epsilon_search`.
    eps, n : float
        Central epsilon (nats) and users.
    iterations : int
        Iteration cap.
    log_stop : float, optional
        Stop a family's search as soon as its plain Chernoff bound n K(θ) - 1 - log(θ n) (with a relative
        margin) is below ``log_stop``: the caller only needs to know that the bound is below it (any θ is
        valid, so the bound then computed at that θ is certified, only not the tightest).

    Returns
    -------
    u : float64 ndarray, shape (F,)
        log θ in [-40, 40] per family (0 where no search is needed or possible: no positive atom,
        non-finite atoms): any θ > 0 gives a valid bound.
    positive : int8 ndarray, shape (F,)
        0 for the families whose atoms (of positive mass) are all finite and <= 0 (their δ is 0), else 1.
    stats : float64 ndarray, shape (F, 6)
        At θ = exp(u) of the families with ``positive``: K(θ) = log E[e^{θV}] (log-sum-exp form), under
        the tilted law the mean, variance, third absolute central moment and mean of |V| (the inputs of
        the certified bound, which ``chernoff_bounds`` evaluates with rounding margins), and a bound on
        the absolute rounding error of K (the cancellation in max + log-sum); K is NaN for a family with
        a non-finite atom, the row is 0 for families without ``positive``.
    """
    cdef Py_ssize_t F = beta.shape[0], K = 1, f, j, k, s, it
    if off.shape[0] != F + 1:
        raise ValueError("chernoff_log_theta: inconsistent array lengths")
    for f in range(F):
        K = max(K, off[f + 1] - off[f])
    out_a = np.zeros(F)
    cdef double[::1] out = out_a, v = np.zeros(K + 1), lp = np.zeros(K + 1)
    cdef double e = exp(eps), u, lo, hi, th, Kv, m1, var, th0, h, un, vmax, lb
    cdef bint small, finite
    pos_a = np.zeros(F, dtype=np.int8)
    cdef signed char[::1] pos = pos_a
    stats_a = np.zeros((F, 6))
    cdef double[:, ::1] stats = stats_a
    with nogil:
        for f in range(F):
            k = 0
            vmax = -INFINITY
            finite = True
            for j in range(off[f], off[f + 1]):
                if c[j] > 0.0:
                    v[k] = (a[j] - e * b[j]) / c[j]
                    lp[k] = log(c[j])
                    if not isfinite(v[k]):
                        finite = False
                    elif v[k] > vmax:
                        vmax = v[k]
                    k += 1
            if beta[f] > 0.0:
                v[k] = 0.0
                lp[k] = log(beta[f])
                vmax = max(vmax, 0.0)
                k += 1
            if not finite:
                pos[f] = 1          # no search: the caller's bound is inf
                stats[f, 0] = NAN
                continue
            if k == 0 or vmax <= 0.0:
                continue            # no positive atom: delta = 0, no search
            pos[f] = 1
            _chernoff_moments(v, lp, k, 1.0, &Kv, &m1, &var)
            th0 = (-n * m1 + sqrt((n * m1) * (n * m1) + 4.0 * n * var)) / (2.0 * n * var)
            u = log(th0) if (isfinite(th0) and th0 > 0.0) else 0.0
            if not isfinite(u):
                u = 0.0
            u = min(max(u, -39.0), 39.0)
            lo = -40.0
            hi = 40.0
            for it in range(iterations):
                th = exp(u)
                _chernoff_moments(v, lp, k, th, &Kv, &m1, &var)
                h = n * m1 - 1.0 / th
                lb = n * Kv - 1.0 - log(th * n)
                small = lb < -800.0 or lb + 1e-6 * (1.0 + fabs(n * Kv)) < log_stop
                if h > 0.0:
                    hi = u
                else:
                    lo = u
                un = u - h / (n * th * var + 1.0 / th)
                if not isfinite(un) or un <= lo or un >= hi:
                    un = 0.5 * (lo + hi)
                if small:
                    un = u
                if fabs(un - u) < 1e-4 or hi - lo < 1e-4 or small:
                    u = un
                    break
                u = un
            if not isfinite(u):
                u = 0.0
            out[f] = u
            _chernoff_tilted(v, lp, k, exp(u), &stats[f, 0])
    return out_a, pos_a, stats_a


cdef void _chernoff_tilted(const double[::1] v, const double[::1] lp, Py_ssize_t k, double th,
                           double* st) noexcept nogil:
    """At θ: st = (K(θ) = log E[e^{θV}], and under the tilted law the mean, the central second and third
    absolute moments and the mean of |V|), two passes (the central moments about the computed mean)."""
    cdef Py_ssize_t j
    cdef double zm, w, S = 0.0, s1 = 0.0, m, d, s2 = 0.0, s3 = 0.0, sa = 0.0, sz = 0.0
    zm = _lse_shift(v, lp, k, th)
    for j in range(k):
        w = exp(th * v[j] + lp[j] - zm)
        S += w
        s1 += w * v[j]
        sa += w * fabs(v[j])
        sz += w * (fabs(th * v[j]) + fabs(lp[j]) + fabs(zm))
    m = s1 / S
    for j in range(k):
        w = exp(th * v[j] + lp[j] - zm)
        d = v[j] - m
        s2 += w * d * d
        s3 += w * fabs(d) * d * d
    st[0] = zm + log(S)
    st[1] = m
    st[2] = s2 / S
    st[3] = s3 / S
    st[4] = sa / S
    # rounding of K: each z_j - zm (relative error of its weight <= a few ulps of |θv_j| + |lp_j| + |zm|,
    # weighted), the sum of k weights, the log and the final addition; a factor 8 over the ulp count
    st[5] = 8.0 * DBL_EPSILON * (fabs(zm) + fabs(log(S)) + sz / S + <double>k + 2.0)
