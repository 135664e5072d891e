"""``dockstand console``: the Textual app (docs/console.md). It places the panels' text made by
:mod:`rt.console.view` from the samples of a :mod:`rt.console.source` (live or replay) and
sends the operator's commands. Keys (the footer shows those of the mode: a replay sends no
command, so its footer shows the transport keys only; a live console never the transport):

=========  ==================================================================
``space``  **abort** — one key, no confirmation, no lease needed
``c``      take the control lease (a lapsed one: asks before taking it over)
``l``      load a case (picker over config/cases, or a path)
``a``/``s``  arm / start (start asks to confirm)
``x``      stop;  ``t`` tare;  ``r`` reset;  ``g`` give the lease back
``f``      reset the platform's fault;  ``b`` retract;  ``k`` park;  ``u`` undock (each asks first)
``p``      replay: play/pause;  ``←``/``→`` seek 1 s (``[``/``]`` 10 s);  ``+``/``-`` speed
``q``      quit (gives the lease back)
=========  ==================================================================

The command keys come from :data:`rt.console.view.COMMAND_KEYS` (key, command, footer label,
lease, confirmation): a new controller command is one entry there, and its refusals read in
the operator's words through :func:`rt.console.view.operator_text`.

Not real-time: the console's own process; the controller publishes whether it listens or not.
"""
from __future__ import annotations

import math
import time
from collections import deque
from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Label, OptionList, RichLog, Sparkline, Static

from rt.console import view as V
from rt.console.source import SILENT_S, WatchOnly

CSS = """
Screen { layout: vertical; }
#header { height: 2; background: $boost; padding: 0 1; }
#body { height: 1fr; }
.col { width: 1fr; }
.panel { border: round $primary; padding: 0 1; height: auto; }
.panel.grow { height: 1fr; }
Sparkline { height: 2; margin: 0 0; }
.spark-label { width: 13; }
.spark-row { height: 2; }
#events { height: 1fr; border: round $primary; }
#message { height: auto; max-height: 3; background: $panel; padding: 0 1; }
ConfirmScreen, PickerScreen { align: center middle; }
#dialog { width: 70; height: auto; border: thick $warning; background: $surface; padding: 1 2; }
"""


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("y", "yes", "yes"), Binding("n", "no", "no"), Binding("escape", "no", "cancel")]

    def __init__(self, question: str):
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question)
            yield Label("[b]y[/] yes    [b]n[/] no")

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_no(self) -> None:
        self.dismiss(False)


