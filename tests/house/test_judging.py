"""The report's rooms: the build reads as its four steps, the views only format what the
judging step hands them, and the verdict words live in one place.

Each rule is read off the source (``ast`` and the template text); nothing is imported or run.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import typing
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from bench.report import vocabulary

from .imports import import_graph
from .literals import string_literals

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
REPORT = BENCH / "report"
QUESTIONS = "bench.report.questions"
#: What a view may import of the judging and statistics side: the judge package's face (its
#: types) and the answers; a view's own page model is in its own folder.
ALLOWED_JUDGING = re.compile(r"bench\.report\.(judge|questions\.answers)$")
#: What a view must not import: the statistics, the rules, and the judge's insides.
JUDGING = re.compile(r"bench\.report\.(analysis|judge|questions\.answers)(\..*)?$")
WORDS = {w.value for enum in vocabulary.VOCABULARY for w in enum}


def _views() -> dict[str, set[str]]:
    """Each question's view module and what it imports."""
    return {m: deps for m, deps in import_graph(REPORT).items()
            if m.startswith(QUESTIONS + ".") and m.endswith(".view")}


def test_views_import_only_the_answers_and_their_page_models() -> None:
    found = _views()
    assert f"{QUESTIONS}.cudnn.view" in found  # it read the views
    wrong = {f"{m} imports {d}" for m, deps in found.items() for d in deps
             if JUDGING.match(d) and not ALLOWED_JUDGING.match(d)}
    assert not wrong, sorted(wrong)


def test_the_build_reads_as_its_four_steps() -> None:
    tree = ast.parse((REPORT / "build.py").read_text(encoding="utf-8"))
    build = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "build")
    calls = sorted(((n.lineno, n.col_offset, n.func) for n in ast.walk(build)
                    if isinstance(n, ast.Call)), key=lambda t: (t[0], t[1]))
    names = [f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
             for _, _, f in calls]
    steps = ["load_reports", "analyse", "judge", "render"]
    found = [n for n in names if n in steps]
    assert found == steps, found


def _spelled_words(path: Path, base: Path = ROOT) -> list[str]:
    """The string literals of a module that are words of the vocabulary (docstrings and
    f-strings are prose, not literals, and are not read)."""
    return [f"{path.relative_to(base)}:{n}: {value!r}" for n, value in string_literals(path)
            if value in WORDS]


def test_no_module_spells_a_verdict_word_itself() -> None:
    found = [hit for path in sorted(BENCH.rglob("*.py"))
             if path != BENCH / "report" / "vocabulary.py" for hit in _spelled_words(path)]
    assert not found, found


