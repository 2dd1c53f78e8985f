"""The one input boundary (`geotter.core.as_tensor` / `check_matrix` / `check_prior`), seen from every public entry.

Any layout of the same float64 numbers (a reversed or strided view, Fortran order, big-endian bytes, a read-only
array, a list of lists, a tensor that tracks gradients, integers or float16 where the numbers are whole) gives
bit for bit the result of the plain float64 array; what the boundary cannot use (a meta tensor, complex numbers,
objects, a ragged list, NaN or inf, an empty axis, strings) is refused with one line that names the argument.
The profile (40 derandomized examples) is the shared one in tests/conftest.py."""
import warnings

import numpy as np
import pytest
import scipy.sparse
import torch
from hypothesis import given, strategies as st

import geotter as g
from geotter.core import Task, predict

torch.set_num_threads(1)

N, M, D = 24, 3, 5


def _problem(seed):
    "Whole-number embeddings (so that int and float16 copies hold the same numbers), their logits, posteriors, a prior."
    rng = np.random.default_rng(seed)
    Y = rng.integers(-4, 5, size=(M, D)).astype(np.float64); Y[:, 0] = np.arange(1, M + 1) * 3   # no zero row
    X = Y[rng.integers(M, size=N)] + rng.integers(-2, 3, size=(N, D)); X[:, 0] += 10
    L = rng.integers(-6, 7, size=(N, M)).astype(np.float64)
    P = np.exp(L / 3); P /= P.sum(1, keepdims=True)
    prior = rng.dirichlet(np.ones(M) * 2)
    return dict(X=X, Y=Y, logits=L, probs=P, prior=prior)


def _np(r):
    "A result as a dict of numpy arrays (tensors detached, sparse made dense, results unpacked)."
    if isinstance(r, tuple): return {f'{i}': v for i, x in enumerate(r) for v in _np(x).values()}
    if hasattr(r, 'labels') and hasattr(r, 'plan'): return {'labels': _np(r.labels)['a'], 'plan': _np(r.plan)['a']}
    if scipy.sparse.issparse(r): r = r.toarray()
    if isinstance(r, torch.Tensor): r = (r.to_dense() if r.layout != torch.strided else r).detach().cpu().numpy()
    return {'a': np.asarray(r)}


def _stream(Y, X, prior):
    s = g.StreamingGeoTTER(Y, prior=prior, k=3)
    return s.partial_fit_predict(X), s.partial_fit_predict(X)


# entry point -> (the arguments it reads, the call)
ENTRIES = {
    'geotter': (('X', 'Y', 'prior'), lambda a: g.geotter(a['X'], a['Y'], a['prior'], k=3)),
    'prepare': (('X', 'Y', 'prior'), lambda a: g.prepare(a['X'], a['Y'], k=3).adapt(a['prior'])),
    'otter': (('logits', 'prior'), lambda a: g.otter(a['logits'], a['prior'])),
    'prior_matching': (('logits', 'prior'), lambda a: g.prior_matching(a['logits'], a['prior'])),
    'em_prior': (('probs', 'prior'), lambda a: g.em_prior(a['probs'], a['prior'])),      # prior: its source_prior
    'kmeans': (('X',), lambda a: g.kmeans(a['X'], M)),
    'knn_graph': (('X',), lambda a: g.knn_graph(a['X'], 3)),
    'transclip_zs': (('X', 'Y'), lambda a: g.transclip_zs(a['X'], a['Y'])),
    'zlap': (('X', 'Y'), lambda a: g.zlap(a['X'], a['Y'])),
    'zero_shot_logits': (('X', 'Y'), lambda a: g.zero_shot_logits(a['X'], a['Y'])),
    'StreamingGeoTTER': (('Y', 'X', 'prior'), lambda a: _stream(a['Y'], a['X'], a['prior'])),
}

PARAMETER = {('em_prior', 'prior'): 'source_prior'}   # where the parameter has another name than the argument

def _readonly(a): a = a.copy(); a.flags.writeable = False; return a

# the same numbers in another layout; the last two only where the numbers are whole (X, Y, logits)
LAYOUTS = {
    'reversed view': lambda a: np.ascontiguousarray(a[::-1])[::-1],
    'strided view': lambda a: np.repeat(a, 2, axis=-1)[..., ::2],
    'Fortran order': np.asfortranarray,
    'big-endian': lambda a: a.astype('>f8'),
    'read-only': _readonly,
    'list of lists': lambda a: a.tolist(),
    'tensor with grad': lambda a: torch.tensor(a, requires_grad=True),
    'transposed tensor': lambda a: torch.tensor(a.T.copy()).T if a.ndim == 2 else torch.tensor(a)[::1],
    'int64': lambda a: a.astype(np.int64),
    'float16': lambda a: a.astype(np.float16),
}
WHOLE = ('X', 'Y', 'logits')


def _same(ref, got):
    ref, got = _np(ref), _np(got)
    assert ref.keys() == got.keys()
    for k in ref:
        np.testing.assert_array_equal(got[k], ref[k])


