# Included by kernels.pyx.  Exact E[(G_1+...+G_n)_+] of a finite atomic law at small n and MANY atoms, by
# "meet in the middle" over multisets: S = A + B with A the sum of n - n//2 draws and B of n//2 draws.
# The laws of A and B are enumerated as multisets of atoms (C(m+k-1, m) points each, multinomial weights);
# B is sorted once, with suffix sums of its mass and first moment, so that
#     E[(A + B)_+] = sum_a w_a (a P(B > -a) + E[B; B > -a])
# costs one binary search per point of A.  Exact up to floating-point rounding, which is bounded below
# (every term is charged, nothing is dropped).  The multinomial enumeration (``_brute`` in kernels.pyx)
# costs C(n+k-1, k-1) leaves instead: for k = 100 atoms and n = 4 that is 4.4e6 against 2 x 5050 here.

from libc.stdlib cimport qsort


cdef struct sw_t:
    double s
    double w


cdef int _sw_cmp(const void* x, const void* y) noexcept nogil:
    cdef double a = (<const sw_t*>x).s, b = (<const sw_t*>y).s
    return -1 if a < b else (1 if a > b else 0)


cdef double _multisets(double m, double k) noexcept nogil:
    """C(m + k - 1, m) as a double (inf if huge): the number of multisets of size m from k atoms."""
    if m <= 0.0:
        return 1.0
    return exp(lgamma(m + k) - lgamma(m + 1.0) - lgamma(k)) * (1.0 + 1e-9) + 0.5


#: ``_profile_one`` takes the meet-in-the-middle path for n <= SMALL_N_MAX_N when the two halves hold at
#: most SMALL_N_CAP points (about 0.2-0.4 us each, so <= ~20 ms); above, the Bromwich integral runs.
DEF SMALL_N_MAX_N = 64
DEF SMALL_N_CAP = 2.5e5
#: Where the Bromwich integral would run otherwise (n <= PRUNED_MAX_N), the same merge is tried with both
#: halves PRUNED: only multisets whose sum can still make a + b > 0 are enumerated (atoms in decreasing
#: order, a branch is cut when its largest completion cannot reach the threshold; every pair cut has
#: a + b < 0 exactly, so its term is exactly 0).  Abandoned (status -1, Bromwich) beyond PRUNED_CAP
#: points or PRUNED_CALLS recursion steps (<= ~2 ms), so it pays where the positive region is a small
#: corner of the multisets (few positive atoms, large tilt: where the integral needs 1e5+ nodes).
DEF PRUNED_MAX_N = 128
DEF PRUNED_CAP = 1.2e5
DEF PRUNED_CALLS = 4e5


cdef double small_n_points(double n, Py_ssize_t k) noexcept nogil:
    """Points of both halves of :func:`_mitm_positive_part` (what its time is proportional to)."""
    cdef double na = n - floor(n / 2.0), nb = floor(n / 2.0)
    return _multisets(na, <double>k) + _multisets(nb, <double>k)


cdef bint _small_n_chosen(double n, Py_ssize_t k) noexcept nogil:
    """The one dispatch rule: meet in the middle when n <= SMALL_N_MAX_N, the halves hold <= SMALL_N_CAP
    points, and that is under a quarter of the C(n+k-1, k-1) count vectors of the plain enumeration."""
    cdef double pts
    if n > SMALL_N_MAX_N or n < 2.0:
        return False
    pts = small_n_points(n, k)
    return pts <= SMALL_N_CAP and pts < 0.25 * _multisets(n, <double>k)


def small_n_chosen(double n, Py_ssize_t k):
    """Whether the exact evaluators use :func:`small_n_positive_part` for a law of ``k`` atoms at ``n``."""
    return bool(_small_n_chosen(n, k))


cdef Py_ssize_t _half(const double* v, const double* lp, const double* lgc, Py_ssize_t k, Py_ssize_t j, int rem,
                      double s, double lw, sw_t* out, Py_ssize_t pos) noexcept nogil:
    """Write every multiset of ``rem`` more atoms from atoms j..k-1 into out[pos:], (sum, log-weight)."""
    cdef int c
    cdef double lw2
    if j == k - 1 or rem == 0:
        c = rem
        if c > 0 and lp[j] == -INFINITY:
            return pos
        out[pos].s = s + c * v[j]
        out[pos].w = lw + (c * lp[j] if c > 0 else 0.0) - lgc[c]
        return pos + 1
    for c in range(rem + 1):
        if c > 0 and lp[j] == -INFINITY:
            break
        lw2 = lw + (c * lp[j] if c > 0 else 0.0) - lgc[c]
        pos = _half(v, lp, lgc, k, j + 1, rem - c, s + c * v[j], lw2, out, pos)
    return pos


