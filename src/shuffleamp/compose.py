r"""Composed randomizers: joint composition, parallel composition and Poisson subsampling.

The builders :func:`joint`, :func:`parallel` and :func:`subsample` return
:class:`~shuffleamp.mechanisms.Mechanism` objects. They work with :func:`shuffleamp.epsilon`,
:func:`shuffleamp.delta`, the lower bounds, the CLI and plan files like any other mechanism.
Composed mechanisms can themselves be components, e.g. ``subsample(joint(a, b), q)``.

Joint composition ([SCW] §4.5, Theorems 8 and 9)
-------------------------------------------------
:math:`R^\times(x^1, \dots, x^m) = (R_1(x^1), \dots, R_m(x^m))`. The whole tuple is one message.
It is :math:`(\sum_i \varepsilon_{0,i})`-LDP (Theorem 8). By Theorem 9, an optimal decomposition for a
pair of tuples is the Cartesian product of the components' simplified optimal decompositions.
The component ratios multiply, :math:`(r_0, r_1, c) = (\prod r_0^{(i)}, \prod r_1^{(i)}, \prod c^{(i)})`,
and every product that contains a component's residual belongs to the joint residual
(:math:`G = 0`). Products with equal :math:`(r_0, r_1)` have the same GPARV value (Remark 4), so
they are merged after every factor. A 10-way product of 5-atom pieces then has at most a
few hundred components and takes milliseconds.

*Adjacency.* Any two tuples are neighbours (the paper's default). A neighbouring pair can
differ in any non-empty subset :math:`S` of the coordinates (Hamming distance 1..m; [SCW] §4.5). On an agreeing coordinate with value :math:`u` the factor is the :math:`(u, u)`
decomposition :math:`(R(u), R(u), \inf_x R(x))`. Its simplified form has only components with
:math:`r_0 = r_1`. The code reads it off the blanket decomposition of any pair
:math:`(u, x')`: the triple :math:`(a, a, c, \beta)` (or :math:`(b, b, c, \beta)` for :math:`x_1^1 = u`).
For extreme-property mechanisms (five-component form, [SCW] Table 2) this gives the closed form
:math:`s_E = p + q` with ratio :math:`E` and :math:`s_1 = p + r` with ratio 1 (k-RR:
:math:`s_E = p`, :math:`s_1 = (k-1)p`). :meth:`Joint.upper_decompositions` returns one product
per case: each subset :math:`S`, and, for components with several pair or :math:`u` types,
each such type. Identical components (equal :meth:`describe`) are interchangeable, so only
the number of differing coordinates per group of identical components matters. The
:attr:`~shuffleamp.decomposition.Decomposition.label` of each case names it, e.g.
``"joint hamming 2/3: differ {1,2}, agree {3}"``. :func:`shuffleamp.epsilon` and
:func:`shuffleamp.delta` record the label of the maximising case in
``result.settings["grid"]["upper"]["pair"]``. :func:`shuffleamp.bounds.case_deltas` lists the δ of every case.

*Which Hamming distance is worst (evidence, not assumption).* Both questions below were checked by
exhaustive enumeration, for identical components (``bench/bench_compose.py --hamming``; results in
``bench/README.md``, "Composition"; a subset is re-checked in ``tests/test_compose.py``).

1. Bound level. Is the upper-bound δ of the all-coordinates-differ case (d = m) the largest? We
   computed exact small-n values by multinomial enumeration of each case's product GPARV, in both
   orientations. Configurations: 3-, 4- and 10-RR with m = 2..4 and n = 2..5; BLH, RAPPOR and OUE
   (asymptotic) and HR (d = 8) with m = 2, 3 and n = 2..4; per-component ε0 ∈ {0.25, 0.5, 1, 2};
   20 values of ε in [0, 0.95 ε0]. That is 4800 configurations. **The d = m case is the largest in
   all of them, and δ_d is non-decreasing in d.** At large n (FFT, 4-joint 10-RR, n up to 1e6, at
   the ε where the d = m case gives the target δ), the d = m − 1 case is 5–18× smaller and d = 1
   is below 1e-12. This matches Fig. 7 of [SCW].
2. True divergence. Is the worst neighbouring *dataset* pair one whose differing user differs in
   all coordinates? We computed the exact shuffled-histogram laws of the composed (Kronecker)
   matrix with the independent oracle ``tests/oracle.py``, over all neighbouring dataset pairs.
   Configurations: 2-joint 3-RR (n ≤ 5) and 4-RR (n ≤ 4); 3-joint 2-RR (n ≤ 5) and 3-RR (n ≤ 3);
   2-joint BLH, RAPPOR and OUE (d = 3) and HR (d = 4) at n = 2; ε ∈ {0.05, 0.2, 0.5}·ε0. That is
   165 configurations. **The maximum is always attained at Hamming distance m**, and it is strictly
   larger than the maximum at every d < m.

Neither fact is proved here (the paper also leaves it open, [SCW] §8), so the library does not
rely on it. The upper bound is the maximum over **all** subsets. On the configurations above
it coincides with the d = m case. Pass ``distances=(m,)`` to :func:`joint` only if neighbours
are *defined* to differ in every coordinate (a restricted adjacency, [SCW] §4.5).

*Lower bound* ([SCW] Theorem 14; the composition of lower-bound decompositions is derived here). Lower-bound GPARVs do
not compose, but lower-bound decompositions do. The code takes the Cartesian product of the
components' Theorem-14 decompositions :math:`(a, b, c) = (R_i(x_1^0), R_i(x_1^1), R_i(x_2))`,
merges equal ratios and reads :math:`G = (a - e^\varepsilon b)/c` with mass :math:`c`. For
restricted Hamming distances, an agreeing coordinate uses :math:`x_1^0 = x_1^1 = x_2` (factor 1).

Parallel composition and subsampling ([SCW] §4.6, Theorems 10 and 11, Example 4.4)
----------------------------------------------------------------------------------
:math:`R^{\parallel,w}(x) = (i, R_i(x))` with probability :math:`w_i`. It is
:math:`\max_i \varepsilon_{0,i}`-LDP. Its optimal decomposition is the weight-mixture of the
components' decompositions, :math:`(a', b', c') = (w_i a^{(i)}, w_i b^{(i)}, w_i c^{(i)})` and
:math:`\beta' = \sum_i w_i \beta_i`. Its GPARV is the :math:`w`-mixture of the components' GPARVs,
for the upper bound and for the lower bound. The components act on the **same** input, so a
mixture is only valid at a **common** input pair (upper) or dataset (lower):

* Upper. If every component has a single pair type (input-symmetric mechanisms: k-RR, BLH,
  RAPPOR, OUE, HR, Laplace, ⊥), the mixture of those decompositions is exact for every pair.
  If only one component has several pair types (a matrix mechanism, a joint composition), the
  mixtures of its families with the others' single family are exact too. Otherwise, if all
  components have matrix forms, the block matrix
  :math:`[w_1 P_1 \mid w_2 P_2 \mid \dots]` is analysed exactly as a
  :class:`~shuffleamp.mechanisms.MatrixMechanism` (all input pairs). Failing that, the
  maximum over all combinations of the components' pair types (and orientations) is taken.
  This is a sound superset.
* Lower. Each component's Theorem-14 dataset is tagged with its shape
  (:meth:`~shuffleamp.mechanisms.Mechanism.lower_cases`): "mutually distinct
  :math:`x_1^0, x_1^1, x_2`" for the permutation-symmetric k-RR, BLH, RAPPOR and OUE; ":math:`x_2 = x_1^1`"
  on two-element domains and for Laplace; explicit rows for HR and matrices; "any" for ⊥.
  Only combinations that describe one common dataset are mixed. A joint composition inside a
  parallel one has an "opaque" dataset and mixes only with ⊥, so ``subsample(joint(...), q)`` has
  a lower bound but ``parallel([(w, joint(...)), (1 - w, krr)])`` has none (``lower`` is None).

Limits. The number of upper-bound cases is capped at :data:`MAX_CASES`; beyond it
:class:`~shuffleamp.errors.ResourceLimitError` is raised. Lower bounds keep at most
:data:`MAX_LOWER_CASES` datasets, taking fewer documented datasets per component, which is still valid. Products of *heterogeneous* components have up to
:math:`4^m` distinct ratio pairs when the ε0's are incommensurable (e.g. 10 BLH with ten different
ε0: 4·10^5 components, 4 s to build, and minutes per ε evaluation). Identical or commensurable
components merge to at most :math:`(2m+1)^2`.

The components must share the input domain. Known domain sizes (k-RR ``k``, BLH/RAPPOR/OUE
``d``, HR ``d - 1``, Laplace 2, matrix rows) must agree, while ``d=None`` (asymptotic) matches any.
The paper's "½·10-RR + ½·BLH" is 10-RR with the asymptotic BLH.

Poisson subsampling (:func:`subsample`) is parallel composition with the "⊥" randomizer
(every user who does not participate sends ⊥, which is shuffled too; [SCW] Example 4.4). ⊥ has
γ = 1 and a single component with :math:`r_0 = r_1 = 1`, so :math:`G \equiv 1 - e^\varepsilon`.
Hence :math:`G_{sub} = G_R` w.p. q and :math:`1 - e^\varepsilon` w.p. 1 − q, for the upper and
the lower bound alike.

References
----------
.. [SCW] J. Su, Y. Cheng, T. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification
   via Shuffling", IEEE S&P 2026; short version "A Unified Framework and Efficient Computation for
   Privacy Amplification via Shuffling", arXiv:2504.07414.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from typing import Sequence

import numpy as np

from . import _validate
from ._numerics import check_time, check_work
from ._registry import COMPOSED
from .errors import ComponentError, ParameterError, ResourceLimitError
from .decomposition import (Decomposition, dedupe, law_key,
                            mixture, primary_decomposition, product_decomposition)
from ._validate import Parameter
from .mechanisms import MAX_MATRIX_ENTRIES, MatrixMechanism, Mechanism

__all__ = ["joint", "parallel", "subsample", "Joint", "Parallel", "Subsample", "Silent",
           "COMPOSED", "COMPOSED_CLASSES", "MAX_CASES", "MAX_LOWER_CASES"]

#: Largest number of cases (Hamming patterns x pair types, or component combinations) enumerated.
MAX_CASES = 4096
#: Largest number of lower-bound datasets kept (any subset is valid; each costs one FFT per ε evaluation).
MAX_LOWER_CASES = 64
#: Absolute tolerance on the sum of the parallel weights.
WEIGHT_SUM_TOL = 1e-9


# ----------------------------------------------------------------------------- helpers
#: Seconds per joint case and per product atom assumed by the up-front cost estimate of a joint
#: composition (the call's ``max_seconds`` refuses larger ones before building anything).
JOINT_CASE_SECONDS = 2e-4
JOINT_ATOM_SECONDS = 2e-7


def _oriented(mech: Mechanism) -> list:
    """The mechanism's upper families and their swaps, de-duplicated by law."""
    fams = []
    for d in mech.upper_decompositions():
        fams.append(d.simplified() if isinstance(d, Decomposition) else d)
        if isinstance(d, Decomposition) and d.law_key() == d.__dict__.get("_swap_key"):
            # the swapped pair has the same law key (e.g. the symmetric (p, q, r) forms): ``dedupe`` would
            # drop it, so it is not built (the key pair comes from the merge ``simplified`` already ran)
            continue
        s = d.swapped()
        if s is not d:
            fams.append(s.simplified() if isinstance(s, Decomposition) else s)
    return dedupe(fams)


