"""Property tests of the solvers (core, baselines, exact, entropic, transport), plus one test per reliability finding.

For any finite valid input a plan's marginals hold to tolerance and nothing is NaN; any invalid input raises
ValueError/TypeError naming the argument; every call finishes in under 10 s. The exact solver is checked on every
batch shape (n << m, n ~ m, n >> m), with ties, non-uniform and sparse weights on both sides, by its certificate
measured here: primal feasibility, dual feasibility, complementary slackness, and the objective of POT's ot.emd.
It runs with fallback='raise' (tests/conftest.py), so a fault in the solver cannot hide behind POT."""
import os, subprocess, sys, time, warnings
from pathlib import Path

import numpy as np
import ot
import pytest
import scipy.optimize
import scipy.sparse
import torch
from hypothesis import given, strategies as st

import geotter.core

from geotter.core import (zero_shot_logits, predict, class_prior, check_int, check_bool, check_scalar, check_temperature,
                          nll_cost, InputTypeError)
from geotter.baselines import zero_shot, prior_matching, fenchel_prior_matching
from geotter.exact import emd, EXACT_SOLVERS
from geotter.entropic import sinkhorn, sinkhorn_unbalanced, DEFAULT_REG
from geotter.transport import solve_ot, otter, project_plan, SOLVERS

torch.set_num_threads(1)
LIMIT = 10.0   # CPU seconds per call (one torch thread)

@pytest.fixture(autouse=True, scope='module')
def _compiled():
    "Compile (or load from numba's cache) the exact solver once, before any call is timed."
    try: emd('uniform', 'uniform', np.eye(2))
    except RuntimeError: pass                      # a faulty solver fails the tests that call it, not the others

def timed(f, *a, **kw):
    t0 = time.process_time(); r = f(*a, **kw); dt = time.process_time() - t0   # CPU time: independent of the machine's load
    assert dt < LIMIT, f"{getattr(f, '__name__', f)} took {dt:.1f} s"
    return r

def dense(P): return P.toarray() if scipy.sparse.issparse(P) else (P.to_dense() if torch.is_tensor(P) and P.layout != torch.strided else P)

@st.composite
def problems(draw, max_n=50, max_m=10, zeros=True):
    "(cost (n, m), prior (m,)): finite costs of any scale, priors possibly with zero entries."
    n, m = draw(st.integers(1, max_n)), draw(st.integers(1, max_m))
    seed = draw(st.integers(0, 2**31 - 1)); rng = np.random.default_rng(seed)
    scale = draw(st.sampled_from([1e-6, 1.0, 100.0, 1e6]))
    kind = draw(st.sampled_from(['gamma', 'ties', 'normal']))
    C = {'gamma': rng.gamma(2.0, 1.0, (n, m)), 'ties': rng.integers(0, 3, (n, m)).astype(float),
         'normal': rng.normal(size=(n, m))}[kind] * scale
    nu = rng.dirichlet(np.ones(m))
    if zeros and m > 1 and draw(st.booleans()):
        nu[rng.choice(m, draw(st.integers(1, m - 1)), replace=False)] = 0; nu /= nu.sum()
    return C, nu

