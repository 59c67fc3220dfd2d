"""sources/torch.py (with the writer that stores its spec): name mapping,
splitting, tying and validation errors."""

import json
import os
import shutil
import tempfile
import unittest

import numpy as np

import helpers  # noqa: F401
from edgemt_tools.errors import UserError
from edgemt_tools.quantize import quantize_rows
from edgemt_tools.testing import tiny_state_dict, tiny_torch_config
from edgemt_tools.sources import torch as torch_source
from edgemt_tools.sources.torch import read_config
from edgemt_tools.writer import pack_tensors


def convert_state_dict(state, config, dtype):
    """(config, tensors, aliases) as stored in a `dtype` file: the source's
    float32 spec through the writer."""
    cfg, weights = torch_source.convert_state_dict(state, config)
    tensors, aliases = pack_tensors(cfg, weights, dtype)
    return cfg, tensors, aliases


def numpy_state(config, seed=0):
    return {k: v.numpy().copy() for k, v in tiny_state_dict(config, seed).items()}


class MappingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.config = tiny_torch_config()
        cls.state = numpy_state(cls.config)

    def test_cross_attention_split_and_copies(self):
        cfg, tensors, aliases = convert_state_dict(self.state, self.config, "fp32")
        d = self.config["d_model"]
        w = self.state["transformer.decoder.layers.1.multihead_attn.in_proj_weight"]
        b = self.state["transformer.decoder.layers.1.multihead_attn.in_proj_bias"]
        np.testing.assert_array_equal(tensors["decoder.layers.1.cross_attn.q.weight"], w[:d])
        np.testing.assert_array_equal(tensors["decoder.layers.1.cross_attn.kv.weight"], w[d:])
        np.testing.assert_array_equal(tensors["decoder.layers.1.cross_attn.q.bias"], b[:d])
        np.testing.assert_array_equal(tensors["decoder.layers.1.cross_attn.kv.bias"], b[d:])
        np.testing.assert_array_equal(
            tensors["encoder.layers.0.self_attn.qkv.weight"],
            self.state["transformer.encoder.layers.0.self_attn.in_proj_weight"])
        pairs = {"decoder.layers.0.cross_attn_norm.weight": "transformer.decoder.layers.0.norm2.weight",
                 "decoder.layers.0.ffn_norm.bias": "transformer.decoder.layers.0.norm3.bias",
                 "encoder.layers.1.ffn_norm.weight": "transformer.encoder.layers.1.norm2.weight",
                 "encoder.layers.1.ffn.out.weight": "transformer.encoder.layers.1.linear2.weight",
                 "decoder.final_norm.bias": "transformer.decoder.norm.bias",
                 "output.bias": "generator.bias"}
        for ours, theirs in pairs.items():
            np.testing.assert_array_equal(tensors[ours], self.state[theirs], ours)
        self.assertTrue(cfg.tied_output and cfg.shared_embeddings and cfg.output_bias)
        self.assertEqual(aliases, {"embedding.target": "embedding.source",
                                   "output.weight": "embedding.source"})
        self.assertEqual(cfg.norm_placement, "post")
        self.assertTrue(cfg.encoder_final_norm and cfg.decoder_final_norm)

    def test_fp16_dtypes(self):
        _, tensors, _ = convert_state_dict(self.state, self.config, "fp16")
        self.assertEqual(tensors["embedding.source"].dtype, np.float16)
        self.assertEqual(tensors["decoder.layers.0.cross_attn.kv.weight"].dtype, np.float16)
        self.assertEqual(tensors["decoder.layers.0.cross_attn.kv.bias"].dtype, np.float32)
        self.assertEqual(tensors["encoder.layers.0.self_attn_norm.weight"].dtype, np.float32)
        self.assertEqual(tensors["position.table"].dtype, np.float32)

    def test_int8_codes_and_scales(self):
        cfg, tensors, aliases = convert_state_dict(self.state, self.config, "int8")
        d = self.config["d_model"]
        names = list(tensors)
        w = self.state["transformer.decoder.layers.1.multihead_attn.in_proj_weight"]
        for name, rows in (("decoder.layers.1.cross_attn.q.weight", w[:d]),
                           ("decoder.layers.1.cross_attn.kv.weight", w[d:]),
                           ("embedding.source", self.state["embed.weight"]),
                           ("encoder.layers.1.ffn.out.weight",
                            self.state["transformer.encoder.layers.1.linear2.weight"])):
            codes, scale = quantize_rows(rows)
            self.assertEqual(tensors[name].dtype, np.int8, name)
            np.testing.assert_array_equal(tensors[name], codes, name)
            np.testing.assert_array_equal(tensors[name + "_scale"], scale, name)
            self.assertEqual(names[names.index(name) + 1], name + "_scale")  # file order
        self.assertEqual(tensors["decoder.layers.1.cross_attn.q.bias"].dtype, np.float32)
        self.assertEqual(tensors["position.table"].dtype, np.float32)
        self.assertEqual(aliases, {"embedding.target": "embedding.source",
                                   "embedding.target_scale": "embedding.source_scale",
                                   "output.weight": "embedding.source",
                                   "output.weight_scale": "embedding.source_scale"})
        self.assertTrue(cfg.tied_output)

    def test_int8_untied_generator_has_its_own_scales(self):
        state = dict(self.state)
        state["generator.weight"] = state["embed.weight"] * 4.0  # power of 2: exact scales
        _, tensors, aliases = convert_state_dict(state, self.config, "int8")
        self.assertNotIn("output.weight_scale", aliases)
        codes, scale = quantize_rows(state["generator.weight"])
        np.testing.assert_array_equal(tensors["output.weight"], codes)
        np.testing.assert_array_equal(tensors["output.weight_scale"], scale)
        np.testing.assert_array_equal(tensors["output.weight_scale"],
                                      tensors["embedding.source_scale"] * np.float32(4.0))

    def test_untied_generator_stored_separately(self):
        state = dict(self.state)
        state["generator.weight"] = state["embed.weight"] + 1.0
        cfg, tensors, aliases = convert_state_dict(state, self.config, "fp32")
        self.assertFalse(cfg.tied_output)
        self.assertNotIn("output.weight", aliases)
        np.testing.assert_array_equal(tensors["output.weight"], state["generator.weight"])


class ValidationTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.config = tiny_torch_config()
        cls.state = numpy_state(cls.config)

    def assert_error(self, state, pattern, config=None):
        with self.assertRaisesRegex(UserError, pattern):
            convert_state_dict(state, config or self.config, "fp32")

    def test_missing_key(self):
        state = dict(self.state)
        del state["transformer.decoder.layers.1.norm3.bias"]
        self.assert_error(state, r"missing 1 key\(s\): transformer.decoder.layers.1.norm3.bias")

    def test_unexpected_key(self):
        state = dict(self.state, **{"transformer.encoder.layers.9.norm1.bias": np.zeros(16)})
        self.assert_error(state, "unexpected key.*layers.9.norm1.bias")

    def test_shape_mismatch(self):
        state = dict(self.state)
        state["transformer.encoder.layers.0.linear1.weight"] = np.zeros((33, 16), np.float32)
        self.assert_error(state, r"shape mismatch: .*linear1.weight is \[33, 16\], "
                                 r"config implies \[32, 16\]")

    def test_config_disagrees_with_checkpoint(self):
        self.assert_error(self.state, "shape mismatch", dict(self.config, ffn_dim=64))

    def test_non_finite(self):
        state = dict(self.state)
        bad = state["transformer.decoder.norm.weight"].copy()
        bad[3] = np.nan
        state["transformer.decoder.norm.weight"] = bad
        self.assert_error(state, "decoder.norm.weight contains non-finite")

    def test_fp16_overflow(self):
        state = dict(self.state)
        big = state["transformer.encoder.layers.0.linear1.weight"].copy()
        big[0, 0] = 1e6
        state["transformer.encoder.layers.0.linear1.weight"] = big
        with self.assertRaisesRegex(UserError, "fp16 range"):
            convert_state_dict(state, self.config, "fp16")


class ConfigTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def write(self, config):
        path = os.path.join(self.tmp, "config.json")
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(config, handle)
        return path

    def test_good(self):
        self.assertEqual(read_config(self.write(tiny_torch_config()))["d_model"], 16)

    def test_errors(self):
        cases = [({"heads": 3}, "not a multiple of heads"),
                 ({"activation": "tanh"}, "activation 'tanh'"),
                 ({"positional_encoding": "learned"}, "positional_encoding 'learned'"),
                 ({"eos_id": 96}, r"eos_id = 96 is out of range \(0 to 95\)"),
                 ({"norm_first": 0}, "'norm_first' has the wrong type")]
        for change, pattern in cases:
            with self.subTest(change=change):
                with self.assertRaisesRegex(UserError, pattern):
                    read_config(self.write(dict(tiny_torch_config(), **change)))
        config = tiny_torch_config()
        del config["max_len"]
        with self.assertRaisesRegex(UserError, "missing key 'max_len'"):
            read_config(self.write(config))
        with self.assertRaisesRegex(UserError, "not found"):
            read_config(os.path.join(self.tmp, "nope.json"))


if __name__ == "__main__":
    unittest.main()
