r"""Budget accounting over repeated shuffled rounds: privacy profiles, PLD export, composition.

A shuffled round of an ε0-LDP randomizer is bounded by the optimal blanket / general-clone
bound of Su, Cheng and Wang ("Decomposition-Based Optimal Bounds for Privacy Amplification via
Shuffling", IEEE S&P 2026, Theorems 12 and 13; short version arXiv:2504.07414).  This module
turns that bound into a *dominating pair* that composes, exports it to Google's
``dp_accounting`` as a pessimistic privacy loss distribution (PLD), and composes rounds only
through ``dp_accounting``'s own ``compose`` / ``self_compose``.

Arguments (derived here; each is tested by brute force in ``tests/test_accounting.py``)
---------------------------------------------------------------------------------------

**A. The optimal bound is the privacy profile of a fixed pair.**  For one ordered input pair
:math:`(x^0_1, x^1_1)` with decomposition :math:`(a, b, c, \beta)`, let :math:`P^B_0` (resp.
:math:`P^B_1`) be the law of the histogram of component labels when user 1 draws label
:math:`j` with probability :math:`a_j` (resp. :math:`b_j`) and each of the other
:math:`n-1` users draws :math:`j` with probability :math:`c_j` or a left-over label with
probability :math:`\beta`.  With :math:`M` the multinomial law of the :math:`n` labels drawn
i.i.d. from :math:`(c, \beta)`, :math:`P^B_0(h) = M(h)\sum_j (a_j/c_j)\,h_j/n`, so

.. math::

    D_{e^\varepsilon}(P^B_0\|P^B_1) = \sum_h M(h)\Big(\sum_j \tfrac{a_j - e^\varepsilon b_j}{c_j}
    \tfrac{h_j}{n}\Big)_+ = \tfrac1n E\Big[\Big(\sum_{i=1}^n G_i\Big)_+\Big],

the GPARV formula of Su–Cheng–Wang Theorem 12.  The pair does not depend on ε, and the shuffled
output on any neighbouring datasets with that differing pair is a post-processing of it
(Theorems 12–13), so :math:`\varepsilon \mapsto \delta^*(\varepsilon)` is the privacy profile
of a dominating pair in the sense of Zhu, Dong and Wang ("Optimal Accounting of Differential
Privacy via Characteristic Function", AISTATS 2022).  The tests enumerate this histogram pair
for n ≤ 6 and compare.

**B. Negative ε.**  For any pair and :math:`\alpha = e^\varepsilon`,
:math:`(P-\alpha Q)_+ = P - \alpha Q + (\alpha Q - P)_+` pointwise, hence
:math:`D_\alpha(P\|Q) = 1 - \alpha + \alpha D_{1/\alpha}(Q\|P)`.  The reversed pair
:math:`(Q\|P)` is the decomposition with ``a`` and ``b`` exchanged (``Decomposition.swapped``).
The families used here are closed under swapping, so the profile on ℝ is
:math:`U(\varepsilon) = 1 - e^\varepsilon + e^\varepsilon U(-\varepsilon)` for ε < 0, with
:math:`U` on ε ≥ 0 the maximum over the families; a certified upper (lower) value at
:math:`-\varepsilon` gives a certified upper (lower) value at ε.  Because the family set is
swap-closed, the remove and add directions have the same profile and the exported PLD is
symmetric.

**C. The pointwise maximum over ordered input pairs is the profile of a dominating pair.**
Write each pair's profile as :math:`\delta_i(\varepsilon) = 1 + f_i^*(-e^\varepsilon)` with
:math:`f_i = T(P_i, Q_i)` its tradeoff function and :math:`f^*(y) = \sup_x (yx - f(x))`
(Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022, Prop. 2.12).  Then
:math:`\max_i f_i^* = (\min_i f_i)^* = g^*` where :math:`g` is the greatest closed convex
minorant of :math:`\min_i f_i` (a function and its closed convex envelope have the same
conjugate).  :math:`g` is a tradeoff function: it is convex and continuous on [0, 1]; it is
≥ 0 (0 is a convex minorant) and ≤ 1 − x (each :math:`f_i` is); :math:`g(1) = 0`; and it is
non-increasing, since :math:`g(x_1) < g(x_2)` for some :math:`x_1 < x_2 < 1` would give, by
convexity, :math:`g(x_2) \le \max(g(x_1), g(1)) = g(x_1)`.  By Dong–Roth–Su (Prop. 2.2) some
pair :math:`(P^*, Q^*)` has :math:`T(P^*, Q^*) = g \le f_i`, so it dominates every ordered
pair, and its profile :math:`1 + g^*(-e^\varepsilon) = \max_i \delta_i(\varepsilon)` on all of
ℝ.  f-DP composition (Dong–Roth–Su Theorem 3.2, adaptive) then bounds R rounds by the R-fold
product of :math:`(P^*, Q^*)`, which is what the PLD composition computes.

**C2. Continuous randomizers through finite decompositions for n users.**  A mechanism with
``decompositions_at(n)`` (Laplace) is profiled through two finite laws.  Upper: a finite law
:math:`\bar G_\varepsilon` that is a mean-preserving spread of the blanket GPARV
:math:`G_\varepsilon` at every ε at once (:func:`shuffleamp.mechanisms.laplace_spread_decomposition`,
where this is proved; its swap likewise of the swapped GPARV).  Convex order is closed under
i.i.d. sums and :math:`x \mapsto x_+` is convex, so
:math:`\tfrac1n E(\sum \bar G_i)_+ \ge \tfrac1n E(\sum G_i)_+ = \delta^*(\varepsilon)` at every
ε ≥ 0 and for both orderings: the certified values of the finite law are certified upper values of
the blanket pair's profile (a dominating pair, arguments A and C) at any grid of ε, which is all
arguments B and D use.  Lower: the Theorem-14 dataset with every report quantised by one fixed map
(:func:`shuffleamp.mechanisms.laplace_cells_lower`), a post-processing applied before shuffling,
so the quantised pair is itself a concrete pair whose divergence is at most the dataset's, and
argument G applies to it as to any finite concrete pair.

**D. Pessimistic PLD from certified upper values (connect the dots).**
``dp_accounting.pld.pld_pmf.create_pmf_pessimistic_connect_dots(d, k, deltas)`` (Doroshenko,
Ghazi, Kamath, Kumar, Manurangsi, "Connect the Dots: Tighter Discrete Approximations of
Privacy Loss Distributions", PETS 2022, Algorithm 1) takes strictly increasing *integers*
``k`` (losses ``k * d``, either sign) and the δ's there; it puts mass on each ``k_i * d`` and
the last δ on the infinity atom.  Reading its source (dp_accounting 0.6.0): with
:math:`x = e^\varepsilon`, the resulting PLD's curve
:math:`\delta_{\rm CTD}(x) = \delta_n + \sum_i p_i (1 - x e^{-\varepsilon_i})_+` is the
piecewise-linear interpolation in x of the points :math:`(0, 1), (x_1, \delta_1), \dots,
(x_n, \delta_n)`, constant :math:`\delta_n` beyond :math:`x_n`; the masses are slope
differences, non-negative iff the points are convex in x (it clips negative masses to 0).
We feed it certified *upper* values :math:`\hat\delta_i \ge U(\varepsilon_i)`, first replaced
by a running minimum (U is non-increasing) and then by the greatest convex minorant of
:math:`\{(0,1), (x_i, \hat\delta_i)\}` evaluated at the :math:`x_i`.  The true U is convex in x
(a hockey-stick divergence is a supremum of affine functions of α) and lies below every
point, so it lies below that minorant (the greatest convex function below the points): the
values stay certified upper bounds, are convex and non-increasing, and no mass is clipped.
Between grid points the chord of a convex function lies above it, beyond the last point
:math:`\delta_{\rm CTD} = \delta_n \ge U`, and below :math:`x_1` the chord from (0, 1) lies
above U.  Hence :math:`\delta_{\rm CTD} \ge U` on all of ℝ: the exported pair dominates
(:math:`T_{\rm CTD} \le g`).  It is a valid pair: its Q-mass is
:math:`\sum_i p_i e^{-\varepsilon_i} = (1-\delta_1)/x_1 \le 1` because
:math:`\delta_1 \ge U(\varepsilon_1) \ge 1 - x_1` for every pair.  Mass beyond the grid's
last point :math:`\varepsilon_n` (where :math:`U \le` ``tail_delta``) is charged to the
infinity atom, never dropped.

**E. Lower bound for a total.**  R rounds on one concrete neighbouring dataset pair are the
R-fold product of that pair, so the composed divergence of any post-processing of it is a
valid lower bound on the total.  For a Theorem-14 dataset (Su–Cheng–Wang Theorem 14: user 1
holds :math:`x^0_1` or :math:`x^1_1`, the other n − 1 users :math:`x_2`), with components
:math:`S = \{j: a_j > b_j\}` the count :math:`C` of reports in S is a post-processing of the
histogram, and :math:`C = B + \mathrm{Bin}(n-1, c(S))` with :math:`B \sim \mathrm{Bern}(a(S))`
resp. :math:`\mathrm{Bern}(b(S))`.  For binary randomized response (two outputs) C is the
whole histogram, so this is the exact concrete pair (Cheu, Smith, Ullman, Zeber, Zhilyaev,
"Distributed Differential Privacy via Shuffling", EUROCRYPT 2019, for the count view).  The
count laws are built exactly (``scipy.stats.binom`` log-PMF) on a window; counts outside it
are *dropped*.  That keeps a lower bound: the PLD's δ is a sum over outcomes of non-negative
terms :math:`(P(o) - e^\varepsilon Q(o))_+`, the composition of restricted measures is the
product measure restricted to :math:`W^R`, and dropping outcomes only removes terms.  (Merging
the outside into one bin would be a post-processing too, but is not needed.)  Losses are
rounded *down* to the grid (``dp_accounting``'s optimistic rounding), which lowers every term.
``dp_accounting``'s ``self_compose`` adds its ``tail_mass_truncation`` t to the infinity mass
and may alias at most t of mass (its FFT wraps around), so each ``self_compose`` can raise the
optimistic δ by at most 2t: this is subtracted (``AccountingResult.error``).  The weakest
always-valid lower bound — composition never decreases ε, since the adversary may ignore all
rounds but one — is the single-round certified lower ε (or δ); the accountant reports the
larger of the two and names it in ``lower_method``.

**F. Populations** (:func:`shuffleamp.population`).  For a user of group g, the certified
per-group bound of :mod:`shuffleamp.personalized` is the profile of one fixed pair that does not
depend on ε (the user's sample plus :math:`M'` blanket samples, with :math:`M'` revealed; the
shuffled output is a post-processing of it), maximised over that user's ordered input pairs, which
are swap-closed: arguments A–C apply to it.  A population round is accounted by the pointwise
maximum over its groups of these profiles, itself the profile of a pair dominating every group's
pair (argument C), so the composed total bounds *every* user, whatever their group (a user in
group g may have a smaller total; composing each group separately would show it, at G times the
cost).  Its lower bound composes the concrete score pair of the group with the largest total
variation (``shuffleamp.personalized``, 'Lower bound'): a valid lower bound for that group's user.
A population's PLD uses at most :data:`POPULATION_POINTS` profile points per side (each is one
Bromwich integral per group; connect-the-dots stays pessimistic on fewer points).

*Gaussian populations.*  A group's upper profile is, at every ε, the minimum of certified candidates (the local
profile, the truncation rungs of its own blanket, the cross blankets of wider groups: ``shuffleamp.personalized``,
"Gaussian groups"); each candidate is the profile of a pair dominating every neighbouring pair of that target
(swap-closed), so their pointwise minimum is a valid upper profile of that target (at every ε it bounds the same
worst case) and arguments A–C apply to it.  A target of the widest σ is profiled by the single Gaussian round's family
(argument J) for the users of its σ (a sub-population: the same bound, with the single round's rungs), from
:data:`POPULATION_FAMILY_MIN_N` users on.  The lower total composes, of the threshold count and the multi-level score
of the dataset (0 | Δ; others Δ), the one of larger total variation (both are post-processings of one concrete pair,
with relative rounding bounds moved against the pair, so argument G applies).  A population whose groups all run one
mechanism is accounted as that mechanism at n users.  A population of Gaussian and finite-alphabet groups (kind
"mixed") takes each group's profiles from its own output space's population (``shuffleamp.personalized``, "Mixed
output spaces": the same worst case, upper and lower).

**G. Lower bound from the whole concrete pair (privacy-loss buckets).**  Let (P, Q) be the
concrete pair of a Theorem-14 dataset (its GPARV form with β = 0 has the pair's profile; the
mechanism's output histogram determines the component histogram, so composing it is composing a
post-processing of the shuffled outputs), and :math:`H(x) = D_x(P\|Q)` its profile as a function
of :math:`x = e^\varepsilon \in [0, \infty)` (argument B gives x < 1 from the reverse pair).  H is
convex, H(0) = 1, :math:`H \ge (1-x)_+`.  Bucketing the privacy loss L = log dP/dQ into cells
:math:`[\varepsilon_i, \varepsilon_{i+1})` is a post-processing; the bucketed pair's profile agrees
with H at the :math:`x_i = e^{\varepsilon_i}` and is the maximum of the tangent lines of H there
(its slope on a cell is :math:`-Q(L \ge \varepsilon_i)`, by :math:`H(x) = P(L > \varepsilon) - x
Q(L > \varepsilon)`).  Those slopes need derivatives; we use instead only certified values
:math:`\underline H_i \le H(x_i) \le \overline H_i` (:func:`shuffleamp.exact.delta_exact_profile`,
mode "both", of the pair and of its reverse) and convexity: the line :math:`R_j` through
:math:`(x_j, \overline H_j)` and :math:`(x_{j+1}, \underline H_{j+1})` lies below H on
:math:`[x_{j+1}, \infty)` (its slope is at most the chord's and it starts below H; a chord of a
convex function extended beyond its interval lies below the function), and the line :math:`L_j`
through :math:`(x_j, \underline H_j)` and :math:`(x_{j+1}, \overline H_{j+1})` lies below H on
:math:`[0, x_j]`.  On each cell :math:`[x_i, x_{i+1}]` let g be the maximum of
:math:`R_{i-1}`, :math:`L_{i+1}`, 1 − x and 0 (each below H there), less a round-off margin of
32 u times the magnitudes in each line's evaluation.  The greatest convex minorant
:math:`\tilde g` of g (the lower hull of g's breakpoints, with (0, 1)) is convex, non-increasing,
:math:`\tilde g(0) = 1` and :math:`\tilde g \ge (1-x)_+`, so it is the profile of a pair
:math:`(P', Q')`: the masses :math:`p_k = X_k(\sigma_k - \sigma_{k-1})` under P' at the losses
:math:`\log X_k` of its vertices :math:`X_k` (σ the hull slopes), and :math:`\tilde g \le g \le H`.
A pair whose profile is below another's on all of ℝ has a larger tradeoff function, hence is a
garbling of it (Blackwell's theorem for binary experiments; Dong, Roth, Su, JRSS-B 2022, Theorem
2.10), and R-fold products keep the order, so :math:`D_x(P'^{\otimes R}\|Q'^{\otimes R}) \le
D_x(P^{\otimes R}\|Q^{\otimes R})`, which is at most the true total (argument E).  The loss law is
then made optimistic for ``dp_accounting``: losses rounded *down* to the grid and masses reduced by
their round-off bound.  The composed δ is :math:`E[(1 - x e^{-\sum L})_+]` over independent losses,
non-decreasing in every loss and in every mass, so moving mass down or deleting it only lowers it.
The same is done for the reverse ordering (the PLD's "add" direction).  The information lost is the
convex-hull gap between g and H, second order in the cell width (as connect-the-dots on the upper
side), plus the grid rounding (at most one step of the lower grid per round, about half on average; the lower
grid is d / LOWER_REFINE, halved when a round type's own scale is finer than the common step d).
Tested against exact R-fold compositions of enumerated pairs in ``tests/test_accounting.py``.

**H. Round-off of the composition.**  ``dp_accounting`` composes by FFT: ``self_compose(R)``
computes :math:`\mathrm{ifft}(\mathrm{fft}(a)^R)` on a length N = ``next_fast_len`` (the window it
keeps is the circular convolution's, aliasing being part of its truncation ``t``), ``compose``
uses ``scipy.signal.fftconvolve``; small sparse PMFs are convolved by direct sums.  We bound the
2-norm of the error vector of every computed PMF, and the error of its infinity mass (``dp_accounting``
computes :math:`1-(1-m)^R` as ``-expm1(R log1p(-m))`` or by R − 1 steps of :math:`1-(1-a)(1-b) = a+b-ab`:
within 4(R + 1)u relative, one step within 4u, charged on top of the propagated errors).  A computed
length-N FFT satisfies
:math:`\|\hat y - y\|_2 \le \epsilon_F \|y\|_2` with :math:`\epsilon_F = L\eta/(1 - L\eta)`,
:math:`L = \lceil\log_2 N\rceil`, :math:`\eta = \mu + \gamma_4(\sqrt2 + \mu)`, μ the twiddle
factors' error (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., SIAM 2002,
Theorem 24.2; we take μ = 4u and double η for mixed-radix butterflies).  The same stage-by-stage argument bounds every entry:
:math:`|\hat y_k - y_k| \le \epsilon_F \|a\|_1` (each stage's intermediate values are partial DFTs,
bounded by the sums of :math:`|a_j|` over their inputs).  With :math:`m_k = |\hat y_k| + \epsilon_F\|a\|_1
\ge \max(|y_k|, |\hat y_k|)` (:math:`\hat y` recomputed, plus
:math:`\epsilon_F\|a\|_1` more for ``dp_accounting``'s own computed copy), the R-th power moves entry k by at most
:math:`R\,\epsilon_F\|a\|_1 m_k^{R-1}` plus the power's own rounding (``exp(R log z)``: relative
:math:`4u(R\pi + 2 + R|\log|z||)`, and :math:`|z|^R R |\log |z|| \le (2/e)|z|^{R/2}`); the 2-norm
of these entry bounds, divided by √N (the inverse FFT's scaling), plus :math:`\epsilon_F` of the
computed power's norm for the inverse FFT itself, bounds the result's error, plus
:math:`R\,S^{R-1}` times the input's error (Young's inequality :math:`\|f * g\|_2 \le
\|f\|_2\|g\|_1`, S the input's 1-norm).  For two PMFs the same steps bound the product's entries by
:math:`\epsilon_F(S_a m^b_k + S_b m^a_k) + \epsilon_F^2 S_a S_b + 4u\,m^a_k m^b_k`, plus the
propagated input errors :math:`e_a \min(S_b, \sqrt{|a|}\|b\|_2) + e_b \min(S_a,
\sqrt{|b|}\|a\|_2) + e_a e_b \sqrt{\min(|a|, |b|)}` (Young's inequality both ways); direct sums of products
of n terms are within :math:`\gamma_n` of the sum of their absolute values.  Entries the
truncation removes carry at most √(their number) times the 2-norm into the infinity mass, whose
own error then moves by at most R times (self-composition) or adds (composition).  Finally the
computed :math:`\delta(\varepsilon) = m_\infty + \sum_b w_b p_b`, :math:`w_b = (1 -
e^{\varepsilon - \ell_b})_+ \le 1`, is within :math:`\|w\|_2 \|\Delta\|_2` of the exact
composition's (Cauchy–Schwarz), plus the summation's own :math:`\gamma_{\log_2 N + 2}` relative
error.  This charge is *added* to the upper δ (``AccountingResult.roundoff``) and *subtracted* from
the lower (``AccountingResult.error``); an inverse ε(δ) is proposed by the usual piecewise formula
and returned only where the charged bound was evaluated and holds.  Measured: about 1e-13 at
10-RR, n = 1e8, 365 rounds (``tests/test_accounting.py`` checks the bound against an exact
rational-arithmetic convolution).

**I. (ε0, δ0)-LDP classes: the clone pair with infinity atoms.**  For
:class:`shuffleamp.gaussian.ApproximateLDP` (the reduction of an (ε0, δ0)-LDP randomizer to the standard
clone is proved in the :mod:`shuffleamp.gaussian` module docstring), fix neighbouring datasets
:math:`D_0, D_1` differing in user 1, :math:`\beta \ge \max(\beta_0, \beta_1)` (there :math:`\beta =
\min(n, d-1)\,\delta_0`) and :math:`\hat P_b` the shuffled output with user 1 drawing from :math:`\hat g_b`.
The output law is linear in user 1's report law and :math:`P_b = (1-\beta_b)\hat g_b + (P_b - g_b)`, so
:math:`P_{D_0} = (1-\beta_0)\hat P_0 + \beta_0 N_0 = (1-\beta)\hat P_0 + \beta N` with
:math:`N = [(\beta-\beta_0)\hat P_0 + \beta_0 N_0]/\beta` a probability measure, and :math:`P_{D_1} \ge
(1-\beta_1)\hat P_1 \ge (1-\beta)\hat P_1`, so :math:`P_{D_1} = (1-\beta)\hat P_1 + \beta N'` with
:math:`N' = (P_{D_1} - (1-\beta)\hat P_1)/\beta` a probability measure.  Hence :math:`(P_{D_0}, P_{D_1})` is
the image of :math:`P^* = (1-\beta)\hat P_0 + \beta\,\mathbb 1_\top`, :math:`Q^* = (1-\beta)\hat P_1 +
\beta\,\mathbb 1_\bot` under one kernel (the identity on the outputs, :math:`\top \mapsto N`,
:math:`\bot \mapsto N'`; ⊤ and ⊥ two new outcomes), and :math:`(\hat P_0, \hat P_1)` is a post-processing
of the clone pair :math:`(C_0, C_1)` at :math:`\varepsilon_0' = \varepsilon_0 - \log(1-\beta)` (arguments A
and C), so the kernel extended by the identity on {⊤, ⊥} shows that :math:`((1-\beta)C_0 + \beta\mathbb
1_\top, (1-\beta)C_1 + \beta\mathbb 1_\bot)` dominates the ordered pair.  Its profile is
:math:`\beta + (1-\beta)\delta_C(\varepsilon)` on all of ℝ (⊤ has infinite loss and adds β at every ε; ⊥ has
no mass under the first law and adds nothing); the other ordering gives the swapped clone pair, and the
pointwise maximum :math:`\beta + (1-\beta)U` (U the swap-closed clone profile) is a dominating pair's
(argument C).  Connect the dots (argument D) on the certified values :math:`\beta + (1-\beta)\hat U_i`,
rounded up (an increasing affine map fixing (0, 1) commutes with the greatest convex minorant), gives masses
:math:`(1-\beta)` times U's and the infinity mass :math:`\beta + (1-\beta)\hat U_n`: in ``dp_accounting``'s
terms, probabilities scaled by 1 − β and infinity mass :math:`(1-\beta)m_\infty + \beta`.  Composition
(Dong–Roth–Su Theorem 3.2: adaptive, heterogeneous rounds) bounds R rounds by the R-fold product, whose
profile is :math:`1 - (1-\beta)^R + (1-\beta)^R\,\delta_{C^{\otimes R}}(\varepsilon) \le R\beta +
\delta_{C^{\otimes R}}(\varepsilon)`: never looser than charging Rβ to the total, and a PLD that composes
with any other.

*Fewer users, all at once.*  For m <= n the shuffled output of the n users is a post-processing of that of
the differing user and m − 1 of the others, by one kernel under both datasets (draw the remaining reports
from their laws), so the pair of the reduction with m users (the clone at :math:`\varepsilon_0'(\beta_m)`
with m users, :math:`\beta_m = \min(m, d-1)\,\delta_0`, infinity mass :math:`\beta_m`) dominates every
ordered pair too, and its profile :math:`\beta_m + (1-\beta_m)U_m` bounds the class's worst-case profile
:math:`\delta^*` (the supremum over every (ε0, δ0)-LDP randomizer and dataset pair, itself a dominating pair's
profile by argument C, hence convex in :math:`e^\varepsilon`) at every ε.  So does their pointwise minimum
over m = n, n/2, ..., 1 (:class:`_ApproxFamily`), which is not convex itself: argument D only needs
certified upper values of a convex profile, and δ* lies below the minimum, hence below the greatest convex
minorant that connect-the-dots builds.  The exported pair dominates every round, and since its profile is
below each single m's, it is a garbling of each (Blackwell), so its R-fold composition is below each single
m's too: no users-kept value has to be chosen for a target.  As ε grows the minimum is reached at fewer users
(smaller infinity mass, less amplification) and ends at the floor :math:`\beta_1 = \delta_0` beyond
:math:`\varepsilon_0'(\beta_1)`: the PLD's infinity mass is :math:`\delta_0` (plus ``tail_delta``), the
rest of the reduction's bad events is carried by finite losses.  At δ0 = 0 all :math:`\beta_m` are 0 and the
pair is the pure ε0 clone pair with all n users.

*Populations of (ε_i, δ_i)-LDP groups.*  A target of group g is bounded by its own group's :math:`n_g`
shuffled reports alone (:mod:`shuffleamp.personalized`, "Groups of (ε_i, δ_i)-LDP randomizers"), hence by
the minimum over its users kept above; the population's worst-case profile is at most the maximum over the
groups of these minima (each a certified upper value at every ε), with the floor :math:`F = \max_g \delta_g`,
and connect-the-dots applies as above.  Its lower bound is the population's concrete score pair (argument F).

*Lower.*  The class's concrete members with all n users (:mod:`shuffleamp.gaussian`, "Lower bound"): k-RR
at :math:`\varepsilon_1^{(k)}`, a concrete pair as any other (arguments E and G), and the randomizer that
reveals its input with probability δ0 on top of k-RR at ε0.  For its Theorem-14 pair, let K be the number of
other users whose report is a revealed symbol (same law under both datasets); output ⊤ if
:math:`r_{x^0}` occurs, ⊥ if :math:`r_{x^1}` occurs, and otherwise the k-RR histogram with K fresh reports
drawn from :math:`B(x_2)` (the law of the others' unrevealed reports) in place of the K revealed ones.
This kernel is the same under both datasets and maps the pair to exactly :math:`(\delta_0\mathbb 1_\top +
(1-\delta_0)B_0, \delta_0\mathbb 1_\bot + (1-\delta_0)B_1)`, :math:`(B_0, B_1)` the k-RR Theorem-14 pair with
n users, whose R-fold composition is therefore at most the true total.  Its optimistic PLD is B's (argument
E or G) with masses scaled by 1 − δ0 and infinity mass :math:`\delta_0 + (1-\delta_0)m_\infty`, rounded
down, in both orderings; ``dp_accounting`` composes infinity masses as :math:`1 - \prod(1-m_i)` (its
round-off charged, argument H).  Tested against exact R-fold compositions of enumerated members and datasets
in ``tests/test_approximate_ldp_rounds.py``.

**J. The Gaussian randomizer: the pointwise minimum of certified profiles.**  For
:class:`shuffleamp.Gaussian` (μ = Δ/σ) let :math:`\delta^*` be the worst-case profile of one round, the
supremum over neighbouring dataset pairs in both orderings: by argument C the profile of a dominating pair,
convex in :math:`e^\varepsilon`, and swap-closed, so argument B gives ε < 0 from ε > 0.  At every ε >= 0 two
kinds of values are certified to be >= :math:`\delta^*(\varepsilon)`.  (i) For every truncation depth z, the
certified profile :math:`\delta_z(\varepsilon)` of the spread truncated blanket law plus its charged tail
:math:`\tau(z)` (:mod:`shuffleamp.gaussian` module docstring: the spread is a convex-order domination at every ε at
once, the tail is charged at every ε, the extreme input pair is the worst and its reverse has the same law).  (ii)
The local Gaussian mechanism's exact profile :math:`\delta_N(\varepsilon) = \Phi(-\varepsilon/\mu + \mu/2) -
e^\varepsilon\Phi(-\varepsilon/\mu - \mu/2)` (Balle, Wang, "Improving the Gaussian Mechanism for Differential
Privacy", ICML 2018, Theorem 8): on neighbouring datasets differing in user 1 with inputs a, b the shuffled output
is the image of user 1's report under one kernel (draw the others' reports from their laws, shuffle), so its
divergence is at most that of :math:`(N(a, \sigma^2), N(b, \sigma^2))`, at most that of the extreme pair
:math:`(N(0, 1), N(\mu, 1))` (its tradeoff function :math:`G_{|a-b|/\sigma} \ge G_\mu`; Dong, Roth, Su, JRSS-B
2022), which is symmetric.  So the minimum over the depths evaluated and the local profile is >= δ* at every ε of
the grid.  That minimum is not convex in :math:`e^\varepsilon`, but argument D only needs certified upper values of
a convex, non-increasing profile at the grid points: the running minimum and the greatest convex minorant that
connect-the-dots builds stay above δ* (as for the users kept of argument I).  Which depths are evaluated where
(one per decade of charge from :math:`10^{-2}` down to 1 % of ``tail_delta``; at each ε the depths whose charges
are 0.01 % to 1 % of the best value so far without its charge, shallow to deep; :class:`_GaussianFamily`) changes
only tightness and cost: the deep cuts' Bromwich error bounds grow with their largest log-ratio
:math:`\mu(\mu/2 + z)`, so a single deep cut is loose at every ε, while a cut whose charge is a small part of the
profile there is tight.  The support edge: at the deepest cut's largest log-ratio :math:`\varepsilon_K =
\mu(\mu/2 + z)`, :math:`\delta_N(\varepsilon_K) = \tau(z) <` ``tail_delta``.  :math:`\delta_N` is computed from
``log_ndtr`` (an estimate to about 1e-14 relative) and
rounded up by 1e-12 relative plus one ulp.  The lower side is the quantised concrete pairs (argument K).
*Where the values are taken* changes only tightness and cost, never soundness, because argument D accepts certified
values at any increasing integers of the grid and every value above is certified on its own: (a) with a long support
a quarter of the profile points lie uniformly over the bulk of the blanket pair's loss (8 times its placement scale
:math:`\sqrt{\chi^2_{\rm up}/n}`, :func:`shuffleamp.gaussian.loss_scale`) and the rest geometrically up to the
edge: the PLD's mean (its KL divergence, which R rounds multiply) is then that of the blanket pair, where a uniform
grid of a few hundred points over a support of hundreds of scales inflated it (measured at Δ/σ = 2, n = 1e5: KL
5.81e-4 -> 5.30e-4, against :math:`\chi^2_{\rm up}/2n` = 5.30e-4); (b) a rung is evaluated first at every 8th ε
of its range and at the others only next to a probe where it lowered the profile (the deep rungs' Bromwich error
bounds make them useless over most of their range, at up to 60 ms per ε), and after that pass also where its charge
is up to 30 % of the value found (as the single round's ladder does: where the deeper rungs' error bounds are loose,
a shallow rung's accurate value plus its charge is smaller; measured at Δ/σ = 2, n = 1e3: the profile at ε = 2 and
3 fell 5x and 9x, to the single round's certified values).  (c) One round of one round type: the
total is the single round, so the single round's certified bracket at the target
(:func:`shuffleamp.bounds.epsilon` of the randomizer itself, whose ladder places its truncation at the target) is
an answer too; the smaller upper and the larger lower are reported.  (d) With few blanket draws (n γ <= 40) each
rung is evaluated by the certified FFT engine instead of the Bromwich integral (both give certified upper values of
the same truncated law's functional, :mod:`shuffleamp.fft_engine`; with few draws the Bromwich integrand decays
slowly and its error bound is loose).  (e) At a δ target the grid ends (the round type's ``tail_delta``, argument D)
where the certified profile is below :data:`GAUSSIAN_TAIL_SHARE` times δ over the total number of rounds: the rest
goes to the PLD's infinity mass, which the composition carries (at most that share of δ over all rounds), so the
deep rungs needed only below it are not evaluated.
Tested against the single-round bracket and an n = 2 integration oracle in ``tests/test_gaussian_accounting.py``.

**K. The Gaussian randomizer's lower bound over rounds.**  Every candidate is a quantised concrete pair
(:func:`shuffleamp.gaussian.totals_lowers`: the reports of the dataset (0 | Δ; others Δ) mapped to cells, a
post-processing of the shuffled output applied in every round), so by argument G the R-fold composition of its
optimistic PLD is at most the true total, and so is the largest over the candidates (each a lower bound on its
own; which one wins depends on R, so they are compared composed, on a coarse ε grid first, the best one again on
the full grid).  Three further steps keep it a lower bound.  (i) *Any ε grid*: argument G turns certified bounds of
the pair's profile at any increasing points into a convex minorant; the points are placed uniformly over the
bulk of the pair's loss (8 placement scales :math:`\sqrt{(e^{\mu^2}-1)/n}`) and geometrically beyond.  (ii)
*A finer loss grid*: the optimistic PMF rounds each loss down to the grid d, which lowers each round's mean loss
by up to d; with a mean loss (KL) of order :math:`\chi^2/2n`, far below the upper's step at large n, R rounds
lose about R d/2 in ε, so the step is halved (by powers of 2, a divisor of the upper's step) until it is a tenth
of that mean, within a cap on the composed PMF's size.  (iii) *Cut tails*: for an optimistic PMF p (masses under
P at losses ℓ) every composed hockey-stick value :math:`\delta_R(\varepsilon) = m_\infty + E[(1 -
e^{\varepsilon - \sum_i L_i})_+]` has a non-negative integrand that is non-decreasing in every :math:`L_i`, so
moving mass to a smaller loss, or dropping it, can only lower it: the largest losses whose mass is at most w are
moved down to the loss below them, and the smallest losses with mass at most w are dropped
(:func:`_trim_tails`).  The change is at most :math:`2Rw` in δ (the two PMFs differ on an event of probability at
most 2w per round); with :math:`w = 10^{-4}\delta/R` it costs nothing visible and the composed grid shrinks from
the support of R rounds' heavy log-normal tails to the bulk.  Tested against exact R-fold compositions of the
enumerated quantised pairs (n = 2, 3) in ``tests/test_gaussian_lower.py`` and of random PMFs
(``tests/test_gaussian_accounting.py``).

Certified vs estimated: the single-round values are certified as in
:func:`shuffleamp.exact.delta_exact`; the composition's floating-point round-off is charged
(argument H).  The binomial log-PMF values of the count-statistic lower bound are estimates (to
about 1e-15 relative).  Shuffle bounds are for replace-one (substitution) neighbours: compose them
only with replace-one PLDs of other mechanisms.
"""

