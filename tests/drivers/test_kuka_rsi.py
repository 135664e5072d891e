"""KUKA RSI (drivers.kuka_rsi, drivers.robot_platform) against messages published by public RSI
peers, the IPOC echo, KUKA's Z-Y-X angles against independent rotations, and bad input counted
by name and never raised.

The example datagrams below are test data taken from public sources (each cited where it is
defined); they are not produced by this project's code, so decoding them and writing them back
checks the codec against what real peers put on the wire.
"""
from __future__ import annotations

import math
import socket

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from drivers import kuka_rsi as RSI
from drivers import robot_pose as RP
from drivers.motion_platform import Command, FaultCode, PlatformState
from tests.drivers.robot_peer import RobotPeer

# ---------------------------------------------------------------------------- public examples
# kroshu/kuka-external-control-sdk (KUKA's own open-source SDK for RSI on KSS),
# kuka_external_control_sdk/kss/test/test_message_builder.cc, TestInitCartesianPositions6Dof and
# TestFillEverything: the robot's <Rob> state as the KRC writes it (no space before "/>").
KROSHU_ROB_CART = (b'<Rob Type="KUKA"><RIst X="5.32000" Y="6.4" Z="111.30000" A="12.20000" B="0.00000" '
                   b'C="12.50000"/><AIPos A1="0.000" A2="0.00000" A3="0.00000" A4="0.00000" A5="0.00000" '
                   b'A6="0.00000"/><EIPos E1="0.00000" E2="0.00000" E3="0.00000" E4="0.00000" E5="0.00000" '
                   b'E6="0.00000"/><Delay D="8"/><IPOC>0</IPOC></Rob>')
KROSHU_ROB_FULL = (b'<Rob Type="KUKA"><RIst X="5.32000" Y="6.4" Z="111.30000" A="12.20000" B="0.00000" '
                   b'C="12.50000"/><AIPos A1="8.2" A2="3.3" A3="111.67" A4="12.22220" A5="-35.20000" '
                   b'A6="-12.50000"/><EIPos E1="1000.00000" E2="2000.00000" E3="3000.00000" E4="4000.00000" '
                   b'E5="5000.00000" E6="6000.00000"/><Delay D="11"/><IPOC>357</IPOC></Rob>')
# the same test file, TestFillEverything6Dof: the SDK's <Sen> answer (axis correction AK)
KROSHU_SEN = (b'<Sen Type="KROSHU"><Stop>1</Stop><AK A1="194.805650" A2="194.805650" A3="194.805650" '
              b'A4="194.805650" A5="194.805650" A6="194.805650"/><IPOC>543265442</IPOC></Sen>')
# ros-industrial/kuka_experimental, kuka_rsi_simulator/scripts/kuka_rsi_simulator,
# create_rsi_xml_rob(): its first state (start joints [0, -90, 90, 0, 90, 0], no late answers,
# IPOC 0) as ElementTree's tostring writes it (" />", attributes in insertion order).
ROSI_SIM_ROB = (b'<Rob TYPE="KUKA"><RIst X="0.0" Y="0.0" Z="0.0" A="0.0" B="0.0" C="0.0" />'
                b'<RSol X="0.0" Y="0.0" Z="0.0" A="0.0" B="0.0" C="0.0" />'
                b'<AIPos A1="0.0" A2="-90.0" A3="90.0" A4="0.0" A5="90.0" A6="0.0" />'
                b'<ASPos A1="0.0" A2="-90.0" A3="90.0" A4="0.0" A5="90.0" A6="0.0" />'
                b'<Delay D="0" /><IPOC>0</IPOC></Rob>')
# erensezener/kuka-rsi3-communicator, debug.txt: a state received from a KR C4 with RSI 3 whose
# context sends axis positions only (note the double space the KRC left inside <Tech>).
RSI3_JOINT_ROB = (b'<Rob Type="KUKA"><AIPos A1="0.0" A2="-90.0" A3="90.0" A4="0.0" A5="0.0" A6="0.0"/>'
                  b'<ASPos A1="0.0" A2="-90.0" A3="90.0" A4="0.0" A5="0.0" A6="0.0"/><Delay D="0"/>'
                  b'<Tech C11="0.0" C12="0.0" C13="0.0" C14="0.0" C15="0.0" C16="0.0"  C17="0.0" C18="0.0" '
                  b'C19="0.0" C110="0.0"/><DiL>0</DiL><Digout o1="0" o2="0" o3="0"/><Source1>0.3</Source1>'
                  b'<IPOC>237437</IPOC></Rob>')
