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
from geotter.studies.ratio import ratio_errors, em_fitted_temperature, em_sparse, bbse_self, cluster_votes, relaxed_mass, alternating, stata_mass, realistic_eval                 # the benchmark's ratio estimators, outside the top-level API
from geotter.chunked import sample_rows
from geotter.studies.ratio import realistic_batch
from geotter.synthetic import class_sizes
from geotter.labelfree import split_halves
from geotter.studies.calibration import split_rows
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
    'emd': (G.emd, dict(a='uniform', b=P, cost=-L), {'cost': 'matrix', 'b': 'prior'}),
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
    'geotter': (G.geotter, dict(X=X, Y=Y, prior=P), {'X': 'matrix', 'Y': 'matrix', 'prior': 'prior', 'k': 'int', 'cost_temperature': 'positive', 'reg': 'positive'}),
    'geotter_chunked': (G.geotter_chunked, dict(X=X, Y=Y, prior=P, neighbours=NEIGHBOURS, centres=CENTRES),
                        {'X': 'matrix', 'Y': 'matrix', 'prior': 'prior', 'neighbours': 'matrix', 'centres': 'matrix', 'cost_temperature': 'positive'}),
    'prepare': (G.prepare, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix', 'k': 'int', 'n_clusters': 'int'}),
    'adapt': (lambda prior: G.prepare(X, Y).adapt(prior), dict(prior=P), {'prior': 'prior'}),
    'transclip_zs': (G.transclip_zs, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix', 'k': 'int'}),
    'zlap': (G.zlap, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix', 'k': 'int'}),
    'stata': (G.stata, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix'}),
    'label_free_predict': (G.label_free_predict, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix'}),
    'fit_label_free': (G.fit_label_free, dict(X=X, Y=Y, logits=L), {'X': 'matrix', 'Y': 'matrix', 'logits': 'matrix', 'target': 'prior', 'cost_temperature': 'positive'}),
    'data_driven_defaults': (G.data_driven_defaults, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix'}),
    'estimate_noise': (G.estimate_noise, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix'}),
    'stream_predict': (G.stream_predict, dict(X=X, Y=Y), {'X': 'matrix', 'Y': 'matrix'}),
    'StreamingGeoTTER': (G.StreamingGeoTTER, dict(Y=Y), {'Y': 'matrix', 'prior': 'prior', 'cost_temperature': 'positive', 'em_temperature': 'positive'}),
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
    'StreamingGeoTTER float32 cost_temperature': (lambda: G.StreamingGeoTTER(Y.astype(np.float32), cost_temperature=1e-39), 'cost_temperature'),
    'marginal_errors negative plan': (lambda: G.marginal_errors(-np.full((N, M), 1 / (N * M)), P), 'plan'),
    'geotter beta auto with one class': (lambda: G.geotter(X, Y[:1], 'uniform', beta='auto'), 'beta'),
    'geotter cost_temperature too large for the ratio unknown': (lambda: G.geotter(X, Y, cost_temperature=1e308), 'cost_temperature'),
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
    'geotter_chunked prior_weight overflow': (lambda: G.geotter_chunked(X, Y, P, neighbours=NEIGHBOURS, centres=CENTRES, prior_weight=-1e308), 'prior_weight'),
    'geotter_chunked zero row': (lambda: G.geotter_chunked(np.r_[X[:30], X[30:] * 0], Y, P, neighbours=NEIGHBOURS, centres=CENTRES, chunk_rows=8), 'X row 30'),
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
    ref = G.geotter_chunked(Xw, Y, P, neighbours=NEIGHBOURS, centres=CENTRES)
    got = G.geotter_chunked({'list': Xw.tolist(), 'tuple': tuple(map(tuple, Xw)), 'DataFrame': pd.DataFrame(Xw),
                             'int64': Xw.astype(np.int64), 'big-endian': Xw.astype('>f8')}[layout], Y, P,
                            neighbours=NEIGHBOURS, centres=CENTRES)
    np.testing.assert_array_equal(np.asarray(got.labels), np.asarray(ref.labels))
    np.testing.assert_array_equal(got.plan.toarray(), ref.plan.toarray())


@pytest.mark.parametrize('beta, assignment', [(0.0, None), (0.3, None), (0.3, 'given')])
@pytest.mark.parametrize('bad', [np.nan, np.inf])
def test_chunked_names_the_rows_of_bad_X(beta, assignment, bad):
    "`geotter_chunked` reads X block by block: a NaN or inf is reported, X first, with the rows of its block."
    Xb = X.copy(); Xb[7, 3] = bad
    z = None if assignment is None else G.kmeans(X, 4)[1]
    with pytest.raises(ValueError) as info:
        G.geotter_chunked(Xb, Y, P, neighbours=NEIGHBOURS, centres=CENTRES, assignment=z, beta=beta, chunk_rows=10)
    assert str(info.value).startswith('X holds NaN or infinite values in rows 0..9'), str(info.value)


# the analysis modules (noise, theory, robustness, marginals, streaming, calibration, prompts, defaults): arguments the
# matrix above does not reach, refused with a ValueError or TypeError that names them
from geotter import noise as NZ, streaming as ST
from geotter.studies import theory as TH, robustness as RB, marginals as MG, calibration as CB, prompts as PR, streaming as STS
from geotter.studies.defaults import defaults_on_task

EST = NZ.estimate_noise(X, Y)
CN, ZA = EST['per_cluster']['centre_norm'], EST['assignment']
RING = np.eye(12) - 0.5 * (np.roll(np.eye(12), 1, 1) + np.roll(np.eye(12), -1, 1))
PLAN12 = np.full((12, 3), 1 / 36)
YS = np.stack([Y, Y + 0.1])
ANALYSIS = {
    'cost_scale centre_norm short': (lambda: NZ.cost_scale(X, Y, CN[:1], ZA), 'centre_norm'),
    'cost_scale centre_norm NaN': (lambda: NZ.cost_scale(X, Y, np.full(len(CN), np.nan), ZA), 'centre_norm'),
    'cost_scale centre_norm None': (lambda: NZ.cost_scale(X, Y, None, ZA), 'centre_norm'),
    'cost_scale assignment out of range': (lambda: NZ.cost_scale(X, Y, CN, np.full(N, 99)), 'assignment'),
    'cost_scale assignment short': (lambda: NZ.cost_scale(X, Y, CN, ZA[:3]), 'assignment'),
    'cost_scale assignment negative': (lambda: NZ.cost_scale(X, Y, CN, -np.ones(N, int)), 'assignment'),
    'cost_scale assignment fractional': (lambda: NZ.cost_scale(X, Y, CN, ZA + 0.5), 'assignment'),
    'noise_floor R 1e300': (lambda: NZ.noise_floor(X * 1e300), 'R'),
    'anchored_fixed_point mu NaN': (lambda: TH.anchored_fixed_point(PLAN12, RING, float('nan')), 'mu'),
    'anchored_fixed_point mu 1e308': (lambda: TH.anchored_fixed_point(PLAN12, RING, 1e308), 'mu'),
    'anchored_fixed_point L of another size': (lambda: TH.anchored_fixed_point(PLAN12, RING[:5, :5], 0.5), 'L'),
    'paper_tikhonov_minimizer L NaN': (lambda: TH.paper_tikhonov_minimizer(PLAN12, np.where(np.eye(12) > 0, np.nan, RING), 0.5), 'L'),
    'paper_tikhonov_minimizer mu inf': (lambda: TH.paper_tikhonov_minimizer(PLAN12, RING, float('inf')), 'mu'),
    'paper_tikhonov_objective T 1-D': (lambda: TH.paper_tikhonov_objective(PLAN12[0], PLAN12, RING, 0.5), 'T'),
    'paper_tikhonov_objective plan empty': (lambda: TH.paper_tikhonov_objective(PLAN12, PLAN12[:0], RING, 0.5), 'plan'),
    'cluster_bound_gap assignment out of range': (lambda: TH.cluster_bound_gap(X, Y, CENTRES, np.full(N, 99)), 'assignment'),
    'cluster_bound_gap centres 1-D': (lambda: TH.cluster_bound_gap(X, Y, CENTRES[0], np.zeros(N, int)), 'centres'),
    'cluster_bound_gap corrected None': (lambda: TH.cluster_bound_gap(X, Y, CENTRES, G.kmeans(X, 4)[1], corrected=None), 'corrected'),
    'slerp x empty': (lambda: TH.slerp(X[:0], X[:5], 0.3), 'x'),
    'slerp c NaN': (lambda: TH.slerp(X[:5], np.full((5, D), np.nan), 0.3), 'c'),
    'slerp beta 2': (lambda: TH.slerp(X[:5], X[5:10], 2.0), 'beta'),
    'shrinkage_risk beta NaN': (lambda: TH.shrinkage_risk(float('nan'), 1.0, 2.0), 'beta'),
    'shrinkage_risk sigma2 negative': (lambda: TH.shrinkage_risk(0.3, -1.0, 2.0), 'sigma2'),
    'smoothing_factor k 10**400': (lambda: TH.smoothing_factor(0.3, 10**400), 'k'),
    'excess_risk eta2 NaN': (lambda: TH.excess_risk(0.3, 0.4, 1.0, 2.0, float('nan'), 5), 'eta2'),
    'excess_risk k zero': (lambda: TH.excess_risk(0.3, 0.4, 1.0, 2.0, 0.5, 0), 'k'),
    'excess_risk overflow': (lambda: TH.excess_risk(0.0, 1.0, 1e308, 1e308, 1e308, 5), 'sigma2'),
    'fpm_claimed_constants temperature 1e308': (lambda: TH.fpm_claimed_constants([1.0, 2.0], 1e308, 1.0), 'temperature'),
    'fpm_claimed_constants theta None': (lambda: TH.fpm_claimed_constants(None, 1.0, 1.0), 'theta'),
    'margin_lower_bound n_c zero': (lambda: TH.margin_lower_bound(0.1, 1.0, 10, 0), 'n_c'),
    'margin_lower_bound m NaN': (lambda: TH.margin_lower_bound(0.1, 1.0, float('nan'), 100), 'm'),
    'margin_lower_bound C 1e308': (lambda: TH.margin_lower_bound(0.1, 1e308, 10, 100), 'C'),
    'd7_failure_probability m 1.5': (lambda: TH.d7_failure_probability(1.5), 'm'),
    'flip_union_bound sigma zero': (lambda: TH.flip_union_bound(0.1, 10, 0.0, 64), 'sigma'),
    'flip_union_bound delta None': (lambda: TH.flip_union_bound(None, 10, 0.5, 64), 'delta'),
    'max_tolerable_noise m zero': (lambda: TH.max_tolerable_noise(0.1, 0, 64, 0.05), 'm'),
    'max_tolerable_noise eps NaN': (lambda: TH.max_tolerable_noise(0.1, 10, 64, float('nan')), 'eps'),
    'max_tolerable_noise eps at m / 2': (lambda: TH.max_tolerable_noise(0.1, 1, 64, 0.5), 'eps'),
    'tail_margin r zero': (lambda: TH.tail_margin(0.1, 1.0, 10, 100, 0), 'r'),
    'tail_margin as_in_paper str': (lambda: TH.tail_margin(0.1, 1.0, 10, 100, 5, as_in_paper='no'), 'as_in_paper'),
    'perturb task None': (lambda: RB.perturb(None, 'gnoise', 0.1), 'task'),
    'mix_with_uniform prior None': (lambda: RB.mix_with_uniform(None, 0.3), 'prior'),
    'dirichlet_prior prior scalar': (lambda: RB.dirichlet_prior(1.0, 10.0), 'prior'),
    'dirichlet_prior floor NaN': (lambda: RB.dirichlet_prior(P, 10.0, floor=float('nan')), 'floor'),
    'noise_unit strengths above 1': (lambda: RB.noise_unit(TASK, 'gnoise', 0.1, strengths=(2.0,), baselines=()), 'strengths'),
    'batch_priors batch_prior negative': (lambda: MG.batch_priors(-P, P), 'batch_prior'),
    'batch_priors global_prior of another length': (lambda: MG.batch_priors(P, [0.5, 0.5]), 'global_prior'),
    'batch_priors tvs None': (lambda: MG.batch_priors(P, P, None), 'tvs'),
    'robust_options reg NaN': (lambda: MG.robust_options(reg=float('nan')), 'reg'),
    'robust_options rhos negative': (lambda: MG.robust_options(rhos=(-1.0,)), 'rho'),
    'take idx out of range': (lambda: MG.take(TASK, [999]), 'idx'),
    'take task None': (lambda: MG.take(None, [0]), 'task'),
    'worst_mean x empty': (lambda: MG.worst_mean([]), 'x'),
    'worst_mean frac inf': (lambda: MG.worst_mean([1.0, 2.0], float('inf')), 'frac'),
    'geotter_labels parts None': (lambda: MG.geotter_labels(None, P), 'parts'),
    'partial_unit task None': (lambda: MG.partial_unit(None, [], {}), 'task'),
    'init_stream pseudo_count 1e308': (lambda: ST.init_stream(Y, pseudo_count=1e308), 'pseudo_count'),
    'stream_predict cost_temperature 1e308': (lambda: ST.stream_predict(X, Y, cost_temperature=1e308), 'cost_temperature'),
    'stream_step state None': (lambda: ST.stream_step(None, X), 'state'),
    'check_stream_options options None': (lambda: ST.check_stream_options(None), 'options'),
    'update_centres centres 3-D': (lambda: ST.update_centres(CENTRES[None], np.ones(4), X, 4), 'centres'),
    'update_centres counts None': (lambda: ST.update_centres(CENTRES, None, X, 4), 'counts'),
    'c_transform reg zero': (lambda: ST.c_transform(torch.zeros(M), torch.tensor(-L), 0.0), 'reg'),
    'average_potential weight negative': (lambda: ST.average_potential(torch.zeros(M), 1.0, torch.ones(M), -1.0), 'weight'),
    'stream_on_task task None': (lambda: STS.stream_on_task(None), 'task'),
    'posterior_models methods a string': (lambda: CB.posterior_models(TASK, 'zs'), 'methods'),
    'fit_temperature model None': (lambda: CB.fit_temperature(None, LABELS), 'model'),
    'fit_temperature rows out of range': (lambda: CB.fit_temperature(CB.posterior_model('zs', TASK), LABELS, [999]), 'rows'),
    'fit_temperature labels short': (lambda: CB.fit_temperature(CB.posterior_model('zs', TASK), LABELS[1:]), 'labels'),
    'fit_temperature bounds reversed': (lambda: CB.fit_temperature(CB.posterior_model('zs', TASK), LABELS, bounds=(5.0, 1.0)), 'bounds'),
    'template_scores X None': (lambda: PR.template_scores(None, YS), 'X'),
    'template_scores Ys empty': (lambda: PR.template_scores(X, YS[:0]), 'Ys'),
    'template_weights Ys 2-D': (lambda: PR.template_weights(X, Y, 'uniform'), 'Ys'),
    'prompt_variants templates None': (lambda: PR.prompt_variants(X, YS, None), 'templates'),
    'prompt_variants rules unknown': (lambda: PR.prompt_variants(X, YS, ['a {}', 'b {}'], rules=['x']), 'rules'),
    'prompt_eval task None': (lambda: PR.prompt_eval(None, YS, ['a {}', 'b {}']), 'task'),
    'defaults_on_task task None': (lambda: defaults_on_task(None), 'task'),
}

@pytest.mark.parametrize('name', list(ANALYSIS))
def test_analysis_argument_is_refused_by_name(name):
    call, arg = ANALYSIS[name]
    with pytest.raises((ValueError, TypeError)) as info: call()
    assert arg in str(info.value), f"{name}: {type(info.value).__name__}: {info.value}"


# valid edge inputs of the same modules: each returns finite numbers
EDGES = {
    'cost_scale whole-valued float assignment': lambda: NZ.cost_scale(X, Y, CN, np.asarray(ZA, dtype=float)),
    'noise_floor R 1e-300': lambda: NZ.noise_floor(X * 1e-300),
    'smoothing_factor numpy k': lambda: TH.smoothing_factor(0.3, np.int64(4)),
    'recommended_defaults numpy k': lambda: TH.recommended_defaults(1.0, 2.0, np.int32(3)),
    'shrinkage_risk tensor beta': lambda: TH.shrinkage_risk(torch.tensor([0.1, 0.2], requires_grad=True), 1.0, 2.0),
    'flip_union_bound tensor delta': lambda: TH.flip_union_bound(torch.tensor([0.1], requires_grad=True), 10, 0.5, 64),
    'prior_at_tv the largest tv': lambda: MG.prior_at_tv([0.4, 0.3, 0.2, 0.1], 0.9),
    'batch_priors tensor priors': lambda: MG.batch_priors(torch.tensor(P, requires_grad=True), torch.tensor(P)),
    'worst_mean tensor': lambda: MG.worst_mean(torch.tensor([1.0, 2.0], requires_grad=True)),
}

def _finite(v):
    if isinstance(v, str): return True
    if isinstance(v, dict): return all(_finite(x) for x in v.values())
    if isinstance(v, (list, tuple)): return all(_finite(x) for x in v)
    return bool(np.isfinite(np.asarray(v.detach() if torch.is_tensor(v) else v, dtype=float)).all())

@pytest.mark.parametrize('name', list(EDGES))
def test_analysis_edge_input_gives_finite_result(name):
    assert _finite(EDGES[name]()), name

def test_shrinkage_weight_of_huge_variances():
    "The James–Stein weight of two equal variances is 1/2, even when their sum overflows."
    assert TH.js_coefficient(1e308, 1e308) == 0.5

def test_tolerable_noise_of_a_tiny_flip_probability():
    "Cor. D.9 at a flip probability below float64's resolution of 1 - eps/m: a positive noise level, not 0."
    assert 0 < TH.max_tolerable_noise(0.1, 10, 64, 1e-300) < TH.max_tolerable_noise(0.1, 10, 64, 1e-10)


# the functions that tabulate or plot result tables: None, a string, an empty frame and a frame without the columns
# they read are refused by the argument's name (and a missing column by its name), before any figure is drawn
from geotter import cli as CLI
from geotter.studies import experiments as EX

SCORES = pd.DataFrame(dict(task=['a', 'b'], group=['A', 'B'], beta=0.0, k=0, alpha=1.0, steps=0, seed=0,
                           accuracy=[50.0, 60.0], balanced_accuracy=[40.0, 55.0]))          # `grid_scores`-like rows
LODO = pd.DataFrame(dict(task=['a'], method=['geotter'], sel_beta=[0.0], sel_k=[0], sel_alpha=[1.0], sel_steps=[0]))

# name: (call on the frame, the argument's name, a column it needs; None: any non-empty frame will do)
FRAMES = {
    'table1': (EX.table1, 'results', 'method'),
    'format_table': (EX.format_table, 'tab', None),
    'backbone_tables': (EX.backbone_tables, 'results', 'backbone'),
    'gains': (EX.gains, 'tab', 'GeoTTER w/ LR'),
    'lodo_select': (lambda df: EX.lodo_select(df, 'a'), 'scores', 'group'),
    'lodo': (EX.lodo, 'scores', 'group'),
    'lodo_results lodo_table': (lambda df: EX.lodo_results(df, SCORES, []), 'lodo_table', 'sel_beta'),
    'lodo_results scores': (lambda df: EX.lodo_results(LODO, df, []), 'scores', 'beta'),
    'cfgs_ablation scores': (lambda df: EX.cfgs_ablation(df, LODO), 'scores', 'beta'),
    'cfgs_ablation lodo_table': (lambda df: EX.cfgs_ablation(SCORES, df), 'lodo_table', 'sel_beta'),
    'plot_sweeps': (EX.plot_sweeps, 'scores', 'beta'),
    'plot_iterations scores': (lambda df: EX.plot_iterations(df, LODO), 'scores', 'alpha'),
    'plot_iterations lodo_table': (lambda df: EX.plot_iterations(SCORES, df), 'lodo_table', 'sel_beta'),
    'summarize': (MG.summarize, 'df', 'accuracy'),
    'plot_tv_curve': (lambda df: MG.plot_tv_curve(df, ['geotter']), 'summary', 'bucket'),
    'plot_buckets': (MG.plot_buckets, 'table', 'worst10'),
    'prompt_table': (PR.prompt_table, 'results', 'variant'),
    'plot_prompts': (PR.plot_prompts, 'results', 'variant'),
    'plot_noise': (lambda df: RB.plot_noise(df, 't'), 'df', 'strength'),
    'plot_prior_sensitivity': (RB.plot_prior_sensitivity, 'df', 'tv'),
    'noise_gap': (RB.noise_gap, 'df', 'level'),
    'streaming_table': (STS.streaming_table, 'df', 'batch_size'),
    'plot_streaming': (STS.plot_streaming, 'df', 'prior_mode'),
    'demo_tables': (lambda df: CLI.demo_tables(df, ['zs']), 'results', 'balanced_accuracy'),
    'plot_results': (CLI.plot_results, 'results', 'balanced_accuracy'),
}
BAD_FRAMES = {'None': None, 'str': 'results.csv', 'empty': pd.DataFrame(), 'no rows': SCORES.iloc[:0],
              'missing columns': pd.DataFrame({'a': [1.0]})}

def frame_cases():
    for name, (_, _, column) in FRAMES.items():
        for case in BAD_FRAMES:
            if not (case == 'missing columns' and column is None): yield pytest.param(name, case, id=f'{name}-{case}')

@pytest.mark.parametrize('name, case', list(frame_cases()))
def test_bad_results_table_is_refused_by_name(name, case):
    call, arg, column = FRAMES[name]
    with pytest.raises((ValueError, TypeError)) as info: call(BAD_FRAMES[case])
    msg = str(info.value)
    assert msg.startswith(f'{arg} '), f"{name}: {type(info.value).__name__}: {msg}"
    if case == 'missing columns': assert repr(column) in msg, f"{name}: {msg}"

NOISE_ROWS = pd.DataFrame(dict(task='a', kind='gnoise', level=[0.0, 0.1], method='otter', strength=np.nan, seed=0,
                               balanced_accuracy=[50.0, 45.0]))                                  # `noise_sweep`-like rows
STREAM_ROWS = pd.DataFrame(dict(task='a', prior_mode='known', method='otter', batch_size=[64, 256], accuracy=[50.0, 55.0]))
OTTER_ONLY = LODO.assign(method='otter')

@pytest.mark.parametrize('call, arg', [
    (lambda: RB.plot_noise(NOISE_ROWS, 'nosuch-task'), 'task'),
    (lambda: STS.plot_streaming(STREAM_ROWS, 'estimated'), 'prior_mode'),
    (lambda: EX.cfgs_ablation(SCORES, OTTER_ONLY), 'lodo_table'),
    (lambda: EX.plot_iterations(SCORES, OTTER_ONLY), 'lodo_table'),
], ids=['plot_noise task', 'plot_streaming prior_mode', 'cfgs_ablation no geotter rows', 'plot_iterations no geotter rows'])
def test_a_selection_absent_from_the_table_is_refused_by_name(call, arg):
    "A task, prior mode or method the table does not hold: the argument named (not pandas' or matplotlib's error on nothing)."
    with pytest.raises(ValueError) as info: call()
    assert str(info.value).startswith(f'{arg}'), str(info.value)


# the peers' helpers, the synthetic generators, label-free GeoTTER's bias, the text task's samplers and the
# store writers: arguments refused by name, and valid edge inputs that give finite results
from geotter import peers as TR, synthetic as SY, labelfree as LF, text as TX, data as DA

W_ZLAP = TR.zlap_graph(X, Y)
B_CG = np.eye(N + M, 2)
S_ZLAP = TR.normalized_adjacency(W_ZLAP)
SHIFTED = lambda P: P - 0.3 * (S_ZLAP @ P)          # I - alpha S: symmetric positive definite

class _TextModel:
    "A stand-in sentence encoder: the length of each text and a constant, as 2-D embeddings."
    def encode(self, texts, **kw): return torch.tensor([[float(len(t)), 1.0] for t in texts])

FAKE_ENCODER = DA.Encoder(DA.Backbone('fake-text', 'sentence-transformers', 'fake', modality='text'), _TextModel())

MORE = {
    'normalized_adjacency None': (lambda: TR.normalized_adjacency(None), 'W'),
    'normalized_adjacency not square': (lambda: TR.normalized_adjacency(torch.ones(3, 4).to_sparse()), 'W'),
    'normalized_adjacency NaN': (lambda: TR.normalized_adjacency(torch.tensor([[0.0, np.nan], [np.nan, 0.0]]).to_sparse()), 'W'),
    'normalized_adjacency negative': (lambda: TR.normalized_adjacency(torch.tensor([[0.0, -1.0], [-1.0, 0.0]]).to_sparse()), 'W'),
    'conjugate_gradient B None': (lambda: TR.conjugate_gradient(SHIFTED, None), 'B'),
    'conjugate_gradient B NaN': (lambda: TR.conjugate_gradient(SHIFTED, B_CG * np.nan), 'B'),
    'conjugate_gradient matvec None': (lambda: TR.conjugate_gradient(None, B_CG), 'matvec'),
    'conjugate_gradient matvec shape': (lambda: TR.conjugate_gradient(lambda P: P[:2], B_CG), 'matvec'),
    'conjugate_gradient tol NaN': (lambda: TR.conjugate_gradient(SHIFTED, B_CG, tol=float('nan')), 'tol'),
    'conjugate_gradient max_iter -1': (lambda: TR.conjugate_gradient(SHIFTED, B_CG, max_iter=-1), 'max_iter'),
    'conjugate_gradient max_iter 1.5': (lambda: TR.conjugate_gradient(SHIFTED, B_CG, max_iter=1.5), 'max_iter'),
    'stata laplacian overflows': (lambda: G.stata(X, Y, laplacian=1e308), 'laplacian'),
    'stata laplacian overflows float32': (lambda: G.stata(X.astype(np.float32), Y.astype(np.float32), laplacian=1e38), 'laplacian'),
    'drifted_class_embeddings prototypes None': (lambda: SY.drifted_class_embeddings(None, 0.5, 2, rng), 'prototypes'),
    'drifted_class_embeddings prototypes NaN': (lambda: SY.drifted_class_embeddings(Y * np.nan, 0.5, 2, rng), 'prototypes'),
    'drifted_class_embeddings drift NaN': (lambda: SY.drifted_class_embeddings(Y, float('nan'), 2, rng), 'drift'),
    'drifted_class_embeddings drift negative': (lambda: SY.drifted_class_embeddings(Y, -1.0, 2, rng), 'drift'),
    'drifted_class_embeddings n_confusers negative': (lambda: SY.drifted_class_embeddings(Y, 0.5, -1, rng), 'n_confusers'),
    'drifted_class_embeddings n_confusers m': (lambda: SY.drifted_class_embeddings(Y, 0.5, M, rng), 'n_confusers'),
    'drifted_class_embeddings rng str': (lambda: SY.drifted_class_embeddings(Y, 0.5, 2, 'a'), 'rng'),
    'drifted_class_embeddings cancelled': (lambda: SY.drifted_class_embeddings(np.array([[1.0, 0.0], [-1.0, 0.0]]), 1.0, 1, rng), 'drift'),
    'gnoise sigma overflows': (lambda: SY.gnoise(X, 1e308), 'sigma'),
    'gnoise sigma overflows float32': (lambda: SY.gnoise(X.astype(np.float32), 1e300), 'sigma'),
    'lnoise eta overflows float32': (lambda: SY.lnoise(X.astype(np.float32), 1e300), 'eta'),
    'lnoise one dimension': (lambda: SY.lnoise(X[:, :1], 0.1, k=3), 'X'),
    'lnoise k str with span': (lambda: SY.lnoise(X, 0.1, k='a', orthogonal_to='span'), 'k'),
    'lnoise renormalize 1': (lambda: SY.lnoise(X, 0.1, renormalize=1), 'renormalize'),
    'teacher_plan target bogus': (lambda: LF.teacher_plan(X, Y, target='bogus'), 'target'),
    'teacher_plan target short': (lambda: LF.teacher_plan(X, Y, target=[0.5, 0.5]), 'target'),
    'fit_logit_bias teacher zero row': (lambda: LF.fit_logit_bias(L, np.r_[PROBS[:-1], np.zeros((1, M))]), 'teacher'),
    'fit_logit_bias eps negative': (lambda: LF.fit_logit_bias(L, PROBS, eps=-1.0), 'eps'),
    'fit_logit_bias eps str': (lambda: LF.fit_logit_bias(L, PROBS, eps='a'), 'eps'),
    'fit_logit_bias eps zero': (lambda: LF.fit_logit_bias(L, np.eye(M)[np.zeros(N, int)], eps=0.0), 'eps'),
    'predict_with_bias bias None': (lambda: LF.predict_with_bias(L, None), 'bias'),
    'predict_with_bias bias NaN': (lambda: LF.predict_with_bias(L, np.full(M, np.nan)), 'bias'),
    'predict_with_bias bias inf': (lambda: LF.predict_with_bias(L, np.r_[np.inf, np.zeros(M - 1)]), 'bias'),
    'otter_labels logits str': (lambda: TX.otter_labels('abc', P), 'logits'),
    'otter_labels prior bogus': (lambda: TX.otter_labels(L, 'bogus'), 'prior'),
    'stratified_counts counts None': (lambda: TX.stratified_counts(None, 1), 'counts'),
    'stratified_counts counts negative': (lambda: TX.stratified_counts([-1, 5], 1), 'counts'),
    'stratified_counts counts 2-D': (lambda: TX.stratified_counts([[1, 2]], 1), 'counts'),
    'stratified_counts counts zeros': (lambda: TX.stratified_counts([0, 0], 1), 'counts'),
    'stratified_counts counts overflow': (lambda: TX.stratified_counts([2**62, 2**62], 1), 'counts'),
    'stratified_counts min_per_class negative': (lambda: TX.stratified_counts([5, 3], 2, -1), 'min_per_class'),
    'stratified_indices labels None': (lambda: TX.stratified_indices(None, 1), 'labels'),
    'stratified_indices labels negative': (lambda: TX.stratified_indices([-1, 0], 1), 'labels'),
    'stratified_indices labels fractional': (lambda: TX.stratified_indices([0.5, 1.0], 1), 'labels'),
    'template_accuracies task': (lambda: TX.template_accuracies(X, [Y], ['{}']), 'task'),
    'template_accuracies logit-only task': (lambda: TX.template_accuracies(G.Task('t', LABELS, logits=L), [Y], ['{}']), 'task'),
    'template_accuracies lengths': (lambda: TX.template_accuracies(TASK, [Y, Y], ['{}']), 'templates'),
    'template_accuracies Ys None': (lambda: TX.template_accuracies(TASK, None, ['{}']), 'Ys'),
    'parse_data_file pos list': (lambda: TX.parse_data_file('data.noun', ['noun']), 'pos'),
    'parse_data_file path None': (lambda: TX.parse_data_file(None), 'path'),
    'fetch_wordnet download str': (lambda: TX.fetch_wordnet('/nonexistent-geotter-dir', download='no'), 'download'),
    'fetch_wordnet fname None': (lambda: TX.fetch_wordnet('/nonexistent-geotter-dir', fname=None, download=False), 'fname'),
    'load_logits download str': (lambda: DA.load_logits('cifar10-clip', '/nonexistent-geotter-dir', download='no'), 'download'),
    'load_logits name list': (lambda: DA.load_logits(['cifar10-clip']), 'name'),
    'load_task name None': (lambda: DA.load_task(None), 'name'),
    'estimate_bytes n negative': (lambda: DA.estimate_bytes(-1, 512), 'n'),
    'estimate_bytes n NaN': (lambda: DA.estimate_bytes(float('nan'), 512), 'n'),
    'estimate_bytes d str': (lambda: DA.estimate_bytes(10, 'a'), 'd'),
    'estimate_bytes dtype bogus': (lambda: DA.estimate_bytes(10, 512, 10, 'bogus'), 'dtype'),
    'confusion_matrix n_classes 0': (lambda: DA.confusion_matrix([0], [0], 0), 'n_classes'),
    'confusion_matrix n_classes 2**63': (lambda: DA.confusion_matrix([0], [0], 2**63), 'n_classes'),
    'confusion_matrix y_true None': (lambda: DA.confusion_matrix(None, [0], 2), 'y_true'),
    'confusion_matrix y_pred out of range': (lambda: DA.confusion_matrix([0, 1], [0, 2], 2), 'y_pred'),
}

@pytest.mark.parametrize('name', list(MORE))
def test_more_arguments_are_refused_by_name(name):
    call, arg = MORE[name]
    with pytest.raises((ValueError, TypeError)) as info: call()
    assert arg in str(info.value), f"{name}: {type(info.value).__name__}: {info.value}"


WRITES = {   # write_embeddings(samples, class_names, ...) arguments: (samples, class_names, keyword arguments, argument named)
    'label out of range': ([('a', 0), ('b', 5)], ['x', 'y'], {}, 'label'),
    'label negative': ([('a', 0), ('b', -1)], ['x', 'y'], {}, 'label'),
    'label fractional': ([('a', 0), ('b', 0.5)], ['x', 'y'], {}, 'label'),
    'class_names a string': ([('a', 0)], 'xy', {}, 'class_names'),
    'class_names repeated': ([('a', 0)], ['x', 'x'], {}, 'class_names'),
    'class_names None': ([('a', 0)], None, {}, 'class_names'),
    'overwrite str': ([('a', 0)], ['x', 'y'], {'overwrite': 'no'}, 'overwrite'),
    'progress str': ([('a', 0)], ['x', 'y'], {'progress': 'no'}, 'progress'),
    'meta a list': ([('a', 0)], ['x', 'y'], {'meta': [1]}, 'meta'),
}

@pytest.mark.parametrize('case', list(WRITES))
def test_write_embeddings_refuses_a_bad_argument_by_name_and_writes_nothing(case, tmp_path):
    samples, names, kw, arg = WRITES[case]
    with pytest.raises((ValueError, TypeError)) as info:
        DA.write_embeddings(samples, names, ['{}'], FAKE_ENCODER, tmp_path / 'entry', **{'progress': False, **kw})
    assert arg in str(info.value), f"{case}: {type(info.value).__name__}: {info.value}"
    assert not (tmp_path / 'entry' / 'manifest.json').exists()


EDGE_CALLS = {
    'normalized_adjacency dense': lambda: TR.normalized_adjacency(W_ZLAP.to_dense()),
    'normalized_adjacency numpy': lambda: TR.normalized_adjacency(W_ZLAP.to_dense().numpy()),
    'conjugate_gradient numpy B': lambda: TR.conjugate_gradient(SHIFTED, B_CG),
    'conjugate_gradient integer B': lambda: TR.conjugate_gradient(SHIFTED, B_CG.astype(int)),
    'drifted_class_embeddings list': lambda: SY.drifted_class_embeddings(Y.tolist(), 0.5, 2, np.random.default_rng(0))[0],
    'drifted_class_embeddings tensor': lambda: SY.drifted_class_embeddings(torch.tensor(Y, requires_grad=True), 0.5, 2, np.random.default_rng(0))[0],
    'drifted_class_embeddings integers': lambda: SY.drifted_class_embeddings(np.eye(4, dtype=int), 0.5, 2, np.random.default_rng(0))[0],
    'otter_labels tensor with grad': lambda: TX.otter_labels(torch.tensor(L, requires_grad=True), P),
    'otter_labels uniform': lambda: TX.otter_labels(L, 'uniform'),
    'stratified_counts min_per_class 2**63': lambda: TX.stratified_counts([5, 3], 2, 2**63),
    'stratified_counts tensor': lambda: TX.stratified_counts(torch.tensor([50, 30, 20]), 10),
    'stratified_indices whole floats': lambda: TX.stratified_indices(LABELS.astype(float), 12, 1),
    'extract_plan by names': lambda: len(DA.extract_plan('cifar10', 'ViT-B-32', '/nonexistent-geotter-dir/entry')),
}

@pytest.mark.parametrize('name', list(EDGE_CALLS))
def test_more_edge_inputs_give_finite_results(name):
    out = EDGE_CALLS[name]()
    out = out.to_dense() if is_sparse(out) else out
    assert np.isfinite(np.asarray(out, dtype=float)).all(), name

def is_sparse(t): return isinstance(t, torch.Tensor) and t.layout != torch.strided

def test_drifted_class_embeddings_keep_their_values():
    "The checks leave the float64 embeddings of valid prototypes as they were."
    Pn = Y / np.linalg.norm(Y, axis=1, keepdims=True)
    Yd, conf = SY.drifted_class_embeddings(Pn, 0.5, 2, np.random.default_rng(3))
    r = np.random.default_rng(3)
    c = np.stack([r.choice(np.delete(np.arange(M), j), 2, replace=False) for j in range(M)])
    D = Pn[c].sum(1); D /= np.linalg.norm(D, axis=1, keepdims=True); E = Pn + 0.5 * D
    np.testing.assert_array_equal(conf, c); np.testing.assert_array_equal(Yd, E / np.linalg.norm(E, axis=1, keepdims=True))


# store and experiment runners: bad arguments refused by name before any work is done
from geotter import store as SO

STORE_BAD = {
    'write_entry arrays None': (lambda p: SO.write_entry(p / 'e' / 'b', None, {}), 'arrays'),
    'write_entry arrays a list': (lambda p: SO.write_entry(p / 'e' / 'b', [np.ones(2)], {}), 'arrays'),
    'write_entry arrays key escapes the entry': (lambda p: SO.write_entry(p / 'e' / 'b', {'../x': np.ones(2)}, {}), 'arrays key'),
    'write_entry arrays key with a slash': (lambda p: SO.write_entry(p / 'e' / 'b', {'a/b': np.ones(2)}, {}), 'arrays key'),
    'write_entry arrays key empty': (lambda p: SO.write_entry(p / 'e' / 'b', {'': np.ones(2)}, {}), 'arrays key'),
    'write_entry arrays key too long': (lambda p: SO.write_entry(p / 'e' / 'b', {'x' * 300: np.ones(2)}, {}), 'arrays key'),
    'write_entry arrays key an int': (lambda p: SO.write_entry(p / 'e' / 'b', {3: np.ones(2)}, {}), 'arrays key'),
    'write_entry arrays object': (lambda p: SO.write_entry(p / 'e' / 'b', {'x': None}, {}), "arrays['x']"),
    'write_entry manifest None': (lambda p: SO.write_entry(p / 'e' / 'b', {'x': np.ones(2)}, None), 'manifest'),
    'write_entry manifest a list': (lambda p: SO.write_entry(p / 'e' / 'b', {'x': np.ones(2)}, [1]), 'manifest'),
    'write_entry path None': (lambda p: SO.write_entry(None, {'x': np.ones(2)}, {}), 'path'),
    'read_entry path None': (lambda p: SO.read_entry(None), 'path'),
    'read_entry verify a string': (lambda p: SO.read_entry(p / 'e' / 'b', verify='no'), 'verify'),
    'read_entry verify None': (lambda p: SO.read_entry(p / 'e' / 'b', verify=None), 'verify'),
    'read_manifest path an int': (lambda p: SO.read_manifest(3), 'path'),
    'store_root root 0': (lambda p: SO.store_root(0), 'root'),
    'store_root root False': (lambda p: SO.store_root(False), 'root'),
    'data_root path a list': (lambda p: SO.data_root([]), 'path'),
    'entry_dir root an int': (lambda p: SO.entry_dir('a', 'b', 3), 'root'),
    'list_entries root an int': (lambda p: SO.list_entries(3), 'root'),
    'check_folder path None': (lambda p: SO.check_folder(None, 'x'), 'path'),
    'scratch_path path None': (lambda p: SO.scratch_path(None), 'path'),
    'clean_stale max_age NaN': (lambda p: SO.clean_stale(p, max_age=float('nan')), 'max_age'),
    'clean_stale max_age None': (lambda p: SO.clean_stale(p, max_age=None), 'max_age'),
    'manifest_checksum None': (lambda p: SO.manifest_checksum(None), 'manifest'),
    'open_run settings a list': (lambda p: SO.open_run(p / 'r', [1]), 'settings'),
    'open_run overwrite a string': (lambda p: SO.open_run(p / 'r', {}, overwrite='no'), 'overwrite'),
}

@pytest.mark.parametrize('case', list(STORE_BAD))
def test_store_refuses_a_bad_argument_by_name(case, tmp_path):
    SO.write_entry(tmp_path / 'e' / 'b', {'x': np.ones(2)}, {})
    call, arg = STORE_BAD[case]
    with pytest.raises((ValueError, TypeError)) as info: call(tmp_path)
    assert arg in str(info.value), f"{case}: {type(info.value).__name__}: {info.value}"
    assert sorted(p.name for p in (tmp_path / 'e').iterdir()) == ['b'], case      # nothing written beside the entry
    assert sorted(p.name for p in (tmp_path / 'e' / 'b').iterdir()) == ['manifest.json', 'x.npy'], case

def test_store_valid_edge_arguments_still_work(tmp_path):
    SO.write_entry(str(tmp_path / 'e' / 'b'), {'x.y': np.ones(2), 'a b': np.arange(3)}, {'n': 1})
    arrays, m = SO.read_entry(tmp_path / 'e' / 'b', verify=np.bool_(False))
    assert sorted(arrays) == ['a b', 'x.y'] and m['n'] == 1
    assert SO.store_root(str(tmp_path)) == tmp_path and SO.list_entries(tmp_path) == [('e', 'b', True)]
    assert SO.clean_stale(tmp_path, max_age=0) == []


RUNNER_TASK = G.Task('runner', np.arange(12) % 3, X=rng.normal(size=(12, 8)), Y=rng.normal(size=(3, 8)))
GRID = dict(betas=(0.5,), ks=(3,), alphas=(0.3,), seeds=(0,), max_steps=1, progress=False)

RUNNER_BAD = {
    'run_benchmark tasks empty': (lambda: EX.run_benchmark([], ['zs'], progress=False), 'tasks'),
    'run_benchmark tasks entry None': (lambda: EX.run_benchmark([None], ['zs'], progress=False), 'tasks[0]'),
    'run_benchmark tasks entry a name': (lambda: EX.run_benchmark(['synthetic'], ['zs'], progress=False), 'tasks[0]'),
    'run_benchmark methods empty': (lambda: EX.run_benchmark([RUNNER_TASK], [], progress=False), 'methods'),
    'run_benchmark methods a string': (lambda: EX.run_benchmark([RUNNER_TASK], 'zs', progress=False), 'methods'),
    'run_benchmark methods unknown': (lambda: EX.run_benchmark([RUNNER_TASK], ['zs', 'bogus'], progress=False), 'methods[1]'),
    'run_benchmark options a list': (lambda: EX.run_benchmark([RUNNER_TASK], ['zs'], options=[1], progress=False), 'options'),
    'run_benchmark seeds empty': (lambda: EX.run_benchmark([RUNNER_TASK], ['geotter'], seeds=[], progress=False), 'seeds'),
    'run_benchmark seeds negative': (lambda: EX.run_benchmark([RUNNER_TASK], ['zs'], seeds=[-1], progress=False), 'seeds[0]'),
    'run_benchmark n_jobs zero': (lambda: EX.run_benchmark([RUNNER_TASK], ['zs'], n_jobs=0, progress=False), 'n_jobs'),
    'run_benchmark n_jobs None': (lambda: EX.run_benchmark([RUNNER_TASK], ['zs'], n_jobs=None, progress=False), 'n_jobs'),
    'run_benchmark n_jobs bool': (lambda: EX.run_benchmark([RUNNER_TASK], ['zs'], n_jobs=True, progress=False), 'n_jobs'),
    'run_benchmark backend an int': (lambda: EX.run_benchmark([RUNNER_TASK], ['zs'], backend=3, progress=False), 'backend'),
    'run_benchmark progress a string': (lambda: EX.run_benchmark([RUNNER_TASK], ['zs'], progress='no'), 'progress'),
    'run_benchmark fname None': (lambda: EX.run_benchmark([RUNNER_TASK], ['zs'], fname=None, progress=False), 'fname'),
    'grid_scores tasks empty': (lambda: EX.grid_scores([], **GRID), 'tasks'),
    'grid_scores tasks entry None': (lambda: EX.grid_scores([None], **GRID), 'tasks[0]'),
    'grid_scores betas empty': (lambda: EX.grid_scores([RUNNER_TASK], **{**GRID, 'betas': ()}), 'betas'),
    'grid_scores ks empty': (lambda: EX.grid_scores([RUNNER_TASK], **{**GRID, 'ks': ()}), 'ks'),
    'grid_scores alphas empty': (lambda: EX.grid_scores([RUNNER_TASK], **{**GRID, 'alphas': ()}), 'alphas'),
    'grid_scores seeds empty': (lambda: EX.grid_scores([RUNNER_TASK], **{**GRID, 'seeds': ()}), 'seeds'),
    'grid_scores max_steps zero': (lambda: EX.grid_scores([RUNNER_TASK], **{**GRID, 'max_steps': 0}), 'max_steps'),
    'grid_scores max_steps a string': (lambda: EX.grid_scores([RUNNER_TASK], **{**GRID, 'max_steps': 'a'}), 'max_steps'),
    'grid_scores n_jobs zero': (lambda: EX.grid_scores([RUNNER_TASK], n_jobs=0, **GRID), 'n_jobs'),
    'grid_scores groups an int': (lambda: EX.grid_scores([RUNNER_TASK], groups=3, **GRID), 'groups'),
    'grid_unit max_steps negative': (lambda: EX.grid_unit(RUNNER_TASK, 0.5, ks=(3,), alphas=(0.3,), max_steps=-2), 'max_steps'),
    'grid_unit max_steps bool': (lambda: EX.grid_unit(RUNNER_TASK, 0.5, ks=(3,), alphas=(0.3,), max_steps=True), 'max_steps'),
    'grid_unit prepared an int': (lambda: EX.grid_unit(RUNNER_TASK, 0.5, ks=(3,), prepared=3), 'prepared'),
    'grid_unit alphas None': (lambda: EX.grid_unit(RUNNER_TASK, 0.5, ks=(3,), alphas=None), 'alphas'),
    'grid_prepare ks empty': (lambda: EX.grid_prepare(RUNNER_TASK, ks=()), 'ks'),
    'subsample task None': (lambda: EX.subsample(None, 5), 'task'),
}

@pytest.mark.parametrize('case', list(RUNNER_BAD))
def test_experiment_runners_refuse_a_bad_argument_by_name(case):
    call, arg = RUNNER_BAD[case]
    with pytest.raises((ValueError, TypeError)) as info: call()
    assert arg in str(info.value), f"{case}: {type(info.value).__name__}: {info.value}"

def test_experiment_runners_accept_valid_edge_arguments():
    res = EX.run_benchmark((RUNNER_TASK,), np.array(['zs', 'geotter']), seeds=range(1), n_jobs=1, progress=np.bool_(False))
    assert sorted(res.method) == ['geotter', 'zs'] and res.accuracy.between(0, 100).all()
    s = EX.grid_scores([RUNNER_TASK], **{**GRID, 'betas': [0.0, 0.5], 'seeds': [np.int64(0), 1], 'max_steps': 2})
    assert len(s) == 12 and set(s.steps) == {0, 1, 2}
