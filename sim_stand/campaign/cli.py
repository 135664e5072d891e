"""The shells of ``dockstand campaign run | rerun | summary`` and ``dockstand reconstruct``
(registered by :mod:`sim_stand.campaign.commands`). A user's mistake (bad file, bad directory)
is one ``error:`` line and exit status 2, never a traceback. Not for the real-time loop."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path


from rt.analysis.commands import output_dir_error


def _err(msg) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def _load(path):
    from sim_stand.campaign.spec import load_campaign
    return load_campaign(path)


def cmd_run(args) -> int:
    from rt.config import ConfigError
    from sim_stand.campaign.engine import run_campaign
    from sim_stand.campaign.store import StoreError

    try:
        c = _load(args.file)
    except ConfigError as e:
        return _err(e)
    if args.samples is not None and args.samples < 1:
        return _err(f"--samples must be >= 1, got {args.samples}")
    if args.workers is not None and args.workers < 1:
        return _err(f"--workers must be >= 1, got {args.workers}")
    if args.out:
        out = Path(args.out)
    else:
        from rt.config.stand import default_runlog_dir
        out = default_runlog_dir() / "campaigns" / c.name
    try:
        rep = run_campaign(c, out, samples=args.samples, workers=args.workers, scheduler=args.scheduler,
                           resume=args.resume, progress=not args.no_progress)
    except StoreError as e:
        return _err(e)
    except OSError as e:          # e.g. the scheduler cannot be reached
        return _err(f"cannot reach the Dask scheduler {args.scheduler}: {e}" if args.scheduler else e)
    except KeyboardInterrupt:
        print(f"interrupted: the finished samples are in {out}; continue with --resume", file=sys.stderr)
        return 130
    d = {"directory": str(rep.directory), "samples": rep.samples, "already_done": rep.already_done,
         "ran": rep.ran, "written": rep.written, "failures": rep.failures, "wall_s": round(rep.wall_s, 3),
         "workers": rep.workers, "samples_per_s": round(rep.samples_per_s, 3)}
    if args.json:
        print(json.dumps(d))
    else:
        print(f"{rep.ran} samples run ({rep.already_done} already done, {rep.failures} failures) on "
              f"{rep.workers} workers in {rep.wall_s:.1f} s ({rep.samples_per_s:.2f} samples/s); results in "
              f"{rep.directory}")
    return 0


def comparable(row: dict) -> dict:
    """A result row without the columns that differ between machines (CPU time, worker)."""
    from sim_stand.campaign.outcome import NONDETERMINISTIC
    return {k: v for k, v in row.items() if k not in NONDETERMINISTIC}


def rows_equal(a: dict, b: dict) -> bool:
    a, b = comparable(a), comparable(b)
    if set(a) != set(b):
        return False
    for k in a:
        x, y = a[k], b[k]
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        if x != y:
            return False
    return True


def rerun(directory, index: int, log_path=None) -> tuple[dict, dict | None]:
    """Rerun sample ``index`` of the campaign in ``directory`` writing its run log; returns
    (new row, stored row or None). Raises StoreError / ConfigError for a user's mistake."""
    from sim_stand.campaign.outcome import run_sample
    from sim_stand.campaign.sampling import sample_values
    from sim_stand.campaign.store import ResultStore, StoreError

    store = ResultStore.open(directory)
    c = _load(store.manifest["campaign_file"])
    store.check_same_campaign(c)
    if not 0 <= index < store.samples:
        raise StoreError(f"sample {index} is not in this campaign (0 .. {store.samples - 1})")
    values = sample_values(c, index, store.samples)
    log = Path(log_path) if log_path else Path(directory) / "logs" / f"sample-{index}.dslog"
    row = run_sample(c, index, values, log)
    stored = [r for r in store.read().to_pylist() if r["sample"] == index]
    return row, (stored[0] if stored else None)


