"""Declared mechanism parameters and the one parser of numbers from text.

* :func:`shuffleamp._validate.parse_number` has one set of rules (``1_000``, ``1e6``, ``inf``, ``nan``,
  ``none``), and the command line, plan component specs and sweeps follow it, with errors naming the
  user's parameter.
* Each mechanism declares its parameters once (``param_specs``); :func:`shuffleamp.mechanisms.make`,
  ``--param NAME=VALUE`` and the error messages read the declaration; a required parameter left out
  is an error naming it, never a silent default.
"""

from __future__ import annotations

import inspect
import json
import math
from dataclasses import dataclass
from typing import ClassVar

import pytest

from shuffleamp import _validate
from shuffleamp._validate import REQUIRED, Parameter, parse_number
from shuffleamp.cli import main
from shuffleamp.config import parse_component_spec, parse_plan, population_from_specs
from shuffleamp.errors import ComponentError, ParameterError
from shuffleamp.mechanisms import BLH, KRR, MECHANISMS, HadamardResponse, Mechanism, make
from shuffleamp.sweep import expand_grid, parse_values


# --------------------------------------------------------------------------- parse_number: the rules
@pytest.mark.parametrize("text, value", [
    ("1000", 1000), (" 1000 ", 1000), ("1_000_000", 1_000_000), ("-3", -3), ("+7", 7),
    ("1e6", 1e6), ("0.5", 0.5), ("1_000.5", 1000.5), (".25", 0.25),
    ("inf", math.inf), ("Infinity", math.inf), ("-inf", -math.inf),
])
def test_parse_number_reads_numbers(text, value):
    got = parse_number(text, "x")
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("text, fragment", [
    ("", "empty"), ("   ", "empty"), ("nan", "NaN"), ("NaN", "NaN"), ("abc", "expected a number"),
    ("1__000", "expected a number"), ("_1000", "expected a number"), ("1,000", "expected a number"),
    ("none", "expected a number"), ("0x10", "expected a number"),
])
def test_parse_number_errors_name_the_parameter(text, fragment):
    with pytest.raises(ParameterError) as e:
        parse_number(text, "users")
    assert e.value.parameter == "users" and fragment in str(e.value)
    assert str(e.value).startswith("users: ")


def test_parse_number_none_only_where_accepted():
    for word in ("none", "None", "null", "asymptotic"):
        assert parse_number(word, "d", none=True) is None
        with pytest.raises(ParameterError, match="^k: "):
            parse_number(word, "k")
    with pytest.raises(ParameterError, match="^k: "):
        parse_number(3, "k")              # text only: numbers are checked by the range checks


