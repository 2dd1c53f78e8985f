"""The `geotter` command: each check of `geotter.cli` on small seeded arrays, in-process (`main([...])`)
or in a subprocess where the point is what gets imported. A user error must end with exit status 2 and
one line on stderr (no traceback) before any computation, and the command must write exactly the path
it prints."""
import os, subprocess, sys
from pathlib import Path

import numpy as np
import pytest

from geotter import cli
from geotter.cli import main

N, M, D = 60, 4, 8

@pytest.fixture(scope='module')
def files(tmp_path_factory):
    "Seeded embeddings (4 clusters around 4 class vectors), classes, logits and priors as files."
    d = tmp_path_factory.mktemp('cli')
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(M, D)); y = rng.choice(M, N, p=[0.55, 0.25, 0.15, 0.05])
    X = Y[y] + 0.8 * rng.normal(size=(N, D))
    np.save(d / 'X.npy', X); np.save(d / 'Y.npy', Y); np.save(d / 'y.npy', y)
    np.save(d / 'L.npy', X @ Y.T); np.save(d / 'L3.npy', (X @ Y.T)[:, :3])
    np.savetxt(d / 'prior.txt', np.bincount(y, minlength=M) / N)
    np.savetxt(d / 'counts.csv', np.bincount(y, minlength=M)[None], delimiter=',', fmt='%d')
    np.savez(d / 'X.npz', X=X); (d / 'X.pt').write_bytes(b'PK\x03\x04not a numpy file'); (d / 'empty.npy').write_bytes(b'')
    (d / 'X.bin').write_bytes(X.tobytes()); (d / 'bin.txt').write_bytes(bytes(range(256)))
    (d / 'afile').write_text('not a folder')
    np.savetxt(d / 'p891.txt', [0.3, 0.3, 0.2, 0.091])
    np.savez(d / 'X.npz', X=X); (d / 'npz.npy').write_bytes((d / 'X.npz').read_bytes())
    with open(d / 'huge.npy', 'wb') as fh:     # a header claiming 2**40 x 4 float64 (32 TiB) over 64 bytes of data
        np.lib.format.write_array_header_1_0(fh, dict(descr='<f8', fortran_order=False, shape=(2**40, 4))); fh.write(bytes(64))
    return d

def run(capsys, *argv):
    "(exit status, stdout, stderr) of `main(argv)`."
    try: main([str(a) for a in argv]); code = 0
    except SystemExit as e: code = e.code if isinstance(e.code, int) else 1
    except KeyboardInterrupt: pytest.fail('Ctrl-C escaped main as a traceback')   # else it would stop the test session
    out, err = capsys.readouterr()
    return code, out, err

def adapt(f, *extra): return ['adapt', '--embeddings', f / 'X.npy', '--classes', f / 'Y.npy', *extra]

def assert_usage_error(code, err, *needles):
    assert code == 2, (code, err)
    assert err.count('\n') == 1 and 'Traceback' not in err, err
    for s in needles: assert s in err, (s, err)

# --- help: fast, no torch, defaults and methods from the library ------------------------------------------

@pytest.mark.parametrize('argv', [['--help'], ['--version'], ['adapt', '--help'], ['experiments', '--help'], ['demo', '--help'],
                                  ['extract', '--help']])
def test_help_imports_no_torch(argv):
    code = f"import sys\nfrom geotter.cli import main\ntry: main({argv!r})\nexcept SystemExit: pass\nprint('torch' in sys.modules)"
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == 'False', r.stdout + r.stderr

def test_adapt_help_shows_defaults_and_methods(capsys):
    from geotter.options import PAPER_DEFAULTS
    from geotter.studies.experiments import METHODS
    from geotter.transport import DEFAULT_REG, DEFAULT_RHO
    code, out, _ = run(capsys, 'adapt', '--help')
    text = ' '.join(out.split())
    assert code == 0
    for opt in ('beta', 'alpha', 'cost_temperature'): assert f"default {PAPER_DEFAULTS[opt]:g}" in text, opt
    assert "--cost-temperature" in text and "(PM, FPM; default PM's 0.1, FPM's 1)" in text
    assert f"default {PAPER_DEFAULTS['k']})" in text and f"default {DEFAULT_REG:g})" in text and f"default {DEFAULT_RHO:g})" in text
    assert 'Sinkhorn' in text and 'OTTER' in text and 'PM, FPM' in text and '(GeoTTER/Sinkhorn)' not in text
    assert '{' + ','.join(METHODS) + '}' in text

# --- adapt: results and outputs --------------------------------------------------------------------------

def test_adapt_matches_function(files, capsys):
    from geotter.method import geotter
    X, Y, y = (np.load(files / f) for f in ('X.npy', 'Y.npy', 'y.npy'))
    code, out, err = run(capsys, *adapt(files, '--prior', files / 'prior.txt', '--k', 5, '--out', files / 'a.npy'))
    assert code == 0, err
    np.testing.assert_array_equal(np.load(files / 'a.npy'), geotter(X, Y, np.bincount(y, minlength=M) / N, k=5).labels)

def test_prior_as_counts_is_normalised(files, capsys):
    code, _, err = run(capsys, *adapt(files, '--prior', files / 'counts.csv', '--out', files / 'c.npy'))
    assert code == 0 and 'normalised' in err, err
    run(capsys, *adapt(files, '--prior', files / 'prior.txt', '--out', files / 'p.npy'))
    np.testing.assert_array_equal(np.load(files / 'c.npy'), np.load(files / 'p.npy'))

def test_class_counts_keep_empty_classes(files, capsys):
    L = np.zeros((5, M)); L[:, 0] = 1.0
    np.save(files / 'L0.npy', L)
    code, out, _ = run(capsys, 'adapt', '--logits', files / 'L0.npy', '--method', 'zs', '--out', files / 'z.npy')
    assert code == 0 and 'class counts [5, 0, 0, 0]' in out, out

@pytest.mark.parametrize('name', ['labels.txt', 'labels.csv', 'labels.npy'])
def test_out_written_exactly_where_reported(files, capsys, name):
    p = files / 'outs' / name; p.parent.mkdir(exist_ok=True)
    code, out, _ = run(capsys, *adapt(files, '--out', p))
    assert code == 0 and f"to {p};" in out and p.exists() and not Path(str(p) + '.npy').exists()
    got = np.load(p) if p.suffix == '.npy' else np.loadtxt(p, dtype=int)
    assert got.shape == (N,) and set(got.tolist()) <= set(range(M))

def test_logits_with_embeddings_are_used(files, capsys):
    "With embeddings and logits, the zero-shot labels are the argmax of the given logits, not of cos/T."
    Lp = np.load(files / 'L.npy')[:, ::-1].copy(); np.save(files / 'Lrev.npy', Lp)
    code, _, err = run(capsys, *adapt(files, '--logits', files / 'Lrev.npy', '--method', 'zs', '--out', files / 'zl.npy'))
    assert code == 0, err
    np.testing.assert_array_equal(np.load(files / 'zl.npy'), Lp.argmax(1))

def test_checks_run_before_computing(files, capsys, monkeypatch):
    "An unusable --out is refused before the method runs."
    monkeypatch.setattr(cli, '_run_adapt', lambda a: pytest.fail('the method ran before the output path was checked'))
    code, _, err = run(capsys, *adapt(files, '--out', files / 'afile' / 'labels.npy'))
    assert_usage_error(code, err, '--out', 'afile')

# --- user errors: exit status 2, one line naming the argument ------------------------------------------------

