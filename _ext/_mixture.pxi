# Exact binomial-mixture evaluation of E[(G_1+...+G_n)_+] for a finite law with few atoms.
# Textually included by kernels.pyx (production); the dispatch is in ``_profile_one``.
#
# The multinomial counts (N_1, ..., N_k) of the k atoms are sampled level by level: the "outer" atoms
# one at a time (N_j ~ Bin(remaining users, p_j / remaining mass)), the last four as two pairs
# (L = users on the pair {a, b} ~ Bin(m, .), then X = N_b | L ~ Bin(L, .) and Y = N_d | m - L ~
# Bin(m - L, .), independent given L), the last two (or one) in closed form.  Given L,
# S = base + X dX + Y dY with dX, dY > 0, and E[(s + Y dY)_+] = (s + dY j0) T0[j0] + dY T1[j0] with
# the tail tables T0[j] = P(Y >= j), T1[j] = E[(Y - j); Y >= j] built once per L (both terms are
# non-negative: no cancellation), so the cost is about window_L x (window_X + window_Y).
#
# Certification (everything charged to the error, added to upper bounds, subtracted from lower ones):
# * truncation: every binomial window is grown from its mode until the geometric tail bound of the
#   log-concave pmf (sum_{j>k} pmf(j) <= pmf(k+1) / (1 - r_k), r_k = pmf(k+1)/pmf(k) < 1, ratios
#   decreasing) times the node's weight is below ``tol``; the dropped mass of a node is charged
#   times the node's largest possible S_+ (S <= s0 + m max v), so E[S_+] is bounded on both sides;
# * pmf rounding: the mode pmf (``_binom_pmf``, relative accuracy ~1e-14, charged 1e-13) and the
#   ratio recurrence (6 eps per step from the mode), per level, relative to the sum;
# * rounding of S: each partial sum s is off by at most 8 eps n max|v| (first order), charged on the
#   weight of the terms whose computed S exceeds -(that error) ("pos"); sums of non-negative terms:
#   (number of terms) eps relative.
# Rounding parts are first-order estimates (as for the multinomial enumeration), not interval
# arithmetic.  A run that exceeds its step budget, or whose error bound exceeds rtol x value after
# one refinement of ``tol``, returns ST_FALLBACK (the caller uses the Bromwich integral).
#
# Needs (kernels.pyx): floor, ceil, exp, log, log1p, sqrt, fabs, lgamma, isfinite; malloc, free;
# betainc, betaincc.

include "_binomial_sums.pxi"

DEF ST_MIXTURE = 5         # exact binomial-mixture sums (evaluator "binomial-mixture")
DEF MIX_MAX_ATOMS = 7      # laws with more atoms go to the Bromwich integral
#: step budget of one evaluation (window points; about 3-5 ns each): beyond it the Bromwich integral
DEF MIX_MAX_STEPS = 300000.0
#: the a-priori step estimate may exceed the budget by this factor (pruning of the S <= 0 region)
DEF MIX_EST_FACTOR = 8.0
#: largest n (buffers of n + 2 doubles per level)
DEF MIX_MAX_N = 200000.0
#: first per-node truncation tolerance (probability x weight)
DEF MIX_TOL0 = 1e-30


cdef struct mix_t:
    double v[MIX_MAX_ATOMS]      # atom values, conditioning order: outer atoms, then pairs (a<b), (c<d)
    double p[MIX_MAX_ATOMS]
    double vmaxr[MIX_MAX_ATOMS]  # max of v[j:] (remaining atoms)
    double vminr[MIX_MAX_ATOMS]  # min of v[j:]
    double mpr[MIX_MAX_ATOMS]    # sum_{i>=j} p_i v_i
    double remp[MIX_MAX_ATOMS]   # sum_{i>=j} p_i
    int k
    double tol
    double e_abs                 # rounding bound of a partial sum S
    double* buf[MIX_MAX_ATOMS + 1]
    double* t0
    double* t1
    double total                 # sum of weight x E[S_+ | node] (S, not S/n)
    double charge                # truncation charge (S units)
    double pos                   # weight of terms whose S may be positive (rounding charge)
    double closed                # weight of closed-form nodes (rounding charge)
    double nterms
    double steps
    double max_steps
    long dmax[MIX_MAX_ATOMS + 1] # largest distance from the mode per level
    int abort


