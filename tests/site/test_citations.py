"""Citations that last: a Cite line names the figure's machine model, torch and cuDNN versions,
data date and the commit that built the page, and links to its answer under ``site_url``; the
answer's anchor is keyed by question, machine model and the quoted workload (no fingerprint),
and a site rebuilt with one more run keeps every anchor a Cite line linked to, or leads there
through the fallback script (``site_src/assets/cite-anchors.js``).

The runs added here are copies of the committed fixture runs (``tests/fixtures/reports``):
synthetic, marked as fixtures (their machines and run ids start with ``fixture-``)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from conftest import FIXTURE_REPORTS, ROOT, Built, build_copy

from bench import fingerprint as fingerprints
from bench.report.judge import Machine
from bench.report.render.buildinfo import BuildInfo

#: Where the project publishes the site (``site_url`` in ``mkdocs.yml``).
SITE_URL = "https://torch-knobs.github.io/torch-knobs/"
TOPICS = ("cudnn-benchmark", "cpu-vs-gpu", "dynamic-shapes", "determinism", "precision",
          "torch-compile", "feeding")
#: An answer block and its Cite line's link, in the built HTML.
_BLOCK = re.compile(r'<div class="tk-answer" id="([^"]+)">(.*?)\n</div>', re.S)
_CITE = re.compile(r'<span class="tk-cite"><strong>Cite:</strong> <a href="([^"]+)">(.*?)</a>'
                   r" · (.*?)</span>", re.S)
_IDS = re.compile(r'<div class="(?:tk-answer|tk-alias)" id="([^"]+)"')
#: The fixture GPU box's answers: its model ("NVIDIA H200 (fixture, not a real measurement)").
GPU = "answer-nvidia-h200-fixture-not-a-real-m"
GPU_RUN = FIXTURE_REPORTS / "fixture-gpu-box" / "fixture-20261129T120000Z-gpu"


def _cites(site: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Per topic page: each answer's (id, Cite link, Cite sentence as text)."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for name in TOPICS:
        page = (site / "generated" / f"{name}.html").read_text(encoding="utf-8")
        for anchor, body in _BLOCK.findall(page):
            found = _CITE.search(body)
            if found:
                said = html.unescape(re.sub(r"<[^>]+>", "", found.group(3))).strip("“”")
                out.setdefault(name, []).append((anchor, html.unescape(found.group(1)), said))
    return out


def _answer_ids(site: Path, name: str) -> list[str]:
    return _IDS.findall((site / "generated" / f"{name}.html").read_text(encoding="utf-8"))


def resolve(fragment: str, ids: list[str]) -> str:
    """What ``cite-anchors.js`` does with a fragment that names no element: the longest
    answer id that is its prefix, cut at ``--``, else at ``-`` (empty: none)."""
    for mark in ("--", "-"):
        found = [i for i in ids if fragment.startswith(i + mark)]
        if found:
            return max(found, key=len)
    return ""


def _machine(**kw: object) -> Machine:
    base = {"page": "box-1234abcd", "machine": "box", "fingerprint_id": "1234abcd5678",
            "title": "box 1234abcd", "hardware": "NVIDIA H200", "torch": "2.11.0",
            "cudnn": "91900", "first_day": "2026-12-01", "last_day": "2026-12-04", "gpu": True}
    return Machine(**{**base, **kw})  # type: ignore[arg-type]


# --- (a) what a Cite line says -------------------------------------------------------------


def test_site_url_is_read_from_the_mkdocs_configuration(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    from bench.report.render.buildinfo import site_url

    monkeypatch.delenv("TORCH_KNOBS_SITE_URL", raising=False)
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config.get("site_url") == SITE_URL
    assert site_url() == SITE_URL
    other = tmp_path / "mkdocs.yml"
    other.write_text("site_name: x\nsite_url: https://example.org/docs\n", encoding="utf-8")
    assert site_url(other) == "https://example.org/docs/"
    assert site_url(tmp_path / "missing.yml") == ""
    monkeypatch.setenv("TORCH_KNOBS_SITE_URL", "https://mirror.example/tk/")
    assert site_url(other) == "https://mirror.example/tk/"


def test_the_cite_sentence_names_model_versions_date_and_commit() -> None:
    from bench.report.render.words.answers import built_words, cite_sentence, cite_url

    m = _machine()
    said = cite_sentence("cudnn.benchmark gave 0.99×", m, "no clear difference", m.days)
    assert said == ("cudnn.benchmark gave 0.99× on box (NVIDIA H200, torch 2.11.0, cuDNN "
                    "9.19.0), no clear difference; torch-knobs, data of 2026-12-01 to 2026-12-04")
    # a CUDA build of torch reports a cuDNN on a machine with no GPU, where it ran nothing
    cpu = _machine(hardware="AMD EPYC 9654", gpu=False)
    assert "(AMD EPYC 9654, torch 2.11.0)" in cite_sentence("x", cpu, "faster", cpu.days)
    assert built_words(BuildInfo("abc1234", False, "2026-12-05")) == "built from commit abc1234"
    assert built_words(BuildInfo("abc1234", True, "2026-12-05")) == \
        "built from commit abc1234 with uncommitted changes"
    assert built_words(BuildInfo("", False, "2026-12-05")) == "built outside version control"
    build = BuildInfo("abc1234", False, "2026-12-05", SITE_URL)  # type: ignore[call-arg]
    assert cite_url(build, "generated/cudnn-benchmark.md", "answer-nvidia-h200") == \
        f"{SITE_URL}generated/cudnn-benchmark.html#answer-nvidia-h200"


def test_every_cite_line_carries_model_versions_date_commit_and_its_address(
        fixture_site: Built) -> None:
    cites = _cites(fixture_site.site)
    assert {"cudnn-benchmark", "cpu-vs-gpu", "determinism", "precision"} <= set(cites)
    for name, found in cites.items():
        for anchor, link, said in found:
            assert link == f"{SITE_URL}generated/{name}.html#{anchor}", (name, link)
            assert (fixture_site.site / urlsplit(link).path.removeprefix(
                urlsplit(SITE_URL).path)).is_file()
            assert re.search(r"torch-knobs, data of 2026-\d\d-\d\d", said), said
            assert said.endswith(", built from commit fixture."), said
            assert "torch 2.14.1" in said, said
    gpu = next(s for a, _, s in cites["cudnn-benchmark"] if "fixture-gpu-box" in s)
    assert "(NVIDIA H200 (fixture, not a real measurement), torch 2.14.1, cuDNN 9.10.0)" in gpu
    laptop = [s for found in cites.values() for _, _, s in found if "fixture-cpu-laptop" in s]
    assert laptop and not any("cuDNN" in s for s in laptop)


_ANY_CITE = re.compile(r'<span class="tk-cite"><strong>Cite:</strong> <a href="([^"]+)">'
                       r"permalink</a> · (.*?)</span>", re.S)


@pytest.mark.parametrize("name", ["compare", "claims"])
def test_compare_and_claims_cite_lines_say_as_much(fixture_site: Built, name: str) -> None:
    """Their own Cite lines (not answer blocks) carry the same parts: the machines' models and
    versions, the data's date, the commit, an address under site_url."""
    text = (fixture_site.site / "generated" / f"{name}.html").read_text(encoding="utf-8")
    found = _ANY_CITE.findall(text)
    assert found, name
    for link, body in found:
        said = html.unescape(re.sub(r"<[^>]+>", "", body)).strip("“”")
        assert link.startswith(f"{SITE_URL}generated/{name}.html#"), link
        assert said.endswith(", built from commit fixture."), said
        if "not measured" not in said:  # a finding's machines, with their versions and dates
            assert "torch 2.14.1" in said and "data of 2026-" in said, said


