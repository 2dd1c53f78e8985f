"""The documentation site in a real browser, and README.md freshness.

`test_docs_site` builds the offline site strictly (`python docs/build.py --strict`: any warning, such as a
cell that mixes imports with other code, fails the build), serves it on 127.0.0.1 and drives headless
Debian Chromium through Playwright over every page: no console errors or failed requests, every internal
link (and #anchor) resolves, all math typeset by MathJax (no raw `$...$`, `\\(`, `\\[` in the visible
text, no MathJax errors), every image loaded with a non-zero size; the index, a method page and the API
page are screenshotted into docs/_screenshots/ (a CI artifact), with one equation and one figure of the method
page on their own. The search box is exercised once.

Needs: apt-get install -y chromium chromium-driver; pip install playwright (no browser download: the test
points it at /usr/bin/chromium); npm (docs/build.py installs MathJax from npm on first use).
Without chromium or playwright the test is SKIPPED locally, and FAILS when the environment variable CI is set.

`test_render_rules` checks, without a browser, what a page shows of each kind of cell; `test_strict_build_fails`
that the strict build fails on a cell that mixes imports with other code, planted in a copy of a notebook;
`test_readme_up_to_date` that README.md is what `python docs/readme.py` makes of nbs/index.ipynb.
"""
import functools, http.server, json, os, re, shutil, subprocess, sys, tempfile, threading, time
import urllib.error, urllib.parse, urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get('GEOTTER_DOCS_SITE', ROOT / 'site'))
SHOTS = ROOT / 'docs' / '_screenshots'
CHROMIUM = os.environ.get('GEOTTER_CHROMIUM') or shutil.which('chromium') or shutil.which('chromium-browser')
FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync']
METHOD_PAGES = ['geotter.html', 'graph.html', 'transport.html', 'cluster.html', 'baselines.html']
RAW_MATH = re.compile(r'(?<![\\$])\$[^$\s][^$\n]*?(?<![\s\\])\$(?!\d)|\\\(|\\\)|\\\[|\\\]|\$\$')

def _require_browser():
    missing = []
    if not CHROMIUM: missing.append('chromium (apt-get install -y chromium chromium-driver)')
    try: import playwright.sync_api  # noqa: F401
    except ImportError: missing.append('playwright (pip install playwright)')
    if missing:
        msg = 'the docs browser test needs ' + ' and '.join(missing)
        if os.environ.get('CI'): pytest.fail(msg + '; CI is set, so a missing browser is an error')
        pytest.skip(msg)

class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass

@pytest.fixture(scope='module')
def served_site():
    "Build the site, serve it on a free localhost port; yields (base URL, manifest)."
    _require_browser()
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, str(ROOT / 'docs' / 'build.py'), '--out', str(SITE), '--quiet', '--strict'],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, f"docs build failed (strict: any warning fails):\n{r.stdout[-3000:]}\n{r.stderr[-5000:]}"
    manifest = json.loads((ROOT / 'docs' / '_build' / 'manifest.json').read_text())
    print(f"docs build: {time.perf_counter() - t0:.1f}s, {len(manifest['pages'])} pages, "
          f"{len(manifest['warnings'])} warnings" + ''.join(f"\n  WARNING {w}" for w in manifest['warnings']))
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(_Quiet, directory=str(SITE)))
    th = threading.Thread(target=srv.serve_forever, daemon=True); th.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/", manifest
    srv.shutdown(); srv.server_close()

_PAGE_JS = r"""() => {
  const art = document.querySelector('article') || document.body;
  const clone = document.body.cloneNode(true);     // all visible text: page, navigation, table of contents
  clone.querySelectorAll('pre, code, mjx-container, script, style, .highlight').forEach(e => e.remove());
  return {
    n_math: art.querySelectorAll('mjx-container').length,
    untypeset: [...document.querySelectorAll('.arithmatex')].filter(s => !s.querySelector('mjx-container'))
                  .map(s => s.textContent.slice(0, 80)),
    // TeX errors, and undefined macros (shown in red by MathJax's noundefined extension)
    math_errors: [...document.querySelectorAll('mjx-merror, [data-mjx-error], [data-mml-node="merror"], mtext[mathcolor="red"]')]
                  .map(e => e.getAttribute('data-mjx-error') || e.textContent.slice(0, 80)),
    text: clone.textContent,
    imgs: [...art.querySelectorAll('img')].map(i => ({src: i.currentSrc || i.src, w: i.naturalWidth, h: i.naturalHeight})),
    hrefs: [...document.querySelectorAll('a[href]')].map(a => a.href),
    ids: [...document.querySelectorAll('[id]')].map(e => e.id),
  };
}"""

