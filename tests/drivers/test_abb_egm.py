"""ABB EGM (drivers.abb_egm, drivers.robot_platform) against ABB's egm.proto compiled afresh at
test time by grpcio-tools' protoc into a pool of its own: what our module encodes, the
independent one decodes, and the other way round; a protobuf of the wrong type and broken
datagrams are counted by name, never raised; the adapter on a real socket."""
from __future__ import annotations

import ast
import importlib.resources
import math
import re
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from scipy.spatial.transform import Rotation

from drivers import abb_egm as EGM
from drivers import robot_pose as RP
from drivers.motion_platform import Command, FaultCode, PlatformState
from tests.drivers.robot_peer import RobotPeer

PROTO_DIR = Path(EGM.__file__).with_name("egm")


@pytest.fixture(scope="module")
def independent(tmp_path_factory):
    """ABB's schema compiled by protoc now (not the shipped egm_pb2), its messages built in a
    descriptor pool of their own: ``(classes by name, the FileDescriptorProto, the module
    protoc generated)``."""
    from grpc_tools import protoc
    out = tmp_path_factory.mktemp("egm_protoc")
    include = str(importlib.resources.files("grpc_tools") / "_proto")
    rc = protoc.main(["protoc", f"-I{PROTO_DIR}", f"-I{include}", f"--descriptor_set_out={out / 'egm.pb'}",
                      f"--python_out={out}", "egm.proto"])
    assert rc == 0, "protoc could not compile drivers/egm/egm.proto"
    assert (out / "egm_pb2.py").is_file()
    fds = descriptor_pb2.FileDescriptorSet.FromString((out / "egm.pb").read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in fds.file:
        pool.Add(f)
    names = ("EgmRobot", "EgmSensor", "EgmSensorPathCorr", "EgmHeader")
    classes = {n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"abb.egm.{n}")) for n in names}
    return classes, fds.file[0], out / "egm_pb2.py"


def test_the_shipped_module_is_the_schema_compiled_now(independent):
    _, fdp, fresh = independent
    # the descriptor protoc embeds in the module it generates now is the shipped module's
    lit = re.search(rb"AddSerializedFile\((b'.*?')\)", fresh.read_bytes(), re.S)
    assert lit is not None
    assert ast.literal_eval(lit.group(1).decode("ascii")) == EGM.egm_pb2.DESCRIPTOR.serialized_pb
    # and the descriptor set's file is the same schema (its json names filled in)
    shipped = descriptor_pb2.FileDescriptorProto.FromString(EGM.egm_pb2.DESCRIPTOR.serialized_pb)
    for m in fdp.message_type:
        for f in m.field:
            f.ClearField("json_name")
    assert shipped == fdp
    assert [m.name for m in fdp.message_type][-3:] == ["EgmRobot", "EgmSensor", "EgmSensorPathCorr"]


def _q(deg_xyz):
    x, y, z, w = Rotation.from_euler("xyz", deg_xyz, degrees=True).as_quat()
    return (w, x, y, z)


def test_our_robot_message_decodes_with_the_independent_schema(independent):
    cls = independent[0]
    act = ((1.25, -0.5, 0.875), _q((10.0, -20.0, 30.0)))
    plan = ((1.2505, -0.5, 0.875), _q((10.0, -20.0, 31.0)))
    m = cls["EgmRobot"].FromString(EGM.encode_robot(4711, 3_600_004, act, plan))
    assert (m.header.seqno, m.header.tm, m.header.mtype) == (4711, 3_600_004, 2)        # MSGTYPE_DATA
    for got, want in ((m.feedBack.cartesian, act), (m.planned.cartesian, plan)):
        assert (got.pos.x, got.pos.y, got.pos.z) == pytest.approx((1250.0, -500.0, 875.0), abs=0.6)
        assert (got.orient.u0, got.orient.u1, got.orient.u2, got.orient.u3) == want[1]   # scalar first
    assert m.planned.cartesian.pos.x == pytest.approx(1250.5)
    assert m.motorState.state == 1 and m.mciState.state == 3 and m.rapidExecState.state == 2
    stopped = cls["EgmRobot"].FromString(EGM.encode_robot(1, 0, act, None, running=False))
    assert stopped.motorState.state == 2 and stopped.mciState.state == 2 and not stopped.HasField("planned")


def test_our_answer_decodes_with_the_independent_schema(independent):
    cls = independent[0]
    target = ((0.1, 0.2, 0.3), _q((0.0, 90.0, 0.0)))
    m = cls["EgmSensor"].FromString(EGM.encode_sensor(12, 3_600_008, target))
    assert (m.header.seqno, m.header.tm, m.header.mtype) == (12, 3_600_008, 3)          # MSGTYPE_CORRECTION
    c = m.planned.cartesian
    assert (c.pos.x, c.pos.y, c.pos.z) == pytest.approx((100.0, 200.0, 300.0))
    assert (c.orient.u0, c.orient.u1, c.orient.u2, c.orient.u3) == target[1]
    hold = cls["EgmSensor"].FromString(EGM.encode_sensor(13, 0, None))
    assert not hold.HasField("planned") and hold.header.mtype == 3


