"""Plausibility checks on a finished run, before its results are published.

Standard library only, so it runs on the measuring box right after ``bench run``. Each check
is a small pure function over the parsed rows that yields findings; ``python -m bench check
DIR`` prints them and exits non-zero if any check failed. Checks:

- the quantiles in order, p10 <= median <= p90 <= p95 <= p99, and the median recomputed
  from samples.csv matches the row;
- energy and power are not negative;
- a window that holds the steady state (the energy window, the replicate's wall time) is no
  shorter than its steady steps took at the least (half of them took the median or more);
- the cold pass includes the first iteration (cold_pass_s >= cold_first_iter_s);
- throughput agrees with batch and step time (samples/s = sum of batches / sum of times);
- achieved TFLOP/s stays below the machine's best measured matmul ceiling;
- the effective flags match the requested ones (benchmark on/off really differ, strict fp32
  really has TF32 off);
- ok rows have their numbers and failed rows have none (never 0.0 as a stand-in; the sizes of
  the replicate's kernel-cache folder describe the folder, not a measurement, and any row may
  have them);
- a ``fresh`` replicate's kernel-cache folder was empty when its child started;
- the steady state is steady: with static shapes, the median of the later half of the timed
  iterations is within ``DRIFT`` times that of the earlier half. A drift means something
  changed under the measurement (the workload's numerics, thermal throttling, another
  process), so the median describes no single regime;
- an input pipeline's window begins past the batches its workers were handed at start-up,
  which arrive in a burst (``schema.startup_batches``);
- a replicate whose device throttled in its timed window (a clock-event reason other than
  idle was active: power cap, thermal slowdown, ...) ran at reduced clocks, and its energy
  window shorter than ``ENERGY_MIN_WINDOW_S`` spans too few updates of the counter to trust;
- the folder is one the report will load: no zero-byte results.csv or samples.csv (a run
  killed as it created it); every block of samples has a row, and an ok one (samples that no
  row commits were left by a kill between the samples and the row), and is that row's only
  block of its attempt; every ok model or ceiling row has its samples;
- the run's sittings (``--resume``) that wrote rows ran the same measuring code, where
  env.json records it.

The rules on samples (which block is a row's, its count and median, drift) and the orders a
row's figures keep (quantiles, energy, windows) are ``bench.consistency``'s, which the
report's loader and statistics apply too: the two sides cannot disagree about the same folder.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench import consistency as rules
from bench import sittings
from bench.run.plan.pipelines import PIPELINE_KINDS
from bench.run.store.numbounds import NUMERICS, check_numerics
from bench.schema import (
    ENERGY_MIN_WINDOW_S,
    ENV_FILE,
    FIGURE_COLUMNS,
    RESULTS_FILE,
    SAMPLES_FILE,
    Status,
    startup_batches,
)
from bench.sittings import Part

Row = dict[str, str]
Key = tuple[str, str, str]
TOL = 1e-9


@dataclass(frozen=True)
class Anomaly:
    """One thing a check found implausible: which check, where, and what."""

    check: str
    where: str  # "<file>:<line> <cell name> #r<replicate>"
    problem: str


def _f(row: Row, col: str) -> float | None:
    value = row.get(col, "")
    return float(value) if value not in ("", None) else None


def _n(row: Row, col: str) -> float:
    """A number for the shared rules: NaN where empty, which breaks none of them."""
    value = _f(row, col)
    return math.nan if value is None else value


def _where(row: Row) -> str:
    return f"{row['_source']}:{row['_line']} {row['cell_name']} #r{row['replicate']}"


def _key(row: Row) -> Key:
    """A replicate's samples: its cell, replicate and attempt (empty before attempts were
    kept), so samples a killed attempt left are never taken for its re-run's."""
    return (row["cell_id"], row["replicate"], row.get("attempt_id") or "")


