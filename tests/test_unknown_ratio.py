"""Property-based tests of GeoTTER with the label ratio unknown, on batches of any size and class content.

`estimate_label_ratio` returns a target on the simplex with every entry positive, EM's estimate and a non-empty
support, and matches its closed form where EM's answer is known (confident one-hot posteriors, non-uniform counts);
`geotter(X, Y)`, `Prepared.adapt(None)`, `otter(logits, None)` and `run_method(..., prior=None)` return valid
labels and plans whose rows sum to 1/n, with no NaN, for any n >= 1 (n < m, one class present, m = 1,000 with n = 64);
with a given prior, exact transport keeps both marginals for n < m too. Bad input raises an error naming it."""
import numpy as np
import pytest
import torch
from hypothesis import example, given, strategies as st

from geotter.core import Task, predict
from geotter.priors import estimate_label_ratio, em_prior, UNKNOWN_RATIO
from geotter.transport import otter
from geotter.method import geotter, prepare
from geotter.studies.experiments import run_method, METHODS
from geotter.pipeline import class_mean_logits
from geotter.labelfree import label_free_predict

torch.set_num_threads(1)


@st.composite
def any_batches(draw, max_n=24, max_m=12, max_d=6):
    "(X, Y, labels): n from 1, m from 1, samples from 1 to m classes (n < m allowed)."
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    n, m, d = draw(st.integers(1, max_n)), draw(st.integers(1, max_m)), draw(st.integers(2, max_d))
    Y = rng.normal(size=(m, d))
    present = rng.choice(m, size=draw(st.integers(1, m)), replace=False)
    y = rng.choice(present, n)
    X = Y[y] + draw(st.floats(0.05, 2.0)) * rng.normal(size=(n, d))
    return X, Y, y


@given(any_batches())
def test_estimate_is_a_ratio(batch):
    X, Y, _ = batch
    L = 100 * (X / np.linalg.norm(X, axis=1, keepdims=True)) @ (Y / np.linalg.norm(Y, axis=1, keepdims=True)).T
    est = estimate_label_ratio(L)
    for q in (est.target, est.em):
        assert np.isfinite(q).all() and abs(q.sum() - 1) < 1e-9 and (q >= 0).all()
    assert (est.target > 0).all() and est.support.any() and 0 <= est.spread <= 1
    S = est.support
    assert est.spread == pytest.approx((S.sum() / len(S)) ** UNKNOWN_RATIO['power'])


@given(st.lists(st.integers(0, 6), min_size=1, max_size=200), st.integers(7, 12))
@example([0] * 30 + [3] * 20, 9)                   # n = 50 > 20 |S|: the absent classes' share shrinks (gamma = 0.8)
def test_estimate_closed_form(labels, m):
    "Confident one-hot posteriors: EM = the class frequencies, support = classes seen, target by its formula."
    y = np.array(labels); counts = np.bincount(y, minlength=m)
    est = estimate_label_ratio(60.0 * np.eye(m)[y])
    np.testing.assert_allclose(est.em, counts / len(y), atol=1e-9)
    np.testing.assert_array_equal(est.support, counts > 0)
    S = counts > 0; lam, sh = (S.sum() / m) ** UNKNOWN_RATIO['power'], UNKNOWN_RATIO['shape']
    expect = lam / m + (1 - lam) * ((1 - sh) * S / S.sum() + sh * counts / len(y))
    expect = np.where(S, 1.0, min(1.0, UNKNOWN_RATIO['per_class'] * S.sum() / len(y))) * expect   # absences weigh more in larger batches
    np.testing.assert_allclose(est.target, expect / expect.sum(), atol=1e-9)


def test_em_nonuniform_fixed_point():
    "SQUAREM-accelerated EM meets the MLLS fixed-point equation q = mean_i normalize(p_i * q / pi) with a non-uniform pi."
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(6) * 0.7, size=300); pi = np.array([.4, .2, .15, .1, .1, .05])
    q = em_prior(P, pi)
    W = P / pi * q
    np.testing.assert_allclose((W / W.sum(1, keepdims=True)).mean(0), q, atol=1e-8)


