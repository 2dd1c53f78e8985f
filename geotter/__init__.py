"""geotter: test-time label-distribution adaptation of frozen zero-shot classifiers (OTTER, GeoTTER and family).

The modules are generated from the notebooks in `nbs/` by `nbdev_export`; this file only gathers
their public names so that `from geotter import geotter, otter, ...` works. The names are loaded on
first use (PEP 562), so that `import geotter.cli` (the `geotter` command) does not import PyTorch
before it needs it; `dir(geotter)` (tab completion) lists them all the same, read from the modules'
source without importing them.
"""
__version__ = "0.1.0"

import importlib as _importlib

# module -> names taken from it (None: the module's `__all__`)
_EXPORTS = {
    'core': None, 'baselines': None, 'transport': None, 'graph': None, 'cluster': None, 'method': None, 'synthetic': None,
    'transductive': ('transclip_zs', 'zlap', 'stata'), 'priors': None,
    'data': ('load_task', 'load_embeddings', 'extract'),
    'marginals': ('marginal_errors', 'prior_at_tv', 'partial_batches'),
    'calibration': ('posteriors', 'expected_calibration_error', 'calibration_scores', 'reliability_diagram', 'class_duals'),
    'prompts': ('ensemble_embeddings',),
    'labelfree': ('label_free_predict', 'fit_label_free'),
    'noise': ('data_driven_defaults', 'estimate_noise'),
    'streaming': ('StreamingGeoTTER', 'stream_predict'),
}
_loaded = False

def _find(m, name:str):
    "`m.name`, or the same name in the module it moved to."
    if hasattr(m, name): return getattr(m, name)
    for mod in _MOVED_TO:
        try: return getattr(_importlib.import_module(f'{__name__}.{mod}'), name)
        except (ImportError, AttributeError): pass
    raise AttributeError(f"{m.__name__} has no attribute {name!r}")

_MOVED_TO = ('priors', 'method', 'store', 'data')

def _load():
    "Import the modules of `_EXPORTS` and copy their public names into the package namespace."
    global _loaded, __all__
    names = {}
    for mod, wanted in _EXPORTS.items():
        m = _importlib.import_module(f'{__name__}.{mod}')
        for n in (getattr(m, '__all__', ()) if wanted is None else wanted): names[n] = _find(m, n)
    globals().update(names)
    __all__ = list(names)
    _loaded = True

def __getattr__(name:str):
    "A public name of the package, importing the modules on first use."
    if (not _loaded and not name.startswith('_')) or name == '__all__':
        if not _loaded: _load()
        if name in globals(): return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

_public = None

def _source_all(mod:str)->list:
    "The literal `__all__` of the module `mod`, read from its source (nothing imported)."
    import ast
    from importlib.util import find_spec
    spec = find_spec(f'{__name__}.{mod}')
    with open(spec.origin, encoding='utf-8') as f: tree = ast.parse(f.read())
    return next((list(ast.literal_eval(n.value)) for n in tree.body if isinstance(n, ast.Assign)
                 and any(getattr(t, 'id', None) == '__all__' for t in n.targets)), [])

def _public_names()->list:
    "Every name the package exports: those of `_EXPORTS`, `faiss_build` and `__version__` (from source, cached)."
    global _public
    if _public is None:
        names = {n for mod, wanted in _EXPORTS.items() for n in (_source_all(mod) if wanted is None else wanted)}
        _public = sorted(names | {'faiss_build', '__version__'})
    return _public

def __dir__(): return sorted(set(_public_names()) | (set(__all__) if _loaded else set()))

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
