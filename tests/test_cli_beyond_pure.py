"""The command line with randomizers beyond pure LDP (Gaussian, (eps0, delta0)-LDP) and the rounds query's
certificate.

What is checked is the plumbing a user sees: the named options of ``sweep`` / ``plot`` (``--sigma``,
``--sensitivity``, ``--delta0``, ``--domain``) give the same grid as ``--param``; a sweep's ``eps0`` values
apply only to mechanisms that declare eps0 (the Gaussian randomizer has none, and its row shows none); options
that a population takes per group are refused at the population level instead of being ignored; a missing
required parameter names the option that gives it; ``rounds`` prints a certificate that is a number below the
target (never ``inf``) and valid JSON.  The bounds themselves are checked against independent computations in
``test_gaussian.py`` and ``test_approximate_ldp.py``; here the command line must reproduce the API's numbers.
"""

from __future__ import annotations

import json
import math

import pytest

import shuffleamp as sa
from shuffleamp.cli import main
from shuffleamp.errors import ParameterError
from shuffleamp.mechanisms import KRR
from shuffleamp.sweep import expand_grid


#: compose_rounds' time budget in these tests: generous (they test values, not the budget; a loaded
#: machine's wall clock can be several times the CPU time)
TOTAL_SECONDS = 300.0


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def strict_json(text: str):
    """JSON as the standard defines it: ``Infinity`` / ``NaN`` are refused."""
    def refuse(name):
        raise AssertionError(f"non-standard JSON constant {name}")
    return json.loads(text, parse_constant=refuse)


def sweep_rows(capsys, *argv):
    code, out, err = run(capsys, "sweep", *argv, "--json")
    assert code == 0, err
    return strict_json(out)["result"]["rows"]


def test_sweep_named_options_equal_param(capsys):
    named = sweep_rows(capsys, "--mechanism", "gaussian", "--sigma", "1,2", "--sensitivity", "1", "--n", "300",
                       "--delta", "1e-6")
    param = sweep_rows(capsys, "--mechanism", "gaussian", "--param", "sigma=1,2", "--param", "sensitivity=1",
                       "--n", "300", "--delta", "1e-6")
    assert named == param and [r["sigma"] for r in named] == [1.0, 2.0]
    api = sa.epsilon(sa.Gaussian(sigma=2.0, sensitivity=1.0), 300, 1e-6)
    assert named[1]["epsilon_upper"] == api.upper and named[1]["epsilon_lower"] == api.lower
    approx = sweep_rows(capsys, "--mechanism", "approx-ldp", "--eps0", "1", "--delta0", "1e-9,1e-8", "--n", "1000",
                        "--delta", "1e-6")
    assert [r["delta0"] for r in approx] == [1e-9, 1e-8]
    assert approx[1]["epsilon_upper"] == sa.epsilon(sa.ApproximateLDP(1.0, 1e-8), 1000, 1e-6).upper


def test_sweep_named_option_and_param_together_is_an_error(capsys):
    code, out, err = run(capsys, "sweep", "--mechanism", "gaussian", "--sigma", "1", "--param", "sigma=2", "--n",
                         "300", "--delta", "1e-6", "--json")
    assert code == 2 and strict_json(out)["error"]["parameter"] == "sigma"


def test_gaussian_rows_show_no_eps0():
    """The Gaussian randomizer is not eps0-LDP: its row's eps0 is empty (not an internal log-ratio)."""
    t = sa.sweep("gaussian", sigma=[1.0], n=[300], delta=1e-6, as_frame=False)
    assert t[0]["eps0"] is None


def test_sweep_eps0_applies_to_the_mechanisms_that_declare_it():
    points, columns = expand_grid("krr,gaussian", k=3, sigma=1.0, eps0="1,2", n=1000, delta=1e-6)
    rows = [p["_row"] for p in points]
    assert [(r["mechanism"], r["eps0"]) for r in rows] == [("krr", 1.0), ("krr", 2.0), ("gaussian", None)]
    with pytest.raises(ParameterError) as ei:
        expand_grid("gaussian", sigma=1.0, eps0=1.0, n=1000, delta=1e-6)
    assert ei.value.parameter == "eps0" and "sigma" in str(ei.value)


def test_missing_required_parameter_names_its_option(capsys):
    code, out, err = run(capsys, "epsilon", "--mechanism", "gaussian", "--n", "100", "--delta", "1e-6", "--json")
    error = strict_json(out)["error"]
    assert code == 2 and error["parameter"] == "sigma" and "--sigma VALUE" in error["message"]


@pytest.mark.parametrize("option", [["--sigma", "2"], ["--sensitivity", "2"], ["--delta0", "0.1"],
                                    ["--domain", "4"], ["--q", "0.5"]])
