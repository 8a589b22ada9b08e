"""Speed target: the full report build over 500 runs (75,000 result rows) in at most 8 times
the time pandas takes to read the same CSVs. A script, not a test.

Writes a synthetic results tree (fixtures, never published: every row says ``profile
synthetic``, its machines are named ``synthetic-*``) of many machines that joined, each with
a few runs of one slice of a contributed matrix (``tests/fixtures/synth.py`` writes each run:
three replicates a cell, ten samples a replicate, every failure status represented), then
times ``bench.report.build.build`` as ``python -m bench report`` runs it: loading and
validation, statistics and bootstraps, advice, every page and chart, and ``mkdocs build
--strict`` (``--no-mkdocs`` leaves MkDocs out, to show its share). The floor is pandas reading
every ``results.csv`` and ``samples.csv`` of the tree, typed as the loader reads them, in one
process. The tree is written before the clock starts; the project copy (mkdocs.yml and
site_src/) lives in a temporary folder so the working tree is untouched.

Each machine runs a software stack of its own, so each is a fingerprint of its own: the
pages give every fingerprint its own sections and charts, so this is the costliest tree of
its size. ``--shared-stacks`` builds the other end, every machine of a model on one stack
(four fingerprints), to show how much of the time the fingerprints take rather than the rows.

Exits 1 when the build takes more than ``TARGET_RATIO`` times the floor, naming the target.

    python tests/speed/report_build.py [--runs N] [--rows N] [--no-mkdocs] [--shared-stacks]
                                       [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "fixtures")]

import synth  # noqa: E402

from bench import schema  # noqa: E402

#: The build may take this many times what pandas takes to read the same CSVs.
TARGET_RATIO = 8.0
#: Runs per machine: a machine joins, then measures again now and then.
RUNS_PER_MACHINE = 5
#: The hardware models machines join with (None: a machine without a GPU).
MODELS = ("Synthetic GPU A", "Synthetic GPU B", "Synthetic GPU C", None)
REPLICATES = 3


def contributed_matrix(gpu: bool) -> pd.DataFrame:
    """The cells a contributed run picks from: static shapes, cuDNN non-deterministic, every
    model, mode, batch, precision and layout (and cudnn.benchmark on a GPU), each workload's
    CPU cells beside its GPU cells so that a slice holds both sides of most workloads."""
    cells = synth._syn_cells(10**9)
    cells = cells.loc[(cells.shapes == "static") & (cells.cudnn_deterministic != "on")]
    if not gpu:
        cells = cells.loc[cells.device == "cpu"]
    return cells.reset_index(drop=True)


def write_tree(root: Path, runs: int, rows: int, seed: int = 0, *,
               shared_stacks: bool = False) -> int:
    """Write ``runs`` synthetic runs of about ``rows`` rows in all under ``root``; the number
    of machines they are on. Each machine runs a software stack of its own, so each is a
    fingerprint of its own (the most fingerprints, and so the most page sections, such a tree
    can give); with ``shared_stacks`` every machine of a model runs one stack, so they share
    its fingerprint, as the real one (which hashes the stack, never the host) would give
    them."""
    rng = np.random.default_rng(seed)
    per_run = max(1, rows // (runs * REPLICATES))
    matrices = {gpu: contributed_matrix(gpu) for gpu in (True, False)}
    machines = -(-runs // RUNS_PER_MACHINE)
    for n in range(runs):
        m = n % machines
        gpu = MODELS[m % len(MODELS)]
        machine = f"synthetic-{'gpu' if gpu else 'cpu'}-{m:03d}"
        run_id = f"synthetic-{n:03d}"
        matrix = matrices[gpu is not None]
        # each machine its own slice of the matrix, each of its runs half on the last one's
        start = (m * 7 + n // machines) * (per_run // 2) % len(matrix)
        cells = matrix.iloc[np.arange(start, start + per_run) % len(matrix)]
        env = synth.make_env(machine, run_id, gpu=gpu, cpu_model="Synthetic CPU", cores=8,
                             torch_version="2.14.1", collected_at=synth.EPOCH.isoformat(),
                             profile="synthetic")
        env["machine_uid"] = f"{m + 1:016x}"  # as a real run records it: its runs, one machine
        if shared_stacks:
            env["fingerprint_id"] = synth.fingerprint_for({**env, "machine": None})
        synth._write_synthetic_run(root / machine / run_id, cells.reset_index(drop=True), env,
                                   REPLICATES, rng)
    return machines


def read_floor(root: Path) -> tuple[float, int, int]:
    """Seconds pandas takes to read every results.csv and samples.csv under ``root`` (typed as
    the loader reads them: numbers as float64, the rest as text), and the rows of each."""
    options = {"keep_default_na": False, "na_values": [""], "encoding": "utf-8"}
    numeric = {*schema.NUMERIC_COLUMNS, *schema.INTEGER_COLUMNS}
    sample_numeric = {c.name for c in schema.SAMPLE_SPEC if c.type in ("float", "int")}
    typed = {c: ("float64" if c in numeric else str) for c in schema.RESULT_COLUMNS}
    sample_typed = {c: ("float64" if c in sample_numeric else str)
                    for c in schema.SAMPLE_COLUMNS}
    t0 = time.perf_counter()
    n_results = n_samples = 0
    for path in sorted(root.rglob(schema.RESULTS_FILE)):
        n_results += len(pd.read_csv(path, dtype=typed, **options))
        n_samples += len(pd.read_csv(path.with_name(schema.SAMPLES_FILE), dtype=sample_typed,
                                     **options))
    return time.perf_counter() - t0, n_results, n_samples


def timed_build(work: Path, reports: Path, *, mkdocs: bool) -> float:
    """Seconds ``bench.report.build.build`` takes on ``reports``, its imports included."""
    project = work / "project"
    if project.exists():
        shutil.rmtree(project)
    project.mkdir(parents=True)
    shutil.copy(ROOT / "mkdocs.yml", project / "mkdocs.yml")
    shutil.copytree(ROOT / "site_src", project / "site_src",
                    ignore=shutil.ignore_patterns("generated"))
    t0 = time.perf_counter()
    from bench.report import build  # imports (pandas, scipy, matplotlib, jinja2) are timed

    build.build(reports, project / "site", docs_dir=project / "site_src",
                config=project / "mkdocs.yml", run_mkdocs=mkdocs, quiet=True)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=500, help="run folders (default 500)")
    parser.add_argument("--rows", type=int, default=75_000,
                        help="result rows in all (default 75000)")
    parser.add_argument("--no-mkdocs", action="store_true",
                        help="time the build without MkDocs (pages and charts only)")
    parser.add_argument("--shared-stacks", action="store_true",
                        help="every machine of a model on one software stack, so one "
                             "fingerprint per model (default: a stack, and a fingerprint, "
                             "per machine)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="build in this folder and keep it (default: a temporary folder)")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="torch-knobs-speed-"))
    try:
        reports = work / "reports"
        if reports.exists():
            shutil.rmtree(reports)
        t0 = time.perf_counter()
        machines = write_tree(reports, args.runs, args.rows,
                              shared_stacks=args.shared_stacks)
        written = time.perf_counter() - t0
        floor, n_results, n_samples = read_floor(reports)
        elapsed = timed_build(work, reports, mkdocs=not args.no_mkdocs)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)

    ratio = elapsed / floor
    what = "pages, charts" if args.no_mkdocs else "pages, charts, mkdocs --strict"
    stacks = "one stack per model" if args.shared_stacks else "a stack per machine"
    print(f"synthetic tree: {args.runs} runs on {machines} machines ({stacks}), "
          f"{n_results:,} rows, {n_samples:,} samples, written in {written:.1f} s (not timed)")
    print(f"pandas reading its CSVs (the floor): {floor:.2f} s")
    print(f"report build (load, stats, advice, {what}): {elapsed:.1f} s")
    verdict = "within" if ratio <= TARGET_RATIO else "OVER"
    print(f"build / floor: {ratio:.1f}x (target <= {TARGET_RATIO:.0f}x the floor: {verdict})")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
