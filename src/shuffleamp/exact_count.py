r"""Exact shuffled privacy of binary randomized response, through the count of reported ones.

Model
-----
Binary randomized response with local parameter ε0 (nats) reports the true bit with probability
:math:`p_1 = e^{\varepsilon_0}/(e^{\varepsilon_0}+1)` and the other bit with :math:`p_0 = 1-p_1`.
After shuffling, the output is the multiset of reports, equivalent to the count :math:`C` of
reported ones (Cheu et al., 2019).  Neighbouring datasets differ in user 1; ``m`` of the other
:math:`N = n-1` users hold a one.  With :math:`S_m = \mathrm{Bin}(m, p_1) + \mathrm{Bin}(N-m, p_0)`
(PMF :math:`f_m`) and user 1 holding bit ``b``,

.. math:: P_b(c) = q_b f_m(c-1) + (1-q_b) f_m(c),\qquad q_0 = p_0,\ q_1 = p_1 .

The exact privacy profile of the mechanism is
:math:`\delta^*(\varepsilon) = \max_m \max\{H_\varepsilon(P_0\|P_1), H_\varepsilon(P_1\|P_0)\}`,
with the hockey-stick divergence :math:`H_\varepsilon(P\|Q) = \sum_c (P(c) - e^\varepsilon Q(c))_+`.

Facts used (derived here)
-------------------------
1. **Orderings.** Flipping every bit maps ``c -> n - c``, ``m -> N - m`` and user 1's bit
   ``b -> 1 - b``, so :math:`H_\varepsilon(P_1^{(m)}\|P_0^{(m)}) = H_\varepsilon(P_0^{(N-m)}\|P_1^{(N-m)})`.
   Hence the maximum over both orderings and all ``m`` is the maximum over ``m = 0..N`` of the
   single ordering "user 1 holds 0 vs 1".
2. **Lower sets are optimal.** :math:`f_m` is a Poisson-binomial PMF, hence log-concave, so
   :math:`r(c) = f_m(c-1)/f_m(c)` is non-decreasing and the likelihood ratio
   :math:`P_0(c)/P_1(c) = (p_0 r + p_1)/(p_1 r + p_0)` is non-increasing in ``c``
   (:math:`p_1 > p_0`).  The optimal set of the hockey stick is therefore a lower set
   :math:`\{C \le t\}`: :math:`\delta_m(\varepsilon) = \max_t F_0(t) - e^\varepsilon F_1(t)`
   (:math:`F_b` the CDFs), and dually
   :math:`\varepsilon_m(\delta) = \max_t \log((F_0(t) - \delta)/F_1(t))` over ``t`` with
   :math:`F_0(t) > \delta`.  So ε(δ) of one pair is one pass over the window, with no root search.
3. **Where is the worst m?  Not at a fixed place.** Exhaustive evaluation (small ``n``) shows
   that the maximiser moves with ε: balanced ``m`` near ε = 0 (the total variation), ``m = 0``
   (equivalently ``N`` in the other ordering) in the far tail, and ``m = 1, 2, 3, ...`` in
   between (e.g. ε0 = 1, n = 100, ε = 0.3: ``m = 1`` beats ``m = 0`` by 1.6 %).  Extremality at
   the ends is false, so this module does not assume any location.
4. **Certified search over m (block bound).** For a block ``m in [a, a + j]`` every :math:`S_m`
   equals :math:`U + V_m` with :math:`U = \mathrm{Bin}(a, p_1) + \mathrm{Bin}(N - j - a, p_0)`
   (the users whose type is common to the block) and :math:`V_m` the ``j`` users whose type varies,
   independent of user 1 and of ``U``.  Each of them is, independently, a fair coin with
   probability :math:`2p_0` and its own deterministic bit otherwise
   (:math:`\mathrm{Bern}(p_1) = 2p_0\,\mathrm{Bern}(1/2) + (1-2p_0)\,\delta_1`, likewise for
   :math:`p_0` with :math:`\delta_0`).  Conditioning on the coin set (independent of user 1) and
   using joint convexity of the hockey stick, shift invariance and post-processing (more coins only
   add noise): :math:`\delta_m(\varepsilon) \le h_\varepsilon(k_0) + P(K < k_0)` for every ``m`` in
   the block, with :math:`h_\varepsilon(k)` the exact value of the pair whose others' count is
   :math:`U + \mathrm{Bin}(k, 1/2)` and :math:`K \sim \mathrm{Bin}(j, 2p_0)`.  This keeps
   :math:`1/(2p_1)` of the block's variance instead of dropping it (the plain "drop the ``j`` users"
   bound).  A branch-and-bound over blocks (split the block with the largest bound, prune blocks
   whose bound is below the best exact value found) gives a certified upper bound on the worst
   case; the exact values of single ``m`` give the certified lower bound.  The search stops when
   the two agree within the requested tolerance or when the pair budget is spent (then the
   reported ``error`` says how far they are apart).
5. **Mirror symmetry.** :math:`\mathrm{Bin}(a, p_1) + \mathrm{Bin}(c, p_0)` has the law of
   :math:`a + c - (\mathrm{Bin}(c, p_1) + \mathrm{Bin}(a, p_0))`, so the datasets ``m`` and
   ``N - m`` (and the blocks ``[a, b]`` and ``[N - b, N - a]``) share one count law, reversed.
6. **What the search costs at large n (measured, not a proof).**  The values of the datasets vary
   little in m: at ε0 = 1, δ = 1e-6 the whole range m = 0..N/2 moves ε by 8e-6 relative at n = 1e8,
   with a lattice jitter between neighbouring m of 1e-4 relative at n = 1e4 and below 1e-7 at
   n = 1e8.  The block bound of fact 4 gives up the variance of the varying users' deterministic part
   (at ε0 = 1 its ε exceeds the block's best value by 0.2-0.6 j/N relative for a block of j datasets),
   a first-order loss that no mixture of shifts can avoid: every law in the block has the same
   variance N p0 p1, so a common component that is mixed over shifts has less.  Certifying the worst
   case to 1e-6 therefore takes blocks of about 1e-6 N / 0.3 datasets near the worst one: the search
   converges at n <= 1e4 in a few hundred pairs, needs over a thousand at n = 1e5, and beyond stops on
   the default's pair budget with a bracket of a few tenths of a percent (n = 1e5, 1e6) to 2.5 %
   (n = 1e8, 1e9) (``bench/results_binary_rr.md``).  Fact 7 closes it at large n with a bound whose
   loss is of higher order in j/N.
7. **Phase comparison (from n = 2e4).**  Write :math:`\alpha = p_1 - e^\varepsilon p_0 \ge 0`
   (ε <= ε0), :math:`\beta = e^\varepsilon - 1`, and for a signed measure S on the integers
   :math:`\Phi_c(S) = \alpha S(\{c\}) - \beta S((-\infty, c-1])`.  From
   :math:`F_0(c) = p_0F(c-1) + p_1F(c)`, :math:`F_1(c) = p_1F(c-1) + p_0F(c)` (F the CDF of
   :math:`S_m`), :math:`F_0(c) - e^\varepsilon F_1(c) = \Phi_c(S_m)`, so by fact 2
   :math:`\delta_m(\varepsilon) = \max_c G_m(c)` with :math:`G_m(c) = \Phi_c(S_m)`.  Φ is linear and
   commutes with shifts: :math:`\Phi_c(S * \mu) = \sum_t \mu(t)\,G_S(c-t)` for a summable μ.

   (a) *Moving m is a pure phase.*  :math:`\mathrm{Bern}(p_1) = \mathrm{Bern}(p_0) * \nu_1` with the
   summable signed measure :math:`\nu_1 = r\delta_0 + (1-r^2)\sum_{k\ge1}(-r)^{k-1}\delta_k`,
   :math:`r = p_0/p_1`, whose characteristic function is
   :math:`\psi(\theta) = (p_0 + p_1e^{i\theta})/(p_1 + p_0e^{i\theta})`, of modulus 1.  So
   :math:`S_{m_0+j} = S_{m_0} * \nu_j` exactly, :math:`\hat\nu_j = \psi^j` (j < 0: the reflection).
   With :math:`\psi = e^{iA}`, :math:`A(\theta) = 2\arg(p_0 + p_1e^{i\theta}) - \theta`, a direct
   computation gives :math:`A' = a/D`, :math:`a = p_1 - p_0`, :math:`D = 1 - 2p_0p_1(1-\cos\theta)`
   (:math:`\ge a^2`, decreasing on [0, π]).  Hence :math:`B = A - a\theta` has
   :math:`B' = 2ap_0p_1u/D`, :math:`u = 1-\cos\theta \le \theta^2/2`, and
   :math:`|B| \le ap_0p_1|\theta|^3/(3D(\theta))`: moving m is a shift by :math:`ja` plus a cubic phase
   :math:`jb\theta^3`, :math:`b = ap_0p_1/3` (the third cumulant, linear in m; even cumulants do not move).

   (b) *Comparison measure.*  Let :math:`k_0 = \lfloor ja\rfloor`, :math:`w = ja - k_0\in[0, 1)`,
   :math:`L_w` the cubic Lagrange weights :math:`l_u(w)` on u = -1, 0, 1, 2 (their moments of order 0..3
   are those of :math:`\delta_w`, so :math:`\hat L_w` matches :math:`e^{iw\theta}` to third order;
   :math:`|l_{-1}| \le 1/12`, :math:`|l_2| \le 0.065`, :math:`\|L_w\|_1 \le 5/4`) and :math:`s_3` the weights
   1/2, -1, 1, -1/2 on -2, -1, 1, 2 (:math:`\hat s_3 = iC`, :math:`C = 2\sin\theta(1-\cos\theta)`,
   :math:`0 \le C \le \theta^3` on [0, π]).  With
   :math:`\lambda_j = \delta_{k_0} * L_w * (\delta_0 + jb\,s_3)` and
   :math:`H_j = G_{m_0} + jb\,(s_3 * G_{m_0})`,
   :math:`\Phi_c(S_{m_0} * \lambda_j) = V(c-k_0, w; j) := \sum_u l_u(w) H_j(c - k_0 - u)` (the cubic
   through the points :math:`(u, H_j(c-k_0-u))`, at w), so
   :math:`\delta_{m_0+j}(\varepsilon) \le \max_x \max_{0\le w\le 1} V(x, w; j) + \sup_c|\Phi_c(E_j)|`,
   :math:`E_j = S_{m_0} * (\nu_j - \lambda_j)`.  For fixed (x, w), V is affine in j: over a block of
   datasets :math:`j \in [j_L, j_H]` the maximum is at :math:`j_L` or :math:`j_H`.  Blocks: with two
   bases, m in [0, N/2] from m0 = 0 and m in (N/2, N] from m0 = N, each law one binomial; with K > 2,
   end blocks [0, J], [N - J, N] from 0 and N and K - 2 blocks of at most 2J + 1 datasets between them,
   each from its middle dataset (law: the direct convolution of two binomial windows, used while their
   cost is small, :data:`PHASE_DIRECT_OPS`).  V is maximised over w at the ends and at the roots of its
   derivative (a cubic in w).

   (c) *Remainder.*  :math:`E_j` is summable with mass 0 and a finite first moment, so its CDF has
   transform :math:`\hat E/(1 - e^{i\theta})` and
   :math:`|\Phi_c(E_j)| \le \alpha I_0 + \beta I_1`, :math:`I_0 = \frac1{2\pi}\int|\hat E|`,
   :math:`I_1 = \frac1{2\pi}\int|\hat E|/|1-e^{i\theta}|`, with
   :math:`|\hat E| = D^{N/2}\,|\psi^j - \hat\lambda_j|` (each Bernoulli factor has modulus
   :math:`\sqrt D`).  Now :math:`|\psi^j - \hat\lambda_j| = |e^{iw\theta}e^{ijB} - \hat L_w(1 + ijbC)|
   \le |e^{iw\theta} - \hat L_w|\,(1 + |j|b|C|) + |e^{ijB} - 1 - ijB| + |j|\,|B - bC|`, where
   :math:`e^{iw\theta} - \hat L_w` vanishes with three derivatives at 0 and has fourth derivative at most
   :math:`w^4 + \sum_u |l_u| u^4 \le 1 + 1/12 + 1 + 16\cdot 0.0642 < 3.12` (so it is at most
   :math:`0.13\,\theta^4`),
   :math:`|e^{ijB} - 1 - ijB| \le (jB)^2/2`, and :math:`B' - bC' = 4ap_0p_1u^2(p_0p_1/D + 1/3)` gives
   :math:`|B - bC| \le ap_0p_1(p_0p_1/D(\theta) + 1/3)|\theta|^5/5`; always
   :math:`|\psi^j - \hat\lambda_j| \le 1 + \tfrac54(1 + |j|b|\theta|^3)`.  The integrals are bounded by upper
   Riemann sums (:math:`D^{N/2}` decreasing, the bracket increasing, each taken at the worse end of its
   cell; the rounding of b is charged as a further :math:`8\,\mathrm{eps}\,|j|b|\theta|^3`).  Their size
   is dominated by :math:`(jB)^2/2`, of order :math:`\beta a^2/(p_0p_1N)` at :math:`|j| = N/2`, and by the
   lattice term of order :math:`\beta/\sigma^4`: relative to δ the first falls like :math:`n^{-3/2}` (and like
   :math:`K^{-2}` with K bases), the second like :math:`n^{-5/2}`.

   (d) *Numerics.*  A base window from the ratio recurrence has per-entry errors that are a common factor
   (normalisation), a factor that changes by at most 8 long double ulps per step (three roundings and the
   odds' error), and an independent final rounding.  So a difference stencil has an error relative to its
   own value plus about one double ulp of each entry, not the window's relative band times its entries
   (which the factor jb, up to 1e7, would amplify past δ); the kernel ``phase_segments_max`` charges exactly
   these terms, the window's tails, and its own roundings, in one pass over the counts that can reach the
   threshold (the others are bounded as a whole from the unimodality of f and the growth of F).

   (e) *Use.*  ``upper`` is this bound (for ε: a secant search for the smallest ε with the bound <= δ,
   checked at the returned point), where its remainder at the fewest bases (2, 4, ..., :data:`PHASE_MAX_BASES`)
   whose remainder is below 1e-7 δ or what the lattice term leaves is at most :data:`PHASE_PLAIN_RTOL` δ, and
   the bound of fact 9 elsewhere (or where this one's bracket is wider than 1e-6); ``lower`` the exact value of
   the best evaluated dataset:
   the bases 0 and N, then, near the block end where the bound is largest, the datasets whose lattice offset
   is closest to the maximising w (those come closest to the bound; the difference between lattice offsets
   is real, of relative order :math:`z^2/\sigma^2`).  From n = :data:`PHASE_MIN_N` the default methods
   accept this bracket alone when it is within 1e-6 (:data:`PHASE_ACCEPT_RTOL`) and otherwise also run the
   block search of fact 4 where it can still help.  Measured at ε0 in {0.5, 1, 2}
   (``bench/results_binary_rr.md``): at δ = 1e-6 the bracket on ε is 1e-8 to 1e-6 from n = 1e6 to 1e9 at
   ε0 = 0.5 and 1 (ε0 = 1: 5e-7 at n = 1e6, 9e-7 at 1e7, 4e-8 at 1e8 in a few tens of milliseconds, 1e-8 at
   1e9), 1e-6 to 6e-6 at n = 1e5; at ε0 = 2, 1.3e-6 at n = 1e6 and 9e-6 at 1e7 (two bases only there: more
   would cost too much); at δ = 1e-8 it was 2e-7 to 6e-4 between n = 1e5 and 1e8 with the remainder (c)
   alone.  There (c) dominates: it is an absolute bound charged uniformly over a block of up to N/2 datasets, so
   against a small δ it needs larger n.  Fact 9 removes both limits.
8. **The profile from nodes (from n = 2e4).**  :math:`\delta^*` as a function of :math:`x = e^\varepsilon`
   is convex and non-increasing on :math:`x \ge 1`: each :math:`H_m(x) = \sum_c (P(c) - xQ(c))_+` is a sum of
   convex non-increasing functions of x, and a pointwise maximum keeps both properties.  So from certified
   upper values :math:`U_k \ge \delta^*(x_k)` at nodes :math:`x_1 < \dots < x_K`, first made
   non-increasing (:math:`U_k \leftarrow \min_{i \le k} U_i`, valid as :math:`\delta^*(x_k) \le
   \delta^*(x_i)`), every x in :math:`[x_k, x_{k+1}]` has :math:`\delta^*(x) \le (1-t)U_k + tU_{k+1}`,
   :math:`t = (x - x_k)/(x_{k+1} - x_k)` (the chord of a convex function lies above it; the chord of the
   :math:`U` lies above that one), and :math:`\delta^*(x) \le U_K` for :math:`x \ge x_K`.  The chord is
   non-increasing in t, so t is rounded down (by the rounding of the three exponentials) and the value up.
   :func:`profile_binary_rr` evaluates the phase bound of fact 7 (with a fixed number of bases, so that its
   ε-independent arrays are built once per (ε0, n) and cached) at nodes among the requested ε, chosen where
   the block bound of fact 4 falls by at most :data:`PHASE_PROFILE_RATIO` from one node to the next (a chord
   then exceeds the curve by at most about :math:`(\log r)^2/8` relative), and returns the smaller of this
   and the block bound at every ε.  Nodes are placed only where the block bound exceeds the phase remainder
   several times (elsewhere the remainder alone exceeds what the phase bound could gain).
9. **Tilted remainder and split blocks (the bound of fact 7 as the default methods evaluate it).**

   (a) *Tilting.*  :math:`E_j = S_{m_0+j} - S_{m_0} * \lambda_j` is finitely supported, so
   :math:`\hat E(z) = \sum_k E(k) z^k` is a Laurent polynomial and Cauchy's formula holds on every circle
   :math:`|z| = r = e^{-\lambda}`, :math:`\lambda > 0`: :math:`E(\{c\}) = \frac1{2\pi}\int \hat E(z) z^{-c}\,d\theta`
   and :math:`E((-\infty, c-1]) = \frac1{2\pi}\int \hat E(z) z^{1-c}/(1-z)\,d\theta` (the geometric sum is cut
   below the support at :math:`K_0`; the cut part integrates :math:`\hat E(z) z^{-K_0}/(1-z)`, analytic in
   :math:`|z| < 1`, to 0).  So :math:`|\Phi_c(E_j)| \le r^{-c}(\alpha I_0 + \beta r I_1)` with
   :math:`I_0 = \frac1{2\pi}\int|\hat E(re^{i\theta})|`, :math:`I_1` the same over
   :math:`|1 - re^{i\theta}| \ge 1 - r > 0` (no zero-mass condition).  With :math:`s = \log z = -\lambda + i\theta`,
   :math:`\psi(e^s) = e^{as + G(s)}` where G is analytic and odd with :math:`G' = -2ap_0p_1v/Q`,
   :math:`v = \cosh s - 1`, :math:`Q = 1 + 2p_0p_1v` (the continuation of :math:`A' = a/D`), and
   :math:`\hat\lambda_j = e^{k_0s}\hat L_w(s)(1 + jb\,\hat s_3(s))`, :math:`\hat s_3 = 2\sinh s\,(1 - \cosh s)`.
   Hence :math:`r^{-c}|\hat E| = e^{\lambda x} M_{m_0}(r)\,|\tilde M(\theta)|\,\Psi` with :math:`x = c - k_0`
   (the base's count), :math:`M_{m_0}` the generating function of :math:`S_{m_0}`,
   :math:`|\tilde M| = |M_{m_0}(re^{i\theta})|/M_{m_0}(r)` (a product of tilted Bernoulli factors
   :math:`(1 - 2p'q'(1-\cos\theta))^{1/2}`, decreasing on [0, π]) and, as :math:`|e^{ws}| \le 1`,
   :math:`\Psi = |e^{ws}e^{jG} - \hat L_w(1 + jb\hat s_3)| \le |e^{ws} - \hat L_w|\,|1 + jb\hat s_3| +
   |e^{jG} - 1 - jG| + |j|\,|G - b\hat s_3|`.  With :math:`\rho = |s|` and power series bounded term by term
   (and G, :math:`G - b\hat s_3` integrated along [0, s], where :math:`|\cosh t - 1| \le \nu = \cosh\rho - 1`
   and :math:`|Q| \ge 1 - 2p_0p_1\nu`): :math:`|e^{ws} - \hat L_w| \le \sum_{k\ge4}(1 + |l_{-1}| + |l_1| +
   2^k|l_2|)\rho^k/k! \le 2.07\,e_4(\rho) + 0.0642\,e_4(2\rho)`, :math:`e_4(y) = \sum_{k\ge4}y^k/k! \le
   y^4/(24(1 - y/5))`; :math:`|\hat s_3| \le 2\sinh\rho\,\nu`; :math:`|G| \le 2ap_0p_1\rho\nu/(1 - 2p_0p_1\nu)`;
   :math:`|e^y - 1 - y| \le |y|^2e^{|y|}/2`; and :math:`G' - b\hat s_3' = 4ap_0p_1v^2(p_0p_1/Q + 1/3)` gives
   :math:`|G - b\hat s_3| \le 4ap_0p_1\rho\nu^2(p_0p_1/(1 - 2p_0p_1\nu) + 1/3)` (used while
   :math:`1 - 2p_0p_1\nu > 1/4`).  Where these are large, the cap :math:`|\hat E| \le |M_{m_0+j}(z)| +
   |M_{m_0}(z)|\,|\hat\lambda_j(z)|` with :math:`|M_{m_0+j}(z)|r^{-k_0}/M_{m_0}(r) \le
   e^{jG(-\lambda)}|\tilde M_{m_0+j}(\theta)|` (its logarithm is linear in j: largest at a block end) and
   :math:`|\hat L_w(s)| \le 1.25e^{\lambda}`.  Every factor is monotone in θ on [0, π], so upper Riemann sums
   certify :math:`I_0, I_1` (:func:`_tilted_remainder`), and for every dataset of a block and every count,
   :math:`|\Phi_c(E_j)| \le \mathrm{Rem}_\lambda(c - k_0) := e^{\lambda(c - k_0)}M_{m_0}(r)(\alpha I_0 +
   \beta rI_1)`, non-decreasing in the base's count, for every λ > 0.  The bound charges the smallest of the
   untilted remainder of fact 7 (c) and :math:`\mathrm{Rem}_\lambda` over a few λ about the saddle point of the
   count where V is largest (the tilt whose tilted mean is that count), the centres cut into segments each
   charged with the remainder at its last centre (:data:`PHASE_TILT_CUTS`).

   (b) *Split blocks.*  Facts 7 (b) and 9 (a) hold for every sub-interval :math:`[j_1, j_2]` of a block: V is
   affine in j on it, and the remainders take :math:`J = \max(|j_1|, |j_2|)` (the cap its two ends).  So the
   bound is the maximum over any partition of the blocks into intervals, each bounded by V at its two ends plus
   its own remainder.  An interval whose bound exceeds the largest V at an evaluated end by more than
   :data:`PHASE_SPLIT_RTOL` is split (at 1/:data:`PHASE_SPLIT_AT_BASE` of its length from the base when it ends
   there, else in the middle), at most :data:`PHASE_MAX_SPLITS` times per evaluation.  This matters more than
   (a): at the threshold the hockey stick is a small difference of large terms (:math:`\alpha f(c)` and
   :math:`\beta F(c-1)` are 1e4 .. 1e5 times δ = 1e-8 at n = 1e6 .. 1e8, the threshold only 3.4 .. 4 standard
   deviations from the mean), so a remainder relative to the tail mass is still large against δ, but the
   dominant term :math:`(jB)^2/2` falls like :math:`J^2` while V moves only linearly in j, and the worst
   datasets sit at or near a base (j = 0 is the base dataset itself, where the comparison is exact).  Measured
   (ε0 = 1, δ = 1e-8, the worst base m0 = 0, the remainder relative to δ): J = N/2: 2.4e-2 (n = 1e6), 2.4e-5
   (n = 1e8) untilted, 2.4e-2 and 7.5e-5 tilted; J = N/4096: 1.5e-6 and 2.8e-11 untilted, 6.7e-8 and 3.0e-11
   tilted (at n = 1e6 the tilt removes the lattice term's floor).

   (c) *Use.*  From n = :data:`PHASE_TILT_MIN_N` the default methods evaluate this bound where the untilted
   remainder of fact 7 at its number of bases exceeds :data:`PHASE_PLAIN_RTOL` δ, or where fact 7 leaves a
   bracket wider than 1e-6 (the smaller upper of the two is kept), with the fewest bases (searched from the
   first guess of :data:`PHASE_TILT_BLOCK_RTOL`) whose bound is within :data:`PHASE_BASES_RTOL` of the largest V
   at its evaluated block ends; an ε query still evaluates the candidates of fact 7 (e) whose laws are direct
   convolutions while its bracket is wider than :data:`PHASE_CANDIDATE_RTOL`.  Below that n the search over
   blocks (fact 4) converges where fact 7 is not within 1e-6.  The profile of fact 8 keeps fact 7 (one pass per
   block end).  Measured (``bench/results_binary_rr.md``, ε0 in {0.5, 1, 2}, δ in {1e-6, 1e-8}, n = 1e3 ..
   1e9): every bracket on ε is within 1e-6; where fact 9 is used it is 3e-10 .. 2.2e-7 (δ = 1e-8 from n = 3e5
   and ε0 = 2, δ = 1e-6 at n = 1e6, 1e7: were 1.3e-6 .. 5.7e-4), and at n = 1e8 a cold ε query takes 14 .. 30
   ms of CPU time.

Numerics
--------
Each binomial is computed on an index window outside which its mass is at most ``tau``
(Chernoff bound :math:`P(X \le k) \le e^{-N\,\mathrm{KL}(k/N\,\|\,p)}`), by the exact ratio
recurrence from the mode, normalised on the window; the recurrence, the normalisation and the cumulative
sums run in the C ``long double`` (64-bit mantissa on x86-64, so the band of a window of 3e5 entries is
about 3e-13 relative instead of 5e-10 in double; the charge uses the platform's own long double epsilon,
which is the double epsilon where the two coincide).  Short windows are convolved directly
(relative error per entry), long ones in one FFT product (scipy.fft for small transforms, else the
package's FFT backend: pyFFTW, scipy.fft fallback), whose round-off is charged as a 2-norm bound (a cumulative sum of ``t``
entries by :math:`\sqrt t` times it).  All of it — tail mass, normalisation, relative and absolute round-off — enters the certified bands
of the cumulative laws, so ``upper`` is a certified upper bound and ``lower`` a certified lower
bound of the exact value.

References
----------
.. [1] A. Cheu, A. Smith, J. Ullman, D. Zeber, M. Zhilyaev, "Distributed Differential Privacy via
   Shuffling", EUROCRYPT 2019 (the shuffled binary output is its count).
.. [2] B. Balle, J. Bell, A. Gascón, K. Nissim, "The Privacy Blanket of the Shuffle Model",
   CRYPTO 2019 (hockey-stick divergence of shuffled protocols; post-processing).
.. [3] J. Su, Y. Cheng, T. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification via
   Shuffling", IEEE S&P 2026 (arXiv:2504.07414): the decomposition bounds this module is
   compared with.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import heapq
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _validate, fft_engine
from ._ext import count as _kern
from .errors import ParameterError, ResourceLimitError
from .results import ExactCountResult  # the result type lives in results (one home)

__all__ = ["CountPMFs", "ExactCountResult", "count_pmfs", "delta_binary_rr", "epsilon_binary_rr",
           "binary_rr_eps0", "projection_pair_bounds", "profile_binary_rr", "DEFAULT_BOUNDS_PAIRS",
           "DEFAULT_MAX_N", "default_pairs", "default_point"]

#: Mass allowed outside each binomial window (certified by a Chernoff bound, charged to δ).
TAIL = 1e-25
#: Largest count window (entries) built; larger windows raise ResourceLimitError naming ``n``.
MAX_WINDOW = 1 << 21
#: Direct convolution below this many multiply-adds, FFT above.
DIRECT_CONV_OPS = 4_000_000
#: FFT products of at most this many points use :mod:`scipy.fft` directly (pocketfft: at these sizes a
#: transform takes well under a millisecond, and the first call of the package's FFT backend would import
#: pyFFTW, ~0.4 s once per process); larger ones go through :mod:`shuffleamp.fft_engine` (pyFFTW with
#: reused plans, scipy.fft fallback).  The round-off bound of ``_convolve`` holds for either.
SCIPY_FFT_MAX = 1 << 16
#: Default relative tolerance of the worst-case search (on δ for delta_binary_rr, on ε for
#: epsilon_binary_rr) and default budget of count pairs evaluated per query.
DEFAULT_RTOL = 1e-9
DEFAULT_MAX_PAIRS = 256
#: Pair budget of the exact-count engine inside :func:`shuffleamp.epsilon` / :func:`shuffleamp.delta`
#: (method ``"exact-count"`` and the default method for binary RR): the minimum, i.e. only the initial
#: evaluations (m = 0..4, N - 4..N, N/2 and the mirror-symmetric initial blocks of ``_initial_set``: 8
#: uniform ones for n >= 1e6, 16 for n >= 1e4, else 32, plus geometric ones next to the exact ends below
#: n = 1e5; every m below n = 160), so that the ε and δ queries bound the same blocks and δ(ε_upper) <= δ
#: holds between them.  Larger budgets split blocks further (tighter, slower).
DEFAULT_BOUNDS_PAIRS = 8
#: The default method of :func:`shuffleamp.epsilon` / :func:`shuffleamp.delta` runs the exact count law
#: for binary RR up to this n (cost O(sqrt(n) log n) per count law; beyond it the decomposition alone).
DEFAULT_MAX_N = 10**9
#: Probability charged for "fewer than k0 coins" in a block bound (see ``_block_bound``).
TAIL_COINS = 1e-24
#: Number of blocks of m the certified search starts from.
INITIAL_BLOCKS = 8
_EPS = 2.220446049250313e-16
#: Machine epsilon of the long double the count kernels run their recurrences and cumulative sums in
#: (2^-63 on x86-64; equal to ``_EPS`` on platforms whose long double is a double).
_EPS_LD = _kern.long_double_epsilon()


# --------------------------------------------------------------------------- count laws
def _probs(eps0: float):
    """(p0, p1) of binary RR, computed without cancellation."""
    t = math.exp(-eps0)
    p0 = t / (1.0 + t)
    return p0, 1.0 / (1.0 + t)


#: Largest eps0 (nats) of the exact count law: above it 1/(1 + e^-eps0) rounds to 1 in double precision.
#: The default method then uses the decomposition bound alone; the count-law entry points refuse.
MAX_EPS0 = 36.0


def _check_eps0(eps0: float) -> float:
    if eps0 > MAX_EPS0:
        raise ParameterError("eps0", f"the exact count law of binary randomized response supports eps0 <= "
                                     f"{MAX_EPS0:g} nats (1/(1 + e^-eps0) rounds to 1 above), got {eps0!r}; "
                                     "the default method uses the decomposition bound there")
    return eps0


def _binom_window(N: int, p: float, tau: float, q: float | None = None):
    """Window [lo, hi] of Bin(N, p) with mass <= tau below lo and <= tau above hi (Chernoff); ``q`` = 1 - p.

    The point masses here, the rest by the compiled bisection (``count.chernoff_window``: the Chernoff bound
    P(X <= k) <= exp(-N KL(k/N || p)) and its mirror, searched over the integers)."""
    if N == 0:
        return 0, 0
    if q is None and p >= 1.0:      # a point mass at N (p is exactly 1, not a rounded 1 - q)
        return N, N
    if p <= 0.0:
        return 0, 0
    return _kern.chernoff_window(N, p, tau, -1.0 if q is None else q)


def _check_window(width: int, n) -> None:
    if width > MAX_WINDOW:
        raise ResourceLimitError(
            f"n = {n}: the count window would need {width} entries (limit {MAX_WINDOW}); "
            "use a smaller n or a decomposition bound (shuffleamp.epsilon)",
            parameter="n", resource="memory")


def _fft_size(L: int) -> int:
    """Smallest of 2^k, 3 * 2^(k-1) that is >= L: few distinct lengths, so the FFT backend's plan
    cache is reused across the pairs of one search."""
    k = max((L - 1).bit_length(), 3)
    c = 3 * (1 << (k - 2))
    return c if c >= L else 1 << k


def _norm2(x) -> float:
    """2-norm of a window, rounded up by a relative 2 W machine epsilons (a sum of squares without BLAS:
    np.linalg.norm calls the threaded dot, which stalls for milliseconds on a busy machine)."""
    return math.sqrt(float(np.einsum("i,i->", x, x))) * (1.0 + 2 * (len(x) + 2) * _EPS)


def _convolve(wins: list):
    """Convolution of nonnegative windows (each summing to <= 1); returns (z, rel_error, abs_error).

    Short factors are convolved directly (relative error per entry); the remaining long ones in one
    FFT product (scipy.fft up to :data:`SCIPY_FFT_MAX` points, else pyFFTW / scipy.fft through
    :mod:`shuffleamp.fft_engine`).  FFT round-off bound: for
    probability vectors every spectrum is bounded by 1 in modulus, so with the standard bound
    ``||fl(DFT x) - DFT x||_2 <= c log2(N) eps ||DFT x||_2`` the error of the product of the spectra
    and of the inverse transform is at most ``c (log2 N + 1) eps (sum_i ||x_i||_2 + ||z||_2)`` in
    2-norm (the returned ``abs_error`` is this 2-norm bound: it bounds every entry, and a sum of t
    entries by sqrt(t) times it); c = 10 is generous.
    """
    wins = sorted(wins, key=len)
    z = wins[0]
    rho = 0.0
    rest = []
    for x in wins[1:]:
        if not rest and (len(z) == 1 or len(x) == 1 or len(z) * len(x) <= DIRECT_CONV_OPS):
            rho += (min(len(z), len(x)) + 2) * _EPS   # each entry: a sum of <= min(lengths) products
            z = np.convolve(z, x)
        else:
            rest.append(x)
    if not rest:
        return z, rho, 0.0
    facs = [z] + rest
    L = sum(len(x) for x in facs) - len(facs) + 1
    size = _fft_size(L)
    if size <= SCIPY_FFT_MAX:      # small transforms: scipy.fft (no FFTW planning, no pyFFTW import)
        import scipy.fft       # imported on use: the command line's start-up does not pay for it

        spec = None
        for x in facs:
            X = scipy.fft.rfft(x, n=size)
            spec = X if spec is None else spec * X
        out = scipy.fft.irfft(spec, n=size)[:L]
    else:
        spec = None
        for x in facs:
            xp = np.zeros(size)
            xp[:len(x)] = x
            X = fft_engine.rfft(xp, size)
            spec = X if spec is None else spec * X
        out = fft_engine.irfft(spec, size)[:L]
    np.maximum(out, 0.0, out=out)        # the true values are >= 0: clipping only moves closer
    norms = sum(_norm2(x) for x in facs) + _norm2(out)
    eta = 10.0 * (math.log2(size) + 1) * _EPS * norms
    return out, rho + 4 * _EPS, eta


#: Count laws kept for reuse (most recently used first out of the limit): an ε query of the default method
#: and its δ check evaluate mostly the same laws, as do the ε and δ queries of one (eps0, n).
LAW_CACHE_BYTES = 96 * 2**20
LAW_CACHE_ENTRIES = 8192


class _LawCache:
    """A least-recently-used cache of count laws bounded in bytes and entries (thread safe)."""

    def __init__(self, fn):
        self._fn = fn
        self._data: collections.OrderedDict = collections.OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.__wrapped__ = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *key):
        with self._lock:
            hit = self._data.get(key)
            if hit is not None:
                self._data.move_to_end(key)
                return hit
        value = self._fn(*key)
        size = value[1].nbytes
        with self._lock:
            if key not in self._data:
                self._data[key] = value
                self._bytes += size
                while self._data and (self._bytes > LAW_CACHE_BYTES or len(self._data) > LAW_CACHE_ENTRIES):
                    _, old = self._data.popitem(last=False)
                    self._bytes -= old[1].nbytes
        return value

    def cache_clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._bytes = 0

    def cache_info(self) -> dict:
        with self._lock:
            return {"entries": len(self._data), "bytes": self._bytes}


@_LawCache
def _law(eps0: float, a: int, c0: int, k0: int):
    """PMF of Bin(a, p1) + Bin(c0, p0) + Bin(k0, 1/2) on a window: (start, f, rho, eta, tau).

    ``rho``: relative and ``eta``: absolute error per entry; ``tau``: mass outside the window.
    Mirror symmetry: Bin(a, p1) + Bin(c0, p0) + Bin(k0, 1/2) has the law of
    ``a + c0 + k0 - (Bin(c0, p1) + Bin(a, p0) + Bin(k0, 1/2))``, so the case ``a > c0`` is the reversed
    array of the case ``(c0, a)`` (one computation serves the datasets m and N - m).
    """
    if a > c0:
        start, f, rho, eta, tau = _law(eps0, c0, a, k0)
        r = f[::-1].copy()
        r.setflags(write=False)
        return a + c0 + k0 - (start + len(f) - 1), r, rho, eta, tau
    p0, p1 = _probs(eps0)
    parts = [(a, p1, eps0, p0), (c0, p0, -eps0, p1), (k0, 0.5, 0.0, 0.5)]
    wins = [(N, p, lg) + _binom_window(N, p, TAIL, q) for N, p, lg, q in parts if N > 0]
    _check_window(sum(hi - lo for *_, lo, hi in wins) + 1, a + c0 + k0 + 1)
    if not wins:
        f = np.ones(1)
        f.setflags(write=False)
        return 0, f, 0.0, 0.0, 0.0
    start, rho, xs = 0, 0.0, []
    for N, p, lg, lo, hi in wins:
        x = _kern.binom_window(N, p, lg, lo, hi)
        rho += 8 * (len(x) + 4) * _EPS_LD + 4 * _EPS   # long double recurrence + normalisation, final rounding
        start += lo
        xs.append(x)
    f, rho_c, eta = _convolve(xs)
    tau = 2 * TAIL * len(wins)
    rho += rho_c + tau                              # tau: normalisation on the window
    f.setflags(write=False)
    return start, f, rho, eta, tau


def _sum_law(eps0: float, N: int, m: int):
    """PMF f of S = Bin(m, p1) + Bin(N - m, p0) on a window: (start, f, rho, eta, tau)."""
    return _law(eps0, m, N - m, 0)


@dataclass(frozen=True)
class CountPMFs:
    """The two count laws of one neighbouring pair of binary-RR datasets, on a window.

    Attributes
    ----------
    start : int
        Count value of the first entry: entry ``i`` is ``C = start + i``.
    p0, p1 : ndarray of float64, shape (W,)
        Laws of the count when user 1 holds 0 (``p0``) or 1 (``p1``), normalised on the window.
    rel_error : float
        Every entry is within relative ``rel_error`` (plus ``abs_error``) of the true window
        value of the truncated law.
    abs_error : float
        Bound on the 2-norm of the vector of absolute errors (hence on each entry's absolute error;
        nonzero when the window was convolved by FFT).
    tail : float
        Mass of the true laws outside the window (upper bound, each law).
    eps0, n, m : float, int, int
        The pair: ε0, number of users, ones among users 2..n.
    """

    start: int
    p0: np.ndarray
    p1: np.ndarray
    rel_error: float
    abs_error: float
    tail: float
    eps0: float
    n: int
    m: int


def _pair(eps0: float, N: int, m: int) -> CountPMFs:
    start, f, rho, eta, tau = _sum_law(eps0, N, m)
    p0, p1 = _probs(eps0)
    shifted = np.concatenate(([0.0], f))
    own = np.concatenate((f, [0.0]))
    P0 = p0 * shifted + p1 * own
    P1 = p1 * shifted + p0 * own
    return CountPMFs(start, P0, P1, rho + 4 * _EPS, eta, tau, eps0, N + 1, m)


def count_pmfs(eps0, n, m) -> CountPMFs:
    r"""Count laws of the neighbouring pair "user 1 holds 0 vs 1, ``m`` others hold 1".

    Parameters
    ----------
    eps0 : float
        Local ε0 of binary randomized response, nats, > 0.
    n : int
        Number of users (>= 1).
    m : int
        Number of ones among users 2..n, ``0 <= m <= n - 1``.

    Returns
    -------
    CountPMFs
        ``p0``, ``p1`` on the window ``start .. start + W - 1`` carrying all but ``tail`` of each
        law, with their error bands.  The exact privacy-loss distribution of the pair follows
        (e.g. for a PLD accountant); the mechanism's worst pair depends on ε (see the module
        notes), so composing one fixed pair is exact only if that pair is the worst in every round.

    Raises
    ------
    ParameterError
        ``eps0``, ``n`` or ``m`` out of range.
    ResourceLimitError
        The window would not fit in memory (names ``n``).

    References
    ----------
    .. [1] A. Cheu, A. Smith, J. Ullman, D. Zeber, M. Zhilyaev, "Distributed Differential Privacy
       via Shuffling", EUROCRYPT 2019.
    """
    eps0 = _check_eps0(_validate.eps0(eps0))
    n = _validate.count(n, "n")
    m = _validate.count(m, "m", minimum=0)
    if m > n - 1:
        raise _validate.ParameterError("m", f"must be <= n - 1 = {n - 1}, got {m}")
    return _pair(float(eps0), n - 1, m)


# --------------------------------------------------------------------------- worst case over m
def _score(eps0: float, N: int, m: int, x: float, want_eps: bool, law=None, x_eff=None):
    """Certified (upper, lower) of the pair (N + 1 users, m ones among the others) at x."""
    start, f, rho, eta, tau = _sum_law(eps0, N, m) if law is None else law
    p0, p1 = _probs(eps0)
    up, lo, arg = _kern.pair_extremes(f, p0, p1, rho + 4 * _EPS, eta, tau,
                                      x if x_eff is None else x_eff, want_eps)
    if want_eps:
        e0 = eps0
        up = e0 if up > e0 else max(0.0, up)
        lo = min(max(0.0, lo), up)
        return up * (1 + 4 * _EPS), lo * (1 - 4 * _EPS)
    return min(up, 1.0), max(0.0, lo)


def _initial_blocks(N: int) -> int:
    """Initial number of blocks of m: more where pairs are cheap (windows of O(sqrt N) entries)."""
    return INITIAL_BLOCKS if N >= 10**6 else 2 * INITIAL_BLOCKS if N >= 10**4 else 4 * INITIAL_BLOCKS


#: Datasets m = 0..ENDS-1 and N-ENDS+1..N are evaluated exactly and are single-m blocks of the search.
ENDS = 5
#: Below this N the blocks next to the exact ends grow geometrically (widths 1, 2, 4, ...) before the
#: uniform ones: the worst dataset is near an end and a block bound loosens with its width, so narrow
#: blocks there let the search converge from its initial set alone (laws are cheap at this size).
GEOMETRIC_MAX_N = 10**5
#: Below this N every dataset m = 0..N is a single-m block (evaluated exactly: N + 1 cheap pairs).
SINGLES_MAX_N = 160


def _initial_set(N: int):
    """The initial evaluations of the search: exact datasets m = 0..4, N - 4..N, N // 2, and
    mirror-symmetric blocks ([a, b] and [N - b, N - a] share one count law, see ``_law``) covering
    0..N: single-m blocks at the exact ends, then (N < GEOMETRIC_MAX_N) blocks of widths 1, 2, 4, ...
    and uniform blocks up to the middle.  Depends on N only, so that the ε and δ queries bound the same
    blocks."""
    ms = sorted(set(range(min(N, ENDS - 1) + 1)) | {N // 2} | set(range(max(N - ENDS + 1, 0), N + 1)))
    if N < SINGLES_MAX_N:           # every dataset exactly: the search is complete from its initial set
        return ms, [(m, m) for m in range(N + 1)]
    h = (N + 1) // 2
    e = min(ENDS, h)
    half = max(1, _initial_blocks(N) // 2)
    cuts = set(np.linspace(e, h, min(h - e, half) + 1).astype(int).tolist()) | {e, h}
    if N < GEOMETRIC_MAX_N:
        w = 1
        while e + w < h and w < (h - e) / half:
            cuts.add(e + w)
            w *= 2
    cuts = sorted(cuts)
    blocks = {(m, m) for m in range(e)} | {(N - m, N - m) for m in range(e)}
    for a, b1 in zip(cuts[:-1], cuts[1:]):
        if a <= b1 - 1:
            blocks.add((a, b1 - 1))
            blocks.add((N - (b1 - 1), N - a))
    if (N + 1) % 2:
        blocks.add((h, h))
    return ms, sorted(blocks)


def _block_bound(eps0: float, N: int, a: int, b: int, x: float, want_eps: bool) -> float:
    """Certified upper bound of the pair value (δ at ε, or ε at δ) over every m in [a, b].

    The ``j = b - a`` users whose type varies across the block are written, each independently, as
    a fair coin with probability 2 p0 and as their own deterministic bit otherwise
    (Bern(p1) = 2p0 Bern(1/2) + (1 - 2p0) δ_1, Bern(p0) = 2p0 Bern(1/2) + (1 - 2p0) δ_0).  Given the
    coin set, the count is U + Bin(K, 1/2) + (a known shift), U = Bin(a, p1) + Bin(N - b, p0), K the
    number of coins.  By joint convexity of the hockey stick over this mixture (the coin set is
    independent of user 1), shift invariance and post-processing (more coins only add noise),
    δ_m(ε) <= h_ε(k0) + P(K < k0) for every m in the block, h_ε(k) the value of the pair with
    U + Bin(k, 1/2).  k0 is the Chernoff lower end of Bin(j, 2 p0) with tail :data:`TAIL_COINS`
    (the same for ε and δ queries, so both bound the same law); for an ε query the pair is
    evaluated at δ - TAIL_COINS.
    """
    j = b - a
    if j == 0:
        return _score(eps0, N, a, x, want_eps)[0]
    p0, _ = _probs(eps0)
    k0 = _binom_window(j, 2 * p0, TAIL_COINS)[0]
    law = _law(eps0, a, N - b, k0)
    if want_eps:
        if x <= 2 * TAIL_COINS:
            return eps0
        return _score(eps0, N, a, x, True, law=law, x_eff=x - TAIL_COINS)[0]
    return min(1.0, _score(eps0, N, a, x, False, law=law)[0] + TAIL_COINS)


@functools.lru_cache(maxsize=64)
def _search(eps0: float, n: int, x: float, want_eps: bool, rtol: float, atol: float,
            max_pairs: int):
    """Branch and bound over m for the worst pair; returns (upper, lower, m*, converged, pairs, upper of
    the pair m* alone: its own numerical band, which bounds how much a better evaluation of the same
    datasets could raise the lower).

    Deterministic in its arguments, so memoised: the default method of :mod:`shuffleamp.bounds` asks
    for the same point first (to decide whether the decomposition can improve on it) and again when
    it combines both engines."""
    N = n - 1
    pairs = 0
    best_lo, best_m = -1.0, 0
    exact_seen = {}

    def exact(m):
        nonlocal pairs, best_lo, best_m
        if m not in exact_seen:
            pairs += 1
            up, lo = _score(eps0, N, m, x, want_eps)
            exact_seen[m] = up
            if lo > best_lo:
                best_lo, best_m = lo, m
        return exact_seen[m]

    def block(a, b):          # certified bound for all m in [a, b]
        nonlocal pairs
        if a == b:
            return exact(a)
        pairs += 1
        return _block_bound(eps0, N, a, b, x, want_eps)

    ms, blocks = _initial_set(N)
    for m in ms:
        exact(m)
    heap = []
    for a, b in blocks:
        heapq.heappush(heap, (-block(a, b), a, b))

    def done(top):
        return top <= best_lo + max(atol, rtol * best_lo)

    while heap:
        top = -heap[0][0]
        if done(top) or pairs >= max_pairs:
            break
        if heap[0][1] == heap[0][2]:   # the top is one exact m: only its bands remain
            break
        _, a, b = heapq.heappop(heap)
        mid = (a + b) // 2
        # no extra exact evaluation of the midpoint: the lower comes from the single-m blocks the split
        # reaches (the worst datasets sit where the blocks get split down), and the pairs go to the blocks
        # (1.4-2x narrower brackets at n = 1e5..1e7 for the same budget, convergence in ~25 % fewer pairs)
        for lo_, hi_ in ((a, mid), (mid + 1, b)):
            if lo_ <= hi_:
                heapq.heappush(heap, (-block(lo_, hi_), lo_, hi_))
    upper = max(-heap[0][0], best_lo) if heap else best_lo
    # complete: the tolerance is met, or the worst block is one exact m (only its bands remain)
    complete = done(upper) or not heap or heap[0][1] == heap[0][2]
    return upper, best_lo, best_m, complete, pairs, exact_seen.get(best_m, upper)


# --------------------------------------------------------------------------- phase comparison (large n)
#: Smallest n at which the phase-comparison bound (fact 7 of the module notes) is evaluated; below it the
#: search over blocks alone (at n <= 1e4 it is exact, and there the phase bound's lattice remainder is large).
PHASE_MIN_N = 20_000
#: The default methods accept the phase-comparison bracket without running the block search when its
#: relative width is at most this (the search's first-order block loss cannot improve on it at such n).
PHASE_ACCEPT_RTOL = 1e-6
#: Above this variance of the others' count, (n - 1) p0 p1 (about n = 1e6 at eps0 = 1), the block search runs
#: beside the phase bound only when the phase bracket exceeds 1e-3: its first-order block loss cannot reach
#: the phase bound's bracket there within its pair budget (measured in ``bench/results_binary_rr.md``).
PHASE_SEARCH_MAX_VAR = 2e5
#: Cells of the certified upper Riemann sum of the remainder integrals (fact 7).
PHASE_GRID = 4000
#: The remainder integrals run over |θ| <= PHASE_THETA_SIGMAS / σ (σ² = (n - 1) p0 p1); beyond, the
#: characteristic function is below exp(-PHASE_THETA_SIGMAS² / 4) and the rest is bounded as a whole.
PHASE_THETA_SIGMAS = 60.0


@functools.lru_cache(maxsize=256)
def _phase_remainder(eps0: float, N: int, J: int):
    """Certified (I0, I1) of fact 7: for every |j| <= J and every lattice offset 0 <= w <= 1,
    (1/2π) ∫ |φ(θ)| |ψ(θ)^j - λ̂_j(θ)| dθ <= I0 and the same integral divided by |1 - e^{iθ}| <= I1.

    Upper Riemann sums of the majorant |φ| = D^{N/2} (decreasing on [0, π]) times
    Ψ = min(cap, T) (increasing), over cells of width θ_max / PHASE_GRID, plus the rest of [0, π] as one
    cell; every factor is taken at the end of its cell that makes it larger."""
    p0, p1 = _probs(eps0)
    a, pq = p1 - p0, p0 * p1
    b = a * pq / 3.0
    sig = math.sqrt(N * pq)
    tmax = min(math.pi, PHASE_THETA_SIGMAS / sig)
    th = np.linspace(0.0, tmax, PHASE_GRID + 1)
    s = 2.0 * np.sin(th / 2.0)                      # |1 - e^{iθ}|, increasing on [0, π]
    u = 0.5 * s * s                                 # 1 - cos θ
    D = 1.0 - 2.0 * pq * u
    phi = np.exp(0.5 * N * np.log1p(-2.0 * pq * u))
    t3 = th ** 3
    bbar = a * pq * t3 / (3.0 * D)
    k5 = a * pq * (pq / D + 1.0 / 3.0) / 5.0
    T = (0.13 * th ** 4 * (1.0 + J * b * t3) + 0.5 * (J * bbar) ** 2 + J * k5 * th ** 5
         + J * 8 * _EPS * b * t3)
    cap = 1.0 + 1.25 * (1.0 + J * b * t3)
    psi = np.minimum(T, cap)
    dth = np.diff(th)
    i0 = float(np.sum(phi[:-1] * psi[1:] * dth)) / math.pi
    den = s[:-1].copy()
    den[0] = s[1]                   # first cell: Ψ/θ and θ/(2 sin(θ/2)) are increasing, take both at θ_1
    i1 = float(np.sum(phi[:-1] * psi[1:] / den * dth)) / math.pi
    if tmax < math.pi:
        capmax = 1.0 + 1.25 * (1.0 + J * b * math.pi ** 3)
        rest = float(phi[-1]) * capmax * (math.pi - tmax) / math.pi
        i0 += rest
        i1 += rest / float(s[-1])
    return i0 * (1 + 1e-9), i1 * (1 + 1e-9)


#: Cells of the certified upper Riemann sum of the tilted remainder integrals (fact 9).
PHASE_TILT_GRID = 2000
#: Tilts of fact 9 are taken from the grid λ = 2^(k / PHASE_TILT_PER_OCTAVE) (so that the remainder integrals of
#: an ε search are reused across its points); at each block end the grid point nearest the saddle point of the
#: threshold and PHASE_TILT_SPREAD grid points on either side of it.
PHASE_TILT_PER_OCTAVE = 4
PHASE_TILT_SPREAD = 1


def _e4(x: np.ndarray) -> np.ndarray:
    """An upper bound of sum_{k >= 4} x^k / k! for x >= 0: x^4 / (24 (1 - x / 5)) below 2.5 (k! >= 24 5^(k - 4)),
    the closed form above."""
    x = np.asarray(x, dtype=np.float64)
    out = x ** 4 / (24.0 * (1.0 - np.minimum(x, 2.5) / 5.0)) * (1 + 1e-13)
    big = x >= 2.5
    if big.any():
        xb = x[big]
        out[big] = (np.expm1(xb) - xb - 0.5 * xb * xb - xb ** 3 / 6.0) * (1 + 1e-12)
    return out


@functools.lru_cache(maxsize=1024)
def _saddle(eps0: float, N: int, m0: int, x: float) -> float:
    """λ > 0 at which the law of dataset m0 tilted by e^{-λ c} has mean ``x`` (a count below the mean), or 0."""
    p0, p1 = _probs(eps0)
    mean = m0 * p1 + (N - m0) * p0
    if not x < mean:
        return 0.0
    lam = (mean - x) / max(N * p0 * p1, 1e-300)
    for _ in range(30):
        em = math.expm1(-lam)
        t1, t0 = p1 * (1 + em) / (1 + p1 * em), p0 * (1 + em) / (1 + p0 * em)
        mu = m0 * t1 + (N - m0) * t0
        var = m0 * t1 * (1 - t1) + (N - m0) * t0 * (1 - t0)
        step = (mu - x) / max(var, 1e-300)
        lam = min(max(lam + step, 0.5 * lam), 2.0 * lam + 1e-12)
        if abs(step) <= 1e-9 * lam:
            break
    return max(lam, 0.0)


def _log_char(k1: int, lg1: np.ndarray, k0: int, lg0: np.ndarray) -> np.ndarray:
    """k1 lg1 + k0 lg0 with the terms of zero counts left out (their logarithm may be -inf)."""
    out = np.zeros(lg1.shape)
    if k1:
        out = out + k1 * lg1
    if k0:
        out = out + k0 * lg0
    return out


@functools.lru_cache(maxsize=96)          # about 0.15 MB each (PHASE_TILT_GRID points, ten arrays)
def _tilt_grid(eps0: float, N: int, m0: int, lam: float):
    """The parts of :func:`_tilted_remainder` that do not depend on the block: the θ grid and the factors of the
    integrand on it (fact 9)."""
    p0, p1 = _probs(eps0)
    a, pq = p1 - p0, p0 * p1
    em = math.expm1(-lam)                       # r - 1, r = e^{-λ}
    r = 1.0 + em
    t1, t0 = p1 * r / (1 + p1 * em), p0 * r / (1 + p0 * em)     # tilted Bernoulli parameters
    pq1, pq0 = t1 * (1 - t1), t0 * (1 - t0)
    L1, L0 = math.log1p(p1 * em), math.log1p(p0 * em)
    log_m = m0 * L1 + (N - m0) * L0             # log M_{m0}(r)
    g_lam = (L1 - L0) + lam * a                 # G(-λ) (its rounding is charged by the 1e-9 of log_ca)
    sig = math.sqrt(m0 * pq1 + (N - m0) * pq0)
    tmax = min(math.pi, PHASE_THETA_SIGMAS / max(sig, 1e-300))
    th = np.linspace(0.0, tmax, PHASE_TILT_GRID + 1)
    sh = np.sin(0.5 * th)
    u = 2.0 * sh * sh                           # 1 - cos θ
    with np.errstate(divide="ignore"):          # -inf where a tilted factor vanishes (pq = 1/4 at θ = π)
        lg1 = 0.5 * np.log1p(-2.0 * pq1 * u)    # log |tilted Bern(p1) char. function|, decreasing
        lg0 = 0.5 * np.log1p(-2.0 * pq0 * u)
    rho = np.sqrt(lam * lam + th * th)          # |s|, s = -λ + iθ
    v = 2.0 * np.sinh(0.5 * rho) ** 2           # cosh|s| - 1 >= |cosh t - 1| on [0, s]
    den = 1.0 - 2.0 * pq * v                    # <= |Q(t)| on [0, s]
    ok = den > 0.25
    dsafe = np.where(ok, den, 1.0)
    rho_pi = math.hypot(lam, math.pi)
    return {
        "r": r, "log_m": log_m, "g_lam": g_lam, "tmax": tmax, "dth": np.diff(th), "lg1": lg1, "lg0": lg0,
        "mt": np.exp(_log_char(m0, lg1, N - m0, lg0)),       # |M_{m0}(r e^{iθ})| / M_{m0}(r), decreasing
        "ok": ok,
        "s3": 2.0 * np.sinh(rho) * v,                        # >= |ŝ3(s)|
        "gm": rho * 2.0 * a * pq * v / dsafe,                # >= |G(s)|
        "g5": rho * 4.0 * a * pq * v * v * (pq / dsafe + 1.0 / 3.0),     # >= |G(s) - b ŝ3(s)|
        "e4": 2.07 * _e4(rho) + 0.0642 * _e4(2.0 * rho),     # >= |e^{ws} - L̂_w(s)|
        "inv1": 1.0 / np.sqrt(em * em + 4.0 * r * sh * sh)[:-1],   # 1 / |1 - r e^{iθ}| at the cells' left ends
        "s3_pi": 2.0 * math.sinh(rho_pi) * 2.0 * math.sinh(0.5 * rho_pi) ** 2,
    }


@functools.lru_cache(maxsize=2048)
def _tilted_remainder(eps0: float, N: int, m0: int, jl: int, jh: int, lam: float):
    """Certified (log M, I0, I1) of fact 9 for the block of datasets m0 + j, jl <= j <= jh, at the tilt λ > 0:
    for every such j and count c, |Φ_c(E_j)| <= exp(λ (c - k0) + log M) (alpha I0 + beta I1).

    Upper Riemann sums over [0, θ_max] (θ_max = PHASE_THETA_SIGMAS standard deviations of the tilted law), every
    factor at the end of its cell that makes it larger, plus the rest of [0, π] as one cell."""
    p0, p1 = _probs(eps0)
    b = (p1 - p0) * p0 * p1 / 3.0
    J = max(abs(jl), abs(jh))
    g = _tilt_grid(eps0, N, m0, lam)
    r, lg1, lg0, mt = g["r"], g["lg1"], g["lg0"], g["mt"]
    # |M_{m0+j}(z)| r^{-k0} / M_{m0}(r) <= exp(j G(-λ) + log|tilted char. function of m0 + j|): linear in j
    with np.errstate(over="ignore"):            # an overflow is +inf: the cell then takes the other bound
        ca = np.exp(np.maximum.reduce([j * g["g_lam"] + _log_char(m0 + j, lg1, N - m0 - j, lg0) for j in (jl, jh)])
                    + 1e-9)
    jg = J * g["gm"]
    ok = g["ok"] & (jg < 30.0)
    jgs = np.where(ok, jg, 0.0)
    lw = 1.25 * math.exp(lam)                   # >= sum_u |l_u| |e^{us}|
    jbs3 = J * b * g["s3"]
    T = g["e4"] * (1.0 + jbs3) + 0.5 * jgs * jgs * np.exp(jgs) + J * g["g5"] + lw * 8 * _EPS * jbs3
    T = np.where(ok, T, np.inf)[1:]
    fin = np.isfinite(T)
    main = np.where(fin, mt[:-1] * np.where(fin, T, 0.0), np.inf)
    cap = ca[:-1] + mt[:-1] * lw * (1.0 + jbs3[1:] * (1 + 8 * _EPS))
    cell = np.minimum(main, cap) * g["dth"]
    with np.errstate(over="ignore"):            # a sum beyond the float range is +inf: checked below
        i0 = float(np.sum(cell)) / math.pi
        i1 = r * float(np.dot(cell, g["inv1"])) / math.pi
    tmax = g["tmax"]
    if tmax < math.pi:
        rest = (float(ca[-1]) + float(mt[-1]) * lw * (1.0 + J * b * g["s3_pi"] * (1 + 8 * _EPS))) \
            * (math.pi - tmax) / math.pi
        i0 += rest
        i1 += r * rest * float(g["inv1"][-1])
    if not (math.isfinite(i0) and math.isfinite(i1)):       # pragma: no cover - the untilted remainder then
        return g["log_m"], math.inf, math.inf
    return g["log_m"], i0 * (1 + 1e-9), i1 * (1 + 1e-9)


#: Zeros padded on each side of a base window for :func:`_kern.phase_rows` (its stencils reach 3 entries).
_PHASE_PAD = 4


#: Largest total number of multiply-adds of the direct convolutions that build the base laws in the middle of
#: the range (fact 7 (e)), about 0.3 s on the machine of ``bench/results_binary_rr.md``: it bounds their number
#: (none from n of about 1e7 at eps0 = 1, where the two one-binomial bases m0 = 0 and N suffice).
PHASE_DIRECT_OPS = 400_000_000
#: Largest number of base datasets (fact 7 (e)); the bound over blocks of half-width J costs one law each.
PHASE_MAX_BASES = 64


@functools.lru_cache(maxsize=2 * PHASE_MAX_BASES + 8)
def _phase_base(eps0: float, N: int, m0: int):
    """(count of the first padded entry, padded window, rho, tau, prefix sums, index of the mode, r0, drift)
    of the base dataset m0.  For m0 in {0, N} one binomial window (``binom_window`` or its mirror), whose
    entry errors are a common factor, a drift of at most 8 long double ulps per entry and an independent
    rounding (r0 = EPS/2 + 2u); otherwise the direct convolution of two binomial windows (``np.convolve``),
    charged with its plain per-entry band (drift 0, r0 = rho)."""
    if m0 in (0, N):
        start, f, rho, eta, tau = _sum_law(eps0, N, m0)
        if eta != 0.0:             # pragma: no cover - one binomial window is never an FFT product
            raise AssertionError("the phase bound needs a single binomial window")
        r0, drift = 0.5 * _EPS + 2 * _EPS_LD, 8 * _EPS_LD
    else:
        p0, p1 = _probs(eps0)
        wins = []
        start, rho = 0, 0.0
        for k, p, lg, q in ((m0, p1, eps0, p0), (N - m0, p0, -eps0, p1)):
            lo, hi = _binom_window(k, p, TAIL, q)
            wins.append(_kern.binom_window(k, p, lg, lo, hi))
            start += lo
            rho += 8 * (hi - lo + 5) * _EPS_LD + 4 * _EPS
        f = np.convolve(wins[0], wins[1])
        tau = 4 * TAIL
        rho += (min(len(w) for w in wins) + 2) * _EPS + tau
        r0, drift = rho, 0.0
    fp = np.zeros(len(f) + 2 * _PHASE_PAD)
    fp[_PHASE_PAD:_PHASE_PAD + len(f)] = f
    fp.setflags(write=False)
    cum = np.cumsum(fp)
    cum.setflags(write=False)
    return start - _PHASE_PAD, fp, rho, tau, cum, int(np.argmax(fp)), r0, drift


@_LawCache
def _phase_rows(eps0: float, N: int, m0: int):
    """The arrays of ``phase_rows`` for one base (``phase_segments_max`` forms those of any jb from them), in one
    (6, L) array kept in a cache bounded in bytes (the block ends, the ε points of a search and its δ check reuse
    them)."""
    x0, fp, rho, tau, cum, mode, r0, drift = _phase_base(eps0, N, m0)
    out = _kern.phase_rows(fp, rho, tau, r0, drift)
    out.setflags(write=False)
    return None, out


def _phase_scan(base, alpha: float, beta: float, jb: float, thr: float, key=None, anchor=None, h=None):
    """Certified max over x and the lattice offset 0 <= w <= 1 of V(x, w) (fact 7) for one base and one end
    j of its block (``jb`` = j b), envelopes included, remainders aside: (x0, max of V over the centres passed to
    the kernel, its index, its w, those centres lo .. hi - 1, the bounds of V below and above them, None, alpha,
    beta, the segments).  The segments (their last centres and the max of V on each) split the centres at
    ``anchor`` + ``h`` * PHASE_TILT_CUTS (``anchor``: an index where V is about largest, by default the maximum
    found in one pass over every centre; ``h`` >= 1 or None for no segments).

    Only the centres where V can reach ``thr`` are passed to the kernel; the others are bounded as a whole
    (and the returned value is at least that bound): with Kf = alpha (1 + 3|jb|) + 2 beta |jb|, every H(y) is
    at most Kf f(y') - beta F(y - 1) over the stencil's entries y', and V(x) <= 1.15 max H - 0.15 min H over
    x - 2 .. x + 1 (the negative cubic weights sum to at most 0.15).  Left of the mode (f, F increasing):
    V(x) <= 1.3 Kf f(x + 3) + 0.15 beta F(x) + envelopes; right of it:
    V(x) <= 1.3 Kf fmax - beta (F(x - 3) - 0.6 fmax) + envelopes.  Envelopes are charged as a factor about 2
    and 1e-9 beta (they are relative 1e-11 or less)."""
    x0, fp, rho, tau, cum, mode, r0, drift = base
    ajb = abs(jb)
    kf = alpha * (1 + 3 * ajb) + 2 * beta * ajb
    fmax = float(fp[mode])
    L = len(fp)
    small = 8 * (kf + beta) * tau + 1e-9 * beta
    # centres the kernel never visits (x <= 2 and x >= L - 3, and every count beyond the window): below the
    # centres passed to the kernel (rest_l) and above them (rest_r)
    lo, hi = 3, L - 3
    rest_l = 2.5 * (kf * (float(fp[:7].max()) + tau) + beta * (float(cum[6]) + tau)) + small
    rest_r = (2.5 * kf * (float(fp[L - 8:].max()) + tau)
              - beta * (float(cum[L - 6]) * (1 - 1e-9) - 0.6 * (fmax + tau)) + small)
    if thr > 0 and mode > 6:
        # left: every centre x < lo has V(x) < thr (the bound g(i) = 2.5 (kf f(i + 6) + beta F(i + 5)) + small
        # is increasing in i up to the mode; bisection for the first i with g(i) >= thr)
        def g_left(i):
            return 2.5 * (kf * float(fp[6 + i]) + beta * float(cum[5 + i])) + small
        n_left = mode - 5               # g_left is defined for i = 0 .. mode - 6
        if g_left(n_left - 1) < thr:
            k = n_left
        else:
            k0, k1 = -1, n_left - 1     # g_left(k0) < thr (k0 = -1: none), g_left(k1) >= thr
            while k1 - k0 > 1:
                mid = (k0 + k1) // 2
                if g_left(mid) < thr:
                    k0 = mid
                else:
                    k1 = mid
            k = k1                      # g_left(i) < thr for i < k
        if k > 0:
            lo = k + 2
            rest_l = max(rest_l, g_left(k - 1))
        # right: every centre x >= hi has V(x) < thr
        if beta > 0:
            need = (2.5 * kf * fmax + thr + small) / beta + 0.6 * fmax
            if need < 1.0 and need * (1 + 1e-9) <= cum[-1]:
                j = int(np.searchsorted(cum, need * (1 + 1e-9), side="left"))   # F(x - 3) >= need for x >= j + 3
                hi = min(L - 3, max(j + 3, lo + 1))
                rest_r = max(rest_r, thr)
    rows = _phase_rows(*key)[1] if key is not None else _kern.phase_rows(fp, rho, tau, r0, drift)
    segs = None
    if anchor is None or h is None:
        vs, ks, ws = _kern.phase_segments_max(rows, jb, alpha, beta, rho, tau, np.array([lo, hi], dtype=np.int64))
        v, k, w = float(vs[0]), int(ks[0]), float(ws[0])
        anchor = k if anchor is None else anchor
    if h is not None and anchor >= 0:
        cuts = sorted({lo, hi} | {min(max(anchor + h * c, lo), hi) for c in PHASE_TILT_CUTS})
        vs, ks, ws = _kern.phase_segments_max(rows, jb, alpha, beta, rho, tau, np.array(cuts, dtype=np.int64))
        i = int(np.argmax(vs))
        v, k, w = float(vs[i]), int(ks[i]), float(ws[i])
        segs = (np.array([max(s1 - 1, s0) for s0, s1 in zip(cuts[:-1], cuts[1:])], dtype=np.float64), vs)
    return (x0, v, k, w, lo, hi, rest_l, rest_r, None, alpha, beta, segs)


def _segment_unit(sigma: float) -> int:
    """The unit h of PHASE_TILT_CUTS for a base law of standard deviation ``sigma``."""
    return max(1, int(sigma / PHASE_TILT_SEGMENTS_PER_SIGMA))


def _phase_block_rem(scan, rem) -> float:
    """Certified max over x of V(x, w) + the remainder for a scan of :func:`_phase_scan`.

    ``rem`` = (R, tilts, sigma) for the block: its untilted remainder R (fact 7), a function giving the
    tilts [(λ, log M, I0, I1), ...] (fact 9) for the count where V is largest, and the standard deviation of the
    base law.  The value returned is max over x of V(x, w) + min(R, Rem_t(x)), with Rem_t(x) = min over the
    tilts of exp(λ x + log M) (alpha I0 + beta I1) (x the count of the base), non-decreasing in x: the centres are
    split into segments near the maximum of V, each charged with the remainder at its right end; below the
    centres passed to the kernel the remainder at the first of them, above them R."""
    x0, v, k, w, lo, hi, rest_l, rest_r, _, alpha, beta, segs = scan
    R, tilt_fn, sig = rem
    plain = max(v, rest_l, rest_r) + R
    if k < 0 or tilt_fn is None or segs is None:
        return plain
    tilts = tilt_fn(x0 + k)
    if not tilts:
        return plain
    last, vals = segs
    x = x0 + np.concatenate(([float(lo)], last))
    out = np.full(x.shape, R)
    for lam, log_m, i0, i1 in tilts:
        coef = alpha * i0 + beta * i1
        if coef == 0.0:
            return max(v, rest_l, rest_r)       # pragma: no cover - no remainder at all
        if not coef < math.inf:
            continue
        with np.errstate(over="ignore"):          # an overflow is +inf, never below the true value
            out = np.minimum(out, np.exp(lam * x + log_m) * coef)
    seg = np.where(np.isneginf(vals), -math.inf, vals + out[1:])     # an empty segment adds nothing
    tilted = max(rest_l + float(out[0]), rest_r + R, float(np.max(seg)) if len(seg) else -math.inf)
    if math.isnan(tilted):          # pragma: no cover - never: every term is a number or +-inf
        return plain
    return min(plain, tilted)


#: Segments of the centres (fact 9), in units h = sigma / PHASE_TILT_SEGMENTS_PER_SIGMA (sigma the standard
#: deviation of the base law) from the index where V is about largest: the remainder grows by a factor of about
#: exp(z / PHASE_TILT_SEGMENTS_PER_SIGMA) within a unit (z the threshold's distance from the mean in standard
#: deviations); below and above the outer cuts, one segment each.
PHASE_TILT_SEGMENTS_PER_SIGMA = 8
PHASE_TILT_CUTS = (-24, -12, -6, -4, -3, -2, -1, 0, 1, 2, 3, 4, 6, 8, 12)


def _phase_blocks(N: int, K: int = 2):
    """The blocks of fact 7: (base m0, j range) with m = m0 + j covering 0..N once.  K = 2: m in [0, N/2]
    from m0 = 0 and the rest from m0 = N; K > 2: end blocks [0, J] and [N - J, N] from m0 = 0 and N, and
    K - 2 blocks of at most 2J + 1 datasets in between, each from its middle dataset."""
    if N < 1:
        return ((0, 0, 0),)
    if K <= 2 or N < 4 * K:
        h = N // 2
        return ((0, 0, h), (N, h + 1 - N, 0))
    J = -(-(N + 1) // (2 * K - 2))
    out = [(0, 0, J), (N, -J, 0)]
    s = J + 1
    while s <= N - J - 1:
        e = min(s + 2 * J, N - J - 1)
        c = (s + e) // 2
        out.append((c, s - c, e - c))
        s = e + 1
    return tuple(out)


def _phase_bases_plain(eps0: float, N: int, eps: float, target: float) -> int:
    """Number of bases K for fact 7 with whole blocks and the untilted remainder: the smallest K in 2, 4, 8, ... (at
    most :data:`PHASE_MAX_BASES`, and only while the K - 2 interior base laws cost at most
    :data:`PHASE_DIRECT_OPS` multiply-adds together) whose remainder alpha I0 + beta I1 at ``eps`` is at most
    ``target``, or at most 1.5 times the remainder of the lattice offset alone (what more bases cannot remove)."""
    p0, p1 = _probs(eps0)
    alpha, beta = max(0.0, p1 - math.exp(eps) * p0), math.expm1(eps)
    ops = (2 * 10.7) ** 2 * p0 * p1 * N / 2 + 1e3     # the two binomial windows of a base law, multiplied
    floor = 1.5 * (alpha * _phase_remainder(eps0, N, 0)[0] + beta * _phase_remainder(eps0, N, 0)[1])
    K = 2
    while True:
        blocks = _phase_blocks(N, K)
        J = max(max(abs(jl), abs(jh)) for _, jl, jh in blocks)
        i0, i1 = _phase_remainder(eps0, N, J)
        if alpha * i0 + beta * i1 <= max(target, floor):
            return K
        if 2 * K > PHASE_MAX_BASES or (2 * K - 2) * ops > PHASE_DIRECT_OPS or N < 8 * K:
            return K
        K *= 2


#: Number of bases (fact 7 (e), fact 9 (b)): the fewest whose bound at the first point of a query exceeds the largest
#: value of V at an evaluated block end by at most this relative amount (the rest is the remainder of intervals
#: far from every base, which splitting cannot reduce).
PHASE_BASES_RTOL = 1e-6
#: The search for that number starts from the fewest bases whose untilted remainder over whole blocks is at most this
#: fraction of δ (splitting cannot reduce the remainder of an interval far from every base, but where the values of
#: V fall off away from the worst dataset faster than that remainder grows, it is not needed).
PHASE_TILT_BLOCK_RTOL = 1e-2


def _phase_bases(eps0: float, N: int, eps: float, thr: float) -> int:
    """Number of bases K for facts 7 and 9: the smallest K in K0, 2 K0, 4 K0, ... (at most :data:`PHASE_MAX_BASES`,
    and only while the K - 2 interior base laws cost at most :data:`PHASE_DIRECT_OPS` multiply-adds together) whose
    bound at ``eps`` is within :data:`PHASE_BASES_RTOL` of the largest value of V at its evaluated block ends
    (``thr``: half the target δ); K0 from :data:`PHASE_TILT_BLOCK_RTOL`."""
    p0, p1 = _probs(eps0)
    ops = (2 * 10.7) ** 2 * p0 * p1 * N / 2 + 1e3     # the two binomial windows of a base law, multiplied
    # first guess: the untilted remainder of whole blocks at most PHASE_TILT_BLOCK_RTOL of δ (= 2 thr)
    K = _phase_bases_plain(eps0, N, eps, PHASE_TILT_BLOCK_RTOL * 2.0 * thr)
    while True:
        if 2 * K > PHASE_MAX_BASES or (2 * K - 2) * ops > PHASE_DIRECT_OPS or N < 8 * K:
            return K                    # no more bases allowed: nothing to decide
        up, _, top = _phase_delta_split(eps0, N, eps, thr, K)
        if up <= top * (1 + PHASE_BASES_RTOL) or top <= 0.0:
            return K
        K *= 2


def _block_tilts(eps0: float, N: int, m0: int, jl: int, jh: int):
    """The tilts of fact 9 for the block m0 + [jl, jh]: a function of the count x where V is largest, giving
    [(λ, log M, I0, I1), ...] at the grid points λ = 2^(k / PHASE_TILT_PER_OCTAVE) nearest the saddle point of x
    and PHASE_TILT_SPREAD on either side (none when x is not below the mean)."""
    def tilts(x):
        lam = _saddle(eps0, N, m0, float(x))
        if not lam > 0.0:
            return []
        kq = round(PHASE_TILT_PER_OCTAVE * math.log2(lam))
        return [(lt,) + _tilted_remainder(eps0, N, m0, jl, jh, lt)
                for lt in (2.0 ** ((kq + d) / PHASE_TILT_PER_OCTAVE)
                           for d in range(-PHASE_TILT_SPREAD, PHASE_TILT_SPREAD + 1))]
    return tilts


#: The bound of fact 7 splits a block of datasets m0 + [j1, j2] at its middle (fact 9: both halves keep V's
#: values at their ends and get the smaller remainder of their own half-width) while its bound exceeds the
#: largest value of V at an evaluated block end by more than this relative amount ...
PHASE_SPLIT_RTOL = 2e-8
#: ... at most this many times per evaluation of the bound; an interval that ends at the base (j = 0) is split at
#: 1 / PHASE_SPLIT_AT_BASE of its length from the base.
PHASE_MAX_SPLITS = 48
PHASE_SPLIT_AT_BASE = 8


def _phase_delta(eps0: float, N: int, eps: float, thr: float = 0.0, K: int = 2, tilt: bool = True):
    """Certified upper bound of max_m δ_m(ε) (fact 7, with the tilted remainder and the split blocks of fact 9
    unless ``tilt`` is False) with K bases, and where it is attained: (m0, j, w), the base, the block end and the
    lattice offset."""
    return _phase_delta_split(eps0, N, eps, thr, K, tilt)[:2]


def _phase_delta_split(eps0: float, N: int, eps: float, thr: float = 0.0, K: int = 2, tilt: bool = True):
    """:func:`_phase_delta` and the largest value of V (remainders aside) at an evaluated block end."""
    p0, p1 = _probs(eps0)
    a = p1 - p0
    b = a * p0 * p1 / 3.0
    alpha = max(0.0, p1 - math.exp(eps) * p0) * (1 + 4 * _EPS)
    beta = math.expm1(eps) * (1 + 4 * _EPS)
    sig = math.sqrt(N * p0 * p1)
    scans = {}          # (m0, j) -> the scan of the block end j
    anchors = {}        # m0 -> the index where V was largest in the first scan of the base
    h = _segment_unit(sig) if tilt else None

    def scan(m0, base, j):
        if (m0, j) not in scans:
            sc = _phase_scan(base, alpha, beta, j * b, thr, (eps0, N, m0), anchors.get(m0), h)
            anchors.setdefault(m0, sc[2])
            scans[(m0, j)] = sc
        return scans[(m0, j)]

    def interval(m0, base, j1, j2):
        """Certified bound of δ_{m0 + j} over j in [j1, j2] (0 <= j1 <= j2 or j1 <= j2 <= 0), and its argmax."""
        i0, i1 = _phase_remainder(eps0, N, max(abs(j1), abs(j2)))
        rem = (alpha * i0 + beta * i1, _block_tilts(eps0, N, m0, j1, j2) if tilt else None, sig)
        best, arg = -math.inf, (m0, j1, 0.0)
        for j in ((j1, j2) if j1 != j2 else (j1,)):
            sc = scan(m0, base, j)
            v = _phase_block_rem(sc, rem)
            if v > best:
                best, arg = v, (m0, j, sc[3])
        return best, arg

    heap = []
    for m0, jl, jh in _phase_blocks(N, K):
        base = _phase_base(eps0, N, m0)
        for j1, j2 in (((jl, 0), (0, jh)) if jl < 0 < jh and tilt else ((jl, jh),)):
            v, arg = interval(m0, base, j1, j2)
            heap.append((-v, m0, j1, j2, arg))
    heapq.heapify(heap)
    splits = 0
    while tilt and heap and splits < PHASE_MAX_SPLITS:
        v, m0, j1, j2, arg = heap[0]
        top = max(max(sc[1], sc[6], sc[7]) for sc in scans.values())
        if -v <= top * (1 + PHASE_SPLIT_RTOL) or abs(j2 - j1) <= 1:
            break
        heapq.heappop(heap)
        splits += 1
        base = _phase_base(eps0, N, m0)
        # an interval at the base is split near the base (the remainder grows like the square of the distance from
        # it, the values of V only linearly), the others in the middle
        jm = (j1 + j2) // 2 if j1 != 0 and j2 != 0 else (j1 + j2) // PHASE_SPLIT_AT_BASE
        jm = min(max(jm, j1 + 1), j2 - 1)         # strictly inside (j2 - j1 >= 2 here)
        for a1, a2 in ((j1, jm), (jm, j2)):
            vv, arg2 = interval(m0, base, a1, a2)
            heapq.heappush(heap, (-vv, m0, a1, a2, arg2))
    best = -heap[0][0]
    top = max(max(sc[1], sc[6], sc[7]) for sc in scans.values())
    return min(1.0, best * (1 + 4 * _EPS)), heap[0][4], top


def _phase_epsilon(eps0: float, N: int, delta: float, start: float, K: int = 2, tilt: bool = True):
    """Smallest ε found (secant steps on log U from ``start``, a certified lower ε) with U(ε) <= δ,
    U the bound of :func:`_phase_delta`; returns (ε, m of the attaining block end); ε0 if none below."""
    def U(e):
        return _phase_delta(eps0, N, e, 0.5 * delta, K, tilt)

    lo = max(0.0, start)
    u_lo, arg = U(lo)
    if u_lo <= delta:
        return lo, arg
    ok_e, ok_arg = None, arg
    bad_e, bad_u = lo, u_lo
    e = lo * (1 + 1e-6) if lo > 0 else 1e-9 * eps0
    for _ in range(40):
        e = min(e, eps0)
        v, a_ = U(e)
        if v <= delta:
            ok_e, ok_arg = e, a_
            if (e - bad_e) <= 1e-9 * e:
                break
            # secant between the infeasible and the feasible point, nudged up
            y0, y1 = math.log(bad_u) - math.log(delta), math.log(max(v, 1e-300)) - math.log(delta)
            t = y0 / (y0 - y1) if y0 != y1 else 0.5
            e = bad_e + (e - bad_e) * min(max(t, 0.0), 1.0) * (1 + 1e-10) + 1e-12 * bad_e
            if e >= ok_e:
                break
        else:
            if e >= eps0:
                break
            y0, y1 = math.log(bad_u) - math.log(delta), math.log(v) - math.log(delta)
            step = e - bad_e
            bad_e, bad_u = e, v
            if y0 > y1 > 0:
                e = e + step * min(y1 / (y0 - y1), 1e3) * (1 + 1e-6) + 1e-12 * e
            else:
                e = e + 10 * step
    if ok_e is None:
        return eps0, ok_arg
    return ok_e, ok_arg


#: Datasets evaluated for the lower end of the phase-comparison bracket: this many, next to the block end where
#: the bound is largest, chosen among the nearest PHASE_CANDIDATE_SPAN for the lattice offset of the maximum.
PHASE_CANDIDATES = 4
PHASE_CANDIDATE_SPAN = 64
#: An ε query bounded by fact 9 whose bracket is within its tolerance still evaluates those of them whose laws are
#: direct convolutions (no FFT product) while the bracket is wider than this.
PHASE_CANDIDATE_RTOL = 1e-7
#: The bound with whole blocks and the untilted remainder (fact 7) is tried first where that remainder is at most
#: this fraction of δ (its bracket is then within 1e-6 on ε at eps0 = 0.5 .. 2, n = 1e6 .. 1e9); elsewhere the
#: tilted remainder and split blocks of fact 9 directly.
PHASE_PLAIN_RTOL = 1e-5
#: ... and fact 9 only from this n: below it the search over blocks (fact 4) converges within its pair budget where
#: the bound of fact 7 is not within 1e-6, and fact 9 would add its cost (many cheap bases, lattice-limited).
PHASE_TILT_MIN_N = 200_000


def _phase_candidates(eps0: float, N: int, m0: int, j: int, w: float):
    """Datasets near m0 + j (within PHASE_CANDIDATE_SPAN, in [0, N]) whose lattice offset frac((m - m0) a) is
    closest to w (circularly): the ones whose value is closest to the bound's maximum (fact 7 (e))."""
    p0, p1 = _probs(eps0)
    a = p1 - p0
    ms = np.arange(max(0, m0 + j - PHASE_CANDIDATE_SPAN), min(N, m0 + j + PHASE_CANDIDATE_SPAN) + 1)
    fr = np.mod((ms - m0) * a, 1.0)
    d = np.minimum(np.abs(fr - w), 1.0 - np.abs(fr - w)) + 1e-3 * np.abs(ms - (m0 + j)) / PHASE_CANDIDATE_SPAN
    return [int(m) for m in ms[np.argsort(d, kind="stable")[:PHASE_CANDIDATES]]] + [m0 + j]


def _direct_law(eps0: float, N: int, m: int) -> bool:
    """Whether the count law of dataset m is a direct convolution of its binomial windows (no FFT product)."""
    p0, p1 = _probs(eps0)
    w1 = _binom_window(m, p1, TAIL, p0)
    w0 = _binom_window(N - m, p0, TAIL, p1)
    a, c = w1[1] - w1[0] + 1, w0[1] - w0[0] + 1
    return min(a, c) == 1 or a * c <= DIRECT_CONV_OPS


def _phase_search(eps0: float, n: int, x: float, want_eps: bool, rtol: float = PHASE_ACCEPT_RTOL):
    """Certified (upper, lower, m*, pairs, upper of the pair m* alone) from the phase-comparison bound
    (upper, fact 7) and the exact values of the two base datasets m = 0 and N, then, while the bracket is
    wider than ``rtol``, of the datasets next to the block end where the bound is largest (lower)."""
    N = n - 1
    pairs = 0
    best_lo, best_m, best_up = -1.0, 0, 0.0
    seen = set()

    def ev(ms):
        nonlocal pairs, best_lo, best_m, best_up
        for m in ms:
            if 0 <= m <= N and m not in seen:
                seen.add(m)
                pairs += 1
                up, lo = _score(eps0, N, m, x, want_eps)
                if lo > best_lo:
                    best_lo, best_m, best_up = lo, m, up

    def bound(tilt):
        """Fact 7 with whole blocks and the untilted remainder (``tilt`` False: one pass per block end), or with
        the tilted remainder and split blocks of fact 9."""
        if want_eps:
            if tilt:
                K = _phase_bases(eps0, N, best_lo, 0.5 * x)
            else:
                K = _phase_bases_plain(eps0, N, best_lo, 1e-7 * x)
            return _phase_epsilon(eps0, N, x, best_lo, K, tilt)
        if tilt:
            K = _phase_bases(eps0, N, x, 0.5 * best_lo)
        else:
            K = _phase_bases_plain(eps0, N, x, 1e-7 * best_lo)
        return _phase_delta(eps0, N, x, 0.5 * best_lo, K, tilt)

    ev([0, N])
    # whole blocks with the untilted remainder where that remainder is small against δ (one pass per block end),
    # else the tilted remainder and split blocks (fact 9)
    eps_at, delta_at = (best_lo, x) if want_eps else (x, best_lo)
    p0, p1 = _probs(eps0)
    K = _phase_bases_plain(eps0, N, eps_at, 1e-7 * delta_at)
    i0, i1 = _phase_remainder(eps0, N, max(max(abs(jl), abs(jh)) for _, jl, jh in _phase_blocks(N, K)))
    tilt_ok = n >= PHASE_TILT_MIN_N
    plain = not tilt_ok or ((max(0.0, p1 - math.exp(eps_at) * p0) * i0 + math.expm1(eps_at) * i1)
                            <= PHASE_PLAIN_RTOL * delta_at)
    tilted = not plain
    upper, arg = bound(tilted)
    if plain and tilt_ok and upper > best_lo * (1 + rtol):
        tilted = True
        upper, arg = min((upper, arg), bound(True), key=lambda t: t[0])
    m0, j, w = arg
    near_end = min(m0 + j, N - m0 - j) <= PHASE_CANDIDATE_SPAN
    # datasets in the middle of a large range cost an FFT product each: only the block end itself there
    cheap = near_end or N * _probs(eps0)[0] * _probs(eps0)[1] <= PHASE_SEARCH_MAX_VAR
    if upper > best_lo * (1 + rtol):
        ev(_phase_candidates(eps0, N, m0, j, w) if cheap else [m0 + j])
        if want_eps and upper > best_lo * (1 + rtol):
            # the search for the upper starts from the lower: repeat it from the new one
            upper = min(upper, bound(tilted)[0])
    elif want_eps and tilted and upper > best_lo * (1 + PHASE_CANDIDATE_RTOL):
        # within rtol: an ε query of fact 9 still tries the candidates whose laws are direct convolutions
        ev([m for m in _phase_candidates(eps0, N, m0, j, w) if _direct_law(eps0, N, m)])
    upper = max(upper, best_lo)
    return upper, best_lo, best_m, pairs, best_up


@functools.lru_cache(maxsize=64)
def _point(eps0: float, n: int, x: float, want_eps: bool, rtol: float, atol: float, max_pairs: int):
    """The certified worst case over datasets at one point, as ``_search`` returns it: the phase-comparison
    bound (fact 7) from n = :data:`PHASE_MIN_N`, accepted alone when its bracket is within
    max(rtol, :data:`PHASE_ACCEPT_RTOL`); otherwise combined with the block search (fact 4) where that can
    still help ((n - 1) p0 p1 <= :data:`PHASE_SEARCH_MAX_VAR`, or a phase bracket above 1e-3)."""
    if n < PHASE_MIN_N:
        return _search(eps0, n, x, want_eps, rtol, atol, max_pairs)
    up, lo, m, pairs, wu = _phase_search(eps0, n, x, want_eps, max(rtol, PHASE_ACCEPT_RTOL))
    tol = max(atol, max(rtol, PHASE_ACCEPT_RTOL) * lo)
    p0, p1 = _probs(eps0)
    if up <= lo + tol or ((n - 1) * p0 * p1 > PHASE_SEARCH_MAX_VAR and up <= lo * (1 + 1e-3)):
        return up, lo, m, up <= lo + max(atol, rtol * lo), pairs, wu
    su, sl, sm, sc, sp, swu = _search(eps0, n, x, want_eps, rtol, atol, max_pairs)
    if sl > lo:
        lo, m, wu = sl, sm, swu
    up = min(up, su)
    return up, lo, m, up <= lo + max(atol, rtol * lo), pairs + sp, wu


# --------------------------------------------------------------------------- public API
def _run(eps0, n, x, want_eps, rtol, atol, max_pairs, name):
    eps0 = _check_eps0(float(_validate.eps0(eps0)))
    n_arr = np.asarray(_validate.count(n, "n"))
    x_arr = np.asarray(_validate.delta(x, name) if want_eps else _validate.epsilon(x, name))
    rtol = float(_validate.real("rtol", rtol, lo=0.0))
    atol = float(_validate.real("atol", atol, lo=0.0))
    max_pairs = _validate.count(max_pairs, "max_pairs", minimum=8)
    nb, xb = np.broadcast_arrays(n_arr, x_arr)
    up = np.empty(nb.shape)
    lo = np.empty(nb.shape)
    wm = np.empty(nb.shape, dtype=np.int64)
    wu = np.empty(nb.shape)
    conv = np.empty(nb.shape, dtype=bool)
    pairs = 0
    t0 = time.perf_counter()
    for idx in np.ndindex(nb.shape):
        u, l_, m_, c_, p_, wu[idx] = _point(eps0, int(nb[idx]), float(xb[idx]), want_eps, rtol, atol,
                                            max_pairs)
        up[idx], lo[idx], wm[idx], conv[idx] = u, l_, m_, c_
        pairs += p_
    scalar = nb.ndim == 0

    def out(a):
        return a.item() if scalar else a

    settings = {"tail": TAIL, "rtol": rtol, "atol": atol, "max_pairs": max_pairs,
                "pairs_evaluated": pairs, "seconds": time.perf_counter() - t0,
                "worst_pair_upper": out(wu),
                "method": "exact-count"}
    return ExactCountResult(
        quantity="epsilon" if want_eps else "delta", upper=out(up), lower=out(lo),
        error=out(up - lo), worst_m=out(wm), converged=out(conv), eps0=eps0, n=out(nb.copy()),
        epsilon=None if want_eps else out(xb.copy()), delta=out(xb.copy()) if want_eps else None,
        settings=settings)


def delta_binary_rr(eps0, n, epsilon, *, rtol: float = DEFAULT_RTOL, atol: float = 1e-15,
                    max_pairs: int = DEFAULT_MAX_PAIRS) -> ExactCountResult:
    r"""Exact shuffled δ(ε) of binary randomized response, worst case over all datasets.

    Parameters
    ----------
    eps0 : float
        Local ε0 in nats (> 0).
    n : int or array_like of int
        Number of users (>= 1); broadcast against ``epsilon``.
    epsilon : float or array_like of float
        Central ε in nats (>= 0).
    rtol, atol : float
        The worst-case search stops when ``upper <= lower + max(atol, rtol * lower)``.
    max_pairs : int
        Budget of count pairs evaluated per element (>= 8); when spent, the certified bracket
        found so far is returned with ``converged=False``.

    Returns
    -------
    ExactCountResult
        ``quantity="delta"``; ``upper``/``lower`` bracket
        :math:`\max_{x \simeq x'} H_\varepsilon(M(x)\|M(x'))` over all neighbouring datasets
        and both orderings; ``worst_m`` the maximising dataset.

    Raises
    ------
    ParameterError
        NaN / out-of-range ``eps0``, ``n``, ``epsilon``, ``rtol``, ``atol``, ``max_pairs``.
    ResourceLimitError
        A count window would not fit in memory (names ``n``).

    References
    ----------
    .. [1] A. Cheu, A. Smith, J. Ullman, D. Zeber, M. Zhilyaev, "Distributed Differential Privacy
       via Shuffling", EUROCRYPT 2019.
    .. [2] B. Balle, J. Bell, A. Gascón, K. Nissim, "The Privacy Blanket of the Shuffle Model",
       CRYPTO 2019.
    """
    return _run(eps0, n, epsilon, False, rtol, atol, max_pairs, "epsilon")


def epsilon_binary_rr(eps0, n, delta, *, rtol: float = 1e-7, atol: float = 1e-12,
                      max_pairs: int = DEFAULT_MAX_PAIRS) -> ExactCountResult:
    r"""Exact shuffled ε(δ) of binary randomized response, worst case over all datasets.

    For each pair the smallest ε with :math:`\delta_m(\varepsilon) \le \delta` is computed in one
    pass as :math:`\max_t \log((F_0(t) - \delta)/F_1(t))` over the lower sets (see the module
    notes), with the certified bands, so no root search is needed: ``upper`` is an ε at which the
    certified upper δ of every dataset is <= ``delta``, ``lower`` an ε below which a concrete
    dataset's certified lower δ exceeds ``delta``.  Both lie in [0, eps0].

    Parameters
    ----------
    eps0 : float
        Local ε0 in nats (> 0).
    n : int or array_like of int
        Number of users (>= 1); broadcast against ``delta``.
    delta : float or array_like of float
        Target δ in (0, 1).
    rtol, atol : float
        The worst-case search stops when ``upper <= lower + max(atol, rtol * lower)`` (ε units).
    max_pairs : int
        Budget of count pairs evaluated per element (>= 8).

    Returns
    -------
    ExactCountResult
        ``quantity="epsilon"``.

    Raises
    ------
    ParameterError
        NaN / out-of-range ``eps0``, ``n``, ``delta``, ``rtol``, ``atol``, ``max_pairs``.
    ResourceLimitError
        A count window would not fit in memory (names ``n``).

    References
    ----------
    .. [1] A. Cheu, A. Smith, J. Ullman, D. Zeber, M. Zhilyaev, "Distributed Differential Privacy
       via Shuffling", EUROCRYPT 2019.
    .. [2] J. Su, Y. Cheng, T. Wang, "Decomposition-Based Optimal Bounds for Privacy Amplification
       via Shuffling", IEEE S&P 2026 (arXiv:2504.07414).
    """
    return _run(eps0, n, delta, True, rtol, atol, max_pairs, "delta")


# --------------------------------------------------------------------------- the default method's point
#: The default method of :func:`shuffleamp.epsilon` / :func:`shuffleamp.delta` for binary RR (and the
#: ``"exact-count"`` method) runs the certified search over datasets to this relative tolerance (on ε for an
#: ε query, on δ for a δ query) ...
DEFAULT_POINT_RTOL = 1e-7
#: ... within a pair budget derived from n (:func:`default_pairs`): about this many seconds of count laws
#: per search on the reference machine of ``bench/results_binary_rr.md`` (the budget is a pair count, so
#: that the answer does not depend on the machine's speed or load).
DEFAULT_POINT_SECONDS = 0.2
#: Around this n the cost model of :func:`default_pairs` adds the direct convolution of the block laws (it
#: rises linearly up to here and fades out by twice this n, where the block laws go through the FFT).
DIRECT_COST_MAX_N = 100_000
#: Largest pair budget of one search of the default method ...
DEFAULT_POINT_MAX_PAIRS = 4096
#: ... except up to this n, where the budget (4 n pairs) lets the search resolve every dataset m exactly if it
#: must (near ε = 0 the worst datasets are the balanced ones, whose values are flat in m), at a few tens of
#: microseconds per count law.
ALL_DATASETS_MAX_N = 2048
#: Up to this n the budget is at least :data:`CONVERGE_MIN_PAIRS` pairs: there the phase-comparison bound's
#: lattice remainder (fact 7 (e)) leaves brackets of 1e-5 .. 1e-4 at δ = 1e-8, while the search over blocks
#: converges to the exact worst case within about 500 (n = 2e4) to 1300 (n = 1e5) pairs, 0.1 .. 0.45 s cold on
#: the idle 2-core machine, and reaches 1e-7 .. 3e-6 within the floor at n = 3e5 .. 5e5 (up to about 2 s)
#: (``bench/results_binary_rr.md``); it stops as soon as the tolerance is met.
CONVERGE_MAX_N = 500_000
CONVERGE_MIN_PAIRS = 2048
#: ε queries of the default method check δ at their upper ε with the same search and, when that δ query
#: would certify more than the target δ, re-search at a smaller target this many times at most.
CONSISTENCY_STEPS = 4


def default_pairs(n: int) -> int:
    """Pair budget of one search of the default method at ``n`` users.

    A count law costs about 0.2 ms + 0.7 us sqrt(n) + 0.02 ns n, plus up to 10 ns n around
    n = :data:`DIRECT_COST_MAX_N`, where the block laws are convolved directly (windows of O(sqrt n)
    entries; measured on the machine of ``bench/results_binary_rr.md``: 0.2 ms at n = 1e4, 1.1 ms at 1e5,
    0.8 ms at 1e6, 7 ms at 1e8, 40 ms at 1e9), so the budget is :data:`DEFAULT_POINT_SECONDS` over that,
    clipped to [:data:`DEFAULT_BOUNDS_PAIRS`, :data:`DEFAULT_POINT_MAX_PAIRS`]: about 540 pairs at
    n = 1e4, 140 at 1e5, 340 at 3e5, 220 at 1e6, 22 at 1e8, 8 at 1e9; up to n = :data:`ALL_DATASETS_MAX_N` at least 4 n, enough to split every block
    down to single datasets (the search is then complete: exact up to the numerical bands); up to
    n = :data:`CONVERGE_MAX_N` at least :data:`CONVERGE_MIN_PAIRS` (converged, or within a few 1e-6, there).  The search
    stops earlier when the tolerance is met (at n <= 1e4 it is, at eps0 = 1, delta = 1e-6, within about
    400 pairs).

    Parameters
    ----------
    n : int
        Number of users (>= 1).

    Returns
    -------
    int
        Pairs (count laws) one search may evaluate.
    """
    direct = min(n, max(0, 2 * DIRECT_COST_MAX_N - n))        # rises to n = DIRECT_COST_MAX_N, then fades
    cost = 2e-4 + 7e-7 * math.sqrt(float(n)) + 2e-11 * n + 1e-8 * direct
    timed = int(min(DEFAULT_POINT_MAX_PAIRS, max(DEFAULT_BOUNDS_PAIRS, DEFAULT_POINT_SECONDS / cost)))
    if n <= ALL_DATASETS_MAX_N:
        return max(timed, 4 * n)
    return max(timed, CONVERGE_MIN_PAIRS) if n <= CONVERGE_MAX_N else timed


def default_point(eps0, n, x, want_eps: bool) -> ExactCountResult:
    r"""The count-law answer of the default method at one point: ε at δ = ``x`` or δ at ε = ``x``.

    The certified search of :func:`epsilon_binary_rr` / :func:`delta_binary_rr` with tolerance
    :data:`DEFAULT_POINT_RTOL` and pair budget :func:`default_pairs`.  For an ε query the returned
    ``upper`` also satisfies ``default_point(eps0, n, upper, False).upper <= x`` whenever
    ``settings["consistent"]`` is True (the δ query at the reported ε never certifies more than the
    target): the δ search at ``upper`` is run, and while it certifies more than ``x`` the ε search is
    repeated at a smaller target δ' (its upper is certified for δ' < x, hence for ``x``), at most
    :data:`CONSISTENCY_STEPS` times.  Both searches are deterministic in their arguments, so the δ query a
    caller makes later returns the δ checked here.

    Parameters
    ----------
    eps0 : float
        Local ε0 in nats (> 0, <= :data:`MAX_EPS0`).
    n : int
        Number of users (>= 1).
    x : float
        Target δ in (0, 1) when ``want_eps``, else ε in nats (>= 0).
    want_eps : bool
        True: bounds on ε(δ); False: bounds on δ(ε).

    Returns
    -------
    ExactCountResult
        ``settings`` adds ``"rtol"``, ``"max_pairs"`` (the budget), ``"pairs_evaluated"`` (all searches)
        and, for an ε query, ``"consistent"`` and ``"consistency_steps"``.

    Raises
    ------
    ParameterError
        ``eps0``, ``n`` or ``x`` out of range.
    ResourceLimitError
        A count window would not fit in memory (names ``n``).
    """
    n = _validate.count(n, "n")
    pairs = default_pairs(n)
    if not want_eps:
        return delta_binary_rr(eps0, n, x, rtol=DEFAULT_POINT_RTOL, max_pairs=pairs)
    r = epsilon_binary_rr(eps0, n, x, rtol=DEFAULT_POINT_RTOL, max_pairs=pairs)
    up, used, target = r.upper, r.settings["pairs_evaluated"], float(x)
    consistent, steps = False, 0
    while True:
        d = delta_binary_rr(eps0, n, up, rtol=DEFAULT_POINT_RTOL, max_pairs=pairs)
        used += d.settings["pairs_evaluated"]
        if d.upper <= x or up >= r.eps0:
            consistent = d.upper <= x or up >= r.eps0
            break
        if steps >= CONSISTENCY_STEPS:
            break
        steps += 1
        target = target * max(0.25, (x / d.upper) ** 2)  # smaller by the overshoot squared (at most 4x)
        r2 = epsilon_binary_rr(eps0, n, target, rtol=DEFAULT_POINT_RTOL, max_pairs=pairs)
        used += r2.settings["pairs_evaluated"]
        up = max(up, r2.upper)                      # certified for target < x, hence for x
    settings = dict(r.settings, pairs_evaluated=used, max_pairs=pairs, consistent=consistent,
                    consistency_steps=steps)
    return dataclasses.replace(r, upper=up, error=up - r.lower, settings=settings)


# --------------------------------------------------------------------------- binary RR detection
def binary_rr_eps0(mechanism):
    """ε0 of ``mechanism`` if it is exactly binary randomized response, else None.

    Recognised: k-RR with ``k = 2`` and a 2 x 2 matrix mechanism with ``P[0,0] == P[1,1]`` and
    ``P[0,1] == P[1,0]`` (binary RR, possibly with its outputs relabelled), tight ε0 > 0.

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism.

    Returns
    -------
    float or None
        The local ε0 (nats) of the binary randomized response it equals, or None.
    """
    name = getattr(mechanism, "name", None)
    if name == "krr" and getattr(mechanism, "k", None) == 2:
        return float(mechanism.eps0)
    if name == "matrix":
        try:
            P = np.asarray(mechanism.matrix(), dtype=np.float64)
        except Exception:       # pragma: no cover - a matrix mechanism always has its matrix
            return None
        if P.shape == (2, 2) and P[0, 0] == P[1, 1] and P[0, 1] == P[1, 0] and P[0, 0] != P[0, 1] \
                and min(P[0, 0], P[0, 1]) > 0:
            return abs(math.log(P[0, 0] / P[0, 1]))
    return None


# --------------------------------------------------------------------------- count projections
def _projection_arrays(alpha: float, beta: float, gamma: float, n: int):
    """Laws of N_S = B + Bin(n - 1, gamma), B ~ Bern(alpha) vs Bern(beta), on a window."""
    N = n - 1
    if N == 0 or gamma <= 0.0 or gamma >= 1.0:
        f = np.ones(1)
        lo, rho, tau = (N if gamma >= 1.0 else 0), 4 * _EPS, 0.0
    else:
        lo, hi = _binom_window(N, gamma, TAIL)
        _check_window(hi - lo + 1, n)
        f = _kern.binom_window(N, gamma, math.log(gamma) - math.log1p(-gamma), lo, hi)
        tau = 2 * TAIL
        rho = 16 * (len(f) + 4) * _EPS + tau
    shifted = np.concatenate(([0.0], f))
    own = np.concatenate((f, [0.0]))
    P0 = alpha * shifted + (1.0 - alpha) * own
    P1 = beta * shifted + (1.0 - beta) * own
    return P0, P1, rho + 4 * _EPS, tau


def projection_pair_bounds(alpha: float, beta: float, gamma: float, n: int, x: float, want_eps: bool):
    r"""Certified hockey-stick divergence of a count projection of a concrete dataset pair.

    For the dataset :math:`X^0 = (x_1^0, x_2, \dots, x_2)`, :math:`X^1 = (x_1^1, x_2, \dots, x_2)`
    and a set ``S`` of outputs, the number of shuffled reports in ``S`` is a post-processing of the
    shuffled output, distributed as :math:`B + \mathrm{Bin}(n-1, \gamma)` with
    :math:`B \sim \mathrm{Bern}(\alpha)` under :math:`X^0` and :math:`\mathrm{Bern}(\beta)` under
    :math:`X^1` (:math:`\alpha = R(x_1^0)(S)`, :math:`\beta = R(x_1^1)(S)`,
    :math:`\gamma = R(x_2)(S)`).  Its divergence is therefore a valid lower bound on the
    divergence of the dataset pair (Balle et al., CRYPTO 2019: post-processing), computed
    exactly: the binomial law is log-concave, so the likelihood ratio of the two count laws is
    monotone and the optimal sets are lower or upper sets of the count; both kinds and both
    orderings are evaluated in one pass each, with certified bands (tail mass, round-off).
    No exponentially small quantity is formed, so it does not underflow where the n-fold GPARV sum
    does (e.g. ε0 = 20).

    Parameters
    ----------
    alpha, beta, gamma : float
        Masses of ``S`` under :math:`R(x_1^0)`, :math:`R(x_1^1)`, :math:`R(x_2)`, in [0, 1].
    n : int
        Number of users (>= 1).
    x : float
        ε (nats) when ``want_eps`` is False, else δ in (0, 1).
    want_eps : bool
        False: bounds on :math:`\max(H_\varepsilon(P_0\|P_1), H_\varepsilon(P_1\|P_0))`; True:
        bounds on the smallest ε with both divergences <= δ (0 if none is positive), in
        [0, ∞) (the caller caps it at ε0).

    Returns
    -------
    (float, float)
        Certified ``(upper, lower)`` of that quantity for the projected pair.

    Raises
    ------
    ResourceLimitError
        The count window would not fit in memory (names ``n``).
    """
    P0, P1, rho, tau = _projection_arrays(float(alpha), float(beta), float(gamma), int(n))
    up, lo = (-math.inf, -math.inf) if want_eps else (0.0, 0.0)
    for A, B in ((P0, P1), (P1, P0)):
        for X, Y in ((A, B), (A[::-1].copy(), B[::-1].copy())):
            u, l_, _ = _kern.lower_set_extremes(X, Y, rho, 0.0, tau, float(x), bool(want_eps))
            up, lo = max(up, u), max(lo, l_)
    if want_eps:
        up = max(up, 0.0) * (1 + 4 * _EPS)
        lo = max(lo, 0.0) * (1 - 4 * _EPS)
        return up, min(lo, up)
    return min(up, 1.0), max(lo, 0.0)


# --------------------------------------------------------------------------- batched profile
def profile_binary_rr(eps0, n, epsilons):
    r"""Certified exact privacy profile of shuffled binary RR at many ε >= 0 (one pass per count law).

    ``upper`` bounds :math:`\delta^*(\varepsilon) = \max` over every neighbouring dataset and both
    orderings of the hockey-stick divergence; ``lower`` is the value of the best of the datasets
    m = 0..4, N - 4..N, N // 2 (and of the single-m blocks, at small n every m).  The evaluations are the
    initial set of :func:`delta_binary_rr`'s search (exact datasets and the blocks covering every m, with the
    coin-decomposition block bound, module notes fact 4), each count law built once and evaluated at every ε
    through the convex hull of its certified cumulative bands, in O(W + K log W).  From n =
    :data:`PHASE_MIN_N` ``upper`` is also the phase-comparison bound (fact 7) at up to
    :data:`PHASE_PROFILE_NODES` nodes among the requested ε and its chords in :math:`e^\varepsilon` between
    them (fact 8), whichever is smaller at each ε.  Since ``upper`` is the maximum over all neighbouring pairs,
    it is the profile of a dominating pair (the pointwise maximum of the profiles of a swap-closed
    set of pairs; Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022, Prop. 2.2 and 2.12).

    Parameters
    ----------
    eps0 : float
        Local ε0 in nats (> 0).
    n : int
        Number of users (>= 1).
    epsilons : array_like of float
        Central ε values in nats (>= 0), any shape.

    Returns
    -------
    upper, lower : ndarray of float64
        Certified bounds of the exact profile, shape of ``epsilons``.

    Raises
    ------
    ParameterError
        ``eps0``, ``n`` or ``epsilons`` out of range.
    ResourceLimitError
        A count window would not fit in memory (names ``n``).

    References
    ----------
    .. [1] A. Cheu, A. Smith, J. Ullman, D. Zeber, M. Zhilyaev, "Distributed Differential Privacy
       via Shuffling", EUROCRYPT 2019.
    """
    eps0 = _check_eps0(float(_validate.eps0(eps0)))
    n = _validate.count(n, "n")
    eps = np.asarray(_validate.epsilon(epsilons, "epsilons"), dtype=np.float64)
    flat = np.ascontiguousarray(eps.ravel())
    up, lo = _profile_blocks(eps0, n, flat)
    if n >= PHASE_MIN_N and flat.size:
        up = np.minimum(up, _phase_profile(eps0, n - 1, flat, up, lo))
    up = np.minimum(up, 1.0).reshape(eps.shape)
    return up, np.minimum(lo.reshape(eps.shape), up)


def _profile_blocks(eps0: float, n: int, eps: np.ndarray):
    """Certified (upper, lower) of the exact profile at the 1-d array ``eps`` from the initial set of the block
    search (fact 4): exact datasets and the coin-decomposition bound of the blocks covering every m."""
    xs = np.ascontiguousarray(np.exp(eps))
    N = n - 1
    p0, p1 = _probs(eps0)
    up = np.zeros(xs.shape)
    lo = np.zeros(xs.shape)
    ms, blocks = _initial_set(N)
    singles = sorted(set(ms) | {a for a, b in blocks if a == b})
    for m in singles:
        _, f, rho, eta, tau = _sum_law(eps0, N, m)
        u, l_ = _kern.pair_profile(f, p0, p1, rho + 4 * _EPS, eta, tau, xs)
        np.maximum(up, u, out=up)
        np.maximum(lo, l_, out=lo)
    for a, b in blocks:
        if a == b:
            continue
        k0 = _binom_window(b - a, 2 * p0, TAIL_COINS)[0]
        _, f, rho, eta, tau = _law(eps0, a, N - b, k0)
        u, _ = _kern.pair_profile(f, p0, p1, rho + 4 * _EPS, eta, tau, xs)
        np.maximum(up, u + TAIL_COINS, out=up)
    return np.minimum(up, 1.0), lo


#: The profile evaluates the phase-comparison bound (fact 7) at nodes among the requested ε whose block-bound
#: values fall by at most this factor from one node to the next (fact 8) ...
PHASE_PROFILE_RATIO = 1.2
#: ... and at most this many nodes (the factor grows until they fit); between nodes, the chord in e^ε.
PHASE_PROFILE_NODES = 256
#: Nodes only where the block bound exceeds this many times the phase bound's remainder (below, the remainder
#: alone is larger than what the phase bound could gain).
PHASE_PROFILE_MARGIN = 4.0
#: Bases of the profile's phase bound: the largest K in 2, 4, ..., PHASE_PROFILE_MAX_BASES whose 2K - 2 interior
#: base laws cost at most PHASE_PROFILE_OPS multiply-adds together (K = 16 at n = 1e5, 4 at 1e6, 2 from about
#: 2e6 at eps0 = 1; the laws are built once per (eps0, n) and cached).
PHASE_PROFILE_MAX_BASES = 16
PHASE_PROFILE_OPS = 3e8


def _phase_profile_bases(eps0: float, N: int) -> int:
    """Number of bases K of the profile's phase bound (see :data:`PHASE_PROFILE_OPS`)."""
    p0, p1 = _probs(eps0)
    ops = (2 * 10.7) ** 2 * p0 * p1 * N / 2 + 1e3     # the two binomial windows of a base law, multiplied
    K = 2
    while 2 * K <= PHASE_PROFILE_MAX_BASES and (4 * K - 2) * ops <= PHASE_PROFILE_OPS and N >= 16 * K:
        K *= 2
    return K


def _phase_profile(eps0: float, N: int, eps: np.ndarray, up: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Certified upper bound of the exact profile at the 1-d array ``eps`` from the phase-comparison bound
    (fact 7, :func:`_phase_profile_bases` bases) at nodes among the requested ε and chords in x = e^ε between them (fact 8); ``inf``
    where no node applies.  ``up`` / ``lo``: certified upper / lower values at ``eps`` (the block bound and
    the exact datasets), used to place the nodes and to restrict the kernel's scan."""
    out = np.full(eps.shape, np.inf)
    p0, p1 = _probs(eps0)
    order = np.argsort(eps, kind="stable")
    se, su, sl = eps[order], up[order], lo[order]
    K = _phase_profile_bases(eps0, N)
    J = max(max(abs(jl), abs(jh)) for _, jl, jh in _phase_blocks(N, K))
    i0, i1 = _phase_remainder(eps0, N, J)
    alpha = np.maximum(0.0, p1 - np.exp(se) * p0)
    rem = alpha * i0 + np.expm1(se) * i1
    cand = np.flatnonzero((se < eps0) & (su > PHASE_PROFILE_MARGIN * rem))
    if cand.size == 0:
        return out
    ratio, gap = PHASE_PROFILE_RATIO, 0.05 * eps0
    while True:
        nodes = [int(cand[0])]
        for i in cand[1:]:
            if su[nodes[-1]] > ratio * su[i] or se[i] > se[nodes[-1]] + gap:
                nodes.append(int(i))
        if nodes[-1] != int(cand[-1]):
            nodes.append(int(cand[-1]))
        if len(nodes) <= max(2, PHASE_PROFILE_NODES):
            break
        if ratio > 1e300 and gap > eps0:          # every condition relaxed: the two ends only
            nodes = sorted({int(cand[0]), int(cand[-1])})
            break
        ratio, gap = min(ratio * ratio, 1e301), 2 * gap
    nodes = [i for k, i in enumerate(nodes) if k == 0 or se[i] > se[nodes[k - 1]]]   # distinct node ε
    ne = se[nodes]
    # the untilted remainder and whole blocks (fact 7): the profile's cost stays that of one pass per block end
    nu = np.array([_phase_delta(eps0, N, float(e), 0.5 * float(sl[i]), K, tilt=False)[0]
                   for e, i in zip(ne, nodes)])
    nu = np.minimum.accumulate(nu)          # δ* is non-increasing in ε >= 0 (fact 8)
    # chords in x = e^ε between consecutive nodes (δ* is convex in x); beyond the last node, its value
    k = np.searchsorted(ne, se, side="right") - 1      # node at or below each ε
    ok = k >= 0
    val = np.full(se.shape, np.inf)
    last = ok & (k == len(nodes) - 1)
    val[last] = nu[-1]
    mid = ok & ~last
    if mid.any():
        km = k[mid]
        xa, xb, x = np.exp(ne[km]), np.exp(ne[km + 1]), np.exp(se[mid])
        t = (x - xa) / (xb - xa)
        t = np.clip(t - 8 * _EPS * (xb / (xb - xa) + 1.0), 0.0, 1.0)   # rounded down: the chord is decreasing in t
        ua, ub = nu[km], nu[km + 1]
        val[mid] = np.minimum(ua, (ub + (1.0 - t) * (ua - ub)) * (1 + 8 * _EPS))
    out[order] = val
    return out
