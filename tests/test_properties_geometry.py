"""Property tests of the geometry layer: k-NN search and graph, graph smoothing, k-means and the cluster cost.

Inputs are drawn small (at most 50 x 10) from seeded generators, so ties have probability zero and each
example runs in milliseconds; every call is also checked to return within 10 seconds."""
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from hypothesis import given, settings, strategies as st

import geotter.cluster
import geotter.graph
from geotter.graph import faiss_module, graph_smooth, knn_graph, knn_indices, knn_recall, knn_search, neighbour_graph
from geotter.cluster import cluster_cost, kmeans, nearest_centres

ENGINES = ('torch', 'exact', 'auto') + (('faiss',) if faiss_module() is not None else ())
KMEANS_ENGINES = ('torch',) + (('faiss',) if faiss_module() is not None else ())


def quick(fn, *args, **kwargs):
    "The result of `fn(*args, **kwargs)`, failing if the call took 10 CPU seconds or more (a shared machine's wall time is noise)."
    t0 = time.process_time()
    out = fn(*args, **kwargs)
    assert time.process_time() - t0 < 10, f"{fn.__name__} took {time.process_time() - t0:.1f} CPU s"
    return out


@st.composite
def batches(draw, max_n=50, max_d=10):
    "A seeded (n, d) Gaussian batch, n >= 3."
    n, d = draw(st.integers(3, max_n)), draw(st.integers(2, max_d))
    return np.random.default_rng(draw(st.integers(0, 2**32 - 1))).normal(size=(n, d))


def brute_knn(X, k, include_self):
    "Neighbour lists by a full sort of the cosine similarity matrix."
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = Xn @ Xn.T
    np.fill_diagonal(S, np.inf if include_self else -np.inf)
    return np.argsort(-S, axis=1, kind='stable')[:, :k]


@given(batches(), st.data())
def test_knn_matches_brute_force(X, data):
    n = len(X)
    k = data.draw(st.integers(1, n - 1), label='k')
    include_self = data.draw(st.booleans(), label='include_self')
    method = data.draw(st.sampled_from(ENGINES), label='method')
    max_block = data.draw(st.sampled_from([1, 7, 64, 2**24]), label='max_block')
    want = brute_knn(X, k, include_self)
    got = quick(knn_indices, X, k, include_self, method=method, max_block=max_block)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(quick(knn_indices, torch.tensor(X), k, include_self, method=method).numpy(), want)
    A = quick(knn_graph, X, k, include_self, method=method)
    np.testing.assert_array_equal(A.toarray(), np.eye(n)[want].sum(1))
    assert quick(knn_recall, X, got, include_self) == 1.0


@settings(max_examples=20)
@given(batches(max_n=50), st.data())
def test_approximate_search_reports_its_recall(X, data):
    k = data.draw(st.integers(1, min(5, len(X) - 1)), label='k')
    include_self = data.draw(st.booleans(), label='include_self')
    method = data.draw(st.sampled_from(['ivf', 'hnsw'] if faiss_module() is not None else ['ivf']), label='method')
    res = quick(knn_search, X, k, include_self, method=method, nprobe=1, ef_search=1, min_recall=0)
    assert res.method == method
    assert res.recall == pytest.approx(knn_recall(X, res.indices, include_self, sample=len(X)), abs=1e-12)
    assert 0 <= res.recall <= 1
    assert ((res.indices >= 0) & (res.indices < len(X))).all()
    me = res.indices == np.arange(len(X))[:, None]
    if include_self: assert me[:, 0].all()                                       # the point first
    else: assert (np.diff(me.astype(int), axis=1) >= 0).all()                  # only as padding: from some slot to the end


@given(batches(), st.data())
def test_ivf_search_widens_to_the_recall_asked(X, data):
    "A small batch can always be searched whole: min_recall=1 from one cell must end at the exact lists."
    n = len(X)
    k = data.draw(st.integers(1, n - 1), label='k')
    include_self = data.draw(st.booleans(), label='include_self')
    res = quick(knn_search, X, k, include_self, method='ivf', nprobe=1, min_recall=1.0)
    np.testing.assert_array_equal(res.indices, brute_knn(X, k, include_self))
    assert res.recall == 1.0
    full = quick(knn_search, X, k, include_self, method='ivf', nprobe=10**6)      # every cell probed: exact
    np.testing.assert_array_equal(full.indices, brute_knn(X, k, include_self))


def test_auto_is_near_linear_above_the_threshold_and_exact_says_its_cost(monkeypatch):
    monkeypatch.setattr(geotter.graph, 'KNN_APPROX_MIN_N', 40)
    X = np.random.default_rng(0).normal(size=(60, 5))
    with warnings.catch_warnings():
        warnings.simplefilter('error')                                             # auto: no warning, no exact search
        res = quick(knn_search, X, 3)
    assert res.method == 'ivf' and res.recall >= geotter.graph.KNN_MIN_RECALL
    with pytest.warns(UserWarning, match='multiply-adds, about'):
        np.testing.assert_array_equal(quick(knn_indices, X, 3, method='exact'), brute_knn(X, 3, False))


