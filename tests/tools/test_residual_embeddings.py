"""Residual codes of int8 embedding tables (format version 11, the
converter's default for Transformer int8 files): the codes and their
packing, the file round trip and its refusals, calibration of a tied output
projection's codes, and the converter's options."""

import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import helpers
from edgemt_tools import fbs
from edgemt_tools.families.transformer import TransformerConfig
from edgemt_tools.model_file import ModelFileError, read_model
from edgemt_tools.model_spec import residual_name, residual_scale_name, scale_name
from edgemt_tools.quantize import (RESIDUAL_QMAX, dequantize_rows, dequantize_table_rows,
                                   pack_nibbles, quantize_rows, residual_rows, unpack_nibbles)
from edgemt_tools.testing import write_unchecked
from edgemt_tools.writer import pack_tensors
from test_model_file import TINY, tiny_tensors

MARIAN = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian", "npz")
RNN = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "torch_rnn", "bahdanau-gru")


class ResidualCodesTest(unittest.TestCase):
    def test_nibbles_round_trip_in_the_schema_layout(self):
        for dim in (1, 6, 7):
            with self.subTest(dim=dim):
                rng = np.random.default_rng(dim)
                q = rng.integers(-8, 8, size=(5, dim)).astype(np.int8)
                packed = pack_nibbles(q)
                self.assertEqual(packed.shape, (5, (dim + 1) // 2))
                np.testing.assert_array_equal(unpack_nibbles(packed, dim), q)
        # column 0 low, column 1 high, two's complement; an odd last column's high half 0
        np.testing.assert_array_equal(pack_nibbles(np.array([[-1, 2, 7]], np.int8)).view(np.uint8),
                                      [[0x2F, 0x07]])

    def test_lookup_within_half_a_residual_step(self):
        rng = np.random.default_rng(1)
        table = (rng.standard_normal((40, 13)) * rng.uniform(0.01, 3, (40, 1))).astype(np.float32)
        table[7] = 0  # an all-zero row: zero codes, zero scales
        codes, scale = quantize_rows(table)
        residual, step = residual_rows(table, codes, scale)
        self.assertEqual(residual.shape, (40, 7))
        self.assertEqual(step.dtype, np.float32)
        self.assertEqual(step[7], 0)
        lookup = dequantize_table_rows(codes, scale, residual, step)
        error = np.abs(lookup.astype(np.float64) - table)
        bound = step.astype(np.float64) / 2 + 1e-6 * np.abs(table).max(axis=1)
        self.assertTrue((error <= bound[:, None]).all())
        first = np.abs(dequantize_rows(codes, scale).astype(np.float64) - table).mean()
        self.assertGreater(first, 8 * error.mean())  # about 14 times finer
        self.assertLessEqual(np.abs(unpack_nibbles(residual, 13)).max(), RESIDUAL_QMAX)
        # the runtime's arithmetic: two float32 products, one float32 sum
        want = (codes.astype(np.float32) * scale[:, None]
                + unpack_nibbles(residual, 13).astype(np.float32) * step[:, None])
        np.testing.assert_array_equal(lookup, want)

    def test_residue_of_other_codes(self):
        """The codes need not be nearest rounding's (a calibrated tied output's
        are not): the residue covers what they miss, up to 7 steps."""
        rng = np.random.default_rng(2)
        table = rng.standard_normal((20, 8)).astype(np.float32)
        codes, scale = quantize_rows(table)
        moved = np.clip(codes.astype(np.int16) + rng.integers(-2, 3, codes.shape), -127, 127)
        residual, step = residual_rows(table, moved.astype(np.int8), scale)
        lookup = dequantize_table_rows(moved.astype(np.int8), scale, residual, step)
        self.assertLess(np.abs(lookup - table).max(), np.abs(dequantize_rows(codes, scale)
                                                              - table).max())


class ResidualFileTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.path = os.path.join(self.tmp, "model.emt")

    def test_round_trip(self):
        weights, _ = tiny_tensors(TINY)
        tensors, aliases = pack_tensors(TransformerConfig(**TINY), weights, "int8",
                                        residual_tables=True)
        names = list(tensors)
        table = names.index("embedding.source")
        self.assertEqual(names[table:table + 4],
                         ["embedding.source", scale_name("embedding.source"),
                          residual_name("embedding.source"),
                          residual_scale_name("embedding.source")])
        self.assertNotIn(residual_name("output.weight"), tensors)  # tied: the table's codes
        write_unchecked(self.path, TINY, tensors, aliases, weight_dtype="int8",
                        residual_tables=True)
        model = read_model(self.path)
        model.check_against_config()
        self.assertEqual(model.format_version, fbs.RESIDUAL_TABLES_FORMAT_VERSION)
        self.assertTrue(model.header.residual_tables)
        lookup = dequantize_table_rows(model.array("embedding.source"),
                                       model.array(scale_name("embedding.source")),
                                       model.array(residual_name("embedding.source")),
                                       model.array(residual_scale_name("embedding.source")))
        plain = dequantize_rows(model.array("embedding.source"),
                                model.array(scale_name("embedding.source")))
        table = weights["embedding.source"]
        self.assertLess(np.abs(lookup - table).mean(), np.abs(plain - table).mean() / 8)

    def test_refusals(self):
        weights, _ = tiny_tensors(TINY)
        tensors, aliases = pack_tensors(TransformerConfig(**TINY), weights, "int8",
                                        residual_tables=True)
        write_unchecked(self.path, TINY, tensors, aliases, weight_dtype="int8")
        with self.assertRaisesRegex(ModelFileError, "embedding.source_residual is not implied"):
            read_model(self.path).check_against_config()
        bad = dict(tensors)
        codes = np.array(bad[residual_name("embedding.source")])
        codes.view(np.uint8)[0, 1] = 0x80  # a high half of -8
        bad[residual_name("embedding.source")] = codes
        write_unchecked(self.path, TINY, bad, aliases, weight_dtype="int8", residual_tables=True)
        with self.assertRaisesRegex(ModelFileError, "residual code -8 at \\[0, 1\\]"):
            read_model(self.path).check_against_config()
        write_unchecked(self.path, TINY, tensors, aliases, weight_dtype="int8",
                        residual_tables=True, f32_tables=True)
        with self.assertRaisesRegex(ModelFileError, "residual_tables is set with float tables"):
            read_model(self.path)
        float_tensors, float_aliases = tiny_tensors(TINY)
        write_unchecked(self.path, TINY, float_tensors, float_aliases, residual_tables=True)
        with self.assertRaisesRegex(ModelFileError, "residual_tables is set in a file of "
                                                    "quantization None"):
            read_model(self.path)
        for flags in (dict(f16_tables=True), dict(per_tensor=True)):
            with self.subTest(**flags), self.assertRaises(ValueError):
                pack_tensors(TransformerConfig(**TINY), weights, "int8", residual_tables=True,
                             **flags)


class ConverterTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def convert(self, name, *options, rnn=False):
        path = os.path.join(self.tmp, name)
        source = (("--from", "torch-rnn", "--checkpoint", os.path.join(RNN, "model.pt"),
                   "--config", os.path.join(RNN, "config.json"), "--spm",
                   os.path.join(os.path.dirname(RNN), "spm.model")) if rnn else
                  ("--from", "marian", "--checkpoint", MARIAN))
        result = helpers.run_tool("edgemt-convert", *source, "--src-lang", "en",
                                  "--tgt-lang", "de", *options, "-o", path)
        return path, result

    def test_default_int8_has_residual_codes_of_calibrated_tied_codes(self):
        path, result = self.convert("default.emt", "--dtype", "int8")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("embeddings int8 + 4-bit residual", result.stdout)
        model = read_model(path)
        self.assertTrue(model.header.residual_tables)
        self.assertEqual(model.format_version, fbs.RESIDUAL_TABLES_FORMAT_VERSION)
        plain_path, result = self.convert("plain.emt", "--dtype", "int8",
                                          "--no-residual-embeddings")
        self.assertEqual(result.returncode, 0, result.stderr)
        plain = read_model(plain_path)
        self.assertFalse(plain.header.residual_tables)
        self.assertNotIn(residual_name("embedding.source"), plain.entries)
        self.assertLess(os.path.getsize(plain_path), os.path.getsize(path))
        # The tied output's codes are calibrated, not nearest rounding's (which
        # the plain file keeps for the table it shares).
        nearest, _ = quantize_rows(np.asarray(read_model(self.convert(
            "fp32.emt", "--dtype", "fp32")[0]).array("embedding.source")))
        np.testing.assert_array_equal(plain.array("embedding.source"), nearest)
        self.assertGreater(np.mean(model.array("embedding.source") != nearest), 0.01)
        result = subprocess.run([helpers.CLI, "inspect", path], capture_output=True, text=True,
                                check=False)
        summary = " ".join(result.stdout.split())
        self.assertRegex(summary, r"\+ [0-9.]+ [KM]iB of residual codes; weights")
        self.assertIn("residual-coded embeddings", summary)

    def test_usage_errors_and_families_without_it(self):
        _, result = self.convert("x.emt", "--dtype", "fp32", "--residual-embeddings")
        self.assertEqual(result.returncode, 2)
        self.assertIn("--residual-embeddings needs --dtype int8", result.stderr)
        _, result = self.convert("x.emt", "--dtype", "int8", "--residual-embeddings",
                                 "--fp16-embeddings")
        self.assertEqual(result.returncode, 2)
        self.assertIn("--residual-embeddings is for int8 tables", result.stderr)
        _, result = self.convert("x.emt", "--dtype", "fp16", "--no-residual-embeddings")
        self.assertEqual(result.returncode, 2)
        _, result = self.convert("f16.emt", "--dtype", "int8", "--fp16-embeddings")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(read_model(os.path.join(self.tmp, "f16.emt")).header.residual_tables)
        path, result = self.convert("rnn.emt", "--dtype", "int8", rnn=True)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertFalse(read_model(path).header.residual_tables)  # not its family's
        _, result = self.convert("rnn.emt", "--dtype", "int8", "--residual-embeddings", rnn=True)
        self.assertEqual(result.returncode, 1)
        self.assertIn("--residual-embeddings is for Transformer models", result.stderr)


if __name__ == "__main__":
    unittest.main()
