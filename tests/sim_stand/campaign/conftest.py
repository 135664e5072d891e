"""Fixtures of the campaign tests (helpers: campaign_helpers.py)."""
import pytest

from campaign_helpers import DaskProcesses


@pytest.fixture
def dask_procs(tmp_path):
    d = DaskProcesses(tmp_path)
    try:
        yield d
    finally:
        d.stop()
