r"""Personalized populations: certified central ε per group for users with different randomizers.

A population is a list of groups ``(mechanism_g, n_g)``: ``n_g`` users run the local randomizer
``mechanism_g`` (for example k-RR with a common k and different ε0).  The guarantee is personalized:
for a *target* user of group g, the central (ε, δ) of the shuffled reports against every
neighbouring dataset that changes only that user's input (replace-one).  :func:`delta` and
:func:`epsilon` report it per group, and the worst group.

Usage: ``pop = shuffleamp.population([(KRR(eps0=0.5, k=10), 6 * 10**7), (KRR(eps0=2.0, k=10), 4 * 10**7)])``,
then ``shuffleamp.epsilon(pop, delta=1e-9)`` / ``shuffleamp.delta(pop, epsilon=...)`` (n is the
population's total; :func:`shuffleamp.bounds.epsilon` dispatches here), ``method="gdp"`` for the μ-GDP
estimate, :func:`everyone_at_max` for the sound everyone-at-the-largest-ε0 baseline; the accountant
(:mod:`shuffleamp.accounting`), plans (``mechanism = "population"``, ``groups = [...]``) and the command
line (``--mechanism population --group COUNT:NAME:key=value``) accept a population too.  This module
sits below :mod:`shuffleamp.bounds` (it needs only the exact evaluator, the exact count law, the mechanisms
and the numerics).

Derivation (derived here; it generalises Su–Cheng–Wang, Theorems 12–13 and Lemma 3)
-------------------------------------------------------------------------------------
**Conditions.**  All randomizers map into one finite output space :math:`\mathcal Y`, and there is
one probability vector :math:`\omega` on :math:`\mathcal Y` (the *common blanket*) with, for every
user i and input x, :math:`R_i(x) \ge \gamma_i\,\omega` pointwise for some :math:`\gamma_i \in (0, 1]`,
and :math:`\omega(y) = 0 \Rightarrow R_t(x)(y) = 0` for the target's inputs.

*Choice of ω.*  Any fixed ω satisfying this is sound; only tightness depends on it.  k-RR with a
common k: ω uniform and :math:`\gamma_g = k/(e^{\varepsilon_{0,g}} + k - 1)` (the optimal blanket of
every group, so nothing is lost).  Matrices on a common output space: ω ∝ the columnwise minimum over
all groups' rows, :math:`\omega(y) = \min_{g,x} R_g(x)(y) / Z`, and
:math:`\gamma_g = \min_{x, y:\,\omega(y)>0} R_g(x)(y)/\omega(y)`.  If the groups' own blankets differ
(e.g. one group never outputs some y that another does), this ω puts no mass there; a target whose
randomizer outputs such a y violates the condition and :func:`population` raises
:class:`~shuffleamp.errors.ParameterError` (field ``'groups'``): no common blanket, no bound here.

**Step 1 (decomposition).**  :math:`R_i(x) = \gamma_i\,\omega + (1-\gamma_i)\,LO_i(x)` with
:math:`LO_i(x) = (R_i(x) - \gamma_i\omega)/(1-\gamma_i) \ge 0`.  Each other user i ≠ t independently
outputs an ω-sample with probability γ_i (indicator :math:`B_i`), else a sample of
:math:`LO_i(x_i)`.

**Step 2 (reveal, joint convexity).**  Give the adversary :math:`(B_i)_{i\ne t}` and the
non-blanket outputs.  Both are independent of the target's input, so by joint convexity of the
hockey-stick divergence :math:`D_{e^\varepsilon}` the divergence of the shuffled output is at most
the average over :math:`M' = \sum_{i \ne t} B_i` of the divergence of the multiset
:math:`\{Y_t\} \cup \{Z_1,\dots,Z_{M'}\}`, :math:`Y_t \sim R_t(x^b)`, :math:`Z_j \sim \omega` i.i.d.
:math:`M'` is Poisson-binomial with parameters :math:`(\gamma_i)_{i \ne t}`.

**Step 3 (histogram likelihood ratio).**  With m ω-samples and one target sample, the histogram h
of the m+1 values has :math:`P^b(h) = \mathrm{Mult}_{m+1}(h;\omega)\cdot\frac{1}{m+1}\sum_{y}h_y
R_t(x^b)(y)/\omega(y)`, since :math:`\mathrm{Mult}_m(h-e_y) = \mathrm{Mult}_{m+1}(h)\,h_y/((m+1)\omega(y))`.
Hence (Theorem 12 with m+1 i.i.d. ω-samples)

.. math::

    g(m) := D_{e^\varepsilon}(P^0\|P^1) = \frac{1}{m+1} E\Big[\Big(\sum_{i=1}^{m+1} L_i\Big)_+\Big],
    \qquad L = \frac{R_t(x^0)(Y) - e^\varepsilon R_t(x^1)(Y)}{\omega(Y)},\ Y \sim \omega,

    \delta_t(\varepsilon) \le E_{M'}[g(M')] .

:math:`g` is non-increasing in m (adding an independent ω-sample is a post-processing) and
:math:`g(m) \le E[L_+]`.  The bound is the maximum over the target's ordered input pairs.

**Reduction to the homogeneous bound.**  If all other users share one γ, :math:`M' \sim
\mathrm{Bin}(N, \gamma)`, and :math:`P(\mathrm{Bin}(N+1,\gamma)=m)\,m/((N+1)\gamma) =
P(\mathrm{Bin}(N,\gamma)=m-1)` gives :math:`E[g(M')] = \frac{1}{N+1}E[(\sum_{i=1}^{N+1}G_i)_+]` with
:math:`G = L/\gamma` w.p. γ (γω-distributed Y) and 0 w.p. 1-γ: Theorem 13 / Lemma 3 exactly (for k-RR
the GPARV of the blanket decomposition).  This case is evaluated by
:func:`shuffleamp.exact.delta_exact` on that GPARV; it covers one group and all-groups-equal.

**Step 4 (Bromwich form).**  With :math:`E[S_+] = \frac{1}{2\pi i}\int_{\theta-i\infty}^{\theta+i\infty}
M_S(z)z^{-2}dz` (θ > 0) and the PGF :math:`P(u) = \prod_g (1-\gamma_g+\gamma_g u)^{N_g}` of M'
(:math:`N_g` = other users in group g),

.. math::

    \delta_t \le \frac{1}{2\pi i}\int \frac{\Phi(M_L(z))}{z^2}dz,\quad
    \Phi(w) = E\Big[\frac{w^{M'+1}}{M'+1}\Big] = \int_0^1 w\,P(sw)\,ds
    = \sum_m P(M'=m)\frac{w^{m+1}}{m+1}.

Φ has non-negative Taylor coefficients, so :math:`|\Phi(M_L(z))| \le \Phi(M_L(\operatorname{Re} z))`
and :math:`|\Phi(w)| \le \Phi(|w|)`: these replace :math:`|M^n| \le M(\operatorname{Re}z)^n` in every
error bound of :mod:`shuffleamp.exact` (quadrature on Bernstein ellipses, skipped cells, and the
Fejér tail bound, which holds for the mixture law with :math:`|\varphi| \le \Phi(W|\psi|)/\Phi(W)`),
and :math:`s_+ \le e^{\theta s}/(e\theta)` gives the Chernoff bound :math:`\Phi(M_L(\theta))/(e\theta)`.
The evaluator is the library's one Bromwich integral (compiled, ``kernels.bromwich_population``, reached through
:func:`shuffleamp.exact._bromwich`), with this outer function's node values and modulus bounds formed in the
kernel.

**Step 5 (the s-integral, certified).**  M' is confined to a range :math:`R = [m_{lo}, m_{hi}]` by
Bernstein's inequality, :math:`P(|M'-EM'| \ge t) \le 2e^{-t^2/(2(\sigma^2+t/3))}`, with
:math:`P(M'\notin R) \le` ``TAIL_PROB``; the dropped mass is charged as
:math:`P(M'\notin R)\,E[L_+]` (valid since :math:`0 \le g \le E[L_+]`).  Two representations of Φ:

* *Poisson-binomial window* (narrow R): the exact pmf of M' on R (convolution of the groups'
  binomial windows), :math:`\Phi_R(w) = \sum_{m\in R} p_m w^{m+1}/(m+1)`; when R ends below
  ``DIRECT_MAX`` the mixture :math:`\sum_m p_m g(m)` is summed directly with
  :func:`~shuffleamp.exact.delta_exact` for each :math:`g(m)` (which enumerates at small m).
* *Gauss–Laguerre rule* (wide R, large N): :math:`1/c = \int_0^\infty e^{-cx}dx` with
  :math:`c = m+1`; with :math:`x = y/c_{lo}` (:math:`c_{lo} = m_{lo}+1`) and p Gauss–Laguerre nodes
  :math:`(y_k, W_k)`, :math:`F(c) = \frac{c}{c_{lo}}\sum_k W_k e^{y_k(1-c/c_{lo})}` is the
  Gauss–Laguerre value of :math:`\int_0^\infty e^{-y}f(y)dy = 1` for
  :math:`f(y) = \alpha e^{a y}`, :math:`\alpha = c/c_{lo}`, :math:`a = 1-\alpha \le 0` on R.  Its
  error is :math:`\frac{(p!)^2}{(2p)!}f^{(2p)}(\xi) = \frac{(p!)^2}{(2p)!}\alpha a^{2p}e^{a\xi} \in
  [0, \frac{(p!)^2}{(2p)!}(1+r)r^{2p}]` with :math:`r = (c_{hi}-c_{lo})/c_{lo}` (Abramowitz–Stegun
  25.4.45), so :math:`F \ge 1-\eta` on R.  Scaling the weights by :math:`\kappa = 1/(1-\eta)` gives
  :math:`\tilde\Phi(w) = w\sum_k c_k s_k P(s_k w) = \sum_m p_m \kappa F(m+1) w^{m+1}/(m+1)`
  (:math:`s_k = e^{-x_k}`, :math:`c_k = \kappa W_k e^{y_k}/c_{lo}`) with :math:`\kappa F \ge 1` on
  R and :math:`\ge 0` everywhere, hence :math:`E[g(M')] \le \frac{1}{2\pi i}\int\tilde\Phi(M_L)z^{-2}dz
  + P(M'\notin R)E[L_+]`; the loss is at most η (≤ ``RULE_ETA``).  Cost per frequency: p × groups.

The node values :math:`\tilde\Phi(M_L(\theta+it))/\tilde\Phi(M_L(\theta))` are formed from
:math:`\log(w/W)` (accurate ``log1p``/``expm1`` forms) as
:math:`e^{v}\sum_k \hat\omega_k\prod_g(1+b_{kg}(e^v-1))^{N_g}`, the powers as
``exp(N Log(.))`` with the principal logarithm (exact for integer N; groups of equal N share one logarithm
of the product of their factors, exact modulo :math:`2\pi i N`, which the exponential does not see).  As in
:mod:`shuffleamp.exact`, the rounding part of the error is a first-order *estimate*; everything else is
certified.

*Every quadrature node is a node of* :math:`\tilde\Phi(M_L(z))/z^2`.  The error bounds above (Bernstein
ellipses, skipped cells, tail) bound the integral of :math:`\tilde\Phi(M_L(z))/z^2`; they certify the
computed value only if the integrated node values are that function's.  The population law therefore has
its own compiled nodes (``kernels.population_nodes``, the routine ``kernels.bromwich_population`` integrates;
``_PopLaw.panel_nodes`` as a hook); the compiled node formation of the n-fold sum,
:math:`M_L(z)^{n}/n`, is a different integrand: with the mean count :math:`n = E M' + 1` it integrates to
:math:`E[(\sum_{i \le n} L_i)_+]/n`, the homogeneous value at the mean count, not the mixture
:math:`E[g(M')]`, and no error term accounts for the difference (measured: 8e-4 relative *below* the mixture
at n = 1000, 1.1e-4 at n = 1e4, for two k-RR groups).  The nodes are
formed one at a time in the kernel (memory: the groups x rule nodes table of the outer function only).  Before
integrating, the Chernoff bound
:math:`\tilde\Phi(M_L(\theta))/(e\theta)` (valid for every θ > 0, since :math:`s_+ \le e^{\theta s}/(e\theta)`
termwise and the weights :math:`p_m\kappa F(m+1) \ge 0`) is returned when it is below the tail charge
:math:`P(M' \notin R)E[L_+]`: the answer is then within a factor 2 of the charge, whatever the integral.

Gaussian groups (derived here)
------------------------------
Groups ``(Gaussian(sigma=σ_g, sensitivity=Δ), n_g)`` on one input interval.  A target of group g uses its own
blanket as the common ω: :math:`\omega_t = m_t/\gamma_t`, :math:`m_t = \min(\varphi_{\sigma_t}(\cdot),
\varphi_{\sigma_t}(\cdot - \Delta))`, :math:`\gamma_t = 2\Phi(-\Delta/2\sigma_t)`; another user of σ_h has
:math:`R_h(x) \ge \gamma_h\omega_t` with :func:`shuffleamp.gaussian.population_gammas` (0 when
:math:`\sigma_h < \sigma_t`: such users are never blanket draws, which Step 1 allows).  With
:math:`L = \gamma_t G`, G the target's privacy-amplification variable of :mod:`shuffleamp.gaussian` (Y ~ ω_t), Steps
1-4 above hold unchanged, and three certified reductions make the value computable and tight:

*Truncation rungs.*  For every depth z the spread truncated law of :mod:`shuffleamp.gaussian` (cut at
:math:`w_K = \Delta/2\sigma_t + z`, cells of the single round's grid) gives
:math:`E[g(M')] \le E[\bar g_z(M')] + \tau(z)`: for each m, :math:`(\sum_{i \le m+1} L_i)_+ \le
(\sum_i \min(L_i, L_K))_+ + \sum_i (L_i - L_K)_+`, and with the factor :math:`1/(m+1)` the second term has
expectation :math:`E[(L - L_K)_+] = \gamma_t E[(G - G_K)_+]` under :math:`Y \sim \omega_t`, which is
:math:`\int m_t (G - G_K)_+ = \int(R_0 - A_K R_\Delta)_+ = \tau(z)` whatever m is, hence also after averaging
over M'; the spread replaces each cell by a mean-preserving two-point law at every ε at once, so
:math:`\bar g_z(m) \ge g_z(m)` for every m (convex order, kept by sums of independent copies).  So
:math:`\delta_z(\varepsilon) + \tau(z)` is a certified upper bound for every z, and the minimum over the rungs
evaluated is one.  Which rungs (:func:`shuffleamp.gaussian.population_delta_upper`): as for the single round, the
charge is a small part (:data:`~shuffleamp.gaussian.FIRST_FRACTION`) of a guide (the target δ of an ε query; for
a δ query the certified lower δ and the local profile, then each value found), and a shallower rung when an
evaluation's own error bound dominates (the deep rungs' Bromwich error bounds grow with their largest log-ratio).
The choice changes only tightness and cost; a rung whose integral would exceed its work cap is skipped.

*Homogeneous reduction.*  A user with :math:`R_h \ge \gamma_h\omega_t` also has :math:`R_h \ge \gamma'\omega_t`
for every :math:`\gamma' \le \gamma_h`, so counting every other user of :math:`\gamma_h \ge \gamma'` at
:math:`\gamma'` and the rest at 0 is another instance of Steps 1-3; with one blanket mass it is Theorem 13
exactly ("Reduction to the homogeneous bound"), evaluated like the single round.  In exact arithmetic it is not
below the heterogeneous value (its M' is stochastically smaller and g is non-increasing), but its evaluation is
often tighter; each rung takes the smaller of the two certified values (γ' maximising the expected count
:math:`\gamma' \cdot \#\{h: \gamma_h \ge \gamma'\}`).

*Cross blankets* (derived here).  Steps 1-3 hold for *any* probability density ω with :math:`R_i(x) \ge
\gamma_i\omega` for every other user (γ_i = 0 allowed: such a user is never a blanket draw) and the target's laws
absolutely continuous w.r.t. ω; nothing ties ω to the target's own randomizer.  For every σ_h > σ_t present among
the other users take :math:`\omega_h = m_h/\gamma_h`, every other user at its blanket mass w.r.t. ω_h
(:func:`shuffleamp.gaussian.population_gammas` with σ_h in place of σ_t: users of σ ≥ σ_h count, the others are
0).  The target's variable :math:`L = (R_0 - e^\varepsilon R_\Delta)/\omega_h` under :math:`Y \sim \omega_h` is
then *bounded*: :math:`\varphi_{\sigma_t}/\varphi_{\sigma_h} \to 0` in both tails, so no truncation is charged,
and the spread law of :func:`shuffleamp.gaussian.population_cross_law` (two points per cell with the cell's exact
mass and mean, a convex-order upper bound at that ε) is evaluated by the same ``_delta_law`` as the rungs (with
the homogeneous reduction alongside when the others have several masses).  This is what the wider users give
that the target's own blanket cannot: in the tails, where a narrow target's report is most revealing, their
density is far larger than the target's.  Measured (δ = 1e-6, Δ = 1): 5000 users at σ = 0.5 and 5000 at σ = 1,
the σ = 0.5 target's upper ε 2.096 (own blanket) -> 0.102 (the σ = 1 blanket); 5000 + 5000 at σ = 0.5, 0.6:
1.98 -> 0.215; at n = 2 (σ = 0.5 with one σ = 1 user, ε = 1) δ 0.481 -> 0.338 against the integrated truth 0.321.

*Sub-populations* (derived here).  For any set S of users containing the target, the reports of the users outside
S are independent of the target's input and have the same law under both datasets, so for fixed inputs the whole
shuffled output is a randomized post-processing of the shuffled output of S (draw the others' reports, add them
to the multiset, shuffle); hence every certified bound for S alone is one for the population (post-processing
inequality, then the maximum over the inputs of S's users).  The cross blankets above are instances (S = the
target and the users of σ ≥ σ_h: the narrower users get blanket mass 0, which is the same as leaving them out);
S = the users of the target's mechanism is the homogeneous bound with their number of users, which
:func:`shuffleamp.epsilon` and :func:`shuffleamp.delta` add through the single mechanism's evaluators
(:class:`_Subpopulations`, Gaussian and (ε_i, δ_i) groups).  For a Gaussian target of the widest σ that set is
exactly what its own bound counts (narrower users have blanket mass 0 w.r.t. its blanket), so from
:data:`SUBPOPULATION_REPLACES_MIN_N` such users the single round's ladder replaces the population's rungs (and the
accountant profiles it by the single round's family); a population whose groups all share one mechanism *is* that
mechanism at n users, and its bracket is intersected with that mechanism's (upper and lower).  Which bound wins
(measured): the cross blanket of the widest group for every target below the widest σ; the single round at the
users of its σ for the widest group.  Lower bounds do not transfer from a proper subset S (the others can only add
privacy).

*Mixed output spaces* (derived here).  Gaussian groups next to groups of one finite alphabet (k-RR, matrices): a
Gaussian report is almost surely not a symbol of the alphabet, so the shuffled multiset determines, and is
determined by, the pair (multiset of the real-valued reports, multiset of the symbols).  For a target in one space
the other space's multiset is independent of the target's input with the same law under both datasets, so the
target's divergence is at most that of its own space's population (sub-populations) and at least it (its own
space's multiset is a post-processing of the whole output): the bracket of the space's own population is the
target's, upper and lower, single round and profiles (kind "mixed", :attr:`Population.parts`).  Finite alphabets of
different sizes are not split (a symbol of one may be a symbol of the other: the lower bounds would not transfer).

*Local profile.*  The shuffled output is a post-processing of the target's own report, so the local Gaussian
mechanism's exact profile (Balle–Wang, ICML 2018, Theorem 8) is an upper bound too; the reported upper is the
minimum, and an ε query searches below the local ε.

*Lower.*  The dataset (0 | Δ; every other user at Δ): the count of reports above a threshold t (below t when t is
below Δ/2: the same post-processing, n minus the other count, whose probabilities are the rare side's and keep their
relative accuracy; counting above a far threshold lost the complements of probabilities near 1 and overstated the
lower) is a post-processing; the others' count is a sum of independent binomials (one per σ), its law exact on Bernstein
windows (mass outside, at most 1e-40 per group, subtracted times :math:`e^\varepsilon`: it can only move mass
from :math:`P^1` to bins that were dropped) and convolved directly, so every entry carries a *relative* rounding
bound (non-negative terms) and :math:`\sum_c ((1-r)P^0_c - e^\varepsilon(1+r)P^1_c)_+` stays a lower bound at
every ε (an absolute FFT error times :math:`e^\varepsilon` erased it at large ε).  Thresholds at fixed places
and at the target's critical cut.  *Multi-level score* (derived here): the same dataset, each report mapped to an
integer level :math:`f(y) \in \{0, \dots, K\}` (:func:`shuffleamp.gaussian.population_score_levels`: the rounded
linear score :math:`(\varphi_{\sigma_t}(y) - \varphi_{\sigma_t}(y-\Delta))_+/\Lambda(y)`, Λ the others' intensity,
the asymptotically most informative linear statistic of the pair); the sum T of the levels is a post-processing of the
shuffled reports, the others' part a sum of independent lattice variables whose law on its Bernstein window is one
inverse FFT of the product of the groups' characteristic functions (rounding η per bin and the aliased tail, plus the
level probabilities' rounding as total variation, subtracted times :math:`1 + e^\varepsilon`).  It keeps more than one
threshold where wider users cover the target's tails (5000 + 5000 users at σ = 0.5, 1, δ = 1e-6: lower ε 0.063 ->
0.071; 9000 + 1000: 0.094 -> 0.112; both orderings of the pair), and is checked against an exact mpmath convolution of the same levels
(``tests/test_gaussian_population_score.py``).  The accountant keeps the threshold count for totals (its relative
rounding bounds compose; the score's absolute ones do not).  When every user has the target's σ the population is the
single round, and its quantised concrete pairs (:func:`shuffleamp.gaussian.lower_layouts`) are added.

*Accountant.*  Each group's profile is the minimum above at every ε of the grid (two rungs per point), and the
lower total composes the threshold count of largest total variation
(:func:`shuffleamp.gaussian.population_threshold_pair`: :math:`U \le P^0`, :math:`L \ge P^1` entrywise, the
relative rounding and the dropped tail moved against the pair).

*Which side is loose* (measured; ``bench/results_population.md``).  One σ: the population is the single round (a
shared mechanism), and at n = 2 the integration oracle puts the lower within 1 % of the truth and the upper 1.27x
above it in δ (σ = 0.5, ε = 2): the upper side.  Different σ, a target below the widest σ: the cross blanket of the
wider users brings the upper to within 5-15 % of the integrated truth in δ at n = 2 (with its own blanket it was
1.4-1.6x above), and at n = 1e4 the bracket of the σ = 0.5 target among 5000 users of σ = 1 is [0.0711, 0.1019]
in ε at δ = 1e-6 (the Gaussian limit of the pair's privacy loss, :math:`\chi^2 = \int (p_0 - p_1)^2/\Lambda`, puts
the truth near 0.1: the lower side).  The widest group's bracket is the single round's at its own users (its upper
side, module docstring of :mod:`shuffleamp.gaussian`), with a lower from the threshold counts that the narrower
users' reports blur (5000 + 5000 at σ = 0.5, 1: [0.0468, 0.0875]).

Everyone at the largest ε0 (derived here; k-RR populations)
-----------------------------------------------------------
**Mixture identity.**  Let :math:`\varepsilon_a \le \varepsilon_b`, :math:`E = e^{\varepsilon}`, and
:math:`R_\varepsilon(x)(y) = (E[y=x] + [y\ne x])/(E+k-1)` (k-RR).  With
:math:`\lambda = \frac{(E_a-1)/(E_a+k-1)}{(E_b-1)/(E_b+k-1)} \in (0, 1]` (:func:`mixture_weight`;
:math:`(E-1)/(E+k-1)` increases with E),

.. math:: R_{\varepsilon_a}(x) = \lambda\,R_{\varepsilon_b}(x) + (1-\lambda)\,U_k,

since at :math:`y \ne x` the right side is :math:`\lambda/(E_b+k-1) + (1-\lambda)/k = 1/k -
\lambda(E_b-1)/(k(E_b+k-1)) = 1/k - (E_a-1)/(k(E_a+k-1)) = 1/(E_a+k-1)`, and both sides are probability
vectors.  Moreover :math:`U_k = \frac1k\sum_z R_{\varepsilon_b}(z)`.  So a group-g user with input x
reports exactly as a user at the largest ε0 :math:`\varepsilon_b` whose input is replaced, with
probability :math:`1-\lambda_g` and independently of everything else, by a uniform value Z.

**Bound.**  Draw every user's replacement coin and Z first (data-independent randomness, the same under
both neighbouring datasets).  Given them, the shuffled output is that of the homogeneous population
at :math:`\varepsilon_b` (n users) on a random dataset :math:`\tilde D`; if the target was replaced the
two datasets coincide (divergence 0), otherwise they are neighbouring.  Joint convexity of the
hockey-stick divergence gives, for a target of group g,

.. math:: \delta_g(\varepsilon) \le \lambda_g\,\delta^*_{\varepsilon_b, n}(\varepsilon),

with :math:`\delta^*_{\varepsilon_b,n}` the worst case over every neighbouring dataset pair of the
homogeneous mechanism.  Any certified upper bound on it may be used: for binary RR the exact count law
(:mod:`shuffleamp.exact_count`), for k >= 3 the ordinary certified bound of :func:`shuffleamp.epsilon`.
At ε given, each group's upper is the minimum of the personalized bound above and
:math:`\lambda_g\delta^*`; at δ given, of the personalized ε and the ε of :math:`\delta^*` at
:math:`\delta/\lambda_g` (evaluated for the groups at the largest ε0 and the
:data:`REFERENCE_GROUPS` groups with the largest personalized ε).  Both are certified, so is the
minimum.  (Applying each user's channel after the shuffle is *not* a valid argument: the shuffled
reports cannot be matched to their users' channels; the coins above avoid that step.)

Groups of (ε_i, δ_i)-LDP randomizers (derived here)
---------------------------------------------------
A group ``(ApproximateLDP(eps0=ε_g, delta0=δ_g, domain=d_g), n_g)`` stands for n_g users who all run one
randomizer :math:`R_g`, unknown except that it is :math:`(\varepsilon_g, \delta_g)`-LDP; the groups'
randomizers are otherwise unrelated.  The bound is the worst case over every such choice and every dataset.

**Upper.**  Fix a target of group g.  The other groups' reports are independent of the target's input and
have the same law under both neighbouring datasets, and the shuffled output of all n users is a function of
the shuffled reports of group g and the multiset of the other groups' reports.  By the post-processing
inequality and joint convexity of the hockey-stick divergence (condition on the other groups' reports), the
target's δ(ε) is at most that of group g's :math:`n_g` shuffled reports alone: a homogeneous population of
:math:`n_g` users of one :math:`(\varepsilon_g, \delta_g)`-LDP randomizer, bounded by
:class:`~shuffleamp.gaussian.ApproximateLDP` at :math:`n_g` (module docstring of :mod:`shuffleamp.gaussian`):
the smaller of the standard clone at :math:`\varepsilon_g' = \varepsilon_g - \log(1-\beta_g)` with
:math:`n_g` users plus :math:`\beta_g = \min(n_g, d_g-1)\,\delta_g`, evaluated here as Theorem 13 with the
clone law (the binary-RR target law at :math:`\varepsilon_g'` and blanket mass
:math:`\gamma = e^{-\varepsilon_g'}`: the GPARV of the standard clone decomposition, atom for atom), with
m ≤ :math:`n_g` of the group's users kept and the charge :math:`\beta_m` ("Fewer users" there: the same
choices of m), and the local :math:`(\varepsilon_g, \delta_g)` profile.

**No amplification across groups, and why that is the truth.**  Another group may output a constant (a
constant randomizer is (0, 0)-LDP, hence :math:`(\varepsilon_h, \delta_h)`-LDP for every
:math:`\varepsilon_h, \delta_h`); then the shuffled output is group g's shuffled reports plus a known
multiset, so the worst case over the class *is* the worst case of group g alone with :math:`n_g` users.  A
bound that lets the other groups' users hide a target (a clone of the target's report inside another
user's report, as in the μ-GDP value of Chen–Cao–Ge) needs a relation between different groups' randomizers
that separate LDP constraints do not give (for example a common blanket, as for the k-RR and matrix
populations above).  ``tests/test_approximate_ldp.py`` enumerates such a population.

**Lower.**  Concrete members of the class, the other groups constant, evaluated on the Theorem-14 datasets
(the other users of the group at one common input; certified lower evaluators) and, up to
:data:`APPROX_SCORE_MAX_N` users, also by the binary-RR population lower bound above (one group of
:math:`n_g` users, mixed datasets; each value is the exact divergence of a concrete dataset pair,
certified): (i) group g runs binary randomized response at
:math:`\varepsilon_1 = \log((e^{\varepsilon_g}+\delta_g)/(1-\delta_g))`, which is
:math:`(\varepsilon_g, \delta_g)`-LDP (both its hockey-stick divergences at :math:`e^{\varepsilon_g}` equal
:math:`\delta_g`), or (3 inputs or more) 3-RR at :math:`\log((e^{\varepsilon_g}+2\delta_g)/(1-\delta_g))`
(Theorem-14 datasets only; module docstring of :mod:`shuffleamp.gaussian`, "Lower bound"); (ii) when the
domain has at least 3 inputs (4 for mixed datasets) and
:math:`\delta_g > 0`, the randomizer that reveals its input with probability :math:`\delta_g`:
:math:`R(x) = \delta_g\,\mathbb 1_{r_x} + (1-\delta_g)B(x)` with distinct symbols :math:`r_x` and
:math:`B` binary randomized response at :math:`\varepsilon_g` on the target's inputs :math:`x^0, x^1`,
extended by :math:`B(x_2) = B(x^1)`, :math:`B(x_3) = B(x^0)` (the Theorem-14 datasets need only
:math:`x_2`: 3 inputs).  It is
:math:`(\varepsilon_g, \delta_g)`-LDP: :math:`R(x)(E) \le \delta_g + (1-\delta_g)e^{\varepsilon_g}B(x')(E)
\le \delta_g + e^{\varepsilon_g}R(x')(E)`.  Take a binary-RR dataset pair of the lower bound above (target
:math:`x^0` vs :math:`x^1`, each other user of the group holding bit 1 or 0) and realise bit 1 by
:math:`x_2`, bit 0 by :math:`x_3`.  The symbol :math:`r_{x^0}` occurs only under :math:`D_0` (probability
:math:`\delta_g`), :math:`r_{x^1}` only under :math:`D_1` (it adds nothing to :math:`(P_0 - e^\varepsilon
P_1)_+`), and the other users' symbols have the same law under both datasets and show who left the
binary-RR pool; so the divergence is exactly :math:`\delta_g + (1-\delta_g)E_J[D_B(\text{the pair without
the } J \text{ revealing users})]`, and removing users can only raise a concrete pair's divergence (adding
independent reports of the same law under both datasets is a post-processing), so it is at least
:math:`\delta_g + (1-\delta_g)D_B`, :math:`D_B` the binary-RR pair's divergence.  At :math:`n_g = 1` this is
the local profile: the bracket closes.

**Checks.**  At :math:`\delta_g = 0` a group's bracket is the pure :math:`\varepsilon_g`-LDP class bound
(standard clone with :math:`n_g` users, binary RR); one group is :class:`~shuffleamp.gaussian.ApproximateLDP`
at n; the upper is non-decreasing in each :math:`\delta_g` (:math:`\beta_g`, :math:`\varepsilon_g'` and the
local profile are); ε at δ needs :math:`\delta \ge \delta_g` for every group (a randomizer may reveal its
input with probability :math:`\delta_g`: refused, naming ``delta``).  The accountant uses each group's
upper profile (swap-symmetric, certified at every ε ≥ 0, so its arguments B–D apply) and the concrete
binary-RR pair (i) for the lower total.

Exact count law of heterogeneous binary RR (derived here)
---------------------------------------------------------
For k = 2 the shuffled output is equivalent to the count of reported ones (Cheu et al.), so a dataset
matters only through the number :math:`m_h` of ones among the other users of each group h, and
:math:`C = B_t + \sum_h \mathrm{Bin}(m_h, p_h) + \mathrm{Bin}(N_h - m_h, 1-p_h)` (the others'
count is Poisson-binomial; :func:`count_laws`).  Flipping every bit maps (target 1 vs 0, m) to
(0 vs 1, N - m) and C to n - C, so the worst case over every dataset and both orderings is the
maximum of the ordering "target holds 0 vs 1" over the :math:`\prod_h(N_h+1)` vectors m.
:func:`delta_binary_rr_population` enumerates them (small populations; :func:`epsilon` and
:func:`delta` use it where it is cheap, making those brackets exact up to rounding); at large n the
lower bound evaluates concrete vectors m (module section below).

Lower bound (derived here; the analogue of Theorem 14)
------------------------------------------------------
Every group's answer has a certified lower bound: the hockey-stick divergence of one *concrete*
neighbouring pair (the target changes :math:`x^0 \to x^1`, every other user of group g holds a fixed
input :math:`c_g`), or of a post-processing of it.  Either is at most the worst-case divergence over
neighbouring datasets (post-processing inequality), hence a valid lower bound on the target's δ(ε),
and ε-lower from it is conservative as in :func:`shuffleamp.epsilon`.

*Score statistic (any n, any population).*  Post-process the shuffled multiset to the integer
:math:`T = \sum_{\text{outputs } y} f(y)` with :math:`f: \mathcal Y \to \{-1, 0, 1\}`.  Then
:math:`T = f(Y_t) + \sum_g \sum_{i=1}^{N_g} f(Y_i)`, a sum of independent three-point variables, with
characteristic function :math:`\prod_g (1 + u_g(e^{it}-1) + d_g(e^{-it}-1))^{N_g}` for the others
(:math:`u_g, d_g = P(f = \pm 1)` under :math:`R_g(c_g)`).  Its law on the Bernstein window
(:math:`|f - Ef| \le 2`, tail ``LOWER_TAIL``) is one inverse real FFT of that product (cost
O(groups · √n log n), independent of ε: cached per target), and

.. math::

    \delta_{lower}(\varepsilon) = \sum_{t \in \text{window}}
        \big(P^0(T=t) - e^\varepsilon P^1(T=t) - (1+e^\varepsilon)\eta\big)_+ - (1+e^\varepsilon)\tau,

with η the per-bin rounding bound of the FFT and of the characteristic function (first-order, as in
:mod:`shuffleamp.exact`) and τ the aliased tail mass; dropping bins only lowers the sum.

* k-RR, k ≥ 3: :math:`x^0 = 0`, :math:`x^1 = 1`, all others hold 2 (the Theorem-14 dataset), and
  :math:`f = [y=0] - [y=1]`: each other user contributes ±1 w.p. :math:`p_g = 1/(e^{\varepsilon_{0,g}}+k-1)`
  each.  At large n the full histogram's likelihood ratio depends on the data essentially through
  :math:`h_0 - h_1`, so little is lost (measured: within 1e-5 relative of the upper bound at n = 10^8).
* k-RR, k = 2: :math:`f = [y=0]`: T is the whole histogram, so the value is the exact divergence of the
  pair, for the datasets "every other user holds b except j users of group h, who hold 1 - b" (b = 0, 1;
  j in :data:`BINARY_FLIPS`; h the target's group and the groups of smallest and largest ε0): the worst
  datasets of small populations (enumerated) are of this mixed kind.
* Matrix populations: over the target's ordered input pairs (a, b), :math:`f = \operatorname{sign}(R_t(a)
  - R_t(b))` and each group's :math:`c_g` minimises the variance of f; the two pairs with the largest
  signal-to-noise ratio :math:`\|R_t(a)-R_t(b)\|_1 / \sqrt{\sum_g N_g \operatorname{Var} f}` are evaluated.

*Full histogram (k-RR, k ≥ 3, small n).*  For the Theorem-14 dataset, an other user of group g outputs
2 w.p. :math:`E_g p_g` and otherwise a value uniform on the k-1 others, *whatever g is*.  So with
:math:`J` = number of other users not outputting 2 (Poisson-binomial) and :math:`h_0, h_1` the counts of
outputs 0 and 1 among the :math:`j` non-2 outputs,

.. math::

    P^b = p_t\,T_j(h_0,h_1)\Big[P(J=j-1)\frac{(k-1)(j+(E_t-1)h_b)}{j} + P(J=j)\Big]

summed over the other outputs, where :math:`T_j` is the trinomial law of :math:`(h_0,h_1)` among j
uniform draws.  The exact divergence :math:`\sum_{j,h_0,h_1}(P^0-e^\varepsilon P^1)_+` is summed when
it costs at most ``LOWER_MAX_WORK`` terms; the larger of the two lower bounds is reported.

References
----------
Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (arXiv:2504.07414): Theorems 12–14, Lemma 3.
Balle, Bell, Gascón, Nissim, "The Privacy Blanket of the Shuffle Model", CRYPTO 2019 (blanket).
Cheu, Smith, Ullman, Zeber, Zhilyaev, "Distributed Differential Privacy via Shuffling", EUROCRYPT 2019
(the shuffled binary output is its count).
Chen, Cao, Ge, "A Generalized Shuffle Framework for Privacy Amplification", AAAI 2024
(arXiv:2312.14388): the μ-GDP comparison value (asymptotic, not a bound).
Abramowitz, Stegun, "Handbook of Mathematical Functions", 25.4.45 (Gauss–Laguerre remainder).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.polynomial.laguerre import laggauss
from scipy.special import gammaln
from scipy.stats import binom

from . import exact as _exact
from ._ext import kernels
from . import _validate
from ._numerics import LogMgf, epsilon_for_delta
from .errors import ParameterError, ResourceLimitError
from .evaluate import EVAL_EPSILON_MAX
from .gparv import Gparv
from .results import BoundResult, GroupResult, PopulationResult  # result types live in results (one home)

#: Probability mass of M' (blanket count of the other users) left outside the certified range R.
TAIL_PROB = 1e-80
#: Sum the mixture sum_m P(M'=m) g(m) directly when the rule is not available and R ends below this
#: (there each g(m) is enumerated exactly by :func:`shuffleamp.exact.delta_exact`).
DIRECT_MAX = 1400
#: Use the exact Poisson-binomial window (instead of the Gauss–Laguerre rule) up to this many points.
PMF_MAX = 4000
#: Largest admissible loss of the Gauss–Laguerre rule (relative, certified).
RULE_ETA = 1e-10
#: Largest number of Gauss–Laguerre nodes tried.
RULE_MAX_NODES = 64
_DBL_EPS = float(np.finfo(np.float64).eps)


# ============================================================================ model
@dataclass(frozen=True)
class Group:
    """One group of a population: ``n`` users running ``mechanism``.

    Attributes
    ----------
    mechanism : Mechanism
        Local randomizer of the group (a :mod:`shuffleamp.mechanisms` object).
    n : int
        Number of users, >= 1.
    gamma : float
        Blanket mass γ_g w.r.t. the population's common blanket ω.
    """

    mechanism: Any
    n: int
    gamma: float


@dataclass(frozen=True)
class Population:
    """A heterogeneous population with a common blanket (see the module docstring).

    Build it with :func:`population`.

    Attributes
    ----------
    groups : tuple of Group
        The groups, in the given order.
    kind : {"krr", "matrix", "gaussian", "approx", "mixed"}
        k-RR groups with a common k (closed forms, any k), matrix randomizers on a common
        output space, Gaussian groups on one input interval, (ε_i, δ_i)-LDP classes
        (:class:`~shuffleamp.gaussian.ApproximateLDP` groups, each bounded within its own group), or groups of
        several output spaces, each bounded within the groups of its own space (:attr:`parts`).
    k : int or None
        The common k of a k-RR population.
    omega : ndarray of float64, shape (Y,) or None
        Common blanket of a matrix population (None for k-RR: uniform on [k]).
    parts : tuple of (Population, tuple of int)
        Kind "mixed": the population of each output space and the indices of its groups here.
    """

    groups: tuple
    kind: str
    k: int | None = None
    omega: np.ndarray | None = field(default=None, repr=False)
    parts: tuple = field(default=(), repr=False)

    @property
    def n(self) -> int:
        """Total number of users."""
        return int(sum(g.n for g in self.groups))

    @property
    def eps0_max(self) -> float:
        """Largest ε0 present."""
        return max(float(g.mechanism.eps0) for g in self.groups)

    @property
    def eps0(self) -> float:
        """Largest ε0 present: every user's report is ε0-LDP at this value (so δ(ε) = 0 for ε >= it)."""
        return self.eps0_max

    @property
    def charge_is_additive(self) -> bool:
        """ApproximateLDP groups: the upper bound carries the mass of the infinite-loss atoms of the reduction
        (the accountant bounds such a population's rounds through each group's class instead,
        :mod:`shuffleamp.accounting` argument I)."""
        return self.kind == "approx"

    @property
    def delta_charge(self) -> float:
        r"""Largest charge :math:`\beta_g = \min(n_g, d_g-1)\,\delta_g` of the groups (0 without
        ApproximateLDP groups); ParameterError naming ``delta0`` when a group's β is 1 or more."""
        if self.kind not in ("approx", "approx-uncharged"):
            return 0.0
        return max(gr.mechanism.at_n(gr.n).beta for gr in self.groups)

    def without_charge(self) -> "Population":
        """The population whose group profiles are the clone reduction without its charge (for the accountant:
        module docstring, "Groups of (ε_i, δ_i)-LDP randomizers")."""
        return dataclasses.replace(self, kind="approx-uncharged") if self.kind == "approx" else self

    def describe(self) -> dict:
        """JSON-serialisable description: ``{"mechanism": "population", "n": ..., "groups": [...]}``."""
        kind = "approx" if self.kind == "approx-uncharged" else self.kind
        return {"mechanism": "population", "n": self.n, "kind": kind,
                "groups": [dict(g.mechanism.describe(), count=g.n, gamma=g.gamma) for g in self.groups]}


