"""Family construction against exact arithmetic: the compiled constructor's laws, law keys and certified δ.

The compiled constructor -- validation (``kernels.clean_masses``), merge by ratio (``kernels.merge_sorted``)
and law keys (``kernels.law_key_rows``), behind :class:`Decomposition`, ``merge_rows``, ``law_keys``,
``small_decomposition``, ``mixture``, the matrix and Hadamard lower datasets and every mechanism's families --
is compared with ``tests/family_oracle.py``, which shares no code with it:

* the merged law: the components grouped by their exact likelihood ratios (Fractions of the input floats),
  masses summed exactly; the compiled masses must agree within the rounding of a float sum (4 ulp per summed
  component), the components must come in the order of the documented merge key
  ``round(log(a/c) / rtol), round(log(b/c) / rtol)`` (computed in mpmath; either neighbour accepted only where
  the exact value is within float error of a half-integer);
* the law key ``(round(β), rows (r0, r1, c) rounded)``: decoded and compared with the exact merged law rounded
  to the key's digits (within one rounding step plus float error), in the merge-key order (swapped keys in
  the swapped order); equal laws (permuted, split components) give equal keys and different laws different
  keys;
* the certified δ: the hockey-stick divergence of the shuffled histograms, every sequence of users' outputs
  enumerated in exact Fractions (``family_oracle.shuffled_delta``), against the certified δ of the constructed
  family (``evaluate.max_delta``) and against ``sa.delta`` / ``sa.epsilon`` of mechanisms (the maximum over
  the matrix's ordered pairs, two-sided).

A wrong merge (distinct ratios summed, masses mis-added, a component lost), a wrong key (digits, order, a
swapped column, β) or a wrong de-duplication fails here (``tests/README.md``, mutation notes).  No test
asserts a duration.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import shuffleamp as sa
from shuffleamp import bounds, compose, decomposition as D, mechanisms as M
from shuffleamp.errors import NotLDPError, ParameterError
from shuffleamp.evaluate import max_delta

import family_oracle as F

ULP = 2.0 ** -52
RTOL = D.RATIO_RTOL
#: Relative error of the certified δ of a small family at small n (enumeration; its charged error is ~1e-15).
DELTA_RTOL = 1e-9


# ----------------------------------------------------------------------------- helpers
def _batch(rng, m, k, ties):
    """m rows of k components; with ties, some columns are copies scaled by powers of two (exactly equal
    ratios), and the last column shares the first one's a/c but not its b/c (not merged)."""
    A, B, C = rng.random((3, m, k)) ** 2 + 1e-3
    if ties and k > 1:
        j = rng.integers(0, k, size=k // 2)
        f = rng.choice([1.0, 0.5, 2.0, 4.0], size=j.size)
        A[:, : j.size], B[:, : j.size], C[:, : j.size] = A[:, j] * f, B[:, j] * f, C[:, j] * f
        if k > 2:
            A[:, -1], C[:, -1] = A[:, 0] * 2.0, C[:, 0] * 2.0
    return A, B, C


#: Spacing of the subnormal floats (a sum of subnormal masses errs by this much per term).
TINY = Fraction(2) ** -1074


def _seeds(fast: int, total: int) -> list:
    """Seeds 0..total-1, those from ``fast`` on marked slow (CI runs the first ``fast``)."""
    return [pytest.param(i, marks=pytest.mark.slow) if i >= fast else i for i in range(total)]


def _close(x: float, want: Fraction, terms: int = 1, tiny: float = 1.0) -> bool:
    """``x`` within the rounding of a float sum of ``terms`` positive terms of ``want`` (``tiny``: subnormal
    spacings each term may carry)."""
    return abs(Fraction(x) - want) <= 4 * terms * (ULP * abs(want) + TINY * Fraction(tiny))


def _key_ok(k: int, want: int, ambiguous: bool) -> bool:
    return k == want or (ambiguous and abs(k - want) == 1)


def _assert_merged(lib, groups, sizes, where="", tiny=1.0):
    """Compiled merged masses / keys (a, b, c, k0, k1 of one row) against :func:`F.merge_documented` groups."""
    a, b, c, k0, k1 = lib
    assert len(a) == len(groups), where
    for i, (g0, g1, amb, A, B, C) in enumerate(groups):
        n = sizes[i]
        assert _close(a[i], A, n, tiny) and _close(b[i], B, n, tiny) and _close(c[i], C, n, tiny), (where, i)
        if k0 is not None:
            assert _key_ok(int(k0[i]), g0, amb) and _key_ok(int(k1[i]), g1, amb), (where, i)


def _group_sizes(a, b, c):
    """Number of input components in each documented group."""
    sizes: dict = {}
    for x, y, z in zip(a, b, c):
        if z:
            key = (F.merge_key(x / z, RTOL)[0], F.merge_key(y / z, RTOL)[0])
            sizes[key] = sizes.get(key, 0) + 1
    return [sizes[k] for k in sorted(sizes)]


def _key_rows(key):
    beta, buf = key
    return beta, np.frombuffer(buf).reshape(-1, 3)


def _assert_key(key, groups, beta: Fraction, digits: int = D.LAW_KEY_DIGITS, swapped: bool = False, where=""):
    """A law key against the exact merged law (``F.merge_documented`` groups) rounded to ``digits``."""
    kb, rows = _key_rows(key)
    q = 10.0 ** -digits
    assert abs(kb - float(F.rounded(beta, digits))) <= q * (1 + 1e-6), where
    if swapped:
        groups = sorted(groups, key=lambda g: (g[1], g[0]))
    assert rows.shape == (len(groups), 3), where
    for row, (_, _, _, A, B, C) in zip(rows, groups):
        want = (B / C, A / C, C) if swapped else (A / C, B / C, C)
        for x, w in zip(row, want):
            # one rounding step (the key rounds a float that differs from the exact value by a few ulp) plus
            # the float error of the ratio of two sums
            # (a ratio of subnormal masses carries their absolute spacing: 8 * 2**-1074 / C each)
            tol = q * (1 + 1e-6) + 16 * ULP * float(w) + float(8 * TINY / C * (1 + w))
            assert abs(x - F.rounded(w, digits)) <= tol, (where, row, want)


def _exact_dec(d):
    return F.exact_list(d.a), F.exact_list(d.b), F.exact_list(d.c), F.exact(d.beta)


def _certified_delta(fam, n, eps):
    return max_delta([fam], n, eps)[0]


# ----------------------------------------------------------------------------- the merge
@pytest.mark.parametrize("seed", _seeds(3, 6))
def test_merge_rows_against_exact_merge(seed):
    """``merge_rows`` (stable sort by the merge keys, sequential sums): per row, the exact merge by ratio, in
    the documented key order, for short rows (insertion sort) and long ones (merge sort)."""
    rng = np.random.default_rng(seed)
    merged_some = False
    for m, k in [(1, 1), (1, 4), (1, 9), (3, 5), (8, 8), (1, 64), (4, 16), (30, 7), (3, 65), (2, 100), (1, 517)]:
        for ties in (False, True):
            A, B, C = _batch(rng, m, k, ties)
            row, a, b, c, k0, k1 = D.merge_rows(A, B, C)
            assert np.all(np.diff(row) >= 0) and row.dtype == np.int64 and a.dtype == np.float64
            for r in range(m):
                ea, eb, ec = F.exact_list(A[r]), F.exact_list(B[r]), F.exact_list(C[r])
                groups = F.merge_documented(ea, eb, ec, RTOL)
                sel = row == r
                _assert_merged((a[sel], b[sel], c[sel], k0[sel], k1[sel]), groups, _group_sizes(ea, eb, ec),
                               where=(m, k, ties, r))
                merged_some |= len(groups) < k
    assert merged_some                                   # the ties were merged
    empty = D.merge_rows(np.zeros((2, 0)), np.zeros((2, 0)), np.zeros((2, 0)))
    assert all(x.size == 0 for x in empty)


def test_merge_within_rtol_documented():
    """Ratios closer than the merge precision, inside one key bin, merge; a ratio one bin away does not."""
    for j in (0, 7, -3, 12345):
        r = math.exp(j * RTOL)
        a = np.array([[r * 0.2, r * (1 + 1e-12) * 0.3, r * math.exp(2 * RTOL) * 0.1]])
        b = np.array([[0.2, 0.3 * (1 - 1e-12), 0.1]])
        c = np.array([[0.2, 0.3, 0.1]])
        ea, eb, ec = F.exact_list(a), F.exact_list(b), F.exact_list(c)
        groups = F.merge_documented(ea, eb, ec, RTOL)
        assert len(groups) == 2 and len(F.merge_exact(ea, eb, ec)) == 3
        row, ma, mb, mc, k0, k1 = D.merge_rows(a, b, c)
        _assert_merged((ma, mb, mc, k0, k1), groups, _group_sizes(ea, eb, ec))


@pytest.mark.parametrize("seed", range(3))
def test_merge_keeps_the_shuffled_delta(seed):
    """The merged decomposition's exact shuffled δ equals the unmerged one's (the merge keeps the law), and the
    certified δ of the compiled family is that value (upper, within its rounding)."""
    rng = np.random.default_rng(40 + seed)
    for k in (2, 3, 5):
        a, b, c, beta = _small_case(rng, k - 1, ties=False, zeros=False)
        a, b, c = a + [a[0] / 2], b + [b[0] / 2], c + [c[0] / 2]           # component 0 split in two
        a[0], b[0], c[0] = a[0] / 2, b[0] / 2, c[0] / 2
        d = D.small_decomposition(a, b, c, beta, simplify=True)
        assert d.a.size == k - 1
        for n, eps in ((2, 0.1), (3, 0.4)):
            want = F.shuffled_delta(F.exact_list(a), F.exact_list(b), F.exact_list(c), F.exact(beta), n, eps)
            got = F.shuffled_delta(*_exact_dec(d), n, eps)
            assert abs(got - want) <= 1e-13 * want
            cert = _certified_delta(d, n, eps)
            assert float(want) * (1 - 1e-13) <= cert <= float(want) * (1 + DELTA_RTOL)


# ----------------------------------------------------------------------------- the law key
@pytest.mark.parametrize("seed", _seeds(2, 6))
def test_law_keys_against_exact_law(seed):
    """``law_keys``: β and the merged rows (r0, r1, c) rounded to the key's digits in merge-key order (swapped:
    b/c first, in the swapped order), for one or many rows, scalar or per-row β."""
    rng = np.random.default_rng(100 + seed)
    for m, k in [(1, 1), (1, 5), (3, 4), (6, 7), (1, 40), (12, 9), (2, 300)]:
        for ties in (False, True):
            A, B, C = _batch(rng, m, k, ties)
            groups = [F.merge_documented(F.exact_list(A[r]), F.exact_list(B[r]), F.exact_list(C[r]), RTOL)
                      for r in range(m)]
            for beta in (0.0, 0.123456789012345, rng.random(m)):
                betas = np.broadcast_to(beta, (m,))
                for swapped in (False, True):
                    for digits in (D.LAW_KEY_DIGITS, 6):
                        keys = D.law_keys(A, B, C, beta, digits=digits, swapped=swapped)
                        assert len(keys) == m
                        for r in range(m):
                            _assert_key(keys[r], groups[r], F.exact(betas[r]), digits, swapped, where=(m, k, r))


def _law_variants(rng, k):
    """A normalised decomposition, the same law written three other ways, and two different laws."""
    a, b, c, beta = _small_case(rng, k, ties=False, zeros=False)
    perm = rng.permutation(k)
    same = [(list(np.array(a)[perm]), list(np.array(b)[perm]), list(np.array(c)[perm]), beta)]
    j = int(rng.integers(0, k))                                   # one component split in two halves
    same.append((a + [a[j] / 2], b + [b[j] / 2], c + [c[j] / 2], beta))
    same[-1][0][j] /= 2
    same[-1][1][j] /= 2
    same[-1][2][j] /= 2
    other = []
    if k >= 2:                                                    # mass moved from component 1 to 0 in a
        t = a[1] * 1e-3
        other.append(([a[0] + t, a[1] - t] + a[2:], b, c, beta))
    other.append((a, b, c[:-1] + [c[-1] * 0.9], beta + c[-1] * 0.1))   # a different blanket
    return (a, b, c, beta), same, other


@pytest.mark.parametrize("seed", range(4))
def test_law_key_classes(seed):
    """Equal laws give equal keys (components permuted, a component split, built by either constructor);
    different laws give different keys; the swapped family's key is the key of (b, a, c)."""
    rng = np.random.default_rng(300 + seed)
    for k in (1, 2, 5, 12):
        base, same, other = _law_variants(rng, k)
        d = D.Decomposition(*base)
        key = d.law_key()
        assert D.small_decomposition(*base).law_key() == key
        for v in same:
            assert D.Decomposition(*v).law_key() == key
            assert D.small_decomposition(*v, simplify=True).law_key() == key
        for v in other:
            assert D.Decomposition(*v).law_key() != key
        sw = D.Decomposition(base[1], base[0], base[2], base[3]).law_key()
        assert d.swapped().law_key() == sw
        assert d.swapped().swapped().law_key() == key
        groups = F.merge_documented(*[F.exact_list(x) for x in base[:3]], RTOL)
        _assert_key(key, groups, F.exact(d.beta))
        _assert_key(d.swapped().law_key(), groups, F.exact(d.beta), swapped=True)


@pytest.mark.parametrize("seed", range(4))
def test_swap_merge_and_simplified_against_exact_law(seed):
    """A swapped decomposition's merge (derived from its source's) and its simplified form: the exact merge of
    (b, a, c)."""
    rng = np.random.default_rng(500 + seed)
    for k in (1, 2, 5, 12, 13, 30):
        a, b, c, beta = _small_case(rng, k, ties=bool(seed % 2), zeros=False)
        d = D.Decomposition(a, b, c, beta)
        d.law_key()                                              # computes the source's merge first
        sw = d.swapped()
        eb, ea, ec = F.exact_list(b), F.exact_list(a), F.exact_list(c)
        groups = F.merge_documented(eb, ea, ec, RTOL)
        sizes = _group_sizes(eb, ea, ec)
        row, ma, mb, mc, k0, k1 = sw._merge()
        _assert_merged((ma, mb, mc, k0, k1), groups, sizes)
        s = sw.simplified()
        _assert_merged((s.a, s.b, s.c, None, None), groups, sizes)
        assert s.beta == d.beta


# ----------------------------------------------------------------------------- the documented key rounding
def _key_round(v):
    """The law key's rounding of ``v`` (as β, and as the first ratio of a one-component row)."""
    from shuffleamp._ext import kernels
    z = np.zeros(1, dtype=np.int64)
    beta, buf = kernels.law_key_rows(z, np.array([v]), np.array([0.0]), np.array([1.0]), z, z, np.array([v]), 1,
                                     1e12, False)[0]
    return beta, np.frombuffer(buf)[0]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e-300, 1e300), min_size=1, max_size=12),
       st.lists(st.floats(1e-300, 1e300), min_size=1, max_size=12))
