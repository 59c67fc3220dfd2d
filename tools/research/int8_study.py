"""`edgemt-int8-study`: where an int8 model's error comes from, per matrix.

Reads an fp32 model file of the Transformer family, translates the first N
lines of a text file greedily with the runtime (the Python module, fp32:
the tokens the int8 model should reproduce), and runs an independent
float32 numpy forward pass teacher-forced on those tokens that records the
input of every projection (every Linear of schema/transformer_tensors.def,
and the output projection).
Then, for each projection and each activation scheme:

  narrow      per-row dynamic codes in [-64, 64] (kernels' kNarrowCodes)
  full        per-row dynamic codes in [-127, 127] (kFullCodes)
  smooth      full codes after per-input-channel smoothing (SmoothQuant,
              alpha 0.5): x_j / s_j quantized, weight column j times s_j,
              s_j = sqrt(max|x_j| / max|w_j|) from the calibration rows

with the weights int8 per output row as the converter stores them, it
prints the relative error of the projection's output against float32
(||y_int8 - y|| / ||y|| over all rows) and how outlying its inputs are
(median over rows of max|x| / rms(x): near 1-3 for evenly spread rows,
tens for rows a few channels dominate; and the channels that hold most
row maxima).

End to end, per scheme: every projection quantized at once, the share of
decoder positions whose arg-max token stays the fp32 one (teacher forced),
and, per projection, that share with only that projection quantized
(--sensitivity): which matrices a scheme should treat differently.

Smoothing factors are calibrated on the first half of the sentences and
measured on the second half, so the figures are out of sample.
"""

import argparse
import math
import os
import sys
from collections import defaultdict
from typing import Dict, List, Sequence, Tuple

import numpy as np

from research.study_cli import REPO_ROOT, StudyParser

sys.path.insert(0, os.path.join(REPO_ROOT, "tools"))
from edgemt_tools.model_file import read_model  # noqa: E402
from edgemt_tools.quantize import QMAX, dequantize_rows, quantize_rows  # noqa: E402

SCHEMES = ("narrow", "full", "smooth")
CODE_LIMITS = {"narrow": 64, "full": 127, "smooth": 127}
SMOOTH_ALPHA = 0.5


# ---- activation and weight quantization (as the runtime and converter do) ----

