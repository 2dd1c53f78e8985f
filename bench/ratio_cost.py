"""What the unknown label ratio costs: `geotter(X, Y)` (ratio estimated) against `geotter(X, Y, prior)` (the batch's
own ratio given), side by side on the same batch, and the share of the estimate itself (`Prepared.ratio`).

    python bench/ratio_cost.py                  # bench/results/ratio_cost.csv, one thread
    python bench/ratio_cost.py --threads 2      # the same on two threads (bench/results/ratio_cost_2threads.csv)

Batches: synthetic CLIP-like batches (class embeddings around a few centres, samples 0.25 y_label + noise, a
Dirichlet(1) ratio over the classes present) of 64 x 1000 (5 classes present), 1000 x 1000 (15 and 300 present),
5000 x 2000 (20 present, d = 64), and the full test sets of the tasks whose data are here (the two image-feature
tasks, the four CIFAR-10 logit tasks, wordnet-sample). The two calls alternate (known, unknown, known, ...) and
the best of `--repeats` is kept; `ratio` = unknown / known. The estimate's own time is that of `Prepared.ratio` on a
prepared batch. Times are wall seconds of this run (compare the ratios, not the seconds across runs). This is a
benchmark, not a test.
"""
from __future__ import annotations
import argparse, os, time, warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from geotter.core import class_prior
from geotter.method import geotter, geotter_inputs, prepare

OUT = Path(__file__).resolve().parent / 'results'
SYNTHETIC = ((64, 1000, 5, 512), (1000, 1000, 15, 512), (1000, 1000, 300, 512), (5000, 2000, 20, 64))
TASKS = ('sun397-val-clip-vitb32-1shot', 'stanford-cars-val-clip-vitb32-1shot', 'cifar10-clip', 'cifar10-siglip',
         'cifar10-siglip2', 'cifar10-biomedclip', 'wordnet-sample')


def present_batch(n:int, m:int, present:int, d:int=512, seed:int=0):
    "(X, Y, labels): m classes around 5 centres, n samples 0.25 y_label + N(0, I/d) from `present` classes in Dirichlet(1) shares."
    rng = np.random.default_rng([seed, n, m, present, d])
    Y = rng.normal(size=(5, d))[rng.integers(0, 5, m)] + rng.normal(size=(m, d))
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    classes = rng.choice(m, present, replace=False)
    labels = classes[rng.choice(present, n, p=rng.dirichlet(np.ones(present)))]
    X = 0.25 * Y[labels] + rng.normal(size=(n, d)) / np.sqrt(d)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X.astype(np.float32), Y.astype(np.float32), labels


def batches(only:str|None=None):
    "(name, X, Y, logits, labels) of every batch measured (`only`: those whose name contains it)."
    for name, X, Y, L, lab in _batches():
        if only is None or only in name: yield name, X, Y, L, lab


def _batches():
    for n, m, k, d in SYNTHETIC:
        X, Y, lab = present_batch(n, m, k, d)
        yield f'{n} x {m}, {k} present, d={d}', X, Y, None, lab
    from geotter.data import load_task
    for name in TASKS:
        try: t = load_task(name)
        except (FileNotFoundError, ValueError) as e: print(f"skipping {name}: {str(e)[:80]}"); continue
        X, Y, L = (t.X, t.Y, None) if t.X is not None else geotter_inputs(None, None, t.zero_shot_logits())
        yield f'{name} (full set, {len(t.labels)} x {t.n_classes})', X, Y, L, t.labels


def best_of(fs:list, repeats:int)->list:
    "Best wall seconds of each thunk, called in turn (A B A B ...) `repeats` times."
    ts = [[] for _ in fs]
    for _ in range(repeats):
        for i, f in enumerate(fs):
            t0 = time.perf_counter(); f(); ts[i].append(time.perf_counter() - t0)
    return [min(t) for t in ts]


def main(repeats:int=3, threads:int=1, only:str|None=None, out:str|None=None):
    torch.set_num_threads(threads); warnings.simplefilter('ignore')
    rows, load0 = [], os.getloadavg()[0]
    for name, X, Y, L, lab in batches(only):
        prior = class_prior(lab, len(Y))
        known = lambda: geotter(X, Y, prior, logits=L)
        unknown = lambda: geotter(X, Y, logits=L)
        ratio_only = lambda: prepare(X, Y, logits=L).ratio
        known(); unknown()                                             # warm: compiled kernels, imports
        t_known, t_unknown, t_prep_ratio, t_prep = best_of([known, unknown, ratio_only, lambda: prepare(X, Y, logits=L)], repeats)
        acc = lambda r: float((np.asarray(r.labels) == lab).mean())
        rows.append(dict(batch=name, n=len(X), m=len(Y), present=int((prior > 0).sum()), known_s=t_known, unknown_s=t_unknown,
                         ratio=t_unknown / t_known, estimate_s=max(t_prep_ratio - t_prep, 0.0),
                         acc_known=acc(known()), acc_unknown=acc(unknown())))
        print({k: round(v, 4) if isinstance(v, float) else v for k, v in rows[-1].items()}, flush=True)
    f = pd.DataFrame(rows).assign(threads=threads, load_start=load0, load_end=os.getloadavg()[0])
    out = Path(out) if out else OUT / ('ratio_cost.csv' if threads == 1 else f'ratio_cost_{threads}threads.csv')
    out.parent.mkdir(parents=True, exist_ok=True)
    f.to_csv(out, index=False, float_format='%.6g')
    print(f.drop(columns=['load_start', 'load_end']).round(3).to_markdown(index=False))


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--repeats', type=int, default=3, help='calls of each, alternating; the best is kept')
    p.add_argument('--threads', type=int, default=1, help='torch intra-op threads')
    p.add_argument('--only', help='measure only the batches whose name contains this text')
    p.add_argument('--out', help='CSV to write (default bench/results/ratio_cost.csv, or ratio_cost_<k>threads.csv)')
    a = p.parse_args()
    main(a.repeats, a.threads, a.only, a.out)
