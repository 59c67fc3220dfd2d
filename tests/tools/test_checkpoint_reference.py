"""PyTorch reference on the real checkpoint against the committed references and
the bundled file (needs ../shared; skips otherwise)."""

import os
import unittest

import numpy as np
import torch

import helpers
from edgemt_tools.model_file import read_model
from numpy_forward import NumpyTransformer

N_GREEDY = 12
N_BEAM = 4


def read_ids(name, count):
    with open(os.path.join(helpers.REFERENCE_DIR, name), encoding="utf-8") as handle:
        return [[int(x) for x in line.split()] for line in handle][:count]


class CheckpointReferenceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        with open(os.path.join(helpers.REFERENCE_DIR, "test_2016_flickr.en"),
                  encoding="utf-8") as handle:
            cls.sources = [line.rstrip("\n") for line in handle][:N_GREEDY]

    def setUp(self):
        self.paths = helpers.require_checkpoint(self)
        from edgemt_tools.torch_reference import TorchReference
        self.make = lambda dtype="fp32": TorchReference(
            self.paths["checkpoint"], self.paths["config"], self.paths["spm"], dtype)

    def test_greedy_fp32_matches_committed(self):
        ref = self.make()
        src_ids = read_ids("test_2016_flickr.en.ids", N_GREEDY)
        want = read_ids("torch_fp32_greedy.ids", N_GREEDY)
        for i, text in enumerate(self.sources):
            self.assertEqual(ref.encode_text(text), src_ids[i])
            self.assertEqual(ref.greedy(src_ids[i]), want[i], f"line {i + 1}")

    def test_greedy_fp16_weights_matches_committed(self):
        ref = self.make("fp16")
        src_ids = read_ids("test_2016_flickr.en.ids", N_GREEDY)
        want = read_ids("torch_fp16_greedy.ids", N_GREEDY)
        for i in range(N_GREEDY):
            self.assertEqual(ref.greedy(src_ids[i]), want[i], f"line {i + 1}")

    def test_beam4_matches_committed(self):
        ref = self.make()
        src_ids = read_ids("test_2016_flickr.en.ids", N_BEAM)
        want = read_ids("torch_fp32_beam4.ids", N_BEAM)
        for i in range(N_BEAM):
            self.assertEqual(ref.beam_search(src_ids[i], 4, 1.0), want[i], f"line {i + 1}")

    def test_bundled_file_logits_match_fp16_reference(self):
        """Independent numpy forward over the bundled .emt == torch with fp16-rounded weights."""
        ref = self.make("fp16")
        numpy_model = NumpyTransformer(read_model(helpers.BUNDLED_FP16_MODEL))
        src = ref.encode_text(self.sources[1])
        prefix = [2] + read_ids("torch_fp16_greedy.ids", 2)[1][:5]
        got = numpy_model.next_logits(src, prefix)
        want = ref.step_logits(src, prefix)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


if __name__ == "__main__":
    unittest.main()