# --------------------------------------------------------------------------- the same rules everywhere
def test_command_line_follows_parse_number(capsys):
    def eps(*extra):
        code = main(["epsilon", "--mechanism", "krr", "--eps0", "1", "--delta", "1e-6", "--json", *extra])
        out, err = capsys.readouterr()
        assert code == 0, err
        return json.loads(out)["result"]["epsilon_upper"]

    ref = eps("--k", "10", "--n", "1000")
    assert eps("--k", "1_0", "--n", "1_000") == ref
    assert eps("--k", "1e1", "--n", "1e3") == ref
    assert eps("--param", "k=1_0", "--n", "1000") == ref
    code = main(["epsilon", "--mechanism", "krr", "--k", "10", "--eps0", "1", "--n", "1__000", "--delta", "1e-6"])
    err = capsys.readouterr().err
    assert code == 2 and "--n" in err and "1__000" in err
    code = main(["epsilon", "--mechanism", "krr", "--param", "k=ten", "--eps0", "1", "--n", "1000",
                 "--delta", "1e-6", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 2 and doc["error"]["parameter"] == "k" and "'ten'" in doc["error"]["message"]


def test_component_specs_follow_parse_number():
    assert parse_component_spec("krr:k=1_000:eps0=1e0", 1) == KRR(1.0, 1000)
    assert parse_component_spec("blh:eps0=1:d=none", 1) == BLH(1.0, None)
    assert parse_component_spec("blh:eps0=1:d=1e1", 1) == BLH(1.0, 10)
    for spec, field in (("krr:k=nan:eps0=1", "k"), ("blh:eps0=1:d=inf", "d"), ("krr:k=4:eps0=none", "eps0")):
        with pytest.raises(ComponentError) as e:
            parse_component_spec(spec, 2)
        assert e.value.index == 2 and e.value.field == field
    pop = population_from_specs(["1_000:krr:k=2:eps0=1", "1e3:krr:k=2:eps0=2"])
    assert pop.n == 2000


def test_sweeps_follow_parse_number():
    assert parse_values("1_000,1e4", "n") == [1000, 10000]
    assert parse_values("none,1_024", "d") == [None, 1024]
    assert parse_values("1_000:1e5:log:3", "n") == [1000, 10000, 100000]
    with pytest.raises(ParameterError) as e:
        parse_values("1:inf:log:3", "n")
    assert e.value.parameter == "n" and "finite" in str(e.value)
    with pytest.raises(ParameterError) as e:        # inf is a number; the range check refuses it, naming eps0
        expand_grid("krr", k=10, eps0="inf", n=1000, delta=1e-6)
    assert e.value.parameter == "eps0"


# --------------------------------------------------------------------------- declarations
def test_every_mechanism_declares_its_constructor_parameters():
    for name, cls in MECHANISMS.items():
        specs = cls.param_specs
        assert all(isinstance(p, Parameter) for p in specs)
        # eps0 comes first, declared once by the base, unless the class derives it (matrix: optional, Gaussian: none)
        assert specs[0].name in ("eps0", "matrix") or not cls.eps0_is_parameter
        sig = inspect.signature(cls.from_params if name == "matrix" else cls)
        ctor = [p for p in sig.parameters if p not in ("self",)]
        assert sorted(p.name for p in specs) == sorted(ctor), name
        assert cls.parameters == tuple(p.name for p in specs if p.name != "eps0")
        assert dict(cls.defaults) == {p.name: p.default for p in specs if not p.required}
        for p in specs:
            assert p.doc and p.describe().startswith(f"{p.name}: ")


def test_declared_ranges_and_descriptions():
    k = KRR.param_specs[1]
    assert k.describe() == "k: number of categories (an integer >= 2; required)"
    assert k.check(10.0) == 10 and type(k.check(10.0)) is int
    for bad, fragment in ((1, ">= 2"), (2.5, "integer"), ("3", "string"), (True, "integer"), (None, "None")):
        with pytest.raises(ParameterError) as e:
            k.check(bad)
        assert e.value.parameter == "k" and fragment in str(e.value)
    eps0 = KRR.param_specs[0]
    assert eps0.unit == "nats" and eps0.required and "(0, 150] nats" in eps0.describe()
    with pytest.raises(ParameterError, match="^eps0: "):
        eps0.check(0.0)
    d = BLH.param_specs[1]
    assert d.default is None and d.check(None) is None and d.parse("none") is None
    q = Parameter("q", "real", minimum=0.0, maximum=1.0, open_minimum=True, doc="sampling probability")
    assert q.describe() == "q: sampling probability (a real number in (0, 1]; required)"
    with pytest.raises(ParameterError, match="^q: must be <= 1.0"):
        q.check(1.5)
    assert repr(REQUIRED) == "REQUIRED"
    with pytest.raises(ValueError):
        Parameter("not a name", "int")
    with pytest.raises(ValueError):
        Parameter("x", "complex")


def test_make_reads_the_declaration():
    with pytest.raises(ParameterError) as e:
        make("hr", eps0=1.0)                     # no silent default for a required parameter
    assert e.value.parameter == "d" and "required for mechanism 'hr'" in str(e.value) and "power of 2" in str(e.value)
    with pytest.raises(ParameterError) as e:
        make("krr", eps0=1.0, k=1)
    assert e.value.parameter == "k"
    with pytest.raises(ParameterError) as e:
        make("krr", eps0=1.0, k=4, d=3)
    assert e.value.parameter == "d" and "accepted" in str(e.value)
    assert make("hr", eps0=1.0, d=8.0) == HadamardResponse(1.0, 8)


def test_a_declared_mechanism_registers_and_is_checked_by_its_declaration():
    @dataclass(frozen=True)
    class Toy(KRR):
        eps0: float
        k: int
        m: int = 3
        name: ClassVar[str] = "toy-declared"
        param_specs: ClassVar[tuple] = (Parameter("k", "int", minimum=2, doc="categories"),
                                        Parameter("m", "int", minimum=1, maximum=5, default=3, doc="a small count"))

    try:
        assert MECHANISMS["toy-declared"] is Toy
        assert Toy.parameters == ("k", "m") and Toy.defaults == {"m": 3}
        assert [p.name for p in Toy.param_specs] == ["eps0", "k", "m"]
        assert make("toy-declared", eps0=1.0, k=4).m == 3
        with pytest.raises(ParameterError) as e:
            make("toy-declared", eps0=1.0, k=4, m=6)
        assert e.value.parameter == "m" and "<= 5" in str(e.value)
        with pytest.raises(ParameterError) as e:
            make("toy-declared", eps0=1.0)
        assert e.value.parameter == "k"
    finally:
        MECHANISMS.pop("toy-declared", None)


def test_names_only_declaration_still_works():
    """The older form (``parameters`` names and ``defaults``) registers and builds as before."""
    @dataclass(frozen=True)
    class Old(KRR):
        eps0: float
        k: int
        name: ClassVar[str] = "toy-names-only"
        parameters: ClassVar[tuple] = ("k",)

    try:
        assert MECHANISMS["toy-names-only"] is Old
        assert [(p.name, p.required) for p in Old.param_specs] == [("eps0", True), ("k", True)]
        assert make("toy-names-only", eps0=1.0, k=3) == Old(1.0, 3)
        with pytest.raises(ParameterError, match="^k: required"):
            make("toy-names-only", eps0=1.0)
    finally:
        MECHANISMS.pop("toy-names-only", None)


def test_a_plugin_cannot_take_a_built_in_name():
    with pytest.raises(TypeError, match="taken by the built-in"):
        type("Impostor", (KRR,), {"name": "krr", "parameters": ("k",), "__module__": "someone_else"})
    assert MECHANISMS["krr"] is KRR
    with pytest.raises(TypeError, match="Parameter records"):
        type("Bad", (Mechanism,), {"name": "", "param_specs": ("k",), "__module__": "someone_else"})


def test_param_option_errors_name_the_parameter(capsys):
    base = ["epsilon", "--mechanism", "krr", "--eps0", "1", "--n", "1000", "--delta", "1e-6", "--json"]
    for extra, parameter, fragment in ((["--k", "10", "--param", "k=10"], "k", "given twice"),
                                       (["--param", "k=10", "--param", "k=11"], "k", "given twice"),
                                       (["--param", "k=10", "--param", "s=2"], "s", "k: number of categories"),
                                       ([], "k", "--k VALUE or --param k=VALUE")):
        code = main(base + extra)
        doc = json.loads(capsys.readouterr().out)
        assert code == 2 and doc["error"]["parameter"] == parameter and fragment in doc["error"]["message"], doc
    code = main(base + ["--param", "k"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 2 and doc["error"]["parameter"] == "param" and "NAME=VALUE" in doc["error"]["message"]


def test_plan_rows_take_declared_fields_only():
    row = {"name": "x", "mechanism": "krr", "k": 4, "eps0": 1.0, "n": 1000, "delta": 1e-6}
    rows = parse_plan([row])
    assert rows[0].params() == {"k": 4}
    with pytest.raises(ParameterError) as e:
        parse_plan([dict(row, s=2)])
    assert "field 's'" in str(e.value) and "unknown field" in str(e.value)
    with pytest.raises(ParameterError) as e:
        parse_plan([{k: v for k, v in row.items() if k != "k"}])
    assert "field 'k'" in str(e.value) and "required" in str(e.value)
    # a declared numeric field given as a list expands into scenarios, one per value
    scenarios = parse_plan([dict(row, k=[3, 4])]).scenarios
    assert [sc.values for sc in scenarios] == [{"x.k": 3}, {"x.k": 4}]
    assert [sc.plan[0].params() for sc in scenarios] == [{"k": 3}, {"k": 4}]


def test_composed_mechanisms_declare_their_fields(capsys):
    from shuffleamp.compose import COMPOSED_CLASSES
    from shuffleamp.sweep import expand_grid

    assert {n: [p.name for p in c.param_specs] for n, c in COMPOSED_CLASSES.items()} == {
        "joint": ["components", "distances"], "parallel": ["components", "weights"], "subsample": ["components", "q"]}
    assert not set(COMPOSED_CLASSES) & set(MECHANISMS)          # built by from_config, not by make()
    q = COMPOSED_CLASSES["subsample"].param_specs[1]
    assert q.required and q.describe().startswith("q: sampling probability")
    # --param q=... is --q; a field a composed mechanism does not declare is an error naming it
    base = ["epsilon", "--component", "krr:k=10:eps0=1", "--n", "1e4", "--delta", "1e-6", "--json"]
    assert main(["epsilon", "--mechanism", "subsample", "--param", "q=0.1"] + base[1:]) == 0
    a = json.loads(capsys.readouterr().out)["result"]["epsilon_upper"]
    assert main(["epsilon", "--mechanism", "subsample", "--q", "0.1"] + base[1:]) == 0
    assert json.loads(capsys.readouterr().out)["result"]["epsilon_upper"] == a
    assert main(["epsilon", "--mechanism", "joint", "--param", "q=0.1"] + base[1:]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["parameter"] == "q"
    # in a sweep, q applies to the mechanisms that declare it
    points, columns = expand_grid("subsample,krr", components=["krr:k=4:eps0=1"], k=4, q="0.1,0.2", eps0=1.0,
                                  n=1000, delta=1e-6)
    assert [p["_row"]["mechanism"] for p in points] == ["subsample", "subsample", "krr"]


def test_composed_specs_reject_undeclared_fields_naming_them():
    from shuffleamp.config import mechanism_from_spec

    with pytest.raises(ParameterError) as e:
        mechanism_from_spec({"mechanism": "joint", "components": ["krr:k=4:eps0=1"], "s": 2})
    assert e.value.parameter == "s" and "components, distances" in str(e.value)
    with pytest.raises(ParameterError) as e:
        mechanism_from_spec({"mechanism": "krr", "k": 4, "eps0": 1.0, "weights": [1.0]})
    assert e.value.parameter == "weights"