# --- (b) how an answer is anchored -----------------------------------------------------------


def test_anchors_name_question_model_and_workload_and_no_fingerprint(fixture_site: Built
                                                                      ) -> None:
    fingerprints_ = [p.parent.name for p in FIXTURE_REPORTS.glob("*/*/env.json")]
    ids = [json.loads(p.read_text())["fingerprint_id"][:8]
           for p in FIXTURE_REPORTS.glob("*/*/env.json")]
    assert fingerprints_ and ids
    cites = _cites(fixture_site.site)
    for name, found in cites.items():
        for anchor, _, _ in found:
            assert not any(fp in anchor for fp in ids), (name, anchor)
            question = {"precision": r"answer-(?:precision|layout)"}.get(name, "answer")
            assert re.fullmatch(rf"{question}-[a-z0-9-]+--[a-z0-9-]+", anchor), anchor
    quoted = [a for a, _, s in cites["cudnn-benchmark"] if "fixture-gpu-box" in s]
    assert quoted == [f"{GPU}--resnet50-infer-b128-fp32-nchw"]
    ids_here = _answer_ids(fixture_site.site, "cudnn-benchmark")
    # its machine's anchor without the workload, and the old fingerprint-keyed id, as aliases
    assert {GPU, "answer-fixture-gpu-box-abd10753"} <= set(ids_here)
    assert len(ids_here) == len(set(ids_here))


