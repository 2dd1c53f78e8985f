#!/usr/bin/env python
"""Build the geotter documentation site offline, from the notebooks, in one command.

    python docs/build.py                 # -> site/  (open site/index.html or serve it)
    python docs/build.py --strict        # warnings (broken links, nbdev/Quarto pitfalls) are errors
    python docs/build.py --serve 8000    # build, then serve on http://127.0.0.1:8000

Pipeline (see docs/README.md for the reasons):
1. nbdev's own notebook processing (`nbdev.process.NBProcessor` with processors from
   `nbdev.processors`): `#| hide` cells dropped, directives stripped, `show_doc` cells added after every
   exported definition and executed in-process (`exec_show_docs`), magics and ANSI codes cleaned.
2. Each processed notebook -> one Markdown page (saved outputs and figures included, export cells shown
   as code, long test cells collapsed), plus an API reference page built with `show_doc`.
3. MkDocs + Material theme -> static HTML with navigation and client-side search; math is typeset in
   the browser by MathJax 3 vendored from the npm package `mathjax` (no CDN, no internet).
"""
from __future__ import annotations

import argparse, ast, base64, importlib, json, logging, os, posixpath, re, shutil, subprocess, sys, warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
BUILD = DOCS / '_build'                      # intermediate Markdown + mkdocs.yml (git-ignored)
MATHJAX_VERSION = '3.2.2'                    # pinned in docs/package.json
MATHJAX_DIR = DOCS / 'node_modules' / 'mathjax' / 'es5'
FOLD_TEST_LINES = 12                         # test cells longer than this are collapsed
API_PAGE = 'api.md'

log = logging.getLogger('geotter.docs')

# ----------------------------------------------------------------------------------------------------
# nbdev processing

def _nbdev():
    "Import nbdev lazily (run from the repo root so `get_config` finds settings.ini)."
    os.chdir(ROOT)
    from nbdev.config import get_config
    from nbdev import processors as P
    from nbdev.process import NBProcessor
    from nbdev.frontmatter import _md2dict
    from nbdev.doclinks import nbglob, _nbpath2html
    _see_also_section()
    return get_config(), P, NBProcessor, _md2dict, nbglob, _nbpath2html

def _see_also_section():
    """Teach fastcore's numpydoc parser (used by `show_doc`) the 'See Also' section: it lists its sections by
    splitting one string on spaces, so 'See Also' became two unknown words and every such section warned."""
    from fastcore.docscrape import NumpyDocString
    NumpyDocString.sections.setdefault('See Also', [])

def _forward(caught, where:str, warn):
    "The Python warnings recorded while building `where` (a notebook, an API entry), as build warnings, once each."
    seen = set()
    for w in caught:
        key = (w.category.__name__, str(w.message), w.filename, w.lineno)
        if key in seen: continue
        seen.add(key)
        warn(f"{where}: {w.category.__name__}: {w.message} ({Path(w.filename).name}:{w.lineno})")

_DIRECTIVE = re.compile(r'^\s*#\|')   # directive lines nbdev leaves in (Quarto options; directive-only cells)

def _opt(cell, key, default=None):
    "A Quarto cell option (`#| key: value`) from nbdev's parsed directives."
    v = cell.directives_.get(key + ':')
    return ' '.join(v).strip().strip('"\'').lower() if v else default

class _doc_first:
    "nbdev's `mv_exports` for every exported cell: the `show_doc` output goes before the source."
    def __init__(self, nb): self.nb = nb
    def begin(self):
        cells = self.nb.cells
        for i in reversed(range(len(cells))):
            c = cells[i]
            if c.cell_type != 'code' or not ({'export', 'exports', 'exporti'} & set(c.directives_)): continue
            j = i + 1
            while j < len(cells) and getattr(cells[j], 'has_sd', False): j += 1
            if j > i + 1: cells[i:j] = cells[i + 1:j] + [c]

