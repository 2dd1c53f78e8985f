"""Property-based tests of the transductive baselines (`geotter.peers`): TransCLIP-ZS, ZLaP, StatA, MOON and TDA.

For any small batch of embeddings (including zero and constant dimensions and duplicated samples),
every method returns finite class probabilities (rows on the simplex) of the input's type, is
equivariant to a relabelling of the samples, and rejects bad arguments with an error that names them.
StatA also keeps them on batches of any size and class content (n = 1, n = 2, n < m, one class), never
increases its objective in its exact form, and keeps the classes predicted for no sample at their anchors.
MOON (both readings, both normalisers) and TDA (both orders, on one batch and carried over a stream) keep the same
properties on the same batches, and on batches of one or two samples.
"""
import math

import numpy as np
import pytest
import torch
from hypothesis import assume, given, strategies as st

from geotter.core import predict
from geotter.peers import transclip_zs, zlap, zlap_graph, normalized_adjacency, stata, moon, tda, StreamingTDA
from geotter.peers import _affinity, _anchor_variance, _inputs, _stata_run, _variance_floor

METHODS = {'transclip-zs': transclip_zs, 'zlap': zlap, 'stata': stata}
pytestmark = pytest.mark.filterwarnings('ignore:.*no path to a class node')   # expected on batches with isolated samples

@pytest.fixture(autouse=True, scope='module')
def _one_thread():
    "Tiny batches: one intra-op thread (on a loaded machine, waking the thread pool costs more than the work); restored after."
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)

