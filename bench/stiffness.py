"""How stiff should the class marginal be when the label ratio is unknown? The trade-off, measured.

    python bench/stiffness.py [--large-batches 8] [--small-batches 16] [--jobs 2]   # ~3 min on 2 cores
        # bench/results/stiffness_runs.csv (every batch), read by nbs/studies/31_ratio_unknown.ipynb

GeoTTER with the ratio unknown (`geotter(X, Y)`) transports the batch onto the estimated ratio (`estimate_label_ratio`)
with a soft class marginal: KL-penalised with strength rho = 2.5 nats (`UNKNOWN_RATIO`). Per development task
(bench/realistic.py's tasks that are present) and scenario (the full test set; batches of 1,000 from 5-25 classes;
batches of 64 from 5-25 classes, drawn as bench/realistic.py draws them), this records the accuracy (%) of:
zero-shot; the soft marginal at rho x 1 (the default), x 1.5, x 2, x 4 and x 10; the default in one pass (`refine=0`:
no second pass on the batch's class means); exact transport onto the estimated ratio (an
infinitely stiff marginal); and GeoTTER given the batch's true ratio. Beside them, four label-free statistics that
could choose the stiffness if they told balanced batches from imbalanced ones: lambda = |S|/m (`RatioEstimate.spread`),
the size of the support S EM finds, and the total variation to the uniform ratio of EM's estimate and of the soft
plan's own class mass. This is a benchmark, not a test.
"""
from __future__ import annotations
import argparse, sys, time, warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from realistic import TASKS

OUT = Path(__file__).resolve().parent / 'results'
SCENARIOS = {0: None, 4: 'large', 3: 'small'}          # index into geotter.studies.ratio.SCENARIOS -> batch count option
STIFFNESS = (1, 1.5, 2, 4, 10)                        # multiples of UNKNOWN_RATIO['rho']


def tv(p, q)->float: return 0.5 * float(np.abs(np.asarray(p, np.float64) - np.asarray(q, np.float64)).sum())


def batch_row(X, Y, L, yb, m:int)->dict:
    "The accuracies and statistics of one batch."
    from geotter.method import prepare, geotter_inputs
    from geotter.priors import UNKNOWN_RATIO
    from geotter.core import CLIP_TEMPERATURE
    Xg, Yg, Lg = geotter_inputs(X, Y, L)
    prep = prepare(Xg, Yg, logits=Lg); nats = CLIP_TEMPERATURE / prep.config['cost_temperature']
    acc = lambda res: 100 * float((np.asarray(res.labels) == yb).mean())
    est, true, uniform = prep.ratio, np.bincount(yb, minlength=m) / len(yb), np.full(m, 1 / m)
    soft = prep.adapt(None)
    mass = np.asarray(soft.ot_plan.sum(0), np.float64)
    row = dict(n=len(yb), m=m, classes=int((true > 0).sum()), tv_true_uniform=tv(true, uniform), spread=float(est.spread),
               support=int(np.asarray(est.support).sum()), tv_em_uniform=tv(est.em.cpu(), uniform),
               tv_mass_uniform=tv(mass / mass.sum(), uniform), zs=100 * float((L.argmax(1) == yb).mean()))
    for s in STIFFNESS: row[f'rho x{s:g}'] = acc(soft if s == 1 else prep.adapt(None, rho=s * UNKNOWN_RATIO['rho'] * nats))
    row['one pass'] = acc(prep.adapt(None, refine=0))
    row['exact'] = acc(prep.adapt(est.target.cpu().numpy()))
    row['true ratio'] = acc(prep.adapt(true))
    return row


def one_task(name:str, counts:dict)->list:
    "Rows of every scenario of one task (one thread)."
    import torch; torch.set_num_threads(1)
    from geotter.data import load_task
    from geotter.studies.ratio import SCENARIOS as ALL, realistic_batch
    try: task = load_task(name, seed=0) if name == 'synthetic' else load_task(name)
    except (FileNotFoundError, ValueError) as e: print(f"skipping {name}: {e}", flush=True); return []
    L_all, y = np.asarray(task.zero_shot_logits(), dtype=np.float64), np.asarray(task.labels)
    rows = []
    for s, kind in SCENARIOS.items():
        t0, (scen, spec), rng = time.perf_counter(), ALL[s], np.random.default_rng([0, s])   # bench/realistic.py's draws
        for b in range(1 if spec is None else counts[kind]):
            i = np.arange(len(y)) if spec is None else realistic_batch(y, *spec, seed=rng)
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                r = batch_row(None if task.X is None else task.X[i], task.Y, L_all[i], y[i], task.n_classes)
            rows.append(dict(task=task.name, scenario=scen, batch=b, **r))
        print(f"{name} {scen}: {time.perf_counter() - t0:.0f}s", flush=True)
    return rows


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--large-batches', type=int, default=8, help='batches of 1,000 (5-25 classes)')
    p.add_argument('--small-batches', type=int, default=16, help='batches of 64 (5-25 classes)')
    p.add_argument('--jobs', type=int, default=2, help='tasks run in parallel')
    a = p.parse_args()
    from joblib import Parallel, delayed
    counts = dict(large=a.large_batches, small=a.small_batches)
    res = Parallel(n_jobs=a.jobs)(delayed(one_task)(t, counts) for t in TASKS)
    df = pd.DataFrame([r for rows in res for r in rows]).round(4)
    OUT.mkdir(exist_ok=True); df.to_csv(OUT / 'stiffness_runs.csv', index=False)
    print(df.groupby(['task', 'scenario'], sort=False)[['zs', *[f'rho x{s:g}' for s in STIFFNESS], 'one pass', 'exact', 'true ratio']].mean().round(2).to_string())
