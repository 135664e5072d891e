"""Tools — the operator's commands: ``dockstand run`` (the controller as a service, with
systemd notification, :mod:`.sdnotify`) and ``dockstand ctl`` (the command client),
registered with the CLI through the ``dockstand.commands`` entry points (:mod:`.commands`).
Never called in the real-time loop."""