from __future__ import annotations

import copy
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import pld_pmf
from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution
from scipy import stats

from . import _extras, _reuse, _validate
from ._numerics import (DEFAULT_MAX_MEMORY_GB, DEFAULT_MAX_SECONDS, PLD_POINT_BYTES, PLD_POINT_SECONDS, budget,
                        check_pld_points, check_time, inverse_monotone, refuse_if_costly)
from .evaluate import LOWER_MODE, max_delta
from .decomposition import Decomposition, dedupe, law_key
from .errors import ParameterError, ResourceLimitError, UnsupportedGparvError
from .exact import delta_exact_profile
from .personalized import Population, group_profiles, score_pair_logpmf, shared_mechanism
from .results import AccountingResult  # the result type lives in results (one home)

#: Profile evaluations per side of the PLD grid (the grid may be finer; see :func:`to_pld`).
DEFAULT_POINTS = 1000
#: The grid ends where the certified profile is below this; the rest goes to the infinity mass.
DEFAULT_TAIL_DELTA = 1e-15
#: ``tail_mass_truncation`` passed to every ``dp_accounting`` composition.
TAIL_MASS_TRUNCATION = 1e-15
#: Refuse grids with more integer steps than this between 0 and the support edge.
MAX_GRID_STEPS = 20_000_000
#: The optimistic lower-bound PLD uses the grid step d / LOWER_REFINE (floor rounding costs up to R d).
LOWER_REFINE = 4
#: Further refinement of the lower-bound grid (power of 2, at most this) for round types whose own
#: scale is finer than the common step.
MIXED_REFINE = 2
#: Profile evaluations per side of a population's PLD (each costs one Bromwich integral per group).
POPULATION_POINTS = 64
#: Cost model of :func:`compose_rounds`: seconds per round type (edge search, profile grid, single-round
#: and composed lower bound); measured 0.13 s CPU per 10-RR type (bench/results_limits.md), doubled for
#: the mechanisms whose single-round queries are slower.
ROUND_TYPE_SECONDS = 0.25
#: Profile evaluations per side of a concrete pair's privacy-loss buckets (argument G; second-order
#: accurate in the spacing, so fewer points than the upper PLD's suffice).
LOWER_POINTS = 128
#: ... and of a population round type: per group and profile evaluation (one Bromwich integral of the
#: mixture; about 15 ms CPU measured for 20 binary-RR groups at n = 1e5), POPULATION_POINTS + 20 per group
#: (the grid and the support-edge search).
POPULATION_EVAL_SECONDS = 0.01
#: Cost model of a Gaussian population round type: per group GAUSSIAN_POPULATION_GROUP_SECONDS +
#: GAUSSIAN_POPULATION_SMALL_N_SECONDS / sqrt(n) (the small-n evaluators of the profiles grow with the atoms), times
#: 1 + (largest Δ/σ − 2)_+ (the rungs of heavy laws); measured CPU, 10 rounds, δ = 1e-6, 2 - 3 groups at Δ/σ 1 - 4 and
#: n = 1e2 - 1e6: 0.6 - 6.8 s against 0.6 - 5.4 s estimated (``bench/results_population.md``).
GAUSSIAN_POPULATION_GROUP_SECONDS = 0.3
GAUSSIAN_POPULATION_SMALL_N_SECONDS = 15.0
#: Profile evaluations per side of the upper PLD of a round type profiled through a continuous randomizer's
#: finite decompositions for n users (:func:`_families_at`; each evaluation is a Bromwich integral over up to
#: a few hundred atoms, 1–4 ms CPU below n = 1e4): the evaluated points are a subset of the PLD grid
#: (still pessimistic; measured loosening 5e-5 relative of the total ε for Laplace, ε0 = 1, n = 30).
AT_N_POINTS = 256
#: Cost model of one profile evaluation of such a round type: seconds per atom of the upper family (about
#: 4e-5 s measured at n = 10 .. 1000 on one core, doubled for a loaded machine; less at large n).
AT_N_ATOM_SECONDS = 1e-4
#: Profile evaluations between two checks of the time budget.
PROFILE_CHUNK = 32
#: Binomial window of the concrete-pair lower bound: mean ± LOWER_WINDOW_SD standard deviations.
LOWER_WINDOW_SD = 14.0
_U = float(np.finfo(np.float64).eps)


__all__ = ["AccountingResult", "privacy_profile", "to_pld", "compose_rounds", "max_rounds", "max_eps0",
           "binary_rr_rounds"]


# ---------------------------------------------------------------------------- per-ε evaluation
#: A Gaussian population's widest group is profiled by the single Gaussian round's family from this many users of
#: its σ on (below, that family's small-n rungs cost seconds per round type: measured 22 s of CPU at 34 users, 5 s at
#: 100; the population's own rungs instead).
POPULATION_FAMILY_MIN_N = 1000


class _PopulationFamily:
    """A population (:mod:`shuffleamp.personalized`) as one family: the pointwise maximum over its
    groups of the certified per-group profiles (argument F)."""

    def __init__(self, pop):
        self.pop = pop
        self._sub = None

    def subpopulation_families(self) -> dict:
        """Gaussian populations: {group: the single Gaussian round's family (argument J) for the users of that group's
        σ} for the groups of the widest σ.  Such a target has no wider blanket; its population bound (own blanket,
        narrower users at blanket mass 0) is the homogeneous bound of the users of its σ, which this family evaluates
        with the single round's rungs (``shuffleamp.personalized``, "Sub-populations": a certified upper profile of
        that target)."""
        if self._sub is None:
            self._sub = {}
            pop = self.pop
            if pop.kind == "gaussian":
                top = max(gr.mechanism.sigma for gr in pop.groups)
                users = sum(gr.n for gr in pop.groups if gr.mechanism.sigma == top)
                mech = next(gr.mechanism for gr in pop.groups if gr.mechanism.sigma == top)
                if users >= POPULATION_FAMILY_MIN_N:
                    fam = _GaussianFamily(mech.at_n(users), users, DEFAULT_TAIL_DELTA)
                    self._sub = {g: fam for g, gr in enumerate(pop.groups) if gr.mechanism.sigma == top}
        return self._sub

    def values(self, eps: np.ndarray, side: str) -> np.ndarray:
        if self.pop.kind == "mixed":                   # the maximum over the output spaces' populations
            if not hasattr(self, "_parts"):
                self._parts = [_PopulationFamily(part) for part, _ in self.pop.parts]
            return np.max([f.values(eps, side) for f in self._parts], axis=0)
        given = None
        if side == "upper" and self.subpopulation_families():
            fams = self.subpopulation_families()
            first = next(iter(fams.values()))
            v = first.values(np.asarray(eps, dtype=np.float64), "upper")
            given = {g: v for g in fams}
        return group_profiles(self.pop, eps, side, given=given).max(axis=0)


#: Profile evaluations per side of the upper PLD of a Gaussian round type (:class:`_GaussianFamily`: each point
#: is the local Gaussian profile and up to a few truncation rungs' Bromwich integrals, ms each) when the requested
#: ``points`` would take more than GAUSSIAN_FULL_GRID_SECONDS by the cost model below (connect-the-dots stays
#: pessimistic on fewer points, less tight: measured 0.0188 instead of 0.0175 at σ = 1, n = 1e5, one round).
GAUSSIAN_POINTS = 256
GAUSSIAN_FULL_GRID_SECONDS = 0.5
#: ... and GAUSSIAN_FFT_MIN_POINTS on the FFT engine (few users) when GAUSSIAN_POINTS would take more than
#: GAUSSIAN_REDUCED_GRID_SECONDS (measured loosening 256 -> 128 points, 10 rounds, δ = 1e-6: 0.06 % at Δ/σ = 2,
#: n = 100; 0.05 % at Δ/σ = 1, n = 30; 0.1 % at Δ/σ = 1, n = 10).
GAUSSIAN_FFT_MIN_POINTS = 128
GAUSSIAN_REDUCED_GRID_SECONDS = 1.0
#: Charges τ(z) of the truncation rungs of a Gaussian round type (argument J): one per decade from 1e-2 down to
#: GAUSSIAN_TAIL_CHARGE times ``tail_delta``, the deepest rung's charge (so that the certified profile falls below
#: ``tail_delta`` where the true one does, and the PLD grid ends there; the Bromwich error bounds of a rung grow
#: with its depth, so the rung that is tight at a δ is one whose charge is a small part of it).
GAUSSIAN_RUNG_DECADES = (2, 30)
GAUSSIAN_TAIL_CHARGE = 1e-2
#: At an ε a rung is evaluated when its charge lies between these fractions of a guide: the smallest value so far
#: without its charge (the local Gaussian profile first; shallow to deep).  Two decades, so that when the deeper
#: rung's Bromwich error bound is loose the shallower one still answers.  Only tightness and cost depend on this
#: choice: every evaluated value is certified.
GAUSSIAN_RUNG_FRACTIONS = (1e-4, 1e-2)
#: A rung is first evaluated at every GAUSSIAN_RUNG_STRIDE-th ε of its range (and the last), then at the others only
#: between probes where it lowered the profile (tightness and cost only: every evaluated value is certified).
GAUSSIAN_RUNG_STRIDE = 8
#: After the pass above, a rung is also evaluated where its charge is up to this fraction of the value found (the
#: single round's ladder does the same, :data:`shuffleamp.gaussian.SHALLOW_FRACTION`; measured at Δ/σ = 2, n = 1e3:
#: 10 rounds' upper 8.01 -> 6.85).
GAUSSIAN_SHALLOW_FRACTION = 0.3
#: The rungs are evaluated by the certified FFT engine (``evaluator="fft"``) where the blanket draws are few
#: (n γ <= :data:`shuffleamp.gaussian.FFT_FIRST_BLANKET`, from :data:`shuffleamp.gaussian.FFT_FIRST_MIN_N` users on):
#: there the Bromwich integrand of the truncated law decays slowly (its atom at 0 has mass 1 − γ), 10 - 30 ms per ε
#: and often loose (error bound 10 - 100 % of the value), where the FFT engine takes 2 - 9 ms and is within 0.2 %
#: of the Bromwich value where that one is accurate (measured at Δ/σ = 0.5 - 2, n = 10 - 300).
#: ... and there a rung is evaluated at the ε where its charge is between these fractions of the guide (one decade:
#: the FFT engine's values are accurate, so the rung whose charge is at most 0.1 % of the value is tight).
GAUSSIAN_FFT_RUNG_FRACTIONS = (1e-4, 1e-3)
#: At a δ target, a Gaussian round type's grid ends (its ``tail_delta``) at GAUSSIAN_TAIL_SHARE times δ over the
#: total number of rounds when that is above ``tail_delta``: the rest of the profile goes to the infinity mass
#: (argument D), at most that share of δ over all rounds, and the deep rungs' evaluations where the profile is
#: below it (the slowest, 20 - 50 ms per ε by Bromwich) are not needed.  Measured at Δ/σ = 2, n = 100, 10 rounds,
#: δ = 1e-6: the upper 16.1333 -> 16.1298 (the shorter support gives a finer grid), 17.9 -> 7.6 s of CPU.
GAUSSIAN_TAIL_SHARE = 1e-3
#: Cost model of the round type's upper profile (CPU seconds; calibrated in bench/results_gaussian_rounds.md on the
#: 2-core machine, Δ/σ = 0.25 - 4, n = 2 - 1e7, 10 rounds, δ = 1e-6, 256 points): GAUSSIAN_EVALS_PER_POINT rung
#: evaluations per profile point (measured 2.2 - 3.3, 1.0 - 1.5 at Δ/σ = 4: the probes of GAUSSIAN_RUNG_STRIDE and
#: the neighbours where a rung helped; GAUSSIAN_FFT_WIDE_EVALS times that on the FFT engine from Δ/σ =
#: GAUSSIAN_FFT_WIDE_MU on, where the local profile is the smaller over most of the grid), each by the FFT engine
#: GAUSSIAN_FFT_EVAL_SECONDS (1 + n γ min(1, Δ/σ) / GAUSSIAN_FFT_EVAL_DRAWS) (measured 0.8 - 4.3 ms per ε), by
#: enumeration (n <= 3) GAUSSIAN_ENUM_EVAL_SECONDS, by
#: Bromwich the model of :meth:`_GaussianFamily._bromwich_point_seconds` ...
GAUSSIAN_EVALS_PER_POINT = 2.8
GAUSSIAN_FFT_EVAL_SECONDS = 0.9e-3
GAUSSIAN_FFT_EVAL_DRAWS = 12.0
GAUSSIAN_FFT_WIDE_MU = 3.0
GAUSSIAN_FFT_WIDE_EVALS = 0.5
GAUSSIAN_ENUM_EVAL_SECONDS = 2e-5
GAUSSIAN_BROMWICH_SECONDS = 3e-4
GAUSSIAN_BROMWICH_SMALL_N_SECONDS = 8e-4
GAUSSIAN_BROMWICH_N = 300.0
GAUSSIAN_BROMWICH_MU_POWER = 2.5
#: ... times GAUSSIAN_DEEP_FACTOR when the grid ends at ``tail_delta`` <= GAUSSIAN_DEEP_TAIL (an ε target, a PLD or
#: a δ target over hundreds of rounds: the deep rungs' integrals, 1.4 - 2.7 times the time at an end of 1e-10 measured
#: at Δ/σ = 1 - 2, n = 100 - 1e7) ...
GAUSSIAN_DEEP_TAIL = 1e-14
GAUSSIAN_DEEP_FACTOR = 2.0
#: ... plus the set-up (the rungs' laws; measured 0.01 - 0.5 s) ...
GAUSSIAN_SETUP_SECONDS = 0.05
#: ... and of the rest of :func:`compose_rounds` for one Gaussian round type: the lower bound's quantised pairs,
#: GAUSSIAN_LOWER_SECONDS times min(1, n / GAUSSIAN_LOWER_N)² times max(1, Δ/σ / GAUSSIAN_LOWER_MU) (times
#: 2 − Δ/σ from GAUSSIAN_LOWER_LARGE_N users on when Δ/σ < 1), plus GAUSSIAN_LOWER_BASE (measured 0.1 s at n = 2,
#: 0.15 - 0.3 s at n = 10, 0.4 - 2 s at n = 30 - 1e3, up to 4.5 s at Δ/σ = 4, n = 1e5 - 1e7, 1.7 - 3 s at
#: Δ/σ = 0.25 - 0.5, n = 1e7); the compositions (upper and lower) GAUSSIAN_COMPOSE_SECONDS; the single round
#: (one round) GAUSSIAN_SINGLE_SECONDS; ...
GAUSSIAN_LOWER_BASE = 0.1
GAUSSIAN_LOWER_SECONDS = 0.8
GAUSSIAN_LOWER_N = 30.0
GAUSSIAN_LOWER_MU = 1.5
GAUSSIAN_LOWER_LARGE_N = 1e6
GAUSSIAN_COMPOSE_SECONDS = 0.1
GAUSSIAN_SINGLE_SECONDS = 0.2
#: ... the compositions times 1 + R / GAUSSIAN_COMPOSE_ROUNDS and the lower bound times 1 + R / GAUSSIAN_LOWER_ROUNDS
#: (measured at 365 rounds: compositions 0.2 - 0.4 s at n = 10 - 100, 0.5 - 1 s at n = 1e5; the lower bound 1.5 - 3
#: times its time at 10 rounds).
GAUSSIAN_COMPOSE_ROUNDS = 100.0
GAUSSIAN_LOWER_ROUNDS = 365.0
#: Profile evaluations of the support-edge search of a round type (:meth:`_Round._make`), in the cost model.
EDGE_SEARCH_POINTS = 40


