"""One page per hardware model (its machines and the spread between them; per fingerprint its
environment, cells, failures, ceilings, runs) and the machines index."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bench.report import fmt
from bench.report.input.load import RunFiles, SittingRecord
from bench.report.questions.answers import Shared
from bench.report.questions.machines.fragments import cells_fragment, failures_fragment
from bench.report.questions.machines.model import (
    MachineAgreement,
    MachineGroup,
    MachinePage,
    MachinePages,
    RunRows,
    Sitting,
)
from bench.report.questions.machines.rows import CellSpread, EnvListing
from bench.report.render.buildinfo import BuildInfo
from bench.report.render.dataset import fingerprint_csv
from bench.report.render.escape import Md, cat, md, slug
from bench.report.render.markdown import Page, fragment_placeholder, row_anchor, table
from bench.report.render.paths import (
    MACHINES_INDEX,
    data_file,
    fingerprint_anchor,
    fragment_file,
    machine_file,
    name_file,
    old_machine_file,
)
from bench.report.render.words.context import banner, changes, page, provenance
from bench.report.render.words.files import Copies, file_links
from bench.report.render.words.labels import equal_text
from bench.report.render.writer import Writer
from bench.schema import DRIFT
from bench.sittings import Agreement


def _run_rows(n_ok: int, n_rows: int, planned: int | None) -> str:
    """``160 ok; 161 of 181 planned rows (unfinished)``: a run stopped early says so."""
    if planned is None:
        return f"{n_ok:,} ok; {n_rows:,} rows (the plan was not recorded)"
    done = " (unfinished)" if n_rows < planned else ""
    return f"{n_ok:,} ok; {n_rows:,} of {planned:,} planned rows{done}"


def cells_fragments(model: MachinePages) -> list[Callable[[Writer], None]]:
    """One job per machine page, the largest first: its table of every cell, the slowest part of
    the page, so that the machines can be shared out (see ``views.render_all``)."""
    by_page = {mp.machine.page: mp for mp in model.pages}

    def job(key: str) -> Callable[[Writer], None]:
        def write(writer: Writer) -> None:
            mp = by_page[key]
            writer.text(fragment_file(f"{slug(key)}-cells"),
                        cells_fragment(mp.cells, spread_texts(mp.spread)))

        return write

    return [job(key) for key in model.largest_first]


#: A shard's jobs named one by one up to this many; more are the first, the latest and a count.
SHARD_JOBS_SHOWN = 3


def shard_note(run: RunFiles) -> str:
    """``, shard 1/2 (Slurm job 191)``; a shard that ran under several jobs (a resume) names
    them, oldest first: ``(Slurm jobs 191, 193)``, or past ``SHARD_JOBS_SHOWN`` of them
    ``(Slurm jobs 191, …, 199: 5 in all, the latest last)``."""
    if not run.shard:
        return ""
    jobs = run.slurm_jobs
    if not jobs:
        return f", shard {run.shard}"
    if len(jobs) == 1:
        return f", shard {run.shard} (Slurm job {jobs[0]})"
    if len(jobs) <= SHARD_JOBS_SHOWN:
        return f", shard {run.shard} (Slurm jobs {', '.join(jobs)})"
    return (f", shard {run.shard} (Slurm jobs {jobs[0]}, …, {jobs[-1]}: {len(jobs)} in all, "
            "the latest last)")


def _repro_rows(p: Page, mp: MachinePage, here: str) -> list[list[Any]]:
    return [[cat(row_anchor(r.anchor), md(r.cell_name, limit=160)),
             equal_text(r.n_ok_checks, r.bitwise_equal, r.max_abs_diff), r.status_summary,
             p.link("timed cell", here, r.cell_anchor) if r.timed else fmt.MISSING]
            for r in mp.checks]


def spread_text(s: CellSpread) -> str:
    """``1.58× of 3 machines``: the slowest machine's median step over the fastest's, and how many
    machines of the model measured the cell (the page's header says so once)."""
    return f"{fmt.ratio(s.ratio)} of {s.n_machines} machines"


def spread_texts(spread: Sequence[CellSpread]) -> dict[str, str]:
    """Cell id → its spread between machines, in words (cells one machine measured: none)."""
    return {s.cell_id: spread_text(s) for s in spread}


def _ceiling_rows(p: Page, mp: MachinePage, here: str) -> list[list[Any]]:
    spread = spread_texts(mp.spread)
    return [[c.op, c.device, f"{fmt.num(c.achieved)} {c.unit}"
             + (f" ({fmt.num(c.ci_low)}–{fmt.num(c.ci_high)})" if c.ci_low is not None
                else f" ({c.status_summary})"),
             f"{fmt.num(c.burst)} {c.unit}" if c.burst is not None else fmt.MISSING,
             spread.get(c.cell_id, ONE_MACHINE), p.link("row", here, c.anchor)]
            for c in mp.ceilings]


def _moment(iso: str) -> str:
    """``2026-12-01 12:30``: an ISO 8601 UTC time to the minute."""
    return iso[:16].replace("T", " ")


def sittings_text(rr: RunRows) -> str:
    """``Run R was made in 2 sittings: 2026-12-01 12:30–12:38 (40 rows), …, UTC.``"""
    parts = []
    for s in rr.sittings:
        end = _moment(s.ended)
        parts.append(f"{_moment(s.started)}–{end[11:] if end[:10] == s.started[:10] else end} "
                     f"({s.rows} rows)")
    return (f"Run {rr.run.run_id} was made in {len(rr.sittings)} sittings (a budgeted run "
            f"and its resumes): {', '.join(parts)}, UTC.{code_text(rr.sittings)}")


def timed_text(records: Sequence[SittingRecord], sittings: set[int]) -> str:
    """`` Timed work (…) was 90.2% of its 317 s of wall time; …``: over the sittings whose
    record in env.json has both (``bench.run.store.source``), all of the run's ``sittings`` (the
    numbers its rows name) or some; empty when none has."""
    known = [(c.number, c.wall_s, c.timed_s) for c in records
             if c.wall_s is not None and c.timed_s is not None]
    wall = sum(w for _, w, _ in known)
    if not known or wall <= 0:
        return ""
    timed = sum(t for _, _, t in known)
    what = "timed work (cold passes and steady iterations)"
    said = (f" {what.capitalize()} was {timed / wall:.1%} of its {fmt.num(wall)} s of wall time"
            if {n for n, _, _ in known} >= (sittings or {1}) else
            f" In the {len(known)} sitting{'s' if len(known) > 1 else ''} that recorded it, "
            f"{what} was {timed / wall:.1%} of their {fmt.num(wall)} s of wall time")
    return said + "; the rest is the probe, starting processes, building models and writing rows."


def run_text(rr: RunRows) -> str:
    """What a run's sittings and timed work were, where its rows and env.json say; empty for
    a run of one sitting that recorded no time."""
    numbers = {s.number for s in rr.sittings}
    if len(rr.sittings) > 1:
        return sittings_text(rr) + timed_text(rr.run.records, numbers)
    timed = timed_text(rr.run.records, numbers)
    return f"Run {rr.run.run_id}:{timed}" if timed else ""


def _numbered(numbers: list[int]) -> str:
    """``sitting 3``, ``sittings 1–2``: consecutive sittings, as the sentence names them."""
    return (f"sitting {numbers[0]}" if len(numbers) == 1
            else f"sittings {numbers[0]}–{numbers[-1]}")


def _code_name(s: Sitting) -> str:
    """A sitting's measuring code as the page names it: ``c2858adbbeb7, commit e6f3e23``."""
    if not s.code:
        return "not recorded"
    return f"{s.code}, commit {s.commit}" if s.commit else s.code


def code_text(sittings: Sequence[Sitting]) -> str:
    """`` Every sitting ran the same measuring code (c2858adbbeb7, commit e6f3e23).``, or which
    code each run of sittings ran when they differ; empty when no sitting recorded it."""
    if not any(s.code for s in sittings):
        return ""
    groups: list[tuple[str, list[int]]] = []
    for s in sittings:
        name = _code_name(s)
        if groups and groups[-1][0] == name:
            groups[-1][1].append(s.number)
        else:
            groups.append((name, [s.number]))
    if len(groups) == 1:
        return f" Every sitting ran the same measuring code ({groups[0][0]})."
    lead = ("Its sittings ran different measuring code, pooled as one run"
            if len({s.code for s in sittings if s.code}) > 1 else "Measuring code")
    return f" {lead}: " + "; ".join(f"{_numbered(n)} {name}" for name, n in groups) + "."


def runs_code_text(runs: Sequence[RunRows]) -> str:
    """``Its runs ran different measuring code, pooled as one fingerprint: A: not recorded;
    B: e248499d6288, commit be413af.``: where a fingerprint's runs ran different code (a run
    that recorded none counts as one more), which each ran; empty otherwise. Why: the same
    hardware and software measured by two versions of the runner can disagree, and the
    fingerprint pools them."""
    if len(runs) < 2:
        return ""
    groups: dict[str, list[str]] = {}
    for rr in runs:
        codes = dict.fromkeys(map(_code_name, rr.sittings)) or {"not recorded": None}
        groups.setdefault(", then ".join(codes), []).append(str(rr.run.run_id))
    if len(groups) < 2:
        return ""
    return ("Its runs ran different measuring code, pooled as one fingerprint: "
            + "; ".join(f"{' and '.join(ids)}: {code}" for code, ids in groups.items()) + ".")


def _run_table(p: Page, mp: MachinePage, copied: Copies) -> Md:
    rows = [[
        str(rr.run.run_id) + shard_note(rr.run),
        _run_rows(rr.n_ok, rr.n_rows, rr.run.planned_rows),
        file_links(p, "results.csv", rr.run.results, copied),
        file_links(p, "samples.csv", rr.run.samples, copied) if rr.run.samples in copied
        else fmt.MISSING,
        p.link("env.json", data_file(rr.run.env)) if rr.run.env in copied else fmt.MISSING,
    ] for rr in mp.runs]
    return table(["Run", "Rows", "Results", "Samples", "Environment"], rows)


def _env_tables(env: EnvListing) -> tuple[Md | None, Md | None]:
    # the plan (what a resume must match) lists every cell id: not here (``rows.environment``)
    return (table(["Key", "Value"], [[k, v] for k, v in env.settings]) if env.settings
            else None,
            table(["Flag", "Default"], [[k, v] for k, v in env.flags]) if env.flags else None)


_PARTS = {"cpu": "host CPU", "cuda": "GPU"}
_AGREEMENT: dict[str, str] = {
    Agreement.AGREES: "agrees", Agreement.DISAGREES: "left out of every verdict",
    Agreement.FEW: "too few cells shared: judged cell by cell",
    Agreement.ALONE: "shares no cell with another sitting"}


def _sittings_context(p: Page, mp: MachinePage, here: str) -> dict[str, Any]:
    """The sittings compared before pooling: a sentence for those that disagree, and the
    table of every judged sitting and of the replicates left out cell by cell."""
    paces, cells = mp.paces, mp.left_cells
    if not paces:
        return {"paced": None, "pace_table": None, "left_table": None, "n_left": 0}
    said = [f"Sitting {r.sitting} of run {r.run_id} ran the {_PARTS[r.part]}'s cells at "
            f"{fmt.num(r.pace)}× the other sittings' step times over {r.cells} cells, "
            f"beyond the {fmt.num(r.limit)}× that the spread within sittings allows: its "
            "replicates are left out of every verdict." for r in mp.disagreeing]
    if cells:
        said.append(f"In {fmt.count(len(cells), 'cell')}, one sitting's replicates ran slower "
                    "than another sitting's beyond that spread and are left out of that cell's "
                    "verdicts (the faster sitting is kept: interference only adds time).")
    pace_rows = [[r.run_id, str(r.sitting), _PARTS[r.part],
                  f"{fmt.num(r.pace)}×" if r.pace is not None else fmt.MISSING, str(r.cells),
                  f"{fmt.num(r.limit)}×", _AGREEMENT[r.agreement]]
                 for r in paces]
    left_rows = [[p.link(c.cell_name, here, c.anchor), str(c.sitting),
                  f"{fmt.num(c.ratio)}× sitting {c.reference}'s", f"{fmt.num(c.limit)}×"]
                 for c in cells]
    return {
        "paced": " ".join(said) or None,
        "pace_table": table(["Run", "Sitting", "Part", "Step time vs the others", "Cells",
                             "Limit", "Verdict"], pace_rows),
        "left_table": table(["Cell", "Sitting", "Its median step", "Limit"], left_rows)
        if left_rows else None,
        "n_left": len(left_rows),
    }


def _fingerprint(p: Page, mp: MachinePage, copied: Copies, here: str) -> dict[str, Any]:
    """One fingerprint's section of its machine's page."""
    m, row = mp.machine, mp.summary
    name = slug(m.page)
    fp8 = m.fingerprint_id[:8]
    drift_rows = [[p.link(c.cell_name, here, c.anchor), f"{c.n_drift} of {c.n_ok}",
                   f"{fmt.num(c.drift_max)}×"] for c in mp.drifting]
    throttle_rows = [[p.link(c.cell_name, here, c.anchor), f"{c.n_throttled} of {c.n_ok}",
                      c.throttle_reasons or fmt.MISSING, f"{fmt.num(c.sm_clock_min_mhz)} MHz"]
                     for c in mp.throttled]
    ceil_rows = _ceiling_rows(p, mp, here)
    repro_rows = _repro_rows(p, mp, here)
    env, flags = _env_tables(mp.env)
    return {
        "fp8": fp8, "anchor": fingerprint_anchor(m.page), "env_anchor": f"env-{fp8}",
        "trust": str(m.trust), "name": m.machine,
        "changed": changes(*map(int, m.superseded)) if m.superseded else "",
        "fingerprint": m.fingerprint_id, "m": m, "csv": fingerprint_csv(m.fingerprint_id),
        "n_ok": row.n_ok, "n_failed": row.n_failed, "n_replaced": row.n_replaced,
        "n_rows": row.n_rows, "n_cells": row.n_cells,
        "runs": _run_table(p, mp, copied), "n_runs": len(mp.runs),
        "sittings": [text for text in (runs_code_text(mp.runs), *map(run_text, mp.runs))
                     if text],
        "sharded": any(rr.run.shard for rr in mp.runs), "env": env, "flags": flags,
        "drift": table(["Cell", "Drifting ok replicates", "Worst drift"], drift_rows)
        if drift_rows else None,
        "n_drift": len(drift_rows),
        **_sittings_context(p, mp, here),
        "slowed": table(["Cell", "Throttled ok replicates", "Reasons (share of samples)",
                            "Lowest SM clock"], throttle_rows) if throttle_rows else None,
        "n_slowed": len(throttle_rows),
        "ceilings": table(["Op", "Device", "Sustained (95% CI)", "Best 10 iterations",
                           "Between machines", "Row"], ceil_rows) if ceil_rows else None,
        "cells": fragment_placeholder(f"{name}-cells"),
        "failures": fragment_placeholder(f"{name}-failures") if mp.failures else None,
        "n_failures": len(mp.failures),
        "repro": table(["Configuration", "Two fresh processes", "Status", "Timed cell"],
                       repro_rows) if repro_rows else None,
    }


#: What a cell one physical machine of its model measured says in the spread column.
ONE_MACHINE = "1 machine"
#: What a machine whose runs did not record a machine id is called.
UNRECORDED = "machine not recorded: each run counted as its own"


def _machine_label(m: MachineAgreement) -> str:
    """``nvidia-h200, machine 3f2a…`` or ``nvidia-h200, run 20261204T105602Z-gpu``."""
    where = (f"machine {m.uid}" if m.uid
             else f"run {m.key.removeprefix('run:').rsplit('/', 1)[-1]}")
    return f"{m.name}, {where}"


def _machine_rows(group: MachineGroup) -> list[list[Any]]:
    bad = {m.key for m in group.judged.disagreeing}
    return [[_machine_label(m), m.uid or UNRECORDED,
             ", ".join(f[:8] for f in m.fingerprints),
             f"{m.agree} agree, {m.disagree} disagree, {m.shared - m.agree - m.disagree} too "
             f"few replicates to tell, of {m.shared} shared"
             if m.shared else "no cell shared with another machine",
             fmt.ratio(m.ratio) if m.ratio is not None else fmt.MISSING,
             "disagrees with the rest" if m.key in bad else fmt.MISSING]
            for m in group.machines]


def _disagreeing(group: MachineGroup) -> list[str]:
    """A sentence per machine that disagrees with the rest of its model, with its ratio."""
    return [f"{_machine_label(m)} ran at {fmt.ratio(m.ratio)} the other machines' median step "
            f"times (the median over {m.shared} shared cells), outside their intervals on "
            f"{m.disagree} of {m.agree + m.disagree} cells that could be judged: it "
            "disagrees with the rest of this model. Its figures stay in its fingerprint's "
            "section, and the spread beside each figure includes it."
            for m in group.judged.disagreeing]


def machine_page(writer: Writer, shared: Shared, group: MachineGroup, copied: Copies,
                 build: BuildInfo) -> str:
    """One hardware model's page, a section per fingerprint; returns its path."""
    here = machine_file(group.key)
    p = page(shared, here)
    for mp in group.fingerprints:
        if mp.failures:
            writer.text(fragment_file(f"{slug(mp.machine.page)}-failures"),
                        failures_fragment(mp.failures))
    sources = [mp.machine for mp in group.fingerprints]
    rows = [[p.link(mp.machine.fingerprint_id[:8], here, fingerprint_anchor(mp.machine.page)),
             mp.machine.trusted,
             mp.machine.step + (" (superseded)" if mp.machine.superseded else ""),
             mp.machine.torch, mp.machine.days, f"{mp.summary.n_ok:,} / "
             f"{mp.summary.n_failed:,}"] for mp in group.fingerprints]
    writer.page(
        here, "machine.md.j2", p=p, model=group.model, title=fmt.safe_title(group.model),
        fingerprints=[_fingerprint(p, mp, copied, here) for mp in group.fingerprints],
        overview=table(["Fingerprint", "Machine (trust)", "Step", "torch", "Measured",
                        "Rows ok / not ok"], rows),
        machines=table(["Machine", "Machine id", "Fingerprints", "Cells against the rest",
                        "Its step time over the rest's", "Verdict"], _machine_rows(group)),
        n_machines=len(group.machines), unrecorded=UNRECORDED if group.judged.unrecorded
        else "", disagreeing=_disagreeing(group),
        reproduced=group.judged.reproduced,
        banners=banner(sources), drift_limit=f"{DRIFT:g}×",
        provenance=provenance(build, sources),
    )
    return here


def _index_row(p: Page, group: MachineGroup) -> list[Any]:
    ok = sum(mp.summary.n_ok for mp in group.fingerprints)
    bad = sum(mp.summary.n_failed for mp in group.fingerprints)
    return [p.link(group.model, machine_file(group.key)), str(len(group.machines)),
            _fingerprints(p, group), f"{ok:,} / {bad:,}"]


def _fingerprints(p: Page, group: MachineGroup) -> str | Md:
    """A model's fingerprints the index names (``MachineGroup.indexed``), the current ones
    first, then how many more its page has."""
    listed = "; ".join(
        f"{mp.machine.fingerprint_id[:8]} ({mp.machine.trust}, torch {mp.machine.torch}, "
        f"step {mp.machine.step}{', superseded' if mp.machine.superseded else ''})"
        for mp in group.indexed)
    rest = len(group.fingerprints) - len(group.indexed)
    if not rest:
        return listed
    more = p.link(fmt.count(rest, "more fingerprint"), machine_file(group.key))
    return cat(listed, "; and ", more, ", each a section of its page")


def redirect(target: str, fp8: str) -> str:
    """A page at a fingerprint's old address that sends the reader to its section of the
    machine's page, its row anchors rewritten to the ones the machine page uses."""
    js = (f"var h=location.hash,t={target!r};"
          f"h=h.replace(/^#(cell|repro)-(?!{fp8}-)/,'#$1-{fp8}-');"
          f"if(h==='#environment')h='#env-{fp8}';"
          f"location.replace(t+(h||'#fp-{fp8}'));")
    return _moved(target, fp8, js)


def name_redirect(target: str, fp8: str) -> str:
    """A page at a machine's old address (its name) that sends the reader to its model's page,
    the fragment kept: the sections and rows kept their anchors."""
    js = f"location.replace({target!r}+(location.hash||'#fp-{fp8}'));"
    return _moved(target, fp8, js)


def _moved(target: str, fp8: str, js: str) -> str:
    """The page a redirect leaves at an old address: ``js`` sends a browser on with its
    fragment, the refresh and the link serve one without scripts."""
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<title>Moved</title><link rel="canonical" href="{target}">'
            f'<meta http-equiv="refresh" content="0; url={target}#fp-{fp8}">'
            f"<script>{js}</script></head><body><p>This page moved to "
            f'<a href="{target}#fp-{fp8}">{target}</a>.</p></body></html>\n')


