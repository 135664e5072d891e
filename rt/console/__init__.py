"""The operator console (``dockstand console``, docs/console.md): a Textual app over the
controller's telemetry PUB and command ROUTER, live or replaying a run log. Nothing here runs
in, or adds work to, the real-time loop."""
