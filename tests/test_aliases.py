"""One meaning per module alias (issue 39, "Names and contracts"): across the project an
``import x as A`` / ``from p import x as A`` name stands for one thing only, so a reader who
has learnt that ``CK`` is ``rt.control.kernels`` never meets a ``CK`` that is the contact
kernel. Checked on the source (AST), over every package and the tests."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rt", "drivers", "sim_stand", "bench", "tests")


def aliases_of(source: str, where: str) -> list[tuple[str, str, str]]:
    """``(alias, imported name, where)`` for every aliased import in ``source``.

    Parameters
    ----------
    source : str
        A module's Python source.
    where : str
        Its path, for the message.
    """
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(a.asname, a.name, where) for a in node.names if a.asname and a.asname != a.name]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            out += [(a.asname, f"{base}.{a.name}", where) for a in node.names
                    if a.asname and a.asname != a.name]
    return out


def conflicting_aliases(found) -> dict[str, dict[str, list[str]]]:
    """The aliases that stand for more than one name: alias -> {imported name: [files]}.

    Parameters
    ----------
    found : iterable of (str, str, str)
        ``(alias, imported name, where)`` rows, as :func:`aliases_of` gives them.
    """
    by_alias: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for alias, name, where in found:
        by_alias[alias][name].append(where)
    return {a: dict(m) for a, m in by_alias.items() if len(m) > 1}


def project_aliases():
    rows = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if "egm_pb2" in path.name:          # protoc's generated module
                continue
            rows += aliases_of(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    return rows


def test_every_module_alias_has_one_meaning():
    bad = conflicting_aliases(project_aliases())
    assert not bad, "aliases with more than one meaning:\n" + "\n".join(
        f"  {a}: " + "; ".join(f"{n} in {', '.join(w[:3])}" for n, w in m.items()) for a, m in sorted(bad.items()))


def test_the_check_sees_a_second_meaning():
    rows = (aliases_of("from rt.control import kernels as CK\n", "a.py")
            + aliases_of("from sim_stand.contact import kernel as CK\n", "b.py")
            + aliases_of("import numpy as np\n", "c.py") + aliases_of("import numpy as np\n", "d.py"))
    assert set(conflicting_aliases(rows)) == {"CK"}
    assert len(project_aliases()) > 100          # the scan reads the project, not an empty set