# the same repository, ExternalData.xml: the answer template with a Cartesian correction RKorr
# (multi-line, " />" and "/>" mixed in one document)
RSI3_SEN_RKORR = (b'<Sen Type="ImFree">\n  <EStr>KRCnexxt - RSI Object ST_ETHERNET</EStr>\n'
                  b'  <RKorr X="0.0000" Y="0.0000" Z="0.0000" A="0.0000" B="0.0000" C="0.0000" />\n'
                  b'  <AKorr A1="0.0000" A2="0.0000" A3="0.0000" A4="0.0000" A5="0.0000" A6="0.0100" />\n'
                  b'  <Tech T21="1.09" T22="2.08" T23="3.07" T24="4.06" T25="5.05" T26="6.04" T27="7.03" '
                  b'T28="8.02" T29="9.01" T210="10.00"/>\n  <DiO>125</DiO>\n <IPOC>0000000000</IPOC>\n</Sen>')


def _close(a, b, tol=1e-12):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


# ---------------------------------------------------------------------------- the codec
@pytest.mark.parametrize("data, close", [(KROSHU_ROB_CART, "/>"), (KROSHU_ROB_FULL, "/>"), (KROSHU_SEN, "/>"),
                                         (ROSI_SIM_ROB, " />")])
def test_public_messages_round_trip_byte_for_byte(data, close):
    assert RSI.serialize(RSI.parse(data), close) == data


def test_a_document_with_both_closings_keeps_everything_but_the_closing_style():
    # ExternalData.xml mixes " />" and "/>": no single writer reproduces it, every element,
    # attribute, text and the whitespace between elements survive
    out = RSI.serialize(RSI.parse(RSI3_SEN_RKORR))
    assert out == RSI3_SEN_RKORR.replace(b'"/>', b'" />')
    with pytest.raises(ValueError, match="empty_close"):
        RSI.serialize(RSI.parse(RSI3_SEN_RKORR), "/ >")


def test_the_public_states_decode_to_their_values_in_si_units():
    st = RSI.decode_robot_state(KROSHU_ROB_FULL)
    assert not isinstance(st, str)
    assert _close(st.actual[0], (5.32e-3, 6.4e-3, 0.1113))
    q_ref = Rotation.from_euler("ZYX", [12.2, 0.0, 12.5], degrees=True).as_quat()   # x y z w
    assert _close(st.actual[1], (q_ref[3], q_ref[0], q_ref[1], q_ref[2]))
    assert st.late == 11 and st.echo == "357" and st.stamp_ms == 357.0 and st.commanded is None
    assert RSI.decode_robot_state(KROSHU_ROB_CART).late == 8
    sim = RSI.decode_robot_state(ROSI_SIM_ROB)
    assert sim.commanded == ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)) and sim.late == 0 and sim.echo == "0"
    # an RSI context without the Cartesian pose is refused by name (docs/platforms.md: DEF_RIst)
    assert RSI.decode_robot_state(RSI3_JOINT_ROB) == "no RIst"


def test_the_public_answers_decode():
    assert RSI.decode_correction(RSI3_SEN_RKORR) == ("ImFree", [0.0] * 6, 0)
    # an axis-correction answer carries no RKorr: decoded, no Cartesian correction
    assert RSI.decode_correction(KROSHU_SEN) == ("KROSHU", None, 543265442)


