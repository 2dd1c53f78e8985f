"""The model of the batch (`geotter.batchmodel.batch_model`) beside `geotter(X, Y)`, StatA, MOON, TransCLIP-ZS and
zero-shot, with the label ratio unknown, on the development tasks (the full test sets and StatA's realistic batches).

    python bench/batch_model.py [--tasks NAME ...] [--small 10] [--large 5] [--cache DIR]
        # bench/results/batch_model_mean.csv (mean accuracy % over tasks per scenario and method), batch_model_worst.csv
        # (each method's worst task against zero-shot) and batch_model_time.csv (median seconds per batch)
    python bench/batch_model.py --loto ...
        # bench/results/batch_model_loto.csv: the smoothing's alpha (0.3, 0.5, 0.7, 0.85) chosen by mean accuracy leaving
        # one source out (`geotter.studies.ratio.loto`), reported on the source left out

Tasks: `geotter.studies.ratio.DEV_TASKS` whose data are here. Batches: `geotter.studies.ratio.batch_scenarios` (10
batches per B=64 scenario, 5 per B=1000 scenario, seeded; the draws of bench/realistic.py and bench/peers.py), one
thread per process; rows are cached by `geotter.studies.ratio.evaluate` (default folder: its own). Methods at their
defaults. This is a benchmark, not a test.
"""
from __future__ import annotations
import argparse
from pathlib import Path

import numpy as np

from geotter.batchmodel import batch_model
from geotter.data import load_task
from geotter.studies.ratio import DEV_TASKS, HARNESS_METHODS, evaluate, mean_table, peer_inputs, time_table, versioned, worst_table

OUT = Path(__file__).resolve().parent / 'results'


def model_labels(X, Y, L, **options):
    "Labels of the batch model on one batch (embeddings, or the logit features of a logit-only classifier)."
    Xp, Yp, Lp = peer_inputs(X, Y, L)
    return np.asarray(batch_model(Xp, Yp, Lp, **options).assignments).argmax(1)


def available(tasks)->list:
    "The tasks whose data are here (the others are named and skipped)."
    here = []
    for t in tasks:
        try: load_task(t, seed=0) if t == 'synthetic' else load_task(t); here.append(t)
        except (FileNotFoundError, ValueError) as e: print(f"skipping {t}: {str(e)[:80]}")
    return here


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--tasks', nargs='*', default=None); ap.add_argument('--small', type=int, default=10)
    ap.add_argument('--large', type=int, default=5); ap.add_argument('--cache', default=None)
    ap.add_argument('--loto', action='store_true', help="leave-one-source-out choice of the smoothing's alpha")
    a = ap.parse_args(argv)
    if a.loto: return choose_alpha(available(a.tasks or DEV_TASKS), a)
    methods = {m: HARNESS_METHODS[m] for m in ('zs', 'stata', 'moon', 'transclip-zs', 'geotter')}
    methods['batch-model'] = versioned(model_labels, '2')
    runs = evaluate(methods, available(a.tasks or DEV_TASKS), n_small=a.small, n_large=a.large, out=a.cache, progress=False)
    OUT.mkdir(exist_ok=True)
    mean_table(runs).round(2).to_csv(OUT / 'batch_model_mean.csv')
    worst, where = worst_table(runs)
    worst.round(2).join(where.add_suffix(' task')).to_csv(OUT / 'batch_model_worst.csv')
    time_table(runs).to_csv(OUT / 'batch_model_time.csv')
    print(mean_table(runs).round(2).to_string()); print(worst.round(2).to_string())


ALPHAS = (0.3, 0.5, 0.7, 0.85)


def choose_alpha(tasks, a):
    "The leave-one-source-out choice of `alpha` among ALPHAS (by mean accuracy), reported on each source left out."
    from functools import partial
    from geotter.studies.ratio import loto
    grid = {f'alpha={x}': versioned(partial(model_labels, alpha=x), '2') for x in ALPHAS}
    runs = evaluate({'zs': HARNESS_METHODS['zs'], **grid}, tasks, n_small=a.small, n_large=a.large, out=a.cache, progress=False)
    choices, per_task, summary = loto(runs, list(grid), reference='zs')
    summary['chosen (per source left out)'] = ', '.join(f'{g}: {c}' for g, c in choices.items())
    OUT.mkdir(exist_ok=True); summary.round(2).to_csv(OUT / 'batch_model_loto.csv')
    print(summary.round(2).to_string())


if __name__ == '__main__':
    main()