# ------------------------------------------------------------------ exact
def _weights(rng, k, kind):
    "Weights on k points: uniform, Dirichlet, a few zeros, sparse (most entries exactly 0), label counts, or all mass on one point."
    if kind == 'uniform': return np.full(k, 1 / k)
    if kind == 'dirichlet': return rng.dirichlet(np.full(k, rng.choice([0.3, 1.0, 5.0])))
    if kind == 'few zeros':                                     # at most one in 16 at 0: kept as empty nodes when n >= m
        w = rng.dirichlet(np.ones(k)); w[rng.choice(k, int(rng.integers(1, max(k // 16, 1) + 1)), replace=False)] = 0
        return w if w.sum() > 0 else np.eye(k)[0]
    if kind == 'sparse':
        w = rng.dirichlet(np.ones(k)) * (rng.random(k) < 0.3); w[rng.integers(k)] += 0.1
        return w / w.sum()
    if kind == 'counts': return np.bincount(rng.integers(0, k, int(rng.integers(1, 3 * k + 1))), minlength=k) / 1.0
    return np.eye(k)[rng.integers(k)]

@st.composite
def ot_problems(draw, max_side=60):
    "(C (n, m), a (n,), b (m,)) in every batch shape, costs with ties or of any scale, weights uniform, skewed or with zeros."
    small, big = draw(st.integers(1, 8)), draw(st.integers(10, max_side))
    n, m = {'n<<m': (small, big), 'n>>m': (big, small), 'n~m': (big, max(1, big + draw(st.integers(-3, 3)))),
            'any': (draw(st.integers(1, max_side)), draw(st.integers(1, max_side)))}[draw(st.sampled_from(['n<<m', 'n~m', 'n>>m', 'any']))]
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    C = {'gamma': lambda: rng.gamma(2.0, 1.0, (n, m)), 'ties': lambda: rng.integers(0, 3, (n, m)).astype(float),
         'rows': lambda: np.repeat(rng.gamma(2.0, 1.0, (1, m)), n, 0) + rng.integers(0, 2, (n, 1)),
         'logits': lambda: -rng.uniform(15, 35, (n, m))}[draw(st.sampled_from(['gamma', 'ties', 'rows', 'logits']))]()
    C = C * draw(st.sampled_from([1e-6, 1.0, 1e6]))
    kinds = st.sampled_from(['uniform', 'dirichlet', 'sparse', 'counts', 'one', 'few zeros'])
    a, b = _weights(rng, n, draw(kinds)), _weights(rng, m, draw(kinds))
    return C, a / a.sum(), b / b.sum()

def certify(P, u, v, C, a, b, sg=1.0):
    "Assert the certificate of optimality, measured here: primal feasible, dual feasible, complementary slack, no gap."
    n, m = C.shape; tol = 1e-9 * max(1.0, np.abs(C).max())
    assert np.isfinite(P).all() and (P >= 0).all() and (P > 0).sum() <= n + m - 1
    np.testing.assert_allclose(P.sum(1), a, rtol=0, atol=1e-12); np.testing.assert_allclose(P.sum(0), b, rtol=0, atol=1e-12)
    assert np.isfinite(u).all() and np.isfinite(v).all()
    assert (sg * (u[:, None] + v[None, :] - C) <= tol).all()                    # u_i + v_j <= C_ij (>= when maximising)
    r, c = np.nonzero(P)
    np.testing.assert_allclose(u[r] + v[c], C[r, c], rtol=0, atol=tol)        # tight on the support
    assert abs((P * C).sum() - (a @ u + b @ v)) <= tol                          # no duality gap

@given(ot_problems())
def test_emd_certified_in_every_shape(prob):
    C, a, b = prob
    ref = (ot.emd(a, b, C - C.min(), numItermax=10**8) * C).sum()               # POT, on the same problem made non-negative
    for solver in EXACT_SOLVERS:
        P, lg = timed(emd, a, b, C, solver=solver, log=True)
        certify(P, lg['u'], lg['v'], C, a, b)
        assert abs((P * C).sum() - ref) <= 1e-9 * max(1.0, np.abs(C).max()), (solver, (P * C).sum(), ref)
        assert lg['dual_violation'] <= 1e-9 * max(1.0, np.abs(C).max()) and abs(lg['cost'] - (P * C).sum()) <= 1e-12 * max(1.0, abs(ref))
        S = timed(emd, a, b, C, solver=solver, sparse=True)
        assert scipy.sparse.issparse(S) and (S.toarray() == P).all()

@st.composite
def square_problems(draw):
    "(C (n, m), b (m,)) with n ~ m up to 300: CLIP-like costs -log softmax(scale * z), a Dirichlet or sparse prior (zeros)."
    n = draw(st.integers(20, 300)); m = max(2, n + draw(st.integers(-20, 20)))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    C = nll_cost(draw(st.sampled_from([1.0, 10.0, 100.0])) * rng.normal(size=(n, m)) / 10)
    b = rng.dirichlet(np.full(m, draw(st.sampled_from([0.3, 1.0, 5.0]))))
    if draw(st.booleans()):                                                      # sparse: most classes absent
        b = b * (rng.random(m) < draw(st.sampled_from([0.1, 0.3, 0.7]))); b[rng.integers(m)] += 1e-3; b /= b.sum()
    return C, b

@given(square_problems())
def test_emd_exact_when_n_close_to_m(prob):
    "n ~ m with fractional masses on both sides (the hardest shape, where 'auto' may take POT): our solver has POT's objective to 1e-9 relative, exact marginals, the certificate."
    C, b = prob; n, m = C.shape; a = np.full(n, 1 / n)
    ref = (ot.emd(a, b, C, numItermax=10**8) * C).sum()
    P, lg = timed(emd, 'uniform', b, C, solver='fast', log=True, fallback='raise')
    assert lg['solver'] == 'fast'
    assert abs((P * C).sum() - ref) <= 1e-9 * abs(ref), ((P * C).sum(), ref)
    certify(P, lg['u'], lg['v'], C, a, b)

@given(st.integers(16, 90), st.integers(0, 2**31 - 1), st.sampled_from(['gamma', 'ties', 'logits']))
def test_emd_with_a_few_empty_classes(n, seed, kind):
    "Samples >= classes and at most one class in 16 at 0 (kept as empty nodes, the cost not copied): certified, POT's objective."
    rng = np.random.default_rng(seed); m = int(rng.integers(16, n + 1))
    C = {'gamma': lambda: rng.gamma(2.0, 1.0, (n, m)), 'ties': lambda: rng.integers(0, 3, (n, m)).astype(float),
         'logits': lambda: nll_cost(rng.uniform(15, 35, (n, m)))}[kind]()
    a, b = _weights(rng, n, 'uniform'), _weights(rng, m, 'few zeros'); b = b / b.sum()
    ref = (ot.emd(a, b, C, numItermax=10**8) * C).sum()
    P, lg = timed(emd, a, b, C, solver='fast', log=True, fallback='raise')
    assert lg['solver'] == 'fast' and (P[:, b == 0] == 0).all()
    certify(P, lg['u'], lg['v'], C, a, b)
    assert abs((P * C).sum() - ref) <= 1e-9 * max(1.0, np.abs(C).max()), ((P * C).sum(), ref)

@given(ot_problems(), st.sampled_from(['float64', 'float32', 'fortran', 'strided']), st.sampled_from(['probabilities', 'counts', 'uniform']),
       st.sampled_from(EXACT_SOLVERS), st.booleans())
def test_emd_numpy_path_is_the_tensor_path(prob, layout, weights, solver, maximize):
    "numpy inputs (validated in numpy, `check_ot_numpy`) and the same values as CPU tensors (validated in torch): the same plan and log, to the bit."
    C, a, b = prob
    C = {'float64': C, 'float32': C.astype(np.float32), 'fortran': np.asfortranarray(C),
         'strided': np.repeat(C, 2, axis=1)[:, ::2]}[layout]
    if weights == 'counts':                                                      # class counts, normalised by both paths
        a, b = (np.rint(w * 3 * len(w)).astype(np.int64) for w in (a, b))
        a[np.argmax(a)] += a.sum() == 0; b[np.argmax(b)] += b.sum() == 0
    if weights == 'uniform': a = b = 'uniform'
    assert geotter.core.check_ot_numpy(C, a, b) is not None                      # this call takes the numpy path
    t = lambda w: w if isinstance(w, str) else torch.from_numpy(w)
    P, lg = timed(emd, a, b, C, solver=solver, maximize=maximize, log=True)
    Q, lq = timed(emd, t(a), t(b), t(C), solver=solver, maximize=maximize, log=True)
    assert isinstance(P, np.ndarray) and P.dtype == C.dtype and P.tobytes() == Q.numpy().tobytes()
    assert lg['solver'] == lq['solver'] and lg['cost'] == lq['cost']
    for k in ('u', 'v'):                                                         # duals: float64 for numpy, the cost's dtype for a tensor
        assert lg[k].dtype == np.float64 and lg[k].astype(lq[k].numpy().dtype).tobytes() == lq[k].numpy().tobytes()
    S = timed(emd, a, b, C, solver=solver, maximize=maximize, sparse=True)
    assert (S.toarray() == P).all()

def _corrupt(C, a, b, what, rng):
    "One argument of a valid problem made invalid: (name of the argument, cost, a, b)."
    n, m = C.shape; C, a, b = C.copy(), a.copy(), b.copy()
    i, j = rng.integers(n), rng.integers(m)
    if what == 'cost-nan': C[i, j] = np.nan
    elif what == 'cost-inf': C[i, j] = -np.inf
    elif what == 'cost-1d': C = C[0]
    elif what == 'cost-empty': C = C[:0]
    elif what == 'a-short': a = a[1:] if n > 1 else np.r_[a, a]
    elif what == 'a-negative': a[i] = -0.5
    elif what == 'a-nan': a[i] = np.nan
    elif what == 'b-sum': b = b * 0.7                                            # neither probabilities nor counts
    elif what == 'b-inf': b[j] = np.inf
    elif what == 'b-2d': b = b[None]
    elif what == 'b-str': b = 'peaked'
    elif what == 'b-bool-matrix': b = np.ones((m, 1), bool)
    return what.split('-')[0], C, a, b

@given(ot_problems(max_side=20), st.sampled_from(['cost-nan', 'cost-inf', 'cost-1d', 'cost-empty', 'a-short', 'a-negative',
                                                  'a-nan', 'b-sum', 'b-inf', 'b-2d', 'b-str', 'b-bool-matrix']),
       st.integers(0, 2**31 - 1))
def test_emd_numpy_path_errors_named(prob, what, seed):
    "An invalid numpy input is never taken by the numpy path; emd raises the error the tensor path raises, naming the argument."
    name, C, a, b = _corrupt(*prob, what, np.random.default_rng(seed))
    assert geotter.core.check_ot_numpy(C, a, b) is None
    with pytest.raises((ValueError, TypeError)) as got: timed(emd, a, b, C)
    t = lambda w: w if isinstance(w, str) else torch.from_numpy(np.asarray(w))
    with pytest.raises((ValueError, TypeError)) as ref: timed(emd, t(a), t(b), t(C))
    assert str(got.value).startswith(name) and str(got.value) == str(ref.value), (str(got.value), str(ref.value))

@given(ot_problems())
def test_emd_maximize_is_min_of_negated_cost(prob):
    C, a, b = prob
    for solver in EXACT_SOLVERS:
        P, lg = timed(emd, a, b, C, solver=solver, maximize=True, log=True)
        np.testing.assert_array_equal(P, timed(emd, a, b, -C, solver=solver))   # the same plan, ties broken alike
        certify(P, lg['u'], lg['v'], C, a, b, sg=-1.0)

def test_emd_pot_on_clip_scale_logits():
    "POT's network simplex reads an all-negative cost (negated CLIP logits, 15 to 35) as infeasible; emd must not."
    rng = np.random.default_rng(0)
    for n, m in ((35, 14), (64, 100), (300, 10)):
        L, nu = rng.uniform(15, 35, (n, m)), rng.dirichlet(np.ones(m))
        ref = otter(L, nu, solver='fast')
        for solver in ('pot', 'emd'):
            P = otter(L, nu, solver=solver)
            np.testing.assert_allclose(P.sum(1), 1 / n, atol=1e-12); np.testing.assert_allclose(P.sum(0), nu, atol=1e-12)
            assert abs((P * L).sum() - (ref * L).sum()) <= 1e-9 * np.abs(L).max()

def test_emd_fallback_is_explicit(monkeypatch):
    "Our solver (solver='fast'; 'auto' takes POT on this shape) that cannot certify its plan: 'raise' raises (the test default), 'warn' warns and returns POT's plan."
    import geotter.exact as ex
    C, nu = np.random.default_rng(1).gamma(2.0, 1.0, (12, 4)), np.array([.1, .2, .3, .4])
    assert os.environ.get('GEOTTER_EMD_FALLBACK') == 'raise'
    monkeypatch.setattr(ex, '_emd_fast', lambda *a, **k: None)
    with pytest.raises(RuntimeError, match=r"^the exact solver could not certify its plan optimal \(fallback='raise'\)"): emd('uniform', nu, C, solver='fast')
    with pytest.warns(UserWarning, match=r"^the exact solver could not certify its plan optimal; returning POT's"):
        P = emd('uniform', nu, C, solver='fast', fallback='warn')
    np.testing.assert_array_equal(P, emd('uniform', nu, C, solver='pot'))
    monkeypatch.setenv('GEOTTER_EMD_FALLBACK', 'warn')
    with pytest.warns(UserWarning, match=r"^the exact solver could not certify"): emd('uniform', nu, C, solver='fast')
    monkeypatch.setenv('GEOTTER_EMD_FALLBACK', 'loud')
    with pytest.raises(ValueError, match=r"^GEOTTER_EMD_FALLBACK='loud'; expected one of \('warn', 'raise'\)"): emd('uniform', nu, C, solver='fast')

def test_first_call_compiles_once_and_says_so(tmp_path):
    "In a fresh install the first emd compiles the kernels and says so in one line; the next process loads them from the cache."
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(root))
    code = "import numpy as np; from geotter.exact import emd; print(emd('uniform', 'uniform', np.random.default_rng(0).random((6, 3))).sum())"   # 2 per node: our solver
    run = lambda: subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, timeout=1200, cwd=root)
    first = run()
    assert first.returncode == 0, first.stderr[-2000:]
    said = [l for l in first.stderr.splitlines() if l.startswith('geotter:')]
    assert len(said) == 1 and 'compiling the exact OT solver' in said[0] and 'once per install' in said[0], first.stderr[-2000:]
    assert list(tmp_path.rglob('*.nbi')), 'numba cached nothing'
    second = run()
    assert second.returncode == 0 and not [l for l in second.stderr.splitlines() if l.startswith('geotter:')], second.stderr[-2000:]
    assert first.stdout == second.stdout

def test_first_geotter_call_imports_neither_pot_nor_sklearn():
    "`import geotter; geotter.geotter(X, Y)` in a fresh process: POT (and scikit-learn, which POT imports) and pandas stay unimported."
    root = Path(__file__).resolve().parents[1]
    code = ("import sys, numpy as np, geotter; rng = np.random.default_rng(0); Y = rng.normal(size=(6, 32)).astype(np.float32); "
            "X = Y[rng.integers(0, 6, 60)] + rng.normal(size=(60, 32)).astype(np.float32); r = geotter.geotter(X, Y); "
            "assert len(r.labels) == 60; print(sorted(m for m in ('ot', 'sklearn', 'pandas') if m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS='1')
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, timeout=1200, cwd=root)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == '[]', out.stdout
    out = subprocess.run([sys.executable, '-c', "import sys, geotter.exact as ex, numpy as np; "
                          "ex.emd('uniform', 'uniform', np.eye(3), solver='pot'); print('ot' in sys.modules)"],
                         env=env, capture_output=True, text=True, timeout=1200, cwd=root)
    assert out.returncode == 0 and out.stdout.strip() == 'True', out.stderr[-2000:]    # and POT where its solver runs

@given(problems(zeros=False), st.sampled_from(['emd', 'pot', 'sinkhorn', 'unbalanced']))
@pytest.mark.filterwarnings('error')                                              # a warning here is a failure, not an excuse
def test_otter_plans(prob, solver):
    C, nu = prob; n, m = C.shape
    L = -C / max(1.0, np.abs(C).max()) * 30                 # logits of CLIP's size
    P = timed(otter, L, nu, solver=solver)
    assert np.isfinite(P).all() and (P >= 0).all()
    np.testing.assert_allclose(P.sum(1), 1 / n, rtol=1e-5, atol=0)            # every sample keeps its mass, every solver
    if solver in ('emd', 'pot'): np.testing.assert_allclose(P.sum(0), nu, rtol=0, atol=1e-12)
    if solver == 'sinkhorn': assert np.abs(P.sum(0) - nu).sum() <= 1e-4 * 1.001   # converged (else it would have warned)
    assert predict(P).shape == (n,)

# ------------------------------------------------------------------ entropic
@given(problems(), st.floats(0.02, 2.0), st.sampled_from([torch.float32, torch.float64]))
def test_sinkhorn_marginals(prob, rel_reg, dtype):
    C, nu = prob; n, m = C.shape
    reg = rel_reg * max(np.ptp(C), 1e-12)                   # reg relative to the cost's spread
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        P, lg = timed(sinkhorn, C, 'uniform', nu, reg, dtype=dtype, log=True)
    assert np.isfinite(P).all() and (P >= 0).all()
    np.testing.assert_allclose(P.sum(1, dtype=np.float64), 1 / n, rtol=1e-5 if dtype == torch.float32 else 1e-9, atol=0)  # rows exact
    col_err = np.abs(P.sum(0, dtype=np.float64) - nu).sum()
    assert abs(col_err - lg['marginal_err']) <= 1e-5 * (1 + col_err)                  # the error it reports is the plan's
    warned = any('did not converge' in str(x.message) and 'max_iter' in str(x.message) for x in w)
    assert warned == (lg['marginal_err'] > 1e-4)                                       # above tol exactly when it says so

@given(problems(), st.floats(0.05, 2.0), st.sampled_from([0.0, 0.01, 1.0, 100.0, float('inf')]))
def test_sinkhorn_unbalanced_rows(prob, rel_reg, rho):
    C, nu = prob; n, m = C.shape
    s = max(np.ptp(C), 1e-12)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        P = timed(sinkhorn_unbalanced, C, 'uniform', nu, rel_reg * s, rho * s, dtype=torch.float64)
    assert np.isfinite(P).all() and (P >= 0).all()
    np.testing.assert_allclose(P.sum(1), 1 / n, rtol=1e-9, atol=0)                  # the rows are the constraint: exact
    assert (P[:, nu == 0] == 0).all() or rho == 0.0

@given(problems(zeros=False))
def test_project_plan_marginals(prob):
    C, nu = prob; n, m = C.shape
    T = np.exp(-(C - C.min()) / max(np.ptp(C), 1e-12))     # positive matrix
    P = timed(project_plan, T, 'uniform', nu)
    assert np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(0), nu, atol=1e-9); assert np.abs(P.sum(1) - 1 / n).sum() <= 1e-5

# ------------------------------------------------------------------ baselines and core
@given(problems())
def test_baselines_never_nan(prob):
    C, nu = prob
    L = -C / max(1.0, np.abs(C).max()) * 30
    np.testing.assert_allclose(timed(zero_shot, L).sum(1), 1, atol=1e-12)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        for form in ('paper', 'bias'):
            P = timed(prior_matching, L, nu, form=form)
            assert np.isfinite(P).all() and (P[:, nu == 0] == 0).all()
            np.testing.assert_allclose(P.sum(1), 1, atol=1e-9)
        P = timed(fenchel_prior_matching, L, nu, max_iter=100)
        assert np.isfinite(P).all() and (P[:, nu == 0] == 0).all()

@given(st.integers(1, 50), st.integers(1, 10), st.integers(2, 64), st.sampled_from([1e-200, 1e-8, 1.0, 1e8, 1e200]),
       st.integers(0, 2**31 - 1))
def test_zero_shot_logits_any_scale(n, m, d, scale, seed):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(n, d)), rng.normal(size=(m, d))
    ref = zero_shot_logits(X, Y)
    np.testing.assert_allclose(zero_shot_logits(X * scale, Y / scale), ref, rtol=1e-10, atol=1e-10)
    assert np.isfinite(ref).all() and np.abs(ref).max() <= 100 * (1 + 1e-12)

@given(problems())
def test_predict_dense_sparse(prob):
    C, _ = prob
    P = np.where(C > np.median(C), C, 0.0)
    S = scipy.sparse.csr_matrix(P); S.eliminate_zeros()
    assert (predict(S) == predict(P)).all()
    assert (predict(torch.tensor(P).to_sparse()).numpy() == predict(P)).all()

# ------------------------------------------------------------------ invalid input
BAD_SCALARS = [0, -1.0, float('nan'), float('inf'), True, '0.1', None, 1 + 2j]

@pytest.mark.parametrize('bad', BAD_SCALARS)
def test_bad_reg_named(bad):
    C = np.ones((4, 3))
    for f in (lambda: sinkhorn(C, reg=bad), lambda: sinkhorn_unbalanced(C, reg=bad), lambda: solve_ot(C, solver='sinkhorn', reg=bad if bad is not None else -1.0)):   # solve_ot: None means DEFAULT_REG
        with pytest.raises((ValueError, TypeError), match='reg'): timed(f)

@pytest.mark.parametrize('bad', [0, 1.5, True, '3', None, np.float64(2.0)])
def test_bad_max_iter_named(bad):
    C = np.ones((4, 3))
    for f in (lambda: sinkhorn(C, max_iter=bad), lambda: emd('uniform', 'uniform', C, max_iter=bad), lambda: prior_matching(C, 'uniform', max_iter=bad),
              lambda: fenchel_prior_matching(C, 'uniform', max_iter=bad), lambda: project_plan(C, max_iter=bad)):
        with pytest.raises((ValueError, TypeError), match='max_iter'): timed(f)

@pytest.mark.parametrize('bad', [True, 0, -0.1, float('nan'), '1', 1e-310])
def test_bad_temperature_named(bad):
    X = np.eye(3)
    for f in (lambda: zero_shot_logits(X, X, temperature=bad), lambda: zero_shot(X, temperature=bad),
              lambda: prior_matching(X, 'uniform', temperature=bad), lambda: fenchel_prior_matching(X, 'uniform', temperature=bad)):
        with pytest.raises((ValueError, TypeError), match='temperature'): timed(f)

@given(st.sampled_from(['nan', 'inf', 'str', 'complex', 'object', '1d', 'empty']),
       st.sampled_from(['emd', 'sinkhorn', 'unbalanced', 'otter', 'pm', 'fpm', 'zs', 'project']))
def test_bad_matrix_named(kind, fn):
    M = np.ones((4, 3))
    M = {'nan': np.where(np.eye(4, 3) > 0, np.nan, 1.0), 'inf': np.where(np.eye(4, 3) > 0, np.inf, 1.0), 'str': M.astype(str),
         'complex': M + 1j, 'object': M.astype(object), '1d': np.ones(4), 'empty': np.ones((0, 3))}[kind]
    name = {'emd': 'cost', 'sinkhorn': 'cost', 'unbalanced': 'cost', 'otter': 'logits', 'pm': 'logits', 'fpm': 'logits',
            'zs': 'logits', 'project': 'plan'}[fn]
    f = {'emd': lambda: emd('uniform', 'uniform', M), 'sinkhorn': lambda: sinkhorn(M), 'unbalanced': lambda: sinkhorn_unbalanced(M),
         'otter': lambda: otter(M), 'pm': lambda: prior_matching(M, 'uniform'), 'fpm': lambda: fenchel_prior_matching(M, 'uniform'),
         'zs': lambda: zero_shot(M), 'project': lambda: project_plan(M)}[fn]
    with pytest.raises((ValueError, TypeError), match=name): timed(f)

@given(st.sampled_from(['short', 'negative', 'nan', 'sum', 'str', 'complex']), st.sampled_from(['emd', 'sinkhorn', 'otter', 'pm', 'fpm']))
def test_bad_prior_named(kind, fn):
    C = np.ones((4, 3))
    p = {'short': [0.5, 0.5], 'negative': [1.5, -0.5, 0.0], 'nan': [np.nan, 0.5, 0.5], 'sum': [0.5, 0.5, 0.5],
         'str': 'skewed', 'complex': np.ones(3) / 3 + 0j}[kind]
    f = {'emd': lambda: emd('uniform', p, C), 'sinkhorn': lambda: sinkhorn(C, 'uniform', p), 'otter': lambda: otter(C, p),
         'pm': lambda: prior_matching(C, p), 'fpm': lambda: fenchel_prior_matching(C, p)}[fn]
    name = 'b' if fn in ('emd', 'sinkhorn') else 'prior'
    with pytest.raises((ValueError, TypeError), match=rf"^{name}( has | sums to |=| of type )"): timed(f)

def test_solver_options_named():
    C = np.ones((4, 3))
    with pytest.raises(ValueError, match="solver='simplex'"): solve_ot(C, solver='simplex')
    with pytest.raises(ValueError, match="solver='simplex'"): otter(C, solver='simplex')
    with pytest.raises(ValueError, match="form='x'"): prior_matching(C, 'uniform', form='x')
    with pytest.raises(ValueError, match="objective='x'"): fenchel_prior_matching(C, 'uniform', objective='x')
    with pytest.raises(TypeError, match="sparse='yes'"): emd('uniform', 'uniform', C, sparse='yes')
    with pytest.raises(ValueError, match='dtype'): sinkhorn(C, dtype=torch.int64)

def test_numpy_integers_accepted_bools_rejected():
    C = np.random.default_rng(0).gamma(2.0, 1.0, (20, 4))
    P = sinkhorn(C, reg=np.float32(0.5), max_iter=np.int64(500), dtype=torch.float64)
    np.testing.assert_allclose(P.sum(0), 0.25, atol=1e-4)
    emd('uniform', 'uniform', C, max_iter=np.int32(10**6)); prior_matching(C, 'uniform', max_iter=np.uint16(50))
    assert check_int(np.int64(3), 'k') == 3 and type(check_int(np.int64(3), 'k')) is int
    assert check_bool(np.bool_(False), 'include_self') is False
    for bad in ('yes', 1, None): 
        with pytest.raises(TypeError, match='include_self'): check_bool(bad, 'include_self')
    with pytest.raises(TypeError, match='temperature=True'): check_temperature(True)
    with pytest.raises(TypeError, match='steps'): check_int(True, 'steps')
    with pytest.raises(TypeError, match='n_clusters'): check_int(2.0, 'n_clusters')

# ------------------------------------------------------------------ the reliability findings, one test each
@pytest.fixture
def toy():
    rng = np.random.default_rng(0); Y = rng.normal(size=(4, 8)); lab = rng.choice(4, 40, p=[.4, .3, .2, .1])
    X = Y[lab] + 0.7 * rng.normal(size=(40, 8))
    return X, Y, np.asarray(zero_shot_logits(X, Y))

def test_prior_matching_zero_prior_no_nan(toy):
    X, Y, L = toy
    for form in ('paper', 'bias'):
        P = prior_matching(L, [.5, .5, 0, 0], form=form)
        assert np.isfinite(P).all() and (P[:, 2:] == 0).all()
        np.testing.assert_allclose(P.mean(0), [.5, .5, 0, 0], atol=1e-6)
    P = fenchel_prior_matching(L, [.5, .5, 0, 0])
    assert np.isfinite(P).all() and (P[:, 2:] == 0).all()

def test_sinkhorn_float32_small_reg_marginals(toy):
    X, Y, L = toy
    nu = np.array([.4, .3, .2, .1])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        P = otter(L * 100, nu, solver='sinkhorn', reg=1e-4)
    assert P.dtype == np.float32 and not w                          # float32 misses the marginals here: float64 takes over
    np.testing.assert_allclose(P.sum(1, dtype=np.float64), 1 / len(P), rtol=1e-5, atol=0)
    assert np.abs(P.sum(0, dtype=np.float64) - nu).sum() <= 1e-4 * 1.001

def test_sinkhorn_huge_cost_never_hangs(toy):
    X, Y, L = toy
    C = nll_cost(L); C[0, 0] = 1e39                      # finite in float64, inf in float32
    P = timed(solve_ot, C, [.4, .3, .2, .1], solver='sinkhorn')
    assert np.isfinite(P).all(); np.testing.assert_allclose(P.sum(0), [.4, .3, .2, .1], atol=1e-4)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')                  # a cost range of 1e39 at reg 0.1 may not converge: it must say so, and return
        P = timed(otter, L * 1e37, [.4, .3, .2, .1], solver='sinkhorn')
    assert np.isfinite(P).all(); np.testing.assert_allclose(P.sum(1), 1 / len(P), rtol=1e-5, atol=0)
    P = timed(otter, L * 1e37, [.4, .3, .2, .1])
    np.testing.assert_allclose(P.sum(0), [.4, .3, .2, .1], atol=1e-12)

def test_zero_shot_logits_extreme_scales(toy):
    X, Y, L = toy
    np.testing.assert_allclose(zero_shot_logits(X * 1e200, Y), L, rtol=1e-12)
    np.testing.assert_allclose(zero_shot_logits(X * 1e-200, Y), L, rtol=1e-12)
    with pytest.raises(ValueError, match='temperature'): zero_shot_logits(X, Y, temperature=1e-310)

def test_non_numeric_dtypes_named(toy):
    X, Y, L = toy
    with pytest.raises(TypeError, match='X has dtype'): zero_shot_logits(X.astype(str), Y)
    with pytest.raises(TypeError, match='Y has dtype complex'): zero_shot_logits(X, Y + 1j)
    with pytest.raises(TypeError, match='logits has dtype object'): otter(L.astype(object))
    with pytest.raises(TypeError, match='cost has dtype torch.complex'): emd('uniform', 'uniform', torch.ones(3, 2, dtype=torch.complex64))
    with pytest.raises(TypeError, match='include_self'): check_bool('yes', 'include_self')

def test_class_prior_rejects_non_integer_labels():
    with pytest.raises(TypeError, match='labels has non-integer entries'): class_prior([0.5, 1.0])
    with pytest.raises(TypeError, match='labels'): class_prior(['a', 'b'])
    np.testing.assert_allclose(class_prior(np.array([0.0, 1.0, 1.0])), [1 / 3, 2 / 3])   # whole-number floats are labels
    np.testing.assert_allclose(class_prior(np.array([0, 2]), np.int64(3)), [.5, 0, .5])