class PickerScreen(ModalScreen[str | None]):
    """A case: one of config/cases, or a path typed in."""

    BINDINGS = [Binding("escape", "cancel", "cancel")]

    def __init__(self, cases: list[Path]):
        super().__init__()
        self.cases = cases

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Load a case (enter) — or type a path below")
            yield OptionList(*[str(c) for c in self.cases], id="cases")
            yield Input(placeholder="path/to/case.toml", id="path")

    def on_option_list_option_selected(self, ev: OptionList.OptionSelected) -> None:
        self.dismiss(str(self.cases[ev.option_index]))

    def on_input_submitted(self, ev: Input.Submitted) -> None:
        self.dismiss(ev.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConsoleApp(App):
    """The operator console over ``source`` (rt.console.source.LiveSource or ReplaySource)."""

    TITLE = "dockstand console"
    CSS = CSS
    BINDINGS = [
        *[Binding(k.key, f"command('{k.command}')", k.label, priority=k.command == "abort",
                  key_display=k.key_display) for k in V.COMMAND_KEYS],
        Binding("p", "play", "play/pause"), Binding("right", "seek(1)", "+1 s", key_display="→"),
        Binding("left", "seek(-1)", "−1 s", key_display="←"), Binding("right_square_bracket", "seek(10)", "+10 s",
                                                                      key_display="]"),
        Binding("left_square_bracket", "seek(-10)", "−10 s", key_display="["),
        Binding("plus", "speed(1)", "faster", key_display="+"), Binding("minus", "speed(-1)", "slower", key_display="-"),
        Binding("q", "quit_console", "quit"),
    ]

    def __init__(self, source, *, cases_dir: Path | None = None, refresh_hz: float = 30.0, plot_s: float = 10.0):
        super().__init__()
        self.source = source
        self.cases_dir = cases_dir
        self.refresh_hz = refresh_hz
        rate = 1.0
        d = getattr(source, "describe", {}) or {}
        if d.get("decimation"):
            rate = 1000.0 / float(d["decimation"])      # telemetry messages per second (1 kHz loop)
        self.plot_s = plot_s
        self.trend = V.Trend(n=max(10, int(plot_s * min(rate, refresh_hz) if source.live else plot_s * refresh_hz)))
        self.sample: dict | None = None       # the sample the panels show now
        self.shown: dict = {}                  # panel id -> text shown (tests compare with the run log)
        self.replies: list[dict] = []
        self.events: list[dict] = []
        self.capture_t_run: float | None = None   # the capture time the mechanism line shows now
        self._capture_ev: float | None = None     # the last capture event's t_run
        self._capture_ev_newer = False             # ... and it came after the last status
        self._status_seen: dict | None = None
        self.frame_ms: deque = deque(maxlen=10000)
        self.message = ""
        self.alert = ""          # the last trip / abort / finish message: kept with the replay's end
        self.last_t_run: float | None = None       # the run clock's last value (the header after a run)
        self.run_end: str | None = None            # how and when the last run ended, for the header
        self._phase: int | None = None             # the previous sample's phase (a tare's end clears the plots)
        self._run_start: dict | None = None        # the run's run_start event (its clocks: event t -> t_run)
        self._taring = False
        self.fidelity: dict | None = None          # the last run's fidelity verdict (event fidelity_verdict)

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Static("", id="header")
        with Horizontal(id="body"):
            with Vertical(classes="col"):
                yield Static("", id="wrench", classes="panel")
                with Vertical(classes="panel", id="plots"):
                    for n in V.WRENCH:
                        with Horizontal(classes="spark-row"):
                            yield Label(n, classes="spark-label", id=f"spark-label-{n}")
                            yield Sparkline([0.0], id=f"spark-{n}", summary_function=V.extreme)
                yield Static("", id="relative", classes="panel")
            with Vertical(classes="col"):
                yield Static("", id="platform", classes="panel")
                yield Static("", id="margins", classes="panel")
                yield Static("", id="links", classes="panel")
                yield Static("", id="timing", classes="panel")
                yield RichLog(id="events", markup=True, wrap=True, max_lines=2000, min_width=40)
        yield Static("", id="message")
        yield Footer()

    def on_mount(self) -> None:
        ident = self.source.identity or {}
        self.title = f"dockstand console — {'replay ' + str(getattr(self.source, 'path', '')) if not self.source.live else ident.get('stand', '?')}"
        # the panels, found once (a modal dialog on top must not hide them from the updates)
        self.w = {w.id: w for w in self.screen.query("Static, Label, Sparkline, RichLog, Vertical") if w.id}
        for pid, title in V.PANEL_TITLES.items():
            if pid in self.w:
                self.w[pid].border_title = title.format(plot_s=self.plot_s)
        if not self.source.live:
            trunc = ("this log is truncated (the run did not close it): it plays to its last complete record. "
                     if getattr(self.source, "truncated", False) else "")
            self.say(f"{trunc}replay: a run log through the panels; it sends no command (p play/pause, ← → [ ] seek, "
                     "+ - speed, q quit)")
        # two clocks: the header shows the run clock t_run; the events carry the controller's
        # clock (live) or the log's (replay: seconds since the arm opened it)
        self.w["events"].border_title = ("events · controller clock, s" if self.source.live
                                         else "events · s since the log opened (arm)")
        self.set_interval(1.0 / self.refresh_hz, self.tick)

    # ------------------------------------------------------------------ update
    def tick(self) -> None:
        if not self.is_running:
            return
        sample, events, replies = self.source.poll()
        if getattr(self.source, "events_reset", False):     # a replay seek: the log up to the new time
            self.source.events_reset = False
            self.events.clear()
            self.w["events"].clear()
            self._capture_ev = None
            self.alert, self.run_end = "", None      # the events up to the new time say them again
            self._run_start = None
        for r in replies:          # the replies first: a trip that came with them is the newer news
            self.replies.append(r)
            self._on_reply(r)
        for ev in events:
            self._note_event(ev)
            self.w["events"].write(V.fmt_event(ev))
            self._message_for_event(ev)
        if sample is not None:
            t0 = time.perf_counter()
            self.render_sample(sample)
            self.frame_ms.append((time.perf_counter() - t0) * 1e3)
        elif events or replies or (self.source.live and self.source.silent_s() > SILENT_S):
            self._render_header()
        if not self.source.live and getattr(self.source, "ended", False) and "ended" not in self.message:
            trunc = " (truncated log: its last complete record)" if self.source.truncated else ""
            self.say(f"replay ended at cycle {int(self.sample['cycle']) if self.sample else '—'}{trunc}"
                     + (f" · {self.alert}" if self.alert else ""))

    def render_sample(self, s: dict) -> None:
        """Every panel from one sample (console_frame_ms measures this)."""
        self.sample = s
        st = self.source.status or {}
        limits = st.get("limits")
        ph = int(s["phase"])
        taring = bool(st.get("taring")) if self.source.live else False
        if (self._phase == V.PHASES.index("TARE") and ph != self._phase) or (self._taring and not taring):
            self.trend.clear_wrench()          # a tare finished: the plots start again from its values
        self._phase, self._taring = ph, taring
        if math.isfinite(float(s["t"])):
            self.last_t_run = float(s["t"])
            if V.name_of(V.STATES, s["state"]) == "RUNNING":
                self.run_end = None
        self.trend.add(s)
        texts = {
            "wrench": V.fmt_wrench(s["w_P"]),
            "relative": (V.fmt_relative(s["rel_pose"], s["rel_twist"]) + "\n"
                         + V.fmt_mechanism(s, limits, self._capture_time(st), V.platform_status_age(st),
                                              link=(st.get("mechanism") or {}).get("link"))),
            "platform": V.fmt_platform(s["cmd_pose"], s["meas_pose"], s["cmd_lengths"], limits),
            "margins": "\n".join(V.margin_bar(n, u) for n, u in V.margins(s, limits)) or "limits: waiting for status",
            "links": V.fmt_links(s, st),
            "timing": V.fmt_timing(s, self.trend, st),
        }
        for k, text in texts.items():
            if self.shown.get(k) != text:
                self.w[k].update(text)
                self.shown[k] = text
        title = V.wrench_title(s, st)
        if self.shown.get("wrench_title") != title:
            self.w["wrench"].border_title = title
            self.w["plots"].border_title = V.plots_title(self.plot_s, "UNTARED" not in title)
            self.shown["wrench_title"] = title
        win = None if self.source.live else self.source.wrench_window(self.plot_s, self.trend.n, after_tare=True)
        for k, n in enumerate(V.WRENCH):
            data = V.plot_data(n, self.trend.wrench[k] if win is None else win[:, k])
            self.w[f"spark-{n}"].data = data
            label = V.spark_label(n, data)       # each plot scales to its own range: say which
            if self.shown.get(f"spark-label-{n}") != label:
                self.w[f"spark-label-{n}"].update(label)
                self.shown[f"spark-label-{n}"] = label
        self._render_header()
        self.shown["cycle"] = int(s["cycle"])

    def _note_event(self, ev: dict) -> None:
        self.events.append(ev)
        kind = ev.get("kind")
        if kind in ("supervisor_trip", "trip"):
            t = self._event_t_run(ev)
            self.run_end = f"tripped: {ev.get('reason')}" + (f" at t_run {t:.3f} s" if t is not None else "")
        elif kind in ("supervisor_finish", "finish"):
            t = self._event_t_run(ev)
            self.run_end = f"ended: {ev.get('reason')}" + (f" at t_run {t:.3f} s" if t is not None else "")
        elif kind == "supervisor_transition" and ev.get("state") == "ABORTED" and self.run_end is None:
            t = self._event_t_run(ev)
            self.run_end = "aborted" + (f" at t_run {t:.3f} s" if t is not None else "")
        if kind == "run_start":
            self._run_start = ev
            self._capture_ev = None
        elif kind == "supervisor_transition" and ev.get("state") == "ARMED":
            self._run_start = None                 # a new arming: the last run's clock no longer applies
        elif ev.get("kind") == "capture":
            self._capture_ev = ev.get("t_run")      # None outside a run (e.g. latched at start-up)
            self._capture_ev_newer = True

    def _event_t_run(self, ev: dict) -> float | None:
        """An event's run time: its own ``t_run``, else from the run's ``run_start`` (same clock:
        its ``t`` and its ``t_run``) — None outside a run (before its start, or no start seen)."""
        if isinstance(ev.get("t_run"), (int, float)):
            return float(ev["t_run"])
        rs = getattr(self, "_run_start", None)
        if rs is None:
            return None
        # on the controller's own clock, as t_run is: a replay shows an event's ``t`` by its cycle
        # and keeps the controller's as ``t_controller`` (the two drift apart by a cycle in a run)
        t_ev, t_rs = ev.get("t_controller", ev.get("t")), rs.get("t_controller", rs.get("t"))
        if not isinstance(t_ev, (int, float)) or not isinstance(t_rs, (int, float)) \
                or not isinstance(rs.get("t_run"), (int, float)) or t_ev < t_rs:
            return None
        return float(rs["t_run"]) + float(t_ev) - float(t_rs)

    def _capture_time(self, st: dict) -> float | None:
        """The run's capture time for the mechanism line. Live, the controller's own
        (``status`` mechanism.capture_t_run, polled every 0.5 s; a capture event newer than the
        last status stands in until the next one): a restarted controller or a console attached
        after the capture shows the right one. A replay (or a controller without it): the
        capture event's."""
        mech = st.get("mechanism") if self.source.live else None
        if mech is None:
            t = self._capture_ev
        else:
            if st is not self._status_seen:
                self._status_seen = st
                self._capture_ev_newer = False
            t = mech.get("capture_t_run")
            if t is None and self._capture_ev_newer:
                t = self._capture_ev
        self.capture_t_run = t
        return t

    def _render_header(self) -> None:
        st = self.source.status or {}
        if not self.source.live:
            src = self.source
            mode = "ended" if src.ended else ("paused" if src.paused else "playing")
            lease = (f"replay {mode} ×{src.speed:g}  record {src.index + 1}/{src.n}"
                     + ("  [yellow]truncated log[/]" if src.truncated else ""))
        else:
            holder = st.get("lease")
            mine = self.source.holds_lease
            mode = "watch-only (--watch)" if self.source.watch else ("[green]this console holds the lease[/]" if mine
                                                                     else "watch-only until you take control (c)")
            lapsed = f"  [yellow]lease of {st['lease_lapsed']} lapsed[/]" if st.get("lease_lapsed") else ""
            lease = f"lease: {holder or 'free'} — {mode}{lapsed}"
            quiet = self.source.silent_s()
            if quiet > SILENT_S:
                lease = (f"[bold white on red] CONTROLLER NOT ANSWERING for {quiet:.1f} s [/] (the values shown are "
                         f"its last; commands, abort included, may not reach it)  " + lease)
        text = V.fmt_header(self.sample, st, self.source.identity or {}, lease, self.run_end)
        if self.shown.get("header") != text:
            self.w["header"].update(text)
            self.shown["header"] = text

    def _message_for_event(self, ev: dict) -> None:
        """The message line follows what the operator must know now: a trip replaces an older
        reply (``arm: ok → ARMED`` must not stand under a red SAFE), and says the way back."""
        kind = ev.get("kind")          # (history too: a console attaching after a trip says it, a reset since clears it)
        if kind in ("supervisor_trip", "trip"):
            detail = str(ev.get("detail") or "")
            if "Next:" in detail:          # the controller's trip text ends with the way back: it leads
                why, nxt = detail.split("Next:", 1)
                self.alert = (f"[bold white on red] TRIPPED: {ev.get('reason')} [/] [bold]Next:{nxt}[/]"
                              + (f" · {why.strip().rstrip('.;,')}" if why.strip() else ""))
            else:
                self.alert = (f"[bold white on red] TRIPPED: {ev.get('reason')} [/] the platform is brought to rest; "
                              f"once the cause is cleared, reset{V._key_hint('reset')}"
                              + (f" · {detail}" if detail else ""))
        elif kind in ("supervisor_finish", "finish"):
            self.alert = f"[bold blue]run finished[/]: {ev.get('reason')}" + (
                f" — reset{V._key_hint('reset')} for another run" if self.source.live else "")
        elif kind == "fidelity_verdict":          # the run's verdict, once its log is closed: with the end
            self.fidelity = ev
            self.alert = (f"{self.alert} · " if self.alert else "") + V.fmt_fidelity(ev)
        elif kind == "supervisor_transition" and ev.get("state") == "ABORTED":
            self.alert = (f"[bold red]ABORTED[/] ({ev.get('reason') or ev.get('command') or 'abort'}) — the platform "
                          "is brought to rest" + (f"; reset{V._key_hint('reset')} when it is" if self.source.live else ""))
        elif kind == "supervisor_transition" and ev.get("state") in ("CONFIGURED", "IDLE") and ev.get("command") == "reset":
            self.alert, self.run_end = "", None
        else:
            return
        if self.alert:
            self.say(self.alert)

    def say(self, text: str) -> None:
        self.message = text
        if "message" in getattr(self, "w", {}):
            self.w["message"].update(text)

    def _on_reply(self, r: dict) -> None:
        cmd = r.get("cmd")
        if r.get("late"):
            self.say(f"late answer to an earlier {cmd} (reported not answered): "
                     + ("ok" + (f" → {r['state']}" if r.get("state") else "") if r.get("ok") else f"refused: {r.get('reason')}"))
        elif r.get("unanswered"):
            self.say(f"[bold red]{cmd} NOT ANSWERED[/]: {r.get('reason')}")
        elif r.get("ok"):
            self.say(f"{cmd}: ok" + (f" → {r['state']}" if r.get("state") else ""))
        elif cmd == "acquire" and r.get("takeover_needed"):
            self.push_screen(ConfirmScreen(f"{r['reason']}\nTake the lease over?"), self._takeover)
        else:
            self.say(f"[red]{cmd} refused[/]: {V.operator_text(cmd, r.get('reason'))}")

    def _takeover(self, yes: bool) -> None:
        if yes:
            self._send("acquire", takeover=True)

    # ------------------------------------------------------------------ commands
    def _send(self, cmd: str, **args) -> None:
        try:
            self.source.send(cmd, **args)
            self.say(f"{cmd} sent")
        except WatchOnly as e:
            self.say(f"[yellow]{e}[/]")
        except TimeoutError as e:
            self.say(f"[red]{cmd}: {e}[/]")

    REPLAY_ACTIONS = frozenset({"play", "seek", "speed"})

    def check_action(self, action: str, parameters: tuple) -> bool | None:
        """Each mode's keys only (and only those in its footer): a replay's transport, a live
        console's commands; ``q`` in both."""
        if action in self.REPLAY_ACTIONS:
            return not self.source.live
        if action == "command":
            return bool(self.source.live)
        return True

    def on_key(self, event) -> None:
        """A command key pressed in a replay (where the footer offers none): said, not silent."""
        if not self.source.live and event.key in {k.key for k in V.COMMAND_KEYS}:
            k = next(k for k in V.COMMAND_KEYS if k.key == event.key)
            self.say(f"[yellow]{k.label}: a replay sends no command[/] (p play/pause, ← → [ ] seek, + - speed, q quit)")

    def action_command(self, command: str) -> None:
        """The key of :data:`rt.console.view.COMMAND_KEYS` for ``command``: asks first where the
        entry says so (a live console that can send), then sends."""
        k = V.KEY_OF.get(command)
        if command == "abort":
            return self._send("abort", reason="operator abort (console)")
        if command == "load_case":
            return self.action_load()
        if k is not None and k.confirm and self.source.live and not self.source.watch:
            return self.push_screen(ConfirmScreen(k.confirm),
                                    lambda yes: self._send(command) if yes else self.say(f"{command} cancelled"))
        self._send(command)

    def action_abort(self) -> None:
        self.action_command("abort")

    def action_start(self) -> None:
        self.action_command("start")

    def action_load(self) -> None:
        if not self.source.live or self.source.watch:
            return self._send("load_case")
        cases = sorted(self.cases_dir.glob("*.toml")) if self.cases_dir and self.cases_dir.is_dir() else []
        self.push_screen(PickerScreen(cases), self._load)

    def _load(self, path: str | None) -> None:
        if path:
            self._send("load_case", case=str(Path(path).expanduser().resolve()))

    def action_play(self) -> None:
        if not self.source.live:
            self.source.paused = not self.source.paused

    def action_seek(self, dt: float) -> None:
        if not self.source.live:
            self.source.seek(float(dt))

    def action_speed(self, up: int) -> None:
        if not self.source.live:
            self.source.faster(int(up) > 0)

    def action_quit_console(self) -> None:
        if self.source.live and self.source.holds_lease:
            try:
                self.source.send("release")
            except (WatchOnly, TimeoutError):
                pass
        self.exit()
