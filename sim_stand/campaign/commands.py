"""``dockstand campaign run | rerun | summary`` and ``dockstand reconstruct`` (docs/cli.md,
docs/campaigns.md), registered through the ``dockstand.commands`` entry points. The heavy
parts (:mod:`sim_stand.campaign.cli`, Dask, the kernels) are imported only when a command runs."""
from __future__ import annotations


def add_parsers(sub) -> None:
    def lazy(name):
        def f(args):
            import sim_stand.campaign.cli as CC
            return getattr(CC, name)(args)
        return f

    c = sub.add_parser("campaign", help="Monte Carlo campaigns of the all-digital reference on Dask")
    cs = c.add_subparsers(dest="campaign_command", metavar="ACTION", required=True)

    r = cs.add_parser("run", help="run a campaign file's samples, results streamed to Parquet in DIR")
    r.add_argument("file", metavar="FILE", help="campaign file (config/campaigns/*.toml)")
    r.add_argument("-o", "--out", metavar="DIR", help="results directory (default $DOCKSTAND_DATA/runs/campaigns/<name>, else "
                   "~/.local/share/dockstand/runs/campaigns/<name>)")
    r.add_argument("--samples", type=int, metavar="N", help="number of samples (default: the file's)")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--workers", type=int, metavar="N", help="LocalCluster worker processes (default: all cores)")
    g.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="use this Dask scheduler's cluster as it is")
    r.add_argument("--resume", action="store_true", help="continue the campaign in DIR: run only missing samples")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    r.add_argument("--json", action="store_true", help="print the run report as one JSON object")
    r.set_defaults(func=lazy("cmd_run"))

    rr = cs.add_parser("rerun", help="rerun one sample of a campaign: its full run log and its row")
    rr.add_argument("dir", metavar="DIR")
    rr.add_argument("--sample", type=int, required=True, metavar="I")
    rr.add_argument("--log", help="run-log path (default DIR/logs/sample-I.dslog)")
    rr.add_argument("--json", action="store_true")
    rr.set_defaults(func=lazy("cmd_rerun"))

    s = cs.add_parser("summary", help="capture probability, envelopes, peak loads, worst samples")
    s.add_argument("dir", metavar="DIR")
    s.add_argument("-o", "--out", metavar="FILE.pdf", help="write the figures to this PDF")
    s.add_argument("--worst", type=int, default=5, metavar="K", help="list the K worst samples (default 5)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=lazy("cmd_summary"))

    x = sub.add_parser("reconstruct", help="initial conditions at first contact from telemetry (least squares)")
    x.add_argument("telemetry", metavar="TELEMETRY.csv|parquet")
    x.add_argument("--case", required=True, help="the case the telemetry belongs to (vehicles, mechanism)")
    x.add_argument("--emulator", default=None)
    x.add_argument("--stand-conditions", action="store_true",
                   help="the telemetry is a HIL run's (dockstand run / demo, exported): simulate under the stand's "
                        "conditions (1 g on the mechanism, the loop's coupling), as report --simulate does")
    x.add_argument("--stand", default=None, help="with --stand-conditions: the stand file (default: $DOCKSTAND_STAND, "
                   "./config/stand.toml, the installed one)")
    x.add_argument("--fit", metavar="NAMES", help="comma-separated parameters to fit (default: position_y_m, "
                   "position_z_m, misalignment_1..3_deg, closing and lateral velocities, active_rate_x..z_dps)")
    x.add_argument("--starts", type=int, default=4, metavar="K",
                   help="local fits from the case's values and the K-1 best points of the scan (default 4)")
    x.add_argument("--scan", type=int, metavar="M", help="scan points for the starts (default 8 per parameter)")
    x.add_argument("--align-contact", action="store_true",
                   help="the telemetry's clock is not the case's: fit the offset (started from the first contacts)")
    x.add_argument("--fit-forces", action="store_true", help="fit the contact wrench's channels too")
    x.add_argument("--workers", type=int, metavar="N", help="run the starts on a LocalCluster of N processes")
    x.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run the starts on this Dask cluster")
    x.add_argument("--plot", metavar="FILE", help="overlay the fit on the telemetry in this figure (png/pdf)")
    x.add_argument("--json", action="store_true")
    x.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    x.set_defaults(func=lazy("cmd_reconstruct"))
