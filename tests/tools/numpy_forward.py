"""An independent float64 numpy forward pass over the tensors of an .emt file.

Test support only: it reads weights by their schema/TENSORS.md names, so a
wrong name mapping or row split in the converter shows up as a logits mismatch
against the PyTorch reference. Post-norm and pre-norm, relu/gelu. Int8 files
are read as their dequantized matrices (codes x row scales, in float32 as the
runtime's embedding lookup does), a smoothed file's projections times their
smoothing vector column by column (the weights they stand for); activations
are not quantized here, so this matches the int8 reference with
quantize_activations=False.
"""

import math

import numpy as np

from edgemt_tools.quantize import dequantize_rows, dequantize_table_rows


def _weights(model_file, name):
    if model_file.header.residual_tables and name in ("embedding.source", "embedding.target"):
        # Lookups read the residual codes too (a shared target table: the source's).
        owner = name if name + "_residual" in model_file.entries else "embedding.source"
        return dequantize_table_rows(*(model_file.array(owner + suffix) for suffix in (
            "", "_scale", "_residual", "_residual_scale"))).astype(np.float64)
    array = model_file.array(name)
    if array.dtype == np.int8:
        array = dequantize_rows(array, model_file.array(name + "_scale")).astype(np.float64)
        if name + "_smooth" in model_file.entries:
            array = array * np.asarray(model_file.array(name + "_smooth"), np.float64)[None, :]
    return array.astype(np.float64)


class NumpyTransformer:
    def __init__(self, model_file):
        self.cfg = model_file.header.config
        self.w = {name: _weights(model_file, name) for name in model_file.entries}

    def _ln(self, x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.cfg.layer_norm_eps) * self.w[name + ".weight"] \
            + self.w[name + ".bias"]

    def _linear(self, x, name, rows=None):
        weight, bias = self.w[name + ".weight"], self.w[name + ".bias"]
        if rows is not None:
            weight, bias = weight[rows], bias[rows]
        return x @ weight.T + bias

    def _attention(self, q, k, v, causal):
        """q [Tq, d], k/v [Tk, d] (already projected) -> [Tq, d]."""
        heads, d = self.cfg.heads, self.cfg.d_model
        hd = d // heads
        out = np.zeros_like(q)
        for h in range(heads):
            s = slice(h * hd, (h + 1) * hd)
            scores = q[:, s] @ k[:, s].T / math.sqrt(hd)
            if causal:
                scores = scores + np.triu(np.full(scores.shape, -np.inf), 1)
            p = np.exp(scores - scores.max(-1, keepdims=True))
            p /= p.sum(-1, keepdims=True)
            out[:, s] = p @ v[:, s]
        return out

    def _act(self, x):
        if self.cfg.activation == "relu":
            return np.maximum(x, 0)
        erf = np.vectorize(math.erf)
        return 0.5 * x * (1 + erf(x / math.sqrt(2)))

    def _sublayer(self, x, norm, fn):
        if self.cfg.norm_placement == "post":
            return self._ln(x + fn(x), norm)
        return x + fn(self._ln(x, norm))

    def _embed(self, ids, table):
        return self.w[table][ids] * self.cfg.embedding_scale + self.w["position.table"][:len(ids)]

    def encode(self, src):
        d = self.cfg.d_model
        x = self._embed(src, "embedding.source")
        for i in range(self.cfg.encoder_layers):
            p = f"encoder.layers.{i}."

            def self_attn(y, p=p):
                qkv = self._linear(y, p + "self_attn.qkv")
                a = self._attention(qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:], False)
                return self._linear(a, p + "self_attn.out")
            x = self._sublayer(x, p + "self_attn_norm", self_attn)
            x = self._sublayer(x, p + "ffn_norm", lambda y, p=p: self._linear(
                self._act(self._linear(y, p + "ffn.in")), p + "ffn.out"))
        if self.cfg.encoder_final_norm:
            x = self._ln(x, "encoder.final_norm")
        return x

    def next_logits(self, src, prefix):
        """Logits [V] for the token after `prefix` (list of ids starting with bos)."""
        d = self.cfg.d_model
        memory = self.encode(src)
        x = self._embed(prefix, "embedding.target")
        for i in range(self.cfg.decoder_layers):
            p = f"decoder.layers.{i}."

            def self_attn(y, p=p):
                qkv = self._linear(y, p + "self_attn.qkv")
                a = self._attention(qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:], True)
                return self._linear(a, p + "self_attn.out")

            def cross_attn(y, p=p):
                q = self._linear(y, p + "cross_attn.q")
                kv = self._linear(memory, p + "cross_attn.kv")
                a = self._attention(q, kv[:, :d], kv[:, d:], False)
                return self._linear(a, p + "cross_attn.out")
            x = self._sublayer(x, p + "self_attn_norm", self_attn)
            x = self._sublayer(x, p + "cross_attn_norm", cross_attn)
            x = self._sublayer(x, p + "ffn_norm", lambda y, p=p: self._linear(
                self._act(self._linear(y, p + "ffn.in")), p + "ffn.out"))
        if self.cfg.decoder_final_norm:
            x = self._ln(x, "decoder.final_norm")
        logits = x[-1] @ self.w["output.weight"].T
        if self.cfg.output_bias:
            logits = logits + self.w["output.bias"]
        return logits
