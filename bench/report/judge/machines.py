"""A fingerprint as the pages name it, and which fingerprints the answers come from.

A machine here is one fingerprint: its page key, a title safe for headings, its hardware in
words, and whether a newer step definition superseded it (its rows stay on its own page, but
no answer is drawn from them) or it was measured only under an older one (answers still come
from it, with a note).

The reader's own machine (``yours``: the fingerprints of runs not committed yet, or the one
``--focus`` names) comes first wherever the pages list machines; the reference machines
follow in page order.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import pandas as pd

from bench import schema
from bench.report import fmt
from bench.report.judge.trust import ModelTrust, judge_model, trust_of
from bench.report.vocabulary import Trust


@dataclass(frozen=True)
class Machine:
    """A fingerprint as the pages name it."""

    page: str  # the analysis' page key (untrusted text; a slug of it names the file)
    machine: str  # machine name from the data (untrusted)
    fingerprint_id: str
    title: str  # safe characters only: headings and navigation
    hardware: str  # GPU name, or CPU model (untrusted)
    #: (its step version, the machine's newest) when a newer step definition superseded it
    superseded: tuple[str, str] | None = None
    #: (its step version, the runner's) when it was measured only under an older definition
    outdated: tuple[str, str] | None = None
    torch: str = ""  # torch's version (env.json)
    cudnn: str = ""  # cuDNN's, as torch reports it (91900 for 9.19.0)
    first_day: str = ""  # the UTC day its first replicate started, and its last ended
    last_day: str = ""
    profile: str = ""  # the profile its env.json names (what a refresh runs)
    step: str = ""  # its step definition (workload version)
    runs: int = 0  # run folders its rows come from
    gpu: bool = False  # it has a GPU (a CUDA switch means nothing on a CPU-only machine)
    yours: bool = False  # the reader's own: its runs are not committed yet, or --focus named it
    model: str = ""  # its hardware model: whose page it is a section of (untrusted)
    trust: Trust = Trust.REFERENCE  # how far its figures are trusted (``judge.trust``)

    @property
    def trusted(self) -> str:
        """``nvidia-h200 (reference)``: its name with its trust, as links and quotes name it."""
        return f"{self.machine} ({self.trust})"

    @property
    def days(self) -> str:
        """``2026-11-30``, or ``2026-11-29 to 2026-12-01``: when its rows were measured."""
        if self.first_day == self.last_day or not self.last_day:
            return self.first_day
        return f"{self.first_day} to {self.last_day}"


def machines_of(summary: pd.DataFrame, yours: frozenset[str] = frozenset()
                ) -> dict[str, Machine]:
    """Page key → :class:`Machine`, from the analysis' machine summary, the reader's own first
    (``yours``: their fingerprint ids)."""
    out: dict[str, Machine] = {}
    models = model_trusts(summary)
    for row in summary.itertuples(index=False):
        hardware = row.gpu_name or row.cpu_model or "unknown hardware"
        if row.gpu_count and row.gpu_count > 1:
            hardware = f"{row.gpu_count} × {hardware}"
        out[str(row.page)] = Machine(
            page=str(row.page),
            machine=str(row.machine),
            fingerprint_id=str(row.fingerprint_id),
            title=fmt.safe_title(f"{row.machine} {str(row.fingerprint_id)[:8]}"),
            hardware=str(hardware),
            superseded=(fmt.integer(row.step_version), fmt.integer(row.newest_step_version))
            if row.superseded
            else None,
            outdated=(fmt.integer(row.step_version), str(schema.WORKLOAD_VERSION))
            if not row.superseded and row.step_version < schema.WORKLOAD_VERSION
            else None,
            torch=str(row.torch_version), cudnn=str(row.cudnn_version),
            first_day=str(row.first_started_at)[:10], last_day=str(row.last_ended_at)[:10],
            profile=str(row.profile), step=fmt.integer(row.step_version),
            runs=int(row.n_runs),
            gpu=bool(row.gpu_name), yours=str(row.fingerprint_id) in yours,
            model=str(row.model),
            trust=trust_of(bool(row.reference), row.machine_keys, models[str(row.model)]),
        )
    return dict(sorted(out.items(), key=lambda item: order(item[1])))


def model_trusts(summary: pd.DataFrame) -> dict[str, ModelTrust]:
    """Hardware model → its machines judged against each other (``judge.trust``)."""
    return {str(model): judge_model(str(model), group["model_machines"].iloc[0])
            for model, group in summary.groupby("model", sort=True)}


def order(m: Machine) -> tuple[bool, str]:
    """Where a machine comes in any list of them: the reader's own first, then page order."""
    return (not m.yours, m.page)


