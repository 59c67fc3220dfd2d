"""A numpy forward pass of the Transformer family, for int8 calibration
(its record's forward_pass, families/transformer.py; int8_calibration.py)
and the research studies.

It computes what the runtime computes (schema/TENSORS.md: post- or
pre-norm, sinusoidal or learned position table, embedding scale, a zero
first decoder input, final norms, ReLU / GELU / swish), closely enough that
the activations every projection sees are the runtime's: float32, but
without the runtime's exact operation order, and Marian's pre-norm decoding
detail (`raw_decoder_self_memory`) is not modelled. It is a reference for
statistics, not for bits.

It computes in float32 by default, or in `dtype` (int8 calibration uses
float64: numpy's float32 products and exponentials round differently on
different CPUs, by the BLAS kernel and SIMD code each picks, and a last-bit
difference in a recorded input can change a rounding decision of the
calibration, so float32 made a different int8 file on an Intel CPU than on
an AMD one; in float64 the differences stay far below float32's precision).

`project(name, x)` computes every product `x · Wᵀ + b` (`name` is the
projection's prefix, "encoder.layers.0.ffn.in", or "output"); callers swap
it to record inputs (int8_calibration.recorded_inputs) or to quantize them.
"""

import math
from typing import Callable, List, Mapping, Sequence

import numpy as np


Project = Callable[[str, np.ndarray], np.ndarray]