def population(groups, *, n: int | None = None) -> Population:
    r"""Build a :class:`Population` from ``[(mechanism, n_g), ...]``.

    Parameters
    ----------
    groups : sequence of (Mechanism, int)
        Non-empty.  Either all :class:`~shuffleamp.mechanisms.KRR` with a common ``k``, or
        mechanisms with finite matrices (``mechanism.matrix()``) with a common number of outputs, or
        all :class:`~shuffleamp.gaussian.Gaussian` with a common ``sensitivity``, or all
        :class:`~shuffleamp.gaussian.ApproximateLDP` (module docstring, "Groups of (ε_i, δ_i)-LDP
        randomizers": each target is bounded within its own group).
        ``n_g >= 1``.  With ``n`` given, the second entries are fractions of ``n`` in (0, 1]
        summing to 1 (counts by largest-remainder rounding, each >= 1).
    n : int, optional
        Total number of users when the groups are given as fractions.

    Returns
    -------
    Population
        With the common blanket ω and each group's γ_g (see the module docstring).

    Raises
    ------
    ParameterError
        ``'groups'``: empty, not pairs, different k, different output spaces, no common blanket
        (the target's randomizer outputs a value on which ω has no mass), continuous mechanisms, or
        ApproximateLDP groups mixed with other randomizers;
        ``'n_g'``: a count that is not an integer >= 1 (or a fraction giving fewer than 1 user);
        ``'groups'`` also for fractions outside (0, 1] or not summing to 1.
    """
    try:
        items = list(groups)
    except TypeError:
        raise ParameterError("groups", "must be a list of (mechanism, n_g) pairs") from None
    if not items:
        raise ParameterError("groups", "must contain at least one (mechanism, n_g) pair")
    mechs, counts = [], []
    for i, item in enumerate(items):
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            raise ParameterError("groups", f"entry {i} must be a (mechanism, n_g) pair, got {item!r}")
        m, c = item
        if not hasattr(m, "eps0") or not hasattr(m, "describe"):
            raise ParameterError("groups", f"entry {i}: {type(m).__name__} is not a shuffleamp mechanism")
        mechs.append(m)
        counts.append(_validate.real("groups", c, lo=0.0, lo_open=True, hi=1.0) if n is not None
                      else _validate.count(c, "n_g"))
    if n is not None:
        counts = _fractions_to_counts(counts, _validate.count(n, "n"))
    from .mechanisms import KRR
    from .gaussian import ApproximateLDP, Gaussian
    spaces = _output_spaces(mechs)
    if spaces is not None and len(set(spaces)) > 1:
        # groups of several output spaces: each user is bounded within the groups of its own space (module docstring,
        # "Sub-populations": the other spaces' reports are told apart and do not depend on that user's input)
        parts, gs = [], [None] * len(mechs)
        for key in dict.fromkeys(spaces):
            idx = tuple(i for i, k in enumerate(spaces) if k == key)
            part = population([(mechs[i], counts[i]) for i in idx])
            parts.append((part, idx))
            for j, i in enumerate(idx):
                gs[i] = part.groups[j]
        return Population(tuple(gs), "mixed", parts=tuple(parts))
    if any(isinstance(m, ApproximateLDP) for m in mechs):
        # classes of (eps_i, delta_i)-LDP randomizers: each target is bounded within its own group
        # (module docstring, "Groups of (eps_i, delta_i)-LDP randomizers")
        if not all(isinstance(m, ApproximateLDP) for m in mechs):
            raise ParameterError("groups", "ApproximateLDP groups cannot be mixed with other randomizers: the "
                                 "worst (eps0, delta0)-LDP randomizer may use outputs no other group uses, so no "
                                 "common blanket exists; evaluate the other groups as their own population")
        return Population(tuple(Group(m, c, math.exp(-m.eps0)) for m, c in zip(mechs, counts)), "approx")
    if all(isinstance(m, Gaussian) for m in mechs):
        # Gaussian groups on one input interval: each target's bound uses its own blanket (gaussian.py)
        if len({m.sensitivity for m in mechs}) != 1:
            raise ParameterError("groups", "Gaussian groups need a common sensitivity (one input interval)")
        return Population(tuple(Group(m, c, m.gamma) for m, c in zip(mechs, counts)), "gaussian")
    if all(isinstance(m, KRR) for m in mechs):
        ks = {m.k for m in mechs}
        if len(ks) != 1:
            raise ParameterError("groups", f"k-RR groups need a common k (common output space), got {sorted(ks)}; "
                                           "a report of one k may look like a report of another, so the groups of "
                                           "another k cannot be split off with their lower bounds: evaluate one "
                                           "population per k (each user's upper bound there is certified for the "
                                           "whole population: module docstring, 'Sub-populations')")
        k = ks.pop()
        gs = tuple(Group(m, c, k / (math.exp(m.eps0) + k - 1)) for m, c in zip(mechs, counts))
        return Population(gs, "krr", k=k)
    mats = []
    for i, m in enumerate(mechs):
        try:
            P = np.asarray(m.matrix(), dtype=np.float64)
        except ParameterError as e:
            raise ParameterError("groups", f"entry {i}: no finite matrix ({e})") from None
        mats.append(P)
    ys = {P.shape[1] for P in mats}
    if len(ys) != 1:
        raise ParameterError("groups", f"mechanisms need a common output space, got {sorted(ys)} outputs")
    cmin = np.min([P.min(axis=0) for P in mats], axis=0)
    Z = float(cmin.sum())
    if not Z > 0:
        raise ParameterError("groups", "no common blanket: the groups' matrices have no common support")
    omega = cmin / Z
    pos = omega > 0
    gs = []
    for i, (m, c, P) in enumerate(zip(mechs, counts, mats)):
        if (P[:, ~pos] > 0).any():
            raise ParameterError("groups", f"entry {i}: no common blanket (outputs this group uses carry "
                                           "no mass in every group)")
        gam = float(np.min(P[:, pos] / omega[pos]))
        gs.append(Group(m, c, min(gam, 1.0)))
    omega.setflags(write=False)
    return Population(tuple(gs), "matrix", omega=omega)


