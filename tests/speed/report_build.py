"""Speed target: the full report build over 100k result rows in <= 15 s. A script, not a test.

Writes a synthetic results tree (``tests/fixtures/synth.py``: ~100k rows over four machines,
every status represented), then times ``bench.report.build.build``: loading and validation,
statistics and bootstraps, advice, every page and chart, and ``mkdocs build --strict``. The
tree is written before the clock starts; the project copy (mkdocs.yml and site_src/) lives in a
temporary folder so the working tree is untouched.

    python tests/speed/report_build.py [--rows N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "fixtures")]

TARGET_S = 15.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="result rows (default 100000)")
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="build in this folder and keep it (default: a temporary folder)",
    )
    args = parser.parse_args()

    import synth

    work = args.keep or Path(tempfile.mkdtemp(prefix="torch-knobs-speed-"))
    try:
        reports = work / "reports"
        if reports.exists():
            shutil.rmtree(reports)
        t0 = time.perf_counter()
        synth.write_synthetic_reports(reports, args.rows, seed=0)
        written = time.perf_counter() - t0
        project = work / "project"
        if project.exists():
            shutil.rmtree(project)
        project.mkdir(parents=True)
        shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
        shutil.copytree(
            ROOT / "site_src", project / "site_src", ignore=shutil.ignore_patterns("generated")
        )

        t0 = time.perf_counter()
        from bench.report import build  # imports (pandas, scipy, matplotlib, jinja2) are timed

        build.build(
            reports,
            project / "site",
            docs_dir=project / "site_src",
            config=project / "mkdocs.yml",
            quiet=True,
        )
        elapsed = time.perf_counter() - t0
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)

    print(f"synthetic tree: {args.rows:,} rows requested, written in {written:.1f} s (not timed)")
    print(
        f"report build (load, stats, advice, pages, charts, mkdocs --strict): {elapsed:.1f} s "
        f"(target <= {TARGET_S:.0f} s)"
    )
    return 0 if elapsed <= TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
