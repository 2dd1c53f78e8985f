"""Time and peak memory of the OT solvers, OTTER and GeoTTER against the batch size N (paper Sec. 4.4).

Reproduces the paper's complexity table for N in {128, ..., 75,000} and m in {10, 100, 1000} classes, and
extends it to N = 1,000,000 with the chunked path (`geotter.chunked`):

    python bench/complexity.py --device cpu --max-n 75000 --out bench/results/complexity_cpu.csv
    python bench/complexity.py --device cpu --m 1000 --min-n 100000 --max-n 1000000 \
        --solvers emd_pot emd_fast emd_chunked geotter_chunked --out bench/results/complexity_cpu_large.csv
    python bench/complexity.py --device cuda --out bench/results/complexity_cuda.csv

Rows: `emd_pot` (POT's network simplex `ot.emd`), `emd_fast` (geotter's exact solver), `sinkhorn`
(geotter's log-domain torch Sinkhorn, reg=0.01, 100 iterations, float32: the paper's SK setting),
`otter` (logits -> cost -> exact plan -> labels), `geotter` (embeddings -> labels), `emd_chunked` (the
exact solver of `geotter.chunked` on the same cost, streamed from the embeddings in row blocks: no n x m
matrix; block-wise float32 logits round slightly differently, so objectives agree to ~1e-10) and `geotter_chunked` (embeddings -> labels at scale: k-means on 50,000 sampled rows, IVF k-NN,
chunked exact OT, sparse smoothing; one row per step). The exact solvers get the same cost in the same run,
so their ratios are like-for-like and their objectives must agree. The dense solvers run while the n x m
float64 cost takes at most `--dense-max-gb` (default 1.6 GB, N = 200,000 at m = 1000). Wall time and the process's CPU time are both recorded
(CPU time leaves out the time other processes hold the cores, so it is the fairer measure for the single-threaded exact solvers; torch uses
several threads, so its CPU time can exceed wall time). This is a benchmark, not a test: nothing is asserted.
"""
from __future__ import annotations
import argparse, os, threading, time, warnings

import numpy as np
import pandas as pd
import torch

from geotter.core import class_prior, l2_normalize, nll_cost, predict, zero_shot_logits
from geotter.chunked import sparse_ot
from geotter.cluster import kmeans
from geotter.graph import knn_indices
from geotter.method import geotter
from geotter.pipeline import geotter_chunked
from geotter.transport import emd, otter, sinkhorn

NS = [128, 256, 512, 1000, 2000, 4000, 8000, 12000, 16000, 22000, 32000, 50000, 75000,
      100_000, 200_000, 500_000, 1_000_000]
MS = [10, 100, 1000]
SOLVERS = ['emd_pot', 'emd_fast', 'sinkhorn', 'otter', 'geotter', 'emd_chunked', 'geotter_chunked']
DENSE = {'emd_pot', 'emd_fast', 'sinkhorn', 'otter', 'geotter'}      # need the n x m cost (or more) in memory


def make_batch(n:int, m:int, d:int=512, seed:int=0):
    "CLIP-like batch: class embeddings around a few centres, samples near their class, long-tailed labels."
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(5, d))[rng.integers(0, 5, m)] + rng.normal(size=(m, d))
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    w = 1 / np.arange(1, m + 1) ** 0.5
    labels = rng.choice(m, n, p=w / w.sum())
    X = 0.25 * Y[labels] + rng.normal(size=(n, d)) / np.sqrt(d)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X.astype(np.float32), Y.astype(np.float32), labels, class_prior(labels, m)



def make_batch_rows(n:int, m:int, d:int=512, seed:int=0, noise:float=1.0, chunk:int=100_000):
    """`make_batch`'s classes and long-tailed labels, samples 0.25 y_label + noise * N(0, I/d) (noise=1: make_batch's
    distribution), generated block by block straight into float32: no n x d float64 array at N = 1,000,000."""
    Y, _, _, _ = make_batch(m, m, d, seed)                    # the class embeddings of make_batch
    w = 1 / np.arange(1, m + 1) ** 0.5
    X, labels = np.empty((n, d), np.float32), np.empty(n, np.int64)
    for s in range(0, n, chunk):
        rng = np.random.default_rng([seed, s])
        lab = rng.choice(m, min(chunk, n - s), p=w / w.sum())
        B = 0.25 * Y[lab].astype(np.float64) + noise * rng.normal(size=(len(lab), d)) / np.sqrt(d)
        X[s:s + len(lab)] = B / np.linalg.norm(B, axis=1, keepdims=True); labels[s:s + len(lab)] = lab
    return X, Y, labels, class_prior(labels, m)

