"""How the analysis tools write a number for a reader: one format per kind of quantity, in the
unit an engineer reads it in (mm, not 0.00036 m; 1.81 %, not 1.8074 %), the same in the report,
``compare``, the campaign summary and the reconstruction. Not real-time.
"""
from __future__ import annotations

import math

#: SI unit as logged -> (unit shown, factor, decimals)
DISPLAY = {"N": ("N", 1.0, 1), "N*m": ("N·m", 1.0, 1), "N m": ("N·m", 1.0, 1), "N*s": ("N·s", 1.0, 1),
           "m": ("mm", 1e3, 2), "m/s": ("mm/s", 1e3, 2), "rad/s": ("deg/s", math.degrees(1.0), 3),
           "rad": ("deg", math.degrees(1.0), 3), "deg": ("deg", 1.0, 3), "deg/s": ("deg/s", 1.0, 3),
           "J": ("J", 1.0, 2), "%": ("%", 1.0, 2), "": ("", 1.0, 4)}


def quantity(v, unit: str, sign: bool = False) -> str:
    """``v`` (in the SI ``unit`` it is logged in) as a reader reads it: its display unit and a
    fixed number of decimals per kind (:data:`DISPLAY`); a time below 1 s in ms; ``n/a`` for
    None or NaN. ``sign``: always a sign (a difference)."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    v = float(v)
    if unit == "s":
        shown, k, d = ("ms", 1e3, 2) if abs(v) < 1.0 else ("s", 1.0, 3)
    else:
        shown, k, d = DISPLAY.get(unit, (unit, 1.0, 4))
    text = f"{v * k:{'+' if sign else ''}.{d}f}"
    zero = f"{0:.{d}f}"
    if text.lstrip("+-") == zero and abs(v * k) >= 10.0 ** -(d + 3):
        text = f"{v * k:{'+' if sign else ''}.2e}"      # a small value within reach does not read as 0
    elif text.lstrip("+-") == zero:
        text = ("+" if sign else "") + zero               # numerically zero: no "-0.00"
    return f"{text} {shown}".rstrip()


def percent(v, sign: bool = False) -> str:
    """A percentage, two decimals (``1.81 %``); ``n/a`` for None."""
    return quantity(v, "%", sign)


def ratio(v) -> str:
    """A value over its limit, never rounded down onto the limit: 1.0036 reads ``1.004×`` and an
    exceedance that rounds to 1.00 keeps its digits until it shows (``1.00004×``), so a reader
    never sees ``1.00×`` for something over (nor for something under)."""
    if v is None or not math.isfinite(v):
        return "n/a"
    d = 2
    while d < 9 and ((v > 1.0 and float(f"{v:.{d}f}") <= 1.0) or (v < 1.0 and float(f"{v:.{d}f}") >= 1.0)):
        d += 1
    return f"{v:.{d}f}×"


def span(t0: float, t1: float) -> str:
    """A time span, ``0.000–4.542 s``."""
    return f"{t0:.3f}–{t1:.3f} s"


__all__ = ["quantity", "percent", "ratio", "span", "DISPLAY"]
