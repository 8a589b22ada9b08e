"""The same input twice gives the same bytes: generated pages, charts, data copies and site."""

from __future__ import annotations

from pathlib import Path

from conftest import FIXTURE_REPORTS, Built, build_copy


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_building_twice_is_byte_identical(fixture_site: Built, tmp_path: Path) -> None:
    again = build_copy(tmp_path / "again", FIXTURE_REPORTS)
    first, second = tree(fixture_site.generated), tree(again.generated)
    assert sorted(first) == sorted(second)
    assert any(name.endswith(".svg") for name in first)
    different = [name for name in first if first[name] != second[name]]
    assert different == []
    site_a, site_b = tree(fixture_site.site), tree(again.site)
    assert sorted(site_a) == sorted(site_b)
    assert [name for name in site_a if site_a[name] != site_b[name]] == []
