"""The report as a file: a multi-page PDF (matplotlib's PdfPages; page 1 the run's identity
and energy audit, then one page per figure of rt/analysis/figures.py) or one self-contained
HTML page (the same figures as inline SVG, the tables as HTML tables; no external file).
Not real-time.
"""
from __future__ import annotations

import html
import io
from pathlib import Path

from matplotlib.backends.backend_pdf import PdfPages

from rt.analysis import figures as F
from rt.analysis.report import Report


def _pages(rep: Report, skip=()):
    for page in F.PAGES:
        if page in skip:
            continue
        fig = page(rep)
        if fig is not None:
            yield fig


def write_pdf(rep: Report, out: Path) -> int:
    """Write the PDF; returns the page count."""
    n = 0
    with PdfPages(out, metadata={"Title": f"dockstand report: {rep.run.case_name}", "Creator": "dockstand"}) as pdf:
        for fig in (F.title_page(rep), *_pages(rep)):
            pdf.savefig(fig)
            n += 1
    return n


def _table(rows) -> str:
    return "<table>" + "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                               for k, v in rows) + "</table>"


def write_html(rep: Report, out: Path) -> int:
    """Write the HTML page; returns the figure count."""
    parts = [f"<h1>dockstand run report — {html.escape(rep.run.case_name)}</h1>", _table(rep.identity)]
    for n in rep.notes:
        parts.append(f'<p class="note">note: {html.escape(n)}</p>')
    if rep.energy is not None:
        parts += ["<h2>Energy audit</h2>", _table(F.energy_rows(rep))]
    if rep.comparison is not None:
        c = rep.comparison
        parts += ["<h2>Fidelity against the reference</h2>",
                  f"<p>reference: <code>{html.escape(c['digital_log'])}</code>; filtering — run: "
                  f"{html.escape(c['filtering']['run'])}; reference: {html.escape(c['filtering']['reference'])}</p>",
                  *[f"<p><strong>warning:</strong> {html.escape(w)}</p>" for w in c.get("warnings", [])],
                  _table(F.fidelity_rows(c))]
    n = 0
    for fig in _pages(rep, skip=(F.fidelity_page,)):
        buf = io.StringIO()
        fig.savefig(buf, format="svg")
        svg = buf.getvalue()
        parts.append('<div class="fig">' + svg[svg.index("<svg"):] + "</div>")
        n += 1
    style = ("body{font-family:sans-serif;max-width:1200px;margin:auto}table{border-collapse:collapse}"
             "th,td{border:1px solid #ccc;padding:2px 8px;text-align:left;font-size:13px}"
             "td{font-family:monospace}.note{color:#900}.fig svg{width:100%;height:auto}")
    out.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>dockstand report: "
                   f"{html.escape(rep.run.case_name)}</title><style>{style}</style></head><body>"
                   + "\n".join(parts) + "</body></html>", encoding="utf-8")
    return n


def write(rep: Report, out: Path) -> int:
    """PDF or HTML by the suffix of ``out``; returns the page / figure count."""
    out = Path(out)
    if out.suffix.lower() == ".pdf":
        return write_pdf(rep, out)
    if out.suffix.lower() in (".html", ".htm"):
        return write_html(rep, out)
    raise ValueError(f"{out}: the report is written as .pdf or .html")
