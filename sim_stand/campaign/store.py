"""A campaign's results directory (docs/campaigns.md §results):

* ``campaign.json`` -- the manifest: the campaign file (path, sha256, text), N, seed, sampling,
  the dispersed parameters, the columns;
* ``results/part-NNNNN.parquet`` -- result rows, one per sample, written as samples finish
  (each part written to a temporary name and renamed: a part is complete or absent). Read the
  whole directory with ``pyarrow.parquet.read_table(DIR / "results")`` or
  ``polars.read_parquet(DIR / "results/*.parquet")``; :meth:`ResultStore.read` sorts by sample.

A store never writes a sample twice: :meth:`ResultStore.append` drops rows whose sample is
already stored, and a resumed campaign runs only the samples absent from every part. Not for
the real-time loop.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sim_stand.campaign.outcome import OUTCOME_COLUMNS
from sim_stand.campaign.spec import Campaign

_STRINGS = {"outcome", "reason", "end_reason", "worker"}


def schema(names: list[str]) -> pa.Schema:
    """The result rows' schema: ``sample``, the inputs, the outcome columns."""
    fields = [pa.field("sample", pa.int64(), nullable=False)]
    fields += [pa.field(n, pa.float64()) for n in names]
    fields += [pa.field(n, pa.string() if n in _STRINGS else pa.float64()) for n in OUTCOME_COLUMNS]
    return pa.schema(fields)


class StoreError(ValueError):
    """A results directory that cannot be used as asked (says why)."""


def ensure_new(root: str | Path) -> None:
    """StoreError unless ``root`` is free for a new campaign's results."""
    if (Path(root) / "campaign.json").exists():
        raise StoreError(f"{root} already holds a campaign's results: continue it with --resume, "
                         f"or give another directory (-o)")


class ResultStore:
    """The results directory of one campaign (module docstring)."""

    def __init__(self, root: str | Path, manifest: dict):
        self.root = Path(root)
        self.manifest = manifest
        self.names = list(manifest["parameters"])
        self.schema = schema(self.names)
        self.parts = self.root / "results"
        self._done: set[int] | None = None

    @property
    def samples(self) -> int:
        return int(self.manifest["samples"])

    # ------------------------------------------------------------------ open / create
    @classmethod
    def create(cls, root: str | Path, c: Campaign, samples: int) -> "ResultStore":
        root = Path(root)
        ensure_new(root)
        (root / "results").mkdir(parents=True, exist_ok=True)
        man = {"name": c.name, "campaign_file": str(c.file), "campaign_digest": c.digest,
               "campaign_text": Path(c.file).read_text(), "case": str(c.case_path), "samples": int(samples),
               "seed": c.seed, "sampling": c.sampling, "parameters": c.names,
               "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        tmp = root / "campaign.json.tmp"
        tmp.write_text(json.dumps(man, indent=1))
        os.replace(tmp, root / "campaign.json")
        return cls(root, man)

    @classmethod
    def open(cls, root: str | Path) -> "ResultStore":
        root = Path(root)
        try:
            man = json.loads((root / "campaign.json").read_text())
        except FileNotFoundError:
            raise StoreError(f"{root}: no campaign results here (campaign.json is missing)") from None
        except (OSError, ValueError) as e:
            raise StoreError(f"{root}/campaign.json: unreadable ({e})") from None
        return cls(root, man)

    def check_same_campaign(self, c: Campaign) -> None:
        if c.digest != self.manifest["campaign_digest"]:
            raise StoreError(f"{self.root}: its results come from another version of {c.file} (sha256 "
                             f"{self.manifest['campaign_digest'][:12]}..., now {c.digest[:12]}...): "
                             f"resume only with the campaign file unchanged")

    def set_samples(self, n: int) -> None:
        self.manifest["samples"] = int(n)
        tmp = self.root / "campaign.json.tmp"
        tmp.write_text(json.dumps(self.manifest, indent=1))
        os.replace(tmp, self.root / "campaign.json")

    # ------------------------------------------------------------------ rows
    def _part_files(self) -> list[Path]:
        return sorted(self.parts.glob("part-*.parquet"))

    def done(self) -> set[int]:
        """The samples stored (read from the parts once, then kept up to date)."""
        if self._done is None:
            s: set[int] = set()
            for f in self._part_files():
                s.update(pq.read_table(f, columns=["sample"]).column("sample").to_pylist())
            self._done = s
        return self._done

    def append(self, rows: list[dict]) -> int:
        """Write the rows whose sample is not yet stored as one new part; returns how many."""
        done = self.done()
        new, seen = [], set()
        for r in rows:
            i = int(r["sample"])
            if i in done or i in seen:
                continue
            seen.add(i)
            new.append(r)
        if not new:
            return 0
        files = self._part_files()
        k = int(files[-1].stem.split("-")[1]) + 1 if files else 0
        table = pa.Table.from_pylist([{f.name: r.get(f.name) for f in self.schema} for r in new], schema=self.schema)
        tmp = self.parts / f".part-{k:05d}.parquet.tmp"
        pq.write_table(table, tmp)
        os.replace(tmp, self.parts / f"part-{k:05d}.parquet")
        done.update(seen)
        return len(new)

    def read(self) -> pa.Table:
        """Every stored row, sorted by sample."""
        files = self._part_files()
        if not files:
            return self.schema.empty_table()
        t = pa.concat_tables([pq.read_table(f, schema=self.schema) for f in files])
        return t.sort_by("sample")


__all__ = ["ResultStore", "StoreError", "ensure_new", "schema"]