def _bad_cases(f):
    return [
        (adapt(f, '--out', f), ['--out', 'is a folder']),
        (adapt(f, '--out', f / 'labels.pkl'), ['--out', '.npy, .txt, .csv']),
        (adapt(f, '--out', f / 'missing' / 'l.npy'), ['--out', 'does not exist']),
        (adapt(f, '--out', f / 'afile' / 'l.npy'), ['--out', 'afile']),
        (adapt(f, '--logits', f / 'L3.npy'), ['--logits has shape', f'({N}, {M})']),
        (['adapt', '--embeddings', f / 'X.npz', '--classes', f / 'Y.npy'], ['--embeddings', 'X.npz', '.npz']),
        (['adapt', '--embeddings', f / 'X.pt', '--classes', f / 'Y.npy'], ['--embeddings', 'X.pt', '.pt']),
        (['adapt', '--embeddings', f / 'X.bin', '--classes', f / 'Y.npy'], ['--embeddings', 'X.bin']),
        (['adapt', '--embeddings', f / 'empty.npy', '--classes', f / 'Y.npy'], ['--embeddings', 'empty.npy', 'empty']),
        (['adapt', '--embeddings', f / 'bin.txt', '--classes', f / 'Y.npy'], ['--embeddings', 'bin.txt']),
        (['adapt', '--embeddings', f / 'nope.npy', '--classes', f / 'Y.npy'], ['--embeddings', 'nope.npy', 'no such file']),
        (['adapt', '--embeddings', f / 'X.npy'], ['--classes']),
        (['adapt'], ['--logits']),
        (adapt(f, '--prior', f / 'Y.npy'), ['--prior']),
        (adapt(f, '--prior', f / 'p891.txt'), ['--prior', 'sums to 0.891', 'neither probabilities']),
        (['adapt', '--embeddings', f / 'npz.npy', '--classes', f / 'Y.npy'], ['--embeddings', 'an .npz archive']),
        (['adapt', '--embeddings', f / 'huge.npy', '--classes', f / 'Y.npy'], ['--embeddings', 'its header says shape (1099511627776, 4)']),
        (['adapt', '--embeddings', f / ('x' * 300 + '.npy'), '--classes', f / 'Y.npy'], ['--embeddings', 'a name of 304 bytes']),
        (adapt(f, '--out', f / ('x' * 300 + '.npy')), ['--out', 'a name of 304 bytes']),
        (['demo', '--out', '/proc/geotter-demo'], ['--out', 'cannot write in /proc']),          # unwritable, even for root
        (['experiments', 'noise', '--out', '/proc/geotter-exp'], ['--out', 'cannot write in /proc']),
        (adapt(f, '--method', 'otter', '--beta', 0.5), ['--beta', 'otter']),
        (adapt(f, '--k', 0), ['--k']), (adapt(f, '--steps', 1.5), ['--steps']),
        (adapt(f, '--steps', 10**18), ['--steps', '<= 1000']), (adapt(f, '--steps', 2**63), ['--steps', '<= 1000']), (adapt(f, '--steps', -1), ['--steps', '>= 0']),
        (adapt(f, '--reg', -1), ['--reg']), (adapt(f, '--method', 'nope'), ['--method']),
        *[(adapt(f, '--cost-temperature', t), ['--cost-temperature']) for t in ('0', '-0.1', 'nan', 'inf', '-inf', 'True', 'x')],
        *[(adapt(f, '--method', 'pm', '--temperature', t), ['--temperature']) for t in ('0', 'nan')],
        (['experiments', 'table1', '--tasks', 'nope', '--out', f / 'e'], ['--tasks nope']),
        (['experiments', 'table1', '--n-jobs', 0, '--out', f / 'e'], ['--n-jobs']),
        *[(['experiments', 'table1', '--n-jobs', j, '--out', f / 'e'], ['--n-jobs', '<= 256']) for j in (257, 10**18, 2**63)],
        (['experiments', 'table1', '--out', f / 'afile'], ['--out', 'is a file']),
        (['experiments', 'table9'], ['table9']),
        (['demo', '--task', 'nope', '--out', f / 'd'], ['--task nope']),
        (['demo', '--out', f / 'afile'], ['--out', 'is a file']),
        (['demo', '--methods', 'nope'], ['--methods']),
        (['extract', 'no-such-dataset'], ['no-such-dataset']),
        (['extract', 'cifar10', 'no-such-backbone'], ['no-such-backbone']),
        (['extract', 'wordnet-nouns', 'no-such-backbone'], ['no-such-backbone']),   # a dataset another module registers
        (['extract', 'cifar10', '--batch-size', 0], ['--batch-size']),
        (['extract', 'cifar10', '--templates', 'foo'], ['--templates', 'foo']),
        (['extract', 'cifar10', '--store', f / 'afile'], ['--store']),
    ]

@pytest.mark.parametrize('i', range(len(_bad_cases(Path('.')))))
def test_user_error(files, capsys, i):
    argv, needles = _bad_cases(files)[i]
    code, out, err = run(capsys, *argv)
    assert_usage_error(code, err, *[str(s) for s in needles])
    assert not (files / 'e').exists() and not (files / 'd').exists() and not (files / 'labels.pkl').exists()

def test_extract_checks_before_importing_backbones():
    code = ("import sys\nfrom geotter.cli import main\nfor a in (['extract', 'nope'], ['extract', 'cifar10', '--batch-size', '0'],"
            " ['extract', 'cifar10', '--templates', 'foo']):\n    try: main(a)\n    except SystemExit as e: assert e.code == 2, e.code\n"
            "print(sorted(m for m in ('open_clip', 'sentence_transformers', 'torchvision') if m in sys.modules))")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == '[]', r.stdout + r.stderr

# --- experiments and demo: what they print -----------------------------------------------------------------

def test_experiment_prints_its_tables(files, capsys, monkeypatch):
    "The tables an experiment returns are printed in Markdown (table1 --fast used to print none)."
    import pandas as pd, types
    fake = types.ModuleType('fake_exp')
    def run_table1(tasks=('synthetic',), out=None, fast=False, n_jobs=1):
        tab = pd.DataFrame({'ZS': [50.0], 'GeoTTER': [60.0]}, index=pd.Index(['synthetic'], name='task'))
        return dict(table1=tab, balanced=tab - 1, results=tab)
    fake.run_table1 = run_table1
    monkeypatch.setitem(sys.modules, 'fake_exp', fake)
    monkeypatch.setitem(cli.EXPERIMENTS, 'table1', 'fake_exp:run_table1')
    code, out, err = run(capsys, 'experiments', 'table1', '--fast', '--tasks', 'synthetic', '--out', files / 'exp')
    assert code == 0, err
    assert 'Accuracy (%)' in out and 'Balanced accuracy (%)' in out and '| synthetic |   50 |        60 |' in out, out

def test_skipped_tasks_in_one_short_line(monkeypatch, capsys):
    "Unavailable default tasks are named in one short line; asked for by name, a task's full reason is the error."
    import geotter.data
    reason = 'the logit file is missing: ' + 'x' * 300 + ' END'
    def load_task(name, **kw): raise FileNotFoundError(reason)
    monkeypatch.setattr(geotter.data, 'load_task', load_task)
    names = ('cifar10-clip', 'cifar10-siglip', 'cifar10-siglip2', 'cifar10-biomedclip', 'wordnet-nouns')
    got = cli.resolve_tasks(None, names + ('synthetic',), log=print)
    out = capsys.readouterr().out
    assert got == ['synthetic'] and out.count('\n') == 1 and len(out) < 200 and all(n in out for n in names), out
    with pytest.raises(cli.UsageError, match='END'): cli.resolve_tasks(['cifar10-clip'])

