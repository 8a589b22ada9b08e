"""FolderRead folders read together (``input.batch``) give exactly what each read on its own gives:
the same typed rows and samples, the same problems at the same lines, the same errors; and the
clean folders really are read together, not each on its own."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from bench.report.input import batch, folder
from bench.report.input.errors import LoadError

from .builders import axes, cell, env_for
from .test_load import _set_field


@pytest.fixture
def tree(write_tree) -> tuple[Path, list[Path]]:
    """Seven current-version runs: three clean, one with a bad row, one with a bad sample, one
    whose rows name another machine than its env.json and one with a sample of another run
    than its row's (checks across a folder's files)."""
    runs = []
    for n in range(7):
        env = env_for(f"box-{n}", "run-1")
        rows = cell(env, axes(), [0.1, 0.11, 0.1]) + cell(env, axes(batch_size=8), [0.05] * 3)
        runs.append((env, rows, []))
    root = write_tree(runs)
    paths = sorted(root.rglob("results.csv"))
    _set_field(paths[3], 3, "status", "exploded")
    _set_field(paths[4].with_name("samples.csv"), 4, "seconds", "-1")
    _set_field(paths[5], 5, "machine", "another-box")
    _set_field(paths[6].with_name("samples.csv"), 3, "run_id", "run-2")
    return root, paths


def _same(a: folder.FolderRead | LoadError, b: folder.FolderRead | LoadError) -> None:
    if isinstance(a, LoadError) or isinstance(b, LoadError):
        assert str(a) == str(b)
        return
    pd.testing.assert_frame_equal(a.results, b.results)
    pd.testing.assert_frame_equal(a.samples, b.samples)
    assert (a.files, a.env, a.skipped) == (b.files, b.env, b.skipped)


@pytest.mark.parametrize("skip_bad", [False, True])
def test_a_batch_gives_what_each_folder_read_alone_gives(tree, monkeypatch, skip_bad):
    root, paths = tree
    alone = [folder.read_run(root, p, skip_bad=skip_bad) for p in paths]
    read_alone: list[Path] = []

    def counted(root: Path, path: Path, *, skip_bad: bool) -> folder.FolderRead | LoadError:
        read_alone.append(path)
        return folder.read_run(root, path, skip_bad=skip_bad)

    monkeypatch.setattr(batch, "read_run", counted)
    together = batch.read_runs(root, paths, skip_bad=skip_bad)
    for a, b in zip(together, alone, strict=True):
        _same(a, b)
    # the bad row and the bad sample send their folders to be read alone; the last two are
    # clean file by file, so the batch reads them and their own checks name the problem
    assert read_alone == paths[3:5]
    outcome = {p.parent.parent.name: r for p, r in zip(paths, together)}
    if skip_bad:
        assert [len(outcome[f"box-{n}"].skipped) > 0 for n in range(7)] == [False] * 3 + [True] * 4
    else:
        assert [isinstance(outcome[f"box-{n}"], LoadError) for n in range(7)] == (
            [False] * 3 + [True] * 4)
        assert "another-box" in str(outcome["box-5"])
        assert "run_id 'run-2' differs from its row's" in str(outcome["box-6"])


def test_an_older_version_or_a_text_column_is_read_alone(tree, monkeypatch):
    """A file migrated from an older version, or with text in a number column, is not plain:
    its folder is read on its own, which names or migrates it."""
    root, paths = tree
    _set_field(paths[0], 2, "steady_median_s", "fast")
    _set_field(paths[1], 2, "schema_version", "1")
    assert batch._plain(root, paths[0]) is None
    assert batch._plain(root, paths[1]) is None
    assert batch._plain(root, paths[2]) is not None
