# Exact binomial-mixture evaluation of E[(G_1+...+G_n)_+] for a finite law with few atoms.
# Textually included by kernels.pyx (production); the dispatch is in ``_profile_one``.
#
# The multinomial counts (N_1, ..., N_k) of the k atoms are sampled level by level: the "outer" atoms
# one at a time (N_j ~ Bin(remaining users, p_j / remaining mass)), the last four as two pairs
# (L = users on the pair {a, b} ~ Bin(m, .), then X = N_b | L ~ Bin(L, .) and Y = N_d | m - L ~
# Bin(m - L, .), independent given L), the last two (or one) in closed form.  Given L,
# S = base + X dX + Y dY with dX, dY > 0, and E[(s + Y dY)_+] = (s + dY j0) T0[j0] + dY T1[j0] with
# the tail tables T0[j] = P(Y >= j), T1[j] = E[(Y - j); Y >= j] (both terms are non-negative: no
# cancellation).  The windows of X (by L) and the tables of Y (by m - L) are built once per count and
# reused by every outer node, so the cost is about (outer windows) x window_L x window_X / 4 plus
# the building of about window_L + (outer windows) windows.
#
# Memory is O(window sizes) at any n (no n + 1 buffers): each level's pmf buffer holds its current
# window only (indexed by count - lo, grown to the longest window), and the window caches of X and Y
# are indexed by count - base over the range of counts that occur (grown by doubling).  A window longer
# than the steps left in the budget aborts the evaluation before anything of its length is allocated.
#
# Certification (everything charged to the error, added to upper bounds, subtracted from lower ones):
# * truncation (Chernoff-tilted windows): for any theta > 0, s_+ <= e^{theta s} / (e theta), so a node
#   (weight w, partial sum s0, m users left on atoms with log-MGF K) contributes at most its "tilted
#   mass" w e^{theta s0 + m K(theta)} / (e theta), and the tilted masses of its children are that times
#   the pmf of the exponentially tilted binomial Bin(m, q_theta).  Every window is the range of the
#   tilted binomial outside which at most ``eta`` of its mass lies on each side (geometric tail bound
#   of a log-concave pmf: sum_{j>k} pmf(j) <= pmf(k+1) / (1 - r_k), r_k = pmf(k+1)/pmf(k) < 1); the
#   dropped tilted mass is charged.  theta is the saddle point of n K(theta) - 2 log theta, so the
#   windows sit where E[S_+] comes from; the untilted pmf is evaluated on them;
# * pmf rounding, per level, relative to the sum: the starting pmf (``_binom_pmf``, relative accuracy
#   ~1e-14 near the mode, charged 1e-13, plus 8 eps of the terms of each ``_bd0`` it evaluates in the
#   cancelling direct form when the window lies far from the untilted mode: ``_pmf_rel``), the ratio
#   recurrence (6 eps per step from the start), and the rounding of q itself (a ratio of masses, (k + 4)
#   eps relative, which moves log pmf(x) by that times |x - m q| / (1 - q)); all bounded by the window
#   sizes (O(sqrt n)), not by n;
# * the dropped tilted mass is rounded up: the tail ratios (qt rounded to ``qt_err``) by
#   exp((distance + 2 + r/(1-r)) rho), the node's tilted mass by 8 eps of its exponent's terms plus
#   m x (rounding of K per user);
# * rounding of S: each partial sum s is off by at most 8 eps n max|v| (first order), charged on the
#   weight of the terms whose computed S exceeds -(that error) ("pos"): relative to delta that is
#   ~8 eps (k + 2) n max|v| / E[S | S > 0], which grows like sqrt(n) only (<= 1e-6 at n = 1e9 for the
#   laws of the latency suite; the rtol test declines the rest); sums of non-negative terms: (number of
#   terms + window lengths) eps relative; weights that leave the normal range: 1e-300 n max|v| per term.
# Rounding parts are first-order estimates (as for the multinomial enumeration), not interval
# arithmetic.  A run whose a-priori step estimate exceeds its budget (``_mix_budget``: the estimated
# cost of the Bromwich integral for this law, the one dispatch rule of ``_profile_one`` and
# ``exact._positive_part``), that exceeds twice the budget, or whose error bound exceeds rtol x value
# after one refinement of ``eta``, returns ST_FALLBACK (the caller uses the Bromwich integral).  For
# k >= 6 atoms the a-priori estimate (full outer windows) is often 10-100x high, so a cost model
# (``_mix_dry``: the same recursion and sign pruning on a-priori windows, no pmf, at most MIX_DRY_ITERS
# nodes) decides instead: the run starts when the model's steps are within MIX_TRIAL_STEPS and the
# budget, and aborts beyond twice the model's steps (+1e5).  The choice only selects the evaluator:
# every accepted evaluation carries the certified error bound above.
#
# Needs (kernels.pyx): floor, ceil, exp, log, log1p, sqrt, fabs, lgamma, isfinite; malloc, free;
# betainc, betaincc.

include "_binomial_sums.pxi"

DEF ST_MIXTURE = 5         # exact binomial-mixture sums (evaluator "binomial-mixture")
DEF MIX_MAX_ATOMS = 7      # laws with more atoms go to the Bromwich integral
#: smallest step budget of one evaluation (window points, about 4-8 ns each)
DEF MIX_MAX_STEPS = 400000.0
#: the a-priori step estimate may exceed the budget by this factor
DEF MIX_EST_FACTOR = 1.0
#: step budget by n: min(MIX_BUDGET_CAP, max(MIX_MAX_STEPS, MIX_BUDGET_N * k / (4 n))), where the Bromwich
#: integral costs about 1e7 / n atom-frequency evaluations of ~50-100 steps each at n = 1e2..1e4
#: (measured for k-RR, OUE, BLH, RAPPOR, HR on the latency suite, bench/bench_latency.py)
DEF MIX_BUDGET_N = 5e8
DEF MIX_BUDGET_CAP = 5e6
#: a meet-in-the-middle point (``_small_n.pxi``) costs about this many steps
DEF MIX_MITM_RATIO = 30.0
#: a law whose tilted law puts qmax >= MIX_DOM_MASS on one atom: its integral takes about
#: MIX_DOM_NODES (1 + log10(0.03 / (1 - qmax))) more nodes; the steps added are capped at MIX_DOM_CAP
DEF MIX_DOM_MASS = 0.97
DEF MIX_DOM_NODES = 30000.0
DEF MIX_DOM_CAP = 2000000.0
#: a law of k >= 6 atoms whose a-priori estimate exceeds the budget: the cost model ``_mix_dry`` (the
#: recursion's sign pruning replayed on a-priori windows, at most MIX_DRY_ITERS nodes) decides instead;
#: the mixture runs when the model's steps are at most MIX_TRIAL_STEPS and the budget (a 7-atom law's
#: Bromwich integral takes about 0.5-2e6 steps' time at n = 50..5000; at 1.5e6 a parallel k-RR at n = 86
#: (a case of the latency suite) ran slower).
#: ``mixture_positive_part(..., trial_steps=...)`` overrides it per call (0 disables the trial); no global state
DEF MIX_TRIAL_STEPS = 800000.0
DEF MIX_DRY_ITERS = 100000.0
#: multinomial enumeration (when allowed) is preferred up to this many count vectors
DEF MIX_ENUM_FIRST = 50000.0
#: largest n (counts exact in doubles; the buffers hold the windows only, not n + 1 counts)
DEF MIX_MAX_N = 1125899906842624.0
#: windows of a tilted binomial with a larger standard deviation are bounded in closed form (no walk)
DEF MIX_DIRECT_SD = 16.0
#: fixed cost of building a window (start pmf, its error bound, tilted mass, bounds), in steps
DEF MIX_WINDOW_STEPS = 16.0
#: first buffer length per level (grown to the longest window)
DEF MIX_BUF0 = 256
#: first relative truncation tolerance of a window (tilted mass dropped / node's tilted mass)
DEF MIX_ETA0 = 1e-11


