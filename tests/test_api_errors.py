"""Every public entry point refuses every bad array, prior and scalar with an error that names the argument.

A matrix of (entry point, argument, bad value): None, a string, a scalar, empty axes, the wrong number of axes, NaN,
inf, complex, object and string dtypes, ragged lists, dicts for array arguments; negative, unnormalised, short, NaN,
all-zero and two-dimensional priors; zero, negative, fractional, boolean, NaN, infinite and string scalars. Each call
must raise a `ValueError` or `TypeError` (`InputTypeError` is both) whose message names the argument, never another
exception and never a silent result.
"""
import numpy as np
import pandas as pd
import pytest
import torch

import geotter as G
from geotter.ratio import ratio_errors, em_fitted_temperature, em_sparse, bbse_self, cluster_votes, relaxed_mass, alternating, \
    stata_mass, realistic_eval                 # the benchmark's ratio estimators, outside the top-level API
from geotter.chunked import sample_rows
from geotter.transductive import realistic_batch
from geotter.synthetic import class_sizes
from geotter.labelfree import split_halves
from geotter.calibration import split_rows
from geotter.streaming import stream_order

rng = np.random.default_rng(0)
N, M, D = 40, 6, 16
X = rng.normal(size=(N, D)); Y = rng.normal(size=(M, D)); L = X @ Y.T * 3; P = rng.dirichlet(np.ones(M))
LABELS = np.arange(N) % M; PROBS = torch.softmax(torch.tensor(L), 1).numpy()
NEIGHBOURS = G.knn_search(X, 5).indices; CENTRES = G.kmeans(X, 4)[0]; TASK = G.Task('t', LABELS, X=X, Y=Y)


def bad_matrices(v):
    eye = np.eye(*v.shape, dtype=bool)
    return {'None': None, 'str': 'abc', 'scalar': 3.0, 'empty list': [], 'no rows': v[:0], 'no columns': v[:, :0],
            '1-D': v[0], '3-D': v[None], 'NaN': np.where(eye, np.nan, v), 'inf': np.where(eye, np.inf, v),
            'complex': v.astype(complex), 'object': v.astype(object), 'strings': v.astype(str),
            'ragged': [[1.0, 2.0], [1.0]], 'dict': {'a': 1}}

def bad_priors(m):
    return {'bogus': 'bogus', 'negative': np.r_[-0.1, np.full(m - 1, 1.1 / (m - 1))], 'sums to 2': np.full(m, 2 / m),
            'short': np.full(m - 1, 1 / (m - 1)), 'NaN': np.r_[np.nan, np.full(m - 1, 1 / (m - 1))], 'zeros': np.zeros(m),
            '2-D': np.full((1, m), 1 / m), 'strings': ['a'] * m, 'inf': np.r_[np.inf, np.zeros(m - 1)]}

BAD_INTS = {'zero': 0, 'negative': -1, 'fractional': 1.5, 'bool': True, 'NaN': float('nan'), 'inf': float('inf'), 'str': '3', 'None': None}
BAD_POSITIVE = {'zero': 0.0, 'negative': -1.0, 'bool': True, 'NaN': float('nan'), 'inf': float('inf'), 'str': '3'}

