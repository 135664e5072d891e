"""Layer 4 — what leaves the loop: the run log (:mod:`.runlog`: writer ring, reader), the
telemetry PUB and command ROUTER (:mod:`.telemetry`), and the packing of a compiled call's
arrays into one table (:mod:`.arraypack`). Knows nothing of the controller: the controller
owns a writer and a server and feeds them. Imports the layers below (docs/architecture.md)."""
