"""`edgemt-convert`: checkpoint -> .emt model file.

User errors (bad options, missing files, a checkpoint that does not match its
config, ...) print one line `edgemt-convert: error: ...` on stderr and exit 2
(argparse errors) or 1 (everything else); nothing is written then, because the
file is produced through `atomic_file` (temp file in the output folder, fsync,
rename) and the temp file is removed on failure. int8 calibration runs
before the file is written, so a failing calibration writes nothing either. The
output must be a new file or a regular file that is none of the inputs
(output_target.py): checked before any work, and by the writer against every
file the conversion read (input_files.py).

The checkpoint is a path, or a Hugging Face Hub model id for the sources that
read a Hub model folder (hub.py says which is which); without --from, the
source is told from the files (sources/detect.py).

What needs numpy or torch (the sources, the writer, calibration) is imported
where the conversion starts, so that --help, --version and argument errors
take a fraction of a second.
"""

import argparse
import datetime
import math
import os
import sys
from typing import List, Optional, Tuple

from . import __version__
from . import hub
from .choices import DEFAULT_CALIBRATION_SENTENCES, FP32_EMBEDDINGS, WEIGHT_DTYPES
from .errors import UserError
from .sources import HUB_SOURCES, SOURCES, SourceInputs

PROG = "edgemt-convert"
DEFAULT_CALIBRATION_LINES = DEFAULT_CALIBRATION_SENTENCES

