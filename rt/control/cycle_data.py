"""The cycle's data, declared once (docs/controller.md, "Cycle"): every array the compiled
DYNAMICS cycle (``rt.control.kernels.hil_cycle_packed``) takes, by name, with its kind (dtype
and rank: rt.record.arraypack), where the shell finds it, its unit and frame, and what it is.

From this one declaration come

* the table's row of each array: :data:`HIL`, a named tuple of row indices that the compiled
  unpack reads by name (``AP.f8_1(tbl, HIL.w_P)``; tests/rt/control/test_cycle_data.py checks
  that every unpack line reads its array with its declared kind);
* the packing (rt.control.cycle_store): ``cycle_arrays`` gathers the arrays from the
  controller by their ``source`` (an attribute path) and ``pack_cycle`` packs them, checking
  each against its declared kind and shape — no list of arrays by position is written anywhere else;
* what the instruction counter (bench/kernel_instructions.py) and the warm-up compile with.

Frames: W lab, B platform base, T platform top, A active docking unit, P passive unit, S sensor
(docs/conventions.md). A wrench is ``[f; m]``; a pose ``[p; q]`` with q scalar-first.

Data only (the compiled cycle imports it); the binding and allocation are rt.control.cycle_store.
"""
from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

from rt.record import arraypack as AP


@dataclass(frozen=True)
class CycleArray:
    """One array of the cycle: ``name`` (the kernel's), ``kind`` (rt.record.arraypack),
    ``shape`` (ints, and names resolved when the arrays are packed: the layouts' lengths and the
    sizes of this stand and case, :func:`shape_context`), ``source`` (its attribute path from
    the controller), ``unit`` (unit and frame, or its layout's constants), ``meaning``."""

    name: str
    kind: str
    shape: tuple
    source: str
    unit: str
    meaning: str


