"""families/__init__.py: the registry, and what it asks of every family
module (each family's own rules: test_families_<family>.py)."""

import os
import unittest

import helpers  # noqa: F401
from edgemt_tools import families
from edgemt_tools.families import rnn, transformer
from edgemt_tools.families.tensor_table import read_tensor_table, table_path
from edgemt_tools.model_spec import expected_tensors


def transformer_config():
    return transformer.TransformerConfig(encoder_layers=1, decoder_layers=1, d_model=8, heads=2,
                                         ffn_dim=16, vocab_size=32, max_positions=16)


def rnn_config():
    return rnn.RnnConfig(layers=1, source_embedding_dim=8, target_embedding_dim=8, hidden=8,
                         vocab_size=32, max_positions=16)


class RegistryTest(unittest.TestCase):
    def test_a_config_finds_its_family(self):
        self.assertIs(families.of(rnn_config()), families.find("rnn"))
        self.assertIs(families.of(transformer_config()), families.find("transformer"))
        self.assertIs(families.find("rnn"), rnn.FAMILY)
        with self.assertRaisesRegex(TypeError, "not a family config: object"):
            families.of(object())
        with self.assertRaises(TypeError):
            expected_tensors(object())
        with self.assertRaisesRegex(KeyError, "no model family 'lstm'.*transformer, rnn"):
            families.find("lstm")

    def test_every_family_keeps_its_table_where_the_runtime_does(self):
        for name, family in families.FAMILIES.items():
            with self.subTest(family=name):
                self.assertEqual(family.name, name)
                self.assertTrue(os.path.isdir(os.path.join(helpers.REPO_ROOT, "runtime",
                                                           "models", name)))
                self.assertEqual(read_tensor_table(table_path(name), family.tensors.syntax),
                                 family.tensors.entries)
                self.assertGreater(len(family.tensors.entries), 0)


if __name__ == "__main__":
    unittest.main()
