"""The controller's links after the compiled cycle (docs/controller.md, "Cycle"): an RDT sensor
over a real UDP socket on 127.0.0.1 (the driver decodes the records), frames the compiled scan
refuses counted as the drivers count them, and exactly one well-formed platform frame per cycle
with consecutive sequence numbers."""
from __future__ import annotations

import math
import struct
import time
import zlib

import numpy as np

from drivers.ft_sensor import FtSensor, RdtDevice, encode_sensor_frame
from drivers.motion_platform import Command, MotionPlatform, MotionPlatformDevice, PlatformState, encode_status
from drivers.transport import memory_pair, open_transport
from rt.control import kernels as CK
from rt.config.stand import load_stand
from rt.control.controller import Controller
from rt.control.links import wait_readable
from rt.control.controller import Phase
from sim_stand.kinematic_rig import NOMINAL, STAND, Rig


def test_rdt_sensor_over_udp_feeds_the_cycle(tmp_path):
    stand = load_stand(STAND)
    cpu = stand.sensing.counts_per_unit
    dev = RdtDevice(open_transport("udp", local_host="127.0.0.1", local_port=0), records_per_packet=1)
    sensor = FtSensor.from_config({"protocol": "rdt", "host": "127.0.0.1", "port": dev.transport.local_address[1],
                                   "counts_per_force": float(cpu[0]), "counts_per_torque": float(cpu[3])})
    p_host, p_dev = memory_pair("links-rdt-platform", capacity=1000)
    pdev = MotionPlatformDevice(p_dev)
    ctl = Controller(stand, sensor=sensor, platform=MotionPlatform(p_host, heartbeat_s=0.0), telemetry=False,
                     runlog=False, log_dir=tmp_path)
    try:
        ctl.open()
        ctl.warm_up()
        t_end = time.monotonic() + 5.0
        while not dev.streaming and time.monotonic() < t_end:   # the driver asked for streaming at open
            dev.poll()
            time.sleep(1e-3)
        assert dev.streaming
        home = stand.hexapod.home
        seqs = []
        n = 30
        for k in range(n):
            counts = [k, -2 * k, 3 * k + 5, 7, -11, 13 * k]
            assert dev.publish(counts) == 1
            pdev.send_status(PlatformState.ENGAGED, 0, 0, home, np.full(6, 1.1), device_time=k * 1e-3)
            assert wait_readable(sensor.transport, time.monotonic() + 2.0)
            t_ns = (k + 1) * 1_000_000
            ctl.read(k, t_ns)
            ctl.update(k, t_ns)
            ctl.write(k, t_ns)
            assert ctl.sensing.raw.tolist() == counts
            row = ctl.row
            ix = ctl._ix
            assert row[ix["raw"]:ix["raw"] + 6].tolist() == counts and row[ix["new_sample"]] == 1.0
            cmds = pdev.poll()
            assert [c.command for c in cmds] == [Command.HEARTBEAT]     # IDLE: one heartbeat per cycle
            seqs.append(cmds[0].seq)
        assert seqs == list(range(n))
        assert ctl.samples == n and ctl.links_seen()
        assert ctl.platform_state() is PlatformState.ENGAGED
        assert ctl.meas_pose.tolist() == home.tolist()
        # a cycle without a sample: new_sample drops, the counts stay the newest
        ctl.read(n, (n + 1) * 1_000_000)
        ctl.update(n, (n + 1) * 1_000_000)
        ctl.write(n, (n + 1) * 1_000_000)
        assert ctl.row[ctl._ix["new_sample"]] == 0.0 and ctl.sensing.raw[5] == 13 * (n - 1)
    finally:
        ctl.close()
        dev.transport.close()


def _recrc(frame: bytearray) -> bytes:
    frame[-4:] = struct.pack("<I", zlib.crc32(bytes(frame[2:-4])))
    return bytes(frame)


def test_frames_the_scan_refuses_are_counted_and_skipped(tmp_path):
    rig = Rig(tmp_path)
    try:
        c = rig.ctl
        c.warm_up()
        rig.run(5)
        pose0 = c.meas_pose.copy()
        s_bad, p_bad = c.sensor.counters.malformed, c.platform.counters.malformed
        # a well-formed frame of 8 gauges on a 6-gauge link, and a STATUS with a NaN pose: both
        # pass the transport's CRC and sequence checks, and the drivers' decoders refuse them
        rig.sdev.seq += 1000          # past the rig's own samples: the sequence check passes it
        eight = encode_sensor_frame(rig.sdev.seq, 0, list(range(8)))
        rig.sdev.seq += 1
        rig.s_dev_tr.send(eight)
        nan_pose = pose0.copy()
        nan_pose[0] = math.nan
        rig.pdev.seq += 1000
        rig.p_dev_tr.send(encode_status(rig.pdev.seq, 0, PlatformState.ENGAGED, 0, 0, nan_pose, np.ones(6)))
        rig.pdev.seq += 1
        state = bytearray(encode_status(rig.pdev.seq, 0, PlatformState.ENGAGED, 0, 0, pose0, np.ones(6)))
        rig.pdev.seq += 1
        state[18] = 42                # no such platform state
        rig.p_dev_tr.send(_recrc(state))
        rig.run(1)
        assert c.sensor.counters.malformed == s_bad + 1
        assert c.platform.counters.malformed == p_bad + 2
        assert np.isfinite(c.meas_pose).all()
        assert c.platform_state() is PlatformState.IDLE        # the rig's own STATUS of that cycle
        assert c.ins[CK.IN_CRC_NEW] == 1.0                     # a refused sample is a corrupt frame (CRC_BURST)
        crc_new = []
        for _ in range(5):
            rig.run(1)
            crc_new.append(c.ins[CK.IN_CRC_NEW])
        assert crc_new == [0.0] * 5                            # counted once, and never taken back
        assert c.sensor.counters.malformed == s_bad + 1 and c.supervisor.state.name == "IDLE"
        assert c.row[c._ix["crc_errors"]] == 0.0               # the log's column counts CRC errors alone
    finally:
        rig.close()


def test_a_stream_of_refused_samples_trips_the_corrupt_burst(tmp_path):
    """One well-formed but refused sample (8 gauges on a 6-gauge link) next to every good one,
    while ARMED: the corrupt-frame window fills and CRC_BURST trips, as for bad CRCs."""
    rig = Rig(tmp_path)
    try:
        c = rig.ctl
        c.warm_up()
        rig.run(3)
        assert c.command("load_case", case=str(NOMINAL)).ok and c.command("arm").ok
        rig.run_until(lambda k: k.phase is Phase.READY, 20000)
        gate = rig.gate

        def gate_with_refused(deadline_ns):
            gate(deadline_ns)
            rig.s_dev_tr.send(rig.sdev.encode_next(list(range(8))))

        rig.clock.gate = gate_with_refused
        rig.run_until(lambda k: k.supervisor.safe, 50)
        assert c.supervisor.trip_reason == "CRC_BURST", (c.supervisor.state, c.trip_text)
        assert c.sensor.counters.crc_errors == 0 and c.sensor.counters.malformed > 0
    finally:
        rig.close()
