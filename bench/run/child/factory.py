"""A user's model in a child process: import its factory, build it, make its inputs and loss.

The factory (``pkg.module:factory`` or ``path/to/file.py:factory``, see
``bench.run.plan.modelspec``) is imported the way Python runs a script: a file's own folder goes on
``sys.path`` first, so it can import its neighbours. Everything the user's code can get wrong
(an import, a factory that raises or returns something else, an input the model does not
accept, a loss that is not a scalar) becomes a ``UserModelError`` whose message is one line
naming the callable and what happened, never a traceback: the probe turns it into the CLI's
``error:`` line, a measuring child into its row's reason.

The model's identity, ``model_source``, is a hash of the source files its callables come
from: the file itself for a file model, the module's source file for an importable one, and the
user's own modules those import (``user_imports``), so that editing a helper module or the
module behind a package's ``__init__`` is a new identity too. A measuring child checks it
again, so a file edited while a run goes on is an error row and is never measured under the old
identity.

What the user's code raises is caught whatever its class (``BaseException``: a script's
``sys.exit``, a stray ``KeyboardInterrupt``), except an interrupt that may be real: see
``_reraise_interrupt``.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib
import importlib.util
import os
import signal
import site
import sys
import sysconfig
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

from bench.run.plan import modelspec
from bench.run.protocol import ModelCheck, ModelInfo

#: The batch the probe checks a model with: 2, so that batch-norm layers in training mode see
#: more than one value per channel.
PROBE_BATCH = 2

Batch = tuple[Any, ...]  # the model's positional arguments
Loss = Callable[[Any, Batch], Any]  # (raw output, batch) -> scalar tensor


class UserModelError(RuntimeError):
    """The user's factory, inputs or loss cannot be used; the message is one line."""


class NotApplicable(Exception):
    """A setting the cell asks for does not apply to this model's input (its row: skipped)."""


#: What an allocator that ran out says where torch raises no OutOfMemoryError, in any device's
#: words: CUDA's, cuDNN's and cuBLAS's, and the CPU's (``DefaultCPUAllocator: can't allocate
#: memory``, ENOMEM's "Cannot allocate memory", C++'s ``std::bad_alloc``).
OOM_TEXT = ("out of memory", "cudnn_status_alloc_failed", "cublas_status_alloc_failed",
            "can't allocate memory", "cannot allocate memory", "not enough memory",
            "bad_alloc")


def is_oom(torch: Any, exc: BaseException) -> bool:
    """Whether ``exc`` (or the error a ``UserModelError`` wraps) is memory running out."""
    cause = exc.__cause__ if isinstance(exc, UserModelError) and exc.__cause__ else exc
    types = tuple(t for t in (getattr(torch, "OutOfMemoryError", None),
                              getattr(torch.cuda, "OutOfMemoryError", None)) if t)
    return isinstance(cause, (*types, MemoryError)) or any(
        t in str(cause).lower() for t in OOM_TEXT)


def _reraise_interrupt(exc: BaseException) -> None:
    """Raise ``exc`` again where it may be a real interrupt rather than the user's code's.

    Python raises KeyboardInterrupt for a signal only through a Python handler of SIGINT (or
    of SIGTERM, as the runner's ``interrupts`` installs). A probe or measuring child runs with
    both at their default actions (the fork server's children) and is stopped by the signals
    themselves, so there any KeyboardInterrupt is one the user's code raised, and it is that
    code's error like any other. Where a handler is installed (the runner, a test, a REPL) it
    may be a real Ctrl-C, and it goes on up."""
    if isinstance(exc, KeyboardInterrupt) and any(
            callable(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGTERM)):
        raise exc


def one_line(exc: BaseException) -> str:
    """``ValueError: boom`` (the class and the first line of the message)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def _file_module(spec: modelspec.Spec) -> str:
    """The name a file model's module is imported under (one per resolved path)."""
    path = Path(spec.target).resolve()
    return "torch_knobs_user_" + hashlib.sha1(str(path).encode()).hexdigest()[:10]


def _import_file(spec: modelspec.Spec) -> ModuleType:
    path = Path(spec.target).resolve()
    name = _file_module(spec)
    if name in sys.modules:
        return sys.modules[name]
    found = importlib.util.spec_from_file_location(name, path) if path.is_file() else None
    if found is None or found.loader is None:
        raise UserModelError(f"there is no file {spec.target}")
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    try:
        found.loader.exec_module(module)
    except BaseException as exc:
        del sys.modules[name]
        _reraise_interrupt(exc)
        raise UserModelError(f"cannot import {spec.target}: {one_line(exc)}") from None
    return module