def test_the_answer_is_written_as_the_public_drivers_write_theirs():
    # kuka_experimental's rsi_command.h (TinyXML's stream printer, std::to_string: six decimals,
    # " />") writes <Sen Type="ImFree"><AK A1=... /><IPOC>n</IPOC></Sen>; ours, with the same element
    ak = (1.5, -2.25, 0.0, 3.0, -0.000001, 90.0)
    got = RSI.encode_sen("ImFree", "AK", ("A1", "A2", "A3", "A4", "A5", "A6"), ak, 5490270)
    assert got == (b'<Sen Type="ImFree"><AK A1="1.500000" A2="-2.250000" A3="0.000000" A4="3.000000" '
                   b'A5="-0.000001" A6="90.000000" /><IPOC>5490270</IPOC></Sen>')
    # and the Cartesian correction the adapter sends decodes back through the standard parser
    korr = (12.5, -3.0, 0.25, 1.0, -2.0, 0.5)
    assert RSI.decode_correction(RSI.encode_correction("ImFree", korr, "5490270")) == ("ImFree", list(korr), 5490270)


def test_the_robot_state_the_twin_sends_decodes_to_the_same_poses():
    act = (1590.0, -20.0, 1950.0, -179.5, 0.5, 1.0)
    sol = (1591.0, -19.0, 1949.0, 179.0, -0.25, 0.0)
    corr = (1.0, -2.0, 3.0, 0.5, 0.0, -0.5)
    st = RSI.decode_robot_state(RSI.encode_robot_state(act, sol, 3, 3_600_004, corr))
    for pose, v in ((st.actual, act), (st.commanded, sol), (st.correction, corr)):
        back = RSI.xyzabc_from_pose(pose)
        assert _close(back[:3], v[:3], 1e-9)
        assert RP.rotation_angle_deg(RP.quat_mul(pose[1], RP.quat_conj(RP.zyx_deg_to_quat(*v[3:])))) < 1e-6
    assert st.late == 3 and st.echo == "3600004"


