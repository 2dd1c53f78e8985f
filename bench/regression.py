"""Regression fingerprints: the labels and plans of every method on seeded batches of every task that is here.

    python bench/regression.py --out FILE.csv [--arrays FILE.npz] [--tasks ...]   # ~3 min on 2 cores
    python bench/regression.py --compare OLD.csv NEW.csv                           # lists every row that differs (and the new calls)

One row per (task, batch, call): the SHA-256 of the labels (int64) and of the plan or scores (float64 bytes, so
that "identical" means to the last bit), with the arrays themselves in `--arrays` to measure a difference. The
batches are a seeded realistic batch of 64 samples and one of 1,000 (StatA's protocol, `realistic_batch`) of each
task: the shipped ones (`synthetic`, `wordnet-sample`) and those whose data are in `$GEOTTER_DATA` (the two
image-feature tasks, the four CIFAR-10 logit tasks, `wordnet-nouns`). A restructuring of the package keeps every
fingerprint; a change of a method changes the rows of that method only. This is a check, not a test.
"""
from __future__ import annotations
import argparse, hashlib, sys, warnings
from pathlib import Path

import numpy as np
import pandas as pd

TASKS = ('synthetic', 'wordnet-sample', 'sun397-val-clip-vitb32-1shot', 'stanford-cars-val-clip-vitb32-1shot',
         'cifar10-clip', 'cifar10-siglip', 'cifar10-siglip2', 'cifar10-biomedclip', 'wordnet-nouns')
BATCHES = (('b64', 64, (2, 10)), ('b1000', 1000, (5, 25)))


def digest(a)->str:
    "SHA-256 (16 hex digits) of an array's values: float64 for floats, int64 for integers and booleans."
    if hasattr(a, 'toarray'): a = a.toarray()                      # a sparse plan
    a = np.asarray(getattr(a, 'detach', lambda: a)().cpu() if hasattr(a, 'cpu') else a)
    a = np.ascontiguousarray(a, dtype=np.float64 if a.dtype.kind == 'f' else np.int64)
    return hashlib.sha256(a.tobytes() + str(a.shape).encode()).hexdigest()[:16]


