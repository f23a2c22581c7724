"""TEMPORARY stand-ins for the model-layer interface of the redesign (deleted at merge).

This branch codes against the new interface of :mod:`shuffleamp.decomposition` and of the
mechanism classes; until they land, this module provides it from today's code:

* :func:`clone_decomposition`, :func:`law_key`, :func:`dedupe` -- ``from .decomposition`` after the merge;
* :func:`unsupported_reason` -- ``from .exact`` (or ``fft_engine``) after the merge;
* ``Mechanism.with_eps0``, ``.domain``, ``.variation_ratio_beta()``, ``.stronger_clone_decomposition()``
  are attached to the mechanism classes on import (the model layer defines them after the merge).
"""

from __future__ import annotations

import math

import numpy as np

from . import mechanisms as _m
from .errors import ParameterError, ResourceLimitError
from .gparv import Decomposition

__all__ = ["clone_decomposition", "law_key", "dedupe"]


def clone_decomposition(eps0: float) -> Decomposition:
    """Standard clone of Feldman, McMillan, Talwar (FOCS 2021) as a general-clone decomposition."""
    E = math.exp(eps0)
    return Decomposition([E / (E + 1), 1 / (E + 1)], [1 / (E + 1), E / (E + 1)],
                         [1 / (2 * E), 1 / (2 * E)], 1 - 1 / E, label="standard clone")


def law_key(family):
    """Hashable key equal for two GPARV families with the same law at every ε."""
    from .compose import _law_key

    return _law_key(family)


def dedupe(families) -> list:
    """Drop families whose GPARV law equals an earlier one's for every ε."""
    out, seen = [], set()
    for f in families:
        key = law_key(f)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


# ---------------------------------------------------------------------------- mechanism methods
_FREE_EPS0 = ("krr", "blh", "rappor", "oue", "hr", "laplace")


def _with_eps0(self, eps0: float):
    desc = dict(self.describe())
    name = desc.pop("mechanism")
    if name not in _FREE_EPS0:
        raise ParameterError("mechanism", f"{name!r}: its eps0 is not a free parameter, so max_eps0 "
                             "cannot vary it (pass a factory eps0 -> mechanism instead)")
    desc.pop("eps0", None)
    params = {k: v for k, v in desc.items() if v is not None}
    return _m.make(name, eps0=eps0, **params)


def _variation_ratio_beta(self) -> tuple[float, str]:
    eps0 = self.eps0
    E = math.exp(eps0)
    name = self.name
    if name == "krr":
        return math.expm1(eps0) / (E + self.k - 1), f"Table 2 GRR, d={self.k}"
    if name == "blh":
        return math.tanh(eps0 / 2), "Table 2 local hash, l=2"
    if name == "rappor":
        return math.tanh(eps0 / 4), "Table 2 binary RR (RAPPOR)"
    if name == "oue":
        return math.tanh(eps0 / 2) / 2, "OUE (derived here: largest total variation of two OUE reports)"
    if name == "hr":
        return math.tanh(eps0 / 2) / 2, "Table 2 Hadamard response (K=d, s=d/2, B=1)"
    if name == "laplace":
        return -math.expm1(-eps0 / 2), "Table 2 Laplace for [0,1]"
    if name == "matrix":
        P = self.matrix()
        D, Y = P.shape
        if D * D * Y > 2 ** 28:
            raise ResourceLimitError(f"variation-ratio: pairwise total variation of a {D}x{Y} matrix "
                                     "exceeds the budget", parameter="mechanism", resource="memory")
        tv = max(float(0.5 * np.abs(P[i] - P[i + 1:]).sum(axis=1).max()) for i in range(D - 1))
        return min(tv, math.tanh(eps0 / 2)), "max pairwise TV of the matrix rows"
    return math.tanh(eps0 / 2), "Table 2 general mechanisms"


def _stronger_clone_decomposition(self):
    if self.name != "krr":
        return None
    E = math.exp(self.eps0)
    k = self.k
    p = 1.0 / (E + k - 1)
    if k == 2:
        a, b, c = [E * p, p], [p, E * p], [p, p]
    else:
        q = (k - 2) * p
        a, b, c = [E * p, p, q], [p, E * p, q], [p, p, q]
    return Decomposition(a, b, c, 1.0 - sum(c), label=f"stronger clone (FMT23b) {k}-RR")


_m.Mechanism.with_eps0 = _with_eps0
_m.Mechanism.variation_ratio_beta = _variation_ratio_beta
_m.Mechanism.stronger_clone_decomposition = _stronger_clone_decomposition
for _cls, _dom in ((_m.KRR, lambda s: s.k), (_m.HadamardResponse, lambda s: s.d - 1),
                   (_m.BLH, lambda s: s.d), (_m.RAPPOR, lambda s: s.d), (_m.OUE, lambda s: s.d),
                   (_m.Laplace, lambda s: 2), (_m.MatrixMechanism, lambda s: int(s.matrix().shape[0]))):
    _cls.domain = property(_dom)
