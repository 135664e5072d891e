"""What a trip says beyond its kernel's sentence (rt.stand.safety.describe): the device's own
fault code, the lost link's endpoint and last frame, the loop's measured overload, the delay's
band, the sensor link's bad frames. The next step the operator can take is
rt.control.recovery.next_step. Not real-time: called on a trip only (it formats).
"""
from __future__ import annotations

from rt.control import kernels as CK
from rt.stand import wire_kernels as WK
from rt.stand.safety import Reason


def device_fault(ctl) -> str:
    """The platform's fault code from its last STATUS, by name when the protocol knows it."""
    from drivers.motion_platform import FaultCode
    v = int(ctl.meas[WK.ST_FAULT])
    try:
        return f"fault code {v} {FaultCode(v).name}"
    except ValueError:
        return f"fault code {v} (not in the protocol's list)"


def trip_context(ctl, code: int) -> str:
    """What the kernels' detail cannot carry (on a trip only: formats): the device's own
    fault code, the lost link's endpoint and last frame, the loop's measured overload."""
    if code in (Reason.PLATFORM_FAULT, Reason.PLATFORM_ESTOP, Reason.ROBOT_CYCLE_MISSED):
        text = getattr(ctl.platform, "fault_text", "")     # an adapter's own words (drivers.robot_platform)
        return f" ({device_fault(ctl)}{': ' + text if text else ''})"   # the device's own code, as it sent it
    if code in (Reason.SENSOR_LINK_LOST, Reason.PLATFORM_LINK_LOST):
        tr = ctl.links.s_tr if code == Reason.SENSOR_LINK_LOST else ctl.links.p_tr
        return f"; {ctl.links.last_frame(tr, ctl.t)}"
    if code == Reason.CRC_BURST:
        c = ctl.links.s_counters
        if not ctl.links.framed_sensor:    # RDT has no CRC: what it counts are bad datagrams
            return (f" (ATI RDT carries no CRC: these are {c.malformed} datagrams of the wrong length or content "
                    f"since the link opened; {ctl.links.s_tr.describe()})")
        return (f" (since the link opened: {c.crc_errors} frames with a bad CRC, {c.malformed} malformed; "
                f"{ctl.links.s_tr.describe()})")
    if code == Reason.DELAY_OUT_OF_BAND:
        lo, hi = ctl.stand.delays.identify_band_s
        return (f" [{1e3 * lo:g}, {1e3 * hi:g}] ms (stand [delays] identify_band_s; configured "
                f"{1e3 * ctl.stand.delays.platform_s:g} ms)")
    if code == Reason.OVERRUN_STREAK and ctl.loop is not None:
        st = ctl.loop.timing.stats()
        return (f" (the cycle's budget is its period, {1e6 * ctl.period_s:.0f} µs; cycle work p99 "
                f"{st.get('cycle_us_p99', 0.0):.0f} µs, max {st.get('cycle_us_max', 0.0):.0f} µs)")
    if code == Reason.OVERLOAD:
        lp = ctl.loop
        lim = ctl.stand.limits
        out = f" (budget {lim.miss_budget} per {lim.miss_window_s:g} s)"
        if lp is not None:
            st = lp.timing.stats()
            out += (f"; {lp.missed} missed in total over {lp.cycles} cycles, longest overrun streak "
                    f"{lp.max_overrun_streak}, wake-up lateness p99 {st.get('lateness_us_p99', 0.0):.0f} us, "
                    f"max {st.get('lateness_us_max', 0.0):.0f} us")
        quiet = [(name, tr) for name, tr, n in (("sensor", ctl.links.s_tr, ctl.safety.ctr[0]),
                                                ("platform", ctl.links.p_tr, ctl.xctr[CK.XC_PSTALE]))
                 if n >= 2]          # quiet for 2 cycles already: a peer gone shows here first
        for name, tr in quiet:
            out += f"; meanwhile the {name} link went quiet ({ctl.links.last_frame(tr, ctl.t)})"
        return out + ": this computer cannot hold the loop's rate now (dockstand check-host; docs/deploy.md)"
    return ""