cdef struct wcache_t:
    # per count c in [base, base + size): window [lo, hi], offset into the pool (-1: not built); the
    # count range grows (doubling) to the counts that occur, so memory is O(range x window), not O(n)
    long base
    long size
    long* lo
    long* hi
    long* off
    double* drop                 # tilted mass dropped by the window
    double* pool
    long used
    long cap


cdef void _wc_init(wcache_t* C) noexcept nogil:
    C.base = 0
    C.size = 0
    C.lo = NULL
    C.hi = NULL
    C.off = NULL
    C.drop = NULL
    C.pool = NULL
    C.used = 0
    C.cap = 0


cdef void _wc_reset(wcache_t* C) noexcept nogil:
    cdef long c
    for c in range(C.size):
        C.off[c] = -1
    C.used = 0


cdef void _wc_free(wcache_t* C) noexcept nogil:
    free(C.lo); free(C.hi); free(C.off); free(C.drop); free(C.pool)
    _wc_init(C)


cdef long _wc_slot(wcache_t* C, long c) noexcept nogil:
    """Slot of count ``c`` (the range grown to hold it), or -1 if out of memory."""
    cdef long nlo, nhi, ns, ext, i, sh
    cdef long* lo
    cdef long* hi
    cdef long* off
    cdef double* dr
    if c >= C.base and c < C.base + C.size:
        return c - C.base
    if C.size == 0:
        nlo = c - 32
        nhi = c + 32
    else:
        nlo = C.base
        nhi = C.base + C.size - 1
        ext = C.size if C.size > 32 else 32
        if c < nlo:
            nlo = c - ext
        if c > nhi:
            nhi = c + ext
    if nlo < 0:
        nlo = 0
    ns = nhi - nlo + 1
    lo = <long*>malloc(ns * sizeof(long))
    hi = <long*>malloc(ns * sizeof(long))
    off = <long*>malloc(ns * sizeof(long))
    dr = <double*>malloc(ns * sizeof(double))
    if lo == NULL or hi == NULL or off == NULL or dr == NULL:
        free(lo); free(hi); free(off); free(dr)
        return -1
    for i in range(ns):
        off[i] = -1
    sh = C.base - nlo
    for i in range(C.size):
        lo[i + sh] = C.lo[i]
        hi[i + sh] = C.hi[i]
        off[i + sh] = C.off[i]
        dr[i + sh] = C.drop[i]
    free(C.lo); free(C.hi); free(C.off); free(C.drop)
    C.lo = lo
    C.hi = hi
    C.off = off
    C.drop = dr
    C.base = nlo
    C.size = ns
    return c - C.base


cdef long _wc_alloc(wcache_t* C, long size) noexcept nogil:
    """Offset of ``size`` new doubles in the pool (grown as needed), or -1 if out of memory."""
    cdef long cap, o
    cdef double* y
    if C.used + size > C.cap:
        cap = 2 * C.cap if 2 * C.cap > C.used + size else C.used + size + 4096
        y = <double*>realloc(C.pool, cap * sizeof(double))
        if y == NULL:
            return -1
        C.pool = y
        C.cap = cap
    o = C.used
    C.used += size
    return o


cdef struct mix_t:
    double v[MIX_MAX_ATOMS]      # atom values, conditioning order: outer atoms, then pairs (a<b), (c<d)
    double p[MIX_MAX_ATOMS]
    double vmaxr[MIX_MAX_ATOMS]  # max of v[j:] (remaining atoms)
    double vminr[MIX_MAX_ATOMS]  # min of v[j:]
    double vabsr[MIX_MAX_ATOMS]  # max of |v[j:]|
    double amag                  # bound of |every partial sum| formed (largest a0 + m vabsr at a node)
    double mpr[MIX_MAX_ATOMS]    # sum_{i>=j} p_i v_i
    double remp[MIX_MAX_ATOMS]   # sum_{i>=j} p_i
    double krem[MIX_MAX_ATOMS + 1]   # log E[e^{theta G} | G among atoms j..k-1]
    double qt[MIX_MAX_ATOMS]     # tilted conditional probability of atom j among j..k-1
    double qtL                   # tilted probabilities of the last four: pair {a, b}, b in {a, b}, d in {c, d}
    double qtX
    double qtY
    double qtP                   # tilted probability of the upper atom of the last pair (k = 2, 3)
    double lq[MIX_MAX_ATOMS]     # the same as log-odds (qt / (1 - qt), formed from the logs: no 1 - qt)
    double lqL
    double lqX
    double lqY
    double lqP
    double kab                   # log E[e^{theta G} | G in {a, b}], same for {c, d}
    double kcd
    double theta
    double lc                    # -1 - log(theta): log T = log w + theta s + m K + lc
    int k
    double eta
    double e_abs                 # rounding bound of a partial sum S
    double* buf[MIX_MAX_ATOMS + 1]   # pmf of the current window of each level, by count - lo
    long bcap[MIX_MAX_ATOMS + 1]
    double prel[MIX_MAX_ATOMS + 1]   # largest relative error bound of a starting pmf (_pmf_rel), per level
    double qrel[MIX_MAX_ATOMS + 1]   # largest max|x - m q| / (1 - q) over the windows (rounding of q)
    long wmax[MIX_MAX_ATOMS + 1]     # longest window per level
    double qt_err                # relative rounding bound of the tilted probabilities
    double kerr                  # absolute rounding bound of krem, kab, kcd (per user)
    double total                 # sum of weight x E[S_+ | node] (S, not S/n)
    double charge                # truncation charge (S units)
    double pos                   # weight of terms whose S may be positive (rounding charge)
    double closed                # weight of closed-form nodes (rounding charge)
    double nterms
    double steps
    double max_steps
    long dmax[MIX_MAX_ATOMS + 1] # largest recurrence distance per level
    int abort
    wcache_t cx                  # windows of X = N_b | L (pmf), by L: reused across the outer levels
    wcache_t cy                  # windows of Y = N_d | m - L (tail tables T0, T1), by m - L


cdef double _pmf_rel(long k, long m, double p) noexcept nogil:
    """Relative error bound of ``_binom_pmf(k, m, p)``: 1e-13 (its accuracy near the mode) plus, for each
    ``_bd0`` evaluated in its direct form x log(x/np) + np - x (|x - np| >= 0.1 (x + np), away from the
    mode, where it cancels), 8 eps times the size of its terms; for k = 0 or m, 4 eps |log pmf|."""
    cdef double x, y, r = 1e-13
    if k == 0:
        return r + 4.0 * DBL_EPS * (1.0 + fabs(m * log1p(-p)))
    if k == m:
        return r + 4.0 * DBL_EPS * (1.0 + fabs(m * log(p)))
    x = <double>k
    y = m * p
    if not (fabs(x - y) < 0.1 * (x + y)):
        r += 8.0 * DBL_EPS * (x * fabs(log(x / y)) + x + y)
    x = <double>(m - k)
    y = m * (1.0 - p)
    if not (fabs(x - y) < 0.1 * (x + y)):
        r += 8.0 * DBL_EPS * (x * fabs(log(x / y)) + x + y)
    return r


