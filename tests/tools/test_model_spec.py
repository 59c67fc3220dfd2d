"""model_spec.py: the tensor list a config implies (schema/TENSORS.md), read
from the family's one table (schema/transformer_tensors.def,
schema/rnn_tensors.def); the RNN config's checks (validate.py)."""

import glob
import os
import tempfile
import unittest

import helpers  # noqa: F401
from edgemt_tools.errors import UserError
from edgemt_tools.model_spec import (FAMILIES, MATRIX, VECTOR, QUANTIZATION_INT8,
                                     QUANTIZATION_NONE, RNN_TENSOR_TABLE, TENSOR_TABLE,
                                     RnnConfig, TransformerConfig, expected_tensors, family_of,
                                     quantization_scheme, read_tensor_table, resolve_alias)
from edgemt_tools.validate import validate_config


def config(**kw):
    base = dict(encoder_layers=3, decoder_layers=3, d_model=256, heads=4, ffn_dim=1024,
                vocab_size=8000, max_positions=256, encoder_final_norm=True,
                decoder_final_norm=True, embedding_scale=16.0, tied_output=True,
                output_bias=True, shared_embeddings=True)
    base.update(kw)
    return TransformerConfig(**base)


class ExpectedTensorsTest(unittest.TestCase):
    def test_counts_for_multi30k(self):
        specs = expected_tensors(config())
        # 4 embedding/position/output + bias, 12 per encoder layer, 20 per decoder
        # layer, 2 + 2 final norms.
        self.assertEqual(len(specs), 5 + 3 * 12 + 3 * 20 + 4)
        self.assertEqual(specs["decoder.layers.2.cross_attn.kv.weight"].shape, (512, 256))
        self.assertEqual(specs["encoder.layers.0.self_attn.qkv.weight"].shape, (768, 256))
        self.assertEqual(specs["encoder.layers.0.ffn.out.weight"].shape, (256, 1024))
        self.assertEqual(specs["position.table"].shape, (256, 256))
        self.assertEqual(specs["position.table"].kind, "f32")
        self.assertEqual(specs["output.weight"].kind, MATRIX)
        self.assertEqual(resolve_alias(specs, "output.weight"), "embedding.source")

    def test_optional_tensors(self):
        specs = expected_tensors(config(tied_output=False, output_bias=False,
                                        shared_embeddings=False, encoder_final_norm=False))
        self.assertNotIn("output.bias", specs)
        self.assertNotIn("encoder.final_norm.weight", specs)
        self.assertIsNone(specs["output.weight"].alias_of)
        self.assertIsNone(specs["embedding.target"].alias_of)

    def test_float_files_have_no_scales(self):
        for dtype in ("fp32", "fp16"):
            specs = expected_tensors(config(), dtype)
            self.assertEqual(list(specs), list(expected_tensors(config())))
            self.assertFalse([n for n in specs if n.endswith("_scale")], dtype)

    def test_unknown_weight_dtype(self):
        with self.assertRaises(ValueError):
            expected_tensors(config(), "int4")


class Int8ScalesTest(unittest.TestCase):
    def test_every_matrix_followed_by_its_scale(self):
        specs = expected_tensors(config(), "int8")
        names = list(specs)
        matrices = [n for n, s in specs.items() if s.kind == MATRIX]
        # 3 embedding/output + 4 per encoder layer + 7 per decoder layer
        self.assertEqual(len(matrices), 3 + 3 * 4 + 3 * 7)
        self.assertEqual(len(specs), len(expected_tensors(config())) + len(matrices))
        for name in matrices:
            scale = specs[name + "_scale"]
            self.assertEqual(names[names.index(name) + 1], name + "_scale")
            self.assertEqual(scale.kind, VECTOR)
            self.assertEqual(scale.shape, (specs[name].shape[0],))
        self.assertEqual(specs["encoder.layers.0.ffn.in.weight_scale"].shape, (1024,))
        self.assertEqual(specs["decoder.layers.2.cross_attn.kv.weight_scale"].shape, (512,))
        self.assertEqual(specs["embedding.source_scale"].shape, (8000,))
        self.assertEqual(specs["output.weight_scale"].shape, (8000,))
        self.assertNotIn("output.bias_scale", specs)
        self.assertNotIn("position.table_scale", specs)

    def test_scale_aliases_follow_matrix_aliases(self):
        specs = expected_tensors(config(), "int8")  # tied and shared
        self.assertIsNone(specs["embedding.source_scale"].alias_of)
        self.assertEqual(specs["embedding.target_scale"].alias_of, "embedding.source_scale")
        self.assertEqual(specs["output.weight_scale"].alias_of, "embedding.target_scale")
        self.assertEqual(resolve_alias(specs, "output.weight_scale"), "embedding.source_scale")

        tied_only = expected_tensors(config(shared_embeddings=False), "int8")
        self.assertIsNone(tied_only["embedding.target_scale"].alias_of)
        self.assertEqual(resolve_alias(tied_only, "output.weight_scale"),
                         "embedding.target_scale")

        untied = expected_tensors(config(tied_output=False, shared_embeddings=False), "int8")
        for name in ("embedding.source_scale", "embedding.target_scale", "output.weight_scale"):
            self.assertIsNone(untied[name].alias_of, name)

    def test_scheme_follows_weight_dtype(self):
        self.assertEqual(quantization_scheme("int8"), QUANTIZATION_INT8)
        self.assertEqual(quantization_scheme("fp16"), QUANTIZATION_NONE)
        self.assertEqual(quantization_scheme("fp32"), QUANTIZATION_NONE)
        with self.assertRaises(ValueError):
            quantization_scheme("int4")


