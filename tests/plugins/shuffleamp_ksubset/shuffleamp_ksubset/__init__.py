"""The k-subset mechanism as a shuffleamp plugin (the worked example of shuffleamp's CONTRIBUTING.md).

The class below is the example block of CONTRIBUTING.md, verbatim (a test keeps them equal). The
package's ``pyproject.toml`` registers it through the ``shuffleamp.mechanisms`` entry point.

References
----------
M. Ye, A. Barg, "Optimal Schemes for Discrete Distribution Estimation Under Locally Differential
Privacy", IEEE Transactions on Information Theory 64(8), 2018 (the k-subset mechanism).
"""

import itertools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from shuffleamp import _validate
from shuffleamp.decomposition import lower_decomposition, primary_decomposition
from shuffleamp.errors import ParameterError
from shuffleamp.mechanisms import MAX_MATRIX_ENTRIES, Mechanism, Parameter


@dataclass(frozen=True)
class KSubset(Mechanism):
    """k-subset mechanism on [k]: an s-subset S w.p. proportional to e^{eps0} if x in S, else 1."""

    eps0: float
    k: int
    s: int
    name: ClassVar[str] = "ksubset"
    param_specs: ClassVar[tuple] = (
        Parameter("k", "int", minimum=3, doc="number of categories"),
        Parameter("s", "int", minimum=1, doc="size of the reported subset (s < k)"),
    )

    def __post_init__(self):
        object.__setattr__(self, "eps0", _validate.mechanism_eps0(self.eps0))
        object.__setattr__(self, "k", _validate.count(self.k, "k", minimum=3))
        object.__setattr__(self, "s", _validate.count(self.s, "s", minimum=1))
        if self.s >= self.k:
            raise ParameterError("s", f"must be < k = {self.k}, got {self.s}")
        if self.k * math.comb(self.k, self.s) > MAX_MATRIX_ENTRIES:
            raise ParameterError("k", "too many subsets for the matrix form")

    def matrix(self) -> np.ndarray:
        E = math.exp(self.eps0)
        subsets = list(itertools.combinations(range(self.k), self.s))
        P = np.array([[E if x in S else 1.0 for S in subsets] for x in range(self.k)])
        P = P / P.sum(axis=1, keepdims=True)
        P.setflags(write=False)
        return P

    @property
    def gamma(self) -> float:
        return float(self.matrix().min(axis=0).sum())

    @property
    def domain(self) -> int:
        return self.k

    def decomposition(self, form: str = "simplified"):
        if form == "asymptotic":
            raise ParameterError("form", "the k-subset mechanism has no asymptotic form here")
        dec = primary_decomposition(self.matrix(), 0, 1)     # input-symmetric: one pair suffices
        return dec if form == "primary" else dec.simplified()

    def upper_decompositions(self) -> list:
        return [self.decomposition()]

    def lower_decompositions(self) -> list:
        # Theorem 14 with x1^0 = 0, x1^1 = 1, x2 = ... = xn = 2
        return [lower_decomposition(self.matrix(), 0, 1, 2).simplified()]

    def lower_cases(self) -> list:
        # permutation-symmetric: the dataset is "mutually distinct x1^0, x1^1, x2"
        return [(("type", "distinct"), f) for f in self.lower_decompositions()]

    def describe(self) -> dict:
        return {"mechanism": self.name, "eps0": self.eps0, "k": self.k, "s": self.s}
