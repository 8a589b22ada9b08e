"""Plausibility checks on a finished run, before its results are published.

Standard library only, so it runs on the measuring box right after ``bench run``. Each check
is a small pure function over the parsed rows that yields findings; ``python -m bench check
DIR`` prints them and exits non-zero if any check failed. Checks:

- p10 <= median <= p90, and the median recomputed from samples.csv matches the row;
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
- the folder is one the report will load, by the same rules as its loader
  (``bench.report.consistency``, re-stated here in the standard library, since this side
  never imports pandas or the report): no zero-byte results.csv or samples.csv (a run killed
  as it created it); every sample's replicate and attempt has a row, and an ok one (samples
  that no row commits were left by a kill between the samples and the row); every ok model
  or ceiling row has its samples.
"""

from __future__ import annotations

import csv
import statistics
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.schema import DRIFT, FIGURE_COLUMNS, RESULTS_FILE, SAMPLES_FILE

Row = dict[str, str]
TOL = 1e-9


@dataclass(frozen=True)
class Finding:
    check: str
    where: str  # "<file>:<line> <cell name> #r<replicate>"
    problem: str


def _f(row: Row, col: str) -> float | None:
    value = row.get(col, "")
    return float(value) if value not in ("", None) else None


def _where(row: Row) -> str:
    return f"{row['_source']}:{row['_line']} {row['cell_name']} #r{row['replicate']}"


def _key(row: Row) -> tuple[str, str, str]:
    """A replicate's samples: its cell, replicate and attempt (empty before attempts were
    kept), so samples a killed attempt left are never taken for its re-run's."""
    return (row["cell_id"], row["replicate"], row.get("attempt_id") or "")


def _ok(rows: list[Row], kinds: tuple[str, ...] = ("model", "ceiling")) -> Iterator[Row]:
    return (r for r in rows if r["status"] == "ok" and r["kind"] in kinds)


def check_order(rows: list[Row], samples: dict[tuple[str, str, str], list[float]]
                ) -> Iterator[
        Finding]:
    for r in _ok(rows):
        p10, med, p90 = (_f(r, c) for c in ("steady_p10_s", "steady_median_s", "steady_p90_s"))
        if p10 is None or med is None or p90 is None:
            continue
        if not p10 <= med + TOL <= p90 + 2 * TOL:
            yield Finding("p10<=median<=p90", _where(r), f"p10={p10} median={med} p90={p90}")
        xs = samples.get(_key(r))
        if xs is not None:
            if len(xs) != int(r["steady_iters"]):
                yield Finding("samples", _where(r), f"{len(xs)} steady samples, row says "
                                                    f"{r['steady_iters']}")
            elif abs(statistics.median(xs) - med) > 1e-9 * max(1.0, med):
                yield Finding("samples", _where(r), f"median of samples "
                                                    f"{statistics.median(xs)} != {med}")


def check_cold(rows: list[Row]) -> Iterator[Finding]:
    for r in _ok(rows):
        first, whole = _f(r, "cold_first_iter_s"), _f(r, "cold_pass_s")
        if first is not None and whole is not None and whole + TOL < first:
            yield Finding("cold pass", _where(r), f"cold_pass_s {whole} < first {first}")


def check_throughput(rows: list[Row], shapes: dict[tuple[str, str, str], list[int]]
                     ) -> Iterator[
        Finding]:
    for r in _ok(rows, ("model",)):
        sps, mean = _f(r, "samples_per_s"), _f(r, "steady_mean_s")
        if sps is None or mean is None:
            continue
        batches = shapes.get(_key(r))
        batch = statistics.fmean(batches) if batches else float(r["batch_size"])
        expected = batch / mean
        if abs(sps - expected) > 0.01 * expected:
            yield Finding("samples/s", _where(r), f"{sps:.4g} samples/s but batch {batch:g} / "
                                                  f"mean step {mean:.4g} s = {expected:.4g}")


def check_ceiling(rows: list[Row]) -> Iterator[Finding]:
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
            yield Finding("TFLOP/s < ceiling", _where(r),
                          f"{flops * sps / 1e12:.3g} TFLOP/s above the best measured matmul "
                          f"{ceiling:.3g} TFLOP/s")


def check_flags(rows: list[Row]) -> Iterator[Finding]:
    for r in rows:
        if r["status"] != "ok" or r["device"] != "cuda" or r["kind"] == "ceiling":
            continue
        for axis in ("cudnn_benchmark", "cudnn_deterministic"):
            want = "true" if r[axis] == "on" else "false"
            if r[f"eff_{axis}"] != want:
                yield Finding("effective flags", _where(r),
                              f"{axis}={r[axis]} but read back eff_{axis}={r[f'eff_{axis}']}")
        if r["precision"] == "fp32-strict" and r["eff_cudnn_allow_tf32"] != "false":
            yield Finding("effective flags", _where(r), "fp32-strict but cuDNN TF32 is on")


