"""geotter: test-time label-distribution adaptation of frozen zero-shot classifiers (OTTER, GeoTTER and family).

The modules are generated from the notebooks in `nbs/` by `nbdev_export`; this file only gathers
their public names so that `from geotter import geotter, otter, ...` works.
"""
__version__ = "0.1.0"

from .core import *
from .baselines import *
from .transport import *
from .graph import *
from .cluster import *
from .method import *
from .synthetic import *
from .data import load_task, load_embeddings, extract
from .marginals import marginal_errors, prior_at_tv, partial_batches
from .calibration import posteriors, expected_calibration_error, calibration_scores, reliability_diagram, class_duals
from .prompts import ensemble_embeddings
from .defaults import data_driven_defaults, estimate_noise
from .streaming import StreamingGeoTTER, stream_predict, online_em_prior
