"""The whole build from the committed fixtures: strict MkDocs, sound HTML, honest empty pages."""

from __future__ import annotations

import argparse
import csv
import html as html_lib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURE_REPORTS, ROOT, Built, build_copy, project_copy
from htmlcheck import check_site, parse

from bench.commands.report import ReportCommand
from bench.report import build
from bench.report.input import load
from bench.report.render.escape import md

#: The fixture machines' hardware models' pages (fixtures: made-up hardware).
GPU_MODEL = "nvidia-h200-fixture-not-a-real-measurement"
CPU_MODEL = "fixture-laptop-cpu-4-core-8-vcpu"


def test_strict_build_produces_every_page(fixture_site: Built) -> None:
    site = fixture_site.site
    for page in (
        "index.html",
        "methodology.html",
        "prices.html",
        "generated/cudnn-benchmark.html",
        "generated/dynamic-shapes.html",
        "generated/determinism.html",
        "generated/precision.html",
        "generated/cpu-vs-gpu.html",
        "generated/compare.html",
        "generated/data.html",
        "generated/machines/index.html",
    ):
        assert (site / page).is_file(), page
    machines = sorted(p.name for p in (site / "generated" / "machines").glob("fixture-*.html"))
    # a page per hardware model, at its name; every old per-fingerprint address redirects to
    # its section, and every old per-machine address to its model's page
    assert machines == [
        "fixture-cpu-laptop-4325880e.html",
        "fixture-cpu-laptop-81b41973.html",
        "fixture-cpu-laptop.html",
        "fixture-gpu-box-abd10753.html",
        "fixture-gpu-box.html",
        f"{CPU_MODEL}.html",
    ]
    assert (site / "generated" / "machines" / f"{GPU_MODEL}.html").is_file()
    old = (site / "generated" / "machines" / "fixture-gpu-box-abd10753.html").read_text()
    assert f'content="0; url={GPU_MODEL}.html#fp-abd10753"' in old
    assert "'#$1-abd10753-'" in old  # old row anchors rewritten to the machine page's
    named = (site / "generated" / "machines" / "fixture-gpu-box.html").read_text()
    assert f'content="0; url={GPU_MODEL}.html#fp-abd10753"' in named
    assert "location.hash" in named and "'#$1-" not in named  # its anchors are kept


def test_every_image_link_and_anchor_resolves_and_nothing_loads_from_the_network(
    fixture_site: Built,
) -> None:
    assert check_site(fixture_site.site) == []


