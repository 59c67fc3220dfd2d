"""The PyTorch reference: the multi30k-en-de model rebuilt from its README.

    emb(x)  = E[x] * embedding_scale + PE[0:len]        E: embed.weight [V, d]
    memory  = transformer.encoder(emb(src))               [1, S, d]
    h       = transformer.decoder(emb(tgt), memory, tgt_mask = causal -inf)
    logits  = h @ E^T + generator.bias                    [., V] (generator tied to embed)

with `transformer = nn.Transformer(batch_first=True, norm_first=config)`;
PE comes from `positions.py` (the same table the converter stores).

Runs in float32 on CPU, eval mode, no grad, one sentence at a time: there is
no padding, so no key-padding masks are passed (and the nested-tensor fast path
has nothing to drop). The decoder is recomputed over the whole prefix at every
step (simple and exact; the runtime's K/V cache must reproduce it). Beam search
runs the K live hypotheses as one decoder batch against the encoder memory
computed once.

`weights_dtype="fp16"` rounds every tensor the converter stores as F16
(embedding and projection matrices) through float16 before running in float32:
the reference for a `--dtype fp16` file.

`weights_dtype="int8"` is the reference for a `--dtype int8` file
(Int8PerRowDynamic, quantize.py): every matrix the converter stores as I8
(embedding table = tied generator weight, attention in_proj/out_proj,
linear1/linear2, an untied generator) is replaced by its dequantized values,
and the input of every projection is fake-quantized per row right before the
matrix product, as the runtime's dynamic int8 GEMM quantizes it. That happens
in `int8_projections()`: torch.nn.functional.linear, which nn.Linear and
nn.MultiheadAttention's Python path call for every projection, is wrapped
while the model runs. PyTorch's fused eval-mode kernels
(`_transformer_encoder_layer_fwd`, `_native_multi_head_attention`) would
bypass it, so those forward passes run with grad enabled and parameters that
require grad, a condition under which PyTorch always declines the fast paths
(their `why_not_fast_path` checks); outputs are detached. Per forward pass that is one
fake-quantization per projection matrix of schema/TENSORS.md: 4 per encoder
layer (qkv, out, ffn.in, ffn.out), 7 per decoder layer (qkv, out, cross q,
cross kv, cross out, ffn.in, ffn.out) and 1 for the generator.

A calibrated int8 file (Int8SmoothedPerRowDynamic, int8_calibration.py) is
not a function of the checkpoint alone: give it as `int8_file`. Its matrices
are then read from the file (codes · scale), and a projection with a
smoothing vector m multiplies its input by m (float32) before the
fake-quantization, as the runtime does.
"""

import contextlib
import math
from typing import Callable, Iterator, List, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import search
from .model_spec import WEIGHT_DTYPES
from .positions import TABLES
from .quantize import (dequantize_rows, dequantize_table_rows, fake_quantize_activation_rows,
                       quantize_rows)
from .sources.torch import (is_matrix_key, read_config, torch_key_map,
                            transformer_config)


def fake_quantize_input(x: torch.Tensor) -> torch.Tensor:
    """A projection input [..., K] with each row replaced by its per-row int8
    values (quantize.fake_quantize_activation_rows, float32, no gradient)."""
    return torch.from_numpy(fake_quantize_activation_rows(x.detach().numpy()))


# projection(linear, input, weight, bias) -> output: what one projection
# computes inside int8_projections(); `linear` is the unpatched F.linear.
Projection = Callable[..., torch.Tensor]


def dynamic_int8_projection(linear, input, weight, bias=None):  # pylint: disable=redefined-builtin
    """The shipped scheme (Int8PerRowDynamic): the product of the per-row
    fake-quantized input with the weight, float32 output."""
    return linear(fake_quantize_input(input), weight, bias)


