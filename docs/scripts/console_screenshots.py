"""Regenerate the console's screenshots in docs/img (docs/console.md): a controller run on the
kinematic rig (lockstep, a latching damper as the contact) recorded to a run log, replayed
through the console, saved as SVG by Textual's own screenshot support at a few moments.

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
                await pilot.press("l")     # a replay sends nothing: the message line says so
                await pilot.pause(0.2)
                app.save_screenshot("console_replay_refused.svg", path=str(out))
                print(f"wrote {out / 'console_replay_refused.svg'}")
        asyncio.run(go())


if __name__ == "__main__":
    main()
