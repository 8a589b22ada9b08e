"""``python -m bench advise`` for real: a small model defined in a test file, measured on the
CPU with the fork server, and its verdicts set against what ``bench report`` computes from the
same rows."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.run.plan import knobs

from .conftest import ROOT, Cli, read_csv, run_cli

pytestmark = pytest.mark.e2e

MODEL = "tests/advise/model.py:build"
EXAMPLE = ["advise", MODEL, "--device", "cpu", "--mode", "infer", "--batch-size", "4",
           "--input-shape", "3,32,32", "--budget", "60"]


def _report_csv(docs: Path, name: str) -> list[dict[str, str]]:
    with open(docs / "generated" / "data" / "comparisons" / name, newline="",
              encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _equal(ours: Any, theirs: str) -> bool:
    """A JSON number against the report's CSV text: the same float, or both empty."""
    if ours is None:
        return theirs == ""
    return float(theirs) == ours


@pytest.fixture(scope="module")
def advised(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, Any]], Path]:
    out = tmp_path_factory.mktemp("advise") / "machine" / "run"
    proc = run_cli(*EXAMPLE, "--json", "--out", str(out), timeout=240)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), out  # stdout holds the JSON list and nothing else


def test_every_knob_has_a_verdict_or_a_stated_reason(advised: tuple[list[dict[str, Any]], Path]
                                                     ) -> None:
    entries, _ = advised
    assert sorted(e["knob"] for e in entries) == sorted(k.name for k in knobs.KNOBS)
    for e in entries:
        if e["status"] == "measured":
            assert e["verdict"] in ("faster", "slower", "no clear difference")
            assert e["recommendation"] and e["speedup"] > 0 and e["ci_low"] <= e["ci_high"]
            assert e["n_base"] == e["n_var"] == 3 and e["steps"] == 10_000
            assert e["cold_cost_s"] is not None and e["memory_change_bytes"] is not None
            assert e["never_pays_back"] or e["break_even_steps"] is not None
        else:
            assert e["reason"].startswith(("skipped: ", "not in budget", "insufficient: "))
    reasons = {e["knob"]: e["reason"] for e in entries if e["status"] == "skipped"}
    assert {"cudnn.benchmark", "tf32", "cudnn.deterministic"} <= set(reasons)
    assert {e["knob"] for e in entries if e["status"] == "measured"} >= {
        "amp-bf16", "channels_last", "cpu_threads"}


def test_the_rows_name_the_users_model_and_its_source(advised: tuple[list[dict[str, Any]], Path]
                                                      ) -> None:
    entries, out = advised
    rows = read_csv(out / "results.csv")
    digest = hashlib.sha1((ROOT / "tests/advise/model.py").read_bytes()).hexdigest()[:10]
    assert {(r["model"], r["model_source"], r["input_shape"]) for r in rows} == {
        (MODEL, digest, "3,32,32")}
    assert all(r["status"] == "ok" and float(r["flops_per_sample"]) > 0 for r in rows)
    assert len(rows) == 3 * (1 + sum(e["status"] == "measured" for e in entries))
    env = json.loads((out / "env.json").read_text())
    assert env["profile"] == "advise" and env["user_models"][0]["model_source"] == digest
    assert {e["run"] for e in entries} == {str(out)} and {e["model"] for e in entries} == {MODEL}


