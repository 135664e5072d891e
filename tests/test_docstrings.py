"""Every public kernel documents its arguments: a numpydoc ``Parameters`` section that names each
argument of the signature, in signature order, and no other (after python-control's
``control/tests/docstrings_test.py``).

A *public kernel* is a module-level function of rt, sim_stand, drivers or bench whose name does
not start with ``_`` and that numba compiles: decorated with ``njit`` or ``jit`` however spelled
(``@njit``, ``@njit(**KERNEL)``, ``@nb.njit(...)``, ``@numba.jit``, an alias from
``from numba import njit as ...``). ``rt.jit`` holds compile options only (``KERNEL``), no
decorator of its own. The check reads the source (``ast``): no kernel is imported or compiled.

The section is the lines after a ``Parameters`` header and its dashed underline, up to the next
header; a parameter is a line at the section's own indentation of the form ``name : type``, or
``a, b : type`` for several that share one description. Every other line of the section is
indented under its parameter.

One test per package: ``pytest tests/test_docstrings.py -k "documents_its_parameters and rt"``
checks rt alone (:func:`check_packages` from Python).
"""
from __future__ import annotations

import ast
import functools
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rt", "sim_stand", "drivers", "bench")

_NUMBA_DECORATORS = ("njit", "jit")
_UNDERLINE = re.compile(r"^-{3,}$")
# ``name : type`` or ``a, b : type``; ``*args`` / ``**kwargs`` spelled with their stars
_PARAM_LINE = re.compile(r"^(\*{0,2}[A-Za-z_]\w*(?:\s*,\s*\*{0,2}[A-Za-z_]\w*)*) : \S.*$")


# ------------------------------------------------------------------------------ finding kernels