_A = CycleArray
CYCLE_ARRAYS: tuple[CycleArray, ...] = (
    # ---- the links, the frame out, the record row
    _A("ins", "f8_1", ("IN_LEN",), "ins", "IN_* (rt.control.kernels)", "the cycle's link state: inputs from the shell, scan results, counters"),
    _A("meas", "f8_1", ("ST_LEN",), "meas", "ST_* (rt.stand.wire_kernels)", "the newest valid platform STATUS"),
    _A("tx", "u1_1", ("MAX_FRAME",), "tx", "bytes", "the cycle's platform frame, encoded"),
    _A("row", "f8_1", ("W",), "row", "the run log's fields", "the cycle's run-log record"),
    _A("rix", "i8_1", ("N_ROW_FIELDS",), "rix", "RX_* -> row offset", "where the kernels write each record field in the row"),
    _A("timing", "i8_2", (8, "t_cap"), "_timing", "ns; rt.control.loop TIMING_FIELDS", "the loop's timing ring"),
    _A("sent_pose", "f8_1", (7,), "sent_pose", "m, -; T in B", "the last set-point sent to the platform"),
    _A("sent_twist", "f8_1", (6,), "sent_twist", "m/s, rad/s; T in B", "its twist"),
    # ---- sensing (rt.stand.sensing)
    _A("C_eff", "f8_2", (6, "n_raw"), "sensing.C_eff", "N or N·m per count", "calibration matrix over counts per unit"),
    _A("R_PS", "f8_2", (3, 3), "sensing.R_PS", "-; R_PS", "the sensor's orientation in P"),
    _A("p_PS_P", "f8_1", (3,), "sensing.p_PS_P", "m; P", "the sensor's origin in P"),
    _A("raw", "f8_1", ("n_raw",), "sensing.raw", "counts", "the newest raw sample"),
    _A("bias", "f8_1", (6,), "sensing.bias", "N, N·m; P", "the tare: the mean untared wrench on the passive unit over the tare"),
    _A("acc_t", "f8_1", (6,), "sensing.acc", "N, N·m; P", "the tare's running sum of the untared wrench"),
    _A("sctr", "i8_1", (4,), "sensing.ctr", "samples", "the tare's counters"),
    _A("coef", "f8_1", (5,), "sensing.coef", "-", "the low-pass filter's coefficients"),
    _A("fstate", "f8_2", (6, 2), "sensing.fstate", "N, N·m", "the low-pass filter's state"),
    _A("w_S", "f8_1", (6,), "sensing.w_S", "N, N·m; S", "the wrench in the sensor frame, untared (C_eff raw)"),
    _A("w_P_raw", "f8_1", (6,), "sensing.w_P_raw", "N, N·m; P", "the wrench on the passive unit before the filter"),
    _A("w_P", "f8_1", (6,), "sensing.w_P", "N, N·m; P", "the contact wrench on the passive unit, filtered"),
    # ---- the flight model (rt.dynamics.spacecraft, berthing_flight)
    _A("par", "f8_2", ("n_par_rows", "npar"), "sc.par", "per vehicle (rt.dynamics.spacecraft P_*)",
       "the flight model's parameters: one row per spacecraft (2), or the berthing arm's one row"),
    _A("env", "f8_1", ("nenv",), "sc.env", "E_* (rt.dynamics.spacecraft)", "orbit and environment"),
    _A("x", "f8_2", (2, "ns"), "sc.x", "per vehicle state (X_*)", "both vehicles' states"),
    _A("w_in", "f8_2", (2, 6), "w_in", "N, N·m; per vehicle port frame", "the wrench on each vehicle's port"),
    _A("geo", "f8_1", (14,), "geo", "G_* (rt.dynamics.coupling)", "the stand's frame chain: P in B, T in A"),
    _A("out", "f8_1", ("OUT_LEN",), "out", "O_* (rt.dynamics.coupling)", "the coupling's output: relative state, prediction, command"),
    _A("k", "f8_3", (4, 2, "ns"), "sc.ws.k", "-", "the integrator's stage derivatives"),
    _A("xt", "f8_2", (2, "ns"), "sc.ws.xt", "-", "the integrator's trial state"),
    _A("ws", "f8_2", (2, "nws"), "sc.ws.ws", "-", "the flight model's scratch"),
    _A("rel", "f8_1", ("nrel",), "sc.ws.rel", "-", "the relative state's scratch"),
    # ---- the command
    _A("cmd_pose", "f8_1", (7,), "cmd_pose", "m, -; T in B", "the platform-top command"),
    _A("prev_pose", "f8_1", (7,), "prev_pose", "m, -; T in B", "the last cycle's command (backward differences)"),
    _A("prev_vel", "f8_1", (7,), "prev_vel", "m/s, rad/s; B; [6] = its step (s)", "the last cycle's command twist"),
    _A("cmd_twist", "f8_1", (6,), "cmd_twist", "m/s, rad/s; B", "the command's twist"),
    _A("cmd_acc", "f8_1", (6,), "cmd_acc", "m/s², rad/s²; B", "the command's acceleration"),
    _A("cmd_lengths", "f8_1", (6,), "cmd_lengths", "m", "the command's actuator lengths"),
    _A("scr", "f8_1", (16,), "scr", "-", "the cycle's scratch"),
    # ---- safety (rt.stand.safety)
    _A("lim", "f8_1", ("N_LIMITS",), "safety.lim", "L_* (rt.stand.safety)", "the safety limits"),
    _A("base", "f8_2", (6, 3), "safety.g.base", "m; B", "the hexapod's base joints"),
    _A("top", "f8_2", (6, 3), "safety.g.top", "m; T", "the hexapod's top joints"),
    _A("leg_lim", "f8_1", (2,), "safety.leg_lim", "m", "the actuators' length limits"),
    _A("box", "f8_1", ("BOX_SIZE",), "safety.g.box", "m, rad; B", "the pose box"),
    _A("ctr", "i8_1", (4,), "safety.ctr", "C_* (rt.stand.safety)", "the safety checks' counters"),
    _A("crc_ring", "i8_1", ("burst",), "safety.crc_ring", "frames per cycle", "corrupt frames over the burst window"),
    _A("gap_ring", "i8_1", ("burst",), "safety.gap_ring", "gaps per cycle", "sequence gaps over the burst window"),
    _A("detail", "f8_1", (2,), "safety.detail", "[index, value]", "what tripped, for the trip's text"),
    _A("xlim", "f8_1", ("XL_LEN",), "xlim", "XL_* (rt.control.kernels)", "the controller-level limits"),
    _A("xctr", "i8_1", ("XC_LEN",), "xctr", "XC_* (rt.control.kernels)", "the controller-level counters"),
    _A("trk_ring", "f8_2", ("n_trk", 3), "trk_ring", "m; B", "the commands sent, for the tracking error and the delay"),
    _A("dly", "f8_1", ("n_dly",), "dly", "DY_* (rt.stand.delay_id)", "the platform delay's estimator"),
    _A("drec", "f8_1", ("DR_LEN",), "delay_rec", "s; DR_* (rt.stand.delay_id)", "the delay record of the row"),
    _A("gate", "f8_1", ("G_LEN",), "gate", "rt.stand.contact_gate", "the contact gate's state"),
    _A("raw_prev", "f8_1", ("n_raw",), "raw_prev", "counts", "the previous raw sample (a frozen sensor)"),
    _A("meas_pose", "f8_1", (7,), "meas_pose", "m, -; T in B", "the platform's measured top pose"),
    # ---- the run's figures and end, the run log's ring
    _A("stats", "f8_1", ("ST_LEN_RUN",), "stats", "ST_* (rt.control.kernels)", "the run's statistics and end (codes of rt.control.end_criteria)"),
    _A("endp", "f8_1", ("EP_LEN",), "endp", "EP_* (rt.control.end_criteria)", "the end criteria's parameters"),
    _A("ring", "f8_2", ("log_cap", "W"), "_log_ring", "the run log's fields", "the open run log's ring (a closed stand-in without one)"),
    _A("cursor", "i8_1", (4,), "_log_cursor", "CUR_* (rt.record.runlog)", "its cursor"),
)

