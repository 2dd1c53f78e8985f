"""Shared test settings: one bounded, derandomized Hypothesis profile for CI and local runs.

`HYPOTHESIS_PROFILE=thorough pytest tests` draws more examples (not derandomized) for a deeper local search."""
import os
from hypothesis import settings, HealthCheck

settings.register_profile('ci', max_examples=40, derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile('thorough', max_examples=500, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'ci'))
