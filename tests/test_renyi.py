"""Certified RDP of a shuffled round (shuffleamp.rdp) against exact Rényi divergences."""

import math

import numpy as np
import pytest
from scipy import special, stats

import shuffleamp as sa
from shuffleamp.accounting import binary_rr_rounds
from shuffleamp.errors import ParameterError
from shuffleamp.mechanisms import KRR

from oracle import histogram_law, lump_equal_columns, neighbouring_pairs, on_common_alphabet

ORDERS = np.array([1.01, 1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 64.0])


def renyi_of_laws(law0, law1, orders) -> np.ndarray:
    """Exact D_α(P0 || P1) of two histogram laws (keys, probs) from tests/oracle.py, α > 1."""
    q0, q1 = on_common_alphabet(law0, law1)
    if ((q0 > 0) & (q1 == 0)).any():
        return np.full(len(orders), np.inf)
    k = q0 > 0
    lp, lq = np.log(q0[k]), np.log(q1[k])
    return np.array([special.logsumexp(a * lp + (1 - a) * lq) / (a - 1) for a in orders])


def worst_enumerated_renyi(P, n, orders) -> np.ndarray:
    """max over every neighbouring dataset pair (both directions) of the exact shuffled D_α."""
    best = np.zeros(len(orders))
    for X0, X1 in neighbouring_pairs(P.shape[0], n):
        Pl = lump_equal_columns(P, list(X0) + list(X1))       # one alphabet for both laws
        l0, l1 = histogram_law(Pl, X0, lump=False), histogram_law(Pl, X1, lump=False)
        best = np.maximum(best, np.maximum(renyi_of_laws(l0, l1, orders), renyi_of_laws(l1, l0, orders)))
    return best


def binary_rr_count_pair_renyi(eps0, n, orders) -> np.ndarray:
    """Exact D_α (both directions) of binary RR's worst count pair: user 1 holds 0 or 1, the other
    n - 1 users hold 1; the count of ones is B + Bin(n - 1, p1) (Cheu et al., EUROCRYPT 2019)."""
    p1 = math.exp(eps0) / (1 + math.exp(eps0))
    c = np.arange(n + 1)
    lb, lbm = stats.binom.logpmf(c, n - 1, p1), stats.binom.logpmf(c - 1, n - 1, p1)
    logP = np.logaddexp(math.log1p(-p1) + lb, math.log(p1) + lbm)      # user 1 reports 1 w.p. p1
    logQ = np.logaddexp(math.log(p1) + lb, math.log1p(-p1) + lbm)      # user 1 reports 1 w.p. p0
    k = np.isfinite(logP) & np.isfinite(logQ)
    out = []
    for a in orders:
        fwd = special.logsumexp(a * logP[k] + (1 - a) * logQ[k]) / (a - 1)
        bwd = special.logsumexp(a * logQ[k] + (1 - a) * logP[k]) / (a - 1)
        out.append(max(fwd, bwd))
    return np.array(out)


@pytest.mark.parametrize("eps0, k, n", [(1.0, 2, 1), (1.0, 2, 8), (2.0, 3, 4), (0.5, 3, 8), (3.0, 4, 5)])
def test_rdp_above_exact_enumerated_pairs(eps0, k, n):
    m = KRR(eps0, k)
    exact = worst_enumerated_renyi(m.matrix(), n, ORDERS)
    r = sa.rdp(m, n, ORDERS, points=200)
    assert (r.rdp >= exact).all()
    assert (r.rdp <= eps0 * (1 + 1e-12)).all()
    if n == 1:      # one user: the round is k-RR itself, exactly; the bound stays close
        assert (r.rdp <= exact * 1.05 + 1e-12).all()


@pytest.mark.parametrize("n", [1000, 10_000])
def test_rdp_above_binary_rr_worst_count_pair(n):
    orders = np.append(ORDERS, [128.0, 256.0])
    exact = binary_rr_count_pair_renyi(1.0, n, orders)
    r = sa.rdp(KRR(1.0, 2), n, orders)
    assert (r.rdp >= exact).all()
    # binary RR uses its exact count-law profile: within the grid's few per cent of the exact pair
    assert (r.rdp[:-1] <= 1.06 * exact[:-1]).all() and r.rdp[-1] <= 1.25 * exact[-1]


@pytest.mark.parametrize("m, n", [(KRR(1.0, 2), 1000), (KRR(1.0, 10), 10**5), (KRR(3.0, 10), 10**5),
                                  (KRR(0.5, 3), 6)])
