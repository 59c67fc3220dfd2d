"""`edgemt-convert`: checkpoint -> .emt model file.

User errors (bad options, missing files, a checkpoint that does not match its
config, ...) print one line `edgemt-convert: error: ...` on stderr and exit 2
(argparse errors) or 1 (everything else); nothing is written then, because the
file is produced through `atomic_file` (temp file in the output folder, fsync,
rename) and the temp file is removed on failure.
"""

import argparse
import datetime
import os
import sys

from . import __version__
from .errors import UserError
from .model_file import write_model
from .model_spec import WEIGHT_DTYPES

PROG = "edgemt-convert"

DESCRIPTION = """\
Convert a trained checkpoint into one edgemt model file (.emt): FlatBuffer
header (config, special tokens, SentencePiece model, provenance) followed by a
64-byte-aligned weight segment.

Supported source: --from torch, a torch.nn.Transformer state_dict saved with
torch.save(model.state_dict()) whose wrapper has `embed`, `transformer` and
`generator` (see models/MODEL_CARD.md), with its config.json.

--dtype fp16 stores the embedding and projection matrices as IEEE half;
biases, LayerNorm parameters and the position table stay float32."""

EPILOG = """\
example:
  edgemt-convert --from torch --checkpoint model.pt --config config.json \\
      --spm spm.model --src-lang en --tgt-lang de --dtype fp16 -o model.fp16.emt

created_utc is the current time, or SOURCE_DATE_EPOCH when that variable is
set (reproducible files). Exit status: 0 success, 1 conversion error, 2 usage
error."""


class _Parser(argparse.ArgumentParser):
    """argparse prints usage + error; keep it to one line on stderr."""

    def error(self, message):
        self.exit(2, f"{PROG}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description=DESCRIPTION, epilog=EPILOG, allow_abbrev=False,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--from", dest="source_format", required=True, choices=["torch"],
                   help="checkpoint format (only 'torch' for now)")
    p.add_argument("--checkpoint", required=True, metavar="FILE",
                   help="state_dict file (torch.save)")
    p.add_argument("--config", required=True, metavar="FILE",
                   help="config.json with the hyper-parameters and special token ids")
    p.add_argument("--spm", required=True, metavar="FILE",
                   help="SentencePiece model (stored in the file; ids must match the config)")
    p.add_argument("--src-lang", metavar="LANG",
                   help="source language code (default: config 'src_lang')")
    p.add_argument("--tgt-lang", metavar="LANG",
                   help="target language code (default: config 'tgt_lang')")
    p.add_argument("--dtype", required=True, choices=list(WEIGHT_DTYPES),
                   help="storage type of the embedding and projection matrices")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="output .emt file (written atomically)")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return p


def _created_utc() -> str:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = (datetime.datetime.fromtimestamp(int(epoch), tz=datetime.timezone.utc) if epoch
            else datetime.datetime.now(tz=datetime.timezone.utc))
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _read_spm(path: str, config: dict) -> bytes:
    """Read the SentencePiece model and check it agrees with the config's ids."""
    import sentencepiece as spm
    if not os.path.isfile(path):
        raise UserError(f"SentencePiece model not found: {path}")
    with open(path, "rb") as handle:
        proto = handle.read()
    try:
        sp = spm.SentencePieceProcessor(model_proto=proto)
    except Exception as err:  # noqa: BLE001 - sentencepiece raises plain RuntimeError/OSError
        raise UserError(f"cannot load SentencePiece model {path}: "
                        f"{str(err).splitlines()[0] if str(err) else type(err).__name__}") from None
    if sp.get_piece_size() != config["vocab_size"]:
        raise UserError(f"SentencePiece model has {sp.get_piece_size()} pieces, config "
                        f"vocab_size is {config['vocab_size']}")
    for key, got in (("pad_id", sp.pad_id()), ("unk_id", sp.unk_id()), ("bos_id", sp.bos_id()),
                     ("eos_id", sp.eos_id())):
        if got != config[key]:
            raise UserError(f"SentencePiece {key} is {got}, config says {config[key]}")
    return proto


def run(args: argparse.Namespace) -> str:
    """Convert per parsed arguments; returns a one-line summary."""
    from . import torch_frontend
    for label, path in (("checkpoint", args.checkpoint), ("config file", args.config)):
        if not os.path.isfile(path):
            raise UserError(f"{label} not found: {path}")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        raise UserError(f"output folder does not exist: {out_dir}")
    config = torch_frontend.read_config(args.config)
    src_lang = args.src_lang or config.get("src_lang")
    tgt_lang = args.tgt_lang or config.get("tgt_lang")
    if not src_lang or not tgt_lang:
        raise UserError("languages unknown: pass --src-lang and --tgt-lang")
    proto = _read_spm(args.spm, config)
    header, tensors, aliases = torch_frontend.build(
        args.checkpoint, config, proto, src_lang, tgt_lang, args.dtype, __version__,
        _created_utc())
    if config["tied_embeddings"] and not header.config.tied_output:
        print(f"{PROG}: note: config says tied_embeddings but generator.weight differs from "
              "embed.weight; storing output.weight separately", file=sys.stderr)
    size = write_model(args.output, header, tensors, aliases)
    return (f"wrote {args.output}: {size} bytes, {len(tensors)} tensors "
            f"(+{len(aliases)} aliases), weights {args.dtype}")


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        print(run(args))
    except UserError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"{PROG}: error: {err.strerror or err}: {err.filename or ''}".rstrip(": "),
              file=sys.stderr)
        return 1
    return 0
