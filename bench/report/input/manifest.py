"""A run folder's ``manifest.json``, read and checked: who vouches for the run and which
physical machine measured it.

Why the report reads it: machines of one hardware model share a page, and their figures are
only worth pooling, or calling reproduced, when the page knows which rows came from which
physical machine (``machine_uid``) and who measured them (``trust``). The manifest is written
on the measuring side (``bench pack``); the report never imports that side, so the shape is
checked here again, and a bad manifest stops the build with one line naming the file and the
field (``LoadError``), as a bad row does.

The shape (``manifest_version`` 1); the report reads ``machine_name``, ``machine_uid`` and
``trust`` and checks the rest only for their types::

    {"manifest_version": 1, "files": {"results.csv": "<sha256>", ...},
     "commit": "..." or null, "code": "..." or null,
     "machine_name": "...", "machine_uid": "<id>" or null,
     "price": {"usd_per_hour": 2.49, "source": "...", "date": "YYYY-MM-DD"} or null,
     "trust": "reference" | "contributed", "contributor": "<handle>" or null}
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bench.report.input.errors import LoadError
from bench.report.vocabulary import Trust

MANIFEST_FILE: Final = "manifest.json"
MANIFEST_VERSION: Final = 1
#: The trust a manifest may claim: a run is reproduced only by what the report finds.
CLAIMABLE: Final = (Trust.REFERENCE, Trust.CONTRIBUTED)
#: The keys every manifest has, and the JSON types each may hold (null where allowed).
_FIELDS: Final[dict[str, tuple[type, ...]]] = {
    "manifest_version": (int,),
    "files": (dict,),
    "commit": (str, type(None)),
    "code": (str, type(None)),
    "machine_name": (str,),
    "machine_uid": (str, type(None)),
    "price": (dict, type(None)),
    "trust": (str,),
    "contributor": (str, type(None)),
}
_TYPE_WORDS: Final = {int: "a whole number", dict: "an object", str: "a string",
                      type(None): "null"}


@dataclass(frozen=True)
class Vouched:
    """What the report takes from a manifest: who vouches for the run, on which machine."""

    machine_name: str
    machine_uid: str | None
    trust: Trust


def read_manifest(run_dir: Path) -> Vouched | None:
    """The manifest of ``run_dir``, or None where it has none; ``LoadError`` (one line naming
    the file and the field) where it cannot be used."""
    path = run_dir / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LoadError(path, 0, f"cannot read as JSON: {exc}") from None
    return parse_manifest(path, data)


def parse_manifest(path: Path, data: Any) -> Vouched:
    """``data`` (a manifest's JSON) checked; ``path`` names it in the error."""
    if not isinstance(data, dict):
        raise LoadError(path, 0, "manifest: expected a JSON object at the top level")
    for key, types in _FIELDS.items():
        if key not in data:
            raise LoadError(path, 0, f"manifest field {key!r} is missing")
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, types):
            want = " or ".join(_TYPE_WORDS[t] for t in types)
            raise LoadError(path, 0, f"manifest field {key!r} is {type(value).__name__}, "
                                     f"expected {want}")
    if data["manifest_version"] != MANIFEST_VERSION:
        raise LoadError(path, 0, f"manifest field 'manifest_version' is "
                                 f"{data['manifest_version']}; this report reads version "
                                 f"{MANIFEST_VERSION}")
    claimable = {t.value: t for t in CLAIMABLE}
    if data["trust"] not in claimable:
        raise LoadError(path, 0, f"manifest field 'trust' is {data['trust']!r}; valid "
                                 f"choices: {', '.join(claimable)}")
    if not data["machine_name"].strip():
        raise LoadError(path, 0, "manifest field 'machine_name' is empty")
    uid = data["machine_uid"]
    if uid is not None and not uid.strip():
        raise LoadError(path, 0, "manifest field 'machine_uid' is empty; null where unknown")
    return Vouched(data["machine_name"].strip(), uid.strip() if uid else None,
                    claimable[data["trust"]])


#: How long a git query may take before the runs are taken as committed.
GIT_TIMEOUT_S: Final = 20.0


def committed_files(root: Path) -> tuple[frozenset[str], frozenset[str]] | None:
    """The files under ``root`` git holds (POSIX, relative to it), and those of them changed
    since; None where ``root`` is in no git work tree or git is missing (a tree copied out of
    a checkout: its runs are taken as they say). Why here and not from ``input.local``: that
    module reads the loader's types, and the loader needs this."""
    git = shutil.which("git")
    if git is None:
        return None
    found = []
    for extra in ((), ("--modified",)):
        try:
            done = subprocess.run([git, "-C", str(root), "ls-files", "-z", *extra, "--", "."],
                                  capture_output=True, text=True, timeout=GIT_TIMEOUT_S,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0:
            return None
        found.append(frozenset(p for p in done.stdout.split("\0") if p))
    return found[0], found[1]