def _ok(rows: list[Row], kinds: tuple[str, ...] = rules.TIMED_KINDS) -> Iterator[Row]:
    return (r for r in rows if r["status"] == Status.OK and r["kind"] in kinds)


def _int(value: str | None) -> int:
    try:
        return int(value or "")
    except ValueError:
        return -1  # as the loader reads an iteration that is not a number


@dataclass
class Block:
    """One write of samples: consecutive samples of one key whose steps go forward
    (``rules.new_block``); ``earlier`` when a later block of its row follows."""

    key: Key
    samples: list[Row]
    earlier: bool = False

    @property
    def attempt(self) -> str:
        return self.key[2]


def blocks_of(rows: list[Row], samples: list[Row]) -> list[Block]:
    """The blocks of ``samples`` in file order, each marked ``earlier`` when it is not the
    last block of a key that has a model or ceiling row."""
    found: list[Block] = []
    key_before: Key | None = None
    step_before = 0
    for s in samples:
        key = _key(s)
        step = rules.step(s["phase"] == rules.STEADY, _int(s["iter"]))
        if not found or rules.new_block(key != key_before, step_before, step):
            found.append(Block(key, []))
        found[-1].samples.append(s)
        key_before, step_before = key, step
    owned = {_key(r) for r in rows if r["kind"] in rules.TIMED_KINDS}
    last = {b.key: i for i, b in enumerate(found) if b.key in owned}
    for i, b in enumerate(found):
        b.earlier = b.key in last and i != last[b.key]
    return found


def steady_of(blocks: list[Block], column: str) -> dict[Key, list[str]]:
    """Per key, ``column`` of the steady samples of its row's own block (the last; an
    earlier one is never the row's)."""
    out: dict[Key, list[str]] = {}
    for b in blocks:
        if not b.earlier:
            out[b.key] = [s[column] for s in b.samples if s["phase"] == rules.STEADY]
    return out


def quantile_problem(r: Row) -> str:
    """The first pair of quantiles out of order (``rules.QUANTILE_PAIRS``), or ``""``."""
    for lo, hi in rules.QUANTILE_PAIRS:
        if rules.out_of_order(_n(r, lo), _n(r, hi)):
            return f"{lo} {r[lo]} is above {hi} {r[hi]}"
    return ""


def energy_problem(r: Row) -> str:
    """The first energy or power figure below zero (``rules.ENERGY_FIGURES``), or ``""``."""
    for col in rules.ENERGY_FIGURES:
        if rules.negative(_n(r, col)):
            return f"{col} is negative: {r[col]}"
    return ""


def window_problem(r: Row) -> str:
    """The first window shorter than the row's steady steps took at the least
    (``rules.WINDOWS``, ``rules.window_short``), or ``""``."""
    iters, median = _n(r, "steady_iters"), _n(r, "steady_median_s")
    for col in rules.WINDOWS:
        if rules.window_short(_n(r, col), iters, median):
            least = rules.least_steady_s(iters, median)
            return (f"{col} {r[col]} s is shorter than its steady steps took: "
                    f"{iters - iters // 2:.0f} of its {iters:.0f} took at least the median "
                    f"{r['steady_median_s']} s, {least:.4g} s")
    return ""


def _broken(rows: list[Row], name: str, problem: Callable[[Row], str]) -> Iterator[Anomaly]:
    """Every row, ok or not, as the loader holds them (a failed row has no figures, and
    breaks no order)."""
    for r in rows:
        said = problem(r)
        if said:
            yield Anomaly(name, _where(r), said)


def check_figures(rows: list[Row]) -> Iterator[Anomaly]:
    """Energy and power not negative, and no window shorter than its steady steps."""
    yield from _broken(rows, rules.ENERGY_SIGN, energy_problem)
    yield from _broken(rows, rules.WINDOW_LENGTH, window_problem)


