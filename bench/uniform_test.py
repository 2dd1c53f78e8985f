"""Can a batch tell, without labels, that its label ratio is uniform? Two label-free statistics on the full test sets.

    python bench/uniform_test.py        # ~2 min, one core: bench/results/uniform_test.csv, read by nbs/13_ratio_unknown.ipynb

Per development task (bench/realistic.py's tasks that are present): how far the true ratio is from uniform (TV), EM's
error (TV), and two statistics that would license exact transport onto the uniform ratio if they separated the
balanced sets from the imbalanced ones:
- `heldout_gain`: the log-likelihood per sample, on one half of the set, of EM's ratio fitted on the other half,
  above the uniform ratio's (two folds, seeded);
- `uniform_regret`: the mean cost, in nats of the zero-shot posteriors, of forcing the uniform ratio: exact OTTER onto
  it, mean over samples of max_k log p(k|x) - log p(assigned|x).
This is a benchmark, not a test.
"""
from pathlib import Path
import numpy as np, pandas as pd, torch

OUT = Path(__file__).resolve().parent / 'results'

def statistics(L:np.ndarray, seed:int=0)->dict:
    "The two statistics of a batch of zero-shot logits (n, m) at the classifier's own scale."
    from geotter.core import predict
    from geotter.transport import otter
    from geotter.priors import em_prior
    n, m = L.shape
    lp = L - np.logaddexp.reduce(L, 1, keepdims=True)
    halves = np.array_split(np.random.default_rng(seed).permutation(n), 2)
    gain = sum(float(np.log(np.exp(lp[b]) @ np.asarray(em_prior(np.exp(lp[a]))) * m).sum()) for a, b in (halves, halves[::-1])) / n
    lab = np.asarray(predict(otter(L, np.full(m, 1 / m))))
    return dict(heldout_gain=gain, uniform_regret=float((lp.max(1) - lp[np.arange(n), lab]).mean()))

if __name__ == '__main__':
    torch.set_num_threads(1)
    from geotter.data import load_task
    from geotter.priors import em_prior, total_variation
    import sys; sys.path.insert(0, str(Path(__file__).resolve().parent))
    from realistic import TASKS
    rows = []
    for name in TASKS:
        try: task = load_task(name, seed=0) if name == 'synthetic' else load_task(name)
        except (FileNotFoundError, ValueError) as e: print(f"skipping {name}: {e}"); continue
        L, y, m = np.asarray(task.zero_shot_logits(), dtype=np.float64), np.asarray(task.labels), task.n_classes
        nu = np.bincount(y, minlength=m) / len(y); q = np.asarray(em_prior(np.exp(L - np.logaddexp.reduce(L, 1, keepdims=True))))
        rows.append(dict(task=task.name, n=len(y), m=m, truth_tv_uniform=total_variation(nu, np.full(m, 1 / m)),
                         em_tv=total_variation(q, nu), **statistics(L)))
        print(rows[-1], flush=True)
    df = pd.DataFrame(rows).round(4); OUT.mkdir(exist_ok=True); df.to_csv(OUT / 'uniform_test.csv', index=False)
    print(df.to_string(index=False))