def test_ratio_keys_and_rounding_exact(num, den):
    """``ratio_keys``: the documented key of the exact ratio (mpmath); the law key's rounding: numpy's
    ``np.round(v, 12)``."""
    k = min(len(num), len(den))
    x, y = np.array(num[:k]), np.array(den[:k])
    got = D.ratio_keys(x, y)
    assert got.dtype == np.int64
    for g, u, v in zip(got.tolist(), num, den):
        q = float(np.float64(u) / np.float64(v))                  # the float ratio the key is documented on
        want, amb = F.merge_key(Fraction(q) if math.isfinite(q) else Fraction(10) ** 400, RTOL)
        assert _key_ok(g, want, amb)
    for v in (x / y).tolist() + num:
        want = np.round(np.array([v]), D.LAW_KEY_DIGITS)[0]
        assert _key_round(v) == (want, want)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_ratio_keys_edges():
    """Zero ratios take the floor 1e-300, huge and infinite ones the clip at log 800."""
    floor_key = F.merge_key(Fraction(0), RTOL)[0]
    clip_key = F.merge_key(Fraction(10) ** 400, RTOL)[0]
    vals = [0.0, 5e-324, 1e-300, 1e-200, 0.5, 1.0, 3.0, 1e200, 1e308, np.inf]
    for rtol in (RTOL, 1e-6):
        for u in vals:
            for v in vals[1:]:
                with np.errstate(all="ignore"):
                    q = np.float64(u) / np.float64(v)
                if np.isnan(q):                                   # inf / inf: no ratio (masses are finite)
                    continue
                got = int(D.ratio_keys(np.array([u]), np.array([v]), rtol)[0])
                if np.isinf(q):
                    want, amb = F.merge_key(Fraction(10) ** 400, rtol)
                else:
                    want, amb = F.merge_key(Fraction(float(q)), rtol)
                assert _key_ok(got, want, amb), (u, v, rtol)
    assert floor_key == round(math.log(1e-300) / RTOL) and clip_key == round(800 / RTOL)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_key_rounding_edges():
    for v in [0.0, -0.0, 0.5e-12, 1.5e-12, 2.5e-12, 4503599627370495.5e-12, 1e296, 1e300, math.inf, -2.5e-12]:
        want = np.round(np.array([v]), 12)[0]
        assert _key_round(v) == (want, want)


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize("case, want", [
    (([0.5, 0.5], [0.25, 0.75], [0.2, 0.3], None), ([0.5, 0.5], [0.25, 0.75], [0.2, 0.3], 0.5)),
    (([0.5, 0.5, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.0], None),                  # an empty component dropped
     ([0.5, 0.5], [0.25, 0.75], [0.2, 0.3], 0.5)),
    (([0.5, 0.5, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.1], 0.4),                   # a c-only component kept
     ([0.5, 0.5, 0.0], [0.25, 0.75, 0.0], [0.2, 0.3, 0.1], 0.4)),
    (([0.5, 0.5 + 1e-17, -1e-16], [0.25, 0.75, 0.0], [0.2, 0.3, 0.0], None),       # tiny negative clipped, dropped
     ([0.5, 0.5], [0.25, 0.75], [0.2, 0.3], 0.5)),
    (([[0.1, 0.9]], [[0.9, 0.1]], [[0.1, 0.1]], 0.8), ([0.1, 0.9], [0.9, 0.1], [0.1, 0.1], 0.8)),   # 2-D: ravelled
    (([0.3, 0.7], [0.6, 0.4], [0.2, 0.1], None), ([0.3, 0.7], [0.6, 0.4], [0.2, 0.1], None)),
])
def test_decomposition_validation(case, want):
    """The validated arrays: read-only float64 copies, tiny negatives clipped to 0, empty components dropped;
    β as given, else 1 - sum(c) (within one rounding of the exact value)."""
    a, b, c, beta = case
    d = D.Decomposition(a, b, c, beta, label="x")
    for name, w in zip("abc", want[:3]):
        u = getattr(d, name)
        assert u.dtype == np.float64 and not u.flags.writeable
        assert u.tolist() == w
    wb = want[3]
    if wb is None:
        assert abs(Fraction(d.beta) - (1 - sum(F.exact_list(c)))) <= ULP
    else:
        assert d.beta == wb
    assert isinstance(d.beta, float) and d.label == "x"


