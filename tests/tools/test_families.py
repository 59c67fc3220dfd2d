"""families/__init__.py: the registry, and what it asks of every family
module (each family's own rules: test_families_<family>.py)."""

import dataclasses
import os
import unittest

import flatbuffers

import helpers  # noqa: F401
from edgemt_tools import families
from edgemt_tools.errors import ModelFileError
from edgemt_tools.families import rnn, transformer
from edgemt_tools.families.config_table import ConfigTable
from edgemt_tools.families.tensor_table import read_tensor_table, table_path
from edgemt_tools.model_spec import expected_tensors
from edgemt_tools.sources import SOURCES


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

    def test_messages_name_families_by_title(self):
        self.assertEqual(families.find("transformer").a_title, "a Transformer")
        self.assertEqual(families.find("rnn").a_title, "an RNN")
        self.assertEqual(families.titles(lambda family: True), "Transformer and RNN")
        self.assertEqual(families.titles(lambda family: family.forward_pass is not None),
                         "Transformer")

    def test_every_source_writes_registered_families(self):
        for name, source in SOURCES.items():
            with self.subTest(source=name):
                self.assertTrue(source.FAMILIES)
                for family in source.FAMILIES:
                    self.assertIn(family, families.FAMILIES)

    def test_every_family_keeps_its_table_where_the_runtime_does(self):
        for name, family in families.FAMILIES.items():
            with self.subTest(family=name):
                self.assertEqual(family.name, name)
                self.assertTrue(os.path.isdir(os.path.join(helpers.REPO_ROOT, "runtime",
                                                           "models", name)))
                self.assertEqual(read_tensor_table(table_path(name), family.tensors.syntax),
                                 family.tensors.entries)
                self.assertGreater(len(family.tensors.entries), 0)



def built(table: ConfigTable, config) -> flatbuffers.table.Table:
    """`config` written as its FlatBuffers table, as the reader finds it."""
    b = flatbuffers.Builder(256)
    b.Finish(table.build(b, config))
    data = bytes(b.Output())
    return flatbuffers.table.Table(data, flatbuffers.encode.Get(
        flatbuffers.packer.uoffset, data, 0))


class ConfigTableTest(unittest.TestCase):
    """families/config_table.py: a family's config as its FlatBuffers table
    (whole files: test_model_file.py)."""

    def test_every_family_reads_back_what_it_wrote(self):
        changed = {"transformer": dict(activation="swish", norm_placement="pre", heads=4,
                                       tied_output=True, layer_norm_eps=0.5),
                   "rnn": dict(cell="Gru", score="Additive", output="StateContext",
                               bidirectional_encoder=True)}
        for config in (transformer_config(), rnn_config()):
            family = families.of(config)
            config = dataclasses.replace(config, **changed[family.name])
            with self.subTest(family=family.name):
                self.assertEqual(family.config_table.read(built(family.config_table, config)),
                                 config)

    def test_unknown_enum_values_are_refused_both_ways(self):
        table = transformer.CONFIG_TABLE
        with self.assertRaisesRegex(ValueError, "TransformerConfig activation: unknown value "
                                                "'tanh'"):
            built(table, dataclasses.replace(transformer_config(), activation="tanh"))
        numbers = ConfigTable(table.name, table.config_type,
                              dict(table.enums, activation={"relu": 7}), table.order)
        written = built(numbers, transformer_config())
        with self.assertRaisesRegex(ModelFileError, "TransformerConfig activation: unknown "
                                                    "value 7"):
            table.read(written)

    def test_the_order_names_every_field_once(self):
        with self.assertRaisesRegex(ValueError, "the order must name each field once"):
            ConfigTable("RnnConfig", rnn.RnnConfig, {}, ("layers", "hidden"))

    def test_the_enum_names_are_the_schemas(self):
        self.assertEqual(tuple(transformer.CONFIG_TABLE.enums["activation"]),
                         transformer.ACTIVATIONS)
        self.assertEqual(tuple(transformer.CONFIG_TABLE.enums["norm_placement"]),
                         transformer.NORM_PLACEMENTS)
        for field_name, names in (("cell", rnn.RNN_CELLS), ("score", rnn.RNN_SCORES),
                                  ("query", rnn.RNN_QUERIES), ("output", rnn.RNN_OUTPUTS),
                                  ("decoder_input", rnn.RNN_DECODER_INPUTS)):
            self.assertEqual(tuple(rnn.CONFIG_TABLE.enums[field_name]), names)


if __name__ == "__main__":
    unittest.main()
