"""Access to the flatc-generated Python code for schema/edgemt.fbs.

The generated modules live in `generated/` (regenerate with
`flatc --python -o tools/edgemt_tools/generated schema/edgemt.fbs`; a test
checks they are current) and import each other, inside their methods, as
`from edgemt.format.X import X`. The runtime's Python module is also named
`edgemt`, so `generated/` must not go on sys.path (whichever `edgemt` came
first would hide the other): this module loads every generated module from
its file and registers it in sys.modules as `edgemt.format.X`, where those
imports find it whatever `edgemt` is. It re-exports the classes the writer
and the reader use; a family's own tables and enums (its config) its module
in families/ takes by name: `generated`.
"""

import importlib.util
import os
import sys

GENERATED_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "generated")
_FORMAT_DIR = os.path.join(GENERATED_DIR, "edgemt", "format")


def _load_generated_modules() -> None:
    for file_name in sorted(os.listdir(_FORMAT_DIR)):
        if not file_name.endswith(".py") or file_name == "__init__.py":
            continue
        name = "edgemt.format." + file_name[:-3]
        if name in sys.modules:
            continue
        spec = importlib.util.spec_from_file_location(name, os.path.join(_FORMAT_DIR, file_name))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


def generated(name: str):
    """The generated module of the schema's table or enum `name`
    (edgemt.format.<name>: Start, Add<Field> and End of a table, and the
    class `name`)."""
    try:
        return sys.modules[f"edgemt.format.{name}"]
    except KeyError:
        raise ImportError(f"schema/edgemt.fbs has no table or enum {name!r}") from None


_load_generated_modules()
decoding_fb = generated("Decoding")
model_fb = generated("Model")
provenance_fb = generated("Provenance")
shortlist_fb = generated("Shortlist")
special_tokens_fb = generated("SpecialTokens")
tensor_fb = generated("Tensor")
tokenizer_fb = generated("Tokenizer")
DType = generated("DType").DType
FamilyConfig = generated("FamilyConfig").FamilyConfig
QuantizationScheme = generated("QuantizationScheme").QuantizationScheme
SearchRules = generated("SearchRules").SearchRules
TokenizerKind = generated("TokenizerKind").TokenizerKind

FILE_IDENTIFIER = b"EMT1"
# Written by this converter; the reader also reads the older ones
# (schema/edgemt.fbs: version 1 holds the config in `config`, version 2 in
# the `family_config` union; version 3 adds vocabularies, a target
# tokenizer and decoding rules; version 4 ends in an integrity trailer,
# model_file.py; version 5 adds smoothed int8 files).
FORMAT_VERSION = 5
# Version 6 adds SSRU decoders (TransformerConfig.decoder_autoregression):
# only files that use one are written as 6 (families' format_version), so
# every other file still loads in a runtime that reads up to 5. Version 7
# adds Int8PerTensorDynamic files (Marian's intgemm8 arithmetic), written
# as 7 only when they are one (PER_TENSOR_FORMAT_VERSION); version 8
# Int8PerTensorStatic files (browsermt Marian's arithmetic with alphas),
# written as 8 only when they are one (STATIC_FORMAT_VERSION); version 9
# per-row int8 files whose embedding tables stay fp32 (Model.f32_tables),
# written as 9 only when they are one (F32_TABLES_FORMAT_VERSION); version
# 10 those whose tables are fp16 (Model.f16_tables; F16_TABLES_FORMAT_VERSION);
# version 11 those whose int8 tables have a 4-bit residual code for lookups
# (Model.residual_tables; RESIDUAL_TABLES_FORMAT_VERSION).
NEWEST_FORMAT_VERSION = 11
PER_TENSOR_FORMAT_VERSION = 7
STATIC_FORMAT_VERSION = 8
F32_TABLES_FORMAT_VERSION = 9
F16_TABLES_FORMAT_VERSION = 10
RESIDUAL_TABLES_FORMAT_VERSION = 11
OLDEST_FORMAT_VERSION = 1

__all__ = [
    "GENERATED_DIR", "FILE_IDENTIFIER", "FORMAT_VERSION", "NEWEST_FORMAT_VERSION",
    "OLDEST_FORMAT_VERSION", "PER_TENSOR_FORMAT_VERSION", "STATIC_FORMAT_VERSION",
    "F32_TABLES_FORMAT_VERSION", "F16_TABLES_FORMAT_VERSION", "generated",
    "model_fb", "decoding_fb", "provenance_fb", "shortlist_fb", "special_tokens_fb", "tensor_fb",
    "tokenizer_fb",
    "DType", "FamilyConfig", "QuantizationScheme", "SearchRules", "TokenizerKind",
]
