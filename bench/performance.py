"""ImageNet-scale performance of geotter's k-NN search, k-means and full pipeline against the standard tools, and the million-sample chunked path.

Three measurements, each writing one CSV under bench/results/ (read by bench/performance.ipynb):

    python bench/performance.py knn       # exact/approximate k-NN: time, peak memory, recall vs scikit-learn
    python bench/performance.py kmeans    # k-means seeding/rounds/restarts: GeoTTER accuracy on the real tasks
    python bench/performance.py end2end   # geotter(...) vs the public reference pipeline at 50k x 1000 x 512
    python bench/performance.py million   # geotter_chunked at 1,000,000 x 1000 x 512: time and peak memory per step
    python bench/performance.py dask      # geotter_chunked on a 2-worker dask.distributed LocalCluster, 200k rows
    python bench/performance.py scale --no-faiss           # geotter(X, Y, prior) at 1,000,000 x 1000 x 512, default install:
                                                           #   time and peak memory per stage, k-NN recall on rows not used to tune it
    python bench/performance.py scale --no-faiss --unknown # the same with the label ratio unknown, geotter(X, Y)
    python bench/performance.py knn-scale --no-faiss       # the k-NN search alone from 100,000 to 1,000,000 rows: the slope
    python bench/performance.py graph-check --no-faiss     # GeoTTER accuracy with the IVF graph vs the exact graph, 100k rows

Every comparison is made in one run on the same inputs; report ratios, not absolute seconds (the machine is
shared). `--no-faiss` hides faiss from geotter (as `pip install -e .` without the `fast` extra leaves it); the
`scale`, `knn-scale` and `graph-check` runs record the load average next to their times. `--device cuda` runs geotter's side on a GPU when one is present. This is a benchmark, not a test.
"""
from __future__ import annotations
import argparse, os, sys, time, warnings

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from complexity import make_batch, make_batch_rows, timed      # the CLIP-like synthetic batch, timing + peak RSS

from geotter.core import accuracy, as_tensor, cosine_cost
from geotter.cluster import kmeans, fuse_costs
from geotter.graph import knn_indices
from geotter.options import PAPER_DEFAULTS, REFERENCE_CODE
from geotter.pipeline import transport_and_smooth
from geotter.method import geotter
from geotter.studies.experiments import prepare_task

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results')


def _save(df:pd.DataFrame, name:str)->pd.DataFrame:
    os.makedirs(OUT, exist_ok=True); df.to_csv(os.path.join(OUT, name), index=False); return df


def recall(found:np.ndarray, exact:np.ndarray)->float:
    "Mean fraction of each row's exact neighbours that were found."
    return float(np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(found, exact)]))


# ---------------------------------------------------------------------------------------------------- k-NN
def sklearn_knn(X:np.ndarray, k:int)->np.ndarray:
    "scikit-learn's brute-force cosine k-NN (the reference code's search), self dropped."
    from sklearn.neighbors import NearestNeighbors
    idx = NearestNeighbors(n_neighbors=k + 1, metric='cosine', algorithm='brute').fit(X).kneighbors(X)[1]
    rows = np.arange(len(X))[:, None]
    keep = np.argsort(idx == rows, axis=1, kind='stable')[:, :k]
    return np.take_along_axis(idx, keep, axis=1)


KNN_RUNS = [('scikit-learn brute', None, {}), ('torch exact (default)', 'torch', {}),
            ('torch exact, max_block=2^20', 'torch', dict(max_block=2**20)), ('faiss exact', 'faiss', {}),
            ('faiss HNSW ef=64', 'hnsw', dict(ef_search=64)), ('faiss HNSW ef=128', 'hnsw', dict(ef_search=128)),
            ('faiss IVF nprobe=8', 'ivf', dict(nprobe=8)), ('faiss IVF nprobe=32', 'ivf', dict(nprobe=32))]