@pytest.mark.parametrize('entry', list(ENTRIES))
@given(seed=st.integers(0, 2**16), data=st.data())
def test_every_layout_gives_the_plain_result(entry, seed, data):
    "One argument in another layout: the entry gives bit for bit the result of the plain float64 arrays."
    args, call = ENTRIES[entry]
    arg = data.draw(st.sampled_from(args), label='argument')
    layouts = [k for k in LAYOUTS if arg in WHOLE or k not in ('int64', 'float16')]
    layout = data.draw(st.sampled_from(layouts), label='layout')
    plain = _problem(seed)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')        # e.g. a solver's convergence note: the same for both calls
        ref = call(plain)
        got = call(dict(plain, **{arg: LAYOUTS[layout](plain[arg])}))
    _same(ref, got)


def _bad_kinds(a):
    "Inputs the boundary cannot use, each with the words the refusal must contain."
    two = a.ndim == 2
    ragged = [list(r) for r in a[:-1]] + [list(a[-1][:-1])] if two else [list(a[:-1]), [1.0]]
    nan, inf = a.copy(), a.copy(); nan.flat[1] = np.nan; inf.flat[0] = -np.inf
    return {
        'meta tensor': (torch.tensor(a).to('meta'), 'meta tensor'),
        'complex': (a + 1j, 'complex'),
        'complex tensor': (torch.tensor(a + 1j), 'complex'),
        'objects': (a.astype(object), 'object'),
        'strings': (a.astype(str), 'dtype <U'),
        'ragged list': (ragged, 'rows of different lengths'),
        'NaN': (nan, 'NaN'),
        'inf': (inf, 'infinite'),
        'empty axis': (a[:0], 'expected'),
        'scipy sparse': (scipy.sparse.csr_matrix(np.atleast_2d(a)), 'sparse'),
    }

_INTERNALS = ('Tensor.item', 'numpy()', 'stride', 'byte order', 'Traceback', 'torch.', 'cannot be called')


@pytest.mark.parametrize('entry', list(ENTRIES))
@given(seed=st.integers(0, 2**16), data=st.data())
def test_unusable_input_is_refused_in_one_line(entry, seed, data):
    "An unusable argument raises TypeError/ValueError: one line, naming the argument, without torch's internals."
    args, call = ENTRIES[entry]
    plain = _problem(seed)
    arg = data.draw(st.sampled_from(args), label='argument')
    kinds = _bad_kinds(plain[arg])
    kind = data.draw(st.sampled_from(sorted(kinds)), label='kind')
    bad, words = kinds[kind]
    with pytest.raises((TypeError, ValueError)) as e:
        call(dict(plain, **{arg: bad}))
    msg, name = str(e.value), PARAMETER.get((entry, arg), arg)
    assert '\n' not in msg and msg.startswith(name) and msg[len(name)] in ' =' and words in msg, msg
    assert not any(w in msg for w in _INTERNALS if w != 'torch.' or 'dtype torch.' not in msg), msg


@pytest.mark.filterwarnings('ignore:Sparse CSR tensor support is in beta')
@given(seed=st.integers(0, 2**16), kind=st.sampled_from(['csr', 'coo', 'torch coo', 'torch csr']))
def test_sparse_scores_predict_like_dense(seed, kind):
    "`predict` is documented to take sparse plans: every sparse format gives the labels of the dense matrix."
    rng = np.random.default_rng(seed)
    S = rng.random((N, M)) * (rng.random((N, M)) < 0.5)
    sp = {'csr': scipy.sparse.csr_matrix, 'coo': scipy.sparse.coo_matrix,
          'torch coo': lambda a: torch.tensor(a).to_sparse_coo(), 'torch csr': lambda a: torch.tensor(a).to_sparse_csr()}[kind](S)
    np.testing.assert_array_equal(np.asarray(predict(sp)), predict(S))


@pytest.mark.parametrize('prior, words', [([.5, .6, .2], 'sums to'), ([-.1, .6, .5], 'negative'), ([.5, .5], 'expected (3,)'),
                                          ([np.nan, .5, .5], 'NaN'), ('zipf', "expected an array or 'uniform'")])
def test_posteriors_refuse_a_bad_prior(prior, words):
    "`posteriors` checks the prior even for a map that does not use it (the zero-shot one)."
    from geotter.studies.calibration import posteriors
    p = _problem(0)
    task = Task('t', labels=np.zeros(N, dtype=np.int64), X=p['X'], Y=p['Y'])
    for method in ('zs', 'otter-plan'):
        with pytest.raises(ValueError, match=r'^prior[ =]'):
            posteriors(method, task, prior=prior)
        with pytest.raises(ValueError) as e: posteriors(method, task, prior=prior)
        assert words in str(e.value)
    np.testing.assert_allclose(posteriors('zs', task, prior=p['prior']).sum(1), 1)