cdef inline double _mix_tail(mix_t* M, long m, double qt, long j, double r) noexcept nogil:
    """Upper bound of pmf(j) / (1 - r) for the tilted Bin(m, qt) (r < 1 the ratio bounding the tail's
    ratios): ``_binom_pmf`` rounded up by ``_pmf_rel``, by the rounding of qt (qt_err relative, moving
    log pmf(j) by that times |j - m qt| / (1 - qt)) and of r."""
    cdef double pj = _binom_pmf(j, m, qt), rho, e
    if not (pj > 0.0):
        return 1e-300
    rho = (M.qt_err + 4.0 * DBL_EPS) / (1.0 - qt) + 4.0 * DBL_EPS
    e = _pmf_rel(j, m, qt) + (M.qt_err + 2.0 * DBL_EPS) * fabs(<double>j - m * qt) / (1.0 - qt) + r / (1.0 - r) * rho
    return pj / (1.0 - r) * exp(1.01 * e) * (1.0 + 1e-10) + 1e-300


cdef bint _mix_bounds(mix_t* M, long m, double qt, long* lo, long* hi, double* drop) noexcept nogil:
    """The window of the tilted Bin(m, qt) directly (wide windows, sd > MIX_DIRECT_SD): from the mode
    +- z sd (z from eta), widened by sd until the closed-form tail bound of each side (``_mix_tail``
    of the first dropped point, log-concave pmf) is <= eta.  Sets ``drop`` (their sum); False if it
    does not settle in a few steps (the caller walks)."""
    cdef double sd = sqrt(m * qt * (1.0 - qt)), z = sqrt(2.0 * log(1.0 / M.eta)) + 0.5, r, b, d = 0.0
    cdef long mode, k, step, it
    mode = <long>floor((m + 1) * qt)
    if mode > m:
        mode = m
    step = <long>ceil(sd)
    k = mode + <long>ceil(z * sd)
    it = 0
    while k < m:                   # drop (k, m]: pmf(k + 1) / (1 - r), r = pmf(k + 1) / pmf(k)
        r = (<double>(m - k) / <double>(k + 1)) * (qt / (1.0 - qt))
        if r < 1.0:
            b = _mix_tail(M, m, qt, k + 1, r)
            if b <= M.eta:
                d += b
                break
        k += step
        it += 1
        if it > 32:
            return False
    if k >= m:
        k = m
    hi[0] = k
    k = mode - <long>ceil(z * sd)
    it = 0
    while k > 0:                   # drop [0, k): pmf(k - 1) / (1 - r), r = pmf(k - 1) / pmf(k)
        r = (<double>k / <double>(m - k + 1)) / (qt / (1.0 - qt))
        if r < 1.0:
            b = _mix_tail(M, m, qt, k - 1, r)
            if b <= M.eta:
                d += b
                break
        k -= step
        it += 1
        if it > 32:
            return False
    if k <= 0:
        k = 0
    lo[0] = k
    drop[0] = d
    return True


cdef inline double _mix_window(mix_t* M, int lev, long m, double q, double lqt, long* lo, long* hi,
                               long need_lo=-1) noexcept nogil:
    """pmf of Bin(m, q) into M.buf[lev][0..hi-lo] (the count lo + i at i) over the window of the tilted
    Bin(m, qt), log(qt / (1 - qt)) = lqt, that drops tilted mass <= eta on each side; returns the tilted
    mass dropped (bound).  With ``need_lo`` > lo, the counts below it (which the caller does not read) are
    left out of the pmf's recurrence; the window, its statistics and its steps are those of the whole window.

    Both pmfs are log-concave: beyond a point where the ratio r = pmf(k+1)/pmf(k) < 1 the tail is at
    most pmf(k+1) / (1 - r).  The buffer holds the window only (grown as needed); a window longer than
    the steps left in the budget (or out of memory) aborts the evaluation (empty window, M.abort).
    """
    cdef double* b
    cdef double pk, pn, r, rq, drop = 0.0, lim, rho, x, qt
    cdef long mode, k, a, c, ln
    cdef int direct
    if m == 0:
        b = M.buf[lev]
        b[0] = 1.0
        lo[0] = 0
        hi[0] = 0
        return 0.0
    if not (q > 0.0 and q < 1.0):
        # both atoms have positive mass: q in {0, 1} only by rounding (a mass below eps of the other)
        M.abort = 1
        lo[0] = 0
        hi[0] = -1
        return 0.0
    lim = M.max_steps - M.steps + 64.0
    # window of the tilted law: from its mode outwards, with pmf(mode) <= 1 standing in for the mode's
    # pmf (so pk bounds the pmf from above and the geometric tail bounds stay bounds); rho bounds the
    # relative rounding of one ratio (rq = e^lqt from the logs of the tilt, the ratio itself), and the
    # dropped tail (distance d from the mode, then / (1 - r)) is inflated by exp((d + 1 + r/(1-r)) rho).
    # |lqt| > 700 is clamped (the window then ends at the mode, moved towards the centre: more mass
    # is counted as dropped, not less)
    direct = 0
    if lqt != lqt:
        lo[0] = 0
        hi[0] = m
        qt = 0.5
    else:
        lqt = lqt if lqt < 700.0 else 700.0
        lqt = lqt if lqt > -700.0 else -700.0
        rq = exp(lqt)
        qt = rq / (1.0 + rq)
    if lqt != lqt:
        pass
    elif m * qt * (1.0 - qt) > MIX_DIRECT_SD * MIX_DIRECT_SD and _mix_bounds(M, m, qt, lo, hi, &drop):
        direct = 1
    else:
        rho = 1.01 * (M.qt_err + 8.0 * DBL_EPS)
        mode = <long>floor((m + 1) * qt)
        if mode > m:
            mode = m
        pk = 1.0
        k = mode
        while k < m:
            r = (<double>(m - k) / <double>(k + 1)) * rq
            pn = pk * r
            if r < 1.0 and pn / (1.0 - r) <= M.eta:
                x = exp((<double>(k - mode) + 2.0 + r / (1.0 - r)) * rho)
                drop += pn / (1.0 - r) * (1.0 + 1e-10) * x + 1e-300
                break
            k += 1
            pk = pn
            if <double>(k - mode) > lim:
                break
        hi[0] = k
        pk = 1.0
        k = mode
        while k > 0:
            r = (<double>k / <double>(m - k + 1)) / rq
            pn = pk * r
            if r < 1.0 and pn / (1.0 - r) <= M.eta:
                x = exp((<double>(mode - k) + 2.0 + r / (1.0 - r)) * rho)
                drop += pn / (1.0 - r) * (1.0 + 1e-10) * x + 1e-300
                break
            k -= 1
            pk = pn
            if <double>(mode - k) > lim:
                break
        lo[0] = k
    ln = hi[0] - lo[0] + 1
    if <double>ln > lim:
        M.abort = 1
        lo[0] = 0
        hi[0] = -1
        return 0.0
    if ln > M.bcap[lev]:
        c = 2 * M.bcap[lev] if 2 * M.bcap[lev] > ln else ln
        b = <double*>realloc(M.buf[lev], c * sizeof(double))
        if b == NULL:
            M.abort = 1
            lo[0] = 0
            hi[0] = -1
            return 0.0
        M.buf[lev] = b
        M.bcap[lev] = c
    b = M.buf[lev] - lo[0]       # b[count], count in [lo, hi]
    if ln > M.wmax[lev]:
        M.wmax[lev] = ln
    # the untilted pmf over [lo, hi], by the ratio recurrence from the point nearest its mode
    rq = q / (1.0 - q)
    mode = <long>floor((m + 1) * q)
    if mode > hi[0]:
        mode = hi[0]
    if mode < lo[0]:
        mode = lo[0]
    pk = _binom_pmf(mode, m, q)
    x = _pmf_rel(mode, m, q)
    if x > M.prel[lev]:
        M.prel[lev] = x
    # q is the ratio of the masses up to (k + 4) eps: the pmf's log moves by that times (x - m q) / (1 - q)
    x = fabs(<double>lo[0] - m * q)
    r = fabs(<double>hi[0] - m * q)
    x = (x if x > r else r) / (1.0 - q)
    if x > M.qrel[lev]:
        M.qrel[lev] = x
    b[mode] = pk
    for k in range(mode, hi[0]):
        pk = pk * ((<double>(m - k) / <double>(k + 1)) * rq)
        b[k + 1] = pk
    pk = b[mode]
    k = mode
    while k > lo[0] and k > need_lo:
        pk = pk * ((<double>k / <double>(m - k + 1)) / rq)
        k -= 1
        b[k] = pk
    a = hi[0] - mode if hi[0] - mode > mode - lo[0] else mode - lo[0]
    if a > M.dmax[lev]:
        M.dmax[lev] = a
    M.steps += (<double>ln + 16.0 if direct else 2.0 * <double>ln) + MIX_WINDOW_STEPS
    return drop


