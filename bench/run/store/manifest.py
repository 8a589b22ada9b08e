"""A run folder's manifest: what its files hash to, which code measured it, on which machine,
at what price, and how far it is trusted.

Why: a run reaches ``reports/`` from machines this repository never saw. The manifest lets the
receiving side (``bench add``, ``bench check --all``) prove that the files are the ones that
were packed (a sha256 per file), that the code which measured them is code this repository
holds (``code`` and ``commit``, from env.json's sitting records: ``bench.run.store.source``)
and who vouches for them (``trust``). It describes files; it is not a measurement.

Standard library only: ``bench pack`` runs on the measuring box, beside ``bench run``.

The shape (``manifest_version`` 1), which the report reads too::

    {"manifest_version": 1, "files": {"results.csv": "<sha256>", ...},
     "commit": "<40 hex> or null", "code": "<measuring-code hash> or null",
     "machine_name": "...", "machine_uid": "<16 hex> or null",
     "price": {"usd_per_hour": 2.49, "source": "...", "date": "YYYY-MM-DD"} or null,
     "trust": "reference" | "contributed", "contributor": "<handle> or null"}
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

MANIFEST_FILE = "manifest.json"
MANIFEST_VERSION = 1
#: A machine's name is a folder under ``reports/``: lower-case words joined by dashes.
MACHINE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
#: A contributor's handle, as code hosts spell user names.
HANDLE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,38}")
#: The anonymous machine id env.json records (``bench.run.child.env.machine_uid``).
MACHINE_UID = re.compile(r"[0-9a-f]{16}")
COMMIT = re.compile(r"[0-9a-f]{40}")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


class TrustLevel(str, Enum):
    """Who vouches for a run: ``reference`` runs were measured for this repository and are
    committed with it; ``contributed`` runs came from another machine through ``bench add``."""

    REFERENCE = "reference"
    CONTRIBUTED = "contributed"


class ManifestError(ValueError):
    """A manifest or its parts that cannot be used; the message is one line."""


@dataclass(frozen=True)
class HourPrice:
    """What an hour of the machine costs, where that figure comes from and when it was read."""

    usd_per_hour: float
    source: str
    date: str  # YYYY-MM-DD

    @classmethod
    def parse(cls, usd_per_hour: Any, source: Any, date: Any) -> HourPrice:
        """A checked price, or ``ManifestError`` naming the part and its valid form."""
        try:
            usd = float(usd_per_hour)
        except (TypeError, ValueError):
            usd = math.nan
        if isinstance(usd_per_hour, bool) or not math.isfinite(usd) or usd <= 0:
            raise ManifestError(f"price per hour {usd_per_hour!r} is not a positive number of "
                                "US dollars, e.g. 2.49")
        if not isinstance(source, str) or not source.strip():
            raise ManifestError("a price needs its source: where the figure comes from, e.g. "
                                "'provider's on-demand price list'")
        if not isinstance(date, str) or not ISO_DATE.fullmatch(date):
            raise ManifestError(f"price date {date!r} is not a date YYYY-MM-DD")
        try:
            dt.date.fromisoformat(date)
        except ValueError:
            raise ManifestError(f"price date {date!r} is not a date YYYY-MM-DD") from None
        return cls(usd, " ".join(source.split()), date)

    def as_json(self) -> dict[str, Any]:
        return {"usd_per_hour": self.usd_per_hour, "source": self.source, "date": self.date}


@dataclass(frozen=True)
class Manifest:
    """One run folder's manifest (see the module docstring for its JSON)."""

    files: dict[str, str]
    commit: str | None
    code: str | None
    machine_name: str
    machine_uid: str | None
    price: HourPrice | None
    trust: TrustLevel
    contributor: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"manifest_version": MANIFEST_VERSION, "files": dict(sorted(self.files.items())),
                "commit": self.commit, "code": self.code, "machine_name": self.machine_name,
                "machine_uid": self.machine_uid,
                "price": self.price.as_json() if self.price else None,
                "trust": self.trust.value, "contributor": self.contributor}

    def text(self) -> str:
        return json.dumps(self.as_json(), indent=2) + "\n"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def folder_files(run_dir: Path) -> list[str]:
    """Every file of a run folder but its manifest, as POSIX paths relative to it, sorted."""
    return sorted(p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*")
                  if p.is_file() and p.relative_to(run_dir).as_posix() != MANIFEST_FILE)


def hash_files(run_dir: Path) -> dict[str, str]:
    """``relative path → sha256`` of every file of the folder but the manifest."""
    return {name: _sha256(run_dir / name) for name in folder_files(run_dir)}


