"""A pytest plugin that injects a 1 % under-estimate into certified upper bounds (used by mutation_check.py).

Activated by the environment variable ``SHUFFLEAMP_MUTATION="FAMILY:REGIME:KIND"`` and ``-p mutation_plugin``:

* FAMILY: ``krr2`` (binary RR), ``krr`` (k >= 3), ``blh``, ``rappor``, ``oue``, ``hr``, ``laplace``, ``matrix``,
  ``joint``, ``parallel``, ``subsample``, ``population``, ``gaussian``, ``approx-ldp``;
* REGIME: ``small`` (n < 10^4) or ``large`` (n >= 10^4);
* KIND: ``epsilon`` (single-round ``upper`` of ``epsilon``), ``delta`` (single-round ``upper`` of ``delta``) or
  ``total`` (``upper`` of ``compose_rounds``, when one of its rounds matches).

The public functions are wrapped (``shuffleamp.epsilon`` / ``delta`` / ``compose_rounds`` and their modules'
names) before the test modules are imported, so every test that obtains a bound through the API sees the
mutated value; nothing else changes.
"""

from __future__ import annotations

import copy
import functools
import os

FACTOR = 0.99
SMALL_N = 10_000


def family(mech) -> str:
    """The mutation family of a mechanism object."""
    name = type(mech).__name__
    if name == "KRR":
        return "krr2" if getattr(mech, "k", 0) == 2 else "krr"
    return {"BLH": "blh", "RAPPOR": "rappor", "OUE": "oue", "HadamardResponse": "hr", "Laplace": "laplace",
            "MatrixMechanism": "matrix", "Joint": "joint", "Parallel": "parallel", "Subsample": "subsample",
            "Population": "population", "Gaussian": "gaussian", "ApproximateLDP": "approx-ldp"}.get(name, name.lower())


def _regime(mech, n) -> str:
    if n is None:
        n = getattr(mech, "n", None)
    try:
        n = float(n)
    except (TypeError, ValueError):
        return "any"
    return "small" if n < SMALL_N else "large"


def _scaled(result):
    out = copy.copy(result)
    object.__setattr__(out, "upper", result.upper * FACTOR)
    return out


def _matches(spec, mech, n) -> bool:
    fam, regime, _ = spec
    try:
        return family(mech) == fam and _regime(mech, n) in (regime, "any")
    except Exception:           # noqa: BLE001 - an odd argument: not a match
        return False


def _wrap_single(fn, spec, kind):
    @functools.wraps(fn)
    def wrapper(mechanism, n=None, *args, **kwargs):
        r = fn(mechanism, n, *args, **kwargs)
        if spec[2] == kind and _matches(spec, mechanism, n) and r.upper is not None:
            return _scaled(r)
        return r
    return wrapper


def _wrap_total(fn, spec):
    @functools.wraps(fn)
    def wrapper(rounds, *args, **kwargs):
        r = fn(rounds, *args, **kwargs)
        hit = False
        try:
            for item in rounds:
                mech = item[0]
                n = item[1] if len(item) > 1 else None
                hit |= _matches(spec, mech, n)
        except Exception:       # noqa: BLE001
            hit = False
        return _scaled(r) if hit and r.upper is not None else r
    return wrapper


def pytest_configure(config):
    raw = os.environ.get("SHUFFLEAMP_MUTATION")
    if not raw:
        return
    spec = tuple(raw.split(":"))
    assert len(spec) == 3 and spec[2] in ("epsilon", "delta", "total"), raw
    import shuffleamp
    from shuffleamp import accounting, bounds

    eps = _wrap_single(bounds.epsilon, spec, "epsilon")
    dl = _wrap_single(bounds.delta, spec, "delta")
    tot = _wrap_total(accounting.compose_rounds, spec)
    bounds.epsilon, bounds.delta, accounting.compose_rounds = eps, dl, tot
    shuffleamp.epsilon, shuffleamp.delta, shuffleamp.compose_rounds = eps, dl, tot
    config.addinivalue_line("markers", f"mutation: running under SHUFFLEAMP_MUTATION={raw}")
