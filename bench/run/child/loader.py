"""The input pipeline itself: JPEG files, decoded and augmented, batched by a DataLoader.

Why the reference recipe: torchvision's ImageNet classification recipe (its ``references/
classification/presets.py``) is what most image training starts from, so its cost per sample
is the one a buyer's model most likely pays. Training: RandomResizedCrop 224 and a horizontal
flip; evaluation: Resize 256 and CenterCrop 224; both then to a float tensor, normalised.

Files are read from the local disk (after the first pass, from the page cache): storage
bandwidth and network file systems are not part of what is measured. A file that does not
read or decode is dropped from its batch and counted (``decode_errors``); it never ends the
replicate. Classes here are module-level so a DataLoader whose workers are spawned rather than
forked can pickle them.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench import schema
from bench.run.plan import pipelines
from bench.run.plan.matrix import Cell

#: ImageNet's channel means and standard deviations, as the reference recipe normalises.
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
RESIZE = 256  # the evaluation recipe's resize before its centre crop
SEED = 0  # the generated files and the sampler's order
#: How long the main process waits for one batch from the workers before the replicate fails:
#: a worker that cannot hand its batch over never dies, so without a limit the replicate
#: would sit out the cell's whole timeout. Even one worker decoding a batch of 128 on a slow
#: core takes a few seconds.
BATCH_TIMEOUT_S = 30.0


def pillow() -> Any | None:
    """Pillow's Image module, or None where it is not installed (the ``pil`` decoder then
    skips its cells, saying so)."""
    try:
        from PIL import Image
    except ImportError:
        return None
    return Image


def torchvision_jpeg_missing() -> str | None:
    """What this torchvision lacks to read and decode JPEG files (``torchvision.io``'s
    ``read_file`` and ``decode_jpeg``), or None."""
    try:
        import torchvision.io as tio
    except Exception as exc:  # a broken install: its own words
        return f"torchvision.io does not import ({type(exc).__name__}: {exc})"[:300]
    missing = [n for n in ("read_file", "decode_jpeg") if not callable(getattr(tio, n, None))]
    return (f"this torchvision has no torchvision.io.{' or '.join(missing)}" if missing
            else None)


def transforms(torch: Any, mode: str, from_pil: bool) -> Any:
    """The reference recipe for ``mode`` (train or infer) as torchvision ``v2`` transforms,
    taking a PIL image or a uint8 CHW tensor (on any device)."""
    from torchvision.transforms import v2

    crop = pipelines.CROP
    head = ([v2.RandomResizedCrop(crop, antialias=True), v2.RandomHorizontalFlip()]
            if mode == "train" else [v2.Resize(RESIZE, antialias=True), v2.CenterCrop(crop)])
    to_tensor = [v2.PILToTensor()] if from_pil else []
    return v2.Compose([*head, *to_tensor, v2.ToDtype(torch.float32, scale=True),
                       v2.Normalize(MEAN, STD)])


class JpegFiles:
    """A map-style dataset of JPEG files: item i is the decoded, augmented image, or None when
    the file does not read or decode. ``raw`` items are the file's bytes (for a decoder that
    runs in the main process, on the device)."""

    def __init__(self, torch: Any, files: Sequence[Path], decoder: str, mode: str) -> None:
        self.files = [str(f) for f in files]
        self.decoder = decoder
        self.transform = None if decoder == "torchvision-cuda" else transforms(
            torch, mode, from_pil=decoder == "pil")

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> Any:
        import torchvision.io as tio

        path = self.files[i]
        try:
            if self.decoder == "pil":
                image_mod = pillow()
                assert image_mod is not None  # the cell was skipped otherwise
                with image_mod.open(path) as im:
                    return self.transform(im.convert("RGB"))  # type: ignore[misc]
            data = tio.read_file(path)
            if self.decoder == "torchvision-cuda":
                return data
            image = tio.decode_jpeg(data, mode=tio.ImageReadMode.RGB)
            return self.transform(image)  # type: ignore[misc]
        except Exception:  # a corrupt, truncated or non-JPEG file: dropped and counted
            return None


class Forever:
    """An endless sampler: seeded shuffles of the files, one after another, so the stopping
    rule, not the size of the folder, decides how many batches are timed."""

    def __init__(self, torch: Any, n: int, seed: int = SEED) -> None:
        self.n = n
        self.generator = torch.Generator().manual_seed(seed)
        self.randperm = torch.randperm

    def __iter__(self) -> Iterator[int]:
        while True:
            yield from self.randperm(self.n, generator=self.generator).tolist()


def collate(items: list[Any]) -> tuple[Any, int]:
    """The batch of the items that decoded, and how many did not.

    Raw files (for a decoder on the device) travel as one tensor per batch with their sizes,
    not as a tensor per file: a worker hands each tensor over as its own file descriptor, and
    16 workers with two batches each in flight of 128 files ran past the H200 host's limit of
    open files ("Bad file descriptor" in the workers, no batch ever arriving)."""
    import torch

    good = [x for x in items if x is not None]
    bad = len(items) - len(good)
    if good and good[0].dim() == 1:  # raw bytes: decoded later, on the device
        return (torch.cat(good), [int(x.numel()) for x in good]), bad
    if not good:
        return torch.empty(0, 3, pipelines.CROP, pipelines.CROP), bad
    return torch.stack(good), bad


def split(torch: Any, raw: Any) -> list[Any]:
    """A batch of raw files as ``collate`` packs it: (every file's bytes, their sizes), or an
    empty batch's tensor; back to one 1-D tensor per file (views, no copy)."""
    if not isinstance(raw, tuple):
        return []
    flat, sizes = raw
    return list(torch.split(flat, sizes))


def _context() -> Any:
    """Fork the workers on Linux, as a DataLoader there has always done (and as the fork
    server's children can: they are forked themselves); elsewhere the platform's default."""
    import multiprocessing

    if sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return None


class Feed:
    """The batches of one cell, on its device: ``next()`` gives (batch, delivered, failed).

    The iterator, and with it the workers, start at the first ``next()``: that call is the
    time to the first batch (the workers' start-up), which the caller times apart."""

    def __init__(self, torch: Any, cell: Cell, files: Sequence[Path]) -> None:
        self.torch, self.cell = torch, cell
        workers = cell.num_workers or 0
        cuda = cell.device == "cuda"
        self.dataset = JpegFiles(torch, files, cell.decoder, cell.mode)
        self.gpu_transform = transforms(torch, cell.mode, from_pil=False) if (
            cell.decoder == "torchvision-cuda") else None
        self.loader = torch.utils.data.DataLoader(
            self.dataset, batch_size=cell.batch_size, sampler=Forever(torch, len(files)),
            num_workers=workers, collate_fn=collate,
            prefetch_factor=schema.PREFETCH_FACTOR if workers else None,
            pin_memory=cuda and cell.decoder != "torchvision-cuda",
            multiprocessing_context=_context() if workers else None,
            timeout=BATCH_TIMEOUT_S if workers else 0)
        self._it: Iterator[Any] | None = None

    def next(self) -> tuple[Any, int, int]:
        if self._it is None:
            self._it = iter(self.loader)
        batch, bad = next(self._it)
        if self.gpu_transform is not None:
            batch, more = self._decode_on_device(split(self.torch, batch))
            bad += more
        elif self.cell.device != "cpu":
            batch = batch.to(self.cell.device, non_blocking=True)
        return batch, int(batch.shape[0]), bad

    def _decode_on_device(self, raw: list[Any]) -> tuple[Any, int]:
        """nvJPEG over the batch at once; a batch with a bad file is decoded file by file,
        so that only that file is dropped."""
        import torchvision.io as tio

        torch, device = self.torch, self.cell.device
        rgb = tio.ImageReadMode.RGB
        try:
            images = tio.decode_jpeg(raw, mode=rgb, device=device)
        except Exception:
            images = []
            for data in raw:
                with contextlib.suppress(Exception):
                    images.append(tio.decode_jpeg(data, mode=rgb, device=device))
        bad = len(raw) - len(images)
        if not images:
            return torch.empty(0, 3, pipelines.CROP, pipelines.CROP, device=device), bad
        assert self.gpu_transform is not None
        return torch.stack([self.gpu_transform(im) for im in images]), bad

    def close(self) -> None:
        """End the workers (they are reaped, so their CPU time is the process's children's)."""
        it, self._it = self._it, None
        shutdown = getattr(it, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()
        del it


def make_images(torch: Any, folder: Path, count: int = pipelines.GENERATED_COUNT,
                seed: int = SEED) -> str:
    """Write ``count`` JPEGs into ``folder`` (deterministic from ``seed``): smooth colour
    fields with fine noise, ImageNet's typical 500x375 at quality 90. Returns what made them.

    The files are made once per run (the first replicate that needs them) in the run's scratch
    folder, whole or not at all, and every replicate of the run reads the same files."""
    if (folder / "done").is_file():
        return (folder / "done").read_text(encoding="utf-8")
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    width, height = pipelines.GENERATED_SIZE
    g = torch.Generator().manual_seed(seed)
    encoder = "Pillow" if _numpy_and_pillow() else "torchvision.io.encode_jpeg"
    for i in range(count):
        coarse = torch.rand(1, 3, 6, 8, generator=g) * 255
        field = torch.nn.functional.interpolate(coarse, size=(height, width), mode="bicubic",
                                                align_corners=False)[0]
        noise = torch.randn(3, height, width, generator=g) * 12
        image = (field + noise).clamp(0, 255).to(torch.uint8)
        _write_jpeg(torch, image, tmp / f"img_{i:05d}.jpg")
    what = (f"{count} JPEGs made at run time (seed {seed}, {width}x{height}, quality "
            f"{pipelines.GENERATED_QUALITY}, {encoder})")
    (tmp / "done").write_text(what, encoding="utf-8")
    os.replace(tmp, folder)
    return what


def _numpy_and_pillow() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return pillow() is not None


def _write_jpeg(torch: Any, image: Any, path: Path) -> None:
    """One CHW uint8 image as a JPEG file: Pillow where it is installed, else torchvision."""
    quality = pipelines.GENERATED_QUALITY
    if _numpy_and_pillow():
        image_mod = pillow()
        assert image_mod is not None
        image_mod.fromarray(image.permute(1, 2, 0).contiguous().numpy()).save(
            path, format="JPEG", quality=quality)
        return
    import torchvision.io as tio

    path.write_bytes(bytes(tio.encode_jpeg(image, quality=quality).tolist()))
