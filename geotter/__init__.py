"""geotter: test-time label-distribution adaptation of frozen zero-shot classifiers (OTTER, GeoTTER and family).

Two wings, both generated from notebooks by `nbdev_export`: the library (`geotter.core` ... `geotter.text`, from
`nbs/`) and the studies and experiments built on it (`geotter.studies`, from `nbs/studies/`); the library never
imports a study. This file is the package's face: it gathers the top-level API (`_EXPORTS`), so that
`from geotter import geotter, otter, ...` works; every other name is imported from its module. The names are loaded
on first use (PEP 562), so that `import geotter.cli` (the `geotter` command) does not import PyTorch before it needs
it; `dir(geotter)` (tab completion) lists them all the same.

Names and modules that moved in 0.3 still resolve from their former places, with a DeprecationWarning that says
where they live now: a former top-level name (`geotter.run_method`) from the top level, a module of the studies
under its former path (`import geotter.ratio` is `geotter.studies.ratio`, `geotter.transductive` is `geotter.peers`).
"""
__version__ = "0.3.0"

import importlib as _importlib
import sys as _sys

# The top-level API: module -> the names it gives the package: the methods, their results, the estimators, `Task`,
# the loaders and the options. Everything else stays in its module (`geotter.graph.knn_graph`, `geotter.core.check_matrix`, ...).
_EXPORTS = {
    'core': ('Task', 'zero_shot_logits', 'predict', 'accuracy', 'balanced_accuracy'),
    'baselines': ('zero_shot', 'prior_matching', 'fenchel_prior_matching'),
    'exact': ('emd',), 'entropic': ('sinkhorn', 'sinkhorn_unbalanced'), 'transport': ('otter',),
    'priors': ('estimate_label_ratio', 'RatioEstimate', 'em_prior', 'bbse_prior'),
    'pipeline': ('GeoTTERResult',), 'batchmodel': ('batch_model', 'BatchModel'), 'method': ('geotter', 'prepare', 'Prepared'),
    'peers': ('transclip_zs', 'zlap', 'stata', 'moon', 'tda'), 'labelfree': ('label_free_predict',), 'streaming': ('StreamingGeoTTER',),
    'data': ('load_task', 'load_embeddings', 'extract'), 'options': ('GeometryOptions', 'AdaptOptions'),
}
__all__ = [n for names in _EXPORTS.values() for n in names]

# Former top-level names, and the module each lives in now: the whole `__all__` of the modules the top level once
# re-exported, and the names it exported from the others.
_FORMER = ('core', 'baselines', 'transport', 'graph', 'cluster', 'pipeline', 'method', 'synthetic', 'priors')
_MOVED = {**dict.fromkeys(('run_method', 'geotter_on_task', 'prepare_task', 'METHODS', 'PRIOR_FREE'), 'studies.experiments'),
          **dict.fromkeys(('marginal_errors', 'prior_at_tv', 'partial_batches'), 'studies.marginals'),
          **dict.fromkeys(('posteriors', 'expected_calibration_error', 'calibration_scores', 'reliability_diagram',
                           'class_duals'), 'studies.calibration'),
          'ensemble_embeddings': 'studies.prompts', 'fit_label_free': 'labelfree', 'data_driven_defaults': 'noise',
          'estimate_noise': 'noise', 'stream_predict': 'streaming',
          **dict.fromkeys(('PAPER_DEFAULTS', 'REFERENCE_CODE', 'PRESERVE_PRIOR', 'BACKENDS', 'KNN_METHODS'), 'options')}
# Modules that moved, under their former names.
_MODULES = {'transductive': 'peers', **{m: f'studies.{m}' for m in
            ('experiments', 'ratio', 'theory', 'robustness', 'marginals', 'calibration', 'prompts', 'defaults')}}
_loaded = False

# Modules that register datasets and task families on import (`geotter.data.DATASET_PROVIDERS`): imported with the top
# level, so that `geotter.load_task('wordnet-nouns@d6-min100-t4')` finds the WordNet tasks of `geotter.text`.
_PROVIDERS = ('text',)

def _load():
    "Import the modules of `_EXPORTS` (and `_PROVIDERS`) and copy their public names into the package namespace."
    global _loaded
    globals().update({n: getattr(_importlib.import_module(f'{__name__}.{mod}'), n) for mod, names in _EXPORTS.items() for n in names})
    for mod in _PROVIDERS: _importlib.import_module(f'{__name__}.{mod}')
    _loaded = True

def _former(name:str):
    "(module, object) of a name the top level no longer exports, or None."
    if name in _MOVED:
        m = _importlib.import_module(f'{__name__}.{_MOVED[name]}')
        return m.__name__, getattr(m, name)
    if name.endswith('_trusted'): return None              # the layers' shared kernels: never top-level names
    for mod in _FORMER:
        m = _importlib.import_module(f'{__name__}.{mod}')
        if name in getattr(m, '__all__', ()): return m.__name__, getattr(m, name)
    return None

def _deprecated(message:str):
    "A DeprecationWarning attributed to the first caller outside this file and the import machinery."
    import warnings
    f, level = _sys._getframe(1), 2
    while f is not None and (f.f_code.co_filename in (__file__, _importlib.__file__) or f.f_code.co_filename.startswith('<frozen importlib')):
        level += not f.f_code.co_filename.startswith('<frozen')      # `warnings` skips the import machinery's frames itself
        f = f.f_back
    warnings.warn(message, DeprecationWarning, stacklevel=level)

def __getattr__(name:str):
    "A public name of the package, importing the modules on first use; a former top-level name or module, with a warning."
    if name.startswith('_'): raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _loaded:
        _load()
        if name in globals(): return globals()[name]
    if name in _MODULES: return _importlib.import_module(f'{__name__}.{name}')      # warns (`_FormerPath`)
    found = _former(name)
    if found is None: raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _deprecated(f"geotter.{name} is not part of the top-level API; import it from {found[0]} "
                f"(from {found[0]} import {name})")
    return found[1]

def __dir__(): return sorted(set(__all__) | {'faiss_build', '__version__'})

class _FormerPath:
    "Import hook: a module's former path (`geotter.ratio`) gives the module under its new one, with a DeprecationWarning."
    @staticmethod
    def find_spec(fullname:str, path=None, target=None):
        pkg, _, old = fullname.rpartition('.')
        if pkg != __name__ or old not in _MODULES: return None
        from importlib.util import spec_from_loader
        return spec_from_loader(fullname, _FormerPath)
    @staticmethod
    def create_module(spec): return None
    @staticmethod
    def exec_module(module):
        "Put the new module in the old one's place (the import system then returns it)."
        new = f"{__name__}.{_MODULES[module.__name__.rpartition('.')[2]]}"
        _deprecated(f"{module.__name__} is now {new}; import it from there")
        _sys.modules[module.__name__] = _importlib.import_module(new)

_sys.meta_path.append(_FormerPath)

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
