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


CONTRIBUTE = GUIDE / "contribute.md"
#: What the contribute page must name, from install to pull request and the checks on it.
CONTRIBUTE_COMMANDS = (
    "python3 -m pip install nox && nox -s bench -- --profile contrib",
    "python3 -m bench run --profile contrib",
    'python -m bench pack reports/<machine>/<run-id> --machine-name "<your name for it>"',
    "--price-per-hour USD --price-source TEXT --price-date YYYY-MM-DD",
    "python -m bench add <machine>-<run-id>.tar.gz",
    "git add reports/<machine>/<run-id> && git commit",
    "python3 -m bench check --all reports/",
    "nox -s report",
)
#: Example values for the placeholders of the page's commands, so the parser can read them.
_PLACEHOLDERS = {"USD": "1.5", "YYYY-MM-DD": "2026-01-01", "TEXT": "a-price-list"}


def _bench_commands(text: str) -> list[list[str]]:
    """The argument lists of the page's ``python -m bench ...`` commands, in its code blocks
    and inline code (a flags-only line continues the command before it)."""
    import shlex

    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    spans = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    found: list[list[str]] = []
    for block in [*blocks, *spans]:
        for line in block.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part)
                if words[:3] in (["python", "-m", "bench"], ["python3", "-m", "bench"]):
                    found.append(words[3:])
                elif words and words[0].startswith("--") and found and block in blocks:
                    found.append([*found[-1], *words])
    return [[_PLACEHOLDERS.get(w, w) for w in c] for c in found]


def test_the_contribute_page_names_the_commands_from_install_to_pull_request() -> None:
    text = " ".join(CONTRIBUTE.read_text(encoding="utf-8").split())
    missing = [c for c in CONTRIBUTE_COMMANDS if c not in text]
    assert not missing, missing
    for word in ("reference", "contributed", "reproduced", "host names", "MAC addresses",
                 "IP addresses", "serial numbers", "home paths", "mkdocs build --strict"):
        assert word in text, word


def test_the_contribute_pages_commands_parse() -> None:
    """Every ``bench`` command on the page is one the parser reads, with its flags, for the
    commands this checkout registers (one it does not yet is left to the first assertion)."""
    from bench.cli import build_parser
    from bench.commands import COMMANDS

    known = {c.name for c in COMMANDS}
    commands = _bench_commands(CONTRIBUTE.read_text(encoding="utf-8"))
    assert {"run", "pack", "add", "check"} <= {c[0] for c in commands}
    parser = build_parser()
    for argv in commands:
        if argv[0] not in known:
            continue
        try:
            parser.parse_args(argv)
        except SystemExit as exc:
            raise AssertionError(f"the page's `bench {' '.join(argv)}` does not parse") from exc


def test_the_contrib_profile_the_page_names_is_shipped() -> None:
    from bench.run.plan.profiles import shipped_profiles

    assert "contrib" in shipped_profiles()
    assert "`contrib`" in (GUIDE / "running.md").read_text(encoding="utf-8"), \
        "the profiles table lists it"


def test_home_links_the_contribute_page(fixture_site: Built) -> None:
    assert "(guide/contribute.md)" in (ROOT / "site_src" / "index.md").read_text(
        encoding="utf-8")
    index = (fixture_site.site / "index.html").read_text(encoding="utf-8")
    assert 'href="guide/contribute.html"' in index