DESCRIPTION = """\
Convert a trained checkpoint into one edgemt model file (.emt): FlatBuffer
header (config, special tokens, SentencePiece model, provenance) followed by a
64-byte-aligned weight segment.

Sources (--from), each read from its own files, with no config of ours:
  opennmt    an OpenNMT-py v3 checkpoint (.pt holding model, generator,
             vocab, opt) with its SentencePiece model(s): --spm S when both
             sides share one, else --src-spm S --tgt-spm T.
             Transformers: pre-norm (v3), relu or gelu, shared or separate
             vocabularies and embeddings, share_decoder_embeddings, with or
             without Q/K/V and FFN biases; positions as stored (first 1024
             rows). RNN models (the RNN family): rnn or brnn encoders, LSTM
             or GRU, dot / general / mlp attention, input feed on or off.
             Refused, naming the option: relative positions, rotary, alibi,
             RMS norm, gated (silu) FFN, multi-query, source features, copy
             or coverage attention, bridge, context gate, other encoder or
             decoder types, ...
  marian     a Marian release folder as OPUS-MT publishes it: model .npz
             (with special:model.yml), decoder.yml, vocabulary (.yml or
             .spm) and source.spm / target.spm. Post-norm ("dan") or
             pre-norm transformers, SSRU decoders (Firefox Translations'
             students: a folder of its model repository as it is, .gz
             files and the languages of its metadata.json); factored
             vocabularies are refused.
  hf-marian  a Hugging Face MarianMT folder: config.json,
             model.safetensors or pytorch_model.bin, source.spm, target.spm,
             vocab.json, generation_config.json when present.
             Marian and Hugging Face vocabularies (vocab.yml, vocab.json)
             must match the model: one piece per embedding row, no piece or
             key twice, and every piece the SentencePiece model can output
             present (--allow-missing-pieces: a note instead, the pieces
             reading as <unk>).
  torch      edgemt's own nn.Transformer layout: a state_dict whose wrapper
             has `embed`, `transformer` and `generator` (models/MODEL_CARD.md)
             with --config config.json and --spm.
  torch-rnn  the RNN encoder-decoder with attention of the PyTorch trainer
             train_rnn_attention.py (RnnSeq2Seq): its state_dict (model.pt)
             with --config config.json and --spm spm.model. Attention
             luong-dot, luong-general, luong-concat or bahdanau; LSTM or GRU
             cells; any number of layers. Writes a file of the RNN family
             (schema/rnn_tensors.def; family_config RnnConfig) that decodes
             as the trainer's greedy search does (at most 60 tokens);
             --max-positions N sets the longest source or target the file
             accepts (default 256; the trainer cuts sources to 200 pieces).
Without --from, the kind is told from the checkpoint's files; given a
checkpoint of another kind than --from says, the converter names what it
found ("this is an OpenNMT-py checkpoint: use --from opennmt").

The checkpoint (CHECKPOINT or --checkpoint PATH) is a file or folder or, for
--from hf-marian, a Hugging Face Hub model id: org/name, such as
Helsinki-NLP/opus-mt-en-de, at its default branch or at @REVISION
(--revision). An existing path is always a path. The id is downloaded by
huggingface_hub (pip install huggingface_hub) into its cache, with its
progress bars, honouring HF_HOME, HF_HUB_CACHE, HF_TOKEN and HF_HUB_OFFLINE=1
(cache only): only the files the source reads, nothing that runs code.

Each model file records its framework's search rules and decoding defaults
(beam size, length penalty, maximum length, banned tokens) as that
framework's own translator uses them; `edgemt translate` follows them unless
told otherwise, and `edgemt inspect` prints them.

Everything is checked before anything is written: config values against the
runtime's limits (layers <= 64 per stack, max_len <= 65536, LayerNorm epsilon
and embedding scale finite and > 0, ...), the SentencePiece model, and every
tensor's name, shape and values (NaN or infinite weights, or weights beyond
the fp16 range with --dtype fp16, are refused naming the tensor). On any error
the command prints one line and writes nothing.

--shortlist FILE [FIRST BEST [THRESHOLD]] stores a Marian lexical shortlist
in the file, for every source: `edgemt translate` then scores, per batch,
only the candidate target ids (ids below FIRST and the BEST most probable
targets of each source piece in the batch, as Marian does;
docs/converting.md). FILE is marian-conv's binary shortlist (lex.*.bin),
whose FIRST and BEST are in its header (numbers given are ignored), or its
text form (lex.s2t: TARGET SOURCE PROB triples of the model's pieces), pruned
as Marian's translator prunes it: defaults FIRST 100, BEST 100, THRESHOLD 0
(probabilities above it are kept). It must be made for the model's
vocabularies. Give CHECKPOINT before --shortlist (or use --checkpoint).
--from marian notes a lex*.bin or lex*.s2t in the folder; none is stored
unless named.

--dtype fp16 stores the embedding and projection matrices as IEEE half;
biases, LayerNorm parameters and the position table stay float32 (in RNN
files the embedding, recurrent, attention and output matrices are half;
biases and the attention vector v stay float32).

--dtype int8 stores them as int8, symmetric per output row (code q in
[-127, 127], weight ~ q * scale[row], scale = max|row| / 127 stored as the
float32 tensor <matrix>_scale), about a quarter of the fp32 size;
activations are quantized per row at run time. Transformer models are
calibrated (scheme Int8SmoothedPerRowDynamic, docs/int8-quality.md): a
float64 pass (the same file on every CPU) over calibration sentences gives each projection a smoothing
vector <matrix>_smooth where it lowers the int8 error (outlier channels'
range moved into the weights; all ones elsewhere) and rounds the weights so
that the products' error on those sentences is smallest. The sentences are
the first lines of --calibrate FILE (source-language text; nothing from it
is stored) or, without it, 128 sentences sampled from the source
SentencePiece model (seeded: the same file every time). This takes seconds
for small models, about three minutes and 3 GB of memory for an
OPUS-MT-base-sized one. --no-calibration gives plain nearest rounding
(scheme Int8PerRowDynamic); RNN models are always stored so.
A Transformer's int8 embedding tables also get a 4-bit residual code per
weight (format version 11): the lookup reads the int8 value plus the
residual one, nearly the float table, while an output projection tied to
a table keeps multiplying by the shared int8 codes (then calibrated like
the other projections). It keeps more lines identical to fp32 (on the
repository's fixtures 1-27 of 1,000 per cell; docs/int8-quality.md) for
half a byte more per table weight (an OPUS-MT-base file about 95 MB
instead of 80). --no-residual-embeddings gives the smallest file. A Marian
intgemm8 .bin (Firefox's models) gives an int8 file in Marian's own int8
arithmetic (scheme Int8PerTensorDynamic, format version 7): its int8
matrices keep Marian's codes (scale 1/quantMult on every row; not
quantized again, not calibrated), each product's activations are quantized
with one range over all its rows, and the embeddings (with a tied output
layer) stay float32, as in Marian; a line's output then depends on the
sentences batched with it, as Marian's does. A file with alphas (Firefox's
.intgemm.alphas.bin) gives Firefox's arithmetic instead (scheme
Int8PerTensorStatic, format version 8): each product's activations
quantized with its fixed alpha, the output layer int8 too; the output then
does not depend on the batch. --per-row-activations gives
edgemt's own arithmetic instead (per-row activations, Marian's codes kept,
other projections calibrated; Int8PerRowDynamic when none is left). A note
says which.

--fp32-embeddings (with --dtype int8) keeps the embedding tables, and an
output projection tied to one, in float32 (format version 9; the other
matrices int8 as above). Output stays closer to the fp32 file's (on the
repository's fixtures 2-52 more of 1,000 lines identical to fp32;
docs/int8-quality.md), at a cost: the tables take 4 bytes per weight (an
OPUS-MT-base file grows from about 80 to 169 MB) and beam search computes
the tied output layer in float32 (20-35% slower at batch 32, beam 4).
Greedy decoding without scores is about as fast: it computes the float32
logits only where an int8 bound leaves a doubt. --fp32-embeddings lookup
keeps only the tables (what the embedding lookup reads) in float32 and
gives a tied output projection an int8 copy of its own (calibrated like
the other projections): decoding as fast as plain int8, most of the
lines gained, and a file larger still (4 + 1 bytes per table weight:
OPUS-MT-base about 200 MB). --fp16-embeddings does the same with the
tables in float16 (format version 10): about as many lines, 2 + 1 bytes
per table weight. The residual codes of the default give about as many
lines at 1.5 bytes per table weight."""