def check_order(rows: list[Row], samples: dict[Key, list[float]]) -> Iterator[Anomaly]:
    """The quantiles in order, and an ok row's samples: their count and median."""
    yield from _broken(rows, rules.QUANTILE_ORDER, quantile_problem)
    for r in _ok(rows):
        med = _f(r, "steady_median_s")
        xs, iters = samples.get(_key(r)), _f(r, "steady_iters")
        if xs is None:
            continue
        if iters is not None and rules.count_differs(len(xs), iters):
            yield Anomaly("samples", _where(r), f"{len(xs)} steady samples, row says "
                                                f"{r['steady_iters']}")
        elif xs and med is not None and rules.median_differs(statistics.median(xs), med):
            yield Anomaly("samples", _where(r), f"median of samples "
                                                f"{statistics.median(xs)} != {med}")


def check_cold(rows: list[Row]) -> Iterator[Anomaly]:
    for r in _ok(rows):
        first, whole = _f(r, "cold_first_iter_s"), _f(r, "cold_pass_s")
        if first is not None and whole is not None and whole + TOL < first:
            yield Anomaly("cold pass", _where(r), f"cold_pass_s {whole} < first {first}")


def check_throughput(rows: list[Row], shapes: dict[Key, list[int]]) -> Iterator[Anomaly]:
    for r in _ok(rows, ("model",)):
        sps, mean = _f(r, "samples_per_s"), _f(r, "steady_mean_s")
        if sps is None or mean is None:
            continue
        batches = shapes.get(_key(r))
        batch = statistics.fmean(batches) if batches else float(r["batch_size"])
        expected = batch / mean
        if abs(sps - expected) > 0.01 * expected:
            yield Anomaly("samples/s", _where(r), f"{sps:.4g} samples/s but batch {batch:g} / "
                                                  f"mean step {mean:.4g} s = {expected:.4g}")


def check_ceiling(rows: list[Row]) -> Iterator[Anomaly]:
    best: dict[tuple[str, str], float] = defaultdict(float)
    for r in _ok(rows, ("ceiling",)):
        work, med = _f(r, "work_per_iter"), _f(r, "steady_median_s")
        if r["model"].startswith("matmul") and work and med:
            key = (r["fingerprint_id"], r["device"])
            best[key] = max(best[key], work / med / 1e12)
    for r in _ok(rows, ("model",)):
        ceiling = best.get((r["fingerprint_id"], r["device"]))
        flops, sps = _f(r, "flops_per_sample"), _f(r, "samples_per_s")
        if ceiling and flops and sps and flops * sps / 1e12 > ceiling:
            yield Anomaly("TFLOP/s < ceiling", _where(r),
                          f"{flops * sps / 1e12:.3g} TFLOP/s above the best measured matmul "
                          f"{ceiling:.3g} TFLOP/s")


def check_flags(rows: list[Row]) -> Iterator[Anomaly]:
    for r in rows:
        if r["status"] != Status.OK or r["device"] != "cuda" or r["kind"] == "ceiling":
            continue
        for axis in ("cudnn_benchmark", "cudnn_deterministic"):
            want = "true" if r[axis] == "on" else "false"
            if r[f"eff_{axis}"] != want:
                yield Anomaly("effective flags", _where(r),
                              f"{axis}={r[axis]} but read back eff_{axis}={r[f'eff_{axis}']}")
        if r["precision"] == "fp32-strict" and r["eff_cudnn_allow_tf32"] != "false":
            yield Anomaly("effective flags", _where(r), "fp32-strict but cuDNN TF32 is on")


def drift_halves(xs: list[float]) -> tuple[float, float] | None:
    """The medians of the earlier and the later half of a replicate's steady iterations
    (``rules.early_half``, ``rules.late_half``); None when it has too few to halve."""
    n = len(xs)
    early = [x for i, x in enumerate(xs) if rules.early_half(i, n)]
    late = [x for i, x in enumerate(xs) if rules.late_half(i, n)]
    return (statistics.median(early), statistics.median(late)) if early and late else None


