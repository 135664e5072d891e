"""Tools — post-test analysis of run logs: ``dockstand compare`` (:mod:`.compare`). Never
called in the real-time loop; reads logs through :mod:`rt.record.runlog`."""
