"""CTranslate2's int8 against its own fp32 on the repository's fixtures:
lines of Multi30k test_2016_flickr (1,000) whose int8 output is identical
to the fp32 one, greedy and beam 4, and BLEU of both. The figure edgemt's
int8 is held to (docs/int8-quality.md; edgemt's own side:
tools/research/edgemt-int8-quality).

Each model is converted by CTranslate2's own converter (float32 and int8):
  multi30k   ../shared/models/multi30k-en-de, with ct2_torch_model.py
  opennmt-A, opennmt-B   tests/fixtures/opennmt/{A,B}.pt, OpenNMTPyConverter
  hf-marian  tests/fixtures/marian/hf, TransformersConverter (ct2_hf_marian.py)
  marian     tests/fixtures/marian/npz, MarianConverter (on a copy whose
             special:model.yml is cut after its first NUL, as
             tests/fixtures/marian/README.md explains)
  marian-positions   the same, with Marian's own position table in the
             copy as `Wpos`: MarianConverter stores a `Wpos` item as the
             model's positions and otherwise builds Hugging Face's table,
             so only this one computes the function Marian (and edgemt's
             conversion of the folder) computes
and decodes the pre-tokenized source as each framework feeds it, beam 1 and
4, length penalty 1, at most 256 tokens. OpenNMTPyConverter loads the
fixture checkpoints with torch.load(weights_only=False): they are this
repository's own files (tools/fixtures/opennmt made them).

usage: tools/compare-ctranslate2/run.sh is for speed; run this one with the
same venv: /work/venvs/ct2/bin/python tools/compare-ctranslate2/int8_agreement.py
"""

import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(REPO, "tests", "fixtures")
REFERENCE = os.path.join(REPO, "models", "reference")


def read_lines(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()


def convert(name, shared, out):
    """(ct2 dir by quantization, source SentencePiece, target SentencePiece,
    append </s> to the source, forbid <unk>)."""
    import ctranslate2
    import numpy as np
    import torch
    dirs = {q: os.path.join(out, f"{name}.{q}") for q in ("float32", "int8")}
    if name == "multi30k":
        import ct2_torch_model
        folder = os.path.join(shared, "models", "multi30k-en-de")
        for q, path in dirs.items():
            ct2_torch_model.convert(folder, path, quantization=None if q == "float32" else q)
        spm = os.path.join(folder, "spm.model")
        return dirs, spm, spm, True, False
    if name.startswith("opennmt-"):
        model = name[-1]
        checkpoint = os.path.join(FIXTURES, "opennmt", f"{model}.pt")
        load = torch.load
        torch.load = lambda *a, **k: load(*a, **{**k, "weights_only": False})
        try:
            for q, path in dirs.items():
                ctranslate2.converters.OpenNMTPyConverter(checkpoint).convert(
                    path, quantization=q, force=True)
        finally:
            torch.load = load
        if model == "A":
            return (dirs, os.path.join(FIXTURES, "opennmt", "A.src.spm"),
                    os.path.join(FIXTURES, "opennmt", "A.tgt.spm"), False, False)
        spm = os.path.join(FIXTURES, "opennmt", "B.spm")
        return dirs, spm, spm, False, False
    if name == "hf-marian":
        import ct2_hf_marian
        folder = os.path.join(FIXTURES, "marian", "hf")
        for q, path in dirs.items():
            ct2_hf_marian.convert(folder, path, None if q == "float32" else q)
        return (dirs, os.path.join(folder, "source.spm"), os.path.join(folder, "target.spm"),
                True, True)
    folder = os.path.join(FIXTURES, "marian", "npz")
    copy = os.path.join(out, name + "-npz")
    shutil.copytree(folder, copy, dirs_exist_ok=True)
    weights = dict(np.load(os.path.join(copy, "model.npz")))
    yml = bytes(weights["special:model.yml"])
    weights["special:model.yml"] = np.frombuffer(yml[:yml.index(b"\0") + 1], dtype=np.int8)
    if name == "marian-positions":
        from edgemt_tools import positions
        # [positions, d]: 2,048 rows, as many as CTranslate2's own table has.
        weights["Wpos"] = positions.marian(2048, weights["Wemb"].shape[1])
    np.savez(os.path.join(copy, "model.npz"), **weights)
    vocab = os.path.join(copy, "vocab.yml")
    for q, path in dirs.items():
        ctranslate2.converters.MarianConverter(os.path.join(copy, "model.npz"),
                                               [vocab, vocab]).convert(path, quantization=q,
                                                                       force=True)
    return dirs, os.path.join(copy, "source.spm"), os.path.join(copy, "target.spm"), False, True


def source_agreement(name, beam, fp32):
    """For the Marian fixture's two folders: how many of CTranslate2's fp32
    lines are the source framework's own (tests/fixtures/marian/reference:
    Marian's translator, transformers' generate())."""
    framework = {"marian": "pymarian", "marian-positions": "pymarian", "hf-marian": "hf"}
    if name not in framework:
        return ""
    kind = "greedy" if beam == 1 else "beam4"
    own = read_lines(os.path.join(FIXTURES, "marian", "reference",
                                  f"{framework[name]}.{kind}.de"))
    same = sum(a == b for a, b in zip(fp32, own))
    return f"   fp32 = {framework[name]}'s on {same}/{len(own)}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(REPO), "shared"))
    parser.add_argument("--models", default="multi30k,opennmt-A,opennmt-B,hf-marian,marian,"
                        "marian-positions")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    sys.path.insert(0, HERE)
    sys.path.insert(0, os.path.join(REPO, "tools"))
    import ctranslate2
    import sentencepiece
    from edgemt_tools.bleu import corpus_bleu
    sources = read_lines(os.path.join(REFERENCE, "test_2016_flickr.en"))
    reference = read_lines(os.path.join(REFERENCE, "test_2016_flickr.de"))
    print(f"ctranslate2 {ctranslate2.__version__}; {len(sources)} lines")
    print(f"{'model':10s} {'beam':>4s} {'identical':>10s} {'BLEU fp32':>10s} {'int8':>7s}")
    with tempfile.TemporaryDirectory(prefix="ct2-int8-") as out:
        for name in args.models.split(","):
            dirs, src_spm, tgt_spm, append_eos, no_unk = convert(name, args.shared, out)
            src = sentencepiece.SentencePieceProcessor(model_file=src_spm)
            tgt = sentencepiece.SentencePieceProcessor(model_file=tgt_spm)
            tokens = [src.encode(line, out_type=str) + (["</s>"] if append_eos else [])
                      for line in sources]
            outputs = {}
            for q, path in dirs.items():
                translator = ctranslate2.Translator(path, compute_type=q,
                                                    intra_threads=args.threads)
                for beam in (1, 4):
                    results = translator.translate_batch(
                        tokens, beam_size=beam, max_batch_size=64, length_penalty=1.0,
                        max_decoding_length=256, disable_unk=no_unk)
                    outputs[q, beam] = [tgt.decode(r.hypotheses[0]) for r in results]
            for beam in (1, 4):
                fp32, int8 = outputs["float32", beam], outputs["int8", beam]
                same = sum(a == b for a, b in zip(fp32, int8))
                print(f"{name:10s} {beam:4d} {same:5d}/{len(fp32):<4d} "
                      f"{corpus_bleu(fp32, reference).score:10.2f} "
                      f"{corpus_bleu(int8, reference).score:7.2f}"
                      f"{source_agreement(name, beam, fp32)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