class _GaussianFamily:
    r"""The Gaussian randomizer's round as one family (argument J): at every ε >= 0 the minimum of the local
    Gaussian mechanism's exact profile (Balle–Wang) and of the certified values :math:`\delta_z(\varepsilon) +
    \tau(z)` of truncation rungs z (one per decade of charge, :data:`GAUSSIAN_RUNG_DECADES`, down to
    :data:`GAUSSIAN_TAIL_CHARGE` times ``tail_delta``), each rung evaluated only at the ε where its charge is
    between the fractions :data:`GAUSSIAN_RUNG_FRACTIONS` of the best value so far (without its charge), then
    where it is up to :data:`GAUSSIAN_SHALLOW_FRACTION` of the value found (probed every
    :data:`GAUSSIAN_RUNG_STRIDE`-th ε first).  With few blanket draws (``fft``: n γ <= 40 from 4 users on) each
    evaluation is the certified FFT engine's, one decade of charge per ε (:data:`GAUSSIAN_FFT_RUNG_FRACTIONS`);
    else the batched Bromwich evaluator's.  :meth:`profile_seconds` is the up-front cost estimate.

    Upper side only (the lower side stays the quantised concrete pairs of the mechanism)."""

    def __init__(self, at, n: int, tail_delta: float):
        from .gaussian import FFT_FIRST_BLANKET, FFT_FIRST_MIN_N, Gaussian, _cut_cells, _depth_for
        self.mu = float(at.mu)
        self.n = int(n)
        mech = Gaussian(sigma=at.sigma, sensitivity=at.sensitivity)
        self.gamma = float(mech.gamma)
        self.tail_delta = float(tail_delta)
        self.enum_n = FFT_FIRST_MIN_N             # below it the exact evaluator enumerates the truncated laws
        self.fft = FFT_FIRST_MIN_N <= self.n and self.n * self.gamma <= FFT_FIRST_BLANKET
        lo, hi = GAUSSIAN_RUNG_DECADES
        deepest = GAUSSIAN_TAIL_CHARGE * tail_delta
        charges = [10.0 ** -k for k in range(lo, hi + 1) if 10.0 ** -k > deepest] + [deepest]
        depths = []
        for c in charges:
            z = _depth_for(self.mu, c)
            if z not in depths:
                depths.append(z)
        cells = _cut_cells(self.n)
        self.rungs = []
        for z in depths:
            proxy = mech.at_depth(z, cells)
            decs = dedupe([d for d0 in proxy.upper_decompositions() for d in (d0, d0.swapped())])
            self.rungs.append((z, float(proxy.delta_charge), float(proxy.eps0), decs))
        # where the deepest rung's truncated law ends the local profile is its charge τ <= tail_delta
        self.eps0 = max(float(at.eps0), max(r[2] for r in self.rungs))

    def point_seconds(self) -> float:
        """Estimated CPU seconds of one ε of :meth:`values` (cost model above): GAUSSIAN_EVALS_PER_POINT evaluations
        by the FFT engine (``self.fft``) or by enumeration (n = 2, 3); by Bromwich the model of
        :meth:`_bromwich_point_seconds`."""
        if self.fft:
            draws = self.n * self.gamma * min(self.mu, 1.0)
            evals = GAUSSIAN_EVALS_PER_POINT * (GAUSSIAN_FFT_WIDE_EVALS if self.mu >= GAUSSIAN_FFT_WIDE_MU else 1.0)
            return evals * GAUSSIAN_FFT_EVAL_SECONDS * (1.0 + draws / GAUSSIAN_FFT_EVAL_DRAWS)
        if self.n < self.enum_n:
            return GAUSSIAN_EVALS_PER_POINT * GAUSSIAN_ENUM_EVAL_SECONDS
        deep = GAUSSIAN_DEEP_FACTOR if self.tail_delta <= GAUSSIAN_DEEP_TAIL else 1.0
        return deep * self._bromwich_point_seconds()

    def grid_points(self, points: int) -> int:
        """Profile points per side that :func:`_upper_pld` evaluates for a requested ``points``: all of them when
        their estimated cost (and the edge search's) is at most GAUSSIAN_FULL_GRID_SECONDS, else at most
        GAUSSIAN_POINTS, and on the FFT engine at most GAUSSIAN_FFT_MIN_POINTS when those would take more than
        GAUSSIAN_REDUCED_GRID_SECONDS."""
        per = self.point_seconds()
        if (points + EDGE_SEARCH_POINTS) * per <= GAUSSIAN_FULL_GRID_SECONDS:
            return points
        if self.fft and (GAUSSIAN_POINTS + EDGE_SEARCH_POINTS) * per > GAUSSIAN_REDUCED_GRID_SECONDS:
            return min(points, GAUSSIAN_FFT_MIN_POINTS)
        return min(points, GAUSSIAN_POINTS)

    def profile_seconds(self, points: int) -> float:
        """Estimated CPU seconds of the round's upper profile: its set-up, the support-edge search and the grid of
        :meth:`grid_points`."""
        return GAUSSIAN_SETUP_SECONDS + (self.grid_points(points) + EDGE_SEARCH_POINTS) * self.point_seconds()

    def _bromwich_point_seconds(self) -> float:
        """Estimated seconds of one ε by the Bromwich evaluator: GAUSSIAN_EVALS_PER_POINT evaluations of
        GAUSSIAN_BROMWICH_SECONDS (Δ/σ)^GAUSSIAN_BROMWICH_MU_POWER + GAUSSIAN_BROMWICH_SMALL_N_SECONDS (Δ/σ)
        min(1, GAUSSIAN_BROMWICH_N / n) from Δ/σ = 1 on (the rungs' log-ratios grow with Δ/σ; fewer users, a slower
        decaying integrand), both factors max(Δ/σ, 1/2) below (measured 0.1 - 3.2 ms per ε at Δ/σ = 0.5 - 2, n = 100 -
        1e7, 6 - 22 ms at Δ/σ = 4)."""
        mu = self.mu
        hi, lo = (mu ** GAUSSIAN_BROMWICH_MU_POWER, mu) if mu >= 1.0 else (max(mu, 0.5),) * 2
        return GAUSSIAN_EVALS_PER_POINT * (GAUSSIAN_BROMWICH_SECONDS * hi + GAUSSIAN_BROMWICH_SMALL_N_SECONDS * lo * min(
            1.0, GAUSSIAN_BROMWICH_N / self.n))

    def local(self, eps: np.ndarray) -> np.ndarray:
        """The local Gaussian mechanism's δ(ε) of the pair (0, Δ), rounded up (relative 1e-12 plus one ulp)."""
        from .gaussian import gaussian_delta
        v = np.asarray(gaussian_delta(self.mu, np.asarray(eps, dtype=np.float64)), dtype=np.float64)
        return np.minimum(np.nextafter(v * (1 + 1e-12), np.inf), 1.0)

    def values(self, eps: np.ndarray, side: str) -> np.ndarray:
        if side != "upper":
            raise ValueError("the Gaussian family is the upper side only")
        eps = np.asarray(eps, dtype=np.float64)
        flat = eps.ravel()
        best = self.local(flat)
        # guide: the smallest value so far without its charge (where a rung's truncated law has δ ≈ 0 the truth
        # is below its charge: one more decade down)
        guide = best.copy()
        lo, hi = GAUSSIAN_FFT_RUNG_FRACTIONS if self.fft else GAUSSIAN_RUNG_FRACTIONS
        done = [np.zeros(flat.size, dtype=bool) for _ in self.rungs]
        for i, (z, tau, _, decs) in enumerate(self.rungs):
            need = np.flatnonzero((tau <= hi * guide) & (tau > lo * guide))
            self._probe(decs, tau, flat, need, best, guide, done[i])
        # then the shallower rungs whose charge is up to GAUSSIAN_SHALLOW_FRACTION of the value found (their
        # evaluations are accurate where the deeper ones' Bromwich error bounds are loose); ``best`` only decreases
        for i, (z, tau, _, decs) in enumerate(self.rungs):
            need = np.flatnonzero((tau <= GAUSSIAN_SHALLOW_FRACTION * best) & (tau > hi * guide) & ~done[i])
            self._probe(decs, tau, flat, need, best, guide, done[i])
        return np.minimum(best, 1.0).reshape(eps.shape)

    def _probe(self, decs, tau: float, flat: np.ndarray, need: np.ndarray, best: np.ndarray, guide: np.ndarray,
               done: np.ndarray) -> None:
        """One rung at the ε ``flat[need]``: probed at every GAUSSIAN_RUNG_STRIDE-th, evaluated at the others only next
        to a probe where it lowered ``best`` (``done`` marks the evaluated ε)."""
        if need.size:
            # first every GAUSSIAN_RUNG_STRIDE-th point (in order of ε); the others only next to a probe where the
            # rung lowered the profile (a deep rung's Bromwich error bound makes it useless, and slow, over most
            # of its range)
            order = need[np.argsort(flat[need], kind="stable")]
            first = np.zeros(order.size, dtype=bool)
            first[::GAUSSIAN_RUNG_STRIDE] = True
            first[-1] = True
            helped = self._rung(decs, tau, flat, order[first], best, guide)
            done[order[first]] = True
            if not helped.any():
                return
            pos = np.flatnonzero(first)
            win = np.zeros(order.size, dtype=bool)
            for j in np.flatnonzero(helped):          # the points between this probe and its neighbours
                win[pos[max(j - 1, 0)]:pos[min(j + 1, pos.size - 1)] + 1] = True
            rest = order[win & ~first]
            if rest.size:
                self._rung(decs, tau, flat, rest, best, guide)
                done[rest] = True

    def _rung_values(self, f, eps: np.ndarray) -> np.ndarray:
        """Certified δ of one rung's spread truncated law at ``eps`` (without its charge): the certified FFT engine
        (``evaluator="fft"``, one ε at a time) where the blanket draws are few (``self.fft``), else the batched
        Bromwich evaluator (:func:`_one_family`)."""
        if not self.fft:
            return _one_family(f, self.n, eps, "upper")
        out = np.empty(eps.size)
        for i, e in enumerate(eps):
            check_time("the Gaussian round's certified profile")
            out[i] = max_delta([f], self.n, float(e), "spread", evaluator="fft")[0]
        return out

    def _rung(self, decs, tau: float, flat: np.ndarray, idx: np.ndarray, best: np.ndarray,
              guide: np.ndarray) -> np.ndarray:
        """Evaluate one rung at ``flat[idx]``: ``best`` lowered to its certified values plus the charge τ, ``guide``
        to its values without the charge (at least 0.1 τ); returns where it lowered ``best``."""
        check_time("the Gaussian round's certified profile")
        v = np.zeros(idx.size)
        for f in decs:
            np.maximum(v, self._rung_values(f, flat[idx]), out=v)
        guide[idx] = np.minimum(guide[idx], np.maximum(v, 0.1 * tau))
        v = np.nextafter(v + tau, np.inf)        # the truncated tail, charged at every ε
        helped = v < best[idx]
        best[idx] = np.minimum(best[idx], v)
        return helped


def _gaussian_stand_in(mechanism):
    """The Gaussian randomizer's accountant stand-in (``Gaussian.at_n(n)``), else None."""
    from .gaussian import _GaussianAt
    return mechanism if isinstance(mechanism, _GaussianAt) else None


def _is_population(mechanism) -> bool:
    return isinstance(mechanism, Population)


def _check_mechanism(mechanism, n, keep_class: bool = False):
    """A mechanism and its n, or a population and its total (n None or equal to it).

    ``keep_class``: an (ε0, δ0)-LDP class (:class:`shuffleamp.gaussian.ApproximateLDP`) is returned as it is
    (its reduction checked at n), for :meth:`_Round.make`, which chooses the users kept (argument I)."""
    if _is_population(mechanism):
        if n is not None and _validate.count(n, "n") != mechanism.n:
            raise ParameterError("n", f"is taken from the population (n = {mechanism.n}); pass None or the same "
                                      f"total, got {n}")
        return mechanism, mechanism.n
    _validate.mechanism(mechanism)
    n = _validate.count(n, "n")
    at_n = getattr(mechanism, "at_n", None)
    if at_n is not None:
        # randomizers beyond pure LDP (shuffleamp.gaussian): the decompositions for these n users, whose
        # upper profile carries a charge (``delta_charge``: added to every δ, see _certified_profile; for the
        # (ε0, δ0)-LDP reduction an infinity mass of the round's dominating pair, argument I)
        if keep_class and _approx_class(mechanism) is not None:
            at_n(1)                       # the class (its users kept m <= n are chosen per ε, argument I)
        else:
            mechanism = at_n(n)
    return mechanism, n


def _approx_class(mechanism):
    """The (ε0, δ0)-LDP class :class:`shuffleamp.gaussian.ApproximateLDP` itself, else None."""
    from .gaussian import ApproximateLDP
    return mechanism if isinstance(mechanism, ApproximateLDP) else None


def _support_end(mechanism) -> float:
    """Where the round's certified profile (without an infinity mass) reaches 0: ε0, or the reduced ε0' of the
    clone pair of an (ε0, δ0)-LDP reduction (the largest over a family's one-user pairs)."""
    e = getattr(mechanism, "eps0_pure", None)
    return float(e) if e is not None else float(mechanism.eps0)


def _families_at(mechanism, n: int | None):
    r"""The mechanism's finite decompositions for n users, ``(upper, lower)``, or None.

    Continuous randomizers whose certified discretisation depends on n (``decompositions_at(n)``, e.g.
    :meth:`shuffleamp.mechanisms.Laplace.decompositions_at`) are profiled through them: the upper family
    dominates the mechanism's GPARV in convex order at every ε at once (a mean-preserving spread of
    :math:`G_\varepsilon` for every ε, see :func:`shuffleamp.mechanisms.laplace_spread_decomposition`), so
    its certified profile is >= the blanket pair's profile (a dominating pair's) at every ε of a grid: module
    docstring, argument C2); the lower family is a post-processing (quantisation of the reports) of the concrete
    Theorem-14 pair, so its profile is <= that pair's at every ε and its buckets compose into a valid
    lower bound (argument G).  Both are atomic, so the compiled profile loop evaluates them.
    """
    at = getattr(mechanism, "decompositions_at", None)
    if at is None or n is None or _is_population(mechanism):
        return None
    up, lo = at(int(n))
    return list(up), list(lo)


def _families(mechanism, which: str, n: int | None = None) -> list:
    """Swap-closed list of GPARV families (objects with ``.gparv(eps)``), duplicates dropped by law;
    with ``n``, a mechanism's finite decompositions for n users where it has them (:func:`_families_at`)."""
    if _is_population(mechanism):
        return [_PopulationFamily(mechanism)]
    if isinstance(mechanism, (_ApproxFamily, _GaussianFamily)):
        return [mechanism]
    if which == "upper" and n is not None and _gaussian_stand_in(mechanism) is not None:
        return [_GaussianFamily(mechanism, n, DEFAULT_TAIL_DELTA)]      # argument J
    at = _families_at(mechanism, n)
    if at is not None:
        base = at[0] if which == "upper" else at[1]
    else:
        base = mechanism.upper_decompositions() if which == "upper" else mechanism.lower_decompositions()
    return dedupe([f for d in base for f in (d, d.swapped())])


def _certified_profile(fams, n: int, eps: np.ndarray, side: str) -> np.ndarray:
    """max over ``fams`` of the certified δ at every ε >= 0 of the array ``eps`` (side "upper"/"lower").

    One batched call per family (:func:`shuffleamp.exact.delta_exact_profile`: the exact evaluator's
    per-ε work in one compiled loop, the same certified values as the bounds layer's dispatch
    :func:`shuffleamp.evaluate.max_delta` gives one ε at a time).  A family the exact evaluator
    cannot take goes through that dispatch (certified FFT engine) one ε at a time.
    """
    eps = np.asarray(eps, dtype=np.float64)
    best = np.zeros(eps.shape)
    for f in fams:
        if isinstance(f, (_PopulationFamily, _ApproxFamily, _GaussianFamily)):
            np.maximum(best, f.values(eps, side), out=best)
            continue
        v = _one_family(f, n, eps, side)
        charge = getattr(f, "delta_charge", 0.0) if side == "upper" else 0.0
        if charge:
            # a truncated tail or an approximate-LDP term charged to every upper δ (shuffleamp.gaussian)
            v = np.nextafter(v + charge, np.inf)
        np.maximum(best, v, out=best)
    return np.minimum(best, 1.0)


def _one_family(f, n: int, eps: np.ndarray, side: str) -> np.ndarray:
    """Certified δ of one GPARV family at every ε >= 0 of ``eps`` (without its ``delta_charge``): the batched
    exact evaluator, or the bounds layer's dispatch one ε at a time where the exact evaluator cannot take it."""
    try:
        return _exact_profile(f, n, eps, side)
    except (UnsupportedGparvError, ResourceLimitError):
        mode = "spread" if side == "upper" else LOWER_MODE
        return np.array([max_delta([f], n, float(e), mode)[0] for e in eps.ravel()]).reshape(eps.shape)


def _exact_profile(f, n: int, eps: np.ndarray, mode: str) -> np.ndarray:
    """:func:`shuffleamp.exact.delta_exact_profile` in chunks of :data:`PROFILE_CHUNK` ε, the enclosing call's
    time budget checked between chunks (the same values); an atomic decomposition's value at each ε is
    computed once per evaluation (:func:`shuffleamp._reuse.pointwise`: every ε is evaluated on its own)."""
    if type(f) is Decomposition:
        key = ("exact-profile", f.a.tobytes(), f.b.tobytes(), f.c.tobytes(), float(f.beta), int(n), mode)
        return _reuse.pointwise(key, eps, lambda t: _exact_profile_chunks(f, n, t, mode))
    return _exact_profile_chunks(f, n, eps, mode)


def _exact_profile_chunks(f, n: int, eps: np.ndarray, mode: str) -> np.ndarray:
    eps = np.asarray(eps, dtype=np.float64)
    flat = eps.ravel()
    if flat.size <= PROFILE_CHUNK:
        return delta_exact_profile(f, n, eps, mode=mode)
    parts = []
    for i in range(0, flat.size, PROFILE_CHUNK):
        check_time("the certified privacy profile")
        parts.append(delta_exact_profile(f, n, flat[i:i + PROFILE_CHUNK], mode=mode))
    out = np.concatenate(parts, axis=-1)
    return out.reshape(out.shape[:-1] + eps.shape)


def _at_n_budget(mechanisms, max_seconds: float = DEFAULT_MAX_SECONDS, max_memory_gb: float = DEFAULT_MAX_MEMORY_GB):
    """The call's time / memory budget (:func:`shuffleamp._numerics.budget`, validated values) when a mechanism
    is profiled through its finite decompositions for n users (:func:`_families_at`) or is the Gaussian
    randomizer (its truncation rungs, :class:`_GaussianFamily`): evaluations of ms each, checked in chunks so
    the call stops within the budget; also whenever the user gave a budget other than the default.  Else a
    no-op context: the up-front estimates (:func:`shuffleamp._numerics.refuse_if_costly`) then apply the
    default budget, which is the one given."""
    import contextlib
    from .gaussian import Gaussian, _GaussianAt
    if (any((getattr(m, "decompositions_at", None) is not None and not _is_population(m))
            or isinstance(m, (Gaussian, _GaussianAt)) for m in mechanisms)
            or (max_seconds, max_memory_gb) != (DEFAULT_MAX_SECONDS, DEFAULT_MAX_MEMORY_GB)):
        return budget(max_seconds, max_memory_gb)
    return contextlib.nullcontext()


def _profile_values(fams, n: int, eps: np.ndarray, side: str) -> np.ndarray:
    """Certified profile on all of ℝ (argument B for ε < 0), rounded to the conservative side."""
    eps = np.asarray(eps, dtype=np.float64)
    h = _certified_profile(fams, n, np.abs(eps), side)
    neg = eps < 0
    v = np.where(neg, -np.expm1(eps) + np.exp(eps) * h, h)
    if side == "upper":
        return np.minimum(np.where(neg, v * (1 + 4 * _U), v), 1.0)
    return np.maximum(np.where(neg, v * (1 - 4 * _U), v), 0.0)


