"""Gradual release of k-RR: reproduction of Pan's two experiments and the shuffled central ε.

Reference: M. Pan, "Randomized Response with Gradual Release of Privacy Budget", arXiv:2401.13952,
2024, Section 6 (Experiments 1 and 2, Theorem 6.1).

1. Experiment 1 (binary): 1000 objects (600 ones, 400 zeros), 10 rounds on RAPPOR's schedule
   eps_k = eps_ns(k) with eps_alpha = 1, eps_beta = 0.5 (Eq. (65)); estimator Eq. (6) per round.
   Error rates of Last Output, Max-Likelihood, Highest Frequency and Weighted Highest Frequency on
   400 ones + 400 zeros after the last round, against the Theorem 6.1 bound.
2. Experiment 2 (5-ary): 1500 objects (100, 200, 300, 400, 500 of values 0..4), eps = 0.1, 0.2, ..., 1.0;
   estimator Eqs. (7)-(8) per round; attacks on the first 100 objects of every value.
   Both at the paper's 100 repetitions, plus 3000 repetitions for a sharper variance check.
3. Shuffled central ε (δ = 1e-8, n = 1e4 and 1e6) of whole schedules (``GradualRelease.epsilon``:
   one shuffled eps_T k-RR round, certified) against fresh k-RR rounds at eps_1..eps_T composed by
   basic composition (δ/T each, ε summed).  Plot of the central ε after each round.

Ties in HF / WHF go to the lowest value.  All randomness is seeded.

Usage::

    python bench/bench_gradual.py --out bench/results_gradual.md [--plot bench/gradual.png]
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time

import numpy as np
from scipy import stats

import shuffleamp
import shuffleamp as sa
from shuffleamp import gradual as g
from shuffleamp.mechanisms import KRR

SEED = 20240125
Z = stats.norm.isf(1e-4 / 2)     # two-sided z for the bias and Bayes-bound checks


def eps_ns(K, eps_alpha=1.0, eps_beta=0.5):
    """Pan 2024, Eq. (65): LDP of K noisy samplings of RAPPOR's permanent RR."""
    a, b = math.exp(eps_alpha), math.exp(K * eps_beta)
    return math.log((a * b + 1) / (a + b))


def attacks(history, sched, k):
    """Guesses of LO, MLE, HF, WHF (ties -> lowest value) from histories of shape (T, n)."""
    onehot = history[:, :, None] == np.arange(k)[None, None, :]            # (T, n, k)
    hf = onehot.sum(axis=0).argmax(axis=1)
    whf = (onehot * np.asarray(sched)[:, None, None]).sum(axis=0).argmax(axis=1)
    mle = g.history_log_likelihood(history, sched, k).argmax(axis=1)
    return {"LO": history[-1], "MLE": mle, "HF": hf, "WHF": whf}


def experiment(counts, sched, reps, seed, subset, chunk=250):
    """Run ``reps`` repetitions (vectorised in chunks); return per-round statistics and attack error rates."""
    k = len(counts)
    n = int(sum(counts))
    truth = np.repeat(np.arange(k), counts)
    f = np.asarray(counts) / n
    rng = np.random.default_rng(seed)
    est = np.empty((len(sched), reps, k))
    lo_err = np.empty((len(sched), reps))
    errs = {}
    for start in range(0, reps, chunk):
        r = min(chunk, reps - start)
        h = g.sample_history(np.tile(truth, r), sched, k, rng).reshape(len(sched), r, n)
        for t, e in enumerate(sched):
            est[t, start:start + r] = g.estimate_frequencies(h[t], e, k)
            lo_err[t, start:start + r] = (h[t][:, subset] != truth[subset]).mean(axis=1)
        for rep in range(r):                                              # attacks per repetition
            for name, guess in attacks(h[:, rep, subset], sched, k).items():
                errs.setdefault(name, []).append((guess != truth[subset]).mean())
    rounds = []
    for t, e in enumerate(sched):
        var_th = g.frequency_variance(f, e, n)
        mean = est[t].mean(axis=0)
        rounds.append({"eps": e, "mean": mean, "var": est[t].var(axis=0, ddof=1), "var_theory": var_th,
                       "bias_z": (mean - f) / np.sqrt(var_th / reps),
                       "lo_error": lo_err[t].mean(), "bayes": g.bayes_error(e, k)})
    return f, rounds, {name: np.array(v) for name, v in errs.items()}


def fmt_row(cells):
    return "| " + " | ".join(cells) + " |"


