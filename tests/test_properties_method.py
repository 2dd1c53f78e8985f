"""Property-based tests of GeoTTER's public entry points (`prepare`, `Prepared.adapt`, `geotter`, `run_method`).

For any finite valid batch the plans keep their marginals and hold no NaN, and a prepared batch adapted to a
prior gives exactly what a fresh `geotter` call gives; any invalid argument raises ValueError/TypeError naming it.
Sizes stay at most 40 x 10; every call must finish in under 10 s of CPU time."""
import functools, math, time

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st, assume

from geotter.core import Task
from geotter.method import geotter, prepare
from geotter.studies.experiments import run_method, METHODS

torch.set_num_threads(1)


@st.composite
def batches(draw, max_n=40, max_m=5, max_d=10):
    "A clustered batch: (X, Y, prior, k) with n > k >= 1 and a prior on the simplex (zeros allowed)."
    seed = draw(st.integers(0, 2**31 - 1))
    m = draw(st.integers(2, max_m)); d = draw(st.integers(2, max_d)); n = draw(st.integers(m + 3, max_n))
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(m, d))
    X = Y[rng.integers(m, size=n)] + draw(st.floats(0.05, 3.0)) * rng.normal(size=(n, d))
    w = rng.dirichlet(np.ones(m)) * (rng.random(m) > draw(st.floats(0, 0.5)))
    prior = w / w.sum() if w.sum() > 0 else np.full(m, 1 / m)
    return X, Y, prior, draw(st.integers(1, min(7, n - 1)))

def _timed(f):
    "f(), checking it used under 10 s of CPU time (a hang detector that a loaded machine does not trip)."
    t0 = time.process_time(); out = f(); assert time.process_time() - t0 < 10, 'a call on a tiny batch took over 10 s of CPU'
    return out



@given(batches(), st.sampled_from([1, 2]), st.floats(0, 1), st.floats(0, 1))
def test_marginals_and_no_nan(batch, steps, alpha, beta):
    X, Y, prior, k = batch
    res = _timed(lambda: geotter(X, Y, prior, k=k, steps=steps, alpha=alpha, beta=beta))
    n, m = X.shape[0], Y.shape[0]
    for plan in (res.ot_plan, res.plan): assert np.isfinite(plan).all() and (plan >= -1e-15).all()
    np.testing.assert_allclose(res.ot_plan.sum(1), np.full(n, 1 / n), atol=1e-9)
    np.testing.assert_allclose(res.ot_plan.sum(0), prior, atol=1e-9)
    np.testing.assert_allclose(res.plan.sum(1), np.full(n, 1 / n), atol=1e-9)     # smoothing keeps row masses
    assert res.labels.shape == (n,) and ((res.labels >= 0) & (res.labels < m)).all()


@given(batches())
def test_preserve_prior_keeps_class_totals(batch):
    X, Y, prior, k = batch
    res = _timed(lambda: geotter(X, Y, prior, k=k, preserve_prior='cost'))
    np.testing.assert_allclose(res.plan.sum(0), prior, atol=1e-9)
    proj = _timed(lambda: geotter(X, Y, prior, k=k, preserve_prior='project'))
    np.testing.assert_allclose(proj.plan.sum(0) / proj.plan.sum(), prior, atol=1e-6)


@given(batches(), st.lists(st.floats(0.01, 1), min_size=5, max_size=5))
def test_prepared_batch_equals_fresh_call(batch, w):
    X, Y, prior, k = batch
    prep = prepare(X, Y, k=k)
    other = np.asarray(w[:Y.shape[0]]) / sum(w[:Y.shape[0]])
    for p in (prior, other):
        a, b = prep.adapt(p), geotter(X, Y, p, k=k)
        np.testing.assert_array_equal(a.labels, b.labels); np.testing.assert_array_equal(a.plan, b.plan)


@pytest.mark.filterwarnings("ignore:.*did not converge")   # validity of the labels, not convergence, is tested here
@given(batches(), st.sampled_from(METHODS))
def test_every_method_gives_valid_labels(batch, method):
    X, Y, prior, k = batch
    assume(prior.min() > 0)
    labels = _timed(lambda: run_method(method, Task('t', labels=np.zeros(len(X), int), X=X, Y=Y), prior, **({'k': k} if 'geotter' in method else {})))
    assert labels.shape == (len(X),) and ((labels >= 0) & (labels < Y.shape[0])).all()


