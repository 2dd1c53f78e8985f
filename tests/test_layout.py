"""The package's layout: two wings (the library never imports a study), a small top level, and the names and modules
that moved in 0.3 still resolving from their former places with a DeprecationWarning that says where they live now."""
import ast, importlib, subprocess, sys, warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / 'geotter'

def _imports(path:Path)->set:
    "The modules `path` imports, as absolute dotted names (relative imports resolved inside the package)."
    pkg = '.'.join(path.relative_to(ROOT).with_suffix('').parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import): out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name('.' * node.level + (node.module or ''), pkg) if node.level else node.module
            out |= {base} | {f"{base}.{a.name}" for a in node.names}
    return out

def test_library_never_imports_a_study():
    "No module of the library (geotter/*.py but the face, cli and the package's __init__) imports geotter.studies."
    for path in sorted(LIB.glob('*.py')):
        if path.name in ('cli.py', '__init__.py', '_modidx.py'): continue
        up = sorted(m for m in _imports(path) if m == 'geotter.studies' or m.startswith('geotter.studies.'))
        assert not up, f"{path.name} imports {up}: the library must not import a study"

def test_top_level_is_small():
    "At most 35 names, each object once, every one importable."
    import geotter
    assert len(geotter.__all__) <= 35, len(geotter.__all__)
    assert len(set(geotter.__all__)) == len(geotter.__all__)
    objs = [getattr(geotter, n) for n in geotter.__all__]
    assert len({id(o) for o in objs}) == len(objs)

@pytest.mark.parametrize('name, module', [('run_method', 'geotter.studies.experiments'), ('METHODS', 'geotter.studies.experiments'),
                                          ('geotter_on_task', 'geotter.studies.experiments'), ('posteriors', 'geotter.studies.calibration'),
                                          ('marginal_errors', 'geotter.studies.marginals'), ('knn_graph', 'geotter.graph'),
                                          ('kmeans', 'geotter.cluster'), ('geotter_chunked', 'geotter.pipeline'),
                                          ('fused_cost', 'geotter.pipeline'), ('data_driven_defaults', 'geotter.noise'),
                                          ('stream_predict', 'geotter.streaming'), ('total_variation', 'geotter.priors'),
                                          ('PAPER_DEFAULTS', 'geotter.options'), ('KNN_METHODS', 'geotter.options')])
def test_former_top_level_names_warn(name, module):
    "A name that left the top level resolves from it, with a DeprecationWarning naming the module to import it from."
    import geotter
    with pytest.warns(DeprecationWarning, match=f"import it from {module}"):
        obj = getattr(geotter, name)
    assert obj is getattr(importlib.import_module(module), name)

@pytest.mark.parametrize('name', ['solve_ot_trusted', 'transport_trusted', 'estimate_label_ratio_trusted'])
def test_trusted_kernels_never_were_top_level(name):
    "A kernel the layers share (`*_trusted`) does not resolve from the top level: it never was a top-level name."
    import geotter
    with pytest.raises(AttributeError, match=name): getattr(geotter, name)

@pytest.mark.parametrize('old, new', [('ratio', 'studies.ratio'), ('experiments', 'studies.experiments'), ('theory', 'studies.theory'),
                                      ('robustness', 'studies.robustness'), ('marginals', 'studies.marginals'),
                                      ('calibration', 'studies.calibration'), ('prompts', 'studies.prompts'),
                                      ('defaults', 'studies.defaults'), ('transductive', 'peers')])
def test_former_module_paths_warn(old, new):
    "`import geotter.<old>` gives the module under its new path, with a DeprecationWarning (in a fresh process)."
    code = (f"import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
            f"try:\n    import geotter.{old}\nexcept DeprecationWarning as w: print(w)\n"
            f"warnings.simplefilter('ignore')\nimport geotter.{old} as m, geotter.{new} as n\nprint(m is n)")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split('\n')[:2] == [f"geotter.{old} is now geotter.{new}; import it from there", 'True'], r.stdout

def test_moved_between_library_modules():
    "A name that moved down from `geotter.method` resolves there with a warning; the registry, which moved up, does not."
    import geotter.method as M, geotter.pipeline as P
    with pytest.warns(DeprecationWarning, match='geotter.pipeline'):
        assert M.geotter_chunked is P.geotter_chunked
    with pytest.raises(AttributeError): M.run_method

