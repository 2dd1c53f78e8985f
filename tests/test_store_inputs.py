"""Input checks of the embedding store (`geotter.store`) and of the experiment runners' result store and options
(`geotter.studies.experiments`): each bad argument is refused at the public function, before any work, by an error that names
it (`ValueError` for a bad value, `TypeError` for a wrong type); the valid calls next to each one still work."""
import json
import math

import numpy as np
import pandas as pd
import pytest

import geotter as G
from geotter.studies import experiments as EX
from geotter import store as SO

rng = np.random.default_rng(0)
TASK = G.Task('runner', np.arange(12) % 3, X=rng.normal(size=(12, 8)), Y=rng.normal(size=(3, 8)))
GRID = dict(betas=(0.5,), ks=(3,), alphas=(0.3,), seeds=(0,), max_steps=1, progress=False)


# --- ResultStore.append: a list of row dicts ----------------------------------------------------------------------

@pytest.mark.parametrize('where', ['memory', 'file'])
@pytest.mark.parametrize('rows, err, match', [
    (None, TypeError, r'rows=None'),
    ([1], TypeError, r'rows\[0\]'),
    ([dict(key='a'), 'b'], TypeError, r'rows\[1\]'),
    ([None], TypeError, r'rows\[0\]'),
    (dict(key='a', acc=1.0), TypeError, r'rows is a dict'),
])
def test_result_store_append_refuses_rows_that_are_not_dicts(where, rows, err, match, tmp_path):
    store = EX.ResultStore(None if where == 'memory' else tmp_path / 'r.csv')
    with pytest.raises(err, match=match): store.append(rows)
    assert store.frame().empty and store.keys() == set()          # nothing was added
    assert not (tmp_path / 'r.csv').exists()

@pytest.mark.parametrize('where', ['memory', 'file'])
def test_result_store_append_valid_rows_still_work(where, tmp_path):
    store = EX.ResultStore(None if where == 'memory' else tmp_path / 'r.csv')
    store.append([]); store.append(()); assert store.keys() == set()
    store.append([dict(key='a', acc=1.0)]); store.append((dict(key='b', acc=0.5),))
    store.append(r for r in [dict(key='c', acc=0.25)])
    assert store.keys() == {'a', 'b', 'c'} and list(store.frame().acc) == [1.0, 0.5, 0.25]


# --- store_root / data_root: '' is no folder; None is the default --------------------------------------------------

def test_store_root_refuses_an_empty_string(monkeypatch, tmp_path):
    monkeypatch.setenv(SO.STORE_ENV, str(tmp_path / 's'))
    with pytest.raises(ValueError, match=r"root=''"): SO.store_root('')
    with pytest.raises(ValueError, match=r"root=''"): SO.list_entries('')
    with pytest.raises(ValueError, match=r"root=''"): SO.entry_dir('cifar10', 'ViT-B-16', root='')

def test_data_root_refuses_an_empty_string(monkeypatch, tmp_path):
    monkeypatch.setenv(SO.DATA_ENV, str(tmp_path / 'd'))
    with pytest.raises(ValueError, match=r"path=''"): SO.data_root('')

def test_store_root_none_is_still_the_default(monkeypatch, tmp_path):
    monkeypatch.delenv(SO.STORE_ENV, raising=False); monkeypatch.setenv(SO.DATA_ENV, str(tmp_path / 'd'))
    assert SO.store_root() == SO.store_root(None) == tmp_path / 'd' / 'store'
    monkeypatch.setenv(SO.STORE_ENV, str(tmp_path / 's'))
    assert SO.store_root(None) == tmp_path / 's' and SO.store_root(tmp_path / 'r') == tmp_path / 'r'
    monkeypatch.setenv(SO.STORE_ENV, '')                              # an empty variable is an unset one
    assert SO.store_root(None) == tmp_path / 'd' / 'store'
    monkeypatch.delenv(SO.DATA_ENV)
    assert SO.data_root(None) == SO.data_root() == SO.Path.home() / 'data'


