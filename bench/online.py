"""StatA's online protocol on the development tasks: zero-shot, StatA, MOON and geotter(X, Y) per batch, TDA and
StreamingGeoTTER carrying their state, one seeded stream per task and setting (batches of 128; gamma 0.1, 0.01,
0.001 and classes one after another).

    python bench/online.py [--tasks NAME ...] [--methods NAME ...] [--jobs 1]   # 25 tasks: about 10 minutes, one thread
        # bench/results/online_runs.csv (one row per task, stream and method: accuracy, balanced accuracy, seconds),
        # online_mean.csv (mean accuracy over tasks per stream and method), online_worst.csv (the worst task of every
        # stream against zero-shot, and which task); read by nbs/studies/35_streaming.ipynb
    python bench/online.py --methods stream-geotter          # rerun one method (its cached rows recomputed), merged in

Tasks: `geotter.studies.ratio.DEV_TASKS`, each when its data are here (the image-feature and logit files in
`$GEOTTER_DATA`, the WordNet store entries built by `geotter extract`); the others are reported and skipped. Methods:
`geotter.studies.streaming.ONLINE_METHODS` (zs, stata, moon, geotter, tda, stream-geotter, stream-geotter-em). Rows are cached under
`$GEOTTER_RESULTS/online` (`geotter.studies.streaming.run_online`), so a rerun computes only what is missing;
`--methods` recomputes the rows of those methods (after a change of their code) and `--tasks` runs only those tasks;
either way the stored rows of the other tasks and methods in online_runs.csv are kept, and the tables are rebuilt from
the merged rows. The run's wall-clock time is printed at the end. This is a benchmark, not a test.
"""
from __future__ import annotations
import argparse, os, sys, time
from pathlib import Path

os.environ.setdefault('OMP_NUM_THREADS', '1'); os.environ.setdefault('HF_HUB_OFFLINE', '1')
import pandas as pd

OUT = Path(__file__).resolve().parent / 'results'


def available(names)->list:
    "The task names whose data are here (each loaded once; the others reported)."
    from geotter.data import load_task
    import geotter.text  # noqa: F401  (the WordNet task families)
    out = []
    for name in names:
        try: load_task(name); out.append(name)
        except (FileNotFoundError, ValueError) as e: print(f"skipping {name}: {e}", flush=True)
    return out


def merge(old:pd.DataFrame, new:pd.DataFrame)->pd.DataFrame:
    "The stored rows, with those of the (task, method) pairs just run replaced by the new ones."
    if old is None or not len(old): return new
    ran = set(zip(new.task, new.method))
    return pd.concat([old[[(t, m) not in ran for t, m in zip(old.task, old.method)]], new], ignore_index=True)


if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--tasks', nargs='*', default=None, help='run only these tasks; the stored rows of the others are kept')
    p.add_argument('--methods', nargs='*', default=None,
                   help='run only these methods, recomputing their cached rows; the stored rows of the others are kept')
    p.add_argument('--jobs', type=int, default=1, help='tasks run in parallel (one thread each)')
    p.add_argument('--out', type=Path, default=OUT, help='folder of the result files (default bench/results)')
    a = p.parse_args()
    t0 = time.perf_counter()
    import torch; torch.set_num_threads(1)
    from geotter.studies.ratio import DEV_TASKS
    from geotter.studies.streaming import ONLINE_METHODS, run_online, online_tables
    if unknown := sorted(set(a.methods or ()) - set(ONLINE_METHODS)):
        sys.exit(f"--methods {' '.join(unknown)}: unknown; expected some of {', '.join(ONLINE_METHODS)}")
    methods = ONLINE_METHODS if a.methods is None else {m: ONLINE_METHODS[m] for m in ONLINE_METHODS if m in a.methods}
    runs = run_online(available(a.tasks or DEV_TASKS), methods=methods, n_jobs=a.jobs, refresh=tuple(a.methods or ()))
    a.out.mkdir(parents=True, exist_ok=True)
    if (a.tasks or a.methods) and (a.out / 'online_runs.csv').exists():   # keep the stored rows of the others
        runs = merge(pd.read_csv(a.out / 'online_runs.csv'), runs)
    order = {**{t: i for i, t in enumerate(DEV_TASKS)}, 'synthetic-longtail': DEV_TASKS.index('synthetic')}   # load_task('synthetic')'s name
    runs = runs.sort_values(['task', 'scenario', 'method'], key=lambda c: c.map(order) if c.name == 'task' else c, kind='stable')
    runs.to_csv(a.out / 'online_runs.csv', index=False)
    mean, worst = online_tables(runs)
    mean.round(4).to_csv(a.out / 'online_mean.csv'); worst.to_csv(a.out / 'online_worst.csv')
    print(f"{runs.task.nunique()} tasks\n"); print(mean.round(2).to_markdown()); print(); print(worst.to_markdown())
    print(f"\nbench/online.py ran in {time.perf_counter() - t0:.0f} s (methods: {', '.join(methods)})")
