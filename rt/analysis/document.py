"""The report as a file: a multi-page PDF (matplotlib's PdfPages; page 1 the run's fidelity
verdict, identity and energy audit, then one page per figure of rt/analysis/figures.py) or one self-contained
HTML page (the same figures as inline SVG, the tables as HTML tables; no external file).
Not real-time.
"""
from __future__ import annotations

import html
import io
from pathlib import Path

from matplotlib.backends.backend_pdf import PdfPages

from rt.analysis import figures as F
from rt.analysis.compare import span_note
from rt.analysis.fidelity import check_figure
from rt.analysis.report import Report


def _pages(rep: Report, skip=(), progress=None):
    for page in F.PAGES:
        if page in skip:
            continue
        if progress is not None:
            progress(page.__name__.replace("_page", "") + " page")
        figs = page(rep)
        for fig in figs if isinstance(figs, list) else [figs]:
            if fig is not None:
                yield fig


def write_pdf(rep: Report, out: Path, progress=None) -> int:
    """Write the PDF; returns the page count. ``progress(name)``: told as each page starts."""
    n = 0
    with PdfPages(out, metadata={"Title": f"dockstand report: {rep.run.case_name}", "Creator": "dockstand"}) as pdf:
        for fig in (*F.title_pages(rep), *_pages(rep, progress=progress)):
            pdf.savefig(fig)
            n += 1
    return n


def _table(rows) -> str:
    return "<table>" + "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>"
                               for k, v in rows) + "</table>"


def _fidelity_table(v: dict) -> str:
    """The fidelity verdict's checks: name, status, figure, bound, reason."""
    def num(x, unit):
        return "n/a" if x is None else f"{x:g} {unit or ''}".rstrip()
    rows = "".join(f"<tr class='{html.escape(str(c.get('status')).lower())}'><td>{html.escape(str(c.get('name')))}</td>"
                   f"<td>{html.escape(str(c.get('status')))}</td><td>{html.escape(check_figure(c))}</td>"
                   f"<td>{html.escape(num(c.get('bound'), c.get('unit')))}</td>"
                   f"<td>{html.escape(str(c.get('reason', '')))}</td></tr>" for c in v.get("checks") or [])
    return ("<table><tr><th>check</th><th>status</th><th>figure</th><th>bound</th><th>reason</th></tr>"
            + rows + "</table>")


def write_html(rep: Report, out: Path, progress=None) -> int:
    """Write the HTML page; returns the figure count. ``progress(name)``: told as each figure
    starts."""
    parts = [f"<h1>dockstand run report — {html.escape(rep.run.case_name)}</h1>"]
    over = [u for u in rep.limits if u.over]
    if over or rep.run.verdict.startswith("tripped"):
        parts.append('<p class="over">' + html.escape(
            ("OVER A LIMIT: " + "; ".join(u.what for u in over) if over else "")
            + (f" THE RUN TRIPPED: {rep.run.verdict}" if rep.run.verdict.startswith("tripped") else "")) + "</p>")
    if rep.fidelity is not None:
        st = str(rep.fidelity.get("status"))
        parts.append(f'<p class="fidelity {html.escape(st.lower())}"><strong>fidelity {html.escape(st)}</strong>: '
                     f'{html.escape(str(rep.fidelity.get("reason", "")))}</p>')
    parts.append(_table(rep.identity))
    if rep.limits:
        parts += ["<h2>Limits: the nearest the run came</h2>",
                  "<table>" + "".join(("<tr class='over'>" if bad else "<tr>") + f"<th>{html.escape(k)}</th>"
                                      f"<td>{html.escape(v)}</td></tr>" for k, v, bad in F.limit_rows(rep)) + "</table>"]
    for n in rep.notes:
        parts.append(f'<p class="note">note: {html.escape(n)}</p>')
    if rep.energy is not None:
        parts += ["<h2>Energy audit</h2>", _table(F.energy_rows(rep))]
    if rep.fidelity is not None and rep.fidelity.get("checks"):
        parts += ["<h2>Fidelity verdict: the run's checks (docs/validation.md §3.5)</h2>", _fidelity_table(rep.fidelity)]
    if rep.comparison is not None:
        c = rep.comparison
        parts += ["<h2>Fidelity against the reference</h2>",
                  f"<p>reference: <code>{html.escape(c['digital_log'])}</code>; filtering — run: "
                  f"{html.escape(c['filtering']['run'])}; reference: {html.escape(c['filtering']['reference'])}</p>",
                  *[f"<p><strong>warning:</strong> {html.escape(w)}</p>" for w in c.get("warnings", [])],
                  f"<p>{html.escape(span_note(c['fidelity']))}</p>",
                  _table(F.fidelity_rows(c))]
    if rep.event_table:
        parts += ["<h2>Events</h2>", "<table><tr><th>t (s)</th><th>source</th><th>event</th><th>detail</th></tr>"
                  + "".join("<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in row) + "</tr>"
                            for row in F.events_rows(rep)) + "</table>"]
    n = 0
    for fig in _pages(rep, skip=(F.fidelity_page, F.events_page), progress=progress):
        buf = io.StringIO()
        fig.savefig(buf, format="svg")
        svg = buf.getvalue()
        parts.append('<div class="fig">' + svg[svg.index("<svg"):] + "</div>")
        n += 1
    style = ("body{font-family:sans-serif;max-width:1200px;margin:auto}table{border-collapse:collapse}"
             "th,td{border:1px solid #ccc;padding:2px 8px;text-align:left;font-size:13px}"
             "td{font-family:monospace}.note{color:#900}.fig svg{width:100%;height:auto}"
             ".over{background:#b00000;color:white;font-weight:bold;padding:4px}"
             ".fidelity{padding:4px}.fidelity.pass{border-left:8px solid #1a7f37}"
             ".fidelity.warn{border-left:8px solid #b07000;color:#7a4d00}.fidelity.fail{border-left:8px solid #b00000;"
             "color:#b00000}tr.warn td{color:#7a4d00}tr.fail td{color:#b00000;font-weight:bold}")
    out.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>dockstand report: "
                   f"{html.escape(rep.run.case_name)}</title><style>{style}</style></head><body>"
                   + "\n".join(parts) + "</body></html>", encoding="utf-8")
    return n


def write(rep: Report, out: Path, progress=None) -> int:
    """PDF or HTML by the suffix of ``out``; returns the page / figure count."""
    out = Path(out)
    if out.suffix.lower() == ".pdf":
        return write_pdf(rep, out, progress)
    if out.suffix.lower() in (".html", ".htm"):
        return write_html(rep, out, progress)
    raise ValueError(f"{out}: the report is written as .pdf or .html")
