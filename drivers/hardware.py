"""The stand's hardware interfaces: a motion platform and a force/torque sensor as the controller
drives them, each a plugin chosen by the stand file (docs/platforms.md, "A new vendor").

As in ros2_control's hardware interfaces, a device has a lifecycle and a read/write pair:

* ``configure(link, stand)`` — take the stand file's link table and the stand (options
  checked, the transport built, nothing opened). Not real-time.
* ``activate()`` — open the link. Not real-time.
* ``read()`` — everything the device sent since the last cycle. **Real-time**: called once per
  cycle by the loop thread; never blocks, never allocates more than the bytes it returns.
* ``write(frame)`` — one command to the device. **Real-time**, as read.
* ``deactivate()`` — close the link. Not real-time.

**The canonical frames.** The controller's compiled cycle decodes STATUS frames and SENSOR_SAMPLE
frames of the stand's own framed protocol (drivers.framing, docs/protocols.md) and encodes its
command frames (POSE, LENGTHS, the state commands) in that protocol, inside the one compiled call
per cycle. A platform interface therefore speaks canonical frames to the controller: ``read()``
returns STATUS frames (concatenated), ``write()`` takes one command frame. For the stand's own
protocol that is the wire itself; a vendor's interface is an adapter between its wire format and
those frames (a robot's XML or protobuf in, a canonical STATUS out; a canonical POSE in, the
robot's correction out), so the compiled cycle is the same whatever the vendor. A sensor is
either ``framed`` (``read()`` returns canonical SENSOR_SAMPLE frames for the compiled scan) or
decodes its own records (``read()`` returns :class:`drivers.ft_sensor.FtSample` s: ATI's RDT).

**The registries.** ``[platform] protocol`` and ``[sensor] protocol`` in the stand file name an
entry point of the groups ``dockstand.platforms`` and ``dockstand.sensors`` (pyproject.toml); a
vendor's package registers its class there and nothing in the controller is edited
(:func:`platform_class`, :func:`sensor_class`).
"""
from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

PLATFORMS_GROUP = "dockstand.platforms"
SENSORS_GROUP = "dockstand.sensors"


class LinkedDevice:
    """What a platform and a sensor share: a ``protocol`` (its name in the stand file) and a
    ``transport`` (the link: counters, ``describe()``, ``status``, ``poll_messages``) that
    :meth:`open` / :meth:`close` open and close -- :meth:`activate` / :meth:`deactivate` of the
    lifecycle, and a ``with`` block -- and whose ``counters`` and ``link_up`` are the device's."""

    protocol = ""
    transport: Any = None
    # optional: a callable the loop may call instead of read (the same result, one call fewer:
    # e.g. the transport's own poll when the wire is the canonical frames)
    fast_read = None

    def configure(self, link: dict, stand) -> None:
        raise NotImplementedError

    def open(self) -> None:
        self.transport.open()

    def close(self) -> None:
        self.transport.close()

    def activate(self) -> None:
        self.open()

    def deactivate(self) -> None:
        self.close()

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def counters(self):
        return self.transport.counters

    @property
    def link_up(self) -> bool:
        return self.transport.link_up


class PlatformInterface(LinkedDevice):
    """A motion platform (see the module docstring). ``seq``: the sequence number the next
    command frame carries (:meth:`write` advances it)."""

    seq = 0
    fast_write = None     # as fast_read, for write

    def read(self) -> bytes:
        """Canonical STATUS frames received since the last call, concatenated (b"": none).
        Real-time."""
        raise NotImplementedError

    def write(self, frame) -> None:
        """Send one canonical command frame (bytes or a memoryview of the cycle's frame buffer).
        Real-time."""
        raise NotImplementedError


class SensorInterface(LinkedDevice):
    """A force/torque sensor (see the module docstring). ``framed``: :meth:`read` returns canonical
    SENSOR_SAMPLE frames (the compiled scan decodes and checks them); otherwise it returns the
    decoded samples (:class:`drivers.ft_sensor.FtSample`: counts, status). ``channels``: the raw
    channels a sample carries."""

    framed = True
    channels = 6

    def read(self):
        """Canonical frames (``framed``) or decoded samples since the last call. Real-time."""
        raise NotImplementedError


def _registered(group: str) -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=group)}


def platform_protocols() -> list[str]:
    """The platform protocols installed (``dockstand.platforms`` entry points)."""
    return sorted(_registered(PLATFORMS_GROUP))


def sensor_protocols() -> list[str]:
    """The sensor protocols installed (``dockstand.sensors`` entry points)."""
    return sorted(_registered(SENSORS_GROUP))


def platform_class(protocol: str) -> type[PlatformInterface]:
    """The platform interface registered as ``protocol``; ValueError naming the installed ones."""
    return _load(PLATFORMS_GROUP, protocol, "platform")


def sensor_class(protocol: str) -> type[SensorInterface]:
    """The sensor interface registered as ``protocol``; ValueError naming the installed ones."""
    return _load(SENSORS_GROUP, protocol, "sensor")


def _load(group: str, name: str, what: str):
    known = _registered(group)
    if name not in known:
        raise ValueError(f"no {what} interface {name!r} is installed; installed: {', '.join(sorted(known)) or 'none'} "
                         f"(entry points of {group!r})")
    return known[name].load()
