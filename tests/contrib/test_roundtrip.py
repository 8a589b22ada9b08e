"""A real run goes the whole way a contribution goes: measured (``bench run --profile
smoke``), packed (``bench pack``), added to a reports tree (``bench add``) and held to
``bench check --all``; and each way a pack can be wrong is refused."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench import fingerprint
from bench.run.store import source

from .conftest import FIXTURE_REPORTS, ROOT, Cli, smoke_run, snapshot_repo

pytestmark = pytest.mark.e2e

PRICE = ("--price-per-hour", "2.49", "--price-source", "a provider's price list",
         "--price-date", "2026-12-01")


@dataclass(frozen=True)
class Measured:
    repo: Path  # a git repository whose one commit holds the code that measured the run
    run: Path


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Measured:
    base = tmp_path_factory.mktemp("contrib")
    snapshot_repo(base / "repo")
    proc = smoke_run(base / "run")
    assert proc.returncode == 0, proc.stderr[-3000:]
    env = json.loads((base / "run" / "env.json").read_text(encoding="utf-8"))
    assert {s["code"] for s in env["sittings"]} == {source.digest(base / "repo" / "bench")}, \
        "bench/ changed while the run measured"
    return Measured(base / "repo", base / "run")


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _env(run: Path) -> dict[str, object]:
    return json.loads((run / "env.json").read_text(encoding="utf-8"))


def _pack(bench: Cli, run: Path, m: Measured, out: Path, *extra: str
          ) -> subprocess.CompletedProcess[str]:
    return bench("pack", str(run), "--repo", str(m.repo), "--out", str(out), *extra)


def _one_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def test_a_packed_run_is_added_and_passes_check_all(measured: Measured, bench: Cli,
                                                     tmp_path: Path) -> None:
    before = _tree(measured.run)
    pack = tmp_path / "box.tar.gz"
    proc = _pack(bench, measured.run, measured, pack, *PRICE, "--contributor", "someone")
    assert proc.returncode == 0, proc.stderr
    assert _tree(measured.run) == before  # the run folder is never edited
    env = _env(measured.run)
    machine, run_id = str(env["machine"]), str(env["run_id"])
    with tarfile.open(pack) as tar:
        names = tar.getnames()
        assert all(m.uname == "" and m.uid == 0 for m in tar.getmembers())
    assert f"{machine}/{run_id}/manifest.json" in names
    assert f"{machine}/{run_id}/results.csv" in names

    reports = tmp_path / "reports"
    shutil.copytree(FIXTURE_REPORTS, reports)
    proc = bench("add", str(pack), "--reports", str(reports), "--repo", str(measured.repo))
    assert proc.returncode == 0, proc.stderr
    added = reports / machine / run_id
    manifest = json.loads((added / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["trust"] == "contributed" and manifest["contributor"] == "someone"
    assert manifest["code"] == env["sittings"][0]["code"]  # type: ignore[index]
    assert manifest["machine_uid"] == env["machine_uid"]
    assert manifest["machine_name"] == machine
    assert manifest["price"] == {"usd_per_hour": 2.49, "source": "a provider's price list",
                                 "date": "2026-12-01"}
    assert set(manifest["files"]) == {"env.json", "results.csv", "samples.csv"}

    proc = bench("check", "--all", str(reports / machine), "--repo", str(measured.repo))
    assert proc.returncode == 0, proc.stdout
    assert f"{added}: stands" in proc.stdout and "contributed" in proc.stdout
    # the whole tree: the added run stands beside the fixtures (whose synthetic figures
    # and fingerprints bench check refuses, as it should)
    proc = bench("check", "--all", str(reports), "--repo", str(measured.repo))
    assert f"{added}: stands" in proc.stdout
    # never over a run already there
    again = bench("add", str(pack), "--reports", str(reports), "--repo", str(measured.repo))
    assert "exists" in _one_error(again)


def _unpacked(bench: Cli, m: Measured, tmp_path: Path) -> Path:
    pack = tmp_path / "box.tar.gz"
    assert _pack(bench, m.run, m, pack).returncode == 0
    with tarfile.open(pack) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    env = _env(m.run)
    return tmp_path / "unpacked" / str(env["machine"]) / str(env["run_id"])


def test_one_changed_digit_in_results_is_refused(measured: Measured, bench: Cli,
                                                 tmp_path: Path) -> None:
    run = _unpacked(bench, measured, tmp_path)
    text = (run / "results.csv").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    digit = re.search(r"(?<=,)\d", lines[1])
    assert digit is not None
    changed = str((int(digit.group()) + 1) % 10)
    lines[1] = lines[1][:digit.start()] + changed + lines[1][digit.end():]
    (run / "results.csv").write_text("".join(lines), encoding="utf-8")
    reports = tmp_path / "reports"
    proc = bench("add", str(run), "--reports", str(reports), "--repo", str(measured.repo))
    error = _one_error(proc)
    assert "results.csv" in error and "[manifest hashes]" in error, error
    assert not reports.exists()  # nothing placed


def test_pack_takes_host_names_and_home_paths_out_of_a_copy(measured: Measured, bench: Cli,
                                                            tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(measured.run, run)
    env = _env(run)
    env["hostname"] = "gpu-box-17.example.org"
    env["launcher"] = {"cwd": "/home/alice/torch-knobs",
                       "note": "started on gpu-box-17.example.org from 10.1.2.3",
                       "nic": "aa:bb:cc:dd:ee:0f"}
    (run / "env.json").write_text(json.dumps(env, indent=2, sort_keys=True) + "\n",
                                  encoding="utf-8")
    before = _tree(run)
    pack = tmp_path / "box.tar.gz"
    proc = _pack(bench, run, measured, pack)
    assert proc.returncode == 0, proc.stderr
    for said in ("gpu-box-17.example.org", "'alice'", "10.1.2.3", "aa:bb:cc:dd:ee:0f"):
        assert said in proc.stderr, proc.stderr  # each removal is listed
    assert _tree(run) == before  # the copy was scrubbed, not the run
    with tarfile.open(pack) as tar:
        member = tar.extractfile(f"{env['machine']}/{env['run_id']}/env.json")
        assert member is not None
        packed = member.read().decode("utf-8")
    for private in ("gpu-box-17", "alice", "10.1.2.3", "aa:bb:cc:dd:ee:0f"):
        assert private not in packed
    clean = json.loads(packed)
    assert clean["hostname"] == "<host>"
    assert clean["launcher"]["cwd"] == "/home/<user>/torch-knobs"
    assert clean["launcher"]["note"] == "started on <host> from <ip>"
    assert clean["fingerprint_id"] == env["fingerprint_id"] == fingerprint.fingerprint_id(clean)
    assert clean["collected_at"] == env["collected_at"]  # a timestamp is no address


def test_code_no_commit_holds_is_refused_naming_it(measured: Measured, bench: Cli,
                                                   tmp_path: Path) -> None:
    pack = tmp_path / "box.tar.gz"
    assert _pack(bench, measured.run, measured, pack).returncode == 0
    other = tmp_path / "other"
    snapshot_repo(other, change="\n# another version of the measuring code\n")
    proc = bench("add", str(pack), "--reports", str(tmp_path / "reports"), "--repo", str(other))
    error = _one_error(proc)
    code = _env(measured.run)["sittings"][0]["code"]  # type: ignore[index]
    assert f"measuring code {code}" in error and "unknown code" in error, error
    # and pack says the same where its repository lacks the code
    proc = bench("pack", str(measured.run), "--repo", str(other), "--out",
                 str(tmp_path / "again.tar.gz"))
    assert code in _one_error(proc)
    assert not (tmp_path / "again.tar.gz").exists()


@pytest.mark.parametrize("price, says", [
    (("--price-per-hour", "-2", "--price-source", "list", "--price-date", "2026-12-01"),
     "positive number"),
    (("--price-per-hour", "abc", "--price-source", "list", "--price-date", "2026-12-01"),
     "positive number"),
    (("--price-per-hour", "2.49", "--price-source", "list", "--price-date", "2026-13-01"),
     "YYYY-MM-DD"),
    (("--price-per-hour", "2.49", "--price-source", " ", "--price-date", "2026-12-01"),
     "source"),
    (("--price-per-hour", "2.49"), "all three"),
])
def test_a_bad_price_is_one_line_naming_the_valid_form(measured: Measured, bench: Cli,
                                                       tmp_path: Path, price: tuple[str, ...],
                                                       says: str) -> None:
    out = tmp_path / "box.tar.gz"
    error = _one_error(_pack(bench, measured.run, measured, out, *price))
    assert says in error and "--price-per-hour USD" in error, error
    assert not out.exists()


def test_a_run_failing_an_integrity_check_is_not_packed(measured: Measured, bench: Cli,
                                                        tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(measured.run, run)
    lines = (run / "results.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    col = header.index("steady_median_s")
    for i, line in enumerate(lines[1:], start=1):
        cells = line.rstrip("\n").split(",")
        if len(cells) == len(header) and cells[col] and cells[header.index("kind")] == "model":
            cells[col] = str(float(cells[col]) * 3)
            lines[i] = ",".join(cells) + "\n"
            break
    (run / "results.csv").write_text("".join(lines), encoding="utf-8")
    out = tmp_path / "box.tar.gz"
    error = _one_error(_pack(bench, run, measured, out))
    assert "bench check fails" in error and "samples" in error, error
    assert not out.exists()


def test_the_machine_id_is_shared_by_runs_here_and_not_fingerprinted(measured: Measured
                                                                     ) -> None:
    env = _env(measured.run)
    again = subprocess.run([sys.executable, "-c", "from bench.run.child.env import machine_uid;"
                            " print(machine_uid())"], capture_output=True, text=True,
                           cwd=ROOT, check=True).stdout.strip()
    assert str(env["machine_uid"]) == again  # None where this machine has no readable id
    assert env["machine_uid"] is None or re.fullmatch(r"[0-9a-f]{16}", str(env["machine_uid"]))
    assert "machine_uid" not in json.dumps(sorted(fingerprint.stable_facts(env)))
    other = {**env, "machine_uid": "0123456789abcdef"}
    assert fingerprint.fingerprint_id(other) == fingerprint.fingerprint_id(env) \
        == env["fingerprint_id"]