cdef inline double _mix_tilted(mix_t* M, double w, double s0, double m, double mK) noexcept nogil:
    """Tilted mass of a node: w e^{theta s0 + m K} / (e theta) >= E[S_+ 1{node}] (Chernoff), rounded up
    (the exponent's terms to 8 eps of their size, m K to m kerr)."""
    cdef double x, e
    if not (w > 0.0):
        return 0.0
    x = log(w) + M.theta * s0 + mK + M.lc
    e = 8.0 * DBL_EPS * (fabs(log(w)) + fabs(M.theta * s0) + fabs(mK) + fabs(M.lc) + 1.0) + m * M.kerr
    x += e
    return exp(x) if x < 700.0 else INFINITY


cdef inline void _mix_amag(mix_t* M, double a) noexcept nogil:
    """Records a bound of the size of the partial sums formed (their rounding is charged on it)."""
    if a > M.amag:
        M.amag = a


cdef void _mix_pair(mix_t* M, int lev, long m, double s0, double a0, double w) noexcept nogil:
    """Two atoms left (a < b): S = s0 + m v_a + Y (v_b - v_a), Y ~ Bin(m, p_b / (p_a + p_b))."""
    cdef double va = M.v[lev], vb = M.v[lev + 1], d = vb - va, s, x, drop, yc, pos, total, nterms, e_abs
    cdef long lo, hi, y, y0
    cdef double* b
    s = s0 + m * va
    # y0: the first count whose sum s + y d exceeds -e_abs (the sum is non-decreasing in y, also as computed:
    # rounding is monotone), so that the counts below it, which add nothing, are neither summed nor built
    yc = ceil((-M.e_abs - s) / d)
    y0 = -1
    if yc == yc and yc > 0.0:
        y0 = <long>yc if yc < m + 1.0 else m + 1
        while y0 <= m and not (s + y0 * d > -M.e_abs):
            y0 += 1
        while y0 > 0 and s + (y0 - 1) * d > -M.e_abs:
            y0 -= 1
    drop = _mix_window(M, lev, m, M.p[lev + 1] / M.remp[lev], M.lqP, &lo, &hi, y0)
    if drop > 0.0:
        M.charge += drop * _mix_tilted(M, w, s0, m, m * M.krem[lev])
    b = M.buf[lev] - lo
    _mix_amag(M, a0 + m * fabs(va) + hi * d)
    # the sums in locals (the same additions in the same order as into M, without a store per term)
    pos, total, nterms, e_abs = M.pos, M.total, M.nterms, M.e_abs
    for y in range(lo if lo > y0 else y0, hi + 1):
        x = s + y * d
        if x > -e_abs:
            pos += w * b[y]
            if x > 0.0:
                total += w * b[y] * x
                nterms += 1.0
    M.pos, M.total, M.nterms = pos, total, nterms


cdef inline long _mix_tail_tables(mix_t* M, int lev, long my, double qY, long* loY, long* hiY,
                                  double* dropY) noexcept nogil:
    """Y's pmf window at ``my`` trials (``_mix_window`` at level lev + 2; its dropped mass in ``dropY``) and its
    tail tables in ``M.cy``'s pool: T0[y] = sum of the pmf over [y, hiY], T1[y] = sum of T0 over (y, hiY]
    (T1 stored after T0, both indexed by y - loY).  Counts the window's steps.  Returns the pool offset of
    T0, or -1 (``M.abort`` set) when the window aborts or the pool cannot grow."""
    cdef long o, y, lo, hi
    cdef double* bY
    cdef double* T0
    cdef double* T1
    dropY[0] = _mix_window(M, lev + 2, my, qY, M.lqY, loY, hiY)
    if M.abort:
        return -1
    lo = loY[0]
    hi = hiY[0]
    bY = M.buf[lev + 2] - lo
    o = _wc_alloc(&M.cy, 2 * (hi - lo + 1))
    if o < 0:
        M.abort = 1
        return -1
    T0 = M.cy.pool + o - lo
    T1 = T0 + (hi - lo + 1)
    T0[hi] = bY[hi]
    T1[hi] = 0.0
    y = hi - 1
    while y >= lo:
        T1[y] = T1[y + 1] + T0[y + 1]
        T0[y] = T0[y + 1] + bY[y]
        y -= 1
    M.steps += <double>(hi - lo + 1)
    return o


