"""The kinds of what sits between the docking units, in one table: the docking mechanisms (a
parallel one, a tree), the elastic calibration rod and a berthing arm's snare (issue 39).

Each kind is one :class:`MechanismKind` of :data:`KINDS`: the contact model a case's
``[contact] model`` or an emulator config's ``model`` names it by, the compiled world's model
code (``sim_stand.world`` ``W_MODEL``), the mechanism slot's code (``sim_stand.dock_mechanism``;
``W_KIND``, the digital reference's ``D_KIND``), where its parameters come from, and what the
emulator, the digital reference and the campaigns do differently for it. The numeric codes
are written here and nowhere else; the compiled kernels read them as the module-level ints
below (numba freezes a module global into a kernel), which are taken from the table.

A module that treats the kinds differently looks its handler up with :func:`by_world_model`
or :func:`by_contact_model`: a kind of the table it has no handler for, or a name the table
does not know, raises :class:`UnknownMechanismKind` naming it and the known ones.
``tests/sim_stand/test_mechanism_kinds.py`` walks every kind through the emulator, the digital
reference, a campaign sample and the report. Pure data: imports nothing of sim_stand.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class MechanismKind:
    """One kind of what sits between the docking units (module docstring).

    Attributes
    ----------
    name : str
        The kind's name.
    contact_model : str
        The case's ``[contact] model`` and the emulator config's ``model``: ``"mechanism"`` is
        a docking mechanism and interface from files (their structure tells the kinds apart);
        any other is parsed by its model's ``dockstand.contact_models`` entry point.
    world_model : int
        The compiled world's model code (``W_MODEL``): which contact one physics step evaluates.
    mechanism : int or None
        The mechanism slot's code (``W_KIND``, ``D_KIND``): a parallel mechanism's ring or a
        tree's joints. None: no mechanism (the emulated stand's slot holds the emulator's
        default mechanism, unused).
    structure : str
        What the model is, one word for messages: "parallel", "tree", "rod", "snare".
    config : str
        Where its parameters come from.
    description : str
        One line: what it is.
    example_case : str
        A shipped case of this kind (path in the repository): the case its walk through every
        entry runs.
    digital_integrators : tuple of str
        The all-digital reference's integrators for it (``sim_stand.digital``); the first is
        what ``"auto"`` chooses.
    emulator_model : bool
        An emulator config may name its contact model (``model = ...``); else only a case
        brings it.
    berthing : bool
        Its case is a berthing (``[berthing]``: the arm is the active side).
    first_contact : str
        The detail of its first-contact event; "" : the name of the interface's contact pair
        that touched first.
    leg_dispersions : bool
        A campaign may scale its legs' damper, spring and friction coefficients (and draws
        their end stops as the stroke limit).
    """

    name: str
    contact_model: str
    world_model: int
    mechanism: int | None
    structure: str
    config: str
    description: str
    example_case: str
    digital_integrators: tuple[str, ...]
    emulator_model: bool
    berthing: bool
    first_contact: str
    leg_dispersions: bool

    @property
    def has_mechanism(self) -> bool:
        """A docking mechanism and interface: latches, soft capture by the latches, the release
        output, a mechanism state to rest or replay."""
        return self.mechanism is not None


#: every kind, in the order the tools list them
KINDS: tuple[MechanismKind, ...] = (
    MechanismKind(
        name="peripheral", contact_model="mechanism", world_model=0, mechanism=0, structure="parallel",
        config="[vehicles] mechanism (config/mechanisms/: legs and ring, e.g. peripheral_ups.toml, hunt_rsu.toml) "
               "and interface (config/interfaces/peripheral_androgynous.toml) of the case, else the emulator "
               "config's",
        description="peripheral docking mechanism: a parallel manipulator of legs carrying the ring "
                    "[Golubev & Yaskevich], the androgynous interface's guides and latches [Yaskevich 2018b]",
        example_case="config/cases/nominal.toml",
        digital_integrators=("rosw", "rk23", "semi_implicit_euler", "rk4"),
        emulator_model=True, berthing=False, first_contact="", leg_dispersions=True),
    MechanismKind(
        name="probe_cone", contact_model="mechanism", world_model=0, mechanism=1, structure="tree",
        config="[vehicles] mechanism (a tree file with [[bodies]]: config/mechanisms/probe_cone.toml) and "
               "interface (config/interfaces/probe_cone.toml) of the case",
        description="central (probe-cone) docking mechanism: a tree of bodies [Yaskevich 2018a], the probe "
                    "head's latches behind the cone's socket [Yaskevich 2018b]",
        example_case="config/cases/probe_cone.toml",
        digital_integrators=("rk23", "semi_implicit_euler", "rk4"),
        emulator_model=True, berthing=False, first_contact="", leg_dispersions=False),
    MechanismKind(
        name="elastic_rod", contact_model="elastic_rod", world_model=1, mechanism=None, structure="rod",
        config='[contact] model = "elastic_rod" of the case (sim_stand.rod), or the emulator config\'s '
               'model = "elastic_rod" and [rod]',
        description="calibration rod of known stiffness and damping between the unit faces, no mechanism",
        example_case="config/cases/elastic_rod.toml",
        digital_integrators=("rk4",),
        emulator_model=True, berthing=False, first_contact="rod", leg_dispersions=False),
    MechanismKind(
        name="grapple", contact_model="grapple", world_model=2, mechanism=None, structure="snare",
        config='[contact] model = "grapple" (sim_stand.grapple) and [berthing] (config/arms/) of the case',
        description="a berthing arm's end effector snaring the payload's grapple fixture: a finite-stiffness "
                    "capture contact",
        example_case="config/cases/berthing.toml",
        digital_integrators=("rk4",),
        emulator_model=False, berthing=True, first_contact="snare closed on the grapple fixture",
        leg_dispersions=False),
)

_BY_NAME: dict[str, MechanismKind] = {k.name: k for k in KINDS}

# ---------------------------------------------------------------- the codes the compiled kernels read
#: the compiled world's model codes (``W_MODEL``; ``sim_stand.world.world_advance``)
MODEL_MECH = _BY_NAME["peripheral"].world_model
MODEL_ROD = _BY_NAME["elastic_rod"].world_model
MODEL_GRAPPLE = _BY_NAME["grapple"].world_model
#: the mechanism slot's codes (``W_KIND``, ``D_KIND``; ``sim_stand.dock_mechanism``)
KIND_PARALLEL = _BY_NAME["peripheral"].mechanism
KIND_TREE = _BY_NAME["probe_cone"].mechanism

#: the contact models, in table order
CONTACT_MODELS: tuple[str, ...] = tuple(dict.fromkeys(k.contact_model for k in KINDS))
#: the contact models an emulator config's ``model`` may name
EMULATOR_MODELS: tuple[str, ...] = tuple(dict.fromkeys(k.contact_model for k in KINDS if k.emulator_model))


class UnknownMechanismKind(LookupError):
    """A kind, contact model or code the table does not know, or a kind a module has no
    handler for; the message names it and the known ones."""


def _names(kinds) -> str:
    return ", ".join(k.name for k in kinds)


def kind_named(name: str) -> MechanismKind:
    """The kind called ``name``.

    Parameters
    ----------
    name : str
        A kind's name (:attr:`MechanismKind.name`).

    Returns
    -------
    MechanismKind

    Raises
    ------
    UnknownMechanismKind
        No kind of that name (the message lists the known ones).
    """
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise UnknownMechanismKind(f"unknown mechanism kind {name!r}; known: {_names(KINDS)}") from None


def kinds_of_model(contact_model: str) -> tuple[MechanismKind, ...]:
    """The kinds a contact model covers (several for ``"mechanism"``: the mechanism file's
    structure tells them apart).

    Parameters
    ----------
    contact_model : str
        A case's ``[contact] model`` or an emulator config's ``model``.

    Returns
    -------
    tuple of MechanismKind
        At least one, in table order.

    Raises
    ------
    UnknownMechanismKind
        A contact model of no kind (the message lists the known models and kinds).
    """
    found = tuple(k for k in KINDS if k.contact_model == contact_model)
    if not found:
        raise UnknownMechanismKind(f"unknown contact model {contact_model!r}; known: {', '.join(CONTACT_MODELS)} "
                                   f"(mechanism kinds: {_names(KINDS)})")
    return found


def model_has_mechanism(contact_model: str) -> bool:
    """Whether a contact model is a docking mechanism (latches, a mechanism state).

    Parameters
    ----------
    contact_model : str
        A case's ``[contact] model`` or an emulator config's ``model``.

    Returns
    -------
    bool

    Raises
    ------
    UnknownMechanismKind
        A contact model of no kind.
    """
    return kinds_of_model(contact_model)[0].has_mechanism


def kind_of(contact_model: str, mechanism: int | None = None) -> MechanismKind:
    """The kind of a contact model with, for a docking mechanism, the loaded mechanism's slot code.

    Parameters
    ----------
    contact_model : str
        A case's ``[contact] model`` or an emulator config's ``model``.
    mechanism : int, optional
        The mechanism slot's code of the loaded mechanism file (``load_dock_mechanism``);
        needed where the contact model covers several kinds, ignored otherwise.

    Returns
    -------
    MechanismKind

    Raises
    ------
    UnknownMechanismKind
        A contact model of no kind, or a mechanism code none of its kinds has.
    """
    kinds = kinds_of_model(contact_model)
    if len(kinds) == 1 and not kinds[0].has_mechanism:
        return kinds[0]
    for k in kinds:
        if k.mechanism == mechanism:
            return k
    raise UnknownMechanismKind(f"contact model {contact_model!r}: no mechanism kind of code {mechanism!r}; known: "
                               + ", ".join(f"{k.name} ({k.mechanism})" for k in kinds))


def by_world_model(handlers: Mapping[int, T], kind: MechanismKind, where: str) -> T:
    """The handler of ``kind`` in a table keyed by the compiled world's model code.

    Parameters
    ----------
    handlers : mapping of int to T
        What ``where`` does for each world model it supports.
    kind : MechanismKind
        The kind at hand.
    where : str
        Who is asking, for the message (e.g. "the digital reference (sim_stand.digital)").

    Returns
    -------
    T
        ``handlers[kind.world_model]``.

    Raises
    ------
    UnknownMechanismKind
        ``where`` has no handler for the kind (the message names the kind and those it has).
    """
    try:
        return handlers[kind.world_model]
    except KeyError:
        have = [k.name for k in KINDS if k.world_model in handlers]
        raise UnknownMechanismKind(f"{where} has nothing for the mechanism kind {kind.name!r} (world model "
                                   f"{kind.world_model}); it has: {', '.join(have) or 'none'}") from None


def by_contact_model(handlers: Mapping[str, T], contact_model: str, where: str) -> T:
    """The handler of a contact model in a table keyed by contact model.

    Parameters
    ----------
    handlers : mapping of str to T
        What ``where`` does for each contact model it supports.
    contact_model : str
        A case's ``[contact] model`` or an emulator config's ``model``.
    where : str
        Who is asking, for the message.

    Returns
    -------
    T
        ``handlers[contact_model]``.

    Raises
    ------
    UnknownMechanismKind
        A contact model of no kind, or one ``where`` has no handler for (named, with those it has).
    """
    kinds = kinds_of_model(contact_model)
    try:
        return handlers[contact_model]
    except KeyError:
        raise UnknownMechanismKind(f"{where} has nothing for the contact model {contact_model!r} (mechanism kinds "
                                   f"{_names(kinds)}); it has: {', '.join(handlers) or 'none'}") from None


__all__ = ["MechanismKind", "KINDS", "MODEL_MECH", "MODEL_ROD", "MODEL_GRAPPLE", "KIND_PARALLEL", "KIND_TREE",
           "CONTACT_MODELS", "EMULATOR_MODELS", "UnknownMechanismKind", "kind_named", "kinds_of_model",
           "model_has_mechanism", "kind_of", "by_world_model", "by_contact_model"]
