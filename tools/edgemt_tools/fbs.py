"""Access to the flatc-generated Python code for schema/edgemt.fbs.

The generated modules live in `generated/` (regenerate with
`flatc --python -o tools/edgemt_tools/generated schema/edgemt.fbs`; a test
checks they are current). They import each other as `edgemt.format.X`, so the
`generated/` folder has to be on sys.path; this module puts it there once and
re-exports the classes the writer and the reader use. A family's own tables
and enums (its config) its module in families/ takes by name: `generated`.
"""

import importlib
import os
import sys

GENERATED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated")
if GENERATED_DIR not in sys.path:
    sys.path.insert(0, GENERATED_DIR)

# pylint: disable=wrong-import-position
from edgemt.format import Decoding as decoding_fb  # noqa: E402
from edgemt.format import Model as model_fb  # noqa: E402
from edgemt.format import Provenance as provenance_fb  # noqa: E402
from edgemt.format import SpecialTokens as special_tokens_fb  # noqa: E402
from edgemt.format import Tensor as tensor_fb  # noqa: E402
from edgemt.format import Tokenizer as tokenizer_fb  # noqa: E402
from edgemt.format.DType import DType  # noqa: E402
from edgemt.format.FamilyConfig import FamilyConfig  # noqa: E402
from edgemt.format.QuantizationScheme import QuantizationScheme  # noqa: E402
from edgemt.format.SearchRules import SearchRules  # noqa: E402
from edgemt.format.TokenizerKind import TokenizerKind  # noqa: E402

FILE_IDENTIFIER = b"EMT1"
# Written by this converter; the reader also reads the older ones
# (schema/edgemt.fbs: version 1 holds the config in `config`, version 2 in
# the `family_config` union; version 3 adds vocabularies, a target
# tokenizer and decoding rules; version 4 ends in an integrity trailer,
# model_file.py; version 5 adds smoothed int8 files).
FORMAT_VERSION = 5
OLDEST_FORMAT_VERSION = 1


def generated(name: str):
    """The generated module of the schema's table or enum `name`
    (edgemt.format.<name>: Start, Add<Field> and End of a table, and the
    class `name`)."""
    return importlib.import_module(f"edgemt.format.{name}")


__all__ = [
    "GENERATED_DIR", "FILE_IDENTIFIER", "FORMAT_VERSION", "OLDEST_FORMAT_VERSION", "generated",
    "model_fb", "decoding_fb", "provenance_fb", "special_tokens_fb", "tensor_fb", "tokenizer_fb",
    "DType", "FamilyConfig", "QuantizationScheme", "SearchRules", "TokenizerKind",
]
