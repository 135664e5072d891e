"""A controller-side robot adapter (drivers.robot_platform) on a real loopback UDP port,
configured from a shipped robot stand file, and a plain socket that plays the robot: the
helpers of tests/drivers/test_kuka_rsi.py and test_abb_egm.py."""
from __future__ import annotations

import socket
import struct
from dataclasses import replace
from pathlib import Path

from drivers.hardware import platform_class
from drivers.motion_platform import Command, decode_status, encode_command
from rt.config.stand import load_stand
from rt.control.links import wait_readable

REPO = Path(__file__).resolve().parents[2]


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RobotPeer:
    """``adapter``: the stand's platform interface, activated on a free loopback port;
    ``robot``: the robot's socket. ``robot_options`` override ``[platform.robot]`` values (the
    parsed options' keys)."""

    def __init__(self, stand_file: str, **robot_options):
        stand = load_stand(REPO / "config" / "stands" / stand_file)
        self.port = free_udp_port()
        link = {"transport": "udp", "local_host": "127.0.0.1", "local_port": self.port, "framing": "raw"}
        self.stand = replace(stand, platform_link=link,
                             platform_options={**stand.platform_options, **robot_options})
        self.adapter = platform_class(self.stand.platform_protocol)()
        self.adapter.configure(dict(link), self.stand)
        self.adapter.activate()
        self.robot = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.robot.bind(("127.0.0.1", 0))
        self.robot.settimeout(1.0)
        self.cmd_seq = 0

    def close(self) -> None:
        self.adapter.deactivate()
        self.robot.close()

    def send(self, data: bytes, sock=None) -> None:
        """One datagram to the adapter, and wait until it is there."""
        (sock or self.robot).sendto(data, ("127.0.0.1", self.port))
        assert wait_readable(self.adapter.transport, __import__("time").monotonic() + 1.0)

    def read(self) -> list:
        """The adapter's read(): the STATUS frames it built, decoded."""
        out = self.adapter.read()
        frames = []
        while out:
            (n,) = struct.unpack_from("<H", out)
            st = decode_status(out[2:2 + n])
            assert st is not None, "the adapter built a STATUS frame the controller's decoder refuses"
            frames.append(st)
            out = out[2 + n:]
        return frames

    def command(self, command: Command, values=None) -> None:
        self.cmd_seq += 1
        self.adapter.write(encode_command(command, self.cmd_seq, 0, values))

    def answer(self) -> bytes:
        """The datagram the adapter sent the robot."""
        data, _ = self.robot.recvfrom(65536)
        return data
