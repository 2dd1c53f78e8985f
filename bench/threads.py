"""Tiny problems (the size of the notebooks' tests) on one intra-op thread against two, side by side.

    python bench/threads.py          # bench/results/threads.csv: median seconds per call on 1 and 2 threads, and their ratio

Why the notebooks' tests call `torch.set_num_threads(1)`: on problems this small, waking a second thread costs
more than the work it takes over. Each problem runs `REPEAT` times on 1 thread, then on 2, alternating in rounds so
that both see the same machine; the load average at the start and the end is recorded beside the timings.
Nothing here is a test.
"""
import os, time, warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from geotter import geotter, kmeans, knn_graph, otter, sinkhorn

OUT = Path(__file__).resolve().parent / 'results'
REPEAT, ROUNDS = 20, 3

def problems():
    "name -> call, on a 40 x 5 batch in 10 dimensions (the notebooks' test size)."
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(5, 10)); X = Y[rng.integers(5, size=40)] + 0.5 * rng.normal(size=(40, 10))
    L, prior = X @ Y.T, rng.dirichlet(np.ones(5))
    C = -torch.log_softmax(torch.tensor(L), 1)
    return {'otter (emd)': lambda: otter(L, prior), 'sinkhorn': lambda: sinkhorn(C, 'uniform', prior, reg=0.1),
            'kmeans (40 rows)': lambda: kmeans(X, 5), 'knn_graph (40 rows)': lambda: knn_graph(X, 5),
            'geotter': lambda: geotter(X, Y, prior, k=5)}

def median_time(f, threads:int)->float:
    torch.set_num_threads(threads)
    ts = []
    for _ in range(REPEAT):
        t0 = time.perf_counter(); f(); ts.append(time.perf_counter() - t0)
    return float(np.median(ts))

def main():
    warnings.simplefilter('ignore')
    load0, rows = os.getloadavg()[0], []
    for name, f in problems().items():
        f()                                                   # warm: compiled kernels, imports
        one, two = [], []
        for _ in range(ROUNDS): one.append(median_time(f, 1)); two.append(median_time(f, 2))
        rows.append(dict(problem=name, one_thread_s=min(one), two_threads_s=min(two), ratio_two_over_one=min(two) / min(one)))
        print(rows[-1], flush=True)
    f = pd.DataFrame(rows).assign(load_start=load0, load_end=os.getloadavg()[0], cores=os.cpu_count())
    f.to_csv(OUT / 'threads.csv', index=False, float_format='%.6g')
    print(f.round(4).to_markdown(index=False))

if __name__ == '__main__': main()
