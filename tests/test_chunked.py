"""The chunked GeoTTER path against the in-memory method, and on a dask.distributed cluster.

`geotter.pipeline.geotter_chunked` runs the chunked backend's pipeline with a given geometry (centres, neighbour lists)
on rows that may be a row-chunked dask array; here it is checked end to end against `geotter` on the same geometry,
against `prepare(..., backend='chunked')`, and on a 2-worker `dask.distributed.LocalCluster`.
"""
import numpy as np
import pytest
import torch

from geotter.chunked import chunked_emd
from geotter.cluster import kmeans
from geotter.core import check_embeddings
from geotter.graph import knn_indices
from geotter.method import geotter, prepare
from geotter.pipeline import geotter_chunked
from geotter.transport import emd


def _batch(n, m, d, seed, dtype=np.float32):
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(m, d))
    labels = rng.integers(0, m, n)
    X = 0.6 * Y[labels] + rng.normal(size=(n, d))
    return X.astype(dtype), Y.astype(dtype), rng.dirichlet(np.ones(m) * 2)


def _geometry(X, Y, m, k=7, seed=0):
    "The k-means and exact k-NN that `geotter` builds on the same batch."
    Xn, _ = check_embeddings(torch.as_tensor(X), torch.as_tensor(Y))
    cent, z = kmeans(Xn, m, seed=seed)
    return cent, z, knn_indices(Xn, k)


@pytest.mark.parametrize('n,m,dtype,steps,prior_weight', [(400, 8, np.float32, 1, 0.0), (1500, 30, np.float32, 1, 0.0),
                                                          (800, 12, np.float64, 2, 1.0)])
def test_same_labels_as_geotter(n, m, dtype, steps, prior_weight):
    "Same labels as the in-memory method, plans equal to rounding, and a zero duality gap."
    X, Y, prior = _batch(n, m, 16, seed=n, dtype=dtype)
    ref = geotter(torch.as_tensor(X), torch.as_tensor(Y), prior, steps=steps, prior_weight=prior_weight)
    cent, z, nbrs = _geometry(X, Y, m)
    res = geotter_chunked(X, Y, prior, neighbours=nbrs, centres=cent, assignment=z, steps=steps,
                          prior_weight=prior_weight, chunk_rows=256, n_candidates=4)
    np.testing.assert_array_equal(res.labels, ref.labels.numpy())
    np.testing.assert_allclose(res.ot_plan.toarray(), ref.ot_plan.numpy(), atol=1e-9)
    np.testing.assert_allclose(res.plan.toarray(), ref.plan.numpy(), atol=1e-9)
    obj = float((ref.ot_plan.double() * ref.cost.double()).sum())
    assert abs(res.ot.objective - obj) <= 1e-6 * abs(obj)          # the float32 plan rounds its masses
    assert abs(res.ot.gap) <= 1e-12


def test_prepared_chunked_backend_is_geotter_chunked():
    "The chunked backend of a prepared batch is `geotter_chunked` on its partition and neighbour lists."
    X, Y, prior = _batch(600, 9, 12, seed=4, dtype=np.float64)
    prep = prepare(X, Y, backend='chunked', knn_method='torch')
    res = prep.adapt(prior, steps=2, prior_weight=1.0)
    centres, z = prep.partition
    ref = geotter_chunked(X, Y, prior, neighbours=prep.neighbours(), centres=centres, assignment=z, steps=2, prior_weight=1.0)
    np.testing.assert_array_equal(res.labels, ref.labels)
    np.testing.assert_allclose(res.plan.toarray(), ref.plan.toarray(), atol=1e-12)
    assert res.config['backend'] == ref.config['backend'] == 'chunked' and res.cost is None and ref.cost is None


def test_chunked_emd_medium():
    "A 20,000 x 200 problem: objective of the dense exact solver to 1e-9, same labels."
    rng = np.random.default_rng(5)
    C = rng.random((20_000, 200)) + 0.3 * rng.random((20_000, 1))
    nu = rng.dirichlet(np.ones(200))
    sol, P = chunked_emd(C, nu, chunk_rows=4096), emd('uniform', nu, C)
    obj = float((P * C).sum())
    assert abs(sol.objective - obj) <= 1e-9 * obj and abs(sol.gap) <= 1e-9 * obj
    np.testing.assert_array_equal(sol.labels, P.argmax(1))


def test_dask_local_cluster():
    "A row-chunked dask array on a 2-worker LocalCluster gives the in-memory labels and plans."
    da = pytest.importorskip('dask.array')
    distributed = pytest.importorskip('distributed')
    X, Y, prior = _batch(900, 10, 16, seed=7)
    cent, z, nbrs = _geometry(X, Y, 10)
    mem = geotter_chunked(X, Y, prior, neighbours=nbrs, centres=cent, chunk_rows=200)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
         distributed.Client(cluster):
        dist = geotter_chunked(da.from_array(X, chunks=(200, -1)), Y, prior, neighbours=nbrs, centres=cent)
    np.testing.assert_array_equal(dist.labels, mem.labels)
    assert (dist.plan != mem.plan).nnz == 0


from hypothesis import given, strategies as st


@given(n=st.integers(1, 60), m=st.integers(1, 8), K=st.integers(1, 8), chunk=st.integers(1, 70),
       zeros=st.integers(0, 3), seed=st.integers(0, 2**31 - 1), integer_costs=st.booleans())
