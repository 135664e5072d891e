"""The cycle's arrays bound to a controller (docs/controller.md, "Cycle"): gathered by the
sources rt.control.cycle_data declares, checked against the declared kinds and shapes and
packed for the one compiled call (:func:`pack_cycle`), and the controller's own arrays
allocated (:func:`allocate`). Not real-time: it runs whenever an array is (re)bound — load,
arm, start, a new loop — never inside a cycle.
"""
from __future__ import annotations

from operator import attrgetter

from rt.control.cycle_data import CYCLE_ARRAYS, KINDS
from rt.record import arraypack as AP

_GET = tuple(attrgetter(a.source) for a in CYCLE_ARRAYS)


def shape_context(ctl, sc=None) -> dict:
    """What the declared shapes' names mean for this controller (and flight model ``sc``): the
    layouts' lengths and this stand's and case's sizes."""
    from drivers.framing import MAX_FRAME
    from rt.control import kernels as CK
    from rt.dynamics import coupling as CP
    from rt.stand import contact_gate as CG
    from rt.stand import delay_id as DY
    from rt.stand import hexapod as HX
    from rt.stand import safety as SF
    from rt.stand import wire_kernels as WK
    sc = ctl.sc if sc is None else sc
    return {"IN_LEN": CK.IN_LEN, "ST_LEN": WK.ST_LEN, "MAX_FRAME": MAX_FRAME, "W": ctl.row.shape[0],
            "N_ROW_FIELDS": len(CK.ROW_FIELDS), "t_cap": ctl._timing.shape[1], "n_raw": ctl.sensing.n_raw,
            "npar": sc.par.shape[1], "n_par_rows": sc.par.shape[0], "nenv": sc.env.shape[0], "ns": sc.ns, "nws": sc.ws.ws.shape[1],
            "nrel": sc.ws.rel.shape[0], "OUT_LEN": CP.OUT_LEN, "N_LIMITS": SF.N_LIMITS, "BOX_SIZE": HX.BOX_SIZE,
            "burst": max(1, ctl.safety.limits.burst_window), "XL_LEN": CK.XL_LEN, "XC_LEN": CK.XC_LEN,
            "n_trk": ctl.trk_ring.shape[0], "n_dly": ctl.dly.shape[0], "DR_LEN": DY.DR_LEN, "G_LEN": CG.G_LEN,
            "ST_LEN_RUN": CK.ST_LEN, "EP_LEN": CK.EP_LEN, "log_cap": ctl._log_ring.shape[0]}


def cycle_arrays(ctl, sc=None) -> tuple:
    """The arrays of :data:`CYCLE_ARRAYS` from the controller ``ctl`` (its flight model ``sc``
    in place of ``ctl.sc`` when given: the warm-up's copy), in table order."""
    if sc is None:
        return tuple(g(ctl) for g in _GET)
    return tuple(getattr_path(sc, a.source[3:]) if a.source.startswith("sc.") else g(ctl)
                 for a, g in zip(CYCLE_ARRAYS, _GET))


def getattr_path(obj, path: str):
    return attrgetter(path)(obj)


def pack_cycle(ctl, sc=None, arrays: tuple | None = None) -> AP.Packed:
    """The packed table of the cycle's arrays (``arrays``: already gathered), each checked
    against its declared kind (rt.record.arraypack.pack names the array that is wrong)."""
    arrays = cycle_arrays(ctl, sc) if arrays is None else arrays
    ctx = shape_context(ctl, sc)
    for a, arr in zip(CYCLE_ARRAYS, arrays):
        want = tuple(ctx[d] if isinstance(d, str) else d for d in a.shape)
        if getattr(arr, "shape", None) != want:
            raise ValueError(f"cycle array {a.name!r} ({a.source}): shape {getattr(arr, 'shape', None)}, declared "
                             f"{a.shape} = {want}")
    try:
        return AP.pack(arrays, KINDS)
    except (TypeError, ValueError) as e:
        k = int(str(e).split()[1].rstrip(":")) if str(e).startswith("array ") else None
        if k is not None:
            a = CYCLE_ARRAYS[k]
            raise type(e)(f"cycle array {a.name!r} ({a.source}): {e}") from None
        raise