def _record(monkeypatch, fn_name):
    "Every `geotter` module attribute bound to `geotter.core.<fn_name>` replaced by a wrapper listing the `name` of each call."
    import inspect, sys
    import geotter.core as core, geotter.method           # every module of the pipeline imported before the patch
    orig, calls = getattr(core, fn_name), []
    sig = inspect.signature(orig)
    def wrapper(*args, **kwargs):
        bound = sig.bind(*args, **kwargs); bound.apply_defaults()
        calls.append(bound.arguments['name'])
        return orig(*args, **kwargs)
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or not (mod_name == 'geotter' or mod_name.startswith('geotter.')): continue
        for attr, value in list(vars(mod).items()):
            if value is orig: monkeypatch.setattr(mod, attr, wrapper)
    return calls


@pytest.mark.parametrize('with_prior', [True, False])
def test_geotter_validates_its_inputs_once(monkeypatch, with_prior):
    """One `geotter` call checks X and Y once each (`prepare`) and the prior once (`Prepared.adapt`): k-means, the
    k-NN search, the transport (the exact solver's trusted kernel, `emd_trusted`) and the smoothing run on the checked
    tensors. The other call counted is on purpose: `l2_normalize` of the k-means centres (computed, not input: the
    cluster cost is 1 - cos(c_k, y_j))."""
    p = _problem(0)
    matrices, norms, priors = (_record(monkeypatch, f) for f in ('check_matrix', 'l2_normalize', 'check_prior'))
    res = g.geotter(p['X'], p['Y'], p['prior'] if with_prior else None, k=3)
    assert matrices == ['X', 'Y']
    assert norms == ['X', 'Y', 'centres']
    assert priors == (['prior'] if with_prior else [])               # prior=None: estimated, soft marginal
    assert res.plan.shape == (N, M)


@pytest.mark.parametrize('solver', ['emd', 'unbalanced'])
@pytest.mark.parametrize('with_prior', [True, False])
def test_chunked_geotter_checks_the_prior_once(monkeypatch, solver, with_prior):
    """On the chunked backend too a `geotter` call checks the prior once (`Prepared.adapt`): the exact block solver
    (`sparse_ot_trusted`, and the candidate solve of each certificate round, `candidate_ot_trusted`) and the
    semi-relaxed one (`sparse_semi_relaxed_trusted`, its fit by `sinkhorn_trusted`) take it as checked. The ratio
    unknown, the estimate is computed, not input: no check."""
    p = _problem(0)
    priors = _record(monkeypatch, 'check_prior')
    res = g.geotter(p['X'], p['Y'], p['prior'] if with_prior else None, k=3, backend='chunked', solver=solver,
                    **(dict(rho=0.1) if solver == 'unbalanced' else {}))
    assert priors == (['prior'] if with_prior else [])
    assert res.plan.shape == (N, M) and res.ot is not None


def test_geotter_chunked_checks_the_prior_once_over_rounds(monkeypatch):
    "`geotter_chunked` checks its prior once, however many certificate rounds (and widenings of the lists) the exact solver runs."
    from geotter.pipeline import geotter_chunked
    from geotter.graph import knn_indices
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(6, 16)); y = rng.integers(0, 6, 400); X = Y[y] + 1.5 * rng.normal(size=(400, 16))
    priors = _record(monkeypatch, 'check_prior')
    res = geotter_chunked(X, Y, np.bincount(y, minlength=6) / 400, neighbours=knn_indices(X, 3), centres=Y, beta=0.0, n_candidates=1)
    assert res.ot.stats['rounds'] >= 2 and priors == ['prior']


def test_entropic_options_checked_once(monkeypatch):
    "The entropic solvers' options are checked at the public entry only: once by `solve_ot`, once by `sinkhorn_unbalanced`, never again by the kernel (none on `geotter(X, Y)`, whose options `AdaptOptions` checked)."
    import sys
    import geotter.entropic as E, geotter.method
    from geotter.transport import solve_ot
    orig, calls = E.check_entropic_options, []
    def wrapper(*args, **kwargs):
        calls.append(1)
        return orig(*args, **kwargs)
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or not (mod_name == 'geotter' or mod_name.startswith('geotter.')): continue
        for attr, value in list(vars(mod).items()):
            if value is orig: monkeypatch.setattr(mod, attr, wrapper)
    rng = np.random.default_rng(0)
    C = rng.random((30, 4))
    solve_ot(C, 'uniform', solver='unbalanced', rho=1.0, max_iter=500)
    assert len(calls) == 1
    calls.clear(); E.sinkhorn_unbalanced(C, reg=0.05, rho=1.0)
    assert len(calls) == 1
    Y = rng.normal(size=(4, 8)); X = Y[rng.integers(4, size=30)] + 0.3 * rng.normal(size=(30, 8))
    calls.clear(); geotter.method.geotter(X, Y)                      # the ratio unknown: semi-relaxed transport
    assert calls == []
    with pytest.raises(ValueError, match='max_iter'): solve_ot(C, 'uniform', solver='sinkhorn', max_iter=0)
    with pytest.raises(ValueError, match='rho'): solve_ot(C, 'uniform', solver='unbalanced', rho=-1.0)
