"""Inputs at the edges of what the solvers and the cost can take: each once ended in a hang, a traceback from deep
inside, or a silent wrong result. Each case here must end, with a valid result or one error naming the argument."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import geotter as g
from geotter.chunked import sparse_ot, sparse_semi_relaxed, smooth_sparse
from geotter.cli import main
from geotter.pipeline import geotter_chunked

torch.set_num_threads(1)


def _marginals_ok(P, prior):
    P = np.asarray(P.toarray() if sp.issparse(P) else P, dtype=np.float64)
    np.testing.assert_allclose(P.sum(1), 1 / len(P), atol=1e-12)
    np.testing.assert_allclose(P.sum(0), prior, atol=1e-12)


@pytest.mark.parametrize('C, prior', [
    (np.full((20, 2), 1e25), [.5, .5]),                                    # constant, far from 0: the auction used to bid forever
    (np.full((100, 3), 1e20), [.2, .3, .5]),
    (1e12 + np.random.default_rng(0).random((300, 4)), [.1, .2, .3, .4]),  # a range of 1 at a magnitude of 1e12
])
def test_exact_ends_on_costs_far_from_zero(C, prior):
    _marginals_ok(g.emd('uniform', prior, C), prior)


def test_huge_prior_weight_ends():
    "λ log ν with λ = -1e300 puts costs near 1e301 on the classes with mass: the exact transport still ends."
    rng = np.random.default_rng(0); Y = rng.normal(size=(3, 8)); y = rng.integers(0, 3, 20)
    r = g.geotter(Y[y] + 0.3 * rng.normal(size=(20, 8)), Y, [.5, .5, 0], prior_weight=-1e300)
    assert r.labels.min() >= 0 and r.labels.max() <= 1                   # the class of prior 0 gets no sample


@pytest.mark.parametrize('backend', ['dense', 'chunked'])
def test_centre_at_the_origin(backend):
    "Two opposite points form one cluster whose centre is the origin: it has no direction, and the batch is adapted."
    X, Y = np.array([[1., 0], [-1, 0]]), np.array([[1., 0], [0, 1]])
    r = g.geotter(X, Y, 'uniform', backend=backend)
    assert sorted(np.asarray(r.labels).tolist()) == [0, 1]                # the uniform prior: one sample per class
    np.testing.assert_array_equal(g.cluster_cost(X, Y, n_clusters=1), np.ones((2, 2)))


def test_seed_beyond_a_c_int():
    X, Y = np.random.default_rng(0).normal(size=(50, 4)), np.random.default_rng(1).normal(size=(3, 4))
    for method in ('torch', 'auto'):                                       # 'auto' is faiss where it is installed
        _, z = g.kmeans(X, 3, seed=2**31, n_init=2, method=method)
        assert z.shape == (50,) and set(z.tolist()) <= {0, 1, 2}
    assert g.geotter(X, Y, 'uniform', seed=2**40).labels.shape == (50,)


def _rows(f):
    return lambda block, start, rows: f(block if rows is None else block[rows])


@pytest.mark.parametrize('solver', ['exact', 'semi-relaxed'])
def test_chunked_cost_fn_output_checked(solver):
    "Whatever `cost_fn` returns goes through one check: numpy, lists and grad tensors are used; bad shapes are named."
    C, prior = np.random.default_rng(0).random((12, 4)), np.array([.1, .2, .3, .4])
    run = (lambda f: sparse_ot(C, f, prior)) if solver == 'exact' else \
          (lambda f: sparse_semi_relaxed(C, f, prior, reg=0.1, rho=1.0))
    ref = run(_rows(torch.from_numpy)).plan.toarray()
    for ok in (lambda B: B, lambda B: B.tolist(), lambda B: torch.tensor(B, requires_grad=True)):
        np.testing.assert_allclose(run(_rows(ok)).plan.toarray(), ref, atol=1e-12)
    for bad, msg in ((lambda B: B[:, 0], r'shape \(12,\)'), (lambda B: np.c_[B, B[:, :1]], r'shape \(12, 5\)'),
                     (lambda B: B * np.nan, 'NaN or infinite')):
        with pytest.raises(ValueError, match=msg): run(_rows(bad))
    with pytest.raises(ValueError, match=r'shape \(3, 4\)'): run(lambda block, start, rows: block[:3])   # too few rows


def test_chunked_arguments_checked():
    C, f = np.random.default_rng(0).random((12, 4)), _rows(lambda B: B)
    for kw, msg in ((dict(max_rounds=0), 'max_rounds'), (dict(max_rounds=1.5), 'max_rounds'), (dict(progress='no'), 'progress')):
        with pytest.raises((ValueError, TypeError), match=msg): sparse_ot(C, f, [.25] * 4, **kw)
    for prior in (1, np.float64(1), [[.5, .5]]):
        with pytest.raises(ValueError, match='prior has shape'): sparse_ot(C, f, prior)
        with pytest.raises(ValueError, match='prior has shape'): sparse_semi_relaxed(C, f, prior, reg=0.1, rho=1.0)
    assert sparse_semi_relaxed(C, f, [.25] * 4, reg=0.1, rho=1.0, seed=None).plan.shape == (12, 4)   # None: seed 0


@pytest.mark.parametrize('reg', [1e-300, 1e300])
def test_entropic_reg_extremes(reg):
    "Where float32 overflows, float64 starts afresh: a finite plan with exact rows (it used to be NaN, or an empty sparse plan)."
    C, prior = np.random.default_rng(0).random((12, 4)), [.1, .2, .3, .4]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')                                    # a tiny reg may not reach the columns' tolerance
        plans = [g.sinkhorn(C, 'uniform', prior, reg=reg), g.sinkhorn_unbalanced(C, 'uniform', prior, reg=reg, rho=1.0),
                 sparse_semi_relaxed(C, _rows(lambda B: B), prior, reg=reg, rho=1.0).plan.toarray()]
    for P in plans:
        assert np.isfinite(P).all() and (P >= 0).all()
        np.testing.assert_allclose(P.sum(1), 1 / 12, rtol=1e-6)


def test_geotter_chunked_prior_none_refused():
    with pytest.raises(ValueError, match='prior=None'):
        geotter_chunked(np.eye(4), np.eye(4)[:2], None, neighbours=None, centres=None)


def test_smooth_sparse_plan_dtypes():
    nb = np.array([[1], [2], [0]])
    P = smooth_sparse(sp.csr_array(np.eye(3, 2, dtype=np.int64)), nb, 0.3)
    assert P.dtype == np.float64
    np.testing.assert_allclose(P.toarray(), smooth_sparse(sp.csr_array(np.eye(3, 2)), nb, 0.3).toarray())
    with pytest.raises(TypeError, match='plan has dtype complex'): smooth_sparse(sp.csr_array(np.eye(3, 2) * 1j), nb, 0.3)


def test_cli_prior_and_text_edges(tmp_path, capsys):
    rng = np.random.default_rng(0)
    np.save(tmp_path / 'X.npy', rng.normal(size=(20, 4))); np.save(tmp_path / 'Y1.npy', rng.normal(size=(1, 4)))
    np.save(tmp_path / 'Y.npy', rng.normal(size=(3, 4)))
    (tmp_path / 'one.txt').write_text('1\n'); (tmp_path / 'blank.txt').write_text('\n\n\n')
    (tmp_path / 'big.txt').write_text('1e308 1e308 1e308\n')
    p = lambda name: str(tmp_path / name)
    main(['adapt', '--embeddings', p('X.npy'), '--classes', p('Y1.npy'), '--prior', p('one.txt'), '--out', p('o.npy')])
    np.testing.assert_array_equal(np.load(p('o.npy')), np.zeros(20))
    capsys.readouterr()
    for argv, msg in ((['--embeddings', p('blank.txt'), '--classes', p('Y.npy')], 'non-empty'),
                      (['--embeddings', p('X.npy'), '--classes', p('Y.npy'), '--prior', p('big.txt')], 'float range')):
        with pytest.raises(SystemExit) as e: main(['adapt', *argv, '--out', p('o2.npy')])
        err = capsys.readouterr().err.strip()
        assert e.value.code == 2 and len(err.splitlines()) == 1 and msg in err, err


@pytest.mark.parametrize('method', ['geotter', 'otter', 'transclip-zs'])
def test_cli_logits_of_one_class(tmp_path, method):
    "A one-class classifier's logit features are one direction for every sample, not rows of zeros blamed on X."
    np.save(tmp_path / 'L1.npy', np.random.default_rng(0).normal(size=(10, 1)))
    main(['adapt', '--logits', str(tmp_path / 'L1.npy'), '--method', method, '--out', str(tmp_path / 'o.npy')])
    np.testing.assert_array_equal(np.load(tmp_path / 'o.npy'), np.zeros(10))


def test_block_cost_rows_must_fit():
    "transport(BlockCost, X=...) names X when its rows do not fit the cost, instead of torch's matmul error."
    from geotter.pipeline import BlockCost, transport
    Y = torch.nn.functional.normalize(torch.randn(3, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0)), dim=1)
    X = np.random.default_rng(0).normal(size=(12, 5))
    _marginals_ok(transport(BlockCost(Y, 0.1), 'uniform', X=X).plan, np.full(3, 1 / 3))
    for bad in (X[:, :3], X[:, 0]):
        with pytest.raises(ValueError, match=r'X has shape .*expected \(n, 5\)'): transport(BlockCost(Y, 0.1), 'uniform', X=bad)


def test_map_row_blocks_checks_rows():
    from geotter.chunked import map_row_blocks
    X, f = np.arange(20.).reshape(10, 2), lambda block, start, rows: (start, None if rows is None else rows.tolist())
    assert map_row_blocks(f, X, 3, rows=[0, 4, 9]) == [(0, [0]), (3, [1]), (9, [0])]
    for rows in ([4, 0], [0, 50], [-1], [0, 0]):
        with pytest.raises(ValueError, match='rows must be distinct, sorted'): map_row_blocks(f, X, 3, rows=rows)
    for rows in ([0.5], np.ones(10, bool)):
        with pytest.raises(ValueError, match='rows has shape'): map_row_blocks(f, X, 3, rows=rows)
    with pytest.raises(ValueError, match=r'X has shape \(\)'): map_row_blocks(f, np.array(1.0), 3)
    with pytest.raises(TypeError, match='X has type list'): map_row_blocks(f, X.tolist(), 3)


def test_masked_arrays_and_sample_size():
    "A masked array without masked entries is its data; with some it is refused by name (the mask was ignored)."
    from geotter.chunked import sample_rows
    rng = np.random.default_rng(0); X, Y = rng.normal(size=(20, 4)), rng.normal(size=(3, 4))
    M = np.ma.masked_array(X, mask=np.zeros(X.shape, bool))
    np.testing.assert_array_equal(g.geotter(M, Y, 'uniform').labels, g.geotter(X, Y, 'uniform').labels)
    M.mask[0, 0] = True
    with pytest.raises(TypeError, match='X is a masked array'): g.geotter(M, Y, 'uniform')
    for n in (0, -5, 10.0):
        with pytest.raises((ValueError, TypeError), match='n='): sample_rows(n)


def test_cli_weights_out_of_range_name_the_option(tmp_path, capsys):
    rng = np.random.default_rng(0)
    np.save(tmp_path / 'X.npy', rng.normal(size=(20, 4))); np.save(tmp_path / 'Y.npy', rng.normal(size=(3, 4)))
    for opt, value in (('--alpha', '2'), ('--beta', '-1')):
        with pytest.raises(SystemExit) as e:
            main(['adapt', '--embeddings', str(tmp_path / 'X.npy'), '--classes', str(tmp_path / 'Y.npy'), opt, value])
        err = capsys.readouterr().err.strip()
        assert e.value.code == 2 and len(err.splitlines()) == 1 and f'{opt}: got' in err and '<= 1' in err, err


# --- files the CLI writes: never anything but the named output -------------------------------------------------------

def _arrays(d):
    rng = np.random.default_rng(0)
    np.save(d / 'X.npy', rng.normal(size=(30, 6))); np.save(d / 'Y.npy', rng.normal(size=(3, 6)))
    return ['adapt', '--embeddings', str(d / 'X.npy'), '--classes', str(d / 'Y.npy')]

def test_adapt_leaves_other_hidden_files_alone(tmp_path, capsys):
    import os, time
    keep = [tmp_path / '.thesis.0badcafe.tmp', tmp_path / '.cache.12345678.tmp']   # another program's old scratch
    keep[0].mkdir(); (keep[0] / 'ch1.tex').write_text('important'); keep[1].write_text('x')
    for k in keep: os.utime(k, (time.time() - 3 * 86400,) * 2)
    main(_arrays(tmp_path) + ['--out', str(tmp_path / 'labels.npy'), '--method', 'zs'])
    assert (keep[0] / 'ch1.tex').read_text() == 'important' and keep[1].exists()

@pytest.mark.parametrize('kind', ['fifo', 'dangling'])
def test_adapt_out_not_a_regular_file(tmp_path, capsys, kind):
    import os
    out = tmp_path / 'o.npy'
    os.mkfifo(out) if kind == 'fifo' else out.symlink_to(tmp_path / 'nowhere.npy')
    with pytest.raises(SystemExit) as e: main(_arrays(tmp_path) + ['--out', str(out), '--method', 'zs'])
    assert e.value.code == 2
    assert ('not a regular file' if kind == 'fifo' else 'does not exist') in capsys.readouterr().err
    assert (out.is_fifo() if kind == 'fifo' else not (tmp_path / 'nowhere.npy').exists())

def test_output_folder_and_files_through_dangling_links(tmp_path):
    from geotter.cli import UsageError, check_output_dir, write_output
    (tmp_path / 'd').symlink_to(tmp_path / 'nowhere')
    with pytest.raises(UsageError, match='does not exist'): check_output_dir(tmp_path / 'd', '--out')
    (tmp_path / 'r.csv').symlink_to(tmp_path / 'new.csv')
    with pytest.raises(UsageError, match='does not exist'): write_output(tmp_path / 'r.csv', lambda f: f.write(b'x'))
    assert not (tmp_path / 'new.csv').exists()
    (tmp_path / 't.md').write_text('old'); (tmp_path / 'l.md').symlink_to(tmp_path / 't.md')
    write_output(tmp_path / 'l.md', lambda f: f.write(b'new'))               # an existing target: written, atomically
    assert (tmp_path / 't.md').read_text() == 'new' and (tmp_path / 'l.md').is_symlink()

@pytest.mark.parametrize('method', ['zs', 'transclip-zs', 'zlap', 'stata', 'geotter-unknown'])
def test_adapt_refuses_a_prior_the_method_does_not_use(tmp_path, capsys, method):
    with pytest.raises(SystemExit) as e: main(_arrays(tmp_path) + ['--prior', 'uniform', '--method', method, '--out', str(tmp_path / 'o.npy')])
    assert e.value.code == 2 and f'--prior is not used by --method {method}' in capsys.readouterr().err
    main(_arrays(tmp_path) + ['--method', method, '--out', str(tmp_path / 'o.npy')])         # without it: no note on a ratio
    assert 'label ratio is unknown' not in capsys.readouterr().err


# --- store entries are checked when read --------------------------------------------------------------------------

def test_store_entry_checked_on_read(tmp_path):
    from geotter.store import StoreError, entry_dir, write_entry
    from geotter.data import load_embeddings
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(20, 4)).astype(np.float32), rng.normal(size=(3, 4)).astype(np.float32)
    good = dict(X=X, Y=Y, labels=rng.integers(0, 3, 20))
    write_entry(entry_dir('ok', 'b', tmp_path), good, dict(class_names=['a', 'b', 'c']))
    assert load_embeddings('ok', 'b', tmp_path).X.shape == (20, 4)
    for name, arrs, names, msg in [('fl', dict(good, labels=np.linspace(0, 2.9, 20)), ['a', 'b', 'c'], 'integer labels'),
                                   ('dup', good, ['a', 'a', 'b'], 'distinct non-empty strings'),
                                   ('emp', good, ['a', '', 'b'], 'distinct non-empty strings'),
                                   ('wid', dict(good, Y=Y[:, :3]), ['a', 'b', 'c'], r'expected \(n, d\) and \(m, d\)'),
                                   ('nan', dict(good, X=np.where(X > 1, np.nan, X)), ['a', 'b', 'c'], 'finite floats')]:
        write_entry(entry_dir(name, 'b', tmp_path), arrs, dict(class_names=names))
        with pytest.raises(StoreError, match=msg): load_embeddings(name, 'b', tmp_path)

@pytest.mark.parametrize('rec', [{'file': '../../etc/passwd', 'sha256': '0', 'shape': [1], 'dtype': 'f8'}, 7, {'file': 'X.npy'}])
def test_store_file_record_is_a_plain_name(tmp_path, rec):
    from geotter.store import StoreError, _load_checked
    with pytest.raises(StoreError, match='malformed'): _load_checked(tmp_path, rec, True)

@pytest.mark.parametrize('suffix, text', [('.txt', '0.5 0.25\r\n0.125 1\r\n'), ('.csv', '0.5,0.25\n0.125,1\n')])
def test_text_inputs_with_a_byte_order_mark(tmp_path, suffix, text):
    from geotter.cli import load_array
    f = tmp_path / ('a' + suffix); f.write_bytes(b'\xef\xbb\xbf' + text.encode())      # UTF-8 BOM, as spreadsheets save
    np.testing.assert_array_equal(load_array(f, '--embeddings', 2), [[0.5, 0.25], [0.125, 1]])
