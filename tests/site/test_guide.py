"""The README stays a two-minute read and hands over to the Guide pages, which the strict build
checks: every Guide page is in the navigation, built, and linked from the README."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from conftest import ROOT, Built

README = ROOT / "README.md"
GUIDE = ROOT / "site_src" / "guide"
MAX_LINES = 150

#: A Markdown link or image: its target, without a title or an anchor.
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s#]+)(?:#[^)\s]*)?\)")
#: What only one machine has: an absolute path into a home, a scratch folder or a checkout.
_MACHINE_PATH = re.compile(r"(?<![\w.])/(?:tmp|home|root|work|Users|mnt|scratch)/")


def _guide_pages() -> list[str]:
    pages = sorted(p.relative_to(ROOT / "site_src").as_posix() for p in GUIDE.glob("*.md"))
    assert pages, "site_src/guide/ holds the Guide pages"
    return pages


def _nav_paths(nav: object) -> set[str]:
    """Every page path in an MkDocs ``nav`` (titles and nesting aside)."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(_nav_paths(item) for item in nav))
    if isinstance(nav, dict):
        return set().union(*(_nav_paths(item) for item in nav.values()))
    return set()


def _config() -> dict[str, object]:
    class _Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml may hold MkDocs' own tags (!ENV, !!python/name); none matters here
    _Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)


def test_the_readme_is_short_and_keeps_the_test_command() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES
    assert "nox -s tests" in text and "nox -s bench report" in text


def test_the_readme_links_every_guide_page_and_every_link_resolves() -> None:
    links = _LINK.findall(README.read_text(encoding="utf-8"))
    local = [t for t in links if not re.match(r"[a-z]+:", t)]
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, f"README links to what is not in the repository: {missing}"
    linked = {Path(t).as_posix() for t in local}
    unlinked = [p for p in _guide_pages() if f"site_src/{p}" not in linked]
    assert not unlinked, f"README does not link {unlinked}"
    assert any(t.endswith(".png") for t in local), "the README shows the home page"


def test_every_guide_page_is_in_the_navigation() -> None:
    nav = _nav_paths(_config()["nav"])
    assert not [p for p in _guide_pages() if p not in nav]


def test_guide_pages_name_no_machine_path() -> None:
    found = [f"{p}: {m.group(0)}" for p in _guide_pages()
             for m in _MACHINE_PATH.finditer((ROOT / "site_src" / p).read_text(encoding="utf-8"))]
    assert not found, found


def test_the_advise_guide_keeps_the_readme_example() -> None:
    """The README's worked example (``tests/runner/test_advise.py`` runs it as written) is the
    one the Guide explains, word for word."""
    readme = README.read_text(encoding="utf-8")
    guide = (GUIDE / "advise.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(?:python|sh)\n(.*?)```", readme.split("## Is it worth it", 1)[1],
                        re.S)
    assert len(blocks) >= 2
    for block in blocks[:2]:
        assert block in guide


def test_the_guide_pages_are_built(fixture_site: Built) -> None:
    for page in _guide_pages():
        html = fixture_site.site / Path(page).with_suffix(".html")
        assert html.is_file(), page
    index = (fixture_site.site / "index.html").read_text(encoding="utf-8")
    assert "guide/running.html" in index  # the navigation links them
