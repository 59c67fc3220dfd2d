"""The model-file limits the runtime enforces, read from where they are
defined: runtime/include/edgemt/limits.h (every family's, here) and
runtime/models/<family>/config.h (a family's own: its module in families/
reads them with `family_constants`). The converter refuses to write a file
outside them, so that it never writes a file the runtime would reject; the
numbers exist once, in C++.

A limit is a line `inline constexpr <type> kName = <expression>;` whose
expression is integer literals (u/l suffixes), `uint64_t{N}`, shifts,
products and sums.
"""

import os
import re
from typing import Dict

from .project_files import project_path

_RUNTIME = project_path("runtime")
HEADERS = (os.path.join(_RUNTIME, "include", "edgemt", "limits.h"),)

_CONSTANT = re.compile(r"inline\s+constexpr\s+\w+\s+(k\w+)\s*=\s*([^;]+);")


def evaluate(expression: str) -> int:
    """The integer value of a limit's initializer."""
    text = re.sub(r"uint64_t\{(\d+)\}", r"\1", expression)
    text = re.sub(r"(\d+)[uUlL]+", r"\1", text)
    if not re.fullmatch(r"[\d\s<>()*+]+", text):
        raise ValueError(f"cannot evaluate limit expression {expression!r}")
    return int(eval(text, {"__builtins__": {}}))  # digits and operators only (checked above)


def read_constants(paths=HEADERS) -> Dict[str, int]:
    """Every `inline constexpr` integer constant of the headers, by C++ name;
    ValueError when one is defined twice or cannot be evaluated."""
    constants: Dict[str, int] = {}
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            for name, value in _CONSTANT.findall(handle.read()):
                if name in constants:
                    raise ValueError(f"{name} is defined twice ({path})")
                constants[name] = evaluate(value)
    return constants


def family_header(family_name: str) -> str:
    """runtime/models/<family>/config.h: where a family defines its limits."""
    return os.path.join(_RUNTIME, "models", family_name, "config.h")


def family_constants(family_name: str) -> Dict[str, int]:
    """The constants of the shared headers and of the family's own config.h
    (ValueError when the family's redefines a shared one)."""
    return read_constants(HEADERS + (family_header(family_name),))


_CPP = read_constants()

MAX_VOCAB_SIZE = _CPP["kMaxVocabSize"]
MAX_POSITIONS = _CPP["kMaxPositions"]
MAX_MODEL_BYTES = _CPP["kMaxModelBytes"]          # the whole file
MAX_TENSORS = _CPP["kMaxTensors"]                 # entries of the tensor table
MAX_TOKENIZER_BYTES = _CPP["kMaxTokenizerBytes"]  # the embedded SentencePiece model
MAX_BEAM = _CPP["kMaxBeam"]
