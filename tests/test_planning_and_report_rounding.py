"""Planning with a population (typed errors), outward rounding of the report table, and no scipy logsumexp
RuntimeWarning from the exact-count lower of binary_rr_rounds."""

import tomllib
import warnings

import pytest

import shuffleamp as sa
from shuffleamp import config as C
from shuffleamp import planning
from shuffleamp.errors import ParameterError
from shuffleamp.mechanisms import KRR
from shuffleamp.results import decimal_text


# ----------------------------------------------------------------------------- planning with a population
def _pop():
    return sa.population([(KRR(1.0, 10), 500), (KRR(2.0, 10), 500)])


def test_max_eps0_population_is_a_typed_error():
    with pytest.raises(ParameterError) as e:
        planning.max_eps0(_pop(), 1000, 0.5, 1e-6)
    assert e.value.parameter == "mechanism" and "population" in str(e.value)


def test_min_n_population_is_a_typed_error():
    with pytest.raises(ParameterError) as e:
        planning.min_n(_pop(), 0.5, 1e-6)
    assert e.value.parameter == "mechanism" and "population" in str(e.value)


def test_planning_rejects_a_non_mechanism():
    with pytest.raises(ParameterError) as e:
        planning.min_n("krr", 0.5, 1e-6)
    assert e.value.parameter == "mechanism"
    # a factory eps0 -> mechanism stays accepted by max_eps0
    r = planning.max_eps0(lambda e: KRR(e, 10), 1000, 0.5, 1e-6, rel_tol=1e-2)
    assert r.value > 0.5


# ----------------------------------------------------------------------------- report table: outward rounding
_PLAN = """
[[collection]]
name = "a"
mechanism = "krr"
k = 10
eps0 = 1.0
n = 10000
delta = 1e-8
"""


@pytest.mark.parametrize("up,lo,up_text,lo_text", [
    (0.123401, 0.123499, "0.1235", "0.1234"),     # to nearest would print 0.1234 / 0.1235
    (2.00001, 1.99999, "2.001", "1.999"),
])
def test_report_table_rounds_bounds_outwards(up, lo, up_text, lo_text):
    rows = C.parse_plan(tomllib.loads(_PLAN))
    res = [{"epsilon_upper": up, "epsilon_lower": lo, "total": {"epsilon_upper": up, "epsilon_lower": lo}}]
    total = {"delta": 1e-8, "epsilon_upper": up, "epsilon_lower": lo}
    table = C.format_table(rows, res, total)
    cells = table.splitlines()[2].split()          # ..., the per-round and total brackets, then their ratio
    assert cells[-5:-1] == [up_text, lo_text, up_text, lo_text]
    assert f"epsilon (upper, certified) = {up_text}," in table and f"epsilon (lower) = {lo_text} nats" in table
    # the printed upper is >= the value and the printed lower <= it
    assert float(up_text) >= up and float(lo_text) <= lo


def test_report_table_real_plan_brackets_the_values():
    rows = C.parse_plan(tomllib.loads(_PLAN))
    res = C.evaluate_plan(rows)
    line = C.format_table(rows, res).splitlines()[2].split()
    assert float(line[-5]) >= res[0]["epsilon_upper"] and float(line[-4]) <= res[0]["epsilon_lower"]


def test_decimal_text_directions():
    assert decimal_text(0.12341, 4, "up") == "0.1235" and decimal_text(0.12349, 4, "down") == "0.1234"
    assert decimal_text(0.12349, 4) == "0.1235" and decimal_text(-0.12341, 4, "up") == "-0.1234"
