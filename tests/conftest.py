import os

import hypothesis

# Deterministic property tests: fixed seed (derandomize), no deadline (numba compiles on first call).
hypothesis.settings.register_profile("dockstand", derandomize=True, deadline=None, max_examples=200,
                                     print_blob=True)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dockstand"))
