"""--from opennmt on OpenNMT-py RNN checkpoints, end to end on the committed
fixture (tests/fixtures/opennmt_rnn/: six small models OpenNMT-py 3.2
trained on Multi30k with its own onmt_train, and onmt_translate's own
output on test_2016; its README says how, FACTS.md what they compute):

  L1 rnn LSTM general input-feed 1 layer    G1 brnn GRU general 1 layer
  L2 brnn LSTM dot input-feed 2 layers      G2 rnn GRU mlp input-feed 2 layers
  L3 rnn LSTM mlp 1 layer                   G3 rnn GRU dot 1 layer

- the model's embedded SentencePiece cuts the test source into exactly the
  pieces onmt_translate read;
- fp32 greedy (OpenNMT-py's -beam_size 1) and beam 4 equal OpenNMT-py's
  output on >= 99.5% of the lines, with its length rules (max_length 250,
  length penalty avg);
- int8: the quality guard (framework_fixtures.assert_int8_quality: lines
  identical to fp32, BLEU within 0.3 but for one runaway line);
- the file records the RnnConfig each variant implies, OpenNMT's search
  rules, and the weights as mapped (general: linear_in transposed);
- unsupported or broken checkpoints are refused with one line, no file.
"""

import os
import unittest

import numpy as np

import framework_fixtures as ff
import helpers  # noqa: F401 - puts tools/ on sys.path
from edgemt_tools.model_file import read_model
from edgemt_tools.families.rnn import RnnConfig

FIXTURE = os.path.join(ff.FIXTURES_DIR, "opennmt_rnn")
SOURCE = os.path.join(helpers.REFERENCE_DIR, "test_2016_flickr.en")
SPM = os.path.join(FIXTURE, "R.spm")
LANGS = ("--src-lang", "en", "--tgt-lang", "de")
VARIANTS = ("L1", "L2", "L3", "G1", "G2", "G3")

# What each variant's options imply (README.md's table; FACTS.md §0-§4).
_COMMON = dict(source_embedding_dim=32, target_embedding_dim=32, hidden=64, vocab_size=1008,
               source_vocab_size=0, max_positions=1024, query="Current")
_DOT = dict(score="Dot", query_bias=False, output="TanhCombine", combine_bias=False)
_GENERAL = dict(_DOT, score="General")
_MLP = dict(score="Additive", query_bias=True, output="LinearCombine", combine_bias=True)
CONFIGS = {
    "L1": RnnConfig(cell="Lstm", layers=1, bidirectional_encoder=False,
                    decoder_input="EmbeddingInputFeed", **_GENERAL, **_COMMON),
    "L2": RnnConfig(cell="Lstm", layers=2, bidirectional_encoder=True,
                    decoder_input="EmbeddingInputFeed", **_DOT, **_COMMON),
    "L3": RnnConfig(cell="Lstm", layers=1, bidirectional_encoder=False,
                    decoder_input="Embedding", **_MLP, **_COMMON),
    "G1": RnnConfig(cell="Gru", layers=1, bidirectional_encoder=True,
                    decoder_input="Embedding", **_GENERAL, **_COMMON),
    "G2": RnnConfig(cell="Gru", layers=2, bidirectional_encoder=False,
                    decoder_input="EmbeddingInputFeed", **_MLP, **_COMMON),
    "G3": RnnConfig(cell="Gru", layers=1, bidirectional_encoder=False,
                    decoder_input="Embedding", **_DOT, **_COMMON),
}


def checkpoint(name):
    return os.path.join(FIXTURE, f"{name}.pt")


def load(name):
    import torch
    return torch.load(checkpoint(name), map_location="cpu")


CONVERTED = ff.ConvertedFixtures(
    lambda name: ("--from", "opennmt", "--checkpoint", checkpoint(name), "--spm", SPM, *LANGS), SOURCE)


def tearDownModule():
    CONVERTED.cleanup()


