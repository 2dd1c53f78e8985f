"""What a demanding new user tries on their own arrays, through the public entry points: each case once gave a silent
result that was not what the documentation promised, or a traceback from inside the package. Each must now give the
promised result, or one error (or warning) that names the argument."""
import warnings

import numpy as np
import pytest
import torch

import geotter as g

torch.set_num_threads(1)


def _batch(n=300, m=12, d=24, seed=0):
    "Unit-free embeddings of a batch around m class embeddings, and a non-uniform prior of the classes."
    rng = np.random.default_rng(seed)
    Y = rng.normal(size=(m, d)); prior = rng.dirichlet(np.ones(m))
    y = rng.choice(m, size=n, p=prior)
    return Y[y] + 0.8 * rng.normal(size=(n, d)), Y, prior


@pytest.mark.parametrize('preserve_prior', [False, 'project'])
def test_sinkhorn_plan_has_the_prior_as_class_totals(preserve_prior):
    "adapt(solver='sinkhorn'): the OT plan's class totals are the prior (not within Sinkhorn's tol), as with 'emd'."
    X, Y, prior = _batch()
    r = g.prepare(X, Y).adapt(prior, solver='sinkhorn', preserve_prior=preserve_prior)
    P = np.asarray(r.ot_plan, dtype=np.float64)
    np.testing.assert_allclose(P.sum(0), prior, rtol=1e-6, atol=0)
    np.testing.assert_allclose(P.sum(1), 1 / len(X), rtol=1e-6, atol=0)
    if preserve_prior: np.testing.assert_allclose(np.asarray(r.plan).sum(0), prior, rtol=1e-6, atol=0)


def test_steps_beyond_the_bound_are_refused_as_on_the_command_line():
    "geotter(steps=10**6) ran for minutes; now the options' bound refuses it at once, naming steps, in the API as in `geotter adapt`."
    from geotter.options import MAX_STEPS
    X, Y, prior = _batch(n=40, m=5)
    prep = g.prepare(X, Y)
    for call in (lambda: g.geotter(X, Y, prior, steps=10**6), lambda: prep.adapt(prior, steps=MAX_STEPS + 1)):
        with pytest.raises(ValueError, match=f'steps=(1000000|{MAX_STEPS + 1}); expected steps <= {MAX_STEPS}'): call()
    r = prep.adapt(prior, steps=MAX_STEPS)                       # the bound itself is valid: marginals kept, no NaN
    T = np.asarray(r.plan, dtype=np.float64)
    assert np.isfinite(T).all() and r.config['steps'] == MAX_STEPS
    np.testing.assert_allclose(T.sum(1), 1 / len(X), rtol=1e-6)


def test_k_beyond_the_batch_is_used_as_n_minus_1():
    "k larger than n - 1 is valid (the default k=7 on a batch of 6): the labels of k = n - 1, and config['k'] says so."
    X, Y, prior = _batch(n=6, m=3)
    for k in (6, 7, 1000):
        r = g.geotter(X, Y, prior, k=k)
        assert r.config['k'] == 5
        np.testing.assert_array_equal(r.labels, g.geotter(X, Y, prior, k=5).labels)