def fake_quantize_rows(x: np.ndarray, limit: int) -> np.ndarray:
    """Each row of x [rows, K] replaced by its int8 codes' values (per-row
    dynamic, codes in [-limit, limit]), float32 as the runtime computes."""
    amax = np.abs(x).max(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        inverse = np.float32(limit) / amax
        ok = np.isfinite(inverse)
        q = np.clip(np.rint(np.where(ok, x, 0) * np.where(ok, inverse, 0)), -limit, limit)
        scale = np.where(ok, amax / np.float32(limit), 0).astype(np.float32)
    return (q * scale).astype(np.float32)


def int8_weight(w: np.ndarray) -> np.ndarray:
    """w [out, in] as its per-row int8 codes stand for (the converter's)."""
    q, scale = quantize_rows(w)
    return dequantize_rows(q, scale)


# ---- the model: tokens, and a float32 numpy forward pass ---------------------

class Forward:
    """Teacher-forced float32 forward pass of an fp32 Transformer-family file.
    `project` computes every projection: the study swaps it to quantize."""

    def __init__(self, model):
        self.cfg = model.header.config
        if self.cfg.raw_decoder_self_memory:
            print("note: raw_decoder_self_memory (Marian pre-norm) is not modelled; the "
                  "teacher-forced pass differs from the runtime's decoding there", file=sys.stderr)
        self.w = {name: np.asarray(model.array(name), dtype=np.float32) for name in model.entries}
        for name, array in self.w.items():
            if array.dtype != np.float32:
                raise SystemExit(f"edgemt-int8-study: {name} is not float32: give an fp32 file")
        self.project = self.exact

    def exact(self, name: str, x: np.ndarray) -> np.ndarray:
        return x @ self.w[name + ".weight"].T + self.bias(name)

    def bias(self, name: str):
        """A projection's bias; the output projection may have none (0)."""
        return self.w.get(name + ".bias", np.float32(0))

    def _ln(self, x, name):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return ((x - mu) / np.sqrt(var + np.float32(self.cfg.layer_norm_eps)) *
                self.w[name + ".weight"] + self.w[name + ".bias"]).astype(np.float32)

    def _act(self, x):
        if self.cfg.activation == "relu":
            return np.maximum(x, 0)
        if self.cfg.activation == "swish":
            return (x / (1 + np.exp(-x))).astype(np.float32)
        erf = np.vectorize(math.erf)
        return (0.5 * x * (1 + erf(x / math.sqrt(2)))).astype(np.float32)

    def _attention(self, q, k, v, causal):
        heads, d = self.cfg.heads, self.cfg.d_model
        hd = d // heads
        out = np.zeros_like(q)
        for h in range(heads):
            s = slice(h * hd, (h + 1) * hd)
            scores = q[:, s] @ k[:, s].T / np.float32(math.sqrt(hd))
            if causal:
                scores = scores + np.triu(np.full(scores.shape, -np.inf, np.float32), 1)
            p = np.exp(scores - scores.max(-1, keepdims=True))
            out[:, s] = (p / p.sum(-1, keepdims=True)) @ v[:, s]
        return out

    def _sublayer(self, x, norm, fn):
        if self.cfg.norm_placement == "post":
            return self._ln(x + fn(x), norm)
        return x + fn(self._ln(x, norm))

    def _ffn(self, y, p):
        return self.project(p + "ffn.out", self._act(self.project(p + "ffn.in", y)))

    def logits(self, src: Sequence[int], tgt_in: Sequence[int]) -> np.ndarray:
        """Logits [len(tgt_in), V]: position t predicts the token after tgt_in[:t+1]."""
        cfg, d, w = self.cfg, self.cfg.d_model, self.w
        x = w["embedding.source"][src] * np.float32(cfg.embedding_scale) + \
            w["position.table"][:len(src)]
        for i in range(cfg.encoder_layers):
            p = f"encoder.layers.{i}."

            def self_attn(y, p=p):
                qkv = self.project(p + "self_attn.qkv", y)
                return self.project(p + "self_attn.out",
                                    self._attention(qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:], False))
            x = self._sublayer(x, p + "self_attn_norm", self_attn)
            x = self._sublayer(x, p + "ffn_norm", lambda y, p=p: self._ffn(y, p))
        memory = self._ln(x, "encoder.final_norm") if cfg.encoder_final_norm else x
        embedded = w["embedding.target"][list(tgt_in)] * np.float32(cfg.embedding_scale)
        if cfg.zero_decoder_start:
            embedded[0] = 0
        x = embedded + w["position.table"][:len(tgt_in)]
        for i in range(cfg.decoder_layers):
            p = f"decoder.layers.{i}."

            def self_attn(y, p=p):
                qkv = self.project(p + "self_attn.qkv", y)
                return self.project(p + "self_attn.out",
                                    self._attention(qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:], True))

            def cross_attn(y, p=p):
                q = self.project(p + "cross_attn.q", y)
                kv = self.project(p + "cross_attn.kv", memory)
                return self.project(p + "cross_attn.out",
                                    self._attention(q, kv[:, :d], kv[:, d:], False))
            x = self._sublayer(x, p + "self_attn_norm", self_attn)
            x = self._sublayer(x, p + "cross_attn_norm", cross_attn)
            x = self._sublayer(x, p + "ffn_norm", lambda y, p=p: self._ffn(y, p))
        if cfg.decoder_final_norm:
            x = self._ln(x, "decoder.final_norm")
        return self.project("output", x)


