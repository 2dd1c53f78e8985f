"Threads chosen for the work (geotter.core.work_threads): busy cores seen at the call, the caller's setting kept, results independent of the count."
import os, subprocess, sys, time
import numpy as np, torch
import geotter
from geotter.core import free_cores, work_threads, threads_for, SMALL_WORK

_BURN = "import time\nt = time.time() + 60\nwhile time.time() < t: pass\n"

def test_busy_cores_are_seen_at_once():
    "With as many CPU-bound processes as cores, at most one core is free, and a large problem runs on one thread."
    n = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()
    procs = [subprocess.Popen([sys.executable, '-c', _BURN]) for _ in range(n)]
    try:
        time.sleep(1.0)
        seen = [free_cores() for _ in range(5)]
        assert max(seen) == 1, seen
        if os.environ.get('GEOTTER_THREADS') is None: assert work_threads(10 * SMALL_WORK) == 1
    finally:
        for p in procs: p.kill(); p.wait()

def test_geotter_keeps_the_callers_threads_and_results():
    "geotter on one or two threads gives the same labels and plan, and leaves torch's thread count as it found it."
    rng = np.random.default_rng(0)
    Y = rng.normal(size=(20, 32)); y = rng.integers(0, 20, 600); X = Y[y] + 1.5 * rng.normal(size=(600, 32))
    before, old = torch.get_num_threads(), os.environ.get('GEOTTER_THREADS')
    out = {}
    try:
        for k in ('1', '2'):
            os.environ['GEOTTER_THREADS'] = k
            r = geotter.geotter(X, Y); out[k] = (r.labels, r.plan)
            assert torch.get_num_threads() == before
    finally:
        if old is None: os.environ.pop('GEOTTER_THREADS', None)
        else: os.environ['GEOTTER_THREADS'] = old
    np.testing.assert_array_equal(out['1'][0], out['2'][0])
    np.testing.assert_allclose(out['1'][1], out['2'][1], rtol=0, atol=1e-12)

def test_threads_for_is_restored_when_nested():
    before = torch.get_num_threads()
    with threads_for(1.0):
        with threads_for(10 * SMALL_WORK): assert torch.get_num_threads() == 1   # never more than the caller's setting
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
