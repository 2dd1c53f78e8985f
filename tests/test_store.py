"""Property tests of the embedding store (`geotter.store`): what is written is what is read back, under its own
name and no other; every change to an entry or a partial run after it was written is either refused or changes
nothing; a reader running while another process rewrites an entry returns the old or the new entry, whole.

The profile (40 derandomized examples) is the shared one in tests/conftest.py."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import geotter.store
from geotter.store import StoreError, entry_dir, entry_key, key_name, list_entries, open_run, read_entry, write_entry

_SHM = '/dev/shm' if Path('/dev/shm').is_dir() else None   # memory-backed where available: fsync costs nothing there

_json_scalars = st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.text(max_size=8) | \
                st.floats(allow_nan=False, allow_infinity=False)
_json = st.recursive(_json_scalars, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                     max_leaves=8)
_meta = st.dictionaries(st.text(min_size=1, max_size=8).filter(lambda k: k not in ('format', 'format_version', 'files', 'checksum')),
                        _json, max_size=4)
_arrays = st.dictionaries(st.sampled_from(['X', 'Y', 'labels']),
                          hnp.arrays(st.sampled_from([np.float32, np.float16, np.int64]),
                                     hnp.array_shapes(min_dims=1, max_dims=2, max_side=5)),
                          min_size=1, max_size=3)


@given(arrays=_arrays, meta=_meta)
def test_entry_round_trip(arrays, meta):
    "An entry reads back with the same arrays (bit for bit, dtype and shape) and the same metadata."
    with tempfile.TemporaryDirectory(dir=_SHM) as d:
        written = write_entry(Path(d) / 'e', arrays, meta)
        got, m = read_entry(Path(d) / 'e')
    assert m == written and {k: m[k] for k in meta} == json.loads(json.dumps(meta))
    for k, a in arrays.items():
        assert got[k].dtype == a.dtype and got[k].shape == a.shape
        assert got[k].tobytes() == np.ascontiguousarray(a).tobytes()


@given(meta=_meta, pos=st.floats(0, 1, exclude_max=True), byte=st.integers(1, 255))
def test_manifest_edits_are_refused(meta, pos, byte):
    "Changing any one byte of manifest.json either is refused or leaves the manifest's content unchanged."
    with tempfile.TemporaryDirectory(dir=_SHM) as d:
        e = Path(d) / 'e'
        written = write_entry(e, dict(X=np.arange(6, dtype=np.float32).reshape(2, 3)), meta)
        raw = bytearray((e / 'manifest.json').read_bytes())
        i = int(pos * len(raw)); raw[i] = (raw[i] + byte) % 256
        (e / 'manifest.json').write_bytes(bytes(raw))
        try: _, m = read_entry(e)
        except StoreError: return
        assert m == written


@given(arrays=_arrays, pos=st.floats(0, 1, exclude_max=True), byte=st.integers(1, 255))
def test_array_edits_are_refused(arrays, pos, byte):
    "Changing any one byte of an array file is refused (its SHA-256 no longer matches the manifest)."
    with tempfile.TemporaryDirectory(dir=_SHM) as d:
        e = Path(d) / 'e'
        write_entry(e, arrays, {})
        f = e / f'{sorted(arrays)[0]}.npy'
        raw = bytearray(f.read_bytes()); i = int(pos * len(raw)); raw[i] = (raw[i] + byte) % 256
        f.write_bytes(bytes(raw))
        with pytest.raises(StoreError, match=f.name):
            read_entry(e)


@given(n=st.integers(1, 30), batch_size=st.integers(1, 8), data=st.data())
def test_misplaced_batches_are_refused(n, batch_size, data):
    "After batch files are moved between positions, a batch loads exactly when its own file is in its place."
    starts = list(range(0, n, batch_size))
    bounds = [(s, min(s + batch_size, n)) for s in starts]
    perm = data.draw(st.permutations(range(len(bounds))))
    with tempfile.TemporaryDirectory(dir=_SHM) as d:
        run = open_run(Path(d) / 'e', dict(n=n, batch_size=batch_size))
        for b, (s, t) in enumerate(bounds): run.save(b, s, t, labels=np.arange(s, t))
        for b in range(len(bounds)): shutil.copy(run.file(b), Path(d) / f'{b}.npz')
        for b, src in enumerate(perm): shutil.copy(Path(d) / f'{src}.npz', run.file(b))
        for b, (s, t) in enumerate(bounds):
            if perm[b] == b: assert list(run.load(b, s, t)['labels']) == list(range(s, t))
            else:
                with pytest.raises(StoreError, match=f'not batch {b} '):
                    run.load(b, s, t)


_names = st.text(max_size=12) | st.sampled_from(['日本', '中文', 'café', 'caf', 'a b', 'a-b', 'a%20b', '.', '..', '', '../../etc/x',
                                                   'x' * 300, 'ViT-B/32', '.hidden', 'a\\b', 'a\x00b', 'CIFAR10', 'cifar10'])


@given(a=_names, b=_names)
def test_keys_are_injective_and_stay_inside_the_root(a, b):
    "Different names get different folders, each name comes back from its folder, and no folder leaves <root>/<name>/."
    root = Path('/store')
    try: ka, da = entry_key(a), entry_dir(a, 'bb', root)
    except StoreError as e:
        assert a in ('', '.', '..') or any(c in a for c in '/\\\0') or 'the limit is 255' in str(e), (a, e)
        return
    assert key_name(ka) == a and da.parent.parent == root and da.parent.name == ka and '..' not in da.parts
    assert not ka.startswith('.') and len(ka.encode()) <= 255
    try: kb = entry_key(b)
    except StoreError: return
    assert (ka == kb) == (a == b)


@given(names=st.lists(_names, min_size=1, max_size=4, unique=True))
def test_entries_round_trip_under_their_own_names(names):
    "Each entry is listed under the name it was written with and read back under it; a name never written finds nothing."
    with tempfile.TemporaryDirectory(dir=_SHM) as d:
        root = Path(d) / 'store'
        ok = []
        for i, name in enumerate(names):
            try: e = entry_dir(name, 'bb', root)
            except StoreError: continue
            write_entry(e, dict(X=np.full(3, i)), dict(name=name)); ok.append(name)
        assert sorted(n for n, b, done in list_entries(root)) == sorted(ok)
        for name in ok: assert read_entry(entry_dir(name, 'bb', root))[1]['name'] == name
        for other in ('中文', 'caf', 'a-b', 'zz'):
            if other not in ok:
                with pytest.raises(StoreError, match='no manifest'): read_entry(entry_dir(other, 'bb', root))
        assert [p.name for p in Path(d).iterdir()] == (['store'] if ok else [])     # nothing outside the root


_WRITER = """
import os, sys, time, numpy as np
sys.path.insert(0, sys.argv[2]); from store import write_entry    # geotter/store.py alone: starts fast
t_end, i = time.time() + float(sys.argv[3]), 0
while time.time() < t_end and not os.path.exists(sys.argv[4]):     # until the reader has seen enough, or the time is up
    v = i % 2 + 1
    write_entry(sys.argv[1], dict(X=np.full((300, 64), v, np.float32), labels=np.arange(300) + v), dict(v=v)); i += 1
    time.sleep(0.005)                 # a pause between rewrites: back to back, a reader on loaded cores may lose every race for READ_PATIENCE