def in_order(machines: Mapping[str, Machine]) -> tuple[Machine, ...]:
    """``machines`` in :func:`order`."""
    return tuple(sorted(machines.values(), key=order))


def link_labels(machines: Mapping[str, Machine]) -> dict[str, str]:
    """Link text for every machine: its name (plus its fingerprint where it was measured
    under several) and its trust, ``nvidia-h200 (reference)``.

    Without it the home page would list, say, two ``laptop`` rows that differ only in the torch
    version or the step definition behind them, and a reader could not tell which is which.
    The reader's own machine is labelled as theirs.
    """
    names = Counter(m.machine for m in machines.values())
    labels = {key: m.title if names[m.machine] > 1 else m.machine
              for key, m in machines.items()}
    for key, m in machines.items():
        if m.yours:
            labels[key] = f"your machine {labels[key]}"
        labels[key] += f" ({m.trust})"
    return labels


def by_machine(
    frame: pd.DataFrame, machines: Mapping[str, Machine]
) -> list[tuple[Machine, pd.DataFrame]]:
    """``frame``'s rows per machine page, in :func:`order` (the reader's own first)."""
    if frame.empty:
        return []
    out = []
    for page, group in frame.groupby("page", sort=True):
        m = machines.get(str(page)) or unknown_machine(
            str(page), str(group["machine"].iloc[0]), str(group["fingerprint_id"].iloc[0]))
        out.append((m, group.reset_index(drop=True)))
    return sorted(out, key=lambda pair: order(pair[0]))


def unknown_machine(page: str, machine: str = "", fingerprint_id: str = "") -> Machine:
    """A page key the machine summary does not know (rows of a run whose env.json is gone)."""
    return Machine(page, machine or page, fingerprint_id, fmt.safe_title(page), "")


#: Up to this many fingerprints, a list of them shows each one whole; past it, one per
#: hardware model (``representatives``): a hundred machines that joined would otherwise give a
#: grid no first screen can show, and a page of hundreds of near-alike charts.
EVERY_ONE_UP_TO = 8


def representatives(machines: Sequence[Machine], cells: pd.DataFrame) -> frozenset[str]:
    """The page keys of ``machines`` a list shows whole: every one, up to
    ``EVERY_ONE_UP_TO``; past that, the reader's own and, for each hardware model, its
    fingerprint that measured the most cells (``cells``' rows per page; then page order)."""
    if len(machines) <= EVERY_ONE_UP_TO:
        return frozenset(m.page for m in machines)
    measured = (cells["page"].astype(str).value_counts() if len(cells)
                else pd.Series(dtype="int64"))
    first: dict[str, str] = {}
    for m in sorted(machines, key=lambda m: (-int(measured.get(m.page, 0)), m.page)):
        first.setdefault(m.model, m.page)
    return frozenset(first.values()) | {m.page for m in machines if m.yours}


class _Section(Protocol):
    @property
    def machine(self) -> Machine: ...
    @property
    def charts_on(self) -> Machine | None: ...


S = TypeVar("S", bound=_Section)


def mark_charted(sections: Sequence[S], cells: pd.DataFrame) -> tuple[S, ...]:
    """``sections`` (one per fingerprint) with ``charts_on`` set where the page does not draw
    a section's charts: past ``EVERY_ONE_UP_TO`` sections, it draws those of one per hardware
    model and of the reader's own (``representatives``), and each other section points to its
    model's (it keeps its tables)."""
    shown = representatives([s.machine for s in sections], cells)
    charted = {s.machine.model: s.machine for s in sections
               if s.machine.page in shown and not s.machine.yours}
    charted.update({s.machine.model: s.machine for s in sections
                    if s.machine.page in shown and s.machine.model not in charted})
    return tuple(s if s.machine.page in shown
                 else dataclasses.replace(s, charts_on=charted[s.machine.model])  # type: ignore[type-var]
                 for s in sections)
