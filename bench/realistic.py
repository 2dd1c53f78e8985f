"""GeoTTER with the label ratio unknown, on StatA's realistic batches of the development tasks.

    python bench/realistic.py [--batches 50] [--large-batches 15] [--estimator-batches 10] [--jobs 2] [--tasks ...] [--out DIR]
    python bench/realistic.py --tables      # only the tables, rebuilt from the stored realistic_runs.csv.gz (nothing is run)
        # bench/results/realistic_runs.csv.gz (every batch and method), realistic_accuracy.csv and
        # realistic_balanced.csv (mean per task, scenario and method), realistic_estimators.csv (every batch and
        # estimator: TV, recall, precision); read by nbs/studies/31_ratio_unknown.ipynb; and the judgement of the harness
        # (`geotter.studies.ratio`): realistic_judgement.csv (mean over tasks per scenario and method, geotter-unknown's
        # worst task against zero-shot and its wins over otter-em), realistic_loto.csv (the ratio-unknown method chosen
        # leaving one source out among otter-em, geotter-em, label-free, otter-unknown, geotter-unknown)

Tasks (each when its data are here): the development tasks `geotter.studies.ratio.DEV_TASKS`: the two image-feature
tasks (`$GEOTTER_DATA`) and their twelve class subsets and long tails, wordnet-sample, wordnet-nouns and wordnet-verbs
(`geotter extract wordnet-nouns all-MiniLM-L6-v2 --download` first, and likewise wordnet-verbs) and the weak text tasks
made from them, the four CIFAR-10 logit tasks and the synthetic long-tailed task. Batches are drawn by
`geotter.studies.ratio.realistic_eval` from numpy's default_rng([0, scenario]), the same draws as bench/peers.py
(StatA, TransCLIP-ZS, ZLaP, MOON, TDA), so the first batches of both scripts are the same batches. The slow run of the
protocol is `--batches 100 --large-batches 100`; about 20 minutes on two cores for the nine tasks of 0.2 (a few more
for the sixteen class subsets, long tails and weak text tasks, most of them small), plus 15 for WordNet nouns.
`--out DIR` writes elsewhere (a trial run on one task). This is a benchmark, not a test.
"""
from __future__ import annotations
import argparse, os, sys, time
from pathlib import Path

import pandas as pd

OUT = Path(__file__).resolve().parent / 'results'
TASKS = ('sun397-val-clip-vitb32-1shot', 'stanford-cars-val-clip-vitb32-1shot', 'wordnet-sample', 'wordnet-nouns', 'cifar10-clip',
         'cifar10-siglip', 'cifar10-siglip2', 'cifar10-biomedclip', 'synthetic')   # the nine tasks of 0.2 (bench/stiffness.py, uniform_test.py); the default run: DEV_TASKS


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


CANDIDATES = ('otter-em', 'geotter-em', 'label-free', 'otter-unknown', 'geotter-unknown')   # the ratio unknown (not geotter-true)


def judgement(runs:pd.DataFrame)->tuple:
    "(the harness's report of geotter-unknown against zero-shot and otter-em; the summary of the leave-one-source-out choice)."
    from geotter.studies.ratio import loto, report
    methods = [m for m in ('zs', 'geotter-true') + CANDIDATES if m in set(runs.method)]
    judged = report(runs, methods, reference='zs', peer='otter-em', focus='geotter-unknown')
    choices, _, held_out = loto(runs, [m for m in CANDIDATES if m in set(runs.method)], reference='zs')
    held_out['chosen (per source left out)'] = ', '.join(f'{g}: {c}' for g, c in choices.items())
    return judged, held_out


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
    p.add_argument('--out', type=Path, default=OUT, help='folder of the result files (default bench/results)')
    p.add_argument('--tables', action='store_true', help='rebuild the tables from the stored runs, running nothing')
    a = p.parse_args()
    OUT = a.out
    if a.tables:
        judged, held_out = judgement(pd.read_csv(OUT / 'realistic_runs.csv.gz'))
        judged.to_csv(OUT / 'realistic_judgement.csv'); held_out.round(4).to_csv(OUT / 'realistic_loto.csv')
        print(judged.to_string()); print(); print(held_out.round(2).to_string()); sys.exit()
    from joblib import Parallel, delayed
    from geotter.studies.ratio import DEV_TASKS
    res = Parallel(n_jobs=a.jobs)(delayed(one_task)(t, a.batches, a.large_batches, a.estimator_batches) for t in a.tasks or DEV_TASKS)
    runs = pd.DataFrame([r for acc, _ in res for r in acc]); est = pd.DataFrame([r for _, e in res for r in e])
    OUT.mkdir(parents=True, exist_ok=True)
    if a.tasks and (OUT / 'realistic_runs.csv.gz').exists():          # keep the stored rows of the other tasks
        old, old_est = pd.read_csv(OUT / 'realistic_runs.csv.gz'), pd.read_csv(OUT / 'realistic_estimators.csv')
        runs = pd.concat([old[~old.task.isin(runs.task.unique())], runs]); est = pd.concat([old_est[~old_est.task.isin(est.task.unique())], est])
    runs.to_csv(OUT / 'realistic_runs.csv.gz', index=False)
    summary(runs).to_csv(OUT / 'realistic_accuracy.csv', index=False)
    summary(runs, 'bal').to_csv(OUT / 'realistic_balanced.csv', index=False)
    est.to_csv(OUT / 'realistic_estimators.csv', index=False)
    print(summary(runs).to_string(index=False))
    if runs.task.nunique() > 1:
        judged, held_out = judgement(runs)
        judged.to_csv(OUT / 'realistic_judgement.csv'); held_out.round(4).to_csv(OUT / 'realistic_loto.csv')
        print(); print(judged.to_string()); print(); print(held_out.round(2).to_string())