def _independent_robot(cls, seqno=9, tm=123456, pos=(1000.0, 2000.0, 1500.0), orient=(0.5, 0.5, 0.5, 0.5)):
    """An EgmRobot as a robot controller fills it, with fields our decoder passes over."""
    m = cls["EgmRobot"]()
    m.header.seqno, m.header.tm, m.header.mtype = seqno, tm, 2
    fb = m.feedBack
    fb.cartesian.pos.x, fb.cartesian.pos.y, fb.cartesian.pos.z = pos
    fb.cartesian.orient.u0, fb.cartesian.orient.u1, fb.cartesian.orient.u2, fb.cartesian.orient.u3 = orient
    fb.cartesian.euler.x, fb.cartesian.euler.y, fb.cartesian.euler.z = 90.0, 0.0, 90.0
    fb.joints.joints.extend([0.0, -10.0, 20.0, 0.0, 80.0, 0.0])
    fb.time.sec, fb.time.usec = 1_700_000_000, 250
    m.planned.cartesian.pos.x, m.planned.cartesian.pos.y, m.planned.cartesian.pos.z = pos
    p = m.planned.cartesian.orient
    p.u0, p.u1, p.u2, p.u3 = orient
    m.motorState.state, m.mciState.state, m.rapidExecState.state = 1, 3, 2
    m.mciConvergenceMet = True
    m.measuredForce.force.extend([1.0, 2.0, 3.0, 0.1, 0.2, 0.3])
    m.utilizationRate = 12.5
    return m


def test_the_independent_robot_message_decodes_with_ours(independent):
    cls = independent[0]
    st = EGM.decode_robot(_independent_robot(cls).SerializeToString())
    assert not isinstance(st, str)
    assert (st.stamp_ms, st.seq, st.running) == (123456.0, 9, True)
    assert st.actual == ((1.0, 2.0, 1.5), (0.5, 0.5, 0.5, 0.5)) and st.commanded == st.actual
    m = _independent_robot(cls)
    m.mciState.state = 2                                         # MCI_STOPPED
    assert EGM.decode_robot(m.SerializeToString()).running is False
    s = cls["EgmSensor"]()
    s.header.seqno, s.header.tm, s.header.mtype = 5, 77, 3
    c = s.planned.cartesian
    c.pos.x, c.pos.y, c.pos.z = 10.0, -20.0, 30.0
    c.orient.u0, c.orient.u1, c.orient.u2, c.orient.u3 = 0.0, 0.0, 0.0, 1.0
    assert EGM.decode_sensor(s.SerializeToString()) == (5, 77, ((0.01, -0.02, 0.03), (0.0, 0.0, 0.0, 1.0)))


