"""Layer 1 — the flight side's pure compiled kernels: spatial algebra (:mod:`.spatial`), the two
spacecraft with their mount modes (:mod:`.spacecraft`), the coupling of the two docking units
and the loop-delay compensation (:mod:`.coupling`). Hot path: every kernel here may be called
in the real-time loop; the Python builders next to them (``pack_*``, ``Spacecraft``) may not.
Imports only the foundation (``rt``, ``rt.jit``); see docs/architecture.md."""
