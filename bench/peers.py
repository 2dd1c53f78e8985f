"""StatA, MOON and TDA beside TransCLIP-ZS, ZLaP and zero-shot: accuracy on the development tasks (full and on StatA's
realistic batches), and speed.

    python bench/peers.py accuracy [--batches 100] [--large-batches 30] [--tasks NAME ...] [--out DIR]   # --tasks: rerun these, keep the others' rows
        # bench/results/peers_realistic.csv, peers_realistic_balanced.csv (+ every batch: peers_realistic_runs.csv.gz);
        # the judgement of the harness (`geotter.studies.ratio`): peers_mean.csv (mean over tasks per scenario and method),
        # peers_worst.csv (each method's worst task against zero-shot, and which task), peers_loto.csv (the reading of
        # StatA and of MOON chosen leaving one source out, reported on the source left out)
    python bench/peers.py tables                    # only the judgement, rebuilt from the stored peers_realistic_runs.csv.gz
    python bench/peers.py speed                     # bench/results/peers_speed.csv: n x 397 x 512, one thread, side by side

Tasks (each when its data are here): `geotter.studies.ratio.DEV_TASKS`: wordnet-sample, wordnet-nouns and wordnet-verbs
(built by `geotter extract`) and the weak text tasks made from them (hypernym classes, a verb sample), synthetic
(`make_long_tail(seed=0)`), the four CIFAR-10 logit tasks (on logit features, as `run_method` runs the peers), the two
image-feature tasks (`load_task`, data directory `$GEOTTER_DATA`) and their twelve class subsets and long tails.
Realistic batches: `geotter.studies.ratio.realistic_batch` for each of `REALISTIC_SCENARIOS`, seeded per task and
scenario (the draws of `bench/realistic.py` and of the harness of `31_ratio_unknown`). Methods at their defaults; StatA
also with soft counts (`stata-soft`) and with soft counts and the exact mean step (`stata-exact`, the paper's closed
form); MOON as the paper's Eq. (13) (`moon`), as its Alg. 1 prints it (`moon-unit`) and with the Bessel normaliser
(`moon-debye`); TDA on each batch as its own stream (`tda`). `--out DIR` writes elsewhere (a trial run on one task).
This is a benchmark, not a test; timings are ratios measured side by side in one run.
"""
from __future__ import annotations
import argparse, sys, time, warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from geotter.core import accuracy, balanced_accuracy, predict, zero_shot_logits
from geotter.studies.ratio import REALISTIC_SCENARIOS, realistic_batch
from geotter.peers import moon, stata, tda, transclip_zs, zlap

OUT = Path(__file__).resolve().parent / 'results'
from geotter.studies.ratio import DEV_TASKS as TASKS
SCENARIOS = [('full', None)] + [(f'B={B}, Keff {lo}-{hi}', (B, (lo, hi))) for B, (lo, hi) in REALISTIC_SCENARIOS]


def methods(X, Y, logits=None)->dict:
    "Each method's (n, m) scores on one batch: its embeddings, or the logit features of a logit-only batch."
    from geotter.method import logit_features
    if X is None: X, Y = logit_features(logits)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')                 # ZLaP: samples with no path to a class node
        return {'zs': zero_shot_logits(X, Y) if logits is None else logits,
                'transclip-zs': transclip_zs(X, Y, logits=logits), 'zlap': zlap(X, Y),
                'stata': stata(X, Y, logits=logits), 'stata-soft': stata(X, Y, logits=logits, soft_counts=True),
                'stata-exact': stata(X, Y, logits=logits, soft_counts=True, normalize_means=False),
                'moon': moon(X, Y, logits=logits), 'moon-unit': moon(X, Y, logits=logits, anchor='unit'),
                'moon-debye': moon(X, Y, logits=logits, normaliser='debye'), 'tda': tda(X, Y, logits=logits)}


def load(names=TASKS)->dict:
    "name -> Task, for the tasks whose data are here (the others are reported and skipped)."
    from geotter.data import load_task
    out = {}
    for name in names:
        try: out[name] = load_task(name, seed=0) if name == 'synthetic' else load_task(name)
        except (FileNotFoundError, ValueError) as e: print(f"skipping {name}: {e}", flush=True)
    return out


def accuracy_runs(n_batches:int=100, n_large:int|None=None, seed:int=0, names=TASKS)->pd.DataFrame:
    "One row per task, scenario, batch and method (n_batches batches of 64, n_large of 1000): size, classes, accuracy, balanced (%)."
    rows = []
    for name, task in load(names).items():
        X, Y, L, y = task.X, task.Y, task.logits, task.labels
        for j, (scenario, spec) in enumerate(SCENARIOS):
            rng, t0 = np.random.default_rng([seed, j]), time.perf_counter()
            count = 1 if spec is None else n_large if spec[0] >= 1000 and n_large is not None else n_batches
            for b in range(count):
                i = np.arange(len(y)) if spec is None else realistic_batch(y, *spec, seed=rng)
                for method, s in methods(None if X is None else X[i], Y, None if L is None else L[i]).items():
                    p = np.asarray(predict(s))
                    rows.append(dict(task=name, scenario=scenario, batch=b, method=method, n=len(i), classes=len(np.unique(y[i])),
                                     acc=100 * accuracy(y[i], p), bal=100 * balanced_accuracy(y[i], p)))
            print(f"{name} {scenario}: {time.perf_counter() - t0:.0f}s", flush=True)
    return pd.DataFrame(rows)


