"""Speed target: the whole test suite in <= 6 minutes of wall time on a 2-core machine. A
script, not a test: it runs the suite.

It runs pytest with the arguments of the ``tests`` nox session (``PYTEST_ARGS`` in
``noxfile.py``: two xdist workers), with the interpreter running this script, and prints the
wall time against the target with pytest's summary line and the slowest tests. The time
counts from the start of pytest to its end, installs excluded, as ``nox -s tests`` spends it
after its installs.

    python tests/speed/suite_time.py [PYTEST_ARG ...]   # extra arguments go to pytest
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TARGET_S = 6 * 60.0


def session_args(noxfile: Path = ROOT / "noxfile.py") -> list[str]:
    """``PYTEST_ARGS`` as the noxfile defines it, read without importing nox."""
    for node in ast.parse(noxfile.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "PYTEST_ARGS" for t in node.targets):
            return [str(a) for a in ast.literal_eval(node.value)]
    raise SystemExit(f"{noxfile} defines no PYTEST_ARGS")


def summary(output: str) -> str:
    """pytest's last line (``N passed, M skipped in S s``), or a note that there was none."""
    lines = [ln.strip("= ") for ln in output.splitlines() if ln.strip()]
    return lines[-1] if lines else "(pytest printed nothing)"


def main(extra: list[str]) -> int:
    command = [sys.executable, "-m", "pytest", *session_args(), "-q", "--durations=15",
               "-p", "no:cacheprovider", *extra]
    print("running:", " ".join(command[1:]), flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    out = proc.stdout + proc.stderr
    slowest = re.search(r"^=+ (slowest \d+ durations) =+$(.*?)^$", out, re.M | re.S)
    if slowest:
        print(slowest.group(1) + ":" + slowest.group(2).rstrip())
    print(f"pytest: {summary(out)} (exit {proc.returncode})")
    verdict = "within" if wall <= TARGET_S else "OVER"
    print(f"test suite: {wall / 60:.1f} min wall ({wall:.0f} s), target <= "
          f"{TARGET_S / 60:.0f} min: {verdict}")
    if proc.returncode != 0:
        print(out[-4000:], file=sys.stderr)
    return 0 if proc.returncode == 0 and wall <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
