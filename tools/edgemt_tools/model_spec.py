"""What an edgemt model file holds, independent of any checkpoint format
and of any model family.

The dataclasses mirror the tables of schema/edgemt.fbs; a header's or a
spec's `config` is a family's config dataclass (families/<family>.py), whose
type names the family (the member of the schema's FamilyConfig union).
`expected_tensors` lists every tensor a config implies, walked from the
family's tensor table (schema/<family>_tensors.def, through the registry
families.of(config); the runtime compiles the same tables), with its shape
and whether it is a matrix (stored in the file's weight dtype) or a vector /
table (always F32). In int8 files every matrix `X` is followed by its
per-row scales `X_scale` (F32 [out]; QuantizationScheme.Int8PerRowDynamic),
and in smoothed int8 files every projection matrix that owns its bytes then
by its smoothing vector `X_smooth` (F32 [in]; Int8SmoothedPerRowDynamic,
format version 5).
The converter validates against this list and the reader uses it to check a
file; the runtime's verifier and loader read the same table.
"""

from collections import OrderedDict
import dataclasses
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Tuple

import numpy as np

from . import families
from .choices import WEIGHT_DTYPES
from .errors import UserError
from .families.tensor_table import MATRIX, RESIDUAL, VECTOR, TensorSpec  # noqa: F401 (RESIDUAL)

# Model.decoding.rules (schema SearchRules): whose beam search the model follows.
SEARCH_RULES = ("edgemt", "opennmt", "marian", "huggingface")

# Model.quantization (schema QuantizationScheme), by the names of its values.
QUANTIZATION_NONE = "None"
QUANTIZATION_INT8 = "Int8PerRowDynamic"
QUANTIZATION_INT8_SMOOTHED = "Int8SmoothedPerRowDynamic"
# Marian's intgemm8 arithmetic: one activation range per product, embedding
# tables (and an output projection tied to one) in float32.
QUANTIZATION_INT8_PER_TENSOR = "Int8PerTensorDynamic"
# browsermt Marian's arithmetic with a model's alphas: a fixed activation
# multiplier per product (`X_input_scale`), tables in float32, the output
# projection an int8 matrix of its own.
QUANTIZATION_INT8_STATIC = "Int8PerTensorStatic"
INT8_QUANTIZATIONS = (QUANTIZATION_INT8, QUANTIZATION_INT8_SMOOTHED, QUANTIZATION_INT8_PER_TENSOR,
                      QUANTIZATION_INT8_STATIC)

SCALE_SUFFIX = "_scale"  # int8 files: `X_scale` holds the per-row scales of matrix `X`
SMOOTH_SUFFIX = "_smooth"  # smoothed int8 files: `X_smooth` multiplies projection X's inputs
INPUT_SCALE_SUFFIX = "_input_scale"  # Int8PerTensorStatic: X's fixed activation multiplier
# residual_tables: `T_residual` (4-bit codes) and `T_residual_scale` of int8 table `T`
RESIDUAL_SUFFIX = "_residual"


def quantization_scheme(weight_dtype: str) -> str:
    """The only scheme a file with this weight dtype may declare: int8 files
    are Int8PerRowDynamic, fp32/fp16 files None (schema/edgemt.fbs)."""
    if weight_dtype not in WEIGHT_DTYPES:
        raise ValueError(f"unknown weight dtype {weight_dtype!r} (known: {WEIGHT_DTYPES})")
    return QUANTIZATION_INT8 if weight_dtype == "int8" else QUANTIZATION_NONE


def scale_name(matrix_name: str) -> str:
    """Name of the F32 per-row scale tensor of an int8 matrix."""
    return matrix_name + SCALE_SUFFIX


def smooth_name(matrix_name: str) -> str:
    """Name of the F32 smoothing vector of a projection in a smoothed int8 file."""
    return matrix_name + SMOOTH_SUFFIX


def residual_name(table_name: str) -> str:
    """Name of the I8 residual codes [rows, ceil(dim / 2)] of an int8 table
    in a file with `residual_tables` (format version 11)."""
    return table_name + RESIDUAL_SUFFIX


def residual_scale_name(table_name: str) -> str:
    """Name of the F32 per-row scales [rows] of a table's residual codes."""
    return scale_name(residual_name(table_name))