def _same_decompositions(mech: Mechanism) -> list:
    r""":math:`(u, u)` blanket decompositions :math:`(R(u), R(u), \inf_x R(x), \beta)` for every type of :math:`u`.

    Read off the upper decompositions: a blanket decomposition of the pair :math:`(x, x')` gives
    :math:`(a, a, c, \beta)` for :math:`u = x` and :math:`(b, b, c, \beta)` for :math:`u = x'`. Every input
    appears in some pair, and de-duplicated pairs have the same multiset of :math:`(a_j, b_j, c_j)`,
    so every :math:`u` is covered.
    """
    out = []
    for d in mech.upper_decompositions():
        if not isinstance(d, Decomposition):
            raise ParameterError("mechanism", f"{mech.name} has no finite decomposition (continuous "
                                              "outputs); joint composition needs finite mechanisms")
        out.append(Decomposition(d.a, d.a, d.c, d.beta, label=f"same u = x0 of {d.label}").simplified())
        out.append(Decomposition(d.b, d.b, d.c, d.beta, label=f"same u = x1 of {d.label}").simplified())
    return dedupe(out)


def _chi2(f) -> float:
    r"""Heuristic strength of a dataset, :math:`\sum_j (a_j - b_j)^2 / c_j` (larger = more distinguishable).

    Only used to choose which lower-bound datasets to keep when there are too many; any choice is valid.
    """
    if not isinstance(f, Decomposition):
        return math.inf
    return float(np.sum((f.a - f.b) ** 2 / f.c))


