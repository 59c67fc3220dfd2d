"""model_spec.py: the tensor list a config implies (schema/TENSORS.md),
walked from its family's one table (shown with Transformer configs; each
family's own rules: test_families_<family>.py), and the int8 scales and
smoothing vectors every family's int8 files add."""

import glob
import os
import unittest

import numpy as np

import helpers  # noqa: F401
from edgemt_tools import families
from edgemt_tools.families.rnn import RnnConfig
from edgemt_tools.families.transformer import TransformerConfig
from edgemt_tools.model_spec import (MATRIX, VECTOR, QUANTIZATION_INT8, QUANTIZATION_NONE,
                                     ModelSpec, SpecialTokens, expected_tensors,
                                     quantization_scheme, resolve_alias, round_tables_to_fp16,
                                     untie_output)
from edgemt_tools.errors import UserError


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


def spec_of(cfg) -> ModelSpec:
    """A spec of `cfg` with a random array for every tensor that owns its bytes."""
    rng = np.random.default_rng(0)
    weights = {name: rng.standard_normal(tensor.shape).astype(np.float32)
               for name, tensor in expected_tensors(cfg).items() if tensor.alias_of is None}
    return ModelSpec(config=cfg, special_tokens=SpecialTokens(0, 1, 2, 3, 0),
                     source_language="en", target_language="de", tokenizer_model=b"",
                     weights=weights)


class UntieOutputTest(unittest.TestCase):
    """untie_output (edgemt-convert --fp32-embeddings lookup)."""

    def test_a_tied_projection_gets_a_copy_of_the_table(self):
        small = dict(d_model=8, heads=2, ffn_dim=16, vocab_size=32, max_positions=16)
        for shared in (True, False):
            with self.subTest(shared_embeddings=shared):
                spec = spec_of(config(shared_embeddings=shared, **small))
                untied, names = untie_output(spec)
                self.assertEqual(names, ["output.weight"])
                self.assertTrue(spec.config.tied_output)  # the input is left as it was
                self.assertFalse(untied.config.tied_output)
                self.assertEqual(untied.config.shared_embeddings, shared)
                table = "embedding.source" if shared else "embedding.target"
                np.testing.assert_array_equal(untied.weights["output.weight"],
                                              spec.weights[table])
                untied.weights["output.weight"][0, 0] += 1.0  # a copy, not the table itself
                self.assertNotEqual(untied.weights["output.weight"][0, 0],
                                    spec.weights[table][0, 0])
                specs = expected_tensors(untied.config)
                self.assertIsNone(specs["output.weight"].alias_of)
                self.assertEqual(sorted(untied.weights),
                                 sorted(n for n, t in specs.items() if t.alias_of is None))
                for name in spec.weights:
                    self.assertIs(untied.weights[name], spec.weights[name], name)

    def test_an_untied_model_is_left_as_it_is(self):
        spec = spec_of(config(tied_output=False, d_model=8, heads=2, ffn_dim=16,
                              vocab_size=32, max_positions=16))
        untied, names = untie_output(spec)
        self.assertEqual(names, [])
        self.assertIs(untied, spec)


class RoundTablesToFp16Test(unittest.TestCase):
    """round_tables_to_fp16 (edgemt-convert --fp16-embeddings)."""

    def test_tables_only(self):
        spec = spec_of(config(shared_embeddings=False, tied_output=False, d_model=8, heads=2,
                              ffn_dim=16, vocab_size=32, max_positions=16))
        rounded = round_tables_to_fp16(spec)
        for name, array in spec.weights.items():
            if name in ("embedding.source", "embedding.target"):
                self.assertEqual(rounded.weights[name].dtype, np.float32)
                np.testing.assert_array_equal(rounded.weights[name],
                                              array.astype(np.float16).astype(np.float32))
                self.assertFalse(np.array_equal(rounded.weights[name], array), name)
            else:
                self.assertIs(rounded.weights[name], array, name)

    def test_beyond_the_range(self):
        spec = spec_of(config(d_model=8, heads=2, ffn_dim=16, vocab_size=32, max_positions=16))
        spec.weights["embedding.source"][3, 1] = 70000.0
        with self.assertRaisesRegex(UserError, "embedding.source has values beyond the fp16 "
                                               "range; keep the tables in fp32"):
            round_tables_to_fp16(spec)


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


class NamesTest(unittest.TestCase):
    def test_names_are_spelled_only_in_the_table(self):
        """No family-neutral converter module spells a table name of either
        family (checkpoint sources map their own names onto them), and no
        runtime file spells a Transformer table name."""
        rnn = RnnConfig(layers=2, source_embedding_dim=8, target_embedding_dim=6, hidden=16,
                        vocab_size=96, max_positions=256, score="Additive", query_bias=True,
                        combine_bias=True, bidirectional_encoder=True)
        transformer = [e.name for e in families.find("transformer").tensors.entries]
        every_family = transformer + [n for n in expected_tensors(rnn) if not n.startswith(
            ("encoder.layers.", "decoder.layers."))]
        modules = [os.path.join(helpers.TOOLS_DIR, "edgemt_tools", module) for module in
                   ("model_spec.py", "writer.py", "model_file.py", "validate.py", "quantize.py")]
        self.assertEqual(spelled_in(modules, every_family), [])
        runtime = glob.glob(os.path.join(helpers.REPO_ROOT, "runtime", "**", "*.[ch]*"),
                            recursive=True)
        self.assertEqual(spelled_in(runtime, transformer), [])


def spelled_in(paths, names):
    """"path: name" for every name a file spells as a string ("name...)."""
    spelled = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        spelled += [f"{os.path.relpath(path, helpers.REPO_ROOT)}: {name}" for name in names
                    if f'"{name}' in text]
    return spelled


if __name__ == "__main__":
    unittest.main()
