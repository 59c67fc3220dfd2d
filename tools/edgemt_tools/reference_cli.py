"""`edgemt-reference`: PyTorch reference translations of a text file.

Writes one line per input line: the detokenized translation (--out-text) and
the generated ids without bos/eos, space-separated (--out-ids); optionally the
source ids (spm.encode + eos) with --out-src-ids. Search rules: SEARCH.md.
"""

import argparse
import os
import sys
import time

from .errors import UserError
from .atomic_file import atomic_write
from .output_target import check_output
from .model_spec import WEIGHT_DTYPES
from . import search

PROG = "edgemt-reference"


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{PROG}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, allow_abbrev=False,
                description="Translate a text file (.gz allowed) with the PyTorch reference "
                            "model (float32, batch 1) using the search rules of SEARCH.md.")
    p.add_argument("--checkpoint", required=True, metavar="FILE", help="state_dict (model.pt)")
    p.add_argument("--config", required=True, metavar="FILE", help="config.json")
    p.add_argument("--spm", required=True, metavar="FILE", help="SentencePiece model")
    p.add_argument("--input", required=True, metavar="FILE", help="source text, one per line")
    p.add_argument("--search", choices=["greedy", "beam"], default="greedy",
                   help="search algorithm (default greedy)")
    p.add_argument("--beam", type=int, default=search.DEFAULT_BEAM, metavar="K",
                   help=f"beam size for --search beam (default {search.DEFAULT_BEAM})")
    p.add_argument("--length-penalty", type=float, default=search.DEFAULT_LENGTH_PENALTY,
                   metavar="ALPHA", help="beam score / len**ALPHA, len counting eos "
                   f"(default {search.DEFAULT_LENGTH_PENALTY})")
    p.add_argument("--max-len-a", type=float, default=search.DEFAULT_MAX_LEN_A, metavar="A",
                   help="max generated tokens = floor(A*src_len + B), capped at "
                   f"max_positions (default A={search.DEFAULT_MAX_LEN_A})")
    p.add_argument("--max-len-b", type=float, default=search.DEFAULT_MAX_LEN_B, metavar="B",
                   help=f"(default B={search.DEFAULT_MAX_LEN_B})")
    p.add_argument("--weights-dtype", choices=list(WEIGHT_DTYPES), default="fp32",
                   help="fp16: round the matrices through float16 first (reference for "
                        "an --dtype fp16 file); int8: use the matrices' per-row int8 "
                        "values and quantize every projection's input per row, as the "
                        "runtime does (reference for an --dtype int8 file); compute "
                        "stays float32 (default fp32)")
    p.add_argument("--int8-model", metavar="FILE",
                   help="with --weights-dtype int8: take the matrices and smoothing vectors "
                        "from this int8 .emt file (a calibrated conversion of --checkpoint) "
                        "instead of rounding the checkpoint's")
    p.add_argument("--limit", type=int, default=0, metavar="N",
                   help="first N lines only (default 0 = all)")
    p.add_argument("--threads", type=int, default=1, metavar="N",
                   help="torch intra-op threads (default 1)")
    p.add_argument("--out-text", required=True, metavar="FILE",
                   help="translations, one per line")
    p.add_argument("--out-ids", required=True, metavar="FILE",
                   help="generated ids without bos/eos, space-separated, one line each")
    p.add_argument("--out-src-ids", metavar="FILE",
                   help="source ids (spm.encode + eos), one line each")
    return p


def run(args) -> None:
    import torch
    from .textio import read_lines
    from .torch_reference import TorchReference
    inputs = [args.checkpoint, args.config, args.spm, args.input]
    if args.int8_model is not None:
        if args.weights_dtype != "int8":
            raise UserError("--int8-model needs --weights-dtype int8")
        inputs.append(args.int8_model)
    for path in inputs:
        if not os.path.isfile(path):
            raise UserError(f"file not found: {path}")
    # Before the (long) decoding: no output may be an input or a non-regular file.
    for path in (args.out_text, args.out_ids, args.out_src_ids):
        if path is not None:
            check_output(path, inputs)
    if args.beam < 1:
        raise UserError("--beam must be >= 1")
    torch.set_num_threads(max(1, args.threads))
    ref = TorchReference(args.checkpoint, args.config, args.spm, args.weights_dtype,
                         int8_file=args.int8_model)
    lines = read_lines(args.input)
    if args.limit > 0:
        lines = lines[: args.limit]
    texts, ids, src_ids = [], [], []
    start = time.time()
    for n, line in enumerate(lines, 1):
        src = ref.encode_text(line)
        limit = ref.max_len(len(src), args.max_len_a, args.max_len_b)
        out = (ref.greedy(src, limit) if args.search == "greedy"
               else ref.beam_search(src, args.beam, args.length_penalty, limit))
        src_ids.append(src)
        ids.append(out)
        texts.append(ref.decode_ids(out))
        if n % 100 == 0 or n == len(lines):
            print(f"{PROG}: {n}/{len(lines)} sentences, {time.time() - start:.1f} s",
                  file=sys.stderr, flush=True)
    outputs = [(args.out_text, texts), (args.out_ids, [" ".join(map(str, x)) for x in ids])]
    if args.out_src_ids:
        outputs.append((args.out_src_ids, [" ".join(map(str, x)) for x in src_ids]))
    for path, rows in outputs:
        with atomic_write(path, inputs) as handle:
            handle.write("".join(r + "\n" for r in rows).encode("utf-8"))


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        run(args)
    except (UserError, OSError, ValueError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
    return 0