def _module(spec: modelspec.Spec) -> ModuleType:
    if spec.is_file:
        return _import_file(spec)
    try:
        return importlib.import_module(spec.target)
    except BaseException as exc:
        _reraise_interrupt(exc)
        raise UserModelError(f"cannot import {spec.target}: {one_line(exc)}") from None


def load(text: str, what: str = "model") -> Callable[..., Any]:
    """The callable ``text`` names, imported; UserModelError if it cannot be had. The
    message of an ``inputs`` or ``loss`` callable starts with its name (``inputs m.py:fn:
    m.py has no fn``), so that the model is not blamed; a model's is left to its caller
    (``usermodels.bind`` writes ``model M: …``)."""
    try:
        spec = modelspec.parse(text, what)
    except modelspec.SpecError as exc:
        raise UserModelError(str(exc)) from None
    try:
        return _callable(spec)
    except UserModelError as exc:
        if what == "model":
            raise
        raise UserModelError(f"{what} {text}: {exc}") from None


def _callable(spec: modelspec.Spec) -> Callable[..., Any]:
    obj: Any = _module(spec)
    for part in spec.attr.split("."):
        if not hasattr(obj, part):
            raise UserModelError(f"{spec.target} has no {spec.attr}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UserModelError(f"{spec.attr} in {spec.target} is a {type(obj).__name__}, "
                             f"not a callable")
    return obj  # type: ignore[no-any-return]


def source_files(texts: Iterable[str]) -> dict[str, str]:
    """Each loaded callable's source file (a file spec as written, a module's resolved), then
    the packages a module spec runs on its way (``a`` of ``a.b``) and every user-code module
    all of these import (``user_imports``), in that order → the first 10 hex digits of the
    SHA-1 of its bytes."""
    out: dict[str, str] = {}
    seeds: list[ModuleType] = []
    for text in filter(None, texts):
        spec = modelspec.parse(text)
        if spec.is_file:
            _hash_into(out, spec.target)
            seeds += [m for m in [sys.modules.get(_file_module(spec))] if m is not None]
            continue
        parts = spec.target.split(".")
        named = [sys.modules.get(".".join(parts[:i])) for i in range(len(parts), 0, -1)]
        ran = [m for i, m in enumerate(named) if m is not None and (i == 0 or _is_user(m))]
        for module in ran:  # the named module itself even where it is installed, as before
            _hash_into(out, str(getattr(module, "__file__", "") or ""))
        seeds += [m for m in ran if _is_user(m)]
    for module in user_imports(seeds):
        _hash_into(out, str(module.__file__))
    return out


def _hash_into(out: dict[str, str], path: str) -> None:
    if path and path not in out:
        with contextlib.suppress(OSError):
            out[path] = hashlib.sha1(Path(path).read_bytes()).hexdigest()[:10]


