"""What ``bench add`` refuses of an archive before anything is written, what a manifest must
hold, and what the scrubber takes out and leaves (no run needed)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from bench.run.store import manifest as manifests
from bench.run.store.manifest import HourPrice, ManifestError
from bench.run.store.scrub import Private, Scrubber

from .conftest import ROOT, Cli


def _tar(path: Path, members: list[tuple[str, bytes | None, bytes]]) -> Path:
    """``(name, link target or None, content)``: a file, or a symlink where a target is set."""
    with tarfile.open(path, "w:gz") as tar:
        for name, target, data in members:
            info = tarfile.TarInfo(name)
            if target is not None:
                info.type, info.linkname = tarfile.SYMTYPE, target.decode()
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("members, says", [
    ([("m/r/results.csv", None, b"x"), ("m/r/../../../evil.txt", None, b"x")], "'..'"),
    ([("/etc/evil.txt", None, b"x")], "absolute path"),
    ([("m/r/results.csv", None, b"x"), ("m/r/env.json", b"/etc/passwd", b"")], "link"),
    ([("m/r/results.csv", None, b"x"), ("m/s/results.csv", None, b"x")], "2 run folders"),
    ([("evil.txt", None, b"x")], "outside <machine>/<run-id>/"),
])
def test_an_archive_that_escapes_is_refused_and_nothing_lands(
        bench: Cli, tmp_path: Path, members: list[tuple[str, bytes | None, bytes]],
        says: str) -> None:
    pack = _tar(tmp_path / "bad.tar.gz", members)
    reports = tmp_path / "work" / "reports"
    proc = bench("add", str(pack), "--reports", str(reports))
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and says in errors[0], proc.stderr
    assert not reports.exists() and not (tmp_path / "evil.txt").exists()


def test_a_refusal_is_one_line_from_a_whole_process(tmp_path: Path) -> None:
    pack = _tar(tmp_path / "bad.tar.gz", [("m/r/../../x", None, b"x")])
    proc = subprocess.run([sys.executable, "-m", "bench", "add", str(pack), "--reports",
                           str(tmp_path / "reports")], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr


def test_a_folder_without_a_manifest_is_not_added(bench: Cli, tmp_path: Path) -> None:
    run = tmp_path / "m" / "r"
    run.mkdir(parents=True)
    (run / "results.csv").write_text("x\n")
    proc = bench("add", str(run), "--reports", str(tmp_path / "reports"))
    assert proc.returncode == 2 and "no manifest.json" in proc.stderr


def _good() -> dict[str, object]:
    return {"manifest_version": 1, "files": {"results.csv": "0" * 64}, "commit": None,
            "code": "0123456789ab", "machine_name": "rtx-box", "machine_uid": None,
            "price": None, "trust": "contributed", "contributor": None}


@pytest.mark.parametrize("change, says", [
    ({"trust": "trusted"}, "reference, contributed"),
    ({"manifest_version": 2}, "manifest_version"),
    ({"files": {"results.csv": "abc"}}, "sha256"),
    ({"files": {"../x": "0" * 64}}, "not a file inside"),
    ({"machine_name": "My Box"}, "folder name"),
    ({"machine_uid": "gpu-box-17"}, "machine_uid"),
    ({"commit": "abc"}, "commit"),
    ({"price": {"usd_per_hour": 0, "source": "x", "date": "2026-12-01"}}, "positive"),
    ({"price": {"usd_per_hour": 1, "source": "x", "date": "1 Dec 2026"}}, "YYYY-MM-DD"),
])
def test_a_manifest_of_another_shape_is_refused(change: dict[str, object], says: str) -> None:
    assert manifests.parse(_good()).machine_name == "rtx-box"
    with pytest.raises(ManifestError, match=says):
        manifests.parse({**_good(), **change})


def test_a_manifest_reads_back_as_written(tmp_path: Path) -> None:
    made = manifests.parse({**_good(), "price": {"usd_per_hour": 2.49, "source": "list",
                                                 "date": "2026-12-01"}})
    assert made.price == HourPrice(2.49, "list", "2026-12-01")
    assert manifests.parse(json.loads(made.text())) == made


def test_hashes_name_a_changed_a_missing_and_an_added_file(tmp_path: Path) -> None:
    for name in ("results.csv", "samples.csv", "env.json"):
        (tmp_path / name).write_text(name)
    made = manifests.parse({**_good(), "files": manifests.hash_files(tmp_path)})
    assert manifests.hash_problems(tmp_path, made) == []
    (tmp_path / "results.csv").write_text("results.csz")
    (tmp_path / "samples.csv").unlink()
    (tmp_path / "extra.txt").write_text("x")
    found = dict(manifests.hash_problems(tmp_path, made))
    assert set(found) == {"results.csv", "samples.csv", "extra.txt"}
    assert "changed" in found["results.csv"] and "missing" in found["samples.csv"]


def test_the_scrubber_takes_out_private_facts_and_leaves_the_rest() -> None:
    s = Scrubber(names={"gpu-box-17": Private.HOST})
    text = ("Traceback: File \"/home/alice/x.py\", C:\\Users\\bob\\y, /Users/carol/z on "
            "gpu-box-17 at 192.168.1.20 and fe80::1ff:fe23:4567:890a, mac 00:1A:2b:3c:4D:5e, "
            "GPU-6e2f1c9a-1b2c-4d5e-8f90-a1b2c3d4e5f6; at 2026-12-04T15:14:34.860+00:00 "
            "torch 2.11.0+cu130, driver 580.159.04, std::vector, gpu-box-170")
    clean = s.text(text, "log")
    for private in ("alice", "bob", "carol", "192.168.1.20", "fe80::", "00:1A",
                    "6e2f1c9a", "gpu-box-17 "):
        assert private not in clean, clean
    for kept in ("2026-12-04T15:14:34.860+00:00", "2.11.0+cu130", "580.159.04",
                 "std::vector", "gpu-box-170"):
        assert kept in clean, clean
    assert {kind for _, kind, _ in s.removed.items} == set(Private)


def test_the_fingerprint_facts_are_never_scrubbed() -> None:
    env = {"os": {"release": "10.1.2.3"}, "gpus": [{"name": "box", "driver": "1.2.3.4"}],
           "extra": {"host": "box", "where": "10.1.2.3"}}
    clean = Scrubber(names={}).json(env, "env.json")
    assert clean["os"] == env["os"] and clean["gpus"] == env["gpus"]
    assert clean["extra"] == {"host": "<host>", "where": "<ip>"}