def _procs(P, name, warn):
    "nbdev's default docs processors, minus the Quarto-only ones (fenced divs, code-fold, links to the web site)."
    class exec_show_docs(P.exec_show_docs):
        """nbdev's `exec_show_docs` (runs export, import and show_doc cells), with two changes: a cell that mixes
        imports with other code gets only its imports run (nbdev runs all of it: slow, and it can fail), and a
        failing cell is a warning instead of an exception. Both are reported, since `nbdev_docs` is affected."""
        def __call__(self, cell):
            if not getattr(self.nb, 'has_docs_', False) or not hasattr(self, 'k'): return
            if 'nbdev_export' + '()' in (cell.source or ''): return     # as nbdev's `_do_eval`
            first = (cell.source or '').strip().splitlines()[:1]
            trees = cell.parsed_() if cell.cell_type == 'code' and cell.source else None
            if trees and not ({'export', 'exports', 'exporti', 'exec_doc'} & set(cell.directives_)) \
                    and not P._show_docs(trees) and P._ast_contains(trees, (ast.Import, ast.ImportFrom)) \
                    and P._ast_contains(trees, (ast.Expr, ast.Assign)):
                warn(f"{name}: a cell mixes imports with other code ({first[0] if first else ''!r}...): nbdev_docs "
                     f"executes all of it to build the docs (here only its imports ran). Put the imports in their own cell.")
                imps = '\n'.join(ast.unparse(t) for t in trees if isinstance(t, (ast.Import, ast.ImportFrom)))
                try: self.k.run_cell(imps)
                except Exception: pass
                self.k.exc = None
                return
            try: super().__call__(cell)
            except Exception as e:
                self.k.exc = None
                err = e.__cause__ or e
                warn(f"{name}: a cell fails when nbdev executes it to build the docs ({first[0] if first else ''!r}...: "
                     f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}); nbdev_docs stops there.")
    return [P.populate_language, P.add_show_docs, P.strip_ansi, P.hide_line, P.filter_stream_,
            P.rm_header_dash, exec_show_docs, P.ai_magics, P.clean_magics, P.hide_, _doc_first,
            P.strip_hidden_metadata]

def _title(cells, md2dict, path, warn):
    "Title and summary from the first markdown cell; the rest of that cell is kept (nbdev+Quarto drops it: warn)."
    for c in cells:
        if c.cell_type != 'markdown': continue
        fm = md2dict(c.source)
        if not fm: return {}, None
        rest = [l for l in c.source.splitlines()
                if not re.match(r'^#\s+\S', l) and l.strip() != f"> {fm.get('description', '')}"
                and not re.match(r'^-\s+\S.*:.*\S\s*$', l)]
        rest = '\n'.join(rest).strip()
        if rest:
            warn(f"{path.name}: the title cell holds more than `# Title` and `> summary`; nbdev's Quarto build "
                 f"(nbdev_docs) drops that text from the published page. Move it to its own markdown cell.")
        c.source = rest
        return fm, c
    return {}, None

# ----------------------------------------------------------------------------------------------------
# Markdown rendering of one processed notebook

_DISPLAY_MATH = re.compile(r'\$\$(.+?)\$\$', re.S)
_FENCE = re.compile(r'^\s*(```|~~~)')

def _fence(text, lang=''):
    "A fenced code block that survives backticks inside `text`."
    n = max([3] + [len(m) + 1 for m in re.findall(r'`{3,}', text)])
    return f"{'`' * n}{lang}\n{text.rstrip()}\n{'`' * n}"

def _indent(s, n=4): return '\n'.join((' ' * n + l) if l.strip() else '' for l in s.splitlines())

def _fold(body, summary, open_=False, kind='example'):
    "A collapsible block (pymdownx.details): `???+` open, `???` closed."
    return f"{'???+' if open_ else '???'} {kind} \"{summary}\"\n\n{_indent(body)}"

def _display_math(m):
    "A `$$...$$` match as its own block, indented as a list item's content when it sits in a list item."
    text = m.string
    para = text.rfind('\n\n', 0, m.start())
    first = text[para + 2 if para >= 0 else 0:m.start()].split('\n', 1)[0]
    ind = '    ' if re.match(r'^(\s{2,}|\s*([-*+]|\d+[.)])\s)', first) else ''
    body = '\n'.join(ind + l for l in ('$$' + m.group(1).strip('\n') + '$$').split('\n'))
    return f"\n\n{body}\n\n{ind}"