def _private_imports(path:Path, root:Path=ROOT)->list:
    "The private names (`_x`, not dunders) `path` takes from another geotter module: `from .m import _x`, or `m._x` of a module it imported."
    me = '.'.join(path.relative_to(root).with_suffix('').parts)
    pkg = me if path.name == '__init__.py' else me.rpartition('.')[0]
    me = me.removesuffix('.__init__')
    private = lambda n: n.startswith('_') and not n.startswith('__')
    is_module = lambda name: (root / name.replace('.', '/')).with_suffix('.py').exists() or (root / name.replace('.', '/') / '__init__.py').exists()
    tree, found, modules = ast.parse(path.read_text()), [], {'geotter': 'geotter'}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name('.' * node.level + (node.module or ''), pkg) if node.level else node.module
            if not (base == 'geotter' or base.startswith('geotter.')) or base == me: continue
            for a in node.names:
                if is_module(f"{base}.{a.name}"): modules[a.asname or a.name] = f"{base}.{a.name}"   # its attributes: below
                elif private(a.name): found.append(f"from {base} import {a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith('geotter') and a.asname: modules[a.asname] = a.name
    for node in ast.walk(tree):                   # `g._x`, `geotter.graph._x`: an attribute of a module
        if not (isinstance(node, ast.Attribute) and private(node.attr)): continue
        head, _, rest = ast.unparse(node.value).partition('.')
        owner = modules.get(head, '') + ('.' + rest if rest else '')
        if head in modules and owner != me and is_module(owner): found.append(f"{owner}.{node.attr}")
    return found

def test_no_private_name_crosses_a_module():
    "No module under geotter/ imports another geotter module's private names: what two layers share is public in the lower one."
    paths = [p for p in sorted(LIB.rglob('*.py')) if p.name != '_modidx.py']
    assert len(paths) > 20
    bad = {str(p.relative_to(LIB)): found for p in paths if (found := _private_imports(p))}
    assert not bad, f"private names imported across modules: {bad}"

def test_private_import_check_can_fail(tmp_path):
    "The check above sees both forms, a private name imported from a sibling module and one read as a module's attribute, and no other."
    pkg = tmp_path / 'geotter'; pkg.mkdir()
    src = ("from .exact import _ssp, emd\nfrom . import graph as g\nfrom .core import __all__\nimport geotter.core\n"
           "x = g._smooth\ny = g.knn_search\nz = geotter.core._shape\nw = g.KNNSearch._fields\n")
    for name in ('exact', 'graph', 'core', '_private'): (pkg / f'{name}.py').write_text('')
    (pkg / 'probe.py').write_text(src)
    assert _private_imports(pkg / 'probe.py', tmp_path) == ['from geotter.exact import _ssp', 'geotter.graph._smooth', 'geotter.core._shape']
    (pkg / 'probe.py').write_text("from ._private import _x\nfrom .probe import _y\n")   # its own private names are its own
    assert _private_imports(pkg / 'probe.py', tmp_path) == ['from geotter._private import _x']

# a package imported under another name than its distribution's
_DISTRIBUTION = {'ot': 'pot', 'sklearn': 'scikit-learn', 'PIL': 'pillow', 'yaml': 'pyyaml'}

def _module_level_imports(path:Path)->set:
    "Top-level packages `path` imports at module level outside a `try` (what `import geotter.x` needs installed)."
    out = set()
    for node in ast.parse(path.read_text()).body:             # not ast.walk: imports inside functions are lazy, by design
        if isinstance(node, ast.Import): out |= {a.name.split('.')[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0: out.add(node.module.split('.')[0])
    return out - set(sys.stdlib_module_names) - {'geotter', '__future__'}

def test_module_level_imports_are_requirements():
    "Every package a module of geotter/ imports at module level is in settings.ini's `requirements` (`pip install .`)."
    line = next(l for l in (ROOT / 'settings.ini').read_text().splitlines() if l.startswith('requirements ='))
    required = {r.split('>')[0].split('<')[0].split('=')[0].split('[')[0].lower() for r in line.split('=', 1)[1].split()}
    for path in sorted(LIB.rglob('*.py')):
        missing = {_DISTRIBUTION.get(m, m).lower() for m in _module_level_imports(path)} - required
        assert not missing, f"{path.relative_to(ROOT)} imports {sorted(missing)} at module level; add them to settings.ini's requirements"
