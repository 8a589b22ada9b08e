"""User models as strings: ``pkg.module:factory`` or ``path/to/file.py:factory``.

A user's model goes anywhere a torchvision model name goes (a profile's ``model``, the
``advise`` command's argument). The colon tells them apart: torchvision names have none. The
factory takes no arguments and returns a ``torch.nn.Module``. Two optional callables are named
the same way: ``inputs`` (called ``(batch_size, device)``, returns a tensor or a tuple of
tensors: the model's arguments) and ``loss`` (called ``(output, batch)`` with the model's
output and that tuple, returns a scalar tensor to call ``backward`` on).

Standard library only, and nothing is imported here: the parent checks the strings (and that a
file exists) before any process starts, with one line naming the problem. Whether the factory
imports, builds and accepts its input is the probe child's question
(``bench.run.child.factory``), asked before anything is written.

A relative file path is resolved against the current directory and recorded as written, so a
row says what the user typed; the hash of the file's source (``model_source``) is what tells two
versions of it apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bench.run.plan import limits

#: What a user model string looks like, for messages.
FORMS = "pkg.module:factory or path/to/file.py:factory"
#: The input shape a user model gets unless told otherwise: an ImageNet-sized image.
DEFAULT_INPUT_SHAPE = (3, 224, 224)

#: The lines a probe child leaves in its log around each check of a user model (the model's
#: string follows), so that the parent can name the model a probe that died was checking.
CHECKING = "torch-knobs probe: checking model "
CHECKED = "torch-knobs probe: checked model "

_ATTR = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
_MODULE = _ATTR


class SpecError(ValueError):
    """A string that names no callable; the message is one line with the valid forms."""


@dataclass(frozen=True)
class Spec:
    """A callable named by ``target:attr``: a module name or a ``.py`` path, and the dotted
    attribute inside it."""

    text: str
    target: str
    attr: str

    @property
    def is_file(self) -> bool:
        return self.target.endswith(".py")


def is_user_model(name: str) -> bool:
    """Whether a model name is a user's factory (torchvision names have no colon)."""
    return ":" in name


def parse(text: str, what: str = "model") -> Spec:
    """``text`` as a Spec, or SpecError naming what is wrong and the valid forms."""
    if not isinstance(text, str):
        raise SpecError(f"{what} must be a string ({FORMS}), got {text!r}")
    target, sep, attr = text.rpartition(":")
    if not sep or not target or not _ATTR.fullmatch(attr):
        raise SpecError(f"{what} {text!r} is not of the form {FORMS}")
    if not target.endswith(".py") and not _MODULE.fullmatch(target):
        raise SpecError(f"{what} {text!r}: {target!r} is neither a module name (pkg.module) "
                        f"nor a .py file; valid forms: {FORMS}")
    return Spec(text, target, attr)


def check_exists(spec: Spec, what: str = "model") -> None:
    """A file spec's file must exist (relative to the current directory)."""
    if spec.is_file and not Path(spec.target).is_file():
        raise SpecError(f"{what} {spec.text}: there is no file {spec.target} (a relative path "
                        f"is read from the current directory)")


def parse_input_shape(text: object) -> tuple[int, int, int]:
    """``"3,224,224"`` as (C, H, W), or SpecError. Image-like inputs only: anything else is
    made by an ``inputs`` callable."""
    parts = str(text).replace(" ", "").split(",")
    if len(parts) == 3 and all(p.isdigit() and int(p) > 0 for p in parts):
        c, h, w = (int(p) for p in parts)
        for name, n, (lo, hi) in zip("CHW", (c, h, w), limits.INPUT_SHAPE):
            if not lo <= n <= hi:
                raise SpecError(f"input_shape {text!r}: {name} must be from {lo:,} to {hi:,}, "
                                f"got {n:,}")
        return c, h, w
    raise SpecError(f"input_shape {text!r} is not C,H,W (three positive integers, e.g. "
                    f"3,224,224); for other inputs name an inputs callable "
                    f"(pkg.module:example_batch, called with (batch_size, device))")


def shape_text(shape: tuple[int, int, int]) -> str:
    return ",".join(str(n) for n in shape)


def check_axis(key: str, value: object) -> str:
    """A profile's ``model`` (a user's), ``inputs``, ``loss`` or ``input_shape`` value, checked
    and normalised (``input_shape`` as ``C,H,W``); SpecError otherwise."""
    if key == "input_shape":
        return shape_text(parse_input_shape(value))
    spec = parse(value, key)  # type: ignore[arg-type]
    check_exists(spec, key)
    return spec.text