def _math_blocks(md):
    "Put every `$$...$$` on its own block (Jupyter accepts display math inside a paragraph, Python-Markdown does not)."
    out, in_fence, buf = [], False, []
    def flush():
        if buf: out.append(_DISPLAY_MATH.sub(_display_math, '\n'.join(buf))); buf.clear()
    for line in md.splitlines():
        if _FENCE.match(line):
            flush(); in_fence = not in_fence; out.append(line); continue
        (out if in_fence else buf).append(line)
    flush()
    return re.sub(r'\n{3,}', '\n\n', '\n'.join(out))

class Linker:
    "Backticked names of documented symbols -> links to their `show_doc` entry (like nbdev's `add_links`)."
    _re = re.compile(r'(?<![\[\w])`([A-Za-z_][\w.]*)(\(\))?`(?!\])')
    def __init__(self): self.targets = {}
    def add(self, name, page, anchor):
        for n in {name, name.split('.', 1)[-1] if name.count('.') > 1 else name}: self.targets.setdefault(n, (page, anchor))
    def _sub(self, m, page):
        t = self.targets.get(m.group(1))
        if t is None: return m.group(0)
        href = f"#{t[1]}" if t[0] == page else f"{posixpath.relpath(t[0], posixpath.dirname(page) or '.')}#{t[1]}"   # pages in folders (studies/)
        return f"[{m.group(0)}]({href})"
    def __call__(self, md, page):
        out, in_fence = [], False
        for line in md.splitlines():
            if _FENCE.match(line): in_fence = not in_fence
            elif not in_fence and not line.startswith('    '): line = self._re.sub(lambda m: self._sub(m, page), line)
            out.append(line)
        return '\n'.join(out)

_SOURCE_LINK = re.compile(r'^\[source\]\([^)]*\)\{[^}]*\}\s*$', re.M)
_SD_HEADING = re.compile(r'^(#{2,6}) (\S.*?)\s*$', re.M)

def _anchor(name): return name.lower()   # nbdev/Quarto's anchor for a symbol (e.g. `task.prior`)

def showdoc_md(md, anchors=None, prefix=''):
    "Clean a `show_doc` Markdown output: drop the GitHub source link, give the heading nbdev's anchor."
    md = _SOURCE_LINK.sub('', md).replace('\n---\n', '\n', 1)
    md = re.sub(r'^---\s*\n', '', md)
    def head(m):
        a = prefix + _anchor(m.group(2))
        if anchors is not None: anchors.append((m.group(2), a))
        return f"{m.group(1)} {m.group(2)} {{ #{a} .doc-heading }}"
    return _SD_HEADING.sub(head, md, count=1).strip()