def test_faiss_methods_without_faiss_say_so_in_one_line(monkeypatch):
    monkeypatch.setattr(geotter.cluster, 'faiss_module', lambda: None)
    monkeypatch.setattr(geotter.graph, 'faiss_module', lambda: None)
    X, Y = np.random.default_rng(0).normal(size=(20, 4)), np.random.default_rng(1).normal(size=(3, 4))
    for call in (lambda: cluster_cost(X, Y, method='faiss'), lambda: kmeans(X, 3, method='faiss'), lambda: knn_indices(X, 3, method='hnsw')):
        with pytest.raises(ImportError) as e: call()
        assert 'needs faiss' in str(e.value) and '\n' not in str(e.value)
    assert cluster_cost(X, Y).shape == (20, 3)                                   # 'auto' runs without faiss
    np.testing.assert_array_equal(knn_indices(X, 3, method='exact'), brute_knn(X, 3, False))


@st.composite
def plans(draw, max_n=50, max_m=10):
    "A plan whose rows sum to 1/n and a non-negative weighted graph (some rows possibly empty), seeded."
    n, m = draw(st.integers(2, max_n)), draw(st.integers(1, max_m))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    T = rng.dirichlet(np.ones(m), size=n) / n
    W = rng.random((n, n)) * (rng.random((n, n)) < draw(st.floats(0, 1)))
    return T, W


@given(plans(), st.floats(0, 1), st.integers(0, 4), st.booleans())
def test_smoothing_keeps_row_sums_and_stays_finite(TW, alpha, steps, sparse):
    T, W = TW
    G = sp.csr_array(W) if sparse else W
    S = quick(graph_smooth, T, G, alpha, steps)
    assert np.isfinite(S).all() and (S >= 0).all()
    np.testing.assert_allclose(S.sum(1), T.sum(1), rtol=1e-12, atol=1e-15)
    D = np.where(W.sum(1, keepdims=True) > 0, W / np.maximum(W.sum(1, keepdims=True), 1e-300), np.eye(len(W)))
    want = T
    for _ in range(steps): want = alpha * want + (1 - alpha) * D @ want
    np.testing.assert_allclose(S, want, rtol=1e-10, atol=1e-14)


