"""Solver measurements: the default entropic weight, exact OTTER against `ot.emd`, our Sinkhorn against POT's torch backend.

    python bench/solvers.py reg      # bench/results/perf_solvers_reg.csv: Sinkhorn convergence per reg on the shipped tasks
    python bench/solvers.py otter    # bench/results/perf_solvers_otter.csv: otter (dense, sparse) vs ot.emd, 50,000 x 1,000
    python bench/solvers.py pot      # bench/results/perf_solvers_pot.csv: sinkhorn / sinkhorn_unbalanced vs POT (torch)
    python bench/solvers.py shapes   # bench/results/perf_solvers_shapes.csv: emd vs ot.emd for n << m, n ~ m, n >> m, priors on
                                     #   all, some or few classes and label counts, Dirichlet priors at 2000 x 2000 and the
                                     #   few, sparse and counts priors at 64 x 1000 over seeds
    python bench/solvers.py crossover # bench/results/perf_solvers_crossover.csv: our solver and POT's on n x k, n >= k, where each is faster
    python bench/solvers.py start    # bench/results/perf_solvers_start.csv: the exact solver from each start (coordinate ascent, auction, greedy)

Timings are measured side by side in one run, one thread, and reported as ratios; nothing here is a test.
"""
import os, sys, time, warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from geotter.core import nll_cost, zero_shot_logits, predict, class_prior
from geotter.exact import emd
from geotter.entropic import sinkhorn, sinkhorn_unbalanced
from geotter.transport import otter

OUT = Path(__file__).resolve().parent / 'results'

def _timed(f, *a, **kw):
    t0 = time.perf_counter(); r = f(*a, **kw); return r, time.perf_counter() - t0

# ---------------------------------------------------------------- reg
def reg_tasks():
    "(task name, labels, OTTER cost, GeoTTER fused cost (temperature 0.1), prior) for the shipped tasks."
    from geotter.data import load_task, LOGIT_TASKS
    from geotter.synthetic import make_long_tail
    from geotter.method import prepare, geotter_inputs
    tasks = [load_task('wordnet-sample'), make_long_tail(seed=0)]
    for name in LOGIT_TASKS:
        try: tasks.append(load_task(name))
        except Exception as e: print(f"skipping {name}: {e}")
    for t in tasks:
        prior = t.prior
        C_otter = nll_cost(t.zero_shot_logits(0.01))
        X, Y, L = geotter_inputs(t.X, t.Y, t.logits)
        C_geo = prepare(X, Y, cost_temperature=0.1, logits=L).cost(prior).numpy()
        yield t.name, t.labels, C_otter, C_geo, prior

def bench_reg(regs=(0.01, 0.02, 0.05, 0.1, 0.2)):
    rows = []
    for name, y, C_otter, C_geo, prior in reg_tasks():
        for cost_name, C in (('otter', C_otter), ('geotter', C_geo)):
            lab_emd = predict(emd('uniform', prior, C))
            for reg in regs:
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter('always')
                    (P, lg), sec = _timed(sinkhorn, C, 'uniform', prior, reg, log=True)
                lab = predict(P)
                rows.append(dict(task=name, cost=cost_name, n=C.shape[0], m=C.shape[1], spread=float(np.ptp(C - C.min(1, keepdims=True))),
                                 reg=reg, converged=not any('did not converge' in str(x.message) for x in w),
                                 row_err=lg['err'], iters=lg['n_iter_total'], seconds=sec,
                                 agree_emd=float((lab == lab_emd).mean()), acc=float((lab == y).mean()), acc_emd=float((lab_emd == y).mean())))
                print(rows[-1], flush=True)
    df = pd.DataFrame(rows); OUT.mkdir(exist_ok=True); df.to_csv(OUT / 'perf_solvers_reg.csv', index=False)
    return df

# ---------------------------------------------------------------- otter vs ot.emd
def clip_like(n=50_000, m=1_000, d=512, seed=0, signal=0.15):
    "Logits 100 cos(x, y): x = signal * y_label + isotropic noise, normalized; label ratio from Dirichlet(2) proportions."
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(m, d)); Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    lab = rng.choice(m, n, p=rng.dirichlet(np.full(m, 2.0)))
    X = signal * Y[lab] + rng.normal(size=(n, d)) / np.sqrt(d)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return 100 * (X @ Y.T), class_prior(lab, m), lab