class Page:
    "One notebook's processed cells, rendered to Markdown (`render`) once every page's anchors are known."
    def __init__(self, path, rel_md, nb, fm, files_dir):
        self.path, self.rel_md, self.nb, self.fm, self.files_dir = path, rel_md, nb, fm, files_dir
        self.title = fm.get('title') or path.stem
        self.anchors, self.n_images, self.n_math = [], 0, 0
        for c in nb.cells:      # show_doc anchors first, so links from earlier pages resolve
            if c.cell_type == 'code' and self._is_sd(c):
                for o in c.get('outputs', []):
                    md = o.get('data', {}).get('text/markdown')
                    if md: o['data']['text/markdown'] = showdoc_md(''.join(md), self.anchors)

    @staticmethod
    def _is_sd(c): return getattr(c, 'has_sd', False) or bool(re.match(r'^\s*show_doc\(', c.source or ''))

    def _image(self, data, ext, i, j):
        self.files_dir.mkdir(parents=True, exist_ok=True)
        f = self.files_dir / f"cell{i}_{j}.{ext}"
        if ext == 'svg': f.write_text(''.join(data) if isinstance(data, list) else data, encoding='utf-8')
        else: f.write_bytes(base64.b64decode(''.join(data) if isinstance(data, list) else data))
        self.n_images += 1
        return f"![Figure {self.n_images}]({self.files_dir.name}/{f.name}){{ .nb-figure }}"

    def _outputs(self, c, i):
        res = []
        for j, o in enumerate(c.get('outputs', [])):
            t = o.get('output_type')
            if t == 'stream':
                txt = ''.join(o.get('text', ''))
                if txt.strip(): res.append(_fence(txt, 'text'))
            elif t == 'error':
                res.append(_fence(re.sub(r'\x1b\[[0-9;]*m', '', '\n'.join(o.get('traceback', []))), 'text'))
            elif t in ('execute_result', 'display_data'):
                d = o.get('data', {})
                if 'image/png' in d: res.append(self._image(d['image/png'], 'png', i, j))
                elif 'image/jpeg' in d: res.append(self._image(d['image/jpeg'], 'jpg', i, j))
                elif 'image/svg+xml' in d: res.append(self._image(d['image/svg+xml'], 'svg', i, j))
                elif 'text/markdown' in d: res.append(''.join(d['text/markdown']))
                elif 'text/html' in d: res.append(f"<div class=\"nb-html\">\n{''.join(d['text/html']).strip()}\n</div>")
                elif 'text/latex' in d: res.append(''.join(d['text/latex']))
                elif 'text/plain' in d: res.append(_fence(''.join(d['text/plain']), 'text'))
        return res

    def render(self, link):
        out = [f"# {self.title}"]
        if self.fm.get('description'): out.append(f"{self.fm['description']}\n{{ .nb-lead }}")
        for i, c in enumerate(self.nb.cells):
            if c.cell_type == 'raw': continue
            if c.cell_type == 'markdown':
                if c.source.strip(): out.append(link(_math_blocks(c.source), self.rel_md))
                continue
            if _opt(c, 'include') == 'false': continue
            if self._is_sd(c):
                out.extend(self._outputs(c, i)); continue
            src = '\n'.join(l for l in c.source.splitlines() if not _DIRECTIVE.match(l)).strip('\n')
            block = []
            if src and _opt(c, 'echo') != 'false':
                code, n = _fence(src, 'python'), len(src.splitlines())
                d, fold = set(c.directives_), _opt(c, 'code-fold')
                if d & {'export', 'exports', 'exporti'}:
                    imports_only = all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in (c.parsed_() or [0]))
                    label = 'Imports' if imports_only else ('Internal source' if 'exporti' in d else 'Exported source')
                    code = _fold(code, label, open_=not imports_only and 'exporti' not in d and fold != 'true', kind='abstract')
                elif fold in ('true', 'show'):
                    code = _fold(code, _opt(c, 'code-summary', 'Code'), open_=fold == 'show')
                elif n > FOLD_TEST_LINES and re.search(r'^\s*(test_\w+\(|assert\b)', src, re.M):
                    code = _fold(code, f"Tests ({n} lines)")
                block.append(code)
            if _opt(c, 'output') != 'false': block.extend(self._outputs(c, i))
            out.extend(block)
        md = '\n\n'.join(o.strip('\n') for o in out if o and o.strip()) + '\n'
        self.n_math = len(re.findall(r'(?<!\\)\$', md))
        return md

# ----------------------------------------------------------------------------------------------------
# API reference

