"""GeoTTER's pipeline and the calibration metrics against answers computed from their definitions.

GeoTTER: the cost it transports is (1 - beta) OTTER's cost + beta the cluster cost, rebuilt here from the k-means partition;
its OT plan is optimal for that cost (POT's value) with the prior as column sums; its final plan is the k-NN smoothing of
the OT plan, rebuilt here from a brute-force cosine neighbour search. Weights differ from 1/2 and the prior is
non-uniform, so swapped weights or marginals cannot cancel. Calibration: ECE (both binnings), NLL, Brier by loops."""
import warnings

import numpy as np
import ot
import pytest
import torch
from hypothesis import given, strategies as st

from geotter.cluster import kmeans
from geotter.method import geotter
from geotter.studies.calibration import expected_calibration_error, nll, brier, calibration_bins, plan_posteriors, PosteriorModel

torch.set_num_threads(1)


def unit(A): return A / np.linalg.norm(A, axis=1, keepdims=True)
def softmax(Z): Z = Z - Z.max(1, keepdims=True); E = np.exp(Z); return E / E.sum(1, keepdims=True)


def brute_smooth(P, X, k, alpha, steps):
    "T <- alpha T + (1 - alpha) D^-1 A T over the k most cosine-similar other rows, `steps` times."
    S = unit(X) @ unit(X).T; np.fill_diagonal(S, -np.inf)
    A = np.zeros_like(S); A[np.arange(len(S))[:, None], np.argsort(-S, 1, kind='stable')[:, :k]] = 1
    T = P
    for _ in range(steps): T = alpha * T + (1 - alpha) * (A / A.sum(1, keepdims=True)) @ T
    return T


@given(st.integers(0, 2**31 - 1), st.sampled_from([0.2, 0.8]), st.sampled_from([0.3, 0.6]), st.sampled_from([1, 2]))
def test_geotter_pipeline_from_its_definition(seed, beta, alpha, steps):
    rng = np.random.default_rng(seed)
    m, d, n, k, T = 4, 8, 48, 3, 0.1
    Y = rng.normal(size=(m, d)); y = rng.choice(m, n, p=[.4, .3, .2, .1])
    X = Y[y] + 1.0 * rng.normal(size=(n, d))
    nu = np.array([.45, .25, .2, .1])
    res = geotter(X, Y, nu, beta=beta, alpha=alpha, steps=steps, k=k, cost_temperature=T)
    Xn, Yn = unit(X), unit(Y)
    C_ot = -np.log(softmax(Xn @ Yn.T / T))
    centres, z = kmeans(X, m, seed=0)
    C_cl = 1 - unit(np.asarray(centres)) @ Yn.T
    C = (1 - beta) * C_ot + beta * C_cl[np.asarray(z)]
    np.testing.assert_allclose(res.cost, C, atol=1e-10)
    P = np.asarray(res.ot_plan)
    np.testing.assert_allclose(P.sum(1), 1 / n, atol=1e-12); np.testing.assert_allclose(P.sum(0), nu, atol=1e-12)
    assert (P * C).sum() <= ot.emd2(np.full(n, 1 / n), nu, C) + 1e-10
    np.testing.assert_allclose(res.plan, brute_smooth(P, X, k, alpha, steps), atol=1e-12)
    np.testing.assert_array_equal(res.labels, np.asarray(res.plan).argmax(1))


def brute_ece(P, y, M, scheme):
    conf, correct, n = P.max(1), (P.argmax(1) == y), len(y)
    if scheme == 'width': bins = [[i for i in range(n) if (b / M < conf[i] <= (b + 1) / M) or (b == 0 and conf[i] == 0)] for b in range(M)]
    else:
        order = sorted(range(n), key=lambda i: (conf[i], i))
        bins = [[order[r] for r in range(n) if r * M // n == b] for b in range(M)]
    return sum(len(B) / n * abs(np.mean(correct[B]) - np.mean(conf[B])) for B in bins if B)


@given(st.integers(0, 2**31 - 1), st.integers(2, 6), st.integers(1, 60), st.sampled_from([1, 5, 15]), st.sampled_from(['width', 'mass']))
def test_calibration_metrics_from_their_definitions(seed, m, n, M, scheme):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(0.5 * np.ones(m), size=n); y = rng.integers(m, size=n)
    P[0] = np.eye(m)[0]                                                       # a confidence of exactly 1 (last bin)
    assert expected_calibration_error(P, y, M, scheme) == pytest.approx(brute_ece(P, y, M, scheme), abs=1e-12)
    assert nll(P, y, floor=1e-3) == pytest.approx(-np.mean(np.log(np.maximum(P[np.arange(n), y], 1e-3))), abs=1e-12)
    assert brier(P, y) == pytest.approx(np.mean(((P - np.eye(m)[y]) ** 2).sum(1)), abs=1e-12)
    t = calibration_bins(P, y, M, scheme)
    assert t['count'].sum() == n and (t['count'] >= 0).all()


def test_plan_and_entropic_posteriors():
    "Plan posteriors are the rows scaled to one; the entropic posterior at tau has mean equal to the (non-uniform) prior."
    rng = np.random.default_rng(0)
    T = rng.random((30, 5)) * (rng.random((30, 5)) > 0.3); T[:, 0] += 0.01
    np.testing.assert_allclose(plan_posteriors(T), T / T.sum(1, keepdims=True), atol=1e-15)
    z = 3 * rng.normal(size=(30, 5)); nu = np.array([.4, .3, .15, .1, .05])
    mod = PosteriorModel('otter-entropic', logits=z, prior=nu)
    for tau in (0.5, 1.0, 2.0):
        Q = np.asarray(mod.probs(tau))
        np.testing.assert_allclose(Q.mean(0), nu, atol=1e-9)
        G = ot.sinkhorn(np.full(30, 1 / 30), nu, -np.log(softmax(z / tau)), reg=1.0, stopThr=1e-13, numItermax=100_000)
        np.testing.assert_allclose(Q, 30 * G, atol=1e-8)


BAD = [(lambda P, y: expected_calibration_error(P, y, scheme='quantile'), r"^scheme='quantile'; expected one of \('width', 'mass'\)$"),
       (lambda P, y: calibration_bins(P, y, n_bins=0), r"^n_bins=0; expected n_bins >= 1$"),
       (lambda P, y: calibration_bins(P, y, n_bins=2.5), r"^n_bins=2\.5 of type float; expected a finite integer$"),
       (lambda P, y: nll(P, y, floor=0.0), r"^floor=0\.0; expected floor > 0$"),
       (lambda P, y: brier(P, y[:3]), r"^labels has 3 labels; expected 6, one per sample$"),
       (lambda P, y: brier(2 * P, y), r"^probs must have non-negative rows summing to 1"),
       (lambda P, y: plan_posteriors(-P), r"^plan has negative entries; expected a transport plan$")]

@pytest.mark.parametrize('i', range(len(BAD)))
def test_bad_arguments_named(i):
    P = np.random.default_rng(0).dirichlet(np.ones(3), size=6); y = np.array([0, 1, 2, 0, 1, 2])
    f, pattern = BAD[i]
    with pytest.raises((ValueError, TypeError), match=pattern): f(P, y)