def test_demo_header_markdown_and_results_root(files, capsys, monkeypatch):
    "The demo says how imbalanced each task is, prints Markdown tables, and writes under $GEOTTER_RESULTS/demo."
    monkeypatch.setenv('GEOTTER_RESULTS', str(files / 'results'))
    if (files / 'results' / 'demo').exists(): import shutil; shutil.rmtree(files / 'results' / 'demo')   # a fresh folder
    code, out, err = run(capsys, 'demo', '--task', 'synthetic', '--methods', 'zs', 'otter')
    assert code == 0, err
    assert 'imbalance: the largest class is' in out and 'max/min' not in out
    assert '| task' in out and 'Balanced accuracy (%)' in out
    assert '2 jobs (2 methods x 1 tasks): about' in out and 'bench/demo_time.py' in out    # the expected time, said first
    assert out.index('2 jobs') < out.index('| task')
    assert (files / 'results' / 'demo' / 'table1.md').read_text().startswith('Accuracy (%)')
    assert str(files / 'results' / 'demo' / 'table1.md') in out

def test_faiss_build(tmp_path, monkeypatch):
    "Which faiss build is installed, from the .dist-info folders on sys.path; a warning when CPU and GPU builds meet."
    import warnings, geotter
    (tmp_path / 'faiss_cpu-1.15.1.dist-info').mkdir(); (tmp_path / 'faiss_gpu_cu12-1.14.1.dist-info').mkdir()
    monkeypatch.setattr(sys, 'path', [str(tmp_path)])
    with pytest.warns(RuntimeWarning, match='pip uninstall -y faiss-cpu faiss-gpu-cu12'): assert geotter.faiss_build() == 'gpu'
    (tmp_path / 'faiss_gpu_cu12-1.14.1.dist-info').rmdir()
    with warnings.catch_warnings():
        warnings.simplefilter('error'); assert geotter.faiss_build() == 'cpu'
    monkeypatch.setattr(sys, 'path', [str(tmp_path / 'nowhere')])
    assert geotter.faiss_build() == 'none'


# --- outputs never touch inputs -------------------------------------------------------------------------

def _spellings(f, name):
    "Four spellings of the file `name` in `f`: as is, through sub/.., relative to the working folder, through a link."
    (f / 'sub').mkdir(exist_ok=True)
    link = f / f'link-{name}'
    if not link.is_symlink(): os.symlink(f / name, link)
    return {'plain': f / name, 'sub/..': f / 'sub' / '..' / name, 'relative': os.path.relpath(f / name), 'symlink': link}

@pytest.mark.parametrize('flag, name', [('--embeddings', 'X.npy'), ('--classes', 'Y.npy'), ('--prior', 'prior.txt')])
@pytest.mark.parametrize('spelling', ['plain', 'sub/..', 'relative', 'symlink'])
def test_out_is_never_an_input(files, capsys, flag, name, spelling):
    "--out naming an input file, however spelled, is refused before any work; the input is unchanged."
    out = _spellings(files, name)[spelling]
    before = (files / name).read_bytes()
    code, _, err = run(capsys, *adapt(files, '--prior', files / 'prior.txt', '--out', out))
    assert_usage_error(code, err, '--out', f'is the {flag} file')
    assert (files / name).read_bytes() == before and (files / f'link-{name}').is_symlink()

def test_dangling_link_is_not_followed(files, capsys):
    "A dangling link as --out is refused: nothing is created at its target and the link stays."
    target = files / 'elsewhere' / 'labels.npy'; target.parent.mkdir(exist_ok=True)
    link = files / 'dangling.npy'
    if not link.is_symlink(): os.symlink(target, link)
    code, _, err = run(capsys, *adapt(files, '--out', link))
    assert_usage_error(code, err, '--out', 'which does not exist; not followed')
    assert link.is_symlink() and not target.exists() and list(target.parent.iterdir()) == []

def test_live_link_is_written_through(files, capsys):
    "A link to an existing file (not an input) as --out: refused (the file exists); with --force the file it points to gets the labels, the link stays a link."
    target = files / 'target.npy'; np.save(target, np.zeros(3)); link = files / 'live.npy'
    if not link.is_symlink(): os.symlink(target, link)
    code, out, err = run(capsys, *adapt(files, '--out', link))
    assert_usage_error(code, err, '--out', 'exists; --force replaces it')
    assert np.load(target).shape == (3,)
    code, out, err = run(capsys, *adapt(files, '--out', link, '--force'))
    assert code == 0, err
    assert link.is_symlink() and np.load(target).shape == (N,)

def test_write_is_atomic(files, capsys, monkeypatch):
    "A write that fails half way leaves the old labels file whole and no temporary file beside it."
    p = files / 'atomic' / 'labels.npy'; p.parent.mkdir(exist_ok=True); np.save(p, np.arange(3))
    def broken(f, a, *args, **kw): f.write(b'\x93NUMPY half'); raise OSError(28, 'No space left on device')
    monkeypatch.setattr(cli.np, 'save', broken)
    with pytest.raises(OSError, match='No space left'): cli.save_labels(np.zeros(N, dtype=int), p)
    monkeypatch.undo()
    assert np.load(p).tolist() == [0, 1, 2] and [q.name for q in p.parent.iterdir()] == ['labels.npy']

# --- missing libraries, broken stores --------------------------------------------------------------------

@pytest.mark.parametrize('argv, package', [(['extract', 'cifar10', 'ViT-B-16'], 'open_clip_torch'),
                                           (['extract', 'wordnet-nouns', 'all-MiniLM-L6-v2'], 'sentence-transformers'),
                                           (['extract', 'cifar10', 'RN50'], 'torchvision')])
def test_extract_without_its_library(files, capsys, monkeypatch, argv, package):
    "A backbone or dataset library that is not installed: one line naming the package to install, exit status 2."
    import importlib.util
    real = importlib.util.find_spec
    missing = {'open_clip_torch': 'open_clip', 'sentence-transformers': 'sentence_transformers', 'torchvision': 'torchvision'}[package]
    monkeypatch.setattr(importlib.util, 'find_spec', lambda name, *a: None if name == missing else real(name, *a))
    code, _, err = run(capsys, *argv, '--store', files / 'xstore')
    assert_usage_error(code, err, f'pip install {package}')

def test_broken_stores(files, capsys, monkeypatch):
    "A store root that is a file, and a store entry whose array is a folder: one line each, exit status 2."
    from geotter.store import entry_dir, write_entry
    monkeypatch.setenv('GEOTTER_STORE', str(files / 'afile'))
    code, _, err = run(capsys, 'demo', '--task', 'mytask', '--out', files / 'd')
    assert_usage_error(code, err, '--task mytask', 'the store root is a file')
    code, _, err = run(capsys, 'experiments', 'noise', '--tasks', 'mytask', '--out', files / 'e')
    assert_usage_error(code, err, 'the store root is a file')
    code, _, err = run(capsys, 'extract', 'cifar10', 'ViT-B-16')
    assert_usage_error(code, err, 'the store root ($GEOTTER_STORE', 'afile: is a file')
    store = files / 'store'
    e = entry_dir('broken', 'bb', store)
    write_entry(e, dict(X=np.ones((3, 2), np.float32), Y=np.ones((2, 2), np.float32), labels=np.arange(3)), dict(class_names=['a', 'b']))
    (e / 'X.npy').unlink(); (e / 'X.npy').mkdir()
    monkeypatch.setenv('GEOTTER_STORE', str(store))
    code, _, err = run(capsys, 'demo', '--task', 'broken/bb', '--out', files / 'd')
    assert_usage_error(code, err, '--task broken/bb', 'X.npy: not a file')
    assert not (files / 'd').exists() and not (files / 'e').exists()

# --- help: every command and option says what it does ------------------------------------------------------

