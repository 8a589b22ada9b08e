"""Golden pages: the Markdown generated from the committed fixtures, compared byte for byte.

To accept a deliberate change, regenerate and review the diff:

    TORCH_KNOBS_UPDATE_GOLDEN=1 python -m pytest tests/site/test_golden.py
    git diff tests/site/golden

Without that variable the goldens are only read, never written.
"""

from __future__ import annotations

import os
import shutil
import warnings
from pathlib import Path

from conftest import Built

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("TORCH_KNOBS_UPDATE_GOLDEN") == "1"


def generated_pages(built: Built) -> dict[str, str]:
    """The generated Markdown pages and HTML fragments (charts and CSVs are checked elsewhere)."""
    paths = [*built.generated.rglob("*.md"), *built.generated.rglob("*.html")]
    return {
        p.relative_to(built.generated).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(paths)
    }


def test_generated_pages_match_the_goldens(fixture_site: Built) -> None:
    pages = generated_pages(fixture_site)
    if UPDATE:
        if GOLDEN.exists():
            shutil.rmtree(GOLDEN)
        for rel, text in pages.items():
            out = GOLDEN / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
        warnings.warn(
            f"golden pages rewritten in {GOLDEN}; review them with git diff", stacklevel=1
        )
    golden = {
        p.relative_to(GOLDEN).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted([*GOLDEN.rglob("*.md"), *GOLDEN.rglob("*.html")])
    }
    assert sorted(pages) == sorted(golden), "pages added or removed; see the module docstring"
    for rel, text in pages.items():
        assert text == golden[rel], (
            f"{rel} differs from tests/site/golden/{rel}; if the change is intended, regenerate "
            "with TORCH_KNOBS_UPDATE_GOLDEN=1 and review the diff"
        )
