"""GeoTTER with the label ratio unknown, on StatA's realistic batches of the development tasks.

    python bench/realistic.py [--batches 50] [--large-batches 15] [--estimator-batches 10] [--jobs 2]   # ~20 min, 2 cores
        # bench/results/realistic_runs.csv.gz (every batch and method), realistic_accuracy.csv and
        # realistic_balanced.csv (mean per task, scenario and method), realistic_estimators.csv (every batch and
        # estimator: TV, recall, precision); read by nbs/studies/31_ratio_unknown.ipynb

Tasks (each when its data are here): the two image-feature tasks (`$GEOTTER_DATA`), wordnet-sample, wordnet-nouns
(`geotter extract wordnet-nouns all-MiniLM-L6-v2 --download` first), the four CIFAR-10 logit tasks and the synthetic long-tailed task. Batches are drawn by `geotter.studies.ratio.realistic_eval`
from numpy's default_rng([0, scenario]), the same draws as bench/peers.py (StatA, TransCLIP-ZS, ZLaP), so the first
batches of both scripts are the same batches. The slow run of the protocol is `--batches 100 --large-batches 100`.
This is a benchmark, not a test.
"""
from __future__ import annotations
import argparse, os, sys, time
from pathlib import Path

import pandas as pd

OUT = Path(__file__).resolve().parent / 'results'
TASKS = ('sun397-val-clip-vitb32-1shot', 'stanford-cars-val-clip-vitb32-1shot', 'wordnet-sample', 'wordnet-nouns', 'cifar10-clip',
         'cifar10-siglip', 'cifar10-siglip2', 'cifar10-biomedclip', 'synthetic')


def one_task(name:str, n_small:int, n_large:int, n_est:int)->tuple:
    "Accuracy and estimator rows of every scenario of one task (one thread)."
    import torch; torch.set_num_threads(1)
    from geotter.data import load_task
    from geotter.studies.ratio import SCENARIOS, RATIO_ESTIMATORS, realistic_eval
    try: task = load_task(name, seed=0) if name == 'synthetic' else load_task(name)
    except (FileNotFoundError, ValueError) as e: print(f"skipping {name}: {e}", flush=True); return [], []
    acc, est = [], []
    for s, (scen, spec) in enumerate(SCENARIOS):
        t0 = time.perf_counter()
        nb = 1 if spec is None else n_large if spec[0] >= 1000 else n_small
        a, _ = realistic_eval(task, s, nb)
        _, e = realistic_eval(task, s, min(nb, n_est), methods=(), estimators=tuple(RATIO_ESTIMATORS))
        acc += a; est += e
        print(f"{name} {scen}: {time.perf_counter() - t0:.0f}s", flush=True)
    return acc, est


def summary(runs:pd.DataFrame, value:str='acc')->pd.DataFrame:
    "Mean of `value` (%) per task, scenario and method, with the number of batches."
    t = runs.pivot_table(index=['task', 'scenario'], columns='method', values=value, aggfunc='mean', sort=False)
    t['batches'] = runs[runs.method == 'zs'].groupby(['task', 'scenario'], sort=False).size()
    return t.round(2).reset_index()


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--batches', type=int, default=50, help='realistic batches per B=64 scenario')
    p.add_argument('--large-batches', type=int, default=15, help='realistic batches per B=1000 scenario')
    p.add_argument('--estimator-batches', type=int, default=10, help='batches per scenario on which the estimators are scored')
    p.add_argument('--jobs', type=int, default=2, help='tasks run in parallel')
    p.add_argument('--tasks', nargs='*', default=None, help='run only these tasks; the stored rows of the others are kept')
    a = p.parse_args()
    from joblib import Parallel, delayed
    res = Parallel(n_jobs=a.jobs)(delayed(one_task)(t, a.batches, a.large_batches, a.estimator_batches) for t in a.tasks or TASKS)
    runs = pd.DataFrame([r for acc, _ in res for r in acc]); est = pd.DataFrame([r for _, e in res for r in e])
    OUT.mkdir(exist_ok=True)
    if a.tasks and (OUT / 'realistic_runs.csv.gz').exists():          # keep the stored rows of the other tasks
        old, old_est = pd.read_csv(OUT / 'realistic_runs.csv.gz'), pd.read_csv(OUT / 'realistic_estimators.csv')
        runs = pd.concat([old[~old.task.isin(runs.task.unique())], runs]); est = pd.concat([old_est[~old_est.task.isin(est.task.unique())], est])
    runs.to_csv(OUT / 'realistic_runs.csv.gz', index=False)
    summary(runs).to_csv(OUT / 'realistic_accuracy.csv', index=False)
    summary(runs, 'bal').to_csv(OUT / 'realistic_balanced.csv', index=False)
    est.to_csv(OUT / 'realistic_estimators.csv', index=False)
    print(summary(runs).to_string(index=False))