cdef bint _pruned_chosen(double n, Py_ssize_t k) noexcept nogil:
    """Whether the pruned meet in the middle is tried before the Bromwich integral (same rule in exact.py)."""
    return 2.0 <= n <= PRUNED_MAX_N and k >= 2


def pruned_chosen(double n, Py_ssize_t k):
    """Whether the exact evaluators try the pruned meet in the middle before integrating (``k`` atoms, ``n``)."""
    return bool(_pruned_chosen(n, k))


cdef struct prune_t:
    const double* v
    const double* lp
    const double* lgc
    double thr          # keep a multiset only if its (computed) sum exceeds thr
    sw_t* out
    Py_ssize_t cap      # at most this many kept points
    double calls        # recursion steps left


cdef Py_ssize_t _half_pruned(prune_t* R, Py_ssize_t j, int rem, double s, double lw, Py_ssize_t pos) noexcept nogil:
    """Multisets of ``rem`` more atoms from atoms j, j-1, ..., 0 (values increasing with the index) whose
    sum exceeds R.thr, written into R.out[pos:] as (sum, log-weight); -1 when over R.cap or out of steps.
    A branch is cut when s + c v_j + (rem - c) v_{j-1}, the largest sum any completion can reach, is at
    most R.thr (fewer draws of atom j only lower it: the loop over c stops there)."""
    cdef int c
    cdef double s2, lw2
    R.calls -= 1.0
    if R.calls < 0.0:
        return -1
    if j == 0 or rem == 0:
        c = rem
        if c > 0 and R.lp[j] == -INFINITY:
            return pos
        s2 = s + c * R.v[j]
        if not (s2 > R.thr):
            return pos
        if pos >= R.cap:
            return -1
        R.out[pos].s = s2
        R.out[pos].w = lw + (c * R.lp[j] if c > 0 else 0.0) - R.lgc[c]
        return pos + 1
    c = rem
    while c >= 0:
        if c > 0 and R.lp[j] == -INFINITY:
            c -= 1
            continue
        s2 = s + c * R.v[j]
        if not (s2 + (rem - c) * R.v[j - 1] > R.thr):
            break
        lw2 = lw + (c * R.lp[j] if c > 0 else 0.0) - R.lgc[c]
        pos = _half_pruned(R, j - 1, rem - c, s2, lw2, pos)
        if pos < 0:
            return -1
        c -= 1
    return pos