cdef void _mix_quad(mix_t* M, int lev, long m, double s0, double a0, double w) noexcept nogil:
    """Four atoms left: pairs (a<b) and (c<d); L users on {a, b}, X = N_b | L, Y = N_d | m - L."""
    cdef double va = M.v[lev], vb = M.v[lev + 1], vc = M.v[lev + 2], vd = M.v[lev + 3]
    cdef double pa = M.p[lev], pb = M.p[lev + 1], pc = M.p[lev + 2], pd = M.p[lev + 3]
    cdef double dX = vb - va, dY = vd - vc, qL = (pa + pb) / M.remp[lev], qX = pb / (pa + pb), qY = pd / (pc + pd)
    cdef double dropL, dropX, dropY, wl, base, smax, s, x, sub, pos, thr
    cdef long loL, hiL, L, loX, hiX, loY, hiY, xx, y, j0, mx, my, xs
    cdef double* bL
    cdef double* bX
    cdef double* T0
    cdef double* T1
    cdef double* pX
    cdef long o
    cdef long ix, iy
    dropL = _mix_window(M, lev, m, qL, M.lqL, &loL, &hiL)
    if dropL > 0.0:
        M.charge += dropL * _mix_tilted(M, w, s0, m, m * M.krem[lev])
    bL = M.buf[lev] - loL
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
        if base >= M.e_abs:           # S > 0 on the whole node: E[S] in closed form
            M.total += wl * (base + mx * qX * dX + my * qY * dY)
            _mix_amag(M, a0 + mx * fabs(va) + my * fabs(vc) + mx * dX + my * dY)
            M.closed += wl
            M.nterms += 1.0
            continue
        if lev == 0:
            # the quad at the root: every L once, nothing to reuse -- X's pmf stays in its level buffer
            # and Y's tail tables go to scratch space (no copies, no cache slots)
            M.cy.used = 0
            o = _mix_tail_tables(M, lev, my, qY, &loY, &hiY, &dropY)
            if o < 0:
                return
            T0 = M.cy.pool + o - loY
            T1 = T0 + (hiY - loY + 1)
            dropX = _mix_window(M, lev + 1, mx, qX, M.lqX, &loX, &hiX)
            if M.abort:
                return
            pX = M.buf[lev + 1] - loX
        else:
            # windows of X (pmf) and Y (tail tables) depend on L resp. m - L only: built once, reused
            iy = _wc_slot(&M.cy, my)
            ix = _wc_slot(&M.cx, mx)
            if iy < 0 or ix < 0:
                M.abort = 1
                return
            if M.cy.off[iy] < 0:
                o = _mix_tail_tables(M, lev, my, qY, &loY, &hiY, &dropY)
                if o < 0:
                    return
                M.cy.off[iy] = o
                M.cy.lo[iy] = loY
                M.cy.hi[iy] = hiY
                M.cy.drop[iy] = dropY
            if M.cx.off[ix] < 0:
                dropX = _mix_window(M, lev + 1, mx, qX, M.lqX, &loX, &hiX)
                if M.abort:
                    return
                bX = M.buf[lev + 1] - loX
                o = _wc_alloc(&M.cx, hiX - loX + 1)
                if o < 0:
                    M.abort = 1
                    return
                for xx in range(loX, hiX + 1):
                    M.cx.pool[o + xx - loX] = bX[xx]
                M.cx.off[ix] = o
                M.cx.lo[ix] = loX
                M.cx.hi[ix] = hiX
                M.cx.drop[ix] = dropX
            loY = M.cy.lo[iy]
            hiY = M.cy.hi[iy]
            dropY = M.cy.drop[iy]
            T0 = M.cy.pool + M.cy.off[iy] - loY
            T1 = T0 + (hiY - loY + 1)
            loX = M.cx.lo[ix]
            hiX = M.cx.hi[ix]
            dropX = M.cx.drop[ix]
            pX = M.cx.pool + M.cx.off[ix] - loX
        if dropX + dropY > 0.0:
            M.charge += (dropX + dropY) * _mix_tilted(M, wl, s0, m, mx * M.kab + my * M.kcd)
        _mix_amag(M, a0 + mx * fabs(va) + my * fabs(vc) + hiX * dX + hiY * dY)
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
            pos += pX[xx] * T0[j0]
            while j0 <= hiY and not (s + j0 * dY > 0.0):
                j0 += 1
            if j0 > hiY:
                continue
            sub += pX[xx] * ((s + dY * j0) * T0[j0] + dY * T1[j0])
        M.steps += <double>(hiX - xs + 2)
        M.total += wl * sub
        M.pos += wl * pos
        M.nterms += <double>(hiX - xs + 1) + <double>(hiY - loY + 1)


cdef struct dry_t:
    double steps                 # estimated steps of the real run
    double iters                 # work of the dry run itself (nodes + L values visited)
    double max_iters
    double max_steps             # the model stops (declines) beyond this many steps
    long xlo, xhi, ylo, yhi      # counts whose X / Y windows were already counted (cached in the real run)
    int abort


cdef inline void _dry_window(double m, double qt, double z, long* lo, long* hi) noexcept nogil:
    """A-priori window of the tilted Bin(m, qt): mode +- (z sd + 2), clipped (a cost model only)."""
    cdef double sd = sqrt(m * qt * (1.0 - qt)), c = floor((m + 1.0) * qt), h = ceil(z * sd) + 2.0
    lo[0] = <long>(c - h if c - h > 0.0 else 0.0)
    hi[0] = <long>(c + h if c + h < m else m)


cdef inline double _dry_cost(double ln, double m, double qt) noexcept nogil:
    """Steps of building a window of length ln (as ``_mix_window`` counts them)."""
    if m * qt * (1.0 - qt) > MIX_DIRECT_SD * MIX_DIRECT_SD:
        return ln + 16.0 + MIX_WINDOW_STEPS
    return 2.0 * ln + MIX_WINDOW_STEPS


cdef void _mix_dry(mix_t* M, dry_t* D, int lev, long m, double s0, double z) noexcept nogil:
    """Cost model of ``_mix_node`` (same recursion, same sign pruning, no pmf): adds its estimated steps
    to D.steps; the windows are the a-priori ones (mode +- z sd).  Used only to choose the evaluator."""
    cdef int r = M.k - lev
    cdef long lo, hi, j, L, loX, hiX, hiY, xs, mx, my, loY
    cdef double base, smax, thr, x, dX, dY
    if D.abort:
        return
    D.iters += 1.0
    if D.iters > D.max_iters or D.steps > D.max_steps:
        D.abort = 1
        return
    x = s0 + m * M.vmaxr[lev]
    if m == 0 or r == 1 or x <= -M.e_abs:
        return
    if s0 + m * M.vminr[lev] >= M.e_abs:
        return
    if r == 2:
        _dry_window(m, M.qtP, z, &lo, &hi)
        D.steps += _dry_cost(hi - lo + 1.0, m, M.qtP) + (hi - lo + 1.0)
        return
    if r == 4:
        dX = M.v[lev + 1] - M.v[lev]
        dY = M.v[lev + 3] - M.v[lev + 2]
        _dry_window(m, M.qtL, z, &lo, &hi)
        D.steps += _dry_cost(hi - lo + 1.0, m, M.qtL)
        D.iters += <double>(hi - lo + 1)
        for L in range(lo, hi + 1):
            mx = L
            my = m - L
            base = s0 + mx * M.v[lev] + my * M.v[lev + 2]
            smax = base + mx * dX + my * dY
            if smax <= -M.e_abs or base >= M.e_abs:
                continue
            _dry_window(mx, M.qtX, z, &loX, &hiX)
            _dry_window(my, M.qtY, z, &loY, &hiY)
            if lev == 0 or mx < D.xlo or mx > D.xhi:
                D.steps += _dry_cost(hiX - loX + 1.0, mx, M.qtX)
                if lev > 0:
                    D.steps += hiX - loX + 1.0
                    D.xlo = mx if mx < D.xlo else D.xlo
                    D.xhi = mx if mx > D.xhi else D.xhi
            if lev == 0 or my < D.ylo or my > D.yhi:
                D.steps += _dry_cost(hiY - loY + 1.0, my, M.qtY) + (hiY - loY + 1.0)
                if lev > 0:
                    D.ylo = my if my < D.ylo else D.ylo
                    D.yhi = my if my > D.yhi else D.yhi
            thr = -M.e_abs - base - hiY * dY
            xs = loX
            if thr >= 0.0:
                x = floor(thr / dX) + 1.0
                if x > <double>hiX:
                    continue
                if x > <double>xs:
                    xs = <long>x
            D.steps += <double>(hiX - xs + 2)
            if D.steps > D.max_steps:
                D.abort = 1
                return
        return
    _dry_window(m, M.qt[lev], z, &lo, &hi)
    D.steps += _dry_cost(hi - lo + 1.0, m, M.qt[lev])
    for j in range(lo, hi + 1):
        _mix_dry(M, D, lev + 1, m - j, s0 + j * M.v[lev], z)
        if D.abort:
            return