def test_machines_of_one_model_are_told_apart_by_name_then_torch() -> None:
    """The first measured keeps the bare model; another machine adds its name; another
    fingerprint of a machine already named adds its torch version instead."""
    from bench.report.render.words.answers import machine_keys

    first = _machine(page="gpu01-aaaa1111", machine="gpu01", first_day="2026-12-01")
    other = _machine(page="gpu02-bbbb2222", machine="gpu02", first_day="2026-12-03")
    again = _machine(page="gpu02-cccc3333", machine="gpu02", first_day="2026-12-05",
                     torch="2.12.0")
    cpu = _machine(page="laptop-dddd4444", machine="laptop", hardware="AMD Ryzen 7 7840U")
    keys = machine_keys([again, cpu, other, first])
    assert keys == {"gpu01-aaaa1111": "nvidia-h200", "gpu02-bbbb2222": "nvidia-h200-gpu02",
                    "gpu02-cccc3333": "nvidia-h200-torch-2-12-0",
                    "laptop-dddd4444": "amd-ryzen-7-7840u"}
    # the machine measured first keeps the bare model, whatever comes after it
    assert machine_keys([first])["gpu01-aaaa1111"] == keys["gpu01-aaaa1111"]
    hostile = machine_keys([_machine(hardware="<script>--x</script> ☃", machine="--")])
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", hostile["box-1234abcd"])


def test_a_workload_key_names_model_mode_batch_precision_and_layout() -> None:
    from bench.report.render.words.answers import workload_key

    class Pair:
        model, mode, batch_size, precision, memory_format = \
            "vit_b_16", "train", 128.0, "amp-bf16", "channels_last"

    assert workload_key(Pair()) == "vit-b-16-train-b128-amp-bf16-channels-last"


# --- (c) a rebuild with one more run keeps the cited anchors ---------------------------------


def _one_more_run(reports: Path, machine: str, day: str) -> Path:
    """``reports``: the fixture runs and a copy of the GPU box's run, measured on ``day`` by
    another machine of the same model (its own fingerprint)."""
    shutil.copytree(FIXTURE_REPORTS, reports)
    old_run = GPU_RUN.name
    new_run = old_run.replace("20261129", day.replace("-", ""))
    dest = reports / machine / new_run
    dest.mkdir(parents=True)
    env = json.loads((GPU_RUN / "env.json").read_text(encoding="utf-8"))
    old_fp = env["fingerprint_id"]
    env.update(machine=machine, run_id=new_run,
               collected_at=env["collected_at"].replace("2026-11-29", day))
    env["fingerprint_id"] = fingerprints.fingerprint_id(
        env, fingerprints.definition_of(env) or fingerprints.DEFINITION)
    (dest / "env.json").write_text(json.dumps(env, indent=1), encoding="utf-8")
    for csv in ("results.csv", "samples.csv"):
        text = (GPU_RUN / csv).read_text(encoding="utf-8")
        text = text.replace(old_run, new_run).replace(old_fp, env["fingerprint_id"])
        text = text.replace("2026-11-29", day).replace(",fixture-gpu-box,", f",{machine},")
        (dest / csv).write_text(text, encoding="utf-8")
    return reports


