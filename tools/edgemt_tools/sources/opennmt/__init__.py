"""Source `opennmt`: OpenNMT-py v3 checkpoints, Transformer (transformer.py)
and RNN encoder-decoders (`encoder_type` rnn / brnn with `decoder_type`
rnn: rnn.py), each mapping its family's options and tensors; what every
checkpoint holds (loading, options, vocabularies, state dicts) is
checkpoint.py, and this module puts a model file's spec together:
tokenizers, special ids, search rules, the same for both.

Input: the `.pt` file `onmt_train` saves, a dict with `model` (the
encoder-decoder's state dict), `generator` (its own state dict), `vocab`
(`src` and `tgt`: lists of piece strings) and `opt` (the training options,
an argparse Namespace), plus the SentencePiece model(s) that cut the text
for it: `--spm` when both sides share one, `--src-spm` / `--tgt-spm`
otherwise. The file is read by torch_zip.py, which allows only the
classes such a checkpoint holds (tensors, OrderedDict, argparse.Namespace,
set): nothing the file names runs, whichever torch is installed.

Shared facts (OpenNMT-py 3.2, onmt/inputters, onmt/translate/*):
- vocabularies: `<unk>`, `<blank>` (pad), `<s>`, `</s>` then the pieces;
  SentencePiece pieces are looked up by string; the source gets no BOS or
  EOS; the decoder starts with `vocab['decoder_start_token']` (`<s>`);
- search: OpenNMT-py's beam search (SearchRules OpenNMT) with
  onmt_translate's defaults: beam 5, length penalty `avg` (alpha 1),
  max_length 250, nothing banned.

Refused, naming the option: encoders or decoders other than transformer,
rnn or brnn, mixed families, copy attention, source features, LoRA or
quantized layers, other tasks or model types (and each family's own:
transformer.py, rnn.py).
"""

import os
from typing import List, Tuple

from ...errors import UserError
from ...model_spec import Decoding, ModelSpec, Provenance, SideTokenizer, SpecialTokens
from ...validate import validate_config
from .. import torch_zip
from ..common import read_sentencepiece, sha256_file
from ..detect import wrong_source
from . import rnn, transformer
from .checkpoint import (NAME, load_checkpoint, numpy_state, option, refuse, refuse_set,
                         vocabularies)

# The model families it writes (families/; edgemt-convert asks them about int8 calibration).
FAMILIES = ("transformer", "rnn")  # by its encoder and decoder types (model_family)

# The stored position buffer has 5000 rows; edgemt keeps the first ones (the
# longest source or output it translates). RNN models have no positions;
# the same bound holds for them.
MAX_POSITIONS = 1024
# onmt_translate's defaults (onmt/opts.py translate_opts, v3.2).
DEFAULT_BEAM = 5
DEFAULT_ALPHA = 1.0   # length_penalty "avg": score / length^alpha
DEFAULT_MAX_LENGTH = 250


def model_family(opt, where: str) -> str:
    """"transformer" or "rnn" from encoder_type / decoder_type; refuses
    the other encoders and decoders (and a mix of the two families)."""
    encoder = option(opt, "encoder_type", "rnn")
    decoder = option(opt, "decoder_type", "rnn")
    if encoder not in ("transformer", "rnn", "brnn"):
        refuse(where, "encoder_type", encoder, "only transformer, rnn or brnn")
    if decoder not in ("transformer", "rnn"):
        refuse(where, "decoder_type", decoder, "only transformer or rnn")
    family = "transformer" if decoder == "transformer" else "rnn"
    if (encoder == "transformer") != (family == "transformer"):
        refuse(where, "encoder_type", encoder,
                f"with decoder_type {decoder!r}: a transformer decoder needs a transformer "
                "encoder, an rnn decoder an rnn or brnn encoder")
    return family