def test_help_lists_every_task_and_dataset(capsys):
    "The task names `--task`/`--tasks` accept and the datasets `extract` knows are all in the help."
    import geotter.text
    from geotter.data import DATASETS, LOGIT_TASKS, FEATURE_TASKS
    for cmd, names in (('demo', [*cli.DEMO_TASKS, *LOGIT_TASKS, *FEATURE_TASKS]), ('experiments', [*LOGIT_TASKS, *FEATURE_TASKS]),
                       ('extract', list(DATASETS))):
        code, out, _ = run(capsys, cmd, *(['table1'] if cmd == 'experiments' else []), '--help')
        text = ' '.join(out.split())
        assert code == 0 and all(n in text for n in names), (cmd, [n for n in names if n not in text])

def test_every_command_and_option_has_help():
    "The top level and each command have a description; every option and argument has a help text."
    p = cli._parser()
    assert p.description and p.epilog
    sub = next(a for a in p._actions if isinstance(a, cli.argparse._SubParsersAction))
    assert {c.dest for c in sub._choices_actions} == set(sub.choices) and all(c.help for c in sub._choices_actions)
    for name, sp in sub.choices.items():
        assert sp.description, name
        for a in sp._actions:
            assert a.help, (name, a.dest)

def test_demo_estimate_is_the_benchmark():
    "The demo's estimate is the committed measurement of bench/demo_time.py, job for job."
    import csv
    rows = list(csv.DictReader(open(Path(__file__).resolve().parents[1] / 'bench' / 'results' / 'demo_time.csv')))
    assert {(r['task'], r['method']): round(float(r['cpu_s']), 1) for r in rows} == cli.DEMO_CPU_SECONDS

def test_dir_lists_the_public_names_without_torch():
    "dir(geotter) (tab completion) lists every public name before first use, without importing PyTorch."
    code = ("import sys, geotter\nbefore = set(dir(geotter)); torch = 'torch' in sys.modules\n"
            "geotter.prepare\nprint(torch, before == set(geotter.__all__) | {'faiss_build', '__version__'}, "
            "{'prepare', 'geotter', 'otter', 'stata', 'StreamingGeoTTER'} <= before, 'importlib' in before)")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == ['False', 'True', 'True', 'False'], r.stdout + r.stderr

def test_top_level_api_is_small_and_keeps_former_names():
    "The top level exports each object once under one name; a name it no longer exports still resolves from its module, with a warning naming it."
    import warnings, geotter
    from geotter import core, graph, cluster
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        objs = [getattr(geotter, n) for n in geotter.__all__]
    assert len(geotter.__all__) <= 35 and len({id(o) for o in objs}) == len(objs)
    for name, mod in (('check_matrix', core), ('IVF_CELLS', graph), ('lloyd', cluster)):
        assert name not in geotter.__all__
        with pytest.warns(DeprecationWarning, match=rf'^geotter\.{name} is not part of the top-level API; import it from {mod.__name__}'):
            assert getattr(geotter, name) is getattr(mod, name)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"): geotter.no_such_name

def test_version(capsys):
    import geotter
    with pytest.raises(SystemExit) as e: main(['--version'])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f'geotter {geotter.__version__}'


# --- extract offline or with wrong arguments: one line, exit status 2 ---------------------------------------------

def _no_download(*a, **k):
    "What open_clip does when the weights are neither cached nor reachable: it logs an error, then raises."
    import logging
    try: raise FileNotFoundError('Failed to download file (open_clip_pytorch_model.bin) for timm/vit_base_patch16_clip_224.openai. '
                                 'Last error: we cannot find the requested files in the local cache.')
    except FileNotFoundError as e:
        logging.error(f"Failed to download weights for tag 'openai': {e}")
        raise RuntimeError(f"Failed to download weights for tag 'openai': {e}")

def _hub_offline(*a, **k):
    raise OSError("We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the cached files.\n"
                  "Check your internet connection or see how to run the library in offline mode.")

class ConnectError(Exception):
    "What the hub's HTTP client raises without network (not an OSError)."

class _Hub:
    "A Hugging Face hub session: reachable, or failing at once as one without network does."
    def __init__(self, up): self.up, self.asked = up, []
    def head(self, url, **kw):
        self.asked.append(url)
        if not self.up: raise ConnectError('[Errno -2] Name or service not known')

def _stub_encoder(bb, device='cpu'):
    from geotter.data import Encoder, get_backbone
    return Encoder(get_backbone(bb), model=None, preprocess=None)

def _extract_cases(f):
    "(argv, {dotted name: replacement}, needles) of `geotter extract` runs that must end in one line and exit status 2."
    def unreachable(*a, **k):
        import urllib.error
        raise urllib.error.URLError('[Errno -2] Name or service not known')
    stub, offline = {'geotter.data.load_encoder': _stub_encoder}, {'huggingface_hub.utils.get_session': lambda: _Hub(up=False)}
    return [
        (['cifar10', 'ViT-B-16'], {'open_clip.factory.download_pretrained': _no_download, 'huggingface_hub.utils.get_session': lambda: _Hub(up=True)},
         ['backbone ViT-B-16', 'could not be fetched', str(f / 'gdata' / 'models'), 'internet']),
        (['cifar10', 'ViT-B-16'], {'open_clip.factory.download_pretrained': _no_download, **offline},
         ['backbone ViT-B-16', 'could not be fetched', 'no answer from https://', 'internet']),
        (['wordnet-nouns', 'st:nosuch-org/nosuch-model'], {'sentence_transformers.SentenceTransformer': _hub_offline, **offline},
         ['backbone nosuch-model', "'nosuch-org/nosuch-model'", 'could not be fetched', 'check the model name']),
        (['wordnet-nouns', 'st:' + str(f / 'no-such-folder')], offline, ['backbone no-such-folder', 'no-such-folder', 'could not be fetched']),
        (['cifar10', '--root', f / 'afile'], {}, ['--root', 'afile: is a file']),
        (['wordnet-nouns', 'minilm', '--root', f / 'afile'], {}, ['--root', 'afile: is a file']),
        (['cifar10', '--device', 'nosuch'], {}, ['--device nosuch', 'not a torch device']),
        (['cifar10', '--device', 'cuda'], {'torch.cuda.is_available': lambda: False}, ['--device cuda', 'torch.cuda.is_available() is False']),
        (['cifar10', '--device', 'cuda:3'], {'torch.cuda.is_available': lambda: True, 'torch.cuda.device_count': lambda: 1},
         ['--device cuda:3', '1 cuda device']),
        (['cifar10', '--num-workers', '-1'], {}, ['--num-workers', 'expected an integer >= 0 and <= 256']),
        (['cifar10', '--num-workers', '100000'], {}, ['--num-workers', 'expected an integer >= 0 and <= 256']),
        (['cifar10', '--root', f / 'nodata'], stub, ['dataset cifar10: not found in', 'nodata', 'pass --download']),
        (['cifar10', '--root', f / 'nodata', '--download'], {**stub, 'torchvision.datasets.CIFAR10.download': unreachable},
         ['dataset cifar10: could not be downloaded into', 'Name or service not known']),
    ]

@pytest.mark.parametrize('i', range(len(_extract_cases(Path('.')))))
def test_extract_offline_and_bad_arguments(files, capsys, monkeypatch, i):
    "Weights or a dataset that cannot be fetched, an unknown model, a file as --root, a device PyTorch cannot use, too many workers."
    import logging
    argv, patches, needles = _extract_cases(files)[i]
    monkeypatch.setenv('GEOTTER_DATA', str(files / 'gdata')); (files / 'nodata').mkdir(exist_ok=True)
    for name, value in patches.items(): monkeypatch.setattr(name, value)
    monkeypatch.setattr(logging.root, 'handlers', [])              # as in a fresh process: open_clip's logging.error would print
    code, _, err = run(capsys, 'extract', *argv, '--store', files / 'xstore')
    assert_usage_error(code, err, *[str(s) for s in needles])
    assert not list((files / 'xstore').rglob('*.npy'))

