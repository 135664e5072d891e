"""Runs a campaign's samples on Dask ``distributed`` and streams their rows to the results store
(docs/campaigns.md §running).

By default a ``LocalCluster`` of worker processes on this machine, one thread each, listening on
loopback only; or an existing cluster by its scheduler's address (``tcp://HOST:PORT``), used as
it is. Each worker loads the kernels once (numba's cache; a warm-up sample per worker before the
timed work; for a LocalCluster this process compiles them first, so that on a fresh machine they
compile once, not once per worker), then runs one sample per task. Rows are written as samples finish (every
``flush_rows`` rows or ``flush_s`` seconds, and at the end), with a progress bar and ETA (tqdm).

A lost worker is the scheduler's business: its tasks are recomputed elsewhere and each task's
result arrives here once; the store never writes a sample twice. A task that fails on every
worker it reaches (``KilledWorker``) is recorded as a ``failure`` with that reason. Not for the
real-time loop.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from sim_stand.campaign.outcome import run_sample
from sim_stand.campaign.sampling import design
from sim_stand.campaign.spec import Campaign
from sim_stand.campaign.store import ResultStore, StoreError, ensure_new


@dataclass
class RunReport:
    """What one ``campaign run`` did."""
    directory: Path
    samples: int
    already_done: int
    ran: int
    written: int
    failures: int
    wall_s: float
    workers: int
    samples_per_s: float


def _task(c: Campaign, index: int, values: dict) -> dict:
    return run_sample(c, index, values)


def _warm(c: Campaign) -> int:
    """Load (or compile) the kernels in this worker with a short run of the nominal sample (a
    HIL campaign's: the arming and 10 ms of the run)."""
    from dataclasses import replace

    from sim_stand.campaign.outcome import simulate_hil_sample, simulate_sample
    if c.mode == "hil":
        simulate_hil_sample(replace(c, duration_s=0.01), 0, {})
    else:
        simulate_sample(replace(c, duration_s=0.002), {})
    return os.getpid()


def open_client(workers: int | None = None, scheduler: str | None = None):
    """(client, cluster or None): a Client of the scheduler at ``scheduler``, or of a new
    LocalCluster of ``workers`` processes (default: this machine's cores) on 127.0.0.1."""
    from dask.distributed import Client, LocalCluster
    if scheduler:
        return Client(scheduler, timeout="10s"), None
    n = workers or os.cpu_count() or 1
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, silence_logs=40)
    return Client(cluster), cluster


def existing_store(c: Campaign, out_dir: str | Path, samples: int | None, resume: bool) -> ResultStore | None:
    """The results directory to continue (``resume``), or None for a new one; StoreError when
    ``out_dir`` cannot be used as asked. Writes nothing but a grown N."""
    out_dir = Path(out_dir)
    if not (out_dir / "campaign.json").exists():
        return None
    if not resume:
        ensure_new(out_dir)                           # raises: the directory holds a campaign
    store = ResultStore.open(out_dir)
    store.check_same_campaign(c)
    if samples is not None and samples != store.samples:
        if c.sampling == "lhs":
            raise StoreError(f"{out_dir}: a Latin hypercube of {store.samples} samples cannot change size "
                             f"to {samples} (its strata depend on N); use random or sobol sampling to grow")
        if samples < store.samples:
            raise StoreError(f"{out_dir}: the campaign has {store.samples} samples; --samples {samples} would "
                             f"shrink it (a campaign only grows: give --samples {store.samples} or more, or none)")
        store.set_samples(samples)
    return store


def run_campaign(c: Campaign, out_dir: str | Path, *, samples: int | None = None, workers: int | None = None,
                 scheduler: str | None = None, resume: bool = False, progress: bool = True,
                 flush_rows: int = 16, flush_s: float = 5.0, client=None) -> RunReport:
    """Run the samples of ``c`` not yet in ``out_dir`` and store their rows (module docstring).
    ``client``: an existing ``dask.distributed.Client`` to use (not closed here)."""
    from dask.distributed import as_completed
    from tqdm import tqdm

    store = existing_store(c, out_dir, samples, resume)
    n = store.samples if store is not None else (samples if samples is not None else c.samples)
    done = set(store.done()) if store is not None else set()
    todo = [i for i in range(n) if i not in done]
    values = design(c, n)
    names = c.names
    own = client is None
    cluster = None
    t0 = time.perf_counter()
    written = failures = ran = 0
    nworkers = 0
    if not todo:
        return RunReport(Path(out_dir), n, len(done), 0, 0, 0, 0.0, 0, 0.0)
    if own:                                   # the cluster first: nothing is written if it cannot be had
        if not scheduler:
            _warm(c)                          # compile (or load) here once: the local workers load the cache
        client, cluster = open_client(workers, scheduler)
    try:
        if store is None:
            store = ResultStore.create(out_dir, c, n)
        # hash=False: a fresh key per run. The same campaign scattered again by a second run on
        # the same client (campaign run --resume in one process) would get the key the first
        # run's future just released, and the scheduler may see the release after the new
        # scatter (dask/distributed#3641): the tasks then wait forever for their input.
        cf = client.scatter(c, broadcast=True, hash=False)
        client.run(_warm, c)
        nworkers = len(client.scheduler_info().get("workers", {}))
        t0 = time.perf_counter()
        futures = [client.submit(_task, cf, i, dict(zip(names, map(float, values[i]))),
                                 key=f"sample-{c.digest[:12]}-{n}-{i}", pure=False, retries=0) for i in todo]
        index_of = {f.key: i for f, i in zip(futures, todo)}
        bar = tqdm(total=n, initial=len(done), unit="sample", disable=not progress, file=sys.stderr,
                   mininterval=0.5, smoothing=0.1, desc=c.name)
        buf: list[dict] = []
        last = time.monotonic()
        try:
            for fut in as_completed(futures):
                i = index_of[fut.key]
                try:
                    row = fut.result()
                except Exception as e:                     # noqa: BLE001 (KilledWorker & co: the sample's fate)
                    row = {"sample": i, **dict(zip(names, map(float, values[i]))), "outcome": "failure",
                           "reason": f"{type(e).__name__}: {e}", "end_reason": "task_failed"}
                fut.release()
                ran += 1
                failures += row.get("outcome") == "failure"
                buf.append(row)
                bar.update(1)
                if len(buf) >= flush_rows or time.monotonic() - last >= flush_s:
                    written += store.append(buf)
                    buf.clear()
                    last = time.monotonic()
        finally:
            written += store.append(buf)
            bar.close()
    finally:
        if own:
            client.close()
            if cluster is not None:
                cluster.close()
    wall = time.perf_counter() - t0
    return RunReport(Path(out_dir), n, len(done), ran, written, failures, wall, nworkers,
                     ran / wall if wall > 0 else 0.0)


__all__ = ["run_campaign", "open_client", "existing_store", "RunReport"]
