# Family construction (included from kernels.pyx): the one merge by ratio and the one law key of
# ``shuffleamp.decomposition`` (``merge_rows``, ``law_keys``, ``small_decomposition`` all call these).
#
# merge_sorted: row-wise stable sort of the components by their integer merge keys (k0, k1) and
# sequential sums of the masses of equal keys, each group summed in its input order from 0.0.
# law_key_rows: the law key of merged rows: (beta rounded, bytes of the rounded (a/c, b/c, c) rows in merge-key
# order), rounding to ``digits`` decimals as rint(x * 10^digits) / 10^digits.


cdef inline bint _key_less(int64_t a0, int64_t a1, int64_t b0, int64_t b1) noexcept nogil:
    return a0 < b0 or (a0 == b0 and a1 < b1)


cdef void _stable_key_sort(const int64_t* K0, const int64_t* K1, Py_ssize_t k, Py_ssize_t* idx,
                           Py_ssize_t* tmp) noexcept nogil:
    """``idx`` = 0..k-1 sorted stably by (K0, K1) (as ``np.lexsort((K1, K0))``): insertion sort of runs of 16,
    then bottom-up merges (``tmp``: scratch of length k)."""
    cdef Py_ssize_t i, j, w, lo, mid, hi, a, b, o, t
    cdef Py_ssize_t* src = idx
    cdef Py_ssize_t* dst = tmp
    cdef Py_ssize_t* sw
    for lo in range(0, k, 16):
        hi = lo + 16 if lo + 16 < k else k
        for i in range(lo, hi):
            j = i
            while j > lo and _key_less(K0[i], K1[i], K0[idx[j - 1]], K1[idx[j - 1]]):
                idx[j] = idx[j - 1]
                j -= 1
            idx[j] = i
    w = 16
    while w < k:
        lo = 0
        while lo < k:
            mid = lo + w if lo + w < k else k
            hi = lo + 2 * w if lo + 2 * w < k else k
            a = lo
            b = mid
            o = lo
            while a < mid and b < hi:
                # stable: take from the left run unless the right one is strictly smaller
                if _key_less(K0[src[b]], K1[src[b]], K0[src[a]], K1[src[a]]):
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
            lo = hi
        sw = src
        src = dst
        dst = sw
        w *= 2
    if src != idx:
        for t in range(k):
            idx[t] = src[t]


def clean_masses(const double[:, ::1] X, double beta):
    """The validation of a decomposition's masses (``Decomposition``): checks and normalisation in one pass.

    Parameters
    ----------
    X : float64 array, shape (3, k), C-contiguous
        The masses a, b, c (rows).
    beta : float
        Residual mass.

    Returns
    -------
    (ndarray, float) or None
        The masses as the decomposition keeps them (shape (3, k'), read-only: each mass max(x, 0), components
        with a = b = c = 0 dropped) and β (max(β, 0)); None when a check fails: a mass not finite or negative,
        β < -1e-12, a row sum (or sum(c) + β) off 1 by more than 1e-9, or a component with c = 0 and a + b > 0
        (the caller then raises the typed error).
    """
    cdef Py_ssize_t k = X.shape[1], j, i, kk = 0
    cdef double sa = 0.0, sb = 0.0, sc = 0.0, x
    cdef bint all_c = True
    if X.shape[0] != 3 or k == 0:
        return None
    for j in range(k):
        if not (X[0, j] >= 0.0 and X[1, j] >= 0.0 and X[2, j] >= 0.0 and X[0, j] < INFINITY
                and X[1, j] < INFINITY and X[2, j] < INFINITY):
            return None
        sa += X[0, j]
        sb += X[1, j]
        sc += X[2, j]
        if not X[2, j] > 0.0:
            all_c = False
            if X[0, j] > 0.0 or X[1, j] > 0.0:
                return None
    if beta < -1e-12:
        return None
    if beta < 0.0:
        beta = 0.0
    if fabs(sa - 1.0) > 1e-9 or fabs(sb - 1.0) > 1e-9 or fabs(sc + beta - 1.0) > 1e-9:
        return None
    for j in range(k):
        if all_c or X[0, j] > 0.0 or X[1, j] > 0.0 or X[2, j] > 0.0:
            kk += 1
    out = np.empty((3, kk), dtype=np.float64)
    cdef double[:, ::1] o = out
    kk = 0
    for j in range(k):
        if all_c or X[0, j] > 0.0 or X[1, j] > 0.0 or X[2, j] > 0.0:
            for i in range(3):
                x = X[i, j]
                o[i, kk] = x if x > 0.0 else 0.0
            kk += 1
    out.setflags(write=False)
    return out, beta