class _Links:
    "Internal link checker with a cache: each URL fetched once, #anchors looked up in the target's HTML."
    def __init__(self, base): self.base, self.cache = base, {}
    def _get(self, url):
        if url not in self.cache:
            try:
                with urllib.request.urlopen(url, timeout=10) as r: self.cache[url] = (r.status, r.read().decode('utf-8', 'replace'))
            except urllib.error.HTTPError as e: self.cache[url] = (e.code, '')
        return self.cache[url]
    def broken(self, page_url, hrefs, page_ids):
        bad = []
        for h in sorted(set(hrefs)):
            if not h.startswith(self.base): continue          # external: not ours to check offline
            url, _, frag = h.partition('#')
            status, html = self._get(url)
            if status != 200: bad.append(f"{h} -> HTTP {status}"); continue
            if frag and url.endswith('.html'):
                frag = urllib.parse.unquote(frag)
                ok = frag in page_ids if url == page_url.partition('#')[0] else \
                     re.search(r'\sid="?' + re.escape(frag) + r'["\s>]', html) is not None
                if not ok: bad.append(f"{h} -> no element with id {frag!r}")
        return bad

def _check_page(page, url, links):
    "Load `url`, wait for MathJax; return (problems, facts)."
    errors = []
    page.on('console', lambda m: m.type == 'error' and errors.append(f"console error: {m.text}"))
    page.on('pageerror', lambda e: errors.append(f"page error: {e}"))
    page.on('requestfailed', lambda r: errors.append(f"request failed: {r.url} ({r.failure})"))
    page.on('response', lambda r: r.status >= 400 and errors.append(f"HTTP {r.status}: {r.url}"))
    page.goto(url, wait_until='load')
    try:
        page.wait_for_function('() => window.MathJax && MathJax.startup && MathJax.startup.promise', timeout=20000)
        page.evaluate('() => MathJax.startup.promise')
    except Exception as e: errors.append(f"MathJax did not start or typeset: {str(e).splitlines()[0]}")
    facts = page.evaluate(_PAGE_JS)
    problems = list(errors)
    problems += [f"math not typeset: {s!r}" for s in facts['untypeset']]
    problems += [f"MathJax error: {s!r}" for s in facts['math_errors']]
    problems += [f"raw TeX in the visible text: ...{facts['text'][max(0, m.start() - 40):m.end() + 40]!r}..."
                 for m in RAW_MATH.finditer(facts['text'])][:5]
    problems += [f"image not loaded: {i['src']}" for i in facts['imgs'] if not (i['w'] > 0 and i['h'] > 0)]
    problems += [f"broken link: {b}" for b in links.broken(url, facts['hrefs'], set(facts['ids']))]
    return problems, facts

def test_docs_site(served_site):
    from playwright.sync_api import sync_playwright
    base, manifest = served_site
    pages = ['index.html'] + [p['html'] for p in manifest['pages'] if p['html'] != 'index.html'] + [manifest['api']]
    with_figs = [p['html'] for p in manifest['pages'] if p['figures'] > 0]
    method = next((p for p in METHOD_PAGES + with_figs if p in with_figs), None)
    assert method, f"no page has a figure (method pages: {', '.join(METHOD_PAGES)})"
    SHOTS.mkdir(parents=True, exist_ok=True)
    for f in SHOTS.glob('*.png'): f.unlink()
    links, report, t0 = _Links(base), {}, time.perf_counter()
    with sync_playwright() as p, tempfile.TemporaryDirectory(prefix='geotter-chromium-') as profile:
        ctx = p.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
                                                   viewport={'width': 1280, 'height': 900})
        try:
            for name in pages:
                page = ctx.new_page()
                problems, facts = _check_page(page, base + name, links)
                report[name] = problems
                stem = Path(name).stem
                if name in ('index.html', method, manifest['api']):
                    page.screenshot(path=str(SHOTS / f"{stem}.png"))
                if name == method:
                    assert facts['n_math'] > 0, f"{name}: no typeset equation"
                    assert len(facts['imgs']) > 0, f"{name}: no figure"
                    eq = page.locator('article mjx-container[display="true"]')       # a display equation,
                    eq = (eq if eq.count() else page.locator('article mjx-container')).first  # else inline math
                    eq.scroll_into_view_if_needed(); eq.screenshot(path=str(SHOTS / f"{stem}_equation.png"))
                    fig = page.locator('article img').first
                    fig.scroll_into_view_if_needed(); fig.screenshot(path=str(SHOTS / f"{stem}_figure.png"))
                    page.screenshot(path=str(SHOTS / f"{stem}_figure_context.png"))
                if name == manifest['api']:
                    assert page.locator('article .doc-heading').count() > 0, 'the API page lists no symbol'
                page.close()
            # the search box: Material's client-side index answers a query for a page title
            page = ctx.new_page()
            page.goto(base + 'index.html', wait_until='load')
            word = next(w for w in re.findall(r'[A-Za-z]{5,}', ' '.join(p['title'] for p in manifest['pages'])))
            page.locator('label.md-search__icon, .md-search__input').first.click()
            page.locator('input.md-search__input').press_sequentially(word, delay=30)
            page.wait_for_selector('.md-search-result__item', timeout=15000)
            page.screenshot(path=str(SHOTS / 'search.png'))
        finally:
            ctx.close()
    shots = ['index', Path(method).stem, f"{Path(method).stem}_equation", f"{Path(method).stem}_figure",
             f"{Path(method).stem}_figure_context", Path(manifest['api']).stem, 'search']
    missing = [f"{n}.png" for n in shots if not (SHOTS / f"{n}.png").exists() or (SHOTS / f"{n}.png").stat().st_size == 0]
    assert not missing, f"screenshots not written: {missing}"
    print(f"browser checks: {len(pages)} pages in {time.perf_counter() - t0:.1f}s; screenshots in {SHOTS}")
    bad = {k: v for k, v in report.items() if v}
    assert not bad, 'docs problems:\n' + '\n'.join(f"{k}:\n  " + '\n  '.join(v) for k, v in bad.items())

