"""The input-pipeline cells, as data: what a ``pipeline`` or ``e2e`` cell measures and which
of its axes apply (no torch here; the child's ``loader`` module runs them).

A ``pipeline`` cell times JPEG files decoded and augmented by a ``torch.utils.data.DataLoader``
alone: the batches it delivers per second, its workers' start-up, its CPU time and memory. An
``e2e`` cell feeds the same batches to the model's step on the device, so its rate can be set
against the same model's synthetic-input rate. The model axes do not apply to a pipeline cell
(it names no model: ``model`` reads ``pipeline``); its ``mode`` names the recipe, torchvision's
ImageNet reference one: ``train`` (RandomResizedCrop 224, horizontal flip) or ``infer`` (Resize
256, CenterCrop 224), both then to a tensor and normalised.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Final, TypeVar

#: A ``bench.run.plan.matrix.Cell`` (not imported: the matrix imports this module).
Cell = TypeVar("Cell", bound=Any)

PIPELINE_KINDS: Final = ("pipeline", "e2e")
#: The ``model`` of a pipeline cell, which runs no model.
PIPELINE_MODEL: Final = "pipeline"
#: The crop every recipe delivers, pixels a side.
CROP: Final = 224
#: File names read as JPEGs in a user's folder (case-insensitive).
JPEG_SUFFIXES: Final = (".jpg", ".jpeg")
#: Each recipe in words (``mode`` names it).
RECIPES: Final[dict[str, str]] = {
    "train": "RandomResizedCrop 224, horizontal flip, to tensor, normalise",
    "infer": "Resize 256, CenterCrop 224, to tensor, normalise",
}
#: The files a run makes when a cell names no folder: ImageNet-like sizes and quality.
GENERATED_COUNT: Final = 256
GENERATED_SIZE: Final = (500, 375)  # width, height
GENERATED_QUALITY: Final = 90


class PipelineError(ValueError):
    """A pipeline cell whose axes cannot go together; one line naming the valid choices."""


class ImagesError(ValueError):
    """A user's image folder that cannot be read as JPEGs; one line."""


def name(cell: Any) -> str:
    """``pipeline cpu train b8 workers=2 pil`` or ``e2e resnet50 cuda train b256 workers=8 pil
    amp-bf16 channels_last``: the readable label of a pipeline cell."""
    head = "pipeline" if cell.kind == "pipeline" else f"e2e {cell.model}"
    parts = [head, cell.device, cell.mode, f"b{cell.batch_size}",
             f"workers={cell.num_workers}", cell.decoder]
    if cell.kind == "e2e":
        parts += [cell.precision, cell.memory_format]
    if cell.images:
        parts.append(f"images={cell.images}")
    if cell.cpu_threads is not None and cell.device == "cpu":
        parts.append(f"threads={cell.cpu_threads}")
    return " ".join(parts)


def normalise(cell: Cell) -> Cell:
    """A pipeline cell with the axes that do not apply collapsed; PipelineError when the
    ones that do cannot go together."""
    if cell.decoder == "torchvision-cuda" and cell.device != "cuda":
        raise PipelineError(f"decoder torchvision-cuda decodes on a CUDA device, not "
                            f"{cell.device}; valid decoders there: pil, torchvision")
    cell = replace(cell, num_workers=0 if cell.num_workers is None else cell.num_workers,
                   decoder=cell.decoder or "pil", resolution=CROP, shapes="static",
                   shape_count=1)
    if cell.kind == "e2e":
        if cell.model == PIPELINE_MODEL or "/" in cell.model or ":" in cell.model:
            raise PipelineError(f"an e2e cell feeds images to a torchvision image model, got "
                                f"{cell.model!r} (e.g. resnet50)")
        return replace(cell, compile="off", kernel_cache="fresh")
    return replace(cell, model=PIPELINE_MODEL, precision="fp32", memory_format="nchw",
                   cudnn_benchmark="n/a", cudnn_deterministic="n/a", cudnn_benchmark_limit=None,
                   kernel_cache="fresh", compile="off", compile_dynamic="auto",
                   model_source="", input_shape="", inputs="", loss="")


def list_images(folder: Path) -> list[Path]:
    """The JPEG files directly in ``folder`` and below it, sorted (a stable order)."""
    return sorted(p for p in folder.rglob("*")
                  if p.suffix.lower() in JPEG_SUFFIXES and p.is_file())


def check_images(value: object) -> str:
    """The folder as given, once it is known to exist and hold at least one JPEG file."""
    if not isinstance(value, str) or not value:
        raise ImagesError(f"images must be a folder of JPEG files, got {value!r}")
    folder = Path(value).expanduser()
    if not folder.is_dir():
        raise ImagesError(f"images folder {value!r} does not exist or is not a folder")
    if not list_images(folder):
        raise ImagesError(f"images folder {value!r} holds no JPEG files (valid: files named "
                          f"*{', *'.join(JPEG_SUFFIXES)})")
    return value