cdef void _mix_node(mix_t* M, int lev, long m, double s0, double a0, double w) noexcept nogil:
    """Adds the node (m users left on atoms lev..k-1, partial sum s0 of absolute terms a0, weight w) to M."""
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
    if m == 0 or r == 1 or x <= -M.e_abs:
        if x > -M.e_abs:
            M.pos += w
            _mix_amag(M, a0 + m * M.vabsr[lev])      # the sum formed: s0 + m v_last (or s0)
        if x > 0.0:
            M.total += w * x          # m == 0 (x = s0) or one atom left
            M.nterms += 1.0
        return
    if s0 + m * M.vminr[lev] >= M.e_abs:     # S > 0 on the whole node
        M.total += w * (s0 + m * (M.mpr[lev] / M.remp[lev]))
        _mix_amag(M, a0 + m * M.vabsr[lev])
        M.closed += w
        M.nterms += 1.0
        return
    if r == 2:
        _mix_pair(M, lev, m, s0, a0, w)
        return
    if r == 4:
        _mix_quad(M, lev, m, s0, a0, w)
        return
    drop = _mix_window(M, lev, m, M.p[lev] / M.remp[lev], M.lq[lev], &lo, &hi)
    if drop > 0.0:
        M.charge += drop * _mix_tilted(M, w, s0, m, m * M.krem[lev])
    b = M.buf[lev] - lo
    for j in range(lo, hi + 1):
        _mix_node(M, lev + 1, m - j, s0 + j * M.v[lev], a0 + j * fabs(M.v[lev]), w * b[j])
        if M.abort:
            return


cdef inline double _mix_len(double m, double q) noexcept nogil:
    """A-priori window length of Bin(m, q) at eta ~1e-11 (about +-7.5 sd)."""
    cdef double w
    if q <= 0.0 or q >= 1.0 or m <= 0.0:
        return 1.0
    w = 15.5 * sqrt(m * q * (1.0 - q)) + 3.0
    return w if w < m + 1.0 else m + 1.0


cdef inline double _mix_width(double m, double q) noexcept nogil:
    """A-priori cost of building that window: twice its length (the walk and the pmf), once (plus the
    closed-form bounds) when its sd exceeds MIX_DIRECT_SD."""
    cdef double w = _mix_len(m, q)
    if q > 0.0 and q < 1.0 and m * q * (1.0 - q) > MIX_DIRECT_SD * MIX_DIRECT_SD:
        return w + 16.0 + MIX_WINDOW_STEPS
    return 2.0 * w + MIX_WINDOW_STEPS


cdef inline double _lse2(double a, double b) noexcept nogil:
    """log(e^a + e^b)."""
    if a < b:
        a, b = b, a
    return a + log1p(exp(b - a))


cdef void _quad_order(const double[::1] v, const double* lw, double lmax, double tot, double n,
                      int* ix) noexcept nogil:
    """Pairs (a < b), (c < d) of the last four atoms ``ix`` (sorted by value): of the three pairings, each
    way round, the one of smallest step estimate among those whose partial sums (L v_a + (m - L) v_c +
    X (v_b - v_a) + Y (v_d - v_c) at the tilted means: their rounding is charged on their size) are
    within 4x the smallest (a dominant atom paired as the upper one of its pair multiplies its count
    by the other's value)."""
    cdef int P[6][4]
    cdef int o, i, bo = 0
    cdef double q[4]
    cdef double m4 = 0.0, qL, qX, qY, wl, wx, wy, mL, mY, mmin = INFINITY, cmin = INFINITY
    cdef double cost[6]
    cdef double mag[6]
    cdef int[4] r
    for i in range(4):
        q[i] = exp(lw[ix[i]] - lmax) / tot
        m4 += q[i]
    m4 *= n
    P[0][0], P[0][1], P[0][2], P[0][3] = 0, 1, 2, 3
    P[1][0], P[1][1], P[1][2], P[1][3] = 0, 2, 1, 3
    P[2][0], P[2][1], P[2][2], P[2][3] = 0, 3, 1, 2
    for o in range(3):
        P[o + 3][0], P[o + 3][1], P[o + 3][2], P[o + 3][3] = P[o][2], P[o][3], P[o][0], P[o][1]
    for o in range(6):
        qL = (q[P[o][0]] + q[P[o][1]]) / (q[0] + q[1] + q[2] + q[3])
        qX = q[P[o][1]] / (q[P[o][0]] + q[P[o][1]])
        qY = q[P[o][3]] / (q[P[o][2]] + q[P[o][3]])
        wl = _mix_len(m4, qL)
        wx = _mix_width(m4 * qL, qX)
        wy = _mix_width(m4 * (1.0 - qL), qY)
        cost[o] = wl * (0.5 * _mix_len(m4 * qL, qX) + 2.0) + wl * 1.25 * (wx + wy)
        mL = m4 * qL
        mY = m4 - mL
        mag[o] = (mL * fabs(v[ix[P[o][0]]]) + mY * fabs(v[ix[P[o][2]]])
                  + mL * qX * (v[ix[P[o][1]]] - v[ix[P[o][0]]]) + mY * qY * (v[ix[P[o][3]]] - v[ix[P[o][2]]]))
        if mag[o] < mmin:
            mmin = mag[o]
    for o in range(6):
        if mag[o] <= 4.0 * mmin and cost[o] < cmin:
            cmin = cost[o]
            bo = o
    for i in range(4):
        r[i] = ix[P[bo][i]]
    for i in range(4):
        ix[i] = r[i]