def law_key_rows(const int64_t[::1] row, const double[::1] a, const double[::1] b, const double[::1] c,
                 const int64_t[::1] k0, const int64_t[::1] k1, const double[::1] beta, Py_ssize_t m,
                 double scale, bint swapped):
    """The law keys of ``m`` merged decompositions (the output of ``merge_sorted``: rows non-decreasing, components
    sorted by (k0, k1) within a row).

    Parameters
    ----------
    row, a, b, c, k0, k1 : arrays of length s
        Merged components (``merge_sorted``'s output).
    beta : float64[::1], shape (m,)
        Residual masses.
    m : int
        Number of decompositions.
    scale : float
        10^digits: values are rounded as rint(x * scale) / scale (numpy's ``round``).
    swapped : bool
        Keys of the swapped decompositions (a and b exchanged: rows (b/c, a/c, c) in (k1, k0) order).

    Returns
    -------
    list of tuple
        ``(rounded beta, bytes of the rounded (r0, r1, c) float64 rows)`` per decomposition; -0.0 is written
        as 0.0 in the rows.
    """
    cdef Py_ssize_t s = row.shape[0], i, j, t, start, end, r
    cdef double x
    out_a = np.empty((s, 3), dtype=np.float64)
    cdef double[:, ::1] o = out_a
    cdef Py_ssize_t[::1] idx = np.empty(max(s, 1), dtype=np.intp), tmp = np.empty(max(s, 1), dtype=np.intp)
    bounds_a = np.zeros(m + 1, dtype=np.intp)
    cdef Py_ssize_t[::1] bnd = bounds_a
    if a.shape[0] != s or b.shape[0] != s or c.shape[0] != s or k0.shape[0] != s or k1.shape[0] != s \
            or beta.shape[0] != m:
        raise ValueError("law_key_rows: inconsistent array lengths")
    with nogil:
        for i in range(s):
            bnd[row[i] + 1] += 1
        for r in range(m):
            bnd[r + 1] += bnd[r]
        for r in range(m):
            start = bnd[r]
            end = bnd[r + 1]
            if swapped:
                _stable_key_sort(&k1[start], &k0[start], end - start, &idx[start], &tmp[start])
            else:
                for t in range(end - start):
                    idx[start + t] = t
            for t in range(end - start):
                i = start + idx[start + t]
                j = start + t
                x = (b[i] if swapped else a[i]) / c[i]
                o[j, 0] = rint(x * scale) / scale + 0.0
                x = (a[i] if swapped else b[i]) / c[i]
                o[j, 1] = rint(x * scale) / scale + 0.0
                o[j, 2] = rint(c[i] * scale) / scale + 0.0
    buf = out_a.tobytes()
    return [(float(rint(beta[r] * scale) / scale), buf[bnd[r] * 24:bnd[r + 1] * 24]) for r in range(m)]


def merge_sorted(const double[:, ::1] A, const double[:, ::1] B, const double[:, ::1] C,
                 const int64_t[:, ::1] K0, const int64_t[:, ::1] K1):
    """Row-wise merge of components with equal keys (see ``decomposition.merge_rows``).

    Parameters
    ----------
    A, B, C : float64 arrays, shape (m, k), C-contiguous
        Component masses.
    K0, K1 : int64 arrays, shape (m, k), C-contiguous
        Merge keys.

    Returns
    -------
    row, a, b, c, k0, k1 : arrays of length s
        As ``merge_rows``: row index (non-decreasing), summed masses, keys of the merged components,
        sorted by (k0, k1) within each row.
    """
    cdef Py_ssize_t m = A.shape[0], k = A.shape[1]
    cdef Py_ssize_t r, i, j, s = 0, t
    cdef int64_t q0, q1
    row_o = np.empty(m * k, dtype=np.int64)
    a_o = np.empty(m * k)
    b_o = np.empty(m * k)
    c_o = np.empty(m * k)
    k0_o = np.empty(m * k, dtype=np.int64)
    k1_o = np.empty(m * k, dtype=np.int64)
    cdef int64_t[::1] ro = row_o, ko0 = k0_o, ko1 = k1_o
    cdef double[::1] ao = a_o, bo = b_o, co = c_o
    cdef Py_ssize_t[::1] idx = np.empty(max(k, 1), dtype=np.intp), tmp = np.empty(max(k, 1), dtype=np.intp)
    with nogil:
        for r in range(m):
            _stable_key_sort(&K0[r, 0], &K1[r, 0], k, &idx[0], &tmp[0])
            for i in range(k):
                t = idx[i]
                q0 = K0[r, t]
                q1 = K1[r, t]
                if i > 0 and q0 == ko0[s - 1] and q1 == ko1[s - 1]:
                    ao[s - 1] += A[r, t]
                    bo[s - 1] += B[r, t]
                    co[s - 1] += C[r, t]
                else:
                    ro[s] = r
                    ao[s] = 0.0 + A[r, t]
                    bo[s] = 0.0 + B[r, t]
                    co[s] = 0.0 + C[r, t]
                    ko0[s] = q0
                    ko1[s] = q1
                    s += 1
    if s == m * k:
        return row_o, a_o, b_o, c_o, k0_o, k1_o
    return row_o[:s].copy(), a_o[:s].copy(), b_o[:s].copy(), c_o[:s].copy(), k0_o[:s].copy(), k1_o[:s].copy()
