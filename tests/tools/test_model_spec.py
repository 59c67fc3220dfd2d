"""model_spec.py: the tensor list a config implies (schema/TENSORS.md)."""

import unittest

import helpers  # noqa: F401
from edgemt_tools.model_spec import MATRIX, TransformerConfig, expected_tensors, resolve_alias


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


if __name__ == "__main__":
    unittest.main()
