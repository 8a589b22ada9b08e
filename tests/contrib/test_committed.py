"""The committed runs keep every rule of ``bench check --all`` and carry their reference
manifests; env.json's machine id is optional where the report reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.report.input.envfile import read_env
from bench.report.input.errors import LoadError
from bench.run.child.env import machine_uid
from bench.run.store import manifest as manifests

from .conftest import ROOT, Cli

REPORTS = ROOT / "reports"


def test_check_all_passes_on_the_committed_reports(bench: Cli) -> None:
    proc = bench("check", "--all", str(REPORTS))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "REFUSED" not in proc.stdout and " 0 refused" in proc.stdout


def test_every_committed_run_has_a_reference_manifest() -> None:
    runs = sorted(p.parent for p in REPORTS.rglob("results.csv"))
    assert runs
    for run in runs:
        found = manifests.read(run)
        assert found is not None, f"{run} has no manifest.json"
        assert found.trust is manifests.TrustLevel.REFERENCE and found.price is None
        env = json.loads((run / "env.json").read_text(encoding="utf-8"))
        # the machine id where env.json records one (runs since schema 7), none before
        assert found.machine_name == run.parent.name
        assert found.machine_uid == env.get("machine_uid")
        assert (found.code, found.commit is None) == (
            manifests.recorded_code(env)[0], manifests.recorded_code(env)[1] is None)


def test_check_all_refuses_a_committed_run_with_a_changed_file(bench: Cli, tmp_path: Path
                                                                ) -> None:
    run = sorted(p.parent for p in REPORTS.rglob("manifest.json"))[0]
    copy = tmp_path / run.parent.name / run.name
    copy.mkdir(parents=True)
    for p in run.iterdir():
        if p.is_file():
            (copy / p.name).write_bytes(p.read_bytes())
    assert bench("check", "--all", str(tmp_path)).returncode == 0
    with open(copy / "env.json", "a", encoding="utf-8") as f:
        f.write("\n")
    proc = bench("check", "--all", str(tmp_path))
    assert proc.returncode == 1
    assert f"{copy / 'env.json'}: [manifest hashes] changed" in proc.stdout, proc.stdout


def test_machine_uid_is_a_salted_hash_of_the_first_readable_id(tmp_path: Path) -> None:
    (tmp_path / "id").write_text("0123456789abcdef0123456789abcdef\n")
    missing = str(tmp_path / "none")
    uid = machine_uid((missing, str(tmp_path / "id")))
    assert uid is not None and len(uid) == 16 and "0123456789abcdef" not in uid
    assert machine_uid((str(tmp_path / "id"),)) == uid
    assert machine_uid((missing,)) is None


@pytest.mark.parametrize("value, ok", [("0123456789abcdef", True), (None, True), (5, False)])
def test_env_json_may_hold_a_machine_uid(tmp_path: Path, value: object, ok: bool) -> None:
    path = tmp_path / "env.json"
    path.write_text(json.dumps({"fingerprint_id": "x", "machine_uid": value}))
    if ok:
        assert read_env(path)["machine_uid"] == value
    else:
        with pytest.raises(LoadError, match="machine_uid"):
            read_env(path)
