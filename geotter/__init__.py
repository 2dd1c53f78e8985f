"""geotter: test-time label-distribution adaptation of frozen zero-shot classifiers (OTTER, GeoTTER and family).

The modules are generated from the notebooks in `nbs/` by `nbdev_export`; this file only gathers
their public names so that `from geotter import geotter, otter, ...` works. The names are loaded on
first use (PEP 562), so that `import geotter.cli` (the `geotter` command) does not import PyTorch
before it needs it.
"""
__version__ = "0.1.0"

import importlib

# module -> names taken from it (None: the module's `__all__`)
_EXPORTS = {
    'core': None, 'baselines': None, 'transport': None, 'graph': None, 'cluster': None, 'method': None, 'synthetic': None,
    'data': ('load_task', 'load_embeddings', 'extract'),
    'marginals': ('marginal_errors', 'prior_at_tv', 'partial_batches'),
    'calibration': ('posteriors', 'expected_calibration_error', 'calibration_scores', 'reliability_diagram', 'class_duals'),
    'prompts': ('ensemble_embeddings',),
    'defaults': ('data_driven_defaults', 'estimate_noise'),
    'streaming': ('StreamingGeoTTER', 'stream_predict', 'online_em_prior'),
}
_loaded = False

def _find(m, name:str):
    "`m.name`, or the same name in the module it moved to."
    if hasattr(m, name): return getattr(m, name)
    for mod in _MOVED_TO:
        try: return getattr(importlib.import_module(f'{__name__}.{mod}'), name)
        except (ImportError, AttributeError): pass
    raise AttributeError(f"{m.__name__} has no attribute {name!r}")

_MOVED_TO = ('priors', 'method', 'store', 'data')

def _load():
    "Import the modules of `_EXPORTS` and copy their public names into the package namespace."
    global _loaded, __all__
    names = {}
    for mod, wanted in _EXPORTS.items():
        m = importlib.import_module(f'{__name__}.{mod}')
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

def __dir__(): return sorted(set(globals()) | (set(__all__) if _loaded else set()))

def faiss_build()->str:
    """Which faiss is installed: 'cpu' (faiss-cpu), 'gpu' (faiss-gpu or faiss-gpu-cu11/cu12) or 'none'.

    faiss-cpu and faiss-gpu* both install the module `faiss`; with both installed, whichever pip
    wrote last wins, so a warning asks to keep only one."""
    import warnings
    from importlib import metadata
    found = []
    for dist in ('faiss-cpu', 'faiss-gpu', 'faiss-gpu-cu11', 'faiss-gpu-cu12'):
        try: metadata.distribution(dist); found.append(dist)
        except metadata.PackageNotFoundError: pass
    gpu = [d for d in found if d != 'faiss-cpu']
    if gpu and 'faiss-cpu' in found:
        warnings.warn(f"both faiss-cpu and {', '.join(gpu)} are installed and share the module `faiss`; keep one: "
                      f"pip uninstall -y faiss-cpu {' '.join(gpu)} && pip install {gpu[-1]}", RuntimeWarning, stacklevel=2)
    return 'gpu' if gpu else 'cpu' if found else 'none'