def privacy_profile(mechanism, n=None, epsilons=None, *, max_seconds: float = DEFAULT_MAX_SECONDS, max_memory_gb: float = DEFAULT_MAX_MEMORY_GB) -> tuple[np.ndarray, np.ndarray]:
    r"""Certified privacy profile δ(ε) of one shuffled round, for ε on all of ℝ.

    ``upper`` is the profile of the blanket / general-clone dominating pair, maximised over the
    mechanism's ordered input pairs (a dominating pair itself: module docstring, arguments A–C; for an
    (ε0, δ0)-LDP class the minimum over the users kept of its reduction's profiles, argument I);
    ``lower`` that of the Theorem-14 concrete dataset pairs (both orders).  For ε < 0 both use
    :math:`D_{e^\varepsilon}(P\|Q) = 1 - e^\varepsilon + e^\varepsilon D_{e^{-\varepsilon}}(Q\|P)`.

    Parameters
    ----------
    mechanism : Mechanism or Population
        A randomizer from :mod:`shuffleamp.mechanisms` or a composition of them, or a population
        (:func:`shuffleamp.population`): then the pointwise maximum over its groups (argument F).
    n : int
        Number of users (>= 1); for a population None or its total.
    epsilons : float or array_like of float
        Any finite real ε (nats), any shape.
    max_seconds : float
        Time budget of the whole call in seconds (default 10, as :func:`shuffleamp.epsilon`; ``inf`` for none).
        Work estimated to exceed it is refused up front, and work still running when it is spent is stopped,
        with ResourceLimitError whose message names ``max_seconds``; raise it for large totals or a loaded machine.
    max_memory_gb : float
        Working-memory budget in GiB (default 2): work whose estimated memory exceeds it is refused before
        allocating (ResourceLimitError naming ``max_memory_gb``).

    Returns
    -------
    upper, lower : ndarray of float64
        Arrays of the shape of ``epsilons``: certified upper and lower values of the round's
        privacy profile; ``lower <= upper``.

    Raises
    ------
    ParameterError
        ``n`` not an integer >= 1, ``epsilons`` NaN or infinite, ``max_seconds`` / ``max_memory_gb`` not > 0, or
        ``mechanism`` not a shuffleamp mechanism.
    ResourceLimitError
        The evaluation would exceed, or has spent, ``max_seconds`` or ``max_memory_gb``.

    Notes
    -----
    One batched certified evaluation per family (:func:`shuffleamp.exact.delta_exact_profile`):
    about 0.05 ms per ε and mode for 10-RR at n = 1e8 (``bench/results_profile.md``).

    References
    ----------
    Su, Cheng, Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
    Shuffling", IEEE S&P 2026, Theorems 12–14.  Zhu, Dong, Wang, "Optimal Accounting of
    Differential Privacy via Characteristic Function", AISTATS 2022.  Dong, Roth, Su,
    "Gaussian Differential Privacy", JRSS-B 2022.
    """
    cls_ = _approx_class(mechanism)
    mechanism, n = _check_mechanism(mechanism, n)
    eps = np.asarray(_validate.real("epsilons", epsilons), dtype=np.float64)
    max_seconds, max_memory_gb = _validate.budget_limits(max_seconds, max_memory_gb)
    with _at_n_budget([mechanism], max_seconds, max_memory_gb):
        if cls_ is not None and cls_.delta0 > 0:
            # the minimum over the users kept of the reduction's profiles (argument I), argument B for ε < 0
            h = _ApproxFamily([(cls_, n)], DEFAULT_TAIL_DELTA).minimum(np.abs(eps))
            neg = eps < 0
            v = np.where(neg, -np.expm1(eps) + np.exp(eps) * h, h)
            up = np.minimum(np.where(neg, v * (1 + 4 * _U), v), 1.0)
        else:
            up = _profile_values(_families(mechanism, "upper", n), n, eps, "upper")
        lo = np.minimum(_profile_values(_families(mechanism, "lower", n), n, eps, "lower"), up)
    return up, lo


# ---------------------------------------------------------------------------- pessimistic PLD
@dataclass(frozen=True)
class _Round:
    """One round type: mechanism, n, the upper families and the support edge of its profile.

    ``binary_eps0`` is set for binary randomized response (k-RR with k = 2, a symmetric 2 x 2
    matrix): its upper profile is then the exact count-law profile (the maximum over every dataset
    pair, :func:`shuffleamp.exact_count.profile_binary_rr`) instead of the decomposition profile.
    """

    mechanism: Any
    n: int
    fams: list
    edge: float          # smallest evaluated ε with certified U(ε) <= tail_delta (0 if U(0) is)
    binary_eps0: float | None = None
    at_n: bool = False   # profiled through the mechanism's finite decompositions for n users
    #: β of an (ε0, δ0)-LDP reduction: the round's dominating pair is ((1-β)P + β·1{⊤}, (1-β)Q + β·1{⊥}) with
    #: (P, Q) the pair of the profile above (argument I); 0 otherwise
    inf_mass: float = 0.0
    #: (ApproximateLDP, n): the class and the true number of users, whose concrete members give the lower
    #: bound (the upper profile is the reduction's with ``n`` = the users kept)
    lower_source: tuple | None = None

    def upper_profile(self, eps: np.ndarray) -> np.ndarray:
        """Certified upper values of the round's dominating profile at ε >= 0.

        Binary RR: the smaller of the exact count-law profile and the decomposition profile.  Both
        are >= the exact worst-case profile δ* (the maximum over every dataset pair, itself the
        profile of a dominating pair, argument C), so their minimum is too, which is all argument D
        needs; the decomposition profile only matters beyond the exact profile's certified floor.
        """
        if self.binary_eps0 is not None:
            from .exact_count import profile_binary_rr
            eps = np.asarray(eps, dtype=np.float64)
            out = np.minimum(profile_binary_rr(self.binary_eps0, self.n, eps)[0], 1.0)
            low = out < 1e-8          # near the exact profile's certified floor
            if low.any():
                out[low] = np.minimum(out[low], _certified_profile(self.fams, self.n, eps[low], "upper"))
            return out
        return _certified_profile(self.fams, self.n, eps, "upper")

    @classmethod
    def make(cls, mechanism, n: int, tail_delta: float, users: int | None = None) -> _Round:
        """The round type of ``mechanism`` with n users.

        An (ε0, δ0)-LDP class (:class:`shuffleamp.gaussian.ApproximateLDP`): the pointwise minimum over the
        users kept of its reduction's pairs with infinite-loss atoms (:class:`_ApproxFamily`), or with
        ``users`` given that one reduction's pair; a stand-in of the reduction or a population of such groups:
        its pair with the infinity mass β (argument I).  ParameterError naming ``delta0`` when β >= 1.
        """
        import dataclasses
        cls_ = _approx_class(mechanism)
        if cls_ is not None:
            if users is not None or cls_.delta0 == 0.0:   # one users-kept value (all n at δ0 = 0: the pure clone)
                users = n if users is None else int(users)
                proxy = cls_.at_n(int(users))
                rt = cls._make(proxy.without_charge(), int(users), tail_delta)
                return dataclasses.replace(rt, inf_mass=float(proxy.delta_charge), lower_source=(cls_, n))
            fam = _ApproxFamily([(cls_, n)], tail_delta)
            return dataclasses.replace(cls._make(fam, n, tail_delta), inf_mass=fam.floor, lower_source=(cls_, n))
        if _is_population(mechanism) and mechanism.kind == "approx":
            # each group's target bounded by its own group alone (shuffleamp.personalized), the minimum over the
            # users kept per group, the maximum over groups (argument I); the population's concrete pair below
            fam = _ApproxFamily([(g.mechanism, g.n) for g in mechanism.groups], tail_delta)
            return dataclasses.replace(cls._make(fam, n, tail_delta), inf_mass=fam.floor, mechanism=mechanism)
        if _gaussian_stand_in(mechanism) is not None:
            # the minimum of the local Gaussian profile and of a few truncation rungs (argument J); the lower
            # side stays the mechanism's quantised concrete pairs
            fam = _GaussianFamily(mechanism, n, tail_delta)
            refuse_if_costly(f"Gaussian randomizer, Δ/σ = {fam.mu:.4g}, n = {n}: the truncated laws span log-ratios "
                             f"up to {max(r[2] for r in fam.rungs):.3g}", "max_seconds",
                             seconds=fam.profile_seconds(GAUSSIAN_POINTS), hint="increase sigma")
            return dataclasses.replace(cls._make(fam, n, tail_delta), mechanism=mechanism)
        if getattr(mechanism, "charge_is_additive", False):
            # a stand-in of the reduction at n, or a population of (ε0, δ0)-LDP groups: β = the largest
            # group's (argument I)
            rt = cls._make(mechanism.without_charge(), n, tail_delta)
            return dataclasses.replace(rt, inf_mass=float(mechanism.delta_charge))
        return cls._make(mechanism, n, tail_delta)

    @classmethod
    def _make(cls, mechanism, n: int, tail_delta: float) -> _Round:
        fams = _families(mechanism, "upper", n)
        from .exact_count import binary_rr_eps0
        b0 = None if _is_population(mechanism) else binary_rr_eps0(mechanism)
        if b0 is not None:
            # where the smaller of the two profiles reaches tail_delta: the decomposition profile's
            # edge, or earlier where the exact profile gets there first
            dec = cls._make(_PlainBinary(mechanism), n, tail_delta)
            return cls(mechanism, n, fams, min(dec.edge, _binary_edge(b0, n, tail_delta)), b0)

        def U(e):
            return float(_certified_profile(fams, n, np.array([e]), "upper")[0])

        at_n = _families_at(mechanism, n) is not None
        if U(0.0) <= tail_delta:
            return cls(mechanism, n, fams, 0.0, None, at_n)
        hi = top = _support_end(mechanism)
        for bump in (1e-9, 1e-6, 1e-3):  # δ(eps0) = 0 for pure eps0-LDP; atoms ~1e-16 > 0 from rounding
            if U(hi) <= tail_delta:
                break
            hi = top * (1.0 + bump)
        if U(hi) > tail_delta:
            raise ResourceLimitError(f"the certified profile does not fall below tail_delta={tail_delta:g} "
                                     f"by eps0={hi:g}", parameter="tail_delta", resource="grid")
        # the support edge: the smallest ε (to 1 % relative) whose certified U(ε) <= tail_delta
        br = inverse_monotone(lambda e: (U(e), None), tail_delta, 1e-12, hi, side="upper", rel_tol=0.01,
                              scale="log")
        hi = float(br.feasible)
        return cls(mechanism, n, fams, hi, None, at_n)

    def own_interval(self, points: int) -> float:
        return self.edge / points if self.edge > 0 else 1e-4


class _PlainBinary:
    """A binary-RR mechanism seen through its decomposition families only (no exact-profile routing)."""

    def __init__(self, mechanism):
        self._m = mechanism
        self.eps0 = mechanism.eps0

    def upper_decompositions(self):
        return self._m.upper_decompositions()


def _binary_edge(eps0: float, n: int, tail_delta: float) -> float:
    """First point of a fine grid where the certified exact binary-RR profile is <= tail_delta (eps0
    if its certified floor stays above)."""
    from .exact_count import profile_binary_rr
    grid = np.linspace(0.0, eps0, 4097)
    U = np.minimum.accumulate(profile_binary_rr(eps0, n, grid)[0])
    below = U <= tail_delta
    edge = float(grid[int(np.argmax(below))]) if below.any() else float(eps0)
    return edge if edge > 0.0 else eps0 / 4096


def _grid_points(K: int, points: int) -> np.ndarray:
    """Integer grid points 0..K, all of them or ``points + 1`` spread evenly."""
    if K <= points:
        return np.arange(K + 1)
    return np.unique(np.round(np.linspace(0, K, points + 1)).astype(np.int64))


