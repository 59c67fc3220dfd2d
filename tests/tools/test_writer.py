"""writer.own_target_tokenizer: a target tokenizer that is the source's again
(one vocabulary for both languages) is stored once; one that differs in
anything the runtime reads is kept."""

import dataclasses
import unittest

import helpers  # noqa: F401
from edgemt_tools.families.transformer import TransformerConfig
from edgemt_tools.model_spec import ModelSpec, SideTokenizer, SpecialTokens
from edgemt_tools.writer import own_target_tokenizer

CONFIG = TransformerConfig(encoder_layers=1, decoder_layers=1, d_model=8, heads=2, ffn_dim=12,
                           vocab_size=4, max_positions=6)
PIECES = ("<pad>", "<unk>", "</s>", "▁a")
SPECIAL = SpecialTokens(pad=0, unk=1, bos=2, eos=2, decoder_start=2)


def spec(target: SideTokenizer, **changes) -> ModelSpec:
    fields = dict(config=CONFIG, special_tokens=SPECIAL, source_language="en",
                  target_language="de", tokenizer_model=b"spm-bytes", weights={},
                  source_pieces=PIECES, target_tokenizer=target)
    fields.update(changes)
    return ModelSpec(**fields)


class OwnTargetTokenizerTest(unittest.TestCase):
    def test_the_source_side_again_is_stored_once(self):
        self.assertIsNone(own_target_tokenizer(spec(SideTokenizer(b"spm-bytes", PIECES))))
        # An id given on one side and left to the special tokens on the
        # other is the same id.
        self.assertIsNone(own_target_tokenizer(spec(SideTokenizer(b"spm-bytes", PIECES, 1, 2))))
        self.assertIsNone(own_target_tokenizer(spec(None)))

    def test_a_target_side_of_its_own_is_kept(self):
        same = SideTokenizer(b"spm-bytes", PIECES)
        cases = {
            "SentencePiece bytes": (dataclasses.replace(same, spm=b"spm-bytez"), {}),
            "pieces": (dataclasses.replace(same, pieces=PIECES[:3] + ("▁b",)), {}),
            "no pieces": (dataclasses.replace(same, pieces=None), {}),
            "unk": (dataclasses.replace(same, unk_id=0), {}),
            "eos": (same, {"source_eos_id": 3}),
            "vocabulary size": (same, {"config": dataclasses.replace(CONFIG, vocab_size=5,
                                                                     source_vocab_size=4)}),
        }
        for what, (target, changes) in cases.items():
            with self.subTest(what):
                self.assertIs(own_target_tokenizer(spec(target, **changes)), target)


if __name__ == "__main__":
    unittest.main()
