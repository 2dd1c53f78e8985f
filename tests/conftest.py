"""Shared test settings: one bounded, derandomized Hypothesis profile for CI and local runs, and the exact solver's
fallback set to 'raise'.

`HYPOTHESIS_PROFILE=thorough pytest tests` draws more examples (not derandomized) for a deeper local search.

`geotter.exact.emd` returns POT's plan, with a warning, if its own solver cannot certify its plan optimal
(`fallback='warn'`, the default for users). Under test every call raises instead (`GEOTTER_EMD_FALLBACK=raise`, read
by `emd` when its `fallback` argument is not given, here and in every notebook the tests run in this process), so
that a fault in the solver fails the tests instead of being hidden by POT."""
import os
from pathlib import Path
from hypothesis import settings, HealthCheck

settings.register_profile('ci', max_examples=40, derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile('thorough', max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'ci'))
os.environ['GEOTTER_EMD_FALLBACK'] = 'raise'

# The real image-logit tasks (CIFAR-10 logits of four backbones) live in a data directory (`GEOTTER_DATA`); where the
# project's shared data folder sits beside the repository, the tests use it.
_shared = Path(__file__).resolve().parents[2] / 'shared' / 'data'
if not os.environ.get('GEOTTER_DATA') and _shared.is_dir(): os.environ['GEOTTER_DATA'] = str(_shared)
