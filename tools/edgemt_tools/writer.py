"""The writer: one ModelSpec (from any source) -> the tensors and header of an
edgemt model file, in the storage type asked for.

It owns what no source should repeat: the tensor list a config of either
family implies (model_spec.expected_tensors, dispatching on the config's
type), aliases (tied and shared matrices are stored once), fp16 narrowing
(refused beyond the fp16 range) and int8 per-row quantization (quantize.py,
or the codes and smoothing vectors of an int8 calibration plan:
int8_calibration.py, or the codes a source gives as they are:
ModelSpec.int8_codes, Marian's intgemm8 matrices); model_file.write_model
then validates everything and writes the file atomically.
"""

from collections import OrderedDict
from typing import Dict, Mapping, Optional, Tuple

import numpy as np

from .errors import UserError
from .int8_calibration import Int8Plan
from .model_spec import (MATRIX, QUANTIZATION_INT8_PER_TENSOR, QUANTIZATION_INT8_SMOOTHED,
                         QUANTIZATION_INT8_STATIC, WEIGHT_DTYPES, ModelHeader, ModelSpec,
                         SideTokenizer, expected_tensors, input_scale_name, matrix_dtype,
                         residual_name, residual_scale_name, scale_name, smooth_name)
from .quantize import quantize_rows, residual_rows

Int8Codes = Mapping[str, Tuple[np.ndarray, np.ndarray]]  # name -> (codes [out, in], scale [out])
# name -> (codes, scale, activation multiplier, bias): ModelSpec.int8_static
Int8Static = Mapping[str, Tuple[np.ndarray, np.ndarray, np.float32, np.ndarray]]


def _int8_matrix(name: str, array: np.ndarray, plan: Optional[Int8Plan],
                 given: Int8Codes) -> Tuple[np.ndarray, np.ndarray]:
    """(codes, scales) of int8 matrix `name`: the source's own codes when it
    gives them, else the calibration plan's, else nearest rounding of `array`."""
    if name in given:
        return given[name]
    if plan is not None and name in plan.codes:
        return plan.codes[name]
    return quantize_rows(array, name)


def _stored(name: str, array: np.ndarray, kind: str, dtype: str,
            plan: Optional[Int8Plan], given: Int8Codes) -> "OrderedDict[str, np.ndarray]":
    """The arrays stored for tensor `name`, in file order: the tensor itself in
    its storage type and, for an int8 matrix, its per-row scales after it
    (then its smoothing vector, when the plan has one for it)."""
    if kind != MATRIX or dtype == "fp32":
        return OrderedDict([(name, np.ascontiguousarray(array, dtype=np.float32))])
    if dtype == "int8":
        codes, scale = _int8_matrix(name, array, plan, given)
        out = OrderedDict([(name, np.ascontiguousarray(codes)), (scale_name(name), scale)])
        if plan is not None and name in plan.multipliers:
            out[smooth_name(name)] = np.ascontiguousarray(plan.multipliers[name], dtype=np.float32)
        return out
    if np.abs(array).max(initial=0.0) > np.finfo(np.float16).max:
        raise UserError(f"tensor {name} has values beyond the fp16 range; store it in fp32 "
                        "(--dtype fp32; --fp32-embeddings for an int8 file's tables)")
    return OrderedDict([(name, np.ascontiguousarray(array.astype(np.float16)))])