EPILOG = """\
examples:
  edgemt-convert Helsinki-NLP/opus-mt-en-de --dtype int8 -o en-de.emt
  edgemt-convert --from hf-marian --checkpoint opus-mt-en-de/ --dtype int8 -o en-de.emt
  edgemt-convert --from marian --checkpoint opus-2020-02-26/ --src-lang en --tgt-lang de \\
      --dtype int8 -o en-de.emt
  edgemt-convert --from opennmt --checkpoint model_step_20000.pt --src-spm en.spm \\
      --tgt-spm de.spm --src-lang en --tgt-lang de --dtype fp32 -o en-de.emt
  edgemt-convert --from torch --checkpoint model.pt --config config.json \\
      --spm spm.model --src-lang en --tgt-lang de --dtype fp16 -o model.fp16.emt
  edgemt-convert --from torch --checkpoint model.pt --config config.json \\
      --spm spm.model --dtype int8 --calibrate val.en -o model.int8.emt
  edgemt-convert --from torch-rnn --checkpoint model.pt --config config.json \\
      --spm spm.model --dtype int8 -o rnn.int8.emt

created_utc is the current time, or SOURCE_DATE_EPOCH when that variable is
set (reproducible files). Exit status: 0 success, 1 conversion error, 2 usage
error."""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """--shortlist's numbers are optional as a group, which nargs cannot say."""

    def _format_args(self, action, default_metavar):
        if action.dest == "shortlist":
            return "FILE [FIRST BEST [THRESHOLD]]"
        return super()._format_args(action, default_metavar)


