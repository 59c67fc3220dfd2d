"""`edgemt-int8-study`: where an int8 model's error comes from, per matrix.

Reads an fp32 model file of the Transformer family, translates the first N
lines of a text file greedily with the runtime (the Python module, fp32:
the tokens the int8 model should reproduce), and runs an independent
float32 numpy forward pass teacher-forced on those tokens that records the
input of every projection (every Linear of schema/transformer_tensors.def,
and the output projection).
Then, for each projection and each activation scheme:

  narrow      per-row dynamic codes in [-64, 64] (kernels' kNarrowCodes),
              weights rounded to nearest
  full        per-row dynamic codes in [-127, 127] (kFullCodes), likewise
  smooth      full codes after per-input-channel smoothing (SmoothQuant,
              alpha 0.5): x_j / s_j quantized, weight column j times s_j,
              s_j = sqrt(max|x_j| / max|w_j|) from the calibration rows
  calibrated  what edgemt-convert --dtype int8 stores (int8_calibration.py:
              smoothing where it helps, error-compensating rounding),
              calibrated on the same rows
  weights     only the weights rounded (nearest), activations float: the
              weights' share of the `full` error
  inputs      only the activations quantized (full codes), weights float:
              the activations' share

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
import os
import sys
from collections import defaultdict
from typing import Dict, List, Tuple

import numpy as np

from research.study_cli import REPO_ROOT, StudyParser

sys.path.insert(0, os.path.join(REPO_ROOT, "tools"))
from edgemt_tools.int8_calibration import choose, recorded_inputs, source_ids  # noqa: E402
from edgemt_tools.errors import ModelFileError  # noqa: E402
from edgemt_tools.model_file import read_model  # noqa: E402
from edgemt_tools.numpy_transformer import NumpyTransformer  # noqa: E402
from edgemt_tools.quantize import dequantize_rows, quantize_rows  # noqa: E402

SCHEMES = ("narrow", "full", "smooth", "calibrated", "weights", "inputs")
CODE_LIMITS = {"narrow": 64, "full": 127, "smooth": 127, "calibrated": 127, "inputs": 127}
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


# ---- the model: a float32 numpy forward pass ----------------------------------

def forward_of(model) -> NumpyTransformer:
    """The numpy pass over an fp32 Transformer-family file's tensors."""
    if model.header.config.raw_decoder_self_memory:
        print("note: raw_decoder_self_memory (Marian pre-norm) is not modelled; the "
              "teacher-forced pass differs from the runtime's decoding there", file=sys.stderr)
    weights = {}
    for name in model.entries:
        array = np.asarray(model.array(name), dtype=np.float32)
        if model.array(name).dtype != np.float32:
            raise SystemExit(f"edgemt-int8-study: {name} is not float32: give an fp32 file")
        weights[name] = array
    return NumpyTransformer(model.header.config, weights)


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