print(i)
"""

@pytest.mark.parametrize('verify', [True, False])
def test_reader_sees_the_old_or_the_new_entry_during_rewrites(verify):
    "A reader in one process, a writer rewriting the entry (two versions in turn) in another: every read is one whole version."
    with tempfile.TemporaryDirectory(dir=_SHM) as d:
        e = Path(d) / 'task' / 'bb'
        write_entry(e, dict(X=np.zeros((300, 64), np.float32), labels=np.arange(300)), dict(v=0))
        stop = Path(d) / 'stop'                                           # the reader tells the writer it has read enough
        w = subprocess.Popen([sys.executable, '-c', _WRITER, str(e), str(Path(geotter.store.__file__).parent), '60', str(stop)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        seen = {0: 0, 1: 0, 2: 0}
        while w.poll() is None:
            arrays, m = read_entry(e, verify=verify)
            v = m['v']; seen[v] += 1
            assert (arrays['X'] == v).all() and (arrays['labels'] == np.arange(300) + v).all(), f"a read mixed versions: {m}"
            if min(seen[1], seen[2]) >= 20: stop.touch()                 # loaded cores slow both sides: count reads of each version, not seconds
        out, err = w.communicate()
        assert w.returncode == 0, err
        assert int(out) >= 2 and seen[1] + seen[2] >= 40, (out, seen)      # both versions written, many reads during the rewrites


_WRITERS = """
import sys, numpy as np
sys.path.insert(0, sys.argv[2]); from store import write_entry    # geotter/store.py alone: starts fast
w = int(sys.argv[3])
for i in range(int(sys.argv[4])):
    write_entry(sys.argv[1], dict(X=np.full((50, 8), 100 * w + i, np.float32)), dict(w=w, i=i))
