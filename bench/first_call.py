"""The first call in a fresh process: `import geotter; geotter.geotter(X, Y)` against `import torch` alone.

    python bench/first_call.py                       # bench/results/first_call.csv: this checkout, best of 3
    python bench/first_call.py --root DIR --label before --append
                                                     # the same for the package in DIR (e.g. an older commit's
                                                     # `git archive` unpacked there), rows labelled 'before'

bench/results/first_call.csv holds, in this order, the package before POT, scikit-learn and pandas left the main path
and after:

    mkdir /tmp/before && git archive dc16d92 | tar -x -C /tmp/before
    python bench/first_call.py --root /tmp/before --label "before (dc16d92)"
    python bench/first_call.py --label after --append

Each run is a fresh interpreter (`python -c`), one thread, with the compiled exact solver already in numba's cache
(one untimed run first fills it). Measured inside the child: `import torch`, then `import geotter` and the first
`geotter.geotter(X, Y)` on a 200 x 512 batch over 10 classes (the prior estimated from the batch), the same call once
more (warm), and which heavy packages the first call imported. Seconds are wall time of this run, the best of
`--repeats`; compare them within one run. This is a benchmark, not a test.
"""
from __future__ import annotations
import argparse, json, os, subprocess, sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / 'bench' / 'results' / 'first_call.csv'
HEAVY = ('ot', 'sklearn', 'scipy.optimize', 'pandas', 'matplotlib', 'faiss', 'dask', 'numba', 'tqdm')

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import torch
torch.set_num_threads(1)
t1 = time.perf_counter()
import numpy as np
rng = np.random.default_rng(0)
Y = rng.normal(size=(10, 512)).astype(np.float32); X = Y[rng.integers(0, 10, 200)] + rng.normal(size=(200, 512)).astype(np.float32)
t2 = time.perf_counter()
import geotter
r = geotter.geotter(X, Y)
t3 = time.perf_counter()
geotter.geotter(X, Y)
t4 = time.perf_counter()
print(json.dumps(dict(torch_s=t1 - t0, first_call_s=t3 - t2, warm_call_s=t4 - t3, labels=int(np.asarray(r.labels).sum()),
                      imported=[m for m in HEAVY if m in sys.modules])))
"""


def run(root:Path)->dict:
    "One fresh interpreter with the package at `root` first on its path; the child's measurements."
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS='1')
    code = f"HEAVY = {HEAVY!r}\n" + CHILD
    out = subprocess.run([sys.executable, '-c', code], env=env, cwd=root, capture_output=True, text=True, timeout=600)
    if out.returncode != 0: raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--root', type=Path, default=ROOT, help='directory that holds the geotter package to measure')
    p.add_argument('--label', default='this checkout')
    p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--append', action='store_true', help='add the rows to the CSV instead of replacing it')
    p.add_argument('--out', type=Path, default=OUT)
    args = p.parse_args(argv)
    run(args.root)                                                   # fills numba's cache; not timed
    runs = [run(args.root) for _ in range(args.repeats)]
    best = {k: min(r[k] for r in runs) for k in ('torch_s', 'first_call_s', 'warm_call_s')}
    row = dict(label=args.label, **best, repeats=args.repeats,
               labels_checksum=runs[0]['labels'], imported=' '.join(runs[0]['imported']))
    df = pd.DataFrame([row])
    if args.append and args.out.exists(): df = pd.concat([pd.read_csv(args.out), df], ignore_index=True)
    args.out.parent.mkdir(exist_ok=True); df.to_csv(args.out, index=False)
    print(df.to_string(index=False))


if __name__ == '__main__':
    main()