def api_page(cfg, pages, modules, link):
    "One `show_doc` entry per public symbol (`__all__`) of every exported module, each linked to its notebook."
    from nbdev.showdoc import show_doc
    out = ['# API reference', f"Every public function and class of `{cfg.lib_name}`, with its signature, docstring "
           "and documented parameters (generated by nbdev's `show_doc`). Each entry links to the notebook page "
           "that explains the method and tests it.\n{ .nb-lead }"]
    by_page = {p.rel_md: p for p in pages}
    for modname, nbpage in modules:
        try: mod = importlib.import_module(modname)
        except Exception as e:
            log.warning('API page: cannot import %s (%s: %s)', modname, type(e).__name__, e); continue
        names = [n for n in getattr(mod, '__all__', []) if not n.startswith('_')]
        page = by_page.get(nbpage)
        title = f" — [{page.title}]({nbpage})" if page else ''
        out.append(f"## `{modname}`{title} {{ #{modname.replace('.', '-')} }}")
        if mod.__doc__: out.append(mod.__doc__.strip().splitlines()[0])
        for n in names:
            obj = getattr(mod, n, None)
            if not (callable(obj) and getattr(obj, '__module__', modname) == modname): continue
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter('always')
                try: md = show_doc(obj, name=n)._repr_markdown_()
                except Exception as e: md = e
            _forward(caught, f'API page, {modname}.{n}', log.warning)
            if isinstance(md, Exception):
                log.warning('API page: show_doc(%s.%s) failed (%s)', modname, n, md); continue
            md = showdoc_md(md, prefix=modname.replace('.', '-') + '-')
            if page and any(a == _anchor(n) for _, a in page.anchors): md += f"\n\n[Explained in {page.title} →]({nbpage}#{_anchor(n)})"
            out.append(md)
            if isinstance(obj, type):
                for mn, m in vars(obj).items():
                    if mn.startswith('_') or not (callable(m) or isinstance(m, property)): continue
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter('always')
                        try: mmd = show_doc(getattr(obj, mn) if callable(m) else m, name=f"{n}.{mn}", title_level=4)._repr_markdown_()
                        except Exception as e: mmd = e
                    _forward(caught, f'API page, {modname}.{n}.{mn}', log.warning)
                    if isinstance(mmd, Exception):
                        log.warning('API page: show_doc(%s.%s.%s) failed (%s)', modname, n, mn, mmd); continue
                    out.append(showdoc_md(mmd, prefix=modname.replace('.', '-') + '-'))
    return '\n\n'.join(out) + '\n'

def _module_pages(cfg, pages):
    "(module, notebook page) pairs, in notebook order, from each notebook's `#| default_exp`."
    res = []
    for p in pages:
        for c in p.raw_cells:
            m = re.search(r'^\s*#\|\s*default_exp\s+(\S+)', c.get('source', ''), re.M) if c.get('cell_type') == 'code' else None
            if m: res.append((f"{cfg.lib_name}.{m.group(1)}", p.rel_md)); break
    return res

# ----------------------------------------------------------------------------------------------------
# Site assembly

MATHJAX_CONFIG = r"""// MathJax 3 for pymdownx.arithmatex (generic mode), served from this site: no CDN, no internet.
// Typesets the whole page (math spans, and headings with math in the table of contents).
window.MathJax = {
  tex: {inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]], processEscapes: true,
        processEnvironments: true, tags: "ams"},
  // whole page, not only the .arithmatex spans: headings with math also appear in the table of contents.
  // Only \( \) and \[ \] delimit math (arithmatex's output), and pre/code are skipped, so code stays as is.
  svg: {fontCache: "global"}
};
"""

EXTRA_CSS = """.nb-lead { font-size: 1.15em; color: var(--md-default-fg-color--light); }
.md-typeset img.nb-figure { display: block; max-width: 100%; margin: .6em auto; }
.md-typeset .nb-html { overflow-x: auto; font-size: .8em; }
.md-typeset .nb-html table { border-collapse: collapse; border: none; }
.md-typeset .nb-html th, .md-typeset .nb-html td { padding: .25em .7em; border: none;
  border-bottom: 1px solid var(--md-default-fg-color--lightest); text-align: right; }
.md-typeset .doc-heading { border-top: 1px solid var(--md-default-fg-color--lightest); padding-top: .6em; }
.md-typeset mjx-container[display="true"] { overflow-x: auto; overflow-y: hidden; }
"""

def ensure_mathjax(install=True):
    "Path of the vendored MathJax `es5` folder; `npm install`s the pinned package into docs/ if missing."
    if not (MATHJAX_DIR / 'tex-svg.js').exists():
        npm = shutil.which('npm')
        if not install or npm is None:
            raise SystemExit(f"MathJax is missing ({MATHJAX_DIR}); run: npm install --prefix docs  (needs Node.js/npm)")
        log.info('installing MathJax %s from npm into docs/node_modules', MATHJAX_VERSION)
        subprocess.run([npm, 'install', '--prefix', str(DOCS), '--no-audit', '--no-fund', '--no-package-lock'], check=True)
    return MATHJAX_DIR

