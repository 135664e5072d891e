"""Compile options of the controller's real-time kernels.

``KERNEL``: cached, and without numba's reference counting (``_nrt=False``). The kernels
allocate nothing (every array is the caller's), so they need no reference counting; with it
on, numba increfs and decrefs every array argument at the entry and exit of each kernel (a
call each, an atomic operation when the array has an owner). In the DYNAMICS kernel
(``rt.control.kernels.hil_cycle_packed``) that was ~300 calls per cycle, about 1700 of its
14.3k instructions; for the RK4 step alone it was ~40 % of its time (1.38 -> 0.80 us in
``dockstand bench --only spacecraft``). A kernel that does allocate fails to compile with
these options, which keeps allocation out of the hot path. Kernels that run once per
command (``rt.control.kernels.move_setup``) keep numba's defaults.
"""

KERNEL = dict(cache=True, _nrt=False)