cdef inline double _mix_window(mix_t* M, int lev, long m, double q, double w, long* lo, long* hi) noexcept nogil:
    """pmf of Bin(m, q) into M.buf[lev][lo..hi] (indexed by the count); returns the dropped mass bound."""
    cdef double* b = M.buf[lev]
    cdef double pk, pn, r, rq, drop = 0.0
    cdef long mode, k
    if q <= 0.0 or m == 0:
        b[0] = 1.0
        lo[0] = 0
        hi[0] = 0
        return 0.0
    if q >= 1.0:
        b[m] = 1.0
        lo[0] = m
        hi[0] = m
        return 0.0
    rq = q / (1.0 - q)
    mode = <long>floor((m + 1) * q)
    if mode > m:
        mode = m
    if mode < 0:
        mode = 0
    pk = _binom_pmf(mode, m, q)
    b[mode] = pk
    k = mode
    while k < m:                      # right tail
        r = (<double>(m - k) / <double>(k + 1)) * rq
        pn = pk * r
        if r < 1.0 and w * pn / (1.0 - r) <= M.tol:
            drop += pn / (1.0 - r) * (1.0 + 1e-10) + 1e-300
            break
        k += 1
        b[k] = pn
        pk = pn
    hi[0] = k
    if k - mode > M.dmax[lev]:
        M.dmax[lev] = k - mode
    pk = b[mode]
    k = mode
    while k > 0:                      # left tail
        r = (<double>k / <double>(m - k + 1)) / rq
        pn = pk * r
        if r < 1.0 and w * pn / (1.0 - r) <= M.tol:
            drop += pn / (1.0 - r) * (1.0 + 1e-10) + 1e-300
            break
        k -= 1
        b[k] = pn
        pk = pn
    lo[0] = k
    if mode - k > M.dmax[lev]:
        M.dmax[lev] = mode - k
    M.steps += <double>(hi[0] - lo[0] + 1)
    return drop


cdef void _mix_pair(mix_t* M, int lev, long m, double s0, double w) noexcept nogil:
    """Two atoms left (a < b): S = s0 + m v_a + Y (v_b - v_a), Y ~ Bin(m, p_b / (p_a + p_b))."""
    cdef double va = M.v[lev], vb = M.v[lev + 1], d = vb - va, s, x, drop
    cdef long lo, hi, y
    cdef double* b
    s = s0 + m * va
    drop = _mix_window(M, lev, m, M.p[lev + 1] / M.remp[lev], w, &lo, &hi)
    x = s + m * d
    if x > 0.0:
        M.charge += w * drop * x
    b = M.buf[lev]
    for y in range(lo, hi + 1):
        x = s + y * d
        if x > -M.e_abs:
            M.pos += w * b[y]
            if x > 0.0:
                M.total += w * b[y] * x
                M.nterms += 1.0