def source_ids(model, spm, text: str) -> List[int]:
    """The runtime's source ids of `text` (runtime/text/tokenizer.cc)."""
    header = model.header
    if header.source_pieces:
        by_piece = {piece: i for i, piece in enumerate(header.source_pieces)}
        ids = [by_piece.get(piece, header.source_unk_id) for piece in spm.encode(text, out_type=str)]
        eos = header.source_eos_id
    else:
        ids = spm.encode(text)
        eos = header.special_tokens.eos
    return ids + [eos] if header.append_eos_to_source else ids


def runtime_module():
    """The Python module over libedgemt.so (runtime/python/edgemt), loaded
    under another name: `edgemt` is already the FlatBuffers code's package
    (tools/edgemt_tools/generated, which model_file.py put on sys.path)."""
    import importlib.util
    folder = os.path.join(REPO_ROOT, "runtime", "python", "edgemt")
    spec = importlib.util.spec_from_file_location("edgemt_runtime", os.path.join(folder, "__init__.py"),
                                                  submodule_search_locations=[folder])
    module = importlib.util.module_from_spec(spec)
    sys.modules["edgemt_runtime"] = module
    spec.loader.exec_module(module)
    return module


# ---- the study ---------------------------------------------------------------

def collect(forward: Forward, pairs) -> Dict[str, List[np.ndarray]]:
    """Every projection's inputs over all pairs: name -> list of [rows, K]."""
    inputs = defaultdict(list)

    def record(name, x):
        inputs[name].append(x)
        return forward.exact(name, x)
    forward.project = record
    for src, tgt_in, _ in pairs:
        forward.logits(src, tgt_in)
    forward.project = forward.exact
    return inputs


