r"""Transport solvers against their optimality conditions, asserted unconditionally (warnings are errors).

Entropic OT's solution is the one plan with the right marginals in Gibbs form, $\varepsilon\log P_{ij}+C_{ij}=f_i+g_j$; the
semi-relaxed (unbalanced) one has exact rows and the class potential $g_j=-\rho\log(q_j/b_j)$ of its own column sums $q$;
the exact plan reaches POT's optimal value. Non-uniform priors, some with zero entries, costs of any scale."""
import warnings

import numpy as np
import ot
import pytest
import torch
from hypothesis import given, strategies as st

from geotter.core import nll_cost
from geotter.entropic import DEFAULT_REG, sinkhorn, sinkhorn_unbalanced
from geotter.transport import otter, solve_ot, emd, _round_plan

torch.set_num_threads(1)
pytestmark = pytest.mark.filterwarnings('error')          # a solver that gives up fails the test, whatever it returns


@st.composite
def problems(draw, max_n=40, max_m=8, zeros=True):
    "(cost (n, m), prior (m,)): a non-uniform prior (zeros possible), costs of any scale, ties possible."
    n, m = draw(st.integers(2, max_n)), draw(st.integers(2, max_m))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    scale = draw(st.sampled_from([1e-3, 1.0, 1e3]))
    kind = draw(st.sampled_from(['gamma', 'ties', 'normal']))
    C = {'gamma': rng.gamma(2.0, 1.0, (n, m)), 'ties': rng.integers(0, 3, (n, m)).astype(float),
         'normal': rng.normal(size=(n, m))}[kind] * scale
    nu = 0.8 * rng.dirichlet(np.ones(m)) + 0.2 * rng.dirichlet(np.ones(m))
    if zeros and m > 2 and draw(st.booleans()): nu[rng.integers(m)] = 0; nu /= nu.sum()
    return C, nu


def gibbs_residual(P, C, eps):
    "max |(eps log P + C) - (f_i + g_j)| for the best additive f, g (double centring), on the plan's support."
    M = eps * np.log(P) + C
    return np.abs(M - M.mean(1, keepdims=True) - M.mean(0, keepdims=True) + M.mean()).max()


@given(problems(), st.floats(0.05, 2.0))
def test_sinkhorn_is_the_entropic_plan(prob, rel_reg):
    "Marginals to 1e-9 (L1) and the Gibbs form: the unique entropic OT plan, on the prior's support."
    C, nu = prob; n = len(C)
    eps = rel_reg * max(np.ptp(C), 1e-12)
    P = sinkhorn(C, 'uniform', nu, eps, tol=1e-10, dtype=torch.float64)
    s = nu > 0
    assert (P[:, ~s] == 0).all() and (P[:, s] > 0).all()
    assert np.abs(P.sum(1) - 1 / n).sum() <= 1e-9 and np.abs(P.sum(0) - nu).sum() <= 1e-9
    assert gibbs_residual(P[:, s], C[:, s], eps) <= 1e-7 * (np.abs(C).max() + eps)


@given(problems(), st.floats(0.05, 2.0))
def test_sinkhorn_float32_keeps_its_marginals(prob, rel_reg):
    "The default float32 path: marginals within tol (1e-4, L1) on every problem, never only when no warning was raised."
    C, nu = prob; n = len(C)
    P = sinkhorn(C, 'uniform', nu, rel_reg * max(np.ptp(C), 1e-12))
    assert P.dtype == np.float32 and np.isfinite(P).all()
    assert np.abs(P.sum(1, dtype=np.float64) - 1 / n).sum() <= 1.5e-4 and np.abs(P.sum(0, dtype=np.float64) - nu).sum() <= 1.5e-4


@given(problems(), st.floats(0.05, 2.0), st.sampled_from([0.0, 0.1, 1.0, 10.0, float('inf')]))
def test_unbalanced_fixed_point(prob, rel_reg, rel_rho):
    "Rows exactly a; P_i = a_i softmax((-C_i - rho log(q / b)) / eps) with q = P's own column sums (rho = inf: balanced)."
    C, nu = prob; n = len(C)
    s_ = max(np.ptp(C), 1e-12); eps, rho = rel_reg * s_, rel_rho * s_
    P = sinkhorn_unbalanced(C, 'uniform', nu, eps, rho, tol=1e-11, dtype=torch.float64)
    assert np.abs(P.sum(1) - 1 / n).sum() <= 1e-10
    act = nu > 0 if rho > 0 else np.ones(len(nu), bool)                     # rho = 0: the prior is not used at all
    assert (P[:, ~act] == 0).all()
    q = P.sum(0)[act]
    if rho == float('inf'):
        assert np.abs(q - nu[act]).sum() <= 1e-9; g = np.zeros(act.sum())   # potentials absorbed by the Gibbs check
        assert gibbs_residual(P[:, act], C[:, act], eps) <= 1e-7 * (np.abs(C).max() + eps); return
    g = -rho * np.log(q / nu[act]) if rho > 0 else np.zeros(act.sum())
    Z = (-C[:, act] + g) / eps; Z = Z - Z.max(1, keepdims=True)
    want = np.exp(Z) / np.exp(Z).sum(1, keepdims=True) / n
    np.testing.assert_allclose(P[:, act], want, rtol=1e-6, atol=1e-12)


