"""The table of mechanism kinds (sim_stand/mechanism_kinds.py, issue 39): consistent with itself,
with the shipped cases and with the registries; an unknown kind refused by name; and every kind
of the table walked through every entry -- the emulated stand in a lockstep HIL run, the
all-digital reference of that run, a campaign sample and the report -- so a kind added to the
table without support somewhere fails there."""
from __future__ import annotations

import ast
import dataclasses
import re
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from rt.config import ConfigError
from rt.config.case import contact_models, load_case
from sim_stand import mechanism_kinds as MK
from sim_stand.mechanism_kinds import KINDS, UnknownMechanismKind
from sim_stand.world_config import MODELS, load_emulator

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "config" / "cases").glob("*.toml"))
#: the codes the compiled kernels read (module-level ints of sim_stand.mechanism_kinds)
CODE_NAMES = ("MODEL_MECH", "MODEL_ROD", "MODEL_GRAPPLE", "KIND_PARALLEL", "KIND_TREE")


def _ids(kind):
    return kind.name


def case_kind(path: Path) -> MK.MechanismKind:
    """The kind a shipped case runs with the default emulator config."""
    return load_emulator(ROOT / "config" / "emulator" / "default.toml").for_case(load_case(path)).kind


# ====================================================================== the table itself
def test_names_and_codes_are_unique():
    names = [k.name for k in KINDS]
    assert len(set(names)) == len(names), names
    codes = [(k.world_model, k.mechanism) for k in KINDS]
    assert len(set(codes)) == len(codes), codes
    for k in KINDS:
        assert isinstance(k.world_model, int) and (k.mechanism is None or isinstance(k.mechanism, int)), k
        assert k.description and k.config and k.structure, k
        assert k.digital_integrators, k
    # one contact model, one world model; a contact model of several kinds tells them apart by
    # the mechanism's code, so it is a mechanism model
    for model in MK.CONTACT_MODELS:
        ks = MK.kinds_of_model(model)
        assert len({k.world_model for k in ks}) == 1, ks
        assert len(ks) == 1 or all(k.has_mechanism for k in ks), ks
        assert len({k.has_mechanism for k in ks}) == 1, ks
    # different contact models, different world models
    assert len({MK.kinds_of_model(m)[0].world_model for m in MK.CONTACT_MODELS}) == len(MK.CONTACT_MODELS)


def test_the_kernels_codes_are_the_tables():
    """numba reads module-level ints: those of mechanism_kinds, taken from the table, and the
    modules with kernels use those very objects."""
    from sim_stand import digital, digital_model, digital_rk, digital_rosw, dock_mechanism, world
    assert (MK.MODEL_MECH, MK.MODEL_ROD, MK.MODEL_GRAPPLE) == tuple(
        MK.kind_named(n).world_model for n in ("peripheral", "elastic_rod", "grapple"))
    assert (MK.KIND_PARALLEL, MK.KIND_TREE) == (MK.kind_named("peripheral").mechanism,
                                                MK.kind_named("probe_cone").mechanism)
    for name in CODE_NAMES:
        assert type(getattr(MK, name)) is int
    for mod in (world, dock_mechanism, digital, digital_model, digital_rk, digital_rosw):
        for name in CODE_NAMES:
            if hasattr(mod, name):
                assert getattr(mod, name) == getattr(MK, name), (mod.__name__, name)


