"""Side-by-side measurements of geotter's geometry (k-NN search, k-means seeding, k-means on a sample).

    python bench/geometry.py knn       # exact engines (blocked torch vs faiss), HNSW and IVF vs exact, by n
    python bench/geometry.py knn --threads 1 --sizes 5000 10000   # the same on one thread (CPU time is steadier)
    python bench/geometry.py seeding   # k-means++ seeding: previous loop vs current vs scikit-learn
    python bench/geometry.py sample    # GeoTTER accuracy on wordnet-sample when k-means trains on a sample
    python bench/geometry.py sample --task wordnet-nouns   # the same on the 82,064 WordNet nouns (perf_geometry_sample_wordnet-nouns.csv)

Each writes bench/results/perf_geometry_<name>.csv. Every comparison runs its candidates one after the
other on the same inputs, in alternation, `--repeats` times; report ratios of the best times (the
machine is shared, so absolute seconds mean little). This is a benchmark, not a test.
"""
from __future__ import annotations
import argparse, os, sys, time

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from complexity import make_batch                               # the CLIP-like synthetic batch

from geotter.core import accuracy, cosine_cost, nll_cost, zero_shot_logits
from geotter.graph import knn_search, knn_recall, knn_graph, faiss_module
from geotter.cluster import kmeans, fuse_costs, _kmeans_pp
from geotter.options import PAPER_DEFAULTS
from geotter.pipeline import transport_and_smooth

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results')


def _save(df:pd.DataFrame, name:str)->pd.DataFrame:
    os.makedirs(OUT, exist_ok=True); df.to_csv(os.path.join(OUT, f'perf_geometry_{name}.csv'), index=False); return df


def clock(fn):
    "(wall seconds, CPU seconds of the process, result) of one call."
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0, out


def side_by_side(calls:dict, repeats:int)->dict:
    "Best wall and CPU seconds of each call, the calls alternating `repeats` times; and each one's last result."
    best = {name: [np.inf, np.inf, None] for name in calls}
    for _ in range(repeats):
        for name, fn in calls.items():
            w, c, out = clock(fn)
            b = best[name]; b[0], b[1], b[2] = min(b[0], w), min(b[1], c), out
    return best


# ---------------------------------------------------------------------------------------------------- k-NN
def bench_knn(sizes=(5_000, 10_000, 20_000), d:int=384, k:int=7, repeats:int=2, csv:str='knn')->pd.DataFrame:
    "Exact torch vs exact faiss (re-ranked) vs HNSW (ef 64) vs IVF (sized for recall 0.95) at growing n, with recall on 1,000 rows."
    rows = []
    for n in sizes:
        X = make_batch(n, 100, d)[0]
        calls = {'torch exact': lambda: knn_search(X, k, method='torch'),
                 'faiss exact': lambda: knn_search(X, k, method='faiss'),
                 'hnsw ef=64': lambda: knn_search(X, k, method='hnsw', min_recall=0),
                 'ivf (recall 0.95)': lambda: knn_search(X, k, method='ivf')}
        best = side_by_side(calls, repeats)
        exact = best['torch exact'][2].indices
        for name, (w, c, res) in best.items():
            rows.append(dict(n=n, d=d, k=k, method=name, seconds=w, cpu_seconds=c,
                             recall=knn_recall(X, res.indices, sample=1000), same_as_torch=bool((res.indices == exact).all()),
                             ratio_to_torch=w / best['torch exact'][0]))
            print(rows[-1], flush=True)
        _save(pd.DataFrame(rows), csv)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------- k-means++
def kmeans_pp_loop(X:torch.Tensor, K:int, rng:np.random.Generator)->torch.Tensor:
    "The seeding loop as it was before (distances by broadcasting (n, trials) blocks), kept for comparison."
    n, trials = X.shape[0], 2 + int(np.log(K))
    x2 = (X * X).sum(1)
    sq = lambda idx: (x2[:, None] - 2 * X @ X[idx].T + x2[idx][None]).clamp_min(0).T
    first = int(rng.integers(n))
    centres, d2 = [first], sq([first])[0]
    for _ in range(1, K):
        p = d2.double().cpu().numpy()
        cands = rng.choice(n, size=trials, p=p / p.sum())
        pots = torch.minimum(d2[None], sq(list(cands)))
        best = int(pots.sum(1).argmin())
        centres.append(int(cands[best])); d2 = pots[best]
    return X[centres].clone()