def test_no_template_spells_a_verdict_word_or_chooses() -> None:
    """A template neither names a verdict (``c["no clear difference"]``, ``c.faster``) nor
    compares values in a condition: what a page says is chosen by its page model."""
    words = "|".join(re.escape(w) for w in sorted(WORDS, key=len, reverse=True))
    spelled = re.compile(rf"""["']({words})["']|\.({words})\b""")
    condition = re.compile(r"{%-?\s*(?:if|elif)\s+(.*?)\s*-?%}")
    presence = re.compile(r"^(not\s+)?[\w.]+(\s+(and|or)\s+(not\s+)?[\w.]+)*$")
    found = []
    for path in sorted(REPORT.rglob("*.j2")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            where = f"{path.relative_to(ROOT)}:{n}"
            for block in re.findall(r"{[{%].*?[%}]}", line):
                if spelled.search(block):
                    found.append(f"{where}: {block}")
            found += [f"{where}: chooses: {c}" for c in condition.findall(line)
                      if not presence.match(c)]
    assert not found, found


@pytest.mark.parametrize("text, hits", [
    ('x = "faster"\n', 1),
    ('x = Verdict.FASTER\n', 0),
    ('def f():\n    """Only "faster" in prose."""\n', 0),
    ('x = f"faster in {n}"\n', 0),
    ("x = {'no clear difference': 1}\n", 1),
])
def test_a_spelled_word_is_found(tmp_path: Path, text: str, hits: int) -> None:
    path = tmp_path / "words.py"
    path.write_text(text, encoding="utf-8")
    assert len(_spelled_words(path, tmp_path)) == hits


#: What a page model's field must not be: a frame a view would have to query, or a value
#: whose type says nothing.
UNTYPED = ("DataFrame", "Series", "Any")


def _untyped(hint: object, where: str, seen: set[type]) -> list[str]:
    """Every untyped field reachable from ``hint`` (a type hint), named by its path."""
    if hint is Any or getattr(hint, "__name__", "") in UNTYPED:
        return [where]
    if isinstance(hint, typing.TypeVar):
        return _untyped(hint.__bound__, where, seen) if hint.__bound__ else [where]
    found = []
    for arg in typing.get_args(hint):
        found += _untyped(arg, where, seen)
    origin = typing.get_origin(hint) or hint
    if isinstance(origin, type) and dataclasses.is_dataclass(origin) and origin not in seen:
        seen.add(origin)
        hints, given = typing.get_type_hints(origin), _parameters(origin)
        for f in dataclasses.fields(origin):
            found += _untyped(_given(hints[f.name], given), f"{origin.__name__}.{f.name}", seen)
    return found


def _parameters(cls: type) -> dict[object, object]:
    """What each type parameter of ``cls``'s generic bases stands for in ``cls``
    (``ComparisonPage[CpuGpuSection]``: its sections are CPU-vs-GPU sections)."""
    return {param: arg for base in getattr(cls, "__orig_bases__", ())
            for param, arg in zip(getattr(typing.get_origin(base), "__parameters__", ()),
                                  typing.get_args(base), strict=False)}


def _given(hint: Any, given: dict[object, object]) -> Any:
    """``hint`` with the type parameters ``given`` stands for put in."""
    params = getattr(hint, "__parameters__", ())
    if hint in given:
        return given[hint]
    return hint[tuple(given.get(p, p) for p in params)] if params else hint


def test_no_page_model_field_is_a_frame_or_any() -> None:
    from bench.report.questions.answers import Answers

    found = _untyped(Answers, "Answers", set())
    assert not found, sorted(set(found))


@dataclasses.dataclass
class _Inner:
    rows: pd.DataFrame
    best: Any


@dataclasses.dataclass
class _Outer:
    inner: tuple[_Inner, ...]
    ok: int | None


def test_an_untyped_field_is_found() -> None:
    assert sorted(_untyped(_Outer, "Outer", set())) == ["_Inner.best", "_Inner.rows"]


_T = typing.TypeVar("_T")


@dataclasses.dataclass
class _Generic(typing.Generic[_T]):
    items: tuple[_T, ...]


@dataclasses.dataclass
class _OfInner(_Generic[_Inner]):
    pass


@dataclasses.dataclass
class _OfOpen(_Generic[_T]):
    pass


def test_a_generic_base_field_is_read_as_its_subclass_gives_it() -> None:
    assert sorted(_untyped(_OfInner, "OfInner", set())) == ["_Inner.best", "_Inner.rows"]
    assert _untyped(_OfOpen, "OfOpen", set()) == ["_OfOpen.items"]


def test_no_view_takes_the_whole_answers() -> None:
    """A view formats its own page model and what every page shares (``Shared``)."""
    found = [f"{path.relative_to(ROOT)}:{node.lineno}"
             for path in sorted((REPORT / "questions").glob("*/*.py"))
             if path.name != "model.py"
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Name) and node.id == "Answers"]
    assert not found, found


def test_views_compute_nothing() -> None:
    """No view imports a frame or array library: filtering, sorting and statistics belong to
    the page model."""
    found = [f"{path.relative_to(ROOT)}:{node.lineno}"
             for path in sorted((REPORT / "questions").glob("*/*.py"))
             if path.name != "model.py"
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             for name in _imported_names(node)
             if name.split(".")[0] in ("pandas", "numpy", "scipy")]
    assert not found, found


def _imported_names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    return []