def _rss_mb()->float:
    with open('/proc/self/statm') as f: return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2**20


class PeakMemory:
    "Peak memory above the level at entry: RSS sampled every millisecond on CPU, the CUDA allocator's peak on GPU."
    def __init__(self, device:str): self.device, self.peak = device, 0.0
    def __enter__(self):
        if self.device == 'cuda':
            torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats(); self.base = torch.cuda.memory_allocated()
            return self
        self.base, self.stop = _rss_mb(), False
        def sample():
            while not self.stop: self.peak = max(self.peak, _rss_mb() - self.base); time.sleep(0.001)
        self.thread = threading.Thread(target=sample, daemon=True); self.thread.start()
        return self
    def __exit__(self, *exc):
        if self.device == 'cuda':
            torch.cuda.synchronize(); self.peak = (torch.cuda.max_memory_allocated() - self.base) / 2**20
        else:
            self.stop = True; self.thread.join(); self.peak = max(self.peak, _rss_mb() - self.base)


def timed(fn, device:str):
    "(wall seconds, CPU seconds of the process, peak MB, result) of one call of `fn`."
    with PeakMemory(device) as mem:
        t0, c0 = time.perf_counter(), time.process_time(); out = fn()
        if device == 'cuda': torch.cuda.synchronize()
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
    return dt, dc, mem.peak, out


class OtterCost:
    "OTTER's cost -log softmax(cos(x, y) / 0.01) of a block of rows, in float64, as the dense solvers get it."
    def __init__(self, Y): self.Y = Y
    def __call__(self, block, start, rows):
        B = torch.as_tensor(block, device=self.Y.device)
        if rows is not None: B = B[torch.as_tensor(rows, device=B.device)]
        return -torch.log_softmax(zero_shot_logits(B, self.Y, 0.01).double(), dim=1)


def chunked_geotter_steps(X, Y, prior, device:str, sample:int=50_000, k:int=7, nprobe:int=2, seed:int=0)->dict:
    "GeoTTER at scale, step by step: k-means on a row sample, IVF k-NN, chunked OT + smoothing; {step: call}."
    m, state = Y.shape[0], {}
    sub = np.sort(np.random.default_rng(seed).choice(len(X), min(sample, len(X)), replace=False))
    Yd = torch.as_tensor(Y, device=device)
    def km(): state['cent'] = kmeans(X[sub], m, seed=seed, max_iter=20, init='random', method='faiss')[0]; return 0
    def knn(): state['nbrs'] = knn_indices(X, k, method='ivf', nprobe=nprobe); return 0
    def ot(): return geotter_chunked(X, Yd, prior, neighbours=state['nbrs'], centres=state['cent']).labels
    return {'geotter_chunked:kmeans': km, 'geotter_chunked:knn': knn, 'geotter_chunked:ot+smoothing': ot}


def solver_calls(X, Y, prior, device:str, dense:bool=True):
    "The measured calls, each a zero-argument function; inputs are prepared outside the timing."
    Yt = torch.as_tensor(Y, device=device)
    calls = dict(emd_chunked=lambda: sparse_ot(X, OtterCost(Yt), prior))
    if X.shape[0] > Y.shape[0]: calls.update(chunked_geotter_steps(X, Y, prior, device))   # k-means needs n > m
    if not dense: return calls, None
    logits = torch.as_tensor(zero_shot_logits(X, Y, 0.01), device=device)
    C_np = nll_cost(logits.double().cpu().numpy())        # float64 cost, as both exact solvers use it
    C_t = torch.as_tensor(C_np, dtype=torch.float32, device=device)
    Xt = torch.as_tensor(X, device=device)
    def sk():
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')               # 100 iterations do not converge; that is the setting
            return sinkhorn(C_t, 'uniform', prior, 0.01, max_iter=100, eps_scaling=None, log=True)[1]['err']
    calls.update(emd_pot=lambda: emd('uniform', prior, C_np, solver='pot'),
                 emd_fast=lambda: emd('uniform', prior, C_np, solver='fast'),
                 sinkhorn=sk,
                 otter=lambda: predict(otter(logits, prior)))
    if X.shape[0] > Y.shape[0]:                           # k-means with K = m needs n > m
        calls['geotter'] = lambda: geotter(Xt, Yt, prior).labels
    return calls, C_np