def check_drift(rows: list[Row], samples: dict[Key, list[float]]) -> Iterator[Anomaly]:
    for r in _ok(rows, ("model",)):
        halves = drift_halves(samples.get(_key(r), []))
        if halves is None or not rules.drift_applies(r["kind"], r["shapes"]):
            continue
        early, late = halves
        if early > 0 and rules.drifted(late / early):
            yield Anomaly("steady drift", _where(r),
                          f"later steady iterations take {late / early:.3g}x the earlier ones "
                          f"({early:.4g} s -> {late:.4g} s)")


def check_startup(rows: list[Row], iters: dict[Key, list[int]]) -> Iterator[Anomaly]:
    """An input pipeline's window that began inside its workers' start-up batches (rows
    written before the child took them untimed): its rate timed their burst."""
    for r in _ok(rows, PIPELINE_KINDS):
        workers, first = _int(r.get("num_workers")), iters.get(_key(r), [])
        startup = startup_batches(workers)
        if first and first[0] < startup:
            took = f"{first[0]} batch{'' if first[0] == 1 else 'es'}"
            yield Anomaly("pipeline start-up", _where(r),
                          f"its window began after {took}, inside the {startup} that its "
                          f"{workers} worker{' was' if workers == 1 else 's were'} handed at "
                          f"start-up; the report cuts them")


def check_telemetry(rows: list[Row]) -> Iterator[Anomaly]:
    """Throttled replicates, and energy figures from windows too short to trust."""
    for r in _ok(rows):
        if r.get("throttled") == "true":
            yield Anomaly("throttled", _where(r),
                          f"the device throttled in the timed window "
                          f"({r.get('throttle_reasons') or 'reasons not read'}; lowest SM "
                          f"clock {r.get('sm_clock_min_mhz') or '?'} MHz)")
        window = _f(r, "energy_window_s")
        if _f(r, "energy_j") is not None and window is not None and window < ENERGY_MIN_WINDOW_S:
            yield Anomaly("energy window", _where(r),
                          f"energy measured over {window:.3g} s, under the "
                          f"{ENERGY_MIN_WINDOW_S:g} s its counter needs to be trusted")


def check_cache(rows: list[Row]) -> Iterator[Anomaly]:
    for r in rows:
        start = _f(r, "kernel_cache_start_bytes")
        if r.get("kernel_cache") == "fresh" and start is not None and start > 0:
            yield Anomaly("kernel cache", _where(r),
                          f"a fresh replicate's cache folder held {start:.0f} bytes at start")


def check_empties(rows: list[Row]) -> Iterator[Anomaly]:
    for r in rows:
        filled = [c for c in FIGURE_COLUMNS if r.get(c) not in ("", None)]
        if r["status"] != Status.OK and filled:
            yield Anomaly("failed rows", _where(r), f"status {r['status']} but has {filled[0]}")
        if r["status"] == Status.OK and r["kind"] == "model" and not r.get("steady_median_s"):
            yield Anomaly("ok rows", _where(r), "status ok without a steady median")


def check_files(run_dir: Path) -> Iterator[Anomaly]:
    for name in (RESULTS_FILE, SAMPLES_FILE):
        path = run_dir / name
        if path.is_file() and path.stat().st_size == 0:
            yield Anomaly("files", f"{path}:1", "empty file: no header line (the report "
                                                "refuses it; a run killed as it created it?)")


