"""A small checker for a built site: images, internal links and anchors, external resources."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


@dataclass
class PageInfo:
    ids: set[str] = field(default_factory=set)
    links: list[str] = field(default_factory=list)  # <a href>
    images: list[str] = field(default_factory=list)  # <img src>
    resources: list[str] = field(default_factory=list)  # <script src>, <link href>, <img src>


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.info = PageInfo()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.info.ids.add(a["id"])
        if tag == "a" and "name" in a:
            self.info.ids.add(a["name"])
        if tag == "a" and "href" in a:
            self.info.links.append(a["href"])
        if tag == "img" and "src" in a:
            self.info.images.append(a["src"])
            self.info.resources.append(a["src"])
        if tag == "script" and "src" in a:
            self.info.resources.append(a["src"])
        if tag == "link" and "href" in a and a.get("rel") not in ("canonical", "alternate"):
            self.info.resources.append(a["href"])


def parse(path: Path) -> PageInfo:
    collector = _Collector()
    collector.feed(path.read_text(encoding="utf-8"))
    return collector.info


def is_external(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.scheme or parts.netloc)


def _published_path(site: Path) -> str:
    """The path the site is published under (``/torch-knobs/`` for a ``site_url`` of
    ``https://torch-knobs.github.io/torch-knobs/``; ``/`` without one), from the canonical link
    MkDocs gives the home page where ``site_url`` is set."""
    home = site / "index.html"
    text = home.read_text(encoding="utf-8") if home.is_file() else ""
    found = re.search(r'<link rel="canonical" href="([^"]+)"', text)
    path = urlsplit(found.group(1)).path if found else "/"
    return path.rsplit("/", 1)[0] + "/"


def check_site(site: Path) -> list[str]:
    """Every problem found, as readable lines (empty when the site is sound)."""
    site = site.resolve()
    pages = {p: parse(p) for p in sorted(site.rglob("*.html"))}
    problems: list[str] = []
    published = _published_path(site)
    for page, info in pages.items():
        rel = page.relative_to(site)
        for url in info.resources:
            if is_external(url):
                problems.append(
                    f"{rel}: loads an external resource {url!r} (the site must be offline)"
                )
        for src in info.images:
            if is_external(src):
                continue
            path = unquote(urlsplit(src).path)
            target = ((site if path.startswith("/") else page.parent) / path.lstrip("/")).resolve()
            if not target.is_file() or target.stat().st_size == 0:
                problems.append(f"{rel}: image {src!r} does not exist")
        for href in info.links:
            if is_external(href) or href.startswith(("mailto:", "javascript:")):
                if href.startswith("javascript:"):
                    problems.append(f"{rel}: javascript: link {href!r}")
                continue
            parts = urlsplit(href)
            path = parts.path
            if path.startswith(published):  # the 404 page is absolute, under site_url's path
                path = "/" + path[len(published):]
            base = site if path.startswith("/") else page.parent
            target = page if not path else (base / unquote(path.lstrip("/"))).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{rel}: link {href!r} points to a missing file")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    problems.append(
                        f"{rel}: link {href!r}: no id {parts.fragment!r} in {target.name}"
                    )
    return problems