def _check_cases(count: int, what: str):
    if count > MAX_CASES:
        raise ResourceLimitError(f"{what} has {count} cases (> MAX_CASES = {MAX_CASES}); "
                                 "use fewer or identical components")


def _describe_key(mech) -> str:
    return json.dumps(mech.describe(), sort_keys=True, default=str)


def _check_mechanism(index: int, m):
    if not isinstance(m, Mechanism):
        raise ComponentError(index, "mechanism", f"must be a shuffleamp Mechanism, got {type(m).__name__}")
    return m


# ----------------------------------------------------------------------------- ⊥
@functools.lru_cache(maxsize=1)
def _silent_decomposition() -> Decomposition:
    """The one decomposition of ⊥ (immutable, so shared: its merge, law key and swap are computed once)."""
    return Decomposition([1.0], [1.0], [1.0], 0.0, label="⊥")


class Silent(Mechanism):
    r"""The "⊥" randomizer: every input reports the same symbol (0-LDP).

    Used by :func:`subsample` for users who do not participate ([SCW] Example 4.4). γ = 1, one
    component with :math:`r_0 = r_1 = 1`, so :math:`G \equiv 1 - e^\varepsilon` (derived here).
    Not a stand-alone mechanism (ε0 = 0 cannot be amplified); only a parallel component.

    Parameters
    ----------
    domain : int or None
        Input-domain size (only needed for :meth:`matrix`).
    """

    name = "silent"
    eps0_is_parameter = False

    def __init__(self, domain: int | None = None):
        self.eps0 = 0.0
        self._domain = domain

    def __repr__(self):
        return f"Silent(domain={self.domain!r})"

    @property
    def domain(self) -> int | None:
        """Input-domain size if known (``None`` = unknown / any)."""
        return self._domain

    def _dec(self) -> Decomposition:
        return _silent_decomposition()

    def matrix(self) -> np.ndarray:
        """Matrix form of ⊥: a single all-ones column (every input gives the same output).

        Returns
        -------
        numpy.ndarray of float64, shape (domain, 1)
            Read-only.

        Raises
        ------
        ParameterError
            Naming ``mechanism`` if the input domain is unknown (``domain=None``).
        """
        if self.domain is None:
            raise ParameterError("mechanism", "⊥ needs a known input domain for its matrix form")
        P = np.ones((self.domain, 1))
        P.setflags(write=False)
        return P

    @property
    def gamma(self) -> float:
        r"""Blanket mass :math:`\gamma = \sum_y \inf_x R(x)(y)` (exact); see :attr:`Mechanism.gamma`."""
        return 1.0

    def decomposition(self, form: str = "simplified"):
        """Optimal (blanket) decomposition for the worst-case pair; see :meth:`Mechanism.decomposition`.

        Parameters
        ----------
        form : {"simplified", "primary", "asymptotic"}
            Which form (see :meth:`Mechanism.decomposition`).

        Returns
        -------
        Decomposition or GparvFamily
            The decomposition (a GPARV family in ε).
        """
        return self._dec()

    def upper_decompositions(self) -> list:
        """Decompositions whose GPARVs bound every neighbouring pair ([SCW] Theorem 13).

        Returns
        -------
        list of GparvFamily
            The upper bound is the maximum over these and their swapped versions.
        """
        return [self._dec()]

    def lower_decompositions(self) -> list:
        """Theorem-14 decompositions of the documented lower-bound datasets ([SCW] Theorem 14).

        Returns
        -------
        list of GparvFamily
            The lower bound is the maximum over the list.
        """
        return [self._dec()]

    def lower_cases(self) -> list:
        """⊥ is the same for every input: its dataset matches any other component's.

        Returns
        -------
        list of (tuple, GparvFamily)
            ``(pattern, family)`` pairs, one per entry of :meth:`lower_decompositions`.
        """
        return [(("any",), f) for f in self.lower_decompositions()]

    def describe(self) -> dict:
        """JSON-serialisable description: ``{"mechanism": name, "eps0": ..., <parameters>}``.

        Returns
        -------
        dict
            Plain JSON-serialisable mapping (ε0 in nats).
        """
        return {"mechanism": self.name, "eps0": 0.0}