class OpenNmtRnnTest(unittest.TestCase):
    def check(self, name, beam):
        reference = f"{name}.{'greedy' if beam == 1 else 'beam4'}.de"
        ff.assert_agreement(self, CONVERTED.translate(self, name, "fp32", beam),
                            ff.read_lines(os.path.join(FIXTURE, reference)),
                            f"opennmt-rnn {name} fp32 beam {beam} vs onmt_translate")

    def test_l1_greedy(self):
        self.check("L1", 1)

    def test_l1_beam4(self):
        self.check("L1", 4)

    def test_l2_greedy(self):
        self.check("L2", 1)

    def test_l2_beam4(self):
        self.check("L2", 4)

    def test_l3_greedy(self):
        self.check("L3", 1)

    def test_l3_beam4(self):
        self.check("L3", 4)

    def test_g1_greedy(self):
        self.check("G1", 1)

    def test_g1_beam4(self):
        self.check("G1", 4)

    def test_g2_greedy(self):
        self.check("G2", 1)

    def test_g2_beam4(self):
        self.check("G2", 4)

    def test_g3_greedy(self):
        self.check("G3", 1)

    def test_g3_beam4(self):
        self.check("G3", 4)

    def test_int8_quality_guard(self):
        for name in VARIANTS:
            for beam in (1, 4):
                with self.subTest(f"{name} beam {beam}"):
                    ff.assert_int8_quality(self, ("opennmt-rnn", name, beam),
                                           CONVERTED.translate(self, name, "fp32", beam),
                                           CONVERTED.translate(self, name, "int8", beam))

    def test_embedded_tokenizer_gives_onmt_translates_pieces(self):
        import sentencepiece as spm
        header = read_model(CONVERTED.model(self, "L1", "fp32")).header
        processor = spm.SentencePieceProcessor(model_proto=header.tokenizer_model)
        pieces = [" ".join(processor.encode(line, out_type=str))
                  for line in ff.read_lines(SOURCE)]
        want = ff.read_lines(os.path.join(FIXTURE, "test_2016_flickr.R.en.pieces"))
        self.assertEqual(len(pieces), len(want))
        differing = [i for i, (a, b) in enumerate(zip(pieces, want)) if a != b]
        self.assertEqual(differing, [])
        # Every piece is found in the vocabulary by string.
        self.assertTrue({p for line in want for p in line.split()} <= set(header.source_pieces))

    def test_records_what_the_checkpoint_says(self):
        for name in VARIANTS:
            with self.subTest(variant=name):
                header = read_model(CONVERTED.model(self, name, "fp32")).header
                self.assertEqual(header.config, CONFIGS[name])
                self.assertEqual(header.decoding.rules, "opennmt")
                self.assertEqual((header.decoding.beam_size, header.decoding.length_penalty,
                                  header.decoding.max_len_a, header.decoding.max_len_b),
                                 (5, 1.0, 0.0, 250.0))
                self.assertEqual(header.decoding.banned_tokens, ())
                self.assertFalse(header.append_eos_to_source)
                special = header.special_tokens
                self.assertEqual((special.unk, special.pad, special.bos, special.eos,
                                  special.decoder_start), (0, 1, 2, 3, 2))
                self.assertEqual(header.provenance.source_format, "opennmt")
                # These checkpoints' two vocabularies are the same pieces of
                # one SentencePiece model: the file holds them once.
                self.assertIsNotNone(header.source_pieces)
                self.assertIsNone(header.target_tokenizer)

    def test_weights_as_mapped(self):
        for name in VARIANTS:
            with self.subTest(variant=name):
                model = read_model(CONVERTED.model(self, name, "fp32"))
                ckpt = load(name)
                state = {k: v.numpy() for k, v in ckpt["model"].items()}
                attn = "decoder.attn."
                if CONFIGS[name].score == "General":
                    np.testing.assert_array_equal(model.array("attention.key"),
                                                  state[attn + "linear_in.weight"].T)
                if CONFIGS[name].score == "Additive":
                    np.testing.assert_array_equal(model.array("attention.key"),
                                                  state[attn + "linear_context.weight"])
                    np.testing.assert_array_equal(model.array("attention.query"),
                                                  state[attn + "linear_query.weight"])
                    np.testing.assert_array_equal(model.array("attention.query_bias"),
                                                  state[attn + "linear_query.bias"])
                    np.testing.assert_array_equal(model.array("attention.v"),
                                                  state[attn + "v.weight"][0])
                    np.testing.assert_array_equal(model.array("attention.combine_bias"),
                                                  state[attn + "linear_out.bias"])
                np.testing.assert_array_equal(model.array("attention.combine"),
                                              state[attn + "linear_out.weight"])
                np.testing.assert_array_equal(model.array("output.weight"),
                                              ckpt["generator"]["weight"].numpy())
                input_feed = CONFIGS[name].decoder_input == "EmbeddingInputFeed"
                top = CONFIGS[name].layers - 1
                key = (f"decoder.rnn.layers.{top}.weight_hh" if input_feed
                       else f"decoder.rnn.weight_hh_l{top}")
                np.testing.assert_array_equal(model.array(f"decoder.layers.{top}.hh.weight"),
                                              state[key])
                if CONFIGS[name].bidirectional_encoder:
                    np.testing.assert_array_equal(
                        model.array(f"encoder.layers.{top}.ih_reverse.bias"),
                        state[f"encoder.rnn.bias_ih_l{top}_reverse"])


