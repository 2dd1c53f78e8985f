"""The logit-only baselines against answers computed independently: ZS, PM (both forms), FPM, and the class shift.

Every fit is checked where a fault cannot hide: three or more classes in the prior's support, a non-uniform prior,
warnings turned into errors (a solver that stops early fails the test instead of passing it with a warning), the
returned weights put back into the method's formula, and the entropic-OT identity checked against POT."""
import warnings

import numpy as np
import ot
import pytest
import torch
from hypothesis import assume, given, settings, strategies as st

import geotter.baselines
from geotter.baselines import zero_shot, prior_matching, fenchel_prior_matching, prior_shift

torch.set_num_threads(1)


def softmax(Z):
    Z = Z - Z.max(1, keepdims=True); E = np.exp(Z)
    return E / E.sum(1, keepdims=True)


@st.composite
def batches(draw, max_n=80, min_m=3, max_m=6):
    "(CLIP-like logits (n, m), non-uniform prior with >= 3 positive entries, maybe one zero)."
    n, m = draw(st.integers(20, max_n)), draw(st.integers(min_m, max_m))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    y = rng.integers(m, size=n)
    L = 100 * (0.22 + 0.04 * np.eye(m)[y] + 0.025 * rng.normal(size=(n, m)))
    nu = 0.7 * rng.dirichlet(2 * np.ones(m)) + 0.3 / m
    if m >= 4 and draw(st.booleans()): nu[rng.integers(m)] = 0; nu /= nu.sum()
    return L, nu


def fenchel_fixed_point(S, nu, lam, iters=200):
    "p = softmax(S - lam (p - nu)) row-wise by the damped iteration (contracting for eta = 4 / (4 + lam))."
    p, eta = softmax(S), 4 / (4 + lam)
    for _ in range(iters): p = (1 - eta) * p + eta * softmax(S - lam * (p - nu))
    return p


def attainable(L, nu, seed, kind, lam=0.0):
    "A target prior that weights w* > 0 reach exactly (paper-form PM and FPM match only such priors); nu's zeros kept."
    s = nu > 0
    rng = np.random.default_rng(seed)
    if kind == 'paper':
        w = np.exp(rng.normal(scale=0.3, size=s.sum())); t = softmax(w * softmax(L)[:, s] / 0.1).mean(0)
    else:                                                                       # FPM: nu enters its own fixed point
        w = np.exp(rng.normal(scale=0.03, size=s.sum()))                     # w multiplies logits of ~25: small moves
        t = softmax(w * L[:, s]).mean(0)
        for _ in range(10 if lam else 0): t = fenchel_fixed_point(w * L[:, s], t, lam, 100).mean(0)
    out = np.zeros_like(nu); out[s] = t / t.sum()
    return out


@settings(max_examples=20)
@given(batches(), st.integers(0, 1000))
def test_prior_matching_matches_the_prior(batch, seed):
    "Both PM forms: mean prediction = prior to 1e-8, zero classes exactly 0, and P is the formula at the returned w."
    L, nu = batch
    nu_p = attainable(L, nu, seed, 'paper')                                    # the paper form's formula reaches it
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        Pp, wp = prior_matching(L, nu_p, tol=1e-9, return_weights=True)
        Pb, wb = prior_matching(L, nu, form='bias', tol=1e-9, return_weights=True)   # the bias form reaches any prior
    for P, target in ((Pp, nu_p), (Pb, nu)):
        np.testing.assert_allclose(P.mean(0), target, atol=2e-9)
        np.testing.assert_allclose(P.sum(1), 1, atol=1e-12)
        assert (P[:, nu == 0] == 0).all()
    s = nu > 0
    np.testing.assert_allclose(Pp[:, s], softmax(wp[s] * softmax(L)[:, s] / 0.1), atol=1e-12)   # paper form, T = 0.1
    np.testing.assert_allclose(Pb[:, s], softmax(L[:, s] + np.log(wb[s])), atol=1e-12)          # bias form, T = 1
    assert (wp[~s] == 0).all() and (wb[~s] == 0).all()


@settings(max_examples=15)                                                   # each example runs L-BFGS on an inner Newton solver
@given(batches(max_n=40, max_m=5), st.sampled_from([0.0, 1.0, 4.0]), st.integers(0, 1000))
def test_fenchel_prior_matching_matches_the_prior(batch, lam, seed):
    "FPM (batch objective): mean fixed point = prior, and p*_i = softmax(w θ_i / T - λ (p*_i - ν)) at the returned w."
    L, nu = batch
    nu = attainable(L, nu, seed, 'fpm', lam)
    assume(nu[nu > 0].min() > 0.02)                                          # a class of mass 1e-4 is reached only slowly
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        P, w = fenchel_prior_matching(L, nu, lam=lam, tol=1e-9, return_weights=True)
    s = nu > 0
    np.testing.assert_allclose(P.mean(0), nu, atol=2e-9)
    assert (P[:, ~s] == 0).all() and (w[~s] == 0).all()
    np.testing.assert_allclose(P[:, s], fenchel_fixed_point(w[s] * L[:, s], nu[s], lam), atol=1e-9)