@st.composite
def batches(draw, min_n=6, max_n=40):
    "A seeded batch (X, Y): clustered samples, optional all-zero and constant dimensions, optional duplicates."
    n, m, d = draw(st.integers(min_n, max_n)), draw(st.integers(2, 5)), draw(st.integers(2, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    Y = rng.normal(size=(m, d))
    X = Y[rng.integers(m, size=n)] * draw(st.floats(0.0, 3.0)) + rng.normal(size=(n, d))
    zeros, const = draw(st.integers(0, 2)), draw(st.booleans())
    if zeros:
        X, Y = np.hstack([X, np.zeros((n, zeros))]), np.hstack([Y, np.zeros((m, zeros))])
    if const:
        X, Y = np.hstack([X, np.full((n, 1), 0.5)]), np.hstack([Y, rng.normal(size=(m, 1))])
    if draw(st.booleans()): X[1] = X[0]                   # a duplicated sample
    return X, Y

def _is_probability(P, n, m, atol=1e-9):
    assert P.shape == (n, m)
    assert np.isfinite(P).all(), 'NaN or inf in the output'
    assert (P >= 0).all()
    np.testing.assert_allclose(P.sum(1), 1.0, atol=atol)

@pytest.mark.parametrize('name', METHODS)
@given(batch=batches())
def test_valid_probabilities(name, batch):
    "Finite rows on the simplex, numpy in -> numpy out, for any batch (zero/constant dims, duplicates)."
    X, Y = batch
    P = METHODS[name](X, Y, k=3)
    assert isinstance(P, np.ndarray) and P.dtype == np.float64
    _is_probability(P, len(X), len(Y))

@pytest.mark.parametrize('name', METHODS)
@given(batch=batches(), seed=st.integers(0, 1000))
def test_permutation_equivariance(name, batch, seed):
    "Relabelling the samples permutes the output rows: f(X[perm])[i] == f(X)[perm[i]]."
    X, Y = batch
    X = X + 1e-3 * np.random.default_rng(seed).normal(size=X.shape)   # no exact k-NN ties
    perm = np.random.default_rng(seed).permutation(len(X))
    np.testing.assert_allclose(METHODS[name](X[perm], Y, k=3), METHODS[name](X, Y, k=3)[perm], atol=1e-8)

@pytest.mark.parametrize('name', METHODS)
@given(batch=batches(max_n=20))
def test_torch_matches_numpy(name, batch):
    "torch in -> torch out (same dtype), equal to the numpy result; labels via `predict` agree."
    X, Y = batch
    P = METHODS[name](X, Y, k=3)
    T = METHODS[name](torch.as_tensor(X), torch.as_tensor(Y), k=3)
    assert isinstance(T, torch.Tensor) and T.dtype == torch.float64
    np.testing.assert_allclose(T.numpy(), P, atol=1e-10)
    np.testing.assert_array_equal(predict(T).numpy(), predict(P))

@pytest.mark.parametrize('name', METHODS)
@given(batch=batches(max_n=20))
def test_float32_stays_float32(name, batch):
    "float32 torch in -> finite float32 probabilities out."
    X, Y = batch
    T = METHODS[name](torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(Y, dtype=torch.float32), k=3)
    assert T.dtype == torch.float32
    _is_probability(T.double().numpy(), len(X), len(Y), atol=1e-5)

@pytest.mark.parametrize('name', METHODS)
@given(batch=batches(max_n=20), zeros=st.integers(1, 3))
def test_zero_dimensions_change_nothing(name, batch, zeros):
    "Dimensions that are zero for every sample and class leave the output unchanged (the variance floor)."
    X, Y = batch
    pad = lambda A: np.hstack([A, np.zeros((len(A), zeros))])
    np.testing.assert_allclose(METHODS[name](pad(X), pad(Y), k=3), METHODS[name](X, Y, k=3), atol=1e-9)

@given(batch=batches(max_n=20), alpha=st.floats(0.0, 0.9))
def test_zlap_closed_form(batch, alpha):
    "ZLaP's CG scores equal the closed form (I - alpha S)^-1 E, normalized per sample, when every sample reaches a class."
    X, Y = batch
    m = len(Y)
    S = normalized_adjacency(zlap_graph(X, Y, k=3)).to_dense()
    Z = torch.linalg.inv(torch.eye(S.shape[0], dtype=S.dtype) - alpha * S)[m:, :m].numpy()
    ok = Z.sum(1) > 1e-4                                   # rows whose propagated mass is well above CG's tolerance
    P = zlap(X, Y, k=3, alpha=alpha, tol=1e-13)
    np.testing.assert_allclose(P[ok], Z[ok] / Z[ok].sum(1, keepdims=True), atol=1e-7)

BAD = [('transclip-zs', dict(k=0), 'k=0'), ('transclip-zs', dict(lam=-0.5), 'lam=-0.5'),
       ('transclip-zs', dict(temperature=0.0), 'temperature=0.0'), ('transclip-zs', dict(max_iter=-1), 'max_iter=-1'),
       ('transclip-zs', dict(n_confident=0), 'n_confident=0'), ('transclip-zs', dict(var_floor=-1.0), 'var_floor=-1.0'),
       ('transclip-zs', dict(logits=np.zeros((3, 2))), 'logits has 3 rows'),
       ('zlap', dict(k=0), 'k=0'), ('zlap', dict(alpha=1.0), 'alpha=1.0'), ('zlap', dict(alpha=-0.1), 'alpha=-0.1'),
       ('zlap', dict(gamma=0.0), 'gamma=0.0'), ('zlap', dict(tol=0.0), 'tol=0.0'), ('zlap', dict(max_iter=0), 'max_iter=0'),
       ('stata', dict(k=0), 'k=0'), ('stata', dict(alpha=-1.0), 'alpha=-1.0'), ('stata', dict(alpha=math.nan), 'alpha=nan'),
       ('stata', dict(lam=-0.5), 'lam=-0.5'), ('stata', dict(laplacian=-1.0), 'laplacian=-1.0'),
       ('stata', dict(temperature=0.0), 'temperature=0.0'), ('stata', dict(max_iter=-1), 'max_iter=-1'),
       ('stata', dict(z_iter=0), 'z_iter=0'), ('stata', dict(var_floor=0.0), 'var_floor=0.0'),
       ('stata', dict(soft_counts='yes'), "soft_counts='yes'"), ('stata', dict(normalize_means=1), 'normalize_means=1'),
       ('stata', dict(logits=np.zeros((3, 2))), 'logits has 3 rows')]

@pytest.mark.parametrize('name,kw,msg', BAD)
def test_bad_arguments_are_named(name, kw, msg):
    "A bad option raises ValueError naming the argument and the value given."
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=msg.replace('(', r'\(')):
        METHODS[name](rng.normal(size=(10, 4)), rng.normal(size=(2, 4)), **kw)

@pytest.mark.parametrize('name', METHODS)
@given(n=st.integers(3, 12), bad=st.sampled_from(['nan', 'inf', 'shape', 'zero_row', 'k_too_large', 'strings']))
def test_bad_inputs_are_named(name, n, bad):
    "Bad X or Y (NaN/inf, mismatched dimension, all-zero row, strings, k >= n) fail with the argument's name."
    rng = np.random.default_rng(n)
    X, Y, k = rng.normal(size=(n, 4)), rng.normal(size=(3, 4)), 2
    if bad == 'nan': X[0, 0], msg = np.nan, 'X has 1 NaN'
    if bad == 'inf': Y[1, 2], msg = np.inf, 'Y has 1 NaN or infinite'
    if bad == 'shape': Y, msg = Y[:, :3], 'Y has 3 columns; expected 4'
    if bad == 'zero_row': X[n - 1], msg = 0.0, f'X row {n - 1} is all zeros'
    if bad == 'k_too_large': k, msg = n, f'k={n} but the batch has n={n}'
    if bad == 'strings': Y, msg = Y.astype(str), 'Y has dtype <U'
    with pytest.raises((ValueError, TypeError), match=msg):
        METHODS[name](X, Y, k=k)


# ---------------------------------------------------------------------------------------------------- StatA
@st.composite
def any_batches(draw):
    "A seeded batch of any size and class content: n from 1, m up to 8, samples from 1 to m classes, optional duplicates."
    n, m, d = draw(st.integers(1, 12)), draw(st.integers(1, 8)), draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    Y = rng.normal(size=(m, d))
    present = rng.choice(m, size=draw(st.integers(1, m)), replace=False)
    X = Y[rng.choice(present, size=n)] * draw(st.floats(0.0, 3.0)) + draw(st.floats(0.0, 1.0)) * rng.normal(size=(n, d))
    X[np.linalg.norm(X, axis=1) == 0, 0] = 1.0                       # an all-zero row is invalid input, tested elsewhere
    if n > 1 and draw(st.booleans()): X[1] = X[0]
    return X, Y

@given(batch=any_batches(), soft=st.booleans(), alpha=st.sampled_from([0.0, 1.0, 1e6, math.inf]))
def test_stata_any_batch(batch, soft, alpha):
    "StatA's default k adapts to n: finite rows on the simplex for n = 1, n = 2, n < m, one class, alpha from 0 to inf."
    X, Y = batch
    _is_probability(stata(X, Y, soft_counts=soft, alpha=alpha), len(X), len(Y))

@given(batch=batches(max_n=16), seed=st.integers(0, 1000))
def test_stata_objective_never_increases(batch, seed):
    "With soft counts and the exact mean step, no block step (each z-update included) increases StatA's objective."
    X, Y = batch
    F, T, _ = _inputs(X + 1e-3 * np.random.default_rng(seed).normal(size=X.shape), Y)
    log_yhat = torch.log_softmax(F @ T.T / 0.1, 1)
    n = F.shape[0]
    idx, w = torch.arange(n).repeat(n, 1), F @ F.T                        # the PSD Gram affinity: the z-step majorizes
    trace = []
    _stata_run(F, T, log_yhat, idx, w, alpha=1.0, lam=1.0, laplacian=1.0, max_iter=5, z_iter=1, soft_counts=True,
               normalize_means=False, var_floor=1e-3, trace=trace)
    vals = np.array([v for _, v in trace])
    assert np.isfinite(vals).all()
    assert (np.diff(vals) <= 1e-9 * max(1.0, np.abs(vals).max())).all(), np.diff(vals).max()

@given(batch=any_batches())
def test_stata_unpredicted_classes_keep_their_anchor(batch):
    "With the default hard counts, every class predicted for no sample ends at its anchor: mean t_c and variance sigma_0^2, exactly."
    X, Y = batch
    F, T, _ = _inputs(X, Y)
    log_yhat = torch.log_softmax(F @ T.T / 0.01, 1)
    idx, w = _affinity(F, min(3, len(F) - 1)) if len(F) > 1 else (torch.zeros((1, 0), dtype=torch.int64), F.new_zeros((1, 0)))
    run = lambda rounds: _stata_run(F, T, log_yhat, idx, w, alpha=1.0, lam=1.0, laplacian=1.0, max_iter=rounds, z_iter=5,
                                    soft_counts=False, normalize_means=True, var_floor=1e-3)
    z_last, _, _ = run(2)                  # the assignments the third (last) parameter step of run(3) counts from
    _, mu, var = run(3)
    none = torch.bincount(z_last.argmax(1), minlength=len(T)) == 0
    var0 = _anchor_variance(F, T, log_yhat.exp(), _variance_floor(F, 1e-3)[0])
    assert torch.equal(mu[none], T[none]) and torch.equal(var[none], var0.expand_as(var)[none])


# ------------------------------------------------------------------ references from the documented equations
def _brute_neighbours(F, k, include_self):
    "The k most cosine-similar rows of each row of F (self first, or excluded), by a full sort."
    S = F @ F.T
    np.fill_diagonal(S, np.inf if include_self else -np.inf)
    return np.argsort(-S, 1, kind='stable')[:, :k]


def _softmax(Z): Z = Z - Z.max(1, keepdims=True); E = np.exp(Z); return E / E.sum(1, keepdims=True)


def transclip_reference(X, Y, k, lam, T, max_iter, z_iter, n_confident, var_floor, normalize_means, s=50.0):
    "TransCLIP-ZS's block iterations written out densely in numpy from the notebook's update equations."
    F, Yn = X / np.linalg.norm(X, axis=1, keepdims=True), Y / np.linalg.norm(Y, axis=1, keepdims=True)
    n, d = F.shape
    log_yhat = np.log(_softmax(F @ Yn.T / T))
    idx = _brute_neighbours(F, k, False)
    W = np.zeros((n, n)); W[np.arange(n)[:, None], idx] = (F[:, None, :] * F[idx]).sum(-1)
    Ws = W + W.T
    v = F.var(0); floor = max(var_floor * v[v > 0].mean(), np.finfo(float).tiny ** 0.5); d_eff = max(1, int((v > floor).sum()))
    z = np.exp(log_yhat)
    top = np.argsort(-z, 0, kind='stable')[:n_confident]
    mu = np.stack([(F[top[:, c]] * z[top[:, c], c:c + 1]).mean(0) for c in range(len(Yn))])
    mu /= np.linalg.norm(mu, axis=1, keepdims=True)
    var = np.full(d, max(1 / d_eff, floor))
    for it in range(max_iter + 1):
        ll = -0.5 * (((F[:, None, :] - mu[None]) ** 2 / var).sum(-1) + np.log(var).sum())
        for _ in range(z_iter): z = _softmax(lam * log_yhat + ll / s + Ws @ z / (2 * k))
        if it == max_iter: break
        mu = z.T @ F / z.sum(0)[:, None]
        if normalize_means: mu /= np.linalg.norm(mu, axis=1, keepdims=True)
        var = np.maximum((z[:, :, None] * (F[:, None, :] - mu[None]) ** 2).sum((0, 1)) / n, floor)
    return z


@given(batch=batches(min_n=10, max_n=30), lam=st.sampled_from([0.5, 1.0, 2.0]), normalize=st.booleans(),
       z_iter=st.integers(1, 3), max_iter=st.integers(0, 3))
def test_transclip_matches_its_equations(batch, lam, normalize, z_iter, max_iter):
    "Every option (lam != 1 included) changes the result exactly as the update equations say."
    X, Y = batch
    X = X + 1e-3 * np.random.default_rng(len(X)).normal(size=X.shape)    # no exact k-NN ties
    assume((np.abs(X).sum(1) > 0).all())
    T = 0.5                                       # unsaturated text predictions: no ties among the most confident samples
    got = transclip_zs(X, Y, k=3, lam=lam, temperature=T, max_iter=max_iter, z_iter=z_iter, n_confident=4, normalize_means=normalize)
    want = transclip_reference(X, Y, 3, lam, T, max_iter, z_iter, 4, 1e-3, normalize)
    np.testing.assert_allclose(got, want, atol=1e-8)


def zlap_reference(X, Y, k, gamma, alpha, include_self=True):
    "ZLaP's scores from the definition: dense graph, D^-1/2 W D^-1/2 without self-loops, (I - alpha S)^-1, per-sample normalization."
    Xn, Yn = X / np.linalg.norm(X, axis=1, keepdims=True), Y / np.linalg.norm(Y, axis=1, keepdims=True)
    n, m = len(Xn), len(Yn); N = n + m
    W = np.zeros((N, N))
    for i, nb in enumerate(_brute_neighbours(Xn, k, include_self)):
        for j in nb:
            if j != i: W[m + i, m + j] += max(0.0, Xn[i] @ Xn[j])
        cos = Xn[i] @ Yn.T
        for c in np.argsort(-cos, kind='stable')[:min(k, m)]: W[m + i, c] += max(0.0, cos[c]) ** gamma
    W = W + W.T
    deg = W.sum(1); dm = 1 / np.sqrt(np.where(deg > 0, deg, 1))
    S = dm[:, None] * W * dm[None]
    Z = np.linalg.inv(np.eye(N) - alpha * S)[m:, :m].clip(0)
    tot = Z.sum(1, keepdims=True)
    return np.where(tot > 0, Z / np.where(tot > 0, tot, 1), _softmax(Xn @ Yn.T / 0.01))


@pytest.mark.filterwarnings('ignore:.*no path to a class node')
@given(batch=batches(max_n=25), gamma=st.sampled_from([1.0, 3.0, 5.0]), alpha=st.sampled_from([0.2, 0.5, 0.8]),
       k=st.integers(2, 4), include_self=st.booleans())
def test_zlap_matches_its_definition(batch, gamma, alpha, k, include_self):
    "The graph (sample-sample cos, sample-class cos^gamma, symmetrized) and the propagation, against a dense inverse."
    X, Y = batch
    X = X + 1e-3 * np.random.default_rng(len(X)).normal(size=X.shape)    # no exact k-NN ties
    got = zlap(X, Y, k=k, gamma=gamma, alpha=alpha, include_self=include_self, tol=1e-13, max_iter=1000)
    want = zlap_reference(X, Y, k, gamma, alpha, include_self)
    np.testing.assert_allclose(got, want, atol=1e-7)


# ---------------------------------------------------------------------------------------------------- MOON and TDA

ONLINE = {'moon': lambda X, Y, **kw: moon(X, Y, **kw), 'moon-unit': lambda X, Y, **kw: moon(X, Y, anchor='unit', **kw),
          'moon-debye': lambda X, Y, **kw: moon(X, Y, normaliser='debye', **kw), 'tda': lambda X, Y, **kw: tda(X, Y, **kw),
          'tda-each': lambda X, Y, **kw: tda(X, Y, after_batch=False, **kw)}

@pytest.mark.parametrize('name', ONLINE)
@given(batch=batches(min_n=2), cut=st.integers(1, 2))
def test_moon_tda_valid_probabilities(name, batch, cut):
    "Finite rows on the simplex, numpy in -> numpy out, on any batch and on its first one or two samples."
    X, Y = batch
    for Xb in (X, X[:cut]):
        P = ONLINE[name](Xb, Y)
        assert isinstance(P, np.ndarray) and P.dtype == np.float64
        _is_probability(P, len(Xb), len(Y), atol=1e-8)

@pytest.mark.parametrize('name', ['moon', 'moon-unit', 'tda'])
@given(batch=batches(), seed=st.integers(0, 1000))
def test_moon_tda_permutation_equivariance(name, batch, seed):
    "Relabelling the samples permutes the output rows (TDA scored after the whole batch entered its caches)."
    X, Y = batch
    X = X + 1e-3 * np.random.default_rng(seed).normal(size=X.shape)   # no exact k-NN or entropy ties
    perm = np.random.default_rng(seed).permutation(len(X))
    np.testing.assert_allclose(ONLINE[name](X[perm], Y), ONLINE[name](X, Y)[perm], atol=1e-8)

@pytest.mark.parametrize('name', ONLINE)
@given(batch=batches(max_n=20))
def test_moon_tda_torch_and_float32(name, batch):
    "torch in -> torch out, equal to numpy; float32 in -> finite float32 probabilities out."
    X, Y = batch
    P, T = ONLINE[name](X, Y), ONLINE[name](torch.as_tensor(X), torch.as_tensor(Y))
    assert isinstance(T, torch.Tensor) and T.dtype == torch.float64
    np.testing.assert_allclose(T.numpy(), P, atol=1e-10)
    T32 = ONLINE[name](torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(Y, dtype=torch.float32))
    assert T32.dtype == torch.float32
    _is_probability(T32.double().numpy(), len(X), len(Y), atol=1e-5)

@given(batch=batches(), b=st.integers(1, 16))
def test_streaming_tda_state_is_bounded(batch, b):
    "Carried over a stream, TDA's caches never hold more than their capacity: the state's size does not grow."
    X, Y = batch
    model = StreamingTDA(Y)
    size = model.state_size()
    for s in range(0, len(X), b):
        labels = model.partial_fit_predict(X[s:s + b])
        assert labels.shape == (len(X[s:s + b]),) and ((0 <= labels) & (labels < len(Y))).all()
        assert model.state_size() == size
    assert model.cache.n_seen == len(X)

BAD_ONLINE = [(moon, dict(k=-1), 'k=-1'), (moon, dict(n_iter=0), 'n_iter=0'), (moon, dict(counts='all'), "counts='all'"),
              (moon, dict(anchor='text'), "anchor='text'"), (moon, dict(normaliser='exact'), "normaliser='exact'"),
              (moon, dict(temperature=0.0), 'temperature=0.0'), (moon, dict(logits=np.zeros((3, 2))), 'logits has 3 rows'),
              (tda, dict(pos_capacity=-1), 'pos_capacity=-1'), (tda, dict(neg_alpha=-0.1), 'neg_alpha=-0.1'),
              (tda, dict(entropy_band=(0.3,)), 'entropy_band=(0.3,)'), (tda, dict(neg_probability=1.5), 'neg_probability=1.5'),
              (tda, dict(after_batch='yes'), "after_batch='yes'"), (tda, dict(logits=np.zeros((3, 2))), 'logits has 3 rows')]

@pytest.mark.parametrize('f,kw,msg', BAD_ONLINE, ids=[f'{f.__name__}-{m}' for f, _, m in BAD_ONLINE])
def test_moon_tda_bad_arguments_are_named(f, kw, msg):
    rng = np.random.default_rng(0)
    with pytest.raises((ValueError, TypeError), match=msg.replace('(', r'\(').replace(')', r'\)')):
        f(rng.normal(size=(10, 4)), rng.normal(size=(2, 4)), **kw)
