"""geotter: test-time label-distribution adaptation of frozen zero-shot classifiers (OTTER, GeoTTER and family).

The modules are generated from the notebooks in `nbs/` by `nbdev_export`; this file only gathers
the top-level API (`_EXPORTS`), so that `from geotter import geotter, otter, ...` works; the rest of
each module's names are imported from the module. The names are loaded on first use (PEP 562), so
that `import geotter.cli` (the `geotter` command) does not import PyTorch before it needs it;
`dir(geotter)` (tab completion) lists them all the same.
"""
__version__ = "0.2.0"

import importlib as _importlib

# The top-level API: module -> the names it gives the package. Everything else stays in its module
# (`geotter.graph.IVF_CELLS`, `geotter.core.check_matrix`, ...).
_EXPORTS = {
    'core': ('Task', 'InputTypeError', 'CLIP_TEMPERATURE', 'zero_shot_logits', 'predict', 'accuracy', 'balanced_accuracy',
             'class_prior'),
    'baselines': ('zero_shot', 'prior_matching', 'fenchel_prior_matching', 'prior_shift'),
    'exact': ('emd',), 'entropic': ('sinkhorn', 'sinkhorn_unbalanced'), 'transport': ('otter', 'solve_ot'),
    'priors': ('em_prior', 'online_em_prior', 'bbse_prior', 'confusion_rates', 'estimate_label_ratio', 'RatioEstimate',
               'total_variation', 'UNKNOWN_RATIO'),
    'graph': ('knn_graph', 'knn_search', 'graph_smooth'), 'cluster': ('kmeans', 'cluster_cost'),
    'method': ('geotter', 'prepare', 'Prepared', 'GeoTTERResult', 'geotter_chunked', 'run_method', 'geotter_on_task',
               'METHODS', 'PRIOR_FREE', 'PAPER_DEFAULTS'),
    'synthetic': ('make_long_tail',), 'transductive': ('transclip_zs', 'zlap', 'stata'),
    'data': ('load_task', 'load_embeddings', 'extract'),
    'marginals': ('marginal_errors', 'prior_at_tv', 'partial_batches'),
    'calibration': ('posteriors', 'expected_calibration_error', 'calibration_scores', 'reliability_diagram', 'class_duals'),
    'prompts': ('ensemble_embeddings',), 'labelfree': ('label_free_predict', 'fit_label_free'),
    'noise': ('data_driven_defaults', 'estimate_noise'), 'streaming': ('StreamingGeoTTER', 'stream_predict'),
}
# Modules whose whole `__all__` the top level once re-exported: their other names still resolve from the top
# level, with a DeprecationWarning that names the module to import them from.
_FORMER = ('core', 'baselines', 'transport', 'graph', 'cluster', 'method', 'synthetic', 'priors')
_loaded = False
__all__ = [n for names in _EXPORTS.values() for n in names]

def _load():
    "Import the modules of `_EXPORTS` and copy their public names into the package namespace."
    global _loaded
    globals().update({n: getattr(_importlib.import_module(f'{__name__}.{mod}'), n) for mod, names in _EXPORTS.items() for n in names})
    _loaded = True

def _former(name:str):
    "(module, object) of a name the top level no longer exports, or None."
    for mod in _FORMER:
        m = _importlib.import_module(f'{__name__}.{mod}')
        if name in getattr(m, '__all__', ()): return m.__name__, getattr(m, name)
    return None

def __getattr__(name:str):
    "A public name of the package, importing the modules on first use; a former top-level name, with a warning."
    if name.startswith('_'): raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _loaded:
        _load()
        if name in globals(): return globals()[name]
    found = _former(name)
    if found is None: raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import warnings
    warnings.warn(f"geotter.{name} is not part of the top-level API; import it from {found[0]} "
                  f"(from {found[0]} import {name})", DeprecationWarning, stacklevel=2)
    return found[1]

def __dir__(): return sorted(set(__all__) | {'faiss_build', '__version__'})

def _faiss_dists()->list:
    "The faiss distributions installed on `sys.path` (from their .dist-info folders; cheap, nothing imported)."
    import os, re, sys
    found = set()
    for d in sys.path:
        try: names = os.listdir(d or '.')
        except OSError: continue
        for n in names:
            m = re.match(r'(faiss[_-](?:cpu|gpu)[\w.-]*?)-\d[^-]*\.dist-info$', n, re.I)
            if m: found.add(m.group(1).lower().replace('_', '-'))
    return sorted(found)

def faiss_build(warn:bool=True)->str:
    """Which faiss build is installed: 'cpu' (faiss-cpu), 'gpu' (faiss-gpu, faiss-gpu-cu11/cu12, ...) or 'none'.

    faiss-cpu and the GPU builds all install the module `faiss`; with both installed, the one pip wrote last
    is active and uninstalling either breaks the other, so a warning says how to keep only the GPU build."""
    found = _faiss_dists()
    gpu = [d for d in found if d.startswith('faiss-gpu')]
    if warn and gpu and 'faiss-cpu' in found:
        import warnings
        warnings.warn(f"both faiss-cpu and {', '.join(gpu)} are installed and share the module `faiss`; keep one, e.g. "
                      f"pip uninstall -y faiss-cpu {' '.join(gpu)} && pip install {gpu[-1]}", RuntimeWarning, stacklevel=2)
    return 'gpu' if gpu else 'cpu' if 'faiss-cpu' in found else 'none'

faiss_build()   # warns at import when two faiss builds are installed side by side