def input_scale_name(matrix_name: str) -> str:
    """Name of the F32 [1] activation multiplier of a projection in an
    Int8PerTensorStatic file."""
    return matrix_name + INPUT_SCALE_SUFFIX


@dataclass(frozen=True)
class Decoding:
    """The source framework's search rules and decoding defaults
    (schema `Decoding`; tools/edgemt_tools/SEARCH.md)."""
    rules: str = "edgemt"             # one of SEARCH_RULES
    beam_size: int = 1
    length_penalty: float = 1.0
    word_penalty: float = 0.0
    max_len_a: float = 2.0
    max_len_b: float = 10.0
    banned_tokens: Tuple[int, ...] = ()  # target ids never generated


@dataclass(frozen=True)
class SideTokenizer:
    """One side's tokenizer beyond a bare SentencePiece model: the model's
    own vocabulary of pieces (id i = pieces[i]; looked up by string) and
    that side's unk/eos ids (-1: SpecialTokens')."""
    spm: bytes
    pieces: Optional[Tuple[str, ...]] = None
    unk_id: int = -1
    eos_id: int = -1


@dataclass(frozen=True)
class SpecialTokens:
    pad: int
    unk: int
    bos: int
    eos: int
    decoder_start: int


@dataclass(frozen=True)
class Provenance:
    source_format: str = ""
    source_checkpoint: str = ""
    source_sha256: str = ""
    converter_version: str = ""
    created_utc: str = ""


@dataclass(frozen=True, eq=False)
class Shortlist:
    """A lexical shortlist (schema `Shortlist`; shortlist.py reads Marian's
    files into one): source id s lists the target ids
    targets[offsets[s]:offsets[s + 1]], ascending; ids >= S list nothing.
    At translation the candidates of a batch are the ids below `first`, the
    lists of its source ids, with `add_source_ids` those ids themselves, and
    EOS (the schema's comment has the whole rule).
    eq=False: numpy arrays have no single truth value; compare the fields."""
    first: int
    best: int                         # the longest list may hold this many ids
    add_source_ids: bool              # source and target share one vocabulary
    offsets: np.ndarray               # uint32 [S + 1]; S <= the source vocabulary size
    targets: np.ndarray               # uint32 [offsets[S]]

    def targets_of(self, source_id: int) -> np.ndarray:
        return self.targets[self.offsets[source_id]:self.offsets[source_id + 1]]


@dataclass(frozen=True)
class ModelHeader:
    """Everything in the FlatBuffer except the tensor table."""
    config: object                    # a family's config (families/<family>.py)
    special_tokens: SpecialTokens
    source_language: str
    target_language: str
    weight_dtype: str                 # "fp32" | "fp16" | "int8"
    tokenizer_model: bytes            # serialized SentencePiece ModelProto
    append_eos_to_source: bool = True
    provenance: Provenance = field(default_factory=Provenance)
    # QUANTIZATION_NONE | QUANTIZATION_INT8. None lets the writer store the
    # scheme weight_dtype implies; the reader always fills in what the file says.
    # Set explicitly only to write deliberately inconsistent test files.
    quantization: Optional[str] = None
    # Format version 3 (models from other frameworks). source_pieces etc.
    # extend the source tokenizer (`tokenizer_model`); target_tokenizer is the
    # target side's when it differs; decoding None: edgemt's defaults.
    source_pieces: Optional[Tuple[str, ...]] = None
    source_unk_id: int = -1
    source_eos_id: int = -1
    target_tokenizer: Optional[SideTokenizer] = None
    decoding: Optional[Decoding] = None
    # Any format version: the lexical shortlist, or None.
    shortlist: Optional[Shortlist] = None
    # Format version 9: a per-row int8 file whose embedding tables (and a
    # tied output projection) stay fp32 (matrix_dtype).
    f32_tables: bool = False
    # Format version 10: likewise fp16 tables (no projection tied to one).
    f16_tables: bool = False
    # Format version 11: a per-row int8 file whose int8 tables have a 4-bit
    # residual code per weight for lookups (expected_tensors).
    residual_tables: bool = False