def bench_otter(sizes=((50_000, 1_000),), seeds=(0, 1, 2), repeats=3):
    import ot
    rows = []
    for (n, m) in sizes:
        for seed in seeds:
            L, prior, lab = clip_like(n, m, seed=seed)
            otter(L[:500], prior * 0 + 1 / m)                  # compile the solver outside the timings
            C = nll_cost(L); a = np.full(n, 1 / n)
            G, t_pot = _timed(ot.emd, a, prior, C, numItermax=10**9)
            ref = float((G * C).sum()); del G
            for variant, kw in (('dense', {}), ('sparse', dict(sparse=True))):
                ts = []
                for _ in range(repeats):
                    P, t = _timed(otter, L, prior, **kw); ts.append(t)
                obj = float(P.multiply(C).sum()) if kw else float((P * C).sum())
                nnz = P.nnz if kw else int(np.count_nonzero(P))
                rows.append(dict(n=n, m=m, seed=seed, variant=variant, otter_s=min(ts), ot_emd_s=t_pot, speedup=t_pot / min(ts),
                                 rel_obj_diff=abs(obj - ref) / abs(ref), nnz=nnz, max_nnz=n + m - 1))
                print(rows[-1], flush=True); del P
    df = pd.DataFrame(rows); OUT.mkdir(exist_ok=True); df.to_csv(OUT / 'perf_solvers_otter.csv', index=False)
    return df

# ---------------------------------------------------------------- emd vs ot.emd in every batch shape
SHAPES = ((64, 1000), (50, 5000), (200, 5000), (500, 2000), (1000, 1000), (2000, 2000), (1000, 200), (5000, 1000))
PRIORS = ('uniform', 'dirichlet', 'sparse', 'few', 'counts')
# (n, m, prior, seed, d): more seeds where the solver's margin is smallest, and the 512-d features of CLIP ViT-B
EXTRA = tuple((2000, 2000, 'dirichlet', s, d) for d in (256, 512) for s in range(1, 5)) + \
        ((2000, 2000, 'dirichlet-0.3', 0, 512), (2000, 2000, 'dirichlet-3', 0, 512), (3000, 3000, 'dirichlet', 0, 512)) + \
        tuple((64, 1000, 'few', s, d) for d in (256, 512) for s in range(1, 5)) + \
        tuple((64, 1000, p, s, 256) for p in ('sparse', 'counts') for s in range(1, 5))

def shape_prior(name, m, labels, rng):
    """The class prior of one benchmark row: on all classes (uniform; Dirichlet(1), or 'dirichlet-c' for Dirichlet(c)),
    on some (sparse: 70% of the classes at 0), on a few (few: Dirichlet(1) over 5 classes), or the batch's label counts."""
    if name == 'uniform': return np.full(m, 1 / m)
    if name.startswith('dirichlet'): return rng.dirichlet(np.full(m, float(name.split('-')[1]) if '-' in name else 1.0))
    if name == 'sparse':
        p = rng.dirichlet(np.ones(m)) * (rng.random(m) < 0.3); p[rng.integers(m)] += 1e-3
        return p / p.sum()
    if name == 'few':
        p = np.zeros(m); p[rng.choice(m, 5, replace=False)] = rng.dirichlet(np.ones(5))
        return p
    return class_prior(labels, m)

def _side_by_side(fs, budget=1.0, least=3, most=200):
    "Best wall and CPU seconds of each thunk in `fs`, called in turn (A B A B ...) at least `least` times, then until `budget` s."
    wall, cpu, t0, r = [[] for _ in fs], [[] for _ in fs], time.perf_counter(), 0
    while r < least or (time.perf_counter() - t0 < budget and r < most):
        for i, f in enumerate(fs):
            w, c = time.perf_counter(), time.process_time(); out = f()
            cpu[i].append(time.process_time() - c); wall[i].append(time.perf_counter() - w)
        r += 1
    return [min(w) for w in wall], [min(c) for c in cpu], out

def bench_shapes(shapes=SHAPES, priors=PRIORS, extra=EXTRA, seed=0, d=256):
    """emd and ot.emd on the same float64 cost -log softmax(100 cos), warm, interleaved; ratio = time of ot.emd / time of emd
    (wall and CPU seconds, the best of at least three calls each); `solver`: the solver emd's 'auto' took ('fast' or 'pot')."""
    import ot
    emd('uniform', 'uniform', np.random.default_rng(0).random((6, 3)))                     # compile (or load) the solver outside the timings
    rows, load0 = [], os.getloadavg()[0]
    runs = [(n, m, p, seed, d) for n, m in shapes for p in priors] + list(extra)
    for n, m, prior, sd, dd in runs:
        L, _, lab = clip_like(n, m, d=dd, seed=sd)
        C, a = nll_cost(L), np.full(n, 1 / n)
        b = shape_prior(prior, m, lab, np.random.default_rng([sd, n, m]))
        (t_emd, t_pot), (c_emd, c_pot), _ = _side_by_side([lambda: emd('uniform', b, C), lambda: ot.emd(a, b, C, numItermax=10**9)])
        (P, lg), G = emd('uniform', b, C, log=True), ot.emd(a, b, C, numItermax=10**9)
        obj, ref = float((P * C).sum()), float((G * C).sum())
        rows.append(dict(n=n, m=m, prior=prior, seed=sd, d=dd, zeros=int((b == 0).sum()), solver=lg['solver'], emd_s=t_emd, ot_emd_s=t_pot,
                         ratio=t_pot / t_emd, emd_cpu_s=c_emd, ot_emd_cpu_s=c_pot, cpu_ratio=c_pot / c_emd,
                         rel_obj_diff=abs(obj - ref) / abs(ref),
                         marginal_err=float(np.abs(P.sum(0) - b).max() + np.abs(P.sum(1) - a).max())))
        print(rows[-1], flush=True)
    df = pd.DataFrame(rows).assign(load_start=load0, load_end=os.getloadavg()[0])
    OUT.mkdir(exist_ok=True); df.to_csv(OUT / 'perf_solvers_shapes.csv', index=False)
    return df