def _output_spaces(mechs) -> list | None:
    """Output space of each mechanism, "gaussian" (the real line) or "finite" (a finite alphabet); None when a group is
    neither or an (ε0, δ0)-LDP class, or the finite groups have different numbers of outputs (no split: the caller's
    checks apply; reports of two finite alphabets are not told apart)."""
    from .gaussian import ApproximateLDP, Gaussian
    out, sizes = [], set()
    for m in mechs:
        if isinstance(m, ApproximateLDP):
            return None
        if isinstance(m, Gaussian):
            out.append("gaussian")
            continue
        try:
            sizes.add(int(np.asarray(m.matrix()).shape[1]))
        except (ParameterError, AttributeError, TypeError, ValueError):
            return None
        out.append("finite")
    return out if len(sizes) <= 1 else None


def _fractions_to_counts(fr: list, n: int) -> list:
    """Largest-remainder counts of n users for fractions summing to 1 (each count >= 1)."""
    tot = math.fsum(fr)
    if abs(tot - 1.0) > 1e-9:
        raise ParameterError("groups", f"group fractions must add up to 1, got {tot:.12g}")
    raw = [f * n for f in fr]
    counts = [int(math.floor(x)) for x in raw]
    for i in sorted(range(len(fr)), key=lambda i: counts[i] - raw[i])[:n - sum(counts)]:
        counts[i] += 1
    for i, c in enumerate(counts):
        if c < 1:
            raise ParameterError("n_g", f"group {i}: fraction {fr[i]:g} of n = {n} gives no user")
    return counts


# ============================================================================ target laws
def _target_laws(pop: Population, g: int, eps: float) -> list:
    """L laws (values, masses) of the target group's ordered input pairs w.r.t. ω at ε."""
    e = math.exp(eps)
    m = pop.groups[g].mechanism
    if pop.kind == "krr":
        k, E = pop.k, math.exp(m.eps0)
        p = 1.0 / (E + k - 1)
        vals = np.array([k * (E - e) * p, k * (1.0 - e * E) * p, k * (1.0 - e) * p])
        mass = np.array([1.0 / k, 1.0 / k, (k - 2.0) / k])
        return [(vals, mass)]
    P = np.asarray(m.matrix(), dtype=np.float64)
    pos = pop.omega > 0
    om = pop.omega[pos]
    out, seen = [], set()
    for a in range(P.shape[0]):
        for b in range(P.shape[0]):
            if a == b:
                continue
            v = (P[a, pos] - e * P[b, pos]) / om
            key = tuple(np.round(np.sort(v), 12)) + tuple(np.round(om[np.argsort(v)], 12))
            if key not in seen:
                seen.add(key)
                out.append((v, om))
    return out


def _others(pop: Population, g: int):
    """Distinct γ of the other users and their counts N (groups with equal γ merged)."""
    d: dict[float, int] = {}
    for i, gr in enumerate(pop.groups):
        N = gr.n - (1 if i == g else 0)
        if N > 0:
            d[gr.gamma] = d.get(gr.gamma, 0) + N
    gam = np.array(sorted(d), dtype=np.float64)
    return gam, np.array([d[x] for x in sorted(d)], dtype=np.float64)


def _bernstein_range(mean: float, var: float, lo: int, hi: int, tau: float):
    """[a, b] with P(X < a) + P(X > b) <= 2 tau for a sum X of independent Bernoullis (Bernstein)."""
    L = math.log(1.0 / tau)
    t = L / 3.0 + math.sqrt(L * L / 9.0 + 2.0 * var * L)
    return max(lo, int(math.floor(mean - t))), min(hi, int(math.ceil(mean + t)))