def allocate(ctl, n_raw: int, ns: int) -> None:
    """Allocate the controller's own cycle arrays (those :data:`CYCLE_ARRAYS` finds on the
    controller, not on a part) for ``n_raw`` sensor channels and ``ns`` state entries per
    vehicle: the record row and its field views, the command, the controller-level limits and
    counters, the delay estimator, the contact gate, the statistics. Not real-time: at
    construction and when a case with another state size loads."""
    import math

    import numpy as np

    from rt.control import kernels as CK
    from rt.control.recorder import closed_sink, record_fields
    from rt.dynamics import coupling as CP
    from rt.stand import contact_gate as CG
    from rt.stand import delay_id as DY
    from rt.stand import wire_kernels as WK

    if ctl.recorder.writer is not None:
        ctl.recorder.close(block=False)    # its records are rows of the old layout
    ctl.ns = ns
    ctl.fields = record_fields(n_raw, ns)
    ctl.row = np.zeros(sum(ctl.fields.values()))
    off = 0
    ctl.v: dict[str, np.ndarray] = {}
    for name, size in ctl.fields.items():
        ctl.v[name] = ctl.row[off:off + size]
        off += size
    v = ctl.v
    ctl.cmd_pose = v["cmd_pose"]
    ctl.cmd_twist = v["cmd_twist"]
    ctl.cmd_acc = v["cmd_acc"]
    ctl.cmd_lengths = v["cmd_lengths"]
    starts = np.cumsum([0] + list(ctl.fields.values()))
    ctl._ix = {name: int(starts[k]) for k, name in enumerate(ctl.fields)}
    # rel_pose, rel_twist, rel_acc are contiguous in the row and in rt.dynamics.coupling's out record
    a, b = ctl._ix["rel_pose"], ctl._ix["rel_acc"] + 6
    assert b - a == CP.O_ACC + 6 - CP.O_REL
    # meas_pose and meas_lengths are contiguous, as rt.control.kernels.ingest writes them
    assert ctl._ix["meas_lengths"] == ctl._ix["meas_pose"] + 7
    v["rel"] = ctl.row[a:b]
    ctl.prev_pose = np.zeros(7)
    ctl.sent_pose = np.zeros(7)      # the last set-point sent (a stop continues from it)
    ctl.sent_twist = np.zeros(6)
    ctl.run_start_pose = np.zeros(7)
    ctl.prev_vel = np.zeros(7)      # the last command's twist and, at CK.PV_DT, its step
    ctl.out = np.zeros(CP.OUT_LEN)
    ctl.w_in = np.zeros((2, 6))
    ctl._no_wrench = np.zeros((2, 6))
    ctl.mv = np.zeros(CK.MV_LEN)
    ctl.ru = np.zeros(CK.RU_LEN)
    ctl.scr = np.zeros(16)
    ctl.raw_prev = np.full(n_raw, np.nan)
    ctl.meas_pose = v["meas_pose"]
    ctl.meas_pose[3] = 1.0
    meas = getattr(ctl, "meas", None)
    ins = getattr(ctl, "ins", None)
    if meas is not None and ins is not None and ins[CK.IN_STATUS_SEEN]:
        # a reallocation (a case with another state size) keeps the newest STATUS's pose and
        # lengths: a platform that reports only every n-th cycle (an industrial robot,
        # drivers.robot_platform) would otherwise be seen at the origin until its next STATUS
        v["meas_pose"][:] = meas[WK.ST_POSE:WK.ST_POSE + 7]
        v["meas_lengths"][:] = meas[WK.ST_LENGTHS:WK.ST_LENGTHS + 6]
    ctl.rix = np.array([ctl._ix[name] for name in CK.ROW_FIELDS], dtype=np.int64)
    ctl._x0 = np.zeros((2, ns))             # the record's vehicle states before a case is loaded
    # where the kernels commit the row (rt.record.runlog RunLogWriter.ring / .cursor): the open
    # writer's, else a closed stand-in
    ctl._log_ring, ctl._log_cursor = closed_sink(ctl.row.shape[0])
    ctl._hil_pack = None
    ctl.xlim = np.zeros(CK.XL_LEN)
    lim = ctl.stand.limits
    d = ctl.stand.delays
    delay_cycles = max(1, int(round((d.transport_s + d.servo_s) / ctl.period_s)) + 1)
    ctl.xlim[:] = (lim.tracking_error_max_m, lim.platform_stale_cycles, lim.sensor_frozen_samples,
                    delay_cycles, 0.0, lim.miss_budget, lim.miss_window_s)
    ctl.xctr = np.zeros(CK.XC_LEN, dtype=np.int64)
    ctl.dly = DY.pack_delay_id(d.identify, d.identify_time_constant_s, d.identify_min_speed_m_s,
                                d.identify_settle_s, d.identify_band_s, d.platform_s, d.status_latency_s, ctl.period_s)
    cg = ctl.stand.contact_gate
    ctl.gate = CG.pack_gate(cg.enabled, cg.on_n, cg.off_n, cg.persist, cg.release_s, ctl.period_s)
    ctl.delay_rec = v["delay"]
    ctl.delay_rec[:] = math.nan
    ctl.trk_ring = np.zeros((max(delay_cycles + 2, DY.ring_rows(ctl.dly)), 3))
    ctl._empty = np.zeros(0)
    ctl.stats = np.zeros(CK.ST_LEN)
    ctl.stats[CK.ST_FIRST_CONTACT] = -1.0
    ctl.endp = np.zeros(CK.EP_LEN)
    ctl._mode = CP.PREDICTORS[d.predictor] if ctl.compensate else CP.MODE_OFF
