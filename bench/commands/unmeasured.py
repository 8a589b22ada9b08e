"""What ``bench run`` and ``bench advise`` say at their end of the cells they did not measure:
one line per distinct reason (``bench.run.store.reasons``), each with what to do about it in
the command's own options. The hints live here, beside the commands whose options they name;
the grouping lives with the run's rows, standard library only.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from bench.commands.advise_plan import MIN_TIMEOUT_S, TIMEOUT_FACTOR
from bench.run.store import reasons
from bench.schema import Status

#: What to do, per status, after ``bench run``: its options and the profile's settings.
RUN: Mapping[str, str] = {
    Status.OOM: "lower batch_size (or resolution) for that study in the profile, or measure "
                "it on a device with more memory",
    Status.TIMEOUT: "raise timeout_s (the seconds a replicate may run) in the profile's "
                    "[defaults] or the study's table, then --resume runs it again",
    Status.CRASH: "the replicate's process ended without a result (a signal such as SIGSEGV "
                  "or SIGKILL, or an exit of its own; its last output, if it printed any, "
                  "ends the reason and is kept in logs/); once the cause is fixed, --resume "
                  "runs it again",
    Status.ERROR: "the workload raised this (for your own model, its code or its "
                  "input_shape, inputs or loss); the log holds the child's output; once "
                  "fixed, --resume runs the failed replicates again",
    Status.SKIPPED: "this machine cannot run the cell as asked (its device is not here, a "
                    "package or compiler it needs is missing, or the setting does not apply "
                    "to the model); --resume does not retry it: measure it where it can run, "
                    "or leave its study out with --only",
    Status.INTERRUPTED: "a signal stopped the run during it; --resume runs it again",
}

#: What to do, per status, after ``bench advise``: its options (a run of its own, never
#: resumed).
ADVISE: Mapping[str, str] = {
    Status.OOM: "ask for a smaller --batch-size (or a smaller --input-shape)",
    Status.TIMEOUT: f"advise ends a replicate after {TIMEOUT_FACTOR:g} times its estimate (at "
                    f"least {MIN_TIMEOUT_S:g} s); to allow more, write the plan with "
                    f"--write-profile PATH, raise timeout_s in it and measure it with "
                    f"`python -m bench run --profile PATH`",
    Status.CRASH: "the replicate's process ended without a result (a signal such as SIGSEGV "
                  "or SIGKILL, or an exit of its own; its last output, if it printed any, "
                  "ends the reason and is kept in logs/); run advise again once the cause is "
                  "fixed",
    Status.ERROR: "the model's step raised this (for your own model, its code, or "
                  "--input-shape, --inputs or --loss); the log holds the child's output; run "
                  "advise again once it is fixed",
    Status.SKIPPED: "this machine cannot run the cell as asked (see the reason: a device, a "
                    "package or a compiler it needs); install what it names, or ask for "
                    "another --device",
    Status.INTERRUPTED: "a signal stopped it; run advise again (it starts a new run)",
}


def feed_hints(timeout_s: float) -> Mapping[str, str]:
    """What to do after ``bench advise --images``, whose replicates may each run
    ``timeout_s``: no input shape to change, and a timeout that no option raises."""
    return {**ADVISE,
            Status.OOM: "ask for a smaller --batch-size",
            Status.TIMEOUT: f"advise --images allows each replicate {timeout_s:g} s, far "
                            f"more than its measuring takes: the process hung (the log "
                            f"holds its last output); run advise again",
            Status.ERROR: "the model's step or the input pipeline raised this (a file of "
                          "--images it could not read, for one); the log holds the child's "
                          "output; run advise again once it is fixed"}


def say(run_dir: Path, hints: Mapping[str, str], stream: TextIO | None = None) -> bool:
    """Print why cells of the run in ``run_dir`` were not measured (``reasons.ending_lines``)
    on ``stream``, standard error by default, after what standard output holds so far;
    whether there was anything to say."""
    found = reasons.ending_lines(run_dir, hints)
    if found:
        sys.stdout.flush()  # the answer on stdout first, where both go to one file
        for line in found:
            print(line, file=stream or sys.stderr)
    return bool(found)