class _Mixture:
    """The law of M' (other users' blanket count) in the representation used for one target.

    ``how`` is "direct" (pmf window, summed term by term), "pmf" (Φ from the pmf window) or
    "rule" (Gauss–Laguerre Φ̃); ``tail`` bounds P(M' outside the window/range).
    """

    def __init__(self, gam: np.ndarray, N: np.ndarray, direct: bool = True):
        self.gam, self.N = gam, N
        self.direct_ok = direct
        mean = float(N @ gam)
        var = float(N @ (gam * (1.0 - gam)))
        Ntot = int(N.sum())
        m_lo, m_hi = _bernstein_range(mean, var, 0, Ntot, TAIL_PROB)
        self.tail = 0.0 if (m_lo == 0 and m_hi == Ntot) else 2.0 * TAIL_PROB
        self.m_lo, self.m_hi = m_lo, m_hi
        self.n_eff = mean + 1.0
        width = m_hi - m_lo + 1
        p = self._rule_nodes() if m_lo > 0 else None
        if p is not None and (width > 16 or m_hi > DIRECT_MAX or not direct):
            self._setup_rule(p)
        else:
            self._setup_pmf()

    def _rule_nodes(self):
        c_lo, c_hi = self.m_lo + 1.0, self.m_hi + 1.0
        r = (c_hi - c_lo) / c_lo
        for p in (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, RULE_MAX_NODES):
            log_eta = 2 * gammaln(p + 1) - gammaln(2 * p + 1) + math.log1p(r) + (2 * p * math.log(r) if r > 0 else -math.inf)
            if log_eta <= math.log(RULE_ETA):
                return p
        return None

    def _setup_rule(self, p: int):
        y, W = laggauss(p)
        c_lo = self.m_lo + 1.0
        r = (self.m_hi - self.m_lo) / c_lo
        eta = math.exp(2 * gammaln(p + 1) - gammaln(2 * p + 1) + math.log1p(r) + 2 * p * math.log(r)) if r > 0 else 0.0
        kappa = (1.0 + 1e-12) / (1.0 - eta)       # 1e-12: rounding of the tabulated rule (estimate)
        self.how = "rule"
        self.p = p
        self.x = y / c_lo                          # s_k = exp(-x_k)
        self.logc = np.log(W) + y - math.log(c_lo) + math.log(kappa)
        self.eta = eta

    def _setup_pmf(self):
        # exact pmf of M' on a window: convolution of per-group binomial windows
        G = self.gam.size
        tau_g = TAIL_PROB / G
        pmf, lo = np.ones(1), 0
        tail = 0.0
        for gm, N in zip(self.gam, self.N):
            a, b = _bernstein_range(N * gm, N * gm * (1 - gm), 0, int(N), tau_g)
            if a > 0 or b < N:
                tail += 2.0 * tau_g
            ks = np.arange(a, b + 1)
            pmf = np.convolve(pmf, binom.pmf(ks, int(N), gm))
            lo += a
        self.tail = tail
        self.m_lo, self.m_hi = lo, lo + pmf.size - 1
        keep = pmf > 0
        self.ms = np.arange(self.m_lo, self.m_hi + 1)[keep]
        self.pmf = pmf[keep]
        self.how = "direct" if self.direct_ok and (self.m_hi <= DIRECT_MAX or self.ms.size <= 16) else "pmf"
        with np.errstate(divide="ignore"):
            self.lognu = np.log(self.pmf) - np.log(self.ms + 1.0)

    def work_per_node(self) -> int:
        """Entries of the outer function's work array per frequency (groups x rule nodes, or the window)."""
        return int(self.gam.size * self.p) if self.how == "rule" else int(self.ms.size)

    # ------------------------------------------------------------------ Φ on the real line / complex
    def log_phi(self, K):
        """log Φ(e^K) for real K (scalar or array)."""
        K = np.asarray(K, dtype=np.float64)
        if self.how == "rule":
            d = K[..., None] - self.x                                   # log(s_k e^K), shape (..., p)
            lg = np.log1p(self.gam.reshape((-1,) + (1,) * d.ndim) * np.expm1(d)[None, ...])
            s = np.tensordot(self.N, lg, axes=(0, 0))                   # sum_g N_g log(1-γ_g+γ_g s_k e^K)
            return K + _lse(self.logc - self.x + s)
        return _lse(self.lognu + (self.ms + 1.0) * K[..., None])

    def dlog_phi(self, K: float) -> float:
        """d/dK of log Φ(e^K) (real scalar K); only places the contour (not part of any certified value)."""
        if self.how == "rule":
            d = K - self.x                                              # (p,)
            em = np.expm1(d)
            lg = np.log1p(self.gam[:, None] * em[None, :])              # (G, p)
            sk = self.logc - self.x + self.N @ lg
            w = np.exp(sk - sk.max())
            w /= w.sum()
            inner = self.N @ (self.gam[:, None] * np.exp(d)[None, :] / np.exp(lg))
            return float(1.0 + w @ inner)
        z = self.lognu + (self.ms + 1.0) * K
        w = np.exp(z - z.max())
        return float(w @ (self.ms + 1.0) / w.sum())

    def compiled_outer(self, K: float):
        r"""The outer function at the contour's real point e^K as ``kernels.bromwich_population`` takes it (after
        the law's scalars): ``(rule, gam, N, x, logc, b, w0, lognu, mp1, a, n_eff)``.

        Rule: groups sorted by count (equal counts adjacent: the kernel multiplies their factors and takes one
        logarithm per run), :math:`b_{kg} = \gamma_g s_k W / (1 - \gamma_g + \gamma_g s_k W)` (shape (p, groups)) and the
        normalised weights :math:`w0_k \propto c_k s_k P(s_k W)`, so that
        :math:`\tilde\Phi(W e^v) / \tilde\Phi(W) = e^v \sum_k w0_k \prod_g (1 + b_{kg}(e^v - 1))^{N_g}`.
        Window: :math:`a_m \propto p_m W^{m+1} / (m+1)` normalised, so that the ratio is
        :math:`\sum_m a_m e^{(m+1)v}`.  Arrays only (numpy over groups x rule nodes, no Python loop)."""
        empty, empty2 = np.empty(0), np.empty((0, 0))
        if self.how == "rule":
            e = np.exp(K - self.x)                                              # s_k W
            A = np.log1p(self.gam[:, None] * np.expm1(K - self.x)[None, :])     # log(1-γ+γ s_k W), (G, p)
            w0 = self.logc - self.x + self.N @ A
            w0 = np.exp(w0 - w0.max())
            w0 = w0 / w0.sum()
            order = np.argsort(self.N, kind="stable")              # groups of equal counts adjacent (kernel runs)
            b = np.ascontiguousarray((self.gam[:, None] * e[None, :] / np.exp(A))[order].T)
            return (True, np.ascontiguousarray(self.gam[order]), np.ascontiguousarray(self.N[order]), self.x,
                    self.logc, b, w0, empty, empty, empty, float(self.n_eff))
        a = np.exp(self.lognu + (self.ms + 1.0) * K)
        a = a / a.sum()
        mp1 = np.ascontiguousarray(self.ms + 1.0, dtype=np.float64)
        return (False, empty, empty, empty, empty, empty2, empty, np.ascontiguousarray(self.lognu), mp1, a,
                float(self.n_eff))


def _lse(x: np.ndarray) -> np.ndarray:
    """log Σ exp(x) over the last axis (max-shifted, as scipy.special.logsumexp, without its overhead)."""
    m = np.max(x, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return m[..., 0] + np.log(np.sum(np.exp(x - m), axis=-1))


def _log1pc(x):
    """Accurate complex log(1 + x)."""
    a, b = x.real, x.imag
    return 0.5 * np.log1p(a * (2.0 + a) + b * b) + 1j * np.arctan2(b, 1.0 + a)


class _PopLaw(_exact._AtomLaw):
    """Target law L at a saddle tilt, with the outer function Φ of the mixture (exact.py hooks)."""

    norm = 1.0

    def __init__(self, K: LogMgf, mix: _Mixture):
        v, p = K.x, K.p
        self.K, self.v, self.p, self.mix = K, v, p, mix
        self.n = mix.n_eff
        self.size = v.size
        th0, _, _ = K.saddle(mix.n_eff)       # homogeneous saddle with n_eff summands: a start value
        self.theta = self._saddle(th0) if math.isfinite(th0) else th0
        if not math.isfinite(self.theta):
            self.mu, self.q, self.d, self.L1, self.s2 = math.nan, p, v, 0.0, 0.0
            return
        self.mu, _ = K.moments(self.theta)
        self.q = K.tilted(self.theta)
        self.d = v - self.mu
        self.L1 = float(self.q @ np.abs(self.d))
        self.s2 = float(self.q @ (self.d * self.d))

    def _saddle(self, th0):
        """Root of d/dθ log Φ(M(θ)) = 2/θ (any θ > 0 is valid; this only places the contour)."""
        def f(t):      # d/dθ log Φ(M(θ)) = (d log Φ / dK)(K(θ)) K'(θ), minus 2/θ
            return self.mix.dlog_phi(self.K(t)) * self.K.moments(t)[0] - 2.0 / t

        try:
            a, b = th0 / 2.0, th0 * 2.0
            for _ in range(40):
                if f(a) < 0:
                    break
                a /= 2.0
            for _ in range(40):
                if f(b) > 0:
                    break
                b *= 2.0
            from scipy.optimize import brentq
            return brentq(f, a, b, xtol=1e-6 * th0, maxiter=60)
        except (ValueError, RuntimeError, FloatingPointError):
            return th0

    # --- outer-function hooks (see shuffleamp.exact._AtomLaw)
    def outer_log(self, K):
        return float(self.mix.log_phi(K))

    def outer_log_error(self, theta):
        return 8 * _DBL_EPS * (self.n * (1.0 + abs(self.log_mgf(theta))) + 64.0)

    def bell_width(self):
        return 1.0 / math.sqrt(self.n * self.s2 + 2.0 / self.theta ** 2)

    def compiled_outer(self):
        r"""The compiled integrand :math:`\tilde\Phi(M(z))/z^2` (``kernels.bromwich_population``): the node values,
        the modulus bounds :math:`\tilde\Phi(M(\theta) r)/\tilde\Phi(M(\theta))` of cells and the outer log-ratio
        on the real line are formed in the kernel from these arrays (:meth:`_Mixture.compiled_outer`)."""
        return self.mix.compiled_outer(self.log_mgf(self.theta))

    def panel_nodes(self, a, b):
        r"""``nodes`` at the Gauss–Legendre nodes of the panels [a_i, b_i] (panel-major).  Overrides the base
        class, whose compiled node formation is that of the n-fold sum :math:`M(z)^n/n`, not of
        :math:`\tilde\Phi(M(z))`."""
        c = 0.5 * np.asarray(a, dtype=np.float64) + 0.5 * np.asarray(b, dtype=np.float64)
        h = 0.5 * (np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64))
        return self.nodes(np.ascontiguousarray((c[:, None] + h[:, None] * _exact._XG[None, :]).ravel()))

    def nodes(self, t):
        r"""Re g, |g| and the relative rounding estimate of :math:`g(t) = \tilde\Phi(M(\theta+it)) /
        \tilde\Phi(M(\theta)) / (\theta+it)^2` at real t: the compiled node routine the integral uses
        (``kernels.population_nodes``)."""
        rule, gam, N, _, _, b, w0, _, mp1, a, n_eff = self.compiled_outer()
        return kernels.population_nodes(self.q, self.d, float(self.theta), float(self.mu), float(self.L1),
                                        np.ascontiguousarray(t, dtype=np.float64), rule, gam, N, b, w0, mp1, a,
                                        n_eff)


# ============================================================================ δ for one target
def _delta_target(pop: Population, g: int, eps: float, rtol: float, guide: float | None = None,
                  start: float | None = None, profile: bool = False):
    """Certified upper δ for a target user of group g at ε; returns (δ, info dict).  ``guide``: the target δ of
    an ε query, ``start``: a certified lower δ at ε (Gaussian groups choose their truncation rungs by them; module
    docstring, "Gaussian groups"); ``profile``: a point of the accountant's profile (fewer rungs)."""
    # δ(ε) is non-increasing in ε: above EVAL_EPSILON_MAX (where e^ε overflows the laws' atoms) its value there
    # is a certified upper bound (0 for a pure-LDP target, whose losses are all below it)
    eps = min(eps, EVAL_EPSILON_MAX)
    if pop.kind == "gaussian":
        from .gaussian import POPULATION_MAX_RUNGS, POPULATION_PROFILE_RUNGS, population_delta_upper
        return population_delta_upper(pop, g, eps, rtol, _delta_law, guide, start,
                                      POPULATION_PROFILE_RUNGS if profile else POPULATION_MAX_RUNGS, profile=profile)
    if pop.kind in ("approx", "approx-uncharged"):
        return _approx_delta_upper(pop, g, eps, rtol, charged=pop.kind == "approx")
    gam, N = _others(pop, g)
    best, info = 0.0, None
    for vals, mass in _target_laws(pop, g, eps):
        d, inf = _delta_law(vals, mass, gam, N, rtol)
        if info is None or d > best:
            best, info = d, inf
    return min(best, 1.0), info


def _delta_law(vals, mass, gam, N, rtol, direct: bool | None = True, max_work: float | None = None):
    """Certified upper :math:`E[g(M')]` (module docstring, Steps 3-5) of the target law (``vals``, ``mass``) with
    the other users' blanket masses ``gam`` and counts ``N``.  ``direct``: whether the mixture may be summed term
    by term (one evaluation per blanket count); None: only where every term is enumerated (a law of many atoms
    otherwise costs one Bromwich integral per term: one integral of the mixture instead).  ``max_work``: the
    mixture integral's work cap (:func:`shuffleamp.exact._bromwich`; ResourceLimitError beyond it).
    Returns (δ, info)."""
    keep = mass > 0
    vals, mass = np.asarray(vals, dtype=np.float64)[keep], np.asarray(mass, dtype=np.float64)[keep]
    if direct is None:
        users = int(np.sum(N)) + 1
        direct = users <= 64 and math.comb(users + vals.size - 1, vals.size - 1) <= _exact.ENUMERATE_MAX
    pos_mean = float(mass @ np.maximum(vals, 0.0)) * (1.0 + 4.0 * vals.size * _DBL_EPS)
    if vals.max() <= 0.0:
        return 0.0, {"evaluator": "exact", "how": "no positive atom"}
    if N.size == 0:                      # n = 1: δ = E[L_+]
        return pos_mean, {"evaluator": "exact", "how": "single user"}
    if N.size == 1:                      # all other users share one γ: Theorem 13 (module docstring)
        gm, n = float(gam[0]), int(N[0]) + 1
        G = Gparv(np.append(vals / gm, 0.0), np.append(mass * gm, 1.0 - gm))
        ev = _exact.delta_exact(G, n, mode="upper", rtol=rtol)
        return ev.delta, {"evaluator": ev.evaluator, "how": "homogeneous (Theorem 13)", "charged": ev.charged}
    mix = _Mixture(gam, N, direct)
    tail = mix.tail * pos_mean
    if mix.how == "direct":
        Lg = Gparv(vals, mass)
        tot, err = 0.0, 0.0
        for m, pm in zip(mix.ms, mix.pmf):
            ev = _exact.delta_exact(Lg, int(m) + 1, mode="upper", rtol=rtol)
            tot += pm * ev.delta
            err += pm * ev.charged
        up = tot * (1.0 + 4 * mix.ms.size * _DBL_EPS) + tail
        return up, {"evaluator": "direct mixture", "how": "direct", "charged": err + tail, "terms": int(mix.ms.size)}
    K = LogMgf(vals, mass)
    if vals.min() >= 0.0:
        m = float(K.p @ K.x)
        return m * (1 + 4 * _DBL_EPS * vals.size) + tail, {"evaluator": "exact", "how": "L >= 0"}
    law = _PopLaw(K, mix)
    if math.isfinite(law.theta) and law.theta > 0:
        # Chernoff: s_+ <= e^{θ s}/(e θ) termwise, so the integral is at most Φ̃(M_L(θ))/(e θ); when that is
        # below the tail charge the integral cannot matter more than the charge itself
        log_ch = law.outer_log(law.log_mgf(law.theta)) - 1.0 - math.log(law.theta)
        ch = math.exp(log_ch + law.outer_log_error(law.theta)) if log_ch < 700.0 else math.inf
        if ch <= tail:
            return ch + tail, {"evaluator": "chernoff", "how": mix.how, "charged": ch + tail,
                               "rule_nodes": getattr(mix, "p", None)}
    value, err, nodes, theta, how = _exact._bromwich(law, 1, rtol, max_work)
    up = value + err + tail
    return up, {"evaluator": how, "how": mix.how, "charged": err + tail, "nodes": nodes, "theta": theta,
                "rule_nodes": getattr(mix, "p", None)}


# ============================================================================ (eps_i, delta_i)-LDP groups
def _approx_clone(m, users: int, eps: float, rtol: float):
    """(δ, info, charge) of the clone reduction of the class ``m`` with ``users`` users kept: Theorem 13 on the
    standard clone law at ε0' (the binary-RR target law and blanket mass e^{-ε0'}; the GPARV of the standard
    clone decomposition), without its charge; ParameterError from ``m.at_n`` when the charge reaches 1."""
    proxy = m.at_n(users)
    E = math.exp(proxy.eps0_pure)
    e = math.exp(eps)
    vals = np.array([2.0 * (E - e) / (E + 1.0), 2.0 * (1.0 - e * E) / (E + 1.0)])
    mass = np.array([0.5, 0.5])
    gam = np.array([1.0 / E]) if users > 1 else np.zeros(0)
    N = np.array([users - 1.0]) if users > 1 else np.zeros(0)
    d, info = _delta_law(vals, mass, gam, N, rtol)
    return d, info, proxy.delta_charge


def _approx_drivers(pop: Population, g: int, rtol: float):
    """(charge, pure) callables of :func:`shuffleamp.gaussian.approx_fewer_users` for group g."""
    from .gaussian import ApproximateLDP
    m = pop.groups[g].mechanism
    pure_cls = ApproximateLDP(m.eps0, 0.0)

    def charge(users):
        try:
            return m.at_n(users).delta_charge
        except ParameterError:
            return None

    def pure(users, e):
        return _approx_clone(pure_cls, users, e, rtol)[0]
    return charge, pure


def _approx_delta_upper(pop: Population, g: int, eps: float, rtol: float, charged: bool = True):
    """Certified upper δ of a target of an ApproximateLDP group g: its own group's bound (module docstring,
    "Groups of (eps_i, delta_i)-LDP randomizers"): the smallest of the local (ε0, δ0) profile and the clone
    reduction with m of the group's n_g users kept plus its charge β_m
    (:func:`shuffleamp.gaussian.approx_fewer_users`).  ``charged=False``: the clone part at m = n_g alone,
    without β."""
    from .gaussian import approx_fewer_users, approx_local_delta
    m, ng = pop.groups[g].mechanism, pop.groups[g].n
    if not charged:
        d, info, _c = _approx_clone(m, ng, eps, rtol)
        return min(d, 1.0), dict(info, how="standard clone within the group (Theorem 13)")
    charge, pure = _approx_drivers(pop, g, rtol)

    def clone(users):
        d, info, c = _approx_clone(m, users, eps, rtol)
        return (float(np.nextafter(d + c, np.inf)) if c > 0 else d), dict(
            info, how="standard clone within the group (Theorem 13)")
    local = approx_local_delta(m.eps0, m.delta0, eps)
    best, info = approx_fewer_users(ng, "delta", eps, local, {"evaluator": "local (eps0, delta0) profile",
                                                               "how": "local"}, charge, clone, pure)
    return min(best, 1.0), info


