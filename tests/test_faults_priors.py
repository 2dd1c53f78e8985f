"""Prior estimation against answers computed independently: EM / online EM / the streaming estimate as the maximiser of
their (penalised) likelihood, BBSE on a target batch built to have a known prior.

Every case uses a NON-UNIFORM source prior (or running estimate), so that a fault that multiplies where it should divide
by the source prior cannot cancel, as it does with a uniform one. Small seeded problems, float64."""
import warnings

import numpy as np
import pytest
import scipy.optimize
import torch
from hypothesis import given, strategies as st

from geotter.priors import em_prior, online_em_prior, bbse_prior, confusion_rates

torch.set_num_threads(1)


def posteriors(seed, m, n, sep=1.5):
    "(P (n, m) posteriors under a non-uniform source prior pi, pi, target prior q*): a calibrated model's outputs."
    rng = np.random.default_rng(seed)
    pi = 0.7 * rng.dirichlet(np.ones(m)) + 0.3 * rng.dirichlet(np.ones(m))       # non-uniform, every entry > 0
    q_star = 0.8 * rng.dirichlet(2 * np.ones(m)) + 0.2 / m
    y = rng.choice(m, n, p=q_star)
    loglik = sep * np.eye(m)[y] + rng.normal(size=(n, m))                       # log p(x_i | k) up to a constant
    P = pi * np.exp(loglik - loglik.max(1, keepdims=True))
    return P / P.sum(1, keepdims=True), pi, q_star


def likelihood_ratio_mean(P, pi, q):
    r"$g_k=\frac1n\sum_i (P_{ik}/\pi_k)/\langle P_i/\pi,q\rangle$: the EM update is $q\leftarrow q\odot g$."
    W = P / pi
    return (W / (W @ q)[:, None]).mean(0)


def mle(P, pi, count=0.0, q_old=None):
    "argmax_q count <q_old, log q> + sum_i log <P_i / pi, q> over the simplex, by BFGS on softmax coordinates."
    W = P / pi
    def f(u):
        q = np.exp(u - u.max()); q /= q.sum()
        r = W @ q
        val = np.log(r).sum() + (count * q_old @ np.log(q) if count else 0.0)
        gq = (W / r[:, None]).sum(0) + (count * q_old / q if count else 0.0)
        return -val, -(q * gq - q * (q @ gq))                                    # chain rule through the softmax
    res = scipy.optimize.minimize(f, np.zeros(P.shape[1]), jac=True, method='BFGS', options=dict(gtol=1e-12, maxiter=10_000))
    q = np.exp(res.x - res.x.max()); return q / q.sum()


@given(st.integers(0, 2**31 - 1), st.integers(3, 5), st.sampled_from([150, 400]))
def test_em_is_the_maximum_likelihood_prior(seed, m, n):
    "EM's estimate satisfies the likelihood's optimality conditions with a non-uniform source prior, and equals the MLE."
    P, pi, _ = posteriors(seed, m, n)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        q = np.asarray(em_prior(P, source_prior=pi, tol=1e-13, max_iter=100_000))
    g = likelihood_ratio_mean(P, pi, q)
    assert g.max() <= 1 + 1e-6                                                 # KKT: no class would gain mass
    np.testing.assert_allclose(g[q > 1e-3], 1, atol=1e-6)                       # stationary on the support
    ref = mle(P, pi)
    if ref.min() > 1e-3: np.testing.assert_allclose(q, ref, atol=1e-5)


def test_em_source_prior_example():
    "The review's example: source prior [.7, .1, .1, .1]; a fault that multiplies by pi gave [.82, .02, .04, .12]."
    rng = np.random.default_rng(3)
    pi = np.array([.7, .1, .1, .1]); q_true = np.array([.1, .3, .3, .3])
    y = rng.choice(4, 2000, p=q_true)
    P = pi * np.exp(2 * np.eye(4)[y] + 0.5 * rng.normal(size=(2000, 4))); P /= P.sum(1, keepdims=True)
    q = np.asarray(em_prior(P, source_prior=pi))
    np.testing.assert_allclose(q, mle(P, pi), atol=1e-5)