def hash_problems(run_dir: Path, manifest: Manifest) -> list[tuple[str, str]]:
    """``(file, problem)`` for each file that differs from the manifest: changed, missing, or
    not listed in it."""
    found = hash_files(run_dir)
    out = []
    for name, digest in sorted(manifest.files.items()):
        if name not in found:
            out.append((name, "listed in manifest.json but missing"))
        elif found[name] != digest:
            out.append((name, f"changed since it was packed: sha256 {found[name][:12]}…, "
                              f"manifest.json says {digest[:12]}…"))
    out += [(name, "not listed in manifest.json (added after it was packed)")
            for name in sorted(set(found) - set(manifest.files))]
    return out


def _optional(data: dict[str, Any], key: str, pattern: re.Pattern[str] | None = None
              ) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or (pattern is not None and not pattern.fullmatch(value)):
        shape = f"matching {pattern.pattern}" if pattern is not None else "a string"
        raise ManifestError(f"{key} must be null or {shape}, not {value!r:.60}")
    return value


def _files(data: dict[str, Any]) -> dict[str, str]:
    files = data.get("files")
    if not isinstance(files, dict) or not files:
        raise ManifestError("files must be an object of file name → sha256")
    for name, digest in files.items():
        if not isinstance(digest, str) or not re.fullmatch(r"[0-9a-f]{64}", digest):
            raise ManifestError(f"files[{name!r}] must be a sha256 (64 hex digits)")
        if name.startswith("/") or ".." in Path(name).parts or name == MANIFEST_FILE:
            raise ManifestError(f"files names {name!r}, which is not a file inside the run "
                                "folder")
    return {str(k): str(v) for k, v in files.items()}


def parse(data: Any) -> Manifest:
    """A ``Manifest`` from parsed JSON, or ``ManifestError`` naming the first wrong part."""
    if not isinstance(data, dict):
        raise ManifestError("manifest.json is not a JSON object")
    if data.get("manifest_version") != MANIFEST_VERSION:
        raise ManifestError(f"manifest_version {data.get('manifest_version')!r} is not "
                            f"{MANIFEST_VERSION}, the one this code reads")
    try:
        trust = TrustLevel(data.get("trust"))
    except ValueError:
        raise ManifestError(f"trust {data.get('trust')!r} is not one of "
                            f"{', '.join(t.value for t in TrustLevel)}") from None
    name = data.get("machine_name")
    if not isinstance(name, str) or not MACHINE_NAME.fullmatch(name):
        raise ManifestError(f"machine_name {name!r} is not a folder name (lower-case letters, "
                            "digits and dashes)")
    price = data.get("price")
    if price is not None and not isinstance(price, dict):
        raise ManifestError("price must be null or an object {usd_per_hour, source, date}")
    return Manifest(
        files=_files(data), commit=_optional(data, "commit", COMMIT),
        code=_optional(data, "code", re.compile(r"[0-9a-f]{6,64}")), machine_name=name,
        machine_uid=_optional(data, "machine_uid", MACHINE_UID),
        price=HourPrice.parse(price.get("usd_per_hour"), price.get("source"), price.get("date"))
        if price is not None else None,
        trust=trust, contributor=_optional(data, "contributor", HANDLE))


def read(run_dir: Path) -> Manifest | None:
    """The folder's manifest; None where it has none; ``ManifestError`` where it is broken."""
    path = run_dir / MANIFEST_FILE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"cannot read manifest.json: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ManifestError(f"manifest.json is not valid JSON (line {exc.lineno}: "
                            f"{exc.msg})") from None
    return parse(data)


def recorded_code(env: dict[str, Any]) -> tuple[str | None, str | None]:
    """The measuring-code hash and the commit env.json's sitting records name: ``(None,
    None)`` where none is recorded (a run made before the runner recorded them);
    ``ManifestError`` where the sittings ran different code (one manifest names one code)."""
    records = env.get("sittings")
    found = {(str(r["code"]), r.get("commit") if isinstance(r.get("commit"), str) else None)
             for r in records or [] if isinstance(r, dict) and r.get("code")} \
        if isinstance(records, list) else set()
    codes = {code for code, _ in found}
    if len(codes) > 1:
        raise ManifestError("its sittings ran different measuring code "
                            f"({', '.join(sorted(codes))}): one run, one code; measure it "
                            "again in one version")
    if not found:
        return None, None
    commits = sorted({c for _, c in found if c})
    return found.pop()[0], (commits[0] if len(commits) == 1 else None)
