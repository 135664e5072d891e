"""The analyst's subcommands (docs/analysis.md, docs/cli.md): ``compare``, ``report``,
``export``, ``recompute``, registered with the CLI through the ``dockstand.commands`` entry
points; the analysis is imported only when a command runs. A user's mistake (a file that is
not a run log, an unknown field, an empty window, an output over the input) is one line on
stderr and exit status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from importlib.metadata import entry_points
from pathlib import Path

REFERENCES_GROUP = "dockstand.references"


def _fail(cmd: str, e: BaseException) -> int:
    msg = e.args[0] if isinstance(e, KeyError) and e.args else str(e)
    print(f"dockstand {cmd}: {msg}", file=sys.stderr)
    return 2


def _user_errors():
    from rt.config._schema import ConfigError
    from rt.record.logscan import LogError
    return (LogError, ConfigError, ValueError, OSError)


def cmd_compare(args: argparse.Namespace) -> int:
    from rt.analysis.compare import compare_logs, format_report

    try:
        rep = compare_logs(args.hil_log, args.digital_log, observe=not args.as_logged)
    except _user_errors() as e:
        return _fail("compare", e)
    print(json.dumps(rep) if args.json else format_report(rep))
    return 0


def simulate_reference(run, out: Path, stages=None) -> Path:
    """The digital reference of ``run`` from its own case (and stand snapshot) through the
    ``dockstand.references`` registry (sim_stand registers it); ``stages``
    (rt.analysis.progress.Stages): a bar of the case time simulated, on stderr."""
    import inspect
    eps = {e.name: e for e in entry_points(group=REFERENCES_GROUP)}
    if "digital" not in eps:
        raise ValueError("no digital reference is installed (entry point group dockstand.references)")
    case, warn = run.load_case()
    if warn:
        print(f"dockstand report: warning: {warn}", file=sys.stderr)
    cfg = run.header.get("config") if run.kind != "digital" else None
    fn = eps["digital"].load()
    kw = {}
    bar = []              # made with the first rows: a first run's minute of compiling is no rate to extrapolate
    if stages is not None and "on_rows" in inspect.signature(fn).parameters:
        def on_rows(rows):
            if not bar:
                bar.append(stages.bar(float(case.duration_s), "digital reference", unit="s of case time"))
            if len(rows):
                bar[0].update(float(rows[-1, 0]))
        kw["on_rows"] = on_rows
    try:
        made = Path(fn(case.source, cfg, out, f"{run.path}: header config",
                       run_log=run.path if run.kind == "hil" else None, **kw))
        if bar:
            bar[0].close(ended=True)       # a reference ends on its capture settling, before the duration
        return made
    finally:
        if bar:
            bar[0].close()


def reference_made_for(ref_path: Path, run) -> str | None:
    """Why the log at ``ref_path`` is *not* the reference ``report --simulate`` would make of
    ``run`` now, or None when it is (its header's ``reference_of`` names this run's log and start,
    and the case file is the same as the run's): then it is reused rather than simulated again."""
    from rt.record.logscan import LogError, scan
    try:
        h = scan(ref_path).header
    except LogError as e:
        return str(e)
    of = h.get("reference_of") or {}
    if h.get("kind") != "digital" or not of:
        return "it is not a reference made by report --simulate"
    if of.get("log") != str(run.path.resolve()) or of.get("start_time_ns") != run.header.get("start_time_ns"):
        return f"it is the reference of another run ({of.get('log')})"
    if h.get("case_digest") != run.header.get("case_digest"):
        return "its case differs from the run's"
    try:
        case, _ = run.load_case()
    except (OSError, ValueError) as e:
        return f"the run's case cannot be read ({e})"
    if case.digest != h.get("case_digest"):
        return "the case file changed since it was made"
    return None


def output_dir_error(path) -> str | None:
    """Why an output file cannot be written where asked (its directory missing), or None:
    checked before any work, so the user hears it at once rather than as a writer's traceback."""
    d = Path(path).resolve().parent
    return None if d.is_dir() else f"{path}: its directory {d} does not exist"


def _default_out(log: Path, suffix: str) -> Path:
    return log.with_name(log.stem + "-report" + suffix)


def cmd_report(args: argparse.Namespace) -> int:
    from rt.analysis import document
    from rt.analysis.report import build_report
    from rt.analysis.run import load_run

    from rt.analysis.progress import Stages

    t0 = time.perf_counter()
    st = Stages("report", quiet=getattr(args, "quiet", False))
    scratch = None          # --simulate without --reference-log: the reference is not kept
    try:
        run = load_run(args.log)
        out = Path(args.output) if args.output else _default_out(run.path, ".pdf")
        if out.resolve() == run.path.resolve():
            raise ValueError(f"{out}: would overwrite the run log")
        if out.suffix.lower() not in (".pdf", ".html", ".htm"):
            raise ValueError(f"{out}: the report is written as .pdf or .html")
        if output_dir_error(out):
            raise ValueError(output_dir_error(out))
        if args.simulate and run.kind == "digital":
            raise ValueError(f"{run.path} is an all-digital run: --simulate makes the reference of a HIL run "
                             "(--reference LOG overlays another run)")
        reuse = None           # --simulate --reference-log: checked before any work, reused if it is this run's
        if args.simulate and args.reference_log:
            dest = Path(args.reference_log)
            if dest.resolve() == run.path.resolve():
                raise ValueError(f"{dest}: --reference-log would overwrite the run log")
            if dest.exists():
                why = reference_made_for(dest, run)
                if why is not None:
                    raise ValueError(f"{dest} exists and is not this run's reference ({why}): remove it or "
                                     "give another --reference-log")
                reuse = dest
            elif output_dir_error(dest):
                raise ValueError(output_dir_error(dest))
        st.say(f"{run.path.name}: {run.n_records} records, {run.kind} run of {run.case_name}")
        ref = None
        if args.reference:
            ref = load_run(args.reference)
        elif args.simulate:
            if reuse is not None:
                st.say(f"reusing the digital reference {dest} (made for this run; remove it to simulate again)")
            elif args.reference_log:
                st.say(f"simulating the digital reference of {run.case_name} -> {dest} (a machine's first run "
                       "compiles the kernels first: about a minute)")
            else:
                scratch = Path(tempfile.mkdtemp(prefix="dockstand-report-"))
                dest = scratch / (run.path.stem + "-digital.dslog")
                st.say(f"simulating the digital reference of {run.case_name} (not kept: --reference-log PATH "
                       "keeps it; a machine's first run compiles the kernels first: about a minute)")
            ref = load_run(reuse if reuse is not None else simulate_reference(run, dest, st))
            import numpy as np
            t_ref = ref.t[np.isfinite(ref.t)] if ref.n_records else np.zeros(0)
            if len(t_ref):
                st.say(f"the reference ends at {float(t_ref[-1]):.3f} s of case time ({ref.verdict})")
        st.say("energy audit, limits" + (", fidelity against the reference" if ref is not None else ""))
        rep = build_report(run, ref)
        if scratch is not None and rep.comparison is not None:
            rep.comparison["digital_log"] = "simulated by report --simulate, not kept (--reference-log PATH keeps it)"
        n = document.write(rep, out, progress=lambda name: st.say(f"drawing {name}"))
    except _user_errors() as e:
        return _fail("report", e)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    what = "pages" if out.suffix.lower() == ".pdf" else "figures"
    print(f"{out}: {n} {what}, {run.n_records} records{' (truncated log)' if run.truncated else ''}, "
          f"{time.perf_counter() - t0:.1f} s")
    if rep.fidelity is not None:
        from rt.analysis.fidelity import format_checks, format_fidelity
        print(format_fidelity(rep.fidelity))
        for line in format_checks(rep.fidelity):
            print("  " + line)
    return 0


def add_parsers(sub) -> None:
    c = sub.add_parser("compare", help="fidelity of a HIL log against an all-digital log")
    c.add_argument("hil_log")
    c.add_argument("digital_log")
    c.add_argument("--json", action="store_true", help="print one JSON object")
    c.add_argument("--as-logged", action="store_true",
                   help="compare the digital wrench as logged, not seen through the HIL run's sensing filter")
    c.set_defaults(func=cmd_compare)

    r = sub.add_parser("report", help="post-test report of a run log (PDF or HTML)")
    r.add_argument("log")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--reference", metavar="DIGITAL_LOG", help="overlay this run (e.g. the digital reference)")
    g.add_argument("--simulate", action="store_true",
                   help="run the all-digital reference from the log's own case and overlay it")
    r.add_argument("--reference-log", metavar="PATH",
                   help="with --simulate: keep the reference's log here (reused if it is already this run's)")
    r.add_argument("-o", "--output", metavar="FILE.pdf|FILE.html",
                   help="default: <log>-report.pdf next to the log")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    r.set_defaults(func=cmd_report)

    from rt.analysis.export import add_parser as add_export
    from rt.analysis.recompute import add_parser as add_recompute
    add_export(sub)
    add_recompute(sub)
