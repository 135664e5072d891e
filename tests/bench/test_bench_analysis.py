"""The analysis bench's reading of ``dockstand report``'s output: the page count from its first
line, whatever follows (the fidelity line has a colon too: the count read None)."""
from __future__ import annotations

from bench.analysis import pages_of


def test_the_page_count_comes_from_the_reports_first_line():
    out = ("/tmp/x/report.pdf: 8 pages, 1052402 records, 7.3 s\n"
           "fidelity PASS: 4 checks within their bounds; nearest, noise: 2 pages of nothing\n")
    assert pages_of(out) == 8
    assert pages_of("/tmp/r.html: 6 figures, 10 records, 1.0 s\n") is None
    assert pages_of("") is None