cdef void _mix_quad(mix_t* M, int lev, long m, double s0, double w) noexcept nogil:
    """Four atoms left: pairs (a<b) and (c<d); L users on {a, b}, X = N_b | L, Y = N_d | m - L."""
    cdef double va = M.v[lev], vb = M.v[lev + 1], vc = M.v[lev + 2], vd = M.v[lev + 3]
    cdef double pa = M.p[lev], pb = M.p[lev + 1], pc = M.p[lev + 2], pd = M.p[lev + 3]
    cdef double dX = vb - va, dY = vd - vc, qL = (pa + pb) / M.remp[lev], qX = pb / (pa + pb), qY = pd / (pc + pd)
    cdef double dropL, dropX, dropY, wl, base, smax, s, x, sub, pos, thr
    cdef long loL, hiL, L, loX, hiX, loY, hiY, xx, y, j0, mx, my, xs
    cdef double* bL = M.buf[lev]
    cdef double* bX = M.buf[lev + 1]
    cdef double* bY = M.buf[lev + 2]
    cdef double* T0 = M.t0
    cdef double* T1 = M.t1
    dropL = _mix_window(M, lev, m, qL, w, &loL, &hiL)
    x = s0 + m * M.vmaxr[lev]
    if x > 0.0:
        M.charge += w * dropL * x
    for L in range(loL, hiL + 1):
        if M.steps > M.max_steps:
            M.abort = 1
            return
        wl = w * bL[L]
        mx = L
        my = m - L
        base = s0 + mx * va + my * vc
        smax = base + mx * dX + my * dY
        if smax <= -M.e_abs:
            continue
        if wl <= M.tol:               # negligible node: charged whole
            if smax > 0.0:
                M.charge += wl * smax
            continue
        if base >= M.e_abs:           # S > 0 on the whole node: E[S] in closed form
            M.total += wl * (base + mx * qX * dX + my * qY * dY)
            M.closed += wl
            M.nterms += 1.0
            continue
        dropY = _mix_window(M, lev + 2, my, qY, wl, &loY, &hiY)
        dropX = _mix_window(M, lev + 1, mx, qX, wl, &loX, &hiX)
        if smax > 0.0:
            M.charge += wl * (dropX + dropY) * smax
        # tail tables of Y over [loY, hiY]
        T0[hiY] = bY[hiY]
        T1[hiY] = 0.0
        y = hiY - 1
        while y >= loY:
            T1[y] = T1[y + 1] + T0[y + 1]
            T0[y] = T0[y + 1] + bY[y]
            y -= 1
        # smallest x with base + x dX + hiY dY > -e_abs
        thr = -M.e_abs - base - hiY * dY
        xs = loX
        if thr >= 0.0:
            x = floor(thr / dX)
            if x >= <double>hiX:
                continue
            if x + 1.0 > <double>xs:
                xs = <long>x + 1
            while xs > loX and base + (xs - 1) * dX + hiY * dY > -M.e_abs:
                xs -= 1
            while xs <= hiX and not (base + xs * dX + hiY * dY > -M.e_abs):
                xs += 1
        sub = 0.0
        pos = 0.0
        for xx in range(xs, hiX + 1):
            s = base + xx * dX
            # smallest y in the window with s + y dY > -e_abs (rounding margin), then > 0
            if s > -M.e_abs:
                j0 = loY
            else:
                x = floor((-M.e_abs - s) / dY) + 1.0
                j0 = <long>x if x > <double>loY else loY
                while j0 > loY and s + (j0 - 1) * dY > -M.e_abs:
                    j0 -= 1
                while j0 <= hiY and not (s + j0 * dY > -M.e_abs):
                    j0 += 1
            if j0 > hiY:
                continue
            pos += bX[xx] * T0[j0]
            while j0 <= hiY and not (s + j0 * dY > 0.0):
                j0 += 1
            if j0 > hiY:
                continue
            sub += bX[xx] * ((s + dY * j0) * T0[j0] + dY * T1[j0])
        M.steps += <double>(hiX - xs + 1)
        M.total += wl * sub
        M.pos += wl * pos
        M.nterms += <double>(hiX - xs + 1) + <double>(hiY - loY + 1)


cdef void _mix_node(mix_t* M, int lev, long m, double s0, double w) noexcept nogil:
    """Adds the node (m users left on atoms lev..k-1, partial sum s0, weight w) to M."""
    cdef int r = M.k - lev
    cdef double x, drop
    cdef long lo, hi, j
    cdef double* b
    if M.abort:
        return
    if M.steps > M.max_steps:
        M.abort = 1
        return
    x = s0 + m * M.vmaxr[lev]
    if w <= M.tol:                    # negligible node: charged whole (S <= x)
        if x > 0.0:
            M.charge += w * x
        return
    if m == 0 or r == 1 or x <= -M.e_abs:
        if x > -M.e_abs:
            M.pos += w
        if x > 0.0:
            M.total += w * x          # m == 0 (x = s0) or one atom left
            M.nterms += 1.0
        return
    if s0 + m * M.vminr[lev] >= M.e_abs:     # S > 0 on the whole node
        M.total += w * (s0 + m * (M.mpr[lev] / M.remp[lev]))
        M.closed += w
        M.nterms += 1.0
        return
    if r == 2:
        _mix_pair(M, lev, m, s0, w)
        return
    if r == 4:
        _mix_quad(M, lev, m, s0, w)
        return
    drop = _mix_window(M, lev, m, M.p[lev] / M.remp[lev], w, &lo, &hi)
    if x > 0.0:
        M.charge += w * drop * x
    b = M.buf[lev]
    for j in range(lo, hi + 1):
        _mix_node(M, lev + 1, m - j, s0 + j * M.v[lev], w * b[j])
        if M.abort:
            return