def test_cli_warnings_are_one_line(files, capsys):
    "A warning of the library during a command is one line `geotter CMD: warning: ...`, in the command's words; only there."
    import warnings
    show = warnings.showwarning
    code, out, err = run(capsys, *adapt(files, '--method', 'fpm', '--temperature', '1e-300', '--prior', files / 'prior.txt', '--out', files / 'w.npy'))
    assert code == 0 and 'geotter adapt: warning: fenchel_prior_matching did not converge' in err, err
    assert all(l.startswith('geotter adapt: ') for l in err.splitlines()) and 'warnings.warn' not in err, err
    assert warnings.showwarning is show

@pytest.mark.parametrize('extra, needles', [
    (['--method', 'otter', '--solver', 'sinkhorn', '--rho', '0.5'], ['--rho 0.5 was given with --solver sinkhorn', '--rho is used only by --solver unbalanced']),
    (['--cost-temperature', '1e-320'], ['--cost-temperature 1e-320 is too small', 'expected --cost-temperature >=']),
    (['--method', 'sinkhorn', '--reg', '1e-320'], ['sinkhorn: --reg 9.99989e-321 is out of the range']),
])
def test_library_errors_name_the_option(files, capsys, extra, needles):
    "A library check that refuses a value the command passed on names the command's option, not the function's argument."
    import re
    code, _, err = run(capsys, *adapt(files, '--prior', files / 'prior.txt', *extra, '--out', files / 'lib.npy'))
    assert_usage_error(code, err, *needles)
    assert not re.search(r'\b(rho|temperature|reg|solver)=', err), err

def test_repeated_task_names_run_once(files, capsys, monkeypatch, tmp_path):
    "`--task a a` (and `--methods m m`, `--tasks a a`) runs each once, in the order first given."
    monkeypatch.setenv('GEOTTER_RESULTS', str(tmp_path / 'results'))
    code, out, err = run(capsys, 'demo', '--task', 'synthetic', 'synthetic', '--methods', 'otter', 'zs', 'otter')
    assert code == 0 and '2 jobs (2 methods x 1 tasks)' in out, out + err
    assert cli._parser().parse_args(['experiments', 'noise', '--tasks', 'b', 'a', 'b']).tasks == ['b', 'a']


def test_results_root_that_is_a_file_is_named(files, capsys, monkeypatch):
    "No --out and $GEOTTER_RESULTS a file: the error names the results folder and the variable, not --out."
    monkeypatch.setenv('GEOTTER_RESULTS', str(files / 'afile'))
    code, _, err = run(capsys, 'demo', '--task', 'synthetic', '--methods', 'zs')
    assert code == 2 and len(err.strip().splitlines()) == 1 and 'the results folder ($GEOTTER_RESULTS/demo' in err and '--out' not in err, err


def test_extract_refuses_an_empty_entry_name(files, capsys):
    "--name '' is refused as a store key before anything is loaded (it was taken as no name)."
    code, _, err = run(capsys, 'extract', 'cifar10', '--name', '', '--root', files / 'nodata', '--store', files / 'store')
    assert code == 2 and "name '' cannot be a store key" in err and len(err.strip().splitlines()) == 1, err


def test_cost_temperature_too_large_for_the_ratio_unknown(files, capsys):
    "The library refuses it while adapting: the note, then one error line naming the option, exit 2."
    code, out, err = run(capsys, *adapt(files, '--out', files / 'o.npy', '--cost-temperature', '1e308'))
    assert code == 2 and 'Traceback' not in err, err
    note, error = err.splitlines()
    assert note.startswith('geotter adapt: note: no --prior'), err
    assert error.startswith('geotter adapt: error: --cost-temperature 1e+308 is too large') and '<= 4.49e+304' in error, err


def test_sentence_transformer_is_read_from_the_cache_before_the_hub(monkeypatch, capsys, tmp_path):
    "A cached model loads without the network; an uncached one is announced in one line before the hub is tried."
    from geotter.data import load_encoder
    calls = []
    class Fake:
        def __init__(self, name, device=None, cache_folder=None, local_files_only=False):
            calls.append(local_files_only)
            if local_files_only and 'uncached' in name: raise OSError("couldn't find them in the cached files")
        def eval(self): return self
    hub = _Hub(up=True)
    monkeypatch.setattr('sentence_transformers.SentenceTransformer', Fake)
    monkeypatch.setattr('huggingface_hub.utils.get_session', lambda: hub)
    monkeypatch.setenv('GEOTTER_DATA', str(tmp_path))
    load_encoder('st:org/cached-model')
    assert calls == [True] and capsys.readouterr().out == '' and hub.asked == []
    calls.clear(); load_encoder('st:org/uncached-model')
    out = capsys.readouterr().out
    assert calls == [True, False] and out.count('\n') == 1 and "'org/uncached-model' is not in" in out and 'Hugging Face hub' in out, out


def test_open_clip_weights_are_read_from_the_cache_before_the_hub(monkeypatch, capsys, tmp_path):
    "Weights in the cache load with no request; weights not cached are announced in one line and the hub asked once before open_clip fetches them."
    import open_clip
    from geotter.data import load_encoder
    created, hub = [], _Hub(up=True)
    monkeypatch.setattr(open_clip, 'create_model_and_transforms', lambda *a, **k: created.append(k['cache_dir']) or (_Eval(), None, None))
    monkeypatch.setattr('huggingface_hub.utils.get_session', lambda: hub)
    monkeypatch.setenv('GEOTTER_DATA', str(tmp_path))
    load_encoder('ViT-B-16')                                   # not cached
    out = capsys.readouterr().out
    assert len(hub.asked) == 1 and created == [str(tmp_path / 'models')], (hub.asked, created)
    assert out.count('\n') == 1 and 'the openai weights of ViT-B-16' in out and 'Hugging Face hub' in out, out
    repo = tmp_path / 'models' / 'models--timm--vit_base_patch16_clip_224.openai'   # the hub cache's layout, as a fetch leaves it
    (repo / 'refs').mkdir(parents=True); (repo / 'refs' / 'main').write_text('abc')
    (repo / 'snapshots' / 'abc').mkdir(parents=True); (repo / 'snapshots' / 'abc' / 'open_clip_model.safetensors').write_bytes(b'w')
    load_encoder('ViT-B-16')
    assert len(hub.asked) == 1 and len(created) == 2 and capsys.readouterr().out == '', hub.asked

class _Eval:
    def eval(self): return self

# --- bounds in the help; WordNet fetched only on request; backbones checked before the plan ----------------------

def test_bounded_options_state_their_bound(capsys):
    "An integer option with an upper bound says it in its help, and the library entry point refuses beyond it too."
    for argv, needle in ((['adapt', '--help'], f'at most {cli.MAX_STEPS}'), (['experiments', 'table1', '--help'], f'-1 (all cores) or 1 to {cli.MAX_JOBS}')):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and needle in ' '.join(out.split()), (argv, out)
    with pytest.raises(cli.UsageError, match=r'--n-jobs: got 1000000000000000000; expected an integer >= -1 and <= 256'):
        cli.run_experiment('table1', ['synthetic'], n_jobs=10**18)

def _wordnet_lines(pos='noun'):
    "Three synset lines of a WordNet data file (after its licence header)."
    return "  1 licence header\n" + ''.join(f"0000174{i} {k} {pos[0]} 01 {w} 0 000 | {g}\n" for i, (k, w, g) in
                                          enumerate([(5, 'dog', 'a domestic animal'), (13, 'bread', 'food made from flour'), (18, 'teacher', 'a person who teaches')]))