class _Parser(argparse.ArgumentParser):
    """argparse prints usage + error; keep it to one line on stderr."""

    def error(self, message):
        self.exit(2, f"{PROG}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description=DESCRIPTION, epilog=EPILOG, allow_abbrev=False,
                formatter_class=_HelpFormatter)
    p.add_argument("checkpoint_argument", nargs="?", metavar="CHECKPOINT",
                   help="the checkpoint: a .pt file (opennmt, torch, torch-rnn), a folder "
                        "(marian, hf-marian) or a Hugging Face Hub model id org/name[@REVISION] "
                        "(hf-marian)")
    p.add_argument("--from", dest="source_format", choices=sorted(SOURCES),
                   help="checkpoint format (see above; default: told from the checkpoint)")
    p.add_argument("--checkpoint", metavar="PATH",
                   help="the checkpoint, as CHECKPOINT")
    p.add_argument("--revision", metavar="REV",
                   help="a Hub model id's branch, tag or commit (default: its default "
                        "branch; also as org/name@REV)")
    p.add_argument("--config", metavar="FILE",
                   help="--from torch and torch-rnn only: config.json with the "
                        "hyper-parameters and special token ids")
    p.add_argument("--spm", metavar="FILE",
                   help="SentencePiece model of both sides (torch, torch-rnn: required; "
                        "opennmt: when the sides share one)")
    p.add_argument("--src-spm", metavar="FILE",
                   help="source SentencePiece model (opennmt with separate models; marian and "
                        "hf-marian: instead of the folder's source.spm)")
    p.add_argument("--tgt-spm", metavar="FILE",
                   help="target SentencePiece model (as --src-spm)")
    p.add_argument("--src-lang", metavar="LANG",
                   help="source language code (default: what the checkpoint says, where it "
                        "says it: a Firefox model folder's metadata.json)")
    p.add_argument("--tgt-lang", metavar="LANG",
                   help="target language code (likewise)")
    p.add_argument("--max-positions", type=_positive_int, metavar="N",
                   help="--from torch-rnn only: the longest source or target (tokens, counting "
                        "EOS) the file accepts (default 256)")
    p.add_argument("--allow-missing-pieces", action="store_true",
                   help="--from marian and hf-marian: convert although pieces of a "
                        "SentencePiece model are missing from the vocabulary (refused by "
                        "default: a vocabulary of another model translates into junk); they "
                        "read as <unk>, as Marian and transformers read them (a few OPUS-MT "
                        "releases lack a few pieces)")
    p.add_argument("--dtype", default="fp32", choices=list(WEIGHT_DTYPES),
                   help="storage type of the embedding and projection matrices "
                        "(default fp32)")
    p.add_argument("--calibrate", metavar="FILE",
                   help="--dtype int8, Transformer models: calibrate on the first lines of "
                        "this UTF-8 source-language text (.gz allowed) instead of sentences "
                        "sampled from the SentencePiece model (nothing from FILE is stored)")
    p.add_argument("--calibrate-lines", type=_positive_int, metavar="N",
                   help=f"non-blank lines of --calibrate FILE to use "
                        f"(default {DEFAULT_CALIBRATION_LINES})")
    p.add_argument("--no-calibration", action="store_true",
                   help="--dtype int8: nearest rounding and no smoothing vectors (scheme "
                        "Int8PerRowDynamic; faster to convert, less faithful)")
    p.add_argument("--per-row-activations", action="store_true",
                   help="--dtype int8 of a Marian intgemm8 model: edgemt's own int8 arithmetic "
                        "(activations quantized per row, every matrix int8, calibrated where "
                        "not given) instead of Marian's (scheme Int8PerTensorDynamic)")
    p.add_argument("--fp32-embeddings", nargs="?", const="all", choices=FP32_EMBEDDINGS,
                   metavar="{all,lookup}",
                   help="--dtype int8: keep the embedding tables in fp32: output closer to "
                        "fp32's and a larger file. all (the default): an output projection "
                        "tied to a table stays fp32 too (beam search slower); lookup: it "
                        "gets an int8 copy of its own (as fast as plain int8; see below)")
    p.add_argument("--fp16-embeddings", action="store_true",
                   help="--dtype int8: keep the embedding tables in fp16 and give a tied output "
                        "projection an int8 copy of its own: as --fp32-embeddings lookup, with "
                        "2 bytes per table weight instead of 4")
    p.add_argument("--residual-embeddings", action=argparse.BooleanOptionalAction,
                   help="--dtype int8 of a Transformer: give the int8 embedding tables a 4-bit "
                        "residual code per weight for lookups (1.5 bytes per table weight; a "
                        "tied output projection keeps sharing the int8 codes; see above). On "
                        "by default where it applies; --no-residual-embeddings: the smallest "
                        "file (1 byte per table weight)")
    p.add_argument("--shortlist", nargs="+",
                   help="a Marian lexical shortlist to store: binary (FIRST and BEST from its "
                        "header; numbers given are ignored) or text (default FIRST 100, BEST "
                        "100, THRESHOLD 0); see above")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="output .emt file (written atomically): a new file or a regular "
                        "file that is none of the inputs (a device, FIFO or directory, or a "
                        "file the conversion reads, is refused)")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid positive integer: '{text}'") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _shortlist_option(parser: argparse.ArgumentParser,
                      values: List[str]) -> Tuple[str, Optional[int], Optional[int], Optional[str]]:
    """--shortlist FILE [FIRST BEST [THRESHOLD]] -> (FILE, FIRST, BEST,
    THRESHOLD as written; None where not given). The threshold stays text:
    shortlist.py rounds it to float32 from its digits, as Marian's stof."""
    path, numbers = values[0], values[1:]
    usage = "--shortlist takes FILE, FILE FIRST BEST or FILE FIRST BEST THRESHOLD"
    # nargs="+" also takes a CHECKPOINT written after it.
    taken = next((text for text in numbers if os.path.exists(text)), None)
    hint = f" ({taken} is a path: give CHECKPOINT before --shortlist)" if taken else ""
    if len(values) not in (1, 3, 4):
        parser.error(f"{usage} (got {len(values)} values){hint}")
    for name, text in zip(("FIRST", "BEST"), numbers):
        if not (text.isascii() and text.isdigit()) or int(text) >= 1 << 32:
            parser.error(f"{usage}: {name} {text!r} is not a whole number from 0 to "
                         f"2^32 - 1{hint}")
    threshold = numbers[2] if len(numbers) == 3 else None
    if threshold is not None:
        try:
            finite = math.isfinite(float(threshold))
        except ValueError:
            finite = False
        if not finite or "_" in threshold:
            parser.error(f"{usage}: THRESHOLD {threshold!r} is not a number{hint}")
    first, best = (int(numbers[0]), int(numbers[1])) if numbers else (None, None)
    return path, first, best, threshold


