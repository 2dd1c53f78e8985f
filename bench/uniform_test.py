"""Can a batch tell, without labels, that its label ratio is uniform? Three label-free statistics on the full test sets.

    python bench/uniform_test.py        # ~3 min, one core: bench/results/uniform_test.csv, read by nbs/studies/31_ratio_unknown.ipynb

Per development task (bench/realistic.py's tasks that are present): how far the true ratio is from uniform (TV), EM's
error (TV), and three statistics that would license exact transport onto the uniform ratio if they separated the
balanced sets from the imbalanced ones:
- `heldout_gain`: the log-likelihood per sample, on one half of the set, of EM's ratio fitted on the other half,
  above the uniform ratio's (two folds, seeded);
- `uniform_regret`: the mean cost, in nats of the zero-shot posteriors, of forcing the uniform ratio: exact OTTER onto
  it, mean over samples of max_k log p(k|x) - log p(assigned|x);
- `graph_preference`: whether the batch's geometry prefers the labels of GeoTTER transported exactly onto the uniform
  ratio to those of GeoTTER with the ratio unknown (soft marginal): the difference of their modularity on GeoTTER's
  own k-NN graph (the share of neighbour pairs with the same label, minus its expectation for the same label counts).
  Labels whose boundaries cross sparse regions score higher (the cluster assumption).
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

def modularity(labels:np.ndarray, neighbours:np.ndarray, m:int)->float:
    "Share of (i, neighbour of i) pairs with the same label, minus its expectation for the labels' counts (heads and tails)."
    n = len(labels); heads = np.bincount(labels, minlength=m) / n
    tails = np.bincount(labels[neighbours].ravel(), minlength=m) / neighbours.size
    return float((labels[neighbours] == labels[:, None]).mean() - heads @ tails)

def graph_preference(task)->float:
    "Modularity of GeoTTER's labels onto the uniform ratio (exact) minus that of GeoTTER with the ratio unknown."
    from geotter.method import geotter_inputs, prepare
    X, Y, L = geotter_inputs(task.X, task.Y, np.asarray(task.zero_shot_logits(), dtype=np.float64))
    prep = prepare(X, Y, logits=L); nb, m = prep.neighbours().numpy(), prep.m
    score = lambda r: modularity(np.asarray(r.labels), nb, m)
    return score(prep.adapt('uniform')) - score(prep.adapt(None))

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
                         em_tv=total_variation(q, nu), **statistics(L), graph_preference=graph_preference(task)))
        print(rows[-1], flush=True)
    df = pd.DataFrame(rows).round(4); OUT.mkdir(exist_ok=True); df.to_csv(OUT / 'uniform_test.csv', index=False)
    print(df.to_string(index=False))
