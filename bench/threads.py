"""GeoTTER's time on idle and on busy cores, with the package choosing its threads ('auto') beside fixed counts.

    .venv/bin/python bench/threads.py                 # idle, then with 2 CPU-bound background processes
    .venv/bin/python bench/threads.py --load 0 2 4    # any background loads

Each background process (a fresh interpreter) runs torch matrix products on torch's default threads (another user's job). For every load,
shape and thread setting, `geotter(X, Y)` (ratio unknown) is timed best of `--repeat`, settings interleaved so that
they see the same machine; writes bench/results/threads.csv with the ratio of each setting to the best fixed count.
"""
import argparse, os, subprocess, sys, time
from pathlib import Path

SHAPES = ((64, 1000, 512), (1000, 100, 64), (3000, 40, 64))
SETTINGS = ('auto', '1', str(os.cpu_count() or 1))          # the package's choice; one thread; torch's default (all cores)

_BURN = "import torch\na = torch.randn(512, 512)\nwhile True: a = (a @ a).tanh()\n"   # another job: torch on its default threads

def _time(fn, repeat):
    best = float('inf')
    for _ in range(repeat):
        t0 = time.perf_counter(); fn(); best = min(best, time.perf_counter() - t0)
    return best

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--load', type=int, nargs='+', default=[0, 2], help='numbers of CPU-bound background processes')
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--out', default=str(Path(__file__).parent / 'results' / 'threads.csv'))
    args = ap.parse_args()
    import numpy as np, pandas as pd, torch, geotter
    rows, rng = [], np.random.default_rng(0)
    data = {}
    for n, m, d in SHAPES:
        Y = rng.normal(size=(m, d)); y = rng.integers(0, m, n); data[n, m, d] = (Y[y] + 2.0 * rng.normal(size=(n, d)), Y)
    geotter.geotter(*data[SHAPES[0]])                                  # compile and warm up once
    for load in args.load:
        procs = [subprocess.Popen([sys.executable, '-c', _BURN]) for _ in range(load)]
        if load: time.sleep(5)                                         # torch imported, the products running
        try:
            for shape, (X, Y) in data.items():
                best = {}
                for _ in range(args.repeat):                           # settings interleaved: the same machine for each
                    for s in SETTINGS:
                        if s == 'auto': os.environ.pop('GEOTTER_THREADS', None)
                        else: os.environ['GEOTTER_THREADS'] = s
                        best[s] = min(best.get(s, float('inf')), _time(lambda: geotter.geotter(X, Y), 1))
                os.environ.pop('GEOTTER_THREADS', None)
                fixed = min(best[s] for s in SETTINGS if s != 'auto')
                for s in SETTINGS:
                    rows.append(dict(load=load, shape='x'.join(map(str, shape)), threads=s, seconds=round(best[s], 4),
                                     vs_best_fixed=round(best[s] / fixed, 2)))
                    print(rows[-1], flush=True)
        finally:
            for p in procs: p.kill(); p.wait()
    df = pd.DataFrame(rows); Path(args.out).parent.mkdir(parents=True, exist_ok=True); df.to_csv(args.out, index=False)
    print(df.pivot_table(index=['load', 'shape'], columns='threads', values='seconds').to_string())
    print(f"wrote {args.out}")

if __name__ == '__main__': main()