def check_rows_and_samples(rows: list[Row], blocks: list[Block]) -> Iterator[Anomaly]:
    """Blocks of samples without a row (or whose row is not ok, or that repeat an attempt),
    and ok timed rows without samples: the loader's rules (``bench.consistency``)."""
    owner = {_key(r): r for r in rows if r["kind"] in rules.TIMED_KINDS}  # the last one
    for block in blocks:
        row, key, first, n = owner.get(block.key), block.key, block.samples[0], len(block.samples)
        where = f"{first['_source']}:{first['_line']} cell {key[0]} #r{key[1]}"
        if row is None:
            yield Anomaly("samples without a row", where,
                          f"{n} sample(s) of attempt {key[2] or '(none)'} have no row "
                          f"in {RESULTS_FILE} (left by a kill between the samples and the row; "
                          "the report refuses them)")
        elif rules.repeated(block.earlier, block.attempt):
            yield Anomaly("samples without a row", where,
                          f"{n} sample(s) repeat attempt {block.attempt}, whose row "
                          f"({row['_source']}:{row['_line']}) has a later block (an attempt "
                          "writes one; the report refuses them)")
        elif row["status"] != Status.OK and not rules.superseded(block.earlier, block.attempt):
            yield Anomaly("samples without a row", where,
                          f"{n} sample(s) belong to a row that is not ok "
                          f"({row['_source']}:{row['_line']}, status {row['status']})")
    found = {b.key for b in blocks}
    for r in _ok(rows):
        if _key(r) not in found:
            yield Anomaly("rows without samples", _where(r),
                          f"status ok but {SAMPLES_FILE} has no samples for it")