def _convex_minorant(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Greatest convex minorant of the points (x_i, y_i) (x increasing), evaluated at x."""
    hull = _lower_hull_vertices(x, y)
    return np.interp(x, x[hull], y[hull])


def _upper_pld(rnd: _Round, d: float, points: int) -> PrivacyLossDistribution:
    """Pessimistic connect-the-dots PLD of one round on the integer grid k * d (argument D)."""
    if any(isinstance(f, _PopulationFamily) for f in rnd.fams):
        points = min(points, POPULATION_POINTS)     # one Bromwich integral per group and point
    if any(isinstance(f, _ApproxFamily) for f in rnd.fams):
        points = min(points, APPROX_POINTS)         # one profile evaluation per users-kept value and point
    for f in rnd.fams:
        if isinstance(f, _GaussianFamily):
            points = f.grid_points(points)          # a few rung evaluations per point (argument J)
    if rnd.at_n:
        points = min(points, AT_N_POINTS)           # one Bromwich integral over the atoms per point
    K = math.ceil(rnd.edge / d)
    if K > MAX_GRID_STEPS:
        raise ResourceLimitError(f"the PLD grid would need {K} steps of {d:g} up to eps={rnd.edge:g}; pass a "
                                 "larger value_discretization_interval", parameter="value_discretization_interval",
                                 resource="memory")
    check_pld_points(2.0 * K + 1.0, f"a privacy-loss distribution of {2 * K + 1} points", "value_discretization_interval")
    gauss = next((f for f in rnd.fams if isinstance(f, _GaussianFamily)), None)
    popg = next((f for f in rnd.fams if isinstance(f, _PopulationFamily) and f.pop.kind in ("gaussian", "mixed")
                 and any(gr.mechanism.__class__.__name__ == "Gaussian" for gr in f.pop.groups)), None)
    k8 = K
    if gauss is not None and K > points:
        from .gaussian import loss_scale
        k8 = max(1, math.ceil(8.0 * loss_scale(gauss.mu, gauss.n, upper=True) / d))
    elif popg is not None and K > points:
        # a Gaussian population: the bulk of the widest loss among its groups' own blanket pairs at n users
        from .gaussian import loss_scale
        k8 = max(1, math.ceil(8.0 * max(loss_scale(gr.mechanism.mu, popg.pop.n, upper=True)
                                        for gr in popg.pop.groups if hasattr(gr.mechanism, "mu")) / d))
    if 2 * k8 < K:
        # the Gaussian round with a long support: a quarter of the points uniform over the bulk of the blanket pair's
        # loss (8 scales), the rest geometric up to the edge (argument J; any integers are allowed, argument D)
        F = points // 4
        ks = np.unique(np.concatenate([np.round(np.linspace(0, k8, F + 1)),
                                       np.round(np.geomspace(k8, K, points - F + 1))]).astype(np.int64))
    else:
        ks = _grid_points(K, points)
    pos = rnd.upper_profile(ks * d)
    pos = np.minimum.accumulate(pos)                     # U is non-increasing on [0, inf)
    kneg = -ks[:0:-1]                                    # -K .. -1
    pneg = pos[:0:-1]
    neg = np.minimum(-np.expm1(kneg * d) + np.exp(kneg * d) * pneg, 1.0) * (1 + 4 * _U)
    ints = np.concatenate([kneg, ks])
    dl = np.minimum(np.concatenate([neg, pos]), 1.0)
    dl = np.minimum.accumulate(dl)
    b = rnd.inf_mass
    if b > 0.0:
        # the mixture with the infinity atoms (argument I): profile β + (1 - β) U on all of ℝ, rounded up
        dl = np.minimum(np.nextafter((b + (1.0 - b) * dl) * (1 + 4 * _U), np.inf), 1.0)
    x = np.concatenate([[0.0], np.exp(ints * d)])
    y = _convex_minorant(x, np.concatenate([[1.0], dl]))[1:]
    y = np.clip(y, 0.0, 1.0)
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots(d, ints, y)
    return PrivacyLossDistribution(pmf)


def to_pld(mechanism, n=None, *, value_discretization_interval: float | None = None, points: int = DEFAULT_POINTS,
           tail_delta: float = DEFAULT_TAIL_DELTA, max_seconds: float = DEFAULT_MAX_SECONDS, max_memory_gb: float = DEFAULT_MAX_MEMORY_GB) -> PrivacyLossDistribution:
    r"""Certified pessimistic ``dp_accounting`` PLD of one shuffled round.

    Built by connect-the-dots from the certified upper profile (module docstring, argument D):
    its hockey-stick curve is >= the round's optimal bound δ*(ε) at every ε ∈ ℝ, so it composes
    (with ``compose`` / ``self_compose``) into certified totals, also with other replace-one
    PLDs of ``dp_accounting`` built with the same ``value_discretization_interval``.

    Parameters
    ----------
    mechanism : Mechanism or Population
        A randomizer from :mod:`shuffleamp.mechanisms` or a composition of them, or a population
        (the pointwise maximum of its groups' profiles, argument F).
    n : int
        Number of users (>= 1); for a population None or its total.
    value_discretization_interval : float, optional
        Grid step d (nats) of the PLD's losses.  Default: the round's own scale, ``edge /
        points`` where ``edge`` is the smallest ε with certified δ*(ε) <= ``tail_delta`` (for
        10-RR, ε0 = 1, n = 1e8 the edge is about 1e-3).
    points : int
        Profile evaluations per side (>= 2).  If the grid up to ``edge`` has more steps, the
        evaluated points are a subset of the integer grid (connect-the-dots allows any
        increasing integers; still pessimistic, less tight).
    tail_delta : float
        Where the grid ends: everything beyond goes to the infinity mass (in (0, 1)).
    max_seconds : float
        Time budget of the whole call in seconds (default 10, as :func:`shuffleamp.epsilon`; ``inf`` for none).
        Work estimated to exceed it is refused up front, and work still running when it is spent is stopped,
        with ResourceLimitError whose message names ``max_seconds``; raise it for large totals or a loaded machine.
    max_memory_gb : float
        Working-memory budget in GiB (default 2): work whose estimated memory exceeds it is refused before
        allocating (ResourceLimitError naming ``max_memory_gb``).

    Returns
    -------
    dp_accounting.pld.privacy_loss_distribution.PrivacyLossDistribution
        Symmetric (remove = add), pessimistic; losses ``k * d`` for integers k of both signs.  For an
        (ε0, δ0)-LDP class (:class:`shuffleamp.ApproximateLDP`), the pointwise minimum over the users kept of
        its reduction's clone pairs with infinite-loss atoms (module docstring, argument I); its infinity mass
        is at least :math:`\min(1, d-1)\,\delta_0 = \delta_0`.

    Raises
    ------
    ParameterError
        Bad ``n``, ``value_discretization_interval``, ``points`` or ``tail_delta``; ``delta0`` when
        :math:`\delta_0 \ge 1/\min(n, d-1)` leaves no bound (see :class:`shuffleamp.ApproximateLDP`).
    ResourceLimitError
        The grid would have more than :data:`MAX_GRID_STEPS` steps (parameter
        ``value_discretization_interval``), or the evaluation would exceed, or has spent, ``max_seconds`` or
        ``max_memory_gb``.

    References
    ----------
    Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, "Connect the Dots: Tighter Discrete
    Approximations of Privacy Loss Distributions", PETS 2022 (Algorithm 1).  Su, Cheng, Wang,
    IEEE S&P 2026, Theorem 13.
    """
    mechanism, n = _check_mechanism(mechanism, n, keep_class=True)
    points, tail_delta = _grid_options(points, tail_delta)
    max_seconds, max_memory_gb = _validate.budget_limits(max_seconds, max_memory_gb)
    with _at_n_budget([mechanism], max_seconds, max_memory_gb):
        rnd = _Round.make(mechanism, n, tail_delta)
        d = _interval(value_discretization_interval, [rnd], points)
        return _extras.tag(_upper_pld(rnd, d, points))


def _one_target(epsilon, delta):
    """Validate the total's target: exactly one of ``epsilon`` (→ total δ) and ``delta`` (→ total ε)."""
    if (epsilon is None) == (delta is None):
        raise ParameterError("epsilon", "give exactly one of epsilon (to get the total delta) and delta")
    if delta is not None:
        return None, _validate.delta(delta)
    return _validate.epsilon(epsilon), None


def _grid_options(points, tail_delta):
    points = _validate.count(points, "points", minimum=2)
    tail_delta = _validate.real("tail_delta", tail_delta, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    return points, tail_delta


def _interval(value, rounds, points) -> float:
    """The common PLD grid step: given, or the coarsest round type's own step.

    A round type whose own scale is finer is then discretised more coarsely than it would be alone;
    connect-the-dots stays pessimistic on any grid, and such a type's share of the total is small
    (its whole profile lies within a few steps of 0), so the total stays tight while the composed
    grid, whose size is (total support) / step, stays small.
    """
    if value is None:
        return max(r.own_interval(points) for r in rounds)
    return _validate.real("value_discretization_interval", value, lo=0.0, lo_open=True)


# ---------------------------------------------------------------------------- concrete-pair lower PLD
def _count_pair(dec, n: int):
    """(log P, log Q, exact) of the count of reports in {j: a_j > b_j} for a Theorem-14 pair."""
    a, b, c = np.asarray(dec.a), np.asarray(dec.b), np.asarray(dec.c)
    S = a > b
    al, be, ga = float(a[S].sum()), float(b[S].sum()), float(min(c[S].sum(), 1.0))
    m = n - 1
    if m == 0:
        cs = np.array([0, 1])
        lb, lbm = np.array([0.0, -np.inf]), np.array([-np.inf, 0.0])
    else:
        mu, sd = m * ga, math.sqrt(m * ga * (1.0 - ga))
        lo = max(0, math.floor(mu - LOWER_WINDOW_SD * sd - 2))
        hi = min(m, math.ceil(mu + LOWER_WINDOW_SD * sd + 2))
        cs = np.arange(lo, hi + 2)
        lb, lbm = stats.binom.logpmf(cs, m, ga), stats.binom.logpmf(cs - 1, m, ga)
    with np.errstate(divide="ignore"):
        logP = np.logaddexp(np.log1p(-al) + lb, np.log(al) + lbm)
        logQ = np.logaddexp(np.log1p(-be) + lb, np.log(be) + lbm)
    return logP, logQ, int(a.size) == 2


def _optimistic_pmf(logU, logL, d: float):
    """Optimistic rounded PMF (dict int -> mass, infinity mass) of the loss log U - log L under U."""
    keep = np.isfinite(logU)
    inf_mass = float(np.sum(np.exp(logU[keep & ~np.isfinite(logL)])))
    keep &= np.isfinite(logL)
    loss = logU[keep] - logL[keep]
    k = np.floor(loss / d).astype(np.int64)
    k0 = int(k.min())
    mass = np.bincount(k - k0, weights=np.exp(logU[keep]))
    nz = np.nonzero(mass)[0]
    return dict(zip((nz + k0).tolist(), mass[nz].tolist())), inf_mass


def _lower_hull_vertices(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the lower convex hull of the points (x_i, y_i), x non-decreasing (ties: lowest kept)."""
    hull: list[int] = []
    x, y = np.asarray(x, dtype=np.float64).tolist(), np.asarray(y, dtype=np.float64).tolist()  # the same doubles
    for i in range(len(x)):
        if hull and x[hull[-1]] == x[i]:
            if y[i] >= y[hull[-1]]:
                continue
            hull.pop()
        while len(hull) >= 2:
            i1, i2 = hull[-2], hull[-1]
            if (y[i2] - y[i1]) * (x[i] - x[i1]) >= (y[i] - y[i1]) * (x[i2] - x[i1]):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.asarray(hull, dtype=np.int64)


def _optimistic_ctd_pmf(x: np.ndarray, lo: np.ndarray, up: np.ndarray, d: float):
    r"""Optimistic rounded PMF of a pair from certified bounds of its profile (module docstring, argument G).

    ``x`` (increasing, ``x[0] = 0`` with ``lo[0] = up[0] = 1``) are points :math:`e^{\varepsilon}`,
    ``lo <= H(x) <= up`` certified bounds of the pair's profile :math:`H(x) = D_x(P\|Q)` there.
    Returns ``(dict k -> mass, infinity mass)``: masses under P at losses ``k * d`` whose composed
    hockey-stick divergence is at most that of the pair's (argument G).
    """
    N = x.size
    dx = np.diff(x)
    # R_j through (x_j, up_j), (x_{j+1}, lo_{j+1}): below H on [x_{j+1}, inf); L_j through (x_j, lo_j),
    # (x_{j+1}, up_{j+1}): below H on [0, x_j]  (extended chords of a convex function).
    sR = (lo[1:] - up[:-1]) / dx
    sL = (up[1:] - lo[:-1]) / dx
    # interval i = [x_i, x_{i+1}] for i = 0..N-2 and the last one [x_{N-1}, x_end]
    I = N
    x0 = np.empty((I, 4))      # anchor x of each line
    y0 = np.empty((I, 4))      # anchor value
    s = np.empty((I, 4))       # slope
    ok = np.zeros((I, 4), dtype=bool)
    # line 0: R_{i-1} (anchored at x_i, value lo_i), i >= 1
    ok[1:, 0] = True
    x0[1:, 0], y0[1:, 0], s[1:, 0] = x[1:], lo[1:], sR
    x0[0, 0], y0[0, 0], s[0, 0] = 0.0, 0.0, 0.0
    # line 1: L_{i+1} (anchored at x_{i+1}, value lo_{i+1}), i + 2 <= N - 1
    ok[:N - 2, 1] = True
    x0[:N - 2, 1], y0[:N - 2, 1], s[:N - 2, 1] = x[1:N - 1], lo[1:N - 1], sL[1:]
    x0[N - 2:, 1], y0[N - 2:, 1], s[N - 2:, 1] = 0.0, 0.0, 0.0
    # line 2: 1 - x; line 3: 0 (every profile is >= (1 - x)_+)
    ok[:, 2] = ok[:, 3] = True
    x0[:, 2], y0[:, 2], s[:, 2] = 1.0, 0.0, -1.0
    x0[:, 3], y0[:, 3], s[:, 3] = 0.0, 0.0, 0.0
    left = x
    right = np.empty(I)
    right[:-1] = x[1:]
    # last interval: until the extended chord R_{N-2} reaches 0 (beyond, the bound is the 0 line)
    sl = sR[-1]
    right[-1] = x[-1] + (lo[-1] / -sl if sl < 0 else 0.0)
    right[-1] = max(right[-1], x[-1], 1.0)
    # candidate abscissae: both ends and the crossings of every two lines, clipped to the interval
    cand = [left, right]
    with np.errstate(divide="ignore", invalid="ignore"):
        for a in range(4):
            for b in range(a + 1, 4):
                # y0a + sa (t - x0a) = y0b + sb (t - x0b)
                num = (y0[:, b] - s[:, b] * x0[:, b]) - (y0[:, a] - s[:, a] * x0[:, a])
                t = num / (s[:, a] - s[:, b])
                t = np.where(np.isfinite(t) & ok[:, a] & ok[:, b], t, left)
                cand.append(np.clip(t, left, right))
    T = np.stack(cand, axis=1)                                   # (I, 14)
    vals = y0[:, None, :] + s[:, None, :] * (T[:, :, None] - x0[:, None, :])
    # round-off margin of each line's evaluation (anchors, slopes and abscissae are floats)
    marg = 32 * _U * (np.abs(y0[:, None, :]) + np.abs(s[:, None, :]) * (np.abs(T[:, :, None] - x0[:, None, :])
                                                                         + T[:, :, None]))
    vals = np.where(ok[:, None, :], vals - marg, -np.inf)
    G = np.maximum(vals.max(axis=2), 0.0)                        # (I, 14): the bound g at the candidates
    px, py = T.ravel(), G.ravel()
    order = np.lexsort((py, px))
    px, py = px[order], py[order]
    px = np.concatenate([[0.0], px])
    py = np.concatenate([[1.0], py])
    h = _lower_hull_vertices(px, py)
    X, Y = px[h], py[h]
    # the hull ends at the first vertex where it reaches its minimum (convex, >= 0): flat beyond
    j = int(np.argmin(Y))
    X, Y = X[:j + 1], Y[:j + 1]
    inf_mass = float(Y[-1]) * (1 - 4 * _U)
    slope = np.diff(Y) / np.diff(X)                              # sigma_0 .. sigma_{K-1}, increasing
    right_s = np.concatenate([slope[1:], [0.0]])                 # slope after vertex k (k = 1..K)
    left_s = slope                                               # slope before vertex k
    Xv = X[1:]
    p = Xv * (right_s - left_s)
    p -= 8 * _U * Xv * (np.abs(right_s) + np.abs(left_s))
    loss = np.log(Xv)
    loss = loss - 4 * _U * (np.abs(loss) + 1e-300)
    keep = p > 0
    k = np.floor(loss[keep] / d).astype(np.int64)
    if k.size == 0:
        return {}, inf_mass
    k0 = int(k.min())
    mass = np.bincount(k - k0, weights=p[keep])
    nz = np.nonzero(mass)[0]
    return dict(zip((nz + k0).tolist(), (mass[nz] * (1 - 4 * _U)).tolist())), inf_mass


def _direction_points(es, fw, bw):
    """x grid and certified (lo, up) of the profile H(x) = D_x(P||Q) of one ordering, from the profile of
    (P||Q) (``fw`` = (up, lo) at ``es`` >= 0) and of (Q||P) (``bw``) via argument B for x < 1."""
    e = es[1:][::-1]
    xn = np.exp(-e)
    lo_n = np.clip((-np.expm1(-e) + xn * bw[1][1:][::-1]) * (1 - 4 * _U), 0.0, 1.0)
    up_n = np.clip((-np.expm1(-e) + xn * bw[0][1:][::-1]) * (1 + 4 * _U), 0.0, 1.0)
    x = np.concatenate([[0.0], xn, np.exp(es)])
    lo = np.concatenate([[1.0], lo_n, np.clip(fw[1], 0.0, 1.0)])
    up = np.concatenate([[1.0], up_n, np.clip(fw[0], 0.0, 1.0)])
    return x, lo, up


def _reveal_mix(pmf: dict, inf_mass: float, w: float):
    """Optimistic PMF of the pair mixed with infinity atoms of mass ``w`` (argument I, lower): masses times
    1 - w and infinity mass w + (1 - w) m, both rounded down; the inputs unchanged when w = 0."""
    if w <= 0.0:
        return pmf, inf_mass
    keep = (1.0 - w) * (1 - 4 * _U)
    return {k: v * keep for k, v in pmf.items()}, (w + (1.0 - w) * inf_mass) * (1 - 4 * _U)


def _concrete_profile_points(dec, n: int, es: np.ndarray):
    """Certified profile points of the concrete pair of ``dec`` in both orderings (``_direction_points`` of
    (P||Q) and of (Q||P)), or None where the exact evaluator cannot take the pair."""
    try:
        fw = _exact_profile(dec, n, es, "both")
        bw = _exact_profile(dec.swapped(), n, es, "both")
    except (UnsupportedGparvError, ResourceLimitError):
        return None
    return _direction_points(es, fw, bw), _direction_points(es, bw, fw)


def _trim_tails(pmf: dict, keep: float) -> dict:
    r"""An optimistic PMF (dict k -> mass under P) with its tails cut (argument K (iii)): the largest losses moved down to
    the loss above which they carry at most ``keep``, and the smallest dropped while they carry at most ``keep``
    (both lower the hockey-stick curve of every composition: each term :math:`p(1 - e^{\varepsilon - \ell})_+` is
    non-negative and non-decreasing in ℓ).  The composed grid shrinks to the bulk of the loss."""
    if keep <= 0.0 or len(pmf) < 3:
        return pmf
    ks = np.array(sorted(pmf))
    m = np.array([pmf[k] for k in ks])
    top = np.cumsum(m[::-1])[::-1]                    # mass at and above each key
    hi = max(int(np.sum(top > keep)) - 1, 0)          # the mass above key hi is at most keep: moved down to it
    lo = min(int(np.sum(np.cumsum(m) <= keep)), hi)   # the keys below lo carry at most keep: dropped
    out = {int(k): float(v) for k, v in zip(ks[lo:hi], m[lo:hi])}
    out[int(ks[hi])] = float(np.sum(m[hi:])) * (1 - 2 * (m.size + 2) * _U)   # a sum rounded down
    return out


def _points_pld(pts, d: float, reveal: float = 0.0, keep: float = 0.0):
    """Optimistic PLD on the grid ``d`` of a pair from its certified profile points (:func:`_concrete_profile_points`;
    argument G); with ``reveal`` = w > 0, of that pair mixed with infinity atoms of mass w (argument I); with
    ``keep`` > 0 its tails cut at that mass (:func:`_trim_tails`)."""
    pr, ir = _reveal_mix(*_optimistic_ctd_pmf(*pts[0], d), reveal)
    pa, ia = _reveal_mix(*_optimistic_ctd_pmf(*pts[1], d), reveal)
    pr, pa = _trim_tails(pr, keep), _trim_tails(pa, keep)
    return PrivacyLossDistribution.create_from_rounded_probability(
        pr, ir, d, pessimistic_estimate=False, rounded_probability_mass_function_add=pa,
        infinity_mass_add=ia, symmetric=False)


def _concrete_profile_pld(dec, n: int, es: np.ndarray, d: float, reveal: float = 0.0):
    """Optimistic PLD (both orderings) of the concrete pair of ``dec`` (argument G), or None; with ``reveal``
    = w > 0, of that pair mixed with infinity atoms of mass w in both orderings (argument I)."""
    pts = _concrete_profile_points(dec, n, es)
    return None if pts is None else _points_pld(pts, d, reveal)


def _scaled_grid(edge: float, scale: float, fine: int, far: int) -> np.ndarray:
    """ε grid on [0, edge] for a profile whose loss has the placement scale ``scale`` (nats): ``fine`` points
    uniform up to 8 scales (the bulk of the loss), then ``far`` points geometric up to ``edge`` (the tail, where
    the profile falls by a bounded ratio between neighbours); all uniform when ``edge`` is within 16 scales.  A
    placement only: any grid gives certified values."""
    if edge <= 16.0 * scale:                          # a short support: all points uniform
        return np.linspace(0.0, edge, fine + far + 1)
    top = 8.0 * scale
    head = np.linspace(0.0, top, fine + 1)
    return np.unique(np.concatenate([head, np.geomspace(top, edge, far + 1)]))


def _gaussian_lower_points(rnd: _Round, eps1: float | None, decs=None, coarse: bool = False) -> list:
    """``[(dec, points), ...]``: certified profile points (both orderings) of the Gaussian round's candidate quantised
    pairs (``decs``, default :func:`shuffleamp.gaussian.totals_lowers` at the probe ``eps1``, the single round's
    lower ε), on an ε grid fine over the concrete pair's loss scale (:func:`_scaled_grid`; ``coarse``: a quarter of
    the points, to rank the candidates)."""
    from .gaussian import loss_scale, totals_lowers
    at, n = rnd.mechanism, rnd.n
    q = 4 if coarse else 1
    es = _scaled_grid(rnd.edge, loss_scale(at.mu, n, upper=False), GAUSSIAN_LOWER_FINE // q, GAUSSIAN_LOWER_FAR // q)
    out = []
    for dec in (totals_lowers(at.mu, n, eps1) if decs is None else decs):
        check_time("the Gaussian round's concrete pairs")
        pts = _concrete_profile_points(dec, n, es)
        if pts is not None:
            out.append((dec, pts))
    return out


#: Concrete pairs (lower decompositions) of one round type whose R-fold compositions are compared.
LOWER_CANDIDATES = 3
#: The Gaussian round's concrete pairs (argument G): profile points over the bulk of the loss (:func:`_scaled_grid`,
#: the rest geometric up to the support edge), the best GAUSSIAN_LOWER_FINE_CANDIDATES composed again on a grid
#: refined (powers of 2, at most GAUSSIAN_LOWER_REFINE times) until the step is GAUSSIAN_LOWER_KL_FRACTION of the
#: loss's mean (the floor rounding costs about half a step per round), while the composed PMF has at most
#: GAUSSIAN_LOWER_MAX_POINTS points.  Placement and cost only: every grid gives a certified lower bound.
GAUSSIAN_LOWER_FINE = 48
GAUSSIAN_LOWER_FAR = 96
GAUSSIAN_LOWER_FINE_CANDIDATES = 1
GAUSSIAN_LOWER_REFINE = 512
GAUSSIAN_LOWER_KL_FRACTION = 0.1
GAUSSIAN_LOWER_MAX_POINTS = 1_000_000
#: ... each round's optimistic PMF with its tails cut at GAUSSIAN_LOWER_KEEP times the target δ over R (the total
#: δ then moves by at most 2 R times that, 2e-4 of the target; at an ε target, of TAIL_MASS_TRUNCATION).
GAUSSIAN_LOWER_KEEP = 1e-4
LABEL_BUCKETS = "concrete-pair (privacy-loss buckets)"
LABEL_EXACT_COUNT = "concrete-pair (exact count)"
LABEL_COUNT = "concrete-pair (count statistic)"


def _count_statistic_pld(dec, n: int, d: float, reveal: float = 0.0):
    """Optimistic PLD of the count statistic of a Theorem-14 pair (argument E) and its label; with ``reveal``
    = w > 0, of that pair mixed with infinity atoms of mass w in both orderings (argument I)."""
    logP, logQ, exact = _count_pair(dec, n)
    pr, ir = _reveal_mix(*_optimistic_pmf(logP, logQ, d), reveal)
    pa, ia = _reveal_mix(*_optimistic_pmf(logQ, logP, d), reveal)
    pld = PrivacyLossDistribution.create_from_rounded_probability(
        pr, ir, d, pessimistic_estimate=False, rounded_probability_mass_function_add=pa,
        infinity_mass_add=ia, symmetric=False)
    return pld, (LABEL_EXACT_COUNT if exact else LABEL_COUNT)


def _lower_plds(rnd: _Round, d_grid: float, points: int, d: float, eps1: float | None = None) -> list:
    """Candidate optimistic PLDs ``[(pld, label), ...]`` of one round type's concrete pairs.

    Binary randomized response: the exact count pair (argument E).  Other mechanisms: the
    privacy-loss buckets of each Theorem-14 pair from its certified profile on the round's grid
    (argument G), or its count statistic where the exact evaluator cannot take the pair.  Populations:
    the concrete score pair (argument F).  The Gaussian randomizer: the quantised pairs of
    :func:`_gaussian_lower_points` (placed with ``eps1``, the single round's lower ε at the target).  Empty if the
    mechanism has no concrete pair.
    """
    mechanism, n = rnd.mechanism, rnd.n
    if _is_population(mechanism):
        return [_population_lower_pld(mechanism, d)]
    if rnd.lower_source is not None:
        return _approx_lower_plds(rnd, points, d)
    if _gaussian_stand_in(mechanism) is not None:
        return [(_points_pld(pts, d), LABEL_BUCKETS) for _, pts in _gaussian_lower_points(rnd, eps1)]
    at = _families_at(mechanism, n)
    decs = [dec for dec in (_one_ordering(at[1]) if at is not None else mechanism.lower_decompositions())
            if all(hasattr(dec, f) for f in ("a", "b", "c", "beta")) and float(dec.beta) == 0.0]
    if not decs:
        return []
    if len(decs) > LOWER_CANDIDATES:       # keep the pairs with the largest total variation
        tv = [float(np.sum(np.maximum(np.asarray(x.a) - np.asarray(x.b), 0.0))) for x in decs]
        decs = [decs[i] for i in np.argsort(tv)[::-1][:LOWER_CANDIDATES]]
    if rnd.binary_eps0 is not None or all(np.asarray(dec.a).size == 2 for dec in decs):
        return [_count_statistic_pld(dec, n, d) for dec in decs]
    K = max(1, math.ceil(rnd.edge / d_grid))
    es = _grid_points(K, min(points, LOWER_POINTS)) * d_grid
    out = []
    for dec in decs:
        pld = _concrete_profile_pld(dec, n, es, d)
        out.append((pld, LABEL_BUCKETS) if pld is not None else _count_statistic_pld(dec, n, d))
    return out


LABEL_REVEAL = "concrete-pair (the (eps0, delta0)-LDP randomizer revealing its input w.p. delta0"
LABEL_APPROX_RR = "concrete-pair ((eps0, delta0)-LDP k-RR at log((e^eps0 + (k-1) delta0)/(1-delta0))"


def _approx_lower_plds(rnd: _Round, points: int, d: float) -> list:
    r"""Candidate optimistic PLDs of an (ε0, δ0)-LDP round type's concrete members with all its n users
    (module docstring, argument I, lower; :func:`shuffleamp.gaussian.approx_lower_families`): k-RR at
    :math:`\varepsilon_1^{(k)}`, and the randomizer revealing its input with probability δ0 on top of k-RR at
    ε0 (its pair mixed with infinity atoms of mass δ0).  Binary pairs: the exact count pair (argument E);
    3-RR: privacy-loss buckets (argument G) on a grid up to the pure ε0 clone's support edge with n users."""
    from . import bounds as B
    from .gaussian import approx_lower_families
    cls_, n = rnd.lower_source
    plain, reveal = approx_lower_families(cls_, B)
    out = []
    for decs, w, label in ((plain, 0.0, LABEL_APPROX_RR), (reveal, cls_.delta0, LABEL_REVEAL)):
        for dec in _one_ordering(decs):
            if np.asarray(dec.a).size == 2:
                out.append((_count_statistic_pld(dec, n, d, w)[0], label + ", exact count)"))
                continue
            d_grid = max(_pure_clone_edge(cls_.eps0, n), d) / min(points, LOWER_POINTS)
            es = _grid_points(min(points, LOWER_POINTS), min(points, LOWER_POINTS)) * d_grid
            pld = _concrete_profile_pld(dec, n, es, d, w)
            out.append((pld, label + ", privacy-loss buckets)") if pld is not None
                       else (_count_statistic_pld(dec, n, d, w)[0], label + ", count statistic)"))
    return out


@functools.lru_cache(maxsize=64)
def _pure_clone_edge(eps0: float, n: int) -> float:
    """Support edge of the pure ε0 clone pair with n users (the scale of an (ε0, δ0)-LDP class's concrete pairs
    with n users, whose profile it dominates)."""
    from .gaussian import ApproximateLDP
    return _Round._make(ApproximateLDP(eps0, 0.0).at_n(n), n, DEFAULT_TAIL_DELTA).edge


def _lower_interval(rt: _Round, points: int) -> float:
    """The own grid step of a round type's concrete pair: :meth:`_Round.own_interval`, or for an (ε0, δ0)-LDP
    class (whose upper pair keeps m <= n users) that of its pairs with all n users."""
    if rt.lower_source is None:
        return rt.own_interval(points)
    edge = _pure_clone_edge(float(rt.lower_source[0].eps0), int(rt.lower_source[1]))
    return edge / points if edge > 0 else 1e-4


def _one_ordering(decs) -> list:
    """One of each pair ``{dec, dec.swapped()}`` of a swap-closed list (a concrete pair's PLD takes both
    orderings, :func:`_concrete_profile_pld`)."""
    out, seen = [], set()
    for dec in decs:
        if law_key(dec) not in seen:
            out.append(dec)
            seen.update((law_key(dec), law_key(dec.swapped())))
    return out


def _population_lower_pld(pop, d: float):
    """Optimistic PLD of a population's concrete score pair (argument F), for the group whose pair has
    the largest total variation (a lower bound for that group's user, hence for the worst user)."""
    best, best_tv = None, -1.0
    for g in range(len(pop.groups)):
        logP, logQ = score_pair_logpmf(pop, g)
        tv = float(np.sum(np.maximum(np.exp(logP) - np.exp(logQ), 0.0)))
        if tv > best_tv:
            best_tv, best = tv, g
    logP, logQ = score_pair_logpmf(pop, best)
    logQr, logPr = score_pair_logpmf(pop, best, reverse=True)
    pr, ir = _optimistic_pmf(logP, logQ, d)
    pa, ia = _optimistic_pmf(logQr, logPr, d)
    pld = PrivacyLossDistribution.create_from_rounded_probability(
        pr, ir, d, pessimistic_estimate=False, rounded_probability_mass_function_add=pa,
        infinity_mass_add=ia, symmetric=False)
    return pld, "concrete-pair (population score statistic)"


# ---------------------------------------------------------------------------- accountant
def _validate_rounds(rounds) -> list:
    if isinstance(rounds, tuple) and len(rounds) == 3 and (hasattr(rounds[0], "upper_decompositions")
                                                          or _is_population(rounds[0])):
        rounds = [rounds]
    try:
        rounds = list(rounds)
    except TypeError as exc:
        raise ParameterError("rounds", "must be a list of (mechanism, n, R) tuples") from exc
    if not rounds:
        raise ParameterError("rounds", "must contain at least one (mechanism, n, R) tuple")
    out = []
    for r in rounds:
        if not (isinstance(r, (tuple, list)) and len(r) == 3):
            raise ParameterError("rounds", f"each entry must be (mechanism, n, R), got {r!r}")
        m, n, R = r
        if _is_population(m) and shared_mechanism(m) is not None:
            # every group runs one mechanism: the population is that mechanism at its n users (personalized,
            # "Sub-populations"), accounted as such
            _check_mechanism(m, n, keep_class=True)
            m, n = shared_mechanism(m), m.n
        m, n = _check_mechanism(m, n, keep_class=True)
        out.append((m, n, _validate.count(R, "rounds")))
    return out


# ---------------------------------------------------------------------------- (ε0, δ0)-LDP round types
#: Profile evaluations per side of the PLD of an (ε0, δ0)-LDP round type (each is one profile evaluation per
#: number of users kept that can still win at that ε; connect-the-dots stays pessimistic on fewer points).
APPROX_POINTS = 200


def _users_grid(n: int) -> list:
    """Users kept m = n, ⌊n/2⌋, ⌊n/4⌋, ... and 1 (distinct, decreasing): the octave grid of :class:`_ApproxFamily`."""
    ms, m = [], n
    while m >= 1:
        ms.append(m)
        m //= 2
    return ms


def _inf_total(beta: float, R: int) -> float:
    """1 - (1 - β)^R: the infinity mass of R rounds of a pair with infinity mass β (argument I)."""
    return -math.expm1(R * math.log1p(-beta)) if beta < 1.0 else 1.0


class _ApproxFamily:
    r"""(ε0, δ0)-LDP classes as one family (module docstring, argument I): for one class with n users, its
    certified profile is the pointwise minimum over the users kept m (:func:`_users_grid`; m = n alone at
    δ0 = 0; for a domain of d inputs, of the m >= d - 1, which share one β, the largest) of the reduction's
    profiles :math:`\beta_m + (1-\beta_m)U_m(\varepsilon)`, :math:`U_m` the clone pair's at
    :math:`\varepsilon_0'(\beta_m)` with m users; for several (a population of (ε_g, δ_g)-LDP groups, each
    bounded by its own group alone), the maximum over the groups of theirs.  It is written
    :math:`F + (1-F)V(\varepsilon)` with the floor F (the largest one-user :math:`\beta_1 = \delta_0`) as the
    round's infinity mass; :meth:`values` returns V, at most ``tail_delta`` beyond every one-user pair's support
    edge (``eps0_pure`` bounds them).

    A value of m is evaluated at ε only where its :math:`\beta_m` is below the smallest value found so far
    (m in increasing order); beyond the support edge of :math:`U_m` its value is
    :math:`\beta_m + (1-\beta_m)U_m(\text{edge})` (U non-increasing, :math:`U_m(\text{edge}) \le` ``tail_delta``).
    """

    def __init__(self, classes, tail_delta: float):
        self.tail = tail_delta
        self.groups = []
        for cls_, n in classes:
            subs = []
            ms = list(reversed(_users_grid(int(n)))) if cls_.delta0 > 0 else [int(n)]
            if cls_.domain is not None:           # β_m = (d - 1) δ0 for every m >= d - 1: the largest such m
                ms = [m for m in ms if m < cls_.domain - 1] + [m for m in ms if m >= cls_.domain - 1][-1:]
            for m in ms:
                try:
                    proxy = cls_.at_n(m)
                except ParameterError:            # β_m >= 1: no bound from m users (nor from more)
                    break
                rt = _Round._make(proxy.without_charge(), m, tail_delta)
                u_edge = float(rt.upper_profile(np.array([rt.edge]))[0]) if rt.edge > 0 else 0.0
                subs.append((float(proxy.delta_charge), rt, min(u_edge, tail_delta)))
            if not subs:
                cls_.at_n(1)                      # raises ParameterError naming delta0
            self.groups.append(subs)
        self.floor = max(subs[0][0] for subs in self.groups)
        self.eps0_pure = max(float(subs[0][1].mechanism.eps0_pure) for subs in self.groups)
        self.last_edge = max(subs[0][1].edge for subs in self.groups)
        self.last_u = max(subs[0][2] for subs in self.groups)

    @staticmethod
    def _minimum(subs, flat: np.ndarray) -> np.ndarray:
        best = np.ones(flat.shape)
        for b, rt, u_edge in subs:
            beyond = flat >= rt.edge              # U_m(ε) <= U_m(edge) <= u_edge there (U non-increasing)
            if beyond.any():
                best[beyond] = np.minimum(best[beyond], np.nextafter((b + (1.0 - b) * u_edge) * (1 + 4 * _U),
                                                                     np.inf) if b > 0 else u_edge)
            todo = ~beyond & (best > b)
            if todo.any():
                U = rt.upper_profile(flat[todo])
                v = np.nextafter((b + (1.0 - b) * U) * (1 + 4 * _U), np.inf)
                best[todo] = np.minimum(best[todo], v)
        return best

    def minimum(self, eps: np.ndarray) -> np.ndarray:
        """Certified upper values of the round's profile at ε >= 0 (the minimum over m; the maximum over groups)."""
        eps = np.asarray(eps, dtype=np.float64)
        flat = eps.ravel()
        out = np.zeros(flat.shape)
        for subs in self.groups:
            np.maximum(out, self._minimum(subs, flat), out=out)
        return np.minimum(out, 1.0).reshape(eps.shape)

    def values(self, eps: np.ndarray, side: str) -> np.ndarray:
        r"""V(ε) >= 0 with :meth:`minimum` <= F + (1 - F) V (rounded up; ``side`` "upper" only).

        Beyond every group's one-user support edge, group g's value is at most :math:`\beta_g + (1-\beta_g)u_g`
        with :math:`\beta_g \le F`, and :math:`\beta_g + (1-\beta_g)u_g - F \le (1-F)u_g`, so V is at most the
        largest :math:`u_g` there."""
        F = self.floor
        eps = np.asarray(eps, dtype=np.float64)
        v = np.maximum(self.minimum(eps) - F, 0.0) / (1.0 - F)
        v = np.minimum(np.nextafter(v * (1 + 4 * _U), np.inf), 1.0)
        return np.where(eps >= self.last_edge, np.minimum(v, self.last_u), v)


def _reveal_probability(mechanism) -> float:
    """δ0 of an (ε0, δ0)-LDP class, the largest δ_g of a population of such groups, else 0: a member of the class
    may reveal its input with this probability in every round (no finite ε below 1 - (1 - δ0)^R)."""
    if _approx_class(mechanism) is not None:
        return float(mechanism.delta0)
    if _is_population(mechanism) and mechanism.kind == "approx":
        return max(float(g.mechanism.delta0) for g in mechanism.groups)
    return 0.0


def _approx_round(cls_, n: int, R: int, tail_delta: float, points: int, vdi, epsilon, delta) -> _Round:
    r"""The round type of an (ε0, δ0)-LDP class in :func:`compose_rounds`: the minimum over the users kept
    (:class:`_ApproxFamily`), or the reduction's pair with all n users kept where R rounds of it alone give the
    smaller total at the target (ε at ``delta``, or δ at ``epsilon``).

    Both are certified dominating pairs (module docstring, argument I), so either choice is sound.  The minimum's
    grid step is set by the support of its one-user pair (about ε0); the all-users pair's by the n users' far
    smaller support, which matters when :math:`n\delta_0` is negligible at the target.
    """
    fam = _Round.make(cls_, n, tail_delta)
    try:
        alln = _Round.make(cls_, n, tail_delta, users=n)
    except ParameterError:                        # n δ0 >= 1
        return fam
    if delta is not None and _inf_total(alln.inf_mass, R) >= delta:
        return fam

    def total(rt):
        d = _interval(vdi, [rt], points)
        tot, _, ro = _compose_all([(_upper_pld(rt, d, points), R)])
        return (_certified_epsilon(tot, delta, ro, 0.0, d, "upper") if delta is not None
                else _delta_bounds(tot, epsilon, ro)[0])
    return alln if total(alln) < total(fam) else fam


def _round_type_seconds(mechanism, n=None) -> float:
    """Estimated seconds of one round type in :func:`compose_rounds` (the cost model above): for a mechanism
    profiled through its finite decompositions for n users, the upper profile (:data:`AT_N_POINTS` points and
    the edge search) and the concrete pair's buckets (both orderings) at :data:`AT_N_ATOM_SECONDS` per atom; for
    an (ε0, δ0)-LDP class, its profiles over the users kept (:class:`_ApproxFamily`)."""
    if _is_population(mechanism):
        if mechanism.kind == "mixed":                  # each output space's population
            return sum(_round_type_seconds(part) for part, _ in mechanism.parts)
        if mechanism.kind == "gaussian":
            mu = max(gr.mechanism.mu for gr in mechanism.groups)
            return len(mechanism.groups) * (GAUSSIAN_POPULATION_GROUP_SECONDS + GAUSSIAN_POPULATION_SMALL_N_SECONDS
                                            / math.sqrt(mechanism.n)) * (1.0 + max(mu - 2.0, 0.0))
        return len(mechanism.groups) * (POPULATION_POINTS + 20) * POPULATION_EVAL_SECONDS
    if _approx_class(mechanism) is not None:
        # the minimum over the users kept: about 10 profiles of APPROX_POINTS points (argument I)
        return 4.0 * ROUND_TYPE_SECONDS
    try:
        at = _families_at(mechanism, n)
    except (ParameterError, TypeError, ValueError):
        at = None
    if at is not None:
        atoms = max((np.asarray(f.a).size for f in at[0] if hasattr(f, "a")), default=0)
        per_atom = AT_N_ATOM_SECONDS * min(1.0, math.sqrt(1000.0 / max(float(n), 1.0)))   # narrower bells at large n
        return ROUND_TYPE_SECONDS + (AT_N_POINTS + 20 + 2 * (LOWER_POINTS + 1)) * atoms * per_atom
    return ROUND_TYPE_SECONDS


def _gaussian_round_seconds(fam: _GaussianFamily, points: int, R: int, lower: bool) -> float:
    """Estimated CPU seconds of one Gaussian round type in :func:`compose_rounds` (cost model above): the upper
    profile (:meth:`_GaussianFamily.profile_seconds`), the compositions, the lower bound's quantised pairs and, for
    one round, the single round's bracket."""
    grow = 1.0 + R / GAUSSIAN_COMPOSE_ROUNDS               # longer compositions: larger composed PMFs
    seconds = (fam.profile_seconds(points) + GAUSSIAN_COMPOSE_SECONDS * grow
               + (GAUSSIAN_SINGLE_SECONDS if R == 1 else 0.0))
    if lower:
        seconds += GAUSSIAN_LOWER_BASE + GAUSSIAN_LOWER_SECONDS * min(1.0, fam.n / GAUSSIAN_LOWER_N) ** 2 * max(
            1.0, fam.mu / GAUSSIAN_LOWER_MU) * (1.0 + max(0.0, 1.0 - fam.mu) * (fam.n >= GAUSSIAN_LOWER_LARGE_N)) * (
            1.0 + R / GAUSSIAN_LOWER_ROUNDS)
    return seconds


def _refuse_gaussian_rounds(rounds, tail: float, points: int, lower: bool) -> None:
    """Up-front refusal (ResourceLimitError naming ``max_seconds``) of Gaussian round types whose estimated cost
    (:func:`_gaussian_round_seconds`) exceeds the time left, before any profile point is evaluated."""
    seconds, worst = 0.0, None
    for m, n, R in rounds:
        if _gaussian_stand_in(m) is not None:
            fam = _GaussianFamily(m, n, tail)
            sec = _gaussian_round_seconds(fam, points, R, lower)
            seconds += sec
            if worst is None or sec > worst[0]:
                worst = (sec, fam)
    if worst is not None:
        fam = worst[1]
        refuse_if_costly(f"Gaussian round type(s), Δ/σ = {fam.mu:.4g}, n = {fam.n} (its profile: "
                         f"{fam.grid_points(points)} points, truncated laws up to log-ratio "
                         f"{max(r[2] for r in fam.rungs):.3g})", "max_seconds", seconds=seconds,
                         hint="increase sigma, pass fewer points, or lower=False")


def _pmf_points(pmf, R: int) -> float:
    """Grid points of ``pmf`` composed R times by dp_accounting (its own truncation bounds), or of pmf itself;
    once per accountant call (:func:`shuffleamp._reuse.remember`)."""
    return _reuse.remember(("pmf-points", id(pmf), R), pmf, lambda: _pmf_points_of(pmf, R))


def _pmf_points_of(pmf, R: int) -> float:
    if hasattr(pmf, "_loss_probs"):                   # sparse: dense over its key range when composed
        keys = pmf._loss_probs.keys()
        width = (max(keys) - min(keys) + 1) if keys else 1
        if R == 1 or width * R < 2e6:
            return float(width * R)
        check_pld_points(width, "a dense privacy-loss distribution", "value_discretization_interval")
        probs = np.zeros(width)
        lo = min(keys)
        for k, v in pmf._loss_probs.items():
            probs[k - lo] = v
    else:
        probs = np.asarray(getattr(pmf, "_probs", ()), dtype=np.float64)
        if R == 1 or probs.size == 0:
            return float(max(probs.size, 1))
    # dp_accounting's own Chernoff truncation bounds; on long PMFs at 6 of its 40 orders (a wider range)
    orders = None if probs.size <= 100_000 else np.array([-20.0, -4.0, -1.0, 1.0, 4.0, 20.0]) / probs.size
    a, b = pld_common.compute_self_convolve_bounds(probs, R, TAIL_MASS_TRUNCATION, orders)
    return float(b - a + 1)


def _check_grid(rts, d: float, lower: bool) -> None:
    """Up-front refusal (``value_discretization_interval``) of a grid step whose privacy-loss distributions cost
    more than the budget, before any is built: each round type's upper PLD has 2⌈edge/d⌉ + 1 points, built and
    then bounded and composed (:data:`PLD_POINT_SECONDS` per point for each), and the lower one about
    LOWER_REFINE times as many (its step is d / LOWER_REFINE over the same losses)."""
    pts = sum(2.0 * math.ceil(rt.edge / d) + 1.0 for rt in rts)
    more = LOWER_REFINE if lower else 0.0
    refuse_if_costly(f"privacy-loss distributions of {pts:.3g} points on a grid of {d:g}" +
                     (f" (and the lower bound's, about {LOWER_REFINE} times finer)" if lower else ""),
                     "value_discretization_interval", seconds=pts * (2.0 + more) * PLD_POINT_SECONDS,
                     nbytes=pts * max(1.0, more) * PLD_POINT_BYTES, hint="raise value_discretization_interval")


def _check_composition(parts, lower: bool = False) -> None:
    """Refuse, before composing, a composition whose result would exceed the budget (cost model of
    :func:`shuffleamp._numerics.check_pld_points`): naming ``rounds`` when a self-composition is the
    large part, else ``value_discretization_interval``.  ``lower``: the composed lower bound follows on a
    grid LOWER_REFINE times finer (about LOWER_REFINE times the points), counted in the time."""
    factor = 1.0 + (LOWER_REFINE if lower else 0.0)
    total = 0.0
    for pld, R in parts:
        pts = max(_pmf_points(pld._pmf_remove, R), _pmf_points(pld._pmf_add, R))
        check_pld_points(pts, f"composing {R} rounds on a grid of {pld._pmf_remove._discretization:g}",
                         "rounds" if R > 1 else "value_discretization_interval")
        total += pts
    refuse_if_costly("composing the round types" + (" (upper and lower)" if lower else ""),
                     "rounds" if any(R > 1 for _, R in parts) else "value_discretization_interval",
                     seconds=total * factor * PLD_POINT_SECONDS)


# ---------------------------------------------------------------------------- composition round-off
def _gamma(k: float) -> float:
    return k * _U / (1.0 - k * _U)


def _fft_rel(N: int) -> float:
    """Relative 2-norm error bound of a computed length-N FFT (argument H; Higham, Theorem 24.2)."""
    L = max(1, math.ceil(math.log2(max(N, 2))))
    mu = 4 * _U                                  # twiddle factors, computed to a few ulps
    eta = 2.0 * (mu + _gamma(4) * (math.sqrt(2.0) + mu))   # x2: mixed-radix butterflies
    return L * eta / (1.0 - L * eta)


def _norm2(v: np.ndarray) -> float:
    """Euclidean norm, rounded up (a sum of squares without BLAS threads)."""
    return math.sqrt(float(np.sum(np.square(v))) * (1 + _gamma(v.size + 2))) * (1 + 2 * _U)


def _dense_probs(pmf) -> np.ndarray:
    return np.asarray(pmf.to_dense_pmf()._probs, dtype=np.float64)


def _self_compose_error(pmf, R: int, e_in: float, out_size: int):
    """(2-norm error bound of the computed R-fold self-convolution, FFT length) (argument H).

    ``out_size`` is the length of the computed result (``dp_accounting`` keeps that window of its
    circular FFT convolution of length ``next_fast_len(max(out_size, input length))``).
    """
    from scipy import fft as _fft
    a = _dense_probs(pmf)
    S = float(np.sum(np.abs(a))) * (1 + _gamma(a.size)) + math.sqrt(a.size) * e_in
    prop = R * e_in * S ** (R - 1)                # the input's own error, propagated (Young)
    if isinstance(pmf, pld_pmf.SparsePLDPmf) and pmf.size ** R <= pld_pmf._MAX_PMF_SPARSE_SIZE:
        # direct summation of products: each entry within gamma of the sum of |terms|
        return prop + _gamma(R * (pmf.size + 2)) * (_norm2(a) + e_in) * S ** (R - 1), pmf.size ** R
    N = _fft.next_fast_len(max(out_size, a.size))
    eF = _fft_rel(N)
    ey = eF * S                                   # every computed FFT entry within ey (componentwise)
    # the spectrum of a real vector is conjugate-symmetric: its 2-norms are at most sqrt(2) times
    # those over the half spectrum (rfft)
    m = np.abs(_fft.rfft(a, N)) + 2 * ey          # >= |exact entry| and |dp_accounting's computed entry|
    # power: (exact + e)^R - exact^R, and the power's own rounding, entry by entry (one pow, rounded up)
    mh = m ** (R / 2) * (1 + 8 * _U)
    mR = mh * mh * (1 + 2 * _U)
    dz = R * ey * mR / np.maximum(m, 1e-300) * (1 + 2 * _U) + 4 * _U * ((R * math.pi + 2) * mR + (2 / math.e) * mh)
    zn = math.sqrt(2.0) * _norm2(mR)              # >= 2-norm of the computed power
    dzn = math.sqrt(2.0) * _norm2(dz)
    sq = math.sqrt(N)
    out = (dzn + eF * (1 + eF) * (zn + dzn)) / sq + _U * zn / sq
    return prop + out * (1 + 4 * _U), N


def _compose_error(pa, pb, ea: float, eb: float):
    """(2-norm error bound of the computed convolution of two PMFs, its length) (argument H)."""
    from scipy import fft as _fft
    a, b = _dense_probs(pa), _dense_probs(pb)
    Sa = float(np.sum(np.abs(a))) * (1 + _gamma(a.size)) + math.sqrt(a.size) * ea
    Sb = float(np.sum(np.abs(b))) * (1 + _gamma(b.size)) + math.sqrt(b.size) * eb
    # Young: ||Δa * b||_2 <= ||Δa||_2 ||b||_1, and <= ||Δa||_1 ||b||_2 <= sqrt(|a|) ||Δa||_2 ||b||_2
    a2n, b2n = _norm2(a) + ea, _norm2(b) + eb
    prop = (ea * min(Sb, math.sqrt(a.size) * b2n) + eb * min(Sa, math.sqrt(b.size) * a2n)
            + ea * eb * math.sqrt(min(a.size, b.size)))
    L = a.size + b.size - 1
    if (isinstance(pa, pld_pmf.SparsePLDPmf) and isinstance(pb, pld_pmf.SparsePLDPmf)
            and pa.size * pb.size <= pld_pmf._MAX_PMF_SPARSE_SIZE):
        return prop + _gamma(min(a.size, b.size) + 2) * Sa * (_norm2(b) + eb), L
    N = _fft.next_fast_len(L)
    eF = _fft_rel(N)
    ma = np.abs(_fft.rfft(a, N)) + 2 * eF * Sa    # >= |exact| and |scipy.signal's computed| entries
    mb = np.abs(_fft.rfft(b, N)) + 2 * eF * Sb    # (half spectra: norms times sqrt(2))
    dz = eF * Sa * mb + eF * Sb * ma + (eF * eF * Sa * Sb) + 4 * _U * ma * mb
    zn = math.sqrt(2.0) * _norm2(ma * mb)
    dzn = math.sqrt(2.0) * _norm2(dz)
    sq = math.sqrt(N)
    out = (dzn + eF * (1 + eF) * (zn + dzn)) / sq + _U * zn / sq
    return prop + out * (1 + 4 * _U), L


class _RoundOff:
    """Running round-off bounds of a composition, per direction (argument H)."""

    def __init__(self):
        self.vec = {"remove": 0.0, "add": 0.0}     # 2-norm error of the current computed PMF vector
        self.n = {"remove": 1, "add": 1}           # length of the current PMF vector
        self.inf = {"remove": 0.0, "add": 0.0}     # error that reached the infinity mass


def _pmfs(pld):
    return {"remove": pld._pmf_remove, "add": pld._pmf_add}


def _distinct(pld):
    """The PLD's PMFs, the add one only if it is not the remove one (symmetric PLDs)."""
    return {"remove": pld._pmf_remove} if pld._pmf_add is pld._pmf_remove else _pmfs(pld)


def _track_self_compose(ro: _RoundOff, pld, R: int, result) -> None:
    """Update ``ro`` (the bounds of ``pld``) to those of ``result = pld.self_compose(R)``.

    The entries outside the kept window are discarded (their exact mass is the truncation t, which
    ``dp_accounting`` adds to the infinity mass exactly); 1 - (1 - m)^R moves an error of the input's
    infinity mass by at most R times."""
    outs, ins = _pmfs(result), _pmfs(pld)
    for side in ("remove", "add"):
        if side == "add" and ins["add"] is ins["remove"] and ro.vec["add"] == ro.vec["remove"]:
            e = ro.vec["remove"]                   # symmetric: the same computation
        else:
            e, _ = _self_compose_error(ins[side], R, ro.vec[side], outs[side].size)
        # -expm1(R log1p(-m)) (dense) or R - 1 steps a + b - ab (sparse): within 4 (R + 1) u relative
        ro.inf[side] = R * ro.inf[side] + 4 * (R + 1) * _U * float(outs[side]._infinity_mass)
        ro.vec[side], ro.n[side] = e, outs[side].size


def _track_compose(ro: _RoundOff, total, ro_b: _RoundOff, pld_b, result) -> None:
    """Update ``ro`` (the bounds of ``total``) to those of ``result = total.compose(pld_b)``.

    m_a + m_b - m_a m_b moves by at most the sum of the two errors; the entries of the linear
    convolution that the truncation moves to the infinity mass (its right tail, counted from the
    result's window) carry at most sqrt(their number) times the vector's 2-norm error."""
    pa, pb, pr = _pmfs(total), _pmfs(pld_b), _pmfs(result)
    done = None
    for side in ("remove", "add"):
        if (side == "add" and pa["add"] is pa["remove"] and pb["add"] is pb["remove"]
                and ro.vec["add"] == ro.vec["remove"] and ro_b.vec["add"] == ro_b.vec["remove"]):
            e = done                               # symmetric: the same computation
        else:
            e, _ = _compose_error(pa[side], pb[side], ro.vec[side], ro_b.vec[side])
            done = e
        da, db, dr = pa[side].to_dense_pmf(), pb[side].to_dense_pmf(), pr[side].to_dense_pmf()
        left = dr._lower_loss - (da._lower_loss + db._lower_loss)
        right = max((da.size + db.size - 1) - left - dr.size, 0)
        # m_a + m_b - m_a m_b: within 4 u relative
        ro.inf[side] += ro_b.inf[side] + math.sqrt(right) * e + 4 * _U * float(dr._infinity_mass)
        ro.vec[side], ro.n[side] = e, dr.size


def _pmf_arrays(pmf, cache: dict | None = None):
    """(dense PMF, probabilities, losses) of a PMF; kept in ``cache`` (by the PMF's id, while it lives) if given."""
    key = ("arrays", id(pmf))
    if cache is not None and key in cache:
        return cache[key]
    dp = pmf.to_dense_pmf()
    p = np.asarray(dp._probs, dtype=np.float64)
    out = dp, p, (np.arange(p.size) + dp._lower_loss) * dp._discretization
    if cache is not None:
        cache[key] = out
    return out


def _delta_bounds(pld, eps: float, ro: _RoundOff | None, extra: float = 0.0,
                  cache: dict | None = None) -> tuple[float, float]:
    r"""Certified (upper, lower) of the exact composed PLD's δ at ``eps`` from the computed PMFs.

    The computed δ is :math:`m_\infty + \sum_b w_b p_b` with :math:`w_b = (1 - e^{\varepsilon - \ell_b})_+`;
    a vector error Δ of 2-norm at most ``ro.vec`` moves it by at most :math:`\|w\|_2 \|Δ\|_2`
    (Cauchy–Schwarz), the infinity mass by ``ro.inf``; ``extra`` is charged on top (truncation).
    ``cache``: a dict kept by the caller while ``pld`` lives (the PMFs' arrays are built once).
    """
    ups, los = [], []
    for side, pmf in _distinct(pld).items():
        dp, p, loss = _pmf_arrays(pmf, cache)
        sel = loss > eps
        w = -np.expm1(eps - loss[sel])
        terms = p[sel] * w
        val = float(dp._infinity_mass) + float(np.sum(terms))
        mabs = float(np.sum(np.abs(p[sel])))
        vec = 0.0 if ro is None else ro.vec[side] * _norm2(w)
        err = ((_gamma(math.ceil(math.log2(max(p.size, 2))) + 2) + 4 * _U) * (float(np.sum(np.abs(terms)))
               + float(dp._infinity_mass))
               + _U * (abs(eps) + float(np.max(np.abs(loss), initial=0.0))) * mabs
               + vec + (0.0 if ro is None else ro.inf[side]) + extra)
        ups.append(val + err)
        los.append(val - err)
    return max(ups), max(los)


def _eps_for_delta(pld, delta: float, cache: dict | None = None) -> float:
    """Smallest ε whose computed δ(ε) of the composed PLD is <= ``delta`` (both directions), vectorised.

    The same piecewise formula as ``dp_accounting``'s ``get_epsilon_for_delta`` without its Python
    loop; only a proposal, which :func:`_certified_epsilon` verifies with certified bounds.  ``cache``: as
    :func:`_delta_bounds` (the tail sums are built once).
    """
    out = 0.0
    for pmf in _distinct(pld).values():
        dp, p, loss = _pmf_arrays(pmf, cache)
        m_inf = float(dp._infinity_mass)
        if m_inf > delta:
            return math.inf
        key = ("tails", id(pmf))
        if cache is not None and key in cache:
            loss, mu, ml = cache[key]
        else:
            p, loss = p[::-1], loss[::-1]
            mu = m_inf + np.concatenate([[0.0], np.cumsum(p)])            # mass strictly above bin j
            ml = np.concatenate([[0.0], np.cumsum(p * np.exp(-loss))])
            if cache is not None:
                cache[key] = loss, mu, ml
        with np.errstate(divide="ignore", invalid="ignore"):
            cand = np.log((mu - delta) / ml)
        ok = (mu[:-1] > delta) & (ml[:-1] > 0) & (cand[:-1] >= loss)
        j = int(np.argmax(ok)) if ok.any() else -1
        if j >= 0:
            e = float(cand[j])
        elif mu[-1] <= ml[-1] + delta:
            e = 0.0
        else:
            e = float(cand[-1])
        out = max(out, e if math.isfinite(e) else 0.0)
    return out


def _certified_epsilon(pld, delta: float, ro: _RoundOff, extra: float, d: float, side: str) -> float:
    """Upper (``side="upper"``) or lower ε(δ) of the exact composed PLD, verified with :func:`_delta_bounds`.

    ``dp_accounting``'s inverse proposes ε; the returned value is one at which the certified bound
    was evaluated and holds (upper: δ(ε) <= ``delta``; lower: δ(ε) > ``delta``, and δ is
    non-increasing, so no smaller ε reaches ``delta``).
    """
    sign = 1.0 if side == "upper" else -1.0
    cache: dict = {}         # the PMFs' arrays, built once for every evaluation below
    e = _eps_for_delta(pld, min(delta, 1.0), cache)
    for _ in range(4):       # aim at delta -/+ the charge at the current ε
        if not math.isfinite(e):
            return math.inf if side == "upper" else 0.0
        up, lo = _delta_bounds(pld, e, ro, extra, cache)
        if (up <= delta) if side == "upper" else (lo > delta or e <= 0.0):
            return max(e, 0.0)
        val = _delta_bounds(pld, e, None, cache=cache)[0]
        target = delta - (up - val) * (1 + 1e-9) if side == "upper" else delta + (val - lo) * (1 + 1e-9)
        if not 0.0 < target < 1.0:
            return math.inf if side == "upper" else 0.0
        nxt = _eps_for_delta(pld, target, cache)
        e = max(e, nxt) if side == "upper" else min(e, nxt)
    step = 1e-3 * d
    for _ in range(80):      # then step to the conservative side until the bound holds
        if not math.isfinite(e):
            return math.inf if side == "upper" else 0.0
        up, lo = _delta_bounds(pld, e, ro, extra, cache)
        if (up <= delta) if side == "upper" else (lo > delta or e <= 0.0):
            return max(e, 0.0)
        e, step = e + sign * step, 2 * step
    return math.inf if side == "upper" else 0.0


def _compose_all(parts, extra=(), composed=None):
    """Compose [(pld, R), ...] and extra PLDs with dp_accounting.

    ``composed``: for each part None, or ``(pld composed R times, 1, its round-off)`` as this function returned
    it for that part alone (used instead of composing the part again: the same objects).

    Returns (pld, number of self_compose, :class:`_RoundOff` of the composition's floating point).
    """
    _check_composition(parts)
    total, calls, ro = None, 0, _RoundOff()
    for (pld, R), done in zip(parts, composed or [None] * len(parts)):
        part = _RoundOff()
        if R > 1 and done is not None:
            pld, part = done[0], copy.deepcopy(done[2])
            calls += 1
        elif R > 1:
            out = pld.self_compose(R, tail_mass_truncation=TAIL_MASS_TRUNCATION)
            _track_self_compose(part, pld, R, out)
            pld = out
            calls += 1
        if total is None:
            total, ro = pld, part
        else:
            nxt = total.compose(pld, tail_mass_truncation=TAIL_MASS_TRUNCATION)
            _track_compose(ro, total, part, pld, nxt)
            total = nxt
    for pld in extra:
        try:
            nxt = total.compose(pld, tail_mass_truncation=TAIL_MASS_TRUNCATION)
        except ValueError as exc:
            raise ParameterError("extra_plds", f"cannot be composed with the shuffled rounds ({exc}); build them "
                                 "with the same value_discretization_interval and pessimistic_estimate=True") from exc
        _track_compose(ro, total, _RoundOff(), pld, nxt)
        total = nxt
    return total, calls, ro


def compose_rounds(rounds, *, epsilon: float | None = None, delta: float | None = None, extra_plds=(),
                   value_discretization_interval: float | None = None, points: int = DEFAULT_POINTS,
                   tail_delta: float = DEFAULT_TAIL_DELTA, lower: bool = True,
                   neighboring_relation=None, max_seconds: float = DEFAULT_MAX_SECONDS, max_memory_gb: float = DEFAULT_MAX_MEMORY_GB) -> AccountingResult:
    r"""Certified total (ε or δ) over repeated shuffled rounds, composed by ``dp_accounting``.

    Each round type is exported by :func:`to_pld` (pessimistic; binary randomized response
    from its exact count-law profile, the maximum over every dataset), self-composed R times and
    composed with the others and with ``extra_plds`` through ``dp_accounting``'s
    ``self_compose`` / ``compose``; the composition's floating-point round-off is charged to δ
    (module docstring, argument H).  The lower bound composes, with optimistic rounding, the
    privacy-loss buckets of the whole concrete Theorem-14 pair of every round type (argument G;
    binary RR: its exact count pair, argument E; populations: argument F), or falls back to the
    single-round certified lower bound.  ``ratio`` and ``limited_by`` of the result say how
    tight the bracket is and what limits it.

    An (ε0, δ0)-LDP class (:class:`shuffleamp.ApproximateLDP`) composes as the pointwise minimum over the users
    kept of its reduction's clone pairs with infinite-loss atoms, or that pair with all n users kept where it
    gives the smaller total at the target (argument I); its lower bound composes concrete members of the class
    (k-RR at :math:`\varepsilon_1`, the randomizer revealing its input with probability δ0).

    Parameters
    ----------
    rounds : sequence of (mechanism, n, R)
        Round types: a shuffleamp mechanism, the number of users n (>= 1) and the number of
        rounds R (integer >= 1) in which one user takes part.  A single tuple is accepted.
    epsilon : float, optional
        Target total ε (nats, >= 0): the answer is the total δ.  Give exactly one of
        ``epsilon`` and ``delta``.
    delta : float, optional
        Target total δ in (0, 1): the answer is the total ε.
    extra_plds : sequence of PrivacyLossDistribution or dp_accounting.DpEvent
        Further mechanisms the same user takes part in, composed with the rounds; they need
        ``value_discretization_interval`` (a PLD's must equal it).  A ``DpEvent`` (Gaussian,
        randomized response, Poisson-subsampled Gaussian, ...; see
        :class:`shuffleamp.interop.PLDAccountant`) is built under replace-one and enters the upper
        bound with its pessimistic PLD and the lower bound with its optimistic one.  A PLD enters
        the upper bound only (leaving it out keeps the lower bound valid) and must be a
        pessimistic **replace-one** PLD: ``dp_accounting`` does not record the relation, so give
        ``neighboring_relation`` (PLDs from :func:`to_pld` record it).
    value_discretization_interval : float, optional
        Common grid step; default the coarsest own scale of the round types (see :func:`to_pld`).
    points, tail_delta
        See :func:`to_pld`.  At a ``delta`` target a Gaussian round type's grid ends at the larger of ``tail_delta``
        and 1e-3 δ over the total number of rounds (module docstring, argument J (e)).
    lower : bool
        Compute the lower bound (default True); if False, ``lower`` is 0.
    neighboring_relation : dp_accounting.NeighboringRelation or str, optional
        The relation the PLDs in ``extra_plds`` were built under.  Only ``REPLACE_ONE``
        (``"replace_one"``) is accepted: shuffle bounds, and so every number here, are for
        replace-one neighbours.
    max_seconds : float
        Time budget of the whole call in seconds (default 10, as :func:`shuffleamp.epsilon`; ``inf`` for none).
        Work estimated to exceed it is refused up front, and work still running when it is spent is stopped,
        with ResourceLimitError whose message names ``max_seconds``; raise it for large totals or a loaded machine.
    max_memory_gb : float
        Working-memory budget in GiB (default 2): work whose estimated memory exceeds it is refused before
        allocating (ResourceLimitError naming ``max_memory_gb``).

    Returns
    -------
    AccountingResult
        ``quantity="epsilon"`` when ``delta`` is given, ``"delta"`` when ``epsilon`` is given.  At a target
        δ at most :data:`TAIL_MASS_FACTOR` times the grid's tail mass (sum of R x ``tail_delta``), or where the
        composed PLD gives no finite ε, the total is certified by composition theorems instead
        (:func:`_theorem_total`: the composed local Gaussian mechanisms, basic or advanced composition; looser,
        named in ``limited_by``), never an infinite ε.

    Raises
    ------
    ParameterError
        ``rounds`` malformed, R < 1 or not an integer (parameter ``'rounds'``), bad ``n``,
        ``delta`` outside (0, 1), ``epsilon`` < 0, both or neither target given, ``delta`` at most
        :math:`1 - \prod (1-\delta_0)^R` over (ε0, δ0)-LDP round types (no finite ε: a member reveals its input
        with probability δ0 in every round), ``extra_plds``
        without ``value_discretization_interval`` or with another interval; a PLD in
        ``extra_plds`` whose relation is unknown, not replace-one, or differs from another's, or
        an event that cannot be accounted under replace-one (parameter ``'extra_plds'``).
    ResourceLimitError
        The grid would be too large (parameter ``value_discretization_interval``), or a composition's
        result would exceed ``max_seconds`` or ``max_memory_gb`` (parameter ``rounds``; the cost model
        of :func:`shuffleamp._numerics.check_pld_points`), refused before it is computed; a Gaussian round type
        whose estimated CPU time (:func:`_gaussian_round_seconds`) exceeds ``max_seconds``, refused before any
        profile point (parameter ``max_seconds``; its message says what else to change); or the call has spent
        ``max_seconds`` (parameter ``max_seconds``).
        The composed PLD gives no finite ε at ``delta`` and no composition theorem applies (an (ε0, δ0)-LDP
        round type; parameter ``tail_delta``).

    References
    ----------
    Su, Cheng, Wang, IEEE S&P 2026, Theorems 12–14; Doroshenko et al., PETS 2022; Dong, Roth,
    Su, JRSS-B 2022, Theorem 3.2 (composition of dominating pairs).
    """
    rounds = _validate_rounds(rounds)
    epsilon, delta = _one_target(epsilon, delta)
    points, tail_delta = _grid_options(points, tail_delta)
    max_seconds, max_memory_gb = _validate.budget_limits(max_seconds, max_memory_gb)
    # the whole call, up-front estimates included, runs within the budget (evaluations checked in chunks)
    with _at_n_budget([m for m, _, _ in rounds], max_seconds, max_memory_gb), _reuse.call_scope():
        return _compose_rounds(rounds, epsilon, delta, extra_plds, value_discretization_interval, points, tail_delta,
                               lower, neighboring_relation)


def _compose_rounds(rounds, epsilon, delta, extra_plds, value_discretization_interval, points, tail_delta, lower,
                    neighboring_relation) -> AccountingResult:
    """:func:`compose_rounds` on validated rounds and targets, within the budget its caller installed."""
    refuse_if_costly(f"{len(rounds)} round types", "rounds",
                     seconds=sum(_round_type_seconds(m, n) for m, n, _ in rounds) * (1.0 if lower else 0.5),
                     hint="use fewer round types, or populations with fewer groups")
    extras = _extras.Extras.check(extra_plds, neighboring_relation)
    if extras and value_discretization_interval is None:
        raise ParameterError("value_discretization_interval",
                             "must be given with extra_plds (the interval they were built with)")
    # (eps0, delta0)-LDP classes: a member may reveal its input with probability delta0 in every round
    revealed = -math.expm1(sum(R * math.log1p(-_reveal_probability(m)) for m, _, R in rounds))
    if delta is not None and revealed > 0 and delta <= revealed:
        raise ParameterError("delta", f"delta = {delta:g} is not above 1 - prod (1 - delta0)^R = {revealed:.6g}: an "
                                      "(eps0, delta0)-LDP randomizer may reveal its input with probability delta0 in "
                                      "every round, so no finite epsilon holds")
    shared = max(1, sum(1 for m, _, _ in rounds if _approx_class(m) is not None and m.delta0 > 0))
    tail_mass = sum(R for _, _, R in rounds) * tail_delta
    if delta is not None and not extras and delta <= TAIL_MASS_FACTOR * tail_mass:
        # the composed PLD's infinity mass would be about delta or more: the composition theorems answer
        found = _theorem_result(rounds, delta, tail_delta, f"delta = {delta:g} is at most the composition's tail "
                                                           f"mass {tail_mass:.3g} (sum of R x tail_delta) x "
                                                           f"{TAIL_MASS_FACTOR:g}")
        if found is not None:
            return found
    # a Gaussian round type's grid ends where its profile is below a small share of the target δ (argument J)
    gauss_tail = (tail_delta if delta is None or extras else
                  max(tail_delta, GAUSSIAN_TAIL_SHARE * delta / sum(R for _, _, R in rounds)))
    _refuse_gaussian_rounds(rounds, gauss_tail, points, lower)
    rts = [_approx_round(m, n, R, tail_delta, points, value_discretization_interval, epsilon,
                         None if delta is None else delta / shared)
           if _approx_class(m) is not None and m.delta0 > 0 else
           _Round.make(m, n, gauss_tail if _gaussian_stand_in(m) is not None else tail_delta)
           for m, n, R in rounds]
    d = _interval(value_discretization_interval, rts, points)
    _check_grid(rts, d, lower)
    up_parts = [(_upper_pld(rt, d, points), R) for rt, (_, _, R) in zip(rts, rounds)]
    _check_composition(up_parts, lower=lower)
    up_pld, _, ro = _compose_all(up_parts, extras.upper_plds(d))
    if delta is not None:
        upper = _certified_epsilon(up_pld, delta, ro, 0.0, d, "upper")
        e_at = upper
        if not math.isfinite(upper):
            # the composed PLD's infinity mass and round-off exceed delta: the composition theorems, or a refusal
            found = None if extras else _theorem_result(
                rounds, delta, tail_delta, "the composed privacy-loss distribution's infinity mass and round-off "
                                           "exceed delta")
            if found is not None:
                return found
            raise ResourceLimitError(
                f"the composed privacy-loss distribution's infinity mass and round-off exceed delta = {delta:g}, so "
                f"it gives no finite epsilon; lower tail_delta (now {tail_delta:g}; more work) or raise delta",
                parameter="tail_delta")
    else:
        upper = min(_delta_bounds(up_pld, epsilon, ro)[0], 1.0)
        e_at = epsilon
    # the round-off charge at the answer (reported; the bound above includes it)
    charge = (_delta_bounds(up_pld, e_at, ro)[0] - _delta_bounds(up_pld, e_at, None)[0]
              if math.isfinite(e_at) else 0.0)
    singles = None
    if len(rounds) == 1 and rounds[0][2] == 1 and not extras and (
            _gaussian_stand_in(rounds[0][0]) is not None or
            (_is_population(rounds[0][0]) and rounds[0][0].kind in ("gaussian", "approx", "mixed"))):
        # one round of the Gaussian randomizer or of a Gaussian or (eps0, delta0)-LDP population: the total is the
        # single round, whose certified bracket at the target (its own ladder of truncations, argument J; the
        # population's candidates, argument F) is an answer too
        singles = [_single_round(rounds[0][0], rounds[0][1], epsilon, delta)]
        upper = min(upper, float(singles[0].upper))
    lo, how, err, per_round = (_total_lower(rts, rounds, d, points, epsilon, delta, extras,
                                            fixed=value_discretization_interval is not None, singles=singles)
                               if lower else (0.0, "none", 0.0, None))
    notes = ("upper: certified single-round profile -> pessimistic connect-the-dots PLD -> dp_accounting "
             f"composition; floating-point round-off of the composition {charge:.3g} charged to delta",
             f"lower: {how}; dp_accounting truncation and round-off {err:.3g} in delta subtracted")
    approx = [i for i, (m, _, _) in enumerate(rounds) if _approx_class(m) is not None]
    notes += tuple(f"upper: Gaussian round type {i + 1}: at every eps the minimum of the local Gaussian profile and "
                   f"{len(rt.fams[0].rungs)} truncations of charge 1e-2 .. {rt.fams[0].rungs[-1][1]:.2g} (argument J)"
                   for i, rt in enumerate(rts) if rt.fams and isinstance(rt.fams[0], _GaussianFamily))
    notes += tuple(f"upper: (eps0, delta0)-LDP round type {i + 1}: "
                   + ("the minimum over m = n, n/2, ..., 1 users kept of the reduction's clone pairs with "
                      "infinite-loss atoms" if isinstance(rts[i].fams[0], _ApproxFamily) else
                      "the reduction's clone pair with all n users kept and infinite-loss atoms")
                   + f" (infinity mass {rts[i].inf_mass:.3g} per round)" for i in approx)
    method = ("exact count-law profile, pessimistic connect-the-dots PLD (dp_accounting)"
              if all(rt.binary_eps0 is not None for rt in rts)
              else "optimal blanket pair, pessimistic connect-the-dots PLD (dp_accounting)")
    if approx:
        method += "; (eps0, delta0)-LDP rounds: the reduction's clone pairs with infinite-loss atoms"
    lo = min(lo, upper)
    limit = _limit(upper, lo, how, per_round, d)
    if any(rounds[i][0].delta0 > 0 for i in approx) and limit.startswith("discretisation"):
        limit = ("the (eps0, delta0)-LDP reduction (upper: its clone pairs keep m users at an infinity mass "
                 "min(m, domain-1) delta0 per round)")
    return AccountingResult("epsilon" if delta is not None else "delta", upper, lo, epsilon, delta,
                            tuple((m.describe(), n, R) for m, n, R in rounds), method, how, d, err,
                            notes, charge, limit)


#: :func:`compose_rounds` at a target δ goes straight to the composition theorems (:func:`_theorem_total`) when
#: δ is at most this many times the composition's grid tail mass (sum of R x ``tail_delta``): the composed PLD's
#: infinity mass would exceed δ there (an infinite ε).
TAIL_MASS_FACTOR = 2.0


def _pure_eps0(m) -> float | None:
    """ε0 of a round type whose every user is pure ε0-LDP (a population: its largest ε0), else None (the Gaussian
    randomizer, (ε0, δ0)-LDP classes)."""
    if _gaussian_stand_in(m) is not None or _approx_class(m) is not None or getattr(m, "delta0", 0.0):
        return None
    if _is_population(m):
        if getattr(m, "kind", None) in ("gaussian", "approx", "approx-uncharged"):
            return None
        if getattr(m, "kind", None) == "mixed":
            eps = [_pure_eps0(part) for part, _ in m.parts]
            return None if any(e is None for e in eps) else max(eps)
        eps = [_pure_eps0(gr.mechanism) for gr in m.groups]
        return None if any(e is None for e in eps) else max(eps)
    eps0 = float(getattr(m, "eps0", math.inf))
    return eps0 if math.isfinite(eps0) and eps0 > 0 else None


def _theorem_total(rounds, delta: float):
    r"""Certified total ε at δ by composition theorems, without a privacy-loss distribution; (ε, how) or None.

    Each shuffled round is a post-processing of the users' reports, so one user's rounds are at least as private
    as that user's local randomizers composed:

    * Gaussian round types: the composition of Gaussian mechanisms of :math:`\mu_i = \Delta/\sigma` is the
      Gaussian mechanism of :math:`\mu = (\sum_i R_i\mu_i^2)^{1/2}` (Dong, Roth, Su, JRSS-B 2022, Corollary
      3.3), whose exact ε(δ) is Balle–Wang's (ICML 2018, Theorem 8);
    * pure ε0-LDP round types: :math:`\sum_i R_iarepsilon_{0,i}` (basic composition), or, with all of δ,
      :math:`\sqrt{2\ln(1/\delta)\sum_i R_iarepsilon_{0,i}^2} + \sum_i R_iarepsilon_{0,i}(e^{arepsilon_{0,i}}
      - 1)` (Dwork, Rothblum, Vadhan, FOCS 2010, Theorem III.3) when there is no Gaussian round type;
    * both: the sum of the two parts (basic composition of an (ε1, 0)- and an (ε2, δ)-DP mechanism);
    * without Gaussian round types, also the shuffled rounds' own certified single-round bounds
      :math:`(\varepsilon_i, \delta_i)` at :math:`\delta_i = \delta / (2\sum_i R_i)` composed by the same
      advanced composition with :math:`\delta' = \delta/2` (Dwork, Rothblum, Vadhan, Theorem III.3:
      :math:`(\varepsilon', \delta' + \sum_i R_i\delta_i)`), when it is smaller.

    Any other round type (an (ε0, δ0)-LDP class) gives None.
    """
    mu2, pure, pure2, drift = 0.0, 0.0, 0.0, 0.0
    for m, _, R in rounds:
        at = _gaussian_stand_in(m)
        if at is not None:
            mu2 += R * float(at.mu) ** 2
            continue
        e0 = _pure_eps0(m)
        if e0 is None:
            return None
        pure, pure2, drift = pure + R * e0, pure2 + R * e0 * e0, drift + R * e0 * math.expm1(e0)
    if mu2 > 0.0:
        from .gaussian import _local_epsilon
        total = pure + _local_epsilon(math.sqrt(mu2), delta)
        how = ("composition theorems: the local Gaussian mechanisms composed (mu = sqrt(sum R mu^2))"
               + (" plus R x eps0 of the pure rounds (basic composition)" if pure > 0 else ""))
        return float(np.nextafter(total, np.inf)), how
    best = (pure, "composition theorems: basic composition (sum of R x eps0)")
    advanced = math.sqrt(2.0 * math.log(1.0 / delta) * pure2) + drift
    if advanced < best[0]:
        best = (float(np.nextafter(advanced, np.inf)), "composition theorems: advanced composition of the local eps0")
    d_round = 0.5 * delta / sum(R for _, _, R in rounds)
    try:
        eps = [float(_single_round(m, n, None, d_round).upper) for m, n, _ in rounds]
    except ResourceLimitError:
        return best
    sq = sum(R * e * e for (_, _, R), e in zip(rounds, eps))
    shuffled = math.sqrt(2.0 * math.log(2.0 / delta) * sq) + sum(R * e * math.expm1(e) for (_, _, R), e in zip(rounds, eps))
    if shuffled < best[0]:
        best = (float(np.nextafter(shuffled * (1 + 1e-12), np.inf)),
                f"composition theorems: advanced composition of the shuffled rounds' certified eps at delta = "
                f"{d_round:.3g} each")
    return best


def _theorem_result(rounds, delta: float, tail_delta: float, why: str):
    """:class:`AccountingResult` of :func:`_theorem_total` (None if it does not apply); its lower bound is the largest
    single round's certified lower ε at δ (one round of R is a post-processing of the total)."""
    found = _theorem_total(rounds, delta)
    if found is None:
        return None
    upper, how = found
    lower, lower_how = 0.0, "none"
    for m, n, _ in rounds:
        try:
            lo = float(_single_round(m, n, None, delta).lower or 0.0)
        except ResourceLimitError:
            continue
        if lo > lower:
            lower, lower_how = lo, "single-round (largest single-round lower bound)"
    lower = min(lower, upper)
    notes = (f"upper: {how}; {why}", f"lower: {lower_how}")
    return AccountingResult("epsilon", upper, lower, None, delta, tuple((m.describe(), n, R) for m, n, R in rounds),
                            how, lower_how, math.nan, 0.0, notes, 0.0,
                            f"composition theorems (no privacy-loss distribution: {why})")


def _limit(upper, lower, how, per_round, d) -> str:
    """What limits the bracket upper / lower of a total (``AccountingResult.limited_by``)."""
    if how == "none":
        return "lower bound not computed"
    if how == "single-round":
        return "lower bound: no concrete pair composed (largest single-round lower bound)"
    gap = upper / lower - 1.0 if lower > 0 else math.inf
    name, pr = per_round if per_round is not None else ("", 0.0)
    if pr >= 0.5 * gap:
        return f"per-round brackets (widest: {name}, {pr:.2%})"
    return f"discretisation of the composition (grid step {d:.3g})"


def _single_round(m, n: int, epsilon, delta):
    """The single round's certified bracket at the total's target (:func:`shuffleamp.bounds.epsilon` at δ or
    :func:`shuffleamp.bounds.delta` at ε); the Gaussian randomizer's accountant stand-in is evaluated as the
    randomizer itself (its ladder of truncations and its quantised pairs searched at the target)."""
    from .bounds import delta as _delta_bound
    from .bounds import epsilon as _epsilon_bound
    at = _gaussian_stand_in(m)
    if at is not None:
        from .gaussian import Gaussian
        m = Gaussian(sigma=at.sigma, sensitivity=at.sensitivity)
    return _epsilon_bound(m, n, delta) if delta is not None else _delta_bound(m, n, epsilon)


def _finer_lower(pts_list, R: int, d_lo: float, scale: float, keep: float, epsilon, delta):
    """The Gaussian round's best quantised pairs composed R times (argument G) on the grid ``d_lo`` halved while the
    step is above GAUSSIAN_LOWER_KL_FRACTION of the loss's mean scale²/2 (rounding every loss down by up to one
    step costs about half a step per round, against a mean loss of that order), at most GAUSSIAN_LOWER_REFINE
    times, and while the composed PMF stays within GAUSSIAN_LOWER_MAX_POINTS; the tails beyond mass ``keep`` cut
    (:func:`_trim_tails`).  Returns ``[(value, (total, calls, roundoff)), ...]``."""
    r = 1
    while r < GAUSSIAN_LOWER_REFINE and d_lo / r > GAUSSIAN_LOWER_KL_FRACTION * 0.5 * scale * scale:
        r *= 2
    while True:
        d_f = d_lo / r
        plds = [_points_pld(pts, d_f, keep=keep) for pts in pts_list]
        size = max(_pmf_points(pm, R) for pld in plds for pm in (pld._pmf_remove, pld._pmf_add))
        if r == 1 or size <= GAUSSIAN_LOWER_MAX_POINTS:
            break
        r //= 2
    if size > GAUSSIAN_LOWER_MAX_POINTS / len(plds):
        plds = plds[:1]                                # a long composition: the best pair only
    out = []
    for pld in plds:
        check_time("the Gaussian round's composed lower bound")
        tot, calls, ro = _compose_all([(pld, R)])
        out.append((_lower_value(tot, ro, 2.0 * TAIL_MASS_TRUNCATION * calls, d_f, epsilon, delta),
                    (tot, calls, ro)))
    return out


def _total_lower(rts, rounds, d, points, epsilon, delta, extras=None, fixed=True, singles=None):
    """(lower value, lower_method, charged δ, (name, bracket) of the widest single round) of the total
    (module docstring, arguments E, G and H); the optimistic PLDs of ``extras`` given as events join the
    composition (:mod:`shuffleamp._extras`).  ``singles``: the single rounds' brackets (:func:`_single_round`) if
    already computed."""
    single, per_round = 0.0, ("", 0.0)
    if singles is None:
        singles = [_single_round(m, n, epsilon, delta) for m, n, _ in rounds]
    for (m, n, _), r in zip(rounds, singles):
        single = max(single, float(r.lower or 0.0))
        lo1 = float(r.lower or 0.0)
        gap1 = float(r.upper) / lo1 - 1.0 if lo1 > 0 else math.inf
        if gap1 >= per_round[1]:
            per_round = (m.describe().get("mechanism", "round") if hasattr(m, "describe") else "round", gap1)
    # the lower grid: d / LOWER_REFINE, finer (up to MIXED_REFINE times) when a round type's own scale
    # is finer than the common step (its losses are rounded down by up to one step every round).  Without a
    # given step, d is the coarsest of the concrete pairs' own steps (the upper's, except for (ε0, δ0)-LDP
    # classes, whose upper pair keeps fewer users than their concrete pairs have)
    if not fixed:
        d = max(_lower_interval(rt, points) for rt in rts)
    finest = min((_lower_interval(rt, points) for rt in rts if rt.edge > 0), default=d)
    d_lo = d / LOWER_REFINE / min(MIXED_REFINE, 2 ** max(0, math.ceil(math.log2(d / finest))))
    parts, labels, alone, gauss = [], [], None, None
    composed = []                 # the chosen pair's R-fold composition from the scoring, reused below
    for rt, (_, _, R), r1 in zip(rts, rounds, singles):
        coarse, chosen = None, None
        if _gaussian_stand_in(rt.mechanism) is not None:
            # the quantised pairs placed at the single round's lower ε (a δ target), ranked on a coarse ε grid; the
            # best ones again on the full grid below
            e1 = float(r1.lower or 0.0) if delta is not None else None
            coarse = _gaussian_lower_points(rt, e1, coarse=True)
            keep = GAUSSIAN_LOWER_KEEP * (delta if delta is not None else TAIL_MASS_TRUNCATION) / R
            cands = [(_points_pld(pts, d_lo, keep=keep), LABEL_BUCKETS) for _, pts in coarse]
        else:
            cands = _lower_plds(rt, d, points, d_lo)
        if not cands:
            return single, "single-round", 0.0, per_round
        if len(cands) > 1:            # the best concrete pair of this round type on its own
            scored = []
            for i, (pld, label) in enumerate(cands):
                tot, calls, ro = _compose_all([(pld, R)])
                scored.append((_lower_value(tot, ro, 2.0 * TAIL_MASS_TRUNCATION * calls, d, epsilon, delta),
                               i, pld, label, (tot, calls, ro)))
            scored.sort(key=lambda t: t[0], reverse=True)
            _, _, pld, label, alone = scored[0]
            chosen = (pld, alone)
            if coarse is not None:
                coarse = [coarse[t[1]] for t in scored[:GAUSSIAN_LOWER_FINE_CANDIDATES]]
            cands = [(pld, label)]
        if coarse is not None:
            from .gaussian import loss_scale
            full = [pts for _, pts in _gaussian_lower_points(rt, None, decs=[dec for dec, _ in coarse])]
            if full:
                gauss = (full, R, loss_scale(rt.mechanism.mu, rt.n, upper=False), keep)
                cands = [(_points_pld(full[0], d_lo, keep=keep), LABEL_BUCKETS)]     # the best one on the full grid
        parts.append((cands[0][0], R))
        labels.append(cands[0][1])
        composed.append(chosen[1] if chosen is not None and chosen[0] is cands[0][0] else None)
    # the extra events' optimistic PLD on the same lower grid d_lo = d / (an integer refinement)
    extra_pld, extra_err, left_out = (extras.lower_part(d, int(round(d / d_lo))) if extras
                                      else (None, 0.0, ()))
    if len(parts) == 1 and extra_pld is None and alone is not None:
        total, calls, ro = alone      # one round type: its best pair's composition is the total
    else:
        total, calls, ro = _compose_all(parts, [extra_pld] if extra_pld is not None else (), composed)
    trunc = 2.0 * TAIL_MASS_TRUNCATION * (calls + (extra_pld is not None)) + extra_err
    value = _lower_value(total, ro, trunc, d, epsilon, delta)
    if len(parts) == 1 and extra_pld is None and gauss is not None:
        # one Gaussian round type: its best pairs on the full ε grid and a finer loss grid (each a lower bound)
        pts_full, R1, scale, keep = gauss
        for v, comp in _finer_lower(pts_full, R1, d_lo, scale, keep, epsilon, delta):
            if v > value:
                value, (total, calls, ro) = v, comp
                trunc = 2.0 * TAIL_MASS_TRUNCATION * calls
    e_at = value if delta is not None else epsilon
    err = trunc + _delta_bounds(total, e_at, ro)[0] - _delta_bounds(total, e_at, None)[0]
    if extra_pld is not None:   # the extras alone bound the total too (composition never decreases it)
        value = max(value, _extras.lower_epsilon(extra_pld, extra_err, delta) if delta is not None
                    else _extras.lower_delta(extra_pld, extra_err, epsilon))
    how = labels[0] if len(set(labels)) == 1 else "; ".join(sorted(set(labels)))
    how += " + optimistic PLDs of the extra events" if extra_pld is not None else ""
    how += f" ({len(left_out)} extra part(s) left out)" if left_out else ""
    if single > value:
        return single, "single-round", err, per_round
    return value, how, err, per_round


def _lower_value(total, ro, trunc, d, epsilon, delta):
    """Certified lower value of an optimistic composed PLD: its round-off ``ro`` and the truncation
    ``trunc`` (δ) charged."""
    if delta is not None:
        return _certified_epsilon(total, delta, ro, trunc, d, "lower")
    return max(_delta_bounds(total, epsilon, ro, trunc)[1], 0.0)


# ---------------------------------------------------------------------------- inverse queries
def max_rounds(mechanism, n, epsilon: float, delta: float, *, limit: int = 10**6,
               value_discretization_interval: float | None = None, points: int = DEFAULT_POINTS,
               max_seconds: float = DEFAULT_MAX_SECONDS, max_memory_gb: float = DEFAULT_MAX_MEMORY_GB) -> int:
    r"""Largest number of rounds R whose certified total fits the budget (ε, δ).

    Parameters
    ----------
    mechanism : Mechanism
        A shuffleamp mechanism.
    n : int
        Number of users per round (>= 1).
    epsilon : float
        Total ε budget (nats, > 0).
    delta : float
        Total δ budget in (0, 1).
    limit : int
        Largest R searched (>= 1); returned if it fits.
    value_discretization_interval, points
        See :func:`to_pld`.
    max_seconds : float
        Time budget of the whole search (its to_pld and every composition) in seconds (default 10, as :func:`shuffleamp.epsilon`; ``inf`` for
        none).  Work estimated to exceed it is refused up front, and work still running when it is spent is
        stopped, with ResourceLimitError whose message names ``max_seconds``.
    max_memory_gb : float
        Working-memory budget in GiB (default 2): work whose estimated memory exceeds it is refused before
        allocating (ResourceLimitError naming ``max_memory_gb``).

    Returns
    -------
    int
        R >= 0 such that the composed pessimistic PLD of R rounds has ε(δ) <= ``epsilon``
        (evaluated at R itself, so certified without assuming monotonicity), and R + 1 does not
        fit (unless R = ``limit``).  0 if not even one round fits.  Every R <= epsilon / eps0 fits by
        basic composition (each shuffled round of a pure eps0-LDP randomizer is (eps0, 0)-DP), so such
        R are not composed.

    Raises
    ------
    ParameterError
        Bad ``n``, ``epsilon``, ``delta``, ``limit``, ``max_seconds`` or ``max_memory_gb``.
    ResourceLimitError
        The search's compositions would exceed ``max_seconds`` or ``max_memory_gb`` (parameter ``limit``;
        a smaller ``limit`` caps the search), or the search has spent ``max_seconds``.
    """
    _validate.mechanism(mechanism)
    n = _validate.count(n, "n")
    epsilon = _validate.real("epsilon", epsilon, lo=0.0, lo_open=True)
    delta = _validate.delta(delta)
    limit = _validate.count(limit, "limit")
    max_seconds, max_memory_gb = _validate.budget_limits(max_seconds, max_memory_gb)
    # basic composition: each shuffled round of a pure eps0-LDP randomizer is (eps0, 0)-DP (post-processing
    # of the reports), so R rounds are (R eps0, 0)-DP and every R <= epsilon / eps0 fits
    eps0 = float(getattr(mechanism, "eps0", math.inf))
    basic = 0
    if math.isfinite(eps0) and eps0 > 0 and not getattr(mechanism, "delta0", 0.0):
        basic = int(min(math.floor(epsilon / eps0), limit))
        while basic > 0 and basic * eps0 > epsilon:        # R eps0 <= epsilon in floating point too
            basic -= 1
    if basic >= limit:
        return limit
    # to_pld and the search's compositions share one budget (compositions refused naming ``limit``)
    with budget(max_seconds, max_memory_gb):
        pld = to_pld(mechanism, n, value_discretization_interval=value_discretization_interval, points=points,
                     max_seconds=max_seconds, max_memory_gb=max_memory_gb)
        d = float(pld._pmf_remove._discretization)

        def total(R):   # the certified total: round-off of the composition charged (argument H)
            R = int(R)
            if R <= basic:
                return 0.0, None                  # fits by basic composition (certified above)
            check_pld_points(max(_pmf_points(pld._pmf_remove, R), _pmf_points(pld._pmf_add, R)),
                             f"composing {R} rounds while searching for the largest R that fits", "limit")
            p, _, ro = _compose_all([(pld, R)])
            return _certified_epsilon(p, delta, ro, 0.0, d, "upper"), None

        # the total is non-decreasing in R; every returned R was evaluated and fits by itself
        lo = max(1, basic)
        br = inverse_monotone(total, epsilon, lo, min(2 * lo, limit), increasing=True, side="upper",
                              scale="integer", expand=True, limit=limit)
    return int(br.feasible) if br.feasible is not None else 0


def _with_eps0(mechanism, eps0: float):
    """The same mechanism with another ε0 (its ``with_eps0``), or ``mechanism(eps0)`` for a factory."""
    if callable(mechanism) and not hasattr(mechanism, "upper_decompositions"):
        return mechanism(eps0)
    _validate.mechanism(mechanism)
    return mechanism.with_eps0(eps0)


def max_eps0(mechanism, n, rounds: int, epsilon: float, delta: float, *, eps0_max: float = 20.0,
             rel_tol: float = 1e-3, points: int = DEFAULT_POINTS, max_seconds: float = DEFAULT_MAX_SECONDS, max_memory_gb: float = DEFAULT_MAX_MEMORY_GB) -> float:
    r"""Largest per-round ε0 such that R shuffled rounds fit the total budget (ε, δ).

    Bisection on log ε0; the returned ε0 is one at which the certified total upper bound was
    evaluated and fits (conservative end of the final bracket).

    Parameters
    ----------
    mechanism : Mechanism or callable
        A mechanism whose kind is kept (its ε0 is ignored), or a factory ``eps0 -> Mechanism``.
    n : int
        Number of users per round (>= 1).
    rounds : int
        Number of rounds R (integer >= 1).
    epsilon : float
        Total ε budget (nats, > 0).
    delta : float
        Total δ budget in (0, 1).
    eps0_max : float
        Search ceiling (nats); returned if it fits.
    rel_tol : float
        Relative width of the final bracket.
    points : int
        See :func:`to_pld`.
    max_seconds, max_memory_gb : float
        The budget of each total evaluated by the search (:func:`compose_rounds`; default 10 s, 2 GiB).

    Returns
    -------
    float
        The largest evaluated fitting ε0, or 0.0 if none down to 1e-6 fits.

    Raises
    ------
    ParameterError
        Bad parameters, or a mechanism whose ε0 cannot be varied (matrix, compositions).
    """
    n = _validate.count(n, "n")
    R = _validate.count(rounds, "rounds")
    epsilon = _validate.real("epsilon", epsilon, lo=0.0, lo_open=True)
    delta = _validate.delta(delta)
    eps0_max = _validate.real("eps0_max", eps0_max, lo=0.0, lo_open=True)
    rel_tol = _validate.real("rel_tol", rel_tol, lo=1e-9, hi=0.5)
    max_seconds, max_memory_gb = _validate.budget_limits(max_seconds, max_memory_gb)

    def total(e0):
        r = compose_rounds([(_with_eps0(mechanism, e0), n, R)], delta=delta, points=points, lower=False,
                           max_seconds=max_seconds, max_memory_gb=max_memory_gb)
        return r.upper, None

    # the total is non-decreasing in eps0; the returned eps0 was evaluated and fits by itself
    br = inverse_monotone(total, epsilon, 1e-6, eps0_max, increasing=True, side="upper",
                          rel_tol=rel_tol, scale="log")
    return float(br.feasible) if br.feasible is not None else 0.0


# ---------------------------------------------------------------------------- exact binary RR rounds
def binary_rr_rounds(eps0: float, n, rounds, *, epsilon: float | None = None, delta: float | None = None,
                     value_discretization_interval: float | None = None, points: int = DEFAULT_POINTS,
                     tail_delta: float = DEFAULT_TAIL_DELTA, max_seconds: float = DEFAULT_MAX_SECONDS, max_memory_gb: float = DEFAULT_MAX_MEMORY_GB) -> AccountingResult:
    r"""Total over R shuffled rounds of binary randomized response from its *exact* count-law profile.

    Upper bound: the certified exact single-round profile
    :math:`\delta^*(\varepsilon) = \max` over every neighbouring dataset pair (all ``m``, both
    orderings) of the hockey-stick divergence of the count laws
    (:func:`shuffleamp.exact_count.profile_binary_rr`; near its certified floor the smaller
    decomposition profile, both being upper bounds of the exact profile), exported as a pessimistic
    connect-the-dots PLD (module docstring, argument D) and self-composed R times by
    ``dp_accounting``, its round-off charged (argument H).  This is what :func:`compose_rounds`
    does for ``KRR(eps0, 2)``; the function is kept as its named entry point.  The set of
    pairs is swap-closed, so its pointwise-maximum profile is that of a dominating pair (argument C)
    and the total is a certified upper bound without any assumption about which dataset is used in
    which round; it is tighter than :func:`compose_rounds` with ``KRR(eps0, 2)`` (the decomposition
    profile) wherever the exact profile is below the decomposition profile.

    Lower bound: the R-fold composition of the exact PLD of one concrete pair (the dataset "user 1
    holds 0 or 1, every other user 1", whose count is the whole output; argument E), with
    optimistic rounding.  This is the *exact-pair total*: the exact total if that pair is the worst
    pair in every round.  **Assumption behind calling it exact:** the same pair is worst in every
    round.  When it is not (the worst dataset depends on ε, hence on the round's share of the
    budget), the true total lies between ``lower`` and ``upper``, and both stay certified.

    Parameters
    ----------
    eps0 : float
        Local ε0 of binary randomized response, nats (> 0).
    n : int
        Number of users per round (>= 1).
    rounds : int
        Number of rounds R (>= 1) a user takes part in.
    epsilon, delta : float, optional
        Exactly one: the target total ε (answer: total δ) or the target total δ (answer: total ε).
    value_discretization_interval : float, optional
        PLD grid step d (nats); default ``edge / points`` with ``edge`` the smallest ε whose
        certified profile is <= max(``tail_delta``, the profile's certified floor).
    points : int
        Profile evaluations per side (>= 2).
    tail_delta : float
        Target mass of the infinity atom per round; the certified exact profile has a floor (the
        FFT round-off charge, about 1e-12 at n = 1e8), above which the grid ends instead.
    max_seconds : float
        Time budget of the whole call in seconds (default 10, as :func:`shuffleamp.epsilon`; ``inf`` for
        none).  Work estimated to exceed it is refused up front, and work still running when it is spent is
        stopped, with ResourceLimitError whose message names ``max_seconds``.
    max_memory_gb : float
        Working-memory budget in GiB (default 2): work whose estimated memory exceeds it is refused before
        allocating (ResourceLimitError naming ``max_memory_gb``).

    Returns
    -------
    AccountingResult
        ``method`` names the exact count-law profile; ``lower_method`` the concrete pair.

    Raises
    ------
    ParameterError
        Bad ``eps0``, ``n``, ``rounds``, ``points``, ``tail_delta``; both or neither target given.
    ResourceLimitError
        The count window (names ``n``) or the PLD grid would be too large.

    References
    ----------
    Cheu, Smith, Ullman, Zeber, Zhilyaev, EUROCRYPT 2019 (the count view); Doroshenko et al.,
    PETS 2022 (connect the dots); Dong, Roth, Su, JRSS-B 2022, Theorem 3.2 (composition).
    """
    from .mechanisms import KRR

    eps0 = float(_validate.eps0(eps0))
    n = _validate.count(n, "n")
    R = _validate.count(rounds, "rounds")
    return compose_rounds([(KRR(eps0, 2), n, R)], epsilon=epsilon, delta=delta,
                          value_discretization_interval=value_discretization_interval, points=points,
                          tail_delta=tail_delta, max_seconds=max_seconds, max_memory_gb=max_memory_gb)