# --- PartialRun.file: a batch index is an integer >= 0 -------------------------------------------------------------

@pytest.mark.parametrize('b, err, match', [
    (-1, ValueError, r'\bb=-1\b'),
    (np.int64(-3), ValueError, r'\bb=(np\.int64\()?-3\b'),
    (1.5, TypeError, r'\bb=1\.5\b'),
    ('1', TypeError, r"\bb='1'"),
    (True, TypeError, r'\bb=True\b'),
    (None, TypeError, r'\bb=None\b'),
])
def test_partial_run_refuses_a_bad_batch_index(b, err, match, tmp_path):
    run = SO.open_run(tmp_path / 'e', {'n': 4})
    with pytest.raises(err, match=match): run.file(b)
    with pytest.raises(err, match=match): run.done(b)
    with pytest.raises(err, match=match): run.save(b, 0, 2, X=np.ones((2, 3)))
    assert sorted(p.name for p in run.path.iterdir()) == ['run.json']      # no batch file written

def test_partial_run_valid_batch_indices_still_work(tmp_path):
    run = SO.open_run(tmp_path / 'e', {'n': 4})
    assert run.file(0).name == 'batch-000000.npz' and run.file(np.int64(12)).name == 'batch-000012.npz'
    run.save(np.int32(1), 2, 4, X=np.ones((2, 3)))
    assert run.done(1) and not run.done(0) and run.load(1, 2, 4)['X'].shape == (2, 3)


# --- key_name: the key is a string ---------------------------------------------------------------------------------

@pytest.mark.parametrize('key', [None, 3, b'cifar10', ['cifar10']])
def test_key_name_names_a_key_of_the_wrong_type(key):
    with pytest.raises(TypeError, match=r'\bkey='): SO.key_name(key)

def test_key_name_valid_keys_still_work():
    assert SO.key_name('cifar10') == 'cifar10' and SO.key_name(SO.entry_key('a b')) == 'a b'
    assert SO.key_name('%FF') is None and SO.key_name('a%2db') is None and SO.key_name('') is None


# --- manifests and run settings are standard JSON: no NaN or infinity ----------------------------------------------

@pytest.mark.parametrize('manifest, match', [
    ({'score': math.nan}, r"manifest\['score'\]=nan"),
    ({'score': np.float64('inf')}, r"manifest\['score'\]=inf"),
    ({'meta': {'tvs': [0.1, -math.inf]}}, r"manifest\['meta'\]\['tvs'\]\[1\]=-inf"),
])
def test_write_entry_refuses_a_non_finite_manifest_value(manifest, match, tmp_path):
    e = tmp_path / 'toy' / 'bb'
    with pytest.raises(ValueError, match=match): SO.write_entry(e, {'X': np.ones(2)}, manifest)
    assert not (tmp_path / 'toy').exists()                              # nothing written, not even the folder

def test_open_run_refuses_non_finite_settings(tmp_path):
    with pytest.raises(ValueError, match=r"settings\['temperature'\]=nan"): SO.open_run(tmp_path / 'e', {'temperature': math.nan})
    assert not (tmp_path / 'e' / 'partial' / 'run.json').exists()

def test_manifest_with_finite_floats_still_round_trips(tmp_path):
    e = tmp_path / 'toy' / 'bb'
    m = SO.write_entry(e, {'X': np.ones(2)}, {'score': 0.5, 'big': 1e308, 'tiny': -5e-324, 'n': 3, 'tvs': [0.1, 2.0]})
    text = (e / 'manifest.json').read_text()
    assert json.loads(text, parse_constant=lambda c: pytest.fail(f'non-standard JSON constant {c}')) == m
    assert SO.read_entry(e)[1] == m and m['big'] == 1e308 and m['tiny'] == -5e-324


# --- run_benchmark / grid_scores: an option a method does not take is refused before any job runs ------------------