def test_a_protobuf_of_the_wrong_type_and_broken_datagrams_are_named(independent):
    cls = independent[0]
    sensor = cls["EgmSensor"]()
    sensor.header.seqno, sensor.header.mtype = 1, 3
    assert EGM.decode_robot(sensor.SerializeToString()) == "wrong message type (MSGTYPE_CORRECTION, not MSGTYPE_DATA)"
    pc = cls["EgmSensorPathCorr"]()
    pc.header.mtype = 4
    pc.pathCorr.pos.x = pc.pathCorr.pos.y = pc.pathCorr.pos.z = 0.0
    pc.pathCorr.age = 3
    assert EGM.decode_robot(pc.SerializeToString()) == "wrong message type (MSGTYPE_PATH_CORRECTION, not MSGTYPE_DATA)"
    robot = _independent_robot(cls).SerializeToString()
    # a full EgmRobot is not even an EgmSensor on the wire (its field 3, planned, is no speedRef);
    # one with a header and the feedBack only parses, and its type names it
    assert EGM.decode_sensor(robot) == "truncated, or not an EgmSensor"
    small = cls["EgmRobot"]()
    small.header.mtype = 2
    small.feedBack.cartesian.CopyFrom(_independent_robot(cls).feedBack.cartesian)
    assert EGM.decode_sensor(small.SerializeToString()) == "wrong message type (MSGTYPE_DATA, not MSGTYPE_CORRECTION)"
    bare = cls["EgmRobot"]()
    bare.feedBack.cartesian.pos.x = bare.feedBack.cartesian.pos.y = bare.feedBack.cartesian.pos.z = 0.0
    assert EGM.decode_robot(bare.SerializeToString()) == "no header"
    assert EGM.decode_robot(b"") == "no header"                 # an empty protobuf is a valid empty message
    assert EGM.decode_robot(robot[:len(robot) // 2]) == "truncated, or not an EgmRobot"
    assert EGM.decode_robot(b'<Rob TYPE="KUKA"><IPOC>1</IPOC></Rob>') == "truncated, or not an EgmRobot"
    assert EGM.decode_robot(b"\xff" * 16) == "truncated, or not an EgmRobot"
    m = _independent_robot(cls)
    m.feedBack.cartesian.orient.u0 = 2.0
    assert EGM.decode_robot(m.SerializeToString()) == "orientation not a unit quaternion"
    m = _independent_robot(cls)
    m.feedBack.cartesian.pos.y = math.nan
    assert EGM.decode_robot(m.SerializeToString()) == "non-finite pose"
    m = _independent_robot(cls)
    m.feedBack.ClearField("cartesian")
    assert EGM.decode_robot(m.SerializeToString()) == "no feedBack pose"


# ---------------------------------------------------------------------------- the adapter on a real socket
def _calibrated_tcp(stand, top):
    """The TCP pose in R for a top pose in B, from the stand file's calibration by scipy."""
    o = stand.platform_options
    p_br, q_br = o["base_in_stand"]
    p_ct, q_ct = o["top_on_tcp"]
    r = lambda q: Rotation.from_quat([q[1], q[2], q[3], q[0]])     # noqa: E731
    r_bt = r(top[1])
    r_rc = r(q_br).inv() * r_bt * r(q_ct).inv()
    p_rc = r(q_br).inv().apply(np.array(top[0]) + r_bt.apply(-r(q_ct).inv().apply(p_ct)) - p_br)
    return p_rc, r_rc


@pytest.fixture
def peer():
    p = RobotPeer("abb_egm.toml")
    yield p
    p.close()


def _state(k, tcp):
    return EGM.encode_robot(k, 1000 + 4 * k, tcp, tcp)


def test_the_adapter_answers_each_state_with_the_absolute_target(peer):
    start_top = ((0.0, 0.0, 1.95), (1.0, 0.0, 0.0, 0.0))
    p, r = _calibrated_tcp(peer.stand, start_top)
    x, y, z, w = r.as_quat()
    tcp = (tuple(p), (w, x, y, z))
    peer.send(_state(1, tcp))
    (st,) = peer.read()
    assert np.allclose(st.pose, (0.0, 0.0, 1.95, 1.0, 0.0, 0.0, 0.0), atol=1e-12)
    peer.command(Command.ENGAGE)
    seq, tm, target = EGM.decode_sensor(peer.answer())
    assert (seq, tm) == (1, 1004) and np.allclose(target[0], tcp[0], atol=1e-12)
    top = ((0.05, -0.02, 2.0), _q((1.0, -2.0, 3.0)))
    peer.send(_state(2, tcp))
    peer.read()
    peer.command(Command.POSE, (*top[0], *top[1]))
    seq, tm, target = EGM.decode_sensor(peer.answer())
    assert (seq, tm) == (2, 1008)
    p, r = _calibrated_tcp(peer.stand, top)
    assert np.allclose(target[0], p, atol=1e-12)
    x, y, z, w = r.as_quat()
    assert RP.rotation_angle_deg(RP.quat_mul(target[1], RP.quat_conj((w, x, y, z)))) < 1e-9
    assert peer.adapter.refused == {}


def test_a_wrong_message_type_on_the_link_is_counted_and_a_stopped_robot_faults(peer, independent):
    cls = independent[0]
    tcp = ((1.6, 0.0, 1.95), (0.0, 0.0, 0.0, 1.0))
    peer.send(_state(1, tcp))
    peer.read()
    wrong = cls["EgmSensor"]()
    wrong.header.mtype = 3
    peer.send(wrong.SerializeToString())
    peer.send(b"\x08")                                          # a varint cut short
    assert peer.read() == []
    assert peer.adapter.refused == {"wrong message type (MSGTYPE_CORRECTION, not MSGTYPE_DATA)": 1,
                                    "truncated, or not an EgmRobot": 1}
    peer.send(EGM.encode_robot(2, 1008, tcp, tcp, running=False))
    (st,) = peer.read()
    assert st.state == PlatformState.FAULT and st.fault == FaultCode.ROBOT_STOPPED


def test_a_silent_egm_robot_trips_robot_cycle_missed(peer):
    tcp = ((1.6, 0.0, 1.95), (0.0, 0.0, 0.0, 1.0))
    peer.send(_state(1, tcp))
    peer.read()
    peer.command(Command.ENGAGE)
    peer.answer()
    n, trip = peer.adapter.n, peer.adapter.missed_trip
    for cycles in range(1, (trip + 1) * n + 1):
        frames = peer.read()
        peer.command(Command.HEARTBEAT)
        if peer.adapter.state is PlatformState.FAULT:
            break
    assert peer.adapter.fault == FaultCode.ROBOT_CYCLE_MISSED and cycles <= trip * n + n // 2
    assert frames and frames[-1].fault == FaultCode.ROBOT_CYCLE_MISSED
