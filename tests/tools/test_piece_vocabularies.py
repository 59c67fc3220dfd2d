"""Piece vocabularies are checked against the model (issue 38, defect 4).

Before: a Marian vocab.yml holding 100 of the fixture's 3,809 pieces, or a
vocab.json holding 50, converted (the ids without a piece got placeholders)
and translated into `<edgemt-unused-2000>...` with exit 0; a piece given
twice in vocab.yml or vocab.json was accepted, the last id winning.

Now, in every vocabulary of pieces (Marian vocab.yml / .json, Hugging Face
vocab.json and target_vocab.json, OpenNMT-py's vocab lists):
- every id of the model's embedding rows has exactly one piece;
- no piece (no key) appears twice;
- every piece the side's SentencePiece model outputs is in it (control
  pieces and <unk> excepted); a vocabulary that lacks some is refused,
  naming the first and the count, unless --allow-missing-pieces, which
  makes it a note (a few OPUS-MT releases lack a few pieces, which Marian
  reads as <unk>: Helsinki-NLP/Opus-MT issue 19).
The committed fixtures still convert (test_sources_marian.py,
test_sources_opennmt.py hold them to their frameworks' outputs).
"""

import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest

import helpers
from edgemt_tools import convert
from edgemt_tools.model_file import read_model

FIXTURES = os.path.join(helpers.REPO_ROOT, "tests", "fixtures")
MARIAN_NPZ = os.path.join(FIXTURES, "marian", "npz")
MARIAN_HF = os.path.join(FIXTURES, "marian", "hf")
OPENNMT = os.path.join(FIXTURES, "opennmt")


def run_convert(argv):
    """edgemt-convert in this process: (exit status, stderr); usage errors
    exit through argparse (SystemExit)."""
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = convert.main(argv)
        except SystemExit as exit_:
            code = exit_.code
    return code, stderr.getvalue()


def read_vocab_yml(path):
    """The lines of a vocab.yml (`"piece": id` each), in order."""
    with open(path, encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle]


class VocabularyTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.output = os.path.join(self.tmp, "out.emt")

    def folder(self, fixture):
        return shutil.copytree(fixture, os.path.join(self.tmp, os.path.basename(fixture)))

    def marian(self, folder, *extra):
        return run_convert(["--from", "marian", "--checkpoint", folder, "--src-lang", "en",
                            "--tgt-lang", "de", "--dtype", "fp32", *extra, "-o", self.output])

    def hf(self, folder, *extra):
        return run_convert(["--from", "hf-marian", "--checkpoint", folder, "--dtype", "fp32",
                            *extra, "-o", self.output])

    def assert_refused(self, result, *fragments):
        code, stderr = result
        self.assertEqual(code, 1, stderr)
        lines = stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, stderr)
        self.assertTrue(lines[0].startswith("edgemt-convert: error: "), stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])
        self.assertFalse(os.path.exists(self.output), "a refused conversion wrote a file")

    def write_lines(self, path, lines):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")

    # -- Marian vocab.yml ------------------------------------------------------------------
    def test_marian_short_vocabulary_is_refused(self):
        folder = self.folder(MARIAN_NPZ)
        vocab = os.path.join(folder, "vocab.yml")
        self.write_lines(vocab, read_vocab_yml(vocab)[:100])
        self.assert_refused(self.marian(folder), "vocab.yml: 100 pieces for the model's 3809 "
                            "embedding rows", "(first id 100)")

    def test_marian_vocabulary_with_a_hole_is_refused(self):
        """One piece deleted in the middle: its id has no piece."""
        folder = self.folder(MARIAN_NPZ)
        vocab = os.path.join(folder, "vocab.yml")
        lines = read_vocab_yml(vocab)
        self.write_lines(vocab, lines[:500] + lines[501:])
        self.assert_refused(self.marian(folder), "1 id(s) have no piece (first id 500)")

    def test_marian_duplicate_piece_is_refused(self):
        for name, change in (
                ("the same id", lambda lines: lines + [lines[2]]),
                ("another id", lambda lines: lines[:3] + [lines[2].split(":")[0] + ": 3"] +
                 lines[4:])):
            with self.subTest(name):
                folder = self.folder(MARIAN_NPZ)
                vocab = os.path.join(folder, "vocab.yml")
                self.write_lines(vocab, change(read_vocab_yml(vocab)))
                self.assert_refused(self.marian(folder), "key '▁a' appears twice (lines 3 and")
                shutil.rmtree(folder)

    def test_marian_vocabulary_of_other_pieces_is_refused(self):
        """Every id has a piece, but a piece source.spm outputs is not there
        (renamed): refused naming it, or a note with --allow-missing-pieces."""
        folder = self.folder(MARIAN_NPZ)
        vocab = os.path.join(folder, "vocab.yml")
        lines = [line.replace('"▁the":', '"▁thé":') for line in read_vocab_yml(vocab)]
        self.write_lines(vocab, lines)
        self.assert_refused(self.marian(folder), "1 piece(s) of the SentencePiece model",
                            "source.spm are not in", "(first '▁the')", "--allow-missing-pieces")
        code, stderr = self.marian(folder, "--allow-missing-pieces")
        self.assertEqual(code, 0, stderr)
        self.assertIn("note: 1 piece(s) of the SentencePiece model", stderr)
        self.assertIn("they read as <unk>", stderr)

    def test_marian_pieces_missing_on_the_target_side_are_refused_too(self):
        folder = self.folder(MARIAN_NPZ)
        vocab = os.path.join(folder, "vocab.yml")
        # '▁und' is cut by target.spm (German) only.
        self.write_lines(vocab, [line.replace('"▁und":', '"▁unt":')
                                 for line in read_vocab_yml(vocab)])
        self.assert_refused(self.marian(folder), "target.spm are not in", "(first '▁und')")

    def test_marian_json_vocabulary_is_checked_too(self):
        folder = self.folder(MARIAN_NPZ)
        pieces = {}
        for line in read_vocab_yml(os.path.join(folder, "vocab.yml")):
            piece, index = line.rsplit(": ", 1)
            pieces[json.loads(piece)] = int(index)
        with open(os.path.join(folder, "vocab.json"), "w", encoding="utf-8") as handle:
            json.dump(dict(list(pieces.items())[:50]), handle, ensure_ascii=False)
        with open(os.path.join(folder, "decoder.yml"), encoding="utf-8") as handle:
            decoder = handle.read().replace("vocab.yml", "vocab.json")
        with open(os.path.join(folder, "decoder.yml"), "w", encoding="utf-8") as handle:
            handle.write(decoder)
        self.assert_refused(self.marian(folder), "vocab.json: 50 pieces for the model's 3809")

    def test_marian_duplicate_key_in_decoder_yml_is_refused(self):
        folder = self.folder(MARIAN_NPZ)
        with open(os.path.join(folder, "decoder.yml"), "a", encoding="utf-8") as handle:
            handle.write("beam-size: 2\n")
        self.assert_refused(self.marian(folder), "decoder.yml", "key 'beam-size' appears twice")

    # -- Hugging Face vocab.json -----------------------------------------------------------
    def hf_vocab(self, folder, name="vocab.json"):
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            return json.load(handle)

    def write_hf_vocab(self, folder, text, name="vocab.json"):
        with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
            handle.write(text)

    def test_hf_short_vocabulary_is_refused(self):
        folder = self.folder(MARIAN_HF)
        vocab = self.hf_vocab(folder)
        self.write_hf_vocab(folder, json.dumps(dict(list(vocab.items())[:50])))
        self.assert_refused(self.hf(folder), "vocab.json: 50 pieces for the model's 3810 "
                            "embedding rows", "(first id 50)")

    def test_hf_duplicate_key_is_refused(self):
        folder = self.folder(MARIAN_HF)
        with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as handle:
            text = handle.read()
        self.write_hf_vocab(folder, text.replace("{", '{\n  "\\u2581a": 7,', 1))
        self.assert_refused(self.hf(folder), "vocab.json", "key '▁a' appears twice")

    def test_hf_vocabulary_of_other_pieces_is_refused(self):
        folder = self.folder(MARIAN_HF)
        vocab = self.hf_vocab(folder)
        vocab["▁xyz"] = vocab.pop("▁the")
        self.write_hf_vocab(folder, json.dumps(vocab))
        self.assert_refused(self.hf(folder), "source.spm are not in", "(first '▁the')")
        code, stderr = self.hf(folder, "--allow-missing-pieces")
        self.assertEqual(code, 0, stderr)
        self.assertIn("they read as <unk>", stderr)

    def test_hf_target_vocabulary_is_checked(self):
        folder = self.folder(MARIAN_HF)
        vocab = self.hf_vocab(folder)
        self.write_hf_vocab(folder, json.dumps(dict(list(vocab.items())[:3000])),
                            "target_vocab.json")
        self.assert_refused(self.hf(folder), "target_vocab.json: 3000 pieces for the model's "
                            "3810 embedding rows")

    # -- OpenNMT-py vocab lists ------------------------------------------------------------
    def test_opennmt_duplicate_piece_is_refused(self):
        import torch
        checkpoint = torch.load(os.path.join(OPENNMT, "A.pt"), map_location="cpu")
        checkpoint["vocab"]["src"][10] = checkpoint["vocab"]["src"][9]
        piece = checkpoint["vocab"]["src"][9]
        path = os.path.join(self.tmp, "A.pt")
        torch.save(checkpoint, path)
        self.assert_refused(run_convert(
            ["--from", "opennmt", "--checkpoint", path, "--src-spm",
             os.path.join(OPENNMT, "A.src.spm"), "--tgt-spm", os.path.join(OPENNMT, "A.tgt.spm"),
             "--src-lang", "en", "--tgt-lang", "de", "--dtype", "fp32", "-o", self.output]),
            f"vocab['src'] holds the piece {piece!r} twice (ids 9 and 10)")

    # -- what stays as it was --------------------------------------------------------------
    def test_the_fixtures_convert_with_every_id_a_real_piece(self):
        for convert_folder in (self.marian, self.hf):
            code, stderr = convert_folder(MARIAN_NPZ if convert_folder == self.marian
                                          else MARIAN_HF)
            self.assertEqual(code, 0, stderr)
            header = read_model(self.output).header
            for pieces in (header.source_pieces, header.target_tokenizer.pieces):
                self.assertFalse([p for p in pieces if p.startswith("<edgemt-unused")])
            os.remove(self.output)

    def test_allow_missing_pieces_is_for_marian_folders_only(self):
        code, stderr = run_convert(["--from", "torch", "--checkpoint", "x.pt", "--dtype", "fp32",
                                    "--allow-missing-pieces", "-o", self.output])
        self.assertEqual(code, 2)
        self.assertIn("--allow-missing-pieces is for --from marian and hf-marian", stderr)


if __name__ == "__main__":
    unittest.main()
