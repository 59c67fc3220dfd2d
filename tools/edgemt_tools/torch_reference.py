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
"""

import math
from typing import List, Optional, Sequence

import numpy as np
import torch
from torch import nn

from . import search
from .positions import TABLES
from .torch_frontend import is_matrix_key, read_config, transformer_config


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

    def embed_tokens(self, ids: torch.Tensor) -> torch.Tensor:
        """ids [N, t] -> [N, t, d]."""
        return self.embed(ids) * self.scale + self.positions[: ids.shape[1]]

    def encode(self, src: torch.Tensor) -> torch.Tensor:
        """src [1, S] -> memory [1, S, d] (encoder stack incl. its final norm)."""
        return self.transformer.encoder(self.embed_tokens(src))

    def next_logits(self, tgt: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        """tgt [N, t], memory [N, S, d] -> logits after the last position [N, V]."""
        t = tgt.shape[1]
        causal = torch.triu(torch.full((t, t), -math.inf), diagonal=1)
        h = self.transformer.decoder(self.embed_tokens(tgt), memory, tgt_mask=causal)
        return self.generator(h[:, -1])


class TorchReference:
    """Load checkpoint + config (+ SentencePiece) and translate one sentence at a time."""

    def __init__(self, checkpoint: str, config_path: str, spm_path: Optional[str] = None,
                 weights_dtype: str = "fp32"):
        if weights_dtype not in ("fp32", "fp16"):
            raise ValueError(f"weights_dtype must be fp32 or fp16, got {weights_dtype}")
        self.config = read_config(config_path)
        state = torch.load(checkpoint, map_location="cpu", weights_only=True)
        if weights_dtype == "fp16":
            cfg = transformer_config(self.config, tied_output=True)
            state = {k: (v.half().float() if is_matrix_key(cfg, k) else v)
                     for k, v in state.items()}
        self.model = Seq2SeqTransformer(self.config)
        self.model.load_state_dict(state, strict=True)
        self.model.eval()
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
