r"""Randomizers beyond pure local DP: the Gaussian randomizer and every (ε0, δ0)-LDP randomizer.

Gaussian randomizer: certified upper bound
------------------------------------------
User inputs lie in an interval of length :math:`\Delta` (``sensitivity``), wlog :math:`[0, \Delta]`, and
each user reports :math:`x + N(0, \sigma^2)`.  Write :math:`\mu = \Delta/\sigma` and work in units of
:math:`\sigma`.  The blanket of Balle, Bell, Gascón, Nissim ("The Privacy Blanket of the Shuffle Model",
CRYPTO 2019) is the lower envelope :math:`m(y) = \inf_{x\in[0,\mu]}\varphi(y-x) = \min(\varphi(y),
\varphi(y-\mu))`, of mass :math:`\gamma = 2\Phi(-\mu/2)`.  With it, every output density decomposes as
:math:`R_x = m + (R_x - m)`, a general-clone decomposition with one component per output point, and
Su, Cheng, Wang (IEEE S&P 2026, arXiv:2504.07414, Theorems 12-13) give, for the pair :math:`(0, \Delta)`,

.. math::

    \delta(\varepsilon) \le \tfrac1n E\Big[\Big(\sum_{i=1}^n G_i\Big)_+\Big],\qquad
    G = \frac{R_0(Y) - e^\varepsilon R_\Delta(Y)}{m(Y)} \text{ w.p. } \gamma \ (Y \sim m/\gamma),
    \quad 0 \text{ w.p. } 1-\gamma .

**The law of G** (derived here).  Put :math:`y = \mu/2 \mp w`, :math:`w \ge 0`.  On the left
(:math:`y < \mu/2`) :math:`m = \varphi(y-\mu)` and :math:`A := R_0/m = e^{\mu w}`, :math:`B := R_\Delta/m = 1`;
on the right :math:`A = 1`, :math:`B = e^{\mu w}`.  Each side carries blanket mass
:math:`\varphi(w + \mu/2)\,dw` and :math:`A\,\varphi(w+\mu/2) = \varphi(w - \mu/2)`.  So G is
:math:`A - e^\varepsilon B` with (A, B) a function of (side, w): the pair's only continuous parameter is
w, and **only one of A, B varies on each side**.

**Certified discretisation (mean-preserving spread).**  Cut :math:`w \in [0, w_K]` into cells
:math:`[w_k, w_{k+1}]`.  In a left cell, A ranges over :math:`[e^{\mu w_k}, e^{\mu w_{k+1}}]` and B = 1;
replace the cell's law of A by the two-point law on the end points with the same mass
:math:`c_k = \Phi(w_{k+1}+\mu/2) - \Phi(w_k+\mu/2)` and the same A-mass
:math:`a_k = \Phi(w_{k+1}-\mu/2) - \Phi(w_k-\mu/2)` (mirror on the right, with B).  Because
:math:`G = A - e^\varepsilon` is affine in A on the left (and :math:`1 - e^\varepsilon B` affine in B on the
right), this is a mean-preserving spread of G **at every ε at once**; the spread law :math:`\bar G`
dominates G in convex order, sums of independent copies keep the order (Shaked, Shanthikumar,
"Stochastic Orders", Springer 2007, Theorem 3.A.12), and :math:`s \mapsto s_+` is convex, so
:math:`E(\sum \bar G_i)_+ \ge E(\sum G_i)_+`.  The spread law is an ordinary finite decomposition
(components at the grid ratios :math:`(e^{\mu w_k}, 1)` and :math:`(1, e^{\mu w_k})`, a, b, c as above),
so every evaluator, search and accountant of the library applies to it unchanged.  Round-off of the
spread weights moves mass to the upper end point only (a first-order stochastic increase, also sound).

**Truncation with a charged tail.**  Beyond :math:`w_K` the left ratio A is unbounded (the privacy
loss of a Gaussian is unbounded): cap it at :math:`A_K = e^{\mu w_K}`.  For any :math:`L` and any reals,
:math:`(\sum_i l_i)_+ \le (\sum_i \min(l_i, L))_+ + \sum_i (l_i - L)_+`; with n identically distributed
terms and the 1/n of the bound, the **constant is exactly 1**:

.. math::

    \delta(\varepsilon) \le \tfrac1n E\Big[\Big(\sum_{i} \min(G_i, L)\Big)_+\Big] + E[(G - L)_+],
    \qquad L = A_K - e^\varepsilon,

and :math:`E[(G-L)_+] = \int (R_0(y) - A_K R_\Delta(y))_+\,dy = \Phi(-\varepsilon_K/\mu + \mu/2) -
e^{\varepsilon_K}\Phi(-\varepsilon_K/\mu - \mu/2) =: \tau`, :math:`\varepsilon_K = \mu w_K`: the hockey-stick
divergence of :math:`N(0,1)` and :math:`N(\mu,1)` at :math:`\varepsilon_K`, **independent of ε**.  On the
right, B is capped as well; that raises G (sound, no charge).  The cut is :math:`w_K = \mu/2 + z`, so
:math:`\tau(z) \approx \bar\Phi(z)`.  Every depth z gives a certified upper bound
:math:`\delta_z(\varepsilon) + \tau(z)`, so does their minimum: a query evaluates the cut (z a multiple of
:data:`DEPTH_STEP`) whose charge is at most :data:`FIRST_FRACTION` of its δ (and the certified FFT engine
at small n, or a shallower cut, when the Bromwich integral's own error bound is loose on the heavy far tail;
see :func:`ladder_point`; a heavy first cut gives way to the big-jump bound below).  For an ε query at δ the
cut's upper ε is searched at :math:`\delta - \tau(z)`.  The
accountant (privacy profiles, PLDs, ``--rounds``) takes at every ε of its grid the minimum over one rung per
decade of charge and the local profile below (:mod:`shuffleamp.accounting`, argument J).  Finally the shuffled
output is a post-processing of the differing user's own report, so the local Gaussian mechanism's exact profile
(Balle–Wang) is a second certified upper bound; the smaller is reported.

**Big-jump bound** (derived here).  For a heavy law (large Δ/σ) the sum's positive part comes from one
report far in the tail, while the truncation above charges that tail against the whole of δ: the cut must reach
the local mechanism's ε, where the Bromwich integral of the truncated law is slow and its error bound loose.
Keep the cut shallow and charge the far tail only beyond the others' negative drift.  Let :math:`T(G)` be G with
the left ratio capped at :math:`A_K` (the right ratio capped too, which raises G; the atom at 0 unchanged) and
:math:`y = (A - A_K)_+` on the left side, 0 elsewhere, so that :math:`G \le T(G) + y` at every ε (also beyond
:math:`\varepsilon_K`).  With :math:`Y = \sum_i y_i`, N the number of :math:`y_i > 0` and any (possibly random)
:math:`C \ge 0`: :math:`(u + v)_+ \le (u + C)_+ + (v - C)_+` and :math:`(Y - C)_+ \le \sum_i (y_i - C)_+ +
Y\,\mathbb 1\{N \ge 2\}` pointwise (with at most one :math:`y_i > 0` the left side is that term's; otherwise
:math:`(Y - C)_+ \le Y`).  Since :math:`E[y_1 \mathbb 1\{N \ge 2\}] \le E[y_1]\,P(\exists j \ne 1: y_j > 0) \le
E[y_1](n-1)p`, :math:`p = P(y > 0) = \bar\Phi(\mu + z)` (the blanket beyond the cut on the left) and
:math:`E[y_1] = \tau(z)`,

.. math::

    \delta(\varepsilon) \le \tfrac1n E\Big[\Big(\sum_i T(G_i) + C\Big)_+\Big] + \tfrac1n \sum_i E[(y_i - C)_+]
    + (n-1)\,\bar\Phi(\mu + z)\,\tau(z).

*Fixed shift.*  For a constant C, :math:`E[(y - C)_+] = \int (\varphi(y) - (A_K + C)\varphi(y - \mu))_+\,dy =
\delta_{\rm loc}(\log(A_K + C))` (the local Gaussian mechanism's profile, as τ above), and the first term is at
most that of the spread law :math:`\bar G` of :math:`T(G)` (convex order as above: :math:`s \mapsto (s + C)_+` is
convex), itself at most :math:`\min_{\theta > 0} e^{nK(\theta) + \theta C}/(e\theta n)` (Chernoff:
:math:`s_+ \le e^{\theta s - 1}/\theta`), K the log-MGF of :math:`\bar G`.  With C = 0 this is the truncation above
plus a Chernoff bound; with :math:`C \approx n(e^\varepsilon - 1)` (the others' negative drift) the middle term is
the local mechanism at :math:`\log(1 + n(e^\varepsilon - 1))`, the level at which a single report decides the event
(as the lower bound's critical cut).

*Shift on the blanket draws.*  With few blanket draws (nγ small) the others' sum is often 0, which a constant C
pays for through the Chernoff term.  Take :math:`C = sM`, M the number of users whose G is drawn from the blanket
part (the components of mass c; M ~ Bin(n, γ)), :math:`D_i` the indicator of that draw: the first term is the sum
of the i.i.d. :math:`T(G_i) + s D_i` (the spread acts inside the blanket part, where :math:`D_i = 1`, so the convex
order holds), at most
:math:`\min_\theta (\beta + e^{\theta s}\sum_j c_j e^{\theta v_j})^n/(e\theta n)` (β = 1 − γ, :math:`v_j` the
blanket atoms); and :math:`y_1 > 0` only if :math:`D_1 = 1`, so :math:`M = 1 + M'` there with
:math:`M' \sim` Bin(n − 1, γ) independent of :math:`y_1`: the middle term is :math:`E\,\delta_{\rm loc}(\log(A_K +
s(1 + M')))`, summed over a window of ±12 standard deviations of M' with each tail charged at the window end's
larger value (δ_loc decreases in its argument).

Every C, θ > 0 and depth z gives a certified bound; :func:`big_jump_delta` takes the minimum over grids of C (both
kinds) and θ, the cut z keeping the last term below :data:`BIG_JUMP_SECOND_SHARE` of δ, and rounds every term up
(the log-MGF with a slack of :data:`_LOG_MGF_SLACK` per user, the binomial weights by 1e-6 relative).  It is cheap
(a few thousand exponentials per ε) and replaces the ladder where the ladder's cut is heavy
(:data:`BIG_JUMP_MIN_LOG_RATIO`); where it certifies nothing below the local mechanism the ladder runs as before.

**Every pair of inputs** (derived here).  The bound above is for the extreme pair (0, Δ) (and its
reverse, the same law by the reflection :math:`y \mapsto \Delta - y`, which maps the blanket to itself).
For any pair :math:`(a, b) \subset [0, \mu]` (units of σ) the other users keep the same blanket m (the lower
envelope over the whole interval), and the pair's GPARV is :math:`G_{a,b} = 1 - c + U_{a,b}` w.p. γ
(:math:`Y \sim m/\gamma`) and 0 w.p. 1 − γ, with :math:`c = e^\varepsilon > 0`,
:math:`s_x = \varphi(\cdot - x) - m \ge 0` and :math:`U_{a,b} = (s_a(Y) - c\,s_b(Y))/m(Y)`.  **Claim:**
:math:`U_{a,b} \le_{cx} U_{0,\mu}`; then :math:`G_{a,b} \le_{cx} G_{0,\mu}` (a common shift and a common
mixture component keep the order), sums of independent copies keep it (Shaked, Shanthikumar, Theorem
3.A.12) and :math:`s \mapsto s_+` is convex, so :math:`E(\sum_i G_{a,b,i})_+ \le E(\sum_i G_{0,\mu,i})_+`:
the extreme pair is the worst, for every ε.  The same holds in Gaussian populations
(:func:`population_delta_upper`): the target's law :math:`L = \gamma_t G` w.r.t. its own blanket is
ordered in the same way, and the personalized functional is a mixture over the blanket count of
:math:`E(\sum_{i \le m+1} L_i)_+`, each term kept by the order.

*Lemma.*  :math:`H_x(K) := \int(\varphi(y - x) - K m(y))_+\,dy \le H_0(K) = H_\mu(K)` for every
:math:`x \in [0, \mu]` and :math:`K \ge 1`.  Proof: the ratio :math:`\rho_x = \varphi(\cdot - x)/m` is
:math:`\exp((\mu - x)((\mu + x)/2 - y))` for :math:`y \le \mu/2` (where :math:`m = \varphi(\cdot - \mu)`),
decreasing, and :math:`\exp(x(y - x/2))` for :math:`y \ge \mu/2` (where :math:`m = \varphi`), increasing,
with minimum :math:`\rho^* = e^{x(\mu - x)/2} \ge 1`.  If :math:`K \le \rho^*` the integrand is non-negative
and :math:`H_x = 1 - K\gamma \le H_0` (as :math:`(z)_+ \ge z`).  Otherwise, with :math:`p = x`,
:math:`q = \mu - x`, :math:`\ell = \log K > pq/2`, the positive set is :math:`(-\infty, s_1) \cup (s_2, \infty)`
with :math:`s_1 - x = -(\ell/q - q/2)` and :math:`s_2 - x = \ell/p - p/2`, and since the integrand vanishes
at :math:`s_1, s_2` and m does not depend on x, :math:`dH_x/dx = \int_{\{\cdot > 0\}} (y - x)\varphi(y - x)\,dy
= \varphi(s_2 - x) - \varphi(s_1 - x)`.  With :math:`h(z) = \ell/z - z/2` (decreasing),
:math:`s_2 - x = h(p)` and :math:`s_1 - x = -h(q)`.  For :math:`x \le \mu/2` (:math:`p \le q`):
:math:`p^2 \le pq < 2\ell` gives :math:`h(p) > 0`; if :math:`h(q) \ge 0` then :math:`h(p) \ge h(q)`; if
:math:`h(q) < 0` then :math:`h(p) + h(q) = (\ell - pq/2)(p + q)/(pq) > 0`.  Either way
:math:`|s_2 - x| \ge |s_1 - x|`, so :math:`dH_x/dx \le 0`.  As ρ* increases on [0, μ/2], the regime
:math:`K > \rho^*` is an initial interval of x, on which H decreases, and beyond it :math:`H_x = 1 - K\gamma`
is its minimum; H is continuous in x, so :math:`H_x \le H_0` on [0, μ/2], and the reflection gives
:math:`H_x = H_{\mu - x}`.

*Proof of the claim.*  Equal means: :math:`E U_{a,b} = (1-\gamma)(1-c)/\gamma` for every pair.  For
:math:`k \ge 0`, dropping :math:`-c s_b \le 0`: :math:`\gamma E(U_{a,b} - k)_+ = \int(s_a - c s_b - k m)_+
\le \int(\varphi(\cdot - a) - (1+k)m)_+ = H_a(1+k) \le H_0(1+k)`, and :math:`\gamma E(U_{0,\mu} - k)_+ =
H_0(1+k)` exactly (:math:`s_0 = (\varphi - \varphi(\cdot-\mu))_+` and :math:`s_\mu` have disjoint supports).
For :math:`k = -k' < 0`, dropping :math:`-s_a`: :math:`\gamma E(k - U_{a,b})_+ \le c\,H_b(1 + k'/c) \le
c\,H_\mu(1 + k'/c) = \gamma E(k - U_{0,\mu})_+`, and with equal means
:math:`E(X - k)_+ = EX - k + E(k - X)_+`.  So every stop-loss transform of :math:`U_{a,b}` is at most that of
:math:`U_{0,\mu}` with equal means: convex order (Shaked, Shanthikumar, Theorem 3.A.1).
``tests/test_gaussian_interior.py`` checks the lemma and the stop-loss inequalities with an exact oracle
(normal-CDF pieces between bisected sign changes) for μ in {0.25, …, 8}, :math:`e^\varepsilon` in
{1, …, 100} and a 7 × 7 grid of input pairs.

Certified lower bound (quantised concrete pairs)
------------------------------------------------
Post-process every report to its cell among cuts :math:`\Delta/2 + s_j\sigma` (the same map for every user,
applied before the analyst sees anything, so the shuffled cell counts are a post-processing of the shuffled
reports).  For the dataset :math:`x_1^0 = 0,\ x_1^1 = x_2 = \dots = x_n = \Delta` the cells form a finite
randomizer with rows ``P[0]``, ``P[Δ]`` (differences of normal tails), and the exact divergence of that concrete
pair is the Theorem-14 functional of the decomposition ``a = P[0], b = c = P[Δ]`` (Su, Cheng, Wang, Theorem
14), evaluated by the library's certified lower evaluators (errors subtracted, rounded down), both orderings.
Any set of cuts gives a valid lower bound, and dropping cuts is a further post-processing, so a pair dominates
every threshold count at one of its cuts (:func:`quantised_pair`).

*Where the cells go* (derived here).  With :math:`r(y) = \varphi(y)/\varphi(y - \mu) = e^{\mu(\mu/2 - y)}` (units
of σ) the shuffled output's likelihood ratio is :math:`\tfrac1n\sum_i r(y_i)`, so the pair's divergence is
:math:`\delta(\varepsilon) = \tfrac1n E[(\sum_{i=1}^n r(Y_i) - n e^\varepsilon)_+]`, :math:`Y_i \sim N(\mu, 1)`
(a sum of log-normals; quantising replaces r by its conditional mean on each cell, a convex-order decrease).
The log-ratio is affine in y, so cells uniform in y are uniform in log-ratio.  Two regions matter: the critical
cut :math:`s^* = -\log(1 + n(e^\varepsilon - 1))/\mu` below which one report alone decides the event
(:func:`critical_cut`), and the bulk of the score's variance :math:`\operatorname{Var} r(Y) = e^{\mu^2} - 1`
(its integrand is centred at :math:`y = -\mu`).  :func:`lower_layouts` puts cuts there: at most 7 cells below
:data:`FINE_MIN_N` users, where the certified evaluators are exact (enumeration, binomial mixture) and many
cells over a wide ratio range made their error bounds exceed the gain (the reason the former uniform grid was
limited to Δ/σ < 1), finer layouts from FINE_MIN_N users on; the threshold counts of :data:`THRESHOLDS` join at
small n.  A query keeps the pair with the largest *certified* value at the probe ε (the δ query's ε; for an ε
query the upper ε, then once more at its first lower root when the critical cut moved), so a layout whose
evaluation is loose never wins; from FINE_MIN_N users an ε query ranks only the layouts that can win in its regime
(:func:`_ranked_layouts`).  The accountant composes the same kind of pair (:func:`accounting_lowers`,
privacy-loss buckets: a post-processing of the concrete pair, so its R-fold composition is a lower bound on the
total); Gaussian populations add threshold counts at the target's critical cut.

*Which dataset* (derived here; measured in ``bench/results_gaussian_brackets.md``).  With the other users i.i.d.
of density q (a point input or a mixture, itself a mixture of datasets and so never above the worst of them, by
joint convexity of the hockey-stick divergence), the likelihood ratio is
:math:`\tfrac1n\sum_i(p_0/q)(y_i)/\tfrac1n\sum_i(p_1/q)(y_i)` and, as n grows, its log is asymptotically normal
with variance :math:`\tfrac1n\chi^2`, :math:`\chi^2 = \int(p_0 - p_1)^2/q`.  This is convex in q, so among
mixtures of point inputs c it is largest at an end point; for a point c,
:math:`\chi^2 = e^{c^2} + e^{(\mu-c)^2} - 2e^{-c(\mu - c)}` (units of σ, :math:`\int\varphi(y-a)\varphi(y-b)/
\varphi(y-c) = e^{(a-c)(b-c)}`), largest at c ∈ {0, μ}: :math:`e^{\mu^2} - 1`.  So the dataset (0 | Δ; others Δ)
(and its mirror image) is the asymptotically worst; at n = 2, 3 numerical integration over the output space,
maximised over a grid of the others' inputs, finds the same dataset worst in every case measured.

*Which side is loose* (measured).  At n = 2, 3 the true worst case lies strictly inside the former bracket:
the threshold counts were 5–35 % below it in δ, the upper 15–75 % above it.  The quantised pairs bring the
lower to within a few per cent of the truth there; at large n they reach the certified value of the fine
uniform grid, and what is left of the bracket (ratio about 1.2–1.35 at n ≥ 1e3 for Δ/σ ∈ [0.5, 2]) is the
upper side: the blanket decomposition gives the other users' reports only the common part m of the two
densities, where the worst dataset's others carry the whole of :math:`N(\Delta, \sigma^2)`.

(ε0, δ0)-LDP randomizers: the reduction (derived here)
------------------------------------------------------
Let R be (ε0, δ0)-LDP on any domain, and fix a neighbouring pair that differs in user 1
(:math:`x_1^0` vs :math:`x_1^1`, the others :math:`x_2, \dots, x_n`).  Let :math:`S` be the set of inputs other
than :math:`x_1^b` that occur among :math:`x_1^{1-b}, x_2, \dots, x_n` (at most :math:`\min(n, d-1)` values
for a domain of size d), :math:`P_b` the law of :math:`R(x_1^b)` and :math:`\rho_x` that of :math:`R(x)`.

1. *Good parts.*  :math:`g_b := \min(P_b,\ e^{\varepsilon_0}\min_{x\in S}\rho_x)` (densities w.r.t. a common
   dominating measure).  Its missing mass is
   :math:`\beta_b = \int (P_b - e^{\varepsilon_0}\min_{x\in S}\rho_x)_+ \le \sum_{x\in S}\int(P_b -
   e^{\varepsilon_0}\rho_x)_+ \le |S|\,\delta_0 \le \beta := \min(n, d-1)\,\delta_0`.
2. *Pure ratios.*  :math:`g_b \le e^{\varepsilon_0}\rho_x` for :math:`x \in S`, and
   :math:`g_0 \le e^{\varepsilon_0} g_1` (since :math:`g_0 \le e^{\varepsilon_0} P_1` and
   :math:`g_0 \le e^{\varepsilon_0}\min_S\rho \le e^{\varepsilon_0}\cdot e^{\varepsilon_0}\min_S\rho`).
   Normalised, :math:`\hat g_b = g_b/(1-\beta_b)` satisfies
   :math:`\hat g_b \le e^{\varepsilon_0'}\rho_x` and :math:`\hat g_0 \le e^{\varepsilon_0'}\hat g_1`
   (and symmetrically) with :math:`\varepsilon_0' = \varepsilon_0 - \log(1-\beta)`.
3. *Shuffle.*  Write :math:`P_b = (1-\beta_b)\hat g_b + (P_b - g_b)`.  For any event E of the shuffled
   output, :math:`\Pr_{D_0}[E] \le (1-\beta_0)\hat P_0(E) + \beta_0` and
   :math:`\Pr_{D_1}[E] \ge (1-\beta_1)\hat P_1(E)`, where :math:`\hat P_b` is the shuffled output with
   user 1 drawing from :math:`\hat g_b`.  Then
   :math:`(1-\beta_0)\hat P_0 - e^\varepsilon(1-\beta_1)\hat P_1 = (1-\beta_1)(\hat P_0 - e^\varepsilon\hat P_1)
   + (\beta_1-\beta_0)\hat P_0`, so
   :math:`\Pr_{D_0}[E] - e^\varepsilon\Pr_{D_1}[E] \le \max(\beta_0, \beta_1) + \delta_{\hat P}(\varepsilon)`.
4. The pair :math:`(\hat g_0, \hat g_1)` and the others' laws satisfy exactly the hypotheses of the standard
   clone of Feldman, McMillan, Talwar ("Hiding Among the Clones", FOCS 2021, Theorem 3.1 and its proof:
   :math:`\rho_x \ge e^{-\varepsilon_0'}\hat g_b` for every other user, and the pair :math:`\varepsilon_0'`-close),
   so :math:`\delta_{\hat P}` is bounded by the clone decomposition's GPARV functional at
   :math:`\varepsilon_0'` (Su, Cheng, Wang, Theorem 12).

Hence :math:`\delta(\varepsilon) \le \delta_{\rm clone}(\varepsilon;\ \varepsilon_0 - \log(1-\beta),\ n) + \beta`,
:math:`\beta = \min(n, d-1)\,\delta_0`.  At :math:`\delta_0 = 0` this is the pure clone bound exactly; it is
non-decreasing in δ0 (β and ε0' are, and the clone bound is non-decreasing in ε0').  The additive
:math:`\beta` is the decomposition's ``delta_charge``.  Over rounds it is not added R times: step 3 also shows
that the shuffled output is a post-processing of the clone pair mixed with two infinite-loss atoms of mass
β, which composes into :math:`1-(1-\beta)^R + (1-\beta)^R\delta_{\rm clone}^{(R)}(\varepsilon)`
(:mod:`shuffleamp.accounting`, argument I, which also takes the minimum over the users kept m below at every
ε).  Compare Feldman–McMillan–Talwar's Theorem 3.8
(an additive term of order :math:`(e^\varepsilon+1)\,n\delta_0`): the constant here is 1 and
:math:`\min(n, d-1)` replaces n for a finite domain.

**Fewer users** (derived here).  For any m ≤ n, the shuffled output of the n users is a randomized
post-processing of the shuffled output of the differing user and any m − 1 of the others (draw the remaining
users' reports, independent and with the same law under both datasets, add them to the multiset), so the
worst case over datasets is non-increasing in n and the reduction above may be applied to m users only:
:math:`\delta(\varepsilon) \le \min_{m \le n} [\delta_{\rm clone}(\varepsilon;\ \varepsilon_0 -
\log(1-\beta_m),\ m) + \beta_m]`, :math:`\beta_m = \min(m, d-1)\,\delta_0`.  Fewer users pay a smaller
charge and amplify less; every m gives a certified bound, so the minimum over the m evaluated is one: the
upper bound is a minimum of valid bounds, whichever m are tried.  The query searches m over the integers
(:func:`approx_fewer_users`): the octave ladder m = n, n/2, n/4, … (skipping m whose charge alone reaches the
best value or the target, and stopping once the pure ε0 clone bound with m users shows that no smaller m can
do better), then a golden-section search over every integer m between the best rung's neighbours, to a
relative width of 2^-10 in m.  For ε at δ the same search runs over the per-m ε (the clone's ε at δ − β_m
with m users, each a conservative root); their minimum is the ε at which the minimum over m of δ reaches the
target.  At δ0 = 0 (and for m beyond d − 1) the charge does not depend on m and m = n alone is evaluated: the
clone bound with m + 1 users is a post-processing of the one with m, so it is the pure clone bound exactly.
Measured: at (ε0, δ0) = (2, 1e-9), n = 1e4, δ = 1e-6 the best m is 923 (ε 0.654; the octave ladder's best,
m = 625, gives 0.758).

**The local profile** (derived here).  The shuffled output is a randomized post-processing of the differing
user's report (the others' reports are drawn independently, with the same law under both datasets), so
:math:`\delta(\varepsilon) \le \sup D_{e^\varepsilon}(P\|Q)` over pairs with :math:`P(E) \le e^{\varepsilon_0}Q(E)
+ \delta_0` and :math:`Q(E) \le e^{\varepsilon_0}P(E) + \delta_0` for every event E.  For such a pair and
:math:`0 \le \varepsilon \le \varepsilon_0`, let :math:`A = \{P > e^\varepsilon Q\}`, :math:`p = P(A)`,
:math:`q = Q(A)`: then :math:`D = p - e^\varepsilon q` with :math:`p \le e^{\varepsilon_0}q + \delta_0` and
:math:`1 - q \le e^{\varepsilon_0}(1-p) + \delta_0` (the event :math:`A^c`).  The maximum of this linear
program is at a vertex of its feasible polygon in :math:`[0,1]^2`: at the intersection of the two
constraints, :math:`q = (1-\delta_0)/(e^{\varepsilon_0}+1)`,
:math:`p = \delta_0 + (1-\delta_0)e^{\varepsilon_0}/(e^{\varepsilon_0}+1)`, where

.. math::

    D = \delta_0 + (1-\delta_0)\,\frac{e^{\varepsilon_0} - e^{\varepsilon}}{e^{\varepsilon_0}+1};

at :math:`q = 0` it is at most δ0 and at :math:`p = 1` (:math:`q \ge 1-\delta_0`) at most
:math:`\delta_0 + (1-\delta_0)(1 - e^\varepsilon)`, both smaller.  For :math:`\varepsilon \ge \varepsilon_0`,
:math:`D \le p - e^{\varepsilon_0}q \le \delta_0`.  (This is the profile of the canonical pair of Kairouz,
Oh, Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015.)  The upper bound reported is
the smaller of the reduction above and this local profile (:func:`approx_local_delta`); it answers where the
charge β reaches δ, and ε at δ exists exactly when :math:`\delta \ge \delta_0` (below, see the lower bound,
no finite ε holds: refused naming ``delta``).

**Lower bound.**  Concrete (ε0, δ0)-LDP randomizers, each evaluated on Theorem-14 datasets by the certified
lower evaluators, the largest reported:

* k-randomized response at :math:`\varepsilon_1^{(k)} = \log((e^{\varepsilon_0}+(k-1)\delta_0)/(1-\delta_0))`,
  k = 2 and (domain of at least 3 inputs) k = 3: its hockey-stick divergence at :math:`e^{\varepsilon_0}`
  between two inputs is :math:`(e^{\varepsilon_1} - e^{\varepsilon_0})/(e^{\varepsilon_1}+k-1) = \delta_0`
  exactly (only the first input's own output has a positive term).  3-RR matters even at δ0 = 0: at
  n = 10^4, ε0 = 1, δ = 1e-6 its shuffled ε (0.0380) is above binary RR's (0.0357);
* (domain of at least 3 inputs, 4 with 3-RR) the randomizer that reveals its input with probability δ0,
  :math:`R(x) = \delta_0\mathbb 1_{r_x} + (1-\delta_0)B(x)` with distinct symbols :math:`r_x` and B k-RR
  at ε0 on the target's inputs (and a third for 3-RR), extended by a fresh input :math:`x_2` with
  :math:`B(x_2)` equal to the law of the Theorem-14 dataset's other users.  It is (ε0, δ0)-LDP, since
  :math:`R(x)(E) \le \delta_0 + (1-\delta_0)e^{\varepsilon_0}B(x')(E) \le \delta_0 +
  e^{\varepsilon_0}R(x')(E)`.  The symbol :math:`r_{x^0}` occurs only under the first dataset (probability
  δ0), :math:`r_{x^1}` only under the second, and the others' symbols :math:`r_{x_2}` have the same law under
  both and only remove users from the k-RR pool (which can only raise a concrete pair's divergence), so the
  divergence is at least :math:`\delta_0 + (1-\delta_0)D_B(\varepsilon)`, :math:`D_B` the k-RR Theorem-14
  pair's.

The binary members (binary RR at its ε1, and the revealing randomizer on binary RR at ε0) are also evaluated
through binary randomized response's own bound, the exact count law over every dataset (up to
:data:`BINARY_LOWER_MAX_N` users): at n = 50, (ε0, δ0) = (0.5, 1e-3), δ = 1e-2 that raises the lower from
0.05827 (Theorem-14 datasets) to 0.05865.  The lower reported is the largest over the members listed.
At n = 1 the revealing binary randomizer gives the local profile exactly, so the bracket closes there; at
δ0 = 0 the members are k-RR at ε0.

Asymptotics: the shuffle index (comparison only)
------------------------------------------------
Takagi, Liew ("Analysis of Shuffling Beyond Pure Local Differential Privacy", arXiv:2601.19154) show that the
blanket divergence, the functional of the upper bound above, depends for large n on the randomizer only
through one scalar, the shuffle index, and that an upper and a lower index bound the shuffled ε in a band.
For this randomizer (μ = Δ/σ) the leading term is :math:`\delta \approx \sqrt{\chi^2/n}\,\psi(\varepsilon
\sqrt{n/\chi^2})`, :math:`\psi(t) = \varphi(t) - t\Phi(-t)`, with the blanket index
:math:`\chi^2_{\rm up} = 2[e^{\mu^2}\Phi(3\mu/2) - 2\Phi(\mu/2) + \Phi(-\mu/2)]` and the single-input index
:math:`\chi^2_{\rm low} = e^{\mu^2} - 1` (others all at 0); both are :math:`\mu^2 + O(\mu^4)` and the band never
collapses.  These closed forms and the leading term are derived in :func:`shuffleamp.baselines.shuffle_index`
and :func:`shuffleamp.baselines.shuffle_index_delta`; :func:`shuffleamp.baselines.shuffle_index_band` returns
the band as an estimate (``sound=False``).  At Δ/σ <= 1/2 and n >= 1e5 the certified upper here is within 1 %
of the blanket index's ε and the certified lower within 0.4 % of the single-input index's; at Δ/σ >= 2 the
privacy-amplification variable's log-normal tail makes the normal leading term several times too small except
at the largest n (``bench/results_takagi_liew.md``).

References
----------
B. Balle, J. Bell, A. Gascón, K. Nissim, "The Privacy Blanket of the Shuffle Model", CRYPTO 2019.
J. Su, Y. Cheng, T. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via Shuffling",
IEEE S&P 2026 (arXiv:2504.07414), Theorems 12-14.
V. Feldman, A. McMillan, K. Talwar, "Hiding Among the Clones: A Simple and Nearly Optimal Analysis of
Privacy Amplification by Shuffling", FOCS 2021, Theorems 3.1 and 3.8.
P. Kairouz, S. Oh, P. Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015 (the
canonical (ε, δ) pair).
B. Balle, Y.-X. Wang, "Improving the Gaussian Mechanism for Differential Privacy: Analytical Calibration
and Optimal Denoising", ICML 2018, Theorem 8 (the hockey-stick divergence of two Gaussians).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.special import bdtr, bdtrc, gammaln, ndtr, log_ndtr

from . import _validate
from ._numerics import budget, current_budget, inverse_monotone, refuse_if_costly
from .decomposition import Decomposition, chernoff_bounds, clone_decomposition, lower_decomposition
from .errors import ParameterError, ResourceLimitError
from ._registry import Settings
from .mechanisms import KRR, Mechanism, Parameter, _form, _NoMatrix

__all__ = ["Gaussian", "ApproximateLDP", "gaussian_delta", "gaussian_blanket", "THRESHOLDS", "LADDER",
           "MU_MAX", "population_gammas", "approx_local_delta", "approx_local_epsilon", "approx_fewer_users"]

#: Truncation ladder: the cut is at w_K = Δ/(2σ) + z (z in units of σ), charged tail τ(z) ≈ Φ̄(z).
LADDER = tuple(range(3, 13))
#: Largest Δ/σ accepted (the cut's log-ratio μ(μ/2 + max z) stays within the evaluators' ε0 range).
MU_MAX = 8.0
#: Cells: width at most CELL_W in w and at most CELL_LOG_RATIO in log-ratio μ·h.
CELL_W = 0.25
CELL_LOG_RATIO = 0.1
#: At most this many cells per side (large Δ/σ: the log-ratio step grows beyond CELL_LOG_RATIO).
MAX_CELLS = 120
#: Thresholds of the lower-bound statistic, in units of σ relative to Δ/2.
THRESHOLDS = (-6.0, -5.0, -4.0, -3.0, -2.0, -1.0, -0.5, 0.0, 0.5)
#: The truncation of a δ query is the first of the ladder whose charge is at most this fraction of the
#: lower bound (or the deepest); the next shallower rung is also tried when the evaluation's own error is
#: more than LADDER_RETRY_ERR of its value (a heavy far tail makes the Bromwich integral loose).
CHARGE_FRACTION = 1e-3
LADDER_RETRY_ERR = 0.1
#: A δ query starts at the rung an ε query at this δ would use (then moves to the rung of its result).
DELTA_START_GUIDE = 1e-6
#: Up to this n a rung whose Bromwich error is loose is re-evaluated by the certified FFT engine.
FFT_MAX_N = 2000
#: ... when its law has at most this many atoms (the discretised engine's cost grows with the range).
FFT_MAX_ATOMS = 300
#: ε queries: the first cut's charge is FIRST_FRACTION of the target δ; when its evaluation is loose (the error
#: bounds grow with the truncated law's largest ratio), a shallower cut whose charge is SHALLOW_FRACTION of it
#: (see :func:`ladder_point`).
FIRST_FRACTION = 1e-3
SHALLOW_FRACTION = 0.25
#: From this Δ/σ on the ε query starts at the shallower cut (measured: there the deeper cut's evaluation is loose
#: at every n >= FINE_MIN_N, and the shallow one within 1 % of the best cut otherwise).
SHALLOW_FIRST_MU = 2.0
#: Below this n the laws have at most SMALL_N_CELLS cells per side (the cost is atoms x integrand nodes there).
FINE_MIN_N = 2000
SMALL_N_CELLS = 32
#: The certified FFT engine evaluates first when n >= FFT_FIRST_MIN_N, n γ <= FFT_FIRST_BLANKET and Δ/σ >=
#: FFT_FIRST_MU (few blanket draws of a wide law: the heavy atom at 0 keeps the Bromwich integrand from decaying).
FFT_FIRST_MIN_N = 4
FFT_FIRST_BLANKET = 40.0
FFT_FIRST_MU = 0.5
#: Depth of the accountant's stand-in (:meth:`Gaussian.at_n`, τ ≈ Φ̄(9) ≈ 1e-19): its largest log-ratio bounds the
#: profile's support; the upper profile itself is the minimum over a few rungs (accounting module, argument J).
ACCOUNTING_Z = 9
#: Relative margin by which the spread weight of the upper end point is rounded up.
_SPREAD_MARGIN = 1e-9


def gaussian_delta(mu: float, epsilon):
    r"""Hockey-stick divergence of :math:`N(0,1)` and :math:`N(\mu,1)` at e^ε (Balle–Wang, ICML 2018, Theorem 8).

    Parameters
    ----------
    mu : float
        Δ/σ > 0.
    epsilon : float or array_like
        ε in nats (any real).

    Returns
    -------
    float or ndarray
        :math:`\Phi(-\varepsilon/\mu + \mu/2) - e^\varepsilon\Phi(-\varepsilon/\mu - \mu/2)`, computed as a
        difference of exponentials of ``log_ndtr`` (no overflow).
    """
    if np.ndim(epsilon) == 0:
        # one ε: the same operations on scalars (the same float, without the array overhead: the bisections and
        # depth searches of one query ask a few hundred single points)
        e = float(epsilon)
        l1 = log_ndtr(-e / mu + mu / 2)
        l2 = e + log_ndtr(-e / mu - mu / 2)
        # where Φ(-ε/μ + μ/2) underflows (ε far above μ²) both logs are -inf: the value is 0 there, not NaN
        gap = 0.0 if l1 == -math.inf else l2 - l1
        return float(np.exp(l1) * -np.expm1(np.minimum(gap, 0.0)) + 0.0)      # (+ 0.0: no -0.0)
    e = np.asarray(epsilon, dtype=np.float64)
    l1 = log_ndtr(-e / mu + mu / 2)
    l2 = e + log_ndtr(-e / mu - mu / 2)
    gap = np.where(np.isneginf(l1), 0.0, l2 - np.where(np.isneginf(l1), 0.0, l1))
    return np.exp(l1) * -np.expm1(np.minimum(gap, 0.0)) + 0.0


def _local_delta(mu: float, epsilon: float) -> float:
    """Local Gaussian mechanism's δ(ε) of the pair (0, Δ), rounded up (relative 1e-12 plus one ulp)."""
    v = gaussian_delta(mu, epsilon)
    return float(min(1.0, np.nextafter(v * (1 + 1e-12), np.inf)))


