"""Solver measurements: the default entropic weight, exact OTTER against `ot.emd`, our Sinkhorn against POT's torch backend.

    python bench/solvers.py reg      # bench/results/perf_solvers_reg.csv: Sinkhorn convergence per reg on the shipped tasks
    python bench/solvers.py otter    # bench/results/perf_solvers_otter.csv: otter (dense, sparse) vs ot.emd, 50,000 x 1,000
    python bench/solvers.py pot      # bench/results/perf_solvers_pot.csv: sinkhorn / sinkhorn_unbalanced vs POT (torch)
    python bench/solvers.py shapes   # bench/results/perf_solvers_shapes.csv: emd vs ot.emd for n << m, n ~ m, n >> m and four priors
    python bench/solvers.py start    # bench/results/perf_solvers_start.csv: the exact solver from the auction's or the greedy start

Timings are measured side by side in one run, one thread, and reported as ratios; nothing here is a test.
"""
import sys, time, warnings
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
PRIORS = ('uniform', 'dirichlet', 'sparse', 'counts')

def shape_prior(name, m, labels, rng):
    "The class prior of one benchmark row: uniform, Dirichlet(1), sparse (70% of the classes at 0), or the batch's label counts."
    if name == 'uniform': return np.full(m, 1 / m)
    if name == 'dirichlet': return rng.dirichlet(np.ones(m))
    if name == 'sparse':
        p = rng.dirichlet(np.ones(m)) * (rng.random(m) < 0.3); p[rng.integers(m)] += 1e-3
        return p / p.sum()
    return class_prior(labels, m)

def bench_shapes(shapes=SHAPES, priors=PRIORS, repeats=3, seed=0):
    "emd and ot.emd on the same float64 cost -log softmax(100 cos), warm, interleaved; ratio = time of ot.emd / time of emd."
    import ot
    emd('uniform', 'uniform', np.random.default_rng(0).random((6, 3)))                     # compile (or load) the solver outside the timings
    rows = []
    for n, m in shapes:
        L, _, lab = clip_like(n, m, d=256, seed=seed)
        C, a = nll_cost(L), np.full(n, 1 / n)
        rng = np.random.default_rng(seed)
        for prior in priors:
            b = shape_prior(prior, m, lab, rng)
            t_emd, t_pot = [], []
            for _ in range(repeats):
                P, t = _timed(emd, 'uniform', b, C); t_emd.append(t)
                G, t = _timed(ot.emd, a, b, C, numItermax=10**9); t_pot.append(t)
            obj, ref = float((P * C).sum()), float((G * C).sum())
            rows.append(dict(n=n, m=m, prior=prior, zeros=int((b == 0).sum()), emd_s=min(t_emd), ot_emd_s=min(t_pot),
                             ratio=min(t_pot) / min(t_emd), rel_obj_diff=abs(obj - ref) / abs(ref),
                             marginal_err=float(np.abs(P.sum(0) - b).max() + np.abs(P.sum(1) - a).max())))
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows); OUT.mkdir(exist_ok=True); df.to_csv(OUT / 'perf_solvers_shapes.csv', index=False)
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

def bench_start(shapes=START_SHAPES, priors=PRIORS, seed=0):
    "`_emd_fast` from the auction's potentials and from v = 0 (greedy), interleaved; both plans certified optimal."
    from geotter.exact import _emd_fast, _orient, _auction_pays
    _emd_fast(np.random.default_rng(0).random((6, 3)), np.full(6, 1 / 6), np.full(3, 1 / 3))
    rows = []
    for n, m in shapes:
        L, _, lab = clip_like(n, m, d=256, seed=seed)
        C, a = nll_cost(L), np.full(n, 1 / n)
        for prior in priors:
            b = shape_prior(prior, m, lab, np.random.default_rng(seed))
            N, k = _orient(C, a, b)[0].shape
            t = {s: _best_ms(lambda: _emd_fast(C, a, b, start=s)) for s in ('auction', 'greedy')}
            assert all(_emd_fast(C, a, b, start=s) is not None for s in t)
            rows.append(dict(n=n, m=m, prior=prior, N=N, k=k, auction_ms=t['auction'], greedy_ms=t['greedy'],
                             auction_over_greedy=t['auction'] / t['greedy'], rule='auction' if _auction_pays(N, k) else 'greedy'))
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