BAD = [(dict(cost_temperature=-0.1), 'cost_temperature'), (dict(cost_temperature=0), 'cost_temperature'), (dict(cost_temperature=math.nan), 'cost_temperature'),
       (dict(cost_temperature=math.inf), 'cost_temperature'), (dict(cost_temperature=True), 'cost_temperature'), (dict(cost_temperature='hot'), 'cost_temperature'),
       (dict(beta=1.5), 'beta'), (dict(beta=-0.1), 'beta'), (dict(beta='best'), 'beta'), (dict(beta=math.nan), 'beta'),
       (dict(alpha=-0.1), 'alpha'), (dict(alpha=2), 'alpha'), (dict(alpha='auto-ish'), 'alpha'),
       (dict(k=0), 'k'), (dict(k=2.5), 'k'), (dict(steps=-1), 'steps'), (dict(steps=1.5), 'steps'),
       (dict(n_clusters=0), 'n_clusters'), (dict(n_clusters=1.5), 'n_clusters'), (dict(seed=-1), 'seed'), (dict(n_init=0), 'n_init'),
       (dict(include_self='yes'), 'include_self'), (dict(preserve_prior='yes'), 'preserve_prior'), (dict(solver='simplex'), 'solver'),
       (dict(rho=1.0), 'rho'), (dict(reg=-1.0, solver='sinkhorn'), 'reg'), (dict(logits=np.zeros((3, 3))), 'logits'),
       (dict(prior_weight=math.nan), 'prior_weight')]

@pytest.mark.parametrize('bad,name', BAD, ids=[f'{n}={list(b.values())[0]!r}' for b, n in BAD])
def test_invalid_option_names_the_argument(bad, name):
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(4, 8)); X = Y[rng.integers(4, size=40)] + 0.7 * rng.normal(size=(40, 8))
    with pytest.raises((ValueError, TypeError), match=name): geotter(X, Y, np.full(4, 0.25), **bad)


def test_k_beyond_the_batch_is_capped():
    "A sample has at most n - 1 neighbours: a larger k (the default 7 on a batch of 5 too) is capped, not an error."
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(4, 8)); X = Y[rng.integers(4, size=40)] + 0.7 * rng.normal(size=(40, 8))
    assert geotter(X, Y, np.full(4, 0.25), k=10**6).config['k'] == 39
    np.testing.assert_array_equal(geotter(X, Y, np.full(4, 0.25), k=10**6).labels, geotter(X, Y, np.full(4, 0.25), k=39).labels)
    assert geotter(X[:5], Y, np.full(4, 0.25)).config['k'] == 4


@pytest.mark.parametrize('prior,word', [([.5, .5, 0], 'prior'), ([.5, .6, -.1, 0], 'prior'), ([.5, .5, .5, .5], 'prior'),
                                        ([np.nan, .5, .25, .25], 'prior'), ('skewed', 'prior')])
def test_invalid_prior_names_it(prior, word):
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(4, 8)); X = Y[rng.integers(4, size=40)] + 0.7 * rng.normal(size=(40, 8))
    with pytest.raises((ValueError, TypeError), match=word): geotter(X, Y, prior)
    with pytest.raises((ValueError, TypeError), match=word): prepare(X, Y).adapt(prior)


@pytest.mark.parametrize('X,Y,word', [(np.zeros((0, 3)), np.ones((2, 3)), 'X'), (np.ones((5, 3)), np.ones((2, 4)), 'Y'),
                                      (np.full((5, 3), np.nan), np.ones((2, 3)), 'X'), (np.ones(5), np.ones((2, 3)), 'X'),
                                      (np.array([['a'] * 3] * 5), np.ones((2, 3)), 'X')])
def test_invalid_embeddings_name_them(X, Y, word):
    with pytest.raises((ValueError, TypeError), match=word): geotter(X, Y, 'uniform', k=2)


@functools.lru_cache(None)
def _compiled_chunked():
    "The chunked solver's numba kernels compiled (or loaded from their cache) once per process, outside the timed calls."
    rng = np.random.default_rng(0)
    return geotter(rng.normal(size=(20, 4)), rng.normal(size=(3, 4)), 'uniform', k=3, backend='chunked')


