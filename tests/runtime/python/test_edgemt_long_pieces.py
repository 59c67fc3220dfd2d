"""Translations longer than the module's first guess of a buffer (issue 38,
defect 7).

The module sized its text buffers from the token count (64 bytes a token
for Model.detokenize and translate_ids, 16 for translate), so a model whose
pieces are longer failed valid translations ("the text does not fit in 640
bytes"). Here a tiny random Transformer (edgemt_tools.testing) gets a
SentencePiece vocabulary with two pieces of over 100 bytes and an output
bias that makes it write one of them at every step: each path must return
the whole text, equal to what SentencePiece itself decodes.

Needs torch, sentencepiece and the converter (tools/). Run by ctest
(runtime.python.edgemt_long_pieces); by hand:

    EDGEMT_LIBRARY=build/runtime/libedgemt.so.0 PYTHONPATH=runtime/python \
      /usr/bin/python3 -m unittest tests/runtime/python/test_edgemt_long_pieces.py -v
"""

import json
import os
import subprocess
import tempfile
import unittest

import edgemt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
LONG_PIECES = ["Donaudampfschifffahrtsgesellschaftskapitänsmützenabzeichen" * 2,
               "Rindfleischetikettierungsüberwachungsaufgabenübertragungsgesetz" * 2]

# Run in a separate process (cwd tools/): edgemt_tools has a flatbuffers
# package named `edgemt` that is not this `edgemt` module.
MAKE_CHECKPOINT = """
import io, json, sys
import sentencepiece as spm
from edgemt_tools import testing
folder, long_pieces = sys.argv[1], json.loads(sys.argv[2])
config = testing.tiny_torch_config()
paths = testing.write_tiny_checkpoint(folder, config, seed=5)
trained = io.BytesIO()
spm.SentencePieceTrainer.train(
    sentence_iterator=iter(testing._TINY_CORPUS.splitlines() * 4), model_writer=trained,
    vocab_size=config["vocab_size"], model_type="unigram", pad_id=0, unk_id=1, bos_id=2,
    eos_id=3, character_coverage=1.0, normalization_rule_name="identity", minloglevel=2,
    num_threads=1, hard_vocab_limit=True, user_defined_symbols=long_pieces)
with open(paths["spm"], "wb") as f:
    f.write(trained.getvalue())
processor = spm.SentencePieceProcessor(model_proto=trained.getvalue())
long_id = processor.piece_to_id(long_pieces[0])
# Every step's most likely token: the first long piece (never EOS).
import torch
state = torch.load(paths["checkpoint"])
state["generator.bias"][long_id] = 1000.0
torch.save(state, paths["checkpoint"])
source = "A dog is running on green grass."
print(json.dumps({"paths": paths, "long_id": long_id,
                  "source_ids": processor.encode(source) + [config["eos_id"]],
                  "source": source, "decoded": processor.decode([long_id] * 5)}))
"""


class LongPieces(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workspace = tempfile.TemporaryDirectory()
        done = subprocess.run(["/usr/bin/python3", "-c", MAKE_CHECKPOINT, cls.workspace.name,
                               json.dumps(LONG_PIECES)],
                              check=True, capture_output=True, text=True,
                              cwd=os.path.join(ROOT, "tools"))
        cls.made = json.loads(done.stdout)
        paths = cls.made["paths"]
        cls.path = os.path.join(cls.workspace.name, "long_pieces.emt")
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "edgemt-convert"),
                        "--from", "torch", "--checkpoint", paths["checkpoint"], "--config",
                        paths["config"], "--spm", paths["spm"], "--dtype", "fp32",
                        "-o", cls.path], check=True, capture_output=True)
        cls.model = edgemt.Model(cls.path)

    @classmethod
    def tearDownClass(cls):
        cls.model.close()
        cls.workspace.cleanup()

    def test_detokenize_longer_than_64_bytes_a_piece(self):
        long_id = self.made["long_id"]
        self.assertGreater(len(LONG_PIECES[0].encode()), 64)
        self.assertEqual(self.model.detokenize([long_id] * 5), self.made["decoded"])
        self.assertEqual(self.model.detokenize([long_id] * 5), LONG_PIECES[0] * 5)

    def test_translate_ids_returns_the_whole_text(self):
        translator = edgemt.Translator(self.model, max_target_len=8)
        for beam in (1, 2):
            got = translator.translate_ids([self.made["source_ids"]], beam_size=beam)[0]
            self.assertTrue(got.tokens)
            self.assertEqual(set(got.tokens), {self.made["long_id"]})
            self.assertEqual(got.text, LONG_PIECES[0] * len(got.tokens))

    def test_translate_returns_the_whole_text(self):
        """translate() asks the C call again with the size it reported."""
        translator = edgemt.Translator(self.model, max_target_len=8)
        for beam in (1, 2):
            got = translator.translate([self.made["source"], "", self.made["source"]],
                                       beam_size=beam)
            self.assertEqual(got[0], got[2])
            self.assertEqual(got[1].text, "")
            self.assertEqual(set(got[0].tokens), {self.made["long_id"]})
            self.assertEqual(got[0].text, LONG_PIECES[0] * len(got[0].tokens))
            # 16 bytes a token, the first buffer's size, was too small.
            self.assertGreater(len(got[0].text.encode()), 16 * 8 + 64)
            by_ids = translator.translate_ids([self.made["source_ids"]], beam_size=beam)[0]
            self.assertEqual((got[0].tokens, got[0].score), (by_ids.tokens, by_ids.score))


if __name__ == "__main__":
    unittest.main()