def check_drift(rows: list[Row], samples: dict[tuple[str, str, str], list[float]]
                ) -> Iterator[
        Finding]:
    for r in _ok(rows, ("model",)):
        xs = samples.get(_key(r), [])
        if r["shapes"] != "static" or len(xs) < 3:  # other schedules cycle shapes on purpose
            continue
        half = len(xs) // 2
        early, late = statistics.median(xs[:half]), statistics.median(xs[-half:])
        if early > 0 and not 1 / DRIFT <= late / early <= DRIFT:
            yield Finding("steady drift", _where(r),
                          f"later steady iterations take {late / early:.3g}x the earlier ones "
                          f"({early:.4g} s -> {late:.4g} s)")


def check_cache(rows: list[Row]) -> Iterator[Finding]:
    for r in rows:
        start = _f(r, "kernel_cache_start_bytes")
        if r.get("kernel_cache") == "fresh" and start is not None and start > 0:
            yield Finding("kernel cache", _where(r),
                          f"a fresh replicate's cache folder held {start:.0f} bytes at start")


def check_empties(rows: list[Row]) -> Iterator[Finding]:
    for r in rows:
        filled = [c for c in FIGURE_COLUMNS if r.get(c) not in ("", None)]
        if r["status"] != "ok" and filled:
            yield Finding("failed rows", _where(r), f"status {r['status']} but has {filled[0]}")
        if r["status"] == "ok" and r["kind"] == "model" and not r.get("steady_median_s"):
            yield Finding("ok rows", _where(r), "status ok without a steady median")


def check_files(run_dir: Path) -> Iterator[Finding]:
    for name in (RESULTS_FILE, SAMPLES_FILE):
        path = run_dir / name
        if path.is_file() and path.stat().st_size == 0:
            yield Finding("files", f"{path}:1", "empty file: no header line (the report "
                                                "refuses it; a run killed as it created it?)")


def check_rows_and_samples(rows: list[Row], samples: list[Row]) -> Iterator[Finding]:
    """Samples without a row (or whose row is not ok), and ok timed rows without samples.

    As the loader matches them: a replicate's samples are its attempt's (cell, replicate,
    attempt id), the last model or ceiling row of that key is theirs (rows written before
    attempt ids were kept share a key, and a resume appends)."""
    owner = {_key(r): r for r in rows if r["kind"] in ("model", "ceiling")}
    found: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for s in samples:
        found[_key(s)].append(s)
    for key, block in found.items():
        row = owner.get(key)
        first = block[0]
        where = f"{first['_source']}:{first['_line']} cell {key[0]} #r{key[1]}"
        if row is None:
            yield Finding("samples without a row", where,
                          f"{len(block)} sample(s) of attempt {key[2] or '(none)'} have no row "
                          f"in {RESULTS_FILE} (left by a kill between the samples and the row; "
                          "the report refuses them)")
        elif row["status"] != "ok":
            yield Finding("samples without a row", where,
                          f"{len(block)} sample(s) belong to a row that is not ok "
                          f"({row['_source']}:{row['_line']}, status {row['status']})")
    for r in _ok(rows):
        if _key(r) not in found:
            yield Finding("rows without samples", _where(r),
                          f"status ok but {SAMPLES_FILE} has no samples for it")


def _read(path: Path) -> list[Row]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = []
        for line, row in enumerate(csv.DictReader(f), start=2):
            row["_source"], row["_line"] = str(path), str(line)
            rows.append(row)
        return rows


def check_run(run_dir: Path) -> tuple[int, list[Finding]]:
    """All checks on one run directory: (rows checked, findings)."""
    rows = _read(run_dir / RESULTS_FILE)
    every = _read(run_dir / SAMPLES_FILE) if (run_dir / SAMPLES_FILE).exists() else []
    samples: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    shapes: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for s in every:
        if s["phase"] == "steady":
            samples[_key(s)].append(float(s["seconds"]))
            shapes[_key(s)].append(int(s["batch_size"]))
    # only ok replicates write samples, a resume never re-runs an ok one, and each attempt
    # has its own id, so each key has the samples of exactly one row
    findings = [*check_order(rows, samples), *check_cold(rows), *check_throughput(rows, shapes),
                *check_ceiling(rows), *check_flags(rows), *check_drift(rows, samples),
                *check_cache(rows), *check_empties(rows), *check_files(run_dir),
                *check_rows_and_samples(rows, every)]
    return len(rows), findings


CHECKS = ("p10<=median<=p90", "samples", "cold pass", "samples/s", "TFLOP/s < ceiling",
          "effective flags", "steady drift", "kernel cache", "failed rows", "ok rows", "files",
          "samples without a row", "rows without samples")