def redirects(writer: Writer, model: MachinePages) -> None:
    """Every fingerprint's old page address, redirecting to its section, and every machine
    name's, redirecting to its model's page (a model page that happens to live at that
    address wins)."""
    taken = {machine_file(g.key).removesuffix(".md") for g in model.groups}
    written: set[str] = set()
    for mp in model.pages:
        target = machine_file(mp.machine.page).rsplit("/", 1)[-1].removesuffix(".md") + ".html"
        fp8 = mp.machine.fingerprint_id[:8]
        old = old_machine_file(mp.machine.page)
        if old.removesuffix(".html") not in taken | written:
            writer.text(old, redirect(target, fp8))
            written.add(old.removesuffix(".html"))
        named = name_file(mp.machine.page)
        if named.removesuffix(".html") not in taken | written:
            writer.text(named, name_redirect(target, fp8))
            written.add(named.removesuffix(".html"))


def machine_pages(writer: Writer, model: MachinePages, shared: Shared, copied: Copies,
                  build: BuildInfo) -> list[tuple[str, str]]:
    """Every machine page, the redirects from the old addresses and the index; returns the
    navigation entries (title, path)."""
    nav = [(fmt.safe_title(g.model), machine_page(writer, shared, g, copied, build))
           for g in model.groups]
    redirects(writer, model)
    index_p = page(shared, MACHINES_INDEX)
    rows = [_index_row(index_p, g) for g in model.groups]
    writer.page(
        MACHINES_INDEX, "machines-index.md.j2",
        table=table(["Hardware model", "Machines", "Fingerprints", "Rows ok / not ok"], rows)
        if rows else None,
        banners=banner([mp.machine for mp in model.pages]),
        provenance=provenance(build, [mp.machine for mp in model.pages]),
    )
    return nav
