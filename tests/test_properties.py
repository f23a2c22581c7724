"""Hypothesis property tests of the public bounds for k-RR, BLH and OUE.

Properties (each is a theorem about the exact quantities; the API returns certified bounds, so a
violation is either an unsound number or a non-monotone artefact of the numerics -- both are
reported, never papered over with tolerances):

* ``lower <= upper`` for ``delta`` and ``epsilon``;
* ``epsilon(...).upper`` is non-increasing in n (n vs 2n: the exact bound
  (1/n) E[(G_1+...+G_n)_+] is non-increasing in n by sub-additivity of s -> s_+),
  non-decreasing in eps0 (k-RR / BLH at a smaller eps0 are garblings of the larger one),
  and non-increasing in delta;
* ``delta(...).upper`` is non-increasing in epsilon (G decreases pointwise in epsilon);
* ``delta(...).upper`` >= the exact optimal value, from ``exact_four_atom`` / ``exact_three_atom``
  (k-RR, any n) or ``gparv_bruteforce`` (BLH / OUE five-atom GPARV, small n), and
  ``delta(...).lower`` <= the exact Theorem-14 value of the documented dataset.

Every API call runs in a worker process (``oracle.ApiWorker``): an engine hang fails the test
after ``TIMEOUT_*`` seconds instead of blocking the run.  Example generation is
derandomised (reproducible pass/fail) and not shrunk (a shrink step that hits a hang would cost
the timeout); the failing example is printed as generated.  Runtime < 60 s via ``max_examples``
(epsilon() costs 0.2-3 s per call, delta() 0.1-0.5 s).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from shuffleamp.mechanisms import BLH, KRR, OUE

from exact_oracles import gparv_bruteforce

import oracle as O

# Hypothesis properties through spawned API workers.  With the exact evaluator as the default the
# module takes seconds (it took minutes with the discretised engine), so it runs in CI again.

TIE = 1e-15   # absolute slack for exact ties only

_COMMON = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow],
               phases=(Phase.explicit, Phase.reuse, Phase.generate))
EPS_SETTINGS = settings(max_examples=30, **_COMMON)     # 4 epsilon() calls per example
DELTA_SETTINGS = settings(max_examples=60, **_COMMON)   # 1-2 delta() calls per example

eps0_st = st.floats(0.2, 5.0, allow_nan=False)
n_st = st.integers(2, 5000)
delta_st = st.floats(-10.0, -3.0).map(lambda x: 10.0 ** x)      # delta in [1e-10, 1e-3]
frac_st = st.floats(0.0, 1.0, allow_nan=False)                   # epsilon / eps0


@st.composite
def mechanisms(draw):
    """(kind, param, eps0) for k-RR (k in 2..20), BLH / OUE (d in {None, 2, 3, 5, 10})."""
    kind = draw(st.sampled_from(["krr", "blh", "oue"]))
    param = draw(st.integers(2, 20)) if kind == "krr" else draw(st.sampled_from([None, 2, 3, 5, 10]))
    return kind, param, draw(eps0_st)


def build(kind, param, eps0):
    if kind == "krr":
        return KRR(eps0, param)
    return (BLH if kind == "blh" else OUE)(eps0, param)


@pytest.fixture(scope="module", autouse=True)
def _worker_lifetime():
    yield
    O.ApiWorker.shutdown()


#: per-call limits (s): on a loaded 2-core machine delta() takes < 1 s and epsilon() < 5 s
TIMEOUT_DELTA = 10.0
TIMEOUT_EPS = 30.0
TIMEOUT_KERNEL = 5.0     # the exact kernels take milliseconds


def _eps(spec, n, delta):
    return O.api_epsilon(build(*spec), n, delta, timeout=TIMEOUT_EPS)


def _delta(spec, n, eps):
    return O.api_delta(build(*spec), n, eps, timeout=TIMEOUT_DELTA)


def _bf(dec, eps, n) -> float:
    g = dec.gparv(eps)
    return float(gparv_bruteforce(g.values, g.probs, n))


def exact_optimal_krr(mech: KRR, n: int, eps: float) -> float:
    """Exact optimal value for k-RR: lower end of the exact kernel's bracket (3 or 4 atoms).

    Runs in the worker process too (the kernels are test oracles, but can hang, see
    tests/test_oracle.py::test_exact_kernels_tiny_atom_difference).
    """
    g = mech.upper_decompositions()[0].gparv(eps)
    v, p = [float(x) for x in g.values], [float(x) for x in g.probs]
    if len(v) == 4:
        lo, _ = O.ApiWorker.run(O.kernel, "exact_four_atom", v[0], p[0], v[1], p[1], v[2], p[2], v[3], n,
                                timeout=TIMEOUT_KERNEL)
    elif len(v) == 3:
        lo, _ = O.ApiWorker.run(O.kernel, "exact_three_atom", v[0], p[0], v[1], p[1], v[2], n,
                                timeout=TIMEOUT_KERNEL)
    else:
        lo = gparv_bruteforce(g.values, g.probs, n)
    return float(lo)


# ---------------------------------------------------------------------------- epsilon(...)
@EPS_SETTINGS
@given(mechanisms(), st.integers(2, 2500), delta_st, st.floats(1.01, 100.0), st.floats(1.01, 2.0))
def test_epsilon_monotone(spec, n, delta, d_factor, e_factor):
    """eps upper: non-increasing in n (n vs 2n) and in delta, non-decreasing in eps0; lower <= upper."""
    kind, param, eps0 = spec
    assume(eps0 * e_factor <= 5.0)
    base = _eps(spec, n, delta)
    more_n = _eps(spec, 2 * n, delta)
    d2 = min(delta * d_factor, 0.5)
    more_d = _eps(spec, n, d2)
    more_e0 = _eps((kind, param, eps0 * e_factor), n, delta)
    bad = []
    for tag, r, e0 in (("base", base, eps0), ("2n", more_n, eps0), ("delta*f", more_d, eps0),
                       ("eps0*f", more_e0, eps0 * e_factor)):
        if not (0.0 <= r.lower <= r.upper <= e0):
            bad.append(f"{tag}: not 0 <= lower <= upper <= eps0: {r}")
    if more_n.upper > base.upper:
        bad.append(f"n: eps_upper(n={n})={base.upper!r} < eps_upper(2n={2 * n})={more_n.upper!r}")
    if more_d.upper > base.upper:
        bad.append(f"delta: eps_upper(delta={delta!r})={base.upper!r} < eps_upper(delta={d2!r})={more_d.upper!r}")
    if more_e0.upper < base.upper:
        bad.append(f"eps0: eps_upper(eps0={eps0!r})={base.upper!r} > "
                   f"eps_upper(eps0={eps0 * e_factor!r})={more_e0.upper!r}")
    assert not bad, f"{build(*spec)!r}: " + "; ".join(bad)


# ---------------------------------------------------------------------------- delta(...)
@DELTA_SETTINGS
@given(mechanisms(), n_st, frac_st, st.floats(1e-6, 1.0))
def test_delta_monotone_in_eps(spec, n, frac, step):
    """delta upper non-increasing in eps; 0 <= lower <= upper <= 1 at both points."""
    eps0 = spec[2]
    e1 = frac * eps0
    e2 = min(eps0, e1 + step * eps0)
    a, b = _delta(spec, n, e1), _delta(spec, n, e2)
    for e, r in ((e1, a), (e2, b)):
        assert r.lower is not None and 0.0 <= r.lower <= r.upper <= 1.0, f"eps={e!r}: {r}"
    assert b.upper <= a.upper, f"delta_upper({e1!r})={a.upper!r} < delta_upper({e2!r})={b.upper!r}"


@DELTA_SETTINGS
@given(st.integers(2, 20), eps0_st, n_st, frac_st)
def test_krr_upper_ge_exact(k, eps0, n, frac):
    """k-RR: delta upper >= exact optimal value (exact 3/4-atom kernels), any n <= 5000."""
    eps = frac * eps0
    r = _delta(("krr", k, eps0), n, eps)
    if k == 2:
        # the default also runs the exact count law for binary RR: its upper bounds the exact worst case
        # over all datasets (certified lower end from exact_count), not the decomposition value
        from shuffleamp.exact_count import delta_binary_rr
        ex = delta_binary_rr(eps0, n, eps, max_pairs=8).lower
    else:
        ex = exact_optimal_krr(KRR(eps0, k), n, eps)
    assert r.upper >= ex - TIE, f"delta_upper={r.upper!r} < exact optimal {ex!r}"
    assert r.lower <= r.upper


@DELTA_SETTINGS
@given(st.sampled_from(["blh", "oue"]), st.sampled_from([None, 2, 3, 5, 10]), eps0_st,
       st.integers(2, 30), frac_st)
def test_bit_upper_ge_bruteforce(kind, d, eps0, n, frac):
    """BLH / OUE: delta upper >= exact optimal value; lower <= exact Theorem-14 value (n <= 30)."""
    m = build(kind, d, eps0)
    eps = frac * eps0
    r = _delta((kind, d, eps0), n, eps)
    ex = max(_bf(x, eps, n) for u in m.upper_decompositions() for x in (u, u.swapped()))
    assert r.upper >= ex - TIE, f"delta_upper={r.upper!r} < exact optimal {ex!r}"
    # both orderings of each documented dataset (the lower bound takes the reverse divergence too)
    lo = max(_bf(y, eps, n) for x in m.lower_decompositions() for y in (x, x.swapped()))
    assert r.lower <= lo + TIE, f"delta_lower={r.lower!r} > exact lower-dataset value {lo!r}"


# ---------------------------------------------------------------------------- engine regressions
# Reproducers of engine defects found by the properties above (fixed since, by
# engine.MAX_CELLS_PER_G, at the time of writing):
# * delta()/epsilon() crashed with OverflowError ("Python int too large to convert to C long" in
#   engine._evaluate_spectral) for eps close to eps0: the lower GPARV has a tiny positive part and
#   the grid heuristic picked l ~ 1e-17, so the window overflowed int64.  epsilon() probes eps near
#   eps0 in its bracket search, so ordinary inputs such as epsilon(KRR(0.2, 2), 2, 1e-10) crashed.
# * delta() at (or within ~1e-15 of) eps0 hung: e.g. the OUE(d=10) lower GPARV keeps a
#   rounding-residue positive atom (1.4e-16 instead of 0), so the vmax <= 0 shortcut was skipped,
#   l became ~7e-18, |v|/l exceeded int64 and kernels.discretize_atoms' index-correction loops
#   ran practically for ever; epsilon() evaluates eps0 in its search and hung too.

@pytest.mark.parametrize("call", [
    ("delta", ("krr", 4, 1.0), 8, 0.999),
    ("delta", ("krr", 2, 0.2), 2, 0.2 * 0.999),
    ("delta", ("krr", 5, 4.015082409157026), 427, 4.015082409157025),
    ("delta", ("oue", 10, 2.0797991987841256), 8, 2.0797991987841256),
    ("epsilon", ("krr", 2, 0.2), 2, 1e-10),
    ("epsilon", ("krr", 7, 2.169111800520115), 2, 1.2082197005974781e-10),
    ("epsilon", ("oue", 10, 2.0797991987841256), 8, 5.857136219979242e-08),
], ids=["delta-krr4-n8", "delta-krr2-n2", "delta-krr5-n427-near-eps0", "delta-oue10-at-eps0",
        "epsilon-krr2-n2", "epsilon-krr7-n2", "epsilon-oue10-n8"])
def test_regression_near_eps0(call):
    """No crash / hang near eps = eps0, and sane bounds (delta at eps0 is 0 up to rounding)."""
    fname, spec, n, x = call
    r = (_delta if fname == "delta" else _eps)(spec, n, x)
    assert 0.0 <= r.lower <= r.upper, r
    if fname == "delta":
        assert r.upper <= 1.0, r
        if x == spec[2]:
            assert r.upper <= 1e-12 and r.lower <= 1e-12, r
    else:
        assert r.upper <= spec[2], r