"""

def test_concurrent_writers_all_succeed_and_the_last_entry_is_whole():
    "Three processes rewrite one entry at once: none fails, the entry left is one whole write, and no scratch is left."
    with tempfile.TemporaryDirectory(dir=_SHM) as d:
        e, n = Path(d) / 'task' / 'bb', 60
        ws = [subprocess.Popen([sys.executable, '-c', _WRITERS, str(e), str(Path(geotter.store.__file__).parent), str(w), str(n)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(3)]
        for w in ws: out, err = w.communicate(); assert w.returncode == 0, err
        arrays, m = read_entry(e)
        assert m['w'] in (0, 1, 2) and (arrays['X'] == 100 * m['w'] + m['i']).all(), m
        assert [p.name for p in e.parent.iterdir()] == ['bb']                # every retired entry removed


def _forged(tmp:Path, edit)->Path:
    "A whole embeddings entry whose manifest is edited by `edit` and re-checksummed (a hand edit that passes the checksum)."
    from geotter.store import manifest_checksum
    e = entry_dir('t', 'bb', tmp)
    write_entry(e, dict(X=np.eye(3, 4, dtype=np.float32), Y=np.eye(2, 4, dtype=np.float32), labels=np.array([0, 1, 1])),
                dict(class_names=['a', 'b'], n=3, m=2, d=4, backbone=dict(name='bb'), templates=['{}'], dtype='float32'))
    m = json.loads((e / 'manifest.json').read_text()); edit(m); m['checksum'] = manifest_checksum(m)
    (e / 'manifest.json').write_text(json.dumps(m))
    return tmp

_EDITS = {f'no {k}': (lambda k: lambda m: m.pop(k))(k) for k in ('files', 'class_names', 'format', 'format_version')}
_EDITS.update({f'files without {k}': (lambda k: lambda m: m['files'].pop(k))(k) for k in ('X', 'Y', 'labels')})
_EDITS.update({'files a list': lambda m: m.update(files=[]), 'class_names a string': lambda m: m.update(class_names='ab'),
               'format_version a string': lambda m: m.update(format_version='2'), 'key a string': lambda m: m.update(key='t/bb'),
               'an empty manifest': lambda m: m.clear(), 'shape a string': lambda m: m['files']['X'].update(shape='3,4')})

@pytest.mark.parametrize('edit', list(_EDITS))
def test_forged_manifests_are_refused_by_name(edit):
    "A manifest missing or mistyping whole keys, checksum recomputed: `load_embeddings` raises a StoreError naming it, never a KeyError."
    from geotter.data import load_embeddings
    with tempfile.TemporaryDirectory() as d:
        root = _forged(Path(d), _EDITS[edit])
        with pytest.raises(StoreError, match='manifest'): load_embeddings('t', 'bb', root=root)