def check_sittings(run_dir: Path, rows: list[Row]) -> Iterator[Anomaly]:
    """Sittings of one run (``--resume``) that ran different measuring code, as env.json's
    sitting records say (``bench.run.store.source``): their rows are pooled as one run, so the
    publisher should know which code measured which."""
    try:
        env = json.loads((run_dir / ENV_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # the report's loader names a missing or broken env.json
    records = env.get("sittings") if isinstance(env, dict) else None
    codes = {r["sitting"]: str(r.get("code")) for r in records or []
             if isinstance(r, dict) and type(r.get("sitting")) is int} \
        if isinstance(records, list) else {}
    wrote: defaultdict[int, int] = defaultdict(int)
    for r in rows:
        wrote[_int(r.get("sitting"))] += 1
    used = {n: code for n, code in sorted(codes.items()) if wrote.get(n)}
    if len(set(used.values())) > 1:
        yield Anomaly("measuring code", f"{run_dir / ENV_FILE}:1",
                      "its sittings ran different measuring code, pooled as one run: "
                      + "; ".join(f"sitting {n} {code} ({wrote[n]} "
                                  f"row{'' if wrote[n] == 1 else 's'})"
                                  for n, code in used.items()))


_PART_WORDS = {Part.CPU: "host-CPU cells", Part.GPU: "GPU cells"}


def check_pace(run_dir: Path, rows: list[Row]) -> Iterator[Anomaly]:
    """Sittings that disagree (``bench.sittings``): a sitting whose cells ran slower than the
    other sittings' beyond the spread within sittings, or one sitting's replicates of a cell
    slower than another's. The report leaves them out of every verdict; ``--resume
    --remeasure`` measures them again."""
    records = _sitting_records(run_dir)
    verdict = sittings.judge_rows(rows, {rows[0]["run_id"]: records} if rows else None)
    where = f"{run_dir / RESULTS_FILE}"
    for p in verdict.disagreeing():
        yield Anomaly("sittings disagree", f"{where} sitting {p.sitting}",
                      f"its {_PART_WORDS[p.part]} ran {p.pace:.2f}x the step times of the "
                      f"other sittings over {p.cells} cells (beyond {p.limit:.2f}x, the spread "
                      "within sittings): left out of every verdict")
    names = {r["cell_id"]: r["cell_name"] for r in rows}
    for c in verdict.cells:
        yield Anomaly("sittings disagree", f"{where} sitting {c.sitting} {names.get(c.cell_id)}",
                      f"its replicates ran {c.ratio:.2f}x sitting {c.reference}'s step time "
                      f"(beyond {c.limit:.2f}x): left out of this cell's verdicts")


def _sitting_records(run_dir: Path) -> list[dict[str, object]]:
    try:
        env = json.loads((run_dir / ENV_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    records = env.get("sittings") if isinstance(env, dict) else None
    return [r for r in records if isinstance(r, dict)] if isinstance(records, list) else []


def _read(path: Path) -> list[Row]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = []
        for line, row in enumerate(csv.DictReader(f), start=2):
            row["_source"], row["_line"] = str(path), str(line)
            rows.append(row)
        return rows


def check_run(run_dir: Path) -> tuple[int, list[Anomaly]]:
    """All checks on one run directory: (rows checked, findings)."""
    rows = _read(run_dir / RESULTS_FILE)
    every = _read(run_dir / SAMPLES_FILE) if (run_dir / SAMPLES_FILE).exists() else []
    blocks = blocks_of(rows, every)
    # each row's own block of steady samples: never an earlier block of its key
    samples = {k: [float(x) for x in xs] for k, xs in steady_of(blocks, "seconds").items()}
    shapes = {k: [int(x) for x in xs] for k, xs in steady_of(blocks, "batch_size").items()}
    iters = {k: [int(x) for x in xs] for k, xs in steady_of(blocks, "iter").items()}
    findings = [*check_order(rows, samples), *check_figures(rows), *check_cold(rows),
                *check_throughput(rows, shapes), *check_ceiling(rows), *check_flags(rows),
                *check_drift(rows, samples),
                *check_startup(rows, iters), *check_telemetry(rows), *check_cache(rows),
                *check_empties(rows), *check_numerics(rows, _where, Anomaly),
                *check_files(run_dir), *check_rows_and_samples(rows, blocks),
                *check_sittings(run_dir, rows), *check_pace(run_dir, rows)]
    return len(rows), findings


CHECKS = (rules.QUANTILE_ORDER, rules.ENERGY_SIGN, rules.WINDOW_LENGTH, "samples", "cold pass",
          "samples/s", "TFLOP/s < ceiling",
          "effective flags", "steady drift", "pipeline start-up", "throttled", "energy window",
          "kernel cache", "failed rows", "ok rows", "files", "samples without a row",
          "rows without samples", "measuring code", "sittings disagree", NUMERICS)


#: How many findings the end of ``bench run`` prints; ``bench check DIR`` prints them all.
SHOWN_AT_END = 10


def ending_lines(run_dir: Path, shown: int = SHOWN_AT_END) -> list[str]:
    """What ``bench run`` (and ``bench advise``) print of ``bench check``'s findings for the
    run they made: a count, then the findings grouped by check as ``bench check`` lists them
    (the first ``shown``), and the command that shows them all. One line when there are
    none. A folder it cannot read is said in one line, not raised: the run is written."""
    command = f"python -m bench check {run_dir}"
    if not (run_dir / RESULTS_FILE).is_file():
        return []
    try:
        _, found = check_run(run_dir)
    except (OSError, ValueError, KeyError, csv.Error) as exc:
        return [f"bench check could not read the run ({exc}); see: {command}"]
    if not found:
        return [f"bench check: no findings ({command})"]
    order = [*CHECKS, *sorted({f.check for f in found} - set(CHECKS))]
    groups = [(c, [f for f in found if f.check == c]) for c in order]
    groups = [(c, fs) for c, fs in groups if fs]
    lines = [f"bench check: {len(found)} finding{'' if len(found) == 1 else 's'} ("
             + ", ".join(f"{len(fs)} {c}" for c, fs in groups) + ")"]
    left = shown
    for check, fs in groups:
        if left <= 0:
            break
        lines.append(f"  {check} ({len(fs)}):")
        lines += [f"    {f.where}: {f.problem}" for f in fs[:left]]
        left -= len(fs[:left])
    more = len(found) - shown
    lines.append(f"  and {more} more: {command}" if more > 0 else f"  see them all: {command}")
    return lines
