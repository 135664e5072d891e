import os

import rt  # noqa: F401  (numba's cache location is set before any test module imports numba)

import hypothesis

# Deterministic property tests: fixed seed (derandomize), no deadline (numba compiles on first call).
hypothesis.settings.register_profile("dockstand", derandomize=True, deadline=None, max_examples=200,
                                     print_blob=True)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dockstand"))
