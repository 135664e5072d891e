"""Supervisor state machine: property tests over generated command sequences, refusals with
reasons, events for every transition."""
from hypothesis import given, strategies as st

from rt.control.supervisor import COMMANDS, SAFE_STATES, State, Supervisor

ops = st.lists(st.one_of(st.sampled_from(COMMANDS + ("bogus",)),
                         st.tuples(st.just("trip"), st.sampled_from(["SENSOR_LINK_LOST", "FORCE_LIMIT"])),
                         st.just("finish")), max_size=60)


def apply(sup, op):
    if isinstance(op, tuple):
        return sup.trip(op[1])
    if op == "finish":
        return sup.finish("time limit")
    if op == "load_case":
        return sup.command(op, client="t", case="case.toml")
    return sup.command(op, client="t")


@given(ops, st.booleans())
def test_never_running_without_armed_and_abort_always_safe(seq, start_guard_refuses):
    guards = {"start": (lambda: "platform not at the initial pose") if start_guard_refuses else (lambda: None)}
    sup = Supervisor(guards=guards)
    events = []
    sup.listeners.append(events.append)
    for op in seq:
        before = sup.state
        reply = apply(sup, op)
        if op == "abort":
            assert reply.ok and sup.state in SAFE_STATES
        elif isinstance(op, tuple):
            assert sup.state in SAFE_STATES
        elif not reply.ok:
            assert sup.state is before and reply.reason
        if sup.state is State.RUNNING and before is not State.RUNNING:
            assert before is State.ARMED and op == "start" and not start_guard_refuses
    for ev in events:
        if ev.kind == "transition" and ev.state == "RUNNING":
            assert ev.previous == "ARMED"
        if ev.kind == "transition":
            assert ev.previous != ev.state


@given(ops)
def test_every_state_change_is_an_event(seq):
    sup = Supervisor()
    events = []
    sup.listeners.append(events.append)
    changes = 0
    for op in seq:
        before = sup.state
        apply(sup, op)
        changes += sup.state is not before
    assert changes == sum(e.kind == "transition" for e in events)


def test_happy_path_and_reasons():
    sup = Supervisor()
    r = sup.command("arm")
    assert not r.ok and "not allowed in state IDLE" in r.reason
    assert sup.command("load_case", case="c").ok and sup.state is State.CONFIGURED
    assert sup.command("tare").ok and sup.state is State.CONFIGURED
    r = sup.command("start")
    assert not r.ok and "only in ARMED" in r.reason
    assert sup.command("arm").ok and sup.state is State.ARMED
    assert not sup.command("load_case", case="d").ok
    assert sup.command("start").ok and sup.running
    assert not sup.command("tare").ok
    assert sup.finish("captured and settled").ok and sup.state is State.DONE
    assert sup.command("reset").ok and sup.state is State.CONFIGURED and sup.case == "c"
    assert sup.command("reset").ok and sup.state is State.IDLE and sup.case is None
    r = sup.command("fly")
    assert not r.ok and "unknown command" in r.reason
    assert "abort" in sup.allowed() and "load_case" in sup.allowed()


def test_trip_and_abort_from_every_state():
    def reach(target):
        sup = Supervisor()
        path = {State.IDLE: [], State.CONFIGURED: ["load_case"], State.ARMED: ["load_case", "arm"],
                State.RUNNING: ["load_case", "arm", "start"], State.DONE: ["load_case", "arm", "start", "stop"]}
        if target in path:
            for c in path[target]:
                assert sup.command(c, case="x").ok
        elif target is State.SAFE:
            sup.trip("NONFINITE")
        else:
            sup.command("abort")
        assert sup.state is target
        return sup

    for s in State:
        sup = reach(s)
        r = sup.command("abort")
        if s is State.DONE:       # the run had finished: its outcome is kept (the controller stops what moves)
            assert r.ok and sup.state is State.DONE and "outcome is kept" in r.reason, r
        else:
            assert r.ok and sup.state in SAFE_STATES
        sup = reach(s)
        sup.trip("PLATFORM_FAULT", "platform reports FAULT")
        assert sup.state in SAFE_STATES
    sup = reach(State.RUNNING)
    sup.trip("FORCE_LIMIT")
    assert sup.state is State.SAFE and sup.trip_reason == "FORCE_LIMIT"
    sup.trip("SENSOR_LINK_LOST")
    assert sup.trip_reason == "FORCE_LIMIT"  # the first reason is kept
    assert sup.command("reset").ok and sup.state is State.CONFIGURED and sup.trip_reason is None


def test_guards_refuse_and_never_crash():
    def bad_case(case):
        return None if case.endswith(".toml") else f"{case}: not a case file"

    def explode():
        raise RuntimeError("driver down")

    sup = Supervisor(guards={"load_case": bad_case, "arm": explode, "abort": lambda: "never asked"})
    r = sup.command("load_case", case="x.txt")
    assert not r.ok and "not a case file" in r.reason and sup.state is State.IDLE
    assert sup.command("load_case", case="x.toml").ok
    r = sup.command("arm")
    assert not r.ok and "RuntimeError: driver down" in r.reason
    assert sup.command("abort").ok and sup.state is State.ABORTED
    assert sup.history[-1].kind == "transition" and sup.history[-1].state == "ABORTED"


def test_events_carry_cycle_time_and_client():
    sup = Supervisor()
    sup.cycle, sup.t_ns = 42, 42_000_000
    sup.command("load_case", client="console-1", case="c")
    ev = [e for e in sup.history if e.kind == "command"][0]
    assert ev.cycle == 42 and ev.t_ns == 42_000_000 and ev.client == "console-1"
    assert ev.as_dict()["command"] == "load_case"
    r = sup.command("start", client="console-1")
    assert r.as_dict() == {"ok": False, "state": "CONFIGURED", "reason": r.reason}
    assert sup.history[-1].kind == "refused"


def test_a_state_refusal_says_the_step_and_what_would_refuse_next():
    """arm / tare in DONE: "reset first", and the guard's reason now (the mechanism still
    latched), not after the reset (found by an operator's review)."""
    latched = "release the mechanism (undock) first: it reports capture"
    sup = Supervisor(guards={"arm": lambda: latched, "tare": lambda: None})
    assert sup.command("load_case", client="t", case="c.toml").ok
    sup.state = State.DONE
    r = sup.command("arm", client="t")
    assert not r.ok and r.reason == ("arm is not allowed in state DONE (only in CONFIGURED): reset first; "
                                     f"then it would still be refused: {latched}")
    r = sup.command("tare", client="t")
    assert r.reason == "tare is not allowed in state DONE (only in CONFIGURED, ARMED): reset first"
    sup.state = State.IDLE
    assert sup.command("tare", client="t").reason.endswith(": load a case first")
    sup.state = State.RUNNING                              # no step to CONFIGURED from here: none said
    assert sup.command("arm", client="t").reason == "arm is not allowed in state RUNNING (only in CONFIGURED)"