@given(any_batches())
def test_geotter_unknown_any_batch(batch):
    X, Y, _ = batch
    n, m = len(X), len(Y)
    r = geotter(X, Y)
    assert r.labels.shape == (n,) and ((0 <= r.labels) & (r.labels < m)).all()
    assert np.isfinite(r.plan).all() and np.isfinite(r.ot_plan).all()
    np.testing.assert_allclose(r.ot_plan.sum(1), np.full(n, 1 / n), rtol=1e-5)
    assert r.config['prior'] == 'estimated' and r.config['k'] == min(7, n - 1)


@given(any_batches())
def test_given_prior_n_below_m_keeps_marginals(batch):
    "Exact GeoTTER with a given prior on any batch (n < m too): the OT plan has rows 1/n and columns = the prior."
    X, Y, y = batch
    prior = np.bincount(y, minlength=len(Y)) / len(y)
    r = geotter(X, Y, prior)
    np.testing.assert_allclose(r.ot_plan.sum(1), np.full(len(X), 1 / len(X)), atol=1e-6)
    np.testing.assert_allclose(r.ot_plan.sum(0), prior, atol=1e-6)


@given(any_batches())
def test_otter_unknown_rows(batch):
    X, Y, _ = batch
    L = 100 * (X / np.linalg.norm(X, axis=1, keepdims=True)) @ (Y / np.linalg.norm(Y, axis=1, keepdims=True)).T
    P = np.asarray(otter(L, None))
    assert np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(1), np.full(len(L), 1 / len(L)), rtol=1e-5)


def test_thousand_classes_batch_of_64():
    "m = 1,000 classes, a batch of 64 from 3 of them: no error, the classes present found, at least zero-shot's accuracy."
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(1000, 48)); present = rng.choice(1000, 3, replace=False); y = rng.choice(present, 64)
    X = Y[y] + 1.0 * rng.normal(size=(64, 48))
    prep = prepare(X, Y)
    assert set(present) <= set(np.flatnonzero(np.asarray(prep.ratio.support)))
    zs = (X @ Y.T / np.linalg.norm(Y, axis=1)).argmax(1)
    assert (prep.adapt(None).labels == y).mean() >= (zs == y).mean()


@pytest.mark.filterwarnings('ignore:.*did not converge')   # PM/FPM on a 30-sample batch: the target's tiny entries are matched only in the limit
def test_run_method_unknown_for_every_method():
    rng = np.random.default_rng(2)
    Y = rng.normal(size=(8, 5)); y = rng.choice([1, 4], 30); X = Y[y] + 0.5 * rng.normal(size=(30, 5))
    task = Task('t', y, X=X, Y=Y)
    for meth in METHODS:
        p = run_method(meth, task, prior=None)
        assert p.shape == (30,) and ((0 <= p) & (p < 8)).all(), meth
    np.testing.assert_array_equal(run_method('geotter-unknown', task), run_method('geotter', task, prior=None))
    np.testing.assert_array_equal(run_method('geotter-unknown', task), np.asarray(geotter(X, Y).labels))


def test_label_free_takes_arrays():
    rng = np.random.default_rng(3)
    Y = rng.normal(size=(4, 6)); y = rng.integers(0, 4, 40); X = Y[y] + 0.3 * rng.normal(size=(40, 6))
    np.testing.assert_array_equal(label_free_predict(X, Y), label_free_predict(Task('t', y, X=X, Y=Y)))


@pytest.mark.parametrize('bad, match', [(np.ones(4), r'^logits '), (np.full((3, 2), np.nan), r'^logits .*NaN')])
def test_bad_logits_named(bad, match):
    with pytest.raises((ValueError, TypeError), match=match): estimate_label_ratio(bad)
    with pytest.raises((ValueError, TypeError), match=match): otter(bad, None)


def test_bad_options_named():
    with pytest.raises(ValueError, match=r'^min_count'): estimate_label_ratio(np.zeros((3, 2)), min_count=-1)
    with pytest.raises(ValueError, match=r'^power'): estimate_label_ratio(np.zeros((3, 2)), power=-1)