def _resolve_checkpoint(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Sets args.checkpoint (the path or id given), args.hub_id (a hub.HubId,
    or None for a path) and args.source_format (without --from: told from
    the checkpoint)."""
    given = [value for value in (args.checkpoint_argument, args.checkpoint) if value is not None]
    if not given:
        parser.error("give the checkpoint: a path, or a Hugging Face Hub model id (org/name)")
    if len(set(given)) > 1:
        parser.error("give the checkpoint once: as CHECKPOINT or as --checkpoint")
    args.checkpoint = given[0]
    args.hub_id = hub.parse(args.checkpoint)
    if args.hub_id is None and args.revision is not None:
        parser.error(f"--revision is for a Hugging Face Hub model id (org/name); "
                     f"{args.checkpoint} is a path")
    if args.hub_id is not None:
        try:
            args.hub_id = hub.with_revision(args.hub_id, args.revision)
        except UserError as err:
            parser.error(str(err))
        if args.source_format is None:
            if len(HUB_SOURCES) != 1:
                parser.error(f"{args.hub_id} is a Hugging Face Hub model id: give --from "
                             f"({' or '.join(HUB_SOURCES)})")
            args.source_format = HUB_SOURCES[0]
        if args.source_format not in HUB_SOURCES:
            raise UserError(f"checkpoint not found: {args.checkpoint} (a Hugging Face Hub model "
                            f"id is for --from {' or '.join(HUB_SOURCES)})")
    elif args.source_format is None:
        if not os.path.exists(args.checkpoint):
            raise UserError(f"checkpoint not found: {args.checkpoint}")
        from .sources.detect import detect
        args.source_format = detect(args.checkpoint)
        if args.source_format is None:
            parser.error(f"cannot tell what kind of checkpoint {args.checkpoint} is: give "
                         f"--from ({', '.join(sorted(SOURCES))})")


def _check_option_combinations(parser: argparse.ArgumentParser,
                               args: argparse.Namespace) -> None:
    """Usage errors argparse cannot express (exit 2, like argparse's own)."""
    if args.calibrate is not None and args.dtype != "int8":
        parser.error(f"--calibrate needs --dtype int8 (got --dtype {args.dtype})")
    if args.calibrate_lines is not None and args.calibrate is None:
        parser.error("--calibrate-lines needs --calibrate FILE")
    if args.per_row_activations and args.dtype != "int8":
        parser.error(f"--per-row-activations needs --dtype int8 (got --dtype {args.dtype})")
    if args.fp32_embeddings and args.dtype != "int8":
        parser.error(f"--fp32-embeddings needs --dtype int8 (got --dtype {args.dtype})")
    if args.fp16_embeddings and args.dtype != "int8":
        parser.error(f"--fp16-embeddings needs --dtype int8 (got --dtype {args.dtype})")
    if args.fp16_embeddings and args.fp32_embeddings:
        parser.error("give --fp32-embeddings or --fp16-embeddings, not both")
    if args.residual_embeddings is False and args.dtype != "int8":
        parser.error(f"--no-residual-embeddings needs --dtype int8 (got --dtype {args.dtype})")
    if args.residual_embeddings and args.dtype != "int8":
        parser.error(f"--residual-embeddings needs --dtype int8 (got --dtype {args.dtype})")
    if args.residual_embeddings and (args.fp16_embeddings or args.fp32_embeddings):
        parser.error("--residual-embeddings is for int8 tables: drop --fp32-embeddings or "
                     "--fp16-embeddings")
    if args.no_calibration and args.dtype != "int8":
        parser.error(f"--no-calibration needs --dtype int8 (got --dtype {args.dtype})")
    if args.no_calibration and args.calibrate is not None:
        parser.error("give --calibrate FILE or --no-calibration, not both")
    if args.spm is not None and (args.src_spm is not None or args.tgt_spm is not None):
        parser.error("give either --spm (both sides) or --src-spm / --tgt-spm, not both")
    if args.source_format not in ("torch", "torch-rnn") and args.config is not None:
        parser.error(f"--config is for --from torch and torch-rnn; --from "
                     f"{args.source_format} reads the checkpoint's own configuration")
    if args.allow_missing_pieces and args.source_format not in ("marian", "hf-marian"):
        parser.error("--allow-missing-pieces is for --from marian and hf-marian")
    if args.max_positions is not None and args.source_format != "torch-rnn":
        parser.error(f"--max-positions is for --from torch-rnn; --from {args.source_format} "
                     "takes the checkpoint's own")
    if args.calibrate is not None:  # last: it imports the source and the families
        from . import families, int8_calibration
        written = [families.find(name) for name in SOURCES[args.source_format].FAMILIES]
        if not any(map(int8_calibration.calibrates, written)):
            parser.error(f"--calibrate is for {int8_calibration.calibrated_families()} models; "
                         f"{' and '.join(family.title for family in written)} int8 files use "
                         "nearest rounding (drop --calibrate)")


def _created_utc() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (datetime.datetime.fromtimestamp(int(epoch), tz=datetime.timezone.utc) if epoch
            else datetime.datetime.now(tz=datetime.timezone.utc))
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _named_inputs(args: argparse.Namespace, checkpoint: str) -> List[str]:
    """The input files the command line names (the output must be none of them)."""
    shortlist = args.shortlist[0] if args.shortlist is not None else None
    return [path for path in (checkpoint, args.config, args.spm, args.src_spm,
                              args.tgt_spm, args.calibrate, shortlist) if path is not None]


def _download(args: argparse.Namespace) -> str:
    """The folder of args.hub_id in the Hub's cache (downloaded when needed)."""
    folder = hub.download(args.hub_id, SOURCES[args.source_format].HUB_FILES, __version__)
    print(f"{PROG}: note: {args.hub_id} is {folder}", file=sys.stderr)
    return folder


def _read_shortlist(args: argparse.Namespace, spec) -> str:
    """Puts the --shortlist file's lists in `spec` (before calibration, which
    takes longer: a wrong file is refused first); returns the summary's words."""
    from . import input_files
    from .shortlist import read_shortlist, vocabularies
    path, first, best, threshold = args.shortlist
    if not input_files.regular_file(path, "shortlist"):
        raise UserError(f"shortlist not found: {path}")
    spec.shortlist, notes = read_shortlist(path, vocabularies(spec), first, best, threshold)
    for note in notes:
        print(f"{PROG}: note: {note}", file=sys.stderr)
    kept = spec.shortlist
    return (f", shortlist of {len(kept.targets)} ids for {len(kept.offsets) - 1} source ids "
            f"(first {kept.first}, best {kept.best})")


def _marian_int8(args: argparse.Namespace, spec) -> bool:
    """Whether the int8 file follows Marian's intgemm8 arithmetic
    (Int8PerTensorDynamic or, with alphas, Int8PerTensorStatic): a Marian
    intgemm8 model's int8 file, unless --per-row-activations."""
    return args.dtype == "int8" and bool(spec.int8_codes) and not args.per_row_activations


def _marian_static(args: argparse.Namespace, spec) -> bool:
    """Whether the int8 file is Int8PerTensorStatic: _marian_int8 of a model
    with alphas (ModelSpec.int8_static)."""
    return _marian_int8(args, spec) and bool(spec.int8_static)


def _table_option(args: argparse.Namespace) -> str:
    """The option that sets an int8 file's table dtype, as the user would
    write it, or "" for none."""
    if args.fp16_embeddings:
        return "--fp16-embeddings"
    if args.residual_embeddings:  # given, not the default
        return "--residual-embeddings"
    if args.fp32_embeddings == "lookup":
        return "--fp32-embeddings lookup"
    return "--fp32-embeddings" if args.fp32_embeddings else ""


def _check_table_options(args: argparse.Namespace, spec) -> None:
    """--fp32-embeddings, --fp16-embeddings and --residual-embeddings are
    defined for the Transformer family (whose tables are its embedding
    matrices): checked before anything slow runs."""
    from . import families
    family = families.of(spec.config)
    option = _table_option(args).split(" ")[0]
    if option and not family.tensors.smoothable:
        transformer = families.titles(lambda other: other.tensors.smoothable)
        raise UserError(f"{option} is for {transformer} models; this is "
                        f"{family.a_title} model (drop {option})")


def _int8_plan(args: argparse.Namespace, spec, lines):
    """The int8 calibration plan, or None for a plain Int8PerRowDynamic file
    (--no-calibration, a model of a family that is not calibrated, or one
    whose every projection keeps the checkpoint's own int8 codes) and for
    Marian's arithmetic (_marian_int8)."""
    if args.dtype != "int8" or args.no_calibration or _marian_int8(args, spec):
        if lines is not None and _marian_int8(args, spec):
            raise UserError("--calibrate is not used for a Marian intgemm8 model's int8 file, "
                            "which follows Marian's arithmetic (add --per-row-activations to "
                            "calibrate edgemt's)")
        return None
    from . import families, int8_calibration
    family = families.of(spec.config)
    if not int8_calibration.calibrates(family):
        if lines is not None:
            raise UserError(f"--calibrate is for {int8_calibration.calibrated_families()} "
                            f"models; this is {family.a_title} model, whose int8 file uses "
                            "nearest rounding (drop --calibrate)")
        return None
    if not int8_calibration.projections_to_calibrate(spec):
        return None
    return int8_calibration.calibrate(spec, lines,
                                      tied_tables=_residual_tables(args, spec))


def _residual_tables(args: argparse.Namespace, spec) -> bool:
    """Whether the int8 file's tables get residual codes: by default in int8
    files of the Transformer family with int8 tables (not with float tables,
    nor in Marian's int8 arithmetic, whose tables stay float32), unless
    --no-residual-embeddings."""
    from . import families
    if args.dtype != "int8" or args.residual_embeddings is False or _marian_int8(args, spec):
        return False
    if args.fp32_embeddings or args.fp16_embeddings:
        return False
    return families.of(spec.config).tensors.smoothable


def _kept_codes_note(args: argparse.Namespace, spec, plan) -> str:
    """The note of an int8 file that stores a checkpoint's own int8 codes
    (ModelSpec.int8_codes: Marian's intgemm8 matrices)."""
    from .model_spec import (MATRIX, QUANTIZATION_INT8_PER_TENSOR, QUANTIZATION_INT8_STATIC,
                             expected_tensors, matrix_dtype)
    scheme = (QUANTIZATION_INT8_STATIC if _marian_static(args, spec)
              else QUANTIZATION_INT8_PER_TENSOR if _marian_int8(args, spec) else None)
    matrices = [name for name, tensor in expected_tensors(spec.config, "fp32").items()
                if tensor.kind == MATRIX and tensor.alias_of is None
                and matrix_dtype(tensor, "int8", scheme, bool(args.fp32_embeddings),
                                 args.fp16_embeddings) == "int8"]
    kept = [name for name in spec.int8_codes if name in matrices]
    note = (f"{len(kept)} of {len(matrices)} int8 matrices keep the checkpoint's "
            "int8 codes (Marian's intgemm8: codes as stored, scale 1/quantMult on every row), "
            "not quantized again")
    if _marian_static(args, spec):
        return note + ("; the model's alphas: Int8PerTensorStatic (browsermt Marian's "
                       "int8shiftAlphaAll, as Firefox runs it: each product's activations "
                       "quantized with its fixed alpha, the output layer int8 too, embeddings "
                       "in float32; --per-row-activations for edgemt's per-row scheme)")
    if _marian_int8(args, spec):
        return note + ("; Marian's arithmetic: Int8PerTensorDynamic (one activation range per "
                       "product, embeddings and a tied output projection in float32; "
                       "--per-row-activations for edgemt's per-row scheme)")
    if plan is not None:
        return note + "; calibration is for the other projections"
    if args.no_calibration:
        return note
    unused = " (--calibrate is not used)" if args.calibrate is not None else ""
    return note + f"; no other projection to calibrate: Int8PerRowDynamic{unused}"


def run(args: argparse.Namespace) -> str:
    """Convert per parsed arguments; returns a one-line summary (and, for a
    calibrated int8 file, the calibration's line before it)."""
    from . import calibration, input_files, writer
    from .model_file import write_model
    from .model_spec import QUANTIZATION_INT8
    from .output_target import check_output
    if args.hub_id is None and not os.path.exists(args.checkpoint):
        raise UserError(f"checkpoint not found: {args.checkpoint}")
    for label, path in (("config file", args.config), ("SentencePiece model", args.spm),
                        ("source SentencePiece model", args.src_spm),
                        ("target SentencePiece model", args.tgt_spm)):
        if path is not None and not input_files.regular_file(path, label):
            raise UserError(f"{label} not found: {path}")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise UserError(f"output folder does not exist: {out_dir}")
    # Before any work; the writer checks again, against every file read.
    check_output(args.output, _named_inputs(args, args.checkpoint))
    checkpoint = _download(args) if args.hub_id is not None else args.checkpoint
    with input_files.recording() as files_read:
        calibration_lines = None
        if args.calibrate is not None:
            calibration_lines = calibration.read_calibration_lines(
                args.calibrate, args.calibrate_lines or DEFAULT_CALIBRATION_LINES)
        spec, notes = SOURCES[args.source_format].read(SourceInputs(
            checkpoint=checkpoint, config=args.config, spm=args.spm,
            src_lang=args.src_lang, tgt_lang=args.tgt_lang, converter_version=__version__,
            created_utc=_created_utc(), src_spm=args.src_spm, tgt_spm=args.tgt_spm,
            max_positions=args.max_positions, allow_missing_pieces=args.allow_missing_pieces,
            checkpoint_name=args.hub_id.name if args.hub_id is not None else None,
            shortlist=args.shortlist[0] if args.shortlist is not None else None))
        for note in notes:
            print(f"{PROG}: note: {note}", file=sys.stderr)
        shortlist = _read_shortlist(args, spec) if args.shortlist is not None else ""
        _check_table_options(args, spec)
        tables = _table_option(args)
        untie = args.fp16_embeddings or args.fp32_embeddings == "lookup"
        if untie and not _marian_int8(args, spec):
            from .model_spec import untie_output
            spec, untied = untie_output(spec)
            if untied:
                print(f"{PROG}: note: {', '.join(untied)} gets an int8 copy of the embedding "
                      f"table it was tied to ({tables})", file=sys.stderr)
        if args.fp16_embeddings and not _marian_int8(args, spec):
            from .model_spec import round_tables_to_fp16
            spec = round_tables_to_fp16(spec)  # calibration sees the file's lookups
        plan = _int8_plan(args, spec, calibration_lines)
        if args.dtype == "int8" and spec.int8_codes:
            print(f"{PROG}: note: {_kept_codes_note(args, spec, plan)}", file=sys.stderr)
        static = _marian_static(args, spec)
        per_tensor = _marian_int8(args, spec) and not static
        from .sources.marian_alphas import static_spec
        packed = static_spec(spec) if static else spec
        f32_tables = bool(args.fp32_embeddings) and not _marian_int8(args, spec)
        f16_tables = args.fp16_embeddings and not _marian_int8(args, spec)
        if tables and _marian_int8(args, spec):
            print(f"{PROG}: note: {tables.split()[0]} changes nothing here: Marian's int8 "
                  "arithmetic keeps the embeddings in float32 anyway", file=sys.stderr)
        header, tensors, aliases = writer.pack(packed, args.dtype, plan, per_tensor, static,
                                               f32_tables, f16_tables,
                                               _residual_tables(args, spec))
        size = write_model(args.output, header, tensors, aliases,
                           inputs=_named_inputs(args, checkpoint) + files_read)
    scheme = ""
    if args.dtype == "int8":
        scheme = f" ({header.quantization or QUANTIZATION_INT8}"
        scheme += (", embeddings fp32)" if header.f32_tables
                   else ", embeddings fp16)" if header.f16_tables
                   else ", embeddings int8 + 4-bit residual)" if header.residual_tables else ")")
    summary = (f"wrote {args.output}: {size} bytes, {len(tensors)} tensors "
               f"(+{len(aliases)} aliases), weights {args.dtype}{scheme}{shortlist}")
    return "\n".join(([plan.summary()] if plan is not None else []) + [summary])


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.shortlist is not None:  # first: its values may have taken CHECKPOINT
        args.shortlist = _shortlist_option(parser, args.shortlist)
    try:
        _resolve_checkpoint(parser, args)
        _check_option_combinations(parser, args)
        print(run(args))
    except UserError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"{PROG}: error: {err.strerror or err}: {err.filename or ''}".rstrip(": "),
              file=sys.stderr)
        return 1
    return 0