@given(batches(max_n=60), st.sampled_from([1.0, 0.3, 0.01]))
def test_prior_shift_fixed_point_and_sinkhorn(batch, eps):
    "mean_i softmax(z_i + h) = ν to tol, h centred on the support, and softmax(z + h)/n is POT's Sinkhorn plan at ε = 1."
    L, nu = batch
    z = L / 30 / eps                                                          # spreads from ~1 to ~300: continuation used
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        h = prior_shift(z, nu, tol=1e-12)
    s = nu > 0
    assert np.isneginf(h[~s]).all() and np.isfinite(h[s]).all()
    np.testing.assert_allclose(h[s].sum(), 0, atol=1e-9)
    Q = softmax(z[:, s] + h[s])
    np.testing.assert_allclose(Q.mean(0), nu[s], atol=1e-12)
    if eps == 1.0:
        n = len(z)
        G = ot.sinkhorn(np.full(n, 1 / n), nu[s], -np.log(softmax(z[:, s])), reg=1.0, stopThr=1e-13, numItermax=100_000)
        np.testing.assert_allclose(n * G, Q, atol=1e-8)


@given(batches(max_n=40), st.integers(0, 1000))
def test_prior_shift_equivariance(batch, seed):
    "A class offset a added to every row moves h by exactly -a (centred); a constant per row changes nothing."
    L, nu = batch
    s = nu > 0
    rng = np.random.default_rng(seed)
    a, c = rng.normal(size=L.shape[1]), rng.normal(size=(len(L), 1))
    h = prior_shift(L / 30, nu); h2 = prior_shift(L / 30 + a + c, nu)
    want = h[s] - a[s] + a[s].mean()
    np.testing.assert_allclose(h2[s], want, atol=1e-7)


def test_bias_pm_equals_sinkhorn_otter_non_uniform():
    "Bias-form PM at temperature T is n times Sinkhorn-OTTER's plan at reg T (POT), on 6 classes with a non-uniform prior."
    rng = np.random.default_rng(2)
    L = 100 * (0.22 + 0.025 * rng.normal(size=(90, 6))); nu = np.array([.3, .25, .2, .1, .1, .05])
    for T in (1.0, 2.0):
        G = ot.sinkhorn(np.full(90, 1 / 90), nu, -np.log(softmax(L)), reg=T, stopThr=1e-14, numItermax=100_000)
        np.testing.assert_allclose(prior_matching(L, nu, form='bias', temperature=T, tol=1e-12), 90 * G, atol=1e-8)


@pytest.mark.parametrize('T', [0.5, 1.0, 3.0])
def test_zero_shot_is_the_tempered_softmax(T):
    L = np.random.default_rng(0).normal(size=(7, 4)) * 5
    np.testing.assert_allclose(zero_shot(L, temperature=T), softmax(L / T), atol=1e-14)


def test_fenchel_float32_is_the_float64_computation():
    "float32 logits are solved in float64: the result is the float64 result on the same values, rounded once at the end."
    rng = np.random.default_rng(4)
    L32 = (5 * rng.normal(size=(60, 4))).astype(np.float32)
    for objective, nu in (('sample', 'uniform'), ('sample', [.4, .3, .2, .1]), ('batch', [.4, .3, .2, .1])):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')                                  # mixed-sign logits: the prior may be unattainable
            P32 = fenchel_prior_matching(L32, nu, objective=objective, max_iter=100)
            P64 = fenchel_prior_matching(L32.astype(np.float64), nu, objective=objective, max_iter=100)
        assert P32.dtype == np.float32
        np.testing.assert_array_equal(P32, P64.astype(np.float32))
        top = np.sort(P64, 1)
        resolved = top[:, -1] - top[:, -2] > 4 * np.finfo(np.float32).eps * top[:, -1]   # gaps float32 can hold
        np.testing.assert_array_equal(P32.argmax(1)[resolved], P64.argmax(1)[resolved])


def test_fenchel_sample_float32_clip_logits():
    "On CLIP-scale logits, float32 and float64 inputs of the per-sample objective give the same labels on resolved rows."
    rng = np.random.default_rng(1)
    y = rng.integers(5, size=80)
    L = 100 * (0.22 + 0.04 * np.eye(5)[y] + 0.025 * rng.normal(size=(80, 5)))
    P64 = fenchel_prior_matching(L, [.3, .25, .2, .15, .1], objective='sample', max_iter=100)
    P32 = fenchel_prior_matching(torch.tensor(L, dtype=torch.float32), [.3, .25, .2, .15, .1], objective='sample', max_iter=100)
    top = np.sort(P64, 1); resolved = top[:, -1] - top[:, -2] > 1e-5
    assert resolved.mean() > 0.9
    np.testing.assert_array_equal(P32.numpy().argmax(1)[resolved], P64.argmax(1)[resolved])