def bench_seeding(n:int=10_000, d:int=256, Ks=(50, 200), repeats:int=2)->pd.DataFrame:
    "k-means++ seeding alone (previous loop, current, scikit-learn's kmeans_plusplus) and scikit-learn's KMeans."
    from sklearn.cluster import kmeans_plusplus, KMeans
    X = make_batch(n, 100, d)[0]
    Xt = torch.as_tensor(X)
    rows = []
    for K in Ks:
        calls = {'previous loop': lambda: kmeans_pp_loop(Xt, K, np.random.default_rng(0)),
                 'current': lambda: _kmeans_pp(Xt, K, np.random.default_rng(0)),
                 'sklearn kmeans_plusplus': lambda: torch.as_tensor(kmeans_plusplus(X, K, random_state=0)[0]),
                 'sklearn KMeans n_init=1': lambda: torch.as_tensor(KMeans(K, n_init=1, max_iter=20, random_state=0).fit(X).cluster_centers_),
                 'kmeans (current, faiss Lloyd, 20 rounds)': lambda: torch.as_tensor(kmeans(X, K, init='k-means++')[0])}
        best = side_by_side(calls, repeats)
        same = bool(torch.equal(best['previous loop'][2], best['current'][2]))
        for name, (w, c, C) in best.items():
            rows.append(dict(n=n, d=d, K=K, method=name, seconds=w, cpu_seconds=c, ratio_to_previous=w / best['previous loop'][0],
                             same_seeds_as_previous=same if name == 'current' else None))
            print(rows[-1], flush=True)
        _save(pd.DataFrame(rows), 'seeding')
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------ k-means on a sample
def geotter_accuracy(task, partition, graph, prior, o=PAPER_DEFAULTS)->float:
    "GeoTTER (paper defaults, true prior) from a given k-means partition and k-NN graph."
    logits = zero_shot_logits(task.X, task.Y, o['temperature'])
    C, z = partition
    cost = fuse_costs(nll_cost(logits), cosine_cost(C, task.Y)[z], o['beta'])
    _, T, _ = transport_and_smooth(cost, prior, graph, alpha=o['alpha'], steps=o['steps'])
    return 100 * accuracy(task.labels, np.asarray(T.argmax(1)))


def bench_sample(task_name:str='wordnet-sample', per_cluster=(4, 8, 16, 32, 64, 128), seeds=range(5), csv:str='sample')->pd.DataFrame:
    "GeoTTER accuracy and k-means inertia when the centres are learnt from max_train = c * K rows (K = m)."
    from geotter.data import load_task
    task = load_task(task_name)
    X = task.X.astype(np.float64); K = task.Y.shape[0]
    graph = knn_graph(X, PAPER_DEFAULTS['k'], PAPER_DEFAULTS['include_self'])
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    rows = []
    for c in list(per_cluster) + [None]:
        size = None if c is None or c * K >= len(X) else c * K
        for s in seeds:
            w, cpu, (C, z) = clock(lambda: kmeans(X, K, seed=s, max_train=size))
            rows.append(dict(task=task_name, n=len(X), K=K, max_train=size or len(X), rows_per_cluster=(size or len(X)) / K,
                             seed=s, accuracy=geotter_accuracy(task, (C, z), graph, task.prior),
                             inertia=float(((Xn - C[z]) ** 2).sum()), seconds=w))
            print(rows[-1], flush=True)
        _save(pd.DataFrame(rows), csv)
    return pd.DataFrame(rows)


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('what', choices=('knn', 'seeding', 'sample'))
    p.add_argument('--repeats', type=int, default=2)
    p.add_argument('--threads', type=int, default=None, help='torch and faiss threads (default: theirs)')
    p.add_argument('--sizes', type=int, nargs='+', default=[5_000, 10_000, 20_000], help='batch sizes of the k-NN runs')
    p.add_argument('--task', default='wordnet-sample', help='sample: the task (wordnet-nouns: rows per cluster up to the default 50,000-row sample)')
    a = p.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
        if faiss_module() is not None: faiss_module().omp_set_num_threads(a.threads)
    if a.what == 'knn': bench_knn(sizes=a.sizes, repeats=a.repeats, csv='knn' if a.threads is None else f'knn_{a.threads}thread')
    elif a.what == 'seeding': bench_seeding(repeats=a.repeats)
    elif a.task == 'wordnet-sample': bench_sample()
    else: bench_sample(a.task, per_cluster=(4, 16, 64, 256, 1024, 2000), seeds=range(3), csv=f'sample_{a.task}')
