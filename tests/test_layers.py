"""The import layers of docs/architecture.md ("Layers"), checked on the source: every import
of the project's packages — at module level or inside a function — goes to the importer's
own layer or one below it, and no two modules import each other, directly or through others.

Imports under ``if TYPE_CHECKING:`` are annotations only and never run; they are not
dependencies and are not counted. ``rt.cli`` reaches sim_stand and bench only through the
``dockstand.commands`` entry points (no import statement), and a case's contact section
reaches its model through ``dockstand.contact_models``: both are data in pyproject.toml.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("drivers", "rt", "sim_stand", "bench")

# lowest first; a module belongs to the layer of its longest matching prefix
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("drivers", "rt", "rt.jit", "rt.realtime", "rt.rotation_entries")),
    ("dynamics", ("rt.dynamics",)),
    ("stand", ("rt.stand",)),
    ("config", ("rt.config",)),
    ("record", ("rt.record",)),
    ("control", ("rt.control",)),
    ("tools", ("rt.operator", "rt.analysis", "rt.console", "rt.cli")),
    # the table of mechanism kinds: every module of sim_stand takes its codes from it, it takes nothing of them
    ("sim_stand kinds", ("sim_stand.mechanism_kinds",)),
    ("sim_stand", ("sim_stand",)),
    ("bench", ("bench",)),
)


def layer_of(module: str) -> int:
    best, best_len = -1, -1
    for k, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                # the bare package root ("rt") holds only its own __init__: rt.x.y is not foundation
                if p == "rt" and module != "rt":
                    continue
                best, best_len = k, len(p)
    if best < 0:
        raise LookupError(f"{module}: in no layer of LAYERS (add it to docs/architecture.md and here)")
    return best


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for p in sorted((root / pkg).rglob("*.py")):
            rel = p.relative_to(root).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = p
    return out


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            t = node.test
            name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                for sub in node.body:
                    for n in ast.walk(sub):
                        if hasattr(n, "lineno"):
                            lines.add(n.lineno)
    return lines


def imports_of(module: str, path: Path, known: dict[str, Path]) -> dict[str, int]:
    """The project modules ``module`` imports, each with the line of its first import."""
    tree = ast.parse(path.read_text(), str(path))
    skip = _type_checking_lines(tree)
    is_pkg = path.name == "__init__.py"
    out: dict[str, int] = {}

    def add(target: str, line: int) -> None:
        if target.split(".")[0] in PACKAGES and target != module:
            out.setdefault(target, line)

    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            for a in node.names:
                sub = f"{src}.{a.name}"
                add(sub if sub in known else src, node.lineno)
    return out


def import_graph(root: Path = ROOT) -> dict[str, dict[str, int]]:
    known = _modules(root)
    return {m: imports_of(m, p, known) for m, p in known.items()}


def upward_imports(graph: dict[str, dict[str, int]]) -> list[str]:
    bad = []
    for m, targets in graph.items():
        lm = layer_of(m)
        for t, line in targets.items():
            lt = layer_of(t)
            if lt > lm:
                bad.append(f"{m} (layer {LAYERS[lm][0]}) imports {t} (layer {LAYERS[lt][0]}) at line {line}")
    return bad


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_layer():
    for m in import_graph():
        layer_of(m)


def test_no_upward_import():
    bad = upward_imports(import_graph())
    assert not bad, "imports against the layers of docs/architecture.md:\n" + "\n".join(bad)


def test_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "modules that import each other: " + "; ".join(" <-> ".join(c) for c in found)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for pkg in PACKAGES:
        (tmp_path / pkg).mkdir(exist_ok=True)
        (tmp_path / pkg / "__init__.py").touch()
    return tmp_path


def test_checker_finds_an_upward_import(tmp_path):
    root = _tree(tmp_path, {
        "rt/dynamics/__init__.py": "",
        "rt/dynamics/spatial.py": "def f():\n    from rt.control import controller\n",
        "rt/control/__init__.py": "",
        "rt/control/controller.py": "from rt.dynamics import spatial\n",
        "rt/stand/__init__.py": "",
        "rt/stand/hexapod.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from rt.config import stand\n",
        "rt/config/__init__.py": "",
        "rt/config/stand.py": "",
    })
    g = import_graph(root)
    bad = upward_imports(g)
    assert bad == ["rt.dynamics.spatial (layer dynamics) imports rt.control.controller (layer control) at line 2"]
    assert cycles(g) == [["rt.control.controller", "rt.dynamics.spatial"]]


def test_checker_finds_a_cycle_within_a_layer(tmp_path):
    root = _tree(tmp_path, {
        "sim_stand/a.py": "import sim_stand.b\n",
        "sim_stand/b.py": "from sim_stand import c\n",
        "sim_stand/c.py": "from . import a\n",
    })
    g = import_graph(root)
    assert upward_imports(g) == []
    assert cycles(g) == [["sim_stand.a", "sim_stand.b", "sim_stand.c"]]


def test_module_outside_every_layer_is_named():
    with pytest.raises(LookupError, match="nowhere"):
        layer_of("nowhere.module")


def test_the_module_map_is_complete_and_true():
    """docs/architecture.md's module tables name every module of the packages (a file, or its
    folder ``pkg/sub/``), and every path they name exists."""
    import re
    doc = (ROOT / "docs" / "architecture.md").read_text()
    listed = set(re.findall(r"`((?:rt|drivers|sim_stand|bench)/[\w/]*(?:\.py)?/?)`", doc))
    stale = sorted(p for p in listed if not (ROOT / p.rstrip("/")).exists())
    assert not stale, f"docs/architecture.md names paths that do not exist: {stale}"
    missing = []
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            rel = p.relative_to(ROOT).as_posix()
            if p.name == "__init__.py":
                continue
            if rel not in listed and not any(l.endswith("/") and rel.startswith(l) for l in listed):
                missing.append(rel)
    assert not missing, f"modules missing from docs/architecture.md's module map: {missing}"