def test_html_checker_catches_a_broken_anchor(fixture_site: Built, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(fixture_site.site, site)
    page = site / "generated" / "cudnn-benchmark.html"
    page.write_text(page.read_text().replace("#cell-", "#cell-x", 1))
    assert any("no id" in p for p in check_site(site))


def test_charts_are_on_the_pages_with_alt_text(fixture_site: Built) -> None:
    info = parse(fixture_site.site / "generated" / "cudnn-benchmark.html")
    svgs = [src for src in info.images if src.endswith(".svg")]
    # the one GPU machine: speedup, break-even (some configurations are faster), first pass
    # and memory
    assert len(svgs) == 4
    html = (fixture_site.site / "generated" / "cudnn-benchmark.html").read_text()
    assert 'alt="Steady-state speedup from cudnn.benchmark on fixture-gpu-box' in html


def test_every_failure_is_listed_on_its_machine_page(fixture_site: Built) -> None:
    ds = load.load_reports(FIXTURE_REPORTS)
    failed = ds.results.loc[ds.results["status"] != "ok"]
    assert set(failed["status"]) >= {"oom", "timeout", "crash", "error", "skipped"}
    html = (fixture_site.site / "generated" / "machines" / f"{GPU_MODEL}.html").read_text()
    failures = html.split('id="failures-abd10753"', 1)[1].split("</table>", 1)[0]
    gpu = failed.loc[failed["machine"] == "fixture-gpu-box"]
    assert failures.count("<tr>") == len(gpu) + 1  # plus the header row
    for status in set(gpu["status"]):
        assert f"<td>{status}</td>" in failures
    assert "torch-knobs:fragment" not in html  # every placeholder was spliced


#: A missing value or a count as Python or pandas would print it, a hedged plural (run(s)),
#: or one of a count read as many ("1 more are", "of 1 checks"), never as a reader reads it
#: (None only as a whole table cell: the prose may speak of Python's None).
_MACHINE_SPELLING = re.compile(
    r"\b(nan|NaN|inf|NaT)\b|<NA>|\b\d+\.0 (of \d|clocks throttled|drifting)|\w\(s\)"
    r"|(?<![\d.,])1 more are\b|\bof 1 (check|configuration|run|replicate|worker|finding)s\b"
    r"|(?<![\d.,])1 workers\b")
_NONE_CELL = re.compile(r"<td[^>]*>\s*None\s*</td>")


def test_no_page_shows_a_missing_value_a_float_count_or_a_hedged_plural(
        fixture_site: Built) -> None:
    # the fixture has input-pipeline cells (no throttling recorded) beside a throttled GPU
    # cell; code spans may name Python's None (weights=None)
    shown = []
    for page in sorted(fixture_site.site.rglob("*.html")):
        raw = page.read_text(encoding="utf-8")
        text = html_lib.unescape(re.sub(r"<(script|code)\b.*?</\1>|<[^>]+>", " ", raw,
                                        flags=re.S))
        found = [*_MACHINE_SPELLING.finditer(text), *_NONE_CELL.finditer(raw)]
        shown += [f"{page.name}: {m.group(0)}" for m in found]
    assert not shown, shown[:10]


def test_every_cell_has_a_stable_row_anchor(fixture_site: Built) -> None:
    ds = load.load_reports(FIXTURE_REPORTS)
    ids = set()
    for page in (fixture_site.site / "generated" / "machines").glob("*.html"):
        ids |= {i for i in parse(page).ids if i.startswith("cell-")}
    timed = ds.results.loc[ds.results["kind"] != "repro"]
    assert {f"cell-{f[:8]}-{c}" for f, c in zip(timed["fingerprint_id"], timed["cell_id"])} <= ids


def test_machine_pages_are_in_the_navigation(fixture_site: Built) -> None:
    html = (fixture_site.site / "index.html").read_text()
    assert f"generated/machines/{GPU_MODEL}.html" in html


def test_numbers_come_from_the_data(fixture_site: Built, tmp_path: Path) -> None:
    """A different dataset gives a different page: nothing numeric is baked into templates."""
    gpu_only = tmp_path / "reports"
    shutil.copytree(FIXTURE_REPORTS / "fixture-gpu-box", gpu_only / "fixture-gpu-box")
    results = next(gpu_only.rglob("results.csv"))
    lines = results.read_text().splitlines(keepends=True)
    results.write_text("".join(lines[:60]))  # a shorter run: fewer cells, other verdicts
    kept = {row["attempt_id"] for row in csv.DictReader(lines[:60])}
    samples = results.with_name("samples.csv")
    sample_lines = samples.read_text().splitlines(keepends=True)
    samples.write_text(sample_lines[0] + "".join(  # and only the samples of the rows kept
        line for line, row in zip(sample_lines[1:], csv.DictReader(sample_lines))
        if row["attempt_id"] in kept))
    other = build_copy(tmp_path / "project", gpu_only, run_mkdocs=False)
    a = (fixture_site.generated / "cudnn-benchmark.md").read_text()
    b = (other.generated / "cudnn-benchmark.md").read_text()
    assert a != b


def test_cpu_only_results_say_so_plainly(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    shutil.copytree(FIXTURE_REPORTS / "fixture-cpu-laptop", reports / "fixture-cpu-laptop")
    built = build_copy(tmp_path / "project", reports)
    determinism = (built.generated / "determinism.md").read_text()
    assert "No run measured `cudnn.deterministic` off and on" in determinism
    cudnn = (built.generated / "cudnn-benchmark.md").read_text()
    assert "not enough data yet" in cudnn
    assert check_site(built.site) == []


def test_empty_reports_build_a_site_that_says_there_is_nothing(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    built = build_copy(tmp_path / "project", tmp_path / "reports")
    cudnn = (built.generated / "cudnn-benchmark.md").read_text()
    assert "No run measured the same GPU configuration with `cudnn.benchmark` off and on" in cudnn
    home = (built.docs / "generated" / "snippets" / "home.md").read_text()
    assert "No comparison yet" in home and "Each headline" not in home  # there is none
    assert check_site(built.site) == []


def test_generated_folder_is_rebuilt_from_scratch(tmp_path: Path) -> None:
    root = project_copy(tmp_path / "project")
    stale = root / "site_src" / "generated" / "machines" / "gone.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("# stale page from an old build\n")
    (tmp_path / "empty").mkdir()  # whatever the results: what an old build left goes
    build.build(
        tmp_path / "empty",
        root / "site",
        docs_dir=root / "site_src",
        config=root / "mkdocs.yml",
        run_mkdocs=False,
    )
    assert not stale.exists()


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    root = project_copy(tmp_path / "project")
    page = root / "site_src" / "methodology.md"
    page.write_text(page.read_text() + "\n[broken](generated/nosuch.md)\n")
    (tmp_path / "empty").mkdir()  # a hand-written page's link: no results needed
    with pytest.raises(build.BuildError, match="nosuch"):
        build.build(
            tmp_path / "empty",
            root / "site",
            docs_dir=root / "site_src",
            config=root / "mkdocs.yml",
            quiet=True,
        )


def test_cli_reports_a_bad_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    shutil.copytree(FIXTURE_REPORTS / "fixture-cpu-laptop", reports / "fixture-cpu-laptop")
    bad = next(reports.rglob("results.csv"))
    bad.write_text(bad.read_text().rstrip("\n")[:-5])  # a truncated last line
    root = project_copy(tmp_path / "project")
    parser = argparse.ArgumentParser()
    ReportCommand.add_arguments(parser)
    args = parser.parse_args(
        [
            "--reports",
            str(reports),
            "--site-dir",
            str(root / "site"),
            "--docs-dir",
            str(root / "site_src"),
            "--config",
            str(root / "mkdocs.yml"),
        ]
    )
    assert build.main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "results.csv:" in err and "truncated" in err
    args.skip_bad_rows = True
    assert build.main(args) == 0
    assert (root / "site" / "index.html").is_file()


def test_cli_reports_a_bad_prices_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('[machines."x"]\nprice = 3\n')
    root = project_copy(tmp_path / "project")
    parser = argparse.ArgumentParser()
    ReportCommand.add_arguments(parser)
    args = parser.parse_args(
        [
            "--reports",
            str(FIXTURE_REPORTS),
            "--site-dir",
            str(root / "site"),
            "--docs-dir",
            str(root / "site_src"),
            "--config",
            str(root / "mkdocs.yml"),
            "--prices",
            str(prices),
            "--no-mkdocs",
        ]
    )
    assert build.main(args) == 1
    assert "price" in capsys.readouterr().err


def test_prices_give_images_per_dollar(tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text(
        'electricity_usd_per_kwh = 0.15\n'
        '[machines."fixture-gpu-box"]\nprice_usd = 35000\nusd_per_hour = 4.0\n'
        'note = "<b>made up</b>"\n'
        '[machines."typo-box"]\nusd_per_hour = 1.5\n'
    )
    built = build_copy(tmp_path / "project", FIXTURE_REPORTS, prices=prices, run_mkdocs=False)
    text = (built.generated / "compare.md").read_text()
    assert "images/s per &#36;" in text
    # the cost of a million samples, hardware time and the measured energy each shown
    assert "Cost per million samples" in text and " hardware + &#36;" in text
    assert " energy |" in text and "samples/J (nvml-energy)" in text
    assert "&#60;b&#62;made up" in text  # the note is escaped
    assert "typo-box" in text.split("Prices that match no machine", 1)[1]


def test_home_says_which_questions_cpu_only_results_cannot_answer(
        tmp_path: Path, fixture_site: Built) -> None:
    """Fed only CPU results, the home page names the unmeasured switches; fed GPU results too,
    it does not (the note follows the data)."""
    reports = tmp_path / "reports"
    shutil.copytree(FIXTURE_REPORTS / "fixture-cpu-laptop", reports / "fixture-cpu-laptop")
    cpu_only = build_copy(tmp_path / "cpu-only", reports, run_mkdocs=False)
    home = (cpu_only.generated / "snippets" / "home.md").read_text()
    assert "Not measured in these results" in home
    # this fixture has benchmark and device comparisons (too few replicates), but none for
    # determinism: only the latter is named
    assert "Not measured in these results: cudnn.deterministic (" in home
    full = (fixture_site.generated / "snippets" / "home.md").read_text()
    assert "Not measured in these results" not in full


def test_a_drifting_cell_is_flagged_on_its_machine_page(
        tmp_path: Path, fixture_site: Built) -> None:
    """Slow the later steady iterations of one replicate tenfold (a test-made fixture): the
    machine page lists that cell under "Steady-state drift"; the untouched fixtures list none."""
    import csv

    reports = tmp_path / "reports"
    shutil.copytree(FIXTURE_REPORTS / "fixture-cpu-laptop", reports / "fixture-cpu-laptop")
    run = sorted((reports / "fixture-cpu-laptop").iterdir())[-1]
    results = list(csv.DictReader((run / "results.csv").open(newline="")))
    target = next(r for r in results
                  if r["status"] == "ok" and r["kind"] == "model" and r["shapes"] == "static")
    with (run / "samples.csv").open(newline="") as f:
        reader = csv.DictReader(f)
        fields, samples = reader.fieldnames, list(reader)
    mine = [s for s in samples if (s["cell_id"], s["replicate"], s["phase"]) == (
        target["cell_id"], target["replicate"], "steady")]
    for s in mine[len(mine) - len(mine) // 2:]:
        s["seconds"] = repr(float(s["seconds"]) * 10)
    with (run / "samples.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields or [])
        writer.writeheader()
        writer.writerows(samples)
    built = build_copy(tmp_path / "project", reports, run_mkdocs=False)
    page = (built.generated / "machines" / f"{CPU_MODEL}.md").read_text()
    assert '??? warning "Steady-state drift' in page
    anchor = f"#cell-{target['fingerprint_id'][:8]}-{target['cell_id']})"
    assert anchor in page.split("Steady-state drift")[1]
    for clean in (fixture_site.generated / "machines").glob("*.md"):
        assert "Steady-state drift" not in clean.read_text()


def test_a_run_that_stopped_early_says_so(tmp_path: Path, fixture_site: Built) -> None:
    """env.json's planned_rows against the rows written: a short run reads "unfinished"."""
    import json

    reports = tmp_path / "reports"
    shutil.copytree(FIXTURE_REPORTS / "fixture-cpu-laptop", reports / "fixture-cpu-laptop")
    run = sorted((reports / "fixture-cpu-laptop").iterdir())[-1]
    n_rows = len((run / "results.csv").read_text().splitlines()) - 1
    env = json.loads((run / "env.json").read_text())
    (run / "env.json").write_text(json.dumps({**env, "planned_rows": n_rows + 5}))
    built = build_copy(tmp_path / "project", reports, run_mkdocs=False)
    page = (built.generated / "machines" / f"{CPU_MODEL}.md").read_text()
    assert f"of {n_rows + 5} planned rows (unfinished)" in page
    untouched = fixture_site.generated / "machines" / f"{CPU_MODEL}.md"
    assert "(unfinished)" not in untouched.read_text()
    assert "the plan was not recorded" in untouched.read_text()


def test_links_tell_apart_one_machines_fingerprints(tmp_path: Path, fixture_site: Built) -> None:
    """A machine measured under two fingerprints is linked as name + fingerprint wherever it
    appears; a machine with one fingerprint keeps its plain name; each says its trust."""
    home = (fixture_site.generated / "snippets" / "home.md").read_text()
    page = f"generated/machines/{CPU_MODEL}.md#fp-81b41973"
    assert f"[fixture-cpu-laptop 81b41973 (reference)]({page})" in home
    assert "[fixture-cpu-laptop (reference)](" not in home
    assert (f"[fixture-gpu-box (reference)](generated/machines/{GPU_MODEL}.md#fp-abd10753)"
            in home)
    index = (fixture_site.generated / "machines" / "index.md").read_text()
    assert "81b41973 (reference, torch 2.14.1, step 1)" in index

    reports = tmp_path / "reports"
    run = "fixture-20261128T180000Z-cpu"
    shutil.copytree(FIXTURE_REPORTS / "fixture-cpu-laptop" / run,
                    reports / "fixture-cpu-laptop" / run)
    alone = build_copy(tmp_path / "alone", reports, run_mkdocs=False)
    home = (alone.generated / "snippets" / "home.md").read_text()
    assert f"[fixture-cpu-laptop (reference)]({page})" in home


def test_compare_table_is_capped_to_the_most_compared_workloads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the cap, the throughput table keeps the workloads most machines measured and
    links a CSV holding every machine's best throughput for every workload."""
    import csv

    from bench.report.questions.compare import model as machines

    monkeypatch.setattr(machines, "SHOWN_WORKLOADS", 2)
    built = build_copy(tmp_path / "capped", FIXTURE_REPORTS, run_mkdocs=False)
    page = (built.generated / "compare.md").read_text()
    throughput = page.split("## Throughput", 1)[1].split("## Images", 1)[0]
    body = [line for line in throughput.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(body) == 1 + 2  # header and two workloads
    # both shown workloads were measured under both laptop fingerprints (no dash on either)
    assert all(line.count(f"{CPU_MODEL}.md#cell-") == 2 for line in body[1:])
    assert "[best-throughput.csv](data/comparisons/best-throughput.csv)" in page
    with open(built.generated / "data" / "comparisons" / "best-throughput.csv") as f:
        rows = list(csv.DictReader(f))
    from bench.report.analysis.machines import COMPILED_WORKLOAD_KEY

    workloads = {tuple(r[k] for k in COMPILED_WORKLOAD_KEY) for r in rows}  # eager, compiled apart
    assert f"The table shows the 2 workloads measured on the most machines, of {len(workloads)}" \
        in page
    assert {r["machine"] for r in rows} == {"fixture-cpu-laptop", "fixture-gpu-box"}


def test_home_answers_from_the_newest_step_definition_only(tmp_path: Path,
                                                          fixture_site: Built) -> None:
    """A machine measured again under a newer step definition: the home page's decisions and
    headlines leave out the older fingerprint and name it instead; its page stays."""
    import json

    from bench.fingerprint import fingerprint_id

    old_page = f"generated/machines/{CPU_MODEL}.md#fp-81b41973"
    home = (fixture_site.generated / "snippets" / "home.md").read_text()
    assert "Older step definitions" not in home
    assert home.count(old_page) > 3  # decisions and headlines from it

    reports = tmp_path / "reports"
    shutil.copytree(FIXTURE_REPORTS, reports)
    # the other laptop fingerprint becomes the newer step definition
    newer = reports / "fixture-cpu-laptop" / "fixture-20261020T090000Z-cpu" / "env.json"
    env = json.loads(newer.read_text())
    env["bench"] = {"version": "0.1.0", "workload_version": 2}
    # a file that records its step has its fingerprint recomputed by the loader: give it the
    # id its facts now make, in its rows too, as a run under that step would have written
    old_id, env["fingerprint_id"] = env["fingerprint_id"], fingerprint_id(env)
    newer.write_text(json.dumps(env))
    for name in ("results.csv", "samples.csv"):
        data = newer.with_name(name)
        data.write_text(data.read_text().replace(old_id, env["fingerprint_id"]))
    built = build_copy(tmp_path / "site", reports, run_mkdocs=False)
    home = (built.generated / "snippets" / "home.md").read_text()
    note = home.split("Fingerprints measured again under a newer step definition", 1)[1]
    note = note.split("\n\n", 1)[0]
    assert f"[fixture-cpu-laptop 81b41973 (reference)]({old_page}) (step 1; now 2)" in note
    assert old_page not in home.replace(note, "")
    assert f"{GPU_MODEL}.md#fp-abd10753" in home.replace(note, "")
    machine_page = (built.generated / "machines" / f"{CPU_MODEL}.md").read_text()
    superseded = machine_page.split("## Fingerprint 81b41973")[1].split("`", 1)[0]
    assert '!!! note "Superseded"' in superseded
    # what changed since is said where the older rows are cited
    assert "Since definition 1, a training step runs at learning rate 0" in \
        " ".join(superseded.split())
    assert "81b41973 (reference, torch 2.14.1, step 1, superseded)" in (
        built.generated / "machines" / "index.md").read_text()
    # the compare page (linked in purchase discussions) compares the newest step only
    before = (fixture_site.generated / "compare.md").read_text()
    compare = (built.generated / "compare.md").read_text()
    side = '??? note "The machines side by side"'
    assert f"{CPU_MODEL}.md#fp-81b41973" in before.split(side, 1)[1]
    head, body = compare.split(side, 1)
    assert f"(machines/{CPU_MODEL}.md#fp-81b41973) (step 1; now 2)" in head
    assert f"{CPU_MODEL}.md#fp-81b41973" not in body
    assert f"{GPU_MODEL}.md#fp-abd10753" in body

    def advised(site: Built) -> list[str]:  # precision recommendations naming the old page
        text = (site.generated / "precision.md").read_text()
        return [line for line in text.splitlines()
                if line.strip().startswith("- ")
                and f"{CPU_MODEL}.md#fp-81b41973" in line]

    assert advised(fixture_site) and not advised(built)


def test_the_data_page_lists_every_column_from_the_schema(fixture_site: Built) -> None:
    """The Data page's column tables are the schema's spec, so a reader sees what is checked."""
    from bench import schema

    page = (fixture_site.generated / "data.md").read_text()
    results, samples = page.split("### results.csv", 1)[1].split("### samples.csv", 1)
    for spec, text in ((schema.RESULT_SPEC, results), (schema.SAMPLE_SPEC, samples)):
        rows = [line for line in text.splitlines() if line.startswith("| `")]
        assert [row.split("`", 2)[1] for row in rows] == [c.name for c in spec]
        for column, row in zip(spec, rows):
            cells = [cell.strip() for cell in row.strip("|").split(" | ")]
            assert cells[1] == {"str": "text", "int": "integer", "float": "number"}[column.type]
            assert cells[2] == (", ".join(f"`{v}`" for v in column.choices) or "—")
            assert cells[3] == ("yes" if column.required else "no")
            assert cells[4] == md(column.doc)
    html = (fixture_site.site / "generated" / "data.html").read_text()
    assert '<h2 id="columns">' in html and "<code>cudnn_benchmark_limit</code>" in html


@pytest.mark.parametrize("what", ["missing", "file"])
def test_a_reports_path_that_is_not_a_folder_is_one_line(tmp_path: Path, what: str) -> None:
    """A mistyped ``--reports`` used to build a site with nothing in it, and exit 0."""
    root = project_copy(tmp_path / "project")
    reports = tmp_path / "reprots"
    if what == "file":
        reports.write_text("not a folder\n")
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "report", "--reports", str(reports)],
        capture_output=True, text=True, cwd=root, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {reports}: "), proc.stderr
    assert ("not found" if what == "missing" else "is not a folder") in lines[0]
    assert not (root / "site").exists() and not (root / "site_src" / "generated").exists()


def test_every_chart_in_the_site_is_drawn_and_copied_whole(fixture_site: Built) -> None:
    """Charts are drawn while MkDocs builds the pages and copied into the site last."""
    drawn = sorted((fixture_site.generated / "charts").glob("*.svg"))
    assert drawn
    for chart in drawn:
        copied = fixture_site.site / "generated" / "charts" / chart.name
        assert chart.stat().st_size > 0, chart.name
        assert copied.read_bytes() == chart.read_bytes(), chart.name


def _broken_chart(*args: object, **kwargs: object) -> Path:
    raise RuntimeError("chart exploded")


def test_a_chart_that_fails_stops_the_build_with_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench.report.render import charts

    monkeypatch.setattr(charts, "speedup_chart", _broken_chart)
    with pytest.raises(RuntimeError, match="chart exploded"):
        build_copy(tmp_path, FIXTURE_REPORTS)
    left = [p for p in Path("/proc").glob("[0-9]*/cmdline") if str(tmp_path) in _read(p)]
    assert left == []  # MkDocs was stopped, not left running


def _read(path: Path) -> str:
    try:
        return path.read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_the_hook_copies_held_charts_only_after_the_report_says_ok(tmp_path: Path) -> None:
    from mkdocs.exceptions import PluginError

    from bench.report.render import mkdocs_hooks

    source, dest = tmp_path / "chart.svg", tmp_path / "site" / "chart.svg"
    source.write_text("<svg/>")
    for said, copied in ((b"", False), (b"ok", True)):
        read, write = os.pipe()
        os.write(write, said)
        os.close(write)
        mkdocs_hooks._held[:] = [(str(source), str(dest))]
        env = {mkdocs_hooks.CHARTS_READY_FD: str(read)}
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(os, "environ", {**os.environ, **env})
            if copied:
                mkdocs_hooks.on_post_build({})
            else:
                with pytest.raises(PluginError, match="charts were not drawn"):
                    mkdocs_hooks.on_post_build({})
        assert dest.exists() is copied
    mkdocs_hooks._held.clear()


def test_mkdocs_failing_before_the_charts_are_drawn_is_a_build_error(tmp_path: Path) -> None:
    root = project_copy(tmp_path)
    config = root / "mkdocs.yml"
    config.write_text(config.read_text().replace("name: material", "name: no-such-theme"))
    with pytest.raises(build.BuildError, match="mkdocs build --strict failed"):
        build.build(FIXTURE_REPORTS, root / "site", docs_dir=root / "site_src", config=config,
                    quiet=True)


def test_an_empty_reports_folder_builds_but_says_so(tmp_path: Path) -> None:
    """An existing folder with no runs in it is a valid, empty site; a note says it is empty,
    so a wrong but existing --reports is not silent."""
    root = project_copy(tmp_path / "project")
    reports = tmp_path / "empty"
    reports.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "report", "--reports", str(reports), "--no-mkdocs"],
        capture_output=True, text=True, cwd=root, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == (f"note: no result rows under {reports} (no "
                                   f"<machine>/<run>/results.csv with rows); the site will "
                                   f"say nothing was measured")


def test_a_compare_citation_names_each_machine_as_its_links_do(fixture_site: Built) -> None:
    """The fixture laptop has two current fingerprints: a pasted citation that names it
    without its fingerprint points at neither (it read "the throughput of
    fixture-cpu-laptop" beside a link to fixture-cpu-laptop 4325880e)."""
    import re

    compare = (fixture_site.generated / "compare.md").read_text()
    answers = re.findall(r'<div class="tk-answer".*?</div>', compare, flags=re.S)
    assert answers
    for block in answers:
        answer, cite = block.split("**Cite:**", 1)
        named = re.findall(r"\[([^\]]+)\]\(machines/[^)]*#fp-", answer)
        # a link says its machine's trust after the name; the citation names the machine
        named = [re.sub(r" \((reference|contributed|reproduced)\)$", "", n) for n in named]
        assert named and all(name in cite for name in named), (named, cite)
    assert ("fixture-cpu-laptop 4325880e (reference) (Fixture Laptop CPU 4-core, torch 2.13.0), "
            "each at its best") in compare


def test_feeding_answers_a_gpu_first_and_says_each_hosts_limit_once(
        fixture_site: Built) -> None:
    """The page asks what a GPU needs, yet led with a CPU-only laptop's answer; and each
    host's best rate was said in its answer and again in its section."""
    import re

    feeding = (fixture_site.generated / "feeding.md").read_text()
    leads = re.findall(r"^\*\*(fixture-[a-z-]+)", feeding, flags=re.M)
    assert leads[:2] == ["fixture-gpu-box", "fixture-cpu-laptop"], leads
    limits = re.findall(r"With its \d+ cores this host delivered [^:]+", feeding)
    assert limits and len(limits) == len(set(limits)), limits