# ---------------------------------------------------------------- where POT's network simplex is faster
CROSS = tuple((n, k) for k in (50, 100, 200, 500, 1000, 2000) for n in (k, int(1.25 * k), int(1.5 * k), 2 * k, 3 * k, 5 * k) if n * k <= 10_000_000)
# the other orientation: k samples (the nodes, capacity N/k each) and N > k classes of a Dirichlet prior (items of unequal mass)
CROSS_CLASSES = tuple((k, N) for k in (64, 200, 500, 1000) for N in (int(1.25 * k), 2 * k, 3 * k, 5 * k))

def bench_crossover(shapes=CROSS, priors=('dirichlet', 'dirichlet-0.3', 'uniform'), classes=CROSS_CLASSES, d=512, seed=0):
    """`_emd_fast` and POT's network simplex (`_emd_pot`) on n x k costs with n >= k (k classes as nodes), and on k x N
    costs (k samples as nodes, N classes as items), CPU seconds, best of three interleaved; ratio = POT / ours;
    `fractional`: share of nodes whose capacity is not whole; `items`: which side the items are."""
    from geotter.exact import _emd_fast, _emd_pot, _orient
    _emd_fast(np.random.default_rng(0).random((6, 3)), np.full(6, 1 / 6), np.full(3, 1 / 3))
    rows = []
    def measure(C, a, b, **row):
        _, (c_fast, c_pot), _ = _side_by_side([lambda: _emd_fast(C, a, b), lambda: _emd_pot(C, a, b, 10**9)], budget=0.0)
        X, _, _, x, cap, _ = _orient(C, a, b)
        rows.append(dict(row, N=X.shape[0], nodes=X.shape[1], fractional=float((np.abs(cap - np.round(cap)) > 1e-9).mean()),
                         fast_cpu_s=c_fast, pot_cpu_s=c_pot, ratio=c_pot / c_fast))
        print(rows[-1], flush=True)
    for n, k in shapes:
        L, _, lab = clip_like(n, k, d=d, seed=seed)
        C, a = nll_cost(L), np.full(n, 1 / n)
        for prior in priors:
            measure(C, a, shape_prior(prior, k, lab, np.random.default_rng([seed, n, k])), n=n, k=k, prior=prior, items='samples')
    for k, N in classes:
        L, _, lab = clip_like(k, N, d=d, seed=seed)
        measure(nll_cost(L), np.full(k, 1 / k), np.random.default_rng([seed, k, N]).dirichlet(np.ones(N)), n=k, k=N, prior='dirichlet', items='classes')
    df = pd.DataFrame(rows); OUT.mkdir(exist_ok=True); df.to_csv(OUT / 'perf_solvers_crossover.csv', index=False)
    return df

# ---------------------------------------------------------------- the exact solver's start: auction or greedy
START_SHAPES = ((32, 10), (64, 10), (64, 100), (100, 100), (200, 100), (300, 100), (200, 200), (64, 1000), (500, 100),
                (1000, 10), (1000, 50), (2000, 10), (50, 5000), (200, 5000), (300, 1000), (500, 500), (1000, 200), (1000, 1000))

def _best_ms(f, budget=0.3, most=200):
    "Fastest of repeated calls of f, in ms: at least 5, then until `budget` seconds or `most` calls."
    ts, t0 = [], time.perf_counter()
    while len(ts) < 5 or (time.perf_counter() - t0 < budget and len(ts) < most):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return 1e3 * min(ts)

START_EXTRA = tuple((n, k, p) for k in (200, 500, 1000) for n in (k, int(1.25 * k), 2 * k, 5 * k)
                    for p in ('dirichlet', 'dirichlet-0.3', 'uniform'))

