"""StatA beside TransCLIP-ZS, ZLaP and zero-shot: accuracy on the dev tasks (full and on StatA's realistic batches), and speed.

    python bench/peers.py accuracy [--batches 100] [--large-batches 30] [--tasks NAME ...]   # --tasks: rerun these, keep the others' rows
        # bench/results/peers_realistic.csv, peers_realistic_balanced.csv (+ every batch: peers_realistic_runs.csv.gz)
    python bench/peers.py speed                     # bench/results/peers_speed.csv: n x 397 x 512, one thread, side by side

Tasks (each when its data are here): wordnet-sample, wordnet-nouns (built by `geotter extract`), synthetic (`make_long_tail(seed=0)`), the four CIFAR-10 logit
tasks (on logit features, as `run_method` runs the peers) and the two image-feature tasks (`load_task`, data directory
`$GEOTTER_DATA`). Realistic batches: `geotter.studies.ratio.realistic_batch` for each of `REALISTIC_SCENARIOS`, seeded
per task and scenario. Methods at their defaults; StatA also with soft counts (`stata-soft`) and with soft counts and
the exact mean step (`stata-exact`, the paper's closed form). This is a benchmark, not a test; timings are ratios
measured side by side in one run.
"""
from __future__ import annotations
import argparse, sys, time, warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from geotter.core import accuracy, balanced_accuracy, predict, zero_shot_logits
from geotter.studies.ratio import REALISTIC_SCENARIOS, realistic_batch
from geotter.peers import stata, transclip_zs, zlap

OUT = Path(__file__).resolve().parent / 'results'
TASKS = ('wordnet-sample', 'wordnet-nouns', 'synthetic', 'sun397-val-clip-vitb32-1shot', 'stanford-cars-val-clip-vitb32-1shot',
         'cifar10-clip', 'cifar10-siglip', 'cifar10-siglip2', 'cifar10-biomedclip')
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
                'stata-exact': stata(X, Y, logits=logits, soft_counts=True, normalize_means=False)}


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


def speed(n:int=4000, m:int=397, d:int=512, repeats:int=3)->pd.DataFrame:
    "Seconds (median of `repeats`, interleaved) of each method at n x m x d, one thread, float32; ratio to TransCLIP-ZS."
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from complexity import make_batch
    torch.set_num_threads(1)
    inputs = {f'synthetic {n}x{m}x{d}': make_batch(n, m, d)[:2]}
    sun = load(['sun397-val-clip-vitb32-1shot'])
    if sun: inputs['SUN397 val 3970x397x512'] = (sun['sun397-val-clip-vitb32-1shot'].X, sun['sun397-val-clip-vitb32-1shot'].Y)
    fns = {'transclip-zs': transclip_zs, 'zlap': zlap, 'stata': stata}
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
    p.add_argument('what', choices=['accuracy', 'speed'])
    p.add_argument('--batches', type=int, default=100, help='realistic batches per scenario')
    p.add_argument('--large-batches', type=int, default=None, help='realistic batches per B=1000 scenario (default: --batches)')
    p.add_argument('--tasks', nargs='*', default=None, help='rerun only these tasks; the stored rows of the others are kept')
    a = p.parse_args()
    OUT.mkdir(exist_ok=True)
    if a.what == 'accuracy':
        runs = accuracy_runs(a.batches, a.large_batches, names=TASKS if a.tasks is None else a.tasks)
        if a.tasks is not None and (OUT / 'peers_realistic_runs.csv.gz').exists():
            old = pd.read_csv(OUT / 'peers_realistic_runs.csv.gz')
            runs = pd.concat([old[~old.task.isin(runs.task.unique())], runs])
        runs.to_csv(OUT / 'peers_realistic_runs.csv.gz', index=False)
        out = summary(runs); out.to_csv(OUT / 'peers_realistic.csv', index=False)
        summary(runs, 'bal').to_csv(OUT / 'peers_realistic_balanced.csv', index=False)
    else:
        out = speed(); out.to_csv(OUT / 'peers_speed.csv', index=False)
    print(out.to_string(index=False))
