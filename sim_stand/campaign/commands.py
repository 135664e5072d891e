"""``dockstand campaign run | rerun | summary`` (docs/cli.md,
docs/campaigns.md), registered through the ``dockstand.commands`` entry points. The heavy
parts (:mod:`sim_stand.campaign.cli`, Dask, the kernels) are imported only when a command runs."""
from __future__ import annotations


def add_parsers(sub) -> None:
    def lazy(name):
        def f(args):
            import sim_stand.campaign.cli as C
            return getattr(C, name)(args)
        return f

    c = sub.add_parser("campaign", help="Monte Carlo campaigns of the all-digital reference on Dask")
    cs = c.add_subparsers(dest="campaign_command", metavar="ACTION", required=True)

    r = cs.add_parser("run", help="run a campaign file's samples, results streamed to Parquet in DIR")
    r.add_argument("file", metavar="FILE", help="campaign file (config/campaigns/*.toml)")
    r.add_argument("-o", "--out", metavar="DIR", help="results directory (default runs/campaigns/<name>)")
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
