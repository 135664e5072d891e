"""Industrial robots as the stand's platform (issue 41; docs/platforms.md): the docking's fidelity
through the emulated KUKA (RSI) and ABB (EGM) robots in lockstep, and the adapters' cost.

* ``rsi_docking_peak_force_error_pct`` / ``egm_docking_peak_force_error_pct``: the nominal case
  (config/cases/nominal.toml) on config/stands/kuka_rsi.toml / abb_egm.toml with the emulated
  robot's defaults (config/emulator/<protocol>.toml), lockstep, against the all-digital reference
  under the stand's conditions from the mechanism state the run's arming left, as
  bench/closed_loop.py's docking figures: the peak force's error against the reference's band
  over the run's sampling phase (0 inside); with the run's noise floor, its final state and the
  robot's delay the controller identified (``*_delay_identified_ms``). Goal 2 %;
  ``rsi_docking_delay_sweep``: the same error with the emulated KUKA's transport delay changed
  (the robot's delay from ~7 ms upward), to show up to which delay the goal holds;
* ``rsi_capture_time_error_ms``: the capture on the model's clock against the reference's;
* ``rsi_rod_cor_error_pct`` / ``rsi_rod_cor_error_pct_uncompensated``: the elastic-rod calibration
  (config/cases/elastic_rod.toml, sim_stand/calibration.py) on the KUKA stand with the emulated
  KUKA's delay and lag: the CoR's error against the closed form with the lead set to the robot's
  delay (``[delays]`` transport_s + servo_s, from the emulator's figures) and without
  compensation; ``rsi_rod_expected_excess_pct`` the uncompensated excess ``pi w tau / 2`` at it;
* ``platform_adapter_us_p50_kuka_rsi`` / ``_abb_egm`` (and ``_p99``): one robot cycle through the
  adapter -- ``read()`` (the robot's datagram decoded, calibrated, a canonical STATUS built) and
  ``write()`` (the controller's POSE frame decoded, turned into the robot's target, the answer
  encoded) -- with the socket replaced by a stub, µs; goal 20 µs.
"""
from __future__ import annotations

import math
import re
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
NOMINAL = REPO / "config" / "cases" / "nominal.toml"
ROD = REPO / "config" / "cases" / "elastic_rod.toml"
KEYS = {"kuka_rsi": "rsi", "abb_egm": "egm"}


def run(quick: bool = False) -> dict:
    out: dict = {}
    for proto in KEYS:
        out.update(adapter_timing(proto))
    for proto, key in KEYS.items():
        out.update(docking(proto, key))
    if not quick:
        out.update(rsi_delay_sweep())
    out.update(rsi_rod())
    return out


# ---------------------------------------------------------------------------- the adapter's cost
class _StubLink:
    """The robot's link without a socket: one prepared datagram per read, the answers kept."""

    def __init__(self, transport, datagram: bytes):
        self.counters = transport.counters
        self.datagram = datagram
        self.sent = 0

    def receive(self, out: list) -> None:
        out.append((self.datagram, ("127.0.0.1", 1)))

    def send_to(self, data, addr) -> bool:
        self.sent += 1
        return True


def adapter_timing(protocol: str, n: int = 20000) -> dict:
    from drivers import abb_egm as EGM
    from drivers import kuka_rsi as RSI
    from drivers.hardware import platform_class
    from drivers.motion_platform import Command, encode_command
    from rt.config.stand import load_stand

    stand = load_stand(REPO / "config" / "stands" / f"{protocol}.toml")
    p = platform_class(protocol)()
    p.configure_options(stand.platform_options)
    tcp = ((1.59, 0.0, 1.95), (0.0, 0.0, 0.0, 1.0))          # the top at (0.01, 0, 1.95) m through the calibration
    stamps = iter(range(1, 10 * n))

    def datagram(k: int) -> bytes:
        if protocol == "kuka_rsi":
            return RSI.encode_robot_state(RSI.xyzabc_from_pose(tcp), RSI.xyzabc_from_pose(tcp), 0, 1000 + 4 * k)
        return EGM.encode_robot(k, 1000 + 4 * k, tcp, tcp)

    class T:
        counters = type("C", (), {"malformed": 0})()
    link = _StubLink(T, datagram(0))
    p.transport = link
    # engage on the first state
    p.read()
    p.write(encode_command(Command.ENGAGE, 1, 0))
    pose = encode_command(Command.POSE, 2, 0, (0.011, 0.001, 1.951, 1.0, 0.0, 0.0, 0.0))
    grams = [datagram(next(stamps)) for _ in range(n)]      # each with a new stamp (a stale one is refused)
    times = np.empty(n)
    clock = time.perf_counter_ns
    for i in range(n):
        link.datagram = grams[i]
        t0 = clock()
        p.read()
        p.write(pose)
        times[i] = clock() - t0
    assert p.refused == {} and link.sent == n + 1, (p.refused, link.sent)
    us = times / 1e3
    return {f"platform_adapter_us_p50_{protocol}": round(float(np.percentile(us, 50)), 2),
            f"platform_adapter_us_p99_{protocol}": round(float(np.percentile(us, 99)), 2)}


