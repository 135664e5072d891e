"""The console's functional core: a sample (one telemetry message or log record), the last
``status`` reply and the stand's limits in, the panels' text out. Pure functions and a small
ring of recent values; the Textual app (rt/console/app.py) only places the strings. The
replay and the tests format the run log's values with the same functions.

Not real-time (the console's process).
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

STATES = ("IDLE", "CONFIGURED", "ARMED", "RUNNING", "DONE", "SAFE", "ABORTED")
PHASES = ("IDLE", "ENGAGE", "TARE", "MOVE", "READY", "RUNUP", "DYNAMICS", "STOP", "FROZEN", "RETRACT")   # rt.control.phases.Phase
STATE_STYLE = {"IDLE": "white", "CONFIGURED": "cyan", "ARMED": "yellow", "RUNNING": "green", "DONE": "blue",
               "SAFE": "bold red", "ABORTED": "bold red"}
WRENCH = ("Fx", "Fy", "Fz", "Tx", "Ty", "Tz")
PLATFORM_STATES = {0: "IDLE", 1: "ENGAGED", 2: "FROZEN", 3: "FAULT", 4: "E_STOPPED"}
STALE_STATUS_S = 0.1      # a platform state older than this is shown as stale (its link is silent)

#: each panel's title (its border), so that every number on the screen says what it is
PANEL_TITLES = {
    "wrench": "contact wrench",          # replaced by wrench_title(): tared or not
    "plots": "wrench, last {plot_s:g} s · each plot its own range (top / bottom)",
    "relative": "relative state · A in P · mechanism signals",
    "platform": "motion platform · commanded vs measured, legs",
    "margins": "safety margins · share of each trip level",
    "links": "links · sensor and platform",
    "timing": "loop timing",
}


@dataclass(frozen=True)
class CommandKey:
    """One operator command on a key: what the footer shows, whether it needs the control lease,
    and the question asked first (None: sent at once). The console's bindings, its footer in
    each mode and its refusal texts all come from :data:`COMMAND_KEYS`, so a new controller
    command is one line here."""
    key: str
    command: str
    label: str
    leased: bool = True
    confirm: str | None = None
    key_display: str | None = None


COMMAND_KEYS = (
    CommandKey("space", "abort", "ABORT", leased=False, key_display="space"),
    CommandKey("c", "acquire", "take control", leased=False),
    CommandKey("l", "load_case", "load case"),
    CommandKey("a", "arm", "arm"),
    CommandKey("s", "start", "start", confirm="Start the run? The platform will move into the docking."),
    CommandKey("x", "stop", "stop"),
    CommandKey("t", "tare", "tare"),
    CommandKey("r", "reset", "reset"),
    # the ways back (docs/controller.md, "Ways back"): each moves the platform or clears a fault,
    # so each asks first
    CommandKey("f", "reset_fault", "reset fault",
               confirm="Clear the motion platform's fault? It re-enables its drives (they hold the last pose)."),
    CommandKey("b", "retract", "retract",
               confirm="Retract? The platform backs the units apart along the docking axis under the force limits."),
    CommandKey("k", "park", "park",
               confirm="Park? The platform moves to its home pose at the arming speed."),
    CommandKey("u", "undock", "undock",
               confirm="Undock? The mechanism's release output opens the latches, then the platform retracts."),
    CommandKey("g", "release", "give control back", leased=False),
)
KEY_OF = {k.command: k for k in COMMAND_KEYS}

#: the motion platform's fault codes (drivers.motion_platform.FaultCode) in the operator's words
FAULT_TEXT = {0: "", 1: "no command or heartbeat within the device's timeout", 2: "set-point outside the workspace",
              3: "an actuator at its stroke limit", 4: "the servo cannot track the command",
              5: "a velocity limit", 6: "a drive fault", 7: "a command not allowed in the device's state",
              8: "the hardware E-stop chain opened", 9: "the robot's exchange missed a run of its cycles"}


def name_of(table: tuple, code) -> str:
    try:
        return table[int(code)]
    except (ValueError, IndexError, TypeError):
        return f"?{code}"


def fault_name(code) -> str:
    """``WATCHDOG (1): no command or heartbeat …`` for a platform fault code; ``none`` for 0."""
    from drivers.motion_platform import FaultCode
    c = int(code)
    if c == 0:
        return "none"
    try:
        name = FaultCode(c).name
    except ValueError:
        return f"code {c} (not a known fault code)"
    return f"{name} ({c}): {FAULT_TEXT.get(c, '')}".rstrip(": ")


def _key_hint(command: str) -> str:
    k = KEY_OF.get(command)
    return f" ({k.key_display or k.key})" if k else ""


def operator_text(command: str, reason: str | None) -> str:
    """A refusal as the operator meets it: the keys to press, not the protocol's words (the
    event log keeps the controller's own text). ``needs the control lease (free; send acquire
    first)`` becomes *take control first: press c*; a step named in the reason (``reset first``,
    ``load a case first``) gets its key."""
    import re
    r = str(reason or "")
    m = re.match(r"(\w+) needs the control lease \((.*)\)$", r)
    if m:
        who = m.group(2)
        if who.startswith("free"):
            return f"{_verb(command)} needs control of the stand: take it first (c)"
        holder = who.removeprefix("held by ")
        return (f"{_verb(command)} needs control of the stand, and {holder} has it: they give it back (g on their "
                "console), or it lapses when their console goes silent")
    m = re.match(r"(\w+) is not allowed in state (\w+) \(only in ([\w, ]+)\)(.*)$", r)
    if m:
        rest = m.group(4)
        for step, cmd in (("reset first", "reset"), ("load a case first", "load_case")):
            rest = rest.replace(step, f"{step}{_key_hint(cmd)}")
        return f"cannot {_verb(command)} while {m.group(2)} (only while {m.group(3)}){rest}"
    for word, cmd in (("reset first", "reset"), ("load a case first", "load_case"), ("tare first", "tare"),
                      ("arm first", "arm")):
        if word in r and _key_hint(cmd) not in r:
            r = r.replace(word, f"{word}{_key_hint(cmd)}")
    return r


def _verb(command: str) -> str:
    return {"load_case": "loading a case", "acquire": "taking control", "release": "giving control back"}.get(
        command, command)


def fmt_health(status: dict) -> list[str]:
    """The controller's health in the operator's words (``status["recorder"]`` and
    ``status["health"]``; absent fields, an older controller, give no line):

    * ``recorder  recording 12.3 s · 41 GB free (the run needs 0.2 GB)`` — or in red what failed
      and what the stand does about it (``[runlog] on_failure``);
    * ``loop      ok`` — or in red why the next ARM will be refused (the pre-flight check, the
      loop's recent misses), the cycle failures and the fail-safe hold."""
    out = []
    rec = status.get("recorder")
    if isinstance(rec, dict):
        state = rec.get("state", "?")
        free, need = rec.get("free_mb"), rec.get("run_needs_mb")
        space = ""
        if free is not None:
            space = f" · {free / 1000:.1f} GB free" + (f" (the run needs {need / 1000:.1f} GB)" if need is not None else "")
        low = free is not None and need is not None and free < need
        if state == "failed":
            what = "the stand trips (RUNLOG_FAILED)" if rec.get("on_failure", "trip") == "trip" else \
                "the run goes on UNRECORDED"
            out.append(f"recorder [bold red]FAILED[/] {plain_text_short(rec.get('failure'))}: {what}{space}")
        elif low:
            out.append(f"recorder [bold red]{state}: too little space[/]{space}: ARM is refused")
        else:
            rows = f" · {rec['records']} records" + (f", {rec['dropped']} dropped" if rec.get("dropped") else "") \
                if rec.get("records") is not None else ""
            out.append(f"recorder {state}{rows}{space}")
    h = status.get("health")
    if isinstance(h, dict):
        bad = []
        if h.get("failsafe"):
            bad.append("FAIL-SAFE HOLD (the cycle failed repeatedly): restart the controller after the platform is "
                       "safe")
        if h.get("cycle_failures"):
            bad.append(f"{h['cycle_failures']} cycle failure(s) (a defect: see the events)")
        if h.get("arm_refusal"):
            bad.append(f"ARM refused: {h['arm_refusal']}")
        elif h.get("preflight_failure") and not h.get("allow_failed_preflight"):
            bad.append(f"pre-flight failed: {h['preflight_failure']}")
        out.append("loop     " + ("ok" if not bad else "[bold red]" + "; ".join(bad) + "[/]"))
    return out


def plain_text_short(x, n: int = 80) -> str:
    t = " ".join(str(x or "").split())
    return t if len(t) <= n else t[:n - 1] + "…"


#: the health fields of ``status`` the links panel shows (fmt_health), in order
HEALTH_FIELDS = ("recorder", "health")


def fmt_wrench(w) -> str:
    """The contact wrench on the passive unit (P, about P's origin): six numbers with units."""
    w = np.asarray(w, dtype=float)
    f = "  ".join(f"{n} {v:+9.1f} N" for n, v in zip(WRENCH[:3], w[:3]))
    m = "  ".join(f"{n} {v:+8.2f} N·m" for n, v in zip(WRENCH[3:], w[3:]))
    return f"{f}\n{m}"


def wrench_title(sample: dict | None, status: dict) -> str:
    """The contact-wrench panel's title: whether the wrench shown is tared. Live from the
    controller's ``status`` (``tared``: a tare has finished since it started; before that the
    passive unit's weight and the sensor's offset are in the numbers); a replay from the phase
    (a run log opens at the arm's tare, which ends before the MOVE)."""
    if status.get("replay"):
        tared = sample is not None and int(sample["phase"]) >= PHASES.index("MOVE")
    else:
        tared = bool(status.get("tared"))
    if tared:
        return "contact wrench · on P, tared, filtered"
    if status.get("taring") or (status.get("replay") and sample is not None and name_of(PHASES, sample["phase"]) == "TARE"):
        return "contact wrench · [yellow]UNTARED: taring now[/]"
    return "contact wrench · [yellow]UNTARED (no tare yet: the unit's weight and the sensor offset included)[/]"


def plots_title(plot_s: float, tared: bool) -> str:
    """The wrench plots' title: their window, whether it starts at the last tare, their scaling."""
    return (f"wrench, last {plot_s:g} s" + (" (since the tare)" if tared else " [yellow](untared)[/]")
            + " · each plot its own range (top / bottom)")


def fmt_relative(rel_pose, rel_twist) -> str:
    """A relative to P: position (mm), attitude (deg, rotation vector), velocity (mm/s), rate (deg/s)."""
    r, q = np.asarray(rel_pose[:3]), np.asarray(rel_pose[3:7])
    rv = _rotvec_deg(q)
    v, w = np.asarray(rel_twist[:3]) * 1e3, np.degrees(np.asarray(rel_twist[3:6]))
    return (f"r  {_vec(r * 1e3, '{:+9.1f}')} mm    θ {_vec(rv, '{:+7.2f}')} °\n"
            f"v  {_vec(v, '{:+9.2f}')} mm/s  ω {_vec(w, '{:+7.3f}')} °/s")


def fmt_platform(cmd_pose, meas_pose, lengths, limits: dict | None) -> str:
    """Commanded vs measured top position (mm) and the six legs against their limits."""
    c, m = np.asarray(cmd_pose[:3]) * 1e3, np.asarray(meas_pose[:3]) * 1e3
    if not np.any(np.asarray(cmd_pose[3:7])):        # nothing commanded yet (IDLE: the platform not engaged)
        lines = ["cmd  — (no set-point yet)", f"meas {_vec(m, '{:+8.1f}')} mm"]
    else:
        lines = [f"cmd  {_vec(c, '{:+8.1f}')} mm", f"meas {_vec(m, '{:+8.1f}')} mm  Δ {np.linalg.norm(c - m):6.2f} mm"]
    legs = np.asarray(lengths, dtype=float)
    if not np.any(legs):
        return "\n".join(lines + ["legs — (no set-point yet)"])
    if limits:
        lo, hi = limits["length_min_m"], limits["length_max_m"]
        lines.append("legs " + " ".join(f"{L:5.3f}" for L in legs) + f"  m  [{lo:g} … {hi:g}]")
    else:
        lines.append("legs " + " ".join(f"{L:5.3f}" for L in legs) + " m")
    return "\n".join(lines)


def fmt_mechanism_link(link: dict, capture_t_run: float | None) -> str:
    """The mechanism's own control unit (``status["mechanism"]["link"]``, the stand's
    ``[mechanism_io]``): its capture, latches and hooks, the release output, a fault, or why the
    link is silent."""
    head = f"mechanism  ({link.get('link', 'its control unit')})"
    if not link.get("ok"):
        return f"{head} [bold red]silent[/]: {link.get('error')} — ARM refused until it answers"
    parts = []
    if link.get("capture"):
        when = f" at t_run {capture_t_run:.3f} s" if capture_t_run is not None else ""
        parts.append(f"[bold green]CAPTURED[/]{when}")
    elif link.get("capture") is not None:
        parts.append("capture open")
    for name, vals in (("latches", link.get("latches") or []), ("hooks", link.get("hooks") or [])):
        if vals:
            parts.append(f"{name} " + " ".join(f"{k + 1}{'●' if on else '○'}" for k, on in enumerate(vals)))
    if link.get("release_on"):
        parts.append("[yellow]release output ON[/]")
    if link.get("fault"):
        parts.append(f"[bold red]FAULT {link.get('fault_name')} (code {link.get('fault')})[/]")
    return head + "   " + "   ".join(parts)


def fmt_mechanism(sample: dict, limits: dict | None, capture_t_run: float | None,
                  status_age_s: float | None = None, link: dict | None = None) -> str:
    """The docking mechanism's signals: its own link's (``link``: :func:`fmt_mechanism_link`), else
    those on the platform's digital inputs (``platform_inputs``,
    wired by the stand's ``[platform.inputs]``: ``limits`` capture_bit / latch_bits): capture
    latched or open, with the run time it rose, and each capture latch; marked stale when the
    platform's last STATUS, which carries them, is older than STALE_STATUS_S (``status_age_s``)."""
    if link is not None:                 # the mechanism's own link says it, not the platform's inputs
        return fmt_mechanism_link(link, capture_t_run)
    word = sample.get("platform_inputs")
    if word is None:
        return "mechanism  — (this record has no platform inputs: an older log)"
    bits = (limits or {}).get("capture_bit", -1), (limits or {}).get("latch_bits") or []
    if limits is None:
        return "mechanism  — (waiting for status)"
    if bits[0] < 0 and not bits[1]:
        return ("mechanism  unknown: no mechanism link ([mechanism_io]) and no signals wired to the platform's "
                "inputs ([platform.inputs])")
    w = int(word)
    parts = []
    if bits[0] >= 0:
        if (w >> bits[0]) & 1:
            when = f" at t_run {capture_t_run:.3f} s" if capture_t_run is not None else ""
            parts.append(f"[bold green]CAPTURED[/]{when}")
        else:
            parts.append("capture open")
    if bits[1]:
        parts.append("latches " + " ".join(f"{k + 1}{'●' if (w >> b) & 1 else '○'}" for k, b in enumerate(bits[1])))
    line = "mechanism  " + "   ".join(parts)
    if status_age_s is not None and status_age_s > STALE_STATUS_S:
        line += f"  [yellow](stale: the last STATUS came {status_age_s:.1f} s ago)[/]"
    return line


def _vec(v, f: str) -> str:
    return " ".join(f.format(x) for x in v)


def _rotvec_deg(q) -> np.ndarray:
    q = np.asarray(q, dtype=float)
    n = float(np.linalg.norm(q[1:]))
    if n < 1e-15 or not math.isfinite(n):
        return np.zeros(3)
    ang = 2.0 * math.atan2(n, q[0])
    return np.degrees(q[1:] / n * ang)


def margins(sample: dict, limits: dict | None) -> list[tuple[str, float]]:
    """(name, fraction of the trip level used) of each safety envelope the panel shows: force
    and torque as the trips judge them -- per axis of the sensor-frame wrench ``w_S`` against
    ``rating_fraction x rating`` of that axis (rt.stand.safety FORCE_LIMIT / TORQUE_LIMIT), the
    name giving the sensor axis nearest its trip -- shortest and longest leg within their
    travel, command speed and rate."""
    if not limits:
        return []
    w = np.asarray(sample["w_S"], dtype=float)
    f_trip = np.asarray(limits["force_trip_n"]); m_trip = np.asarray(limits["torque_trip_nm"])
    fu, mu = np.abs(w[:3]) / f_trip, np.abs(w[3:]) / m_trip
    fa = int(np.argmax(np.nan_to_num(fu, nan=np.inf)))
    ma = int(np.argmax(np.nan_to_num(mu, nan=np.inf)))
    legs = np.asarray(sample["cmd_lengths"], dtype=float)
    lo, hi = limits["length_min_m"], limits["length_max_m"]
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    tw = np.asarray(sample["cmd_twist"], dtype=float)
    out = [(f"force S{'xyz'[fa]}", float(fu[fa])), (f"torque S{'xyz'[ma]}", float(mu[ma])),
           ("leg travel", float(np.max(np.abs(legs - mid)) / half) if np.any(legs) else 0.0),
           ("speed", float(np.linalg.norm(tw[:3]) / limits["v_max_m_s"])),
           ("rate", float(np.linalg.norm(tw[3:]) / limits["omega_max_rad_s"]))]
    return [(n, v if math.isfinite(v) else 1.0) for n, v in out]


def margin_bar(name: str, used: float, width: int = 24) -> str:
    """A bar that turns yellow past 70 % of the trip level and red past 90 %."""
    used = max(0.0, used)
    k = int(round(min(used, 1.0) * width))
    style = "red" if used >= 0.9 else ("yellow" if used >= 0.7 else "green")
    return f"{name:<10} [{style}]{'█' * k}[/]{'·' * (width - k)} {used * 100:5.1f} %"


@dataclass
class Trend:
    """The last ``n`` values of each wrench channel (the scrolling plots) and of the loop's
    wake lateness (p99 over the window)."""

    n: int = 500
    wrench: list = field(default_factory=list)
    lateness_us: deque = field(default_factory=lambda: deque(maxlen=500))

    def __post_init__(self):
        self.wrench = [deque(maxlen=self.n) for _ in range(6)]

    def clear_wrench(self) -> None:
        """Forget the plotted wrench (a tare finished: the values before it carried the unit's
        weight and the sensor's offset, and would hold the plots' range for their whole window)."""
        for d in self.wrench:
            d.clear()

    def add(self, sample: dict) -> None:
        w = sample["w_P"]
        for k in range(6):
            self.wrench[k].append(float(w[k]))
        self.lateness_us.append(float(sample["timing_ns"][0]) * 1e-3)

    def lateness_p99(self) -> float:
        return float(np.percentile(self.lateness_us, 99)) if self.lateness_us else 0.0


def fmt_header(sample: dict | None, status: dict, identity: dict, lease_line: str, run_end: str | None = None) -> str:
    """The header: state and phase, the run clock, cycle, stand and case; the lease line below.
    Outside a run the clock reads ``—`` and ``run_end`` says how and when the last run ended
    (``tripped at t_run 2.731 s``)."""
    st = name_of(STATES, sample["state"]) if sample else (status.get("state") or "?")
    ph = name_of(PHASES, sample["phase"]) if sample else (status.get("phase") or "?")
    t = sample["t"] if sample else float("nan")
    clock = f"t_run {t:+8.3f} s" if sample and math.isfinite(t) else "t_run     —    "
    if run_end and not (sample and math.isfinite(t)):
        clock += f" ({run_end})"
    case = status.get("case") or "no case"
    stand = identity.get("stand") or "?"
    return (f"[{STATE_STYLE.get(st, 'white')}]{st:<10}[/] {ph:<8} {clock}  cycle {int(sample['cycle']) if sample else 0:>8}"
            f"  stand {stand}  case {case}\n{lease_line}")


def fmt_links(sample: dict | None, status: dict) -> str:
    links = status.get("links") or {}
    lines = []
    for name in ("sensor", "platform"):
        l = links.get(name) or {}
        age = l.get("last_frame_age_s")
        if isinstance(age, (int, float)):
            age_s = f"{age * 1e3:7.1f} ms"
        else:
            age_s = "not recorded (a run log holds no link ages)" if status.get("replay") else "  never "
        lines.append(f"{name:<8} frame age {age_s}  {l.get('status', '')}")
    if sample is not None:
        lines.append(f"sensor   crc errors {int(sample['crc_errors'])}  seq gaps {int(sample['seq_gaps'])}  "
                     f"new sample {'yes' if sample['new_sample'] else 'no'}")
        pstate, fcode = name_of_platform(sample['platform_state']), int(sample['platform_fault'])
        line = f"platform {pstate}" + (f"  fault {fault_name(fcode)}" if fcode else "  no fault")
        if pstate in ("FAULT", "E_STOPPED"):
            line = f"[bold red]{line}[/]"
        age = platform_status_age(status)
        if age is not None and age > STALE_STATUS_S:
            line = f"[yellow]{line}  (stale: the last STATUS came {age:.1f} s ago)[/]"
        lines.append(line)
        if "delay" in sample:
            lines.append(fmt_delay(sample["delay"]))
    lines += fmt_health(status)
    return "\n".join(lines)


def fmt_delay(d) -> str:
    """The platform delay identified online, the lead the predictor used, and the acceleration
    offset kappa (rt.stand.delay_id; the run-log record ``delay``: 2 columns in older logs)."""
    d = np.atleast_1d(np.asarray(d, dtype=float))

    def ms(v):
        return f"{v * 1e3:.3f} ms" if math.isfinite(v) else "—"
    out = f"delay    platform {ms(d[0])} identified  loop lead {ms(d[1]) if d.size > 1 else '—'}"
    if d.size > 2 and math.isfinite(d[2]):
        out += f"  κ {d[2]:+.2e} s²"
    return out


def platform_status_age(status: dict) -> float | None:
    """The age (s) of the platform's last STATUS as the controller's ``status`` reported it
    (None: not known, e.g. a replay)."""
    age = ((status.get("links") or {}).get("platform") or {}).get("last_frame_age_s")
    return float(age) if isinstance(age, (int, float)) else None


def name_of_platform(code) -> str:
    return PLATFORM_STATES.get(int(code), f"?{int(code)}")


def fmt_timing(sample: dict | None, trend: Trend, status: dict) -> str:
    if sample is None:
        return "—"
    if status.get("replay") and not status.get("timing_recorded", True):
        return ("cycle timing not recorded: a stepped run (lockstep or a test rig: no wall clock)\n"
                f"missed deadlines {int(sample['missed'])}")
    tn = np.asarray(sample["timing_ns"], dtype=float) * 1e-3
    if not np.any(tn):
        return ("cycle timing all zero: a stepped loop (lockstep: the emulator sets the pace) is not timed\n"
                f"missed deadlines {int(sample['missed'])}")
    return (f"cycle {tn[1] + tn[2] + tn[3]:7.1f} µs  (read {tn[1]:.0f} update {tn[2]:.0f} write {tn[3]:.0f})\n"
            f"lateness now {tn[0]:7.1f} µs  p99 {trend.lateness_p99():7.1f} µs\n"
            f"missed deadlines {int(sample['missed'])}")


def extreme(values) -> float:
    """A plot column's value: the sample of largest magnitude, sign kept (Textual's Sparkline
    draws each column's maximum by default, so a negative peak would not show as a dip)."""
    return max(values, key=abs) if len(values) else 0.0


#: the wrench plots' resolution (N, N m): well below the sensor's noise, so nothing real is lost,
#: and a filter's decaying 1e-5 N residue after a tare draws as the flat line it is, not as a
#: full-height signal scaled to its own nano-range
PLOT_RESOLUTION = {"F": 0.05, "T": 0.005}


def plot_data(name: str, data) -> list[float]:
    """A wrench plot's values rounded to :data:`PLOT_RESOLUTION` (no negative zero)."""
    r = PLOT_RESOLUTION[name[0]]
    return [float(round(v / r) * r) + 0.0 for v in data]


def spark_label(name: str, data) -> str:
    """A wrench plot's label: its name and the range it is scaled to (top and bottom line), so a
    flat, noisy zero reads as a few newtons, not as a full-height signal."""
    unit = "N" if name.startswith("F") else "N·m"
    if not len(data):
        return name
    hi, lo = float(max(data)), float(min(data))
    top, bottom = _short(hi), _short(lo)
    if top == bottom and hi != lo:          # a small range about a large value: enough digits to tell
        d = min(3, max(1, 1 - int(math.floor(math.log10(hi - lo)))))
        top, bottom = f"{hi:+.{d}f}", f"{lo:+.{d}f}"
    return f"{name} {top:>6} {unit}\n   {bottom:>6} {unit}"


def _short(v: float) -> str:
    a = abs(v)
    if a >= 1e4:
        return f"{v / 1e3:+.0f}k"
    if a >= 1e3:
        return f"{v / 1e3:+.1f}k"
    if a >= 10:
        return f"{v:+.0f}"
    return f"{v:+.1f}"


FIDELITY_COLOUR = {"PASS": "bold green", "WARN": "bold yellow", "FAIL": "bold red"}


def fmt_fidelity(v: dict) -> str:
    """The run's fidelity verdict (rt.analysis.fidelity: ``status``, ``reason``) as one coloured
    line: ``fidelity PASS: <reason>``, the status in its colour."""
    from rich.markup import escape

    from rt.analysis.fidelity import format_fidelity
    st = v.get("status")
    line = escape(format_fidelity(v))
    return f"[{FIDELITY_COLOUR.get(st, 'yellow')}]{line}[/]"


def fmt_event(ev: dict) -> str:
    """One line of the event log; trips name their reason; an event the subscription had lost
    and the console fetched afterwards (``recovered``) says so (it is out of order)."""
    line = _event_line(ev)
    if ev.get("history"):
        return line + " [dim](from before this console attached)[/]"
    return line + " [dim](fetched from the controller: the subscription had not delivered it)[/]" if ev.get("recovered") else line


def _event_line(ev: dict) -> str:
    kind = ev.get("kind", "?")
    t = ev.get("t")
    head = f"{t:9.3f}" if isinstance(t, (int, float)) and math.isfinite(t) else "    —    "
    if kind in ("supervisor_trip", "trip"):
        return f"{head} [bold red]TRIP {ev.get('reason')}[/]: {ev.get('detail', '')}"
    if kind == "supervisor_transition":
        return f"{head} {ev.get('previous')} → {ev.get('state')} ({ev.get('reason') or ev.get('command') or ''})"
    if kind == "supervisor_refused":
        return f"{head} [yellow]refused {ev.get('command')}[/] ({ev.get('client')}): {ev.get('reason')}"
    if kind == "auth_denied":
        if ev.get("console"):
            return f"{head} [red]revoked console {ev['console']} refused[/] (key {ev.get('client_key')}) from {ev.get('address')}"
        return f"{head} [red]unknown console key refused[/] {ev.get('client_key')} from {ev.get('address')}"
    if kind == "run_start":
        tau = ev.get("tau_s")
        lead = f"{tau * 1e3:.3f} ms" if isinstance(tau, (int, float)) and math.isfinite(tau) else "—"
        return f"{head} run start: t_run {ev.get('t_run', 0.0):+.3f} s, loop lead τ {lead}"
    if kind == "supervisor_command":
        return f"{head} {ev.get('command')} by {ev.get('client')}"
    if kind == "lease_lost":
        if ev.get("why") == "key revoked":
            return f"{head} [red]lease of {ev.get('holder')} dropped[/]: its key was revoked"
        return f"{head} [yellow]lease of {ev.get('holder')} lapsed[/] (silent)"
    if kind == "energy_audit":
        from rt.analysis.audit import format_verdict
        colour = {"PASS": "green", "FAIL": "bold red"}.get(ev.get("verdict"), "yellow")
        return f"{head} [{colour}]{format_verdict(ev)}[/]"
    if kind == "fidelity_verdict":
        return f"{head} {fmt_fidelity(ev)}"
    if kind == "keys_reloaded":
        if ev.get("error"):
            return f"{head} [red]console keys not reloaded[/]: {ev['error']}"
        moved = "".join(f", {w} {', '.join(ev[w])}" for w in ("added", "removed") if ev.get(w))
        bad = f", [red]unreadable: {'; '.join(ev['unreadable'])}[/]" if ev.get("unreadable") else ""
        return f"{head} console keys reloaded: {len(ev.get('authorized', []))} authorised{moved}{bad}"
    if kind == "phase":
        return f"{head} phase {ev.get('phase')}"
    if kind == "first_contact":
        return f"{head} [bold]first contact[/] t_run {ev.get('t_run', 0.0):.3f} s"
    if kind in ("capture", "capture_released", "latch_closed", "latch_opened"):
        when = f" t_run {ev['t_run']:.3f} s" if isinstance(ev.get("t_run"), (int, float)) else f" ({ev.get('phase', '')})"
        if ev.get("at_start"):
            when = " (so when the controller started: its first STATUS)"
        src = {"mechanism_io": " (its control unit)", "platform_inputs": " (the platform's inputs)"}.get(
            ev.get("source"), "")
        if kind == "capture":
            return f"{head} [bold green]capture[/]: the mechanism{src} reports soft capture{when}"
        if kind == "capture_released":
            return f"{head} [bold yellow]capture released[/]: the mechanism's capture signal dropped{when}"
        return f"{head} latch {ev.get('latch')} {'closed' if kind == 'latch_closed' else 'open'}{when}"
    if kind in ("hook_closed", "hook_opened"):
        return f"{head} hook {ev.get('hook')} {'closed' if kind == 'hook_closed' else 'open'}"
    if kind == "mechanism_link_lost":
        return f"{head} [bold red]the mechanism's link is silent[/]: {ev.get('why')} (ARM refused until it answers)"
    if kind == "mechanism_link_restored":
        return f"{head} [green]the mechanism's link answers again[/]"
    if kind == "mechanism_fault":
        return f"{head} [bold red]mechanism fault[/]: {ev.get('name')} (code {ev.get('fault')})"
    if kind == "undock_start":
        return f"{head} [bold]undock[/]: the release output on, waiting for every latch to open"
    if kind == "mechanism_released":
        return f"{head} [green]latches open[/] after {ev.get('after_s', 0.0):.2f} s: the platform backs off"
    if kind in ("retract_start", "retract_done"):
        verb = "backing off" if kind == "retract_start" else "backed off"
        return f"{head} retract: {verb} {1000.0 * float(ev.get('distance_m') or 0.0):.0f} mm along the docking axis"
    if kind == "controller_restarted":
        lease = "; the lease this console held went with the old one: take control again (c)" if ev.get(
            "lease_lost") else ""
        return (f"{head} [bold yellow]a new controller process answers[/]: its events and its clock start "
                f"again (the lines above are the previous one's){lease}")
    if kind == "supervisor_finish":
        return f"{head} [bold blue]finished[/]: {ev.get('reason')}"
    rest = {k: v for k, v in ev.items() if k not in ("t", "cycle", "kind", "seq", "k", "sensing_bias", "eseq",
                                                     "recovered", "history", "before_log", "t_controller", "at_start")}
    return f"{head} {kind} {rest if rest else ''}"