def report_experiment(title, counts, sched, subset, reps_list, seed, lines):
    lines.append(f"## {title}\n")
    k = len(counts)
    lines.append(f"counts per value {list(counts)}, n = {sum(counts)}, schedule "
                 f"{[round(e, 4) for e in sched]}; seed {seed}.\n")
    ok = True
    for reps in reps_list:
        t0 = time.time()
        f, rounds, errs = experiment(counts, sched, reps, seed + reps, subset)
        lines.append(f"### {reps} repetitions ({time.time() - t0:.1f} s)\n")
        show = range(k) if k > 2 else [1]
        head = ["round", "ε"] + [f"mean v{j}" for j in show] + [f"var/theory v{j}" for j in show] + \
            ["max abs bias z", "theory var (first shown)", "LO error", "Bayes min (Thm 6.1)"]
        lines.append(fmt_row(head))
        lines.append(fmt_row(["---"] * len(head)))
        ratio_se = math.sqrt(2 / (reps - 1))
        for t, r in enumerate(rounds):
            cells = [str(t + 1), f"{r['eps']:.4f}"] + [f"{r['mean'][j]:.4f}" for j in show] + \
                [f"{r['var'][j] / r['var_theory'][j]:.3f}" for j in show] + \
                [f"{np.abs(r['bias_z']).max():.2f}", f"{r['var_theory'][show[0]]:.3e}",
                 f"{r['lo_error']:.4f}", f"{r['bayes']:.4f}"]
            lines.append(fmt_row(cells))
            ok &= bool(np.abs(r["bias_z"]).max() <= Z)
            ok &= bool(np.all(np.abs(r["var"] / r["var_theory"] - 1) <= Z * ratio_se))
        lines.append("")
        bound = rounds[-1]["bayes"]
        lines.append(f"Attack error rates after round {len(sched)} on {len(subset)} objects with a uniform "
                     f"true value; Theorem 6.1 minimum {bound:.4f}:\n")
        lines.append(fmt_row(["method", "mean", "sd over reps", "mean − bound", "z (mean vs bound)"]))
        lines.append(fmt_row(["---"] * 5))
        for name, e in errs.items():
            z = (e.mean() - bound) / (e.std(ddof=1) / math.sqrt(reps))
            lines.append(fmt_row([name, f"{e.mean():.4f}", f"{e.std(ddof=1):.4f}",
                                  f"{e.mean() - bound:+.4f}", f"{z:+.2f}"]))
            ok &= bool(z >= -Z)                         # no method beats the Bayes bound
        ok &= bool(np.array_equal(errs["LO"], errs["MLE"]))
        lines.append("")
    lines.append(f"Checks (|bias z| <= {Z:.2f}; |var/theory − 1| <= {Z:.2f}·sqrt(2/(R−1)); every attack's mean "
                 f"error >= bound − {Z:.2f}·SE; LO ≡ MLE): **{'pass' if ok else 'FAIL'}**\n")
    return ok


SCHEDULES = [
    ("RAPPOR eps_ns(1..10), k=2", 2, [eps_ns(K) for K in range(1, 11)]),
    ("linear 0.1..1.0, k=5", 5, [round(0.1 * i, 10) for i in range(1, 11)]),
    ("0.5, 1.0, 2.0, k=3", 3, [0.5, 1.0, 2.0]),
    ("data market 0.10..1.00 step 0.01, k=2", 2, [round(0.1 + 0.01 * i, 10) for i in range(91)]),
]


def central_table(lines, ns=(10 ** 4, 10 ** 6), delta=1e-8):
    lines.append("## Shuffled central ε of a whole schedule vs fresh rounds (δ = 1e-8)\n")
    lines.append("Gradual: `GradualRelease(k, schedule).epsilon(n, δ)` = certified bound of one shuffled "
                 "ε_T k-RR round (upper / lower; the lower is attained by a concrete neighbouring pair, so it "
                 "is a lower bound for the whole history too). Fresh: T independent shuffled k-RR rounds at "
                 "ε_1..ε_T, basic composition (δ/T per round, certified upper ε summed), and the same fresh "
                 "rounds composed by the PLD accountant (`shuffleamp.compose_rounds`, certified upper; schedules "
                 "with T <= 12). Local: ε_T vs Σε_i.\n")
    head = ["schedule", "T", "local ε_T", "local Σε_i", "n", "gradual ε upper", "gradual ε lower",
            "fresh Σ ε upper", "fresh accountant upper", "saving × (vs accountant)", "time s"]
    lines.append(fmt_row(head))
    lines.append(fmt_row(["---"] * len(head)))
    rows = []
    for label, k, sched in SCHEDULES:
        gr = g.GradualRelease(k, sched)
        for n in ns:
            t0 = time.time()
            r = gr.epsilon(n, delta)
            fresh = gr.fresh_rounds_epsilon(n, delta)
            acc = None
            if len(sched) <= 12:
                acc = sa.compose_rounds([(KRR(e, k), n, 1) for e in sched], delta=delta, lower=False).upper
            dt = time.time() - t0
            rows.append((label, n, r.upper, fresh))
            lines.append(fmt_row([label, str(len(sched)), f"{gr.local_epsilon():.4f}", f"{sum(sched):.4f}",
                                  f"{n:.0e}", f"{r.upper:.5f}", f"{r.lower:.5f}", f"{fresh:.5f}",
                                  "-" if acc is None else f"{acc:.5f}",
                                  "-" if acc is None else f"{acc / r.upper:.2f}", f"{dt:.2f}"]))
    lines.append("")
    return rows


