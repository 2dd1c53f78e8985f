"""StreamingGeoTTER on StatA's online protocol: label-correlated streams of batches of 128, each batch labelled as it comes.

    python bench/streaming_online.py [--tasks tune|held-out|all|NAME ...] [--methods zs stata geotter stream-em stream]
        # bench/results/streaming_online_runs.csv (every batch and method: accuracy, seconds),
        # bench/results/streaming_online.csv (mean and worst task vs ZS per stream, split and method; median ms per batch)

The stream (Zanella et al., CVPR 2025, arXiv 2501.03729; the protocol of the authors' `OnlineSampler`): each class's
samples, shuffled, are split over min(N // 128, classes) slots by Dirichlet(gamma) proportions; each slot is shuffled;
the slots in order are cut into batches of 128 (the last partial batch dropped); gamma = 'separate': the classes one
after another. One numpy Generator, `default_rng([0, key])` with key 7..10 per stream, seeds everything: one stream per
task and setting. Methods: zero-shot, StatA on each batch, `geotter(X, Y)` (ratio unknown) on each batch,
`StreamingGeoTTER(Y, 'em')` (the former default: a running EM ratio) and `StreamingGeoTTER(Y)` (the ratio estimated
per batch, class means carried). Accuracy of a stream = mean over its batches; the tables average tasks.

Tasks: `tune` are those the streaming model's choices were made on; `held-out` are tasks nobody tuned on (each
when its data are here: `$GEOTTER_DATA`, and the WordNet store entries for the text tasks). Logit-only tasks run on
GeoTTER's logit features (`geotter_inputs`), as the batch method does. This is a benchmark, not a test; timings are
ratios measured side by side in one run (one thread).
"""
from __future__ import annotations
import argparse, time, warnings
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent / 'results'
STREAMS = {'low (0.1)': (0.1, 7), 'medium (0.01)': (0.01, 8), 'high (0.001)': (0.001, 9), 'separate': ('separate', 10)}
TUNE = ('sun397-val-clip-vitb32-1shot@60c-s1', 'stanford-cars-val-clip-vitb32-1shot@100c-s2', 'cifar10-clip', 'wordnet-sample')
HELD_OUT = ('sun397-val-clip-vitb32-1shot', 'sun397-val-clip-vitb32-1shot@lt10-s5', 'stanford-cars-val-clip-vitb32-1shot',
            'stanford-cars-val-clip-vitb32-1shot@40c-s0', 'cifar10-biomedclip', 'cifar10-siglip', 'wordnet-nouns@d6-min100-t4',
            'wordnet-verbs@n3000-t4')
METHODS = ('zs', 'stata', 'geotter', 'stream-em', 'stream')


def _inputs(task)->tuple:
    "(X, Y, L, logit_only): embeddings and their cos/0.01, or GeoTTER's logit features, one-hot classes and the logits."
    from geotter.method import logit_features
    if task.X is None:
        L = np.asarray(task.logits, dtype=np.float64); X, Y = logit_features(L)
        return np.asarray(X), np.asarray(Y), L, True
    return np.asarray(task.X), np.asarray(task.Y), np.asarray(task.zero_shot_logits()), False


def make_method(name:str, Y, logit_only:bool):
    "step(X_b, L_b) -> labels of the batch; the stream methods keep their state in the closure."
    from geotter import geotter, stata, StreamingGeoTTER
    pass_logits = lambda L: L if logit_only else None          # embeddings: GeoTTER's own cos/T, as geotter(X, Y)
    if name == 'zs': return lambda X, L: L.argmax(1)
    if name == 'stata': return lambda X, L: np.asarray(stata(X, Y, logits=L)).argmax(1)
    if name == 'geotter': return lambda X, L: np.asarray(geotter(X, Y, None, logits=pass_logits(L)).labels)
    model = StreamingGeoTTER(Y, 'em') if name == 'stream-em' else StreamingGeoTTER(Y) if name == 'stream' else None
    if model is None: raise ValueError(f"method {name!r}; expected one of {METHODS}")
    return lambda X, L: np.asarray(model.partial_fit_predict(X, pass_logits(L)))


def run_task(name:str, methods=METHODS)->list:
    "Rows (task, stream, method, batch, acc, seconds) of every stream of one task."
    import torch; torch.set_num_threads(1)
    from geotter.data import load_task
    from geotter.studies.streaming import online_stream
    try:
        if name.startswith('wordnet'): import geotter.text   # registers the WordNet task modifiers
        task = load_task(name)
    except (FileNotFoundError, ValueError, ImportError) as e: print(f"skipping {name}: {e}", flush=True); return []
    X, Y, L, logit_only = _inputs(task); y = np.asarray(task.labels)
    rows = []
    for stream, (gamma, key) in STREAMS.items():
        batches = online_stream(y, gamma, 128, np.random.default_rng([0, key]))
        for meth in methods:
            step, t_all = make_method(meth, Y, logit_only), time.perf_counter()
            for b, i in enumerate(batches):
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore')
                    t0 = time.perf_counter(); p = np.asarray(step(X[i], L[i])); dt = time.perf_counter() - t0
                rows.append(dict(task=name, stream=stream, method=meth, batch=b, acc=100 * float((p == y[i]).mean()), seconds=dt))
            print(f"{name} {stream} {meth}: {len(batches)} batches, {time.perf_counter() - t_all:.1f}s", flush=True)
    return rows


def summary(runs:pd.DataFrame)->pd.DataFrame:
    "Per split, stream and method: mean accuracy over tasks, the worst task's difference to ZS, median ms per batch."
    acc = runs.groupby(['split', 'task', 'stream', 'method']).acc.mean().unstack('method')
    out = []
    for (split, stream), t in acc.groupby(level=['split', 'stream'], sort=False):
        for meth in t.columns:
            d = t[meth] - t['zs']
            ms = 1000 * runs[(runs.split == split) & (runs.stream == stream) & (runs.method == meth)].seconds.median()
            out.append(dict(split=split, stream=stream, method=meth, tasks=len(t), mean=round(t[meth].mean(), 2),
                            worst_vs_zs=round(d.min(), 2), worst_task=d.idxmin()[1], ms_per_batch=round(ms, 1)))
    return pd.DataFrame(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--tasks', nargs='+', default=['all'], help="'tune', 'held-out', 'all' or task names")
    ap.add_argument('--methods', nargs='+', default=list(METHODS), choices=METHODS)
    ap.add_argument('--out', default=str(OUT / 'streaming_online'), help='prefix of the two CSV files')
    a = ap.parse_args(argv)
    groups = {'tune': TUNE, 'held-out': HELD_OUT, 'all': TUNE + HELD_OUT}
    names = [n for t in a.tasks for n in groups.get(t, (t,))]
    rows = []
    for n in names:
        rows += [dict(r, split='tune' if n in TUNE else 'held-out') for r in run_task(n, a.methods)]
        runs = pd.DataFrame(rows); runs.to_csv(f"{a.out}_runs.csv", index=False)
    table = summary(runs); table.to_csv(f"{a.out}.csv", index=False)
    with pd.option_context('display.width', 200, 'display.max_rows', 500): print(table.to_string(index=False))


if __name__ == '__main__':
    main()
