"""The input pipeline with real torch on the CPU: a few JPEGs, a few batches, fast."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.run.child import loader, worker
from bench.run.plan import pipelines, profiles
from bench.run.plan.matrix import Cell, ProfileError, Settings
from bench.run.protocol import Task

torch = pytest.importorskip("torch")

TINY = Settings(replicates=1, warmup_iters=0, min_iters=3, min_time_s=0.0, max_iters=4,
                max_time_s=0.2, timeout_s=60)


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Eight small generated JPEGs, plus a corrupt, a truncated and a non-JPEG file."""
    folder = tmp_path_factory.mktemp("pipeline") / "images"
    loader.make_images(torch, folder, count=8)
    good = (folder / "img_00000.jpg").read_bytes()
    (folder / "corrupt.jpg").write_bytes(good[:200] + b"\x00garbage" * 50 + good[-200:])
    (folder / "truncated.jpg").write_bytes(good[: len(good) // 4])
    (folder / "notes.jpeg").write_text("this is not an image", encoding="utf-8")
    return folder


def _cell(images: Path, **axes: object) -> Cell:
    spec = {"studies": {"p": {"kind": "pipeline", "device": "cpu", "batch_size": 4,
                              "images": str(images), **axes}}}
    (cell,) = profiles.parse_profile(spec, "t").studies[0].cells
    return cell


def _run(cell: Cell, tmp_path: Path) -> object:
    task = Task("measure", cell, TINY, 0, str(tmp_path / "r.result.json"),
                str(tmp_path / "r.log"))
    return worker.run_task(task)


@pytest.mark.parametrize(("decoder", "mode", "workers"),
                         [("pil", "train", 0), ("torchvision", "infer", 1)])
def test_a_real_pipeline_delivers_batches_and_counts_bad_files(
        images: Path, tmp_path: Path, decoder: str, mode: str, workers: int) -> None:
    cell = _cell(images, decoder=decoder, mode=mode, num_workers=workers)
    record = _run(cell, tmp_path)
    assert record.status == "ok", record.reason  # type: ignore[attr-defined]
    m = record.metrics  # type: ignore[attr-defined]
    assert m.samples_per_s > 0 and m.cold_first_iter_s > 0 and m.steady_iters >= 3
    # 11 files, 3 of them bad, batches of 4 drawn from endless shuffles: at least one bad
    # file is met in the 4+ batches timed, and none ends the replicate
    assert m.decode_errors >= 1
    assert any("did not decode" in n for n in record.notes)  # type: ignore[attr-defined]
    steady = [s for s in record.samples if s.phase == "steady"]  # type: ignore[attr-defined]
    assert all(0 <= s.batch_size <= 4 for s in steady)


@pytest.mark.parametrize("workers", [2, 3])
def test_the_window_starts_past_the_workers_start_up_and_holds_whole_rounds(
        images: Path, tmp_path: Path, workers: int) -> None:
    """The first pass and the warm-up take the batches the workers were handed at start-up
    (two each, a burst): the first timed batch is the next one; then whole rounds, two at
    least, even where the study asks for 3 iterations at most 4."""
    record = _run(_cell(images, num_workers=workers), tmp_path)
    assert record.status == "ok", record.reason  # type: ignore[attr-defined]
    steady = [s for s in record.samples if s.phase == "steady"]  # type: ignore[attr-defined]
    assert steady[0].iter == 2 * workers
    assert len(steady) % workers == 0 and len(steady) >= 2 * workers
    assert record.metrics.steady_iters == len(steady)  # type: ignore[attr-defined]


def test_the_feeding_rule_rounds_to_whole_rounds() -> None:
    st = Settings(warmup_iters=0, min_iters=3, max_iters=4)
    assert st.feeding(0) == st  # the main process alone: nothing arrives in a burst
    assert (st.feeding(1).warmup_iters, st.feeding(1).min_iters) == (1, 3)
    assert (st.feeding(3).warmup_iters, st.feeding(3).min_iters) == (5, 6)
    assert st.feeding(16).max_iters == 32
    asks_more = Settings(warmup_iters=6, min_iters=10, max_iters=300).feeding(4)
    assert (asks_more.warmup_iters, asks_more.min_iters) == (7, 12)  # 1 + 7 and 12: rounds


def test_a_folder_where_nothing_decodes_is_an_error_not_a_rate_of_zero(tmp_path: Path) -> None:
    """Files named .jpg that no decoder reads: every batch comes back empty. The replicate
    measured no pipeline, so it fails saying so rather than reading 0 samples/s."""
    folder = tmp_path / "images"
    folder.mkdir()
    for i in range(5):
        (folder / f"f{i}.jpg").write_text(f"not a jpeg {i}", encoding="utf-8")
    record = _run(_cell(folder, num_workers=0, batch_size=2), tmp_path)
    assert record.status == "error"  # type: ignore[attr-defined]
    assert "no file decoded in the timed window" in record.reason  # type: ignore[attr-defined]
    assert record.metrics.samples_per_s is None  # type: ignore[attr-defined]


def test_a_torchvision_without_its_jpeg_decoder_skips_its_decoders(
        images: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torchvision deprecated its image decoding in 0.29: where ``decode_jpeg`` is gone, the
    torchvision decoders' cells are skipped, saying why, and Pillow's still run (without the
    check, every file would read as a bad one)."""
    import torchvision.io

    from bench.run.child import feeding

    monkeypatch.delattr(torchvision.io, "decode_jpeg")
    reason = feeding.skip_reason(_cell(images, decoder="torchvision"))
    assert reason is not None and reason.startswith("no-decode-jpeg: ")
    assert "torchvision.io.decode_jpeg" in reason
    assert feeding.skip_reason(_cell(images, decoder="pil")) is None


def test_an_end_to_end_cell_feeds_the_model_and_says_how_long_it_waited(
        images: Path, tmp_path: Path) -> None:
    spec = {"studies": {"e": {"kind": "e2e", "model": "mobilenet_v3_small", "mode": "infer",
                              "batch_size": 2, "images": str(images), "num_workers": 0}}}
    (cell,) = profiles.parse_profile(spec, "t").studies[0].cells
    record = _run(cell, tmp_path)
    assert record.status == "ok", record.reason  # type: ignore[attr-defined]
    m = record.metrics  # type: ignore[attr-defined]
    assert 0.0 < m.data_wait_frac < 1.0 and m.samples_per_s > 0


def test_a_folder_without_jpegs_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "readme.txt").write_text("no images here", encoding="utf-8")
    with pytest.raises(ProfileError) as err:
        _cell(tmp_path)
    text = str(err.value)
    assert "holds no JPEG files" in text and "\n" not in text and "*.jpg" in text
    with pytest.raises(ProfileError, match="does not exist"):
        _cell(tmp_path / "missing")


def test_pipeline_axes_collapse_and_bad_combinations_are_refused(images: Path) -> None:
    cell = _cell(images, precision="amp-bf16", model="resnet50", num_workers=2)
    assert (cell.model, cell.precision, cell.decoder) == (pipelines.PIPELINE_MODEL, "fp32", "pil")
    assert cell.name.startswith("pipeline cpu infer b4 workers=2 pil")
    with pytest.raises(ProfileError, match="torchvision-cuda decodes on a CUDA device"):
        _cell(images, decoder="torchvision-cuda")
    with pytest.raises(ProfileError, match="valid choices: pil, torchvision"):
        _cell(images, decoder="turbo")
    with pytest.raises(ProfileError, match="num_workers must be an integer from 0"):
        _cell(images, num_workers=-1)
    # a model cell's id does not move: the pipeline axes leave it alone at their defaults
    assert Cell(model="resnet50", batch_size=8).cell_id == "9c057ae1f3"  # as before the axes


def test_generated_images_are_deterministic(tmp_path: Path) -> None:
    a = loader.make_images(torch, tmp_path / "a", count=2)
    loader.make_images(torch, tmp_path / "b", count=2)
    assert "2 JPEGs made at run time (seed 0, 500x375, quality 90" in a
    for name in ("img_00000.jpg", "img_00001.jpg"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert len(pipelines.list_images(tmp_path / "a")) == 2


def test_device_decoding_drops_only_the_bad_files(images: Path) -> None:
    """The nvJPEG path (workers read bytes, the main process decodes the batch and augments
    it where the batch lives), run on the CPU: torchvision's batched decode_jpeg takes the
    same list there, so the path is exercised without a GPU."""
    cell = Cell(kind="pipeline", model=pipelines.PIPELINE_MODEL, mode="train", batch_size=11,
                num_workers=0, decoder="torchvision-cuda", resolution=224)
    feed = loader.Feed(torch, cell, pipelines.list_images(images))
    try:
        batch, delivered, bad = feed.next()  # all 11 files: 3 of them bad
    finally:
        feed.close()
    assert (delivered, bad) == (8, 3)
    assert tuple(batch.shape) == (8, 3, 224, 224) and batch.dtype == torch.float32


_FEW_FDS = """
import resource, sys
from pathlib import Path
import torch
from bench.run.plan import pipelines
from bench.run.child import loader
from bench.run.plan.matrix import Cell
resource.setrlimit(resource.RLIMIT_NOFILE, (96, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
cell = Cell(kind="pipeline", model=pipelines.PIPELINE_MODEL, mode="train", batch_size=64,
            num_workers=4, decoder="torchvision-cuda", resolution=224)
feed = loader.Feed(torch, cell, pipelines.list_images(Path(sys.argv[1])) * 8)
try:
    for _ in range(3):
        batch, delivered, bad = feed.next()
        assert delivered + bad == 64, (delivered, bad)
finally:
    feed.close()
print("ok")
"""


def test_device_decoding_workers_hand_over_a_batch_in_one_piece(images: Path) -> None:
    """Raw files cross from the workers as one tensor per batch: as a tensor per file, 4
    workers with two batches of 64 in flight need 512 file descriptors, and under a limit of
    96 (the H200 host's limit met 16 workers at batch 128 the same way) no batch arrived."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FEW_FDS, str(images)], capture_output=True,
                          text=True, timeout=90, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_a_cuda_decoder_cell_is_skipped_without_cuda(images: Path, tmp_path: Path) -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    spec = {"studies": {"p": {"kind": "pipeline", "device": "cuda", "batch_size": 2,
                              "images": str(images), "decoder": "torchvision-cuda",
                              "cudnn_benchmark": "off", "cudnn_deterministic": "off"}}}
    (cell,) = profiles.parse_profile(spec, "t").studies[0].cells
    record = _run(cell, tmp_path)
    assert (record.status, record.reason) == ("skipped", "no-cuda")  # type: ignore[attr-defined]


@pytest.mark.e2e
def test_a_pipeline_study_runs_under_the_fork_server_and_checks_clean(images: Path,
                                                                      tmp_path: Path) -> None:
    """The runner's whole path: the loader's workers forked from a fork server's child, the
    rows and samples written, and ``bench check`` holding them to the timed kinds' rules."""
    from .conftest import run_cli

    profile = tmp_path / "pipe.toml"
    profile.write_text(f"""
[defaults]
device = "cpu"
replicates = 1
warmup_iters = 0
min_iters = 3
min_time_s = 0.0
max_iters = 4
max_time_s = 0.2
[studies.pipe]
kind = "pipeline"
images = "{images}"
batch_size = 4
num_workers = [0, 1]
""", encoding="utf-8")
    out = tmp_path / "run"
    proc = run_cli("run", "--profile", str(profile), "--out", str(out), timeout=240)
    assert proc.returncode == 0, proc.stderr
    rows = (out / "results.csv").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 3 and all(",pipeline," in r and ",ok," in r for r in rows[1:])
    check = run_cli("check", str(out), timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