#: each array's row in the packed table, by name (hil_cycle_packed reads ``HIL.<name>``)
HIL = namedtuple("HIL", [a.name for a in CYCLE_ARRAYS])(*range(len(CYCLE_ARRAYS)))
#: the arrays' kinds, in table order
KINDS: tuple[str, ...] = tuple(a.kind for a in CYCLE_ARRAYS)
assert len(set(HIL._fields)) == len(CYCLE_ARRAYS), "a cycle array declared twice"


#: a source's attribute named otherwise than its array, and why (check_declaration)
ALIASES = {"acc_t": "acc", "sctr": "sensing.ctr", "ctr": "safety.ctr", "drec": "delay_rec", "timing": "_timing", "ring": "_log_ring",
           "cursor": "_log_cursor"}


def check_declaration(arrays: tuple[CycleArray, ...] = CYCLE_ARRAYS) -> None:
    """Refuse a declaration that binds an array to another's source: each source ends in the
    array's name (or its :data:`ALIASES` entry: a name, or a dotted tail where two owners' arrays
    share a name, as the sensing's and the safety's counters ``ctr`` do), each name and source once, each
    kind an arraypack kind. Run at import (a swapped declaration never loads) and by the tests."""
    names, sources = set(), set()
    for a in arrays:
        if a.name in names or a.source in sources:
            raise ValueError(f"cycle array {a.name!r} ({a.source}) declared twice")
        names.add(a.name)
        sources.add(a.source)
        if a.kind not in AP.KINDS:
            raise ValueError(f"cycle array {a.name!r}: kind {a.kind!r} is not one of {sorted(AP.KINDS)}")
        if len(a.shape) != AP.KINDS[a.kind][1]:
            raise ValueError(f"cycle array {a.name!r}: a {a.kind} array has {AP.KINDS[a.kind][1]} dimension(s), "
                             f"its shape {a.shape} has {len(a.shape)}")
        tail = ALIASES.get(a.name, a.name)
        if a.source != tail and not a.source.endswith("." + tail):
            raise ValueError(f"cycle array {a.name!r} is bound to {a.source!r}, which does not end in {tail!r}: an "
                             "array declared with another's source")


check_declaration()