@pytest.mark.parametrize("case, err, param", [
    (([0.5, 0.5], [0.5, 0.5], [0.5, np.nan]), ParameterError, "c"),
    (([0.5, 0.6], [0.5, 0.5], [0.2, 0.2]), ParameterError, "a"),
    (([0.5, 0.5], [0.5, 0.4], [0.2, 0.2]), ParameterError, "b"),
    (([0.5, 0.5], [0.5, 0.5], [0.7, 0.7]), ParameterError, "c"),
    (([0.5, 0.5], [0.5, 0.5], [0.5, -0.1]), ParameterError, "c"),
    (([0.5, 0.5], [0.5, 0.5], [0.5]), ParameterError, "decomposition"),
    (([0.5, 0.5], [0.5, 0.5], [0.5, 0.0]), NotLDPError, "decomposition"),
])
def test_decomposition_errors(case, err, param):
    with pytest.raises(err) as e:
        D.Decomposition(*case)
    assert e.value.parameter == param


def _small_case(rng, k, ties, zeros):
    """Masses of k components as Python floats (a, b sum to 1, c + beta = 1): ties give equal ratios (columns
    scaled by powers of two), zeros an empty and a c-only component."""
    A, B, C = rng.random((3, k)) ** 2 + 1e-3
    if ties and k > 1:
        j = rng.integers(0, k, size=k // 2)
        f = rng.choice([1.0, 0.5, 2.0], size=j.size)
        A[: j.size], B[: j.size], C[: j.size] = A[j] * f, B[j] * f, C[j] * f
    if zeros and k > 2:
        A[0] = B[0] = C[0] = 0.0                  # an empty component (dropped)
        A[1] = B[1] = 0.0                         # a c-only component (kept)
    a, b = (A / A.sum()).tolist(), (B / B.sum()).tolist()
    c = (C / C.sum() * 0.7).tolist()
    return a, b, c, 1.0 - float(np.sum(C / C.sum() * 0.7))


@pytest.mark.parametrize("seed", _seeds(2, 4))
def test_small_decomposition_against_exact_law(seed):
    """Families built from Python floats (``small_decomposition``): the input's components (empty ones dropped)
    or, simplified, the exact merge by ratio; their law key and swapped law key; the certified δ of the family
    (small k) against the enumerated shuffled δ of the input."""
    rng = np.random.default_rng(700 + seed)
    for k in range(1, 18):
        for ties in (False, True):
            for zeros in (False, True):
                a, b, c, beta = _small_case(rng, k, ties, zeros)
                ea, eb, ec = F.exact_list(a), F.exact_list(b), F.exact_list(c)
                groups = F.merge_documented(ea, eb, ec, RTOL)
                sizes = _group_sizes(ea, eb, ec)
                keep = [i for i in range(k) if a[i] or b[i] or c[i]]
                for simplify in (False, True):
                    d = D.small_decomposition(a, b, c, beta, label="x", simplify=simplify)
                    for name in ("a", "b", "c"):
                        u = getattr(d, name)
                        assert u.dtype == np.float64 and not u.flags.writeable
                    if simplify:
                        _assert_merged((d.a, d.b, d.c, None, None), groups, sizes, where=(k, ties, zeros))
                    else:
                        assert d.a.tolist() == [a[i] for i in keep] and d.c.tolist() == [c[i] for i in keep]
                        assert d.b.tolist() == [b[i] for i in keep]
                    assert d.beta == beta and d.label == "x"
                    _assert_key(d.law_key(), groups, F.exact(beta))
                    _assert_key(d.swapped().law_key(), groups, F.exact(beta), swapped=True)
                    s = d.simplified()
                    _assert_merged((s.a, s.b, s.c, None, None), groups, sizes)
                    _assert_key(s.law_key(), groups, F.exact(beta))
                    _assert_key(s.swapped().law_key(), groups, F.exact(beta), swapped=True)
                if k <= 4 and not zeros:
                    eps = float(rng.uniform(0.0, 0.5))
                    want = F.shuffled_delta(ea, eb, ec, F.exact(beta), 3, eps)
                    cert = _certified_delta(d, 3, eps)
                    assert float(want) * (1 - 1e-13) <= cert <= float(want) * (1 + DELTA_RTOL) + 1e-300


@pytest.mark.parametrize("case, err, param", [
    (([0.5, 0.5], [0.5, 0.5], [0.5, np.nan], 0.0), ParameterError, "c"),
    (([0.5, 0.6], [0.5, 0.5], [0.2, 0.2], 0.6), ParameterError, "a"),
    (([0.5, 0.5], [0.5, 0.4], [0.2, 0.2], 0.6), ParameterError, "b"),
    (([0.5, 0.5], [0.5, 0.5], [0.7, 0.7], 0.0), ParameterError, "beta"),
    (([0.5, 0.5], [0.5, 0.5], [0.5, -0.1], 0.6), ParameterError, "c"),
    (([0.5, 0.5], [0.5, 0.5], [0.5], 0.5), ParameterError, "decomposition"),
    (([0.5, 0.5], [0.5, 0.5], [0.5, 0.0], 0.5), NotLDPError, "decomposition"),
])
def test_small_decomposition_errors(case, err, param):
    a, b, c, beta = case
    for simplify in (False, True):
        with pytest.raises(err) as e:
            D.small_decomposition(a, b, c, beta, simplify=simplify)
        assert e.value.parameter == param


@pytest.mark.parametrize("seed", range(3))
def test_mixture_against_exact_mixture(seed):
    """``decomposition.mixture`` of two families: the exact merge of the weighted components (w a, w b, w c)
    (ties across parts merge; a subnormal weight keeps each part's ratios), β = sum of w β."""
    rng = np.random.default_rng(900 + seed)
    for k1, k2 in [(1, 1), (2, 3), (4, 4), (3, 7), (8, 8), (9, 9)]:
        for w in (0.5, 0.3, 1e-310):
            f1 = D.small_decomposition(*_small_case(rng, k1, True, False), simplify=True)
            f2 = f1 if k1 == k2 and w == 0.5 else D.small_decomposition(*_small_case(rng, k2, False, False))
            mix = D.mixture([(w, f1), (1.0 - w, f2)], label="m")
            assert mix.label == "m"
            ew, ev = F.exact(w), F.exact(1.0 - w)
            parts = [(ew, f1), (ev, f2)]
            # the weighted components (w a, w b, w c), exactly; a subnormal product carries the spacing 2**-1074
            # times the part's ratio
            cols = [(wt * F.exact(x), wt * F.exact(y), wt * F.exact(z)) for wt, f in parts
                    for x, y, z in zip(f.a, f.b, f.c)]
            ea, eb, ec = (list(x) for x in zip(*cols))
            groups = F.merge_documented(ea, eb, ec, RTOL)
            tiny = 1.0 + max(float(np.max(np.maximum(f.a, f.b) / f.c)) for f in (f1, f2))
            _assert_merged((mix.a, mix.b, mix.c, None, None), groups, _group_sizes(ea, eb, ec), where=(k1, k2, w),
                           tiny=tiny)
            wb = ew * F.exact(f1.beta) + ev * F.exact(f2.beta)
            assert abs(Fraction(mix.beta) - wb) <= 8 * ULP
            _assert_key(mix.law_key(), groups, F.exact(mix.beta))
            _assert_key(mix.swapped().law_key(), groups, F.exact(mix.beta), swapped=True)


@pytest.mark.parametrize("eps0", [0.9, 1e-9, 1e-12, 149.0])
@pytest.mark.parametrize("d", [4, 8, 16, 64, 128, 1024])
def test_hr_lower_against_matrix_rows(d, eps0):
    """HR's lower datasets (d <= 1024; built from the matrix rows by the compiled constructor): the
    exact Theorem-14 law of the datasets (1 | 2; others 3) and (1 | 2; others 4) of the matrix's rows, merged
    by the documented rule (at eps0 = 1e-12 every column lies in one merge-key bin: one group)."""
    m = M.HadamardResponse(eps0, d)
    new = m.lower_decompositions()
    x2s = [3] + ([4] if d >= 8 else [])
    P = m.matrix()
    rows = []
    for x in [1, 2] + x2s:
        e = F.exact_list(P[x - 1])                              # inputs 1 .. d - 1 are rows 0 .. d - 2
        s = sum(e)
        rows.append([v / s for v in e])
    assert len(new) == len(x2s)
    for f, i in zip(new, range(len(x2s))):
        groups = F.merge_documented(rows[0], rows[1], rows[2 + i], RTOL)
        if eps0 == 1e-12:
            assert len(groups) == 1
        assert len(f.a) == len(groups)
        for j, (_, _, _, A, B, C) in enumerate(groups):
            # the rows come from the matrix, the families from closed forms: equal within a few ulp per term
            for x, w in ((f.a[j], A), (f.b[j], B), (f.c[j], C)):
                assert abs(Fraction(x) - w) <= 1e-13 * w
        assert f.beta == 0.0
        _assert_key(f.law_key(), groups, Fraction(0))
        _assert_key(f.swapped().law_key(), groups, Fraction(0), swapped=True)
    assert [f.label for f in new] == ["dataset (1 | 2; others 3 = 1 xor 2)",
                                      "dataset (1 | 2; others 4, independent)"][:len(x2s)]


# ----------------------------------------------------------------------------- mechanisms' families
def _mechanisms():
    P3 = np.array([[0.6, 0.25, 0.15], [0.2, 0.55, 0.25], [0.1, 0.3, 0.6]])
    g = np.random.default_rng(5)
    Q = np.exp(0.5 * 2.0 * g.random((4, 5)))
    return [M.KRR(0.7, 10), M.KRR(3.1, 3), M.KRR(9.0, 12), M.BLH(0.4, 4), M.BLH(2.5, 5), M.RAPPOR(1.2, 3),
            M.RAPPOR(0.3, 4), M.OUE(1.9, 3), M.OUE(0.6, 4), M.HadamardResponse(1.1, 8), M.HadamardResponse(4.2, 16),
            compose.parallel([(0.3, M.KRR(1.0, 4)), (0.7, M.KRR(2.5, 4))]), compose.subsample(M.BLH(1.4, 4), 0.2),
            compose.subsample(M.HadamardResponse(0.8, 8), 0.05), compose.joint(M.KRR(0.5, 3), M.RAPPOR(0.5, 2)),
            compose.joint(M.KRR(0.9, 3), M.KRR(0.9, 3)), M.MatrixMechanism(P3),
            M.MatrixMechanism(Q / Q.sum(axis=1, keepdims=True))]


def _extreme_mechanisms():
    return [M.KRR(1e-6, 3), M.KRR(149.0, 3), M.BLH(1e-5, 3), M.RAPPOR(1e-4, 2), M.RAPPOR(100.0, 3),
            M.OUE(149.0, 3), M.OUE(1e-6, 3), M.HadamardResponse(149.0, 4), M.HadamardResponse(1e-6, 16),
            compose.parallel([(1e-9, M.KRR(0.3, 4)), (1 - 1e-9, M.KRR(120.0, 4))]),
            compose.subsample(M.RAPPOR(2.0, 3), 1e-12), compose.subsample(M.KRR(1e-7, 3), 0.999)]


def _order(row):
    """Sort key of a (r0, r1, c) row that ulp-level differences do not reorder."""
    return tuple(float(f"{x:.8e}") for x in row)


def _law_of(f):
    """A family's law as sorted (r0, r1, c) rows and β, floats (for matching closed forms with matrix laws)."""
    rows = sorted(zip((f.a / f.c).tolist(), (f.b / f.c).tolist(), f.c.tolist()), key=_order)
    return rows, f.beta


def _same_law(f, exact_dec) -> bool:
    a, b, c, beta = exact_dec
    rows, fb = _law_of(f)
    want = sorted(((float(x / z), float(y / z), float(z)) for x, y, z in zip(a, b, c)), key=_order)
    if len(rows) != len(want) or abs(fb - float(beta)) > 1e-12:
        return False
    return all(math.isclose(u, v, rel_tol=1e-11, abs_tol=1e-300) for r, w in zip(rows, want) for u, v in zip(r, w))


def _mechanism_check(m, n, eps, delta):
    """Upper families are laws of the matrix's pairs, lower families laws of its Theorem-14 datasets; the
    certified δ and ε are two-sided against the enumerated shuffled δ of the worst pair."""
    P = m.matrix()
    pairs = F.pair_decompositions(P, RTOL)
    bounds._FAMILY_CACHE.clear()
    ups = bounds._families(m, "optimal", "upper")
    lows = bounds._families(m, "optimal", "lower")
    keys = [D.law_key(f) for f in ups]
    assert len(set(keys)) == len(keys)                               # de-duplicated
    triples = F.triple_decompositions(P, RTOL) if P.shape[0] <= 12 else None
    for f in lows:
        if triples is not None:
            assert any(_same_law(f, t) for t in triples), f.label
    # the matrix (floats) and the library's closed forms differ by a few ulp per entry: δ by at most
    # n ulp (1 + e^ε) absolute, times a margin
    noise = 8 * n * ULP * (1 + math.exp(eps))
    deltas = [F.merged_delta(*p, n, eps) for p in pairs]
    truth = float(max(deltas))
    r = sa.delta(m, n, eps)
    assert truth - noise <= r.upper <= truth * (1 + DELTA_RTOL) + noise
    assert r.lower <= r.upper
    # the families' own exact δ: the worst pair's (a wrong merge or de-duplication would lose or change it)
    fam = float(max(F.merged_delta(*_exact_dec(f), n, eps) for f in ups))
    assert abs(fam - truth) <= noise
    re = sa.epsilon(m, n, delta)
    at = float(max(F.merged_delta(*p, n, re.upper) for p in pairs))
    assert at <= delta * (1 + 1e-9) + noise                                            # sound
    if 0 < re.upper < m.eps0:                          # (at eps0 >= 100 and n = 3 the upper is the trivial eps0)
        below = float(max(F.merged_delta(*p, n, re.upper * (1 - 1e-5)) for p in pairs))
        assert below > delta                                                           # tight


@pytest.mark.parametrize("index", range(len(_mechanisms())))
def test_mechanism_families_and_certified_bounds(index):
    """Every kind of mechanism: families, δ and ε against the matrix's exact laws at n = 3."""
    m = _mechanisms()[index]
    _mechanism_check(m, 3, min(0.3, 0.5 * m.eps0), 0.05)


@pytest.mark.parametrize("index", range(len(_extreme_mechanisms())))
def test_mechanism_families_at_extremes(index):
    """Extreme eps0, weights and sampling rates: the same checks."""
    m = _extreme_mechanisms()[index]
    _mechanism_check(m, 3, 0.5 * min(getattr(m, "eps0", 1.0), 1.0), 1e-3)


@pytest.mark.parametrize("build", [
    lambda: compose.joint(M.KRR(0.5, 5), M.RAPPOR(0.5, None)),
    lambda: compose.parallel([(0.4, M.KRR(1.0, 6)), (0.6, M.KRR(2.0, 6))]),
    lambda: compose.subsample(M.OUE(1.0, 4), 0.3),
])
def test_composed_families_cached_on_the_instance(build):
    m = build()
    r1 = sa.epsilon(m, 5000, 1e-7)
    cache = m.__dict__["_families_cache"]
    assert set(cache) == {"upper", "lower"}
    fams = {w: cache[w] for w in cache}
    r2 = sa.epsilon(m, 5000, 1e-7)
    assert all(m.__dict__["_families_cache"][w] is fams[w] for w in fams)      # not rebuilt
    r3 = sa.epsilon(build(), 5000, 1e-7)                                       # a fresh instance: same numbers
    assert (r1.upper, r1.lower) == (r2.upper, r2.lower) == (r3.upper, r3.lower)
