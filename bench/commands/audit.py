"""Everything ``bench add`` and ``bench check --all`` ask of one run folder before it stands in
``reports/``: the report's schema, the manifest's hashes, the fingerprint recomputed, the
plausibility rules of ``bench check``, and measuring code this repository holds.

Why two kinds of finding: some say the files cannot be what they claim (a broken schema, a
file changed since it was packed, an env.json whose facts give another fingerprint, code no
commit holds, a figure above its own machine's measured ceiling, flags that did not read
back), and such a run is refused. Others say the measurement was disturbed (a drifting or
throttled replicate, a short energy window, a pipeline's start-up burst, sittings that
disagree): the report already marks those where it uses the rows, so they are listed and the
run stands. ``FLAGS`` names the second kind; every other finding refuses.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from bench import fingerprint
from bench.run.store import check as checks
from bench.run.store import manifest as manifests
from bench.run.store.manifest import Manifest, ManifestError, TrustLevel
from bench.run.store.provenance import GitMissing, Repository
from bench.schema import ENV_FILE, RESULTS_FILE


class AuditRule(str, Enum):
    """The rules of this module (``bench check``'s own keep their names)."""

    SCHEMA = "schema"
    MANIFEST = "manifest"
    HASHES = "manifest hashes"
    FOLDER = "machine folder"
    FINGERPRINT = "fingerprint"
    CODE = "measuring code known"
    UNRECORDED = "code not recorded"
    UNVERIFIED = "code not verifiable here"


#: ``bench check`` findings the report marks where it uses the rows: listed, never refusing.
FLAGS = frozenset({"steady drift", "pipeline start-up", "throttled", "energy window",
                   "sittings disagree"})


@dataclass(frozen=True)
class AuditFinding:
    """One finding: where (``file:line``, or the file), the rule, the problem, and whether it
    refuses the run."""

    where: str
    rule: str
    problem: str
    refuses: bool = True

    def line(self) -> str:
        return f"{self.where}: [{self.rule}] {self.problem}"


@dataclass(frozen=True)
class Audit:
    """One run folder's findings, and its manifest where it has one."""

    run_dir: Path
    rows: int
    findings: tuple[AuditFinding, ...]
    manifest: Manifest | None

    @property
    def refused(self) -> tuple[AuditFinding, ...]:
        return tuple(f for f in self.findings if f.refuses)

    @property
    def flags(self) -> tuple[AuditFinding, ...]:
        return tuple(f for f in self.findings if not f.refuses)


def run_folders(root: Path) -> list[Path]:
    """Every run folder under ``root`` (a folder holding a results.csv), ``root`` included."""
    return sorted(p.parent for p in root.rglob(RESULTS_FILE))


def open_repository(root: Path) -> Repository | GitMissing:
    """The repository the code is looked up in, or why there is none (said per run)."""
    try:
        return Repository(root)
    except GitMissing as exc:
        return exc


def read_env(run_dir: Path) -> dict[str, Any] | None:
    try:
        env = json.loads((run_dir / ENV_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # the schema check names it
    return env if isinstance(env, dict) else None


def _line_of(path: Path, key: str) -> int:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return 1
    return next((n for n, text in enumerate(lines, 1) if f'"{key}"' in text), 1)


def manifest_findings(run_dir: Path) -> tuple[Manifest | None, list[AuditFinding]]:
    """The manifest's own shape, its hashes and the folder it sits in."""
    path = run_dir / manifests.MANIFEST_FILE
    try:
        found = manifests.read(run_dir)
    except ManifestError as exc:
        return None, [AuditFinding(str(path), AuditRule.MANIFEST.value, str(exc))]
    if found is None:
        return None, []
    out = [AuditFinding(str(run_dir / name), AuditRule.HASHES.value, problem)
           for name, problem in manifests.hash_problems(run_dir, found)]
    if run_dir.parent.name != found.machine_name:
        out.append(AuditFinding(f"{path}:{_line_of(path, 'machine_name')}", AuditRule.FOLDER.value,
                           f"machine_name {found.machine_name!r}, but the run lies under "
                           f"{run_dir.parent.name!r}: reports/<machine_name>/<run-id>"))
    return found, out


_FINGERPRINT = AuditRule.FINGERPRINT.value


def _code(where: str, problem: str) -> list[AuditFinding]:
    """One refusing finding of the measuring-code rule."""
    return [AuditFinding(where, AuditRule.CODE.value, problem)]


def fingerprint_findings(run_dir: Path, env: dict[str, Any] | None) -> list[AuditFinding]:
    """env.json's id recomputed from its own facts, and every row's id against it."""
    if env is None or not isinstance(env.get("fingerprint_id"), str):
        return []
    path, stored = run_dir / ENV_FILE, env["fingerprint_id"]
    definition = fingerprint.definition_of(env) or 1
    own = fingerprint.fingerprint_id(env, definition)
    out = []
    if own != stored:
        out.append(AuditFinding(f"{path}:{_line_of(path, 'fingerprint_id')}", _FINGERPRINT,
                                f"fingerprint_id {stored!r}, but its facts give {own!r} "
                                f"(definition {definition}): edited, or facts of another run"))
    try:
        with open(run_dir / RESULTS_FILE, newline="", encoding="utf-8") as f:
            for n, row in enumerate(csv.DictReader(f), start=2):
                if row.get("fingerprint_id") != stored:
                    out.append(AuditFinding(f"{run_dir / RESULTS_FILE}:{n}", _FINGERPRINT,
                                            f"row fingerprint_id {row.get('fingerprint_id')!r}"
                                            f", env.json says {stored!r}"))
                    break
    except (OSError, UnicodeDecodeError, csv.Error):
        pass  # the schema check names it
    return out


def schema_findings(run_dir: Path) -> list[AuditFinding]:
    """What the report's loader says of the folder (pandas: imported only here)."""
    from bench.report.input.load import LoadError, load_reports

    try:
        load_reports(run_dir)
    except LoadError as exc:
        return [AuditFinding(f"{exc.path}:{exc.line}", AuditRule.SCHEMA.value, exc.problem)]
    return []


def plausibility(run_dir: Path) -> tuple[int, list[AuditFinding]]:
    """``bench check``'s findings, each refusing unless it is one of ``FLAGS``."""
    try:
        n, found = checks.check_run(run_dir)
    except (OSError, ValueError, KeyError, csv.Error) as exc:
        return 0, [AuditFinding(str(run_dir / RESULTS_FILE), AuditRule.SCHEMA.value,
                           f"bench check cannot read it: {exc!r}")]
    return n, [AuditFinding(a.where, a.check, a.problem, a.check not in FLAGS) for a in found]


def code_findings(run_dir: Path, env: dict[str, Any] | None, found: Manifest | None,
                  repo: Repository | GitMissing) -> list[AuditFinding]:
    """The measuring code known: the manifest's (or env.json's) code hash is the hash of the
    files of a commit of this repository's history."""
    where = str(run_dir / (manifests.MANIFEST_FILE if found else ENV_FILE))
    try:
        code, commit = (found.code, found.commit) if found else \
            manifests.recorded_code(env or {})
    except ManifestError as exc:
        return _code(where, str(exc))
    if code is None:
        if found is not None and found.trust is TrustLevel.CONTRIBUTED:
            return _code(where, "a contributed run must name its measuring code (env.json's "
                                "sittings record it)")
        return [AuditFinding(where, AuditRule.UNRECORDED.value, "no measuring code recorded "
                             "(measured before the runner recorded it): its provenance is the "
                             "commit that added it", refuses=False)]
    if isinstance(repo, GitMissing):
        return _code(where, f"cannot look up measuring code {code}: {repo}")
    if found is not None and found.commit is not None:
        if repo.full_commit(found.commit) is None:
            if found.trust is TrustLevel.REFERENCE and repo.shallow_hint():
                # the project's own run, checked where its history was whole; a shallow clone
                # (a CI checkout) cannot look its commit up, which says nothing of the run
                return [AuditFinding(where, AuditRule.UNVERIFIED.value,
                                     f"commit {found.commit} is not in this shallow "
                                     "checkout", refuses=False)]
            return _code(where, f"commit {found.commit} is not in this repository's history "
                                f"(code {code}){repo.shallow_hint()}")
        own = repo.digest_at(found.commit)
        if own != code:
            return _code(where, f"measuring code {code} is not commit {found.commit}'s, whose "
                                f"code is {own}")
        return []
    if repo.find(code, commit).commit is None:
        return _code(where, f"measuring code {code} (commit {commit or 'not recorded'}) is no "
                            "commit's of this repository's history: unknown code"
                            + repo.shallow_hint())
    return []


def audit(run_dir: Path, repo: Repository | GitMissing) -> Audit:
    """Every rule on one run folder."""
    env = read_env(run_dir)
    found, findings = manifest_findings(run_dir)
    findings += fingerprint_findings(run_dir, env)
    findings += schema_findings(run_dir)
    n, plausible = plausibility(run_dir)
    findings += plausible
    findings += code_findings(run_dir, env, found, repo)
    return Audit(run_dir, n, tuple(findings), found)