cdef inline double _mix_width(double m, double q) noexcept nogil:
    """A-priori window length of Bin(m, q) at tolerance ~1e-30 (about +-11.7 sd)."""
    cdef double w
    if q <= 0.0 or q >= 1.0 or m <= 0.0:
        return 1.0
    w = 23.5 * sqrt(m * q * (1.0 - q)) + 3.0
    return w if w < m + 1.0 else m + 1.0


cdef int _mix_order(const double[::1] v, const double[::1] p, Py_ssize_t k, double n, mix_t* M,
                    double* est) noexcept nogil:
    """Conditioning order: the k - 4 atoms of smallest count spread outside, the rest as pairs; estimate."""
    cdef int idx[MIX_MAX_ATOMS]
    cdef int used[MIX_MAX_ATOMS]
    cdef int i, j, t, best, nout, c
    cdef double sd, bs, e = 1.0, m_rem = n, q, ww
    for i in range(k):
        used[i] = 0
    nout = <int>k - 4 if k > 4 else (1 if k == 3 else 0)
    c = 0
    for t in range(nout):
        best = -1
        bs = 0.0
        for i in range(<int>k):
            if not used[i]:
                sd = p[i] * (1.0 - p[i])
                if best < 0 or sd < bs:
                    best = i
                    bs = sd
        used[best] = 1
        idx[c] = best
        c += 1
    for i in range(<int>k):             # the remaining atoms in increasing value (v is sorted)
        if not used[i]:
            idx[c] = i
            c += 1
    for i in range(<int>k):
        M.v[i] = v[idx[i]]
        M.p[i] = p[idx[i]]
    M.k = <int>k
    j = <int>k - 1
    M.vmaxr[j] = M.v[j]
    M.vminr[j] = M.v[j]
    M.mpr[j] = M.p[j] * M.v[j]
    M.remp[j] = M.p[j]
    while j > 0:
        j -= 1
        M.vmaxr[j] = M.v[j] if M.v[j] > M.vmaxr[j + 1] else M.vmaxr[j + 1]
        M.vminr[j] = M.v[j] if M.v[j] < M.vminr[j + 1] else M.vminr[j + 1]
        M.mpr[j] = M.mpr[j + 1] + M.p[j] * M.v[j]
        M.remp[j] = M.remp[j + 1] + M.p[j]
    # step estimate: outer windows (at the mean remaining count) x inner cost
    for i in range(nout):
        q = M.p[i] / M.remp[i]
        e *= _mix_width(m_rem, q)
        m_rem -= m_rem * q
    i = nout
    if k - nout == 4:
        q = (M.p[i] + M.p[i + 1]) / M.remp[i]
        ww = _mix_width(m_rem * q, M.p[i + 1] / (M.p[i] + M.p[i + 1])) \
            + _mix_width(m_rem * (1.0 - q), M.p[i + 3] / (M.p[i + 2] + M.p[i + 3]))
        e *= _mix_width(m_rem, q) * ww
    elif k - nout == 2:
        e *= _mix_width(m_rem, M.p[i + 1] / M.remp[i])
    est[0] = e
    return 0