def smoothing(rows: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """SmoothQuant factors s [K]: sqrt(max|x_j| / max|w_j|), 1 where undefined."""
    act = np.abs(rows).max(axis=0)
    wmax = np.abs(weight).max(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (act ** SMOOTH_ALPHA) / (wmax ** (1 - SMOOTH_ALPHA))
    return np.where(np.isfinite(s) & (s > 0), s, 1).astype(np.float32)


class Quantizer:
    """`project` functions for each scheme, with the weights prepared once."""

    def __init__(self, forward: Forward, factors: Dict[str, np.ndarray]):
        self.forward = forward
        self.factors = factors
        self.weights = {}

    def weight(self, name: str, scheme: str) -> np.ndarray:
        key = (name, scheme == "smooth")
        if key not in self.weights:
            w = self.forward.w[name + ".weight"]
            if scheme == "smooth":
                w = w * self.factors[name][None, :]
            self.weights[key] = int8_weight(w)
        return self.weights[key]

    def project(self, name: str, x: np.ndarray, scheme: str) -> np.ndarray:
        if scheme == "smooth":
            x = x / self.factors[name]
        xq = fake_quantize_rows(x.astype(np.float32), CODE_LIMITS[scheme])
        return xq @ self.weight(name, scheme).T + self.forward.bias(name)


def argmax_agreement(forward: Forward, pairs, project) -> float:
    """Share of teacher-forced positions whose arg-max is fp32's."""
    forward.project = project
    same = total = 0
    for src, tgt_in, want in pairs:
        got = forward.logits(src, tgt_in).argmax(-1)
        same += int((got == want).sum())
        total += len(want)
    forward.project = forward.exact
    return same / max(total, 1)


def outliers(rows: np.ndarray) -> Tuple[float, str]:
    """Median max|x|/rms over rows, and the channels most often the row max."""
    rms = np.sqrt((rows ** 2).mean(-1)) + 1e-30
    ratio = float(np.median(np.abs(rows).max(-1) / rms))
    top = np.bincount(np.abs(rows).argmax(-1), minlength=rows.shape[1])
    order = np.argsort(-top)[:3]
    share = ", ".join(f"{j} ({100 * top[j] / len(rows):.0f}%)" for j in order if top[j] > 0)
    return ratio, share


def main(argv=None) -> int:
    parser = StudyParser(prog="edgemt-int8-study", description=__doc__.split("\n\n")[0],
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("model", help="an fp32 .emt file of the Transformer family")
    parser.add_argument("-i", "--input", default=os.path.join(
        REPO_ROOT, "models", "reference", "test_2016_flickr.en"), help="source lines [%(default)s]")
    parser.add_argument("--sentences", type=int, default=60, help="lines used [%(default)s]")
    parser.add_argument("--sensitivity", action="store_true",
                        help="also the arg-max agreement with one projection quantized at a time")
    args = parser.parse_args(argv)

    import sentencepiece
    edgemt = runtime_module()

    model = read_model(args.model)
    if model.header.weight_dtype != "fp32" or not hasattr(model.header.config, "heads"):
        parser.error("give an fp32 file of the Transformer family")
    spm = sentencepiece.SentencePieceProcessor(model_proto=model.header.tokenizer_model)
    with open(args.input, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle if line.strip()][:args.sentences]
    runtime = edgemt.Translator(edgemt.Model(args.model), max_batch=1)
    forward = Forward(model)
    start = model.header.special_tokens.decoder_start
    eos = model.header.special_tokens.eos
    pairs = []
    for line in lines:
        src = source_ids(model, spm, line)
        out = runtime.translate_ids([src], beam_size=1)[0].tokens
        tgt_in = [start] + out
        pairs.append((src, tgt_in, np.array(out + [eos])))
    half = len(pairs) // 2
    calibration, test = pairs[:half], pairs[half:]

    # Sanity: the numpy pass picks the runtime's tokens.
    exact = argmax_agreement(forward, test, forward.exact)
    print(f"{args.model}: {len(test)} test sentences ({sum(len(p[2]) for p in test)} positions), "
          f"{len(calibration)} for calibration; numpy fp32 arg-max = runtime's at "
          f"{100 * exact:.2f}% of positions")

    calib_inputs = collect(forward, calibration)
    test_inputs = collect(forward, test)
    names = list(test_inputs)
    factors = {n: smoothing(np.concatenate(calib_inputs[n]), forward.w[n + ".weight"]) for n in names}
    quantizer = Quantizer(forward, factors)

    print(f"\nper projection: relative output error (||y_int8 - y|| / ||y||) on the test rows; "
          f"inputs: median max|x|/rms per row, channels holding the row max")
    print(f"{'projection':34s} {'K':>5s} {'max/rms':>8s} " +
          " ".join(f"{s:>8s}" for s in SCHEMES) + "  top channels")
    totals = defaultdict(float)
    for name in names:
        rows = np.concatenate(test_inputs[name])
        y = forward.exact(name, rows)
        errors = []
        for scheme in SCHEMES:
            e = float(np.linalg.norm(quantizer.project(name, rows, scheme) - y) / np.linalg.norm(y))
            errors.append(e)
            totals[scheme] += e
        ratio, share = outliers(rows)
        print(f"{name:34s} {rows.shape[1]:5d} {ratio:8.1f} " +
              " ".join(f"{e:8.4f}" for e in errors) + f"  {share}")
    print(f"{'mean':34s} {'':5s} {'':8s} " +
          " ".join(f"{totals[s] / len(names):8.4f}" for s in SCHEMES))

    print("\nend to end (every projection quantized): arg-max = fp32's at")
    for scheme in SCHEMES:
        share = argmax_agreement(forward, test, lambda n, x, s=scheme: quantizer.project(n, x, s))
        print(f"  {scheme:8s} {100 * share:6.2f}% of positions")

    if args.sensitivity:
        print("\none projection quantized at a time: arg-max = fp32's at (% of positions)")
        print(f"{'projection':34s} " + " ".join(f"{s:>8s}" for s in SCHEMES))
        for name in names:
            shares = []
            for scheme in SCHEMES:
                def one(n, x, s=scheme, only=name):
                    return quantizer.project(n, x, s) if n == only else forward.exact(n, x)
                shares.append(100 * argmax_agreement(forward, test, one))
            print(f"{name:34s} " + " ".join(f"{v:8.2f}" for v in shares))
    return 0
