"""Attention weights of the RNN family through `import edgemt` (the C API's
edgemt_result.attention): for every committed fixture of
tests/fixtures/torch_rnn/ (converted here with edgemt-convert), greedy
weights equal those of PyTorch's own steps (model.step's `a`, recorded by
tools/fixtures/torch_rnn/make_references.py in greedy_attention.json)
within 1e-5; every row sums to 1; asking for them changes no translation,
greedy or beam 4; a translator not prepared for them refuses.

Run by ctest (runtime.python.rnn_attention).
"""

import json
import os
import subprocess
import tempfile
import unittest

import sentencepiece
import edgemt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "torch_rnn")
SOURCES = os.path.join(ROOT, "models", "reference", "test_2016_flickr.en")
VARIANTS = sorted(n for n in os.listdir(FIXTURE) if os.path.exists(os.path.join(FIXTURE, n, "model.pt")))
EOS = 3


def convert(folder, output):
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "edgemt-convert"), "--from",
                    "torch-rnn", "--checkpoint", os.path.join(folder, "model.pt"), "--config",
                    os.path.join(folder, "config.json"), "--spm", os.path.join(FIXTURE, "spm.model"),
                    "--dtype", "fp32", "-o", output], check=True, capture_output=True)


class RnnAttention(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="edgemt-rnn-attention-")
        sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(FIXTURE, "spm.model"))
        with open(SOURCES, encoding="utf-8") as f:
            lines = f.read().split("\n")[:40]
        cls.sources = [sp.encode(line) + [EOS] for line in lines]
        cls.models = {}
        for name in VARIANTS:
            path = os.path.join(cls.tmp.name, name + ".emt")
            convert(os.path.join(FIXTURE, name), path)
            cls.models[name] = edgemt.Model(path)

    @classmethod
    def tearDownClass(cls):
        cls.models.clear()
        cls.tmp.cleanup()

    def test_greedy_weights_equal_pytorch(self):
        for name in VARIANTS:
            with open(os.path.join(FIXTURE, name, "greedy_attention.json")) as f:
                reference = json.load(f)
            translator = edgemt.Translator(self.models[name], max_batch=8, attention=True)
            results = translator.translate_ids(self.sources[:len(reference)], beam_size=1, attention=True)
            worst = 0.0
            for k, (got, want) in enumerate(zip(results, reference)):
                with self.subTest(f"{name} line {k}"):
                    self.assertEqual(got.tokens, want["tokens"])
                    self.assertEqual(len(got.attention), len(want["attention"]))
                    for row, want_row in zip(got.attention, want["attention"]):
                        self.assertEqual(len(row), len(self.sources[k]))
                        self.assertAlmostEqual(sum(row), 1.0, delta=1e-5)
                        worst = max([worst] + [abs(a - b) for a, b in zip(row, want_row)])
            print(f"{name}: greedy attention weights, largest difference from PyTorch {worst:.2e}")
            self.assertLessEqual(worst, 1e-5, name)

    def test_asking_for_weights_changes_no_translation(self):
        for name in VARIANTS:
            translator = edgemt.Translator(self.models[name], max_batch=16, attention=True)
            for beam in (1, 4):
                with self.subTest(f"{name} beam {beam}"):
                    plain = translator.translate_ids(self.sources, beam_size=beam)
                    weighted = translator.translate_ids(self.sources, beam_size=beam, attention=True)
                    self.assertEqual([r.tokens for r in plain], [r.tokens for r in weighted])
                    self.assertEqual([r.score for r in plain], [r.score for r in weighted])
                    for source, result in zip(self.sources, weighted):
                        # A row per token, and one for the EOS step unless
                        # the translation stopped at its length limit.
                        self.assertIn(len(result.attention), (len(result.tokens), len(result.tokens) + 1))
                        for row in result.attention:
                            self.assertEqual(len(row), len(source))
                            self.assertAlmostEqual(sum(row), 1.0, delta=1e-5)
                            self.assertTrue(all(w >= 0.0 for w in row))

    def test_unplanned_or_impossible_requests_are_refused(self):
        name = VARIANTS[0]
        translator = edgemt.Translator(self.models[name], max_batch=4)  # not planned
        with self.assertRaises(edgemt.Error) as caught:
            translator.translate_ids(self.sources[:2], attention=True)
        self.assertEqual(caught.exception.code, "failed-precondition")
        self.assertIn("Limits::attention", str(caught.exception))
        # One attention: no other layer or head to choose.
        for layer, head in ((1, -1), (-1, 1), (-2, -1)):
            with self.assertRaises(edgemt.Error) as caught:
                edgemt.Translator(self.models[name], max_batch=2, attention=True,
                                  attention_layer=layer, attention_head=head)
            self.assertEqual(caught.exception.code, "invalid-argument")
            self.assertIn("one attention", str(caught.exception))
        edgemt.Translator(self.models[name], max_batch=2, attention=True, attention_layer=0,
                          attention_head=0)


if __name__ == "__main__":
    unittest.main()
