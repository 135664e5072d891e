"""Progress of the analysis tools' long commands, on stderr (stdout keeps the result): a line
per stage with the time since the command started, and a bar (tqdm) where the work has a known
length (a simulation's case time, a fit's evaluations, a log's records). Used by ``report
--simulate``, ``reconstruct`` and the console's replay loading. Not real-time.
"""
from __future__ import annotations

import sys
import time


class Stages:
    """``dockstand CMD: [  3.2 s] text`` lines on ``stream`` (stderr), each stage as it starts;
    ``quiet`` prints nothing."""

    def __init__(self, cmd: str, stream=None, quiet: bool = False):
        self.cmd = cmd
        self.stream = stream
        self.quiet = quiet
        self.t0 = time.perf_counter()

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - self.t0

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"dockstand {self.cmd}: [{self.elapsed_s:6.1f} s] {text}", file=self.stream or sys.stderr,
                  flush=True)

    def bar(self, total: float, desc: str, unit: str = "s", delay_s: float = 0.0):
        """A progress bar to ``total`` (``update(value)`` sets the value reached, ``close()``),
        or a silent stand-in when quiet; ``delay_s``: shown only once the work has taken that long."""
        return Bar(total, f"dockstand {self.cmd}: {desc}", unit, self.stream or sys.stderr, self.quiet, delay_s)


class Bar:
    """A tqdm bar that is told the value reached (not increments): ``update(v)``; ``close()``.
    A time (``unit`` in seconds: ``s``, ``s of case time``) reads with two decimals, a count
    (records, points, simulations) as a whole number."""

    def __init__(self, total: float, desc: str, unit: str, stream, quiet: bool = False, delay_s: float = 0.0):
        self.value = 0.0
        self.bar = None
        if not quiet:
            from tqdm import tqdm
            d = 2 if unit.split(" ", 1)[0] == "s" else 0
            fmt = ("{desc}: {percentage:3.0f}%|{bar:30}| " + f"{{n:.{d}f}}/{{total:.{d}f}} {unit}"
                   + " [{elapsed}<{remaining}]")
            self.bar = tqdm(total=float(total), desc=desc, file=stream, bar_format=fmt, mininterval=0.5,
                            dynamic_ncols=False, leave=True, delay=delay_s)

    def update(self, value: float) -> None:
        if self.bar is not None and value > self.value:
            self.bar.update(min(float(value), self.bar.total) - min(self.value, self.bar.total))
        self.value = max(self.value, float(value))

    def close(self, ended: bool = False) -> None:
        """``ended``: the work ended where it reached, short of ``total`` (a run that ends on its
        capture settling before the case's duration, a fit that converged before its budget): the
        bar ends full at that value rather than stopping part-way."""
        if self.bar is not None:
            if ended and 0.0 < self.value < self.bar.total:
                self.bar.total = self.value
                self.bar.refresh()
            self.bar.close()
            self.bar = None


__all__ = ["Stages", "Bar"]