def test_population_refuses_options_given_per_group(capsys, option):
    """A population's randomizers come from its --group specs: a mechanism option beside them is an error, not
    silently ignored."""
    code, out, err = run(capsys, "epsilon", "--mechanism", "population", "--group", "500:krr:k=3:eps0=1",
                         "--group", "500:krr:k=3:eps0=2", *option, "--delta", "1e-6", "--json")
    assert code == 2 and strict_json(out)["error"]["parameter"] == option[0][2:]


def test_population_text_names_each_group_by_its_parameters(capsys):
    from shuffleamp.cli import _group_label

    assert _group_label(sa.Gaussian(sigma=2.0).describe()) == "gaussian (sigma=2, sensitivity=1)"
    assert _group_label(sa.ApproximateLDP(1.0, 1e-9).describe()) == "approx-ldp (delta0=1e-09), eps0 = 1"
    code, out, err = run(capsys, "epsilon", "--mechanism", "population", "--group", "300:krr:k=3:eps0=0.5",
                         "--group", "300:krr:k=3:eps0=2", "--delta", "1e-6")
    assert code == 0 and "group 0: krr (k=3), eps0 = 0.5, n = 300" in out and "eps0 = -" not in out


def test_rounds_certificate_by_basic_composition(capsys):
    """Every R <= target / eps0 fits by basic composition; the certificate printed is R * eps0 (a finite number
    below the target), and the JSON is standard."""
    argv = ["rounds", "--mechanism", "krr", "--k", "10", "--eps0", "1", "--n", "1e6", "--target-epsilon", "1e9",
            "--delta", "1e-8"]
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    res = strict_json(out)["result"]
    assert res["rounds"] == res["max_rounds"] == 10**6 and res["ceiling_reached"]
    assert res["epsilon_upper_at_rounds"] == 10**6 * 1.0 <= res["target_epsilon"]
    assert res["certified_by"].startswith("basic composition")
    code, out, err = run(capsys, *argv)
    assert code == 0 and "inf" not in out and "basic composition" in out


def test_rounds_certificate_by_composition(capsys):
    code, out, err = run(capsys, "rounds", "--mechanism", "krr", "--k", "10", "--eps0", "1", "--n", "1e4",
                         "--target-epsilon", "0.5", "--delta", "1e-6", "--json")
    assert code == 0, err
    res = strict_json(out)["result"]
    R = res["rounds"]
    assert R >= 1 and res["certified_by"] == "composition of the rounds"
    total = sa.compose_rounds([(KRR(1.0, 10), 10**4, R)], delta=1e-6, lower=False).upper
    assert res["epsilon_upper_at_rounds"] == total <= 0.5
    assert R * 1.0 > 0.5            # not certified by basic composition alone
    assert math.isfinite(total)


def test_population_total_over_rounds(capsys):
    """``--rounds`` with a population: the accountant's total for every user of every group, as from Python."""
    argv = ["epsilon", "--mechanism", "population", "--group", "200:krr:k=2:eps0=1", "--group",
            "100:krr:k=2:eps0=2", "--delta", "1e-6", "--rounds", "4"]
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    res = strict_json(out)["result"]
    pop = sa.population([(KRR(1.0, 2), 200), (KRR(2.0, 2), 100)])
    total = sa.compose_rounds([(pop, None, 4)], delta=1e-6, max_seconds=TOTAL_SECONDS)
    assert res["rounds"] == 4
    assert res["total"]["epsilon_upper"] == total.upper and res["total"]["epsilon_lower"] == total.lower
    assert res["epsilon_upper"] < total.upper          # four rounds cost more than the worst group's one


def test_eps0_query_offers_only_randomizers_with_an_eps0(capsys):
    """The largest-eps0 query varies eps0: the Gaussian randomizer (sigma, sensitivity) is not offered, instead of
    failing on a missing sigma."""
    code, out, err = run(capsys, "eps0", "--mechanism", "gaussian", "--n", "1000", "--target-epsilon", "0.1",
                         "--delta", "1e-6", "--json")
    error = strict_json(out)["error"]
    assert code == 2 and error["parameter"] == "mechanism" and "invalid choice: 'gaussian'" in error["message"]
    assert "approx-ldp" in error["message"] and "krr" in error["message"]


def test_compare_prints_no_eps0_for_the_gaussian_randomizer(capsys):
    """The Gaussian randomizer has no local eps0: compare does not print the truncated law's internal log-ratio."""
    code, out, err = run(capsys, "compare", "--mechanism", "gaussian", "--sigma", "2", "--n", "300", "--delta", "1e-6")
    assert code == 0, err
    assert "mechanism : gaussian (sigma=2)\n" in out and "eps0 =" not in out
    code, out, err = run(capsys, "compare", "--mechanism", "gaussian", "--sigma", "2", "--n", "300", "--delta", "1e-6",
                         "--json")
    assert code == 0 and strict_json(out)["result"]["eps0"] is None