def test_the_verdicts_are_what_bench_report_computes_from_the_same_rows(
        advised: tuple[list[dict[str, Any]], Path], tmp_path: Path) -> None:
    entries, out = advised
    docs = tmp_path / "docs"
    docs.mkdir()
    proc = run_cli("report", "--reports", str(out.parent.parent), "--docs-dir", str(docs),
                   "--no-mkdocs")
    assert proc.returncode == 0, proc.stderr
    published = {r["variant_value"]: r for name in ("precision.csv", "memory-format.csv")
                 for r in _report_csv(docs, name)}
    decisions = _report_csv(docs, "decisions.csv")
    by_knob = {e["knob"]: e for e in entries if e["status"] == "measured"}
    checked = 0
    for knob, variant in (("amp-bf16", "amp-bf16"), ("amp-fp16", "amp-fp16"),
                          ("channels_last", "channels_last")):
        if knob not in by_knob:
            continue
        ours, theirs = by_knob[knob], published[variant]
        assert (ours["baseline_cell_id"], ours["variant_cell_id"]) == (
            theirs["baseline_cell_id"], theirs["variant_cell_id"])
        assert ours["verdict"] == theirs["verdict"]
        for col in ("speedup", "ci_low", "ci_high"):
            assert _equal(ours[col], theirs[col]), (knob, col)
        (decision,) = [d for d in decisions if d["variant_value"] == variant]
        assert ours["recommendation"] == decision["action_10000"] == decision["action"]
        assert ours["rule"] == decision["rule"]
        checked += 1
    assert checked >= 2
    # the site does not publish CPU threads; the report's own tables still hold the pair
    from bench.report.analysis import analyse
    from bench.report.input.load import load_reports
    from bench.report.judge.advice.rules import switch_rules

    a = analyse(load_reports(out))
    (row,) = a.comparisons["cpu_threads"].itertuples(index=False)
    threads = by_knob["cpu_threads"]
    assert (threads["verdict"], threads["speedup"]) == (row.verdict, row.speedup)
    (rec,) = switch_rules(a.comparisons["cpu_threads"], "cpu_threads")
    assert (threads["recommendation"], threads["rule"]) == (rec.action, rec.rule)
    # the cold cost, the break-even and the memory change: the report's cost table and cells
    from bench.report.analysis.studies import one_off_costs

    rss = a.cells.set_index("cell_id")["peak_rss_bytes"]
    for knob, ours in by_knob.items():
        axis = next(k.axis for k in knobs.KNOBS if k.name == knob)
        pair = a.comparisons[axis]
        pair = pair.loc[pair["variant_cell_id"] == ours["variant_cell_id"]]
        (cost,) = one_off_costs(a.cells, pair).itertuples(index=False)
        assert ours["cold_cost_s"] == pytest.approx(cost.extra_cold_pass_max_s), knob
        if math.isinf(cost.break_even_iters_high):
            assert ours["never_pays_back"] and ours["break_even_steps"] is None, knob
        elif math.isnan(cost.break_even_iters_high):
            assert ours["break_even_steps"] is None, knob
        else:
            assert ours["break_even_steps"] == pytest.approx(cost.break_even_iters_high), knob
        assert ours["memory_change_bytes"] == pytest.approx(
            rss[ours["variant_cell_id"]] - rss[ours["baseline_cell_id"]]), knob