def _approx_epsilon_upper(pop: Population, g: int, delta: float, rtol: float, eps_rtol: float):
    """Certified upper ε at δ of a target of an ApproximateLDP group g: the smallest of the local (ε0, δ0)
    profile's ε (closed form) and the clone reduction's ε with m users kept, searched at δ − β_m
    (:func:`shuffleamp.gaussian.approx_fewer_users`).  Returns (ε, info, evaluations)."""
    from .gaussian import approx_fewer_users, approx_local_epsilon
    m, ng = pop.groups[g].mechanism, pop.groups[g].n
    charge, pure = _approx_drivers(pop, g, rtol)
    count = [0]

    def clone(users):
        c = m.at_n(users).delta_charge

        def fn(e):
            d, inf, _c = _approx_clone(m, users, e, rtol)
            return (float(np.nextafter(d + c, np.inf)) if c > 0 else d), inf
        e_c, info_c, k = epsilon_for_delta(fn, delta, float(m.at_n(users).eps0_pure), "upper", eps_rtol, None)
        count[0] += k
        return e_c, dict(info_c or {}, how="standard clone within the group (Theorem 13)")
    local = approx_local_epsilon(m.eps0, m.delta0, delta)
    best, info = approx_fewer_users(ng, "epsilon", delta, local, {"evaluator": "local (eps0, delta0) profile",
                                                                   "how": "local"}, charge, clone, pure)
    return best, info, count[0]


#: ApproximateLDP groups: the binary-RR population lower bound (mixed datasets) is added up to this n_g (its
#: score laws cost O(√n_g log n_g) per dataset; above, the Theorem-14 datasets alone).
APPROX_SCORE_MAX_N = 10 ** 6


def _approx_subpopulations(pop: Population, g: int):
    """The concrete binary-RR populations of group g's lower bound (one group of n_g users each):
    binary RR at ε1 = log((e^ε0 + δ0)/(1 − δ0)), and (domain of at least 4 inputs, δ0 > 0) binary RR at ε0
    for the randomizer that reveals its input with probability δ0."""
    from .gaussian import _lower_eps1
    from .mechanisms import KRR
    cache = pop.__dict__.setdefault("_approx_cache", {})
    if g not in cache:
        m, ng = pop.groups[g].mechanism, pop.groups[g].n
        e1 = min(_lower_eps1(m.eps0, m.delta0), _validate.EPS0_MAX)
        subs = [population([(KRR(e1, 2), ng)])]
        if m.delta0 > 0 and m.reveal_ok(4):
            subs.append(population([(KRR(m.eps0, 2), ng)]))
        cache[g] = subs
    return cache[g]


def _approx_families(pop: Population, g: int):
    """Theorem-14 lower-bound datasets (both orderings) of the concrete class members of
    :func:`shuffleamp.gaussian.approx_lower_families`: (plain, revealing)."""
    from . import families
    from .gaussian import approx_lower_families
    cache = pop.__dict__.setdefault("_approx_fams", {})
    if g not in cache:
        cache[g] = approx_lower_families(pop.groups[g].mechanism, families)
    return cache[g]


def _approx_delta_lower(pop: Population, g: int, eps: float, both: bool = False):
    """Certified lower δ of a target of an ApproximateLDP group g: concrete members of the class (module
    docstring), the other groups constant: Theorem-14 datasets (certified lower evaluators) and, up to
    :data:`APPROX_SCORE_MAX_N` users, the binary-RR population's datasets.  Returns (δ, description)."""
    from .evaluate import LOWER_MODE, max_delta
    m, ng = pop.groups[g].mechanism, pop.groups[g].n
    d0 = m.delta0
    rr1, rr0 = _approx_families(pop, g)
    best, _ = max_delta(rr1, ng, eps, LOWER_MODE)
    how = "k-RR at eps1 (k = 2, 3) in the group (others constant), Theorem-14 dataset"

    def revealing(v):
        return float(np.nextafter((d0 + (1.0 - d0) * v) * (1.0 - 4 * _DBL_EPS), -np.inf))
    if rr0:
        v = revealing(max_delta(rr0, ng, eps, LOWER_MODE)[0])
        if v > best:
            best, how = v, ("reveals its input w.p. delta0, else k-RR at eps0 (others constant), "
                            "Theorem-14 dataset")
    if ng <= APPROX_SCORE_MAX_N:
        subs = _approx_subpopulations(pop, g)
        v, h = _delta_lower(subs[0], 0, eps, both)
        if v > best:
            best, how = v, "binary RR at eps1 in the group (others constant): " + h
        if len(subs) > 1:
            v, h = _delta_lower(subs[1], 0, eps, both)
            v = revealing(v)
            if v > best:
                best, how = v, "reveals its input w.p. delta0, else binary RR at eps0 (others constant): " + h
    return max(best, 0.0), how


def _approx_check_delta(pop: Population, delta: float) -> None:
    """ε at δ needs δ >= δ0 of every group (a randomizer may reveal its input with probability δ0)."""
    for i, gr in enumerate(pop.groups):
        if delta < gr.mechanism.delta0:
            raise ParameterError("delta", f"delta = {delta:g} is below group {i}'s delta0 = "
                                 f"{gr.mechanism.delta0:g}: an (eps0, delta0)-LDP randomizer may reveal its "
                                 "input with probability delta0, so no finite epsilon holds; ask for a larger "
                                 "delta")


# ============================================================================ lower bounds
def _gaussian_score_law(pop: Population, g: int):
    """The others' law of the multi-level score of a target of group g (module docstring, "Gaussian groups", lower
    bound) on its Bernstein window, cached per target: (p0, p1, a, q, η, charge) with the target's level pmfs p0, p1,
    the others' pmf q on [a, a + len(q)) (inverse real FFT of the product of the groups' characteristic functions),
    η its per-bin rounding bound and ``charge`` the aliased tail plus the level probabilities' rounding (total
    variation, charged as absolute mass)."""
    from scipy import fft as _fft
    from .gaussian import population_score_levels
    cache = pop.__dict__.setdefault("_score_levels", {})
    if g in cache:
        return cache[g]
    (p0, e0), (p1, e1), others_e = population_score_levels(pop, g, with_errors=True)
    others = [(q, N) for (q, _e), N in others_e]
    K = p0.size - 1
    ks = np.arange(K + 1, dtype=np.float64)
    Ntot = sum(N for _, N in others)
    mean = sum(N * float(q @ ks) for q, N in others)
    var = sum(N * max(float(q @ ks ** 2) - float(q @ ks) ** 2, 0.0) for q, N in others)
    L = math.log(2.0 / LOWER_TAIL)
    t = K * L / 3.0 + math.sqrt((K * L / 3.0) ** 2 + 2.0 * var * L)
    a, b = max(0, int(math.floor(mean - t))), min(K * Ntot, int(math.ceil(mean + t)))
    tail = 0.0 if (a == 0 and b == K * Ntot) else LOWER_TAIL
    M = _fft.next_fast_len(b - a + 1, real=True)
    if M > LOWER_MAX_FFT:
        raise ResourceLimitError(f"population lower bound: FFT length {M} exceeds {LOWER_MAX_FFT}; use smaller "
                                 "groups (fewer users n_g)", parameter="groups", resource="fft")
    tk, _c1, _s1 = _score_grid(M)
    z = np.exp(1j * tk)
    S = np.zeros(tk.size, dtype=np.complex128)
    extra = np.zeros(tk.size)
    for q, N in others:
        phi = np.zeros(tk.size, dtype=np.complex128)
        for qk in q[::-1]:                                   # Horner: Σ_k q_k z^k
            phi = phi * z + qk
        S += N * np.log(phi)
        extra += N * (K + 2) * 4 * _DBL_EPS / np.maximum(np.abs(phi), 1e-300)
    a, q, eta, tail = _score_invert(S, tk, a, M, tail, len(others))
    w = np.where(np.arange(tk.size) == 0, 1.0, 2.0)
    eta += float(w @ (np.exp(S.real) * extra)) / M
    # the level probabilities' errors, as total variation of the users' laws (coupling, one user at a time)
    runs_err = sum(N * float(e.sum()) for (_q, e), N in others_e) + float(np.maximum(e0, e1).sum())
    cache[g] = (p0, p1, a, q, eta, tail + runs_err)
    return cache[g]


def _gaussian_score_delta(pop: Population, g: int, eps: float, both: bool = False) -> float:
    """Certified lower δ of the multi-level score pair (optimistic rounding: η per bin and the charge subtracted);
    ``both``: the larger of the two orderings."""
    p0, p1, a, q, eta, charge = _gaussian_score_law(pop, g)
    e = math.exp(eps)
    P = [np.convolve(q, p0), np.convolve(q, p1)]
    best = 0.0
    for A, B in ((P[0], P[1]), (P[1], P[0])) if both else ((P[0], P[1]),):
        v = A - e * B - (1.0 + e) * eta
        best = max(best, float(np.sum(v[v > 0])) * (1.0 - 1e-12) - (1.0 + e) * charge)
    return max(best, 0.0)


def _gaussian_delta_lower(pop: Population, g: int, eps: float, both: bool = False):
    """Certified lower δ of a target of a Gaussian population (module docstring, "Gaussian groups"): the
    threshold counts of :func:`shuffleamp.gaussian.population_delta_lower`, and, when every user has the target's
    σ, the single round's quantised concrete pairs at the population's n (the same dataset (0 | Δ; others Δ),
    certified lower evaluators, both orderings).  Returns (δ, description)."""
    from .decomposition import dedupe
    from .evaluate import LOWER_MODE, max_delta
    from .gaussian import lower_layouts, population_delta_lower
    best, how = population_delta_lower(pop, g, eps, both)
    from .gaussian import POPULATION_LOWER_MAX_N, SCORE_LEVELS
    if pop.n <= POPULATION_LOWER_MAX_N:
        v = _gaussian_score_delta(pop, g, eps, both)
        if v > best:
            best, how = v, f"score with {SCORE_LEVELS + 1} levels (0 | Δ; others Δ)"
    mt = pop.groups[g].mechanism
    if all(gr.mechanism.sigma == mt.sigma for gr in pop.groups):
        fams = lower_layouts(mt.mu, pop.n, eps)
        fams = dedupe([d for f in fams for d in (f, f.swapped())])
        v, info = max_delta(fams, pop.n, eps, LOWER_MODE)
        if v > best:
            best, how = v, "quantised reports: " + str((info or {}).get("pair", ""))
    return best, how


#: Probability mass of the score statistic's law left outside the FFT window (charged to the lower bound).
LOWER_TAIL = 1e-40
#: Largest FFT length of the score-statistic lower bound (refused with ResourceLimitError beyond it).
LOWER_MAX_FFT = 1 << 24
#: Bins of the score pair below this fraction of the largest are dropped from the accountant's lower PLD.
LOWER_PAIR_FLOOR = 1e-20
#: Work budget (number of (j, h0, h1) terms) of the exact full-histogram lower bound (k-RR, small n).
LOWER_MAX_WORK = 4_000_000


@dataclass(frozen=True)
class _Score:
    """A concrete dataset pair, post-processed to the score T = Σ f(y) over the shuffled outputs.

    ``tgt0``/``tgt1``: probabilities of f = (+1, 0, −1) for the target's output under x^0 / x^1;
    ``up``/``dn``: per other group, probabilities of f = +1 / −1 (others at their fixed input);
    ``N``: other users per group; ``label``: the dataset.
    """

    tgt0: tuple
    tgt1: tuple
    up: np.ndarray
    dn: np.ndarray
    N: np.ndarray
    label: str


def _scores(pop: Population, g: int) -> list:
    """The concrete datasets used for group g's lower bound (module docstring, 'Lower bound')."""
    Ns = np.array([gr.n - (1 if i == g else 0) for i, gr in enumerate(pop.groups)], dtype=np.float64)
    if pop.kind == "krr":
        k = pop.k
        p = np.array([1.0 / (math.exp(gr.mechanism.eps0) + k - 1) for gr in pop.groups])
        Et = math.exp(pop.groups[g].mechanism.eps0)
        pt = p[g]
        if k == 2:      # x^0 = 0, x^1 = 1, others 1; f = [y = 0] (the full histogram: exact divergence)
            return [_Score((Et * pt, 1 - Et * pt, 0.0), (pt, 1 - pt, 0.0), p, np.zeros_like(p), Ns,
                           "x0=0, x1=1, others 1; count of 0s")]
        return [_Score((Et * pt, 1 - (Et + 1) * pt, pt), (pt, 1 - (Et + 1) * pt, Et * pt), p, p, Ns,
                       "x0=0, x1=1, others 2; #0 - #1")]
    mats = [np.asarray(gr.mechanism.matrix(), dtype=np.float64) for gr in pop.groups]
    Pt = mats[g]
    D = Pt.shape[0]
    cand = []
    for a in range(D):
        for b in range(D):
            if a == b:
                continue
            f = np.sign(Pt[a] - Pt[b])
            if not f.any():
                continue
            up_, dn_, var, lab = [], [], 0.0, []
            for i, M in enumerate(mats):          # others of group i at the input of least score variance
                u, d = M @ (f > 0), M @ (f < 0)
                v = u + d - (u - d) ** 2
                c = int(np.argmin(v))
                up_.append(u[c]), dn_.append(d[c]), lab.append(str(c))
                var += Ns[i] * v[c]
            gap = float((Pt[a] - Pt[b]) @ f)
            t0 = (float(Pt[a] @ (f > 0)), float(Pt[a] @ (f == 0)), float(Pt[a] @ (f < 0)))
            t1 = (float(Pt[b] @ (f > 0)), float(Pt[b] @ (f == 0)), float(Pt[b] @ (f < 0)))
            cand.append((gap / math.sqrt(var + 1.0), _Score(t0, t1, np.array(up_), np.array(dn_), Ns,
                        f"x0={a}, x1={b}, others at inputs ({', '.join(lab)}); score sign(R(x0)-R(x1))")))
    cand.sort(key=lambda c: -c[0])
    return [s for _, s in cand[:2]]


def _score_window(sc: _Score, margin: int = 0):
    """Bernstein window [a, a + M) of the others' score (|f - Ef| <= 2, tail LOWER_TAIL), FFT length M."""
    from scipy import fft as _fft
    from .errors import ResourceLimitError
    N, u, d = sc.N, sc.up, sc.dn
    lo_sup, hi_sup = -int(N @ (d > 0)), int(N @ (u > 0))
    mean = float(N @ (u - d))
    var = float(N @ np.maximum(u + d - (u - d) ** 2, 0.0))
    L = math.log(2.0 / LOWER_TAIL)
    t = 2.0 * L / 3.0 + math.sqrt((2.0 * L / 3.0) ** 2 + 2.0 * var * L) + margin
    a, b = max(lo_sup, int(math.floor(mean - t))), min(hi_sup, int(math.ceil(mean + t)))
    tail = 0.0 if (a == lo_sup and b == hi_sup) else LOWER_TAIL
    M = _fft.next_fast_len(b - a + 1, real=True)
    if M > LOWER_MAX_FFT:
        raise ResourceLimitError(f"population lower bound: FFT length {M} exceeds {LOWER_MAX_FFT}; use smaller "
                                 "groups (fewer users n_g)", parameter="groups", resource="fft")
    return a, M, tail