def knn_inputs(n:int=50_000, d:int=512):
    "The synthetic 50k x 512 batch and, when its store entry exists, the real WordNet nouns (82,064 x 384)."
    yield f'synthetic {n}x{d}', make_batch(n, 1000, d)[0]
    try:
        from geotter.data import load_task
        yield 'wordnet-nouns 82064x384', load_task('wordnet-nouns').X.astype(np.float32)
    except (FileNotFoundError, ValueError) as e: print('skipping wordnet-nouns:', str(e)[:100])

def bench_knn(k:int=7, device:str='cpu')->pd.DataFrame:
    rows = []
    for name, X in knn_inputs():
        exact = None
        for label, method, kw in KNN_RUNS:
            Xd = torch.as_tensor(X, device=device) if method == 'torch' else X
            f = (lambda: sklearn_knn(X, k)) if method is None else (lambda: knn_indices(Xd, k, method=method, **kw))
            dt, dc, mb, idx = timed(f, device if method == 'torch' else 'cpu')
            idx = idx.cpu().numpy() if torch.is_tensor(idx) else np.asarray(idx)
            if exact is None: exact = idx
            rows.append(dict(data=name, n=len(X), d=X.shape[1], k=k, method=label, seconds=dt, cpu_seconds=dc,
                             peak_mb=mb, recall=recall(idx, exact)))
            print(rows[-1], flush=True)
            _save(pd.DataFrame(rows), 'perf_knn.csv')
    return pd.DataFrame(rows)


# -------------------------------------------------------------------------------------------------- k-means
KMEANS_CONFIGS = ([dict(engine='torch', init='k-means++', max_iter=50, n_init=1, label='previous default')] +
                  [dict(engine='faiss', init=i, max_iter=r, n_init=1) for i in ('k-means++', 'random')
                   for r in (1, 3, 5, 10, 20, 50, 300)] +
                  [dict(engine='faiss', init=i, max_iter=20, n_init=10) for i in ('k-means++', 'random')] +
                  [dict(engine='sklearn', init='k-means++', max_iter=300, n_init=10, label='reference code (sklearn)')])
KMEANS_TASKS = ('wordnet-sample', 'wordnet-verbs', 'wordnet-nouns', 'cifar10-clip', 'cifar10-siglip',
                'cifar10-siglip2', 'cifar10-biomedclip')

def _cluster(X, K, cfg, seed):
    "(centres, assignment, inertia) of one k-means configuration on unit-norm X."
    if cfg['engine'] == 'sklearn':
        from sklearn.cluster import KMeans
        km = KMeans(K, n_init=cfg['n_init'], max_iter=cfg['max_iter'], random_state=seed).fit(X)
        return km.cluster_centers_, km.labels_, float(km.inertia_)
    C, z = kmeans(X, K, seed=seed, max_iter=cfg['max_iter'], n_init=cfg['n_init'], init=cfg['init'], method=cfg['engine'])
    return C, z, float(((X - C[z]) ** 2).sum())

def kmeans_unit(task, configs=KMEANS_CONFIGS, seeds=(0, 1, 2), cost_temperature:float=0.1, **opts)->list:
    "GeoTTER (paper defaults, true label ratio) on `task` for every k-means configuration and seed."
    o = {**PAPER_DEFAULTS, **opts}
    prep = prepare_task(task, cost_temperature=cost_temperature, k=o['k'])           # normalized rows, logits and k-NN graph, once
    X, Y = prep.X.double().numpy(), prep.Y.double()
    C_ot, prior, G = prep.cost(task.prior, beta=0), task.prior, prep.graph()   # the same for every configuration
    rows = []
    for cfg in configs:
        for seed in seeds:
            t0 = time.perf_counter()
            cent, z, inertia = _cluster(X, Y.shape[0], cfg, seed)
            t_km = time.perf_counter() - t0
            C = fuse_costs(C_ot, as_tensor(cosine_cost(torch.as_tensor(cent, dtype=Y.dtype), Y))[torch.as_tensor(z)], o['beta'])
            T = transport_and_smooth(C, prior, G, alpha=o['alpha'])[1]
            rows.append(dict(task=task.name, n=len(X), K=Y.shape[0], seed=seed, **cfg, inertia=inertia,
                             kmeans_seconds=t_km, accuracy=accuracy(task.labels, T.argmax(1).numpy())))
    return rows