def test_a_rebuild_with_one_more_run_keeps_every_cited_anchor(fixture_site: Built,
                                                              tmp_path: Path) -> None:
    before = _cites(fixture_site.site)
    reports = _one_more_run(tmp_path / "reports", "fixture-gpu-box-2", "2026-12-03")
    after = build_copy(tmp_path / "project", reports)
    again = _cites(after.site)
    assert any("fixture-gpu-box-2" in s for found in again.values() for _, _, s in found), \
        "the added run answers nothing: the test would prove nothing"
    for name, found in before.items():
        ids = _answer_ids(after.site, name)
        for anchor, _, said in found:
            if anchor in ids:
                continue
            to = resolve(anchor, ids)  # moved: the fallback still leads to its machine
            machine = anchor.split("--")[0]
            assert to and machine.startswith(to), (name, anchor, to, said)
    # the machine measured first keeps its anchors; the newer one is told apart by its name
    ids = _answer_ids(after.site, "cudnn-benchmark")
    assert GPU in ids
    assert f"{GPU}-fixture-gpu-box-2" in ids, ids


def test_the_fallback_leads_a_moved_anchor_to_its_machine() -> None:
    ids = ["answer-nvidia-h200--resnet50-train-b128-fp32-nchw", "answer-nvidia-h200",
           "answer-nvidia-h200-nvl", "answer-nvidia-h200-19963df1"]
    assert resolve("answer-nvidia-h200--resnet50-train-b256-fp32-nchw", ids) == \
        "answer-nvidia-h200"
    assert resolve("answer-nvidia-h200-nvl--vit-b-16-infer-b8", ids) == "answer-nvidia-h200-nvl"
    assert resolve("answer-nvidia-h200-gpu02--resnet50", ids) == "answer-nvidia-h200"
    assert resolve("answer-amd-epyc--resnet50", ids) == ""
    script = (ROOT / "site_src" / "assets" / "cite-anchors.js").read_text(encoding="utf-8")
    assert '["--", "-"]' in script and ".tk-alias[id]" in script
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert "assets/cite-anchors.js" in config["extra_javascript"]


# --- (d) the fallback script, in a browser ---------------------------------------------------


@pytest.mark.browser
def test_the_browser_follows_a_moved_anchor_to_its_machines_answer(fixture_site: Built) -> None:
    from test_browser import CHROMIUM, LAUNCH_ARGS, _require_browser, serve

    sync_api = _require_browser()
    page_path = "generated/cudnn-benchmark.html"
    moved = f"{GPU}--resnet50-train-b256-fp32-nchw"
    with serve(fixture_site.site) as base, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{base}{page_path}#{moved}", wait_until="load")
            page.wait_for_function("location.hash !== '#" + moved + "'", timeout=5000)
            assert page.evaluate("location.hash") == f"#{GPU}"
            top = page.evaluate(f"document.getElementById('{GPU}').getBoundingClientRect().top")
            assert 0 <= top < 900
            # a fragment that names an element, or no answer at all, is left as it is
            page.goto(f"{base}{page_path}#answer-fixture-gpu-box-abd10753", wait_until="load")
            assert page.evaluate("location.hash") == "#answer-fixture-gpu-box-abd10753"
            page.goto(f"{base}{page_path}#nothing-here", wait_until="load")
            assert page.evaluate("location.hash") == "#nothing-here"
        finally:
            browser.close()