def _wanted(name:str, solvers)->bool:
    return name in solvers or name.split(':')[0] in solvers


def run(device:str='cpu', max_n:int=75_000, ms=MS, ns=NS, solvers=SOLVERS, budget:float=150.0, out:str|None=None,
        verbose:bool=True, min_n:int=0, dense_max_gb:float=1.6)->pd.DataFrame:
    "Measure every solver on every (N, m); a solver that took more than `budget` s is skipped for larger N."
    X, Y, _, prior = make_batch(3000, 10)                 # warm-up: numba compilation / cache loading, torch init
    for name, f in solver_calls(X, Y, prior, device)[0].items():
        if _wanted(name, solvers): f()
    rows = []
    for m in ms:
        slow = set()
        for n in [n for n in ns if min_n <= n <= max_n]:
            X, Y, labels, prior = make_batch(n, m) if n <= 75_000 else make_batch_rows(n, m)
            dense = n * m * 8 <= dense_max_gb * 2**30 and bool(DENSE & set(solvers) - slow)
            calls, C = solver_calls(X, Y, prior, device, dense)
            for name, call in calls.items():
                if not _wanted(name, solvers) or name.split(':')[0] in slow: continue
                dt, dc, mb, res = timed(call, device)
                row = dict(device=device, m=m, n=n, solver=name, seconds=dt, cpu_seconds=dc, peak_mb=mb)
                if name.startswith('emd') and name != 'emd_chunked': row['objective'] = float((res * C).sum())
                if name == 'emd_chunked': row.update(objective=res.objective, gap=res.gap, **res.stats)
                if name == 'sinkhorn': row['marginal_err'] = float(res)
                rows.append(row)
                if verbose: print(f"m={m:5d} n={n:7d} {name:28s} {dt:9.3f} s (cpu {dc:8.3f} s) {mb:9.1f} MB", flush=True)
                if dt > budget: slow.add(name.split(':')[0])
            del calls, C
            df = _with_totals(pd.DataFrame(rows))
            if out: os.makedirs(os.path.dirname(out) or '.', exist_ok=True); df.to_csv(out, index=False)
    return _with_totals(pd.DataFrame(rows))


def _with_totals(df:pd.DataFrame)->pd.DataFrame:
    "Add a 'geotter_chunked' row per (m, n): the sum of its steps' times, the largest of their peaks."
    if df.empty or not df.solver.str.startswith('geotter_chunked:').any(): return df
    steps = df[df.solver.str.startswith('geotter_chunked:')]
    tot = steps.groupby(['device', 'm', 'n'], as_index=False).agg(seconds=('seconds', 'sum'), cpu_seconds=('cpu_seconds', 'sum'),
                                                                  peak_mb=('peak_mb', 'max'))
    return pd.concat([df[df.solver != 'geotter_chunked'], tot.assign(solver='geotter_chunked')], ignore_index=True)


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--device', default='cpu', choices=['cpu', 'cuda'])
    p.add_argument('--max-n', type=int, default=75_000)
    p.add_argument('--min-n', type=int, default=0)
    p.add_argument('--dense-max-gb', type=float, default=1.6, help='dense solvers only while the n x m float64 cost fits in this')
    p.add_argument('--m', type=int, nargs='+', default=MS)
    p.add_argument('--solvers', nargs='+', default=SOLVERS, choices=SOLVERS)
    p.add_argument('--budget', type=float, default=150.0, help='skip a solver for larger N once a call took longer (s)')
    p.add_argument('--out', default='bench/results/complexity_cpu.csv')
    a = p.parse_args()
    if a.device == 'cuda' and not torch.cuda.is_available(): raise SystemExit('--device cuda but no CUDA device is available')
    run(a.device, a.max_n, a.m, NS, a.solvers, a.budget, a.out, min_n=a.min_n, dense_max_gb=a.dense_max_gb)
