"""The numba cache key covers exactly the kernel sources (rt/__init__.py): every file that
compiles kernels and what the kernels of rt, drivers, sim_stand import, however indirectly —
not the shell, so an edit of the controller's command path or the console keeps the compiled
kernels."""
from __future__ import annotations

import rt


def test_the_key_covers_the_kernels_and_their_imports_not_the_shell():
    ks = set(rt.kernel_sources(rt._stamps()))
    for f in ("rt/control/kernels.py", "rt/stand/safety.py", "rt/stand/wire_kernels.py", "rt/dynamics/spacecraft.py",
              "sim_stand/contact/kernel.py", "sim_stand/world.py", "drivers/framing.py"):
        assert f in ks, f
    for f in ("rt/control/controller.py", "rt/record/telemetry.py", "rt/control/operator_port.py",
              "rt/console/app.py", "rt/analysis/report.py", "sim_stand/emulator.py", "rt/operator/commands.py"):
        assert f not in ks, f