@functools.lru_cache(maxsize=256)
def _local_epsilon(mu: float, delta: float) -> float:
    """Local Gaussian mechanism's ε(δ), the conservative (upper) end of a bisection bracket (cached: the ε query
    asks it twice, for its local bound and the big-jump search)."""
    if _local_delta(mu, 0.0) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while _local_delta(mu, hi) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _local_delta(mu, mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return hi


def _sf(z):
    """Φ̄(z) elementwise (upper tail), accurate in both tails."""
    return ndtr(-np.asarray(z, dtype=np.float64))


def _grid(mu: float, z: float, max_cells: int | None = None) -> np.ndarray:
    """Cell edges in w: uniform on [0, μ/2 + z], width at most CELL_W and log-ratio step CELL_LOG_RATIO, at most
    ``max_cells`` (default :data:`MAX_CELLS`) cells."""
    w_cut = mu / 2 + z
    h = min(CELL_W, CELL_LOG_RATIO / mu)
    k = min(MAX_CELLS if max_cells is None else int(max_cells), max(8, int(math.ceil(w_cut / h))))
    return np.linspace(0.0, w_cut, k + 1)


def gaussian_blanket(mu: float, z: float = 8.0, edges: np.ndarray | None = None):
    r"""The spread (convex-order dominating) blanket decomposition of the Gaussian pair (0, Δ), μ = Δ/σ.

    Parameters
    ----------
    mu : float
        Δ/σ in (0, :data:`MU_MAX`].
    z : float
        Depth of the cut in units of σ: :math:`w_K = \mu/2 + z` (ignored when ``edges`` is given).
    edges : ndarray, optional
        Cell edges in w (default: :func:`_grid`), starting at 0, increasing.

    Returns
    -------
    dec : Decomposition
        Components at the ratios :math:`(e^{\mu w_k}, 1)` (left) and :math:`(1, e^{\mu w_k})` (right), with
        the tail beyond the last edge capped at it (see the module docstring).
    tau : float
        The charged tail :math:`E[(G-L)_+]` (rounded up).
    eps_cut : float
        :math:`\mu w_K`, the largest log-ratio of the truncated law.
    """
    w = _grid(mu, z) if edges is None else np.asarray(edges, dtype=np.float64)
    K = w.size - 1
    # masses of each cell on one side: blanket c and the larger density's mass a (= c * mean ratio)
    sc = _sf(w + mu / 2)
    sa = _sf(w - mu / 2)
    c = sc[:-1] - sc[1:]
    a = sa[:-1] - sa[1:]
    lo_r = np.exp(mu * w[:-1])
    hi_r = np.exp(mu * w[1:])
    # spread: c_hi * hi_r + c_lo * lo_r = a, c_hi + c_lo = c; a - c * lo_r >= 0 analytically
    excess = np.maximum(a - c * lo_r, 0.0)
    c_hi = np.minimum(excess / (hi_r - lo_r) * (1 + _SPREAD_MARGIN), c)
    c_lo = c - c_hi
    node_c = np.zeros(K + 1)
    node_c[:-1] += c_lo
    node_c[1:] += c_hi
    node_c[-1] += sc[-1]                     # tail beyond the cut, capped at the last ratio
    ratio = np.exp(mu * w)
    # left side: a = c * ratio, b = c; right side mirrored; the node w = 0 (ratio 1, 1) from both sides
    a_left, b_left = node_c * ratio, node_c.copy()
    a_comp = np.concatenate([[2 * a_left[0]], a_left[1:], node_c[1:]])
    b_comp = np.concatenate([[2 * b_left[0]], b_left[1:], a_left[1:]])
    c_comp = np.concatenate([[2 * node_c[0]], node_c[1:], node_c[1:]])
    keep = c_comp > 0
    a_comp, b_comp, c_comp = a_comp[keep], b_comp[keep], c_comp[keep]
    gamma = float(2 * _sf(mu / 2))
    # the sums of a (resp. b) are 1 - tau (resp. 1 - tail) analytically; normalise away only round-off
    # (the masses below the cut are what they are: the missing tail mass is tau, charged separately)
    dec = Decomposition._trusted(a_comp, b_comp, c_comp, max(0.0, 1.0 - gamma), label="pair (0, Δ) blanket")
    eps_cut = float(mu * w[-1])
    tau = gaussian_delta(mu, eps_cut)
    tau = float(np.nextafter(tau * (1 + 1e-12) + 1e-300, np.inf))
    return dec, tau, eps_cut


def _threshold_lowers(mu: float) -> list:
    """Theorem-14 decompositions of the threshold-count statistic (dataset 0 | Δ; others Δ)."""
    return list(_threshold_lowers_cached(float(mu)))


@functools.lru_cache(maxsize=128)
def _threshold_lowers_cached(mu: float) -> tuple:
    out = []
    for s in THRESHOLDS:
        t = mu / 2 + s                                    # threshold in units of σ
        # Pr[y <= t], Pr[y > t] for inputs 0 and Δ, each tail from its own side (no 1 - p cancellation)
        P = np.array([[float(ndtr(t)), float(_sf(t))], [float(ndtr(t - mu)), float(_sf(t - mu))]])
        if not (P > 0).all():
            continue                                      # a bit that never differs: no information
        d = lower_decomposition(P, 0, 1, 1)
        out.append(Decomposition(d.a, d.b, d.c, 0.0, label=f"threshold count t = Δ/2 {s:+g}σ (0 | Δ; others Δ)"))
    return tuple(out)


#: The quantised lower-bound dataset (:func:`cells_lower`): reports cut at Δ/2 + s σ for s on a grid of this step
#: (units of σ; the :data:`THRESHOLDS` are on it) over [-LOWER_CELLS_HALF_WIDTH, +LOWER_CELLS_HALF_WIDTH].
LOWER_CELLS_STEP = 0.25
LOWER_CELLS_HALF_WIDTH = 8.0


def _cell_probs(mu: float, edges) -> tuple:
    """Cell probabilities of N(0, 1) and N(μ, 1) for the cuts at μ/2 + ``edges`` (units of σ, increasing), plus the
    two unbounded end cells; each interior cell a difference of normal tails taken on the side where it does not
    cancel.  Cells of zero probability under both inputs are dropped; each row renormalised (round-off only)."""
    t = mu / 2 + np.asarray(edges, dtype=np.float64)

    def probs(shift):
        x = t - shift
        lo = ndtr(x)                                          # P(y <= t) for y ~ N(shift, 1)
        hi = _sf(x)                                           # P(y > t)
        mid = np.where(x[1:] <= 0.0, lo[1:] - lo[:-1], hi[:-1] - hi[1:])
        return np.concatenate([[lo[0]], np.maximum(mid, 0.0), [hi[-1]]])

    p0, p1 = probs(0.0), probs(mu)
    keep = (p0 > 0) | (p1 > 0)
    return p0[keep] / math.fsum(p0[keep]), p1[keep] / math.fsum(p1[keep])


@functools.lru_cache(maxsize=512)
def quantised_pair(mu: float, edges: tuple) -> Decomposition:
    r"""Theorem-14 decomposition of the dataset (0 | Δ; others Δ) with every report quantised to a cell.

    Each report y (units of σ) is mapped to its cell among the cuts :math:`\mu/2 + s`, s in ``edges``: the same
    map for every user before shuffling, so the shuffled cell counts are a post-processing of the shuffled reports
    and the exact divergence of the quantised pair (Su, Cheng, Wang, Theorem 14, for the finite randomizer with
    rows ``P[0]``, ``P[Δ]``) is a lower bound on the Gaussian pair's.  Coarsening the cells (dropping cuts) is a
    further post-processing, so every threshold count at a cut of ``edges`` is dominated.

    Parameters
    ----------
    mu : float
        Δ/σ.
    edges : tuple of float
        Cuts relative to Δ/2, units of σ, strictly increasing.

    Returns
    -------
    Decomposition
        ``a = P[0]`` (input 0), ``b = c = P[Δ]``, β = 0; attribute ``cuts`` = ``edges``.
    """
    p0, p1 = _cell_probs(mu, edges)
    dec = Decomposition(p0, p1, p1, 0.0, label=f"dataset (0 | Δ; others Δ), reports in {p0.size} cells")
    object.__setattr__(dec, "cuts", tuple(edges))           # for inspection and the tests' oracles
    return dec


@functools.lru_cache(maxsize=128)
def cells_lower(mu: float, step: float = LOWER_CELLS_STEP) -> Decomposition:
    r"""The quantised pair (:func:`quantised_pair`) on the uniform grid of ``step`` over
    :math:`[-8, 8]` σ around Δ/2 (:data:`LOWER_CELLS_HALF_WIDTH`): it dominates every threshold count of
    :data:`THRESHOLDS` (they are cuts of the grid).

    Parameters
    ----------
    mu : float
        Δ/σ.
    step : float
        Grid step in units of σ (a divisor of 0.5).

    Returns
    -------
    Decomposition
    """
    k = int(round(LOWER_CELLS_HALF_WIDTH / step))
    return quantised_pair(mu, tuple(float(x) for x in step * np.arange(-k, k + 1)))


#: Cuts of the likelihood-ratio cells (:func:`lower_layouts`) are rounded to multiples of this (units of σ) and
#: clipped to ±LR_CUT_LIMIT.
LR_CUT_ROUND = 0.125
LR_CUT_LIMIT = 20.0
#: Half-width (units of σ) of the fine cells around the critical cut s* of :func:`critical_cut`.
LR_FINE_HALF = 0.5
#: From FINE_MIN_N users on, finer layouts (their evaluation is cheap and accurate at large n): fine cells
#: around s* and over the bulk (LR_FINE_CUTS cuts), uniform cells (LR_UNIFORM_CUTS cuts) and, for Δ/σ below
#: LOWER_CELLS_MU_MAX (inclusive), the uniform grid of :func:`cells_lower`.
LR_FINE_CUTS = 15
LR_UNIFORM_CUTS = 31
LOWER_CELLS_MU_MAX = 1.0
#: From this Δ/σ on (a wide ratio range, where many cells make the certified evaluation loose at every n) an ε
#: query searches the threshold counts first at every n, and above LR_UNIFORM_MU_MAX the uniform cuts are left out
#: (their certified evaluation fails there and costs 50-100 ms).
LR_WIDE_MU = 2.0
LR_UNIFORM_MU_MAX = 2.5
#: Up to this n the uniform grid of :func:`cells_lower` joins (66 cells, enumerated exactly in well under 1 ms).
LR_GRID_MAX_N = 3
#: Up to this n the threshold counts of :data:`THRESHOLDS` join (cheap there, and at small n a single cut far in
#: the tail can beat the layouts) ...
LR_THRESHOLDS_MAX_N = 100
#: ... and up to this n also the 10 cells cut at every one of them (enumerated exactly there).
LR_THRESHOLD_CELLS_MAX_N = 16


#: :func:`critical_cut` is kept above minus this (units of σ): far beyond every cell, finite at every ε.
CRITICAL_CUT_FLOOR = 1e12


def critical_cut(mu: float, n: int, eps: float) -> float:
    r"""The cut s* (units of σ, relative to Δ/2) below which a single report decides the event of the pair
    (derived here).

    For the dataset (0 | Δ; others Δ) the shuffled output's likelihood ratio is :math:`\tfrac1n\sum_i r(y_i)`
    with :math:`r(y) = \varphi(y)/\varphi(y - \mu) = e^{\mu(\mu/2 - y)}` (units of σ), so
    :math:`\delta(\varepsilon) = \tfrac1n E[(\sum_{i=1}^n r(Y_i) - n e^\varepsilon)_+]` with :math:`Y_i \sim
    N(\mu, 1)`.  One report alone crosses the threshold when :math:`r(y) \ge 1 + n(e^\varepsilon - 1)` (the
    others at their mean), i.e. :math:`y \le \mu/2 + s^*`, :math:`s^* = -\log(1 + n(e^\varepsilon - 1))/\mu`.
    Above ε = 1 the logarithm is taken as :math:`\varepsilon + \log n + \log(1 - (1 - 1/n)e^{-\varepsilon})`
    (no overflow at any finite ε); the cut is kept above -:data:`CRITICAL_CUT_FLOOR` (far beyond every cell,
    whose cuts are clipped to ±LR_CUT_LIMIT), so it is finite at every ε.
    """
    eps = max(eps, 0.0)
    if eps <= 1.0:
        log_ratio = math.log1p(n * math.expm1(eps))
    else:
        log_ratio = eps + math.log(n) + math.log1p(-(1.0 - 1.0 / n) * math.exp(-eps))
    return max(-log_ratio / mu, -CRITICAL_CUT_FLOOR)


def _rounded_cuts(cuts) -> tuple:
    """Cuts rounded to LR_CUT_ROUND, clipped to ±LR_CUT_LIMIT (every cell keeps a positive normal probability
    under both inputs for Δ/σ <= MU_MAX), sorted, without repeats."""
    c = np.clip(np.round(np.asarray(cuts, dtype=np.float64) / LR_CUT_ROUND) * LR_CUT_ROUND, -LR_CUT_LIMIT,
                LR_CUT_LIMIT)
    return tuple(float(x) for x in np.unique(c))


def lower_layouts(mu: float, n: int, eps: float, thresholds: bool = True) -> list:
    r"""Quantised pairs (:func:`quantised_pair`) whose cells follow the likelihood ratio at (n, ε).

    The log-likelihood ratio of a report is affine in y (:func:`critical_cut`), so cells uniform in y are cells
    uniform in log-ratio: the cuts are placed where the ratio matters, at the critical cut s* (fine cells of
    width :data:`LR_FINE_HALF` around it) and over the bulk of the others' score variance (the integrand of
    :math:`\chi^2(N(0,1)\|N(\mu,1)) = e^{\mu^2} - 1` is centred at :math:`y = -\mu`, s = −3μ/2).

    * Below FINE_MIN_N users at most 7 cells (6 cuts): the certified evaluators are exact there (enumeration,
      binomial mixture), where many cells over a wide ratio range make their error bounds exceed the gain (the
      reason the uniform grid of :func:`cells_lower` was limited to Δ/σ < 1): three cuts at s* ± LR_FINE_HALF
      and three over the bulk; up to LR_THRESHOLDS_MAX_N users also six uniform cuts from below both to +1σ,
      the threshold counts of :data:`THRESHOLDS`, (up to LR_THRESHOLD_CELLS_MAX_N) the 10 cells cut at all of
      them and (up to LR_GRID_MAX_N) the uniform grid of :func:`cells_lower`; above LR_THRESHOLDS_MAX_N users
      and for Δ/σ <= LOWER_CELLS_MU_MAX, :data:`LR_UNIFORM_CUTS` uniform cuts (a narrow ratio range: accurate).
    * From FINE_MIN_N users: :data:`LR_FINE_CUTS` cuts (seven around s*, the rest over the bulk),
      :data:`LR_UNIFORM_CUTS` uniform cuts (Δ/σ <= LR_UNIFORM_MU_MAX), and for Δ/σ <= LOWER_CELLS_MU_MAX the
      grid of :func:`cells_lower`.
    * At every n: the single cuts at s* + k·LR_FINE_HALF, k = −2 … 2 (two cells: an exact binomial law,
      accurate where many cells are not).

    Any quantisation is a valid lower bound; the layouts only affect tightness (and the certified evaluation's
    accuracy: the query keeps the layout with the largest certified value, errors subtracted).  With
    ``thresholds`` False the threshold counts of :data:`THRESHOLDS` are left out (an ε query has searched them
    already).
    """
    s = critical_cut(mu, n, eps)
    bulk = -1.5 * mu
    h = LR_FINE_HALF
    uniform = tuple(np.linspace(min(s - 1.0, bulk - 2.5), 2.0, LR_UNIFORM_CUTS))
    if n < FINE_MIN_N:
        lay = [(s - h, s, s + h, bulk - 1.0, bulk + 0.5, 1.0)]
        if n <= LR_THRESHOLDS_MAX_N:
            lay.append(tuple(np.linspace(min(s - 1.0, bulk - 2.0), 1.0, 6)))
        elif mu <= LOWER_CELLS_MU_MAX:
            lay.append(uniform)
    else:
        lay = [tuple(np.concatenate([np.linspace(s - 3 * h / 2, s + 3 * h / 2, 7),
                                     np.linspace(bulk - 2.0, 1.5, LR_FINE_CUTS - 7)]))]
        if mu <= LR_UNIFORM_MU_MAX:
            lay.append(uniform)
    out, seen = [], set()
    for cuts in lay:
        key = _rounded_cuts(cuts)
        if key not in seen:
            seen.add(key)
            out.append(quantised_pair(float(mu), key))
    for k in (-2, -1, 0, 1, 2):                              # single cuts near s*: 2-atom laws, always accurate
        cut = _rounded_cuts((s + k * h,))
        if cut not in seen and cut[0] not in THRESHOLDS:
            seen.add(cut)
            out.append(quantised_pair(float(mu), cut))
    if n <= LR_THRESHOLDS_MAX_N and thresholds:
        out.extend(_threshold_lowers(float(mu)))
    if n <= LR_THRESHOLDS_MAX_N:
        if n <= LR_THRESHOLD_CELLS_MAX_N:
            out.append(quantised_pair(float(mu), tuple(float(x) for x in THRESHOLDS)))
        if n <= LR_GRID_MAX_N:
            out.append(cells_lower(float(mu)))
    elif n >= FINE_MIN_N and mu <= LOWER_CELLS_MU_MAX:
        out.append(cells_lower(float(mu)))
    return out


#: The accountant's quantised pairs sit at the critical cut of the round's typical ε (:func:`accounting_lowers`):
#: the asymptotic Gaussian-DP level sqrt((e^{μ²} − 1)/n) times this; above Δ/σ = 1 one more pair placed at μ²
#: times that level (the log-normal tail puts the round's ε well above it; the accountant keeps the candidate
#: whose composed total is largest).  Measured at Δ/σ = 2, δ = 1e-6: n = 1e5, 10 rounds' lower 0.703 -> 0.868,
#: 365 rounds' 1.194 -> 1.383; n = 1e3, 1 round 2.80 -> 3.87, 10 rounds 4.80 -> 5.43, 365 rounds unchanged.
#: A placement only: every probe gives a valid lower bound.
ACCOUNTING_PROBE_Z = 4.0


def accounting_lowers(mu: float, n: int) -> list:
    r"""The accountant's lower-bound datasets for n users: the quantised pairs of :func:`lower_layouts` (no
    threshold count) at the probe :math:`\varepsilon_p = \min(4\sqrt{(e^{\mu^2} - 1)/n},\ \varepsilon_{\rm
    local})` (three layouts), and above Δ/σ = 1 two of them and one at :math:`\mu^2\varepsilon_p` (capped the
    same way).

    Any quantisation of the reports is a post-processing of the concrete pair (0 | Δ; others Δ), so composing
    its optimistic privacy-loss buckets R times is a lower bound on the total (the accountant's argument G);
    the probe only places the fine cells.  :math:`\sqrt{(e^{\mu^2}-1)/n}` is the asymptotic Gaussian-DP
    level of the pair (the χ² divergence of :math:`N(0,1)` from :math:`N(\mu,1)` over n), an uncertified
    placement.
    """
    return list(_accounting_lowers(float(mu), int(n)))


@functools.lru_cache(maxsize=256)
def _accounting_lowers(mu: float, n: int) -> tuple:
    level = ACCOUNTING_PROBE_Z * math.sqrt(math.expm1(mu * mu) / n)
    local = _local_epsilon(mu, 1e-6)
    first = tuple(d for d in lower_layouts(mu, n, min(level, local)) if hasattr(d, "cuts"))
    if mu <= 1.0:
        return first[:3]
    heavy = tuple(d for d in lower_layouts(mu, n, min(level * mu * mu, local)) if hasattr(d, "cuts"))
    return first[:2] + heavy[:1]


def _charged(dec: Decomposition, charge: float) -> Decomposition:
    """Attach the additive ``delta_charge`` to a decomposition (informational; the bounds layer reads the
    mechanism's ``delta_charge``)."""
    object.__setattr__(dec, "delta_charge", float(charge))
    return dec


class _Proxy:
    """Shared behaviour of the fixed-truncation / fixed-n stand-ins that the bounds layer evaluates."""

    domain = None

    def lower_cases(self) -> list:
        return [(("type", "x2=x1"), f) for f in self.lower_decompositions()]

    def stronger_clone_decomposition(self):
        return None


@dataclass(frozen=True)
class _GaussianAt(_Proxy):
    """The Gaussian randomizer's bound at one truncation depth z (a finite decomposition plus its charge)."""

    mu: float
    z: float
    sigma: float
    sensitivity: float
    cells: int | None = None
    n: int | None = None
    name: ClassVar[str] = "gaussian"

    def _upper(self):
        cache = self.__dict__.get("_cache")
        if cache is None:
            dec, tau, eps_cut = gaussian_blanket(self.mu, self.z, _grid(self.mu, self.z, self.cells))
            cache = (_charged(dec, tau), tau, eps_cut)
            object.__setattr__(self, "_cache", cache)
        return cache

    @property
    def eps0(self) -> float:
        return self._upper()[2]

    @property
    def delta_charge(self) -> float:
        return self._upper()[1]

    @property
    def gamma(self) -> float:
        return float(2 * _sf(self.mu / 2))

    def upper_decompositions(self) -> list:
        return [self._upper()[0]]

    def lower_decompositions(self) -> list:
        if self.n is None:
            return _threshold_lowers(self.mu)
        return accounting_lowers(self.mu, self.n)

    def variation_ratio_beta(self):
        return float(1 - self.gamma), "total variation of N(0, σ²) and N(Δ, σ²)"

    def describe(self) -> dict:
        return {"mechanism": "gaussian", "sigma": self.sigma, "sensitivity": self.sensitivity}


def _tau(mu: float, z: float) -> float:
    return gaussian_delta(mu, mu * (mu / 2 + z))


class _StandIn(_NoMatrix, Mechanism):
    """Base of the randomizers bounded through a finite stand-in (:meth:`at_n`, what the bounds layer calls per
    n): their decompositions are the stand-in's at ``at_n(None)``, and they have no matrix form."""

    def decomposition(self, form: str = "simplified"):
        """The stand-in's first upper decomposition at ``at_n(None)`` (any valid ``form``: all give it).

        Parameters
        ----------
        form : {"simplified", "primary", "asymptotic"}
            Validated only.

        Returns
        -------
        Decomposition
        """
        _form(form)
        return self.upper_decompositions()[0]

    def upper_decompositions(self) -> list:
        """The stand-in's upper decompositions at ``at_n(None)``, carrying its ``delta_charge``.

        Returns
        -------
        list of Decomposition
        """
        return self.at_n(None).upper_decompositions()


@dataclass(frozen=True)
class Gaussian(_StandIn):
    r"""Gaussian randomizer :math:`R(x) = x + N(0, \sigma^2)` on inputs in an interval of length
    :math:`\Delta` (``sensitivity``).

    Not pure LDP (its privacy loss is unbounded): the upper bound is the blanket decomposition with a
    truncated, charged tail and a certified spread discretisation, minimised over a ladder of truncation
    depths; the lower bound is the exact divergence of a concrete dataset pair with quantised reports (module
    docstring).  ``eps0`` is the largest log-ratio of the accountant's truncated law (beyond it only the
    charged tail remains), not a local guarantee.

    The upper bound holds for every neighbouring pair: the extreme pair (differing user at the two end
    points of the interval) is the worst, by a convex-order argument on the blanket decomposition (module
    docstring, "Every pair of inputs").

    Parameters
    ----------
    sigma : float
        Noise standard deviation σ > 0 (same units as the inputs).
    sensitivity : float
        Length Δ > 0 of the input interval; Δ/σ must be at most :data:`MU_MAX`.

    Raises
    ------
    ParameterError
        ``'sigma'`` or ``'sensitivity'`` not a finite real > 0 (NaN, None, strings included), or Δ/σ
        above :data:`MU_MAX` (named ``'sigma'``).

    References
    ----------
    Balle, Bell, Gascón, Nissim, CRYPTO 2019 (blanket); Su, Cheng, Wang, IEEE S&P 2026, Theorems 12-14.
    """

    sigma: float
    sensitivity: float = 1.0
    name: ClassVar[str] = "gaussian"
    eps0_is_parameter: ClassVar[bool] = False
    no_matrix: ClassVar[str] = "the Gaussian randomizer has continuous outputs; no matrix form"
    param_specs: ClassVar[tuple[Parameter, ...]] = (
        Parameter("sigma", "real", minimum=0.0, open_minimum=True, doc="noise standard deviation σ (input units)"),
        Parameter("sensitivity", "real", minimum=0.0, open_minimum=True, default=1.0,
                  doc="length Δ of the input interval (input units)"))

    def __post_init__(self):
        s = _validate.real("sigma", self.sigma, lo=0.0, lo_open=True)
        d = _validate.real("sensitivity", self.sensitivity, lo=0.0, lo_open=True)
        for name, v in (("sigma", s), ("sensitivity", d)):
            if not isinstance(v, float):
                raise ParameterError(name, "must be a scalar")
        mu = d / s
        if not mu <= MU_MAX:
            raise ParameterError("sigma", f"sensitivity/sigma = {mu:.6g} is above {MU_MAX:g}: the Gaussian "
                                 "randomizer is then nearly revealing (its truncated tail would not fit the "
                                 "evaluators' range); increase sigma")
        object.__setattr__(self, "sigma", s)
        object.__setattr__(self, "sensitivity", d)

    @classmethod
    def from_params(cls, eps0=None, **params) -> "Gaussian":
        """Build from keyword parameters (``eps0`` is not a parameter of this randomizer).

        Parameters
        ----------
        eps0 : None
            Must be None (refused otherwise, naming ``eps0``).
        **params
            ``sigma`` and optionally ``sensitivity``.

        Returns
        -------
        Gaussian
        """
        if eps0 is not None:
            raise ParameterError("eps0", "the Gaussian randomizer takes sigma and sensitivity, not eps0")
        return cls(**params)

    @property
    def mu(self) -> float:
        """Δ/σ."""
        return self.sensitivity / self.sigma

    def at_depth(self, z: float, cells: int | None = None) -> _GaussianAt:
        r"""The bound at truncation depth z (cut at :math:`w_K = \mu/2 + z`).

        Parameters
        ----------
        z : float
            Depth in units of σ, > 0.
        cells : int, optional
            At most this many cells per side (default :data:`MAX_CELLS`).

        Returns
        -------
        object
            Mechanism-like stand-in: one spread decomposition with ``delta_charge`` = τ(z).
        """
        return _GaussianAt(self.mu, float(z), self.sigma, self.sensitivity, None if cells is None else int(cells))

    def at_n(self, n=None) -> _GaussianAt:
        """The accountant's stand-in: the truncation :data:`ACCOUNTING_Z`, the same for every n; with n, its
        lower-bound datasets are the quantised pairs of :func:`accounting_lowers` for n users.  The accountant's
        upper profile is the minimum over several truncations and the local profile (:mod:`shuffleamp.accounting`,
        argument J), the stand-in's largest log-ratio bounding its support.

        Parameters
        ----------
        n : int, optional
            Number of users (None: the threshold counts).

        Returns
        -------
        object
            As :meth:`at_depth`.
        """
        at = self.at_depth(ACCOUNTING_Z)
        return at if n is None else dataclasses.replace(at, n=int(n))

    @property
    def eps0(self) -> float:
        """Largest log-ratio of the accountant's truncated law (nats)."""
        return self.at_n().eps0

    @property
    def delta_charge(self) -> float:
        """The accountant's charged tail τ (added to every upper δ of its profile)."""
        return self.at_n().delta_charge

    @property
    def gamma(self) -> float:
        r"""Blanket mass :math:`\gamma = 2\Phi(-\Delta/(2\sigma))`."""
        return float(2 * _sf(self.mu / 2))

    def lower_decompositions(self) -> list:
        """Threshold-count Theorem-14 decompositions (dataset 0 | Δ; others Δ), one per threshold.

        Returns
        -------
        list of Decomposition
        """
        return _threshold_lowers(self.mu)

    def lower_cases(self) -> list:
        """Lower decompositions tagged with the dataset's shape (see :meth:`Mechanism.lower_cases`).

        Returns
        -------
        list of (tuple, Decomposition)
        """
        return [(("type", "x2=x1"), f) for f in self.lower_decompositions()]

    def variation_ratio_beta(self) -> tuple[float, str]:
        """Total variation of the extreme pair, 2Φ(Δ/(2σ)) − 1 (for the uncertified baselines).

        Returns
        -------
        beta : float
        source : str
        """
        return float(1 - self.gamma), "total variation of N(0, σ²) and N(Δ, σ²)"

    def describe(self) -> dict:
        """JSON-serialisable description.

        Returns
        -------
        dict
            ``{"mechanism": "gaussian", "sigma": σ, "sensitivity": Δ}``.
        """
        return {"mechanism": self.name, "sigma": self.sigma, "sensitivity": self.sensitivity}

    def bound_point(self, quantity: str, n: int, value: float, ctx: Settings, B):
        """One point of the default method: the minimum over truncation depths (see :func:`ladder_point`).

        Parameters
        ----------
        quantity : {"delta", "epsilon"}
        n : int
        value : float
            ε (for δ) or δ (for ε).
        ctx : Settings
            The call's settings (:class:`shuffleamp._registry.Settings`).
        B : module
            :mod:`shuffleamp.bounds` (handed in by it: this module sits below it).

        Returns
        -------
        (upper, lower, record)
        """
        return ladder_point(self, quantity, n, value, ctx, B)


def _lower_families(mech, B, n: int | None = None, eps: float | None = None, thresholds: bool = True):
    """The lower-bound datasets of one query: the likelihood-ratio quantised pairs of :func:`lower_layouts` at
    (n, ε) (with n and ε known; both orderings, the single cuts near s* in their own), else the threshold counts
    (:meth:`Gaussian.lower_decompositions`, both orderings)."""
    if n is None or eps is None:
        return B._with_swaps(mech.lower_decompositions())
    decs = lower_layouts(mech.mu, int(n), float(eps), thresholds)
    # the single cuts near s* (a far-tail report of the differing user at 0) in their own ordering only: the
    # other ordering's divergence there is negligible
    single = [d for d in decs if hasattr(d, "cuts") and len(d.cuts) == 1]
    return list(B._with_swaps([d for d in decs if not (hasattr(d, "cuts") and len(d.cuts) == 1)])) + single


#: The ε query searches the lower bound over the lower-bound dataset (an ordering) with the largest certified δ at
#: the probe ε, and over the next one too up to LR_THRESHOLDS_MAX_N users (searches are cheap there); any subset
#: of datasets gives a certified lower bound.
LOWER_SEARCH_KEEP = 1

#: From this n on, a lower-bound dataset whose certified evaluation was costly is first bounded from above by
#: its Chernoff bound (:func:`shuffleamp.decomposition.chernoff_bounds`, about 0.1 ms for all the datasets of one
#: call) and not evaluated when that bound shows it cannot change the result (:func:`_lower_values`).  Measured on
#: the seeded samples of bench/bench_continuous.py: at Δ/σ >= 6 and n = 4e5 - 7e5 the threshold counts and single
#: cuts far from the critical cut are evaluated by enumerating the n + 1 counts of a two-cell law (15 - 40 ms each)
#: to certify a δ of 0, up to ten times per query.
LOWER_SKIP_MIN_N = 10_000
#: ... a dataset is costly unless its last evaluation in the query was cheap: a closed form, a binomial-mixture sum,
#: a Chernoff or trivial bound, an enumeration of fewer than this many count vectors or a Bromwich integral of fewer
#: than this many atom x node evaluations.
LOWER_CHEAP_WORK = 10_000
#: Certified lower δ at or below this are not told apart by the root searches (:func:`shuffleamp._numerics.
#: inverse_monotone` compares log(max(δ, 1e-300)) with log(target), and δ <= target).
_NEGLIGIBLE_DELTA = 1e-300


def _enumerated(f: Decomposition, n: int, B) -> bool:
    """Whether the exact evaluator may enumerate the count vectors of ``f``'s law at n (when its binomial-mixture
    sum fails) and that enumeration has at least LOWER_CHEAP_WORK of them: two-atom laws from 1e4 to 1e6 users."""
    k = f.a.size + (f.beta > 0)
    return k <= 3 and LOWER_CHEAP_WORK <= math.comb(int(n) + k - 1, k - 1) <= B._exact.ENUMERATE_MAX


def _cheap(info, n: int, atoms: int) -> bool:
    """Whether an evaluation (max_delta's record) of a law with ``atoms`` atoms at n was cheap (see
    LOWER_CHEAP_WORK)."""
    how = (info or {}).get("evaluator")
    if how in ("binomial-mixture", "chernoff", "trivial", "closed"):
        return True
    if how == "enumeration":
        return math.comb(int(n) + atoms - 1, atoms - 1) < LOWER_CHEAP_WORK if atoms <= 4 else False
    if how == "exact":
        return (info.get("N") or 0) * atoms < LOWER_CHEAP_WORK
    return False


def _lower_values(fams, n: int, eps: float, ctx: Settings, B, keep: int = 1, target: float | None = None,
                  memo: dict | None = None) -> tuple:
    """(values, records): the certified lower δ at ε of each dataset of ``fams`` alone (``max_delta`` in the lower
    mode, evaluator errors included), None for a dataset not evaluated because it cannot be among the ``keep``
    largest values (nor, with ``target``, change a root search's comparisons).

    From LOWER_SKIP_MIN_N users on, the datasets whose last evaluation in the query was costly (``memo``: id ->
    whether the last evaluation was cheap, :func:`_cheap`; kept by the caller over one query) and those not yet
    evaluated whose law the exact evaluator may enumerate at length (:func:`_enumerated`) get their certified
    Chernoff upper bound U on the true δ first (:func:`shuffleamp.decomposition.chernoff_bounds`); the others are
    evaluated first (a query whose datasets are cheap pays nothing), then these in the order of decreasing U.
    One is skipped when U is below the ``keep``-th largest value evaluated so far (its certified lower value is at
    most its true δ, at most U: it cannot be among the ``keep`` largest), when U = 0 (its value is 0), or, with
    ``target``, when U <= _NEGLIGIBLE_DELTA and U < target (the root searches treat its value and 0 alike).  The
    values of the datasets evaluated, hence the ``keep`` largest, are exactly those of evaluating every dataset;
    this is a cost rule, not a bound."""
    k = len(fams)
    vals, infos = [None] * k, [None] * k
    memo = {} if memo is None else memo
    check = [i for i, f in enumerate(fams) if n >= LOWER_SKIP_MIN_N and isinstance(f, Decomposition)
             and (memo.get(id(f)) is False or (id(f) not in memo and _enumerated(f, n, B)))]
    ub = np.full(k, np.inf)
    if check:
        ub[check] = chernoff_bounds([fams[i] for i in check], n, eps)
    found = []
    for i in np.argsort(-ub, kind="stable"):
        u = ub[i]
        kth = sorted(found, reverse=True)[keep - 1] if len(found) >= keep else -1.0
        if u < kth or u == 0.0 or (target is not None and u <= _NEGLIGIBLE_DELTA and u < target):
            continue
        f = fams[i]
        vals[i], infos[i] = B.max_delta([f], n, eps, B.LOWER_MODE, ctx.rtol_lower, ctx.max_grid, ctx.evaluator)
        if isinstance(f, Decomposition):
            memo[id(f)] = _cheap(infos[i], n, f.a.size + (f.beta > 0))
        found.append(vals[i])
    return vals, infos


def _lower_max(fams, n: int, eps: float, ctx: Settings, B, target: float, memo: dict) -> tuple:
    """``max_delta(fams, n, eps, LOWER_MODE, ...)`` (value and the record of the first dataset reaching it), with
    the datasets that cannot reach it skipped (:func:`_lower_values` with ``target``: the value is the same, or both
    at most _NEGLIGIBLE_DELTA and below the target)."""
    vals, infos = _lower_values(fams, n, eps, ctx, B, 1, target, memo)
    best, info = 0.0, None
    for v, inf_ in zip(vals, infos):
        if v is not None and (info is None or v > best):
            best, info = v, inf_
    if info is None:
        info = {"delta": 0.0, "mode": "lower", "evaluator": "chernoff", "delta_error": 0.0,
                "pair": getattr(fams[0], "label", "") if len(fams) else ""}
    return best, info


def _rank_lowers(lo_f, n: int, eps: float, keep: int, ctx: Settings, B, memo: dict | None = None) -> tuple:
    """(kept, largest): the ``keep`` datasets of ``lo_f`` with the largest certified lower δ at ε (evaluator errors
    included, so a layout whose evaluation is loose ranks low) and that largest value; (None, 0) when every value
    is 0 (the caller falls back to the saddle-point ranking).  Datasets that cannot be among the ``keep`` largest
    are not evaluated (:func:`_lower_values`)."""
    got, _ = _lower_values(lo_f, n, eps, ctx, B, keep, None, memo)
    vals = [-1.0 if v is None else v for v in got]
    if max(vals, default=0.0) <= 0.0:
        return None, 0.0
    order = np.argsort(vals)[::-1][:keep]
    return [lo_f[i] for i in order if vals[i] > 0.0], float(vals[order[0]])


#: Above LR_UNIFORM_MU_MAX an ε query ranks only the single cuts when its probe ε is at least this (nats): there a
#: single report far in the tail decides the event; at smaller ε (very large n) the fine layout can win.
SINGLE_CUTS_MIN_EPS = 1.0


def _ranked_layouts(decs: list, mu: float, n: int, eps: float) -> list:
    """The datasets an ε query ranks (:func:`_rank_lowers`) from FINE_MIN_N users on: of :func:`lower_layouts`, for
    Δ/σ <= LOWER_CELLS_MU_MAX the uniform grid of :func:`cells_lower` only (both orderings), up to
    LR_UNIFORM_MU_MAX all, above it and at a probe ε of at least SINGLE_CUTS_MIN_EPS the single cuts near s* only;
    below FINE_MIN_N users all.

    Measured on the seeded sample of bench/bench_continuous.py (282 rankings from FINE_MIN_N users on): the
    datasets left out here were never the one kept (at Δ/σ <= 1 the single cuts in none of 97 rankings, the fine
    and uniform layouts in none of 35; above LR_UNIFORM_MU_MAX the fine layout in none of 24), and ranking them
    cost 1 - 6 ms per query; on two more samples (seeds 1 and 2, 150 cases each) the lower bounds were the same.
    Any subset of datasets gives a certified lower bound: this is a placement, not a bound."""
    if n < FINE_MIN_N:
        return decs
    out = []
    for d in decs:
        cuts = getattr(d, "cuts", None)
        if cuts is None:
            cuts = getattr(getattr(d, "_swap_of", None), "cuts", None)
        if cuts is None:
            out.append(d)                                   # a threshold count
        elif mu <= LOWER_CELLS_MU_MAX:
            if len(cuts) == 2 * int(round(LOWER_CELLS_HALF_WIDTH / LOWER_CELLS_STEP)) + 1:
                out.append(d)
        elif len(cuts) == 1 or mu <= LR_UNIFORM_MU_MAX or eps < SINGLE_CUTS_MIN_EPS:
            out.append(d)
    return out or decs


#: From this Δ/σ on (LR_WIDE_MU), FINE_MIN_N users and a probe ε of SINGLE_CUTS_MIN_EPS or more, when the kept
#: datasets' certified lower δ at the probe exceeds the target, their lower root is searched inside [probe, ε_hi]
#: (:func:`_bracketed_lower`) instead of by the compiled search, whose lower side steps far below
#: the root, where at large n the evaluation of these wide laws fails (it returns 0) and costs 1e6 nodes per point
#: (measured: Δ/σ = 7.9, n = 5.4e8: 1.3 s -> 0.1 s).  At smaller ε or n the compiled search is the cheaper one.
BRACKETED_LOWER_MU = LR_WIDE_MU


def _bracketed_lower(fams, n: int, target: float, lo: float, hi: float, ctx: Settings, B, memo: dict | None = None):
    """Certified lower ε at δ = target of the datasets ``fams`` when their certified lower δ at ``lo`` exceeds the
    target: the infeasible end of :func:`shuffleamp._numerics.inverse_monotone` on [lo, hi] (an evaluated ε whose
    certified lower δ exceeds the target; ``lo`` itself at worst).  Each point is the largest certified lower δ of
    the datasets, those that cannot change the search skipped (:func:`_lower_max`).  Returns (ε, evaluation
    record)."""
    memo = {} if memo is None else memo
    fams = list(fams)

    def fn(e):
        return _lower_max(fams, n, e, ctx, B, target, memo)
    # first inside [lo, 1.1 lo] (the root lies a few per cent above the probe; far above it the wide laws' lower
    # values are 0 and the root finder crawls), then above
    mid = min(1.1 * lo, hi)
    br = inverse_monotone(fn, target, lo, mid, side="lower", rel_tol=ctx.eps_rtol, accelerate=True)
    if br.feasible is None and mid < hi:
        br = inverse_monotone(fn, target, mid, hi, side="lower", rel_tol=ctx.eps_rtol, accelerate=True)
    if br.infeasible is None:
        return 0.0, None
    return float(br.infeasible), br.infeasible_info


#: The ε query re-centres the layouts once at its first lower root when the critical log-ratio μ·s* moves by at
#: least this (nats): the layouts of the upper ε put the fine cells where a report
#: decides the event at the upper ε.
LOWER_RECENTRE = 0.5
#: Without a threshold-count root the first probe is this fraction of the upper ε (the lower root sits at about
#: 0.75-0.85 of it at large n, where this probe is used).
LOWER_PROBE_FRACTION = 0.8


def _search_lower(fams, n: int, target: float, eps_hi: float, ctx: Settings, B):
    """Certified lower ε at δ = target of the datasets ``fams``: the compiled search of the bounds layer ``B``,
    run with the same families on both sides (its lower result).  Returns (ε, evaluation record)."""
    sub = ctx.with_(upper_families=list(fams), lower_families=list(fams), binary_rr_eps0=None)

    class _Hi:
        eps0 = eps_hi
    _, lo, rec = B._optimal_epsilon_families(_Hi, n, target, sub, list(fams), list(fams))
    return (0.0 if lo is None else lo), rec.get("lower")


#: Wide laws at many users (Δ/σ >= BRACKETED_LOWER_MU, n >= FINE_MIN_N): the threshold counts' lower root is
#: searched upwards from this fraction of their estimated root (when their certified δ there exceeds the target),
#: instead of by the compiled search, whose lower side walks down from ``eps_hi`` through points that cost up to
#: 1e6 nodes each and certify nothing (σ = 0.126, n = 5.4e8, δ = 3.5e-9: 0.69 s -> about 0.03 s).
THRESHOLD_PROBE_FRACTION = 0.9
#: ... and no further than this multiple of the estimated root (far above it the wide laws' lower values are 0
#: and the root finder crawls; a root above it leaves the largest certified point below it, still a lower bound).
THRESHOLD_BRACKET_TOP = 1.25
#: ... to this relative tolerance: the threshold counts' root places the quantised pairs' probe (their lower
#: bound, searched to the query's tolerance, is almost always the larger), and their certified δ falls from
#: 1e-5 to 1e-19 within 1e-6 of the root, where a fine search costs 20 evaluations.
THRESHOLD_PROBE_RTOL = 1e-2


def _threshold_lower(kept, n: int, target: float, eps_hi: float, mu: float, ctx: Settings, B,
                     memo: dict | None = None):
    """Certified lower ε at δ = target of the threshold counts ``kept``: for wide laws at many users the
    bracketed search from THRESHOLD_PROBE_FRACTION of their (uncertified) estimated root, when the certified
    lower δ there exceeds the target (any ε whose certified lower δ exceeds the target is a lower bound: this is
    a placement); else, or when that finds nothing, the compiled search.  Returns (ε, evaluation record)."""
    if mu >= BRACKETED_LOWER_MU and n >= FINE_MIN_N:
        est = B.estimate_root(kept, n, target, eps_hi * (1 - 1e-12))
        if math.isfinite(est) and est > 0.0:
            probe = THRESHOLD_PROBE_FRACTION * est
            _, top = _rank_lowers(kept, n, probe, 1, ctx, B, memo)
            if top > target:
                lo, info = _bracketed_lower(kept, n, target, probe, min(THRESHOLD_BRACKET_TOP * est, eps_hi),
                                            ctx.with_(eps_rtol=max(ctx.eps_rtol, THRESHOLD_PROBE_RTOL)), B, memo)
                if lo > 0.0:
                    return lo, info
    return _search_lower(kept, n, target, eps_hi, ctx, B)


def _lower_epsilon(mech, n: int, target: float, eps_probe: float, eps_hi: float, ctx: Settings, B):
    """Certified lower ε at δ = target (the largest of certified lower bounds, each sound on its own):

    1. below FINE_MIN_N users or from Δ/σ = LR_WIDE_MU on (where the upper ε can be far above the root): the
       threshold counts (:meth:`Gaussian.lower_decompositions`, two-cell laws, always accurately evaluated), the
       :data:`LOWER_SEARCH_KEEP` + 1 with the largest saddle-point estimate of the root searched together;
    2. the quantised pairs of :func:`lower_layouts` at the probe ε (the root of step 1, else
       :data:`LOWER_PROBE_FRACTION` of ``eps_probe``, the query's upper ε), the :data:`LOWER_SEARCH_KEEP` (plus one up to LR_THRESHOLDS_MAX_N users) with the
       largest certified δ at the probe searched; then once more with the layouts and the probe at that root
       when its critical log-ratio moved by :data:`LOWER_RECENTRE` or more.

    Returns (ε, evaluation record, families searched last)."""
    mu = mech.mu
    best, best_info, best_f = 0.0, None, []
    memo = {}                                   # dataset id -> whether its last evaluation was cheap
    if n < FINE_MIN_N or mu >= LR_WIDE_MU:
        thr = B._with_swaps(mech.lower_decompositions())
        kept = B.keep_largest_roots(thr, n, target, eps_hi, LOWER_SEARCH_KEEP + 1)
        best, best_info = _threshold_lower(kept, n, target, eps_hi, mu, ctx, B, memo)
        best_f = kept
    probe = best if best > 0.0 else LOWER_PROBE_FRACTION * eps_probe
    for _ in range(2):
        lo_f = _ranked_layouts(_lower_families(mech, B, n, probe, thresholds=not best_f), mu, n, probe)
        keep = LOWER_SEARCH_KEEP + (n <= LR_THRESHOLDS_MAX_N)
        kept, top = _rank_lowers(lo_f, n, probe, keep, ctx, B, memo)
        if kept is None:
            kept = B.keep_largest_roots(lo_f, n, target, eps_hi, keep)
        if mu >= BRACKETED_LOWER_MU and n >= FINE_MIN_N and probe >= SINGLE_CUTS_MIN_EPS and top > target:
            lo, info = _bracketed_lower(kept, n, target, probe, eps_hi, ctx, B, memo)
        else:
            lo, info = _search_lower(kept, n, target, eps_hi, ctx, B)
        if lo > best:
            best, best_info, best_f = lo, info, kept
        if lo <= 0.0 or mu * abs(critical_cut(mu, n, lo) - critical_cut(mu, n, probe)) < LOWER_RECENTRE:
            break
        probe = lo
    return best, best_info, best_f


#: Truncation depths are multiples of this (units of σ), so that an ε query and the δ query at its answer cut
#: at the same depth.
DEPTH_STEP = 0.125


@functools.lru_cache(maxsize=256)
def _depth_for(mu: float, charge: float) -> float:
    """The shallowest truncation depth z on the grid of DEPTH_STEP whose charged tail τ(z) is at most ``charge``
    (any z is sound: its own τ is what is charged), within [0.5, 40] (cached: an ε query asks it twice)."""
    from scipy.optimize import brentq

    f = lambda z: math.log(max(_tau(mu, z), 1e-320)) - math.log(charge)       # noqa: E731 - decreasing in z
    if f(0.5) <= 0.0:
        return 0.5
    if f(40.0) >= 0.0:
        return 40.0
    z = float(brentq(f, 0.5, 40.0, xtol=1e-6))
    z = math.ceil(z / DEPTH_STEP - 1e-9) * DEPTH_STEP
    while z < 40.0 and f(z) > 0.0:
        z += DEPTH_STEP
    return z


def _first_evaluator(mech: "Gaussian", n: int, evaluator: str) -> str:
    """The evaluator of the first cut: the certified FFT engine when n >= FFT_FIRST_MIN_N, n γ <=
    FFT_FIRST_BLANKET and Δ/σ >= FFT_FIRST_MU (few blanket draws of a wide law: the heavy atom at 0 keeps the
    Bromwich integrand from decaying), else the requested one."""
    if (evaluator == "exact" and n >= FFT_FIRST_MIN_N and n * mech.gamma <= FFT_FIRST_BLANKET
            and mech.mu >= FFT_FIRST_MU):
        return "fft"
    return evaluator


#: Up-front time estimate of a Bromwich evaluation of a truncated law whose largest log-ratio is ε_K = μ w_K:
#: about CUT_SECONDS_REF at ε_K = CUT_LOG_RATIO_REF, growing e-fold every CUT_LOG_RATIO_SCALE nats (measured on
#: the 2-core machine over n = 1e4 .. 1e9; order of magnitude only).
CUT_SECONDS_REF = 2.0
CUT_LOG_RATIO_REF = 31.0
CUT_LOG_RATIO_SCALE = 5.0


def _refuse_if_costly(mu: float, z: float, n: int, evaluator: str, cells: int | None, B) -> None:
    """Refuse up front (ResourceLimitError naming ``sigma``) when the Bromwich evaluation of the cut at depth z
    would exceed the time budget (:func:`shuffleamp._numerics.refuse_if_costly`, estimate above).  A cut whose law
    (``cells`` per side, :func:`_grid`) the exact evaluator enumerates at this n (at most ``exact.ENUMERATE_MAX``
    count vectors: n = 2, 3) never integrates, whatever its ratios: no refusal (measured: Δ/σ = 5 - 8, n = 2, 3,
    δ = 1e-6 .. 1e-12: 3 - 4 ms, where the estimate above said 17 s - 7e5 s)."""
    if evaluator != "exact":
        return
    atoms = 2 * (_grid(mu, z, cells).size - 1) + 1
    if B._exact._enum_ok(int(n), atoms, B._exact.ENUMERATE_MAX)[atoms]:
        return
    eps_cut = mu * (mu / 2 + z)
    seconds = CUT_SECONDS_REF * math.exp(min((eps_cut - CUT_LOG_RATIO_REF) / CUT_LOG_RATIO_SCALE, 700.0))
    refuse_if_costly(f"Gaussian randomizer, Δ/σ = {mu:.4g}, n = {n}: the truncated law spans log-ratios up to "
                     f"{eps_cut:.3g}", "sigma", seconds=seconds,
                     hint="increase sigma (or raise max_seconds)")


#: Atom x frequency evaluations per second assumed for the compiled ε search of one cut
#: (:func:`shuffleamp.search.search_work_rate`).  Measured on the 2-core machine: 7e8 - 1.1e9 /s idle on the
#: 241-atom cuts (1.7 - 2.7e8 evaluations per point at Δ/σ ~ 4.5 - 5.8), about 3e8 /s at load 3; at the library's
#: default rate (exact.WORK_RATE) the search of such a cut stops after its first point and is redone point by point
#: in Python (Δ/σ = 4.48, n = 4626, δ = 1.1e-9: 2.4 s of CPU instead of 0.9 s).
CUT_SEARCH_RATE = 2e8


def _cut_cells(n: int):
    """At most SMALL_N_CELLS cells per side below FINE_MIN_N users (cost: atoms x integrand nodes), else the
    default grid."""
    return SMALL_N_CELLS if n < FINE_MIN_N else None


#: The big-jump bound (module docstring, "Big-jump bound"): the second-jump term is kept below this share of the
#: target δ (it sets the cut) ...
BIG_JUMP_SECOND_SHARE = 1e-3
#: ... the tilts θ of the Chernoff term form a log-spaced grid of this many points per ε ...
BIG_JUMP_THETAS = 64
#: ... and the shifts are C = f n (e^ε − 1) for f on this grid.
BIG_JUMP_SHIFTS = np.concatenate([[0.0], np.logspace(-10.0, -0.0625, 64), 1.0 - np.logspace(-1.0, -7.0, 13)])
#: The big-jump bound answers in place of the truncation ladder when the ladder's first cut spans log-ratios of at
#: least this (nats; its Bromwich evaluation then costs 0.1 - 1 s and is loose on the heavy far tail) and the bound
#: certifies below the local Gaussian mechanism.  Measured on the seeded sample of bench/bench_continuous.py: from
#: a first cut at 22.7 nats on the big-jump ε was below the ladder's in 9 of 10 cases (by up to 11 %; above it by
#: 0.7 % in one), and it answered 3 of the 4 cases the ladder's cost refused; below 19 nats the ladder was tighter.
#: Off the sample (σ = 0.25 - 0.35, n = 300 - 5000, δ = 1e-6, first cuts of 21 - 28 nats) the ladder was up to 7 %
#: tighter in three cases and up to 12 % looser in three: a cost rule, not a tightness one.
BIG_JUMP_MIN_LOG_RATIO = 20.0
#: Up to this many expected blanket draws nγ the bound also carries its shift on the draws (C = s·M, see
#: :func:`_big_jump_per_draw`): with few draws the others' sum is often 0, which a fixed shift C must pay for ...
BIG_JUMP_PER_DRAW_MAX = 400.0
#: ... with the per-draw shifts s = f (e^ε − 1)/γ for f on this grid.
BIG_JUMP_PER_DRAW_SHIFTS = np.concatenate([np.logspace(-8.0, -0.25, 16), 1.0 - np.logspace(-1.0, -5.0, 5)])
#: The bound is evaluated up to this ε (nats; e^ε times the largest ratio stays in the float range); beyond it the
#: local mechanism's profile, 0 to double precision there, answers.
BIG_JUMP_MAX_EPS = 600.0
#: Relative rounding slack of n·log M(θ) per unit of n (the log-MGF of at most a few hundred atoms is computed to
#: well within 1e-13 absolute, relative to max(1, |log M|)).
_LOG_MGF_SLACK = 1e-13


def _big_jump_second(mu: float, n: int, z: float) -> float:
    r"""The second-jump term :math:`(n-1)\,\bar\Phi(\mu + z)\,\tau(z)` of the cut at depth z, rounded up."""
    v = (n - 1) * float(_sf(mu + z)) * _tau(mu, z)
    return float(np.nextafter(v * (1 + 1e-12), np.inf))


def big_jump_depth(mu: float, n: int, share: float) -> float:
    """The shallowest depth z on the grid of DEPTH_STEP (within [0.5, 40]) whose second-jump term is at most
    ``share`` (any z is sound: its own term is what is charged)."""
    if share <= 0.0:
        return 40.0
    f = lambda z: math.log(max(_big_jump_second(mu, n, z), 1e-320)) - math.log(share)   # noqa: E731 - decreasing
    if f(0.5) <= 0.0:
        return 0.5
    if f(40.0) >= 0.0:
        return 40.0
    lo, hi = 0.5, 40.0
    while hi - lo > DEPTH_STEP:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if f(mid) <= 0.0 else (mid, hi)
    z = math.ceil(lo / DEPTH_STEP - 1e-9) * DEPTH_STEP
    while z < 40.0 and f(z) > 0.0:
        z += DEPTH_STEP
    return z


@functools.lru_cache(maxsize=256)
def _big_jump_law(mu: float, z: float) -> tuple:
    """(a/c, b/c, c, β, log A_K) of the spread truncated law at depth z (:func:`gaussian_blanket`)."""
    dec, _, eps_cut = gaussian_blanket(mu, z)
    return dec.a / dec.c, dec.b / dec.c, np.asarray(dec.c), float(dec.beta), float(eps_cut)


def big_jump_delta(mu: float, n: int, eps: float, z: float) -> float:
    r"""Certified upper δ(ε) of the Gaussian randomizer by the big-jump bound at depth z (module docstring):

    .. math::

        \delta(\varepsilon) \le \min_{C}\Big[\min_\theta \frac{e^{nK_\varepsilon(\theta) + \theta C}}{e\,\theta\,n}
        + \delta_{\rm loc}\big(\log(A_K + C)\big)\Big] + (n-1)\,\bar\Phi(\mu + z)\,\tau(z),

    :math:`K_\varepsilon` the log-MGF of the spread truncated law, C = f n (e^ε − 1) over
    :data:`BIG_JUMP_SHIFTS`, θ over a grid of :data:`BIG_JUMP_THETAS` tilts (any C ≥ 0 and θ > 0 give a bound);
    up to :data:`BIG_JUMP_PER_DRAW_MAX` expected blanket draws also with the shift carried by the draws
    (:func:`_big_jump_per_draw`; module docstring, "Big-jump bound").

    Parameters
    ----------
    mu : float
        Δ/σ.
    n : int
        Number of users, >= 1.
    eps : float
        ε >= 0 (nats).
    z : float
        Depth of the cut (units of σ).

    Returns
    -------
    float
        The bound (rounded up; may exceed 1).
    """
    first, second = _big_jump_terms(mu, n, eps, z)
    return float(np.nextafter(first + second, np.inf))


def _big_jump_terms(mu: float, n: int, eps: float, z: float) -> tuple:
    """(first two terms minimised over the grids, second-jump term) of :func:`big_jump_delta`, each rounded up."""
    if not eps <= BIG_JUMP_MAX_EPS:
        return math.inf, _big_jump_second(mu, n, z)          # e^ε beyond the float range: no bound here
    ra, rb, c, beta, eps_cut = _big_jump_law(float(mu), float(z))
    n = int(n)
    x = math.exp(eps)
    v = ra - x * rb
    vmax = float(v.max())
    shift = n * math.expm1(eps)
    C = shift * BIG_JUMP_SHIFTS
    A_K = math.exp(eps_cut)
    lo = math.log(1e-3 / (shift + A_K + 1.0))
    hi = math.log(1e3 / max(vmax, 1e-300)) if vmax > 0 else lo + 40.0
    hi = max(hi, lo + 5.0)
    theta = np.exp(np.linspace(lo, hi, BIG_JUMP_THETAS))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        t = theta[:, None] * v[None, :]
        tmax = t.max(axis=1)
        # log M(θ) = log(β + Σ c e^{θv}): log1p of the (small) deviation from the total mass where it is small,
        # else shifted log-sum-exp
        near = tmax < 1.0
        dev = (np.expm1(np.minimum(t, 1.0)) * c).sum(axis=1) + (beta + math.fsum(c) - 1.0)
        big = tmax[:, None]
        lse = tmax + np.log(beta * np.exp(-tmax) + (c * np.exp(t - big)).sum(axis=1))
        logm = np.where(near, np.log1p(np.maximum(dev, -1.0 + 1e-300)), lse)
    nl = n * logm + n * _LOG_MGF_SLACK * (1.0 + np.abs(logm)) + 1e-12
    with np.errstate(over="ignore", invalid="ignore"):
        expo = nl[None, :] + theta[None, :] * C[:, None] - 1.0 - np.log(theta * n)[None, :]
        expo = np.where(np.isnan(expo), np.inf, expo)
        t1 = np.exp(np.minimum(expo.min(axis=1), 709.0))
    t2 = gaussian_delta(mu, np.log(A_K + C)) * (1 + 1e-12)
    first = float((t1 + t2).min())
    gamma = 1.0 - beta
    if 0.0 < n * gamma <= BIG_JUMP_PER_DRAW_MAX and n > 1:
        first = min(first, _big_jump_per_draw(n, eps, theta, v, c, beta, A_K, mu))
    return first, _big_jump_second(mu, n, z)


def _big_jump_per_draw(n: int, eps: float, theta, v, c, beta: float, A_K: float, mu: float) -> float:
    r"""The first two terms of the big-jump bound with the shift carried by the blanket draws: C = s·M, M the
    number of users whose G is not the atom at 0 (module docstring): the Chernoff term
    :math:`\min_	heta (eta + e^{	heta s}\sum_j c_j e^{	heta v_j})^n/(e	heta n)` and
    :math:`E\,\delta_{
m loc}(\log(A_K + s(1 + M')))`, M' ~ Bin(n − 1, γ), over the shifts s = f (e^ε − 1)/γ (f on
    BIG_JUMP_PER_DRAW_SHIFTS); the binomial window's tails are charged at the window's worst end."""
    gamma = math.fsum(c)                                    # probability of a blanket draw (= 1 − β)
    S = BIG_JUMP_PER_DRAW_SHIFTS * (math.expm1(eps) / gamma)
    # larger tilts too: when every shifted draw stays negative, the Chernoff term falls like 1/θ as θ grows
    theta = np.concatenate([theta, theta[-1] * np.exp(np.linspace(1.0, 600.0, 16))])
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        t = theta[:, None] * v[None, :]
        tmax = t.max(axis=1)
        lnz = tmax + np.log((c * np.exp(t - tmax[:, None])).sum(axis=1))     # log Σ c e^{θv}
        logm = np.logaddexp(math.log(beta), theta[None, :] * S[:, None] + lnz[None, :])
        nl = n * logm + n * _LOG_MGF_SLACK * (1.0 + np.abs(logm)) + 1e-12
        expo = nl - 1.0 - np.log(theta * n)[None, :]
        expo = np.where(np.isnan(expo), np.inf, expo)           # a tilt whose exponent overflowed: no bound
        t1 = np.exp(np.minimum(expo.min(axis=1), 709.0))
    mean, sd = (n - 1) * gamma, math.sqrt((n - 1) * gamma * (1 - gamma))
    m_lo, m_hi = max(0, int(mean - 12 * sd - 2)), int(math.ceil(mean + 12 * sd + 10))
    m = np.arange(m_lo, m_hi + 1)
    k = n - 1
    pmf = np.exp(gammaln(k + 1.0) - gammaln(m + 1.0) - gammaln(k - m + 1.0) + m * math.log(gamma)
                 + (k - m) * math.log1p(-gamma)) * (1 + 1e-6)           # log-gamma round-off: < 1e-9 relative
    below = float(bdtr(m_lo - 1, k, gamma)) * (1 + 1e-6) if m_lo > 0 else 0.0
    above = float(bdtrc(m_hi, k, gamma)) * (1 + 1e-6)
    loc = gaussian_delta(mu, np.log(A_K + S[:, None] * (1.0 + m[None, :])))       # decreasing in m
    t2 = (loc * pmf[None, :]).sum(axis=1) + below * gaussian_delta(mu, np.log(A_K + S)) + above * loc[:, -1]
    return float(((t1 + t2) * (1 + 1e-9)).min())


def big_jump_epsilon(mu: float, n: int, delta: float, eps_hi: float, rel_tol: float):
    """Certified upper ε(δ) of the big-jump bound (an evaluated ε whose bound is at most δ), searched on
    [ε_min, ``eps_hi``] with :func:`shuffleamp._numerics.inverse_monotone`; None when it certifies nothing below
    ``eps_hi``.  The cut is :func:`big_jump_depth` at :data:`BIG_JUMP_SECOND_SHARE` of δ, and ε_min is where the
    fixed-shift middle term alone reaches δ (the bound is above δ below it; 0 when the shift on the draws is
    tried too).  Returns (ε, z) or None."""
    z = big_jump_depth(mu, n, BIG_JUMP_SECOND_SHARE * delta)
    fn = lambda e: (big_jump_delta(mu, n, e, z), None)     # noqa: E731
    if fn(eps_hi)[0] > delta:
        return None
    _, _, c, beta, eps_cut = _big_jump_law(float(mu), float(z))
    e_loc = _local_epsilon(mu, delta)
    # below ε_min the fixed shifts cannot bring the middle term under δ; the shift on the draws can exceed
    # n (e^ε − 1), so with it the search starts at 0
    per_draw = 0.0 < n * (1.0 - beta) <= BIG_JUMP_PER_DRAW_MAX and n > 1
    lo = math.log1p(max(math.exp(e_loc) - math.exp(eps_cut), 0.0) / n) if e_loc < 700 and not per_draw else 0.0
    lo = min(max(lo, 0.0), eps_hi)
    br = inverse_monotone(fn, delta, lo, eps_hi, side="upper", rel_tol=rel_tol, accelerate=True)
    return None if br.feasible is None else (float(br.feasible), z)


def _first_fraction(mu: float, n: int) -> float:
    """Charge of an ε query's first cut as a fraction of δ (:data:`SHALLOW_FRACTION` from Δ/σ = SHALLOW_FIRST_MU
    and FINE_MIN_N users on, else :data:`FIRST_FRACTION`)."""
    return SHALLOW_FRACTION if mu >= SHALLOW_FIRST_MU and n >= FINE_MIN_N else FIRST_FRACTION


def _heavy_cut(mu: float, n: int, delta: float) -> bool:
    """Whether an ε query at ``delta`` starts at a cut spanning log-ratios of at least BIG_JUMP_MIN_LOG_RATIO (where
    the big-jump bound answers in place of the ladder)."""
    return mu * (mu / 2 + _depth_for(mu, _first_fraction(mu, n) * delta)) >= BIG_JUMP_MIN_LOG_RATIO


#: A δ query moves the big-jump cut to the one an ε query at its value would use at most this many times.
BIG_JUMP_RECENTRE = 8


def _big_jump_delta_query(mu: float, n: int, eps: float, level: float) -> tuple:
    """(δ, z): the big-jump bound at ε on the cut for δ = ``level`` (:func:`big_jump_depth`), then on the cut an ε
    query at the value of its other terms would use, until that cut stops moving (at most BIG_JUMP_RECENTRE times);
    the smallest (each is a certified bound)."""
    z = big_jump_depth(mu, n, BIG_JUMP_SECOND_SHARE * level)
    first, second = _big_jump_terms(mu, n, eps, z)
    best = (float(np.nextafter(first + second, np.inf)), z)
    for _ in range(BIG_JUMP_RECENTRE):
        z2 = big_jump_depth(mu, n, BIG_JUMP_SECOND_SHARE * min(max(first, 1e-300), 1.0))
        if z2 == z:
            break
        z = z2
        first, second = _big_jump_terms(mu, n, eps, z)
        best = min(best, (float(np.nextafter(first + second, np.inf)), z))
    return best


#: The FFT engine's retry of a loose cut (ε query, below FINE_MIN_N users) stops when its bracket is this narrow
#: (relative; tighter than the compiled search's soft gap on expensive evaluations, ``search.SOFT_GAP`` = 1e-5).
#: Measured on the seeded sample's six retries: 1e-6 costs 0.6 - 0.9x of the former unbracketed search, answers
#: within 3e-7 of it; 1e-7 costs 0.8 - 1x.
FFT_RETRY_RTOL = 1e-6


def _fft_retry(fams, n: int, target: float, lo: float, hi: float, ctx: Settings, B) -> tuple:
    """Certified upper ε at δ = target of the cut ``fams`` by the certified FFT engine, searched inside [lo, hi]
    (:func:`shuffleamp._numerics.inverse_monotone`: an evaluated ε whose certified δ is at most the target): lo a
    certified lower ε of the randomizer (its δ there is above the target, so is every upper bound's), hi the loose
    upper ε of the same cut by the exact evaluator.  Returns (ε, record), (inf, {}) when the engine does not certify
    hi.  Each evaluation costs 5 - 15 ms."""
    def fn(e):
        return B.max_delta(list(fams), n, e, "spread", ctx.rtol, ctx.max_grid, "fft")
    br = inverse_monotone(fn, target, lo, hi, side="upper", rel_tol=max(ctx.eps_rtol, FFT_RETRY_RTOL),
                          accelerate=True)
    if br.feasible is None:
        return math.inf, {}
    return float(br.feasible), dict(br.feasible_info or {})


#: The smallest positive float: a certified upper δ this small cannot be improved.
_TINY = float(np.nextafter(0.0, 1.0))


def ladder_point(mech: "Gaussian", quantity: str, n: int, value: float, ctx: Settings, B):
    r"""Certified (upper, lower, record) of the Gaussian randomizer at one point.

    Upper: :math:`\min_z [\delta_z(\varepsilon) + \tau(z)]` over the truncation depths evaluated (each term is
    a certified upper bound, so is their minimum); for ε at δ, the smallest of the upper ε of the cuts
    evaluated, each searched at :math:`\delta - \tau(z)`.

    * ε query: first the cut whose charge is :data:`FIRST_FRACTION` of δ; when its evaluation is loose, the
      shallower cut whose charge is :data:`SHALLOW_FRACTION` of δ (the evaluators' error bounds grow with the
      truncated law's largest ratio :math:`e^{\mu w_K}`).  From Δ/σ = :data:`SHALLOW_FIRST_MU` and
      :data:`FINE_MIN_N` users on, the shallower cut alone.
    * δ query: the cut whose charge is :data:`FIRST_FRACTION` of the certified lower bound (at least
      :data:`DELTA_START_GUIDE`), then the cut an ε query at the result would use.
    * Both: an evaluation whose error exceeds :data:`LADDER_RETRY_ERR` of its value is redone by the certified
      FFT engine (n <= :data:`FFT_MAX_N`), else at a shallower cut; below :data:`FINE_MIN_N` users the laws have
      at most :data:`SMALL_N_CELLS` cells per side, and the first evaluator is :func:`_first_evaluator`'s.
    * Cost: a cut's ε search runs compiled (``kernels.epsilon_search``) with the allowance of
      :data:`CUT_SEARCH_RATE` (a cut with Δ/σ >= 4 needs 0.7 - 1.1e6 integrand nodes x 241 atoms per point); the
      up-front refusal (:func:`_refuse_if_costly`) skips cuts the exact evaluator enumerates (n = 2, 3).
    * Heavy first cut (largest log-ratio at least :data:`BIG_JUMP_MIN_LOG_RATIO`): the big-jump bound
      (:func:`big_jump_epsilon`, :func:`big_jump_delta`; module docstring) answers in place of the ladder when it
      certifies below the local Gaussian mechanism (for a δ query at the cut of its guide, then at the cut of its
      own value); else the ladder runs (and may be refused up front).

    Lower: the quantised concrete pairs of :func:`lower_layouts` (certified lower evaluators, both orderings; see
    :func:`_lower_epsilon`).  The local Gaussian mechanism's exact profile is a second certified upper bound; the
    smaller is reported.  ``B`` is
    :mod:`shuffleamp.bounds`.
    """
    mu = mech.mu
    # (an ε query searches its own lower-bound datasets, :func:`_lower_epsilon`)
    lo_f = _lower_families(mech, B, n, value) if quantity == "delta" else []
    rec = {"ladder": []}
    cells = _cut_cells(n)
    first = _first_evaluator(mech, n, ctx.evaluator)
    if quantity == "delta":
        eps = value
        lo, info_l = B.max_delta(lo_f, n, eps, B.LOWER_MODE, ctx.rtol_lower, ctx.max_grid, ctx.evaluator)
        guide = max(lo, DELTA_START_GUIDE)
        z1 = _depth_for(mu, FIRST_FRACTION * guide)
        order = [(z1, first)]
    else:
        target = value
        guide = target
        lo = None
        z1 = _depth_for(mu, _first_fraction(mu, n) * target)
        order = [(z1, first)]
    best, best_rec, lower = math.inf, None, None
    local = _local_epsilon(mu, value) if quantity == "epsilon" else _local_delta(mu, value)
    if quantity == "delta" and local <= _TINY:
        # the local mechanism's δ is the smallest positive float (ε far above μ²): no rung's upper, at least its
        # charge τ(z) > 0, is smaller, so none is evaluated (nor refused up front)
        order = []
    if order and _heavy_cut(mu, n, guide):
        # a heavy first cut: the big-jump bound in place of the ladder when it certifies below the local mechanism
        # (δ query: and when an ε query at its value would use it too)
        if quantity == "epsilon":
            out = big_jump_epsilon(mu, n, target, local, ctx.eps_rtol)
            bj, zb = (math.inf, None) if out is None else out
            skip = True
        else:
            bj, zb = _big_jump_delta_query(mu, n, eps, guide)
            skip = _heavy_cut(mu, n, min(bj, 1.0))
        if bj < local:
            best, best_rec = bj, {"big_jump": {"z": zb, "upper": bj}}
            rec["big_jump"] = best_rec["big_jump"]
            if skip:
                order = []
    if order:
        _refuse_if_costly(mu, z1, n, first, cells, B)
    while order and len(rec["ladder"]) < 4:
        z, evaluator = order.pop(0)
        proxy = mech.at_depth(z, cells)
        tau = proxy.delta_charge
        sub = ctx.with_(upper_families=list(proxy.upper_decompositions()), lower_families=[],
                        binary_rr_eps0=None, evaluator=evaluator)
        if quantity == "delta":
            up, info_u = B.max_delta(sub.upper_families, n, eps, "spread", ctx.rtol, ctx.max_grid,
                                     evaluator)
            err = (info_u or {}).get("delta_error", 0.0) or 0.0
            loose = up > 0 and err > LADDER_RETRY_ERR * up
            up = float(np.nextafter(up + tau, np.inf))
            if not order and z == z1:
                # the cut an ε query at this δ would use first
                want = _depth_for(mu, FIRST_FRACTION * min(best, up))
                if want != z:
                    z1 = want
                    order.append((want, first))
        else:
            if tau >= target:
                continue
            if evaluator == "fft" and math.isfinite(best) and n < FINE_MIN_N:
                # the FFT engine's retry of a loose cut: its ε inside [certified lower ε, the loose upper ε]
                if lower is None:
                    lower = _lower_epsilon(mech, n, target, min(best, mu * (mu / 2 + LADDER[-1])),
                                           mu * (mu / 2 + LADDER[-1]), ctx, B)
                up, info_u = _fft_retry(sub.upper_families, n, target - tau * (1 + 1e-9), lower[0], best, ctx, B)
                loose = False
            else:
                with B.search_work_rate(CUT_SEARCH_RATE):
                    up, _, r = B._optimal_epsilon(proxy, n, target - tau * (1 + 1e-9), sub)
                info_u = r.get("upper") or {}
                loose = (info_u.get("delta_error", 0.0) or 0.0) > LADDER_RETRY_ERR * target
            err = info_u.get("delta_error", 0.0) or 0.0
        rec["ladder"].append({"z": z, "charge": tau, "upper": up, "error": err, "evaluator": evaluator})
        if up < best:
            best, best_rec = up, info_u
        if loose:
            # a heavy far tail makes the Bromwich integral's error bound large: the certified discretised
            # engine on the same law, then a shallower cut
            if evaluator == "exact" and n <= FFT_MAX_N and len(sub.upper_families[0].a) <= FFT_MAX_ATOMS:
                order.append((z, "fft"))
            elif z == z1:
                # a shallower cut (δ query: the one an ε query at the best value so far would use)
                zs = _depth_for(mu, SHALLOW_FRACTION * (target if quantity == "epsilon" else min(best, guide)))
                if zs < z:
                    order.append((zs, evaluator))
    if quantity == "delta" and "big_jump" not in rec and best < 1.0 and _heavy_cut(mu, n, best):
        # an ε query at the ladder's value would use the big-jump bound: the smaller of both
        bj, zb = _big_jump_delta_query(mu, n, eps, best)
        if bj < best:
            best, best_rec = bj, {"big_jump": {"z": zb, "upper": bj}}
            rec["big_jump"] = best_rec["big_jump"]
    # the shuffled output is a post-processing of the differing user's own report: the local Gaussian
    # mechanism's exact profile (Balle-Wang) is itself a certified upper bound
    rec["local_gaussian"] = local
    if local < best:
        best, best_rec = local, {"local_gaussian": local}
        rec["upper_engine"] = "local Gaussian mechanism"
    else:
        rec["upper_engine"] = "big jump" if "big_jump" in rec else "decomposition"
    if quantity == "epsilon":
        lo, info_l, lo_f = lower if lower is not None else _lower_epsilon(
            mech, n, target, min(best, mu * (mu / 2 + LADDER[-1])), mu * (mu / 2 + LADDER[-1]), ctx, B)
    rec["upper"] = best_rec
    rec["lower"] = info_l
    rec["lower_engine"] = "quantised reports" if any("cells" in getattr(f, "label", "") for f in lo_f) \
        else "threshold count"
    return best, (None if lo is None else min(lo, best)), rec


@dataclass(frozen=True)
class _ApproximateLDPAt:
    """The pure clone bound of :class:`ApproximateLDP` at one charge β (internal; see the module docstring)."""

    eps0: float
    delta0: float
    beta: float
    eps0_pure: float
    charged: bool = True
    name: ClassVar[str] = "approx-ldp"
    #: The charge is the mass of the infinite-loss atoms of the reduction's dominating pair (step 3 of the module
    #: docstring): the accountant composes :meth:`without_charge` mixed with infinity mass beta
    #: (:mod:`shuffleamp.accounting`, argument I).
    charge_is_additive: ClassVar[bool] = True

    @property
    def delta_charge(self) -> float:
        return self.beta if self.charged else 0.0

    def without_charge(self) -> "_ApproximateLDPAt":
        return _ApproximateLDPAt(self.eps0, self.delta0, self.beta, self.eps0_pure, False)

    def upper_decompositions(self) -> list:
        dec = clone_decomposition(self.eps0_pure)
        return [_charged(dec, self.beta) if self.charged else dec]

    def lower_decompositions(self) -> list:
        return ApproximateLDP._lower(self.eps0, self.delta0)

    def lower_cases(self) -> list:
        return [(("opaque", "approx-ldp"), f) for f in self.lower_decompositions()]

    @property
    def gamma(self) -> float:
        return math.exp(-self.eps0_pure)

    @property
    def domain(self):
        return None

    def variation_ratio_beta(self):
        return math.tanh(self.eps0_pure / 2), "Table 2 general mechanisms (at the reduced eps0')"

    def stronger_clone_decomposition(self):
        return None

    def describe(self) -> dict:
        return {"mechanism": self.name, "eps0": self.eps0, "delta0": self.delta0}


@dataclass(frozen=True)
class ApproximateLDP(_StandIn):
    r"""The worst case over every (ε0, δ0)-LDP randomizer (module docstring: the reduction and its proof).

    Upper: the smaller of the local (ε0, δ0) profile and the minimum over the numbers m <= n of users kept
    of the standard clone bound with m users at :math:`\varepsilon_0' = \varepsilon_0 - \log(1-\beta_m)`
    plus the additive :math:`\beta_m = \min(m, d-1)\,\delta_0` (module docstring, "Fewer users"): every
    m gives a valid bound, so their minimum is one; m is searched over the integers (octave ladder, then a
    golden-section search, :func:`approx_fewer_users`), and for ε at δ the per-m ε (each a conservative
    root) are minimised the same way.  Lower: the largest
    of k-randomized response at :math:`\log((e^{\varepsilon_0}+(k-1)\delta_0)/(1-\delta_0))` (k = 2, and
    k = 3 with at least 3 inputs) and (at least 3 inputs) the randomizer that reveals its input with
    probability δ0, else binary RR (or 3-RR, at least 4 inputs) at ε0; all are (ε0, δ0)-LDP randomizers.
    At δ0 = 0 the upper is the pure standard clone bound with the n users and the members are k-RR at ε0.
    ε at δ < δ0 does not exist (ParameterError naming ``delta``).

    Parameters
    ----------
    eps0 : float
        ε0 in nats, > 0.
    delta0 : float
        δ0 in [0, 1).
    domain : int, optional
        Size d of the input domain (>= 2); None (default) for any domain (β = n δ0).

    Raises
    ------
    ParameterError
        ``'eps0'``, ``'delta0'`` (outside [0, 1), NaN) or ``'domain'`` invalid; at evaluation, ``'delta0'``
        when β >= 1 (no amplification bound) or ε0' exceeds the evaluators' range.

    References
    ----------
    Feldman, McMillan, Talwar, FOCS 2021, Theorem 3.1 (clone) and 3.8 (approximate LDP);
    Su, Cheng, Wang, IEEE S&P 2026, Theorem 12.
    """

    eps0: float
    delta0: float = 0.0
    domain: int | None = None
    name: ClassVar[str] = "approx-ldp"
    no_matrix: ClassVar[str] = "approx-ldp is the worst case over a class of randomizers; no matrix"
    param_specs: ClassVar[tuple[Parameter, ...]] = (
        Parameter("delta0", "real", minimum=0.0, maximum=1.0, open_maximum=True, default=0.0,
                  doc="local δ0 of the randomizer"),
        Parameter("domain", "int", minimum=2, default=None,
                  doc="input-domain size (none: any domain, the charge is n δ0)"))

    def __post_init__(self):
        object.__setattr__(self, "eps0", _validate.mechanism_eps0(self.eps0))
        d0 = _validate.real("delta0", self.delta0, lo=0.0, hi=1.0, hi_open=True)
        if not isinstance(d0, float):
            raise ParameterError("delta0", "must be a scalar")
        object.__setattr__(self, "delta0", d0)
        if self.domain is not None:
            object.__setattr__(self, "domain", _validate.count(self.domain, "domain", minimum=2))

    def _beta(self, n: int | None) -> float:
        k = (self.domain - 1) if self.domain is not None else None
        if n is not None:
            k = n if k is None else min(k, n)
        if k is None:
            raise ParameterError("n", "the (eps0, delta0)-LDP bound over an unbounded domain depends on n; "
                                 "give n (or domain=)")
        return k * self.delta0

    def at_n(self, n: int | None) -> _ApproximateLDPAt:
        """The pure clone bound with its charge for n users (the bounds layer calls this per n).

        Parameters
        ----------
        n : int or None
            Number of users (None only with a finite ``domain``).

        Returns
        -------
        object
            A mechanism-like object with ``upper_decompositions`` (carrying ``delta_charge`` = β),
            ``lower_decompositions`` and ``eps0`` (= ε0').

        Raises
        ------
        ParameterError
            ``'delta0'`` when β >= 1 or ε0' is above the evaluators' range.
        """
        beta = self._beta(n)
        if beta >= 1:
            raise ParameterError("delta0", f"min(n, domain-1) * delta0 = {beta:.6g} >= 1: no amplification bound "
                                 "follows from (eps0, delta0)-LDP here; decrease delta0 or n")
        e0p = self.eps0 - math.log1p(-beta)
        e0p = float(np.nextafter(e0p, np.inf)) if beta > 0 else e0p
        if e0p > _validate.EPS0_MAX:
            raise ParameterError("delta0", f"the reduced eps0' = {e0p:.6g} is above {_validate.EPS0_MAX:g}")
        return _ApproximateLDPAt(self.eps0, self.delta0, float(beta), e0p)

    @staticmethod
    def _lower(eps0: float, delta0: float) -> list:
        return KRR(min(_lower_eps1(eps0, delta0), _validate.EPS0_MAX), 2).lower_decompositions()

    def reveal_ok(self, inputs: int) -> bool:
        """Whether the domain has at least ``inputs`` inputs (the revealing lower-bound randomizer needs a
        third input for the other users, a fourth when they hold two different values)."""
        return self.domain is None or self.domain >= inputs

    @property
    def gamma(self) -> float:
        r""":math:`e^{-\varepsilon_0'}` of the clone bound (finite domain; else at β = 0)."""
        return self.at_n(None).gamma if self.domain is not None else math.exp(-self.eps0)

    def lower_decompositions(self) -> list:
        """Binary randomized response at log((e^ε0 + δ0)/(1 − δ0)): Theorem-14 decompositions.

        Returns
        -------
        list of Decomposition
        """
        return self._lower(self.eps0, self.delta0)

    def lower_cases(self) -> list:
        """Lower decompositions tagged as opaque datasets.

        Returns
        -------
        list of (tuple, Decomposition)
        """
        return [(("opaque", "approx-ldp"), f) for f in self.lower_decompositions()]

    def describe(self) -> dict:
        """JSON-serialisable description.

        Returns
        -------
        dict
            ``{"mechanism": "approx-ldp", "eps0": ..., "delta0": ..., "domain": ...}``.
        """
        return {"mechanism": self.name, "eps0": self.eps0, "delta0": self.delta0, "domain": self.domain}

    def bound_point(self, quantity: str, n: int, value: float, ctx: Settings, B):
        """One point of the default method: the clone bound at n with its additive charge β.

        Parameters
        ----------
        quantity : {"delta", "epsilon"}
        n : int
        value : float
            ε (for δ) or δ (for ε).
        ctx : Settings
            The call's settings (:class:`shuffleamp._registry.Settings`).
        B : module
            :mod:`shuffleamp.bounds` (handed in by it).

        Returns
        -------
        (upper, lower, record)
        """
        return approx_point(self, quantity, n, value, ctx, B)


def approx_local_delta(eps0: float, delta0: float, epsilon: float) -> float:
    r"""Local profile of every (ε0, δ0)-LDP randomizer (module docstring, "The local profile"), rounded up.

    Parameters
    ----------
    eps0, delta0 : float
        The local guarantee (ε0 in nats, δ0 in [0, 1)).
    epsilon : float
        Central ε >= 0 (nats).

    Returns
    -------
    float
        :math:`\delta_0 + (1-\delta_0)(e^{\varepsilon_0} - e^\varepsilon)_+/(e^{\varepsilon_0}+1)`.
    """
    if epsilon >= eps0:
        return float(delta0)                       # exact: no arithmetic
    v = delta0 + (1.0 - delta0) * -math.expm1(epsilon - eps0) / (1.0 + math.exp(-eps0))
    return float(min(1.0, np.nextafter(v * (1 + 4 * _DBL_EPS), np.inf)))


def approx_local_epsilon(eps0: float, delta0: float, delta: float):
    """Smallest ε (conservative) with :func:`approx_local_delta` <= ``delta``; None when ``delta`` < δ0.

    Parameters
    ----------
    eps0, delta0 : float
        The local guarantee.
    delta : float
        Central δ.

    Returns
    -------
    float or None
        In [0, ε0]; None if no ε qualifies (δ < δ0).
    """
    if delta < delta0:
        return None
    if approx_local_delta(eps0, delta0, 0.0) <= delta:
        return 0.0
    x = 1.0 - (delta - delta0) * (1.0 + math.exp(-eps0)) / (1.0 - delta0)
    e = eps0 + math.log(x) if x > 0 else 0.0
    e = min(max(e * (1 + 1e-12) + 1e-300, 0.0), eps0)
    for _ in range(64):
        if approx_local_delta(eps0, delta0, e) <= delta or e >= eps0:
            break
        e = min(eps0, e + max(e, 1e-300) * 1e-12 * 2 ** _)
    return e


_DBL_EPS = float(np.finfo(np.float64).eps)


#: Relative width in m at which the golden-section search over the users kept stops (module docstring,
#: "Fewer users"): the bracket [a, b] is narrowed until b - a <= max(2, USERS_KEPT_RTOL * a).
USERS_KEPT_RTOL = 2.0 ** -10


def approx_fewer_users(n: int, quantity: str, value: float, best: float, best_info: dict, charge, clone, pure):
    """The smallest clone-reduction bound over the numbers m <= n of users kept (module docstring, "Fewer
    users"), starting from ``best`` (the local profile's value).

    ``charge(m)``: β_m, or None when the reduction is refused at m; ``clone(m)``: (value, info) of the reduction
    with m users and its charge (δ at ε = ``value`` for ``quantity="delta"``, ε at δ = ``value`` otherwise);
    ``pure(m, eps)``: the certified δ of the pure ε0 clone bound with m users at ε.

    Two stages, every value certified (each is the reduction at one m), so their minimum is:

    1. the octave ladder m = n, n/2, n/4, ... (:func:`approx_halvings`); m is skipped when its charge alone
       reaches the best value (δ) or the target (ε), and the scan stops at the first m whose pure bound is at
       least the best δ (δ query) or at least the target δ at the best ε (ε query): every smaller m' has a
       larger pure bound (fewer users) and a clone bound above its pure one, so none can do better;
    2. a golden-section search over the integers m between the ladder's neighbours of its best m (the next
       smaller rung, or the rung where the scan stopped, and the next larger rung, capped at the largest m
       whose charge is below the target for ε), narrowed to a relative width :data:`USERS_KEPT_RTOL`.  A
       candidate whose charge alone reaches the best value (δ) or the target (ε) is not evaluated (it cannot
       win; the search compares its charge, a lower bound of its value).  Where the charge is the same at
       both ends (δ0 = 0, or every m beyond d − 1), only the larger end is evaluated: the clone bound is
       non-increasing in m at a fixed ε0'.

    The search assumes nothing about the shape of the reduction in m for soundness; it finds the minimum over
    every m when the reduction is unimodal in m between the rungs (as measured: the clone part falls with m,
    the charge and ε0' rise).  The result is non-decreasing in δ0 when it finds that minimum (each m's bound
    is), otherwise up to the search's resolution.

    Parameters
    ----------
    n : int
        Number of users.
    quantity : {"delta", "epsilon"}
        What ``clone`` returns.
    value : float
        ε (for δ) or the target δ (for ε).
    best, best_info : float, dict
        The starting value (the local profile's) and its record.
    charge, clone, pure : callable
        As above.

    Returns
    -------
    (float, dict)
        The smallest value and its record (``users_kept``, ``delta_charge`` when a reduction won).
    """
    seen: dict = {}
    state = {"best": best, "info": best_info}

    def evaluate(m):
        """Certified value at m (recorded), or a lower bound of it that cannot win (not recorded)."""
        if m in seen:
            return seen[m]
        c = charge(m)
        if c is None:
            v = math.inf
        elif c >= (state["best"] if quantity == "delta" else value):
            v = max(c, state["best"]) if quantity == "delta" else math.inf
        else:
            v, info = clone(m)
            if v < state["best"]:
                state["best"], state["info"] = v, dict(info or {}, users_kept=m, delta_charge=c)
        seen[m] = v
        return v

    rungs = list(approx_halvings(n))
    stop = None
    for m in rungs:
        c = charge(m)
        if c is None:
            continue
        if quantity == "delta":
            if c >= state["best"]:
                continue
            if pure(m, value) >= state["best"]:
                stop = m
                break
        else:
            if c >= value:
                continue
            if pure(m, state["best"]) >= value:
                stop = m
                break
        evaluate(m)
    won = state["info"].get("users_kept")
    if won is None:
        return state["best"], state["info"]
    i = rungs.index(won)
    lo = rungs[i + 1] if i + 1 < len(rungs) else 1
    if stop is not None:
        lo = max(lo, stop)
    hi = rungs[i - 1] if i > 0 else n
    if quantity == "epsilon" and hi > won:
        # the largest m whose charge is below the target: β_m is non-decreasing in m, so bisect
        a, b = won, hi
        while b - a > 1:
            mid = (a + b) // 2
            c = charge(mid)
            a, b = (mid, b) if c is not None and c < value else (a, mid)
        hi = a
    if charge(lo) == charge(hi):
        # one charge and one ε0' on [lo, hi] (δ0 = 0, or m beyond d - 1): the clone bound is non-increasing in m
        # (m + 1 users are a post-processing of m), so hi is the best of them
        evaluate(hi)
    else:
        _golden_integer_min(evaluate, lo, hi)
    return state["best"], state["info"]


def _golden_integer_min(f, a: int, b: int) -> None:
    """Golden-section search for a minimum of ``f`` over the integers of [a, b] (f caches and records; the caller
    keeps the smallest value seen).  Stops once b - a <= max(2, :data:`USERS_KEPT_RTOL` * a)."""
    if b - a <= 2:
        for m in range(a, b + 1):
            f(m)
        return
    r = (math.sqrt(5.0) - 1.0) / 2.0
    c = b - int(round(r * (b - a)))
    d = a + int(round(r * (b - a)))
    fc, fd = f(c), f(d)
    while b - a > max(2, USERS_KEPT_RTOL * a):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - int(round(r * (b - a)))
            if c >= d:
                c = d - 1
            if c <= a:
                break
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + int(round(r * (b - a)))
            if d <= c:
                d = c + 1
            if d >= b:
                break
            fd = f(d)
    if b - a <= 4:
        for m in range(a, b + 1):
            f(m)


def approx_halvings(n: int):
    """n, ⌊n/2⌋, ⌊n/4⌋, ... down to 1: the ladder of users kept that :func:`approx_fewer_users` scans first."""
    m = n
    while m >= 1:
        yield m
        m //= 2


def approx_point(mech: "ApproximateLDP", quantity: str, n: int, value: float, ctx: Settings, B):
    r"""Certified (upper, lower, record) of the worst (ε0, δ0)-LDP randomizer at one point.

    Upper: the smallest of the clone reduction with m of the n users kept (standard clone at
    :math:`\varepsilon_0'` with m users plus the additive :math:`\beta_m = \min(m, d-1)\delta_0`; for ε at δ,
    the clone's ε searched at δ − β_m; m from :func:`approx_fewer_users`) and the local profile
    :func:`approx_local_delta`.  Lower: the larger of binary randomized
    response at :math:`\varepsilon_1` and, when the domain has at least 3 inputs,
    :math:`\delta_0 + (1-\delta_0)` times binary randomized response at ε0 (the revealing randomizer of the
    module docstring), each over the Theorem-14 datasets (certified lower evaluators, both orderings).
    ``B`` is :mod:`shuffleamp.bounds`.  δ below δ0 has no finite ε: ParameterError naming ``delta``.
    """
    d0 = mech.delta0
    lo_a, lo_r = approx_lower_families(mech, B)
    rec: dict = {}

    def lower_delta(e):
        v, info = B.max_delta(lo_a, n, e, B.LOWER_MODE, ctx.rtol_lower, ctx.max_grid, ctx.evaluator)
        info = dict(info or {}, dataset="k-RR at log((e^eps0 + (k - 1) delta0)/(1 - delta0)), k = 2, 3")
        if lo_r:
            w, info_r = B.max_delta(lo_r, n, e, B.LOWER_MODE, ctx.rtol_lower, ctx.max_grid, ctx.evaluator)
            w = float(np.nextafter((d0 + (1.0 - d0) * w) * (1 - 4 * _DBL_EPS), -np.inf))
            if w > v:
                v, info = w, dict(info_r or {}, dataset="reveals its input w.p. delta0, else k-RR at eps0")
        return v, info

    def at(m, cls=mech):
        try:
            proxy = cls.at_n(m)
        except ParameterError:
            return None, None
        sub = B._optimal_prepare(proxy, ctx).with_(lower_families=[], binary_rr_eps0=None)
        return proxy, sub

    pure_cls = ApproximateLDP(mech.eps0, 0.0)

    def charge(m):
        proxy, _ = at(m)
        return None if proxy is None else proxy.delta_charge

    def pure(m, e):
        proxy, sub = at(m, pure_cls)
        return B._optimal_delta(proxy, m, e, sub)[0]

    if quantity == "delta":
        eps = value

        def clone(m):
            proxy, sub = at(m)
            u, _, r = B._optimal_delta(proxy, m, eps, sub)
            c = proxy.delta_charge
            return (float(np.nextafter(u + c, np.inf)) if c > 0 else u), dict(r.get("upper") or {})
        local = approx_local_delta(mech.eps0, d0, eps)
        up, info = approx_fewer_users(n, "delta", eps, local, {"local": local}, charge, clone, pure)
        rec.update(upper_engine="clone reduction" if "users_kept" in info else "local (eps0, delta0) profile",
                   upper=info)
        lo, info_l = lower_delta(eps)
        for v, name in _binary_rr_lowers(mech, n, eps, False, ctx, B):
            if v > lo:
                lo, info_l = v, {"delta": v, "dataset": name, "engine": "binary randomized response's bound"}
        rec["lower"] = info_l
        return up, min(lo, up), rec
    target = value
    local = approx_local_epsilon(mech.eps0, d0, target)
    if local is None:
        raise ParameterError("delta", f"delta = {target:g} is below delta0 = {d0:g}: an (eps0, delta0)-LDP "
                             "randomizer may reveal its input with probability delta0, so no finite epsilon "
                             "holds; ask for delta >= delta0")

    def clone_eps(m):
        proxy, sub = at(m)
        c = proxy.delta_charge
        u, _, r = B._optimal_epsilon(proxy, m, target - c * (1 + 1e-9), sub)
        return u, dict(r.get("upper") or {})
    up, info = approx_fewer_users(n, "epsilon", target, local, {"local": local}, charge, clone_eps, pure)
    rec.update(upper_engine="clone reduction" if "users_kept" in info else "local (eps0, delta0) profile",
               upper=info)
    eps_hi = max(float(mech.eps0), min(_lower_eps1(mech.eps0, d0, 3), _validate.EPS0_MAX))
    lo, info_l, _cnt = B.solve_epsilon(lower_delta, target, eps_hi, "lower", ctx.eps_rtol,
                                       B.estimator(lo_a, n))
    for v, name in _binary_rr_lowers(mech, n, target, True, ctx, B):
        if v > lo:
            lo, info_l = v, {"epsilon": v, "dataset": name, "engine": "binary randomized response's bound"}
    rec["lower"] = info_l
    return up, min(lo, up), rec


#: Largest n at which the (ε0, δ0)-LDP class's lower also runs binary randomized response's own bound
#: (:func:`_binary_rr_lowers`).
BINARY_LOWER_MAX_N = 10_000


def _binary_rr_lowers(mech: "ApproximateLDP", n: int, x: float, want_eps: bool, ctx: Settings, B) -> list:
    """Certified lowers of the binary members of the lower-bound class through binary randomized response's own
    bound (the exact count law over every dataset where it runs, :mod:`shuffleamp.exact_count`, else its
    Theorem-14 decompositions): binary RR at ε1, and (at least 3 inputs, δ0 > 0) the randomizer revealing its
    input w.p. δ0 on top of binary RR at ε0, whose divergence is at least δ0 + (1 − δ0) D_B (module docstring,
    "Lower bound").  For ε at δ = x the revealing member's ε is binary RR's lower ε at
    (x − δ0)/(1 − δ0), rounded up (below it D_B exceeds that level, so the member's δ exceeds x).
    Only up to :data:`BINARY_LOWER_MAX_N` users (above, binary RR's own bound costs up to 0.5 s a point and the
    Theorem-14 decompositions already evaluated are within a fraction of a per cent of it), and for δ at ε only
    below the member's local ε (above it its δ is 0, or δ0 for the revealing one).  Returns [(value, name)]."""
    e0, d0 = mech.eps0, mech.delta0
    out = []
    if n > BINARY_LOWER_MAX_N:
        return out
    members = [(KRR(min(_lower_eps1(e0, d0), _validate.EPS0_MAX), 2), False,
                "binary RR at log((e^eps0 + delta0)/(1 - delta0)), all datasets")]
    if d0 > 0 and mech.reveal_ok(3):
        members.append((KRR(e0, 2), True, "reveals its input w.p. delta0, else binary RR at eps0, all datasets"))
    for k, reveal, name in members:
        if not want_eps and x >= k.eps0:
            continue
        sub = B._optimal_prepare(k, ctx)
        if want_eps:
            level = x
            if reveal:
                level = float(np.nextafter((x - d0) / (1.0 - d0) * (1 + 4 * _DBL_EPS), np.inf))
                if not 0.0 < level < 1.0:
                    continue
            v = B._optimal_epsilon(k, n, level, sub)[1]
        else:
            v = B._optimal_delta(k, n, x, sub)[1]
            if reveal:
                v = float(np.nextafter((d0 + (1.0 - d0) * v) * (1 - 4 * _DBL_EPS), -np.inf))
        if v is not None and math.isfinite(v):
            out.append((float(v), name))
    return out


def _lower_eps1(eps0: float, delta0: float, k: int = 2) -> float:
    """ε1 = log((e^ε0 + (k − 1)δ0)/(1 − δ0)): k-RR at ε1 is (ε0, δ0)-LDP (module docstring, "Lower bound")."""
    return math.log(math.exp(eps0) + (k - 1) * delta0) - math.log1p(-delta0) if delta0 > 0 else eps0


def approx_lower_families(mech: "ApproximateLDP", B):
    """Lower-bound families of the class, each a list of Theorem-14 decompositions with swaps: (plain, revealing).

    Plain: binary RR at ε1 and (domain of at least 3 inputs) 3-RR at its ε1; revealing (δ0 > 0, the randomizer that
    reveals its input with probability δ0 on top of binary RR at ε0, or of 3-RR at ε0 with at least 4 inputs), whose
    divergence is δ0 + (1 − δ0) times the listed decompositions'.  ``B`` provides ``_with_swaps``."""
    e0, d0 = mech.eps0, mech.delta0
    plain = list(ApproximateLDP._lower(e0, d0))
    if mech.reveal_ok(3):
        plain += KRR(min(_lower_eps1(e0, d0, 3), _validate.EPS0_MAX), 3).lower_decompositions()
    reveal = []
    if d0 > 0 and mech.reveal_ok(3):
        reveal += KRR(e0, 2).lower_decompositions()
        if mech.reveal_ok(4):
            reveal += KRR(e0, 3).lower_decompositions()
    return B._with_swaps(plain), (B._with_swaps(reveal) if reveal else [])


# ---------------------------------------------------------------------------- Gaussian populations
#: Largest number of truncation rungs evaluated for one target at one ε (:func:`population_delta_upper`).
POPULATION_MAX_RUNGS = 6
#: Time slice (seconds) and work cap (atom x frequency evaluations of the mixture integral, about 1 s on the
#: 2-core machine) of one rung's evaluation: a rung whose evaluation would need more is skipped.
POPULATION_RUNG_SECONDS = 1.0
POPULATION_RUNG_WORK = 5e6
#: Rungs per ε of the accountant's profiles (one Bromwich integral per rung, group and grid point).
POPULATION_PROFILE_RUNGS = 2
#: A δ value whose rung's charge is more than this fraction of it is re-evaluated at a deeper rung.
POPULATION_DEEPER_FRACTION = 1e-2
#: A target with a cross blanket stops evaluating its truncation rungs once they have lost to the cross blanket at
#: this many points and won at none (cost only; measured: they lose at every point of the two-σ populations of
#: ``bench/results_population.md``).
PROFILE_RUNG_LOSSES = 2
#: Largest population for the threshold-count lower bound (exact Poisson-binomial law by FFT convolution).
POPULATION_LOWER_MAX_N = 2_000_000


def population_gammas(sigmas: np.ndarray, sigma_t: float, sensitivity: float) -> np.ndarray:
    r"""Blanket masses of Gaussian users w.r.t. the target group's blanket ω_t (derived here).

    With :math:`m_\sigma(y) = \min_{x\in\{0,\Delta\}}\varphi_\sigma(y-x)` and
    :math:`\omega_t = m_{\sigma_t}/\gamma_t`: :math:`R_{\sigma}(x) \ge m_\sigma \ge \gamma\,\omega_t` with
    :math:`\gamma = \gamma_t \inf_y m_\sigma(y)/m_{\sigma_t}(y)`.  For :math:`\sigma \ge \sigma_t` the ratio
    :math:`(\sigma_t/\sigma)\exp(\tfrac{y^2}{2}(\sigma_t^{-2}-\sigma^{-2}))` (for :math:`y \ge \Delta/2`,
    mirrored below) increases away from :math:`\Delta/2`, so the infimum is at :math:`y = \Delta/2`; for
    :math:`\sigma < \sigma_t` it tends to 0 in the tails (γ = 0: those users are not counted as blanket).

    Parameters
    ----------
    sigmas : ndarray
        The other users' σ.
    sigma_t : float
        The target's σ.
    sensitivity : float
        Δ.

    Returns
    -------
    ndarray
        γ per entry of ``sigmas`` (rounded down).
    """
    s = np.asarray(sigmas, dtype=np.float64)
    gt = float(2 * _sf(sensitivity / (2 * sigma_t)))
    with np.errstate(divide="ignore", over="ignore"):
        r = (sigma_t / s) * np.exp(sensitivity ** 2 / 8 * (1 / sigma_t ** 2 - 1 / s ** 2))
    g = np.where(s >= sigma_t, np.minimum(gt * r, 1.0), 0.0)
    return g * (1 - 1e-12)


@functools.lru_cache(maxsize=256)
def _population_rung(mu: float, z: float, cells: int | None) -> tuple:
    """(values numerator a, b, blanket masses c, τ) of the spread truncated blanket law at depth z (the grid of the
    single round, :func:`_grid`), cached per (Δ/σ, z, cells)."""
    dec, tau, _ = gaussian_blanket(mu, edges=_grid(mu, z, cells))
    return dec.a, dec.b, dec.c, tau


@functools.lru_cache(maxsize=256)
def _population_depth(mu: float, charge: float) -> float:
    return _depth_for(mu, charge)


def _population_others(pop, g: int, sigma_blanket: float | None = None):
    """Distinct blanket masses γ > 0 of the other users w.r.t. the blanket of σ = ``sigma_blanket`` (default: group
    g's own σ) and their counts."""
    mt = pop.groups[g].mechanism
    sig = np.array([gr.mechanism.sigma for gr in pop.groups])
    cnt = np.array([gr.n - (1 if i == g else 0) for i, gr in enumerate(pop.groups)], dtype=np.float64)
    gam = population_gammas(sig, mt.sigma if sigma_blanket is None else sigma_blanket, mt.sensitivity)
    keep = (cnt > 0) & (gam > 0)
    d: dict = {}
    for gv, c in zip(gam[keep], cnt[keep]):
        d[float(gv)] = d.get(float(gv), 0.0) + float(c)
    gs = np.array(sorted(d), dtype=np.float64)
    return gs, np.array([d[x] for x in sorted(d)], dtype=np.float64)


#: Cells of the cross-blanket law (:func:`population_cross_law`): width CROSS_STEP target σ, uniform over
#: Δ/2 ± CROSS_HALF_WIDTH blanket σ (the blanket's mass beyond, below 1e-22, stays in two unbounded end cells).
CROSS_STEP = 1.0 / 16.0
CROSS_HALF_WIDTH = 10.0
#: ... CROSS_STEP_SMALL_N below FINE_MIN_N blanket users (the small-n evaluators' cost grows with the atoms; measured
#: at 50 others: δ 1-5 % above the finer law's, 2x faster).
CROSS_STEP_SMALL_N = 1.0 / 4.0
CROSS_HALF_WIDTH_SMALL_N = 7.0
#: Relative margin by which the weight of a cross-blanket cell's upper end point is rounded up (plus the absolute
#: rounding of the cell's mean, first order).
_CROSS_MARGIN = 1e-9


def _cdf_diff(a, b):
    """Φ(b) − Φ(a) elementwise (a <= b, either may be infinite), from the nearer tail (no cancellation far out)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(b <= 0.0, ndtr(b) - ndtr(a), ndtr(-a) - ndtr(-b))


def population_cross_law(sigma_t: float, sigma_h: float, sensitivity: float, eps: float,
                         step: float = CROSS_STEP, half_width: float = CROSS_HALF_WIDTH) -> tuple:
    r"""The spread law at ε of a target's privacy-amplification variable w.r.t. a *wider* group's blanket (derived
    in :mod:`shuffleamp.personalized`, "Gaussian groups", cross blankets).

    With :math:`\omega_h = m_{\sigma_h}/\gamma_h` (:math:`m_\sigma(y) = \min(arphi_\sigma(y),
    arphi_\sigma(y - \Delta))`) and :math:`Y \sim \omega_h`, :math:`L = (R_0(Y) - e^arepsilon R_\Delta(Y))/
    \omega_h(Y) = A_0(Y) - e^arepsilon A_\Delta(Y)`, :math:`A_x = arphi_{\sigma_t}(\cdot - x)/\omega_h`.  For
    :math:`\sigma_t < \sigma_h` each :math:`\log A_x` is a concave quadratic on each side of Δ/2, so A is bounded
    and its extremes on a cell are at the end points or the vertex.  On every cell (edges uniform in y, Δ/2 among
    them, two unbounded end cells where A tends to 0) the conditional law of L lies in :math:`[\min A_0 -
    e^arepsilon\max A_\Delta, \max A_0 - e^arepsilon \min A_\Delta]`; it is replaced by the two-point law on
    those end points with the cell's ω-mass and mean :math:`\int_{
m cell}(R_0 - e^arepsilon R_\Delta)\,dy`
    (normal CDF differences): a mean-preserving spread, so the spread law dominates L in convex order (the weight
    of the upper end rounded up: a first-order stochastic increase, also sound).

    Parameters
    ----------
    sigma_t : float
        The target's σ.
    sigma_h : float
        The blanket's σ, > ``sigma_t``.
    sensitivity : float
        Δ.
    eps : float
        ε (nats).
    step : float
        Cell width in units of ``sigma_t`` (any width gives a certified law; finer is tighter and costlier).
    half_width : float
        The cells cover Δ/2 ± ``half_width`` σ_h (beyond, one unbounded cell each side: certified, coarser).

    Returns
    -------
    (ndarray, ndarray)
        Values of L and their ω_h-masses (summing to 1 up to rounding), float64.
    """
    st, sh, D = float(sigma_t), float(sigma_h), float(sensitivity)
    if not sh > st:
        raise ValueError("the cross-blanket law needs sigma_h > sigma_t")
    e = math.exp(eps)
    gh = 2.0 * float(_sf(D / (2.0 * sh)))
    h = float(step) * st
    k = int(math.ceil(float(half_width) * sh / h))
    half = D / 2.0 + h * np.arange(1, k + 1)
    left = D - half[::-1]                                # edges below Δ/2, mirrored (exact symmetry of ω_h)
    edges = np.concatenate([[-np.inf], left, [D / 2.0], half, [np.inf]])
    a, b = edges[:-1], edges[1:]
    is_left = b <= D / 2.0
    cen = np.where(is_left, D, 0.0)                      # ω_h ∝ φ_h(y − cen) on the cell's side
    c = np.where(is_left, _cdf_diff((a - D) / sh, (b - D) / sh), _cdf_diff(a / sh, b / sh)) / gh
    kq = 1.0 / st ** 2 - 1.0 / sh ** 2
    base = math.log(gh * sh / st)

    def log_a(y, x):
        with np.errstate(invalid="ignore", over="ignore"):
            v = base - (y - x) ** 2 / (2 * st * st) + (y - cen) ** 2 / (2 * sh * sh)
        return np.where(np.isfinite(y), v, -np.inf)

    def extremes(x):
        ys = np.clip((x / st ** 2 - cen / sh ** 2) / kq, a, b)
        la, lb = log_a(a, x), log_a(b, x)
        lo = np.exp(np.minimum(la, lb))
        hi = np.exp(np.maximum(np.maximum(la, lb), log_a(ys, x)))
        return lo * (1 - 1e-12), hi * (1 + 1e-12)
    lo0, hi0 = extremes(0.0)
    lo1, hi1 = extremes(D)
    lo, hi = lo0 - e * hi1, hi0 - e * lo1
    m0, m1 = _cdf_diff(a / st, b / st), _cdf_diff((a - D) / st, (b - D) / st)
    keep = c > 0
    lo, hi, c, m0, m1 = lo[keep], hi[keep], c[keep], m0[keep], m1[keep]
    mean = (m0 - e * m1) / c
    span = np.maximum(hi - lo, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = (mean - lo) / span + _CROSS_MARGIN + 4 * _DBL_EPS * (m0 + e * m1 + np.abs(mean) * c) / (c * span)
    # a cell whose end points (nearly) coincide, or whose weight is not a number (underflow): all mass on the upper end
    w = np.where(span > 1e-280, np.clip(np.nan_to_num(w, nan=1.0), 0.0, 1.0), 1.0)
    vals = np.concatenate([hi, lo])
    mass = np.concatenate([c * w, c * (1.0 - w)])
    return vals, mass


def population_cross_candidates(pop, g: int) -> list:
    """(σ_h, others' blanket masses, counts) of the cross-blanket candidates of a target of group g: one per distinct
    σ_h above the target's among the other users, every other user counted at its blanket mass w.r.t. ω_h
    (:func:`population_gammas`; users of smaller σ at 0)."""
    mt = pop.groups[g].mechanism
    out = []
    for sh in sorted({gr.mechanism.sigma for i, gr in enumerate(pop.groups)
                      if gr.mechanism.sigma > mt.sigma and gr.n - (i == g) > 0}):
        gs, Ns = _population_others(pop, g, sh)
        if gs.size:
            out.append((sh, gs, Ns))
    return out


def population_cross_covers(pop, g: int) -> bool:
    """Whether a cross blanket of a target of group g expects at least as many blanket draws as the target's own
    blanket (then :func:`population_delta_upper` skips the target's truncation rungs; cost only)."""
    cands = population_cross_candidates(pop, g)
    if not cands:
        return False
    gs, Ns = _population_others(pop, g)
    return max(float(gh @ Nh) for _, gh, Nh in cands) >= float(gs @ Ns)


def population_delta_upper(pop, g: int, eps: float, rtol: float, _delta_law, guide: float | None = None,
                           start: float | None = None, max_rungs: int = POPULATION_MAX_RUNGS, profile: bool = False):
    r"""Certified upper δ of a target user of group g of a Gaussian population at ε: the minimum of the local
    Gaussian mechanism's profile and of :math:`\delta_z(\varepsilon) + \tau(z)` over the truncation rungs z
    evaluated (:mod:`shuffleamp.personalized`, "Gaussian groups").

    :math:`\delta_z` is the heterogeneous blanket bound (Steps 1-4 of that module docstring), evaluated by its
    ``_delta_law`` (handed in) on the target's spread law truncated at depth z (the single round's grid,
    :func:`_grid` with :func:`_cut_cells`).  Rungs: the depth whose charge is :data:`FIRST_FRACTION` of the guide
    (``guide``: the target δ of an ε query; else both ``start``, a certified lower δ of a δ query, and the local
    profile, then the value found, while the charge is above :data:`POPULATION_DEEPER_FRACTION` of it), and the
    shallower one at :data:`SHALLOW_FRACTION` of the guide when an evaluation's own error exceeds
    :data:`LADDER_RETRY_ERR` of its value; at most ``max_rungs`` rungs (:data:`POPULATION_MAX_RUNGS`; the
    accountant's profiles :data:`POPULATION_PROFILE_RUNGS`).  Every value is certified, so is their minimum; the
    choice changes only tightness and cost.  Returns (δ, info)."""
    mt = pop.groups[g].mechanism
    mu = mt.mu
    gt = mt.gamma
    e = math.exp(eps)
    n = pop.n
    cells = _cut_cells(n)
    gs, Ns = _population_others(pop, g)
    # the homogeneous reduction: every other user with γ_h >= γ' counted at γ' (the γ' of largest expected count)
    j = int(np.argmax([x * Ns[gs >= x].sum() for x in gs])) if gs.size else 0
    hom = (gs[j:j + 1], np.array([Ns[j:].sum()])) if gs.size > 1 else None
    local = _local_delta(mu, eps)
    best, best_info = local, {"evaluator": "local Gaussian mechanism", "how": "local"}
    fixed = guide is not None
    rungs: list = []
    if fixed and local <= guide:
        # an ε query compares the value with its target δ: the local profile already answers
        return local, dict(best_info, rungs=rungs)
    if local <= _TINY:
        # the smallest positive float (ε far above μ²): no rung's upper, at least its charge > 0, is smaller
        return local, dict(best_info, rungs=rungs)
    # cross blankets: the blanket of a wider group, which covers the target's tails (bounded loss, no truncation)
    for sh, gs_h, Ns_h in population_cross_candidates(pop, g):
        small = Ns_h.sum() < FINE_MIN_N
        vals_h, mass_h = population_cross_law(mt.sigma, sh, mt.sensitivity, eps,
                                              CROSS_STEP_SMALL_N if small else CROSS_STEP,
                                              CROSS_HALF_WIDTH_SMALL_N if small else CROSS_HALF_WIDTH)
        others_h = [(gs_h, Ns_h)]
        if gs_h.size > 1:
            jh = int(np.argmax([x * Ns_h[gs_h >= x].sum() for x in gs_h]))
            others_h.append((gs_h[jh:jh + 1], np.array([Ns_h[jh:].sum()])))
        for gsx, Nsx in others_h:
            try:
                with budget(min(POPULATION_RUNG_SECONDS, max(current_budget().remaining(), 0.0))
                            if current_budget() is not None else POPULATION_RUNG_SECONDS):
                    vr, info_r = _delta_law(vals_h, mass_h, gsx, Nsx, rtol, None, POPULATION_RUNG_WORK)
            except ResourceLimitError:
                outer = current_budget()
                if outer is not None and outer.remaining() <= 0:
                    raise
                continue
            vr = float(np.nextafter(vr, np.inf))
            if vr < best:
                best, best_info = vr, dict(info_r, how=f"cross blanket of sigma {sh:g} ({int(Nsx.sum())} others)")
    if fixed and best <= guide:
        # an ε query compares the value with its target δ: a cross blanket already answers
        return min(best, 1.0), dict(best_info, rungs=rungs)
    crossed = best < local
    tally = pop.__dict__.setdefault("_rung_tally", {}).setdefault(g, [0, 0])     # [rungs lost, rungs won]
    if crossed and (population_cross_covers(pop, g) or (tally[0] >= PROFILE_RUNG_LOSSES and tally[1] == 0)):
        # the target's own blanket (truncation rungs) is skipped when a cross blanket expects at least as many blanket
        # draws, or when the rungs lost to it at every earlier point (cost only: the value returned is certified
        # either way; measured, the rungs lose to a cross blanket in every such case)
        return min(best, 1.0), dict(best_info, rungs=rungs)
    done: dict = {}

    def evaluate(z):
        """(value without charge, its error, charge, info) of rung z (None if refused for time); once per z."""
        if z in done:
            return done[z]
        a, b, c, tau = _population_rung(mu, z, cells)
        vals, mass = gt * (a - e * b) / c, c / gt
        v, info = math.inf, {}
        for others in ((gs, Ns),) + ((hom,) if hom is not None else ()):
            try:
                # a rung is one candidate among several: its integral gets a slice of the time left and a work
                # cap, and a rung refused for time is skipped
                with budget(min(POPULATION_RUNG_SECONDS, max(current_budget().remaining(), 0.0))
                            if current_budget() is not None else POPULATION_RUNG_SECONDS):
                    vr, info_r = _delta_law(vals, mass, others[0], others[1], rtol, None, POPULATION_RUNG_WORK)
            except ResourceLimitError:
                outer = current_budget()
                if outer is not None and outer.remaining() <= 0:
                    raise
                continue
            if vr < v:
                v, info = vr, (info_r if others is not hom else dict(
                    info_r, how=f"homogeneous reduction: {int(hom[1][0])} others at blanket mass {hom[0][0]:.6g} "
                                "(Theorem 13)"))
        if math.isfinite(v):
            err = float(info.get("charged", 0.0) or 0.0)
            rungs.append({"z": z, "charge": tau, "upper": float(np.nextafter(v + tau, np.inf)), "error": err})
            done[z] = (v, err, tau, info)
        else:
            rungs.append({"z": z, "charge": tau, "upper": math.inf, "error": math.inf, "refused": "time"})
            done[z] = (None, math.inf, tau, {})
        return done[z]

    def climb(guide0: float):
        nonlocal best, best_info
        guide = guide0
        first = SHALLOW_FRACTION if (fixed and mu >= SHALLOW_FIRST_MU and n >= FINE_MIN_N) else FIRST_FRACTION
        order = [_population_depth(mu, first * guide)]
        while order and len(done) < max_rungs:
            z = order.pop(0)
            fresh = z not in done
            v, err, tau, info = evaluate(z)
            if v is not None:
                up = float(np.nextafter(v + tau, np.inf))
                if up < best:
                    best, best_info = up, dict(info, delta_charge=tau)
            if v is None or (err > LADDER_RETRY_ERR * max(v - err, 0.0) and v >= POPULATION_DEEPER_FRACTION * tau):
                # refused, or the evaluation's own error bound dominates (a heavy far tail): the shallower rung
                zs = _population_depth(mu, SHALLOW_FRACTION * (guide if (fixed or v is None)
                                                               else min(guide, max(v, tau))))
                if zs < z:
                    order.append(zs)
                continue
            if fresh and not fixed and tau > POPULATION_DEEPER_FRACTION * v:
                # the charge is a large part of the value: the rung an ε query at this value would use
                guide = max(v, 1e-12 * tau)
                zd = _population_depth(mu, FIRST_FRACTION * guide)
                if zd > z:
                    order.append(zd)

    if fixed:
        climb(float(guide))
    else:
        # a δ query: from the certified lower δ (often close to the truth) and from the local profile (when the
        # lower bound is far below the truth, its rungs are too deep to evaluate tightly)
        if start is not None and start > 0:
            climb(float(start))
        climb(local)
    if crossed:
        won = "cross blanket" not in str(best_info.get("how", ""))
        tally[1 if won else 0] += 1
    return min(best, 1.0), dict(best_info, rungs=rungs)


#: Tail mass of each group's binomial count law left outside its window (threshold-count lower bound).
POPULATION_LOWER_TAIL = 1e-40
#: Multiply-adds up to which the count laws are convolved directly (relative rounding, kept at every ε);
#: beyond, by FFT (absolute rounding: useless where e^ε is large).
POPULATION_DIRECT_WORK = 1e8
#: Relative accuracy assumed for scipy's binomial pmf values (an estimate, as every special-function value here).
_PMF_RTOL = 1e-12


@functools.lru_cache(maxsize=64)
def _population_count_law(others: tuple, sensitivity: float, t: float, below: bool = False) -> tuple:
    """Law of the number of other users' reports above t (``below``: below t) when every other user holds Δ:
    ``others`` = ((σ, N),
    ...), on a window of consecutive counts (its offset does not matter to the threshold pair: the target adds 0
    or 1).  Returns (law, relative error bound per entry or None, absolute error bound per entry, dropped tail).
    Each group's binomial pmf on its Bernstein window (tail :data:`POPULATION_LOWER_TAIL`); the windows are
    convolved directly (non-negative terms: the relative error of every entry is at most its number of products
    times 2u, plus the pmf values' own relative error) when that costs at most :data:`POPULATION_DIRECT_WORK`
    multiply-adds, else by FFT (error absolute, 1e-13 per entry and convolution, first-order estimate).  Entries
    of the window law are at most the true ones (mass outside the windows is dropped)."""
    from scipy.signal import fftconvolve
    from scipy.stats import binom

    parts, tail = [], 0.0
    L = math.log(2.0 / POPULATION_LOWER_TAIL)
    for sig, N in others:
        # the side of t on which the report falls rarely (the other side's probability, near 1, would lose its
        # complement to rounding)
        p = float(ndtr((t - sensitivity) / sig)) if below else float(_sf((t - sensitivity) / sig))
        if N * p < 1e-250:
            # (almost) never counted: the count is 0 but for a mass of at most N p, dropped (scipy's binomial pmf
            # overflows at subnormal p)
            tail += N * p
            parts.append(np.array([1.0]))
            continue
        var = N * p * (1 - p)
        w = L / 3.0 + math.sqrt(L * L / 9.0 + 2.0 * var * L)
        lo, hi = max(0, int(math.floor(N * p - w))), min(N, int(math.ceil(N * p + w)))
        if lo > 0 or hi < N:
            tail += POPULATION_LOWER_TAIL
        parts.append(binom.pmf(np.arange(lo, hi + 1), N, p))     # the window only: counts lo .. hi
    sizes = np.array([x.size for x in parts], dtype=np.float64)
    work = float(np.cumsum(sizes)[:-1] @ sizes[1:]) if sizes.size > 1 else 0.0
    law = np.array([1.0])
    if work <= POPULATION_DIRECT_WORK:
        rel = _PMF_RTOL * len(parts)
        for pm in parts:
            rel += 2.0 * _DBL_EPS * min(law.size, pm.size) * 1.01 + 2.0 * _DBL_EPS
            law = np.convolve(law, pm)
        return law, rel, 0.0, tail
    absolute = 0.0
    for pm in parts:
        law = np.maximum(fftconvolve(law, pm), 0.0)
        absolute += 1e-13
    return law, None, absolute * law.size, tail


def _population_others_sigmas(pop, g: int) -> tuple:
    """((σ, count), ...) of the users other than a target of group g, groups of equal σ merged."""
    d: dict = {}
    for i, gr in enumerate(pop.groups):
        m = gr.n - (1 if i == g else 0)
        if m > 0:
            d[gr.mechanism.sigma] = d.get(gr.mechanism.sigma, 0) + m
    return tuple(sorted(d.items()))


def _threshold_pair(pop, g: int, s: float):
    """(P0, P1, relative error or None, absolute error, dropped tail) of the threshold count at Δ/2 + s σ_t for the
    dataset (0 | Δ; others Δ) (:func:`_population_count_law`): the count of reports below t for s < 0, above t
    otherwise."""
    mt = pop.groups[g].mechanism
    D, st = mt.sensitivity, mt.sigma
    t = D / 2 + s * st
    # below the midpoint the reports below t are counted (rare there: their probabilities keep full relative accuracy;
    # the count above t is n minus it, the same post-processing), above it the reports above t
    below = s < 0
    law, rel, absolute, tail = _population_count_law(_population_others_sigmas(pop, g), float(D), float(t), below)
    if below:
        p0, p1 = float(ndtr(t / st)), float(ndtr((t - D) / st))
    else:
        p0, p1 = float(_sf(t / st)), float(_sf((t - D) / st))
    shifted = np.concatenate([[0.0], law])
    base = np.concatenate([law, [0.0]])
    return p0 * shifted + (1 - p0) * base, p1 * shifted + (1 - p1) * base, rel, absolute, tail


def population_threshold_pair(pop, g: int, reverse: bool = False):
    r"""The accountant's concrete pair of a target of group g: the threshold count (of :data:`THRESHOLDS`) of the
    dataset (0 | Δ; others Δ) with the largest total variation, as (U, L) with U <= P^0 and L >= P^1 entrywise
    (rounding and dropped tail moved against the pair; ``reverse``: U <= P^1 and L >= P^0), so every outcome's
    :math:`(U - e^\varepsilon L)_+` is at most the exact one's, also in products (composition)."""
    best, best_tv = None, -1.0
    for s in THRESHOLDS:
        P0, P1, rel, absolute, tail = _threshold_pair(pop, g, s)
        tv = float(np.maximum(P0 - P1, 0.0).sum())
        if tv > best_tv:
            best_tv, best = tv, (P0, P1, rel, absolute, tail)
    P0, P1, rel, absolute, tail = best
    if reverse:
        P0, P1 = P1, P0
    r = (rel if rel is not None else 0.0) + 4 * _DBL_EPS + 1e-14
    return P0 * (1 - r) - absolute, P1 * (1 + r) + absolute + tail


def population_delta_lower(pop, g: int, eps: float, both: bool = False):
    """Certified lower δ: threshold counts for the dataset (0 | Δ; every other user at Δ), the others' count
    law exact on windows (:func:`_population_count_law`: its rounding and dropped tail subtracted); thresholds
    at :data:`THRESHOLDS` and at the target's critical cut s* (:func:`critical_cut` with the target's Δ/σ and the
    population's n) and s* ± LR_FINE_HALF, in units of the target's σ.  Returns (δ, description)."""
    n = pop.n
    if n > POPULATION_LOWER_MAX_N:
        return 0.0, f"none (n > {POPULATION_LOWER_MAX_N})"
    mt = pop.groups[g].mechanism
    D, st = mt.sensitivity, mt.sigma
    e = math.exp(eps)
    best, how = 0.0, "none"
    sc = round(critical_cut(D / st, n, eps) / LR_CUT_ROUND) * LR_CUT_ROUND
    extra = [sc + k * LR_FINE_HALF for k in (-1, 0, 1)]
    for s in sorted(set(THRESHOLDS) | set(extra)):
        P0, P1, rel, absolute, tail = _threshold_pair(pop, g, s)
        for rev in ((False, True) if both else (False,)):
            A, B = (P1, P0) if rev else (P0, P1)
            if rel is not None:
                # relative rounding (plus 4u for the mixing and the normal tails): A lowered, B raised
                r = rel + 4 * _DBL_EPS + 1e-14
                v = float(np.maximum(A * (1 - r) - e * (B * (1 + r)), 0).sum()) * (1 - 1e-12)
            else:
                v = float(np.maximum(A - e * B, 0).sum()) - absolute * (1 + e)
            v -= e * tail
            if v > best:
                best, how = v, f"threshold count t = Δ/2 {s:+g}σ_t (0 | Δ; others Δ)" + (" (swapped)" if rev else "")
    return max(best, 0.0), how


#: Levels 0..SCORE_LEVELS of the multi-level score of the Gaussian population lower bound
#: (:func:`population_score_levels`); measured at 5000 + 5000 users, σ = 0.5 and 1, δ = 1e-6: 1 level (a threshold
#: count) 0.066, 4 levels 0.073, 8 levels 0.074, 16 levels 0.074 (uncertified values of the same statistic).
SCORE_LEVELS = 8
#: Grid of the score's level map: uniform cells over Δ/2 ± SCORE_HALF_WIDTH widest σ.
SCORE_GRID = 4000
SCORE_HALF_WIDTH = 12.0
#: Relative accuracy assumed for scipy's normal tail values (an estimate, as every special-function value here).
_NDTR_RTOL = 1e-14
#: Work estimate (multiply-adds, every squaring counted at the final window: a large over-estimate) up to which the
#: accountant's score pair is convolved directly (:func:`population_score_pair`); beyond, the threshold count.
#: Measured (σ = 0.5 / 1, two equal groups): 1e4 users estimate 9e8, 0.01 s of CPU; 1e5 users 7e9, 0.07 s; 1e6 users
#: 8.5e10, 4.7 s.
SCORE_DIRECT_WORK = 2e10
#: Levels tried for the accountant's score pair, most first (fewer levels shrink the windows; measured at 5e5 + 5e5
#: users, 10 rounds: 4 levels lower total 0.02015 in 4.6 s of CPU, 2 levels 0.01950 in 0.05 s).
SCORE_PAIR_LEVELS = (SCORE_LEVELS, 4, 2)


def population_score_levels(pop, g: int, levels: int = SCORE_LEVELS, with_errors: bool = False) -> tuple:
    r"""Level probabilities of the multi-level score of a target of group g (:mod:`shuffleamp.personalized`,
    "Gaussian groups", lower bound): the dataset (0 | Δ; every other user at Δ), each report y post-processed to
    the integer :math:`f(y) \in \{0, \dots, K\}`, K = ``levels``, the rounded linear score
    :math:`K s(y)/\max s`, :math:`s = (\varphi_{\sigma_t}(y) - \varphi_{\sigma_t}(y - \Delta))_+/\Lambda(y)`,
    :math:`\Lambda = \sum_h N_h\varphi_{\sigma_h}(\cdot - \Delta)` (any map f is a post-processing: the choice
    only changes tightness).  f is constant on runs of a uniform grid (the end runs unbounded), so each level's
    probability is a sum of normal-CDF differences at the run boundaries (from the nearer tail).

    Returns
    -------
    (ndarray, ndarray, list of (ndarray, int))
        The target's level pmf under input 0 and under Δ, and per group of other users (merged by σ) its level pmf
        and count; every pmf of shape (levels + 1,).  With ``with_errors``, each pmf is a pair (pmf, absolute error
        bound per level): every CDF value from its nearer tail t with error at most :data:`_NDTR_RTOL` t, and the
        differences and sums rounded.
    """
    mt = pop.groups[g].mechanism
    D, st = float(mt.sensitivity), float(mt.sigma)
    others = _population_others_sigmas(pop, g)
    smax = max([st] + [sig for sig, _ in others])
    y = np.linspace(D / 2 - SCORE_HALF_WIDTH * smax, D / 2 + SCORE_HALF_WIDTH * smax, SCORE_GRID + 1)
    mid = 0.5 * (y[1:] + y[:-1])

    def logpdf(x, sig):
        return -0.5 * (x / sig) ** 2 - math.log(sig)
    lam = np.zeros(mid.size)
    base = logpdf(mid - D, smax)                   # a common scale, so that no term underflows to 0 alone
    for sig, N in others:
        lam += N * np.exp(logpdf(mid - D, sig) - base)
    num = np.exp(logpdf(mid, st) - base) - np.exp(logpdf(mid - D, st) - base)
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.where(lam > 0, np.maximum(num, 0.0) / lam, 0.0)
    top = float(sc.max())
    f = np.zeros(mid.size, dtype=np.int64) if not top > 0 else \
        np.clip(np.round(levels * sc / top), 0, levels).astype(np.int64)
    cut = np.flatnonzero(f[1:] != f[:-1])          # runs of equal level: boundaries y[cut + 1]
    bounds = np.concatenate([[-np.inf], y[cut + 1], [np.inf]])
    run_level = np.concatenate([f[cut], [f[-1]]])

    def pmf(x, sig):
        za, zb = (bounds[:-1] - x) / sig, (bounds[1:] - x) / sig
        c = _cdf_diff(za, zb)
        v = np.bincount(run_level, weights=c, minlength=levels + 1)
        if not with_errors:
            return v
        tails = lambda z: np.nan_to_num(ndtr(-np.abs(z)), nan=0.0)     # the nearer tail of each CDF value
        err = (_NDTR_RTOL + 2 * _DBL_EPS) * (tails(za) + tails(zb)) + 2 * _DBL_EPS * c
        e = np.bincount(run_level, weights=err, minlength=levels + 1) + 2 * _DBL_EPS * cut.size * v
        return v, e
    return pmf(0.0, st), pmf(D, st), [(pmf(D, sig), int(N)) for sig, N in others]


def _window_trim(law: np.ndarray, off: int, m: int, mean1: float, var1: float, K: int, L: float) -> tuple:
    """``law`` (offset ``off``) of a sum of m i.i.d. levels in [0, K] cut to its Bernstein window (tail e^{-L}/2 on
    each side); returns (law, offset, dropped?).  Dropping entries only lowers them (kept entries are exact sums)."""
    t = K * L / 3.0 + math.sqrt((K * L / 3.0) ** 2 + 2.0 * m * var1 * L)
    lo, hi = max(0, int(math.floor(m * mean1 - t))), min(m * K, int(math.ceil(m * mean1 + t)))
    a, b = max(lo - off, 0), min(hi - off + 1, law.size)
    return law[a:b], off + a, (a > 0 or b < law.size)


def population_score_pair(pop, g: int):
    """The multi-level score pair of a target of group g (:func:`population_score_levels`) by direct convolutions
    (relative rounding bounds, which compose): each group's law by windowed exponentiation by squaring (the window of
    every partial sum its Bernstein window, tail :data:`POPULATION_LOWER_TAIL` per cut), then the groups and the
    target convolved, once from the level probabilities lowered by their error bounds and once raised.  Returns
    (P0_lo, P0_hi, P1_lo, P1_hi, relative rounding bound r, dropped mass bound d): for b = 0, 1 the true law lies
    between ``Pb_lo * (1 - r)`` and ``Pb_hi * (1 + r) + d`` entrywise; None when the work estimate exceeds
    :data:`SCORE_DIRECT_WORK`."""
    cache = pop.__dict__.setdefault("_score_pairs", {})
    if g in cache:
        return cache[g]
    L = math.log(2.0 / POPULATION_LOWER_TAIL)
    for K in SCORE_PAIR_LEVELS:                    # the most levels whose direct convolutions fit the work cap
        p0, p1, others = population_score_levels(pop, g, K, with_errors=True)
        (p0, e0), (p1, e1) = p0, p1
        others = [(q[0], N, q[1]) for q, N in others]
        ks = np.arange(K + 1, dtype=np.float64)
        work = 0.0
        for q, N, _e in others:
            var1 = max(float(q @ ks ** 2) - float(q @ ks) ** 2, 0.0)
            w_final = 2.0 * (K * L / 3.0 + math.sqrt((K * L / 3.0) ** 2 + 2.0 * N * var1 * L)) + K + 1
            work += w_final * w_final * 2.0 * max(1, int(N).bit_length())
        if work <= SCORE_DIRECT_WORK:
            break
    else:
        cache[g] = None
        return None
    # two computations: from the level probabilities lowered by their error bounds (entrywise lower bounds of the true
    # laws: convolutions of non-negative arrays are monotone) for P0, raised for P1; each with an entrywise relative
    # bound of its own rounding (first order: a convolution of arrays with bounds r_a, r_b has r_a + r_b + 2u * (terms
    # per entry) + 2u; repeated squaring doubles the base's bound at every step)
    def laws_of(side):
        cuts, out, rel = 0, np.array([1.0]), 0.0
        for q, N, e in others:
            mean1 = float(q @ ks)
            var1 = max(float(q @ ks ** 2) - mean1 ** 2, 0.0)
            qs = np.maximum(q - e, 0.0) if side < 0 else q + e
            res, res_off, res_m, res_rel = np.array([1.0]), 0, 0, 0.0
            base, base_off, base_m, base_rel = qs, 0, 1, 0.0
            n_left = int(N)
            while n_left:
                if n_left & 1:
                    res_rel += base_rel + 2.0 * _DBL_EPS * min(res.size, base.size) * 1.01 + 2.0 * _DBL_EPS
                    res, res_off, res_m = np.convolve(res, base), res_off + base_off, res_m + base_m
                    res, res_off, cut = _window_trim(res, res_off, res_m, mean1, var1, K, L)
                    cuts += cut
                n_left >>= 1
                if n_left:
                    base_rel = 2.0 * base_rel + 2.0 * _DBL_EPS * base.size * 1.01 + 2.0 * _DBL_EPS
                    base, base_off, base_m = np.convolve(base, base), 2 * base_off, 2 * base_m
                    base, base_off, cut = _window_trim(base, base_off, base_m, mean1, var1, K, L)
                    cuts += cut
            rel += res_rel + 2.0 * _DBL_EPS * min(out.size, res.size) * 1.01 + 2.0 * _DBL_EPS
            out = np.convolve(out, res)
        rel += 2.0 * _DBL_EPS * (K + 1) * 1.01 + 2.0 * _DBL_EPS       # the target's convolution below
        return out, rel, cuts
    lo, rel_lo, _c = laws_of(-1)
    hi, rel_hi, cuts1 = laws_of(+1)
    if lo.size != hi.size:                       # the windows of the two computations differ: no pair
        cache[g] = None
        return None
    rel = max(rel_lo, rel_hi)
    P0_lo, P1_lo = np.convolve(lo, np.maximum(p0 - e0, 0.0)), np.convolve(lo, np.maximum(p1 - e1, 0.0))
    P0_hi, P1_hi = np.convolve(hi, p0 + e0), np.convolve(hi, p1 + e1)
    # mass dropped by the windows: each cut drops at most the tail of its (sub-)law, and a squaring doubles the
    # deficit of its base, so the final deficit is at most (cuts + 2 N) tails per group (total mass, hence per entry)
    dropped = (cuts1 + 2.0 * sum(N for _, N, _e in others)) * POPULATION_LOWER_TAIL * 2.0
    cache[g] = (P0_lo, P0_hi, P1_lo, P1_hi, rel, dropped)
    return cache[g]


# ---------------------------------------------------------------------------- the accountant's totals over rounds
def loss_scale(mu: float, n: int, upper: bool) -> float:
    r"""Placement scale (nats) of the privacy loss of one shuffled round: :math:`\sqrt{\chi^2/n}`, the standard
    deviation of the loss in the Gaussian limit, with :math:`\chi^2 = e^{\mu^2} - 1` for the concrete pair
    (0 | Δ; others Δ) and :math:`\chi^2_{\rm up} = 2[e^{\mu^2}\Phi(3\mu/2) - 2\Phi(\mu/2) + \Phi(-\mu/2)]` for the
    blanket pair of the upper bound (both derived in :func:`shuffleamp.baselines.shuffle_index`).  An estimate that
    only places the accountant's ε grids (every grid gives certified values).

    Parameters
    ----------
    mu : float
        Δ/σ.
    n : int
        Number of users.
    upper : bool
        The blanket pair's scale (True) or the concrete pair's (False).

    Returns
    -------
    float
    """
    chi2 = blanket_chi2(mu) if upper else math.expm1(mu * mu)
    return math.sqrt(max(chi2, 1e-300) / max(int(n), 1))


def blanket_chi2(mu: float) -> float:
    r""":math:`\chi^2_{\rm up} = 2[e^{\mu^2}\Phi(3\mu/2) - 2\Phi(\mu/2) + \Phi(-\mu/2)]`, the χ² of the blanket
    pair of the Gaussian pair (0, Δ) in units of σ, μ = Δ/σ (derived in :func:`shuffleamp.baselines.shuffle_index`).
    The closed form cancels at small μ (there :func:`shuffleamp.baselines.shuffle_index` integrates instead) and
    overflows at μ² > 709.

    Parameters
    ----------
    mu : float
        Δ/σ.

    Returns
    -------
    float
    """
    return 2.0 * (math.exp(mu * mu) * float(ndtr(1.5 * mu)) - 2.0 * float(ndtr(mu / 2)) + float(ndtr(-mu / 2)))


#: The accountant's lower-bound layouts for totals over rounds (:func:`totals_lowers`) are placed at these fractions
#: of the single round's lower ε at the target (a total over R rounds is decided at a smaller ε of each round than
#: one round, the more so the more rounds; measured at Δ/σ = 2, n = 1e5: the quarter wins at 1 and 365 rounds, the
#: half at 10) and at the Gaussian-DP level of :func:`accounting_lowers`; at most TOTALS_MAX_CANDIDATES in all.
TOTALS_PROBE_FRACTIONS = (0.25, 0.5)
TOTALS_MAX_CANDIDATES = 7
#: ... and one layout over the bulk of the score's variance (TOTALS_BULK_CUTS cuts uniform from s = −3μ/2 − 1 to
#: −3μ/2 + 3.5, units of σ): many rounds are decided by the bulk (the χ² of the quantised pair), and at n below
#: FINE_MIN_N the finer layouts' certified evaluation is loose at Δ/σ = 2 (measured at n = 1e3, 365 rounds: lower
#: total 22.3 -> 26.9 at Δ/σ = 2; 3.57 -> 3.60 at Δ/σ = 1).
TOTALS_BULK_CUTS = 10


def totals_lowers(mu: float, n: int, eps1: float | None) -> list:
    r"""The accountant's candidate lower-bound datasets for a total over rounds: the multi-cell pairs of
    :func:`accounting_lowers`, the bulk layout (:data:`TOTALS_BULK_CUTS`) and,
    with ``eps1`` (the single round's certified lower ε at the total's target δ), the multi-cell quantised pairs of
    :func:`lower_layouts` at the probes ``eps1`` times :data:`TOTALS_PROBE_FRACTIONS` (no threshold count, no
    single cut), at most :data:`TOTALS_MAX_CANDIDATES` in all.  Every one is a post-processing of the concrete pair (0 | Δ; others Δ), so each one's R-fold
    composition is a lower bound on the total (accountant's argument G); the accountant keeps the one whose composed
    total is largest.

    Parameters
    ----------
    mu : float
        Δ/σ.
    n : int
        Number of users.
    eps1 : float or None
        Probe ε (nats); None: :func:`accounting_lowers` alone.

    Returns
    -------
    list of Decomposition
        Distinct by cuts, :func:`accounting_lowers` first.
    """
    out = [d for d in accounting_lowers(mu, n) if len(getattr(d, "cuts", ())) > 1]
    bulk = quantised_pair(float(mu), _rounded_cuts(np.linspace(-1.5 * mu - 1.0, -1.5 * mu + 3.5, TOTALS_BULK_CUTS)))
    if bulk.cuts not in {d.cuts for d in out}:
        out.append(bulk)
    if eps1 is None or not eps1 > 0.0:
        return out
    seen = {d.cuts for d in out}
    for f in TOTALS_PROBE_FRACTIONS:
        for d in lower_layouts(float(mu), int(n), float(eps1) * f, thresholds=False):
            cuts = getattr(d, "cuts", ())
            if len(cuts) > 1 and cuts not in seen:
                seen.add(cuts)
                out.append(d)
    return out[:TOTALS_MAX_CANDIDATES]