def check_options(opt, where: str) -> str:
    """Refuse, naming the option, what edgemt cannot run; returns the model
    family ("transformer" or "rnn", whose own options are checked too)."""
    if not isinstance(opt, torch_zip.Namespace):
        raise UserError(f"{where}: 'opt' is a {type(opt).__name__}, not OpenNMT-py's options")
    family = model_family(opt, where)
    if option(opt, "model_task", "seq2seq") != "seq2seq":
        refuse(where, "model_task", option(opt, "model_task"), "only seq2seq")
    if option(opt, "model_type", "text") != "text":
        refuse(where, "model_type", option(opt, "model_type"), "only text")
    refuse_set(opt, where, (
        ("copy_attn", False, "copy attention"),
        ("n_src_feats", 0, "source features"),
        ("lora_layers", [], "LoRA layers"),
        ("quant_layers", [], "quantized layers")))
    if option(opt, "src_feats"):
        refuse(where, "src_feats", option(opt, "src_feats"), "source features")
    (rnn if family == "rnn" else transformer).check_options(opt, where)
    return family


def read(inputs) -> "Tuple[ModelSpec, List[str]]":
    path = inputs.checkpoint
    if os.path.isdir(path):
        raise UserError(wrong_source(path, NAME, "an OpenNMT-py checkpoint (.pt file)"))
    checkpoint = load_checkpoint(path)
    opt = checkpoint["opt"]
    family = check_options(opt, path)
    (src_pieces, src_ids), (tgt_pieces, tgt_ids) = vocabularies(checkpoint["vocab"], path)
    state = numpy_state(checkpoint["model"], path, "model")
    generator = numpy_state(checkpoint["generator"], path, "generator")
    if "weight" not in generator and "0.weight" in generator:
        # An nn.Sequential(Linear, ...) generator (OpenNMT-py before v3).
        generator = {key[2:]: value for key, value in generator.items() if key.startswith("0.")}
    vocab_sizes = (len(src_pieces), len(tgt_pieces))
    if family == "rnn":
        cfg, weights = rnn.convert(opt, state, generator, path, vocab_sizes, MAX_POSITIONS)
        notes = [f"max_positions {MAX_POSITIONS}: sources and outputs up to {MAX_POSITIONS} "
                 "tokens"]
    else:
        cfg = transformer.config(opt, state, generator, path, vocab_sizes, MAX_POSITIONS)
        validate_config(cfg)
        weights = transformer.convert_tensors(state, generator, cfg, opt, path)
        notes = [f"positions: the first {MAX_POSITIONS} rows of the stored buffer are kept "
                 f"(sources and outputs up to {MAX_POSITIONS} tokens)"]
    if inputs.spm is not None:
        source_spm = target_spm = read_sentencepiece(inputs.spm, "shared")
    elif inputs.src_spm is not None and inputs.tgt_spm is not None:
        source_spm = read_sentencepiece(inputs.src_spm, "source")
        target_spm = read_sentencepiece(inputs.tgt_spm, "target")
    else:
        raise UserError("--from opennmt needs the SentencePiece model(s) the checkpoint was "
                        "trained on: --spm S, or --src-spm S --tgt-spm T")
    if not (inputs.src_lang and inputs.tgt_lang):
        raise UserError("an OpenNMT-py checkpoint does not name its languages: pass --src-lang "
                        "and --tgt-lang")
    start_piece = checkpoint["vocab"].get("decoder_start_token", "<s>")
    if start_piece not in tgt_ids:
        raise UserError(f"{path}: the decoder start token {start_piece!r} is not in "
                        "vocab['tgt']")
    special = SpecialTokens(pad=tgt_ids["<blank>"], unk=tgt_ids["<unk>"],
                            bos=tgt_ids.get("<s>", tgt_ids[start_piece]), eos=tgt_ids["</s>"],
                            decoder_start=tgt_ids[start_piece])
    decoding = Decoding(rules="opennmt", beam_size=DEFAULT_BEAM, length_penalty=DEFAULT_ALPHA,
                        max_len_a=0.0, max_len_b=float(DEFAULT_MAX_LENGTH), banned_tokens=())
    spec = ModelSpec(
        config=cfg, special_tokens=special, source_language=inputs.src_lang,
        target_language=inputs.tgt_lang, tokenizer_model=source_spm, weights=weights,
        append_eos_to_source=False,
        provenance=Provenance(source_format=NAME, source_checkpoint=os.path.basename(path),
                              source_sha256=sha256_file(path),
                              converter_version=inputs.converter_version,
                              created_utc=inputs.created_utc),
        source_pieces=src_pieces, source_unk_id=src_ids["<unk>"], source_eos_id=src_ids["</s>"],
        target_tokenizer=SideTokenizer(target_spm, tgt_pieces), decoding=decoding)
    return spec, notes