def prefix_curves(ns=(10 ** 4, 10 ** 6), delta=1e-8):
    """Central ε after each round t (prefix of the schedule), gradual vs fresh, for the first two schedules."""
    out = {}
    for label, k, sched in SCHEDULES[:2]:
        for n in ns:
            grad, fresh = [], []
            for t in range(1, len(sched) + 1):
                gr = g.GradualRelease(k, sched[:t])
                grad.append(gr.epsilon(n, delta).upper)
                fresh.append(gr.fresh_rounds_epsilon(n, delta))
            out[(label, n)] = (grad, fresh)
    return out


def plot(curves, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=False)
    labels = sorted({lab for lab, _ in curves}, key=[s[0] for s in SCHEDULES].index)
    for ax, lab in zip(axes, labels):
        for (l2, n), (grad, fresh) in curves.items():
            if l2 != lab:
                continue
            t = np.arange(1, len(grad) + 1)
            ax.plot(t, grad, "o-", label=f"gradual release, n={n:.0e}")
            ax.plot(t, fresh, "s--", label=f"fresh rounds (basic comp.), n={n:.0e}")
        ax.set_yscale("log")
        ax.set_xlabel("rounds released t")
        ax.set_ylabel("central ε after round t (δ = 1e-8)")
        ax.set_title(lab)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="write the Markdown report here (default: stdout)")
    ap.add_argument("--plot", default=None, help="PNG path for the central-ε plot (needs matplotlib)")
    ap.add_argument("--reps", default="100,3000", help="comma-separated repetition counts")
    args = ap.parse_args(argv)
    reps_list = [int(r) for r in args.reps.split(",")]
    t_all = time.time()
    lines = ["# Gradual release of k-RR: reproduction and shuffled accounting\n",
             f"Generated by `bench/bench_gradual.py` (seed {SEED}); shuffleamp {shuffleamp.__version__}, "
             f"numpy {np.__version__}, Python {platform.python_version()}.\n",
             "Reference: M. Pan, \"Randomized Response with Gradual Release of Privacy Budget\", "
             "arXiv:2401.13952, 2024 (Section 6; Eqs. (6)-(8), (54), (65), (67), Appendix G, Theorem 6.1).\n"]
    sched1 = [eps_ns(K) for K in range(1, 11)]
    ok1 = report_experiment("Experiment 1: binary, RAPPOR schedule", [400, 600], sched1,
                            np.r_[0:400, 400:800], reps_list, SEED, lines)
    counts2 = [100, 200, 300, 400, 500]
    subset2 = np.concatenate([np.cumsum([0] + counts2[:-1])[j] + np.arange(100) for j in range(5)])
    ok2 = report_experiment("Experiment 2: 5-ary, ε = 0.1..1.0", counts2, [round(0.1 * i, 10) for i in range(1, 11)],
                            subset2, reps_list, SEED + 1, lines)
    central_table(lines)
    if args.plot:
        curves = prefix_curves()
        if plot(curves, args.plot):
            lines.append(f"Plot: `{args.plot.split('/')[-1]}` (central ε after each round, log scale).\n")
            lines.append("| schedule | n | t | gradual ε | fresh Σε |")
            lines.append("|---|---|---|---|---|")
            for (lab, n), (grad, fresh) in curves.items():
                for t in (1, len(grad) // 2, len(grad)):
                    lines.append(f"| {lab} | {n:.0e} | {t} | {grad[t - 1]:.5f} | {fresh[t - 1]:.5f} |")
            lines.append("")
        else:
            lines.append("(matplotlib not available: no plot)\n")
    lines.append(f"Total time {time.time() - t_all:.1f} s. Experiments: {'pass' if ok1 and ok2 else 'FAIL'}.\n")
    text = "\n".join(lines)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0 if ok1 and ok2 else 1


if __name__ == "__main__":
    sys.exit(main())
