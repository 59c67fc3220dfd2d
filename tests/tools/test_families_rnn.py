"""families/rnn.py: the RNN family's tensor table (schema/rnn_tensors.def)
through expected_tensors, and its config checks."""

import os
import tempfile
import unittest

import helpers  # noqa: F401
from edgemt_tools.errors import UserError
from edgemt_tools.families.rnn import FAMILY, SYNTAX, TENSOR_TABLE, RnnConfig
from edgemt_tools.families.tensor_table import MATRIX, VECTOR, read_tensor_table
from edgemt_tools.model_spec import expected_tensors
from edgemt_tools.validate import validate_config


def rnn_config(**kw):
    base = dict(layers=2, source_embedding_dim=8, target_embedding_dim=6, hidden=16,
                vocab_size=96, max_positions=256)
    base.update(kw)
    return RnnConfig(**base)


class RnnTensorsTest(unittest.TestCase):
    """schema/rnn_tensors.def through expected_tensors (an RnnConfig picks it)."""

    def test_the_table(self):
        table = read_tensor_table(TENSOR_TABLE, SYNTAX)
        self.assertEqual(len(table), 15)
        self.assertEqual(table, FAMILY.tensors.entries)
        self.assertEqual([e.group for e in table].count("ENCODER_LAYER"), 4)
        with tempfile.NamedTemporaryFile("w", suffix=".def", delete=False) as handle:
            handle.write('RNN_TENSOR(kX, MODEL, "x", MATRIX, D, N, ALWAYS)\n')
        self.addCleanup(os.remove, handle.name)
        with self.assertRaisesRegex(ValueError, "unknown value D"):
            read_tensor_table(handle.name, SYNTAX)

    def test_luong_dot_lstm(self):
        specs = expected_tensors(rnn_config())
        layer = ["ih.weight", "ih.bias", "hh.weight", "hh.bias"]
        self.assertEqual(list(specs), [
            "embedding.source", "embedding.target", "attention.combine", "output.weight",
            "output.bias"] + [f"{stack}.layers.{k}.{n}" for stack in ("encoder", "decoder")
                              for k in range(2) for n in layer])
        self.assertEqual(specs["embedding.source"].shape, (96, 8))
        self.assertEqual(specs["embedding.target"].shape, (96, 6))
        self.assertEqual(specs["attention.combine"].shape, (16, 32))
        self.assertEqual(specs["output.weight"].shape, (96, 16))
        self.assertEqual(specs["encoder.layers.0.ih.weight"].shape, (64, 8))
        self.assertEqual(specs["encoder.layers.1.ih.weight"].shape, (64, 16))
        self.assertEqual(specs["decoder.layers.0.ih.weight"].shape, (64, 6))
        self.assertEqual(specs["decoder.layers.1.hh.weight"].shape, (64, 16))
        self.assertEqual(specs["decoder.layers.1.hh.bias"].kind, VECTOR)

    def test_conditions_and_dims(self):
        specs = expected_tensors(rnn_config(
            cell="Gru", bidirectional_encoder=True, score="Additive", query_bias=True,
            query="Current", decoder_input="EmbeddingInputFeed", output="LinearCombine",
            combine_bias=True, source_vocab_size=50))
        self.assertEqual(specs["embedding.source"].shape, (50, 8))
        for name, shape in (("attention.key", (16, 16)), ("attention.query", (16, 16)),
                            ("attention.query_bias", (16,)), ("attention.v", (16,)),
                            ("attention.combine", (16, 32)), ("attention.combine_bias", (16,)),
                            ("encoder.layers.0.ih_reverse.weight", (24, 8)),
                            ("encoder.layers.0.hh_reverse.weight", (24, 8)),
                            ("encoder.layers.1.ih.weight", (24, 16)),
                            ("decoder.layers.0.ih.weight", (48, 22)),
                            ("decoder.layers.1.ih.weight", (48, 16))):
            self.assertEqual(specs[name].shape, shape, name)
        self.assertEqual(specs["attention.v"].kind, VECTOR)
        general = expected_tensors(rnn_config(score="General"))
        self.assertIn("attention.key", general)
        self.assertNotIn("attention.query", general)
        self.assertNotIn("attention.v", general)
        bahdanau = expected_tensors(rnn_config(
            bidirectional_encoder=True, score="Additive", query="Previous",
            decoder_input="EmbeddingContext", output="StateContext"))
        self.assertNotIn("attention.combine", bahdanau)
        self.assertEqual(bahdanau["output.weight"].shape, (96, 32))
        self.assertEqual(bahdanau["decoder.layers.0.ih.weight"].shape, (64, 22))

    def test_int8_scales(self):
        specs = expected_tensors(rnn_config(score="Additive"), "int8")
        names = list(specs)
        for name, spec in specs.items():
            if spec.kind == MATRIX:
                self.assertEqual(names[names.index(name) + 1], name + "_scale")
                self.assertEqual(specs[name + "_scale"].shape, (spec.shape[0],))
        self.assertNotIn("attention.v_scale", specs)
        self.assertEqual(specs["attention.query_scale"].shape, (16,))

    def test_config_checks(self):
        validate_config(rnn_config())
        validate_config(rnn_config(cell="Gru", bidirectional_encoder=True, score="Additive",
                                   query="Previous", decoder_input="EmbeddingContext",
                                   output="StateContext"))
        for bad, pattern in ((dict(cell="Rnn"), "cell 'Rnn'"),
                             (dict(layers=0), "layers = 0 is out of range"),
                             (dict(hidden=15, bidirectional_encoder=True), "must be even"),
                             (dict(query_bias=True), "query_bias needs the Additive"),
                             (dict(combine_bias=True, output="StateContext"), "combine_bias"),
                             (dict(max_positions=0), "max_positions = 0"),
                             (dict(layers=10 ** 6), "layers = 1000000 is out of range"),
                             (dict(query="Previous"), "query Previous goes with"),
                             (dict(decoder_input="EmbeddingContext"), "query Previous goes"),
                             (dict(decoder_input="EmbeddingInputFeed", output="StateContext"),
                              "EmbeddingInputFeed needs")):
            with self.assertRaisesRegex(UserError, pattern):
                validate_config(rnn_config(**bad))


if __name__ == "__main__":
    unittest.main()