@pytest.fixture
def no_download(monkeypatch):
    "apt-get and dpkg look installed, and any download they would make fails the test; no system WordNet is found."
    import shutil, subprocess
    real_exists = Path.exists
    monkeypatch.setattr(Path, 'exists', lambda p: False if str(p).startswith('/usr/share/wordnet') else real_exists(p))
    monkeypatch.setattr(shutil, 'which', lambda cmd: '/usr/bin/' + cmd)
    monkeypatch.setattr(subprocess, 'run', lambda *a, **k: pytest.fail(f'a download was attempted: {a}'))

def test_wordnet_loader_downloads_only_when_asked(tmp_path, no_download):
    "download=False and no WordNet under the data root: FileNotFoundError naming the file and download=True, nothing fetched."
    import geotter.text
    from geotter.data import load_dataset
    for task, pos in (('wordnet-nouns', 'noun'), ('wordnet-verbs', 'verb')):
        with pytest.raises(FileNotFoundError) as e: load_dataset(task, tmp_path, download=False)
        assert str(tmp_path / 'wordnet' / f'data.{pos}') in str(e.value) and 'pass download=True' in str(e.value), e.value
    (tmp_path / 'wordnet').mkdir(); (tmp_path / 'wordnet' / 'data.noun').write_text(_wordnet_lines())
    samples, names = load_dataset('wordnet-nouns', tmp_path, download=False)        # present: read, nothing fetched
    assert samples == [('a domestic animal', 1), ('food made from flour', 9), ('a person who teaches', 14)] and len(names) == 25

class _FakeSentenceModel:
    "Stands for a loaded sentence-transformers model: 384-dimensional embeddings, the same for the same text."
    def encode(self, texts, **kw):
        import torch
        return torch.stack([torch.randn(384, generator=torch.Generator().manual_seed(len(t))) for t in texts])

def _fake_encoder(bb, device='cpu'):
    from geotter.data import Encoder, get_backbone
    return Encoder(get_backbone(bb), _FakeSentenceModel())

def test_extract_wordnet_without_download(files, capsys, monkeypatch, no_download):
    "geotter extract of a WordNet task that is not there: one line naming the file and --download, exit 2; no plan printed, no download made."
    monkeypatch.setattr('geotter.data.load_encoder', _fake_encoder)
    code, out, err = run(capsys, 'extract', 'wordnet-nouns', 'all-MiniLM-L6-v2', '--root', files / 'nowordnet', '--store', files / 'wstore')
    assert_usage_error(code, err, str(files / 'nowordnet' / 'wordnet' / 'data.noun'), 'pass --download')
    assert out == '' and not (files / 'wstore').exists(), out           # no plan before the data is found

def test_extract_wordnet_with_download(tmp_path, capsys, monkeypatch, no_download):
    "--download fetches WordNet once, into <root>/wordnet; the plan names the download, then the entry is written."
    import geotter.text
    fetched = []
    def unpack(dest):
        fetched.append(dest); d = dest / 'usr/share/wordnet'; d.mkdir(parents=True); (d / 'data.noun').write_text(_wordnet_lines())
        return d
    monkeypatch.setattr(geotter.text, '_unpack_wordnet_base', unpack)
    monkeypatch.setattr('geotter.data.load_encoder', _fake_encoder)
    code, out, err = run(capsys, 'extract', 'wordnet-nouns', 'all-MiniLM-L6-v2', '--root', tmp_path, '--store', tmp_path / 'store', '--download')
    assert code == 0 and fetched == [tmp_path / 'wordnet'], err
    lines = out.splitlines()
    assert lines[0].startswith('extract wordnet-nouns with all-MiniLM-L6-v2: store entry') and 'and, if missing, WordNet 3.0' in lines[1], out
    assert 'downloading' in lines[2] and lines[-1].startswith(f"{tmp_path / 'store' / 'wordnet-nouns' / 'all-MiniLM-L6-v2'}: n=3 m=25 d=384"), out

@pytest.mark.parametrize('argv, patches', [
    (['cifar10', 'ViT-B-16'], {'open_clip.factory.download_pretrained': _no_download, 'huggingface_hub.utils.get_session': lambda: _Hub(up=True)}),
    (['wordnet-nouns', 'st:nosuch-org/nosuch-model'], {'sentence_transformers.SentenceTransformer': _hub_offline,
                                                       'huggingface_hub.utils.get_session': lambda: _Hub(up=False)}),
])
def test_extract_plan_only_after_the_backbone_loads(files, capsys, monkeypatch, argv, patches):
    "Weights that cannot be loaded: the error line alone, no extraction plan before it."
    import logging
    monkeypatch.setenv('GEOTTER_DATA', str(files / 'gdata'))
    for name, value in patches.items(): monkeypatch.setattr(name, value)
    monkeypatch.setattr(logging.root, 'handlers', [])
    code, out, err = run(capsys, 'extract', *argv, '--root', files / 'nodata', '--store', files / 'pstore')
    assert_usage_error(code, err, 'could not be fetched')
    assert 'extract ' not in out and 'store entry' not in out, out

def test_uncached_sentence_transformer_fails_fast_offline(monkeypatch, capsys, tmp_path):
    "Not cached and the hub unreachable: one line announcing the fetch, then at once the one-line error; the library's retried download is never started."
    from geotter.data import load_encoder
    calls, hub = [], _Hub(up=False)
    class Fake:
        def __init__(self, name, device=None, cache_folder=None, local_files_only=False):
            calls.append(local_files_only)
            raise OSError("couldn't find them in the cached files")
    monkeypatch.setattr('sentence_transformers.SentenceTransformer', Fake)
    monkeypatch.setattr('huggingface_hub.utils.get_session', lambda: hub)
    monkeypatch.setenv('GEOTTER_DATA', str(tmp_path))
    with pytest.raises(FileNotFoundError) as e: load_encoder('st:org/uncached-model')
    assert calls == [True] and len(hub.asked) == 1, (calls, hub.asked)
    assert "cannot load the sentence-transformers model 'org/uncached-model'" in str(e.value) and 'no answer from https://' in str(e.value), e.value
    out = capsys.readouterr().out
    assert out.count('\n') == 1 and 'fetching it from the Hugging Face hub' in out, out


def test_k_beyond_the_batch_is_capped_with_a_note(tmp_path, capsys):
    "--k at least n is the library's rule: capped at n - 1, said in one line, the labels those of k = n - 1."
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(3, 8)); X = Y[rng.integers(0, 3, 12)] + 0.3 * rng.normal(size=(12, 8))
    np.save(tmp_path / 'X.npy', X); np.save(tmp_path / 'Y.npy', Y)
    base = ['adapt', '--embeddings', tmp_path / 'X.npy', '--classes', tmp_path / 'Y.npy', '--prior', 'uniform']
    code, _, err = run(capsys, *base, '--k', 50, '--out', tmp_path / 'a.npy')
    assert code == 0 and '--k 50: more than a batch of 12 samples allows (k <= n - 1 = 11); k = 11 is used' in err, err
    code, _, _ = run(capsys, *base, '--k', 11, '--out', tmp_path / 'b.npy')
    np.testing.assert_array_equal(np.load(tmp_path / 'a.npy'), np.load(tmp_path / 'b.npy'))


# --- nothing replaced that the command was not asked to replace ----------------------------------------------

@pytest.fixture
def own(tmp_path, monkeypatch):
    "A working folder holding the inputs and the user's own labels.npy (their ground truth), as the current folder."
    rng = np.random.default_rng(1)
    Y = rng.normal(size=(M, D)); y = rng.integers(0, M, N)
    np.save(tmp_path / 'X.npy', Y[y] + 0.5 * rng.normal(size=(N, D))); np.save(tmp_path / 'Y.npy', Y)
    np.save(tmp_path / 'labels.npy', y)
    monkeypatch.chdir(tmp_path); monkeypatch.setenv('GEOTTER_RESULTS', str(tmp_path / 'results'))
    return tmp_path