# entry point: (callable, valid keyword arguments, {argument: kind}); kinds: 'matrix', 'prior', 'int', 'positive'
CALLS = {
    'zero_shot_logits': (G.zero_shot_logits, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix', 'temperature': 'positive'}),
    'predict': (G.predict, dict(scores=L), {'scores': 'matrix'}),
    'zero_shot': (G.zero_shot, dict(logits=L), {'logits': 'matrix', 'temperature': 'positive'}),
    'prior_matching': (G.prior_matching, dict(logits=L, prior=P), {'logits': 'matrix', 'prior': 'prior'}),
    'fenchel_prior_matching': (G.fenchel_prior_matching, dict(logits=L, prior=P), {'logits': 'matrix', 'prior': 'prior', 'lam': 'positive'}),
    'prior_shift': (G.prior_shift, dict(logits=L, prior=P), {'logits': 'matrix', 'prior': 'prior', 'max_iter': 'int'}),
    'emd': (G.emd, dict(cost=-L, b=P), {'cost': 'matrix', 'b': 'prior'}),
    'sinkhorn': (G.sinkhorn, dict(cost=-L / 10, b=P), {'cost': 'matrix', 'b': 'prior', 'reg': 'positive'}),
    'sinkhorn_unbalanced': (G.sinkhorn_unbalanced, dict(cost=-L / 10, b=P), {'cost': 'matrix', 'b': 'prior', 'reg': 'positive', 'rho': 'positive'}),
    'otter': (G.otter, dict(logits=L, prior=P), {'logits': 'matrix', 'prior': 'prior', 'reg': 'positive'}),
    'solve_ot': (G.solve_ot, dict(cost=-L, prior=P), {'cost': 'matrix', 'prior': 'prior', 'reg': 'positive'}),
    'em_prior': (G.em_prior, dict(probs=PROBS), {'probs': 'matrix', 'source_prior': 'prior'}),
    'online_em_prior': (G.online_em_prior, dict(probs=PROBS), {'probs': 'matrix', 'source_prior': 'prior', 'q': 'prior'}),
    'estimate_label_ratio': (G.estimate_label_ratio, dict(logits=L), {'logits': 'matrix', 'power': 'positive', 'shape': 'positive', 'per_class': 'positive'}),
    'bbse_prior': (G.bbse_prior, dict(target_probs=PROBS, source_probs=PROBS, source_labels=LABELS), {'target_probs': 'matrix', 'source_probs': 'matrix'}),
    'confusion_rates': (G.confusion_rates, dict(probs=PROBS, labels=LABELS), {'probs': 'matrix'}),
    'total_variation': (G.total_variation, dict(p=P, q=np.full(M, 1 / M)), {'p': 'prior', 'q': 'prior'}),
    'knn_graph': (G.knn_graph, dict(X=X, k=5), {'X': 'matrix', 'k': 'int'}),
    'kmeans': (G.kmeans, dict(X=X, n_clusters=4), {'X': 'matrix', 'n_clusters': 'int'}),
    'cluster_cost': (G.cluster_cost, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix', 'n_clusters': 'int'}),
    'geotter': (G.geotter, dict(X=X, Y=Y, prior=P), {'X': 'matrix', 'Y': 'matrix', 'prior': 'prior', 'k': 'int', 'temperature': 'positive', 'reg': 'positive'}),
    'geotter_chunked': (G.geotter_chunked, dict(X=X, Y=Y, prior=P, neighbors=NEIGHBOURS, centroids=CENTRES),
                        {'X': 'matrix', 'Y': 'matrix', 'prior': 'prior', 'neighbors': 'matrix', 'centroids': 'matrix', 'temperature': 'positive'}),
    'prepare': (G.prepare, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix', 'k': 'int', 'n_clusters': 'int'}),
    'adapt': (lambda prior: G.prepare(X, Y).adapt(prior), dict(prior=P), {'prior': 'prior'}),
    'transclip_zs': (G.transclip_zs, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix', 'k': 'int'}),
    'zlap': (G.zlap, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix', 'k': 'int'}),
    'stata': (G.stata, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix'}),
    'label_free_predict': (G.label_free_predict, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix'}),
    'fit_label_free': (G.fit_label_free, dict(X=X, Y=Y, logits=L), {'X': 'matrix', 'Y': 'matrix', 'logits': 'matrix', 'target': 'prior', 'temperature': 'positive'}),
    'data_driven_defaults': (G.data_driven_defaults, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix'}),
    'estimate_noise': (G.estimate_noise, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix'}),
    'stream_predict': (G.stream_predict, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix'}),
    'StreamingGeoTTER': (G.StreamingGeoTTER, dict(Y=Y), {'Y': 'matrix', 'prior': 'prior', 'temperature': 'positive', 'em_temperature': 'positive'}),
    'ensemble_embeddings': (G.ensemble_embeddings, dict(Ys=[Y, Y + 0.1]), {'Ys': 'matrix'}),
    'marginal_errors': (G.marginal_errors, dict(plan=np.full((N, M), 1 / (N * M)), prior=P), {'plan': 'matrix', 'prior': 'prior'}),
    'expected_calibration_error': (G.expected_calibration_error, dict(probs=PROBS, labels=LABELS), {'probs': 'matrix', 'n_bins': 'int'}),
    'calibration_scores': (G.calibration_scores, dict(probs=PROBS, labels=LABELS), {'probs': 'matrix', 'n_bins': 'int', 'floor': 'positive'}),
    'class_duals': (G.class_duals, dict(cost=-L, plan=np.full((N, M), 1 / (N * M))), {'cost': 'matrix', 'plan': 'matrix'}),
    'posteriors': (G.posteriors, dict(method='otter-plan', task=TASK, prior=P), {'prior': 'prior', 'temperature': 'positive'}),
    'em_fitted_temperature': (em_fitted_temperature, dict(logits=L), {'logits': 'matrix'}),
    'em_sparse': (em_sparse, dict(logits=L), {'logits': 'matrix', 'max_iter': 'int', 'tol': 'positive'}),
    'bbse_self': (bbse_self, dict(logits=L), {'logits': 'matrix'}),
    'cluster_votes': (cluster_votes, dict(X=X, logits=L), {'X': 'matrix', 'logits': 'matrix'}),
    'relaxed_mass': (relaxed_mass, dict(X=X, Y=Y, logits=L), {'logits': 'matrix'}),
    'alternating': (alternating, dict(X=X, Y=Y, logits=L), {'X': 'matrix', 'Y': 'matrix', 'logits': 'matrix', 'rounds': 'int'}),
    'stata_mass': (stata_mass, dict(X=X, Y=Y, logits=L), {'X': 'matrix', 'Y': 'matrix', 'logits': 'matrix'}),
    'ratio_errors': (ratio_errors, dict(q=P, labels=LABELS, m=M), {'q': 'prior', 'm': 'int'}),
    'class_sizes': (class_sizes, dict(n_classes=M, n_head=2, n_per_head=10, head_tail_ratio=2.0),
                    {'n_classes': 'int', 'n_per_head': 'int', 'head_tail_ratio': 'positive'}),
    'sample_rows': (sample_rows, dict(n=N), {'n': 'int', 'size': 'int'}),
    'realistic_batch': (realistic_batch, dict(labels=LABELS), {'batch_size': 'int'}),
}

# values that look bad but are documented as valid: rho = 0 (no class marginal) and inf (balanced), power = 0 (the
# uniform ratio), shape = 0 (uniform over the support), lam = 0 (no entropy term), n_clusters = None (the default, m),
# k = None for the peers (their published k, at most n - 1), X = None for label-free GeoTTER on logits alone
DOCUMENTED = {('fit_label_free', 'X'): {'None'}, ('transclip_zs', 'k'): {'None'}, ('zlap', 'k'): {'None'}, ('sinkhorn_unbalanced', 'rho'): {'zero', 'inf'}, ('estimate_label_ratio', 'power'): {'zero'},
              ('estimate_label_ratio', 'shape'): {'zero'},
              ('fenchel_prior_matching', 'lam'): {'zero'}, ('cluster_cost', 'n_clusters'): {'None'}, ('prepare', 'n_clusters'): {'None'},
              ('alternating', 'rounds'): {'zero'}, ('alternating', 'X'): {'None'}, ('stata_mass', 'X'): {'None'},
              ('stata_mass', 'logits'): {'None'}, ('sample_rows', 'size'): {'None'}}

def cases():
    for name, (f, valid, args) in CALLS.items():
        for arg, kind in args.items():
            if kind == 'matrix':
                ref = valid[arg]
                bad = bad_matrices(np.asarray(ref[0] if arg == 'Ys' else ref, dtype=float))
                if arg == 'Ys': bad = {k: [v, v] for k, v in bad.items() if k not in ('None', 'str', 'scalar', 'empty list', 'dict')}
            elif kind == 'prior': bad = bad_priors(M)
            else: bad = BAD_INTS if kind == 'int' else BAD_POSITIVE
            for case, value in bad.items():
                if case not in DOCUMENTED.get((name, arg), ()): yield pytest.param(name, arg, value, id=f'{name}-{arg}-{case}')

@pytest.mark.parametrize('name, arg, value', list(cases()))
def test_bad_argument_is_refused_by_name(name, arg, value):
    f, valid, _ = CALLS[name]
    with pytest.raises((ValueError, TypeError)) as info:
        f(**{**valid, arg: value})
    assert arg in str(info.value), f"{name}({arg}=...): {type(info.value).__name__}: {info.value}"


# an argument refused only against another one, or of a type the kinds above do not cover
RELATIONAL = {
    'split_halves n 2**62': (lambda: split_halves(2**62), 'n=4611686018427387904'),
    'split_rows n 2**62': (lambda: split_rows(2**62), 'n=4611686018427387904'),
    'stream_order n 2**62': (lambda: stream_order(2**62, 4), 'n=4611686018427387904'),
    'run_method task': (lambda: G.run_method('zs', X), 'task'),
    'geotter_on_task task': (lambda: G.geotter_on_task(X, P), 'task'),
    'posteriors task': (lambda: G.posteriors('zs', X), 'task'),
    'fit_label_free X rows': (lambda: G.fit_label_free(X[1:], Y, L), 'X'),
    'fit_label_free Y rows': (lambda: G.fit_label_free(X, Y[1:], L), 'logits'),
    'fit_label_free em_kw': (lambda: G.fit_label_free(X, Y, L, em_kw=[1]), 'em_kw'),
    'label_free_predict logits columns': (lambda: G.label_free_predict(X, Y, logits=L[:, 1:]), 'logits'),
    'StreamingGeoTTER float32 temperature': (lambda: G.StreamingGeoTTER(Y.astype(np.float32), temperature=1e-39), 'temperature'),
    'marginal_errors negative plan': (lambda: G.marginal_errors(-np.full((N, M), 1 / (N * M)), P), 'plan'),
    'geotter beta auto with one class': (lambda: G.geotter(X, Y[:1], 'uniform', beta='auto'), 'beta'),
    'geotter temperature too large for the ratio unknown': (lambda: G.geotter(X, Y, temperature=1e308), 'temperature'),
    'make_long_tail n_per_head 2**63': (lambda: G.make_long_tail(n_per_head=2**63), 'n_per_head'),
    'make_long_tail n_classes 2**63': (lambda: G.make_long_tail(n_classes=2**63), 'n_classes'),
    'make_long_tail dim 2**62': (lambda: G.make_long_tail(dim=2**62), 'dim'),
    'make_long_tail sigma_intra 1e300': (lambda: G.make_long_tail(sigma_intra=1e300), 'sigma_intra'),
    'class_prior n_classes 2**63': (lambda: G.class_prior([0, 1], 2**63), 'n_classes'),
    'ratio_errors q of another length': (lambda: ratio_errors([0.5, 0.5], LABELS, M), 'q'),
    'ratio_errors labels out of range': (lambda: ratio_errors(P, np.r_[LABELS, M], M), 'labels'),
    'ratio_errors q None': (lambda: ratio_errors(None, LABELS, M), 'q'),
    'ratio_errors m 2**63': (lambda: ratio_errors(P, LABELS, 2**63), 'm='),
    'make_long_tail n_per_head 10**400': (lambda: G.make_long_tail(n_per_head=10**400), 'n_per_head'),
    'make_long_tail prototype_drift 1e300': (lambda: G.make_long_tail(prototype_drift=1e300), 'prototype_drift'),
    'class_sizes n_classes 2**63': (lambda: class_sizes(2**63, 2, 10, 2.0), 'n_classes'),
    'class_sizes n_per_head 2**63': (lambda: class_sizes(M, 2, 2**63, 2.0), 'n_per_head'),
    'class_sizes n_head above n_classes': (lambda: class_sizes(M, M + 1, 10, 2.0), 'n_head'),
    'sample_rows n 2**63': (lambda: sample_rows(2**63), 'n='),
    'em_fitted_temperature seed negative': (lambda: em_fitted_temperature(L, seed=-1), 'seed'),
    'em_fitted_temperature seed float': (lambda: em_fitted_temperature(L, seed=1.5), 'seed'),
    'em_fitted_temperature scales empty': (lambda: em_fitted_temperature(L, scales=()), 'scales'),
    'em_fitted_temperature scales None': (lambda: em_fitted_temperature(L, scales=None), 'scales'),
    'em_fitted_temperature scales zero': (lambda: em_fitted_temperature(L, scales=(0.0, 1.0)), 'scales'),
    'em_fitted_temperature scales NaN': (lambda: em_fitted_temperature(L, scales=(float('nan'),)), 'scales'),
    'em_fitted_temperature scales str': (lambda: em_fitted_temperature(L, scales='ab'), 'scales'),
    'em_fitted_temperature scales overflow': (lambda: em_fitted_temperature(L, scales=(1e308,)), 'scales'),
    'em_sparse kappa NaN': (lambda: em_sparse(L, kappa=float('nan')), 'kappa'),
    'em_sparse kappa str': (lambda: em_sparse(L, kappa='1'), 'kappa'),
    'em_sparse kappa bool': (lambda: em_sparse(L, kappa=True), 'kappa'),
    'cluster_votes X rows': (lambda: cluster_votes(X[1:], L), 'X'),
    'alternating logits rows': (lambda: alternating(X[1:], Y, L), 'logits'),
    'alternating logits columns': (lambda: alternating(X, Y, L[:, 1:]), 'logits'),
    'alternating Y rows': (lambda: alternating(X, Y[1:], L), 'logits'),
    'realistic_eval task': (lambda: realistic_eval(X, 1), 'task'),
    'realistic_eval seed negative': (lambda: realistic_eval(TASK, 1, seed=-1, methods=['zs']), 'seed'),
    'realistic_eval seed bool': (lambda: realistic_eval(TASK, 1, seed=True, methods=['zs']), 'seed'),
    'realistic_eval methods unknown': (lambda: realistic_eval(TASK, 1, methods=['bogus']), 'methods'),
    'realistic_eval methods a string': (lambda: realistic_eval(TASK, 1, methods='zs'), 'methods'),
    'realistic_eval estimators unknown': (lambda: realistic_eval(TASK, 1, methods=['zs'], estimators=['bogus']), 'estimators'),
    'realistic_eval estimators an int': (lambda: realistic_eval(TASK, 1, methods=['zs'], estimators=3), 'estimators'),
    'realistic_batch keff 2**63': (lambda: realistic_batch(LABELS, keff=(1, 2**63)), 'keff[1]'),
    'geotter prior_weight overflow': (lambda: G.geotter(X, Y, P, prior_weight=1e308), 'prior_weight'),
    'geotter_chunked prior_weight overflow': (lambda: G.geotter_chunked(X, Y, P, neighbors=NEIGHBOURS, centroids=CENTRES, prior_weight=-1e308), 'prior_weight'),
    'geotter_chunked zero row': (lambda: G.geotter_chunked(np.r_[X[:30], X[30:] * 0], Y, P, neighbors=NEIGHBOURS, centroids=CENTRES, chunk_rows=8), 'X row 30'),
}

@pytest.mark.parametrize('name', list(RELATIONAL))
def test_relational_argument_is_refused_by_name(name):
    call, arg = RELATIONAL[name]
    with pytest.raises((ValueError, TypeError)) as info: call()
    assert arg in str(info.value), f"{name}: {type(info.value).__name__}: {info.value}"


@pytest.mark.parametrize('layout', ['list', 'tuple', 'DataFrame', 'int64', 'big-endian'])
def test_chunked_rows_in_any_layout(layout):
    "`geotter_chunked` reads rows of any layout as `geotter` does: the labels of the float64 array."
    Xw = np.round(X * 4)          # whole numbers, so that the int64 copy holds them
    ref = G.geotter_chunked(Xw, Y, P, neighbors=NEIGHBOURS, centroids=CENTRES)
    got = G.geotter_chunked({'list': Xw.tolist(), 'tuple': tuple(map(tuple, Xw)), 'DataFrame': pd.DataFrame(Xw),
                             'int64': Xw.astype(np.int64), 'big-endian': Xw.astype('>f8')}[layout], Y, P,
                            neighbors=NEIGHBOURS, centroids=CENTRES)
    np.testing.assert_array_equal(np.asarray(got.labels), np.asarray(ref.labels))
    np.testing.assert_array_equal(got.plan.toarray(), ref.plan.toarray())


@pytest.mark.parametrize('beta, assignment', [(0.0, None), (0.3, None), (0.3, 'given')])
@pytest.mark.parametrize('bad', [np.nan, np.inf])
def test_chunked_names_the_rows_of_bad_X(beta, assignment, bad):
    "`geotter_chunked` reads X block by block: a NaN or inf is reported, X first, with the rows of its block."
    Xb = X.copy(); Xb[7, 3] = bad
    z = None if assignment is None else G.kmeans(X, 4)[1]
    with pytest.raises(ValueError) as info:
        G.geotter_chunked(Xb, Y, P, neighbors=NEIGHBOURS, centroids=CENTRES, assignment=z, beta=beta, chunk_rows=10)
    assert str(info.value).startswith('X holds NaN or infinite values in rows 0..9'), str(info.value)