cdef int _mix_setup(const double[::1] v, const double[::1] p, Py_ssize_t k, double n, double theta, mix_t* M,
                    double* est) noexcept nogil:
    """Conditioning order (the k - 4 atoms of smallest tilted count spread outside, the rest as pairs),
    the tilted conditional probabilities and the a-priori step estimate."""
    cdef int idx[MIX_MAX_ATOMS]
    cdef int used[MIX_MAX_ATOMS]
    cdef double lw[MIX_MAX_ATOMS]
    cdef double lse[MIX_MAX_ATOMS + 1]
    cdef int i, j, t, best, nout, c
    cdef double sd, bs, e = 1.0, m_rem = n, q, ww, x, wl, wx, wy, lmax = -INFINITY, tot = 0.0, la, lb, lc_, ld
    for i in range(k):
        used[i] = 0
        lw[i] = log(p[i]) + theta * v[i]
        if lw[i] > lmax:
            lmax = lw[i]
    for i in range(k):
        tot += exp(lw[i] - lmax)
    nout = <int>k - 4 if k > 4 else (1 if k == 3 else 0)
    c = 0
    for t in range(nout):
        best = -1
        bs = 0.0
        for i in range(<int>k):
            if not used[i]:
                q = exp(lw[i] - lmax) / tot      # tilted mass (of the whole law)
                sd = q * (1.0 - q)
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
    if k == 4:     # (with outer levels the value order is kept: its estimate is the calibrated one)
        _quad_order(v, lw, lmax, tot, n, &idx[nout])
    for i in range(<int>k):
        M.v[i] = v[idx[i]]
        M.p[i] = p[idx[i]]
    M.k = <int>k
    M.theta = theta
    M.lc = -1.0 - log(theta)
    j = <int>k - 1
    M.vmaxr[j] = M.v[j]
    M.vminr[j] = M.v[j]
    M.vabsr[j] = fabs(M.v[j])
    M.mpr[j] = M.p[j] * M.v[j]
    M.remp[j] = M.p[j]
    lse[j] = log(M.p[j]) + theta * M.v[j]
    lse[k] = -INFINITY
    while j > 0:
        j -= 1
        M.vmaxr[j] = M.v[j] if M.v[j] > M.vmaxr[j + 1] else M.vmaxr[j + 1]
        M.vminr[j] = M.v[j] if M.v[j] < M.vminr[j + 1] else M.vminr[j + 1]
        M.vabsr[j] = fabs(M.v[j]) if fabs(M.v[j]) > M.vabsr[j + 1] else M.vabsr[j + 1]
        M.mpr[j] = M.mpr[j + 1] + M.p[j] * M.v[j]
        M.remp[j] = M.remp[j + 1] + M.p[j]
        lse[j] = _lse2(log(M.p[j]) + theta * M.v[j], lse[j + 1])
    for j in range(<int>k):
        M.krem[j] = lse[j] - log(M.remp[j])
        M.qt[j] = exp(log(M.p[j]) + theta * M.v[j] - lse[j])
        M.lq[j] = log(M.p[j]) + theta * M.v[j] - lse[j + 1] if j + 1 < k else INFINITY
    M.krem[k] = 0.0
    # rounding of the tilt's quantities: log p + theta v - lse to 8 eps of its terms' size (qt relative),
    # K's per user (krem, kab, kcd: differences of such logs) likewise
    x = 0.0
    for j in range(<int>k):
        wl = fabs(log(M.p[j])) + fabs(theta * M.v[j]) + fabs(lse[j]) + fabs(log(M.remp[j]))
        if wl > x:
            x = wl
    M.qt_err = 8.0 * DBL_EPS * (x + 2.0)
    M.kerr = 8.0 * DBL_EPS * (x + 2.0)
    M.qtP = 0.5
    if k - nout == 2:
        la = log(M.p[nout]) + theta * M.v[nout]
        lb = log(M.p[nout + 1]) + theta * M.v[nout + 1]
        M.qtP = exp(lb - _lse2(la, lb))
        M.lqP = lb - la
    i = nout
    if k - nout == 4:
        la = log(M.p[i]) + theta * M.v[i]
        lb = log(M.p[i + 1]) + theta * M.v[i + 1]
        lc_ = log(M.p[i + 2]) + theta * M.v[i + 2]
        ld = log(M.p[i + 3]) + theta * M.v[i + 3]
        M.kab = _lse2(la, lb) - log(M.p[i] + M.p[i + 1])
        M.kcd = _lse2(lc_, ld) - log(M.p[i + 2] + M.p[i + 3])
        M.qtL = exp(_lse2(la, lb) - lse[i])
        M.qtX = exp(lb - _lse2(la, lb))
        M.qtY = exp(ld - _lse2(lc_, ld))
        M.lqL = _lse2(la, lb) - _lse2(lc_, ld)
        M.lqX = lb - la
        M.lqY = ld - lc_
    # step estimate: outer windows (at the tilted mean remaining count) x inner cost; the windows of
    # the last four atoms are built once per count (cached) and their loop covers about half of X's
    ww = 0.0
    for i in range(nout):
        q = M.qt[i]
        x = _mix_len(m_rem, q)
        e *= x
        ww += x
        m_rem -= m_rem * q
    i = nout
    if k - nout == 4:
        wl = _mix_len(m_rem, M.qtL)
        wx = _mix_width(m_rem * M.qtL, M.qtX)
        wy = _mix_width(m_rem * (1.0 - M.qtL), M.qtY)
        e = e * (wl * (0.5 * _mix_len(m_rem * M.qtL, M.qtX) + 2.0) + MIX_WINDOW_STEPS) + (wl + ww) * 1.25 * (wx + wy)
    elif k - nout == 2:
        e *= _mix_width(m_rem, M.qtP)
    est[0] = e
    return 0


cdef inline double _mix_budget(double n, Py_ssize_t k, bint enum_allowed, double qmax) noexcept nogil:
    """The dispatch rule (one source of truth for ``_profile_one`` and ``exact._positive_part``): the step
    budget of the mixture sums, i.e. the estimated cost of the Bromwich integral in mixture steps.

    Small n: MIX_BUDGET_N k / (4 n) steps, capped (|psi|^n decays slowly; measured on the latency suite).
    A dominant atom (tilted mass qmax): |psi| returns close to 1 on a near-lattice and the integral takes
    often 2e4-2e5 nodes when qmax >= MIX_DOM_MASS (measured over the latency suite at n = 5e2..2e7,
    bench/bench_latency.py; but some such laws take only ~5e3); about MIX_DOM_NODES
    (1 + log10((1 - MIX_DOM_MASS) / (1 - qmax))) nodes are added then, each worth ``_node_steps(k)``
    mixture steps, at most MIX_DOM_CAP steps (~5-10 ms: a wrong guess costs at most that); for k <= 4
    only (with more atoms the outer levels' many short windows make a step several times dearer).  The mixture runs when its a-priori step estimate is within the
    budget, or below MIX_MAX_STEPS (~2 ms) anyway.  Where the meet-in-the-middle path of ``_small_n.pxi``
    is chosen, at most MIX_MITM_RATIO steps per point of its halves."""
    cdef double b = MIX_BUDGET_N * k / (4.0 * n), c, nd = 0.0
    b = b if b < MIX_BUDGET_CAP else MIX_BUDGET_CAP
    if qmax >= MIX_DOM_MASS and k <= 4:
        c = (1.0 - MIX_DOM_MASS) / (1.0 - qmax) if qmax < 1.0 else 1e8
        nd = MIX_DOM_NODES * (1.0 + log10(c if c < 1e8 else 1e8))
        c = _node_steps(k) * nd
        b += c if c < MIX_DOM_CAP else MIX_DOM_CAP
    b = b if b > MIX_MAX_STEPS else MIX_MAX_STEPS
    if enum_allowed and _small_n_chosen(n, k):
        c = MIX_MITM_RATIO * small_n_points(n, k)
        b = b if b < c else c
    return b


cdef inline double _node_steps(Py_ssize_t k) noexcept nogil:
    """Mixture steps worth one Bromwich node of a k-atom law (node: k x ~60-110 ns in the compiled loop;
    step: ~8 ns for 2-3 atoms (short pair windows), ~3.5 ns for the quad (k = 4))."""
    return 10.0 if k <= 3 else 80.0


cdef inline double _enum_leaves(double n, Py_ssize_t k) noexcept nogil:
    """Number of multinomial count vectors C(n + k - 1, k - 1) (as a float)."""
    return exp(lgamma(n + k) - lgamma(<double>k) - lgamma(n + 1.0))


