"""Int8 conversion of the real multi30k-en-de checkpoint (needs ../shared; skips
otherwise): file layout and size, the int8 file against the PyTorch int8
reference, and how close int8 greedy decoding stays to fp32."""

import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np
import torch

import helpers
from edgemt_tools.model_file import read_model
from edgemt_tools.model_spec import MATRIX, QUANTIZATION_INT8_SMOOTHED, expected_tensors
from numpy_forward import NumpyTransformer

N_GREEDY = 12
MIN_IDENTICAL = 9  # measured 11/12 with PyTorch 1.13 on x86-64; a broken scheme gets ~0


def read_ids(name, count):
    with open(os.path.join(helpers.REFERENCE_DIR, name), encoding="utf-8") as handle:
        return [[int(x) for x in line.split()] for line in handle][:count]


class CheckpointInt8Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.paths = helpers.checkpoint_paths()
        if cls.paths is None:
            return
        torch.set_num_threads(1)
        cls.tmp = tempfile.mkdtemp()
        cls.files = {dtype: os.path.join(cls.tmp, f"m.{dtype}.emt") for dtype in ("fp32", "int8")}
        for dtype, output in cls.files.items():
            subprocess.run(["/usr/bin/python3", os.path.join(helpers.TOOLS_DIR, "edgemt-convert"),
                            "--from", "torch", "--checkpoint", cls.paths["checkpoint"],
                            "--config", cls.paths["config"], "--spm", cls.paths["spm"],
                            "--dtype", dtype, "-o", output], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        if cls.paths is not None:
            shutil.rmtree(cls.tmp)

    def setUp(self):
        helpers.require_checkpoint(self)

    def reference(self, **kw):
        """The PyTorch int8 reference of the converted (calibrated) file."""
        from edgemt_tools.torch_reference import TorchReference
        return TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                              "int8", int8_file=self.files["int8"], **kw)

    def test_int8_file_is_about_a_quarter_of_fp32(self):
        fp32, int8 = (read_model(self.files[d]) for d in ("fp32", "int8"))
        int8.check_against_config()
        self.assertEqual(int8.header.quantization, QUANTIZATION_INT8_SMOOTHED)
        specs = expected_tensors(fp32.header.config)
        owned = [n for n, spec in specs.items() if spec.kind == MATRIX and not spec.alias_of]
        fp32_bytes = sum(fp32.entries[n].size for n in owned)
        int8_bytes = sum(int8.entries[n].size for n in owned)
        self.assertEqual(int8_bytes * 4, fp32_bytes)  # one byte per weight
        # The table's residual codes: half a byte per weight.
        self.assertTrue(int8.header.residual_tables)
        table = int8.entries["embedding.source"]
        self.assertEqual(int8.entries["embedding.source_residual"].size,
                         table.shape[0] * ((table.shape[1] + 1) // 2))
        residual_bytes = sum(entry.size for name, entry in int8.entries.items()
                             if name.endswith("_residual"))
        sizes = [os.path.getsize(self.files[d]) for d in ("fp32", "int8")]
        # Matrices shrink 4x; the tokenizer, position table, vectors, scales and
        # smoothing vectors do not.
        self.assertLess(sizes[1] - residual_bytes, 0.28 * sizes[0], sizes)
        self.assertGreater(sizes[1] - residual_bytes, 0.25 * sizes[0], sizes)

    def test_int8_file_matches_the_weights_only_reference(self):
        """Numpy over the file's codes x scales (x smoothing vectors) == PyTorch
        on the file's dequantized weights."""
        ref = self.reference(quantize_activations=False)
        numpy_model = NumpyTransformer(read_model(self.files["int8"]))
        src = read_ids("test_2016_flickr.en.ids", 2)[1]
        prefix = [2] + read_ids("torch_fp32_greedy.ids", 2)[1][:5]
        got = numpy_model.next_logits(src, prefix)
        want = ref.step_logits(src, prefix)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())

    def test_int8_greedy_mostly_equals_fp32(self):
        ref = self.reference()
        sources = read_ids("test_2016_flickr.en.ids", N_GREEDY)
        fp32 = read_ids("torch_fp32_greedy.ids", N_GREEDY)
        identical = sum(ref.greedy(src) == want for src, want in zip(sources, fp32))
        self.assertGreaterEqual(identical, MIN_IDENTICAL,
                                f"int8 greedy equals fp32 on only {identical}/{N_GREEDY}")


if __name__ == "__main__":
    unittest.main()
