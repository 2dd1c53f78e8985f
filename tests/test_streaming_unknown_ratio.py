"""Property-based tests of `StreamingGeoTTER` with the label ratio unknown (`prior=None`, the default).

For any short stream of finite valid batches: every batch's transport plan has rows 1/b and (exact transport) class
totals equal to the batch's own estimated ratio, nothing is NaN, the state's class mass grows by one unit per row, two
runs give identical labels, and `carry=0` is `geotter(X, Y)` on each batch (of at most 64 rows, where the batch
method has no second pass); invalid options raise ValueError naming
them; on a drifted model the carried class means label a small second batch better than the stateless call.
Sizes stay at most 40 x 5 per batch."""
import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from geotter import StreamingGeoTTER, geotter, accuracy, estimate_label_ratio, zero_shot_logits
from geotter.streaming import init_stream, stream_step

torch.set_num_threads(1)


@st.composite
def streams(draw, max_batches=3, max_n=40, max_m=5, max_d=8):
    "(Y, [X_1, ..., X_t]): class embeddings and a few clustered batches whose class mix changes from batch to batch."
    seed = draw(st.integers(0, 2**31 - 1)); rng = np.random.default_rng(seed)
    m = draw(st.integers(2, max_m)); d = draw(st.integers(2, max_d)); noise = draw(st.floats(0.05, 2.0))
    Y = rng.normal(size=(m, d))
    out = []
    for _ in range(draw(st.integers(1, max_batches))):
        n = draw(st.integers(2, max_n)); mix = rng.dirichlet(np.full(m, 0.3))
        out.append(Y[rng.choice(m, size=n, p=mix)] + noise * rng.normal(size=(n, d)))
    return Y, out


@given(streams(), st.sampled_from(['unbalanced', 'emd']))
def test_marginals_state_and_no_nan(stream, solver):
    Y, batches = stream
    model, seen = StreamingGeoTTER(Y, solver=solver), 0
    for X in batches:
        state_before = model.state
        lab = model.partial_fit_predict(X)
        r, b = model.last_, len(X)
        assert lab.shape == (b,) and np.isin(lab, np.arange(len(Y))).all()
        for a in (r.plan, r.ot_plan, r.prior, model.state.class_sums, model.state.class_mass): assert torch.isfinite(a).all()
        torch.testing.assert_close(r.ot_plan.sum(1), torch.full((b,), 1 / b, dtype=r.ot_plan.dtype), atol=1e-6, rtol=0)
        target = estimate_label_ratio(zero_shot_logits(X, Y, 0.01)).target          # the batch's own ratio, not a running one
        np.testing.assert_allclose(r.prior.numpy(), target, atol=1e-9)
        if solver == 'emd': torch.testing.assert_close(r.ot_plan.sum(0), r.prior.to(r.ot_plan.dtype), atol=1e-9, rtol=0)
        seen += b
        assert abs(model.state.class_mass.sum().item() - seen) < 1e-6 * seen        # one unit of mass per row seen
        assert stream_step(state_before, X, solver=solver)[1].labels.tolist() == lab.tolist()   # pure and deterministic


@given(streams(max_batches=2))
def test_carry_zero_is_the_batch_method(stream):
    Y, batches = stream
    model = StreamingGeoTTER(Y, carry=0.0)
    for X in batches: np.testing.assert_array_equal(model.partial_fit_predict(X), geotter(X, Y).labels)


def test_deterministic_across_runs_and_types():
    rng = np.random.default_rng(3); Y = rng.normal(size=(6, 10))
    batches = [Y[rng.integers(0, 6, 50)] + 0.8 * rng.normal(size=(50, 10)) for _ in range(4)]
    runs = []
    for _ in range(2):
        model = StreamingGeoTTER(Y); runs.append([model.partial_fit_predict(X) for X in batches])
    for a, b in zip(*runs): np.testing.assert_array_equal(a, b)
    tmodel = StreamingGeoTTER(torch.tensor(Y))
    for a, X in zip(runs[0], batches):
        t = tmodel.partial_fit_predict(torch.tensor(X)); assert isinstance(t, torch.Tensor); np.testing.assert_array_equal(t.numpy(), a)


def test_carried_class_means_help_a_drifted_model():
    "Images around 0.5 y_k + 0.85 u_k (u_k orthogonal to every y): the first batch's class means see what zero-shot misses."
    m, d = 3, 8
    Y, M = np.eye(m, d), 0.5 * np.eye(m, d) + 0.85 * np.eye(m, d, k=m)
    rng = np.random.default_rng(1)
    def draw(counts):
        y = np.repeat(np.arange(m), counts); return M[y] + 0.4 * rng.normal(size=(len(y), d)), y
    Xa, _ = draw([100] * m)
    model = StreamingGeoTTER(Y); model.partial_fit_predict(Xa)
    stateful, stateless = [], []
    for _ in range(8):
        Xb, yb = draw([4] * m)
        stateful.append(accuracy(yb, stream_step(model.state, Xb)[1].labels.numpy()))
        stateless.append(accuracy(yb, geotter(Xb, Y).labels))
    assert np.mean(stateful) >= np.mean(stateless) + 0.1, (stateful, stateless)


@pytest.mark.parametrize('options, name', [(dict(carry=-1.0), 'carry'), (dict(carry=float('nan')), 'carry'),
                                           (dict(solver='exact'), 'solver'), (dict(decay=0.0), 'decay'), (dict(k=0), 'k')])
def test_invalid_options_are_named(options, name):
    with pytest.raises(ValueError, match=name): StreamingGeoTTER(np.eye(3), **options)


def test_invalid_inputs_are_named():
    model = StreamingGeoTTER(np.eye(3, 4))
    X = np.ones((5, 4)); X[0, 0] = np.nan
    with pytest.raises(ValueError, match='X'): model.partial_fit_predict(X)
    with pytest.raises(ValueError, match='X has 3 columns'): model.partial_fit_predict(np.ones((5, 3)))
    with pytest.raises(ValueError, match='logits has 2 columns'): model.partial_fit_predict(np.ones((5, 4)), np.zeros((5, 2)))
    with pytest.raises(ValueError, match="solver='unbalanced' needs the ratio unknown"):
        StreamingGeoTTER(np.eye(3, 4), 'em', solver='unbalanced').partial_fit_predict(np.eye(3, 4))
    assert model.state.n_seen == 0                                     # a refused batch leaves the state as it was