def summary(runs:pd.DataFrame, value:str='acc')->pd.DataFrame:
    "Mean accuracy (`value`='acc') or balanced accuracy ('bal'), %, per task, scenario and method, with the number of batches."
    t = runs.pivot_table(index=['task', 'scenario'], columns='method', values=value, aggfunc='mean', sort=False)
    t['batches'] = runs[runs.method == 'zs'].groupby(['task', 'scenario'], sort=False).size()
    return t.round(2).reset_index()


READINGS = {'stata': ('stata', 'stata-soft', 'stata-exact'), 'moon': ('moon', 'moon-unit', 'moon-debye')}


def judgement(runs:pd.DataFrame)->tuple:
    "(mean over tasks; worst task against zero-shot with the task; per peer, its reading chosen leaving one source out)."
    from geotter.studies.ratio import loto, mean_table, worst_table
    mean = mean_table(runs)
    worst, task = worst_table(runs, 'zs')
    held_out = []
    for peer, grid in READINGS.items():
        if not (grid := [g for g in grid if g in set(runs.method)]): continue
        choices, _, summ = loto(runs, grid, reference='zs')
        held_out.append(summ.set_axis([c.replace(f" ({choices['all']})", '') for c in summ.columns], axis=1).assign(
            peer=peer, **{'all-task choice': choices['all'], 'chosen (per source left out)': ', '.join(f'{g}: {c}' for g, c in choices.items() if g != 'all')}))
    return mean, worst.round(2).astype(str) + ' (' + task + ')', pd.concat(held_out) if held_out else pd.DataFrame()


def speed(n:int=4000, m:int=397, d:int=512, repeats:int=3)->pd.DataFrame:
    "Seconds (median of `repeats`, interleaved) of each method at n x m x d, one thread, float32; ratio to TransCLIP-ZS."
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from complexity import make_batch
    torch.set_num_threads(1)
    inputs = {f'synthetic {n}x{m}x{d}': make_batch(n, m, d)[:2]}
    sun = load(['sun397-val-clip-vitb32-1shot'])
    if sun: inputs['SUN397 val 3970x397x512'] = (sun['sun397-val-clip-vitb32-1shot'].X, sun['sun397-val-clip-vitb32-1shot'].Y)
    fns = {'transclip-zs': transclip_zs, 'zlap': zlap, 'stata': stata, 'moon': moon, 'tda': tda}
    rows = []
    for what, (X, Y) in inputs.items():
        secs = {name: [] for name in fns}
        for _ in range(repeats):
            for name, f in fns.items():
                t0 = time.perf_counter(); f(X, Y); secs[name].append(time.perf_counter() - t0)
        ref = np.median(secs['transclip-zs'])
        rows += [dict(input=what, method=name, seconds=round(float(np.median(s)), 2),
                      ratio_to_transclip=round(float(np.median(s) / ref), 2)) for name, s in secs.items()]
    return pd.DataFrame(rows)


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('what', choices=['accuracy', 'tables', 'speed'])
    p.add_argument('--batches', type=int, default=100, help='realistic batches per scenario')
    p.add_argument('--large-batches', type=int, default=None, help='realistic batches per B=1000 scenario (default: --batches)')
    p.add_argument('--tasks', nargs='*', default=None, help='rerun only these tasks; the stored rows of the others are kept')
    p.add_argument('--out', type=Path, default=OUT, help='folder of the result files (default bench/results)')
    a = p.parse_args()
    OUT = a.out
    OUT.mkdir(parents=True, exist_ok=True)
    if a.what == 'tables':
        mean, worst, held_out = judgement(pd.read_csv(OUT / 'peers_realistic_runs.csv.gz'))
        mean.round(4).to_csv(OUT / 'peers_mean.csv'); worst.to_csv(OUT / 'peers_worst.csv'); held_out.round(4).to_csv(OUT / 'peers_loto.csv')
        out = held_out; print(mean.round(2).to_string()); print(); print(worst.to_string()); print()
    elif a.what == 'accuracy':
        runs = accuracy_runs(a.batches, a.large_batches, names=TASKS if a.tasks is None else a.tasks)
        if a.tasks is not None and (OUT / 'peers_realistic_runs.csv.gz').exists():
            old = pd.read_csv(OUT / 'peers_realistic_runs.csv.gz')
            runs = pd.concat([old[~old.task.isin(runs.task.unique())], runs])
        runs.to_csv(OUT / 'peers_realistic_runs.csv.gz', index=False)
        out = summary(runs); out.to_csv(OUT / 'peers_realistic.csv', index=False)
        summary(runs, 'bal').to_csv(OUT / 'peers_realistic_balanced.csv', index=False)
        if runs.task.nunique() > 1:
            mean, worst, held_out = judgement(runs)
            mean.round(4).to_csv(OUT / 'peers_mean.csv'); worst.to_csv(OUT / 'peers_worst.csv'); held_out.round(4).to_csv(OUT / 'peers_loto.csv')
            print(mean.round(2).to_string()); print(); print(worst.to_string()); print(); print(held_out.round(2).to_string()); print()
    else:
        out = speed(); out.to_csv(OUT / 'peers_speed.csv', index=False)
    print(out.to_string(index=False))