def _copy_mathjax(dst):
    "Vendor MathJax into the site: the SVG component and the folders it loads lazily (extensions, a11y, menu)."
    skip = {'tex-chtml.js', 'tex-chtml-full.js', 'tex-chtml-full-speech.js', 'tex-mml-chtml.js', 'tex-mml-svg.js',
            'tex-svg-full.js', 'mml-chtml.js', 'mml-svg.js', 'node-main.js', 'latest.js'}
    shutil.copytree(MATHJAX_DIR, dst, ignore=lambda d, names: [n for n in names if Path(d) == MATHJAX_DIR and n in skip])

def mkdocs_config(cfg, nav, src, site):
    return {
        'site_name': cfg.title, 'site_description': cfg.description, 'site_author': cfg.author,
        'copyright': f"Copyright {cfg.copyright}", 'docs_dir': str(src), 'site_dir': str(site),
        'use_directory_urls': False, 'nav': nav,
        'theme': {'name': 'material', 'font': False, 'language': 'en',
                  'features': ['navigation.footer', 'navigation.top', 'toc.follow', 'search.highlight',
                               'search.suggest', 'content.code.copy'],
                  'palette': [{'scheme': 'default', 'primary': 'indigo', 'accent': 'indigo'}]},
        'plugins': ['search'],    # not Material's 'offline' plugin: it loads a shim from a CDN
        'markdown_extensions': ['admonition', 'attr_list', 'md_in_html', 'tables', 'footnotes', 'def_list',
                                {'toc': {'permalink': True}}, {'pymdownx.arithmatex': {'generic': True}},
                                {'pymdownx.highlight': {'use_pygments': True}}, 'pymdownx.superfences',
                                'pymdownx.details', 'pymdownx.inlinehilite'],
        'extra_javascript': ['assets/mathjax-config.js', 'assets/mathjax/tex-svg.js'],
        'extra_css': ['assets/extra.css'],
        'extra': {'generator': False},
        'validation': {'nav': {'omitted_files': 'info'}, 'links': {'not_found': 'warn', 'anchors': 'warn',
                                                                     'unrecognized_links': 'warn'}},
    }

class _Collect(logging.Handler):
    def __init__(self): super().__init__(logging.WARNING); self.records = []
    def emit(self, r): self.records.append(r)

def process_notebook(f, rel_md, src, warn=None):
    "nbdev's processors on notebook `f`: a `Page` to be written to `src/rel_md` (its figures go beside it)."
    from execnb.nbio import read_nb
    warn = warn or log.warning
    cfg, P, NBProcessor, md2dict, nbglob, nbpath2html = _nbdev()
    f = Path(f)
    nb = read_nb(f); nb.path_ = str(f)
    raw = [dict(c) for c in nb.cells]
    with warnings.catch_warnings(record=True) as caught:        # counted below, not dropped
        warnings.simplefilter('always')
        proc = NBProcessor(nb=nb, procs=_procs(P, f.name, warn))
        fm, _ = _title(proc.nb.cells, md2dict, f, warn)
        try: proc.process()
        except Exception as e:
            raise SystemExit(f"{f.name}: nbdev processing failed ({type(e).__name__}: {e})") from e
    _forward(caught, f.name, warn)
    os.chdir(ROOT)     # notebooks may chdir while their cells run
    (Path(src) / rel_md).parent.mkdir(parents=True, exist_ok=True)
    page = Page(f, rel_md, proc.nb, fm, Path(src) / Path(rel_md).parent / (Path(rel_md).stem + '_files'))
    page.raw_cells = raw
    return page

