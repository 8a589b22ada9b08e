"""The plain string literals of a module, read with ``tokenize`` (docstrings count, f-strings
and byte strings do not): what the house tests search for words spelled outside their enum."""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from pathlib import Path


def string_literals(path: Path) -> Iterator[tuple[int, object]]:
    """(line, value) of each plain string literal of the module at ``path``."""
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.STRING or tok.string[0] not in "\"'":
            continue
        try:
            yield tok.start[0], ast.literal_eval(tok.string)
        except (ValueError, SyntaxError):
            continue