def calls(task, g):
    "(name, thunk) pairs: every method of the package on one batch; a thunk returns labels, or (labels, plan)."
    X, Y, L, nu = task.X, task.Y, task.zero_shot_logits(), task.prior
    emb = (X, Y, None) if X is not None else g.method.geotter_inputs(None, None, L)
    Xg, Yg, Lg = emb
    out = [(f'run_method:{m}:given', lambda m=m: g.studies.experiments.run_method(m, task, nu)) for m in g.studies.experiments.METHODS]
    out += [(f'run_method:{m}:unknown', lambda m=m: g.studies.experiments.run_method(m, task, None))
            for m in ('pm', 'fpm', 'otter', 'sinkhorn', 'geotter', 'multi-geotter')]

    def res(r): return r.labels, r.plan
    out += [
        ('geotter:given', lambda: res(g.geotter(Xg, Yg, nu, logits=Lg))),
        ('geotter:unknown', lambda: res(g.geotter(Xg, Yg, logits=Lg))),
        ('geotter:uniform', lambda: res(g.geotter(Xg, Yg, 'uniform', logits=Lg))),
        ('geotter:sinkhorn', lambda: res(g.geotter(Xg, Yg, nu, logits=Lg, solver='sinkhorn'))),
        ('geotter:unbalanced', lambda: res(g.geotter(Xg, Yg, nu, logits=Lg, solver='unbalanced', rho=0.1))),
        ('geotter:project', lambda: res(g.geotter(Xg, Yg, nu, logits=Lg, preserve_prior='project'))),
        ('geotter:cost', lambda: res(g.geotter(Xg, Yg, nu, logits=Lg, preserve_prior='cost'))),
        ('geotter:steps2', lambda: res(g.geotter(Xg, Yg, nu, logits=Lg, steps=2))),
        ('geotter:auto', lambda: res(g.geotter(Xg, Yg, nu, logits=Lg, beta='auto', alpha='auto'))),
        ('geotter:reference', lambda: res(g.geotter(Xg, Yg, nu, logits=Lg, **g.options.REFERENCE_CODE))),
        ('geotter:refine', lambda: res(g.geotter(Xg, Yg, nu, logits=Lg, refine=1.0))),
        ('geotter:chunked', lambda: res(g.geotter(Xg, Yg, nu, logits=Lg, backend='chunked'))),
        ('geotter:chunked-unknown', lambda: res(g.geotter(Xg, Yg, logits=Lg, backend='chunked'))),
        ('otter:given', lambda: g.otter(L, nu)),
        ('otter:unknown', lambda: g.otter(L, None)),
        ('otter:sinkhorn', lambda: g.otter(L, nu, solver='sinkhorn')),
        ('emd:uniform-target', lambda: g.emd(np.full(len(L), 1 / len(L)), nu, -np.asarray(L, dtype=np.float64))),
        ('pm', lambda: g.prior_matching(L, nu)),
        ('fpm', lambda: g.fenchel_prior_matching(L, nu)),
        ('estimate_label_ratio', lambda: g.estimate_label_ratio(L).target),
        ('em_prior', lambda: g.em_prior(g.core.softmax(L))),
        ('transclip_zs', lambda: g.transclip_zs(Xg, Yg, logits=L)),
        ('zlap', lambda: g.zlap(Xg, Yg)),
        ('stata', lambda: g.stata(Xg, Yg, logits=L)),
        ('moon', lambda: g.moon(Xg, Yg, logits=L)),
        ('moon:unit', lambda: g.moon(Xg, Yg, logits=L, anchor='unit')),
        ('tda', lambda: g.tda(Xg, Yg, logits=L)),
        ('stream_tda', lambda: np.concatenate([np.asarray(m.partial_fit_logits(Xg[s:s + 16], L[s:s + 16]))
                                               for m in [g.peers.StreamingTDA(Yg)] for s in range(0, len(L), 16)])),
        ('label_free_predict', lambda: g.label_free_predict(Xg, Yg, logits=L)),
        ('stream_predict:em', lambda: g.streaming.stream_predict(Xg, Yg, 'em', batch_size=max(8, len(L) // 4), logits=Lg)[0]),
        ('stream_predict:given', lambda: g.streaming.stream_predict(Xg, Yg, nu, batch_size=max(8, len(L) // 4), logits=Lg)[0]),
        ('posteriors:geotter-plan', lambda: g.studies.calibration.posteriors('geotter-plan', task, nu)),
        ('posteriors:otter-dual', lambda: g.studies.calibration.posteriors('otter-dual', task, nu)),
    ]
    return out


def fingerprints(names, arrays:dict|None)->list:
    "The rows of every call on every batch of every task that is here."
    import torch; torch.set_num_threads(1)
    import geotter as g
    import geotter.method, geotter.options, geotter.core, geotter.streaming, geotter.peers   # noqa: F401
    import geotter.studies.experiments, geotter.studies.calibration, geotter.studies.ratio   # noqa: F401
    from geotter.data import load_task
    rows = []
    for name in names:
        try: full = load_task(name, seed=0) if name == 'synthetic' else load_task(name)
        except (FileNotFoundError, ValueError) as e: print(f"skipping {name}: {e}", file=sys.stderr); continue
        y = np.asarray(full.labels)
        for b, (tag, B, keff) in enumerate(BATCHES):
            if len(y) < B: continue
            idx = g.studies.ratio.realistic_batch(y, B, keff, seed=np.random.default_rng([7, b]))
            task = full.subset(idx) if hasattr(full, 'subset') else _subset(full, idx)
            for call, thunk in calls(task, g):
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore')
                    try: out = thunk()
                    except Exception as e: rows.append(dict(task=name, batch=tag, call=call, labels='error', plan=type(e).__name__)); continue
                labels, plan = out if isinstance(out, tuple) else (None, out)
                if labels is None:
                    a = np.asarray(plan)
                    labels, plan = (a, None) if a.ndim == 1 and a.dtype.kind in 'iub' else (a.argmax(1) if a.ndim == 2 else None, a)
                rows.append(dict(task=name, batch=tag, call=call, labels=digest(labels) if labels is not None else '',
                                 plan=digest(plan) if plan is not None else ''))
                if arrays is not None:
                    key = f'{name}|{tag}|{call}'
                    if labels is not None: arrays[key + '|labels'] = np.asarray(labels)
                    if plan is not None: arrays[key + '|plan'] = np.asarray(plan.toarray() if hasattr(plan, 'toarray') else plan, dtype=np.float64)
            print(f"{name} {tag}: {len(rows)} rows", file=sys.stderr, flush=True)
    return rows


def _subset(task, idx):
    "The task restricted to rows `idx` (its class embeddings and names kept)."
    from dataclasses import replace
    pick = lambda a: None if a is None else a[idx]
    return replace(task, X=pick(task.X), logits=pick(task.logits), labels=np.asarray(task.labels)[idx])


def compare(old:str, new:str)->int:
    "Print the rows whose fingerprints differ (or that the new run lacks), and the calls only the new run has; the number that differ."
    a, b = (pd.read_csv(p, dtype=str).fillna('') for p in (old, new))
    both = set(a.task) & set(b.task)                               # the tasks run on both sides
    a, b = a[a.task.isin(both)], b[b.task.isin(both)]
    m = a.merge(b, on=['task', 'batch', 'call'], how='outer', suffixes=('_old', '_new'), indicator=True)
    added = m[m._merge == 'right_only']                            # a method or call added since: nothing to compare with
    bad = m[(m._merge == 'left_only') | ((m._merge == 'both') & ((m.labels_old != m.labels_new) | (m.plan_old != m.plan_new)))]
    print(f"{len(m)} rows, {len(bad)} differ, {len(added)} new")
    if len(bad): print(bad.to_string(index=False))
    if len(added): print('new calls:', ', '.join(sorted(set(added.call))))
    return len(bad)


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--out', help='CSV of fingerprints to write')
    p.add_argument('--arrays', help='.npz of the labels and plans themselves')
    p.add_argument('--tasks', nargs='*', default=TASKS)
    p.add_argument('--compare', nargs=2, metavar=('OLD', 'NEW'))
    a = p.parse_args()
    if a.compare: sys.exit(1 if compare(*a.compare) else 0)
    if not a.out: p.error('--out or --compare is needed')
    arrays = {} if a.arrays else None
    pd.DataFrame(fingerprints(a.tasks, arrays)).to_csv(a.out, index=False)
    if arrays is not None: np.savez_compressed(a.arrays, **arrays)