@contextlib.contextmanager
def int8_projections(projection: Optional[Projection] = None) -> Iterator[None]:
    """Within the block, every F.linear (= every projection of the model)
    multiplies the fake-quantized input, and grad mode is on so that PyTorch
    takes its unfused path, which calls F.linear. Not thread-safe (patches the
    torch.nn.functional module) and not reentrant (that would quantize twice).

    `projection` replaces what each F.linear call computes (default
    dynamic_int8_projection); other schemes (static scales, see
    tools/research/quant_study.py) or recorders of activation ranges plug in here."""
    original = F.linear
    if getattr(original, "_edgemt_int8", False):
        raise RuntimeError("int8_projections() is already active")
    project = dynamic_int8_projection if projection is None else projection

    def linear(input, weight, bias=None):  # pylint: disable=redefined-builtin
        return project(original, input, weight, bias)

    linear._edgemt_int8 = True
    F.linear = linear
    try:
        with torch.enable_grad():
            yield
    finally:
        F.linear = original


def _stored_matrix(name: str, tensor: torch.Tensor, weights_dtype: str) -> torch.Tensor:
    """The float32 values a matrix has after the converter stored it in `weights_dtype`."""
    if weights_dtype == "fp16":
        return tensor.half().float()
    if weights_dtype == "int8":
        codes, scale = quantize_rows(tensor.detach().float().numpy(), name)
        return torch.from_numpy(dequantize_rows(codes, scale))
    return tensor


def _file_matrices(path: str, cfg, fold: bool) -> "tuple":
    """(torch key -> float32 tensor of the stored values, torch key -> [(first
    row, multiplier)]) for every matrix of int8 file `path`. `fold`: the
    smoothing vectors multiplied into the matrices' columns instead (the
    weights they stand for, for a model without activation quantization),
    and no multipliers."""
    from .model_file import read_model
    from .model_spec import QUANTIZATION_INT8_PER_TENSOR, QUANTIZATION_INT8_STATIC, smooth_name
    model = read_model(path)
    if model.header.weight_dtype != "int8":
        raise ValueError(f"{path} is not an int8 model file")
    if model.header.quantization in (QUANTIZATION_INT8_PER_TENSOR, QUANTIZATION_INT8_STATIC):
        raise ValueError(f"{path} follows Marian's int8 arithmetic ({model.header.quantization}); "
                         "this reference quantizes activations per row")

    def stored(name: str) -> np.ndarray:
        values = dequantize_rows(model.array(name), model.array(name + "_scale"))
        if fold and smooth_name(name) in model.entries:
            values = (values * np.asarray(model.array(smooth_name(name)))[None, :]).astype(np.float32)
        return values
    matrices, multipliers = {}, {}
    keymap = torch_key_map(cfg)
    for key, parts in keymap.items():
        if not is_matrix_key(cfg, key):
            continue
        matrices[key] = torch.from_numpy(np.concatenate([stored(name) for name, _, _ in parts]))
        for name, first, _ in parts:
            if smooth_name(name) in model.entries and not fold:
                multipliers.setdefault(key, []).append((first, np.array(model.array(smooth_name(name)))))
    matrices["generator.weight"] = torch.from_numpy(stored("output.weight"))
    if smooth_name("output.weight") in model.entries and not fold:
        multipliers["generator.weight"] = [(0, np.array(model.array(smooth_name("output.weight"))))]
    return matrices, multipliers


def _file_lookup_table(path: str) -> Optional[np.ndarray]:
    """The embedding table [V, d] as the int8 file's lookups read it when
    its tables have residual codes (the shared codes plus the residue;
    quantize.dequantize_table_rows), else None (lookups read the codes)."""
    from .model_file import read_model
    from .model_spec import residual_name, residual_scale_name, scale_name
    model = read_model(path)
    if not model.header.residual_tables:
        return None
    name = "embedding.source"  # this model's one table (embed.weight)
    return dequantize_table_rows(model.array(name), model.array(scale_name(name)),
                                 model.array(residual_name(name)),
                                 model.array(residual_scale_name(name)))