def test_readme_up_to_date():
    "README.md is what `python docs/readme.py` makes of nbs/index.ipynb."
    if not (ROOT / 'nbs' / 'index.ipynb').exists(): pytest.skip('nbs/index.ipynb does not exist yet')
    r = subprocess.run([sys.executable, str(ROOT / 'docs' / 'readme.py'), '--check'], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"README.md is stale: run `python docs/readme.py`\n{r.stdout[-3000:]}{r.stderr[-2000:]}"

def test_readme_commands_run_as_written():
    """Every command README.md quotes (in backticks or a shell block) that runs Python, pytest or nbdev names the
    repository's environment (`.venv/bin/`, which the install lines create), so that it runs as written from a fresh clone."""
    text = (ROOT / 'README.md').read_text()
    quoted = re.findall(r'`([^`\n]+)`', text) + re.findall(r'^(?:python|pytest|nbdev_)[^\n]*$', text, re.M)
    bare = [q for q in quoted if re.match(r'(python3? (?!-m venv)|pytest |nbdev_[a-z]+ )', q)]
    assert not bare, f"commands without .venv/bin/: {bare}"

def test_readme_outputs_are_what_its_code_prints():
    "Every printed output committed under a code cell of nbs/index.ipynb (the README's Quick start) is what the cells print."
    import contextlib, io, json
    ns, cells = {}, [c for c in json.loads((ROOT / 'nbs' / 'index.ipynb').read_text())['cells'] if c['cell_type'] == 'code']
    for c in cells:
        out = io.StringIO()
        with contextlib.redirect_stdout(out): exec(''.join(c['source']), ns)
        shown = ''.join(''.join(o['text']) for o in c['outputs'] if o.get('output_type') == 'stream' and o.get('name') == 'stdout')
        if c['outputs']: assert out.getvalue() == shown, f"README output is stale for:\n{''.join(c['source'])}\nprints:\n{out.getvalue()}"

def _docs_build():
    import importlib.util
    spec = importlib.util.spec_from_file_location('geotter_docs_build', ROOT / 'docs' / 'build.py')
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod

_PNG = ('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==')

def test_render_rules(tmp_path, monkeypatch):
    "What a page shows of each kind of cell (nbdev's directives), on a small notebook; no browser needed."
    monkeypatch.chdir(ROOT)     # the build chdirs to the repo root (nbdev's config); restored afterwards
    def code(src, outputs=()): return dict(cell_type='code', source=src, metadata={}, outputs=list(outputs), execution_count=None)
    def md(src): return dict(cell_type='markdown', source=src, metadata={})
    def out(kind, **kw): return dict(output_type=kind, **({'metadata': {}} if kind == 'display_data' else {}), **kw)
    cells = [code('#| default_exp toy'), code('#| export\nimport math'),
             md('# Toy\n\n> A toy page.\n\nIntro with $x^2$ and\n$$y=1$$\nmore text.'),
             code('#| export\ndef area(r:float, # radius\n        )->float: # the area\n    r"Area $\\pi r^2$ of a disc."\n    return math.pi * r * r'),
             code('#| hide\nsecret_cell = 1'),
             code('#| echo: false\nprint("only the output")', outputs=[out('stream', name='stdout', text='only the output\n')]),
             code('#| code-fold: true\nfolded_cell = 2'),
             code('\n'.join(['from fastcore.test import test_eq'] + [f'test_eq(area({i}), math.pi * {i}**2)' for i in range(14)])),
             md('See `area` above.'),
             code('plot_cell()', outputs=[out('display_data', data={'image/png': _PNG, 'text/plain': '<Figure>'})])]
    nb = tmp_path / '00_toy.ipynb'
    nb.write_text(json.dumps(dict(cells=cells, metadata={}, nbformat=4, nbformat_minor=5)))
    B, warns = _docs_build(), []
    page = B.process_notebook(nb, 'toy.md', tmp_path / 'src', warns.append)
    link = B.Linker()
    for name, a in page.anchors: link.add(name, page.rel_md, a)
    text = page.render(link)
    assert text.startswith('# Toy\n\nA toy page.\n{ .nb-lead }'), text[:200]
    assert 'default_exp' not in text and 'secret_cell' not in text and '#|' not in text
    assert '??? abstract "Imports"' in text                                   # import-only export cell: collapsed
    assert '### area { #area .doc-heading }' in text and 'Area $\\pi r^2$' in text   # show_doc of the export
    assert text.index('### area') < text.index('???+ abstract "Exported source"')    # docs, then the source
    assert 'print("only the output")' not in text and 'only the output' in text       # echo: false
    assert '??? example "Code"' in text and 'folded_cell' in text                     # code-fold: true
    assert '??? example "Tests (15 lines)"' in text                                   # long test cell collapsed
    assert 'See [`area`](#area) above.' in text                                       # backticked names link
    assert '\n\n$$y=1$$\n\n' in text                                                  # display math on its own block
    assert '![Figure 1](toy_files/' in text and len(list((tmp_path / 'src' / 'toy_files').glob('*.png'))) == 1
    assert any('title cell' in w for w in warns)                                      # nbdev_docs would drop the intro

def test_strict_build_fails(tmp_path):
    """The strict build fails on a cell that mixes imports with other code, and counts the Python warnings raised
    while it builds (a docstring section numpydoc does not know), planted in a copy of 00_core; a 'See Also'
    section does not warn."""
    mathjax = ROOT / 'docs' / 'node_modules'
    if not mathjax.exists() and not shutil.which('npm'):
        if os.environ.get('CI'): pytest.fail('MathJax is not installed and npm is missing; CI is set')
        pytest.skip('the docs build needs MathJax: npm install --prefix docs')
    (tmp_path / 'docs').mkdir(); (tmp_path / 'nbs').mkdir()
    for f in ('settings.ini', 'docs/build.py', 'docs/package.json', 'nbs/index.ipynb'): shutil.copy(ROOT / f, tmp_path / f)
    shutil.copytree(ROOT / 'geotter', tmp_path / 'geotter', ignore=shutil.ignore_patterns('__pycache__'))
    if mathjax.exists(): (tmp_path / 'docs' / 'node_modules').symlink_to(mathjax, target_is_directory=True)
    nb = json.loads((ROOT / 'nbs' / '00_core.ipynb').read_text())
    planted = dict(cell_type='code', metadata={}, outputs=[], execution_count=None,
                   source='# planted: imports mixed with code\nimport math\nplanted_value = math.pi')
    nb['cells'].insert(len(nb['cells']) - 1, planted)
    doc = ('#| export\ndef planted_sections():\n    """Planted.\n\n    Remarkz\n    -------\n    Not a numpydoc section.\n\n'
           '    See Also\n    --------\n    planted_value : a valid section.\n    """')
    nb['cells'].insert(len(nb['cells']) - 1, dict(cell_type='code', metadata={}, outputs=[], execution_count=None, source=doc))
    (tmp_path / 'nbs' / '00_core.ipynb').write_text(json.dumps(nb))
    env = {**os.environ, 'PYTHONPATH': str(tmp_path)}
    r = subprocess.run([sys.executable, str(tmp_path / 'docs' / 'build.py'), '--strict', '--quiet', '--out', str(tmp_path / 'site')],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode != 0, f"the strict build passed with a planted import-mixing cell:\n{r.stderr[-2000:]}"
    assert '--strict' in r.stderr and 'mixes imports' in r.stderr and '# planted' in r.stderr, r.stderr[-3000:]
    assert '00_core.ipynb: UserWarning: Unknown section Remarkz' in r.stderr, r.stderr[-3000:]
    assert 'Unknown section See' not in r.stderr, r.stderr[-3000:]