# ---------------------------------------------------------------------------- docking fidelity
def _fidelity(stand_path, emulator_path=None) -> dict:
    from bench.closed_loop import peak_noise_floor_pct
    from rt.analysis.compare import compare_logs
    from rt.config.case import load_case
    from rt.config.stand import load_stand
    from rt.record.runlog import read_log
    from sim_stand.cli import _emulator_config, run_demo
    from sim_stand.reference import reference_of_run

    stand = load_stand(stand_path)
    with tempfile.TemporaryDirectory() as d:
        hil = run_demo(NOMINAL, stand_path, emulator_path=emulator_path, log_dir=d)
        emu = _emulator_config(emulator_path, NOMINAL, stand)
        ref = reference_of_run(load_case(NOMINAL), stand, emu, Path(d) / "reference.dslog", hil["log"],
                               require_state=True)
        rep = compare_logs(hil["log"], ref.log_path)
        floor = peak_noise_floor_pct(hil["log"])
        dly = read_log(hil["log"], ["delay"]).fields["delay"]
    cap = (1e3 * (hil["time_to_capture_s"] - ref.time_to_capture_s)
           if hil["time_to_capture_s"] is not None and ref.time_to_capture_s is not None else None)
    ident = float(dly[-1, 0]) if len(dly) else math.nan
    return {"peak": rep["peak_force_error_band_pct"], "peak_phase0": rep["peak_force_error_pct"], "capture_ms": cap,
            "floor": floor, "final_state": hil["final_state"], "trip": hil["trip"], "captured": hil["captured"],
            "ref_captured": ref.captured, "delay_ms": 1e3 * ident if math.isfinite(ident) else None}


def _r(v, nd=3):
    return None if v is None or not math.isfinite(v) else round(float(v), nd)


def docking(protocol: str, key: str) -> dict:
    f = _fidelity(REPO / "config" / "stands" / f"{protocol}.toml")
    out = {f"{key}_docking_peak_force_error_pct": _r(f["peak"]),
           f"{key}_docking_peak_force_error_pct_phase0": _r(f["peak_phase0"]),
           f"{key}_docking_peak_noise_floor_pct": _r(f["floor"]),
           f"{key}_docking_final_state": f["final_state"], f"{key}_docking_trip": f["trip"],
           f"{key}_docking_captured_agrees": bool(f["captured"] == f["ref_captured"]),
           f"{key}_docking_delay_identified_ms": _r(f["delay_ms"], 2),
           f"{key}_robot_delay_ms": round(1e3 * robot_delay_s(protocol), 2)}
    if key == "rsi":
        out["rsi_capture_time_error_ms"] = _r(f["capture_ms"])
    else:
        out["egm_capture_time_error_ms"] = _r(f["capture_ms"])
    return out


def robot_delay_s(protocol: str, emu=None) -> float:
    """The emulated robot's delay as the controller sees it in lockstep: the robot cycle's
    sampling (sim_stand.robot_twin.interpolation_delay_s) + the emulator's transport delay + its
    servo lag 2 zeta / wn."""
    from rt.config.stand import load_stand
    from sim_stand.robot_twin import interpolation_delay_s
    from sim_stand.world_config import load_emulator

    stand = load_stand(REPO / "config" / "stands" / f"{protocol}.toml")
    emu = emu or load_emulator(REPO / "config" / "emulator" / f"{protocol}.toml")
    pp = emu.platform
    return interpolation_delay_s(stand) + pp.transport_delay_s + 2.0 * pp.damping_ratio / (2.0 * math.pi * pp.bandwidth_hz)