@pytest.mark.parametrize('seed', range(8))
def test_fenchel_sample_float32_agrees_on_rows_that_are_not_ties(seed):
    """Per-sample FPM on 150 CLIP-like logits over 10 classes (counts as prior): float32 logits give the float64 labels
    wherever float64's top two differ by more than 1e-6."""
    rng = np.random.default_rng(seed); y = rng.integers(10, size=150)
    L = 100 * (0.22 + 0.04 * np.eye(10)[y] + 0.01 * rng.normal(size=10) + 0.025 * rng.normal(size=(150, 10)))
    nu = np.bincount(y, minlength=10) / 150
    with warnings.catch_warnings():
        warnings.simplefilter('error')                                      # converged, and not every weight 0
        P64 = fenchel_prior_matching(L, nu, objective='sample')
        P32 = fenchel_prior_matching(L.astype(np.float32), nu, objective='sample')
    top = np.sort(P64, 1); resolved = top[:, -1] - top[:, -2] > 1e-6
    assert resolved.mean() > 0.9
    np.testing.assert_array_equal(P32.argmax(1)[resolved], P64.argmax(1)[resolved])

BAD = [(lambda L: prior_matching(L, [.5, .5]), r"^prior has shape \(2,\); expected \(3,\), one entry per class$"),
       (lambda L: prior_matching(L, [.5, .6, -.1]), r"^prior has negative entries \(min -0\.1\); expected >= 0$"),
       (lambda L: prior_matching(L, [.5, .5, .5]), r"^prior sums to 1\.5; expected probabilities \(summing to 1, tolerance 0\.0001\) or class counts \(non-negative whole numbers, sum > 0\)$"),
       (lambda L: prior_matching(L, 'skewed'), r"^prior='skewed'; expected an array or 'uniform'$"),
       (lambda L: prior_matching(L, 'uniform', form='logit'), r"^form='logit'; expected one of \('paper', 'bias'\)$"),
       (lambda L: prior_matching(L, 'uniform', tol=0.0), r"^tol=0\.0; expected tol > 0$"),
       (lambda L: prior_matching(L, 'uniform', max_iter=1.5), r"^max_iter=1\.5 of type float; expected a finite integer$"),
       (lambda L: prior_matching(L, 'uniform', temperature=-1.0), r"^temperature=-1\.0; expected temperature > 0$"),
       (lambda L: prior_matching(L[0], 'uniform'), r"^logits has shape \(3,\); expected a 2-D array$"),
       (lambda L: fenchel_prior_matching(L, 'uniform', lam=-1.0), r"^lam=-1\.0; expected lam >= 0$"),
       (lambda L: fenchel_prior_matching(L, 'uniform', objective='mean'), r"^objective='mean'; expected one of \('batch', 'sample'\)$"),
       (lambda L: fenchel_prior_matching(L, 'uniform', inner_max_iter=0), r"^inner_max_iter=0; expected inner_max_iter >= 1$"),
       (lambda L: fenchel_prior_matching(L, [1., 0.]), r"^prior has shape \(2,\); expected \(3,\), one entry per class$"),
       (lambda L: prior_shift(L, [.2, .8]), r"^prior has shape \(2,\); expected \(3,\), one entry per class$"),
       (lambda L: prior_shift(L, 'uniform', max_iter=0), r"^max_iter=0; expected max_iter >= 1$"),
       (lambda L: prior_shift(np.where(L > 0, np.nan, L), 'uniform'), r"^logits has \d+ NaN or infinite entries; expected finite values$"),
       (lambda L: zero_shot(L, temperature=0), r"^temperature=0; expected temperature > 0$")]

@pytest.mark.parametrize('i', range(len(BAD)))
def test_bad_arguments_named(i):
    "The error names the argument and says what was expected (anchored: no other message passes)."
    f, pattern = BAD[i]
    with pytest.raises((ValueError, TypeError), match=pattern): f(np.random.default_rng(0).normal(size=(5, 3)))


def test_non_convergence_warns_naming_max_iter():
    L = 100 * (0.22 + 0.025 * np.random.default_rng(0).normal(size=(40, 4)))
    for f in (lambda: prior_matching(L, [.7, .1, .1, .1], max_iter=1), lambda: prior_matching(L, [.7, .1, .1, .1], form='bias', max_iter=1),
              lambda: fenchel_prior_matching(L, [.7, .1, .1, .1], max_iter=1), lambda: prior_shift(L, [.7, .1, .1, .1], max_iter=1)):
        with pytest.warns(UserWarning, match=r'did not converge.*max_iter=1\b'): f()
