"""Input checks of the analysis entry points: the TransCLIP and StatA objectives, the streaming class potentials, the
unbalanced option sets of the marginal study and the label-free template scores.

A bad argument raises a `ValueError` (a `TypeError` for a wrong type) whose message names it; arguments that do not
fit each other are named together. Any valid state gives both objectives a finite value, the same from numpy arrays
as from tensors. The Hypothesis profile is the shared one in tests/conftest.py."""
import math

import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

from geotter.peers import transclip_objective, stata_objective
from geotter.streaming import c_transform, average_potential, dual_plan
from geotter.studies.marginals import robust_options
from geotter.studies.prompts import template_scores

N, M, D, K = 12, 3, 4, 2


def _state(seed=0, n=N, m=M, d=D, k=K, zeros=False):
    "A valid objective state as float64 tensors: z rows on the simplex, unit F, means, variances, text predictions, k-NN lists."
    rng = np.random.default_rng(seed)
    t = lambda a: torch.as_tensor(a, dtype=torch.float64)
    z = rng.dirichlet(np.ones(m), size=n)
    if zeros: z[rng.random((n, m)) < 0.3] = 0.0; z[z.sum(1) == 0, 0] = 1.0; z /= z.sum(1, keepdims=True)
    F = rng.normal(size=(n, d)); F /= np.linalg.norm(F, axis=1, keepdims=True)
    T = rng.normal(size=(m, d)); T /= np.linalg.norm(T, axis=1, keepdims=True)
    logits = 3 * rng.normal(size=(n, m))
    return dict(z=t(z), F=t(F), mu=t(rng.normal(size=(m, d))), var=t(rng.uniform(1e-3, 2.0, size=d)),
                log_yhat=torch.log_softmax(t(logits), 1), idx=torch.as_tensor(rng.integers(n, size=(n, k))),
                w=t(rng.uniform(-1, 1, size=(n, k))), T=t(T), var0=t(rng.uniform(1e-3, 2.0, size=d)),
                var_c=t(rng.uniform(1e-3, 2.0, size=(m, d))))


def _transclip(s, **kw):
    args = dict(z=s['z'], F=s['F'], mu=s['mu'], var=s['var'], log_yhat=s['log_yhat'], idx=s['idx'], w=s['w'])
    return transclip_objective(**dict(args, **kw))


def _stata(s, **kw):
    args = dict(z=s['z'], F=s['F'], mu=s['mu'], var=s['var_c'], T=s['T'], var0=s['var0'], log_yhat=s['log_yhat'],
                idx=s['idx'], w=s['w'])
    return stata_objective(**dict(args, **kw))


S = _state()
NAN = lambda a, i=(0, 0): a.clone().index_put_(tuple(torch.tensor([j]) for j in i), torch.tensor(math.nan, dtype=a.dtype))