class RefusalTest(unittest.TestCase):
    """Unsupported or broken RNN checkpoints: one clear line, nothing written."""

    def setUp(self):
        self.workspace = ff.Workspace(self)
        self.output = self.workspace.path("out.emt")

    def rewritten(self, name, change):
        """A copy of fixture model `name` with change(checkpoint) applied."""
        import torch
        ckpt = load(name)
        change(ckpt)
        path = self.workspace.path(f"{name}.changed.pt")
        torch.save(ckpt, path)
        return path

    def refuse(self, path, fragment):
        return ff.refused(self, self.output, fragment, "--from", "opennmt", "--checkpoint", path,
                          "--spm", SPM, *LANGS, "--dtype", "fp32")

    def test_unsupported_options(self):
        for name, option, value, fragment in (
                ("L1", "bridge", True, "bridge"),
                ("L1", "global_attention", "none", "global_attention = 'none'"),
                ("L1", "global_attention", "luong", "global_attention"),
                ("G3", "global_attention_function", "sparsemax", "global_attention_function"),
                ("L1", "context_gate", "both", "context_gate"),
                ("L3", "coverage_attn", True, "coverage_attn"),
                ("L1", "copy_attn", True, "copy_attn"),
                ("L1", "rnn_type", "SRU", "rnn_type"),
                ("L1", "encoder_type", "mean", "encoder_type"),
                ("L1", "encoder_type", "transformer", "encoder_type"),
                ("L1", "decoder_type", "transformer", "encoder_type = 'rnn'"),
                ("L1", "decoder_type", "cnn", "decoder_type"),
                ("L1", "position_encoding", True, "position_encoding"),
                ("L1", "n_src_feats", 1, "n_src_feats")):
            with self.subTest(option=option, value=value):
                self.refuse(self.rewritten(name, lambda c: setattr(c["opt"], option, value)),
                            fragment)

    def test_calibration_is_refused(self):
        # int8 calibration needs a family's forward pass; the RNN has none.
        ff.refused(self, self.output, "--calibrate is for Transformer models; this is an RNN "
                   "model, whose int8 file uses nearest rounding (drop --calibrate)",
                   "--from", "opennmt", "--checkpoint", checkpoint("L1"), "--spm", SPM, *LANGS,
                   "--dtype", "int8", "--calibrate", SOURCE)

    def test_encoder_and_decoder_layers_differ(self):
        def change(c):
            c["opt"].layers, c["opt"].enc_layers, c["opt"].dec_layers = -1, 1, 2
        self.refuse(self.rewritten("L1", change), "enc_layers")

    def test_encoder_and_decoder_sizes_differ(self):
        def change(c):
            c["opt"].hidden_size, c["opt"].enc_hid_size, c["opt"].dec_hid_size = -1, 64, 32
        self.refuse(self.rewritten("L1", change), "enc_hid_size")

    def test_missing_tensor(self):
        for name, key in (("L2", "encoder.rnn.weight_hh_l1_reverse"),
                          ("L1", "decoder.rnn.layers.0.bias_ih"),
                          ("G3", "decoder.rnn.bias_hh_l0"),
                          ("L3", "decoder.attn.linear_query.bias"),
                          ("G1", "decoder.attn.linear_in.weight")):
            with self.subTest(key=key):
                self.refuse(self.rewritten(name, lambda c: c["model"].pop(key)),
                            f"missing tensor {key}")
        self.refuse(self.rewritten("G2", lambda c: c["generator"].pop("bias")),
                    "missing tensor bias")

    def test_wrong_shape(self):
        key = "decoder.attn.linear_out.weight"

        def change(c):
            c["model"][key] = c["model"][key][:, :64].clone()
        self.refuse(self.rewritten("G3", change), key)

    def test_unexpected_tensor(self):
        def change(c):
            c["model"]["encoder.bridge.0.weight"] = c["model"]["decoder.attn.linear_in.weight"]
        self.refuse(self.rewritten("L1", change), "does not understand")

    def test_input_feed_option_disagrees_with_the_tensors(self):
        # The option says no input feed, the keys are StackedLSTM's.
        self.refuse(self.rewritten("L1", lambda c: setattr(c["opt"], "input_feed", 0)),
                    "missing tensor decoder.rnn.weight_ih_l0")


if __name__ == "__main__":
    unittest.main()