def _readme_example() -> tuple[str, list[str]]:
    """The README's worked example: the code of ``tiny.py`` and the command, as written."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Is it worth it for my model?"):]
    code = re.search(r"save this as `tiny.py`.*?```python\n(.*?)```", section, re.S)
    command = re.search(r"```sh\n(python -m bench advise tiny\.py:build[^\n]*)\n```", section)
    assert code and command
    return code.group(1), shlex.split(command.group(1))


def test_the_readme_example_runs_as_written(tmp_path: Path) -> None:
    """In a folder of its own, with ``tiny.py`` saved there, within the minute it states."""
    code, command = _readme_example()
    assert command[:3] == ["python", "-m", "bench"]
    (tmp_path / "tiny.py").write_text(code, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TORCH_KNOBS_FAULT", None)
    proc = subprocess.run([sys.executable, *command[1:]], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "over the --budget" not in proc.stderr  # 60 s, and it states well under a minute
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("tiny.py:build on cpu, infer, batch 4, static shapes: ")
    table = [line for line in lines[2:-1] if not line.startswith("note on ")]
    assert {line.split()[0] for line in table} == {k.name for k in knobs.KNOBS}
    notes = lines[2 + len(table):-1]  # after the table: what the JSON's caveats say
    assert all(n.startswith("note on ") for n in notes)
    (run,) = (tmp_path / "reports").glob("*/*-advise")
    assert lines[-1].startswith(f"results: reports/{run.parent.name}/{run.name} ")


def test_the_human_verdicts_and_the_dry_run(tmp_path: Path, bench_cli: Cli) -> None:
    out = tmp_path / "dry"
    proc = bench_cli(*EXAMPLE, "--dry-run", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "3 replicates per cell" in proc.stdout and "cudnn.benchmark      skipped: no CUDA" \
        in proc.stdout
    assert not out.exists()
    tight = bench_cli(*EXAMPLE[:-1], "20", "--dry-run", "--json")
    assert tight.returncode == 0, tight.stderr
    plan = json.loads(tight.stdout)
    assert {p["status"] for p in plan} >= {"planned", "not in budget", "skipped"}
    assert next(p["knob"] for p in plan if p["status"] == "planned") == "baseline"


#: The breakages also refused through ``bench run``'s profile path.
RUN_TOO = ("raises", "interrupts")


@pytest.mark.parametrize(("attr", "message"), [
    ("raises", "raises() raised ValueError: this factory is broken on purpose"),
    ("not_a_module", "not_a_module() returned int, not a torch.nn.Module"),
    ("exits", "exits() raised SystemExit: 3"),
    ("fixed_size", "a forward pass on a batch of shape (2, 3, 32, 32) failed"),
    ("too_big", "does not fit in memory on cpu: too_big() raised RuntimeError"),
    ("interrupts", "interrupts() raised KeyboardInterrupt"),
    ("raises_base", "raises_base() raised BaseException: not an Exception"),
])
def test_a_broken_model_is_one_line_and_writes_nothing(tmp_path: Path, attr: str,
                                                       message: str, bench_cli: Cli) -> None:
    """Every kind of breakage through ``bench advise``; through ``bench run`` (the same probe
    check, the same line) for an Exception and for what is not one (``RUN_TOO``)."""
    out = tmp_path / "never"
    args = ["advise", f"tests/advise/model.py:{attr}", *EXAMPLE[2:]]
    proc = bench_cli(*args, "--out", str(out))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines == [f"error: model tests/advise/model.py:{attr}: {lines[0].split(': ', 2)[2]}"]
    assert message in lines[0] and proc.stdout == ""
    assert not out.exists()
    if attr not in RUN_TOO:
        return
    run = bench_cli("run", "--profile", str(_profile(tmp_path, attr)), "--out", str(out))
    assert run.returncode == 2 and message in run.stderr and len(run.stderr.splitlines()) == 1
    assert not out.exists()


def _profile(tmp_path: Path, attr: str) -> Path:
    path = tmp_path / "p.toml"
    path.write_text(f'[studies.s]\nmodel = "tests/advise/model.py:{attr}"\n'
                    'input_shape = "3,32,32"\n')
    return path


def test_a_factory_that_ends_the_probe_is_named_in_one_line(tmp_path: Path, bench_cli: Cli) -> None:
    """``os._exit`` leaves no exception to catch: the probe dies, and the line says while
    checking which model, not "is torch installed?"."""
    out = tmp_path / "never"
    want = ("error: the probe died while checking model tests/advise/model.py:exits_hard: exit "
            "code 1 without a result")
    proc = run_cli("advise", "tests/advise/model.py:exits_hard", *EXAMPLE[2:], "--out", str(out))
    assert (proc.returncode, proc.stderr.strip().splitlines()) == (2, [want])
    run = bench_cli("run", "--profile", str(_profile(tmp_path, "exits_hard")), "--out", str(out))
    assert (run.returncode, run.stderr.strip().splitlines()) == (2, [want])
    assert not out.exists()


def test_an_inputs_or_loss_callable_that_is_not_there_is_named(tmp_path: Path,
                                                               bench_cli: Cli) -> None:
    """On the command line and in a profile: the callable that failed, not the model."""
    out = tmp_path / "never"
    spec = "tests/advise/model.py"
    proc = bench_cli("advise", f"{spec}:mlp", "--device", "cpu", "--inputs", f"{spec}:nosuch",
                   "--out", str(out))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: inputs {spec}:nosuch: {spec} has no nosuch"]
    for what, inputs, loss in (("inputs", "nosuch", "squared_error"),
                               ("loss", "vectors", "nosuch")):
        profile = tmp_path / f"{what}.toml"
        profile.write_text(f'[studies.s]\nmodel = "{spec}:mlp"\nmode = "train"\n'
                           f'inputs = "{spec}:{inputs}"\nloss = "{spec}:{loss}"\n')
        run = bench_cli("run", "--profile", str(profile), "--out", str(out))
        assert run.returncode == 2
        assert run.stderr.strip().splitlines() == [
            f"error: {what} {spec}:nosuch: {spec} has no nosuch"]
    assert not out.exists()


#: ``bench`` on a bare measuring box: pandas and scipy do not import there.
BARE = ("import sys; sys.modules['pandas'] = None; sys.modules['scipy'] = None; "
        "from bench.cli import main; sys.exit(main(sys.argv[1:]))")


def test_without_the_report_extra_it_refuses_before_measuring(tmp_path: Path) -> None:
    out = tmp_path / "never"
    proc = subprocess.run([sys.executable, "-c", BARE, *EXAMPLE, "--out", str(out)],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "pandas, scipy (not installed here)" in line
    assert "pip install 'torch-knobs[report]'" in line
    assert ("add `--write-profile advise.toml` to this command, measure here with "
            "`python -m bench run --profile advise.toml`") in line
    assert not out.exists()


def test_the_plan_needs_no_statistics_and_writes_the_profile_bench_run_measures(
        tmp_path: Path, bench_cli: Cli) -> None:
    """What the refusal above points at, on that bare box: ``--write-profile`` plans (a dry
    run) and writes the study; ``bench run --profile`` then has the very same cells."""
    written = tmp_path / "advise.toml"
    proc = subprocess.run([sys.executable, "-c", BARE, *EXAMPLE, "--dry-run", "--json",
                           "--write-profile", str(written)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    planned = [p["cell_id"] for p in json.loads(proc.stdout) if p["status"] == "planned"]
    assert len(planned) >= 2 and f"wrote {written}" in proc.stderr
    run = subprocess.run([sys.executable, "-c", BARE, "run", "--profile", str(written),
                          "--dry-run"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 0, run.stderr
    cells = [line for line in run.stdout.splitlines()[1:-1]
             if not line.lstrip().startswith("with ~")]  # the sitting's pace probes
    assert [line.split()[1] for line in cells] == planned
    again = bench_cli(*EXAMPLE, "--write-profile", str(written))  # never over a file
    assert again.returncode == 2 and "already exists" in again.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--budget", "0"], "--budget '0': not a positive duration; valid forms: 90s, 9m, 1h"),
    (["--budget", "soon"], "--budget 'soon': not a positive duration"),
    (["--budget", "-1"], "--budget '-1': not a positive duration"),
    (["--budget", "2"], "allow at least"),
    (["--input-shape", "3,32"], "--input-shape '3,32' is not C,H,W"),
    (["--batch-size", "0"], "--batch-size must be a positive integer"),
    (["--device", "tpu"], "argument --device: invalid choice: 'tpu' (choose from 'cpu', 'cuda')"),
    (["--batch-size", "abc"], "argument --batch-size: invalid int value: 'abc'"),
])
def test_bad_options_are_one_line(args: list[str], message: str, bench_cli: Cli) -> None:
    proc = bench_cli(*EXAMPLE, *args)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: ") and message in line


@pytest.mark.parametrize(("args", "message"), [
    (["--inputs", "tests/advise/model.py:vectors", "--input-shape", "3,32,32"],
     "--inputs replaces --input-shape"),
    (["--inputs", "tests/advise/model.py:vectors", "--shapes", "dynamic"],
     "--shapes dynamic cycles image resolutions, so it needs --input-shape, not --inputs; "
     "valid choices with --inputs: static"),
])
def test_options_that_contradict_each_other_are_one_line(tmp_path: Path, args: list[str],
                                                         message: str, bench_cli: Cli) -> None:
    out = tmp_path / "never"
    proc = bench_cli("advise", "tests/advise/model.py:mlp", "--device", "cpu", *args,
                   "--out", str(out))
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: ") and message in line
    assert not out.exists()


def test_every_cycled_shape_is_checked_before_anything_runs(tmp_path: Path, bench_cli: Cli) -> None:
    """A model that takes one input size: 64x64 passes, but --shapes dynamic also feeds it
    smaller resolutions, and that is one line before any row is written."""
    out = tmp_path / "never"
    proc = bench_cli("advise", "tests/advise/model.py:fixed_size", "--device", "cpu", "--mode",
                   "infer", "--batch-size", "4", "--input-shape", "3,64,64", "--shapes",
                   "dynamic", "--budget", "60", "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "fixed_size: a forward pass on a batch of shape (2, 3, 48, 48) failed" in line
    assert not out.exists()


def test_a_folder_that_holds_results_is_refused_without_naming_a_resume(
        advised: tuple[list[dict[str, Any]], Path], bench_cli: Cli) -> None:
    _, out = advised
    before = (out / "results.csv").read_bytes()
    proc = bench_cli(*EXAMPLE, "--out", str(out))
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "already holds results; advise always starts a new run" in line
    assert "--resume" not in line
    assert (out / "results.csv").read_bytes() == before


def test_a_budget_too_small_for_a_verdict_says_what_it_would_take() -> None:
    from bench.commands.advise import Request, plan
    from bench.run.protocol import Probe

    probe = Probe({"cpu": {"affinity": 2}}, ["resnet18"], False)

    def planned(budget: float) -> Any:
        return plan(Request("resnet18", "cpu", "infer", 8, "3,224,224", "", "", "static",
                            10_000, budget), probe, budget)

    roomy = planned(600.0)
    assert roomy.replicates == knobs.REPLICATES and roomy.short == ""
    cheapest = min(s for n, s in roomy.per_replicate_s.items() if n != "baseline")
    need = knobs.REPLICATES * (roomy.per_replicate_s["baseline"] + cheapest)
    tight = planned(need - 0.5)
    assert tight.replicates < knobs.REPLICATES
    assert f"allow at least {math.ceil(need)} s" in tight.short
    assert "every knob will read 'insufficient'" in tight.short


def test_a_break_even_of_never_is_valid_json() -> None:
    from bench.commands.advise import _plain

    entry = _plain({"break_even_steps": math.inf, "speedup": math.nan, "caveats": ("a",)})
    assert entry == {"break_even_steps": None, "speedup": None, "caveats": ["a"],
                     "never_pays_back": True}
    json.dumps(entry, allow_nan=False)


def _request(device: str, mode: str) -> Any:
    from bench.commands.advise import Request

    return Request("m.py:build", device, mode, 4, "3,32,32", "", "", "static", 10_000, 60.0)


def _measured(knob: str, **over: Any) -> dict[str, Any]:
    """A verdict entry as ``advise`` makes one: faster, enabled, paid back after 5 steps."""
    return {"knob": knob, "status": "measured", "recommendation": "enable", "speedup": 1.5,
            "ci_low": 1.4, "ci_high": 1.6, "verdict": "faster", "cold_cost_s": 0.01,
            "break_even_steps": 5.0, "pays_back": True, "never_pays_back": False,
            "memory_change_bytes": 0.0, "caveats": [], **over}


def test_the_table_says_every_caveat_the_json_carries() -> None:
    """One note per caveat code, in words, after the table: the terminal hides nothing."""
    import io

    from bench.commands.advise import Plan, print_verdicts
    from bench.report.render.words.caveats import CAVEATS

    req, plan = _request("cpu", "infer"), Plan("cpu", None, (), {}, 3, 10.0)  # type: ignore[arg-type]
    entry = _measured("amp-bf16", caveats=["changes-numerics", "steady-drift"])
    unclear = {**entry, "knob": "channels_last", "verdict": "no clear difference",
               "recommendation": "leave default", "break_even_steps": None,
               "pays_back": None, "never_pays_back": True, "caveats": []}
    slower = {**unclear, "knob": "amp-fp16", "verdict": "slower"}
    out = io.StringIO()
    print_verdicts(req, plan, [entry, unclear, slower], Path("run"), 12.0, stream=out)
    lines = out.getvalue().splitlines()
    notes = [ln for ln in lines if ln.startswith("note on ")]
    assert notes == [f"note on amp-bf16: {CAVEATS['changes-numerics']}",
                     f"note on amp-bf16: {CAVEATS['steady-drift']}"]
    # an infinite worst-case break-even says why: "never" only where it is slower
    row = {ln.split()[0]: ln for ln in lines}
    assert "no clear saving to repay it" in row["channels_last"]
    assert "never (slower)" in row["amp-fp16"]


def _fixture_tf32_pair() -> tuple[Any, Path]:
    """The fixtures' H200 pair of ResNet-50 training in fp32 (TF32 convolutions) and
    fp32-strict, where TF32 is more than twice as fast."""
    from bench.report.analysis import analyse
    from bench.report.input.load import load_reports

    reports = ROOT / "tests" / "fixtures" / "reports"
    pairs = analyse(load_reports(reports)).comparisons["precision"]
    row = pairs.loc[pairs["variant_value"] == "fp32-strict"].iloc[0]
    assert row["verdict"] == "slower" and row["speedup"] < 0.5  # strict: the slow side
    return row, reports


def test_the_tf32_line_says_what_turning_tf32_on_buys() -> None:
    """The report compares fp32 against fp32-strict (TF32 off); the tf32 line reads that pair
    the other way round, on the terminal and in the JSON."""
    import io
    from types import SimpleNamespace

    from bench.commands.advise import Plan, Request, _plain, print_verdicts, verdicts_of

    row, reports = _fixture_tf32_pair()
    tf32 = next(k for k in knobs.KNOBS if k.name == "tf32")
    plan = Plan("cuda", None, (tf32,), {k.name: "skipped: not this test's"  # type: ignore[arg-type]
                                       for k in knobs.KNOBS if k is not tf32}, 3, 10.0)
    cells = [SimpleNamespace(cell_id=row["baseline_cell_id"]),
             SimpleNamespace(cell_id=row["variant_cell_id"])]
    req = Request("resnet50", "cuda", "train", 128, "3,224,224", "", "", "static", 10_000, 300.0)
    entries = verdicts_of(req, plan, cells, reports)  # type: ignore[arg-type]
    e = json.loads(json.dumps([_plain(x) for x in entries], allow_nan=False))[0]
    assert (e["knob"], e["baseline"], e["variant"], e["reversed"]) == (
        "tf32", "fp32-strict", "fp32", True)
    assert (e["baseline_cell_id"], e["variant_cell_id"]) == (row["variant_cell_id"],
                                                             row["baseline_cell_id"])
    assert e["speedup"] == pytest.approx(1 / row["speedup"]) and e["speedup"] > 2
    assert (e["ci_low"], e["ci_high"]) == (pytest.approx(1 / row["ci_high"]),
                                           pytest.approx(1 / row["ci_low"]))
    assert (e["verdict"], e["recommendation"], e["n_base"], e["n_var"]) == (
        "faster", "enable", row["n_var"], row["n_base"])
    assert "tf32-default" not in e["caveats"] and "tf32-is-the-default" in e["caveats"]
    # the costs are the report's own formula with the sides swapped: fp32's first pass
    # against strict's, so "never (slower)" cannot follow a speedup above 2
    from bench.report.analysis.studies import one_off_costs
    from bench.report.input.load import load_reports
    from bench.report.judge.asks import reverse

    (cost,) = one_off_costs(load_reports(reports), reverse(row.to_frame().T)).itertuples()
    assert e["cold_cost_s"] == pytest.approx(cost.extra_cold_pass_max_s)
    assert not e["never_pays_back"] and e["pays_back"] is not False
    out = io.StringIO()
    print_verdicts(req, plan, entries, reports, 1.0, stream=out)
    (line,) = [ln for ln in out.getvalue().splitlines() if ln.startswith("tf32 ")]
    assert line.split()[1] == "enable" and " faster " in line and "never" not in line
    assert f"{1 / row['speedup']:.2f}×" in line


def test_the_memory_column_and_its_caveat_give_the_share_too() -> None:
    """As the pages say it: ``+5.21 GiB (+12%)``, not a size alone."""
    import io

    from bench.commands.advise import Plan, print_verdicts

    req, plan = _request("cuda", "train"), Plan("cuda", None, (), {}, 3, 10.0)  # type: ignore[arg-type]
    entry = _measured("cudnn.benchmark", memory_change_bytes=5.21 * 2**30,
                      memory_change_share=0.12, caveats=["extra-memory"])
    out = io.StringIO()
    print_verdicts(req, plan, [entry], Path("run"), 12.0, stream=out)
    lines = out.getvalue().splitlines()
    assert lines[2].endswith("  +5.21 GiB (+12%)")
    assert "note on cudnn.benchmark: it raises the peak memory of a whole run, first pass " \
        "included, by 5.21 GiB (+12%)" in lines