def test_chunked_emd_is_exact(n, m, K, chunk, zeros, seed, integer_costs):
    "Any small problem, ties and empty classes included: the dense exact objective, exact marginals, zero gap."
    rng = np.random.default_rng(seed)
    C = rng.integers(0, 4, (n, m)).astype(float) if integer_costs else rng.random((n, m))
    nu = rng.dirichlet(np.ones(m))
    nu[rng.choice(m, min(zeros, m - 1), replace=False)] = 0
    nu /= nu.sum()
    sol, P = chunked_emd(C, nu, n_candidates=K, chunk_rows=chunk), emd('uniform', nu, C, solver='pot')
    obj = float((P * C).sum())
    tol = 1e-9 * max(1.0, abs(obj))
    assert abs(sol.objective - obj) <= tol and abs(sol.gap) <= tol
    np.testing.assert_allclose(sol.plan.sum(1), np.full(n, 1 / n), atol=1e-12)
    np.testing.assert_allclose(sol.plan.sum(0), nu, atol=1e-12)
    assert sol.plan.min() >= 0


@given(n=st.integers(1, 60), m=st.integers(1, 8), chunk=st.integers(1, 70), sample=st.integers(1, 70),
       zeros=st.integers(0, 3), reg=st.floats(0.01, 1.0), rho=st.floats(0.01, 10.0), seed=st.integers(0, 2**31 - 1))
def test_semi_relaxed_keeps_the_rows(n, m, chunk, sample, zeros, reg, rho, seed):
    "Any small problem and sample: rows exactly 1/n, no NaN, nothing on a class of target 0; a full sample is the dense plan."
    from geotter.chunked import sparse_semi_relaxed, _cost_rows
    from geotter.entropic import sinkhorn_unbalanced
    rng = np.random.default_rng(seed)
    C = rng.random((n, m)) * 5
    t = rng.dirichlet(np.ones(m)); t[rng.choice(m, min(zeros, m - 1), replace=False)] = 0; t /= t.sum()
    sol = sparse_semi_relaxed(C, _cost_rows, t, reg=reg, rho=rho, sample=sample, chunk_rows=chunk, seed=seed % 1000)
    P = sol.plan.toarray()
    assert np.isfinite(P).all() and P.min() >= 0 and np.isfinite(sol.potentials[t > 0]).all()
    np.testing.assert_allclose(P.sum(1), np.full(n, 1 / n), rtol=1e-12)
    assert (P[:, t == 0] == 0).all()
    assert sol.stats['sample'] == min(n, sample)
    if sample >= n:
        ref = np.asarray(sinkhorn_unbalanced(C, b=t, reg=reg, rho=rho), dtype=np.float64)
        # the dense plan is float32: its exponent (g - C) / reg is rounded relative to (|C| + |g|) / reg
        rtol = 4 * np.finfo(np.float32).eps * (C.max() + np.abs(sol.potentials[t > 0]).max()) / reg
        np.testing.assert_allclose(P, ref, rtol=rtol, atol=1e-6 / n)


@pytest.mark.parametrize('kw, name', [(dict(reg=0.0), 'reg'), (dict(rho=-1.0), 'rho'), (dict(rho=float('nan')), 'rho'),
                                      (dict(cutoff=0.0), 'cutoff'), (dict(sample=0), 'sample'), (dict(sample=2.5), 'sample'), (dict(seed=-1), 'seed'),
                                      (dict(chunk_rows=0), 'chunk_rows')])
def test_semi_relaxed_names_a_bad_argument(kw, name):
    from geotter.chunked import sparse_semi_relaxed, _cost_rows
    C = np.random.default_rng(0).random((50, 4))
    args = dict(dict(reg=0.1, rho=1.0, sample=20), **kw)
    with pytest.raises((ValueError, TypeError), match=rf'^{name}'): sparse_semi_relaxed(C, _cost_rows, np.full(4, 0.25), **args)
    with pytest.raises(ValueError, match=r'^prior'): sparse_semi_relaxed(C, _cost_rows, None, reg=0.1, rho=1.0)


def test_long_passes_draw_bars(capsys, monkeypatch):
    "The chunked passes and k-means rounds draw a bar when asked or when their work reaches PROGRESS_WORK; small runs print nothing."
    import geotter.core
    from geotter.chunked import sparse_ot, sparse_semi_relaxed, _cost_rows
    rng = np.random.default_rng(0)
    C, t = rng.random((300, 5)), np.full(5, 0.2)
    sparse_semi_relaxed(C, _cost_rows, t, reg=0.1, rho=1.0); sparse_ot(C, _cost_rows, t); kmeans(C, 4)
    assert capsys.readouterr().err == ''
    sparse_semi_relaxed(C, _cost_rows, t, reg=0.1, rho=1.0, sample=100, progress=True)
    sparse_ot(C, _cost_rows, t, progress=True)
    err = capsys.readouterr().err
    assert 'semi-relaxed OT: class potentials from 100 rows' in err and 'semi-relaxed OT: rows' in err
    assert 'exact OT: 5 candidate classes per row' in err and 'exact OT: shortest paths, at most 5 certificate rounds' in err
    monkeypatch.setattr(geotter.core, 'PROGRESS_WORK', 0)          # every pass is long now
    kmeans(C, 4, max_train=50, method='torch')                       # faiss runs its own rounds
    err = capsys.readouterr().err
    assert 'k-means: Lloyd rounds, K=4' in err and 'k-means: nearest of 4 centres' in err