class TensorTableTest(unittest.TestCase):
    def test_the_table_has_every_entry_once(self):
        table = read_tensor_table()
        self.assertEqual(len(table), 23)
        self.assertEqual(len({e.id for e in table}), len(table))
        self.assertEqual(table[0].name, "embedding.source")
        self.assertEqual([e.group for e in table].count("DECODER_LAYER"), 10)

    def test_a_malformed_line_is_refused(self):
        with tempfile.NamedTemporaryFile("w", suffix=".def", delete=False) as handle:
            handle.write('// fine\nTRANSFORMER_TENSOR(kX, MODEL, "x", MATRIX, V, D, SOMETIMES)\n')
        self.addCleanup(os.remove, handle.name)
        with self.assertRaisesRegex(ValueError, "unknown value SOMETIMES"):
            read_tensor_table(handle.name)
        with open(handle.name, "w", encoding="utf-8") as again:
            again.write("TENSOR(kX)\n")
        with self.assertRaisesRegex(ValueError, "not a TRANSFORMER_TENSOR line"):
            read_tensor_table(handle.name)

    def test_names_are_spelled_only_in_the_table(self):
        """No runtime file and no family-neutral converter module spells a
        table name (checkpoint sources map their own names onto them); nor
        does a family-neutral converter module spell an RNN tensor's."""
        rnn_names = [n for n in expected_tensors(rnn_config(
            score="Additive", query_bias=True, combine_bias=True, bidirectional_encoder=True))
            if not n.startswith(("encoder.layers.", "decoder.layers."))]
        modules = [os.path.join(helpers.TOOLS_DIR, "edgemt_tools", module) for module in
                   ("model_spec.py", "writer.py", "model_file.py", "validate.py", "quantize.py")]
        spelled = []
        for path in modules:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            spelled += [f"{os.path.basename(path)}: {name}" for name in rnn_names
                        if f'"{name}' in text]
        self.assertEqual(spelled, [])
        names = [e.name for e in read_tensor_table()]
        files = glob.glob(os.path.join(helpers.REPO_ROOT, "runtime", "**", "*.[ch]*"),
                          recursive=True)
        files += [os.path.join(helpers.TOOLS_DIR, "edgemt_tools", module) for module in
                  ("model_spec.py", "writer.py", "model_file.py", "validate.py", "quantize.py")]
        self.assertTrue(os.path.isfile(TENSOR_TABLE))
        spelled = []
        for path in files:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            spelled += [f"{os.path.relpath(path, helpers.REPO_ROOT)}: {name}" for name in names
                        if f'"{name}' in text]
        self.assertEqual(spelled, [])



def rnn_config(**kw):
    base = dict(layers=2, source_embedding_dim=8, target_embedding_dim=6, hidden=16,
                vocab_size=96, max_positions=256)
    base.update(kw)
    return RnnConfig(**base)


class RnnTensorsTest(unittest.TestCase):
    """schema/rnn_tensors.def through expected_tensors (an RnnConfig picks it)."""

    def test_the_table(self):
        table = read_tensor_table(RNN_TENSOR_TABLE)
        self.assertEqual(len(table), 15)
        self.assertEqual(table, FAMILIES["rnn"].table)
        self.assertEqual([e.group for e in table].count("ENCODER_LAYER"), 4)
        with tempfile.NamedTemporaryFile("w", suffix=".def", delete=False) as handle:
            handle.write('RNN_TENSOR(kX, MODEL, "x", MATRIX, D, N, ALWAYS)\n')
        self.addCleanup(os.remove, handle.name)
        with self.assertRaisesRegex(ValueError, "unknown value D"):
            read_tensor_table(handle.name)

    def test_family_dispatch(self):
        self.assertIs(family_of(rnn_config()), FAMILIES["rnn"])
        self.assertIs(family_of(config()), FAMILIES["transformer"])
        with self.assertRaises(TypeError):
            expected_tensors(object())

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