@given(problems(zeros=False), st.sampled_from(['emd', 'pot', 'sinkhorn']))
def test_otter_marginals_unconditional(prob, solver):
    "OTTER's plan: rows 1/n and columns the prior on every problem; the exact plans reach POT's optimal value."
    C, nu = prob; n = len(C)
    L = -C / max(1.0, np.abs(C).max()) * 30                                  # logits of CLIP's size
    P = otter(L, nu, solver=solver)
    atol = 1e-12 if solver != 'sinkhorn' else 1e-4
    assert np.isfinite(P).all() and (P >= 0).all()
    assert np.abs(P.sum(1) - 1 / n).sum() <= atol + 1e-6 * (solver == 'sinkhorn') and np.abs(P.sum(0) - nu).sum() <= atol + 1e-6 * (solver == 'sinkhorn')
    if solver != 'sinkhorn':
        Cn = np.asarray(nll_cost(L))
        ref = ot.emd2(np.full(n, 1 / n), nu, Cn)
        assert (P * Cn).sum() <= ref + 1e-9 * (1 + abs(ref))


def test_default_reg_is_the_one_used():
    "Leaving reg out is reg=DEFAULT_REG everywhere (sinkhorn, solve_ot, otter: its plan rounded onto the polytope), and reg changes the plan."
    rng = np.random.default_rng(0)
    L = 30 * (0.7 + 0.1 * rng.normal(size=(30, 4))); nu = np.array([.4, .3, .2, .1]); C = np.asarray(nll_cost(L))
    P = sinkhorn(C, 'uniform', nu, DEFAULT_REG, dtype=torch.float64)
    np.testing.assert_array_equal(sinkhorn(C, 'uniform', nu, dtype=torch.float64), P)
    R = _round_plan(torch.tensor(P), torch.full((30,), 1 / 30, dtype=torch.float64), torch.tensor(nu)).numpy()
    np.testing.assert_allclose(solve_ot(C, nu, solver='sinkhorn', dtype=torch.float64), R, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(otter(L, nu, solver='sinkhorn', dtype=torch.float64), R, rtol=1e-12, atol=1e-15)
    assert np.abs(sinkhorn(C, 'uniform', nu, 2 * DEFAULT_REG, dtype=torch.float64) - P).max() > 1e-4
    G = ot.sinkhorn(np.full(30, 1 / 30), nu, C, DEFAULT_REG, method='sinkhorn_log', stopThr=1e-12, numItermax=100_000)
    np.testing.assert_allclose(sinkhorn(C, 'uniform', nu, tol=1e-11, dtype=torch.float64), G, atol=1e-9)


C0 = np.ones((4, 3))
BAD = [(lambda: emd('uniform', [.5, .5], C0), r"^b has shape \(2,\); expected \(3,\)"),
       (lambda: sinkhorn(C0, 'uniform', [.5, .6, -.1]), r"^b has negative entries \(min -0\.1\); expected >= 0$"),
       (lambda: sinkhorn(C0, 'uniform', [.5, .5, .5]), r"^b sums to 1\.5; expected probabilities \(summing to 1, tolerance 0\.0001\) or class counts \(non-negative whole numbers, sum > 0\)$"),
       (lambda: sinkhorn_unbalanced(C0, 'uniform', [np.nan, .5, .5]), r"^b has NaN or infinite entries$"),
       (lambda: otter(C0, [.5, .5]), r"^prior has shape \(2,\); expected \(3,\)"),
       (lambda: otter(C0, 'skewed'), r"^prior='skewed'; expected an array or 'uniform'$"),
       (lambda: solve_ot(C0, [.5, .5, .5]), r"^prior sums to 1\.5; expected probabilities \(summing to 1, tolerance 0\.0001\) or class counts \(non-negative whole numbers, sum > 0\)$"),
       (lambda: sinkhorn(C0, reg=0.0), r"^reg=0\.0; expected reg > 0$"),
       (lambda: sinkhorn(C0, reg=True), r"^reg=True of type bool; expected a finite real number$"),
       (lambda: sinkhorn_unbalanced(C0, rho=-1.0), r"^rho=-1\.0; expected rho >= 0$"),
       (lambda: sinkhorn(C0, max_iter=0), r"^max_iter=0; expected max_iter >= 1$"),
       (lambda: sinkhorn(C0, eps_scaling=1.0), r"^eps_scaling=1\.0; expected eps_scaling < 1$"),
       (lambda: solve_ot(C0, solver='simplex'), r"^solver='simplex'; expected one of \("),
       (lambda: solve_ot(C0, rho=1.0), r"^rho=1\.0 was given with solver='emd'; rho is used only by solver='unbalanced'$"),
       (lambda: otter(np.where(np.eye(4, 3) > 0, np.nan, 1.0)), r"^logits has 3 NaN or infinite entries; expected finite values$")]

@pytest.mark.parametrize('i', range(len(BAD)))
def test_bad_arguments_named(i):
    "Each error names the argument and the expectation, anchored at the start of the message."
    f, pattern = BAD[i]
    with pytest.raises((ValueError, TypeError), match=pattern): f()
