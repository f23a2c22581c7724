# Binomial-mixture sums shared by binomial.pyx (production) and oracles.pyx (test oracles);
# textually included (``include``) by both, so the formulas are written once.
# Needs: from libc.math cimport ceil, floor, exp, log, log1p, sqrt, fabs, lgamma;
#        from scipy.special.cython_special cimport betainc, betaincc

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
