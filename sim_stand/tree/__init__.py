"""Tree-structured docking mechanisms ([Yaskevich 2018a]): the probe-cone mechanism's configuration,
joint devices and the compiled right-hand side over ``rt.dynamics.tree`` (docs/models/tree.md,
docs/models/probe_cone.md)."""