@dataclass
class ModelSpec:
    """What a checkpoint source (sources/) hands the writer (writer.py): the
    family's config, the header fields, and the weights as float32 arrays
    under their canonical names and layouts (schema/TENSORS.md): every tensor
    of `expected_tensors(config, "fp32")` that is not an alias. No storage
    type yet: the writer quantizes (int8) or narrows (fp16)."""
    config: object                    # a family's config (families/<family>.py)
    special_tokens: SpecialTokens
    source_language: str
    target_language: str
    tokenizer_model: bytes            # serialized SentencePiece ModelProto
    weights: Mapping[str, np.ndarray]
    append_eos_to_source: bool = True
    provenance: Provenance = field(default_factory=Provenance)
    source_pieces: Optional[Tuple[str, ...]] = None
    source_unk_id: int = -1
    source_eos_id: int = -1
    target_tokenizer: Optional[SideTokenizer] = None
    decoding: Optional[Decoding] = None
    # Set by edgemt-convert --shortlist (shortlist.py), whatever the source.
    shortlist: Optional[Shortlist] = None
    # Matrices the checkpoint holds as int8 codes already (Marian's intgemm8
    # items): name -> (codes int8 [out, in] in [-127, 127], scale float32
    # [out]), whose `weights` entry is codes * scale[row]. int8 files store
    # them as they are: not quantized again, not calibrated.
    int8_codes: Mapping[str, Tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    # The same matrices for an Int8PerTensorStatic file, when the source has
    # fixed activation multipliers (the alphas of Firefox's Marian models):
    # name -> (codes, row scales holding the activation's part too,
    # multiplier, the bias that file stores: Marian's shift correction
    # added). Empty when it has none.
    int8_static: Mapping[str, Tuple[np.ndarray, np.ndarray, np.float32, np.ndarray]] = field(
        default_factory=dict)
    # Whether source and target use one vocabulary, when the source says so
    # (Marian: both sides name one file); None: when their pieces are the
    # same. A lexical shortlist adds the source's ids to its candidates then.
    shared_vocabulary: Optional[bool] = None


def is_table(spec: TensorSpec) -> bool:
    """An embedding table, or a projection that shares one's bytes (a tied
    output projection): a matrix that is not a projection of its own."""
    return spec.kind == MATRIX and (not spec.projection or spec.alias_of is not None)


def matrix_dtype(spec: TensorSpec, weight_dtype: str, quantization: Optional[str],
                 f32_tables: bool = False, f16_tables: bool = False) -> str:
    """The storage type of matrix `spec` in a file of this weight dtype and
    scheme: the weight dtype, except the tables of an Int8PerTensor* file
    and of an int8 file with `f32_tables` (format version 9), which are fp32,
    and those of an int8 file with `f16_tables` (version 10), which are fp16
    (schema/edgemt.fbs)."""
    if is_table(spec) and weight_dtype == "int8" and (
            f32_tables or quantization in (QUANTIZATION_INT8_PER_TENSOR, QUANTIZATION_INT8_STATIC)):
        return "fp32"
    if is_table(spec) and weight_dtype == "int8" and f16_tables:
        return "fp16"
    return weight_dtype


def expected_tensors(cfg, weight_dtype: str = "fp32", quantization: Optional[str] = None,
                     f32_tables: bool = False, f16_tables: bool = False,
                     residual_tables: bool = False) -> "OrderedDict[str, TensorSpec]":
    """Every tensor a file with this config (of any family), weight dtype
    and quantization scheme (None: the one weight_dtype implies) must hold
    (schema/TENSORS.md), in the family table's order (its groups in file
    order, layer groups once per layer). Aliases carry `alias_of` and own no
    bytes.
    With weight_dtype "int8" each int8 matrix (matrix_dtype) is directly
    followed by its scales, and with QUANTIZATION_INT8_SMOOTHED each
    projection that owns its bytes then by its smoothing vector.
    `f32_tables`, `f16_tables`: the file's header flags (matrix_dtype);
    `residual_tables`: each int8 table that owns its bytes is followed, after
    its scales, by its residual codes and their scales (format version 11)."""
    if weight_dtype not in WEIGHT_DTYPES:
        raise ValueError(f"unknown weight dtype {weight_dtype!r} (known: {WEIGHT_DTYPES})")
    specs = families.of(cfg).tensors.float_tensors(cfg)
    if weight_dtype != "int8":
        return specs
    return _with_scales(specs, quantization, f32_tables, f16_tables, residual_tables)


def _with_scales(specs: "OrderedDict[str, TensorSpec]", quantization: Optional[str],
                 f32_tables: bool, f16_tables: bool,
                 residual_tables: bool) -> "OrderedDict[str, TensorSpec]":
    """Insert `X_scale` [out] (F32) after every int8 matrix X; the scales of an
    alias alias the scales of its target (output.weight_scale ->
    embedding.target_scale). QUANTIZATION_INT8_SMOOTHED: also `X_smooth`
    [in] (F32) after the scales of a projection that is not an alias;
    QUANTIZATION_INT8_STATIC: `X_input_scale` [1] there. `residual_tables`:
    `T_residual` [rows, ceil(in / 2)] (I8) and `T_residual_scale` [rows]
    after the scales of every int8 table T that owns its bytes."""
    smoothed = quantization == QUANTIZATION_INT8_SMOOTHED
    fixed = quantization == QUANTIZATION_INT8_STATIC
    out: "OrderedDict[str, TensorSpec]" = OrderedDict()
    for name, spec in specs.items():
        out[name] = spec
        if spec.kind == MATRIX and matrix_dtype(spec, "int8", quantization, f32_tables,
                                                f16_tables) == "int8":
            target = scale_name(spec.alias_of) if spec.alias_of is not None else None
            out[scale_name(name)] = TensorSpec((spec.shape[0],), VECTOR, target)
            if smoothed and spec.projection and spec.alias_of is None:
                out[smooth_name(name)] = TensorSpec((spec.shape[1],), VECTOR)
            if fixed and spec.projection and spec.alias_of is None:
                out[input_scale_name(name)] = TensorSpec((1,), VECTOR)
            if residual_tables and is_table(spec) and spec.alias_of is None:
                rows, dim = spec.shape
                out[residual_name(name)] = TensorSpec((rows, (dim + 1) // 2), RESIDUAL)
                out[residual_scale_name(name)] = TensorSpec((rows,), VECTOR)
    return out


def untie_output(spec: ModelSpec) -> Tuple[ModelSpec, List[str]]:
    """`spec` with every projection that shares an embedding table's bytes
    (a tied output projection) given a copy of them as its own weights, and
    the config saying so (Family.untied); and the names of those projections
    (none: `spec` as it is). The model computes the same function; an int8
    file can then keep the table in float (fp32, fp16) and the projection
    in int8."""
    specs = expected_tensors(spec.config, "fp32")
    tied = [name for name, tensor in specs.items()
            if tensor.kind == MATRIX and tensor.projection and tensor.alias_of is not None]
    family = families.of(spec.config)
    if not tied or family.untied is None:
        return spec, []
    weights = dict(spec.weights)
    for name in tied:
        weights[name] = np.array(weights[resolve_alias(specs, name)], dtype=np.float32, copy=True)
    config = family.untied(spec.config)
    still_tied = [name for name in tied if expected_tensors(config, "fp32")[name].alias_of]
    if still_tied:
        raise ValueError(f"{family.title}.untied left {still_tied} tied")
    return dataclasses.replace(spec, config=config, weights=weights), tied


def round_tables_to_fp16(spec: ModelSpec) -> ModelSpec:
    """`spec` with every embedding table that owns its bytes rounded to
    float16 (and held as float32 again, exactly), so that int8 calibration
    sees the lookups of a file with `f16_tables`. UserError for a table
    beyond float16's range."""
    weights = dict(spec.weights)
    for name, tensor in expected_tensors(spec.config, "fp32").items():
        if not is_table(tensor) or tensor.alias_of is not None:
            continue
        table = np.asarray(weights[name], dtype=np.float32)
        if np.abs(table).max(initial=0.0) > np.finfo(np.float16).max:
            raise UserError(f"tensor {name} has values beyond the fp16 range; keep the tables "
                            "in fp32 (--fp32-embeddings lookup)")
        weights[name] = table.astype(np.float16).astype(np.float32)
    return dataclasses.replace(spec, weights=weights)


def resolve_alias(specs: Dict[str, TensorSpec], name: str) -> str:
    """Follow alias links to the tensor that owns the bytes
    (output.weight -> embedding.target -> embedding.source)."""
    seen = set()
    while specs[name].alias_of is not None:
        if name in seen:
            raise ValueError(f"alias cycle at {name}")
        seen.add(name)
        name = specs[name].alias_of
    return name