@pytest.mark.parametrize("data, why", [
    (KROSHU_ROB_FULL[: len(KROSHU_ROB_FULL) // 2], "truncated or malformed XML"),
    (KROSHU_ROB_FULL[:-1], "truncated or malformed XML"),
    (b"\x00\x01\x02 not xml at all", "not XML"),
    (b"", "not XML"),
    (b"DOCKSTAND-LOCKSTEP-TICK", "not XML"),
    (KROSHU_SEN, "not a robot message (<Sen>)"),
    (KROSHU_ROB_FULL.replace(b"<IPOC>357</IPOC>", b""), "no IPOC"),
    (KROSHU_ROB_FULL.replace(b"<IPOC>357", b"<IPOC>-357"), "bad IPOC"),
    (KROSHU_ROB_FULL.replace(b"<IPOC>357", b"<IPOC>3.5e2"), "bad IPOC"),
    (KROSHU_ROB_FULL.replace(b'X="5.32000"', b'X="5,32"'), "bad number in <RIst>"),
    (KROSHU_ROB_FULL.replace(b'X="5.32000"', b'X="nan"'), "non-finite number in <RIst>"),
    (KROSHU_ROB_FULL.replace(b'X="5.32000" ', b""), "no X in <RIst>"),
    (KROSHU_ROB_FULL.replace(b'D="11"', b'D="many"'), "bad number in <Delay>"),
])
def test_bad_datagrams_are_named_never_raised(data, why):
    assert RSI.decode_robot_state(data) == why


def test_the_robot_end_refuses_bad_answers_by_name():
    assert RSI.decode_correction(KROSHU_ROB_FULL) == "not a sensor message (<Rob>)"
    assert RSI.decode_correction(RSI3_SEN_RKORR[:40]) == "truncated or malformed XML"
    assert RSI.decode_correction(RSI3_SEN_RKORR.replace(b"0000000000", b"x")) == "no IPOC"


# ---------------------------------------------------------------------------- KUKA's angles
def _rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _ry(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rx(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _matrix(q):
    w, x, y, z = q
    return Rotation.from_quat([x, y, z, w]).as_matrix()


def test_abc_is_rz_ry_rx_by_hand_and_by_scipy():
    rng = np.random.default_rng(41)
    for _ in range(300):
        a, c = rng.uniform(-180, 180, 2)
        b = rng.uniform(-89.9, 89.9)
        q = RP.zyx_deg_to_quat(a, b, c)
        hand = _rz(math.radians(a)) @ _ry(math.radians(b)) @ _rx(math.radians(c))
        assert np.allclose(_matrix(q), hand, atol=1e-12)
        assert np.allclose(hand, Rotation.from_euler("ZYX", [a, b, c], degrees=True).as_matrix(), atol=1e-12)
        back = RP.quat_to_zyx_deg(q)
        assert np.allclose(back, (a, b, c), atol=1e-7)


def test_abc_at_the_gimbal_lock_gives_the_same_rotation():
    for b in (90.0, -90.0):
        for a, c in ((30.0, 0.0), (10.0, 25.0), (-120.0, 40.0)):
            q = RP.zyx_deg_to_quat(a, b, c)
            a2, b2, c2 = RP.quat_to_zyx_deg(q)
            assert b2 == b and c2 == 0.0
            assert np.allclose(_matrix(RP.zyx_deg_to_quat(a2, b2, c2)), _matrix(q), atol=1e-9)


def test_the_correction_is_r_target_r_start_transposed_about_the_base_axes():
    rng = np.random.default_rng(7)
    for _ in range(100):
        start = (tuple(rng.uniform(-2, 2, 3)), RP.zyx_deg_to_quat(*rng.uniform(-170, 170, 3) * (1, 0.5, 1)))
        target = (tuple(rng.uniform(-2, 2, 3)), RP.zyx_deg_to_quat(*rng.uniform(-170, 170, 3) * (1, 0.5, 1)))
        korr = RSI.korr_from_poses(start, target)
        r = _rz(math.radians(korr[3])) @ _ry(math.radians(korr[4])) @ _rx(math.radians(korr[5]))
        assert np.allclose(r, _matrix(target[1]) @ _matrix(start[1]).T, atol=1e-9)
        assert np.allclose(korr[:3], 1e3 * (np.array(target[0]) - np.array(start[0])), atol=1e-9)
        back = RSI.apply_korr(start, korr)
        assert np.allclose(back[0], target[0], atol=1e-12)
        assert RP.rotation_angle_deg(RP.quat_mul(back[1], RP.quat_conj(target[1]))) < 1e-9


# ---------------------------------------------------------------------------- the adapter on a real socket
def _state(ipoc, rsol=(1590.0, 0.0, 1950.0, 180.0, 0.0, 0.0), rist=None, delay=0):
    return RSI.encode_robot_state(rist or rsol, rsol, delay, ipoc)


@pytest.fixture
def peer():
    p = RobotPeer("kuka_rsi.toml")
    yield p
    p.close()


def test_the_answer_echoes_the_ipoc_and_carries_the_calibrated_correction(peer):
    # the stand file places the robot base R at (1.6, 0, 0) in B, turned 180 deg about z; the TCP
    # at (1590, 0, 1950) mm, A = 180 deg in R is the top at (0.01, 0, 1.95) m, level, in B
    peer.send(_state(4294967296004))
    (st,) = peer.read()
    assert st.state == PlatformState.IDLE
    assert np.allclose(st.pose, (0.01, 0.0, 1.95, 1.0, 0.0, 0.0, 0.0), atol=1e-12)
    peer.command(Command.ENGAGE)
    sen = RSI.decode_correction(peer.answer())
    assert sen == ("ImFree", [0.0] * 6, 4294967296004)           # hold: no correction, IPOC echoed
    # the top 20 mm along +y of B and 2 deg about B's x: in R (turned 180 about z) that is
    # -20 mm along y and -2 deg about x, i.e. RKorr Y = -20, C = -2
    peer.send(_state(4294967296008))
    (st,) = peer.read()
    assert st.state == PlatformState.ENGAGED
    q = Rotation.from_euler("x", 2.0, degrees=True).as_quat()
    peer.command(Command.POSE, (0.01, 0.02, 1.95, q[3], q[0], q[1], q[2]))
    typ, korr, ipoc = RSI.decode_correction(peer.answer())
    assert ipoc == 4294967296008 and typ == "ImFree"
    assert np.allclose(korr, (0.0, -20.0, 0.0, 0.0, 0.0, -2.0), atol=1e-6)
    assert peer.adapter.refused == {} and peer.adapter.missed == 0


def test_a_stale_ipoc_another_sender_and_bad_datagrams_are_counted_by_name(peer):
    peer.send(_state(1000))
    assert len(peer.read()) == 1
    other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    other.bind(("127.0.0.1", 0))
    try:
        peer.send(_state(1004), sock=other)
    finally:
        other.close()
    for bad in (_state(1000), _state(996), KROSHU_ROB_FULL[:50], b"\xff\xfe garbage", KROSHU_SEN):
        peer.send(bad)
    assert peer.read() == []                                  # nothing raised, nothing accepted
    assert peer.adapter.refused == {"sender is not the robot": 1, "stale cycle stamp": 2,
                                    "truncated or malformed XML": 1, "not XML": 1,
                                    "not a robot message (<Sen>)": 1}
    assert peer.adapter.transport.counters.malformed == 6
    assert peer.adapter.describe_link()["refused"] == peer.adapter.refused


def test_an_ipoc_gap_counts_the_cycles_that_never_came(peer):
    peer.send(_state(1000))
    peer.read()
    peer.command(Command.ENGAGE)
    peer.answer()
    peer.send(_state(1012))                                   # 1004 and 1008 lost on the way
    peer.read()
    assert peer.adapter.missed == 2 and peer.adapter.run == 2
    peer.command(Command.HEARTBEAT)                           # answered: the exchange goes on
    peer.answer()
    assert peer.adapter.run == 0 and peer.adapter.state is PlatformState.ENGAGED


def test_a_silent_robot_trips_robot_cycle_missed_within_the_configured_cycles(peer):
    n = peer.adapter.n                                        # controller cycles per robot cycle
    trip = peer.adapter.missed_trip
    peer.send(_state(1000))
    peer.read()
    peer.command(Command.ENGAGE)
    peer.answer()
    cycles = 0
    while peer.adapter.state is not PlatformState.FAULT:
        frames = peer.read()
        peer.command(Command.HEARTBEAT)
        cycles += 1
        assert cycles <= (trip + 1) * n, "the silence was not tripped within the configured cycles"
    # a robot cycle is missed half a cycle after it was due: trip robot cycles of silence
    assert (trip - 1) * n < cycles <= trip * n + n // 2
    assert [f.fault for f in frames] == [FaultCode.ROBOT_CYCLE_MISSED]
    assert frames[0].state == PlatformState.FAULT
    assert "robot cycles in a row without an exchange" in peer.adapter.fault_text
    # the fault holds until RESET_FAULT, then the adapter is IDLE
    peer.command(Command.RESET_FAULT)
    assert peer.adapter.state is PlatformState.IDLE and peer.adapter.run == 0


def test_the_robots_own_late_count_near_its_limit_trips_first(peer):
    lim, trip = peer.adapter.late_limit, peer.adapter.missed_trip
    peer.send(_state(1000, delay=lim - trip - 1))
    (st,) = peer.read()
    assert st.state == PlatformState.IDLE
    peer.send(_state(1004, delay=lim - trip))
    (st,) = peer.read()
    assert st.state == PlatformState.FAULT and st.fault == FaultCode.ROBOT_CYCLE_MISSED
    assert f"of its limit {lim}" in peer.adapter.fault_text


def test_a_set_point_beyond_the_robots_correction_limits_is_refused(peer):
    peer.send(_state(1000))
    peer.read()
    peer.command(Command.ENGAGE)
    peer.answer()
    peer.send(_state(1004))
    peer.read()
    lim = peer.adapter.trans_lim
    peer.command(Command.POSE, (0.01, 0.0, 1.95 + lim + 0.01, 1.0, 0.0, 0.0, 0.0))
    typ, korr, _ = RSI.decode_correction(peer.answer())
    assert korr == [0.0] * 6                                  # the correction is held
    assert peer.adapter.fault == FaultCode.CORRECTION_LIMIT and "Z correction" in peer.adapter.fault_text
    peer.send(_state(1008))
    (st,) = peer.read()
    assert st.state == PlatformState.FAULT and st.fault == FaultCode.CORRECTION_LIMIT


def test_lengths_set_points_are_refused_by_name(peer):
    peer.send(_state(1000))
    peer.read()
    peer.command(Command.ENGAGE)
    peer.answer()
    peer.command(Command.LENGTHS, (2.0,) * 6)
    assert peer.adapter.fault == FaultCode.BAD_COMMAND
