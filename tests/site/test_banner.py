"""The older-run banner on a tree of many machines: it names a few fingerprints and counts the
rest, so the first screen still reaches the page's answer."""

from __future__ import annotations

from bench import schema
from bench.report.judge.machines import Machine
from bench.report.render.words.context import NAMED, banner


def _outdated(n: int) -> Machine:
    old = str(int(schema.WORKLOAD_VERSION) - 1)
    return Machine(page=f"box-{n:03d}-abcdef12", machine=f"box-{n:03d}",
                   fingerprint_id="abcdef12", title=f"box-{n:03d} abcdef12", hardware="cpu",
                   outdated=(old, str(schema.WORKLOAD_VERSION)), torch="2.14.1",
                   first_day="2026-11-01", last_day="2026-11-01", runs=5, profile="cpu")


def test_many_older_fingerprints_are_counted_past_the_first_few() -> None:
    [older] = banner([_outdated(n) for n in range(100)])
    text = older["text"]
    named = [f"box-{n:03d} abcdef12: 5 runs of 2026-11-01" for n in range(NAMED)]
    assert all(name in text for name in named)
    assert f"box-{NAMED:03d}" not in text
    assert f"and {100 - NAMED} more fingerprints (the Data page lists every run)" in text
    assert older["command"] == "`python -m bench run --profile cpu`"


def test_a_few_older_fingerprints_are_all_named() -> None:
    [older] = banner([_outdated(n) for n in range(NAMED)])
    assert all(f"box-{n:03d} abcdef12" in older["text"] for n in range(NAMED))
    assert "more fingerprint" not in older["text"]