def bench_start(shapes=START_SHAPES, priors=PRIORS, extra=START_EXTRA, seed=0):
    """`_emd_fast` from each start (coordinate ascent, auction, v = 0), interleaved; every plan certified optimal.
    `misplaced`: the share of the mass that the items' own best nodes put above the capacities (v = 0's excess)."""
    from geotter.exact import _emd_fast, _orient, _start_rule
    _emd_fast(np.random.default_rng(0).random((6, 3)), np.full(6, 1 / 6), np.full(3, 1 / 3))
    starts, rows = ('coordinate', 'auction', 'greedy'), []
    for n, m, prior in [(n, m, p) for n, m in shapes for p in priors] + list(extra):
        L, _, lab = clip_like(n, m, d=256, seed=seed)
        C, a = nll_cost(L), np.full(n, 1 / n)
        b = shape_prior(prior, m, lab, np.random.default_rng(seed))
        X, _, _, x, cap, _ = _orient(C, a, b); N, k = X.shape
        misplaced = float(np.clip(np.bincount(X.argmin(1), weights=x, minlength=k) - cap, 0, None).sum() / x.sum())
        t = {s: _best_ms(lambda: _emd_fast(C, a, b, start=s)) for s in starts}
        assert all(_emd_fast(C, a, b, start=s) is not None for s in t)
        rows.append(dict(n=n, m=m, prior=prior, N=N, k=k, misplaced=misplaced, **{f'{s}_ms': t[s] for s in starts},
                         best=min(t, key=t.get), rule=_start_rule(X, 1.0, x, cap)))
        rows[-1]['rule_over_best'] = t[rows[-1]['rule']] / t[rows[-1]['best']]
        print(rows[-1], flush=True)
    df = pd.DataFrame(rows); OUT.mkdir(exist_ok=True); df.to_csv(OUT / 'perf_solvers_start.csv', index=False)
    return df

# ---------------------------------------------------------------- ours vs POT's torch backend
def bench_pot(sizes=((2_000, 10), (10_000, 100)), reg=0.1, rho=0.1, repeats=1):
    "sinkhorn vs ot.sinkhorn(method='sinkhorn_log') and sinkhorn_unbalanced vs ot.unbalanced, torch float64 tensors, same tolerance."
    import ot
    rows = []
    for n, m in sizes:
        L, prior, _ = clip_like(n, m, d=128, seed=1)
        C = torch.tensor(nll_cost(L)); a = torch.full((n,), 1 / n, dtype=torch.float64); b = torch.tensor(prior)
        b = (b + 1e-3) / (b + 1e-3).sum()                  # POT's log-domain solver needs b > 0
        runs = {
            ('balanced', 'geotter'): lambda: sinkhorn(C, a, b, reg, dtype=torch.float64, tol=1e-6),
            ('balanced', 'geotter-f32'): lambda: sinkhorn(C, a, b, reg, tol=1e-6),
            ('balanced', 'pot'): lambda: ot.sinkhorn(a, b, C, reg, method='sinkhorn_log', stopThr=1e-6, numItermax=100_000),
            ('unbalanced', 'geotter'): lambda: sinkhorn_unbalanced(C, a, b, reg, rho, dtype=torch.float64, tol=1e-6),
            ('unbalanced', 'pot'): lambda: ot.unbalanced.sinkhorn_unbalanced(a, b, C, reg, (float('inf'), rho), reg_type='entropy',
                                                                             method='sinkhorn_stabilized', stopThr=1e-6, numItermax=100_000),
        }
        plans = {}
        for (kind, who), f in runs.items():
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter('always')
                ts = []
                for _ in range(repeats): P, t = _timed(f); ts.append(t)
            P = P.double(); plans[kind, who] = P
            rows.append(dict(n=n, m=m, problem=kind, solver=who, seconds=min(ts), warned=len(w) > 0,
                             row_err=float((P.sum(1) - a).abs().sum()), col_err=float((P.sum(0) - b).abs().sum())))
            print(rows[-1], flush=True)
        for r in rows[-len(runs):]:
            r['max_diff_vs_pot'] = float((plans[r['problem'], r['solver']] - plans[r['problem'], 'pot']).abs().max())
    df = pd.DataFrame(rows); OUT.mkdir(exist_ok=True); df.to_csv(OUT / 'perf_solvers_pot.csv', index=False)
    return df

if __name__ == '__main__':
    torch.set_num_threads(1)
    what = sys.argv[1] if len(sys.argv) > 1 else 'all'
    if what in ('reg', 'all'): print(bench_reg().to_string())
    if what in ('otter', 'all'): print(bench_otter().to_string())
    if what in ('pot', 'all'): print(bench_pot().to_string())
    if what in ('shapes', 'all'): print(bench_shapes().to_string())
    if what in ('start', 'all'): print(bench_start().to_string())
    if what in ('crossover', 'all'): print(bench_crossover().to_string())
