"""Layer 2 — compiled kernels of the stand's hardware interface: hexapod inverse and forward
kinematics (:mod:`.hexapod`), the F/T sensing chain (:mod:`.sensing`), the wire codecs and
link checks the cycle runs (:mod:`.wire_kernels`), and the safety envelope with the safe stop
(:mod:`.safety`). Kernels may be called in the real-time loop; the classes that build their
arrays (``Hexapod``, ``Sensing``, ``SafetyMonitor``, ``SafeStop``) are built before it.
Imports the foundation, ``drivers`` (wire constants) and ``rt.dynamics``."""
