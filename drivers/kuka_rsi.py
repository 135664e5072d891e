"""KUKA RSI (Robot Sensor Interface, Ethernet): XML over UDP (docs/platforms.md, "KUKA RSI").

The robot's RSI context sends, every interpolation cycle (4 ms in IPO_FAST mode, 12 ms in IPO
mode), one ``<Rob>`` document to this computer; the answer, one ``<Sen>`` document, must carry
the same ``IPOC`` (the robot's cycle stamp) and reach the robot within that cycle, or the robot
counts the cycle late (``<Delay D="...">``) and stops RSI after its ETHERNET object's
``Timeout`` late cycles. Elements the shipped context exchanges (learnt from public drivers:
ROS-Industrial's kuka_rsi_hw_interface and its simulator, FZI's kuka_rsi_driver; the tests
decode their published messages)::

    robot -> here   <Rob TYPE="KUKA">
                      <RIst X= Y= Z= A= B= C= />    actual TCP pose in the robot base (mm, deg)
                      <RSol X= ... C= />            commanded TCP pose (mm, deg)
                      <Delay D= />                  late answers counted by the robot
                      <PCorr X= ... C= />           the correction the robot applies (optional;
                                                    the shipped context sends it: restart-safe)
                      <IPOC>n</IPOC>                the cycle stamp (ms)
                    </Rob>
    here -> robot   <Sen Type="ImFree"><RKorr X= Y= Z= A= B= C= /><IPOC>n</IPOC></Sen>

``RKorr``: the Cartesian correction relative to the pose where the robot started correcting
(``RSI_ON(#ABSOLUTE)``, the POSCORR object's reference system BASE): X, Y, Z in mm along the
robot base's axes, A, B, C in degrees about them (KUKA's Z-Y-X angles of the rotation
``R_target R_start^T``). Other elements of a message are passed over.

The codec uses the standard library's XML parser (``xml.etree.ElementTree`` on expat: a
conforming, C-speed parser; a hand-written one would be the place where a truncated or
hostile datagram gets through). Decoders return a str naming why a datagram is refused, never
raise. :class:`KukaRsiPlatform` is the controller's adapter (drivers.robot_platform);
:func:`encode_robot_state` / :func:`decode_correction` are the robot's end (the emulated robot,
sim_stand.robot_twin, and tests).
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from drivers import robot_pose as RP
from drivers.robot_platform import RobotPlatform, RobotState

__all__ = ["KukaRsiPlatform", "RsiState", "decode_robot_state", "encode_correction", "encode_sen", "decode_correction",
           "encode_robot_state", "korr_from_poses", "pose_from_xyzabc", "xyzabc_from_pose", "parse", "serialize"]

CART = ("X", "Y", "Z", "A", "B", "C")
_ParseError = ET.ParseError
_fromstring = ET.fromstring


# ---------------------------------------------------------------------- generic layer
def parse(data: bytes) -> ET.Element:
    """One RSI document -> its element tree (ParseError on bad XML)."""
    return _fromstring(data)


def serialize(root: ET.Element, empty_close: str = " />") -> bytes:
    """An element tree -> its bytes, as RSI peers write them: no XML declaration, attributes
    in document order, texts and the whitespace between elements kept, an empty element closed
    by ``empty_close`` -- ``" />"`` (TinyXML, ElementTree: the ROS drivers) or ``"/>"`` (the KRC's
    own messages and KUKA's external-control SDK). ValueError for another closing."""
    out = ET.tostring(root, encoding="unicode", short_empty_elements=True)
    if empty_close == "/>":
        # ElementTree escapes '>' in attribute values and texts: " />" only closes empty elements
        out = out.replace(" />", "/>")
    elif empty_close != " />":
        raise ValueError(f"empty_close must be ' />' or '/>', not {empty_close!r}")
    return out.encode("ascii", "xmlcharrefreplace")


def pose_from_xyzabc(v) -> tuple:
    """(X, Y, Z mm, A, B, C deg) -> a pose (p m, q)."""
    return ((v[0] * 1e-3, v[1] * 1e-3, v[2] * 1e-3), RP.zyx_deg_to_quat(v[3], v[4], v[5]))


def xyzabc_from_pose(pose) -> tuple:
    p, q = pose
    a, b, c = RP.quat_to_zyx_deg(q)
    return (p[0] * 1e3, p[1] * 1e3, p[2] * 1e3, a, b, c)


def _frame6(el, names):
    """The six numbers of ``el``'s attributes ``names``; a str when one is missing or not a
    finite number (None without the element)."""
    if el is None:
        return None
    a = el.attrib
    try:
        v = [float(a[n]) for n in names]
    except KeyError as e:
        return f"no {e.args[0]} in <{el.tag}>"
    except ValueError:
        return f"bad number in <{el.tag}>"
    t = v[0] + v[1] + v[2] + v[3] + v[4] + v[5]
    if t - t != 0.0:                     # an inf or a nan among them (inf - inf is nan)
        return f"non-finite number in <{el.tag}>"
    return v


class RsiState(RobotState):
    """A decoded ``<Rob>``: the measured pose converted at once, the commanded pose (RSol) and
    the applied correction (PCorr) only when asked for (the adapter needs them at the start of
    an exchange, not every cycle)."""

    __slots__ = ("_sol", "_pc", "_sol_pose", "_pc_pose")

    def __init__(self, stamp_ms, seq, actual, sol, late, pc, echo):
        self.stamp_ms = stamp_ms
        self.seq = seq
        self.actual = actual
        self.late = late
        self.running = True
        self.echo = echo
        self._sol = sol
        self._pc = pc
        self._sol_pose = self._pc_pose = None

    @property
    def commanded(self):
        if self._sol_pose is None and self._sol is not None:
            self._sol_pose = pose_from_xyzabc(self._sol)
        return self._sol_pose

    @property
    def correction(self):
        if self._pc_pose is None and self._pc is not None:
            self._pc_pose = pose_from_xyzabc(self._pc)
        return self._pc_pose


def _refusal(data: bytes) -> str:
    head = data.lstrip()[:4]
    if head.startswith(b"<Rob") or head.startswith(b"<Sen"):
        return "truncated or malformed XML"
    return "not XML"


# ---------------------------------------------------------------------- the controller's end
def decode_robot_state(data: bytes, ipoc_ms: float = 1.0):
    """A ``<Rob>`` datagram -> :class:`RsiState` (a :class:`drivers.robot_platform.RobotState`;
    ``ipoc_ms``: the milliseconds per IPOC unit), or a str naming why it is refused."""
    try:
        root = _fromstring(data)
    except _ParseError:
        return _refusal(data)
    except Exception:  # noqa: BLE001 - expat's other complaints (encoding, depth): refused, named
        return "not XML"
    if root.tag != "Rob":
        return f"not a robot message (<{root.tag}>)"
    first = {}
    for el in root:                      # one pass; the first of each element counts
        if el.tag not in first:
            first[el.tag] = el
    ip = first.get("IPOC")
    if ip is None or ip.text is None:
        return "no IPOC"
    text = ip.text.strip()
    if not text.isdigit():
        return "bad IPOC"
    ipoc = int(text)
    ist = _frame6(first.get("RIst"), CART)
    if ist is None:
        return "no RIst"
    if ist.__class__ is str:
        return ist
    sol = _frame6(first.get("RSol"), CART)
    if sol.__class__ is str:
        return sol
    late = -1
    d = first.get("Delay")
    if d is not None:
        try:
            late = int(d.attrib.get("D", "-1"))
        except ValueError:
            return "bad number in <Delay>"
    pc = _frame6(first.get("PCorr"), CART)
    if pc.__class__ is str:
        return pc
    return RsiState(ipoc * ipoc_ms, ipoc, pose_from_xyzabc(ist), sol, late, pc, text)


def encode_sen(sen_type: str, tag: str, names, values, ipoc, decimals: int = 6) -> bytes:
    """A ``<Sen>`` answer with one correction element ``tag`` (attributes ``names`` =
    ``values``, fixed ``decimals``) and the echoed IPOC, as the public drivers write it."""
    attrs = " ".join(f'{n}="{v:.{decimals}f}"' for n, v in zip(names, values))
    return f'<Sen Type="{sen_type}"><{tag} {attrs} /><IPOC>{ipoc}</IPOC></Sen>'.encode("ascii")


def encode_correction(sen_type: str, korr, ipoc) -> bytes:
    """The answer with the Cartesian correction ``korr`` (X, Y, Z mm, A, B, C deg)."""
    return encode_sen(sen_type, "RKorr", CART, korr, ipoc)


def korr_from_poses(start, target) -> tuple:
    """RKorr (X, Y, Z mm, A, B, C deg) that takes the robot from ``start`` to ``target`` (both
    TCP poses in the robot base): the translation along the base's axes and the rotation
    ``R_target R_start^T`` about them."""
    p0, q0 = start
    p1, q1 = target
    a, b, c = RP.quat_to_zyx_deg(RP.quat_mul(q1, RP.quat_conj(q0)))
    return ((p1[0] - p0[0]) * 1e3, (p1[1] - p0[1]) * 1e3, (p1[2] - p0[2]) * 1e3, a, b, c)


def apply_korr(start, korr) -> tuple:
    """The TCP pose (in the robot base) a correction ``korr`` puts the robot at (the inverse of
    :func:`korr_from_poses`)."""
    p0, q0 = start
    dq = RP.zyx_deg_to_quat(korr[3], korr[4], korr[5])
    return ((p0[0] + korr[0] * 1e-3, p0[1] + korr[1] * 1e-3, p0[2] + korr[2] * 1e-3), RP.quat_mul(dq, q0))


# ---------------------------------------------------------------------- the robot's end
def encode_robot_state(actual, commanded, delay: int, ipoc: int, correction=None, decimals: int = 4) -> bytes:
    """A ``<Rob>`` datagram as the robot's context sends it: ``actual``, ``commanded``,
    ``correction`` as (X, Y, Z mm, A, B, C deg) (``decimals`` digits, as the KRC writes
    them)."""
    def el(tag, v):
        return f'<{tag} ' + " ".join(f'{n}="{x:.{decimals}f}"' for n, x in zip(CART, v)) + " />"
    parts = ['<Rob TYPE="KUKA">', el("RIst", actual), el("RSol", commanded), f'<Delay D="{int(delay)}" />']
    if correction is not None:
        parts.append(el("PCorr", correction))
    parts.append(f"<IPOC>{int(ipoc)}</IPOC></Rob>")
    return "".join(parts).encode("ascii")


def decode_correction(data: bytes):
    """A ``<Sen>`` answer -> ``(sen_type, korr (6,) or None, ipoc)``, or a str naming why it is
    refused (the robot's end: the emulated robot)."""
    try:
        root = _fromstring(data)
    except _ParseError:
        return _refusal(data)
    except Exception:  # noqa: BLE001
        return "not XML"
    if root.tag != "Sen":
        return f"not a sensor message (<{root.tag}>)"
    ip = root.find("IPOC")
    if ip is None or ip.text is None or not ip.text.strip().isdigit():
        return "no IPOC"
    korr = _frame6(root.find("RKorr"), CART)
    if korr.__class__ is str:
        return korr
    return root.attrib.get("Type", ""), korr, int(ip.text.strip())


# ---------------------------------------------------------------------- the adapter
class KukaRsiPlatform(RobotPlatform):
    """The controller's adapter for a KUKA robot running the RSI context of docs/platforms.md
    (``[platform] protocol = "kuka_rsi"``)."""

    protocol = "kuka_rsi"
    cycles_ms = (4, 12)

    @classmethod
    def parse_vendor_options(cls, rt, opts: dict) -> None:
        st = rt.str("sen_type", "ImFree")
        if not st.replace("_", "").isalnum() or len(st) > 64:
            raise rt.error("sen_type", f"the ETHERNET config's SENTYPE: letters, digits and '_' only, got {st!r}")
        opts["sen_type"] = st
        opts["ipoc_per_cycle"] = rt.int("ipoc_per_cycle", opts["cycle_ms"], ge=1, le=1000000)

    def configure_options(self, opts: dict) -> None:
        super().configure_options(opts)
        self.sen_type = opts["sen_type"]
        self.ipoc_ms = self.cycle_ms / int(opts["ipoc_per_cycle"])

    def decode_state(self, data: bytes):
        return decode_robot_state(data, self.ipoc_ms)

    def robot_start(self, st: RobotState):
        ref = st.commanded if st.commanded is not None else st.actual
        c = st.correction
        if c is None:            # no feedback of the correction: the robot has just started RSI
            return ref
        # ref = start (+) c: the translation added along the base, the rotation premultiplied
        q0 = RP.quat_mul(RP.quat_conj(c[1]), ref[1])
        return ((ref[0][0] - c[0][0], ref[0][1] - c[0][1], ref[0][2] - c[0][2]), q0)

    def encode_answer(self, st: RobotState, target) -> bytes:
        korr = (0.0,) * 6 if target is None or self.start is None else korr_from_poses(self.start, target)
        return encode_correction(self.sen_type, korr, st.echo)
