"""The stand emulator's and the digital reference's subcommands (``emulate``, ``simulate``,
``demo``; docs/cli.md), registered with the CLI through the ``dockstand.commands`` entry
points. :mod:`sim_stand.cli` (and the kernels) are imported only when a command runs."""
from __future__ import annotations

import argparse


def add_parsers(sub) -> None:
    """emulate / simulate / demo; sim_stand.cli is imported only when one runs."""
    def lazy(name):
        def f(args):
            import sim_stand.cli as SC
            return getattr(SC, name)(args)
        return f

    e = sub.add_parser("emulate", help="run the stand emulator on the stand config's endpoints")
    e.add_argument("--stand", help="default: $DOCKSTAND_STAND, ./config/stand.toml, the installed one")
    e.add_argument("--emulator", default=None, help="emulator config (default config/emulator/default.toml)")
    e.add_argument("--case", help="a case whose contact model the emulated hardware should carry")
    e.add_argument("--lockstep", action="store_true", help="advance one period per platform frame")
    e.add_argument("--fault", action="append", metavar="NAME@T[:T_END]",
                   help="inject a fault from emulator time T s (until T_END s): sensor_dropout, garbage, "
                        "sensor_frozen, sensor_saturated, platform_fault, platform_lag, platform_slower, link_loss, "
                        "status_loss, load_spike, robot_silent, robot_stop, mechanism_fault, latch_inputs_stuck (repeatable)")
    e.add_argument("--sensor-endpoint", help="override the sensor link's zmq endpoint")
    e.add_argument("--platform-endpoint", help="override the platform link's zmq endpoint")
    e.add_argument("--mechanism-port", type=int, default=None,
                   help="serve the mechanism's control unit ([mechanism_io]) on this loopback TCP port instead")
    e.add_argument("--duration", type=float, help="stop after this much emulated time (s)")
    e.add_argument("--summary", help="write a JSON summary here on exit")
    e.add_argument("--seed", type=int, default=None,
                   help="the sensor noise's random seed (default: the emulator config's [sensor] seed, 1)")
    e.add_argument("--sched-fifo", type=int, default=0, metavar="PRIO",
                   help="run the emulator at SCHED_FIFO priority PRIO (1..99; as hardware with its own CPU "
                        "would be: not starved by other processes); refused -> reported in notes")
    e.add_argument("--world", choices=["stand", "free"], default="stand",
                   help="stand: mechanism and contacts (default); free: the platform alone, nothing in contact")
    e.set_defaults(func=lazy("cmd_emulate"))

    s = sub.add_parser("simulate", help="all-digital reference run of a case (same kernels, same log format)")
    s.add_argument("--case", default=None, help="default config/cases/nominal.toml")
    s.add_argument("--stand", default=None, help="default: $DOCKSTAND_STAND, ./config/stand.toml, the installed one")
    s.add_argument("--emulator", default=None)
    s.add_argument("--log", help="run-log path (default <the stand's run-log directory>/<time>-<case>-digital.dslog)")
    s.add_argument("--stand-conditions", action="store_true",
                   help="as on the stand: the mechanism in 1 g, its weight and inertia carried by the platform "
                        "(the vehicles feel the contact wrench only); default: orbit, 0 g, mechanism inertia coupled")
    s.add_argument("--mechanism-from", metavar="HIL_LOG", default=None,
                   help="with --stand-conditions: start the mechanism in the state it had at the start of this HIL "
                        "run's dynamics (its arming and run-up replayed on the emulated stand), the reference to "
                        "compare that run with")
    s.add_argument("--log-rate", metavar="HZ", type=float, default=1000.0,
                   help="log rows per second (default 1000; up to the physics rate, e.g. 10000 to compare a short "
                        "impact's peak over the HIL run's sampling phase: dockstand compare)")
    s.add_argument("--integrator", choices=("auto", "rosw", "rk23", "semi_implicit_euler", "rk4"), default=None,
                   help="default: the emulator config's digital_integrator (auto: rosw for a leg mechanism, rk23 for "
                        "a tree), with --stand-conditions the emulated stand's own (semi-implicit Euler at the physics "
                        "rate); docs/models/world.md §6")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=lazy("cmd_simulate"))

    d = sub.add_parser("demo", help="closed-loop docking: emulator (lockstep) + controller, with a summary")
    d.add_argument("--case", default=None, help="default config/cases/nominal.toml")
    d.add_argument("--stand", default=None, help="default: $DOCKSTAND_STAND, ./config/stand.toml, the installed one")
    d.add_argument("--emulator", default=None)
    d.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    d.add_argument("--no-compensation", action="store_true")
    d.add_argument("--no-filter", action="store_true", help="sensing without the low-pass (and its delay)")
    d.add_argument("--fault", action="append", metavar="NAME@T", help="inject an emulator fault (see emulate)")
    d.add_argument("--log-dir", default=None, help="where the run logs go (default: the stand's [runlog] directory, else $DOCKSTAND_DATA/runs or ~/.local/share/dockstand/runs)")
    d.set_defaults(func=lazy("cmd_demo"))

    c = sub.add_parser("calibrate-loop", help="the elastic-rod calibration of the HIL loop (undamped and damped): "
                                              "CoR vs the closed form, the identified delay, the energy audit")
    c.add_argument("--stand", default=None, help="default: $DOCKSTAND_STAND, ./config/stand.toml, the installed one")
    c.add_argument("--emulator", default=None, help="default config/emulator/elastic_rod.toml")
    c.add_argument("--identify", choices=["off", "monitor", "feed"], default=None,
                   help="override the stand's [delays] identify (the fidelity setting: feed)")
    c.add_argument("--contact-gate", action=argparse.BooleanOptionalAction, default=None,
                   help="override the stand's [sensor.contact_gate] enabled (the fidelity setting: on)")
    c.add_argument("--predictor", choices=["acceleration", "jerk"], default=None,
                   help="override the stand's [delays] predictor (the fidelity setting: jerk)")
    c.add_argument("--bound-pct", type=float, default=0.05, help="the CoR error the verdict allows (default 0.05 %%)")
    c.add_argument("--log-dir", default=None)
    c.add_argument("--json", action="store_true")
    def calibrate(args):
        from sim_stand.calibration import cmd_calibrate_loop
        return cmd_calibrate_loop(args)
    c.set_defaults(func=calibrate)
