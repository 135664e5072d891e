"""Contact model of the docking interface ([Yaskevich 2018b]): class-1 penetration contacts with
friction between the active buffer link(s) and the passive unit, class-2 zero-mass latches and
sensors by bisection, capture detection. See docs/models/contact.md.

Typical use::

    from sim_stand.contact import load_interface, build_interface, ContactModel
    model = ContactModel(build_interface(load_interface("config/interfaces/peripheral_androgynous.toml")))
    model.evaluate(link_pose, link_twist, t=t)     # link_pose (n_links, 7), link_twist (n_links, 6)
    model.wrench_P, model.wrench_links, model.records, model.events
"""
from sim_stand.contact.build import Builder, Packed
from sim_stand.contact.config import Interface
from sim_stand.contact.interfaces import build_interface, load_interface
from sim_stand.contact.model import ContactModel, Event, PenetrationLimitExceeded, pose_array

__all__ = ["Builder", "Packed", "build_interface", "Interface", "load_interface", "ContactModel",
           "Event", "PenetrationLimitExceeded", "pose_array"]
