"""The batched PyTorch beam search (throughput baseline) decodes like the
per-sentence reference search on a tiny random model."""

import shutil
import tempfile
import unittest

import helpers  # noqa: F401  (puts tools/ on sys.path)
from edgemt_tools.testing import write_tiny_checkpoint
from edgemt_tools.torch_batched import beam_search_batch
from edgemt_tools.torch_reference import TorchReference


class BatchedBeamTest(unittest.TestCase):
    def test_matches_per_sentence_beam_search(self):
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        paths = write_tiny_checkpoint(tmp)
        reference = TorchReference(paths["checkpoint"], paths["config"], paths["spm"])
        texts = ["A man in an orange hat.", "Two girls are sitting on a bench and talking.",
                 "A dog.", "Children play football."]
        sources = [reference.encode_text(t) for t in texts]
        for beam in (2, 4):
            expected = [reference.beam_search(s, beam=beam) for s in sources]
            self.assertEqual(beam_search_batch(reference, sources, beam), expected)

    def test_refuses_the_int8_reference(self):
        """It calls the layers directly, outside the int8 activation quantization."""
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        paths = write_tiny_checkpoint(tmp)
        reference = TorchReference(paths["checkpoint"], paths["config"], paths["spm"], "int8")
        with self.assertRaisesRegex(ValueError, "int8"):
            beam_search_batch(reference, [reference.encode_text("A dog.")], 2)


if __name__ == "__main__":
    unittest.main()
