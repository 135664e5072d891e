"""Regenerate the console's screenshots in docs/img (docs/console.md): a controller run on the
kinematic rig (lockstep, a latching damper as the contact) recorded to a run log, replayed
through the console, saved as SVG by Textual's own screenshot support at a few moments; a
docking on the lockstep emulator half a second after capture; a run tripped by a platform
fault.

    python docs/scripts/console_screenshots.py
"""
from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def main() -> None:
    from bench.console import _record_log
    from rt.console.app import ConsoleApp
    from rt.console.source import ReplaySource

    out = REPO / "docs" / "img"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        src = ReplaySource(_record_log(Path(tmp)))
        app = ConsoleApp(src, refresh_hz=30)

        async def go():
            async with app.run_test(size=(180, 50)) as pilot:
                src.paused = True
                # into the dynamics, in contact: the last second of the recording
                src.seek(1e9)
                src.seek(-0.4)
                src.ended = False
                for _ in range(40):
                    await pilot.pause(0.03)
                app.save_screenshot("console_replay.svg", path=str(out))
                print(f"wrote {out / 'console_replay.svg'}")
                await pilot.press("a")     # a replay sends nothing: the message line says so
                await pilot.pause(0.2)
                app.save_screenshot("console_replay_refused.svg", path=str(out))
                print(f"wrote {out / 'console_replay_refused.svg'}")
        asyncio.run(go())
    capture_screenshot(out)
    trip_screenshot(out)


def capture_screenshot(out: Path) -> None:
    """The console replaying a docking on the emulated stand (the nominal case started at
    -0.65 m, 4 s) half a second after the mechanism reported capture."""
    import numpy as np

    from rt.console.app import ConsoleApp
    from rt.console.source import ReplaySource
    from rt.record.runlog import read_log
    from sim_stand.cli import REPO as ROOT, run_demo

    with tempfile.TemporaryDirectory() as tmp:
        case = Path(tmp) / "nominal_short.toml"
        text = (ROOT / "config" / "cases" / "nominal.toml").read_text()
        text = text.replace("../vehicles/", f"{ROOT}/config/vehicles/").replace("duration_s = 10.0", "duration_s = 4.0")
        case.write_text(text.replace("position_m = [-0.70,", "position_m = [-0.65,"))
        log = run_demo(case, log_dir=Path(tmp) / "runs")["log"]
        rec = read_log(log, ["cycle", "platform_inputs"])
        k = int(np.argmax(rec.fields["platform_inputs"].astype(np.int64) & 1))
        rate = float(rec.header.get("rate_hz") or 1000.0)
        src = ReplaySource(log)
        app = ConsoleApp(src, refresh_hz=30)

        async def go():
            async with app.run_test(size=(180, 50)) as pilot:
                src.paused = True
                src.seek(-1e9)
                src.seek(float(rec.fields["cycle"][k] - rec.fields["cycle"][0]) / rate + 0.5)
                src.ended = False
                for _ in range(40):
                    await pilot.pause(0.03)
                print(f"capture at record {k}; shown: record {src.index + 1} of {src.n}")
                app.save_screenshot("console_capture.svg", path=str(out))
                print(f"wrote {out / 'console_capture.svg'}")
        asyncio.run(go())


def trip_screenshot(out: Path) -> None:
    """The console replaying a kinematic-rig run whose platform reported FAULT (WATCHDOG) in the
    dynamics: the SAFE header with the trip's run time, the message line, the named fault."""
    from drivers.motion_platform import PlatformState
    from rt.console.app import ConsoleApp
    from rt.console.source import ReplaySource
    from rt.control.controller import Phase
    from sim_stand.kinematic_rig import Rig

    with tempfile.TemporaryDirectory() as tmp:
        rig = Rig(Path(tmp), contact=(-0.2, 2000.0))
        rig.w_S[2] = -1500.0            # the unit's weight on the sensor, taken out by the arm's tare
        try:
            rig.arm_and_start()
            rig.run_until(lambda c: c.phase is Phase.DYNAMICS, 5000)
            rig.run(1200)
            rig.state, rig.fault = PlatformState.FAULT, 1
            rig.run_until(lambda c: c.phase is Phase.FROZEN, 5000)
            rig.run(5)
        finally:
            rig.close()
        src = ReplaySource(rig.ctl.log_path)
        app = ConsoleApp(src, refresh_hz=30)

        async def go():
            async with app.run_test(size=(180, 50)) as pilot:
                src.paused = True
                src.seek(1e9)
                src.ended = False
                src.paused = False
                for _ in range(40):
                    await pilot.pause(0.03)
                app.save_screenshot("console_trip.svg", path=str(out))
                print(f"wrote {out / 'console_trip.svg'}")
        asyncio.run(go())


if __name__ == "__main__":
    main()