def test_rdp_conversion_not_below_pld_epsilon(m, n):
    orders = np.concatenate([np.linspace(1.05, 10, 60), np.geomspace(10, 512, 30)])
    r = sa.rdp(m, n, orders)
    pld = sa.to_pld(m, n)
    for delta in (1e-4, 1e-6, 1e-9):
        # the tightest PLD-based ε shuffleamp certifies for the round (binary RR: its exact count-law
        # profile, which sa.rdp also uses); RDP's conversion loses information, never gains it
        best = pld.get_epsilon_for_delta(delta)
        if m.k == 2:
            best = min(best, binary_rr_rounds(m.eps0, n, 1, delta=delta).upper)
        assert r.epsilon(delta) >= best


def test_rdp_monotone_in_order_and_n():
    r = sa.rdp(KRR(1.0, 10), 10**4, ORDERS)
    assert (np.diff(r.rdp) >= 0).all()       # Rényi divergence is non-decreasing in α
    r2 = sa.rdp(KRR(1.0, 10), 10**5, ORDERS)
    assert (r2.rdp < r.rdp).all()
    assert "eps0=1" in repr(r)
    d = r.to_dict()
    assert d["rdp"] == r.rdp.tolist() and d["orders"] == ORDERS.tolist() and d["n"] == 10**4
    assert d["neighboring_relation"] == "replace_one" and d["version"] == sa.__version__


def test_rdp_bad_input():
    m = KRR(1.0, 2)
    for bad in (1.0, 0.5, [2.0, 1.0], float("nan"), float("inf"), "2", None, []):
        with pytest.raises(ParameterError) as e:
            sa.rdp(m, 100, bad)
        assert e.value.parameter == "orders"
    with pytest.raises(ParameterError) as e:
        sa.rdp(m, 0, 2.0)
    assert e.value.parameter == "n"
    with pytest.raises(ParameterError) as e:
        sa.rdp("krr", 10, 2.0)
    assert e.value.parameter == "mechanism"


def binary_rr_count_renyi_all_m(eps0, n, orders, step) -> np.ndarray:
    """max over m (users other than user 1 holding 1; m = 0, step, 2 step, ..., n - 1) of the exact D_α,
    both directions, of the count laws B + Bin(m, p1) + Bin(n - 1 - m, p0)."""
    p1 = math.exp(eps0) / (1 + math.exp(eps0))
    p0 = 1 - p1
    best = np.zeros(len(orders))
    for m in sorted(set(range(0, n, step)) | {n - 1}):
        la = stats.binom.logpmf(np.arange(m + 1), m, p1)
        lb = stats.binom.logpmf(np.arange(n - m), n - 1 - m, p0)
        # a convolution of positive terms: relative round-off ~ n u; counts whose mass underflows
        # (below 1e-300 of the peak) drop out, which can only lower the oracle's divergence
        with np.errstate(divide="ignore"):
            base = np.log(np.convolve(np.exp(la - la.max()), np.exp(lb - lb.max()))) + la.max() + lb.max()
        ext = np.concatenate([base, [-np.inf]])
        sh = np.concatenate([[-np.inf], base])
        logP = np.logaddexp(math.log(p0) + ext, math.log(p1) + sh)     # user 1 holds 1
        logQ = np.logaddexp(math.log(p1) + ext, math.log(p0) + sh)     # user 1 holds 0
        k = np.isfinite(logP) & np.isfinite(logQ)
        for j, a in enumerate(orders):
            fwd = special.logsumexp(a * logP[k] + (1 - a) * logQ[k]) / (a - 1)
            bwd = special.logsumexp(a * logQ[k] + (1 - a) * logP[k]) / (a - 1)
            best[j] = max(best[j], fwd, bwd)
    return best


@pytest.mark.parametrize("n, step", [(60, 1), (1000, 37)])
def test_rdp_above_binary_rr_every_dataset_fast(n, step):
    exact = binary_rr_count_renyi_all_m(1.0, n, ORDERS, step)
    assert (sa.rdp(KRR(1.0, 2), n, ORDERS).rdp >= exact).all()


@pytest.mark.slow
def test_rdp_above_binary_rr_every_dataset():
    for eps0 in (0.5, 1.0, 3.0):
        exact = binary_rr_count_renyi_all_m(eps0, 1000, ORDERS, 1)
        assert (sa.rdp(KRR(eps0, 2), 1000, ORDERS).rdp >= exact).all()
