"""families/transformer.py: the Transformer's tensor table
(schema/transformer_tensors.def, read by the shared reader with the
family's syntax). Its tensors per config: test_model_spec.py; its config
checks: test_convert_validation.py; its FlatBuffers table: test_model_file.py."""

import os
import tempfile
import unittest

import helpers  # noqa: F401
from edgemt_tools.families.tensor_table import read_tensor_table
from edgemt_tools.families.transformer import FAMILY, SYNTAX, TENSOR_TABLE


class TensorTableTest(unittest.TestCase):
    def test_the_table_has_every_entry_once(self):
        table = read_tensor_table(TENSOR_TABLE, SYNTAX)
        self.assertEqual(len(table), 25)
        self.assertEqual(table, FAMILY.tensors.entries)
        self.assertEqual(len({e.id for e in table}), len(table))
        self.assertEqual(table[0].name, "embedding.source")
        self.assertEqual([e.group for e in table].count("DECODER_LAYER"), 12)  # 2 SSRU

    def test_a_malformed_line_is_refused(self):
        with tempfile.NamedTemporaryFile("w", suffix=".def", delete=False) as handle:
            handle.write('// fine\nTRANSFORMER_TENSOR(kX, MODEL, "x", MATRIX, V, D, SOMETIMES)\n')
        self.addCleanup(os.remove, handle.name)
        with self.assertRaisesRegex(ValueError, "unknown value SOMETIMES"):
            read_tensor_table(handle.name, SYNTAX)
        with open(handle.name, "w", encoding="utf-8") as again:
            again.write("TENSOR(kX)\n")
        with self.assertRaisesRegex(ValueError, "not a TRANSFORMER_TENSOR line"):
            read_tensor_table(handle.name, SYNTAX)


if __name__ == "__main__":
    unittest.main()