cdef int _mitm_positive_part(const double* v, const double* p, Py_ssize_t k, int n, double cap,
                             double* value, double* err, bint pruned=False) noexcept nogil:
    """E[(G_1+...+G_n)_+] (NOT divided by n) of the law (v, p) (masses summing to one) and its error bound.

    Returns 0, or -1 when the two halves would hold more than ``cap`` points (nothing is computed),
    -2 if memory could not be allocated.

    ``pruned``: the values must be increasing (``_gparv_atoms`` order); B keeps only the multisets with
    computed sum > -(na max v) - 4 Eab, A only those with sum > -(largest kept b) - 4 Eab.  A computed
    half sum (or a branch's largest completion) is within Eab/2 of its exact value, so every pair cut
    has exact a + b < 0 and contributes exactly 0; the kept pairs are merged and charged as below (mA, mB
    the kept counts).  Returns -1 (abandoned, nothing computed) beyond ``cap`` kept points in all or
    PRUNED_CALLS recursion steps, or at once when a lower bound on the kept points (the multisets drawn only
    from atoms above -(na/nb) v_max, resp. -(nb/na) v_max) exceeds ``cap``.

    Rounding (eps = 2^-52, all bounds absolute and added to ``err``): a point's log-weight carries
    8 eps (m max|log p| + log m! + k) (as in the multinomial enumeration), so the product of the two
    weights has relative error rw = expm1(sum of both) + 2 eps; a computed sum a + b differs from the exact
    one by at most Eab = 2 eps max|v| (na^2 + nb^2 + n) (m additions of terms <= m max|v| per half, one
    more for a + b), which bounds both the error of an included term and the value of a term whose sign
    test is wrong; the suffix sums and the outer sum of N terms are within gamma_N = N eps / (1 - N eps) of
    their exact sums relative to the sums of absolute values P_abs = sum_a w_a (|a| P(B > -a) + E[|B|; B > -a]).
    Only pairs whose computed sum exceeds -2 Eab can carry a term or sign-test error (mass P_near), hence
    |computed - exact| <= ((rw + gamma_NA + gamma_NB + 4 eps) P_abs + 2 Eab P_near (1 + 4 gamma + 8 eps)) (1 + rw).
    """
    cdef int na = n - n // 2, nb = n // 2
    cdef double NA = _multisets(<double>na, <double>k), NB = _multisets(<double>nb, <double>k)
    cdef Py_ssize_t ia, ib, mA, mB, lo, hi, mid, j
    cdef prune_t R
    cdef double bmax
    cdef Py_ssize_t ka, kb
    mA = -1
    cdef double lmax = 0.0, amax = 0.0, lwa, lwb, rw, Eab, gA, gB, tot = 0.0, pabs = 0.0, pnear = 0.0, a, wa, t0, t1, ta
    cdef double* lp
    cdef double* lgc
    cdef sw_t* A
    cdef sw_t* B
    cdef double* S0
    cdef double* S1
    cdef double* SA
    value[0] = 0.0
    err[0] = 0.0
    if pruned:
        # a lower bound on the kept points without enumerating: every multiset of B drawn only from atoms
        # above -(na/nb) v_max is kept (its sum exceeds -na v_max), likewise for A (-(nb/na) v_max)
        kb = 0
        ka = 0
        for j in range(k):
            if v[j] > -(<double>na / nb) * v[k - 1] if nb > 0 else True:
                kb += 1
            if v[j] > -(<double>nb / na) * v[k - 1]:
                ka += 1
        if (_multisets(<double>nb, <double>kb) if kb > 0 else 0.0) + (
                _multisets(<double>na, <double>ka) if ka > 0 else 0.0) > cap:
            return -1
        NA = NA if NA < cap else cap
        NB = NB if NB < cap else cap
    elif NA + NB > cap:
        return -1
    lp = <double*>malloc(k * sizeof(double))
    lgc = <double*>malloc((n + 2) * sizeof(double))
    A = <sw_t*>malloc((<Py_ssize_t>NA + 16) * sizeof(sw_t))
    B = <sw_t*>malloc((<Py_ssize_t>NB + 16) * sizeof(sw_t))
    S0 = <double*>malloc((<Py_ssize_t>NB + 17) * sizeof(double))
    S1 = <double*>malloc((<Py_ssize_t>NB + 17) * sizeof(double))
    SA = <double*>malloc((<Py_ssize_t>NB + 17) * sizeof(double))
    if lp == NULL or lgc == NULL or A == NULL or B == NULL or S0 == NULL or S1 == NULL or SA == NULL:
        free(lp); free(lgc); free(A); free(B); free(S0); free(S1); free(SA)
        return -2
    for j in range(n + 2):
        lgc[j] = lgamma(j + 1.0)
    for j in range(k):
        lp[j] = log(p[j]) if p[j] > 0.0 else -INFINITY
        if p[j] > 0.0 and fabs(lp[j]) > lmax:
            lmax = fabs(lp[j])
        if fabs(v[j]) > amax:
            amax = fabs(v[j])
    Eab = 2.0 * DBL_EPS * amax * (<double>na * na + <double>nb * nb + n)
    if pruned:
        R.v = v
        R.lp = lp
        R.lgc = lgc
        R.calls = PRUNED_CALLS
        # B first (the smaller half): b can meet a + b > 0 only if b > -(na v_max)
        R.out = B
        R.cap = <Py_ssize_t>NB
        R.thr = -(na * v[k - 1]) - 4.0 * Eab
        mB = _half_pruned(&R, k - 1, nb, 0.0, lgc[nb], 0) if nb > 0 else 0
        if nb == 0:
            B[0].s = 0.0
            B[0].w = 0.0
            mB = 1
        if mB > 0:
            bmax = B[0].s
            for ib in range(mB):
                if B[ib].s > bmax:
                    bmax = B[ib].s
            R.out = A
            R.cap = <Py_ssize_t>(cap - mB) if cap - mB < NA else <Py_ssize_t>NA
            R.thr = -bmax - 4.0 * Eab
            mA = _half_pruned(&R, k - 1, na, 0.0, lgc[na], 0)
        if mB <= 0 or mA < 0:
            free(lp); free(lgc); free(A); free(B); free(S0); free(S1); free(SA)
            return -1
    else:
        mA = _half(v, lp, lgc, k, 0, na, 0.0, lgc[na], A, 0)
        mB = _half(v, lp, lgc, k, 0, nb, 0.0, lgc[nb], B, 0)
    for ia in range(mA):
        A[ia].w = exp(A[ia].w)
    for ib in range(mB):
        B[ib].w = exp(B[ib].w)
    qsort(B, mB, sizeof(sw_t), _sw_cmp)
    # suffix sums of mass, first moment and absolute first moment of B (index mB: empty suffix)
    S0[mB] = 0.0
    S1[mB] = 0.0
    SA[mB] = 0.0
    ib = mB - 1
    while ib >= 0:
        S0[ib] = S0[ib + 1] + B[ib].w
        S1[ib] = S1[ib + 1] + B[ib].w * B[ib].s
        SA[ib] = SA[ib + 1] + B[ib].w * fabs(B[ib].s)
        ib -= 1
    for ia in range(mA):
        a = A[ia].s
        wa = A[ia].w
        # first index with a + B[i].s > 0
        lo = 0
        hi = mB
        while lo < hi:
            mid = (lo + hi) // 2
            if a + B[mid].s > 0.0:
                hi = mid
            else:
                lo = mid + 1
        if lo < mB:
            t0 = S0[lo]
            t1 = S1[lo]
            ta = a * t0 + t1
            if ta > 0.0:
                tot += wa * ta
            pabs += wa * (fabs(a) * t0 + SA[lo])
        # first index with a + B[i].s > -2 Eab: every pair whose term or sign test can be wrong is at or
        # after it (its computed sum is within Eab of the exact one)
        hi = lo
        lo = 0
        while lo < hi:
            mid = (lo + hi) // 2
            if a + B[mid].s > -2.0 * Eab:
                hi = mid
            else:
                lo = mid + 1
        if lo < mB:
            pnear += wa * S0[lo]
    lwa = 8.0 * DBL_EPS * (na * lmax + lgamma(na + 1.0) + k)
    lwb = 8.0 * DBL_EPS * (nb * lmax + lgamma(nb + 1.0) + k)
    rw = expm1(lwa + lwb) + 2.0 * DBL_EPS
    gA = (mA + 2.0) * DBL_EPS / (1.0 - (mA + 2.0) * DBL_EPS)
    gB = (mB + 2.0) * DBL_EPS / (1.0 - (mB + 2.0) * DBL_EPS)
    value[0] = tot
    # pnear is itself a sum of mA rounded products of rounded suffix sums: inflate it by (1 + 4 gA + 4 gB)
    err[0] = ((rw + gA + gB + 4.0 * DBL_EPS) * pabs
              + 2.0 * Eab * pnear * (1.0 + 4.0 * (gA + gB) + 8.0 * DBL_EPS)) * (1.0 + rw)
    free(lp); free(lgc); free(A); free(B); free(S0); free(S1); free(SA)
    return 0


