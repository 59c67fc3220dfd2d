"""--from opennmt end to end on the committed fixture (tests/fixtures/opennmt/:
two models OpenNMT-py 3.2 trained on Multi30k with its own onmt_train, and
onmt_translate's own output on test_2016; its README says how):

- A: separate vocabularies, embeddings and SentencePiece models, relu, no
  biases; B: one vocabulary, shared embeddings and output, gelu, Q/K/V and
  FFN biases;
- fp32 greedy (OpenNMT-py's -beam_size 1) and beam 4 equal OpenNMT-py's
  output on >= 99.5% of the lines, with its length rules (max_length 250,
  length penalty avg);
- int8: the quality guard (framework_fixtures.assert_int8_quality: lines
  identical to fp32, BLEU within 0.3 but for one runaway line);
- broken or unsupported checkpoints are refused with one line, no file.
"""

import os
import unittest

import framework_fixtures as ff
import helpers  # noqa: F401 - puts tools/ on sys.path
from edgemt_tools.model_file import read_model

FIXTURE = os.path.join(ff.FIXTURES_DIR, "opennmt")
SOURCE = os.path.join(helpers.REFERENCE_DIR, "test_2016_flickr.en")
LANGS = ("--src-lang", "en", "--tgt-lang", "de")
MODELS = {
    "A": ("--checkpoint", os.path.join(FIXTURE, "A.pt"), "--src-spm",
          os.path.join(FIXTURE, "A.src.spm"), "--tgt-spm", os.path.join(FIXTURE, "A.tgt.spm")),
    "B": ("--checkpoint", os.path.join(FIXTURE, "B.pt"), "--spm", os.path.join(FIXTURE, "B.spm")),
}


CONVERTED = ff.ConvertedFixtures(
    lambda name: ("--from", "opennmt", *MODELS[name], *LANGS), SOURCE)


def tearDownModule():
    CONVERTED.cleanup()


class OpenNmtTest(unittest.TestCase):
    def check(self, name, beam, reference):
        ff.assert_agreement(self, CONVERTED.translate(self, name, "fp32", beam),
                            ff.read_lines(os.path.join(FIXTURE, reference)),
                            f"opennmt {name} fp32 beam {beam} vs onmt_translate")

    def test_a_greedy(self):
        self.check("A", 1, "A.greedy.de")

    def test_a_beam4(self):
        self.check("A", 4, "A.beam4.de")

    def test_b_greedy(self):
        self.check("B", 1, "B.greedy.de")

    def test_b_beam4(self):
        self.check("B", 4, "B.beam4.de")

    def test_int8_quality_guard(self):
        for name in ("A", "B"):
            for beam in (1, 4):
                with self.subTest(f"{name} beam {beam}"):
                    ff.assert_int8_quality(self, ("opennmt", name, beam),
                                           CONVERTED.translate(self, name, "fp32", beam),
                                           CONVERTED.translate(self, name, "int8", beam))

    def test_records_what_the_checkpoint_says(self):
        a = read_model(CONVERTED.model(self, "A", "fp32")).header
        b = read_model(CONVERTED.model(self, "B", "fp32")).header
        self.assertEqual(a.decoding.rules, "opennmt")
        self.assertEqual((a.decoding.beam_size, a.decoding.max_len_b), (5, 250.0))
        self.assertEqual(a.decoding.banned_tokens, ())
        self.assertFalse(a.append_eos_to_source)
        self.assertEqual(a.config.norm_placement, "pre")
        self.assertTrue(a.config.encoder_final_norm and a.config.decoder_final_norm)
        self.assertFalse(a.config.shared_embeddings)
        self.assertIsNotNone(a.target_tokenizer)
        self.assertNotEqual(a.target_tokenizer.spm, a.tokenizer_model)
        self.assertTrue(b.config.shared_embeddings and b.config.tied_output)
        self.assertEqual(b.config.activation, "gelu")


class RefusalTest(unittest.TestCase):
    """Broken or unsupported checkpoints: one clear line, nothing written."""

    def setUp(self):
        self.workspace = ff.Workspace(self)
        self.output = self.workspace.path("out.emt")

    def rewritten(self, name, change):
        """A copy of fixture model `name` with change(checkpoint) applied."""
        import torch
        checkpoint = torch.load(os.path.join(FIXTURE, f"{name}.pt"), map_location="cpu")
        change(checkpoint)
        path = self.workspace.path(f"{name}.changed.pt")
        torch.save(checkpoint, path)
        return path

    def refuse(self, path, fragment, name="A"):
        spm = MODELS[name][2:]
        return ff.refused(self, self.output, fragment, "--from", "opennmt", "--checkpoint", path,
                          *spm, *LANGS, "--dtype", "fp32")

    def test_missing_tensor(self):
        key = "decoder.transformer_layers.2.feed_forward.w_2.weight"
        self.refuse(self.rewritten("A", lambda c: c["model"].pop(key)), f"missing tensor {key}")

    def test_wrong_shape(self):
        key = "encoder.transformer.1.self_attn.linear_keys.weight"

        def change(c):
            c["model"][key] = c["model"][key][:, :10].clone()
        self.refuse(self.rewritten("A", change), key)

    def test_unsupported_options(self):
        for option, value, fragment in (("max_relative_positions", 20, "max_relative_positions"),
                                        ("max_relative_positions", -1, "rotary"),
                                        ("max_relative_positions", -2, "alibi"),
                                        ("copy_attn", True, "copy_attn"),
                                        ("layer_norm", "rms", "layer_norm"),
                                        ("pos_ffn_activation_fn", "silu", "silu"),
                                        ("encoder_type", "brnn", "encoder_type"),
                                        ("n_src_feats", 2, "n_src_feats")):
            with self.subTest(option=option, value=value):
                self.refuse(self.rewritten("A", lambda c: setattr(c["opt"], option, value)),
                            fragment)

    def test_unexpected_tensor(self):
        def change(c):
            c["model"]["encoder.transformer.0.self_attn.relative_positions_embeddings.weight"] = \
                c["model"]["encoder.transformer.0.layer_norm.weight"].clone()
        self.refuse(self.rewritten("A", change), "does not understand")

    def test_needs_its_sentencepiece_models(self):
        ff.refused(self, self.output, "--spm S, or --src-spm S --tgt-spm T", "--from", "opennmt",
                   "--checkpoint", MODELS["A"][1], *LANGS, "--dtype", "fp32")

    def test_wrong_from_names_what_it_found(self):
        ff.refused(self, self.output, "this is an OpenNMT-py checkpoint: use --from opennmt",
                   "--from", "hf-marian", "--checkpoint", MODELS["A"][1], "--dtype", "fp32")
        marian_npz = os.path.join(ff.FIXTURES_DIR, "marian", "npz", "model.npz")
        self.refuse(marian_npz, "this is a Marian model (.npz or .bin): use --from marian")


if __name__ == "__main__":
    unittest.main()
