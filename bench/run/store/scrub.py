"""Private facts taken out of a copy of a run before it is shared: host names, user names and
home folders, serial numbers, MAC and IP addresses.

Why: a contributed run is published. The runner records no host name, but env.json can hold
what a user's model or a wrapper added, and kept logs hold tracebacks with home folders and
messages with addresses. ``bench pack`` runs this on its copy (the run folder itself is never
edited) and lists every removal on stderr, so the contributor sees what left.

What is found: values under keys that name such a fact (``hostname``, ``user``, ``serial``,
``mac``, ``ip`` ...), this machine's own host and user names where they appear as words, the
user part of home paths, and anything that parses as a MAC or IP address. Each is replaced by
a neutral token (``<host>``, ``<user>``, ``<serial>``, ``<mac>``, ``<ip>``). The facts the
fingerprint hashes are never touched (``bench.fingerprint``): they are versions and model
names, and changing one would make the run another machine's. Standard library only.
"""

from __future__ import annotations

import contextlib
import getpass
import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Private(str, Enum):
    """The kinds of private fact removed; the value is the token that replaces one."""

    HOST = "<host>"
    USER = "<user>"
    SERIAL = "<serial>"
    MAC = "<mac>"
    IP = "<ip>"


#: Key names (lower case, ``-`` read as ``_``) whose value is itself a private fact.
KEYS: dict[str, Private] = {
    **dict.fromkeys(("hostname", "host", "host_name", "node", "nodename", "node_name", "fqdn",
                     "slurmd_nodename", "computername"), Private.HOST),
    **dict.fromkeys(("user", "username", "user_name", "login", "logname", "owner"),
                    Private.USER),
    **dict.fromkeys(("serial", "serial_number", "serialnumber", "board_serial",
                     "product_serial", "chassis_serial", "uuid", "gpu_uuid"), Private.SERIAL),
    **dict.fromkeys(("mac", "mac_address", "macaddress", "hwaddr"), Private.MAC),
    **dict.fromkeys(("ip", "ip_address", "ipaddress", "addr", "address"), Private.IP),
}
#: The fingerprint's facts (dotted paths) and version strings, never scrubbed.
PROTECTED = re.compile(r"^(python|os|torch|cpu|bench)\.[a-z_]+$|^gpus\.\d+\.(name|driver|"
                       r"total_memory_bytes)$|(^|\.)(fingerprint_id|machine_uid|run_id|"
                       r"[a-z_]*version)$")
_HOME = re.compile(r"(?P<pre>(?:^|(?<=[\s\"'=:(\[,]))(?:/home|/Users|/export/home|/u)/"
                   r"|[A-Za-z]:\\+Users\\+)(?P<user>[^/\\\s\"':]+)")
_MAC = re.compile(r"(?<![0-9A-Fa-f:-])(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}(?![0-9A-Fa-f:-])")
_IP_CANDIDATE = re.compile(r"(?<![\w.:])(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]"
                           r"{0,4}){2,7})(?![\w.:])")
_SERIAL = re.compile(r"\b(?:GPU|MIG)-[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b")
#: Names too common to replace as words (a host called ``localhost`` names no one).
_COMMON = {"localhost", "root", "user", "runner", "ubuntu", "admin", ""}


@dataclass
class Removed:
    """What was taken out: ``(where, kind, the text removed)``, for the listing on stderr."""

    items: list[tuple[str, Private, str]] = field(default_factory=list)

    def add(self, where: str, kind: Private, text: str) -> None:
        self.items.append((where, kind, text))

    def lines(self) -> list[str]:
        return [f"removed {kind.name.lower()} {text!r} from {where} (now {kind.value})"
                for where, kind, text in self.items]


def local_names() -> dict[str, Private]:
    """This machine's host names and user name, which a run made here may hold as words."""
    names: dict[str, Private] = {}
    for host in (socket.gethostname(), socket.getfqdn()):
        names[host] = Private.HOST
        names[host.split(".")[0]] = Private.HOST
    with contextlib.suppress(KeyError, OSError):
        names[getpass.getuser()] = Private.USER
    return {k: v for k, v in names.items() if len(k) >= 3 and k.lower() not in _COMMON}


class Scrubber:
    """Removes private facts from text and from parsed JSON, recording each in ``removed``."""

    def __init__(self, names: dict[str, Private] | None = None) -> None:
        self.names = dict(local_names() if names is None else names)
        self.removed = Removed()

    def learn(self, value: str, kind: Private) -> None:
        """A private value found under its key: replaced wherever else it appears too."""
        if len(value) >= 3 and value.lower() not in _COMMON:
            self.names[value] = kind

    def text(self, text: str, where: str) -> str:
        """``text`` with every private fact replaced."""
        def home(m: re.Match[str]) -> str:
            self.removed.add(where, Private.USER, m.group("user"))
            return m.group("pre") + Private.USER.value

        text = _HOME.sub(home, text)
        for name, kind in sorted(self.names.items(), key=lambda nk: -len(nk[0])):
            pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
            if pattern.search(text):
                self.removed.add(where, kind, name)
                text = pattern.sub(kind.value, text)
        for pattern, kind in ((_SERIAL, Private.SERIAL), (_MAC, Private.MAC)):
            for found in set(pattern.findall(text)):
                self.removed.add(where, kind, found)
                text = text.replace(found, kind.value)
        return _IP_CANDIDATE.sub(lambda m: self._ip(m.group(0), where), text)

    def _ip(self, candidate: str, where: str) -> str:
        if not any(c.isalnum() for c in candidate):
            return candidate  # "::" alone is punctuation in text, not an address here
        try:
            ipaddress.ip_address(candidate)
        except ValueError:
            return candidate
        self.removed.add(where, Private.IP, candidate)
        return Private.IP.value

    def json(self, value: Any, where: str, path: str = "") -> Any:
        """A copy of parsed JSON with private facts replaced, the fingerprint's own facts
        (``PROTECTED``) left as they are."""
        if path and PROTECTED.search(path):
            return value
        if isinstance(value, dict):
            for key, item in value.items():
                kind = KEYS.get(str(key).lower().replace("-", "_"))
                if kind is not None and isinstance(item, str) and item:
                    self.learn(item, kind)
            return {key: self._keyed(key, item, where, f"{path}.{key}" if path else str(key))
                    for key, item in value.items()}
        if isinstance(value, list):
            return [self.json(item, where, f"{path}.{i}") for i, item in enumerate(value)]
        if isinstance(value, str):
            return self.text(value, f"{where} {path}")
        return value

    def _keyed(self, key: str, item: Any, where: str, path: str) -> Any:
        kind = KEYS.get(str(key).lower().replace("-", "_"))
        if kind is not None and isinstance(item, str) and item and not PROTECTED.search(path):
            self.removed.add(f"{where} {path}", kind, item)
            return kind.value
        return self.json(item, where, path)


def findings(lines: Iterable[str], where: str) -> list[str]:
    """Where lines hold a private fact, without changing them (for files that are never
    edited, such as results.csv): ``"<where>:<line> holds a <kind>"``."""
    probe = Scrubber()
    out = []
    for n, line in enumerate(lines, start=1):
        before = len(probe.removed.items)
        probe.text(line, f"{where}:{n}")
        out += [f"{w} holds a {kind.name.lower()} ({text!r})"
                for w, kind, text in probe.removed.items[before:]]
    return out