def small_n_positive_part(const double[::1] values, const double[::1] probs, int n, double cap=4e6,
                          bint pruned=False):
    """E[(G_1+...+G_n)_+] of a finite law by meet-in-the-middle over multisets, with its error bound.

    Exact up to rounding; the returned error bounds it (see ``_mitm_positive_part``).  Cost:
    C(n - n//2 + K - 1, n - n//2) + C(n//2 + K - 1, n//2) points, one sort and one binary search per point.

    Parameters
    ----------
    values, probs : float64[::1], shape (K,)
        Atoms and masses (masses sum to one).
    n : int
        Number of summands, >= 1.
    cap : float
        Largest number of points of the two halves together (kept points when ``pruned``).
    pruned : bool
        Enumerate only the multisets that can meet a positive sum (``values`` must be increasing); the
        status is -1 also when PRUNED_CALLS recursion steps do not suffice.

    Returns
    -------
    (float, float, int)
        E[S_+] (not divided by n), its absolute error bound, and a status: 0 computed, -1 over ``cap``,
        -2 out of memory.
    """
    cdef double val = 0.0, er = 0.0
    cdef int st
    cdef Py_ssize_t k = values.shape[0]
    cdef Py_ssize_t j
    if probs.shape[0] != k or k < 1 or n < 1:
        raise ValueError("small_n_positive_part: bad arguments")
    if pruned:
        for j in range(1, k):
            if not (values[j] > values[j - 1]):
                raise ValueError("small_n_positive_part: pruned needs increasing values")
    with nogil:
        st = _mitm_positive_part(&values[0], &probs[0], k, n, cap, &val, &er, pruned)
    return val, er, st


#: Kept-point cap of the pruned meet in the middle (``exact._positive_part`` passes it as ``cap``).
PRUNED_POINT_CAP = PRUNED_CAP