@pytest.mark.parametrize('options, match', [
    ({'otter': {'bogus': 1}}, r"bogus"),
    ({'geotter': {'kk': 5}}, r"kk"),
    ({'zs': {'k': 5}}, r"options\['zs'\]"),
    ({'sinkhorn': {'solver': 'emd'}}, r"solver"),          # sinkhorn sets the solver itself
    ({'geotter-nolr': {'seed': 1}}, r"seed"),              # the seed comes from seeds=
    ({'geoter': {'k': 5}}, r"geoter"),                     # not a method
])
def test_run_benchmark_refuses_an_unknown_option_before_any_job(options, match, tmp_path):
    with pytest.raises(ValueError, match=match):
        EX.run_benchmark([TASK], ['zs', 'otter', 'sinkhorn', 'geotter', 'geotter-nolr'], out=tmp_path, options=options, progress=False)
    assert not (tmp_path / 'results.csv').exists()                  # no job ran

def test_run_benchmark_refuses_an_unknown_option_even_when_cached(tmp_path):
    EX.run_benchmark([TASK], ['otter'], out=tmp_path, progress=False)
    with pytest.raises(ValueError, match='bogus'):
        EX.run_benchmark([TASK], ['otter'], out=tmp_path, options={'otter': {'bogus': 1}}, progress=False)

def test_run_benchmark_valid_options_still_work(tmp_path):
    options = {'otter': {'solver': 'sinkhorn', 'reg': 0.05, 'max_iter': 500}, 'sinkhorn': {'reg': 0.05},
               'pm': {'max_iter': 50}, 'geotter': {'k': 3, 'beta': 0.5, 'alpha': 0.3, 'n_init': 2, 'prior': 'uniform'},
               'multi-geotter': {'k': 3, 'steps': 3}, 'geotter-nolr': {'k': 3, 'n_folds': 2, 'target': 'uniform'},
               'zs': {}, 'stata': {'k': 3}}
    res = EX.run_benchmark([TASK], ['zs', 'otter', 'sinkhorn', 'pm', 'geotter', 'multi-geotter', 'geotter-nolr'],
                           out=tmp_path, options=options, progress=False)
    assert len(res) == 7 and res.accuracy.between(0, 100).all()
    for m in ('otter', 'geotter', 'geotter-nolr'):
        assert json.loads(res[res.method == m].options.item()) == options[m]

def test_grid_scores_refuses_an_unknown_option_before_any_job(tmp_path):
    with pytest.raises(ValueError, match=r'bogus'): EX.grid_scores([TASK], out=tmp_path, bogus=1, **GRID)
    with pytest.raises(ValueError, match=r'logits'): EX.grid_scores([TASK], out=tmp_path, logits=None, **GRID)
    assert not (tmp_path / 'grid.csv').exists()                     # no job ran
    with pytest.raises(ValueError, match=r'bogus'): EX.grid_unit(TASK, 0.5, ks=(3,), alphas=(0.3,), max_steps=1, bogus=1)

def test_grid_scores_valid_options_still_work():
    s = EX.grid_scores([TASK], cost_temperature=0.05, include_self=True, n_init=2, prior_weight=0.0, solver='emd', **GRID)
    assert len(s) == 2 and s.accuracy.between(0, 100).all()


def test_table1_takes_rows_with_options_and_no_seed():
    "A frame with an `options` column but no `seed` (rows not from run_benchmark) tabulates; several option sets are still refused."
    rows = pd.DataFrame(dict(task=['a', 'a'], method=['zs', 'otter'], options='{}', accuracy=[50., 60.]))
    tab = EX.table1(rows)
    assert list(tab.columns) == ['ZS', 'OTTER'] and tab.loc['a', 'OTTER'] == 60.
    with pytest.raises(ValueError, match='several option sets'):
        EX.table1(pd.concat([rows, rows.assign(options='{"k": 3}')]))
