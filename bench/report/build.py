"""``python -m bench report``: results CSVs → pages and charts → ``mkdocs build --strict``.

The steps, each a package or module of its own, as :func:`build` calls them:

1. ``results = load(...)``: :mod:`bench.report.input.load` reads and validates every run under
   ``reports/``;
2. ``analysis = analyse(results)``: :mod:`bench.report.analysis` computes the statistics
   (per-cell figures, paired comparisons with their intervals and verdicts, the studies);
3. ``answers = judge(analysis)``: :mod:`bench.report.questions.answers` makes every decision
   with :mod:`bench.report.judge` (the advice, the claims) and each question's page model
   (``questions/<page>/model.py``);
4. ``render(answers)``: :mod:`bench.report.questions.site` formats them, each question's view
   in turn (:mod:`bench.report.questions.pages`, with the Markdown kit of
   :mod:`bench.report.render`), into ``<docs_dir>/generated/``, which is wiped and rebuilt
   every time; then MkDocs builds the site with ``--strict``, so a broken link or anchor fails
   the build, while :mod:`bench.report.render.drawing` draws the charts (MkDocs copies them
   last).

MkDocs runs from a derived copy of ``mkdocs.yml`` (written to a temporary folder) that points
at the absolute ``docs_dir``, the snippets base path and the machine pages of this build, so
the build works from any directory and the navigation lists every machine. The repository's
``mkdocs.yml`` itself is never modified.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from bench.report.analysis import analyse
from bench.report.input import load, local
from bench.report.questions import site
from bench.report.questions.answers import judge
from bench.report.render import drawing
from bench.report.render.buildinfo import build_info
from bench.report.render.mkdocs_hooks import CHARTS_READY_FD
from bench.report.render.paths import GENERATED, MACHINES_INDEX


class BuildError(RuntimeError):
    """The site could not be built; the message says which step failed and why."""


def build(
    reports: Path,
    site_dir: Path,
    *,
    docs_dir: Path = Path("site_src"),
    config: Path = Path("mkdocs.yml"),
    skip_bad: bool = False,
    prices: Path | None = None,
    run_mkdocs: bool = True,
    quiet: bool = False,
    focus: str | None = None,
) -> None:
    """Render ``reports`` into ``docs_dir/generated`` and build the site into ``site_dir``.

    Raises :class:`bench.report.input.load.LoadError` for a bad results file (unless ``skip_bad``),
    :class:`bench.report.input.prices.PriceError` for a bad prices file and :class:`BuildError` when
    ``reports`` is not a folder, MkDocs fails or the configuration is unusable, and
    :class:`bench.report.input.local.FocusError` when ``focus`` names no machine of it. The
    pages lead with the reader's own machine: ``focus``, else that of the runs git does not
    hold yet.
    """
    reports, site_dir, docs_dir, config = (Path(p) for p in (reports, site_dir, docs_dir, config))
    if run_mkdocs and not config.is_file():
        raise BuildError(f"{config}: MkDocs configuration not found")
    if not docs_dir.is_dir():
        raise BuildError(f"{docs_dir}: docs folder not found")
    if not reports.is_dir():  # a mistyped path would build a site that says nothing was run
        what = "is not a folder" if reports.exists() else "not found"
        raise BuildError(f"{reports}: {what}; --reports names the folder of runs "
                         f"(<machine>/<run>/results.csv)")
    results = load.load_reports(reports, skip_bad=skip_bad)
    _say_what_was_read(results, reports, quiet)
    yours = local.yours(reports, results.runs, focus)
    _say_whose(results, yours, focus, quiet)
    analysis = analyse(results)
    answers = judge(analysis, prices=prices, yours=yours)
    # the commit and day every page names, and the address its Cite lines link under
    rendered = site.render(answers, reports, docs_dir / GENERATED, build_info(config=config))
    with drawing.drawing(rendered.charts) as charts:  # drawn while MkDocs reads the pages
        if run_mkdocs:
            run_mkdocs_build(
                config,
                docs_dir,
                site_dir,
                rendered.machine_nav,
                rendered.build_epoch,
                quiet=quiet,
                charts=charts,
            )


def _say_what_was_read(results: load.Dataset, reports: Path, quiet: bool) -> None:
    """An empty tree, and every row ``--skip-bad-rows`` left out, on stderr."""
    if quiet:
        return
    if results.results.empty:  # a folder, but perhaps not the one meant
        print(f"note: no result rows under {reports} (no <machine>/<run>/results.csv with "
              f"rows); the site will say nothing was measured", file=sys.stderr)
    for line in results.skipped:
        print(f"skipped: {line}", file=sys.stderr)


def _say_whose(results: load.Dataset, yours: frozenset[str], focus: str | None,
               quiet: bool) -> None:
    """Which machine the pages lead with, and why, on stderr."""
    if quiet or not yours:
        return
    names = sorted({r.machine for r in results.runs if r.fingerprint_id in yours})
    why = "--focus" if focus is not None else "its runs are not committed yet"
    print(f"note: the pages lead with your machine {', '.join(names)} ({why})",
          file=sys.stderr)


def derived_config(
    config: Path, docs_dir: Path, machine_nav: Sequence[tuple[str, str]]
) -> dict[str, Any]:
    """The MkDocs configuration for this build, derived from ``config``.

    ``machine_nav`` is ``(title, path)`` per machine page; titles are plain text (MkDocs
    themes do not escape navigation titles, so the views keep them to safe characters).
    """
    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise BuildError(
            f"{config}: cannot read as plain YAML ({exc}); python tags (!!python/...) "
            "are not supported in the report's MkDocs configuration"
        ) from None
    if not isinstance(data, dict):
        raise BuildError(f"{config}: expected a mapping at the top level")
    docs = str(docs_dir.resolve())
    data["docs_dir"] = docs
    data["hooks"] = [str(Path(__file__).parent / "render" / "mkdocs_hooks.py")]
    for ext in data.get("markdown_extensions") or []:
        if isinstance(ext, dict) and isinstance(ext.get("pymdownx.snippets"), dict):
            ext["pymdownx.snippets"]["base_path"] = [docs]
    entries = [{title: path} for title, path in machine_nav]
    nav = data.get("nav")
    if nav is not None and entries and not _insert_after(nav, MACHINES_INDEX, entries):
        nav.append({"Machines": [MACHINES_INDEX, *entries]})
    return data


def _insert_after(items: list[Any], target: str, entries: list[dict[str, str]]) -> bool:
    """Insert ``entries`` after the nav item pointing at ``target``; True when found."""
    for i, item in enumerate(items):
        value = next(iter(item.values())) if isinstance(item, dict) and len(item) == 1 else item
        if value == target:
            items[i + 1 : i + 1] = entries
            return True
        if isinstance(value, list) and _insert_after(value, target, entries):
            return True
    return False


def run_mkdocs_build(
    config: Path,
    docs_dir: Path,
    site_dir: Path,
    machine_nav: Sequence[tuple[str, str]] = (),
    build_epoch: int = 0,
    *,
    quiet: bool = False,
    charts: drawing.Drawing | None = None,
) -> None:
    """``python -m mkdocs build --strict`` on the derived configuration.

    With ``charts``, MkDocs reads, converts and writes the pages while they are drawn, and
    copies them into the site last (``mkdocs_hooks.on_env`` and ``on_post_build``).
    """
    data = derived_config(config, docs_dir, machine_nav)
    env = dict(os.environ)
    # Dates in the output (sitemap) come from the data, so the same input gives the same site.
    env.setdefault("SOURCE_DATE_EPOCH", str(build_epoch))
    env.setdefault("NO_MKDOCS_2_WARNING", "1")
    # The hook imports bench.report.render.paths, so MkDocs's process must find this same package,
    # not whichever one its working directory or an older install would give it: it runs in
    # the temporary folder (every path in the derived configuration is absolute) with the
    # folder holding bench/ first on its path.
    package_root = str(Path(__file__).resolve().parents[2])  # the folder holding bench/
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory(prefix="torch-knobs-mkdocs-") as tmp:
        derived = Path(tmp) / "mkdocs.yml"
        derived.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        cmd = [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--clean",
            "-f",
            str(derived),
            "-d",
            str(site_dir.resolve()),
        ]
        # Never pass --quiet: it hides warnings, and --strict only fails on warnings it sees.
        returncode, stdout, stderr = _run_mkdocs(cmd, env, Path(tmp), charts)
    if returncode != 0:
        tail = "\n".join((stdout + stderr).strip().splitlines()[-30:])
        raise BuildError(f"mkdocs build --strict failed (exit {returncode}):\n{tail}")
    if not quiet:
        for line in stderr.splitlines():
            if not line.startswith("INFO"):  # warnings cannot occur here: --strict fails on them
                print(line, file=sys.stderr)


def _run_mkdocs(
    cmd: list[str], env: dict[str, str], cwd: Path, charts: drawing.Drawing | None
) -> tuple[int, str, str]:
    """Run MkDocs; with ``charts``, tell it through a pipe once they are drawn ("ok"), or that
    they failed (the pipe closes empty, MkDocs stops, and the chart's error is raised here)."""
    if charts is None:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    ready_r, ready_w = os.pipe()
    try:
        child = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**env, CHARTS_READY_FD: str(ready_r)},
            cwd=cwd,
            pass_fds=(ready_r,),
        )
    finally:
        os.close(ready_r)
    with child:
        try:
            try:
                charts.wait()
                with contextlib.suppress(BrokenPipeError):  # MkDocs stopped before it asked:
                    os.write(ready_w, b"ok")  # its exit status and output say why
            finally:
                os.close(ready_w)
            stdout, stderr = child.communicate()
        except BaseException:
            child.kill()
            raise
    return child.returncode, stdout, stderr


def main(args: argparse.Namespace) -> int:
    """Run the ``report`` sub-command; returns the process exit code."""
    from bench.report.input.prices import PriceError

    try:
        build(
            args.reports,
            args.site_dir,
            docs_dir=getattr(args, "docs_dir", Path("site_src")),
            config=getattr(args, "config", Path("mkdocs.yml")),
            skip_bad=args.skip_bad_rows,
            prices=args.prices,
            run_mkdocs=not getattr(args, "no_mkdocs", False),
            focus=getattr(args, "focus", None),
        )
    except (load.LoadError, PriceError, BuildError, local.FocusError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if not getattr(args, "no_mkdocs", False):
        print(f"site built in {args.site_dir}/ (open {args.site_dir}/index.html)")
    return 0