@given(plans(), st.integers(1, 5), st.floats(0, 1), st.integers(0, 4))
def test_smoothing_on_a_regular_symmetric_graph_keeps_column_totals(TW, k, alpha, steps):
    T = TW[0]
    n = len(T)
    A = sum(np.roll(np.eye(n), s, axis=1) + np.roll(np.eye(n), -s, axis=1) for s in range(1, k + 1))   # circulant: doubly stochastic
    S = quick(graph_smooth, T, A, alpha, steps)
    np.testing.assert_allclose(S.sum(0), T.sum(0), rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(S.sum(1), T.sum(1), rtol=1e-10, atol=1e-15)


@given(batches(), st.data())
def test_kmeans_assigns_every_row_to_its_nearest_centre(X, data):
    n = len(X)
    K = data.draw(st.integers(1, min(n, 8)), label='n_clusters')
    method = data.draw(st.sampled_from(KMEANS_ENGINES), label='method')
    max_train = data.draw(st.sampled_from(['auto', None, K, n]), label='max_train')
    seed = data.draw(st.integers(0, 100), label='seed')
    C, z = quick(kmeans, X, K, seed=seed, method=method, max_train=max_train)
    Xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    d2 = ((Xn[:, None] - C[None]) ** 2).sum(-1)
    assert C.shape == (K, X.shape[1]) and z.shape == (n,)
    tol = 1e-5 if method == 'faiss' else 1e-12
    assert (d2[np.arange(n), z] <= d2.min(1) + tol).all()
    np.testing.assert_array_equal(quick(kmeans, X, K, seed=seed, method=method, max_train=max_train)[1], z)   # seeded
    nz = quick(nearest_centres, Xn, C)
    assert (d2[np.arange(n), nz] == d2.min(1)).all() or np.allclose(d2[np.arange(n), nz], d2.min(1), atol=1e-12)


@given(batches(), st.integers(1, 6), st.integers(0, 50))
def test_cluster_cost_is_the_centre_cost(X, m, seed):
    Y = np.random.default_rng(seed).normal(size=(m, X.shape[1]))
    K = min(len(X), m)
    Cc = quick(cluster_cost, X, Y, n_clusters=K, seed=seed, method='torch')
    C, z = kmeans(X, K, seed=seed, method='torch')
    Yn = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    Cn = C / np.linalg.norm(C, axis=1, keepdims=True)
    np.testing.assert_allclose(Cc, 1 - (Cn @ Yn.T)[z], atol=1e-12)
    assert np.isfinite(Cc).all() and (Cc >= -1e-12).all() and (Cc <= 2 + 1e-12).all()


X0 = np.random.default_rng(0).normal(size=(12, 4))
T0 = np.full((12, 3), 1 / 36)
G0 = knn_graph(X0, 3)
G_nan = G0.copy(); G_nan.data[0] = np.nan
G_inf = G0.toarray(); G_inf[0, 1] = np.inf

BAD_CALLS = [  # (call, argument name the error must mention)
    (lambda: knn_indices(X0, 0), 'k'), (lambda: knn_indices(X0, 12), 'k'), (lambda: knn_indices(X0, 2.5), 'k'),
    (lambda: knn_indices(X0, '3'), 'k'), (lambda: knn_indices(X0, True), 'k'),
    (lambda: knn_indices(X0, 3, include_self='yes'), 'include_self'), (lambda: knn_indices(X0, 3, include_self=None), 'include_self'),
    (lambda: knn_indices(X0, 3, max_block=-5), 'max_block'), (lambda: knn_indices(X0, 3, max_block=0), 'max_block'),
    (lambda: knn_indices(X0, 3, method='ivf', nprobe=0), 'nprobe'), (lambda: knn_indices(X0, 3, method='hnsw', ef_search=0), 'ef_search'),
    (lambda: knn_indices(X0, 3, method='kd'), 'method'), (lambda: knn_indices(X0[:, :0], 3), 'X'),
    (lambda: knn_indices(np.where(np.eye(12, 4) > 0, np.nan, X0), 3), 'X'), (lambda: knn_indices(np.zeros((12, 4)), 3), 'X'),
    (lambda: knn_graph(X0, 3, include_self=1), 'include_self'), (lambda: knn_recall(X0, np.zeros((5, 3), int)), 'neighbours'),
    (lambda: neighbour_graph(np.full((12, 3), 12)), 'neighbours'),
    (lambda: graph_smooth(T0, G_nan, 0.3), 'graph'), (lambda: graph_smooth(T0, G_inf, 0.3), 'graph'),
    (lambda: graph_smooth(T0, -G0.toarray(), 0.3), 'graph'), (lambda: graph_smooth(T0, G0[:5, :5], 0.3), 'graph'),
    (lambda: graph_smooth(T0, G0, 1.1), 'alpha'), (lambda: graph_smooth(T0, G0, float('nan')), 'alpha'),
    (lambda: graph_smooth(T0, G0, 0.3, steps=-1), 'steps'), (lambda: graph_smooth(T0, G0, 0.3, steps=1.5), 'steps'),
    (lambda: graph_smooth(T0, None, 0.3), 'graph'), (lambda: graph_smooth(T0, 'G', 0.3), 'graph'),
    (lambda: knn_indices(X0, 3, progress='yes'), 'progress'), (lambda: knn_indices(X0, 3, min_recall=1.5), 'min_recall'),
    (lambda: knn_indices(X0, 3, recall_sample=0), 'recall_sample'),
    (lambda: kmeans(X0, 0), 'n_clusters'), (lambda: kmeans(X0, 13), 'n_clusters'), (lambda: kmeans(X0, 2.0), 'n_clusters'),
    (lambda: kmeans(X0, 3, seed=-1), 'seed'), (lambda: kmeans(X0, 3, seed='a'), 'seed'), (lambda: kmeans(X0, 3, seed=1.5), 'seed'),
    (lambda: kmeans(X0, 3, max_iter=0), 'max_iter'), (lambda: kmeans(X0, 3, n_init=0), 'n_init'),
    (lambda: kmeans(X0, 3, init='kmeans'), 'init'), (lambda: kmeans(X0, 3, method='em'), 'method'),
    (lambda: kmeans(X0, 3, max_block=-1), 'max_block'), (lambda: kmeans(X0, 3, max_train=2), 'max_train'),
    (lambda: kmeans(X0, 3, max_train='all'), 'max_train'),
    (lambda: cluster_cost(X0, X0[:3, :2]), 'Y'), (lambda: cluster_cost(X0, X0[:3], n_clusters=0), 'n_clusters'),
    (lambda: nearest_centres(X0, X0[:3, :2]), 'centres'),
]


@pytest.mark.parametrize('i', range(len(BAD_CALLS)))
def test_invalid_input_raises_naming_the_argument(i):
    call, name = BAD_CALLS[i]
    with pytest.raises((ValueError, TypeError)) as e: quick(call)
    assert name in str(e.value), (name, str(e.value))


def test_valid_edge_inputs_are_accepted():
    np.testing.assert_array_equal(knn_indices(X0, np.int64(3)), knn_indices(X0, 3))
    np.testing.assert_array_equal(kmeans(X0, np.int64(3), seed=None, max_iter=np.int64(5))[1], kmeans(X0, 3, seed=0, max_iter=5)[1])
    np.testing.assert_array_equal(knn_indices(X0, 3, include_self=np.bool_(True)), knn_indices(X0, 3, include_self=True))
    assert len(set(kmeans(X0, 12)[1].tolist())) == 12                    # K = n: every row its own cluster