@given(batches(), st.sampled_from([1, 2]), st.floats(0, 1), st.floats(0, 1), st.booleans())
def test_chunked_backend_gives_the_dense_labels(batch, steps, alpha, beta, float32):
    "Both backends solve the same exact problem on the same geometry: same labels, plans equal to rounding, marginals kept."
    X, Y, prior, k = batch
    _compiled_chunked()
    if float32: X, Y = X.astype(np.float32), Y.astype(np.float32)
    kw = dict(k=k, steps=steps, alpha=alpha, beta=beta, knn_method='torch')
    dense = _timed(lambda: geotter(X, Y, prior, backend='dense', **kw))
    chunked = _timed(lambda: geotter(X, Y, prior, backend='chunked', **kw))
    np.testing.assert_array_equal(chunked.labels, dense.labels)
    np.testing.assert_allclose(chunked.plan.toarray(), dense.plan, atol=1e-6 if float32 else 1e-12)
    np.testing.assert_allclose(chunked.ot_plan.sum(0), prior, atol=1e-6 if float32 else 1e-12)
    np.testing.assert_allclose(chunked.plan.sum(1), np.full(len(X), 1 / len(X)), atol=1e-6 if float32 else 1e-12)
    assert chunked.cost is None and abs(chunked.ot.gap) <= 1e-9 and dense.ot is None


@given(batches(), st.integers(1, 7))
def test_adapt_overrides_the_prepared_k(batch, k2):
    "A batch prepared with one k and adapted with another gives what `geotter` gives with the other (no duplicate k)."
    X, Y, prior, k = batch
    k2 = min(k2, len(X) - 1)
    a, b = prepare(X, Y, k=k).adapt(prior, k=k2), geotter(X, Y, prior, k=k2)
    np.testing.assert_array_equal(a.labels, b.labels); np.testing.assert_array_equal(a.plan, b.plan)
    assert a.config['k'] == k2


CHUNKED_REFUSED = [(dict(solver='sinkhorn'), r"^solver='sinkhorn' is not available on backend='chunked'"),
                   (dict(preserve_prior='project'), r"^preserve_prior='project' is not available on backend='chunked'"),
                   (dict(preserve_prior='cost'), r"^preserve_prior='cost' is not available on backend='chunked'"),
                   (dict(beta='auto'), r"^beta='auto' is not available on backend='chunked'")]

@pytest.mark.parametrize('bad,message', CHUNKED_REFUSED, ids=[m.split()[0][1:] for _, m in CHUNKED_REFUSED])
def test_chunked_backend_refuses_what_it_lacks(bad, message):
    "Every option the chunked backend does not have is one ValueError naming the option and the backend, before any work."
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(4, 8)); X = Y[rng.integers(4, size=40)] + 0.7 * rng.normal(size=(40, 8))
    with pytest.raises(ValueError, match=message): geotter(X, Y, np.full(4, 0.25), backend='chunked', **bad)
    with pytest.raises(ValueError, match=r"^backend='sparse'; expected one of \('auto', 'dense', 'chunked'\)"):
        prepare(X, Y, backend='sparse')


def _calls(f, names):
    "f(), counting the calls of the functions `names` of geotter.core."
    import sys
    counts = dict.fromkeys(names, 0)
    def prof(frame, event, arg):
        code = frame.f_code
        if event == 'call' and code.co_name in counts and code.co_filename.endswith('core.py'): counts[code.co_name] += 1
    sys.setprofile(prof)
    try: f()
    finally: sys.setprofile(None)
    return counts


def test_run_method_validates_and_normalizes_once():
    "GeoTTER by name forms no zero-shot logits and normalizes X, Y once (plus once in each of k-means and the k-NN search)."
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(5, 16)); X = Y[rng.integers(5, size=300)] + rng.normal(size=(300, 16))
    task = Task('t', labels=np.zeros(300, int), X=X, Y=Y)
    run_method('geotter', task, 'uniform')                                     # compile outside the count
    n = _calls(lambda: run_method('geotter', task, 'uniform'), ('l2_normalize', 'check_matrix', 'zero_shot_logits'))
    assert n['zero_shot_logits'] == 0 and n['l2_normalize'] <= 5 and n['check_matrix'] <= 6, n