def test_chunked_ratio_unknown_beyond_the_sample():
    "A batch larger than SAMPLE_ROWS on the chunked backend: ratio and class potentials from a sample, every row exact, labels as dense."
    from geotter.chunked import SAMPLE_ROWS
    rng = np.random.default_rng(5)
    n, m, d = SAMPLE_ROWS + 7_000, 6, 8
    Y = rng.normal(size=(m, d)); y = rng.choice(m, n, p=[.35, .25, .2, .1, .1, 0.])    # one class absent
    X = Y[y] + 0.9 * rng.normal(size=(n, d))
    ch, de = (prepare(X, Y, backend=b).adapt(None, steps=0, refine=0 if b == 'dense' else None) for b in ('chunked', 'dense'))  # one pass, no smoothing
    assert ch.ot.stats['sample'] == SAMPLE_ROWS and np.isfinite(ch.plan.data).all()
    np.testing.assert_allclose(ch.ot_plan.sum(1), np.full(n, 1 / n), rtol=1e-12)
    assert np.abs(ch.ot_plan.sum(0) - np.asarray(de.ot_plan).sum(0)).sum() < 0.01     # class totals: sampling error only
    assert np.mean(ch.labels == np.asarray(de.labels)) > 0.99
    assert np.mean(ch.labels == y) >= np.mean(np.asarray(de.labels) == y) - 0.005


def test_squarem_converges_where_plain_em_crawls():
    "On a flat likelihood (60 weak classes) plain EM needs ~7,500 steps to tol 1e-10; the accelerated EM, under 2,000, to the same point."
    import warnings
    from geotter.priors import _em_fixed_point, _em_step
    rng = np.random.default_rng(3)
    W = torch.softmax(torch.as_tensor(rng.normal(size=(400, 60)) * 0.5, dtype=torch.float64), 1)
    q0 = torch.full((60,), 1 / 60, dtype=torch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter('error')                       # 'did not converge' would be an error
        q = _em_fixed_point(W, q0, 0.0, 2000, 1e-10)
    q_plain, steps = q0, 0
    while True:
        q_next = _em_step(W, q_plain, q_plain, 0.0); steps += 1
        if (q_next - q_plain).abs().sum() <= 1e-10: break
        q_plain = q_next
    assert steps > 5000, steps
    assert (q - q_next).abs().sum() < 1e-6


@pytest.mark.parametrize('T', [0.1, 0.05])
def test_unknown_ratio_constants_are_in_nats_of_the_zero_shot_cost(T):
    "adapt(None) is the semi-relaxed transport onto the estimated target with rho and reg of UNKNOWN_RATIO times 0.01 / T, in two passes."
    rng = np.random.default_rng(4)
    n = 200
    Y = rng.normal(size=(6, 8)); y = rng.choice([0, 2, 3], n); X = Y[y] + 0.6 * rng.normal(size=(n, 8))
    prep = prepare(X, Y, cost_temperature=T)
    r = prep.adapt(None)
    assert r.config['rho'] == pytest.approx(UNKNOWN_RATIO['rho'] * 0.01 / T) and r.config['reg'] == pytest.approx(UNKNOWN_RATIO['reg'] * 0.01 / T)
    small, large = UNKNOWN_RATIO['refine_batch']
    assert r.config['refine'] == pytest.approx(UNKNOWN_RATIO['refine'] * np.log(n / small) / np.log(large / small))
    target, soft = np.asarray(prep.ratio.target), dict(solver='unbalanced', rho=r.config['rho'], reg=r.config['reg'])
    np.testing.assert_allclose(r.plan, prep.adapt(target, refine=r.config['refine'], **soft).plan, atol=1e-12)
    first = prep.adapt(target, **soft)                                      # a given prior: one pass
    assert first.config['refine'] == 0
    theta = class_mean_logits(prep.X, prep.theta, first.plan, r.config['refine'])    # the second pass transports the refined logits
    second = prepare(X, Y, cost_temperature=T, logits=theta * T / 0.01).adapt(target, **soft)   # logits at CLIP's scale
    np.testing.assert_allclose(r.plan, second.plan, atol=1e-9)
    np.testing.assert_allclose(np.asarray(prep.ratio.target), np.asarray(estimate_label_ratio(100 * (X / np.linalg.norm(X, axis=1, keepdims=True))
                               @ (Y / np.linalg.norm(Y, axis=1, keepdims=True)).T).target), atol=1e-9)
    assert prepare(X[:64], Y, cost_temperature=T).adapt(None).config['refine'] == 0          # 64 samples: one pass
    assert prepare(np.tile(X, (6, 1)), Y, cost_temperature=T).adapt(None).config['refine'] == UNKNOWN_RATIO['refine']   # 1,200