def test_the_codes_are_assigned_in_the_table_only():
    """No other module of the packages gives these names a value (an import is not an assignment)."""
    found = []
    for pkg in ("rt", "drivers", "sim_stand", "bench"):
        for p in sorted((ROOT / pkg).rglob("*.py")):
            if p.name == "mechanism_kinds.py" and p.parent.name == "sim_stand":
                continue
            for node in ast.walk(ast.parse(p.read_text(), str(p))):
                targets = node.targets if isinstance(node, ast.Assign) else (
                    [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name) and n.id in CODE_NAMES:
                            found.append(f"{p.relative_to(ROOT)}:{node.lineno} {n.id}")
    assert not found, found


def test_every_shipped_case_maps_to_a_kind_and_every_kind_has_one():
    seen = {}
    for p in CASES:
        kind = case_kind(p)
        assert kind in KINDS
        assert kind.berthing == (load_case(p).berthing is not None), (p.name, kind.name)
        seen.setdefault(kind.name, []).append(p.name)
    assert set(seen) == {k.name for k in KINDS}, seen
    for k in KINDS:
        example = ROOT / k.example_case
        assert example.is_file(), k
        assert case_kind(example) is k, (k.name, k.example_case)


def test_contact_models_are_registered_and_the_emulator_offers_the_table():
    """Every contact model of the table but the mechanism's has its ``[contact]`` parser in
    pyproject.toml's ``dockstand.contact_models``, and the registry knows every one; an
    emulator config's ``model`` takes the table's."""
    eps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["dockstand.contact_models"]
    assert set(eps) == set(MK.CONTACT_MODELS) - {"mechanism"}, eps
    assert set(MK.CONTACT_MODELS) <= set(contact_models())
    assert MODELS == MK.EMULATOR_MODELS == tuple(m for m in MK.CONTACT_MODELS
                                                 if any(k.emulator_model for k in MK.kinds_of_model(m)))


def test_an_unknown_kind_is_refused_by_name():
    known = [k.name for k in KINDS]
    with pytest.raises(UnknownMechanismKind, match="'magnetic_clamp'") as e:
        MK.kind_named("magnetic_clamp")
    assert all(n in str(e.value) for n in known), e.value
    with pytest.raises(UnknownMechanismKind, match="unknown contact model 'magnet'.*mechanism, elastic_rod, grapple"):
        MK.kind_of("magnet")
    with pytest.raises(UnknownMechanismKind, match="no mechanism kind of code 7"):
        MK.kind_of("mechanism", 7)
    # a case whose contact model the emulator config has no handler for: named, not a mechanism run
    case = SimpleNamespace(contact=SimpleNamespace(model="magnet"), mechanism_path=None, interface_path=None)
    with pytest.raises(UnknownMechanismKind, match="'magnet'"):
        load_emulator(None).for_case(case)


def test_a_module_without_a_handler_for_a_kind_names_it():
    new = dataclasses.replace(MK.kind_named("elastic_rod"), name="magnetic_clamp", contact_model="magnet",
                              world_model=9)
    handlers = {MK.MODEL_MECH: "m", MK.MODEL_ROD: "r"}
    assert MK.by_world_model(handlers, MK.kind_named("probe_cone"), "here") == "m"
    with pytest.raises(UnknownMechanismKind, match=r"the emulated stand has nothing for the mechanism kind "
                                                   r"'magnetic_clamp' \(world model 9\); it has: peripheral, "
                                                   r"probe_cone, elastic_rod"):
        MK.by_world_model(handlers, new, "the emulated stand")
    with pytest.raises(UnknownMechanismKind, match="there has nothing for the contact model 'grapple'"):
        MK.by_contact_model({"mechanism": 1}, "grapple", "there")


@pytest.mark.parametrize("kind", KINDS, ids=_ids)
def test_campaign_leg_dispersions_follow_the_table(kind, tmp_path):
    """A campaign's damper, spring and friction factors load for a kind with leg dispersions
    and are refused, at ``dispersions``, for every other."""
    from sim_stand.campaign.spec import load_campaign
    p = tmp_path / "c.toml"
    p.write_text(f'case = "{ROOT / kind.example_case}"\nsamples = 2\nseed = 1\n\n'
                 '[dispersions.damper_scale]\ndistribution = "uniform"\nbounds = [0.9, 1.1]\n')
    if kind.leg_dispersions:
        assert load_campaign(p).names == ["damper_scale"]
    else:
        with pytest.raises(ConfigError, match="dispersions") as e:
            load_campaign(p)
        assert "mechanism dispersions" in str(e.value)


# ====================================================================== every kind through every entry
#: how long each walk's case runs (s): past the first contact of every example case
WALK_S = 2.5


def short_case(kind: MK.MechanismKind, folder: Path) -> Path:
    """The kind's example case cut to :data:`WALK_S`, its file references made absolute."""
    src = ROOT / kind.example_case
    text = src.read_text().replace('"../', f'"{src.parent.parent}/')
    text, n = re.subn(r"(?m)^duration_s\s*=.*$", f"duration_s = {WALK_S}", text, count=1)
    assert n == 1, src
    p = folder / src.name
    p.write_text(text)
    return p


@pytest.fixture(scope="module", params=KINDS, ids=_ids)
def hil(request, tmp_path_factory):
    """The kind's case in a lockstep HIL run: the controller against the emulated stand."""
    from sim_stand.cli import run_demo
    kind = request.param
    d = tmp_path_factory.mktemp(f"kind_{kind.name}")
    case = short_case(kind, d)
    return kind, case, run_demo(case, log_dir=d / "logs")


@pytest.fixture(scope="module")
def reference(hil, tmp_path_factory):
    """The all-digital reference of that run, as ``dockstand report --simulate`` makes it (the
    ``dockstand.references`` entry point: under the stand's conditions, from the arming's state)."""
    from rt.analysis.commands import simulate_reference
    from rt.analysis.run import load_run
    kind, _, run = hil
    return str(simulate_reference(load_run(str(run["log"])), tmp_path_factory.mktemp(f"ref_{kind.name}") / "d.dslog"))


@pytest.mark.slow
def test_emulator(hil):
    kind, _, run = hil
    assert run["final_state"] == "DONE" and run["trip"] is None, run
    # the emulated world's own events ([t, name]): its contact model of this kind touched
    assert "first_contact" in [name for _, name in run["emulator_events"]], (kind.name, run["emulator_events"])


@pytest.mark.slow
def test_digital_reference(hil, reference):
    from rt.analysis.run import load_run
    kind, _, _ = hil
    ref = load_run(reference)
    h = ref.header
    assert ref.kind == "digital" and h["model"] == kind.contact_model, h
    assert h["stand_conditions"] is True
    assert (h["config"]["mechanism"] is not None) == kind.has_mechanism, h["config"]
    assert h["mechanism_state"] == ("given" if kind.has_mechanism else None), h
    first = [e for e in ref.events if e.get("kind") == "first_contact"]
    assert first, ref.events
    if kind.first_contact:
        assert first[0]["detail"] == kind.first_contact
    else:
        assert first[0]["detail"], first           # the interface's contact pair


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS, ids=_ids)
def test_campaign_sample(kind, tmp_path):
    """One sample of a digital campaign on the kind's case (and its legs' damping dispersed
    where the table allows it): a capture or no capture, never a failure."""
    from sim_stand.campaign.outcome import run_sample
    from sim_stand.campaign.sampling import sample_values
    from sim_stand.campaign.spec import load_campaign
    case = short_case(kind, tmp_path)
    legs = ('\n[dispersions.damper_scale]\ndistribution = "uniform"\nbounds = [0.9, 1.1]\n'
            if kind.leg_dispersions else "")
    p = tmp_path / "campaign.toml"
    p.write_text(f'case = "{case}"\nsamples = 1\nseed = 3\n\n[dispersions.position_y_m]\n'
                 f'distribution = "normal"\nsigma = 1e-4\n{legs}')
    c = load_campaign(p)
    row = run_sample(c, 0, sample_values(c, 0))
    assert row["outcome"] in ("capture", "no_capture"), row
    assert row["first_contact_s"] is not None and row["peak_force_n"] > 0.0, row
    if kind.leg_dispersions:
        assert "damper_scale" in row and row["peak_stroke_m"] > 0.0, row


@pytest.mark.slow
def test_report(hil, reference):
    from rt.analysis.report import build_report
    from rt.analysis.run import load_run
    kind, _, run = hil
    rep = build_report(load_run(str(run["log"])), load_run(reference))
    assert rep.comparison is not None and rep.comparison["fidelity"]["channels"], kind.name
    assert rep.series.end_s is not None and rep.reference is not None
    kinds = {(src, k) for _, src, k, _ in rep.event_table}
    assert ("run", "first_contact") in kinds and ("reference", "first_contact") in kinds, kinds