def test_default_out_that_exists_is_refused(own, capsys):
    "No --out and labels.npy exists (the user's own): exit 2 before any work, one line naming it, --force and --out; the file untouched."
    truth = (own / 'labels.npy').read_bytes()
    code, out, err = run(capsys, 'adapt', '--embeddings', 'X.npy', '--classes', 'Y.npy')
    assert_usage_error(code, err, '--out (default) labels.npy: exists; --force replaces it, or --out names another file')
    assert (own / 'labels.npy').read_bytes() == truth and out == '' and sorted(p.name for p in own.iterdir()) == ['X.npy', 'Y.npy', 'labels.npy']
    code, out, err = run(capsys, 'adapt', '--embeddings', 'X.npy', '--classes', 'Y.npy', '--force')
    assert code == 0 and 'labels.npy exists and is replaced (--force)' in err and f"wrote {N} labels to labels.npy;" in out, (out, err)
    assert np.load(own / 'labels.npy').shape == (N,) and (own / 'labels.npy').read_bytes() != truth

def test_default_out_that_is_an_input_is_refused_even_with_force(tmp_path, capsys, monkeypatch):
    "Logits saved as labels.npy and no --out: never written, whatever the flags."
    rng = np.random.default_rng(2); np.save(tmp_path / 'labels.npy', rng.normal(size=(10, 3))); monkeypatch.chdir(tmp_path)
    before = (tmp_path / 'labels.npy').read_bytes()
    code, _, err = run(capsys, 'adapt', '--logits', 'labels.npy', '--method', 'zs', '--force')
    assert_usage_error(code, err, 'labels.npy: is the --logits file')
    assert (tmp_path / 'labels.npy').read_bytes() == before

def test_default_out_that_is_free_is_used(tmp_path, capsys, monkeypatch):
    rng = np.random.default_rng(2); np.save(tmp_path / 'L.npy', rng.normal(size=(10, 3))); monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, 'adapt', '--logits', 'L.npy', '--method', 'zs')
    assert code == 0 and 'wrote 10 labels to labels.npy;' in out and 'exists' not in err, (out, err)

def test_existing_out_needs_force(own, capsys):
    "--out naming an existing file: exit 2, one line, the file untouched; with --force it is replaced, and the note says so."
    truth = (own / 'labels.npy').read_bytes()
    code, out, err = run(capsys, 'adapt', '--embeddings', 'X.npy', '--classes', 'Y.npy', '--out', 'labels.npy')
    assert_usage_error(code, err, '--out labels.npy: exists; --force replaces it, or --out names another file')
    assert (own / 'labels.npy').read_bytes() == truth and out == ''
    code, out, err = run(capsys, 'adapt', '--embeddings', 'X.npy', '--classes', 'Y.npy', '--out', 'labels.npy', '--force')
    assert code == 0 and 'labels.npy exists and is replaced (--force)' in err and f'wrote {N} labels to labels.npy;' in out, (out, err)
    assert (own / 'labels.npy').read_bytes() != truth

def test_force_never_replaces_an_input(own, capsys):
    before = (own / 'X.npy').read_bytes()
    code, _, err = run(capsys, 'adapt', '--embeddings', 'X.npy', '--classes', 'Y.npy', '--out', 'X.npy', '--force')
    assert_usage_error(code, err, '--out X.npy: is the --embeddings file')
    assert (own / 'X.npy').read_bytes() == before

def test_demo_refuses_to_replace_an_earlier_run(own, capsys):
    "The demo's results folder (default or --out) holding an earlier run: refused, naming it, --force and --out; --force replaces."
    quick = ('demo', '--task', 'synthetic', '--methods', 'zs')
    code, out, err = run(capsys, *quick)
    assert code == 0, err
    folder = own / 'results' / 'demo'
    for f in cli.DEMO_FILES: assert str(folder / f) in out, (f, out)          # says what it wrote, by path
    first = (folder / 'table1.md').read_text()
    (folder / 'table1.md').write_text('my notes on the first run')
    code, out, err = run(capsys, *quick)
    assert_usage_error(code, err, f'the results folder ($GEOTTER_RESULTS/demo, else ./geotter_results/demo) {folder}: holds results.csv, table1.md, demo.png of an earlier run',
                       '--force replaces them, or --out names another folder')
    assert (folder / 'table1.md').read_text() == 'my notes on the first run' and out == ''
    code, out, err = run(capsys, *quick, '--out', folder)
    assert_usage_error(code, err, f'--out {folder}: holds results.csv, table1.md, demo.png of an earlier run; --force replaces them')
    code, out, err = run(capsys, *quick, '--force')
    assert code == 0 and (folder / 'table1.md').read_text() == first and 'of an earlier run replaced (--force)' in err, err
    code, out, err = run(capsys, *quick, '--out', own / 'elsewhere')
    assert code == 0 and (own / 'elsewhere' / 'table1.md').read_text() == first, err

def test_experiments_say_what_they_wrote(tmp_path, capsys):
    "geotter experiments adds to its folder (the resumable cache) and names the files it wrote; a second run reuses the cache."
    argv = ('experiments', 'noise', '--tasks', 'synthetic', '--fast', '--out', tmp_path / 'exp')
    code, out, err = run(capsys, *argv)
    last = out.strip().splitlines()[-1]
    written = sorted(str(p.relative_to(tmp_path / 'exp')) for p in (tmp_path / 'exp').rglob('*') if p.is_file())
    assert code == 0 and last.startswith('geotter experiments noise: wrote ') and last.endswith(f" in {tmp_path / 'exp'}"), out
    assert written and all(w in last for w in written[:8]), (written, last)
    cache = (tmp_path / 'exp' / 'noise.csv').read_bytes()
    code, out, err = run(capsys, *argv)
    assert code == 0 and (tmp_path / 'exp' / 'noise.csv').read_bytes() == cache, err

def test_extract_keeps_an_existing_entry(tmp_path, capsys, monkeypatch, no_download):
    "A second extract with the same settings writes nothing and says so; --force (alias --overwrite) recomputes; other settings are refused, naming --force."
    import geotter.text
    def unpack(dest):
        d = dest / 'usr/share/wordnet'; d.mkdir(parents=True); (d / 'data.noun').write_text(_wordnet_lines()); return d
    monkeypatch.setattr(geotter.text, '_unpack_wordnet_base', unpack)
    monkeypatch.setattr('geotter.data.load_encoder', _fake_encoder)
    argv = ('extract', 'wordnet-nouns', 'all-MiniLM-L6-v2', '--root', tmp_path, '--store', tmp_path / 'store')
    code, out, err = run(capsys, *argv, '--download')
    entry = tmp_path / 'store' / 'wordnet-nouns' / 'all-MiniLM-L6-v2'
    assert code == 0 and out.splitlines()[-1].startswith(f"{entry}: n=3"), err
    files = {p: p.stat().st_mtime_ns for p in entry.rglob('*') if p.is_file()}
    code, out, err = run(capsys, *argv)
    assert code == 0 and f"{entry} was there, made with these settings: kept, nothing written (--force recomputes it)" in err, err
    assert {p: p.stat().st_mtime_ns for p in entry.rglob('*') if p.is_file()} == files
    code, out, err = run(capsys, *argv, '--templates', 'ensemble')
    assert_usage_error(code, err, '--force')
    assert {p: p.stat().st_mtime_ns for p in entry.rglob('*') if p.is_file()} == files
    for flag in ('--force', '--overwrite'):
        code, out, err = run(capsys, *argv, flag)
        assert code == 0 and 'kept' not in err and out.splitlines()[-1].startswith(f"{entry}: n=3"), err

