"""The repository is self-contained in its citations (docs/references.md).

* No text file of the repository points outside it: no path into a sibling folder of the
  checkout, no citation of a paper by a number instead of its key, no digest of the papers
  that only exists elsewhere.
* Every citation of a paper or source, ``[Key]`` or ``[Key, locator]``, uses a key that
  docs/references.md defines, and its locator is the paper's own: an equation (``eq. 7``,
  ``eqs. 35–36``), a section number (``§4``) or, for a paper with unnumbered sections, one of the
  short section names its entry lists.
* Every key docs/references.md defines is cited somewhere else in the repository.

A citation is recognised by its shape (author and year, ``A & B``, or a known author's name
first), so type hints such as ``list[Path]`` and TOML tables such as ``[platform]`` are not
citations; a citation may run over a line break of a comment or docstring.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCES = ROOT / "docs" / "references.md"
SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg"}
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "build", "dist", "__pycache__"}

# what must not appear anywhere (written so that this file does not match itself)
FORBIDDEN = {
    "a path into a sibling folder of the checkout": re.compile(r"\.\./shared\b"),
    "a digest of the papers kept outside the repository": re.compile(r"seed[-]digest", re.I),
    "a paper cited by number instead of its key": re.compile(r"\b[Ss]eeds? 00\d"),
}

ENTRY = re.compile(r"^(?:### \[([^\]\n]+)\]\s*$|[-*] \*\*\[([^\]\n]+)\]\*\*)", re.M)
SECTION_NAME = re.compile(r"^\| `([^`]+)` \|", re.M)
BRACKETS = re.compile(r"\[([^\[\]]{2,300})\](?!\()")
AUTHOR_YEAR = re.compile(r"^[A-Z][\w.'-]*(?: [\w.&'-]+)* (?:19|20)\d\d[a-z]?$")
AUTHORS_AND = re.compile(r"^[A-Z][\w.'-]+(?:,? [A-Z][\w.'-]+)* & [A-Z][\w.'-]+")
EQ_OR_SECTION = re.compile(r"^(?:eqs?\. ?\S|§\s?\d|[\d.]+(?:[–-][\d.]+)?$)")


def text_files() -> list[Path]:
    """The repository's text files: tracked and new (not ignored) ones, or a walk of the tree
    when git is not there."""
    try:
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
        paths = [ROOT / line for line in out.splitlines() if line]
    except (OSError, subprocess.CalledProcessError):
        paths = [p for p in ROOT.rglob("*") if not SKIP_DIRS & set(p.relative_to(ROOT).parts)]
    return sorted(p for p in paths if p.suffix in SUFFIXES and p.is_file()
                  and not SKIP_DIRS & set(p.relative_to(ROOT).parts))


def normalise(text: str) -> str:
    """Line breaks inside comments and docstrings (with a comment's leading ``#``) become one
    space, so a citation broken over two lines reads as one."""
    return re.sub(r"[ \t]*\n[ \t]*(?:#+[ \t]?)?[ \t]*", " ", text)


def defined() -> dict[str, set[str]]:
    """Key -> the short section names its entry lists (empty for numbered or no sections)."""
    text = REFERENCES.read_text()
    entries = list(ENTRY.finditer(text))
    keys: dict[str, set[str]] = {}
    for i, m in enumerate(entries):
        key = m.group(1) or m.group(2)
        assert key not in keys, f"docs/references.md defines [{key}] twice"
        end = entries[i + 1].start() if i + 1 < len(entries) else len(text)
        block = text[m.end():end].split("\n## ")[0]
        keys[key] = set(SECTION_NAME.findall(block)) if m.group(1) else set()
    return keys


def author_tokens(keys) -> set[str]:
    """First words of the keys that name authors (with a year or an ``&``), and every surname
    of a multi-author key: a bracket starting with one of them is meant as a citation."""
    out = set()
    for k in keys:
        if re.search(r"\b(?:19|20)\d\d[a-z]?$", k) or "&" in k:
            out.add(k.split()[0].rstrip(","))
            out.update(w.rstrip(",") for w in k.replace("&", " ").split() if w[:1].isupper() and len(w) > 2)
    return out


def citations(text: str, keys, authors):
    """(key or None, locator, the bracket's text) for every bracket that is a citation."""
    for m in BRACKETS.finditer(normalise(text)):
        inner = m.group(1).strip()
        key = next((k for k in sorted(keys, key=len, reverse=True)
                    if inner == k or inner.startswith(k + ", ")), None)
        if key is not None:
            yield key, inner[len(key) + 2:], inner
            continue
        head = inner.split(",")[0].strip()
        if AUTHOR_YEAR.match(head) or AUTHORS_AND.match(inner) or head.split(" ")[0] in authors:
            yield None, "", inner


def scan(*, citations_only: bool = False):
    """Defined keys, author tokens and {path: text}; ``citations_only`` leaves out this file,
    whose own examples are deliberately wrong citations."""
    keys = defined()
    authors = author_tokens(keys)
    found = {}
    for p in text_files():
        rel = p.relative_to(ROOT).as_posix()
        if citations_only and p == Path(__file__).resolve():
            continue
        try:
            found[rel] = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
    return keys, authors, found


def test_references_define_the_source_papers():
    keys = defined()
    for key in ("Yaskevich 2018a", "Yaskevich 2018b", "Yaskevich 2018c", "Golubev & Yaskevich",
                "N. A. Yaskevich", "Zhu, Wang & Zheng", "Featherstone 1983"):
        assert key in keys, f"docs/references.md has no entry [{key}]"
    assert {"modified CRBA", "base wrench", "open chains"} <= keys["Yaskevich 2018a"]
    assert {"contact forces", "latches and sensors", "validation"} <= keys["Yaskevich 2018b"]


def test_nothing_points_outside_the_repository():
    _, _, files = scan()
    assert len(files) > 100, "the scan found too few files to be the repository"
    bad = []
    for rel, text in files.items():
        for what, pattern in FORBIDDEN.items():
            for m in pattern.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{rel}:{line}: {what}: {m.group(0)!r}")
    assert not bad, "\n".join(bad)


def test_every_citation_uses_a_defined_key_and_the_papers_own_locators():
    keys, authors, files = scan(citations_only=True)
    bad = []
    for rel, text in files.items():
        for key, locator, inner in citations(text, keys, authors):
            if key is None:
                bad.append(f"{rel}: [{inner}] cites a key docs/references.md does not define")
                continue
            if not locator:
                continue
            names = keys[key]
            for item in (x.strip() for x in locator.split(",")):
                # a paper with named (unnumbered) sections has no "§" numbers to cite
                ok = item in names or (EQ_OR_SECTION.match(item) and not (names and "§" in item))
                if not ok:
                    hint = ", ".join(sorted(names)) if names else "none: cite eq. N or §N"
                    bad.append(f"{rel}: [{inner}]: {item!r} is not an equation, section number or "
                               f"section name of [{key}] (its section names: {hint})")
    assert not bad, "\n".join(bad)


def test_every_defined_key_is_cited():
    keys, authors, files = scan(citations_only=True)
    cited = set()
    for rel, text in files.items():
        if rel == "docs/references.md":
            continue
        cited.update(k for k, _, _ in citations(text, keys, authors) if k)
    unused = sorted(set(keys) - cited)
    assert not unused, f"docs/references.md defines keys nothing cites: {unused}"


def test_the_citation_shape_is_recognised():
    """The checker itself: a wrong year, a locator that is not the paper's, a key broken over a
    comment's line break, and the brackets that are no citations."""
    keys = {"Yaskevich 2018a": {"open chains"}, "Zhu, Wang & Zheng": set(), "Li 2026": set()}
    authors = author_tokens(keys)
    got = list(citations("x [Yaskevich 2019] y [Zhu, Wang & Zheng, eq. 47] [Li 2026]'s "
                         "# ([Yaskevich\n# 2018a, open chains]) list[Path] [platform] [Zhu 2009] "
                         "[Smith & Jones] [Dask](https://dask.org)", keys, authors))
    assert [(k, loc) for k, loc, _ in got] == [
        (None, ""), ("Zhu, Wang & Zheng", "eq. 47"), ("Li 2026", ""),
        ("Yaskevich 2018a", "open chains"), (None, ""), (None, "")]
    assert FORBIDDEN["a paper cited by number instead of its key"].search("see seed" + " 004 eq. 1")
    assert not FORBIDDEN["a paper cited by number instead of its key"].search("seed = 7, --seed 1")
