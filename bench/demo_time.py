"""How long `geotter demo` takes, job by job (one job = one method on one task), as the command runs it.

    python bench/demo_time.py        # bench/results/demo_time.csv: wall and CPU seconds per (task, method), and the total
    python bench/demo_time.py stata geotter-unknown   # re-measure these methods only (their rows are replaced)

The demo's estimate printed up front (`geotter.cli.DEMO_CPU_SECONDS`) is the CPU time per job of this file;
on an idle machine the wall time of a job is at most its CPU time (torch may use two threads), on a busy one it
is longer. Nothing here is a test.
"""
import sys, time, warnings
from pathlib import Path

import pandas as pd

from geotter.cli import DEMO_TASKS, load_demo_task
from geotter.studies.experiments import TABLE1_METHODS, run_benchmark

OUT = Path(__file__).resolve().parent / 'results'

def main(methods=TABLE1_METHODS):
    rows = []
    for name in DEMO_TASKS:
        task = load_demo_task(name)
        for m in methods:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                t0, c0 = time.perf_counter(), time.process_time()
                run_benchmark([task], (m,), progress=False)
                rows.append(dict(task=name, method=m, wall_s=time.perf_counter() - t0, cpu_s=time.process_time() - c0))
            print(rows[-1], flush=True)
    f = pd.DataFrame(rows)
    if tuple(methods) != tuple(TABLE1_METHODS):                      # keep the other methods' rows, in Table 1's order
        old = pd.read_csv(OUT / 'demo_time.csv')
        f = pd.concat([old[~old.method.isin(methods)], f])
        f = f[f.method.isin(TABLE1_METHODS)].sort_values(['task', 'method'], key=lambda c: c.map(
            {v: i for i, v in enumerate(DEMO_TASKS if c.name == 'task' else TABLE1_METHODS)}))
    f.to_csv(OUT / 'demo_time.csv', index=False, float_format='%.2f')
    print(f.round(1).to_markdown(index=False))
    print(f"total: wall {f.wall_s.sum():.0f} s, CPU {f.cpu_s.sum():.0f} s")

if __name__ == '__main__': main(tuple(sys.argv[1:]) or TABLE1_METHODS)
