"""Steps of a console under textual's Pilot shared by the replay tests (imported by name, as
live_rig is)."""
from __future__ import annotations


async def play_to_end(app, pilot):
    """Play a replay at x10, seeking +10 s until its source has ended (at most 200 seeks)."""
    await pilot.press("plus", "plus", "plus", "plus")          # x10
    for _ in range(200):
        if app.source.ended:
            break
        await pilot.press("right_square_bracket")           # seek +10 s
    await pilot.pause(0.3)


def replay_in_console(src, steps, settle_s: float = 0.2):
    """The console (180 x 55, 30 Hz refresh) on the replay source ``src`` under Pilot: after
    ``settle_s`` s, ``await steps(app, pilot)``. Returns the app (closed)."""
    import asyncio

    from rt.console.app import ConsoleApp

    app = ConsoleApp(src, refresh_hz=30)

    async def go():
        async with app.run_test(size=(180, 55)) as pilot:
            await pilot.pause(settle_s)
            await steps(app, pilot)
    asyncio.run(go())
    return app