def smoothing(rows: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """SmoothQuant factors s [K]: sqrt(max|x_j| / max|w_j|), 1 where undefined."""
    act = np.abs(rows).max(axis=0)
    wmax = np.abs(weight).max(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (act ** SMOOTH_ALPHA) / (wmax ** (1 - SMOOTH_ALPHA))
    return np.where(np.isfinite(s) & (s > 0), s, 1).astype(np.float32)


class Quantizer:
    """`project` functions for each scheme, with the weights prepared once
    (`calibration`: each projection's calibration inputs)."""

    def __init__(self, forward: NumpyTransformer, calibration: Dict[str, np.ndarray]):
        self.forward = forward
        self.calibration = calibration
        self.factors = {n: smoothing(x, forward.w[n + ".weight"]) for n, x in calibration.items()}
        self.weights = {}
        self.multipliers = {}

    def weight(self, name: str, scheme: str) -> np.ndarray:
        key = (name, scheme if scheme in ("smooth", "calibrated", "inputs") else "nearest")
        if key not in self.weights:
            w = self.forward.w[name + ".weight"]
            if scheme == "smooth":
                self.weights[key] = int8_weight(w * self.factors[name][None, :])
            elif scheme == "calibrated":
                chosen, _ = choose(self.calibration[name], w)
                self.multipliers[name] = chosen.multiplier
                self.weights[key] = dequantize_rows(chosen.codes, chosen.scale)
            elif scheme == "inputs":
                self.weights[key] = w
            else:
                self.weights[key] = int8_weight(w)
        return self.weights[key]

    def project(self, name: str, x: np.ndarray, scheme: str) -> np.ndarray:
        weight = self.weight(name, scheme)
        if scheme == "smooth":
            x = x / self.factors[name]
        elif scheme == "calibrated":
            x = x * self.multipliers[name]
        if scheme in CODE_LIMITS:
            x = fake_quantize_rows(x.astype(np.float32), CODE_LIMITS[scheme])
        return x @ weight.T + self.forward.bias(name)


def argmax_agreement(forward: NumpyTransformer, pairs, project) -> float:
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

    try:
        model = read_model(args.model)
    except (OSError, ModelFileError) as err:
        parser.exit(1, f"{parser.prog}: error: cannot read {args.model}: {err}\n")
    if model.header.weight_dtype != "fp32" or not hasattr(model.header.config, "heads"):
        parser.error("give an fp32 file of the Transformer family")
    spm = sentencepiece.SentencePieceProcessor(model_proto=model.header.tokenizer_model)
    with open(args.input, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle if line.strip()][:args.sentences]
    runtime = edgemt.Translator(edgemt.Model(args.model), max_batch=1)
    forward = forward_of(model)
    start = model.header.special_tokens.decoder_start
    eos = model.header.special_tokens.eos
    pairs = []
    for line in lines:
        src = source_ids(model.header, spm, line)
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

    calib_inputs = recorded_inputs(forward, [(s, t) for s, t, _ in calibration])
    test_inputs = recorded_inputs(forward, [(s, t) for s, t, _ in test])
    names = list(test_inputs)
    quantizer = Quantizer(forward, calib_inputs)

    print(f"\nper projection: relative output error (||y_int8 - y|| / ||y||) on the test rows; "
          f"inputs: median max|x|/rms per row, channels holding the row max")
    print(f"{'projection':34s} {'K':>5s} {'max/rms':>8s} " +
          " ".join(f"{s:>10s}" for s in SCHEMES) + "  top channels")
    totals = defaultdict(float)
    for name in names:
        rows = test_inputs[name]
        y = forward.exact(name, rows)
        errors = []
        for scheme in SCHEMES:
            e = float(np.linalg.norm(quantizer.project(name, rows, scheme) - y) / np.linalg.norm(y))
            errors.append(e)
            totals[scheme] += e
        ratio, share = outliers(rows)
        print(f"{name:34s} {rows.shape[1]:5d} {ratio:8.1f} " +
              " ".join(f"{e:10.4f}" for e in errors) + f"  {share}")
    print(f"{'mean':34s} {'':5s} {'':8s} " +
          " ".join(f"{totals[s] / len(names):10.4f}" for s in SCHEMES))

    print("\nend to end (every projection quantized): arg-max = fp32's at")
    for scheme in SCHEMES:
        share = argmax_agreement(forward, test, lambda n, x, s=scheme: quantizer.project(n, x, s))
        print(f"  {scheme:10s} {100 * share:6.2f}% of positions")

    if args.sensitivity:
        print("\none projection quantized at a time: arg-max = fp32's at (% of positions)")
        print(f"{'projection':34s} " + " ".join(f"{s:>10s}" for s in SCHEMES))
        for name in names:
            shares = []
            for scheme in SCHEMES:
                def one(n, x, s=scheme, only=name):
                    return quantizer.project(n, x, s) if n == only else forward.exact(n, x)
                shares.append(100 * argmax_agreement(forward, test, one))
            print(f"{name:34s} " + " ".join(f"{v:10.2f}" for v in shares))
    return 0