@given(st.integers(0, 2**31 - 1), st.integers(3, 5))
def test_em_invariant_to_the_source_prior_the_posteriors_were_computed_under(seed, m):
    "Posteriors re-expressed under another source prior pi' (P' = normalize(P pi'/pi)) give the same estimate with pi'."
    P, pi, _ = posteriors(seed, m, 200)
    pi2 = np.random.default_rng(seed + 1).dirichlet(np.ones(m)) * 0.8 + 0.2 / m
    P2 = P * pi2 / pi; P2 /= P2.sum(1, keepdims=True)
    a = np.asarray(em_prior(P, source_prior=pi, tol=1e-13, max_iter=100_000))
    b = np.asarray(em_prior(P2, source_prior=pi2, tol=1e-13, max_iter=100_000))
    np.testing.assert_allclose(a, b, atol=1e-8)


@given(st.integers(0, 2**31 - 1), st.integers(3, 5), st.floats(1.0, 500.0))
def test_online_em_is_the_penalised_maximum(seed, m, count):
    "One incremental step maximises count <q_old, log q> + sum_i log <P_i / pi, q>: its fixed point and the maximiser agree."
    P, pi, _ = posteriors(seed, m, 60)
    q_old = np.random.default_rng(seed + 7).dirichlet(2 * np.ones(m))        # a non-uniform running estimate
    q = np.asarray(online_em_prior(P, q_old, count, source_prior=pi, tol=1e-14, max_iter=100_000))
    b = len(P)
    W = P / pi
    np.testing.assert_allclose(count * q_old + q * (W / (W @ q)[:, None]).sum(0), (count + b) * q, atol=1e-8 * (count + b))
    np.testing.assert_allclose(q, mle(P, pi, count, q_old), atol=1e-6)
    np.testing.assert_allclose(q.sum(), 1, atol=1e-12)


def test_online_em_count_zero_is_batch_em():
    P, pi, _ = posteriors(11, 4, 300)
    np.testing.assert_array_equal(np.asarray(online_em_prior(P, None, 0.0, pi)), np.asarray(em_prior(P, pi)))


def test_streaming_prior_follows_the_penalised_maximum():
    "StreamingGeoTTER's running prior: after each batch, the maximiser of N <q_prev, log q> + sum_i log <post_i, q>, N growing by b."
    from geotter.streaming import StreamingGeoTTER, STREAM_DEFAULTS
    rng = np.random.default_rng(5)
    m, d = 4, 12
    Y = rng.normal(size=(m, d)); y = rng.choice(m, 90, p=[.55, .25, .15, .05])
    X = Y[y] + 2.0 * rng.normal(size=(90, d))
    for decay in (1.0, 0.5):
        s = StreamingGeoTTER(Y, prior='em', pseudo_count=2.0, beta=0.0, alpha=1.0, decay=decay)
        q, N = np.full(m, 1 / m), 2.0 * m
        for B in np.array_split(np.arange(90), 3):
            s.partial_fit_predict(X[B])
            Xn, Yn = X[B] / np.linalg.norm(X[B], axis=1, keepdims=True), Y / np.linalg.norm(Y, axis=1, keepdims=True)
            post = Xn @ Yn.T / STREAM_DEFAULTS['em_temperature']
            post = np.exp(post - post.max(1, keepdims=True)); post /= post.sum(1, keepdims=True)
            N *= decay
            q = mle(post, np.full(m, 1 / m), N, q)
            N += len(B)
            np.testing.assert_allclose(np.asarray(s.prior_), q, atol=1e-6)
            assert s.state.prior_count == pytest.approx(N)


def labelled_source(seed, m, hard_noise=0.35):
    "Scores (n_s, m) and labels of a labelled set with unequal class counts (a non-uniform source class ratio)."
    rng = np.random.default_rng(seed)
    counts = rng.integers(5, 30, size=m)
    y = np.repeat(np.arange(m), counts)
    S = np.eye(m)[y] + hard_noise * 3 * rng.random((len(y), m))               # confusable, every class sometimes predicted
    return S / S.sum(1, keepdims=True), y