def bench_kmeans(tasks=KMEANS_TASKS)->pd.DataFrame:
    from geotter.studies.experiments import load_tasks
    rows = []
    for task in load_tasks(tasks):
        rows += kmeans_unit(task)
        print(pd.DataFrame(rows).query('task == @task.name').groupby(['engine', 'init', 'max_iter', 'n_init'])
              .accuracy.mean().round(2).to_string(), flush=True)
        _save(pd.DataFrame(rows), 'perf_kmeans.csv')
    return pd.DataFrame(rows)

def bench_kmeans_large(n:int=50_000, m:int=1000, d:int=512)->pd.DataFrame:
    "Cost and inertia of k-means at K=1000 on the synthetic ImageNet-sized batch: seeding and rounds."
    X = make_batch(n, m, d)[0].astype(np.float64); X /= np.linalg.norm(X, axis=1, keepdims=True)
    Xf = X.astype(np.float32)
    cfgs = [dict(engine='faiss', init='random', max_iter=r, n_init=1) for r in (5, 10, 20, 50)] + \
           [dict(engine='faiss', init='k-means++', max_iter=20, n_init=1),
            dict(engine='sklearn', init='k-means++', max_iter=300, n_init=1, label='scikit-learn KMeans, 1 init')]
    rows = []
    for cfg in cfgs:
        dt, dc, mb, (C, z, inertia) = timed(lambda: _cluster(Xf, m, cfg, 0), 'cpu')
        rows.append(dict(n=n, K=m, d=d, **cfg, seconds=dt, cpu_seconds=dc, peak_mb=mb, inertia=inertia))
        print(rows[-1], flush=True)
        _save(pd.DataFrame(rows), 'perf_kmeans_large.csv')
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------------ end to end
def reference_pipeline(X, Y, prior, temperature=0.1, beta=0.3, k=5, alpha=0.7, n_init=10, seed=42, eps=1e-9):
    """The public reference implementation's steps (TeleViaBox/GeoTTER), re-stated: cosine logits / T plus
    log prior, -log softmax cost, scikit-learn KMeans(K=m, n_init=10), a per-sample loop for the cluster cost,
    POT's ot.emd, scikit-learn cosine k-NN (k including the point) and a per-sample smoothing loop."""
    import ot
    from sklearn.cluster import KMeans
    from sklearn.metrics.pairwise import cosine_similarity
    from sklearn.neighbors import NearestNeighbors
    t, times = time.perf_counter(), {}
    def lap(name):
        nonlocal t; now = time.perf_counter(); times[name] = now - t; t = now
    z = cosine_similarity(X, Y) / temperature + np.log(prior + eps)
    p = np.exp(z - z.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
    cost = -np.log(p + eps); lap('cost')
    km = KMeans(n_clusters=Y.shape[0], random_state=seed, n_init=n_init).fit(X); lap('kmeans')
    cc = np.zeros_like(cost)
    for i in range(len(X)): cc[i] = 1 - cosine_similarity(km.cluster_centers_[km.labels_[i]][None], Y)[0]
    C = (1 - beta) * cost + beta * cc; lap('cluster_cost')
    T = ot.emd(np.full(len(X), 1 / len(X)), prior, C, numItermax=10_000_000); lap('ot')
    nbrs = NearestNeighbors(n_neighbors=k, metric='cosine').fit(X).kneighbors(X)[1]; lap('knn')
    Ts = np.zeros_like(T)
    for i in range(len(X)): Ts[i] = alpha * T[i] + (1 - alpha) * T[nbrs[i]].mean(0)
    lap('smoothing')
    return Ts.argmax(1), times

def bench_end2end(n:int=50_000, m:int=1000, d:int=512, device:str='cpu', reference:bool=True)->pd.DataFrame:
    X, Y, labels, prior = make_batch(n, m, d)
    Xd, Yd = torch.as_tensor(X, device=device), torch.as_tensor(Y, device=device)
    runs = [('geotter, defaults', lambda: geotter(Xd, Yd, prior).labels),
            ('geotter, defaults (repeat)', lambda: geotter(Xd, Yd, prior).labels),
            ('geotter, reference-code options', lambda: geotter(Xd, Yd, prior, **REFERENCE_CODE).labels)]
    if reference: runs.append(('reference pipeline', lambda: reference_pipeline(X, Y, prior)))
    rows, preds = [], {}
    for name, f in runs:
        dt, dc, mb, out = timed(f, device if name.startswith('geotter') else 'cpu')
        pred, stages = (out if isinstance(out, tuple) else (out, {}))
        preds[name] = pred = np.asarray(pred.cpu() if torch.is_tensor(pred) else pred)
        rows.append(dict(n=n, m=m, d=d, device=device, pipeline=name, seconds=dt, cpu_seconds=dc, peak_mb=mb,
                         accuracy=accuracy(labels, pred), **{f'stage_{k}': v for k, v in stages.items()}))
        print({k: v for k, v in rows[-1].items()}, flush=True)
        _save(pd.DataFrame(rows), 'perf_end2end.csv')
    df = pd.DataFrame(rows)
    base = preds['geotter, defaults']
    df['same_as_first_run'] = [bool(np.array_equal(preds[p], base)) for p in df.pipeline]
    df['agreement_with_reference'] = [float(np.mean(preds[p] == preds['reference pipeline'])) if reference else np.nan
                                      for p in df.pipeline]
    return _save(df, 'perf_end2end.csv')


# ------------------------------------------------------------------------------------------ million samples
def _max_rss_mb()->float:
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def million_geometry(X, m:int, k:int=7, sample:int=50_000, nprobe:int=2, seed:int=0):
    "Approximate geometry for the chunked path: k-means on a sample of rows (faiss, random init), IVF k-NN on all rows."
    rng = np.random.default_rng(seed)
    steps = {}
    sub = np.sort(rng.choice(len(X), min(sample, len(X)), replace=False))
    steps['kmeans'] = timed(lambda: kmeans(X[sub], m, seed=seed, max_iter=20, init='random', method='faiss')[0], 'cpu')
    steps['knn'] = timed(lambda: knn_indices(X, k, method='ivf', nprobe=nprobe), 'cpu')
    return steps

def knn_recall_sample(X, nbrs, k:int, n_query:int=200, seed:int=0)->float:
    "Recall of the k-NN lists of `n_query` random rows against exact search over all rows."
    q = np.random.default_rng(seed).choice(len(X), n_query, replace=False)
    S = torch.as_tensor(X[q]) @ torch.as_tensor(X).T
    S[torch.arange(n_query), torch.as_tensor(q)] = -np.inf
    return recall(np.asarray(nbrs)[q], S.topk(k, dim=1).indices.numpy())

def bench_dask(n:int=200_000, m:int=1000, d:int=512, k:int=7, block_rows:int=25_000, name:str='perf_dask.csv')->pd.DataFrame:
    """geotter_chunked on a row-chunked dask array with a 2-worker dask.distributed LocalCluster, against the same
    call on the in-memory array, on one geometry (k-means on a sample, IVF k-NN), measured side by side."""
    import dask.array as da
    from distributed import Client, LocalCluster
    from geotter.pipeline import geotter_chunked
    X, Y, labels, prior = make_batch_rows(n, m, d, noise=0.5)
    geo = million_geometry(X, m, k)
    cent, nbrs = geo['kmeans'][3], geo['knn'][3]
    run = lambda A: geotter_chunked(A, Y, prior, neighbours=nbrs, centres=cent, chunk_rows=block_rows)
    rows, out = [], {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster):
        Xd = da.from_array(X, chunks=(block_rows, -1))
        for label, A in (('in memory', X), ('dask LocalCluster, 2 workers', Xd)):
            dt, dc, mb, res = timed(lambda: run(A), 'cpu')
            out[label] = res
            rows.append(dict(n=n, m=m, d=d, block_rows=block_rows, run=label, seconds=dt, cpu_seconds_driver=dc, peak_mb_driver=mb,
                             accuracy=accuracy(labels, res.labels), ot_gap=res.ot.gap,
                             **{f't_{key}': v for key, v in res.timings.items()}))
            print(rows[-1], flush=True)
    df = pd.DataFrame(rows)
    df['same_labels_as_in_memory'] = [bool(np.array_equal(r.labels, out['in memory'].labels)) for r in out.values()]
    return _save(df, name)


def bench_million(n:int=1_000_000, m:int=1000, d:int=512, k:int=7, chunk_rows:int=32_768, nprobe:int=2,
                  name:str='perf_million.csv')->pd.DataFrame:
    "GeoTTER at n rows with the chunked path: time and peak memory (above entry, and the process maximum) per step."
    from geotter.pipeline import geotter_chunked
    X, Y, labels, prior = make_batch_rows(n, m, d, noise=0.5)   # tighter class clusters than make_batch
    print(f'batch {X.shape} ready, RSS max {_max_rss_mb():.0f} MB', flush=True)
    steps = million_geometry(X, m, k, nprobe=nprobe)
    cent, nbrs = steps['kmeans'][3], steps['knn'][3]
    steps['transport+smoothing'] = timed(lambda: geotter_chunked(X, Y, prior, neighbours=nbrs, centres=cent,
                                                                  chunk_rows=chunk_rows), 'cpu')
    res = steps['transport+smoothing'][3]
    rows = [dict(n=n, m=m, d=d, step=s, seconds=v[0], cpu_seconds=v[1], peak_mb_above_entry=v[2]) for s, v in steps.items()]
    rows.append(dict(n=n, m=m, d=d, step='total', seconds=sum(v[0] for v in steps.values()),
                     cpu_seconds=sum(v[1] for v in steps.values()), peak_mb_above_entry=max(v[2] for v in steps.values())))
    df = pd.DataFrame(rows)
    df['process_max_rss_mb'] = _max_rss_mb()
    df['accuracy'] = accuracy(labels, res.labels); df['ot_accuracy'] = accuracy(labels, res.ot.labels)
    df['ot_gap'] = res.ot.gap; df['ot_objective'] = res.ot.objective
    df['knn_recall'] = knn_recall_sample(X, nbrs, k)
    for key, v in res.timings.items(): df[f'ot_{key}' if not key.endswith('_s') else key] = v
    print(df.to_string(), flush=True)
    return _save(df, name)



# ------------------------------------------------------------------------ geotter(...) at a million samples
def _load()->str:
    "The load averages (1, 5, 15 min) of the machine, as `uptime` prints them."
    return ' '.join(f'{v:.2f}' for v in os.getloadavg())

def _staged(record:dict):
    "Patch the k-means, k-NN and label-ratio cores that geotter.method's `Prepared` calls with timed wrappers writing to `record`; returns undo."
    import geotter.method as gm
    saved = gm.kmeans_trusted, gm.knn_search_trusted, gm.estimate_label_ratio_trusted
    def clock(name, fn, *a, **kw):
        t0, c0 = time.perf_counter(), time.process_time(); out = fn(*a, **kw)
        record[name] = (time.perf_counter() - t0, time.process_time() - c0); return out
    def knn(*a, **kw):
        res = clock('k-NN', saved[1], *a, **kw); record['knn'] = res; return res
    gm.kmeans_trusted, gm.knn_search_trusted = (lambda *a, **kw: clock('k-means', saved[0], *a, **kw)), knn
    gm.estimate_label_ratio_trusted = lambda *a, **kw: clock('ratio', saved[2], *a, **kw)
    return lambda: setattr(gm, 'kmeans_trusted', saved[0]) or setattr(gm, 'knn_search_trusted', saved[1]) or setattr(gm, 'estimate_label_ratio_trusted', saved[2])

def bench_scale(n:int=1_000_000, m:int=1000, d:int=512, unknown:bool=False, name:str|None=None)->pd.DataFrame:
    """`geotter(X, Y, prior)` with its defaults on `make_batch_rows(n, m, d, noise=0.5)` (the million benchmark's batch):
    wall and CPU time per stage (k-means, k-NN, exact OT, smoothing, the rest), peak memory, k-NN recall on 1,000 rows
    not used to tune the search, accuracy. `unknown`: `geotter(X, Y)`, the label ratio unknown (the ratio estimated and
    the semi-relaxed transport fitted on a sample of rows), in perf_scale_unknown.csv."""
    name = name or ('perf_scale_unknown.csv' if unknown else 'perf_scale.csv')
    call = 'geotter(X, Y)' if unknown else 'geotter(X, Y, prior)'
    import resource
    from geotter.graph import faiss_module, knn_recall
    X, Y, labels, prior = make_batch_rows(n, m, d, noise=0.5)
    rss0, load0, record = _max_rss_mb(), _load(), {}
    print(f'batch {X.shape} ready, max RSS {rss0:.0f} MB, load {load0}, faiss {"on" if faiss_module() else "off"}', flush=True)
    undo = _staged(record)
    try: dt, dc, mb, res = timed(lambda: geotter(X, Y, None if unknown else prior), 'cpu')
    finally: undo()
    load1, t = _load(), res.timings
    stages = {'k-means': record['k-means'], 'k-NN': record['k-NN']}
    if unknown: stages['label ratio (EM on a sample)'] = record['ratio']
    stages.update({'semi-relaxed OT' if unknown else 'exact OT': (t.get('setup_s', 0.0) + t['ot_s'], np.nan), 'smoothing': (t['smooth_s'], np.nan)})
    stages['other (fused cost, checks, normalization, labels)'] = (dt - sum(v[0] for v in stages.values()), np.nan)
    knn = record['knn']
    Xn = torch.as_tensor(X)
    rows = [dict(stage=s, seconds=v[0], cpu_seconds=v[1]) for s, v in stages.items()]
    rows.append(dict(stage=f'total: {call}', seconds=dt, cpu_seconds=dc))
    df = pd.DataFrame(rows).assign(n=n, m=m, d=d, faiss=faiss_module() is not None, torch_threads=torch.get_num_threads(),
                                   peak_mb_above_entry=mb, process_max_rss_mb=_max_rss_mb(), rss_before_mb=rss0,
                                   load_before=load0, load_after=load1, knn_method=knn.method, knn_settings=str(knn.settings),
                                   knn_recall_tuning_sample=knn.recall, accuracy=accuracy(labels, np.asarray(res.labels)))
    df['knn_recall_other_rows'] = knn_recall(Xn, torch.as_tensor(np.asarray(record['knn'].indices)), sample=1000, seed=1)
    print(df.to_string(), flush=True)
    return _save(df, name)


def bench_knn_scale(sizes=(100_000, 200_000, 500_000, 1_000_000), m:int=1000, d:int=512, k:int=7,
                    name:str='perf_knn_scale.csv')->pd.DataFrame:
    """`knn_search(X[:n], 7)` (method='auto': the IVF search above 100,000 rows) on the first n rows of one
    `make_batch_rows(max(sizes), ...)` batch: time, the index it chose, recall on the tuning sample and on other rows;
    and the slope of log time against log n."""
    from geotter.graph import knn_search, knn_recall
    X, _, _, _ = make_batch_rows(max(sizes), m, d, noise=0.5)
    rows = []
    for n in sizes:
        Xn = torch.as_tensor(X[:n]); load0 = _load()
        dt, dc, mb, res = timed(lambda: knn_search(Xn, k, method='ivf'), 'cpu')
        rows.append(dict(n=n, seconds=dt, cpu_seconds=dc, peak_mb=mb, load_before=load0, load_after=_load(),
                         torch_threads=torch.get_num_threads(), **res.settings, recall_tuning_sample=res.recall,
                         recall_other_rows=knn_recall(Xn, res.indices, sample=1000, seed=1)))
        print(rows[-1], flush=True)
        _save(pd.DataFrame(rows), name)
    df = pd.DataFrame(rows)
    for col in ('seconds', 'cpu_seconds'):
        df[f'slope_{col}'] = np.polyfit(np.log(df.n), np.log(df[col]), 1)[0] if len(df) > 1 else np.nan
    print(df.to_string(), flush=True)
    return _save(df, name)


def bench_graph_check(n:int=100_000, m:int=1000, d:int=512, name:str='perf_graph_check.csv')->pd.DataFrame:
    """GeoTTER (defaults) on the first n rows of the million benchmark's batch with the exact k-NN graph and with the
    IVF graph that `knn_method='auto'` builds above 100,000 rows: accuracy, their difference, label agreement."""
    from geotter.graph import knn_search
    X, Y, labels, prior = make_batch_rows(n, m, d, noise=0.5)
    rows, preds = [], {}
    for method in ('exact', 'ivf'):
        dt, dc, mb, res = timed(lambda: geotter(X, Y, prior, knn_method=method), 'cpu')
        preds[method] = np.asarray(res.labels)
        rows.append(dict(n=n, knn_method=method, seconds=dt, cpu_seconds=dc, load=_load(), accuracy=accuracy(labels, preds[method])))
        print(rows[-1], flush=True)
    s = knn_search(X, 7, method='ivf')
    df = pd.DataFrame(rows).assign(ivf_settings=str(s.settings), ivf_recall_tuning_sample=s.recall,
                                   accuracy_difference_points=100 * (rows[1]['accuracy'] - rows[0]['accuracy']),
                                   label_agreement=float(np.mean(preds['exact'] == preds['ivf'])))
    print(df.to_string(), flush=True)
    return _save(df, name)


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('what', choices=['knn', 'kmeans', 'kmeans-large', 'end2end', 'million', 'dask', 'scale', 'knn-scale', 'graph-check'])
    p.add_argument('--n', type=int, default=None, help='million/dask/scale/graph-check: rows (default 1,000,000 / 200,000 / 1,000,000 / 100,000)')
    p.add_argument('--sizes', type=int, nargs='+', default=[100_000, 200_000, 500_000, 1_000_000], help='knn-scale: batch sizes')
    p.add_argument('--no-faiss', action='store_true', help='hide faiss from geotter (the default install has none)')
    p.add_argument('--device', default='cpu', choices=['cpu', 'cuda'])
    p.add_argument('--unknown', action='store_true', help='scale: the label ratio unknown, geotter(X, Y)')
    p.add_argument('--no-reference', action='store_true', help='end2end: skip the (slow) reference pipeline')
    a = p.parse_args()
    if a.no_faiss: sys.modules['faiss'] = None             # `import faiss` now fails, as without the `fast` extra
    if a.device == 'cuda' and not torch.cuda.is_available(): raise SystemExit('--device cuda but no CUDA device is available')
    warnings.filterwarnings('ignore', category=UserWarning)
    if a.what == 'knn': bench_knn(device=a.device)
    elif a.what == 'kmeans': bench_kmeans()
    elif a.what == 'kmeans-large': bench_kmeans_large()
    elif a.what == 'million': bench_million(n=a.n or 1_000_000)
    elif a.what == 'dask': bench_dask(n=a.n or 200_000)
    elif a.what == 'scale': bench_scale(n=a.n or 1_000_000, unknown=a.unknown)
    elif a.what == 'knn-scale': bench_knn_scale(sizes=a.sizes)
    elif a.what == 'graph-check': bench_graph_check(n=a.n or 100_000)
    else: bench_end2end(device=a.device, reference=not a.no_reference)
