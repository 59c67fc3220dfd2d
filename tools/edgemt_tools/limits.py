"""The model-file limits the runtime enforces, read from where they are
defined: runtime/include/edgemt/limits.h (every family),
runtime/models/transformer/config.h (the Transformer's) and
runtime/models/rnn/config.h (the RNN family's). The converter refuses
to write a file outside them, so that it never writes a file the runtime
would reject; the numbers exist once, in C++.

A limit is a line `inline constexpr <type> kName = <expression>;` whose
expression is integer literals (u/l suffixes), `uint64_t{N}`, shifts,
products and sums.
"""

import os
import re
from typing import Dict

_RUNTIME = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir,
                        "runtime")
_RNN_HEADER = os.path.join(_RUNTIME, "models", "rnn", "config.h")
HEADERS = (
    os.path.join(_RUNTIME, "include", "edgemt", "limits.h"),
    os.path.join(_RUNTIME, "models", "transformer", "config.h"),
) + ((_RNN_HEADER,) if os.path.isfile(_RNN_HEADER) else ())

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


_CPP = read_constants()

MAX_LAYERS_PER_STACK = _CPP["kMaxLayersPerStack"]  # encoder and decoder layers, each
MAX_D_MODEL = _CPP["kMaxDModel"]
MAX_FFN_DIM = _CPP["kMaxFfnDim"]
MAX_VOCAB_SIZE = _CPP["kMaxVocabSize"]
MAX_POSITIONS = _CPP["kMaxPositions"]
MAX_MODEL_BYTES = _CPP["kMaxModelBytes"]          # the whole file
MAX_TENSORS = _CPP["kMaxTensors"]                 # entries of the tensor table
MAX_TOKENIZER_BYTES = _CPP["kMaxTokenizerBytes"]  # the embedded SentencePiece model
MAX_BEAM = _CPP["kMaxBeam"]
# The RNN family's (runtime/models/rnn/config.h; a tree without that header
# yet gets the Transformer's per-stack and width limits).
MAX_RNN_LAYERS = _CPP.get("kMaxRnnLayers", MAX_LAYERS_PER_STACK)
MAX_RNN_HIDDEN = _CPP.get("kMaxRnnHidden", MAX_D_MODEL)
MAX_RNN_EMBEDDING_DIM = _CPP.get("kMaxRnnEmbeddingDim", MAX_D_MODEL)
