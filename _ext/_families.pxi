# Family construction (included from kernels.pyx): the merge by ratio of decomposition.merge_rows.
#
# merge_sorted: row-wise stable sort of the components by their integer merge keys (k0, k1) and
# sequential sums of the masses of equal keys -- the same order (np.lexsort is stable) and the same
# floating-point sums (np.bincount adds the weights one by one in index order, starting from 0.0) as
# the vectorised numpy path, so the results are bit-identical (tests/test_family_construction.py).


cdef inline bint _key_less(int64_t a0, int64_t a1, int64_t b0, int64_t b1) noexcept nogil:
    return a0 < b0 or (a0 == b0 and a1 < b1)


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
    cdef Py_ssize_t[::1] idx = np.empty(max(k, 1), dtype=np.intp)
    with nogil:
        for r in range(m):
            # stable insertion sort of 0..k-1 by (K0, K1)
            for i in range(k):
                j = i
                while j > 0 and _key_less(K0[r, i], K1[r, i], K0[r, idx[j - 1]], K1[r, idx[j - 1]]):
                    idx[j] = idx[j - 1]
                    j -= 1
                idx[j] = i
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
