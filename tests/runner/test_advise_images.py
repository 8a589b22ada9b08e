"""``bench advise MODEL --images DIR``: how many loader workers the model needs here, for real
(a tiny model and a few generated JPEGs), and its refusals in one line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench.commands import feed
from bench.report.judge.feeding import CoresToFeed, Delivered, Rate
from bench.report.vocabulary import Feeding

from .conftest import run_cli

pytestmark = pytest.mark.e2e


def test_a_real_advise_run_names_the_workers(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from bench.run.child import loader

    loader.make_images(torch, tmp_path / "images", count=6)
    out = tmp_path / "machine" / "run"
    proc = run_cli("advise", "mobilenet_v3_small", "--device", "cpu", "--mode", "infer",
                   "--batch-size", "2", "--images", str(tmp_path / "images"), "--out",
                   str(out), timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "mobilenet_v3_small infer at batch 2 on cpu consumes" in text
    assert "Your images through the infer recipe" in text
    assert "Answer:" in text and ("loader worker" in text or "short" in text)
    rows = (out / "results.csv").read_text(encoding="utf-8")
    assert ",pipeline," in rows and rows.count(",ok,") >= 6


@pytest.mark.parametrize(("model", "make", "message"), [
    ("resnet18", False, "holds no JPEG files"),
    ("resnet18", None, "does not exist"),
    ("tests/advise/model.py:build", True, "needs a torchvision image model"),
])
def test_bad_images_or_models_are_one_line(tmp_path: Path, model: str, make: bool | None,
                                           message: str) -> None:
    folder = tmp_path / "images"
    if make is not None:
        folder.mkdir()
        (folder / "readme.txt").write_text("no images", encoding="utf-8")
    proc = run_cli("advise", model, "--images", str(folder), timeout=60)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert not list(tmp_path.glob("reports*"))  # nothing written


def test_worker_counts_reach_the_cores() -> None:
    assert feed.worker_counts(1) == [0, 1]
    assert feed.worker_counts(2) == [0, 1, 2]
    assert feed.worker_counts(6) == [0, 1, 2, 4, 6]
    assert feed.worker_counts(16) == [0, 1, 2, 4, 8, 16]


def test_the_answer_says_the_count_or_the_shortfall() -> None:
    fed = CoresToFeed(Feeding.FED, Rate(100.0, 90.0, 110.0, 3), 4, 2,
                      Delivered(2, Rate(120.0, 110.0, 130.0, 3)), None, 4)
    text = feed.answer_text("resnet50", "train", 16, "cpu", fed, 4, 12.0)
    assert "DataLoader(num_workers=2)" in text and "120 samples/s (95% CI 110-130)" in text
    assert "2 loader workers (DataLoader(num_workers=2)) feed it" in text
    one = CoresToFeed(Feeding.FED, Rate(100.0, 90.0, 110.0, 3), 4, 1,
                      Delivered(1, Rate(120.0, 110.0, 130.0, 3)), None, 4)
    text = feed.answer_text("resnet50", "train", 16, "cpu", one, 4, 12.0)
    assert "with 1 worker." in text and "1 loader worker (DataLoader(num_workers=1)) feeds" in text
    serial = CoresToFeed(Feeding.FED, Rate(100.0, 90.0, 110.0, 3), 4, 1,
                         Delivered(1, Rate(120.0, 110.0, 130.0, 3)), None, 4,
                         Delivered(0, Rate(300.0, 290.0, 310.0, 3)))
    text = feed.answer_text("resnet50", "train", 16, "cpu", serial, 4, 12.0)
    assert "With 0 workers" in text and "at 300 samples/s" in text
    assert "wait for its data 25% of the time" in text  # 1/300 of each 1/100 + 1/300
    assert "With 0 workers" not in feed.answer_text("resnet50", "train", 16, "cpu", one, 4, 1.0)
    short = CoresToFeed(Feeding.SHORT, Rate(500.0, 480.0, 520.0, 3), 4, None,
                        Delivered(4, Rate(300.0, math.nan, math.nan, 3)), 200.0, 4)
    text = feed.answer_text("resnet50", "train", 16, "cpu", short, 4, 12.0)
    assert "more than this host has" in text and "200 samples/s short" in text