def _emulator_with(base: Path, d: Path, name: str, **platform) -> Path:
    """A copy of the emulator config ``base`` in ``d`` with ``[platform]`` keys replaced (its
    relative paths made absolute)."""
    text = base.read_text()
    text = re.sub(r'"(\.\./[^"]+)"', lambda m: f'"{(base.parent / m.group(1)).resolve()}"', text)
    for k, v in platform.items():
        text, n = re.subn(rf"(?m)^{k}\s*=\s*[^\n#]*", f"{k} = {v!r}", text)
        assert n == 1, k
    p = d / f"{name}.toml"
    p.write_text(text)
    return p


def rsi_delay_sweep(transports_ms=(0.0, 2.0, 4.0, 8.0, 16.0)) -> dict:
    """The nominal case's peak-force error with the emulated KUKA's transport delay changed."""
    from sim_stand.world_config import load_emulator

    base = REPO / "config" / "emulator" / "kuka_rsi.toml"
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for ms in transports_ms:
            p = _emulator_with(base, Path(d), f"t{ms:g}", transport_delay_s=ms * 1e-3)
            f = _fidelity(REPO / "config" / "stands" / "kuka_rsi.toml", p)
            rows.append((1e3 * robot_delay_s("kuka_rsi", load_emulator(p)), f))
    # the delay up to which the goal holds: every delay of the sweep up to it within 2 % (None: not
    # even the smallest)
    within = []
    for dl, f in sorted(rows, key=lambda r: r[0]):
        if f["peak"] is None or abs(f["peak"]) > 2.0 or f["trip"] is not None:
            break
        within.append(dl)
    return {"rsi_docking_delay_sweep": "; ".join(
                f"{dl:.1f} ms: {'-' if f['peak'] is None else format(f['peak'], '+.2f')} % "
                f"(capture {'-' if f['capture_ms'] is None else format(f['capture_ms'], '+.1f')} ms, {f['final_state']}"
                + ("" if f["trip"] is None else f", trip {f['trip'].split('(')[0].strip()}") + ")" for dl, f in rows),
            "rsi_docking_peak_force_within_2pct_up_to_delay_ms": _r(max(within), 1) if within else None}


# ---------------------------------------------------------------------------- the rod at the robot's delay
def rsi_rod() -> dict:
    from rt.config.case import load_case
    from sim_stand.calibration import rod_hil

    stand_file = REPO / "config" / "stands" / "kuka_rsi.toml"
    rod_emu = REPO / "config" / "emulator" / "elastic_rod.toml"
    rsi_emu = REPO / "config" / "emulator" / "kuka_rsi.toml"
    from sim_stand.world_config import load_emulator
    pk = load_emulator(rsi_emu).platform
    tau = robot_delay_s("kuka_rsi")
    case = load_case(ROD)
    out = {}
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        # the rod's emulated stand with the emulated KUKA's motion (its delay and lag)
        emu = _emulator_with(rod_emu, d, "rod_kuka", bandwidth_hz=pk.bandwidth_hz, damping_ratio=pk.damping_ratio,
                             transport_delay_s=pk.transport_delay_s, velocity_max_m_s=pk.velocity_max_mps,
                             acceleration_max_m_s2=pk.acceleration_max_mps2)
        # the stand leading by the robot's whole delay: its servo lag as servo_s, the rest as transport_s
        lag = 2.0 * pk.damping_ratio / (2.0 * math.pi * pk.bandwidth_hz)
        text = stand_file.read_text()
        text = re.sub(r"(?m)^transport_s\s*=\s*[^\n#]*", f"transport_s = {tau - lag!r}", text)
        text = re.sub(r"(?m)^servo_s\s*=\s*[^\n#]*", f"servo_s = {lag!r}", text)
        led = d / "kuka_rsi_led.toml"
        led.write_text(text)
        for comp, key in ((True, "rsi_rod_cor_error_pct"), (False, "rsi_rod_cor_error_pct_uncompensated")):
            m = rod_hil(ROD, comp, log_dir=d, emulator_path=emu, stand_path=led)
            out[key] = round(m["error_pct"], 3)
            out[key.replace("error_pct", "final_state")] = m["final_state"] if m["trip"] is None else \
                f"{m['final_state']}: {m['trip'].split('(')[0].strip()}"
            if comp:
                out["rsi_rod_noise_floor_pct"] = round(m["noise_floor_pct"], 4)
                out["rsi_rod_delay_identified_ms"] = _r(1e3 * m["delay_identified_s"], 2)
    out["rsi_rod_robot_delay_ms"] = round(1e3 * tau, 2)
    out["rsi_rod_expected_excess_pct"] = round(100.0 * math.pi * case.contact.omega_radps * tau / 2.0, 2)
    return out