def cmd_rerun(args) -> int:
    from rt.config import ConfigError
    from sim_stand.campaign.store import StoreError

    try:
        row, stored = rerun(args.dir, args.sample, args.log)
    except (StoreError, ConfigError) as e:
        return _err(e)
    log = args.log or str(Path(args.dir) / "logs" / f"sample-{args.sample}.dslog")
    same = stored is not None and rows_equal(row, stored)
    if args.json:
        print(json.dumps({"row": row, "stored": stored, "reproduced": same, "log": log}, default=float))
    else:
        w = max(len(k) for k in row)
        for k, v in row.items():
            old = stored.get(k) if stored else None
            mark = "" if stored is None or k in ("cpu_s", "worker") or v == old else f"   (stored: {old})"
            print(f"{k:<{w}}  {v}{mark}")
        print(f"run log: {log}")
        print("reproduced: " + ("yes, the stored row exactly" if same else
                                "NO" if stored is not None else "no stored row for this sample yet"))
    return 0 if (same or stored is None) else 1


def cmd_summary(args) -> int:
    from sim_stand.campaign.store import ResultStore, StoreError
    from sim_stand.campaign.summary import format_summary, summarize

    if args.worst < 0:
        return _err(f"--worst must be >= 0, got {args.worst}")
    if args.out and output_dir_error(args.out):
        return _err(output_dir_error(args.out))
    try:
        store = ResultStore.open(args.dir)
    except StoreError as e:
        return _err(e)
    s = summarize(store, worst=args.worst)
    if args.out:
        from sim_stand.campaign.figures import write_pdf
        write_pdf(store, s, args.out)
    if args.json:
        print(json.dumps(s.as_dict(), default=float))
    else:
        print(format_summary(s))
        if args.out:
            print(f"figures: {args.out}")
    return 0


def cmd_reconstruct(args) -> int:
    from rt.config import ConfigError
    from sim_stand.campaign.reconstruct import TelemetryError, format_fit, reconstruct

    if args.starts < 1:
        return _err(f"--starts must be >= 1, got {args.starts}")
    if args.plot and output_dir_error(args.plot):
        return _err(output_dir_error(args.plot))
    from rt.analysis.progress import Stages
    names = [n.strip() for n in args.fit.split(",") if n.strip()] if args.fit else None
    st = Stages("reconstruct", quiet=getattr(args, "quiet", False))
    try:
        stand = None
        if args.stand_conditions:
            from rt.config.stand import load_stand, resolve_stand_path
            stand = load_stand(resolve_stand_path(args.stand, "reconstruct"))
        elif args.stand:
            return _err("--stand names the stand of --stand-conditions (a HIL run's telemetry); give both")
        if stand is None:
            from sim_stand.campaign.telemetry import read_telemetry
            tel = read_telemetry(args.telemetry)
            if any(c.startswith(("cmd_pose", "meas_pose")) for c in tel.ignored):
                st.say("warning: this telemetry has a motion platform's columns (cmd_pose, meas_pose): a HIL run's. "
                       "Give --stand-conditions, or the fit runs the docking in orbit, which the stand does not "
                       "reproduce (the mechanism's sag under 1 g moves the first contact)")
            args.telemetry = tel
        fit = reconstruct(args.telemetry, args.case, emulator=args.emulator, parameters=names, starts=args.starts,
                          scan=args.scan, workers=args.workers, scheduler=args.scheduler,
                          align_contact=args.align_contact, fit_forces=args.fit_forces, progress=st, stand=stand)
    except (ConfigError, TelemetryError) as e:
        return _err(e)
    except OSError as e:
        return _err(f"cannot reach the Dask scheduler {args.scheduler}: {e}" if args.scheduler else e)
    if args.plot:
        from sim_stand.campaign.reconstruct import plot_fit
        plot_fit(fit, args.plot)
    print(json.dumps(fit.as_dict(), default=float) if args.json else format_fit(fit))
    return 0 if fit.success else 1       # a fit that does not explain the telemetry is no answer
