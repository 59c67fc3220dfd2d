"""The committed references in models/reference/ are complete and consistent
(needs only the repository: the tokenizer comes from the bundled model)."""

import os
import unittest

import helpers
from edgemt_tools.bleu import corpus_bleu
from edgemt_tools.model_file import read_model

LINES = 1000
OUTPUTS = ("torch_fp32_greedy", "torch_fp16_greedy", "torch_fp32_beam4", "torch_int8_greedy")
# PyTorch fp32 greedy on test_2016_flickr, as recorded in models/MODEL_CARD.md.
GREEDY_BLEU = 31.95


def read(name):
    with open(os.path.join(helpers.REFERENCE_DIR, name), encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle]


class ReferenceFilesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import sentencepiece
        model = read_model(helpers.BUNDLED_MODEL)
        cls.eos = model.header.special_tokens.eos
        cls.spm = sentencepiece.SentencePieceProcessor(
            model_proto=model.header.tokenizer_model)

    def test_sources_and_source_ids(self):
        sources = read("test_2016_flickr.en")
        ids = read("test_2016_flickr.en.ids")
        self.assertEqual(len(sources), LINES)
        self.assertEqual(len(read("test_2016_flickr.de")), LINES)
        for text, line in zip(sources, ids):
            self.assertEqual([int(x) for x in line.split()], self.spm.encode(text) + [self.eos])

    def test_outputs_decode_to_their_text(self):
        for name in OUTPUTS:
            with self.subTest(name=name):
                if not os.path.exists(os.path.join(helpers.REFERENCE_DIR, name + ".ids")):
                    self.fail(f"models/reference/{name}.ids missing (see README.md there)")
                ids, texts = read(name + ".ids"), read(name + ".de")
                self.assertEqual((len(ids), len(texts)), (LINES, LINES))
                for line, text in zip(ids, texts):
                    tokens = [int(x) for x in line.split()]
                    self.assertFalse({0, 2, 3} & set(tokens), "pad/bos/eos in output ids")
                    self.assertEqual(self.spm.decode(tokens), text)

    def test_greedy_bleu_as_recorded(self):
        score = corpus_bleu(read("torch_fp32_greedy.de"), read("test_2016_flickr.de"))
        self.assertEqual(round(score.score, 2), GREEDY_BLEU)


if __name__ == "__main__":
    unittest.main()
