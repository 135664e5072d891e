"""Layer 5 — the real-time shell: clocks (:mod:`.clock`), the fixed-step loop (:mod:`.loop`),
the supervisor state machine (:mod:`.supervisor`), the cycle's compiled kernels
(:mod:`.kernels`, the one compiled call per DYNAMICS cycle), and the controller as a small
orchestrator over its parts (:mod:`.controller`, with :mod:`.phases`, :mod:`.links`,
:mod:`.recorder`, :mod:`.session`). Imports every layer below (docs/architecture.md)."""