@functools.lru_cache(maxsize=1)
def _installed_roots() -> tuple[str, ...]:
    """The folders of code that is not the user's: the standard library and every
    site-packages folder (the Python prefix itself is not one: a project may live under it,
    as in ``/usr/src/app``)."""
    paths = sysconfig.get_paths()
    roots = {paths.get(k, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    with contextlib.suppress(Exception):  # a virtualenv's old site module may lack these
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    return tuple(sorted({os.path.realpath(r) for r in roots if r}))


def _is_user(module: ModuleType) -> bool:
    """Whether a module is the user's code: it has a file, outside ``_installed_roots`` and
    outside any site-packages or dist-packages folder."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path:
        return False
    real = os.path.realpath(path)
    parts = Path(real).parts
    return "site-packages" not in parts and "dist-packages" not in parts and not any(
        real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in _installed_roots())


def user_imports(seeds: Sequence[ModuleType]) -> list[ModuleType]:
    """The user-code modules ``seeds`` import at their top level, and those they import, in
    a deterministic order (breadth first, each module's imports by name).

    Read from the sources (``import`` statements outside function bodies, the ones that ran
    when the module was imported), among the modules already loaded, rather than from which
    modules an import newly loaded: the probe checks several models in one process, where a
    helper the first model loaded is no longer new for the second, while each measuring child
    imports one model afresh; both must come to the same identity."""
    seen = {m.__name__ for m in seeds}
    todo, found = list(seeds), []
    while todo:
        for name in sorted(_imported_names(todo.pop(0))):
            dep = sys.modules.get(name)
            if dep is None or name in seen:
                continue
            seen.add(name)
            if _is_user(dep):
                found.append(dep)
                todo.append(dep)
    return found


def _imported_names(module: ModuleType) -> set[str]:
    """Every module name the top level of ``module``'s source imports (``a.b`` gives ``a``
    and ``a.b``; ``from a import b`` also ``a.b``, which counts where it is a module)."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return set()
    try:
        tree = ast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return set()
    package = getattr(module, "__package__", None) or ""
    names: set[str] = set()
    todo: list[ast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue  # runs when called, not at import
        todo.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            try:
                base = importlib.util.resolve_name("." * node.level + (node.module or ""),
                                                   package)
            except (ImportError, ValueError):
                continue
            targets = [base, *(f"{base}.{a.name}" for a in node.names if a.name != "*")]
        else:
            continue
        for target in targets:
            parts = target.split(".")
            names.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return names


def identity(files: dict[str, str]) -> str:
    """``model_source``: a one-file model's own hash (``sha1sum`` shows it), else a hash of
    its files' hashes; empty when no source file was found."""
    hashes = sorted(set(files.values()))
    if len(hashes) <= 1:
        return hashes[0] if hashes else ""
    return hashlib.sha1("\n".join(hashes).encode()).hexdigest()[:10]


def callables(model: str, inputs: str, loss: str) -> tuple[Callable[..., Any],
                                                          Callable[..., Any] | None,
                                                          Callable[..., Any] | None]:
    """The factory, and the ``inputs`` and ``loss`` callables where they are named."""
    return (load(model, "model"), load(inputs, "inputs") if inputs else None,
            load(loss, "loss") if loss else None)


def build_model(torch: Any, model: str, factory: Callable[..., Any], device: str) -> Any:
    """Call the factory with the device as torch's default (parameters are made there, as for
    torchvision models) and check that it returned a module."""
    name = modelspec.parse(model).attr
    try:
        with torch.device(device):
            built = factory()
    except BaseException as exc:
        _reraise_interrupt(exc)
        raise UserModelError(f"{name}() raised {one_line(exc)}") from exc
    if not isinstance(built, torch.nn.Module):
        raise UserModelError(f"{name}() returned {type(built).__name__}, not a torch.nn.Module")
    return built.to(device)


def make_batch(torch: Any, input_shape: str, inputs: Callable[..., Any] | None, inputs_name: str,
               batch_size: int, resolution: int, device: str) -> Batch:
    """The model's arguments for one batch: the ``inputs`` callable's tensors, or one random
    tensor of ``input_shape`` (whose H and W are ``resolution`` when it is square)."""
    if inputs is None:
        c, h, w = modelspec.parse_input_shape(input_shape)
        if h == w:
            h = w = resolution
        return (torch.randn(batch_size, c, h, w, device=device),)
    try:
        made = inputs(batch_size, device)
    except BaseException as exc:
        _reraise_interrupt(exc)
        raise UserModelError(f"{inputs_name}({batch_size}, {device!r}) raised "
                             f"{one_line(exc)}") from exc
    batch = tuple(made) if isinstance(made, (tuple, list)) else (made,)
    if not batch or not all(isinstance(t, torch.Tensor) for t in batch):
        raise UserModelError(f"{inputs_name}({batch_size}, {device!r}) returned "
                             f"{type(made).__name__}, not a tensor or a tuple of tensors")
    return tuple(t.to(device) for t in batch)


def channels_last(torch: Any, batch: Batch) -> Batch:
    """channels_last applies to 4-D tensors only; a batch without one cannot use it."""
    if not any(t.dim() == 4 for t in batch):
        raise NotApplicable(f"channels_last needs a 4-D input; this model's is "
                            f"{batch[0].dim()}-D")
    return tuple(t.contiguous(memory_format=torch.channels_last) if t.dim() == 4 else t
                 for t in batch)


def logits(out: Any) -> Any:
    """The tensor a model's output stands for: named tuples (googlenet, inception in train
    mode) and dicts give their ``logits``, other tuples their first item."""
    if isinstance(out, dict):
        return out["logits"] if "logits" in out else next(iter(out.values()))
    if hasattr(out, "logits"):
        return out.logits
    if isinstance(out, (tuple, list)):
        return out[0]
    return out


def default_loss(torch: Any) -> Loss:
    """Cross-entropy against random class targets when the output is 2-D logits (targets made
    once per output shape), otherwise the output's mean."""
    targets: dict[tuple[int, ...], Any] = {}

    def loss(raw: Any, batch: Batch) -> Any:
        out = logits(raw).float()
        if out.dim() != 2:
            return out.mean()
        key = tuple(out.shape)
        if key not in targets:
            targets[key] = torch.randint(0, out.shape[1], (out.shape[0],), device=out.device)
        return torch.nn.functional.cross_entropy(out, targets[key])

    return loss


def user_loss(torch: Any, fn: Callable[..., Any], name: str) -> Loss:
    """The user's ``loss(output, batch)``, checked to give a scalar tensor."""

    def loss(raw: Any, batch: Batch) -> Any:
        value = fn(raw, batch)
        if not isinstance(value, torch.Tensor) or value.dim() != 0:
            what = f"a {tuple(value.shape)} tensor" if isinstance(value, torch.Tensor) else (
                type(value).__name__)
            raise UserModelError(f"{name}(output, batch) returned {what}, not a scalar tensor")
        return value

    return loss


def describe(batch: Sequence[Any]) -> str:
    return ", ".join(str(tuple(t.shape)) for t in batch)


def count_forward(torch: Any, model: Any, batches: Iterable[Batch]) -> tuple[float | None, str]:
    """Forward FLOPs per sample over ``batches`` by ``FlopCounterMode``, and why not if not."""
    from torch.utils.flop_counter import FlopCounterMode

    total, samples = 0.0, 0
    try:
        for batch in batches:
            counter = FlopCounterMode(display=False)
            with counter, torch.no_grad():
                model(*batch)
            total += counter.get_total_flops()
            samples += int(batch[0].shape[0]) if batch[0].dim() else 1
    except BaseException as exc:
        _reraise_interrupt(exc)
        return None, f"flop count failed: {one_line(exc)}"
    if total <= 0 or not samples:
        return None, "flop count failed: FlopCounterMode counted no FLOPs (it counts matrix " \
                     "products and convolutions only)"
    return total / samples, ""


def check(torch: Any, chk: ModelCheck) -> ModelInfo:
    """Import, build and run a user model once at batch ``PROBE_BATCH`` (a training step when
    ``chk.mode`` is train); what goes wrong is the answer's one-line ``error``. A line in the
    log before and after (``modelspec.CHECKING``) says which model a probe that dies mid-way
    (``os._exit``, a segfault, an interrupt ``_reraise_interrupt`` lets through) was
    checking."""
    print(f"{modelspec.CHECKING}{chk.model}", flush=True)
    info = _check(torch, chk)
    print(f"{modelspec.CHECKED}{chk.model}", flush=True)
    return info


def _check(torch: Any, chk: ModelCheck) -> ModelInfo:
    files: dict[str, str] = {}
    flops, note, ndim = None, "", None
    if chk.device == "cuda" and not torch.cuda.is_available():  # its cells will be skipped
        chk = replace(chk, device="cpu")
    try:
        make, inputs, loss_fn = callables(chk.model, chk.inputs, chk.loss)
        files = source_files((chk.model, chk.inputs, chk.loss))
        model = build_model(torch, chk.model, make, chk.device)
        shape = chk.input_shape
        resolution = modelspec.parse_input_shape(shape)[1] if shape else 0
        batch = make_batch(torch, shape, inputs, chk.inputs, PROBE_BATCH, resolution, chk.device)
        ndim = int(batch[0].dim())
        hint = "; is input_shape (C,H,W) right?" if not chk.inputs else ""
        model.eval()
        try:
            with torch.no_grad():
                model(*batch)
        except BaseException as exc:
            _reraise_interrupt(exc)
            raise UserModelError(f"a forward pass on a batch of shape {describe(batch)} failed: "
                                 f"{one_line(exc)}{'' if is_oom(torch, exc) else hint}"
                                 ) from exc
        flops, note = count_forward(torch, model, [batch])
        if chk.mode == "train":
            if not any(p.requires_grad for p in model.parameters()):
                raise UserModelError(f"{modelspec.parse(chk.model).attr}() built a model "
                                     f"without trainable parameters: it cannot be trained")
            model.train()
            loss = user_loss(torch, loss_fn, chk.loss) if loss_fn else default_loss(torch)
            try:
                loss(model(*batch), batch).backward()
            except UserModelError:
                raise
            except BaseException as exc:
                _reraise_interrupt(exc)
                raise UserModelError(f"a training step (loss and backward) on a batch of shape "
                                     f"{describe(batch)} failed: {one_line(exc)}") from exc
    except BaseException as exc:  # the user's code, or something else: still one line
        _reraise_interrupt(exc)
        error = str(exc) if isinstance(exc, UserModelError) else one_line(exc)
        if is_oom(torch, exc):
            error = f"does not fit in memory on {chk.device}: {error}"
        return ModelInfo(chk, error=error, source=identity(files), files=files)
    return ModelInfo(chk, source=identity(files), files=files, input_ndim=ndim,
                     flops_per_sample=flops, note=note)