def build(out=None, strict=False, install=True, quiet=False):
    "Build the site into `out` (default `site/`); returns a manifest dict (pages, figures, warnings, seconds)."
    import time
    t0 = time.perf_counter()
    logging.basicConfig(level=logging.WARNING, format='%(levelname)s %(name)s: %(message)s')
    log.setLevel(logging.WARNING if quiet else logging.INFO)
    warns = _Collect(); logging.getLogger().addHandler(warns)
    def warn(msg): log.warning(msg)

    cfg, P, NBProcessor, md2dict, nbglob, nbpath2html = _nbdev()
    site = Path(out or ROOT / 'site').resolve()
    mathjax = ensure_mathjax(install)
    src = BUILD / 'src'
    if BUILD.exists(): shutil.rmtree(BUILD)
    (src / 'assets').mkdir(parents=True)
    nbs_path = Path(cfg.nbs_path)
    pages = []
    for f in sorted(nbglob(nbs_path, as_path=True)):
        f = Path(f).resolve()
        rel_md = nbpath2html(f.relative_to(nbs_path.resolve())).with_suffix('.md').as_posix()
        log.info('processing %s -> %s', f.name, Path(rel_md).with_suffix('.html').as_posix())
        pages.append(process_notebook(f, rel_md, src, warn))

    link = Linker()
    for p in pages:
        for name, a in p.anchors: link.add(name, p.rel_md, a)
    for p in pages: (src / p.rel_md).write_text(p.render(link), encoding='utf-8')

    if not any(p.rel_md == 'index.md' for p in pages):
        items = '\n'.join(f"- [{p.title}]({p.rel_md}): {p.fm.get('description', '')}" for p in pages)
        (src / 'index.md').write_text(f"# {cfg.title}\n\n{cfg.description}\n{{ .nb-lead }}\n\n{items}\n\n"
                                      f"- [API reference]({API_PAGE})\n", encoding='utf-8')
        warn('nbs/index.ipynb not found: wrote a placeholder home page')
    modules = _module_pages(cfg, pages)
    (src / API_PAGE).write_text(api_page(cfg, pages, modules, link), encoding='utf-8')

    nav = [{'Home': 'index.md'}] + [{p.title: p.rel_md} for p in pages if p.rel_md != 'index.md'] + [{'API reference': API_PAGE}]
    (src / 'assets' / 'mathjax-config.js').write_text(MATHJAX_CONFIG)
    (src / 'assets' / 'extra.css').write_text(EXTRA_CSS)
    _copy_mathjax(src / 'assets' / 'mathjax')

    import yaml
    from mkdocs.config import load_config
    from mkdocs.commands.build import build as mk_build
    yml = BUILD / 'mkdocs.yml'
    yml.write_text(yaml.safe_dump(mkdocs_config(cfg, nav, src, site), sort_keys=False, allow_unicode=True))
    if site.exists(): shutil.rmtree(site)
    os.environ.setdefault('NO_MKDOCS_2_WARNING', '1')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        mk_build(load_config(config_file=str(yml)))
    _forward(caught, 'mkdocs', warn)

    logging.getLogger().removeHandler(warns)
    manifest = dict(site=str(site), seconds=round(time.perf_counter() - t0, 1),
                    pages=[dict(title=p.title, notebook=p.path.name, html=Path(p.rel_md).with_suffix('.html').as_posix(),
                                figures=p.n_images, anchors=len(p.anchors)) for p in pages],
                    api=Path(API_PAGE).with_suffix('.html').as_posix(),
                    warnings=[r.getMessage() for r in warns.records])
    (BUILD / 'manifest.json').write_text(json.dumps(manifest, indent=1))
    log.info('built %d pages + API reference into %s in %.1fs (%d warnings)', len(pages), site, manifest['seconds'],
             len(manifest['warnings']))
    if strict and manifest['warnings']:
        raise SystemExit('--strict: the build produced warnings:\n  ' + '\n  '.join(manifest['warnings']))
    return manifest

def serve(site, port):
    import functools, http.server
    h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(('127.0.0.1', port), h) as s:
        print(f"serving {site} on http://127.0.0.1:{s.server_address[1]}/  (Ctrl-C to stop)")
        s.serve_forever()

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--out', help='output folder (default: site/)')
    ap.add_argument('--strict', action='store_true', help='fail on any warning')
    ap.add_argument('--no-install', action='store_true', help='do not run npm to fetch MathJax if it is missing')
    ap.add_argument('--quiet', action='store_true')
    ap.add_argument('--serve', type=int, metavar='PORT', help='serve the built site on 127.0.0.1:PORT')
    a = ap.parse_args(argv)
    m = build(a.out, strict=a.strict, install=not a.no_install, quiet=a.quiet)
    if a.serve is not None: serve(m['site'], a.serve)

if __name__ == '__main__': main()
