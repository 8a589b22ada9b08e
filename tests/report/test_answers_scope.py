"""An answer's scope in words: modes measured at different batches are each given theirs."""

from __future__ import annotations

import pandas as pd

from bench.report.judge.common import scope_of
from bench.report.render.words.answers import short_scope
from bench.report.render.words.labels import scope


def test_modes_measured_at_different_batches_each_get_their_own() -> None:
    """The H200's CPU-vs-GPU answer read "infer and train, fp32, batch 1 to 128": training
    was measured at batch 1 only."""
    frame = pd.DataFrame({"model": ["resnet50"] * 4, "mode": ["infer", "infer", "infer", "train"],
                          "precision": ["fp32"] * 4, "batch_size": [1, 16, 128, 1]})
    found = scope_of(frame)
    assert short_scope(found) == "resnet50, fp32, infer at batch 1 to 128 and train at batch 1"
    assert "infer at" not in scope(found) and "batch 1, 16, 128" in scope(found)
    same = scope_of(frame.assign(mode=["infer", "infer", "train", "train"],
                                 batch_size=[1, 128, 1, 128]))
    assert short_scope(same) == "resnet50, infer and train, fp32, batch 1 to 128"