def test_closing_line_is_short_for_many_classes(tmp_path, capsys):
    "1,000 classes: the closing line says how many were predicted and the largest, in one short line (not 1,000 counts)."
    rng = np.random.default_rng(3); np.save(tmp_path / 'L.npy', rng.normal(size=(50, 1000)))
    code, out, err = run(capsys, 'adapt', '--logits', tmp_path / 'L.npy', '--method', 'zs', '--out', tmp_path / 'z.npy')
    z = np.load(tmp_path / 'z.npy'); top = np.bincount(z, minlength=1000).argmax()
    assert code == 0 and out.count('\n') == 1 and len(out) < 200, out
    counts = np.bincount(z, minlength=1000); top5 = np.argsort(-counts, kind='stable')[:5]
    assert f"{len(set(z.tolist()))} of 1000 classes predicted; largest counts (class: labels) {top}: {counts[top]}, " in out, out
    assert out.strip().endswith(', '.join(f"{j}: {counts[j]}" for j in top5)), out

def test_swapped_embeddings_and_classes_are_named(files, capsys, tmp_path):
    "--embeddings and --classes swapped: a note says so before the run; with a prior (one entry per true class) exit 2, naming the swap."
    code, out, err = run(capsys, 'adapt', '--embeddings', files / 'Y.npy', '--classes', files / 'X.npy', '--method', 'zs',
                         '--out', tmp_path / 's.npy')
    assert code == 0 and f'--embeddings has {M} rows (samples) and --classes {N} (classes): fewer samples than classes is fine' in err, err
    assert 'if the two files are swapped, exchange them' in err, err
    code, out, err = run(capsys, 'adapt', '--embeddings', files / 'Y.npy', '--classes', files / 'X.npy', '--prior', files / 'prior.txt',
                         '--out', tmp_path / 's2.npy')
    assert_usage_error(code, err, 'are --embeddings and --classes swapped?')
    assert not (tmp_path / 's2.npy').exists()
    np.save(tmp_path / 'LT.npy', np.load(files / 'L.npy').T)
    code, out, err = run(capsys, 'adapt', '--logits', tmp_path / 'LT.npy', '--method', 'zs', '--out', tmp_path / 's3.npy')
    assert code == 0 and 'if it is transposed, transpose it' in err, err
    code, out, err = run(capsys, 'adapt', '--logits', tmp_path / 'LT.npy', '--prior', files / 'prior.txt', '--method', 'otter', '--out', tmp_path / 's4.npy')
    assert_usage_error(code, err, f'--prior: has {M} entries, one per row of --logits, but --logits has {N} columns', 'is --logits transposed?')

def test_swap_note_comes_before_any_work(files, capsys, monkeypatch, tmp_path):
    "The note is printed before the method runs: stopping there (Ctrl-C) leaves the note, one error line, exit 130 and no file."
    def interrupted(a): raise KeyboardInterrupt
    monkeypatch.setattr(cli, '_run_adapt', interrupted)
    code, out, err = run(capsys, 'adapt', '--embeddings', files / 'Y.npy', '--classes', files / 'X.npy', '--out', tmp_path / 'never.npy')
    lines = err.splitlines()
    assert code == 130 and len(lines) == 2 and 'if the two files are swapped' in lines[0] and 'interrupted' in lines[1], err
    assert not (tmp_path / 'never.npy').exists()

def test_k_and_steps_follow_the_library(tmp_path, capsys):
    """The CLI's k and steps obey the options' rule, as the API does: k >= n gives the labels of k = n - 1 (config['k'] in Python),
    steps 0 to MAX_STEPS in both, the same labels for steps 0."""
    from geotter.method import geotter
    from geotter.options import MAX_STEPS
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(3, 8)); X = Y[rng.integers(0, 3, 12)] + 0.3 * rng.normal(size=(12, 8))
    np.save(tmp_path / 'X.npy', X); np.save(tmp_path / 'Y.npy', Y)
    base = ['adapt', '--embeddings', tmp_path / 'X.npy', '--classes', tmp_path / 'Y.npy', '--prior', 'uniform']
    for k in (12, 50):
        code, _, err = run(capsys, *base, '--k', k, '--out', tmp_path / f'k{k}.npy')
        r = geotter(X, Y, 'uniform', k=k)
        assert code == 0 and r.config['k'] == 11 and f'k = 11 is used' in err, (r.config['k'], err)
        np.testing.assert_array_equal(np.load(tmp_path / f'k{k}.npy'), r.labels)
    code, _, err = run(capsys, *base, '--steps', 0, '--out', tmp_path / 's0.npy')
    assert code == 0, err
    np.testing.assert_array_equal(np.load(tmp_path / 's0.npy'), geotter(X, Y, 'uniform', steps=0).labels)
    with pytest.raises(ValueError, match=f'steps={MAX_STEPS + 1}; expected steps <= {MAX_STEPS}'): geotter(X, Y, 'uniform', steps=MAX_STEPS + 1)
    code, _, err = run(capsys, *base, '--steps', MAX_STEPS + 1, '--out', tmp_path / 'sbig.npy')
    assert_usage_error(code, err, '--steps', f'<= {MAX_STEPS}')


@pytest.mark.parametrize('error, code, needles', [
    (RuntimeError("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to "
                  "allocate 2400000000 bytes. Error code 12 (Cannot allocate memory)"), 2, ['not enough memory (2.2 GiB asked)']),
    (MemoryError('Unable to allocate 80.0 GiB for an array with shape (100000, 100000)'), 2, ['not enough memory']),
    (OSError(28, 'No space left on device', 'labels.npy'), 2, ['No space left on device: labels.npy']),
    (PermissionError(13, 'Permission denied', 'labels.npy'), 2, ['Permission denied: labels.npy']),
    (KeyboardInterrupt(), 130, ['interrupted']),
])
def test_system_failures_are_one_line(files, capsys, monkeypatch, error, code, needles):
    "An allocation that fails, a full disk, a refused permission or Ctrl-C during the run: one line on stderr, no traceback."
    def fail(a): raise error
    monkeypatch.setattr(cli, '_run_adapt', fail)
    got, out, err = run(capsys, *adapt(files, '--prior', 'uniform', '--out', files / 'never.npy'))
    assert got == code and err.count('\n') == 1 and 'Traceback' not in err, (got, err)
    for s in needles: assert s in err, (s, err)
    assert not (files / 'never.npy').exists()

def test_a_bug_is_not_hidden(files, capsys, monkeypatch):
    "Any other RuntimeError is a bug of the package: raised with its traceback, not turned into a usage error."
    def fail(a): raise RuntimeError('shape mismatch inside the solver')
    monkeypatch.setattr(cli, '_run_adapt', fail)
    with pytest.raises(RuntimeError, match='shape mismatch'): run(capsys, *adapt(files, '--out', files / 'never2.npy'))


def test_one_rule_for_k_in_the_api_and_the_command(tmp_path, capsys):
    "The cap of k declared in geotter.options is the API's: prepare(k=) and adapt(k=) beyond n - 1 use n - 1, as the command's note says."
    from dataclasses import fields
    from geotter.method import prepare
    from geotter.options import GeometryOptions, AdaptOptions, capped
    rng = np.random.default_rng(4)
    for cls in (GeometryOptions, AdaptOptions):
        kf = next(f for f in fields(cls) if f.name == 'k')
        for n, k in ((5, 3), (5, 4), (5, 5), (5, 100), (12, 7)):
            Y = rng.normal(size=(3, 6)); X = Y[rng.integers(0, 3, n)] + 0.3 * rng.normal(size=(n, 6))
            r = prepare(X, Y, k=k).adapt('uniform') if cls is GeometryOptions else prepare(X, Y).adapt('uniform', k=k)
            assert r.config['k'] == capped(kf, k, n)[0] == min(k, n - 1), (cls.__name__, n, k, r.config['k'])