def pack_tensors(config, weights: Mapping[str, np.ndarray], dtype: str,
                 plan: Optional[Int8Plan] = None, int8_codes: Optional[Int8Codes] = None,
                 per_tensor: bool = False, static: Optional[Int8Static] = None,
                 f32_tables: bool = False, f16_tables: bool = False,
                 residual_tables: bool = False
                 ) -> Tuple["OrderedDict[str, np.ndarray]", Dict[str, str]]:
    """(tensors in file order and storage type, aliases name -> owner) for
    float32 `weights` named as `expected_tensors(config, "fp32")` lists them
    (aliases left out); an int8 `plan` gives calibrated codes and the
    smoothing vectors of a smoothed file, `int8_codes` the matrices int8
    files store as given (ModelSpec.int8_codes; no smoothing); `per_tensor`
    an Int8PerTensorDynamic file (its tables in fp32), `static`
    (ModelSpec.int8_static) an Int8PerTensorStatic one, every projection's
    codes, scales and activation multiplier as given; `f32_tables` a per-row
    int8 file whose embedding tables stay fp32, `f16_tables` one whose
    tables are fp16 (no projection tied to one), `residual_tables` one whose
    int8 tables have residual codes (quantize.residual_rows of the table's
    stored codes: a plan's codes for a table are its tied projection's).
    Raises UserError for a missing or unexpected weight."""
    if dtype not in WEIGHT_DTYPES:
        raise UserError(f"unknown weight dtype {dtype!r} (known: {', '.join(WEIGHT_DTYPES)})")
    if (plan is not None or per_tensor) and dtype != "int8":
        raise ValueError("an int8 calibration plan or scheme needs dtype int8")
    if plan is not None and per_tensor:
        raise ValueError("a per-tensor int8 file is not calibrated")
    if static and (plan is not None or per_tensor or dtype != "int8"):
        raise ValueError("a static int8 file is neither calibrated nor dynamic")
    if (f32_tables or f16_tables) and (dtype != "int8" or per_tensor or static):
        raise ValueError(f"{'f32' if f32_tables else 'f16'}_tables is for per-row int8 files")
    if f32_tables and f16_tables:
        raise ValueError("f32_tables or f16_tables, not both")
    if residual_tables and (dtype != "int8" or per_tensor or static or f32_tables
                            or f16_tables):
        raise ValueError("residual_tables is for per-row int8 files with int8 tables")
    quantization = _scheme(plan, per_tensor, static)
    if static:
        int8_codes = {name: (codes, scales) for name, (codes, scales, _, _) in static.items()}
    specs = expected_tensors(config, dtype, quantization, f32_tables, f16_tables,
                             residual_tables)
    if f16_tables and any(spec.projection and spec.alias_of is not None
                          for spec in specs.values()):
        raise ValueError("f16_tables needs every projection untied (model_spec.untie_output)")
    wanted = [name for name, spec in expected_tensors(config, "fp32").items()
              if spec.alias_of is None]
    missing = [name for name in wanted if name not in weights]
    unexpected = sorted(set(weights) - set(wanted))
    if missing or unexpected:
        raise UserError(f"weights do not match the config: missing {missing[:5]}, "
                        f"unexpected {unexpected[:5]}")
    tensors: "OrderedDict[str, np.ndarray]" = OrderedDict()
    aliases: Dict[str, str] = {}
    for name, spec in specs.items():
        if spec.alias_of is not None:
            aliases[name] = spec.alias_of if spec.alias_of in tensors else aliases[spec.alias_of]
            continue
        if name in tensors:
            continue  # an int8 scale or smoothing vector, stored with its matrix
        tensors.update(_stored(name, weights[name], spec.kind,
                               matrix_dtype(spec, dtype, quantization, f32_tables, f16_tables),
                               plan,
                               int8_codes or {}))
        if residual_name(name) in specs:
            tensors[residual_name(name)], tensors[residual_scale_name(name)] = residual_rows(
                weights[name], tensors[name], tensors[scale_name(name)])
        if plan is not None and spec.projection and smooth_name(name) not in tensors:
            # a projection the calibration did not reach: no smoothing
            tensors[smooth_name(name)] = np.ones(spec.shape[1], np.float32)
        if static and spec.projection and spec.alias_of is None:
            if name not in static:
                raise UserError(f"{name}: the model has no int8 codes and activation scale for it")
            tensors[input_scale_name(name)] = np.array([static[name][2]], np.float32)
    return tensors, aliases


def _scheme(plan: Optional[Int8Plan], per_tensor: bool, static: Optional[Int8Static]):
    """The quantization scheme of an int8 file packed with these options."""
    if static:
        return QUANTIZATION_INT8_STATIC
    return (QUANTIZATION_INT8_SMOOTHED if plan is not None
            else QUANTIZATION_INT8_PER_TENSOR if per_tensor else None)


def own_target_tokenizer(spec: ModelSpec) -> Optional[SideTokenizer]:
    """spec.target_tokenizer, or None when it is the source side's again
    (one vocabulary for both languages, as in most Marian and Firefox
    models): the same SentencePiece bytes, pieces, unk and eos, and as many
    ids. The file then holds it once, which the runtime reads as the target
    side's too: 1 MB less for Firefox's 32,000 pieces, verified once."""
    target = spec.target_tokenizer
    if target is None:
        return None
    special = spec.special_tokens

    def chosen(side_id: int, default: int) -> int:  # -1: the special token's
        return side_id if side_id != -1 else default
    cfg = spec.config
    same = (bytes(target.spm) == bytes(spec.tokenizer_model)
            and target.pieces == spec.source_pieces
            and chosen(target.unk_id, special.unk) == chosen(spec.source_unk_id, special.unk)
            and chosen(target.eos_id, special.eos) == chosen(spec.source_eos_id, special.eos)
            and (cfg.source_vocab_size or cfg.vocab_size) == cfg.vocab_size)
    return None if same else target


def pack(spec: ModelSpec, dtype: str, plan: Optional[Int8Plan] = None, per_tensor: bool = False,
         static: bool = False, f32_tables: bool = False, f16_tables: bool = False,
         residual_tables: bool = False):
    """(ModelHeader, tensors, aliases) of `spec` stored as `dtype` (int8:
    with a calibration `plan`, a smoothed file; with `per_tensor`, an
    Int8PerTensorDynamic one; with `static`, an Int8PerTensorStatic one from
    spec.int8_static; matrices of spec.int8_codes keep their codes; with
    `f32_tables`, a per-row file's embedding tables stay fp32; with
    `f16_tables`, they are fp16; with `residual_tables`, its int8 tables
    have residual codes for lookups)."""
    fixed = spec.int8_static if static else None
    tensors, aliases = pack_tensors(spec.config, spec.weights, dtype, plan, spec.int8_codes,
                                    per_tensor, fixed, f32_tables, f16_tables, residual_tables)
    header = ModelHeader(
        config=spec.config, special_tokens=spec.special_tokens,
        source_language=spec.source_language, target_language=spec.target_language,
        weight_dtype=dtype, tokenizer_model=spec.tokenizer_model,
        quantization=_scheme(plan, per_tensor, fixed),
        append_eos_to_source=spec.append_eos_to_source, provenance=spec.provenance,
        source_pieces=spec.source_pieces, source_unk_id=spec.source_unk_id,
        source_eos_id=spec.source_eos_id, target_tokenizer=own_target_tokenizer(spec),
        decoding=spec.decoding, shortlist=spec.shortlist, f32_tables=f32_tables,
        f16_tables=f16_tables, residual_tables=residual_tables)
    return header, tensors, aliases