# the arguments both objectives share: (keyword arguments, error type, pattern that names the argument)
SHARED = {
    'z negative': (dict(z=-S['z']), ValueError, r'^z has negative entries'),
    'z NaN': (dict(z=NAN(S['z'])), ValueError, r'^z has 1 NaN or infinite'),
    'z strings': (dict(z=S['z'].numpy().astype(str)), TypeError, r'^z has dtype <U'),
    'F rows': (dict(F=S['F'][:-1]), ValueError, rf'^F has {N - 1} rows; expected {N}'),
    'F inf': (dict(F=S['F'] / 0), ValueError, r'^F has .* NaN or infinite'),
    'mu columns': (dict(mu=S['mu'][:, :-1]), ValueError, rf'^mu has {D - 1} columns; expected {D}'),
    'mu rows': (dict(mu=S['mu'][:-1]), ValueError, rf'^mu has {M - 1} rows; expected {M}'),
    'mu NaN': (dict(mu=NAN(S['mu'])), ValueError, r'^mu has 1 NaN'),
    'log_yhat columns': (dict(log_yhat=S['log_yhat'][:, :-1]), ValueError, rf'^log_yhat has {M - 1} columns; expected {M}'),
    'log_yhat -inf': (dict(log_yhat=S['log_yhat'].clone().fill_(-math.inf)), ValueError, r'^log_yhat has .* NaN or infinite'),
    'idx out of range': (dict(idx=S['idx'] + N), ValueError, rf'^idx has indices in \[\d+, \d+\]; expected \[0, {N}\)'),
    'idx negative': (dict(idx=-1 - S['idx']), ValueError, r'^idx has indices in \[-'),
    'idx fractional': (dict(idx=S['idx'] + 0.5), ValueError, r'^idx has NaN, infinite or fractional entries'),
    'idx 1-D': (dict(idx=S['idx'][:, 0]), ValueError, rf'^idx has shape \({N},\); expected \({N}, k\)'),
    'idx None': (dict(idx=None), ValueError, r'^idx is None'),
    'w shape': (dict(w=S['w'][:, :1]), ValueError, rf'^w has shape \({N}, 1\); expected \({N}, {K}\), the shape of idx'),
    'w NaN': (dict(w=NAN(S['w'])), ValueError, r'^w has NaN or infinite'),
    'lam negative': (dict(lam=-1.0), ValueError, r'^lam=-1.0; expected lam >= 0'),
    'lam string': (dict(lam='1'), TypeError, r"^lam='1'"),
}
TRANSCLIP = {
    'var shape': (dict(var=S['var'][:-1]), ValueError, rf'^var has shape \({D - 1},\); expected \({D},\)'),
    'var zero': (dict(var=0 * S['var']), ValueError, r'^var has entries <= 0'),
    'var NaN': (dict(var=NAN(S['var'], (0,))), ValueError, r'^var has NaN or infinite'),
    'var None': (dict(var=None), ValueError, r'^var is None'),
}
STATA = {
    'var (d,) for (m, d)': (dict(var=S['var']), ValueError, rf'^var has shape \({D},\); expected \({M}, {D}\)'),
    'var negative': (dict(var=-S['var_c']), ValueError, r'^var has entries <= 0'),
    'var0 shape': (dict(var0=S['var_c']), ValueError, rf'^var0 has shape \({M}, {D}\); expected \({D},\)'),
    'var0 zero': (dict(var0=0 * S['var0']), ValueError, r'^var0 has entries <= 0'),
    'T rows': (dict(T=S['T'][:-1]), ValueError, rf'^T has {M - 1} rows; expected {M}'),
    'T NaN': (dict(T=NAN(S['T'])), ValueError, r'^T has 1 NaN'),
    'alpha inf': (dict(alpha=math.inf), ValueError, r'^alpha=inf'),
    'alpha negative': (dict(alpha=-1.0), ValueError, r'^alpha=-1.0'),
    'laplacian negative': (dict(laplacian=-1.0), ValueError, r'^laplacian=-1.0'),
    'laplacian overflow': (dict(laplacian=1e308), ValueError, r'^laplacian=1e\+308 overflows'),
}


@pytest.mark.parametrize('case', list(SHARED) + list(TRANSCLIP))
def test_transclip_objective_names_the_bad_argument(case):
    kw, err, pattern = {**SHARED, **TRANSCLIP}[case]
    with pytest.raises(err, match=pattern): _transclip(S, **kw)


@pytest.mark.parametrize('case', list(SHARED) + list(STATA))
def test_stata_objective_names_the_bad_argument(case):
    kw, err, pattern = {**SHARED, **STATA}[case]
    with pytest.raises(err, match=pattern): _stata(S, **kw)


@st.composite
def states(draw):
    "Any valid state: n from 1, m from 1, k from 0 (no graph) to n, soft assignments with exact zeros, float64 or float32."
    n, m, d = draw(st.integers(1, 10)), draw(st.integers(1, 5)), draw(st.integers(1, 6))
    s = _state(draw(st.integers(0, 2**31 - 1)), n, m, d, draw(st.integers(0, n)), zeros=draw(st.booleans()))
    if draw(st.booleans()): s = {k: v.float() if v.is_floating_point() else v for k, v in s.items()}
    return s, draw(st.floats(0, 10)), draw(st.floats(0, 10)), draw(st.floats(0, 10))