class Seq2SeqTransformer(nn.Module):
    """The README's wrapper: `embed`, `transformer`, `generator` (state_dict names)."""

    def __init__(self, config: dict):
        super().__init__()
        d, vocab = config["d_model"], config["vocab_size"]
        self.embed = nn.Embedding(vocab, d)
        self.transformer = nn.Transformer(
            d_model=d, nhead=config["heads"], num_encoder_layers=config["encoder_layers"],
            num_decoder_layers=config["decoder_layers"], dim_feedforward=config["ffn_dim"],
            dropout=0.0, activation=config["activation"], batch_first=True,
            norm_first=config["norm_first"], layer_norm_eps=float(config.get("layer_norm_eps",
                                                                             1e-5)))
        self.generator = nn.Linear(d, vocab)
        if config["tied_embeddings"]:
            self.generator.weight = self.embed.weight
        self.scale = float(config["embedding_scale"])
        table = TABLES[config["positional_encoding"]](config["max_len"], d)
        self.register_buffer("positions", torch.from_numpy(table), persistent=False)
        # True: projections see per-row int8 fake-quantized inputs (int8 reference).
        self.quantize_activations = False
        # With quantize_activations: what each projection computes, passed to
        # int8_projections() (None = dynamic per-row, the shipped scheme).
        self.projection: Optional[Projection] = None

    def embed_tokens(self, ids: torch.Tensor) -> torch.Tensor:
        """ids [N, t] -> [N, t, d]."""
        return self.embed(ids) * self.scale + self.positions[: ids.shape[1]]

    def encode(self, src: torch.Tensor) -> torch.Tensor:
        """src [1, S] -> memory [1, S, d] (encoder stack incl. its final norm)."""
        if self.quantize_activations:
            with int8_projections(self.projection):
                return self.transformer.encoder(self.embed_tokens(src)).detach()
        return self.transformer.encoder(self.embed_tokens(src))

    def next_logits(self, tgt: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        """tgt [N, t], memory [N, S, d] -> logits after the last position [N, V]."""
        if self.quantize_activations:
            with int8_projections(self.projection):
                return self._next_logits(tgt, memory).detach()
        return self._next_logits(tgt, memory)

    def _next_logits(self, tgt: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        t = tgt.shape[1]
        causal = torch.triu(torch.full((t, t), -math.inf), diagonal=1)
        h = self.transformer.decoder(self.embed_tokens(tgt), memory, tgt_mask=causal)
        return self.generator(h[:, -1])


def _smoothed_projection(model: nn.Module, multipliers) -> Projection:
    """dynamic_int8_projection with each smoothed projection's input first
    multiplied by its vector; projections are told apart by where their
    weight starts in memory (a row slice of in_proj_weight for cross q/kv)."""
    params = dict(model.named_parameters())
    by_address = {}
    for key, parts in multipliers.items():
        weight = params[key]
        for first, m in parts:
            address = weight.data_ptr() + first * weight.shape[1] * weight.element_size()
            by_address[address] = torch.from_numpy(m)

    def projection(linear, input, weight, bias=None):  # pylint: disable=redefined-builtin
        m = by_address.get(weight.data_ptr())
        x = input if m is None else input.detach() * m
        return linear(fake_quantize_input(x), weight, bias)
    return projection


class TorchReference:
    """Load checkpoint + config (+ SentencePiece) and translate one sentence at a time."""

    def __init__(self, checkpoint: str, config_path: str, spm_path: Optional[str] = None,
                 weights_dtype: str = "fp32", quantize_activations: bool = True,
                 int8_file: Optional[str] = None):
        """weights_dtype: "fp32", "fp16" or "int8" (see the module docstring).
        quantize_activations=False keeps only the int8 weight rounding (the
        dequantized-weights-only model, to tell the two error sources apart);
        it has no effect for fp32/fp16. int8_file: the int8 .emt file whose
        matrices and smoothing vectors to use (a calibrated conversion)."""
        if weights_dtype not in WEIGHT_DTYPES:
            raise ValueError(f"weights_dtype must be one of {', '.join(WEIGHT_DTYPES)}, "
                             f"got {weights_dtype}")
        self.weights_dtype = weights_dtype
        self.config = read_config(config_path)
        state = torch.load(checkpoint, map_location="cpu", weights_only=True)
        cfg = transformer_config(self.config, tied_output=True)
        multipliers = {}
        if int8_file is not None:
            if weights_dtype != "int8":
                raise ValueError("int8_file needs weights_dtype int8")
            matrices, multipliers = _file_matrices(int8_file, cfg, fold=not quantize_activations)
            state = {k: (matrices[k] if k in matrices else v) for k, v in state.items()}
        elif weights_dtype != "fp32":
            state = {k: (_stored_matrix(k, v, weights_dtype) if is_matrix_key(cfg, k) else v)
                     for k, v in state.items()}
        self.model = Seq2SeqTransformer(self.config)
        self.model.load_state_dict(state, strict=True)
        lookups = _file_lookup_table(int8_file) if int8_file is not None else None
        if lookups is not None:
            # Lookups read the residual codes too; the tied generator keeps
            # the shared codes (its weight stays the loaded parameter).
            self.model.embed = nn.Embedding.from_pretrained(torch.from_numpy(lookups),
                                                            freeze=False)
        if multipliers:
            self.model.projection = _smoothed_projection(self.model, multipliers)
        self.model.eval()
        self.model.quantize_activations = weights_dtype == "int8" and quantize_activations
        if self.model.quantize_activations:
            self.model.requires_grad_(True)  # keeps PyTorch off its fused fast paths
        self.bos, self.eos, self.pad = (self.config["bos_id"], self.config["eos_id"],
                                        self.config["pad_id"])
        self.banned = sorted({self.pad, self.bos})
        self.max_positions = self.config["max_len"]
        self.spm = None
        if spm_path is not None:
            import sentencepiece
            self.spm = sentencepiece.SentencePieceProcessor(model_file=spm_path)

    # -- text <-> ids
    def encode_text(self, text: str) -> List[int]:
        """Source ids: spm.encode(text) + [eos]."""
        return list(self.spm.encode(text)) + [self.eos]

    def decode_ids(self, ids: Sequence[int]) -> str:
        specials = {self.bos, self.eos, self.pad}
        return self.spm.decode([i for i in ids if i not in specials])

    # -- model calls
    def _memory(self, src_ids: Sequence[int]) -> torch.Tensor:
        if not 0 < len(src_ids) <= self.max_positions:
            raise ValueError(f"source has {len(src_ids)} ids; 1..{self.max_positions} allowed")
        return self.model.encode(torch.tensor([list(src_ids)], dtype=torch.long))

    def _logits_fn(self, memory: torch.Tensor):
        def logits_fn(prefixes: torch.Tensor) -> torch.Tensor:
            return self.model.next_logits(prefixes, memory.expand(prefixes.shape[0], -1, -1))
        return logits_fn

    def max_len(self, src_len: int, a: float = search.DEFAULT_MAX_LEN_A,
                b: float = search.DEFAULT_MAX_LEN_B) -> int:
        return search.max_target_length(src_len, self.max_positions, a, b)

    @torch.no_grad()
    def step_logits(self, src_ids: Sequence[int], tgt_prefix_ids: Sequence[int]) -> np.ndarray:
        """Logits [V] (float32) for the token after `tgt_prefix_ids` (which starts with bos)."""
        memory = self._memory(src_ids)
        prefix = torch.tensor([list(tgt_prefix_ids)], dtype=torch.long)
        return self.model.next_logits(prefix, memory)[0].numpy().copy()

    @torch.no_grad()
    def greedy(self, src_ids: Sequence[int], max_len: Optional[int] = None) -> List[int]:
        """Generated ids (no bos/eos); max_len defaults to max_len(len(src_ids))."""
        memory = self._memory(src_ids)
        limit = self.max_len(len(src_ids)) if max_len is None else max_len
        return search.greedy(self._logits_fn(memory), self.bos, self.eos, self.banned, limit)

    @torch.no_grad()
    def beam_search(self, src_ids: Sequence[int], beam: int = search.DEFAULT_BEAM,
                    length_penalty: float = search.DEFAULT_LENGTH_PENALTY,
                    max_len: Optional[int] = None) -> List[int]:
        """Best hypothesis' ids (no bos/eos) per SEARCH.md."""
        return self.beam_hypotheses(src_ids, beam, length_penalty, max_len)[0].tokens

    @torch.no_grad()
    def beam_hypotheses(self, src_ids: Sequence[int], beam: int = search.DEFAULT_BEAM,
                        length_penalty: float = search.DEFAULT_LENGTH_PENALTY,
                        max_len: Optional[int] = None) -> List[search.Hypothesis]:
        """[best] + all finished hypotheses in finishing order (for tests and debugging)."""
        memory = self._memory(src_ids)
        limit = self.max_len(len(src_ids)) if max_len is None else max_len
        finished = search.beam_search(self._logits_fn(memory), self.bos, self.eos, self.banned,
                                      beam, length_penalty, limit)
        return [search.best(finished)] + finished