class NumpyTransformer:
    """Teacher-forced logits and greedy decoding of one Transformer-family
    model: `config` a TransformerConfig, `weights` every tensor name of its
    fp32 file, aliases included (int8_calibration.resolved_weights);
    computed in `dtype` (the weights are converted to it)."""

    def __init__(self, config, weights: Mapping[str, np.ndarray], dtype=np.float32):
        self.cfg = config
        self.ssru = getattr(config, "decoder_autoregression", "self-attention") == "ssru"
        self.dtype = np.dtype(dtype).type
        self.w = {name: np.asarray(value, dtype=self.dtype) for name, value in weights.items()}
        self.project: Project = self.exact

    def exact(self, name: str, x: np.ndarray) -> np.ndarray:
        return x @ self.w[name + ".weight"].T + self.bias(name)

    def bias(self, name: str):
        """A projection's bias; the output projection may have none (0)."""
        return self.w.get(name + ".bias", self.dtype(0))

    # ---- pieces ----------------------------------------------------------

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        y = (x - mu) / np.sqrt(var + self.dtype(self.cfg.layer_norm_eps))
        return (y * self.w[name + ".weight"] + self.w[name + ".bias"]).astype(self.dtype)

    def _activation(self, x: np.ndarray) -> np.ndarray:
        if self.cfg.activation == "relu":
            return np.maximum(x, 0)
        if self.cfg.activation == "swish":
            with np.errstate(over="ignore"):
                return (x / (1 + np.exp(-x))).astype(self.dtype)
        erf = np.vectorize(math.erf, otypes=[np.float64])
        return (0.5 * x * (1 + erf(x / math.sqrt(2)))).astype(self.dtype)

    def _attention(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
        """Multi-head attention of q [Tq, d] over k, v [Tk, d]."""
        heads = self.cfg.heads
        dh = self.cfg.d_model // heads
        out = np.empty_like(q)
        for h in range(heads):
            s = slice(h * dh, (h + 1) * dh)
            scores = q[:, s] @ k[:, s].T / self.dtype(math.sqrt(dh))    # [Tq, Tk]
            if causal:
                offset = k.shape[0] - q.shape[0]
                scores = scores + np.triu(np.full(scores.shape, -np.inf, self.dtype), 1 + offset)
            p = np.exp(scores - scores.max(-1, keepdims=True))
            out[:, s] = (p / p.sum(-1, keepdims=True)) @ v[:, s]
        return out

    def _sublayer(self, x: np.ndarray, norm: str, fn) -> np.ndarray:
        if self.cfg.norm_placement == "post":
            return self._norm(x + fn(x), norm)
        return x + fn(self._norm(x, norm))

    def _self_attention(self, y: np.ndarray, p: str, causal: bool) -> np.ndarray:
        """Layer prefix p's self-attention over all rows of y [T, d]."""
        d = self.cfg.d_model
        qkv = self.project(p + "self_attn.qkv", y)
        return self.project(p + "self_attn.out", self._attention(
            qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:], causal))

    def _ssru_step(self, gates: np.ndarray, cell: np.ndarray) -> np.ndarray:
        """Marian's SSRU over one position: gates [rows, 2d] (x~ | forget
        input), cell [rows, d] the state before it; returns the state after
        (the block's output is relu of it)."""
        d = self.cfg.d_model
        with np.errstate(over="ignore"):
            forget = (1 / (1 + np.exp(-gates[:, d:]))).astype(self.dtype)
        return (forget * cell + (1 - forget) * gates[:, :d]).astype(self.dtype)

    def _ssru(self, y: np.ndarray, p: str) -> np.ndarray:
        """Layer prefix p's SSRU block over the positions of y [T, d] in order."""
        gates = self.project(p + "ssru.gates", y)                          # [T, 2d]
        cell = np.zeros((1, self.cfg.d_model), self.dtype)
        out = np.empty_like(y)
        for t in range(y.shape[0]):
            cell = self._ssru_step(gates[t:t + 1], cell)
            out[t] = np.maximum(cell[0], 0)
        return out

    def _ffn(self, y: np.ndarray, p: str) -> np.ndarray:
        return self.project(p + "ffn.out", self._activation(self.project(p + "ffn.in", y)))

    # ---- the model -------------------------------------------------------

    def encode(self, src: Sequence[int]) -> np.ndarray:
        """The encoder's output (the decoder's memory), [len(src), d]."""
        cfg, w = self.cfg, self.w
        x = (w["embedding.source"][list(src)] * self.dtype(cfg.embedding_scale)
             + w["position.table"][:len(src)]).astype(self.dtype)
        for i in range(cfg.encoder_layers):
            p = f"encoder.layers.{i}."
            x = self._sublayer(x, p + "self_attn_norm",
                               lambda y, p=p: self._self_attention(y, p, False))
            x = self._sublayer(x, p + "ffn_norm", lambda y, p=p: self._ffn(y, p))
        return self._norm(x, "encoder.final_norm") if cfg.encoder_final_norm else x

    def decode(self, memory: np.ndarray, tgt_in: Sequence[int]) -> np.ndarray:
        """Logits [len(tgt_in), V]: position t predicts the token after
        tgt_in[:t+1]."""
        cfg, d, w = self.cfg, self.cfg.d_model, self.w
        embedded = w["embedding.target"][list(tgt_in)] * self.dtype(cfg.embedding_scale)
        if cfg.zero_decoder_start:
            embedded[0] = 0
        x = (embedded + w["position.table"][:len(tgt_in)]).astype(self.dtype)
        for i in range(cfg.decoder_layers):
            p = f"decoder.layers.{i}."

            def self_attention(y, p=p):
                qkv = self.project(p + "self_attn.qkv", y)
                return self.project(p + "self_attn.out", self._attention(
                    qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:], True))

            def cross_attention(y, p=p):
                q = self.project(p + "cross_attn.q", y)
                kv = self.project(p + "cross_attn.kv", memory)
                return self.project(p + "cross_attn.out", self._attention(
                    q, kv[:, :d], kv[:, d:], False))
            if self.ssru:
                x = self._sublayer(x, p + "ssru_norm", lambda y, p=p: self._ssru(y, p))
            else:
                x = self._sublayer(x, p + "self_attn_norm", self_attention)
            x = self._sublayer(x, p + "cross_attn_norm", cross_attention)
            x = self._sublayer(x, p + "ffn_norm", lambda y, p=p: self._ffn(y, p))
        if cfg.decoder_final_norm:
            x = self._norm(x, "decoder.final_norm")
        return self.project("output", x)

    def logits(self, src: Sequence[int], tgt_in: Sequence[int]) -> np.ndarray:
        return self.decode(self.encode(src), tgt_in)

    def greedy(self, sources: Sequence[Sequence[int]], start: int, eos: int,
               max_lens: Sequence[int], banned: Sequence[int] = ()) -> List[List[int]]:
        """Greedy output ids (without start and eos) of each source, at most
        max_lens[i] tokens: the sentences decode together, one position at a
        time (projections over every unfinished sentence at once, attention
        per sentence over the keys and values of its earlier positions)."""
        cfg, d, w = self.cfg, self.cfg.d_model, self.w
        count, layers = len(sources), cfg.decoder_layers
        cross = []  # [sentence][layer] -> (keys, values) of the memory
        for src in sources:
            memory = self.encode(src)
            kv = [self.project(f"decoder.layers.{i}.cross_attn.kv", memory) for i in range(layers)]
            cross.append([(k[:, :d], k[:, d:]) for k in kv])
        keys = [[[] for _ in range(layers)] for _ in range(count)]
        values = [[[] for _ in range(layers)] for _ in range(count)]
        cells = [[np.zeros((1, d), self.dtype) for _ in range(layers)] for _ in range(count)]
        banned = [t for t in banned if t != eos]
        outputs: List[List[int]] = [[] for _ in range(count)]
        active = [n for n in range(count) if max_lens[n] > 0]
        tokens = {n: start for n in active}
        step = 0
        while active:
            x = w["embedding.target"][[tokens[n] for n in active]] * self.dtype(cfg.embedding_scale)
            if cfg.zero_decoder_start and step == 0:
                x = np.zeros_like(x)
            x = (x + w["position.table"][step]).astype(self.dtype)          # [active, d]
            for i in range(layers):
                p = f"decoder.layers.{i}."

                def self_attention(y, p=p, i=i):
                    qkv = self.project(p + "self_attn.qkv", y)
                    rows = []
                    for r, n in enumerate(active):
                        keys[n][i].append(qkv[r:r + 1, d:2 * d])
                        values[n][i].append(qkv[r:r + 1, 2 * d:])
                        rows.append(self._attention(qkv[r:r + 1, :d], np.concatenate(keys[n][i]),
                                                    np.concatenate(values[n][i]), False))
                    return self.project(p + "self_attn.out", np.concatenate(rows))

                def ssru(y, p=p, i=i):
                    gates = self.project(p + "ssru.gates", y)
                    rows = []
                    for r, n in enumerate(active):
                        cells[n][i] = self._ssru_step(gates[r:r + 1], cells[n][i])
                        rows.append(np.maximum(cells[n][i], 0))
                    return np.concatenate(rows)

                def cross_attention(y, p=p, i=i):
                    q = self.project(p + "cross_attn.q", y)
                    rows = [self._attention(q[r:r + 1], *cross[n][i], False)
                            for r, n in enumerate(active)]
                    return self.project(p + "cross_attn.out", np.concatenate(rows))
                if self.ssru:
                    x = self._sublayer(x, p + "ssru_norm", ssru)
                else:
                    x = self._sublayer(x, p + "self_attn_norm", self_attention)
                x = self._sublayer(x, p + "cross_attn_norm", cross_attention)
                x = self._sublayer(x, p + "ffn_norm", lambda y, p=p: self._ffn(y, p))
            if cfg.decoder_final_norm:
                x = self._norm(x, "decoder.final_norm")
            logits = self.project("output", x)
            if banned:
                logits[:, banned] = -np.inf
            still = []
            for r, n in enumerate(active):
                tokens[n] = int(logits[r].argmax())
                if tokens[n] != eos:
                    outputs[n].append(tokens[n])
                    if len(outputs[n]) < max_lens[n]:
                        still.append(n)
            active = still
            step += 1
        return outputs
