"""Property tests of the embedding store (`geotter.store`): what is written is what is read back, and
every change to an entry or a partial run after it was written is either refused or changes nothing.

The profile (40 derandomized examples) is the shared one in tests/conftest.py."""
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

from geotter.store import StoreError, open_run, read_entry, write_entry

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