def _numba_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(names bound to numba's njit/jit, names bound to the numba module) by the module's imports."""
    decorators, modules = set(_NUMBA_DECORATORS), {"numba"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "numba":
            for a in node.names:
                if a.name in _NUMBA_DECORATORS:
                    decorators.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "numba":
                    modules.add(a.asname or a.name)
    return decorators, modules


def _is_numba_decorator(dec: ast.expr, decorators: set[str], modules: set[str]) -> bool:
    if isinstance(dec, ast.Call):
        dec = dec.func
    if isinstance(dec, ast.Name):
        return dec.id in decorators
    if isinstance(dec, ast.Attribute) and dec.attr in _NUMBA_DECORATORS:
        return isinstance(dec.value, ast.Name) and dec.value.id in modules
    return False


def public_kernels(source: str) -> list[ast.FunctionDef]:
    """The public kernels defined at module level in ``source``."""
    tree = ast.parse(source)
    decorators, modules = _numba_names(tree)
    return [node for node in tree.body
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
            and any(_is_numba_decorator(d, decorators, modules) for d in node.decorator_list)]


def signature_names(fn: ast.FunctionDef) -> list[str]:
    a = fn.args
    names = [x.arg for x in (*a.posonlyargs, *a.args)]
    if a.vararg:
        names.append("*" + a.vararg.arg)
    names += [x.arg for x in a.kwonlyargs]
    if a.kwarg:
        names.append("**" + a.kwarg.arg)
    return names


# ------------------------------------------------------------------------- reading the section

def parameters_section(doc: str) -> list[str] | None:
    """The lines of the ``Parameters`` section of a (cleaned) docstring; None if it has none."""
    lines = doc.splitlines()
    for i in range(len(lines) - 1):
        if lines[i].strip() == "Parameters" and _UNDERLINE.match(lines[i + 1].strip()):
            indent = len(lines[i]) - len(lines[i].lstrip())
            body = []
            for j in range(i + 2, len(lines)):
                nxt = lines[j + 1].strip() if j + 1 < len(lines) else ""
                if lines[j].strip() and _UNDERLINE.match(nxt):
                    break               # the next section's header
                line = lines[j]
                body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            return body
    return None


def documented_names(section: list[str]) -> tuple[list[str], list[str]]:
    """(parameter names in order, lines at the section's indentation that are not ``name : type``)."""
    names, malformed = [], []
    for line in section:
        if not line.strip() or line[0].isspace():
            continue                    # blank, or a description indented under its parameter
        m = _PARAM_LINE.match(line.rstrip())
        if m:
            names += [n.strip() for n in m.group(1).split(",")]
        else:
            malformed.append(line.strip())
    return names, malformed


def check_kernel(fn: ast.FunctionDef) -> list[str]:
    """What is wrong with the kernel's Parameters section (empty: nothing)."""
    doc = ast.get_docstring(fn)
    if not doc:
        return ["no docstring"]
    section = parameters_section(inspect.cleandoc(doc))
    want = signature_names(fn)
    if section is None:
        return [f"no 'Parameters' section (wants {', '.join(want)})"] if want else []
    got, malformed = documented_names(section)
    problems = [f"not 'name : type': {line!r}" for line in malformed]
    missing = [n for n in want if n not in got]
    extra = [n for n in got if n not in want]
    dup = sorted({n for n in got if got.count(n) > 1})
    if missing:
        problems.append(f"missing: {', '.join(missing)}")
    if extra:
        problems.append(f"not in the signature: {', '.join(extra)}")
    if dup:
        problems.append(f"documented twice: {', '.join(dup)}")
    if not (missing or extra or dup) and got != want:
        problems.append(f"order {', '.join(got)}; signature order {', '.join(want)}")
    return problems


def check_source(source: str, label: str) -> tuple[int, list[str]]:
    """(number of public kernels, one failure line per bad kernel) for one module's source."""
    kernels = public_kernels(source)
    failures = []
    for fn in kernels:
        problems = check_kernel(fn)
        if problems:
            failures.append(f"{label}:{fn.lineno}:{fn.name}: {'; '.join(problems)}")
    return len(kernels), failures


@functools.lru_cache(maxsize=None)
def _check_package(pkg: str, root: Path) -> tuple[int, tuple[str, ...]]:
    count, failures = 0, []
    for path in sorted((root / pkg).rglob("*.py")):
        n, f = check_source(path.read_text(encoding="utf-8"), str(path.relative_to(root)))
        count += n
        failures += f
    return count, tuple(failures)


def check_packages(packages=PACKAGES, root: Path = ROOT) -> tuple[int, list[str]]:
    """(public kernels found, failure lines) over every .py file under ``packages``; e.g.
    ``check_packages(("rt",))`` for rt alone."""
    count, failures = 0, []
    for pkg in packages:
        n, f = _check_package(pkg, root)
        count += n
        failures += f
    return count, failures


# ----------------------------------------------------------------------------------------- tests

@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_kernel_documents_its_parameters(package):
    count, failures = check_packages((package,))
    assert not failures, f"{len(failures)} of {count} public kernels:\n" + "\n".join(failures)


def test_the_check_finds_the_kernels():
    count, _ = check_packages()
    assert count > 100, count


_BAD = '''
import numba
import numba as nb
from numba import njit, jit as compiled
from rt.jit import KERNEL


@njit(**KERNEL)
def no_section(q, out):
    """Normalise q into out."""


@nb.njit(cache=True)
def misspelled(pose, out):
    """Misspelled.

    Parameters
    ----------
    poes : float64[7]
        The pose.
    out : float64[7]
        Where it goes.
    """


@numba.njit
def swapped(a, b):
    """Swapped.

    Parameters
    ----------
    b : float
        b.
    a : float
        a.

    Returns
    -------
    c : float
        Never counted as a parameter.
    """


@compiled(nopython=True)
def untyped(a, b):
    """Untyped.

    Parameters
    ----------
    a, b
        No type.
    """


@njit
def good(a, b, out):
    """Good.

    Parameters
    ----------
    a, b : float64[3]
        Two vectors.
    out : float64[3]
        Their sum.

    Returns
    -------
    out : float64[3]
        The same array.
    """


@njit(cache=True)
def bare(x):
    return x


@njit
def _private(a):
    """Not public."""


def not_a_kernel(a):
    """Not compiled."""


@njit
def no_arguments():
    """Nothing to document."""
'''


def test_the_check_fails_on_bad_kernels():
    count, failures = check_source(_BAD, "bad.py")
    assert count == 7
    by_name = {line.split(":")[2]: line for line in failures}
    assert set(by_name) == {"no_section", "misspelled", "swapped", "untyped", "bare"}, failures
    assert "no docstring" in by_name["bare"]
    assert "no 'Parameters' section" in by_name["no_section"]
    assert "missing: pose" in by_name["misspelled"] and "not in the signature: poes" in by_name["misspelled"]
    assert "order b, a; signature order a, b" in by_name["swapped"]
    assert "not 'name : type'" in by_name["untyped"] and "missing: a, b" in by_name["untyped"]