# ----------------------------------------------------------------------------- joint
def _groups(components) -> list[list[int]]:
    """Indices of identical components (equal describe()), in order of first appearance."""
    keys: dict[str, list[int]] = {}
    for i, m in enumerate(components):
        keys.setdefault(_describe_key(m), []).append(i)
    return list(keys.values())


def _fmt_set(idx) -> str:
    return "{" + ",".join(str(i + 1) for i in idx) + "}"


#: The components of a composed mechanism (tables, mechanisms, or ``[WEIGHT:]NAME:key=value`` specs).
_COMPONENTS = Parameter("components", "list", doc="component mechanisms")


class Joint(Mechanism):
    r"""Joint composition :math:`R^\times(x^1..x^m) = (R_1(x^1), \dots, R_m(x^m))` ([SCW] §4.5).

    Build with :func:`joint`. ε0 is the sum of the components' ε0 (Theorem 8). The upper bound
    is the maximum over all non-empty subsets of differing coordinates (allowed Hamming distances)
    of the product decompositions (Theorem 9); see the module docstring for the
    :math:`(u, u)` factors and the Hamming-distance evidence.

    Attributes
    ----------
    components : tuple of Mechanism
    distances : tuple of int
        The Hamming distances between neighbouring tuples that are considered (default 1..m).
    eps0 : float
        :math:`\sum_i \varepsilon_{0,i}`.
    """

    name = "joint"
    _families_cacheable = True
    eps0_is_parameter = False
    _composed = True
    #: The fields of a joint composition in plans, specifications and sweeps.
    param_specs = (_COMPONENTS,
                   Parameter("distances", "list", default=None,
                             doc="Hamming distances between neighbouring tuples to consider (default: all)"))

    def __init__(self, components: Sequence[Mechanism], distances=None):
        comps = tuple(_check_mechanism(i, m) for i, m in enumerate(components, start=1))
        if not comps:
            raise ParameterError("components", "joint composition needs at least one component")
        m = len(comps)
        for i, c in enumerate(comps, start=1):
            if isinstance(c, Silent):
                raise ComponentError(i, "mechanism", "⊥ cannot be a joint component")
            try:
                fams = c.upper_decompositions()
            except ParameterError as exc:
                raise ComponentError.wrap(i, exc) from exc
            if not all(isinstance(f, Decomposition) for f in fams):
                raise ComponentError(i, "mechanism", f"{c.name} has continuous outputs; joint composition "
                                                     "needs finite mechanisms")
        if distances is None:
            dist = tuple(range(1, m + 1))
        else:
            try:
                vals = [distances] if np.ndim(distances) == 0 else list(distances)
            except TypeError as exc:
                raise ParameterError("distances", "must be an integer or a list of integers") from exc
            dist = tuple(sorted({_validate.count(v, "distances", minimum=1) for v in vals}))
            if not dist:
                raise ParameterError("distances", "must not be empty")
            if dist[-1] > m:
                raise ParameterError("distances", f"must be <= {m} (the number of components), got {dist[-1]}")
        self.components = comps
        self.distances = dist
        self.eps0 = _validate.mechanism_eps0(float(sum(c.eps0 for c in comps)), "components",
                                             what="the joint composition (sum of the components' eps0) is")
        doms = [c.domain for c in comps]
        self._domain = math.prod(doms) if all(d is not None for d in doms) else None

    def __repr__(self):
        return f"Joint({list(self.components)!r}, distances={self.distances!r})"

    @property
    def domain(self) -> int | None:
        """Input-domain size if known (``None`` = unknown / any)."""
        return self._domain

    def __eq__(self, other):
        return isinstance(other, Joint) and _describe_key(self) == _describe_key(other)

    def __hash__(self):
        return hash(_describe_key(self))

    # -- matrix / gamma
    def matrix(self) -> np.ndarray:
        """Kronecker product of the component matrices (rows = input tuples in row-major order).

        Returns
        -------
        numpy.ndarray of float64, shape (prod of inputs, prod of outputs)
            Read-only, rows sum to 1.

        Raises
        ------
        ParameterError
            Naming ``components`` if the product would exceed :data:`MAX_MATRIX_ENTRIES` entries,
            or as a component's :meth:`matrix` does.
        """
        shapes = [c.matrix().shape for c in self.components]
        entries = int(np.prod([s[0] * s[1] for s in shapes], dtype=np.float64))
        if entries > MAX_MATRIX_ENTRIES:
            raise ParameterError("components", f"the joint matrix would have {entries} entries "
                                               f"(> {MAX_MATRIX_ENTRIES})")
        P = functools.reduce(np.kron, [c.matrix() for c in self.components])
        P = P / P.sum(axis=1, keepdims=True)
        P.setflags(write=False)
        return P

    @property
    def gamma(self) -> float:
        r""":math:`\gamma = \prod_i \gamma_i` (the infimum factorises, Theorem 9 proof)."""
        return float(np.prod([c.gamma for c in self.components]))

    # -- cases
    @functools.cached_property
    def _diff(self) -> list:
        return [_oriented(c) for c in self.components]

    @functools.cached_property
    def _same(self) -> list:
        return [_same_decompositions(c) for c in self.components]

    def _cases(self, diff_states: list, agree_states: list, what: str, limit: int | None = MAX_CASES):
        """Enumerate (hamming d, per-coordinate factor list, differing indices) up to symmetry."""
        m = len(self.components)
        groups = _groups(self.components)
        total = 1
        for g in groups:
            s = len(diff_states[g[0]]) + len(agree_states[g[0]])
            total *= math.comb(len(g) + s - 1, len(g))
        if limit is not None and total > limit:
            raise ResourceLimitError(f"{what} has {total} cases (> {limit}); use fewer or identical components")
        # up-front cost: every case multiplies one factor per coordinate (atoms up to the product of the
        # factors' atom counts, merged by ratio after each factor)
        atoms = 1.0
        for i in range(m):
            atoms *= max([getattr(f, "a", np.ones(1)).size for f in list(diff_states[i]) + list(agree_states[i])] + [1])
        check_work(total * (JOINT_CASE_SECONDS + JOINT_ATOM_SECONDS * atoms),
                   f"{what}: {total} cases of up to {atoms:.3g} product atoms (use fewer or identical components)")
        per_group = []
        for g in groups:
            states = [("diff", f) for f in diff_states[g[0]]] + [("same", f) for f in agree_states[g[0]]]
            per_group.append([(g, [states[j] for j in choice])
                              for choice in itertools.combinations_with_replacement(range(len(states)), len(g))])
        for combo in itertools.product(*per_group):
            check_time(what)
            factors: list = [None] * m
            for g, states in combo:
                for i, st in zip(g, states):
                    factors[i] = st
            differ = [i for i in range(m) if factors[i][0] == "diff"]
            if len(differ) in self.distances:
                yield len(differ), [f for _, f in factors], differ

    def _case_label(self, kind: str, d: int, factors, differ, diff_states, agree_states) -> str:
        m = len(self.components)
        agree = [i for i in range(m) if i not in differ]
        lab = f"joint{kind} hamming {d}/{m}: differ {_fmt_set(differ)}"
        if agree:
            lab += f", agree {_fmt_set(agree)}"
        detail = [f"{i + 1}: {factors[i].label}" for i in range(m)
                  if len(diff_states[i] if i in differ else agree_states[i]) > 1]
        if detail:
            lab += " [" + "; ".join(detail) + "]"
        return lab

    @functools.cached_property
    def _upper(self) -> list:
        out, memo = [], {}
        for d, factors, differ in self._cases(self._diff, self._same, "joint upper bound"):
            lab = self._case_label("", d, factors, differ, self._diff, self._same)
            out.append(product_decomposition(factors, label=lab, memo=memo))
        return dedupe(out)

    def upper_decompositions(self) -> list:
        """One product decomposition per case (allowed Hamming pattern x component pair types).

        The labels name the case (``"joint hamming d/m: differ {...}, agree {...}"``).

        Returns
        -------
        list of GparvFamily
            The upper bound is the maximum over these and their swapped versions.
        """
        return list(self._upper)

    @functools.cached_property
    def _lower(self) -> list:
        lows = []
        for i, c in enumerate(self.components, start=1):
            try:
                fams = [f.simplified() if isinstance(f, Decomposition) else f for f in c.lower_decompositions()]
            except ParameterError as exc:
                raise ComponentError.wrap(i, exc) from exc
            if not all(isinstance(f, Decomposition) for f in fams):
                raise ComponentError(i, "mechanism", "joint lower bounds need finite lower decompositions")
            lows.append(sorted(dedupe(fams), key=_chi2, reverse=True))
        ident = Decomposition([1.0], [1.0], [1.0], 0.0, label="agree, x0 = x1 = x2")
        agree = [[ident] if len(self.distances) and min(self.distances) < len(self.components) else []
                 for _ in self.components]
        out = []
        m = len(self.components)
        cap = max(len(L) for L in lows)
        while True:
            try:
                cases = list(self._cases([L[:cap] for L in lows], agree, "joint lower bound", MAX_LOWER_CASES))
                break
            except ResourceLimitError:
                # any dataset gives a valid lower bound: keep fewer documented datasets per component,
                # and at one per component the first MAX_LOWER_CASES patterns (most differing coordinates first)
                if cap == 1:
                    cases = list(itertools.islice(self._cases([L[:1] for L in lows], agree, "", None),
                                                  MAX_LOWER_CASES))
                    break
                cap = max(1, cap // 2)
        lows = [L[:cap] for L in lows]
        memo = {}
        for d, factors, differ in cases:
            agree_idx = [i for i in range(m) if i not in differ]
            lab = f"joint lower hamming {d}/{m}: differ {_fmt_set(differ)}"
            if agree_idx:
                lab += f", agree {_fmt_set(agree_idx)} (x0 = x1 = x2)"
            labels = [factors[i].label for i in differ]
            if len(set(labels)) == 1:
                lab += f" [{labels[0]}]"
            else:
                lab += " [" + "; ".join(f"{i + 1}: {factors[i].label}" for i in differ) + "]"
            out.append(product_decomposition(factors, label=lab, memo=memo))
        return dedupe(out)

    def lower_decompositions(self) -> list:
        """Theorem-14 product decompositions ([SCW] Theorem 14; products of the components' datasets).

        Returns
        -------
        list of GparvFamily
            The lower bound is the maximum over the list.
        """
        return list(self._lower)

    def decomposition(self, form: str = "simplified"):
        """All-coordinates-differ decomposition (the worst case on every configuration tested).

        ``"simplified"``: product of the components' first upper decompositions; ``"asymptotic"``:
        product of their asymptotic forms; ``"primary"``: blanket decomposition of the Kronecker
        matrix for the rows (0, ..., 0) and (1, ..., 1).

        Parameters
        ----------
        form : {"simplified", "primary", "asymptotic"}
            Which form (see :meth:`Mechanism.decomposition`).

        Returns
        -------
        Decomposition or GparvFamily
            The decomposition (a GPARV family in ε).
        """
        form = _validate.choice(form, "form", {"simplified", "primary", "asymptotic"})
        m = len(self.components)
        lab = f"joint hamming {m}/{m}: differ {_fmt_set(range(m))} ({form})"
        if form == "primary":
            P = self.matrix()
            dims = [c.matrix().shape[0] for c in self.components]
            x1 = int(np.ravel_multi_index(tuple([1] * m), dims))
            return primary_decomposition(P, 0, x1)
        if form == "asymptotic":
            return product_decomposition([c.decomposition("asymptotic") for c in self.components], label=lab)
        return product_decomposition([d[0] for d in self._diff], label=lab)

    def describe(self) -> dict:
        """JSON-serialisable description: ``{"mechanism": name, "eps0": ..., <parameters>}``.

        Returns
        -------
        dict
            Plain JSON-serialisable mapping (ε0 in nats).
        """
        out = {"mechanism": self.name, "eps0": self.eps0,
               "components": [c.describe() for c in self.components]}
        if self.distances != tuple(range(1, len(self.components) + 1)):
            out["distances"] = list(self.distances)
        return out


def joint(*components: Mechanism, distances=None) -> Joint:
    r"""Joint composition of finite randomizers ([SCW] Theorems 8 and 9).

    Parameters
    ----------
    *components : Mechanism
        The coordinates' randomizers, each with its own ε0 (a single list/tuple is also accepted).
        They must be finite (not Laplace); composed mechanisms are allowed.
    distances : int or sequence of int, optional
        Hamming distances between neighbouring input tuples to consider. Default: all of
        1..m (any two tuples are neighbours, the paper's default). ``distances=m`` restricts to
        neighbours that differ in every coordinate.

    Returns
    -------
    Joint
        A mechanism with ``eps0 = sum of the components' eps0``.

    Raises
    ------
    ParameterError
        No components, bad ``distances``; :class:`ComponentError` (``"component i: field ..."``)
        for a component that is not a finite mechanism.

    Examples
    --------
    >>> import shuffleamp as sa
    >>> from shuffleamp.mechanisms import KRR
    >>> m = sa.joint(KRR(0.5, 10), KRR(0.5, 10))
    >>> m.eps0
    1.0
    """
    if len(components) == 1 and isinstance(components[0], (list, tuple)):
        components = tuple(components[0])
    return Joint(components, distances=distances)


# ----------------------------------------------------------------------------- parallel
def _combine_patterns(pats):
    """The common dataset shape of several components' datasets, or None if incompatible."""
    kinds = [p for p in pats if p[0] != "any"]
    if not kinds:
        return ("any",)
    opaque = [p for p in kinds if p[0] == "opaque"]
    if opaque:
        return opaque[0] if len(kinds) == 1 else None
    triples = {p[1] for p in kinds if p[0] == "triple"}
    types = {p[1] for p in kinds if p[0] == "type"}
    if len(triples) > 1:
        return None
    if triples:
        t = next(iter(triples))
        for ty in types:
            if ty == "distinct" and len(set(t)) != 3:
                return None
            if ty == "x2=x1" and not (t[2] == t[1] and t[0] != t[1]):
                return None
        return ("triple", t)
    return ("type", types.pop()) if len(types) == 1 else None


def _block_matrix(weights, components) -> np.ndarray:
    mats = [c.matrix() for c in components]
    rows = {P.shape[0] for P in mats}
    if len(rows) != 1:
        raise ParameterError("components", f"component matrices have different numbers of inputs {sorted(rows)}")
    entries = rows.pop() * sum(P.shape[1] for P in mats)
    if entries > MAX_MATRIX_ENTRIES:
        raise ParameterError("components", f"the parallel matrix would have {entries} entries "
                                           f"(> {MAX_MATRIX_ENTRIES})")
    P = np.concatenate([w * P for w, P in zip(weights, mats) if w > 0], axis=1)
    P = P / P.sum(axis=1, keepdims=True)
    P.setflags(write=False)
    return P


class Parallel(Mechanism):
    r"""Parallel composition :math:`R^{\parallel,w}(x) = (i, R_i(x))` w.p. :math:`w_i` ([SCW] §4.6).

    Build with :func:`parallel` (or :func:`subsample`). ε0 is the maximum of the components'
    ε0 (Theorem 10). The GPARVs are weight-mixtures at a common input pair / dataset (Theorem 11);
    see the module docstring.

    Attributes
    ----------
    weights : tuple of float
    components : tuple of Mechanism
    eps0 : float
    domain : int or None
        The shared input-domain size, if known.
    """

    name = "parallel"
    _families_cacheable = True
    eps0_is_parameter = False
    _composed = True
    #: The fields of a parallel composition in plans, specifications and sweeps.
    param_specs = (_COMPONENTS,
                   Parameter("weights", "list", default=None,
                             doc="mixture weights summing to 1 (or a weight in each component)"))

    def __init__(self, weighted: Sequence[tuple[float, Mechanism]]):
        try:
            entries = list(weighted)
        except TypeError as exc:
            raise ParameterError("components", "must be a list of (weight, mechanism) pairs") from exc
        if not entries:
            raise ParameterError("components", "parallel composition needs at least one component")
        weights, comps = [], []
        for i, e in enumerate(entries, start=1):
            if not (isinstance(e, (tuple, list)) and len(e) == 2):
                raise ComponentError(i, "weight", "each component must be a (weight, mechanism) pair")
            w, m = e
            try:
                w = _validate.probability(w, "weight")
            except ParameterError as exc:
                raise ParameterError("weights", f"component {i}: {exc.detail}") from exc
            if not isinstance(w, float):
                raise ParameterError("weights", f"component {i}: must be a scalar")
            weights.append(w)
            comps.append(_check_mechanism(i, m))
        total = math.fsum(weights)
        if abs(total - 1.0) > WEIGHT_SUM_TOL:
            raise ParameterError("weights", f"must sum to 1, got {total!r}")
        weights = [w / total for w in weights]
        domain = None
        first = None
        for i, c in enumerate(comps, start=1):
            d = c.domain
            if d is None:
                continue
            if domain is None:
                domain, first = d, i
            elif d != domain:
                raise ComponentError(i, "mechanism", f"input domain of size {d} differs from component "
                                                     f"{first}'s ({domain}); parallel components share the input")
        self.weights = tuple(weights)
        self.components = tuple(comps)
        self._domain = domain
        self.eps0 = float(max(c.eps0 for c in comps))
        if self.eps0 <= 0:
            raise ParameterError("components", "all components are 0-LDP; nothing to amplify")

    def __repr__(self):
        return f"{type(self).__name__}({list(zip(self.weights, self.components))!r})"

    @property
    def domain(self) -> int | None:
        """Input-domain size if known (``None`` = unknown / any)."""
        return self._domain

    def __eq__(self, other):
        return isinstance(other, Parallel) and _describe_key(self) == _describe_key(other)

    def __hash__(self):
        return hash(_describe_key(self))

    def _parts(self):
        return [(w, c) for w, c in zip(self.weights, self.components) if w > 0]

    def matrix(self) -> np.ndarray:
        """Block matrix ``[w_1 P_1 | w_2 P_2 | ...]`` (outputs (i, y); zero-weight blocks dropped).

        Returns
        -------
        numpy.ndarray of float64, shape (inputs, outputs)
            Read-only, rows sum to 1.
        """
        ws, cs = zip(*self._parts())
        return _block_matrix(ws, [Silent(self.domain) if isinstance(c, Silent) else c for c in cs])

    @property
    def gamma(self) -> float:
        r""":math:`\gamma = \sum_i w_i \gamma_i`."""
        return float(sum(w * c.gamma for w, c in self._parts()))

    # -- exact matrix path
    def _try_matrix_mechanism(self):
        try:
            P = self.matrix()
        except ParameterError:
            return None
        return MatrixMechanism(P, eps0=self.eps0)

    @functools.cached_property
    def _oriented_lists(self) -> list:
        return [_oriented(c) for _, c in self._parts()]

    @functools.cached_property
    def _exact(self):
        """A MatrixMechanism of the block matrix when component pair types must be matched exactly.

        Mixing the listed families is exact as long as at most one component has several pair types
        (the others' single family holds at every pair); only otherwise is the block matrix needed.
        """
        if sum(len(L) > 1 for L in self._oriented_lists) < 2:
            return None
        return self._try_matrix_mechanism()

    @functools.cached_property
    def _upper(self) -> list:
        if self._exact is not None:
            return [d for d in self._exact.upper_decompositions()]
        lists = self._oriented_lists
        _check_cases(int(math.prod(float(len(L)) for L in lists)), "parallel upper bound")
        ws = [w for w, _ in self._parts()]
        out = []
        for combo in itertools.product(*lists):
            lab = "parallel: " + " + ".join(f"{w:g}*[{f.label}]" for w, f in zip(ws, combo))
            out.append(mixture(list(zip(ws, combo)), label=lab))
        return dedupe(out)

    def upper_decompositions(self) -> list:
        """Mixture decompositions (one per combination of component pair types; usually one).

        Returns
        -------
        list of GparvFamily
            The upper bound is the maximum over these and their swapped versions.
        """
        return list(self._upper)

    @functools.cached_property
    def _lower_cases(self) -> list:
        if self._exact is not None:
            return [(("triple", t), f) for t, f in
                    zip(self._exact._lower_triples, self._exact.lower_decompositions())]
        ws = [w for w, _ in self._parts()]
        lists = [c.lower_cases() for _, c in self._parts()]
        lists = [L if len(L) < 2 else sorted(L, key=lambda pf: _chi2(pf[1]), reverse=True) for L in lists]
        if math.prod(float(len(L)) for L in lists) > MAX_LOWER_CASES:
            # any common dataset gives a valid lower bound: keep each component's first datasets only
            per = max(1, int(MAX_LOWER_CASES ** (1.0 / len(lists))))
            lists = [L[:per] for L in lists]
        out, seen = [], set()
        combos = list(itertools.product(*lists))
        for combo in combos:
            pat = _combine_patterns([p for p, _ in combo])
            if pat is None:
                continue
            lab = "parallel lower: " + " + ".join(f"{w:g}*[{f.label}]" for w, (_, f) in zip(ws, combo))
            fam = mixture([(w, f) for w, (_, f) in zip(ws, combo)], label=lab)
            if len(combos) == 1:            # one dataset: nothing to de-duplicate (no law key needed)
                out.append((pat, fam))
                break
            k = (pat, law_key(fam))
            if k not in seen:
                seen.add(k)
                out.append((pat, fam))
        return out

    def lower_decompositions(self) -> list:
        """Mixtures of the components' Theorem-14 decompositions at a common dataset.

        Returns
        -------
        list of GparvFamily
            The lower bound is the maximum over the list.
        """
        return dedupe([f for _, f in self._lower_cases])

    def lower_cases(self) -> list:
        """The mixtures of :meth:`lower_decompositions` tagged with their common dataset's shape.

        Returns
        -------
        list of (tuple, GparvFamily)
            ``(pattern, family)`` pairs, one per entry of :meth:`lower_decompositions`.
        """
        return list(self._lower_cases)

    def decomposition(self, form: str = "simplified"):
        """Mixture of the components' decompositions (``"primary"``: of the block matrix, pair (0, 1)).

        Parameters
        ----------
        form : {"simplified", "primary", "asymptotic"}
            Which form (see :meth:`Mechanism.decomposition`).

        Returns
        -------
        Decomposition or GparvFamily
            The decomposition (a GPARV family in ε).
        """
        form = _validate.choice(form, "form", {"simplified", "primary", "asymptotic"})
        if form == "primary":
            return primary_decomposition(self.matrix(), 0, 1)
        if form == "asymptotic":
            parts = [(w, c.decomposition("asymptotic")) for w, c in self._parts()]
            return mixture(parts, label=f"{self.name} (asymptotic)")
        return self._upper[0]

    def describe(self) -> dict:
        """JSON-serialisable description: ``{"mechanism": name, "eps0": ..., <parameters>}``.

        Returns
        -------
        dict
            Plain JSON-serialisable mapping (ε0 in nats).
        """
        return {"mechanism": self.name, "eps0": self.eps0, "weights": list(self.weights),
                "components": [c.describe() for c in self.components]}


def parallel(components: Sequence[tuple[float, Mechanism]]) -> Parallel:
    r"""Parallel composition: each user runs :math:`R_i` w.p. :math:`w_i` and reports :math:`(i, R_i(x))`.

    Parameters
    ----------
    components : sequence of (float, Mechanism)
        Weights :math:`w_i \ge 0` summing to 1 (absolute tolerance 1e-9) and the component
        randomizers, which act on the same input domain.

    Returns
    -------
    Parallel
        ``eps0 = max_i eps0_i`` ([SCW] Theorems 10 and 11).

    Raises
    ------
    ParameterError
        ``'weights'`` if a weight is outside [0, 1] or the weights do not sum to 1;
        :class:`ComponentError` for a malformed entry, a non-mechanism, or components with
        different known domain sizes.

    Examples
    --------
    >>> import shuffleamp as sa
    >>> from shuffleamp.mechanisms import KRR, BLH
    >>> m = sa.parallel([(0.5, KRR(1.0, 10)), (0.5, BLH(1.0))])
    """
    return Parallel(components)


class Subsample(Parallel):
    r"""Poisson subsampling: ``parallel([(q, R), (1 - q, ⊥)])`` ([SCW] §4.6, Example 4.4).

    Build with :func:`subsample`. Non-participants send ⊥, which is shuffled with the reports,
    so the number of participants is visible.

    Attributes
    ----------
    q : float
        Sampling probability in (0, 1].
    mechanism : Mechanism
        The randomizer run by participants.
    """

    name = "subsample"
    #: The fields of Poisson subsampling in plans, specifications and sweeps.
    param_specs = (_COMPONENTS,
                   Parameter("q", "real", minimum=0.0, maximum=1.0, open_minimum=True,
                             doc="sampling probability (exactly one component)"))

    def __init__(self, mechanism: Mechanism, q: float):
        q = _validate.real("q", q, lo=0.0, hi=1.0, lo_open=True)
        if not isinstance(q, float):
            raise ParameterError("q", "must be a scalar")
        mech = _check_mechanism(1, mechanism)
        self.q = q
        self.mechanism = mech
        super().__init__([(q, mech), (1.0 - q, Silent(mech.domain))])

    def __repr__(self):
        return f"Subsample({self.mechanism!r}, q={self.q!r})"

    def describe(self) -> dict:
        """JSON-serialisable description: ``{"mechanism": name, "eps0": ..., <parameters>}``.

        Returns
        -------
        dict
            Plain JSON-serialisable mapping (ε0 in nats).
        """
        return {"mechanism": self.name, "eps0": self.eps0, "q": self.q,
                "components": [self.mechanism.describe()]}


def subsample(mechanism: Mechanism, q: float) -> Subsample:
    r"""Poisson subsampling in the shuffle model: each user reports w.p. ``q``, otherwise sends ⊥.

    Parameters
    ----------
    mechanism : Mechanism
        The randomizer of participating users.
    q : float
        Sampling probability in (0, 1].

    Returns
    -------
    Subsample
        Its GPARV is :math:`G_R` w.p. ``q`` and :math:`1 - e^\varepsilon` w.p. ``1 - q`` (upper and
        lower bounds alike; [SCW] Theorem 11).

    Raises
    ------
    ParameterError
        ``'q'`` outside (0, 1] or NaN; :class:`ComponentError` if ``mechanism`` is not a mechanism.
    """
    return Subsample(mechanism, q)


#: The composed mechanism classes by their ``mechanism=`` name (their ``param_specs`` declare the fields).
COMPOSED_CLASSES: dict[str, type] = {"joint": Joint, "parallel": Parallel, "subsample": Subsample}