cdef int _mixture(const double[::1] v, const double[::1] p, double n, double rtol, double max_steps,
                  double* value, double* err, double* steps) noexcept nogil:
    """E[(G_1+...+G_n)_+]/n of the sorted finite law (v, p) by binomial-mixture sums; ST_MIXTURE or ST_FALLBACK.

    ``value`` and ``err`` as for the other evaluators (certified: value - err <= truth <= value + err).
    """
    cdef Py_ssize_t k = v.shape[0], j
    cdef mix_t M
    cdef double est, amax = 0.0, rel, e_round, tol = MIX_TOL0, val, er, x
    cdef long nn, lev
    cdef int attempt, nlev, st = ST_FALLBACK
    value[0] = 0.0
    err[0] = 0.0
    steps[0] = 0.0
    if k < 2 or k > MIX_MAX_ATOMS or not (n >= 1.0) or n > MIX_MAX_N or n != floor(n):
        return ST_FALLBACK
    if not (v[0] < 0.0 < v[k - 1]):
        return ST_FALLBACK
    for j in range(k):
        if not (p[j] > 0.0) or not isfinite(v[j]):
            return ST_FALLBACK
        if fabs(v[j]) > amax:
            amax = fabs(v[j])
    _mix_order(v, p, k, n, &M, &est)
    if est > MIX_EST_FACTOR * max_steps:
        return ST_FALLBACK
    nn = <long>n
    for lev in range(MIX_MAX_ATOMS + 1):
        M.buf[lev] = NULL
    M.t0 = NULL
    M.t1 = NULL
    nlev = <int>k
    for lev in range(nlev + 1):
        M.buf[lev] = <double*>malloc((nn + 2) * sizeof(double))
        if M.buf[lev] == NULL:
            break
    M.t0 = <double*>malloc((nn + 2) * sizeof(double))
    M.t1 = <double*>malloc((nn + 2) * sizeof(double))
    if M.t0 != NULL and M.t1 != NULL and M.buf[nlev] != NULL:
        for attempt in range(2):
            M.tol = tol
            M.e_abs = 8.0 * DBL_EPS * n * amax * (k + 2)
            M.total = 0.0
            M.charge = 0.0
            M.pos = 0.0
            M.closed = 0.0
            M.nterms = 0.0
            M.steps = 0.0
            M.max_steps = max_steps
            M.abort = 0
            for lev in range(MIX_MAX_ATOMS + 1):
                M.dmax[lev] = 0
            _mix_node(&M, 0, nn, 0.0, 1.0)
            steps[0] += M.steps
            if M.abort:
                break
            # relative error of the weights: mode pmf 1e-13 and 6 eps per recurrence step, per level;
            # the sums of non-negative terms: (number of terms + window lengths) eps
            rel = (k - 1) * 1e-13
            for lev in range(nlev + 1):
                rel += 6.0 * DBL_EPS * M.dmax[lev]
            rel += DBL_EPS * (M.nterms + 4.0 * nn + 16.0)
            e_round = M.e_abs * (M.pos + M.closed)
            val = M.total / n
            er = (M.total * rel + e_round + M.charge * (1.0 + 1e-12)) / n
            if er <= rtol * val:
                value[0] = val
                err[0] = er
                st = ST_MIXTURE
                break
            # the truncation dominates: one retry with a tolerance scaled to the value found
            if val > 0.0 and M.charge > 0.0 and M.charge / n > 0.5 * rtol * val:
                x = tol * 0.01 * rtol * val / (M.charge / n)
                tol = x if x > 1e-300 else 1e-300
            else:
                break
    for lev in range(MIX_MAX_ATOMS + 1):
        free(M.buf[lev])
    free(M.t0)
    free(M.t1)
    return st


def mixture_positive_part(const double[::1] values, const double[::1] probs, double n, double rtol,
                          double max_steps=MIX_MAX_STEPS):
    """Certified E[(G_1+...+G_n)_+]/n of a finite law by exact binomial-mixture sums (the kernel path).

    Parameters
    ----------
    values, probs : float64[::1]
        Atoms (sorted increasingly, distinct) and their masses (positive, summing to 1).
    n : float
        Number of summands (an integer value).
    rtol : float
        The error bound must be at most ``rtol`` x value, else the evaluation is declined.
    max_steps : float
        Step budget (window points); beyond it the evaluation is declined.

    Returns
    -------
    (ok, value, err, steps) : (bool, float, float, float)
        ``ok`` False when declined (too many atoms or steps, bound not within ``rtol``, no atom of
        each sign); otherwise value - err <= E[S_+]/n <= value + err.
    """
    cdef double val = 0.0, er = 0.0, stp = 0.0
    cdef int st
    if values.shape[0] != probs.shape[0]:
        raise ValueError("mixture_positive_part: inconsistent array lengths")
    with nogil:
        st = _mixture(values, probs, n, rtol, max_steps, &val, &er, &stp)
    return st == ST_MIXTURE, val, er, stp
