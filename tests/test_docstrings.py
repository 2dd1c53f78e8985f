"""The public entry points carry numpydoc docstrings (Parameters, Returns, References) and Examples that run and give what they show.

The list is the package's main entry points: the solvers, the baselines, GeoTTER and its preparation, the prior
estimators, the geometry, the transductive peers (MOON and TDA included) and label-free GeoTTER."""
import doctest, importlib, inspect

import pytest

ENTRY_POINTS = {
    'geotter.exact': ['emd'], 'geotter.entropic': ['sinkhorn', 'sinkhorn_unbalanced'], 'geotter.transport': ['otter'],
    'geotter.baselines': ['prior_shift', 'prior_matching', 'fenchel_prior_matching'],
    'geotter.method': ['geotter', 'prepare', 'Prepared.adapt'],
    'geotter.priors': ['em_prior', 'bbse_prior', 'estimate_label_ratio'],
    'geotter.graph': ['knn_graph', 'graph_smooth'], 'geotter.cluster': ['kmeans'],
    'geotter.peers': ['transclip_zs', 'zlap', 'stata', 'moon', 'tda'], 'geotter.labelfree': ['label_free_predict'],
}
CASES = [(mod, name) for mod, names in ENTRY_POINTS.items() for name in names]

def _get(mod, name):
    obj = importlib.import_module(mod)
    for part in name.split('.'): obj = getattr(obj, part)
    return obj

@pytest.mark.parametrize('mod,name', CASES, ids=[n for _, n in CASES])
def test_numpydoc_sections(mod, name):
    doc = inspect.getdoc(_get(mod, name)) or ''
    for section in ('Parameters', 'Returns', 'References'):
        assert f"{section}\n{'-' * len(section)}" in doc, f"{name}: no {section} section"

@pytest.mark.parametrize('mod,name', CASES, ids=[n for _, n in CASES])
def test_examples_run(mod, name):
    m = importlib.import_module(mod)
    tests = doctest.DocTestFinder().find(_get(mod, name), name, globs=vars(m).copy())
    assert tests and tests[0].examples, f"{name} has no Examples"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for t in tests: runner.run(t)
    assert runner.failures == 0, f"{name}: {runner.failures} failing example(s)"