@given(st.integers(0, 2**31 - 1), st.integers(3, 6), st.booleans())
def test_bbse_recovers_the_prior_of_a_resampled_target(seed, m, soft):
    "A target batch made of copies of class j's labelled rows in proportion q*_j has prediction rates C q* exactly: BBSE returns q*."
    S, y = labelled_source(seed, m)
    rng = np.random.default_rng(seed + 1)
    k = rng.integers(1, 6, size=m)                                           # copies of each class's rows
    q_star = k * np.bincount(y, minlength=m) / (k * np.bincount(y, minlength=m)).sum()
    T = np.concatenate([np.repeat(S[y == j], k[j], axis=0) for j in range(m)])
    C = confusion_rates(S, y, soft)
    np.testing.assert_allclose(C.sum(0), 1, atol=1e-12)                      # column-stochastic: P(prediction | class)
    if np.linalg.cond(C) > 1e6: return                                        # q* not identifiable from the rates
    w = np.bincount(y, minlength=m) * k; w = w / w.sum()                    # the target's class ratio
    np.testing.assert_allclose(C @ w, (T if soft else np.eye(m)[T.argmax(1)]).mean(0), atol=1e-12)
    np.testing.assert_allclose(bbse_prior(T, S, y, soft=soft), q_star, atol=1e-9)


def test_bbse_confusion_rates_per_class():
    "C[i, j] = share of class j's labelled samples predicted as i, with unequal class counts."
    S = np.array([[.9, .1, 0], [.2, .7, .1], [.6, .3, .1], [.1, .1, .8], [.3, .3, .4], [0, .9, .1]])
    y = np.array([0, 1, 0, 2, 2, 1])
    np.testing.assert_allclose(confusion_rates(S, y), [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    y2 = np.array([0, 0, 0, 2, 2, 1])
    np.testing.assert_allclose(confusion_rates(S, y2), [[2 / 3, 0, 0], [1 / 3, 1, 0], [0, 0, 1]])
    np.testing.assert_allclose(confusion_rates(S, y2, soft=True)[:, 0], S[:3].mean(0))


BAD = [(lambda P: em_prior(P, source_prior=[.5, .5]), r"^source_prior has shape \(2,\); expected \(3,\), one entry per class$"),
       (lambda P: em_prior(P, source_prior=[.5, .6, -.1]), r"^source_prior has negative entries"),
       (lambda P: em_prior(-P), r"^probs has negative entries; expected posteriors in \[0, 1\]$"),
       (lambda P: em_prior(P, max_iter=0), r"^max_iter=0; expected max_iter >= 1$"),
       (lambda P: online_em_prior(P, [.2, .8], 5.0), r"^q has shape \(2,\); expected \(3,\), one entry per class$"),
       (lambda P: online_em_prior(P, None, -1.0), r"^count=-1.0; expected count >= 0$"),
       (lambda P: bbse_prior(P, P[:, :2], [0, 1, 0, 1]), r"^source_labels has 4 labels; expected 6, one per sample$"),
       (lambda P: bbse_prior(P, P, [0, 1, 0, 1, 0, 1]), r"^source_labels has no sample of classes \[2\]; BBSE needs every class"),
       (lambda P: bbse_prior(P, P, [0, 1, 2, 0, 1, 3]), r"^source_labels has label 3; expected labels < 3, the number of classes$"),
       (lambda P: bbse_prior(P, P, [0, 1, 2, 0, 1, 1.5]), r"^source_labels has non-integer entries \(e\.g\. 1\.5"),
       (lambda P: bbse_prior(P, P[:, :2].tolist() + [[1, 2, 3]], [0, 1, 2, 0, 1, 2]), r"^source_probs of type list is not an array"),
       (lambda P: bbse_prior(P, np.full((6, 3), np.nan), [0, 1, 2, 0, 1, 2]), r"^source_probs has 18 NaN"),
       (lambda P: confusion_rates(P, [0, 1, 2, 0, 1, 7]), r"^labels has label 7; expected labels < 3"),
       (lambda P: bbse_prior(P[:, :2], P, [0, 1, 2, 0, 1, 2]), r"^target_probs has 2 columns; expected 3$")]

@pytest.mark.parametrize('i', range(len(BAD)))
def test_bad_arguments_named(i):
    P = np.random.default_rng(0).dirichlet(np.ones(3), size=6)
    f, pattern = BAD[i]
    with pytest.raises((ValueError, TypeError), match=pattern): f(P)