def _score_grid(M: int):
    tk = 2.0 * math.pi * np.arange(M // 2 + 1) / M
    return tk, -2.0 * np.sin(0.5 * tk) ** 2, np.sin(tk)          # t, cos t - 1 (accurate), sin t


def _score_invert(S: np.ndarray, tk: np.ndarray, a: int, M: int, tail: float, groups: int):
    """pmf on [a, a + M) from S = log φ(t_k) (half spectrum), with its per-bin rounding bound η."""
    from scipy import fft as _fft
    # q_j = P(T = a + j) = (1/M) Σ_k conj(φ(t_k)) e^{i t_k a} e^{2πi kj/M} (q is real): an inverse real FFT
    ph = tk * a - S.imag
    absX = np.exp(S.real)
    X = absX * (np.cos(ph) + 1j * np.sin(ph))
    q = np.maximum(_fft.irfft(X, n=M), 0.0)
    rho = 8 * _DBL_EPS * (1.0 + np.abs(S.real) + np.abs(S.imag) + tk * abs(a) + groups)
    w = np.where(np.arange(tk.size) == 0, 1.0, 2.0)    # hermitian half-spectrum
    eta = float(w @ (absX * rho)) / M + 5.0 * math.log2(M) * _DBL_EPS * float(w @ absX) / M
    return a, q, eta, tail


def _score_law(sc: _Score):
    """pmf of the others' score Σ f on a window [a, a + M): (a, q, per-bin error bound η, tail mass).

    The characteristic function Π_g (1 + u_g(e^{it}-1) + d_g(e^{-it}-1))^{N_g} is inverted by an FFT of
    length M covering the Bernstein window (tail <= LOWER_TAIL); aliasing only moves the tail mass
    (charged).  η is the first-order rounding bound of the characteristic function and of the FFT.
    """
    keep = sc.N > 0
    sc = dataclasses.replace(sc, up=sc.up[keep], dn=sc.dn[keep], N=sc.N[keep])
    a, M, tail = _score_window(sc)
    tk, c1, s1 = _score_grid(M)
    S = np.zeros(tk.size, dtype=np.complex128)
    for Ng, ug, dg in zip(sc.N, sc.up, sc.dn):
        S += Ng * _log1pc((ug + dg) * c1 + 1j * (ug - dg) * s1)
    return _score_invert(S, tk, a, M, tail, sc.N.size)


def _score_delta(sc: _Score, law, eps: float, reverse: bool = False) -> float:
    """Certified lower bound on D_{e^ε} of the score laws of the pair (optimistic rounding);
    ``reverse``: of the swapped pair (the target's inputs exchanged, also a concrete neighbouring pair)."""
    a, q, eta, tail = law
    e = math.exp(eps)
    Q = np.concatenate(([0.0, 0.0], q, [0.0, 0.0]))    # q on [a-2, a+M+1]
    P = []
    for p_up, p_0, p_dn in (sc.tgt0, sc.tgt1):         # T = T_others + f(target)
        P.append(p_up * Q[:-2] + p_0 * Q[1:-1] + p_dn * Q[2:])
    if reverse:
        P.reverse()
    v = P[0] - e * P[1] - (1.0 + e) * eta
    tot = float(np.sum(v[v > 0]))
    return max(tot * (1.0 - 1e-12) - (1.0 + e) * tail, 0.0)


def _krr_score_laws(pop: Population) -> dict:
    """Score laws of every target of a k-RR population at once: the others' (u_g, d_g) do not depend
    on the target, so each group's log-factor is computed once on a common window (that of all n users,
    widened by 2: removing the target shrinks the variance and moves the mean by at most 1) and each
    target's law is the product without its own factor; one inverse FFT per target."""
    scs = [_scores(pop, g)[0] for g in range(len(pop.groups))]
    full = dataclasses.replace(scs[0], N=np.array([gr.n for gr in pop.groups], dtype=np.float64))
    a, M, tail = _score_window(full, margin=2)
    tk, c1, s1 = _score_grid(M)
    logs = [_log1pc((u + d) * c1 + 1j * (u - d) * s1) for u, d in zip(full.up, full.dn)]
    total = np.zeros(tk.size, dtype=np.complex128)
    for Ng, lg in zip(full.N, logs):
        total += Ng * lg
    return {g: (sc, _score_invert(total - logs[g], tk, a, M, tail, len(pop.groups))) for g, sc in enumerate(scs)}


#: Binary RR: numbers of other users whose bit is flipped from the common bit in the lower bound's datasets.
BINARY_FLIPS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
#: Binary RR: the flipped datasets are tried for populations of at most this many groups.
BINARY_FLIP_GROUPS = 64


def _binary_score_laws(pop: Population) -> dict:
    """Binary RR: score laws (f = [y = 0], the whole count) of every target for the datasets "every other
    user holds b, except j users of group h who hold 1 - b" (b in {0, 1}, j in :data:`BINARY_FLIPS`, h the
    target's group and the groups of smallest and largest ε0), each the exact count law of a concrete
    neighbouring pair.  Per b one window covers every target and flip (margin 2 + max j)."""
    G = len(pop.groups)
    E = np.array([math.exp(gr.mechanism.eps0) for gr in pop.groups])
    p = 1.0 / (E + 1.0)
    Ns_all = np.array([gr.n for gr in pop.groups], dtype=np.float64)
    flips = BINARY_FLIPS if G <= BINARY_FLIP_GROUPS else ()
    jmax = max(flips, default=0)
    e0 = [float(gr.mechanism.eps0) for gr in pop.groups]
    out: dict = {g: [] for g in range(G)}
    for b in (1, 0):
        up = p if b == 1 else E * p                     # P(report 0 | holds b)
        up_flip = E * p if b == 1 else p
        sc_full = _Score((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), up, np.zeros(G), Ns_all, "")
        a, M, tail = _score_window(sc_full, margin=2 + jmax)
        tk, c1, s1 = _score_grid(M)
        logs = [_log1pc(u * c1 + 1j * u * s1) for u in up]
        logs_flip = [_log1pc(u * c1 + 1j * u * s1) for u in up_flip]
        total = np.zeros(tk.size, dtype=np.complex128)
        for Ng, lg in zip(Ns_all, logs):
            total += Ng * lg
        for g in range(G):
            Et, pt = E[g], p[g]
            Ns = Ns_all.copy()
            Ns[g] -= 1
            base = _Score((Et * pt, 1 - Et * pt, 0.0), (pt, 1 - pt, 0.0), up, np.zeros(G), Ns,
                          f"x0=0, x1=1, others {b}; count of 0s")
            S0 = total - logs[g]
            out[g].append((base, _score_invert(S0, tk, a, M, tail, G)))
            hs = sorted({g, int(np.argmin(e0)), int(np.argmax(e0))})
            for h in hs:
                for j in flips:
                    if j > Ns[h]:
                        break
                    lab = f"x0=0, x1=1, others {b} except {j} of group {h} hold {1 - b}; count of 0s"
                    law = _score_invert(S0 + j * (logs_flip[h] - logs[h]), tk, a, M, tail, G)
                    out[g].append((dataclasses.replace(base, label=lab), law))
    return out


def _delta_lower(pop: Population, g: int, eps: float, both: bool = False):
    """Certified lower δ for a target user of group g at ε: the largest over the concrete datasets
    of :func:`_scores` (score statistic, any n; ``both``: also with the target's inputs swapped) and,
    for small k-RR populations, the exact full-histogram divergence (symmetric under the swap).
    Returns (δ, description)."""
    if eps > EVAL_EPSILON_MAX:
        # e^ε would overflow the concrete pairs' divergences; δ(ε) >= 0 is the certified lower bound there
        return 0.0, f"none (epsilon above {EVAL_EPSILON_MAX:g}: lower bound 0)"
    if pop.kind == "gaussian":
        return _gaussian_delta_lower(pop, g, eps, both)
    if pop.kind in ("approx", "approx-uncharged"):
        return _approx_delta_lower(pop, g, eps, both)
    cache = pop.__dict__.setdefault("_lower_cache", {})
    if g not in cache:
        if pop.kind == "krr" and pop.k == 2:
            cache.update(_binary_score_laws(pop))
        elif pop.kind == "krr":
            cache.update((h, [v]) for h, v in _krr_score_laws(pop).items())
        else:
            cache[g] = [(sc, _score_law(sc)) for sc in _scores(pop, g)]
    best, how = 0.0, "none"
    for sc, law in cache[g]:
        for rev in ((False, True) if both else (False,)):
            val = _score_delta(sc, law, eps, rev)
            if val > best or how == "none":
                best, how = val, sc.label + (" (swapped)" if rev else "")
    if pop.kind == "krr" and pop.k >= 3 and pop.n ** 3 / 3.0 <= LOWER_MAX_WORK:
        val = _delta_lower_krr_exact(pop, g, eps)
        if val >= best:
            best, how = val, "x0=0, x1=1, others 2; exact (j, h0, h1)"
    return best, how


def _pb_pmf(ps: np.ndarray, Ns: np.ndarray):
    """Exact pmf of a Poisson-binomial (groups of Ns Bernoulli(ps)) on its whole support (small n)."""
    pmf = np.ones(1)
    for p, N in zip(ps, Ns):
        if int(N) > 0:
            pmf = np.convolve(pmf, binom.pmf(np.arange(int(N) + 1), int(N), p))
    return pmf


def _delta_lower_krr_exact(pop: Population, g: int, eps: float) -> float:
    """Exact divergence of the k-RR dataset (x^0 = 0, x^1 = 1, others 2), k >= 3, by the (j, h0, h1) sums."""
    k = pop.k
    e = math.exp(eps)
    Et = math.exp(pop.groups[g].mechanism.eps0)
    pt = 1.0 / (Et + k - 1)
    Ns = np.array([gr.n - (1 if i == g else 0) for i, gr in enumerate(pop.groups)], dtype=np.float64)
    pg = np.array([1.0 / (math.exp(gr.mechanism.eps0) + k - 1) for gr in pop.groups])
    ntot = int(Ns.sum()) + 1
    pj = _pb_pmf((k - 1) * pg, Ns)              # J = others not outputting 2
    PJ = np.zeros(ntot + 1)
    PJ[:pj.size] = pj
    tot = 0.0
    for j in range(0, ntot + 1):
        pjm1 = PJ[j - 1] if j >= 1 else 0.0
        a = pjm1 * (k - 1) + PJ[j]
        b = pjm1 * (k - 1) * (Et - 1.0) / j if j >= 1 else 0.0
        if a <= 0 and b <= 0:
            continue
        h = np.arange(j + 1)
        h0, h1 = np.meshgrid(h, h, indexing="ij")
        ok = h0 + h1 <= j
        lt = (gammaln(j + 1) - gammaln(h0 + 1) - gammaln(h1 + 1) - gammaln(np.maximum(j - h0 - h1, 0) + 1)
              + (h0 + h1) * math.log(1.0 / (k - 1))
              + np.where(j - h0 - h1 > 0, (j - h0 - h1) * math.log(max((k - 3.0) / (k - 1), 1e-300)), 0.0))
        T = np.where(ok & ((k > 3) | (h0 + h1 == j)), np.exp(lt), 0.0)
        tot += float(np.sum(T * np.maximum(a + b * h0 - e * (a + b * h1), 0.0)))
    return max(pt * tot * (1.0 - 1e-12), 0.0)


# ============================================================================ profiles (accountant)
def group_profiles(pop: Population, epsilons, side: str = "upper", *, rtol: float | None = None,
                   given: dict | None = None) -> np.ndarray:
    r"""Certified per-group δ at every ε >= 0 of ``epsilons`` (for the accountant).

    For each group g, ε ↦ upper is the profile of one fixed pair that does not depend on ε (the
    target's sample plus :math:`M'` ω-samples, :math:`M'` revealed: Steps 2–3 of the module
    docstring; the shuffled output is a post-processing of it), maximised over the target's ordered
    input pairs, which are closed under swapping; for binary RR, the pointwise minimum of that and
    :math:`\lambda_g` times the exact count-law profile of everyone at the largest ε0 (both bound the
    maximum over every neighbouring pair, a swap-closed set, so the accountant's negative-ε identity and
    its convex minorant still give a dominating pair); ε ↦ lower is the divergence of the concrete
    score pairs (module docstring, 'Lower bound'), also with the target's inputs swapped, so both
    sets of pairs are swap-closed (the accountant's negative-ε identity applies).

    Parameters
    ----------
    pop : Population
        From :func:`population`.
    epsilons : array_like of float
        ε >= 0 (nats).
    side : {"upper", "lower"}
        Certified upper bound, or certified lower bound.
    rtol : float, optional
        See :func:`delta`.
    given : dict, optional
        {group: certified upper profile at ``epsilons``} of a sub-population containing that group's target (module
        docstring, "Sub-populations"), used for those groups in place of their own evaluation (upper side only).

    Returns
    -------
    ndarray of float64, shape (groups,) + shape of ``epsilons``

    Raises
    ------
    ParameterError
        ``'population'``, ``'epsilons'`` (negative or not finite), ``'side'``.
    """
    _check(pop)
    _validate.choice(side, "side", {"upper", "lower"})
    eps = np.asarray(_validate.real("epsilons", epsilons, lo=0.0), dtype=np.float64)
    rtol = _rtol(rtol)
    out = np.empty((len(pop.groups),) + eps.shape)
    if pop.kind == "mixed":                             # each output space's own population
        for part, idx in pop.parts:
            out[list(idx)] = group_profiles(part, eps, side, rtol=rtol)
        return out
    ref = None
    if side == "upper" and pop.kind == "krr" and pop.k == 2:
        # everyone at the largest ε0 with the exact count law, times λ_g (module docstring): it bounds the
        # maximum over every neighbouring pair (both orderings), so the minimum stays a certified profile
        from . import exact_count as _ec
        ref = _ec.profile_binary_rr(pop.eps0_max, pop.n, eps)[0]
    for g in range(len(pop.groups)):
        if side == "upper" and given is not None and g in given:
            out[g] = np.minimum(np.asarray(given[g], dtype=np.float64).reshape(eps.shape), 1.0)
            continue
        flat = out[g].reshape(-1)
        for i, e in enumerate(eps.reshape(-1)):
            flat[i] = (_delta_target(pop, g, float(e), rtol, profile=True)[0] if side == "upper"
                       else _delta_lower(pop, g, float(e), both=True)[0])
        out[g] = flat.reshape(eps.shape)
        if ref is not None:
            out[g] = np.minimum(out[g], np.minimum(mixture_weight(pop, g) * ref * (1.0 + 4 * _DBL_EPS), 1.0))
    return out


def score_pair_logpmf(pop: Population, g: int, *, reverse: bool = False):
    """(log U, log L) of the score statistic of group g's best concrete pair (largest total variation),
    for the accountant's composed lower bound: U = P^0, L = P^1 (``reverse``: U = P^1, L = P^0).

    The FFT law is exact up to a per-bin rounding bound η plus the aliased tail mass (module docstring);
    U is lowered and L raised by that amount, so every outcome's term (U - e^ε L)_+ only decreases, also in products (composition): the
    returned sub-probability pair is dominated by the exact one.  Bins where U < 1e6 η (where the rounding would distort the loss), or U is below ``LOWER_PAIR_FLOOR`` times its largest bin, are dropped
    (dropping outcomes only removes non-negative terms).

    Parameters
    ----------
    pop : Population
        From :func:`population`.
    g : int
        Target group index.
    reverse : bool
        Return the pair in the other direction.

    Returns
    -------
    (ndarray, ndarray)
        Log masses, equal lengths (``-inf`` never occurs in U; L > 0 everywhere).
    """
    _check(pop)
    if pop.kind == "mixed":                             # the population of the group's output space
        part, idx = next((p, i) for p, i in pop.parts if g in i)
        return score_pair_logpmf(part, idx.index(g), reverse=reverse)
    if pop.kind in ("approx", "approx-uncharged"):      # the concrete binary-RR configuration of the group
        return score_pair_logpmf(_approx_subpopulations(pop, g)[0], 0, reverse=reverse)
    if pop.kind == "gaussian":
        # a threshold count or the multi-level score of the dataset (0 | Δ; others Δ), with relative rounding bounds
        # (which compose: the FFT law's absolute per-bin bounds do not; measured 100 rounds at 5000 + 5000 users,
        # σ = 0.5 and 1: lower total 0.42 with the FFT law, 0.745 with the threshold count)
        from .gaussian import POPULATION_LOWER_MAX_N, population_score_pair, population_threshold_pair
        U, L = population_threshold_pair(pop, g, reverse)
        sp = population_score_pair(pop, g) if pop.n <= POPULATION_LOWER_MAX_N else None
        if sp is not None:
            # the multi-level score by direct convolutions (relative rounding bounds, which compose), when its total
            # variation is the larger
            P0_lo, P0_hi, P1_lo, P1_hi, rel, dropped = sp
            A, B = (P1_lo, P0_hi) if reverse else (P0_lo, P1_hi)
            r = rel + 4 * _DBL_EPS + 1e-14
            A, B = A * (1 - r), B * (1 + r) + dropped
            if float(np.maximum(A - B, 0.0).sum()) > float(np.maximum(U - L, 0.0).sum()):
                U, L = A, B
        keep = U > LOWER_PAIR_FLOOR * float(U.max())
        return np.log(U[keep]), np.log(L[keep] + 1e-300)
    _delta_lower(pop, g, 0.0)                           # fills the cache of score laws
    cache = pop.__dict__["_lower_cache"]
    best, best_tv = None, -1.0
    for sc, (a, q, eta, tail) in cache[g]:
        Q = np.concatenate(([0.0, 0.0], q, [0.0, 0.0]))
        P = [pu * Q[:-2] + p0 * Q[1:-1] + pd * Q[2:] for pu, p0, pd in (sc.tgt0, sc.tgt1)]
        tv = float(np.sum(np.maximum(P[0] - P[1], 0.0)))
        if tv > best_tv:
            best_tv, best = tv, (P, eta + tail)           # aliased tail mass: at most `tail` in any bin
    (U, L), eta = best
    if reverse:
        U, L = L, U
    keep = U > max(1e6 * eta, LOWER_PAIR_FLOOR * float(U.max()))
    return np.log(U[keep] - eta * (1.0 + 1e-9)), np.log(L[keep] + eta * (1.0 + 1e-9) + 1e-300)


# ============================================================================ everyone at the largest ε0
#: Groups (largest personalized upper first) for which the everyone-at-the-largest-ε0 bound is evaluated
#: in :func:`epsilon` (one inverse query each; every group with the largest ε0 is always included).
REFERENCE_GROUPS = 8
#: Pair budget of the first, short exact-count search of the everyone-at-max bound (binary RR) ...
REFERENCE_QUICK_PAIRS = 32
#: ... refined with the default budget only when the short one is within this relative margin of the
#: personalized upper (the full search lowers it by about 1 %).
REFERENCE_REFINE = 0.03


def mixture_weight(pop: Population, g: int) -> float:
    r"""λ_g of the k-RR mixture identity: a group-g report is, with probability λ_g, the report of k-RR at
    the population's largest ε0 on the same input, and otherwise a uniform report (module docstring,
    'Everyone at the largest ε0').  Rounded up (a larger λ only weakens the bound λ_g·δ_max).

    Parameters
    ----------
    pop : Population
        A k-RR population.
    g : int
        Group index.

    Returns
    -------
    float
        λ_g in (0, 1]; 1 for the groups at the largest ε0.

    Raises
    ------
    ParameterError
        ``'population'`` if not a k-RR population.
    """
    _check(pop)
    if pop.kind != "krr":
        raise ParameterError("population", "the mixture identity is defined for k-RR populations")
    k = pop.k
    e_g, e_max = float(pop.groups[g].mechanism.eps0), pop.eps0_max
    if e_g >= e_max:
        return 1.0
    lam = (math.expm1(e_g) / (math.exp(e_g) + k - 1)) / (math.expm1(e_max) / (math.exp(e_max) + k - 1))
    return min(lam * (1.0 + 8 * _DBL_EPS), 1.0)


def _reference(pop: Population, quantity: str, value: float, uppers) -> list:
    """Per group: (certified upper from everyone at the largest ε0, label) or None where not evaluated.

    ``quantity="delta"``: λ_g·δ_max(ε) (one evaluation); ``"epsilon"``: ε_max(δ/λ_g), evaluated for the
    groups at the largest ε0 and the :data:`REFERENCE_GROUPS` groups with the largest ``uppers``.
    Binary RR uses the exact count law (:mod:`shuffleamp.exact_count`, worst case over every dataset),
    k >= 3 the ordinary certified bound of :func:`shuffleamp.epsilon` / :func:`shuffleamp.delta`.
    """
    if pop.kind != "krr":
        return [None] * len(pop.groups)
    from .mechanisms import KRR
    e_max, n, k = pop.eps0_max, pop.n, pop.k
    if k == 2:
        from . import exact_count as _ec
        label = "everyone at the largest eps0, exact count law (binary RR)"

        def hom_delta(e):
            return float(_ec.delta_binary_rr(e_max, n, e).upper)

        def hom_epsilon(d, upper):
            # a short search first; the full one only where it can beat the personalized upper
            quick = float(_ec.epsilon_binary_rr(e_max, n, d, max_pairs=REFERENCE_QUICK_PAIRS).upper)
            if quick > upper * (1.0 + REFERENCE_REFINE):
                return quick
            return min(quick, float(_ec.epsilon_binary_rr(e_max, n, d).upper))
    else:       # the k-RR bound at the largest ε0: the one-group population is Theorem 13 exactly
        label = "everyone at the largest eps0 (k-RR bound, Theorem 13)"
        one = population([(KRR(eps0=e_max, k=k), n)])
        rtol = _exact.DEFAULT_RTOL

        def hom_delta(e):
            return _delta_target(one, 0, e, rtol)[0]

        def hom_epsilon(d, upper):
            return epsilon_for_delta(lambda e: _delta_target(one, 0, e, rtol), d, e_max, "upper", 1e-7,
                                     _estimator(one, 0))[0]
    lams = [mixture_weight(pop, g) for g in range(len(pop.groups))]
    out: list = [None] * len(pop.groups)
    if quantity == "delta":
        base = hom_delta(value)
        return [(min(lam * base * (1.0 + 4 * _DBL_EPS), 1.0), label) for lam in lams]
    order = sorted(range(len(pop.groups)), key=lambda g: -uppers[g])
    chosen = {g for g in range(len(pop.groups)) if lams[g] >= 1.0} | set(order[:REFERENCE_GROUPS])
    done: dict = {}
    for g in sorted(chosen):
        target = value / lams[g] * (1.0 - 4 * _DBL_EPS)
        if target >= 1.0:              # λ_g δ_max <= λ_g <= δ everywhere: ε = 0 is certified
            out[g] = (0.0, label)
            continue
        if lams[g] not in done:
            done[lams[g]] = hom_epsilon(target, uppers[g])
        out[g] = (done[lams[g]], label)
    return out


def _apply_reference(pop: Population, quantity: str, value: float, out: list) -> list:
    """Each group's upper becomes the minimum of the personalized bound and the everyone-at-max bound."""
    ref = _reference(pop, quantity, value, [r.upper for r in out])
    new = []
    for r, rf in zip(out, ref):
        if rf is not None and rf[0] < r.upper:
            st = dict(r.settings, upper_source=rf[1], personalized_upper=r.upper)
            r = dataclasses.replace(r, upper=rf[0], lower=min(r.lower, rf[0]) if r.lower is not None else None,
                                    settings=st)
        else:
            src = ("the group's own (eps0, delta0)-LDP class bound" if pop.kind == "approx"
                   else "personalized (common blanket)")
            r = dataclasses.replace(r, settings=dict(r.settings, upper_source=src))
        new.append(r)
    return new


# ============================================================================ heterogeneous binary RR, exact count law
#: Largest number of datasets (number of ones per group) the exhaustive count-law search enumerates.
COUNT_MAX_CONFIGS = 20_000
#: Largest population (users) of the exhaustive count-law search (laws on the full support).
COUNT_MAX_N = 4000


def _binary_probs(pop: Population) -> np.ndarray:
    """Per group, P(report 1 | input 1) = e^{ε0}/(e^{ε0}+1) (binary RR)."""
    return np.array([1.0 / (1.0 + math.exp(-float(gr.mechanism.eps0))) for gr in pop.groups])


def count_laws(pop: Population, g: int, ones) -> tuple:
    r"""Exact count laws of one neighbouring pair of a binary-RR population.

    The target (a user of group g) holds 0 (law ``P0``) or 1 (``P1``); of the other users of group h,
    ``ones[h]`` hold 1 and the rest 0.  The shuffled output is equivalent to the count C of reported ones
    (Cheu et al.), :math:`C = B_t + \sum_h \mathrm{Bin}(m_h, p_h) + \mathrm{Bin}(N_h - m_h, 1 - p_h)`
    with :math:`p_h = e^{\varepsilon_{0,h}}/(e^{\varepsilon_{0,h}}+1)`: the others' count is
    Poisson-binomial.

    Parameters
    ----------
    pop : Population
        A binary-RR population (k-RR with k = 2).
    g : int
        Target group.
    ones : sequence of int
        Ones among the other users of each group, ``0 <= ones[h] <= N_h`` (N_h = n_h, minus 1 for g).

    Returns
    -------
    (ndarray, ndarray, float)
        ``P0``, ``P1`` on C = 0..n (float64), and a relative error bound of each entry (rounding of
        scipy's binomial pmf and of the direct convolutions, first order).

    Raises
    ------
    ParameterError
        ``'population'`` not binary RR, ``'ones'`` out of range.
    ResourceLimitError
        More than :data:`COUNT_MAX_N` users (parameter ``'groups'``).
    """
    from .errors import ResourceLimitError
    _check(pop)
    if pop.kind != "krr" or pop.k != 2:
        raise ParameterError("population", "the count law is defined for binary randomized response (k = 2)")
    if pop.n > COUNT_MAX_N:
        raise ResourceLimitError(f"count laws on the full support of n = {pop.n} users (at most {COUNT_MAX_N})",
                                 parameter="groups", resource="memory")
    Ns = [gr.n - (1 if i == g else 0) for i, gr in enumerate(pop.groups)]
    ones = [int(x) for x in ones]
    if len(ones) != len(Ns) or any(not 0 <= m <= N for m, N in zip(ones, Ns)):
        raise ParameterError("ones", f"must give 0 <= ones[h] <= {Ns} per group, got {ones}")
    ps = _binary_probs(pop)
    f = np.ones(1)
    for m, N, p in zip(ones, Ns, ps):
        f = np.convolve(f, binom.pmf(np.arange(m + 1), m, p))
        f = np.convolve(f, binom.pmf(np.arange(N - m + 1), N - m, 1.0 - p))
    pt = ps[g]
    P0 = np.concatenate((f, [0.0])) * pt + np.concatenate(([0.0], f)) * (1.0 - pt)
    P1 = np.concatenate((f, [0.0])) * (1.0 - pt) + np.concatenate(([0.0], f)) * pt
    rel = 1e-13 * (2 * len(Ns) + 2) + 4 * _DBL_EPS * (pop.n + 2) * (2 * len(Ns) + 2)
    return P0, P1, rel


def _count_divergence(P0, P1, rel, eps: float):
    """(lower, upper) of Σ_c (P0 - e^ε P1)_+ with every entry within relative ``rel``."""
    e = math.exp(eps)
    lo = float(np.sum(np.maximum(P0 * (1 - rel) - e * P1 * (1 + rel), 0.0))) * (1 - 4 * _DBL_EPS * P0.size)
    up = float(np.sum(np.maximum(P0 * (1 + rel) - e * P1 * (1 - rel), 0.0))) * (1 + 4 * _DBL_EPS * P0.size)
    return max(lo, 0.0), min(up, 1.0)


def _configs(pop: Population, g: int):
    Ns = [gr.n - (1 if i == g else 0) for i, gr in enumerate(pop.groups)]
    return Ns, math.prod(N + 1 for N in Ns)


def delta_binary_rr_population(pop: Population, epsilon: float) -> list:
    r"""Exact δ(ε) of every group of a small binary-RR population: worst case over every dataset.

    By the count reduction (:func:`count_laws`) a dataset matters only through the number of ones in
    each group, and flipping every bit maps the pair (target 1 vs 0, ``ones``) to (0 vs 1,
    ``N - ones``) with the count reflected, so the maximum over all datasets and both orderings is
    the maximum of the ordering "target holds 0 vs 1" over the :math:`\prod_h (N_h + 1)` vectors
    ``ones``, all of which are enumerated.

    Parameters
    ----------
    pop : Population
        A binary-RR population with at most :data:`COUNT_MAX_N` users and at most
        :data:`COUNT_MAX_CONFIGS` datasets per group.
    epsilon : float
        Central ε in nats, >= 0.

    Returns
    -------
    list of (float, float, tuple)
        Per group: certified (upper, lower) of the exact worst-case δ (they differ by the rounding
        band only) and the maximising ``ones``.

    Raises
    ------
    ParameterError
        ``'population'`` not binary RR, ``'epsilon'`` invalid.
    ResourceLimitError
        Too many users or datasets (parameter ``'groups'``).
    """
    from .errors import ResourceLimitError
    _check(pop)
    eps = _scalar(_validate.epsilon(epsilon), "epsilon")
    out = []
    for g in range(len(pop.groups)):
        Ns, total = _configs(pop, g)
        if total > COUNT_MAX_CONFIGS:
            raise ResourceLimitError(f"{total} datasets to enumerate (at most {COUNT_MAX_CONFIGS}); use fewer "
                                     "or smaller groups", parameter="groups", resource="time")
        best = (0.0, 0.0, None)
        for ones in itertools.product(*(range(N + 1) for N in Ns)):
            lo, up = _count_divergence(*count_laws(pop, g, ones), eps)
            if up > best[0] or best[2] is None:
                best = (up, max(best[1], lo), ones)
            else:
                best = (best[0], max(best[1], lo), best[2])
        out.append(best)
    return out


def _count_exhaustive_ok(pop: Population) -> bool:
    """Small binary-RR populations, where :func:`epsilon` / :func:`delta` also run the exhaustive count
    search (about 40 evaluations of every dataset per group in an ε query)."""
    return (pop.kind == "krr" and pop.k == 2 and pop.n <= COUNT_MAX_N // 10
            and all(_configs(pop, g)[1] <= COUNT_MAX_CONFIGS // 50 for g in range(len(pop.groups))))


def _count_search(pop: Population, g: int):
    """δ ↦ (upper, lower) of group g's exact worst case, the count laws of every dataset built once."""
    Ns, _ = _configs(pop, g)
    laws = [count_laws(pop, g, ones) for ones in itertools.product(*(range(N + 1) for N in Ns))]

    def at(eps):
        vals = [_count_divergence(P0, P1, rel, eps) for P0, P1, rel in laws]
        return max(v[1] for v in vals), max(v[0] for v in vals)
    return at


def _apply_count(pop: Population, quantity: str, value: float, out: list, eps_rtol: float = 1e-7) -> list:
    """Small binary-RR populations: each group's bracket becomes that of the exhaustive exact count law."""
    if not _count_exhaustive_ok(pop):
        return out
    new = []
    for g, r in enumerate(out):
        at = _count_search(pop, g)
        if quantity == "delta":
            up, lo = at(value)
        else:
            e0 = float(pop.groups[g].mechanism.eps0)
            up, _, _ = epsilon_for_delta(lambda e: (at(e)[0], None), value, e0, "upper", eps_rtol, None)
            lo, _, _ = epsilon_for_delta(lambda e: (at(e)[1], None), value, e0, "lower", eps_rtol, None)
        st = dict(r.settings)
        if up < r.upper:
            st.update(upper_source="exact count law, every dataset enumerated", personalized_upper=r.upper)
        new.append(dataclasses.replace(r, upper=min(up, r.upper), lower=min(max(lo, r.lower or 0.0),
                                                                            min(up, r.upper)), settings=st))
    return new


# ============================================================================ results and API
#: Cost model of :func:`epsilon` / :func:`delta` (CPU seconds): per target group, a fixed part plus a part per
#: distinct blanket mass γ of the other users (the mixture's outer function costs O(groups) per node);
#: measured 0.018-0.02 s per group at 10-50 groups of 10-RR (bench/results_limits.md).  On a loaded machine
#: the deadline check of :func:`_deadline` stops the evaluation between groups.
POP_TARGET_SECONDS = 0.015
POP_GROUP_SECONDS = 1.5e-4
#: ... plus, for binary RR, the exact count law of everyone at the largest ε0 and its search (measured: 4.25 s of
#: CPU for 100 groups of 5000 users, 100 distinct ε0, δ = 1e-5, against 3.0 s from the two terms above).
POP_BINARY_SECONDS = 0.012
#: Gaussian groups: per target group about POP_GAUSSIAN_SECONDS · e^{Δ/σ_g} (the truncation rungs' log-ratios, and
#: so their Bromwich integrals, grow with Δ/σ), at most POP_GAUSSIAN_MAX_SECONDS (each rung's integral has a work
#: cap), times 1 + groups / POP_GAUSSIAN_GROUPS (the mixture's outer function).  Measured on the 2-core machine:
#: 0.24 s per group at Δ/σ in [0.5, 2] (10 groups of 1000 users, δ = 1e-6), 2 s at Δ/σ in [1, 5] (10 groups of
#: 1e4, δ = 1e-8), 5 - 11 s at Δ/σ in [3.3, 8] (3 - 5 groups of 1e4 - 1e5, δ = 1e-9 .. 1e-10); order of magnitude.
POP_GAUSSIAN_SECONDS = 0.1
POP_GAUSSIAN_MAX_SECONDS = 6.0
POP_GAUSSIAN_GROUPS = 20.0
#: ... and for a target whose cross blanket covers its own (its rungs skipped, :func:`shuffleamp.gaussian.
#: population_cross_covers`: one bounded law per ε), or of the widest σ answered by the single round's evaluators
#: (:class:`_Subpopulations`): measured 0.05 - 0.3 s per group at 100 - 1e6 users, Δ/σ 1 - 4, growing e-fold per unit
#: of Δ/σ beyond 2 (the bounded law's spread: 0.3 s per ε at Δ/σ = 8 and 6.25), at most POP_GAUSSIAN_MAX_SECONDS.
POP_GAUSSIAN_CROSS_SECONDS = 0.2


def _deadline():
    """A check to call between groups: ResourceLimitError (``groups``) once the enclosing (or default) time
    budget is spent."""
    from ._numerics import _active
    from .errors import ResourceLimitError
    b = _active()
    end = time.monotonic() + b.remaining()

    def check(g: int):
        if time.monotonic() > end:
            raise ResourceLimitError(f"population: the time budget max_seconds={b.max_seconds:g} ran out after "
                                     f"{g} groups; use fewer groups (or raise max_seconds)", parameter="groups",
                                     resource="time")
    return check


def _names_groups(fn):
    """A time or memory refusal inside a population call names ``groups`` (the population call has no
    ``max_seconds`` of its own; fewer or smaller groups is what the user can change)."""
    from .errors import ResourceLimitError

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ResourceLimitError as e:
            if e.parameter in ("max_seconds", "max_memory_gb"):
                raise ResourceLimitError(f"{e}; use fewer or smaller groups", parameter="groups",
                                         resource=e.resource) from e
            raise
    return wrapper


def _check_cost(pop: Population, quantity: str, subs: "_Subpopulations | None" = None) -> None:
    """Up-front refusal (ResourceLimitError naming ``groups``) of a population whose evaluation would exceed
    the time budget (cost model above) or whose lower bound's FFT window would be too long."""
    from ._numerics import refuse_if_costly
    G = len(pop.groups)
    distinct = len({gr.gamma for gr in pop.groups})
    per = POP_TARGET_SECONDS + POP_GROUP_SECONDS * distinct + (
        POP_BINARY_SECONDS if pop.kind == "krr" and pop.k == 2 else 0.0)
    seconds = G * per
    what = f"a population of {G} groups ({distinct} distinct eps0)"
    if pop.kind == "gaussian":
        from .gaussian import population_cross_covers
        seconds = sum(min(POP_GAUSSIAN_CROSS_SECONDS * math.exp(max(gr.mechanism.mu - 2.0, 0.0)),
                          POP_GAUSSIAN_MAX_SECONDS) if (population_cross_covers(pop, g) or
                                                        (subs is not None and subs.replaces_own(g))) else
                      min(POP_GAUSSIAN_SECONDS * math.exp(gr.mechanism.mu), POP_GAUSSIAN_MAX_SECONDS)
                      for g, gr in enumerate(pop.groups)) * (1.0 + G / POP_GAUSSIAN_GROUPS)
        mu_max = max(g.mechanism.mu for g in pop.groups)
        what = f"a population of {G} Gaussian groups (largest sensitivity/sigma {mu_max:.3g})"
    # CPU seconds, the same on every machine (the refusal is reproducible); on a loaded machine the wall-clock
    # deadline (:func:`_deadline`, checked between groups) stops the evaluation instead
    seconds *= 0.5 if quantity == "delta" else 1.0
    hint = ("use fewer groups (merging groups at the larger eps0 is sound for k-RR: module docstring, "
            "'Everyone at the largest eps0')" if pop.kind == "krr" else
            "use fewer groups or larger sigma" if pop.kind == "gaussian" else "use fewer groups")
    refuse_if_costly(what, "groups", seconds=seconds, hint=hint)
    if pop.kind == "krr":                       # the lower bound's common window (all n users), before any work
        all_n = np.array([gr.n for gr in pop.groups], dtype=np.float64)
        E = np.array([math.exp(gr.mechanism.eps0) for gr in pop.groups])
        p = 1.0 / (E + pop.k - 1.0)            # P(f = ±1) of an other user (binary RR: f = [y = 0], var alike)
        _score_window(_Score((0.0,) * 3, (0.0,) * 3, p, (p if pop.k > 2 else np.zeros(G)), all_n, ""),
                      margin=2 + (max(BINARY_FLIPS) if pop.k == 2 else 0))


def _check(pop, name: str = "population"):
    if not isinstance(pop, Population):
        raise ParameterError(name, f"must be a Population (shuffleamp.population([(mechanism, n_g), ...])), "
                                   f"got {type(pop).__name__}")


def _rtol(rtol):
    return _exact.DEFAULT_RTOL if rtol is None else _validate.real("rtol", rtol, lo=1e-12, hi=0.5)


def _scalar(value, name: str) -> float:
    if np.ndim(value) != 0:
        raise ParameterError(name, "must be a single number for a population (one result per group)")
    return float(value)


def _check_n(pop: Population, n):
    """``n`` passed next to a population must be None or equal to the population's total."""
    if n is None:
        return
    n = _validate.count(n, "n")
    if not isinstance(n, int) or n != pop.n:
        raise ParameterError("n", f"is taken from the population (n = {pop.n}); pass n=None or the same "
                                  f"total, got {n}")


@_names_groups
def delta(pop: Population, epsilon: float, *, n: int | None = None, rtol: float | None = None,
          sub=None) -> PopulationResult:
    r"""Certified upper and lower δ at ε for a target user of each group.

    Parameters
    ----------
    pop : Population
        From :func:`population`.
    epsilon : float
        Central ε in nats, >= 0.
    n : int, optional
        Ignored if None; otherwise must equal ``pop.n`` (n is taken from the population).
    rtol : float, optional
        Relative accuracy target of the Bromwich evaluations (default
        :data:`shuffleamp.exact.DEFAULT_RTOL`); the achieved error bound is charged.
    sub : callable, optional
        ``sub(mechanism, users) -> (upper, lower)``: a single mechanism's certified bracket at this query, or
        ``(None, None)`` (:class:`_Subpopulations`; :func:`shuffleamp.epsilon` and :func:`shuffleamp.delta` pass it).
        With it, a population whose groups all run one mechanism gets that mechanism's bracket at ``pop.n`` where it
        is tighter, and each Gaussian or (ε0, δ0)-LDP group the bound of the users of its mechanism alone (module
        docstring, "Sub-populations").

    Returns
    -------
    PopulationResult
        ``quantity="delta"``; per-group ``upper`` (certified: the minimum of the personalized bound and,
        for k-RR, λ_g times everyone at the largest ε0, exact for small binary-RR populations;
        ``settings["upper_source"]`` names the one used) and ``lower`` (certified: exact divergence of
        a concrete dataset pair, possibly post-processed).

    Raises
    ------
    ParameterError
        ``'population'`` not a Population, ``'epsilon'`` invalid, ``'n'`` inconsistent with the population.
    ResourceLimitError
        ``'groups'``: the evaluation would exceed the default time budget (cost model
        :data:`POP_TARGET_SECONDS`, :data:`POP_GROUP_SECONDS`), or the groups' sizes make the lower
        bound's FFT window longer than :data:`LOWER_MAX_FFT`; refused before any work.
    """
    _check(pop)
    _check_n(pop, n)
    epsilon = _scalar(_validate.epsilon(epsilon), "epsilon")
    rtol = _rtol(rtol)
    if pop.kind == "mixed":
        return _mixed_result(pop, "delta", epsilon, [delta(part, epsilon, rtol=rtol, sub=sub) for part, _ in pop.parts])
    subs = _Subpopulations(pop, sub)
    _check_cost(pop, "delta", subs)
    out = []
    check = _deadline()
    for g, gr in enumerate(pop.groups):
        check(g)
        # Gaussian groups: both orderings of the concrete pair (the swapped pair is neighbouring too; cached laws)
        lo, how = _delta_lower(pop, g, epsilon, pop.kind == "gaussian")
        up, info = subs.upper(g, lambda: _delta_target(pop, g, epsilon, rtol, start=lo))
        lo = min(lo, up)
        out.append(GroupResult(g, gr.mechanism.describe(), gr.n, gr.gamma, up, lo, dict(info, lower=how)))
    out = _apply_count(pop, "delta", epsilon, _apply_reference(pop, "delta", epsilon, out))
    worst = int(np.argmax([r.upper for r in out]))
    return subs.tighten(PopulationResult("delta", tuple(out), worst, epsilon, None, pop.describe()))


@_names_groups
def epsilon(pop: Population, delta: float, *, n: int | None = None, rtol: float | None = None,
            eps_rtol: float = 1e-7, sub=None) -> PopulationResult:
    r"""Certified upper and lower ε (nats) at δ for a target user of each group.

    Parameters
    ----------
    pop : Population
        From :func:`population`.
    delta : float
        Target δ in (0, 1).
    n : int, optional
        Ignored if None; otherwise must equal ``pop.n``.
    rtol : float, optional
        See :func:`delta`.
    eps_rtol : float
        Width of the final root bracket relative to the ε found.
    sub : callable, optional
        See :func:`delta`.

    Returns
    -------
    PopulationResult
        ``quantity="epsilon"``.  Per group, ``upper`` is the smallest *evaluated* ε whose certified
        upper δ is <= ``delta`` (each such ε is certified on its own) and ``lower`` the largest
        evaluated ε whose certified lower δ exceeds ``delta`` (0 if none), as in
        :func:`shuffleamp.epsilon`; both lie in [0, ε0 of the group].  ``upper`` is the minimum of the
        personalized ε and, for k-RR, the ε of everyone at the largest ε0 at δ/λ_g
        (``settings["upper_source"]``).

    Raises
    ------
    ParameterError
        ``'population'`` not a Population, ``'delta'`` invalid (or below an ApproximateLDP group's δ0: no
        finite ε), ``'n'`` inconsistent with the population.
    ResourceLimitError
        ``'groups'``: the evaluation would exceed the default time budget (cost model
        :data:`POP_TARGET_SECONDS`, :data:`POP_GROUP_SECONDS`), or the groups' sizes make the lower
        bound's FFT window longer than :data:`LOWER_MAX_FFT`; refused before any work.
    """
    _check(pop)
    _check_n(pop, n)
    delta = _scalar(_validate.delta(delta), "delta")
    rtol = _rtol(rtol)
    eps_rtol = _validate.real("eps_rtol", eps_rtol, lo=1e-12, hi=0.1)
    if pop.kind == "approx":
        _approx_check_delta(pop, delta)
    if pop.kind == "mixed":
        return _mixed_result(pop, "epsilon", delta, [epsilon(part, delta, rtol=rtol, eps_rtol=eps_rtol, sub=sub)
                                                     for part, _ in pop.parts])
    subs = _Subpopulations(pop, sub)
    _check_cost(pop, "epsilon", subs)
    out = []
    check = _deadline()
    for g, gr in enumerate(pop.groups):
        check(g)
        eps_hi = float(gr.mechanism.eps0)
        if pop.kind == "gaussian":       # the local Gaussian mechanism's ε is itself a certified upper bound
            from .gaussian import _local_epsilon
            eps_hi = min(eps_hi, _local_epsilon(gr.mechanism.mu, delta))
        est = _estimator(pop, g)

        def own(g=g, eps_hi=eps_hi, est=est):
            if pop.kind == "approx":
                up_, info_, cnt_ = _approx_epsilon_upper(pop, g, delta, rtol, eps_rtol)
            else:
                up_, info_, cnt_ = epsilon_for_delta(lambda e: _delta_target(pop, g, e, rtol, delta), delta, eps_hi,
                                                     "upper", eps_rtol, est)
            return up_, dict(info_ or {}, upper_evaluations=cnt_)
        up, info = subs.upper(g, own)
        # Gaussian groups: both orderings of the concrete pair (the swapped pair is neighbouring too; cached laws)
        lo, how, cnt_l = epsilon_for_delta(lambda e: _delta_lower(pop, g, e, pop.kind == "gaussian"), delta, eps_hi,
                                           "lower", eps_rtol, est)
        lo = min(lo, up)
        info.update(lower=how, lower_evaluations=cnt_l)
        out.append(GroupResult(g, gr.mechanism.describe(), gr.n, gr.gamma, up, lo, info))
    out = _apply_count(pop, "epsilon", delta, _apply_reference(pop, "epsilon", delta, out), eps_rtol)
    worst = int(np.argmax([r.upper for r in out]))
    return subs.tighten(PopulationResult("epsilon", tuple(out), worst, None, delta, pop.describe()))


def _mixed_result(pop: Population, quantity: str, value: float, results: list) -> PopulationResult:
    """The per-space results of a "mixed" population, each group back at its index (module docstring, "Mixed output
    spaces")."""
    out = [None] * len(pop.groups)
    for (part, idx), res in zip(pop.parts, results):
        for j, gr in enumerate(res.groups):
            out[idx[j]] = dataclasses.replace(gr, index=idx[j], settings=dict(gr.settings, output_space=part.kind))
    worst = int(np.argmax([r.upper for r in out]))
    eps_arg, delta_arg = (value, None) if quantity == "delta" else (None, value)
    return PopulationResult(quantity, tuple(out), worst, eps_arg, delta_arg, pop.describe())


def shared_mechanism(pop: Population):
    """The one mechanism every group runs (equal descriptions), or None: such a population *is* that mechanism at
    ``pop.n`` users (module docstring, "Sub-populations")."""
    if pop.kind == "mixed":
        return None
    first = pop.groups[0].mechanism
    desc = first.describe()
    return first if all(gr.mechanism.describe() == desc for gr in pop.groups[1:]) else None


#: Kinds of population whose groups' upper bounds also take the homogeneous bound of the users of the target's
#: mechanism alone (module docstring, "Sub-populations"; k-RR and matrix populations: their own bound is not above it
#: in practice).
SUBPOPULATION_KINDS = ("gaussian", "approx")
#: Users of the widest σ from which the single round's evaluators replace the population's own rungs for those targets.
SUBPOPULATION_REPLACES_MIN_N = 1000


class _Subpopulations:
    r"""The sub-population candidates of a population query (module docstring, "Sub-populations").  ``single(mechanism,
    users)`` (handed in by :func:`shuffleamp.bounds.epsilon`/``delta``, which sit above this module) returns the single
    mechanism's certified ``(upper, lower)`` at the query, or ``(None, None)`` when it would not fit in the budget.

    * every group runs one mechanism: the population *is* that mechanism at ``pop.n`` (:attr:`whole`): each group's
      bracket is intersected with that mechanism's (:meth:`tighten`);
    * else (kinds :data:`SUBPOPULATION_KINDS`) each group's upper is the minimum of its own bound and the bound of the
      users of its mechanism alone; for a Gaussian target of the widest σ, whose own bound (its blanket, narrower
      users at blanket mass 0) is exactly that homogeneous bound, the single round's evaluators replace the
      population's rungs (the population's own evaluation only if the single query was refused)."""

    def __init__(self, pop: Population, single):
        self.pop, self.single, self.cache = pop, single, {}
        self.whole = shared_mechanism(pop) if single is not None else None
        self.on = single is not None and pop.kind in SUBPOPULATION_KINDS and self.whole is None
        if pop.kind == "gaussian":
            top = max(gr.mechanism.sigma for gr in pop.groups)
            self.widest = {g for g, gr in enumerate(pop.groups) if gr.mechanism.sigma == top}
        else:
            self.widest = set()

    def replaces_own(self, g: int) -> bool:
        """Whether group g's own upper is replaced by the single round's (module docstring, "Sub-populations"): from
        :data:`SUBPOPULATION_REPLACES_MIN_N` users of its σ on (below, both are evaluated: measured within 0.2 %)."""
        if not (self.on and g in self.widest):
            return False
        sig = self.pop.groups[g].mechanism.sigma
        return sum(gr.n for gr in self.pop.groups if gr.mechanism.sigma == sig) >= SUBPOPULATION_REPLACES_MIN_N

    def _query(self, mech, users):
        key = (mech.describe().__repr__(), users)
        if key not in self.cache:
            self.cache[key] = self.single(mech, users)
        return self.cache[key]

    def tighten(self, res: PopulationResult) -> PopulationResult:
        """``res`` with every group's bracket intersected with the shared mechanism's at ``pop.n`` (both sides
        certified for the population, which is that mechanism), when every group runs one mechanism."""
        if self.whole is None:
            return res
        up, lo = self._query(self.whole, self.pop.n)
        out = []
        for gr in res.groups:
            new_up = gr.upper if up is None or up >= gr.upper else up
            new_lo = gr.lower if lo is None or (gr.lower is not None and lo <= gr.lower) else lo
            info = dict(gr.settings)
            if new_up != gr.upper:
                info["how"] = "the shared mechanism at n (upper)"
            if new_lo != gr.lower:
                info["lower"] = "the shared mechanism at n"
            out.append(dataclasses.replace(gr, upper=new_up, lower=min(new_lo, new_up) if new_lo is not None else None,
                                           settings=info))
        return dataclasses.replace(res, groups=tuple(out), worst=int(np.argmax([r.upper for r in out])))

    def upper(self, g: int, own):
        """(upper, info) of group g: the minimum of ``own()`` (the population's evaluation, (value, info)) and the
        users of the group's mechanism alone."""
        if not self.on:
            return own()
        mech = self.pop.groups[g].mechanism
        desc = mech.describe()
        users = sum(gr.n for gr in self.pop.groups if gr.mechanism.describe() == desc)
        up_s, _ = self._query(mech, users)
        if up_s is not None and self.replaces_own(g):
            return up_s, {"upper_source": f"the users of the group's mechanism alone ({users} users)",
                          "how": "single round"}
        up, info = own()
        if up_s is not None and up_s < up:
            return up_s, dict(info, upper_source=f"the users of the group's mechanism alone ({users} users)")
        return up, info


def _estimator(pop, g):
    """Cheap uncertified δ(ε) estimate (places the first root bracket): the saddle estimate of the
    homogeneous GPARV with the others' mean γ."""
    from .fft_engine import saddle_estimate
    if pop.kind in ("gaussian", "approx", "approx-uncharged"):
        return None
    gam, N = _others(pop, g)
    if N.size == 0:
        return None
    gbar = float(N @ gam) / float(N.sum())
    n = int(N.sum()) + 1

    def est(e):
        vals, mass = max(_target_laws(pop, g, e), key=lambda vm: float(vm[1] @ np.maximum(vm[0], 0)))
        return saddle_estimate(Gparv(np.append(vals / gbar, 0.0), np.append(mass * gbar, 1.0 - gbar)), n)
    return est


# ============================================================================ baselines
def everyone_at_max(pop: Population, delta: float) -> BoundResult:
    r"""Sound baseline: every user treated at the largest ε0 present (k-RR populations).

    Derived here (module docstring, 'Everyone at the largest ε0'): a k-RR report at ε0 ≤ ε_max is, with
    probability λ, the report at ε_max on the same input and otherwise a uniform report, which is the
    report at ε_max on a uniformly replaced input; conditioning on the replacements (joint convexity)
    bounds every group by the worst case of the homogeneous population at ε_max with the total n.  Its
    Theorem-13 bound is evaluated here as the one-group population (Theorem 13 exactly, see the module
    docstring); :func:`epsilon` also uses the exact count law for binary RR and the factor λ_g.

    Parameters
    ----------
    pop : Population
        A k-RR population.
    delta : float
        Target δ in (0, 1).

    Returns
    -------
    BoundResult
        ``method="everyone-at-max"``, ``sound=True``, ``kind="upper"``; ``upper`` in nats, no lower.

    Raises
    ------
    ParameterError
        ``'population'`` if not a k-RR population, ``'delta'`` invalid.
    """
    from .mechanisms import KRR
    _check(pop)
    if pop.kind != "krr":
        raise ParameterError("population", "the everyone-at-max baseline is defined for k-RR populations")
    m = KRR(eps0=pop.eps0_max, k=pop.k)
    one = population([(m, pop.n)])
    delta = float(_validate.delta(delta))
    up, info, cnt = epsilon_for_delta(lambda e: _delta_target(one, 0, e, _exact.DEFAULT_RTOL), delta,
                                      float(m.eps0), "upper", 1e-7, _estimator(one, 0))
    settings = {"evaluator": "exact", "regime": "k-RR populations; every user at the largest eps0",
                "source": "Theorem 13 (Su, Cheng, Wang) at the largest eps0 with the total n",
                "grid": {"upper": dict(info or {}, delta_error=(info or {}).get("charged"))},
                "upper_evaluations": cnt}
    return BoundResult("epsilon", up, None, "everyone-at-max", pop.n, None, delta, m.describe(), settings,
                       sound=True, kind="upper")


def gdp_deltas(pop: Population) -> np.ndarray:
    """Per-group local δ_i of the μ-GDP comparison value (``delta0`` of ApproximateLDP groups, else 0).

    Parameters
    ----------
    pop : Population
        Any population.

    Returns
    -------
    ndarray
        δ_i per group (float64).
    """
    _check(pop)
    return np.array([float(getattr(gr.mechanism, "delta0", 0.0)) for gr in pop.groups])


def gdp_inputs(pop: Population):
    """Per-group ε0 and counts, the inputs of the μ-GDP comparison value of Chen–Cao–Ge (AAAI 2024)
    (``shuffleamp.epsilon(pop, delta=..., method="gdp")``, an asymptotic estimate, not a bound).

    Parameters
    ----------
    pop : Population
        Any population.

    Returns
    -------
    (ndarray, ndarray)
        ε0 per group (nats) and users per group (float64).
    """
    _check(pop)
    return (np.array([float(gr.mechanism.eps0) for gr in pop.groups]),
            np.array([gr.n for gr in pop.groups], dtype=np.float64))