cdef int _mixture(const double[::1] v, const double[::1] p, double n, double rtol, double max_steps,
                  double trial_steps, double* value, double* err, double* steps) noexcept nogil:
    """E[(G_1+...+G_n)_+]/n of the sorted finite law (v, p) by binomial-mixture sums; ST_MIXTURE or ST_FALLBACK.

    ``value`` and ``err`` as for the other evaluators (certified: value - err <= truth <= value + err).
    """
    cdef Py_ssize_t k = v.shape[0], j
    cdef mix_t M
    cdef double est, amax = 0.0, rel, e_round, e_under, eta = MIX_ETA0, val, er, x, theta, mu, var
    cdef long nn, lev
    cdef int attempt, nlev, st = ST_FALLBACK
    cdef bint production
    cdef dry_t D
    cdef double cap
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
    # the tilt of the windows: the saddle point of n K(theta) - 2 log theta (any theta > 0 is sound)
    _saddle_point(v, p, n, &theta, &mu, &var)
    if not (isfinite(theta) and theta > 1e-300 and theta < 1e300):
        return ST_FALLBACK
    _mix_setup(v, p, k, n, theta, &M, &est)
    production = max_steps < 0.0
    if production:
        # the production budget (-1: enumeration paths allowed, -2: not): by the largest tilted mass
        x = -INFINITY
        for j in range(k):
            mu = log(p[j]) + theta * v[j]
            if mu > x:
                x = mu
        var = 0.0
        for j in range(k):
            var += exp(log(p[j]) + theta * v[j] - x)
        max_steps = _mix_budget(n, k, max_steps > -1.5, 1.0 / var)
    cap = 2.0 * max_steps                 # the estimate may be low: abort at twice the budget
    if not (est <= MIX_EST_FACTOR * max_steps):
        # with two or more outer levels (k >= 6) the estimate (product of full outer windows) is often
        # 10-100x high: the sign pruning closes most outer nodes.  The cost model decides instead
        # (within MIX_TRIAL_STEPS and the budget); the run aborts beyond twice the model's steps
        x = trial_steps if trial_steps < max_steps else max_steps
        if k >= 6 and production and x > 0.0:
            # the cost model: the recursion's sign pruning replayed on a-priori windows (no pmf)
            D.steps = 0.0
            D.iters = 0.0
            D.max_iters = MIX_DRY_ITERS
            D.max_steps = x
            D.abort = 0
            D.xlo = 1
            D.xhi = 0
            D.ylo = 1
            D.yhi = 0
            M.e_abs = 8.0 * DBL_EPS * n * amax * (k + 2)
            _mix_dry(&M, &D, 0, <long>n, 0.0, sqrt(2.0 * log(1.0 / MIX_ETA0)) + 0.5)
            if D.abort or not (D.steps <= x):
                steps[0] = -(D.steps if D.steps > est else est)
                return ST_FALLBACK
            cap = 2.0 * D.steps + 100000.0       # the model may be low: abort beyond that
            cap = cap if cap < 2.0 * max_steps else 2.0 * max_steps
        else:
            steps[0] = -est                   # declined a priori: minus the estimate
            return ST_FALLBACK
    nn = <long>n
    for lev in range(MIX_MAX_ATOMS + 1):
        M.buf[lev] = NULL
        M.bcap[lev] = 0
    nlev = <int>k
    for lev in range(nlev + 1):
        M.buf[lev] = <double*>malloc(MIX_BUF0 * sizeof(double))
        if M.buf[lev] == NULL:
            break
        M.bcap[lev] = MIX_BUF0
    _wc_init(&M.cx)
    _wc_init(&M.cy)
    if M.buf[nlev] != NULL:
        for attempt in range(2):
            M.eta = eta
            M.e_abs = 8.0 * DBL_EPS * n * amax * (k + 2)
            M.total = 0.0
            M.charge = 0.0
            M.pos = 0.0
            M.closed = 0.0
            M.nterms = 0.0
            M.steps = 0.0
            M.max_steps = cap
            M.abort = 0
            for lev in range(MIX_MAX_ATOMS + 1):
                M.dmax[lev] = 0
                M.wmax[lev] = 0
                M.prel[lev] = 0.0
                M.qrel[lev] = 0.0
            _wc_reset(&M.cx)
            _wc_reset(&M.cy)
            M.amag = 0.0
            _mix_node(&M, 0, nn, 0.0, 0.0, 1.0)
            steps[0] += M.steps
            if M.abort:
                if cap < 2.0 * max_steps:
                    steps[0] = -est           # the trial run aborted: minus the estimate, as declined
                break
            # relative error of the weights, per level: the starting pmf (_pmf_rel, 1e-13 near the mode),
            # 6 eps per recurrence step, the rounding of q ((k + 4) eps relative, moving the pmf's log by
            # that times |x - m q| / (1 - q)); the sums of non-negative terms: (number of terms + window
            # lengths) eps -- all of them bounded by the window sizes, not by n
            rel = 0.0
            for lev in range(nlev + 1):
                rel += M.prel[lev] + 6.0 * DBL_EPS * M.dmax[lev] + (k + 4) * DBL_EPS * M.qrel[lev]
                rel += 4.0 * DBL_EPS * M.wmax[lev]
            rel += DBL_EPS * (M.nterms + 16.0)
            # the pruning used e_abs (8 eps (k + 2) n max|v|, a priori); the partial sums actually formed
            # are at most amag <= n max|v| in size, so their rounding is at most e_abs amag / (n max|v|)
            # (terms dropped as <= -e_abs are still <= 0, and pos counts a superset of the others)
            x = M.e_abs * (M.amag / (n * amax)) if M.amag < n * amax else M.e_abs
            e_round = x * (M.pos + M.closed)
            val = M.total / n
            # products of weights below the normal range (each term <= 1e-300 n max|v| then)
            e_under = (M.nterms + M.steps) * 1e-300 * n * amax
            er = (M.total * rel + e_round + e_under + M.charge * (1.0 + 1e-12)) / n
            if er <= rtol * val and val > 1e-250:
                value[0] = val
                err[0] = er
                st = ST_MIXTURE
                break
            # the truncation dominates: one retry with a tolerance scaled to the value found
            if val > 1e-250 and M.charge / n > 0.5 * rtol * val:
                x = eta * 0.01 * rtol * val / (M.charge / n)
                eta = x if x > 1e-300 else 1e-300
            else:
                break
    for lev in range(MIX_MAX_ATOMS + 1):
        free(M.buf[lev])
    _wc_free(&M.cx)
    _wc_free(&M.cy)
    return st


def mixture_positive_part(const double[::1] values, const double[::1] probs, double n, double rtol,
                          double max_steps=-1.0, bint enum_allowed=True, double trial_steps=MIX_TRIAL_STEPS):
    """Certified E[(G_1+...+G_n)_+]/n of a finite law by exact binomial-mixture sums (the kernel path).

    Parameters
    ----------
    values, probs : float64[::1]
        Atoms (sorted increasingly, distinct) and their masses (positive, summing to 1).
    n : float
        Number of summands (an integer value, any size up to 2**50: memory is O(window sizes)).
    rtol : float
        The error bound must be at most ``rtol`` x value, else the evaluation is declined.
    max_steps : float
        Step budget (window points); beyond it the evaluation is declined.  Default (negative): the
        production budget, the estimated cost of the Bromwich integral for this law (``_mix_budget``,
        as in ``profile_bromwich``).
    enum_allowed : bool
        Whether the enumeration paths are allowed (then the default budget also stays below the
        meet-in-the-middle cost where that path is chosen), as ``enum_ok[1]`` of ``profile_bromwich``.
    trial_steps : float
        Step cap of the cost-model trial for laws of >= 6 atoms (default: the production value; 0 disables
        the trial, so such laws are declined on their a-priori estimate).

    Returns
    -------
    (ok, value, err, steps) : (bool, float, float, float)
        ``ok`` False when declined (too many atoms or steps, bound not within ``rtol``, no atom of
        each sign); otherwise value - err <= E[S_+]/n <= value + err.  ``steps``: window points
        visited, or minus the a-priori estimate when declined before starting.
    """
    cdef double val = 0.0, er = 0.0, stp = 0.0
    cdef int st
    if values.shape[0] != probs.shape[0]:
        raise ValueError("mixture_positive_part: inconsistent array lengths")
    if max_steps < 0.0:
        max_steps = -1.0 if enum_allowed else -2.0
    with nogil:
        st = _mixture(values, probs, n, rtol, max_steps, trial_steps, &val, &er, &stp)
    return st == ST_MIXTURE, val, er, stp


#: multinomial enumeration (when allowed) is preferred to the mixture sums up to this many count vectors
MIXTURE_ENUM_FIRST = MIX_ENUM_FIRST