@pytest.mark.parametrize('f', [1e-290, 1e290])
def test_auto_beta_at_any_scale(f):
    "beta='auto' measures the OT cost's scale without overflow: any temperature or logit scale float64 holds gives a beta in [0, 1]."
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(3, 6)); X = Y[rng.integers(3, size=30)] + 0.3 * rng.normal(size=(30, 6))
    for kw in (dict(cost_temperature=0.1 / f), dict(logits=X @ Y.T * f)):
        res = geotter(X, Y, [.2, .3, .5], beta='auto', **kw)
        assert 0 <= res.config['beta'] <= 1 and np.isfinite(res.plan).all()
        np.testing.assert_allclose(res.plan.sum(1), 1 / 30, rtol=1e-9)


@given(batches(), st.floats(0, 3))
def test_second_pass_keeps_the_marginals(batch, w):
    "With a given prior and refine=w the plan is still exact onto the prior; with the ratio unknown the rows stay at 1/n."
    X, Y, prior, k = batch
    n = X.shape[0]
    res = _timed(lambda: geotter(X, Y, prior, k=k, refine=w))
    assert np.isfinite(res.plan).all() and res.config['refine'] == w
    np.testing.assert_allclose(res.ot_plan.sum(0), prior, atol=1e-9)
    np.testing.assert_allclose(res.ot_plan.sum(1), np.full(n, 1 / n), atol=1e-9)
    unknown = _timed(lambda: geotter(X, Y, k=k, refine=w))
    assert np.isfinite(unknown.plan).all() and np.isfinite(unknown.ot_plan).all()
    np.testing.assert_allclose(unknown.ot_plan.sum(1), np.full(n, 1 / n), atol=1e-6)


@given(st.integers(0, 2**31 - 1), st.integers(1, 30), st.integers(1, 6), st.integers(1, 8), st.floats(0, 5), st.floats(0.01, 3))
def test_class_mean_logits_is_finite_and_leaves_classes_out_of_play(seed, n, m, d, w, min_mass):
    from geotter.pipeline import class_mean_logits
    rng = np.random.default_rng(seed)
    X, L = rng.normal(size=(n, d)), 30 * rng.normal(size=(n, m))
    P = rng.dirichlet(np.full(m, 0.3), n) * (rng.random((n, 1)) > 0.1)          # some rows of zero mass
    out = class_mean_logits(X, L, P, w, min_mass)
    assert out.shape == (n, m) and np.isfinite(out).all()
    R = P / np.maximum(P.sum(1, keepdims=True), 1e-300)
    out_of_play = R.sum(0) < min_mass
    np.testing.assert_array_equal(out[:, out_of_play], L[:, out_of_play])
    if w == 0 or (~out_of_play).sum() < 2: np.testing.assert_array_equal(out, L)


@pytest.mark.parametrize('args,name', [
    ((np.full((4, 2), np.nan), np.zeros((4, 3)), np.ones((4, 3))), 'X'),
    ((np.ones((4, 2)), np.zeros((4, 3)), np.full((4, 3), np.inf)), 'plan'),
    ((np.ones((4, 2)), np.zeros((5, 3)), np.ones((4, 3))), 'X'),
    ((np.ones((4, 2)), np.zeros((4, 3)), -np.ones((4, 3))), 'plan'),
    ((np.ones((4, 2)), np.zeros(3), np.ones((4, 3))), 'logits'),
    ((np.zeros((4, 2)), np.zeros((4, 3)), np.ones((4, 3))), 'X row 0 is all zeros')])
def test_class_mean_logits_names_a_bad_argument(args, name):
    from geotter.pipeline import class_mean_logits
    with pytest.raises((ValueError, TypeError), match=name): class_mean_logits(*args)


@pytest.mark.parametrize('kw,name', [(dict(weight=math.nan), 'weight'), (dict(weight=-1), 'weight'), (dict(min_mass=0), 'min_mass')])
def test_class_mean_logits_names_a_bad_option(kw, name):
    from geotter.pipeline import class_mean_logits
    with pytest.raises((ValueError, TypeError), match=name): class_mean_logits(np.ones((4, 2)), np.zeros((4, 3)), np.ones((4, 3)), **kw)