@given(state=states())
def test_objectives_are_finite_on_any_valid_state(state):
    "Every valid state gives both objectives a finite value, and numpy arrays give the value of the same tensors."
    s, lam, alpha, laplacian = state
    as_np = {k: v.numpy() for k, v in s.items()}
    v = _transclip(s, lam=lam)
    assert math.isfinite(v)
    assert _transclip(as_np, lam=lam) == v
    v = _stata(s, lam=lam, alpha=alpha, laplacian=laplacian)
    assert math.isfinite(v)
    assert _stata(as_np, lam=lam, alpha=alpha, laplacian=laplacian) == v


# ------------------------------------------------------------------------------------------- streaming potentials
def test_c_transform_names_g_and_C():
    with pytest.raises(ValueError, match=r'^g has shape \(3,\) but C has shape \(5, 4\)'):
        c_transform(torch.zeros(3, dtype=torch.float64), torch.zeros(5, 4, dtype=torch.float64), 0.1)


def test_dual_plan_names_g_C_and_row_mass():
    with pytest.raises(ValueError, match=r'^g has shape \(3,\) but C has shape \(5, 4\)'):
        dual_plan(torch.zeros(3, dtype=torch.float64), torch.zeros(5, 4, dtype=torch.float64), 0.1, torch.full((5,), 0.2, dtype=torch.float64))
    with pytest.raises(ValueError, match=r'^row_mass has shape \(4,\) but C has shape \(5, 4\)'):
        dual_plan(torch.zeros(4, dtype=torch.float64), torch.zeros(5, 4, dtype=torch.float64), 0.1, torch.full((4,), 0.25, dtype=torch.float64))


def test_average_potential_names_g_and_g_new():
    with pytest.raises(ValueError, match=r'^g has shape \(3,\) but g_new has shape \(4,\)'):
        average_potential(torch.zeros(3, dtype=torch.float64), 1.0, torch.zeros(4, dtype=torch.float64), 1.0)


def test_potentials_of_matching_length_are_unchanged():
    "Valid potentials: the c-transform and the running mean of their closed forms."
    g, C = torch.tensor([0.5, -0.5, 0.0], dtype=torch.float64), torch.arange(6, dtype=torch.float64).reshape(2, 3)
    want = -0.1 * math.log(2) - 0.1 * torch.logsumexp((g - C) / 0.1, dim=1)
    assert torch.equal(c_transform(g, C, 0.1), want)
    assert torch.allclose(average_potential(g, 3.0, 2 * g, 1.0), (3 * g + 2 * g) / 4, atol=1e-15)


# ---------------------------------------------------------------------------------------- unbalanced options
@pytest.mark.parametrize('rhos,pattern', [((-1,), r'^rhos\[0\]=-1; expected rhos\[0\] >= 0'),
                                          ((1.0, math.nan), r'^rhos\[1\]=nan'),
                                          ((0.5, 'x'), r"^rhos\[1\]='x'")])
def test_robust_options_names_rhos(rhos, pattern):
    with pytest.raises((ValueError, TypeError), match=pattern): robust_options(rhos=rhos)


def test_robust_options_accepts_the_balanced_strength():
    opts = robust_options(rhos=(0.3, math.inf))
    assert opts['geotter-uot(rho=inf)'] == dict(solver='unbalanced', reg=0.01, rho=math.inf)
    assert opts['geotter-uot(rho=0.3)']['rho'] == 0.3


# ------------------------------------------------------------------------------------------- template scores
def test_template_scores_names_Ys_then_X():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"^Ys has embedding dimension 4, which does not match X's 5"):
        template_scores(rng.normal(size=(10, 5)), rng.normal(size=(2, 3, 4)))
