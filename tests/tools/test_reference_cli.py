"""edgemt-reference end to end on a tiny random checkpoint."""

import os
import shutil
import tempfile
import unittest

import helpers
from edgemt_tools.testing import write_tiny_checkpoint
from edgemt_tools.torch_reference import TorchReference

SOURCES = ["A dog runs.", "Two girls sit on a bench.", "Ein Mann."]


class ReferenceCliTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.paths = write_tiny_checkpoint(cls.tmp, seed=5)
        cls.input = os.path.join(cls.tmp, "in.en")
        with open(cls.input, "w", encoding="utf-8") as handle:
            handle.write("".join(s + "\n" for s in SOURCES))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def run_reference(self, *extra):
        out = {k: os.path.join(self.tmp, f"{len(os.listdir(self.tmp))}.{k}")
               for k in ("text", "ids", "src")}
        result = helpers.run_tool(
            "edgemt-reference", "--checkpoint", self.paths["checkpoint"], "--config",
            self.paths["config"], "--spm", self.paths["spm"], "--input", self.input,
            "--out-text", out["text"], "--out-ids", out["ids"], "--out-src-ids", out["src"],
            *extra)
        return result, out

    @staticmethod
    def lines(path):
        with open(path, encoding="utf-8") as handle:
            return [line.rstrip("\n") for line in handle]

    def test_greedy_and_beam_outputs(self):
        ref = TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"])
        for extra, search in ((("--search", "greedy"), ref.greedy),
                              (("--search", "beam", "--beam", "3"),
                               lambda s: ref.beam_search(s, 3, 1.0))):
            with self.subTest(search=extra[1]):
                result, out = self.run_reference(*extra)
                self.assertEqual(result.returncode, 0, result.stderr)
                ids = [[int(x) for x in line.split()] for line in self.lines(out["ids"])]
                src = [[int(x) for x in line.split()] for line in self.lines(out["src"])]
                texts = self.lines(out["text"])
                self.assertEqual(len(ids), len(SOURCES))
                for i, text in enumerate(SOURCES):
                    self.assertEqual(src[i], ref.encode_text(text))
                    self.assertEqual(ids[i], search(src[i]))
                    self.assertEqual(texts[i], ref.decode_ids(ids[i]))

    def test_int8_weights(self):
        ref8 = TorchReference(self.paths["checkpoint"], self.paths["config"], self.paths["spm"],
                              weights_dtype="int8")
        result, out = self.run_reference("--weights-dtype", "int8")
        self.assertEqual(result.returncode, 0, result.stderr)
        ids = [[int(x) for x in line.split()] for line in self.lines(out["ids"])]
        self.assertEqual(ids, [ref8.greedy(ref8.encode_text(text)) for text in SOURCES])

    def test_missing_input(self):
        result = helpers.run_tool(
            "edgemt-reference", "--checkpoint", self.paths["checkpoint"], "--config",
            self.paths["config"], "--spm", self.paths["spm"], "--input",
            os.path.join(self.tmp, "nope"), "--out-text", "x", "--out-ids", "y")
        self.assertEqual(result.returncode, 1)
        self.assertIn("file not found", result.stderr)
        self.assertNotIn("Traceback", result.stderr)

    def test_an_output_naming_an_input_is_refused_before_anything_is_written(self):
        """Issue 38, defect 2: the outputs are checked like edgemt-convert's -o."""
        source = os.path.join(self.tmp, "own-input.en")
        shutil.copyfile(self.input, source)
        with open(source, encoding="utf-8") as handle:
            before = handle.read()
        text = os.path.join(self.tmp, "refused.text")
        result = helpers.run_tool(
            "edgemt-reference", "--checkpoint", self.paths["checkpoint"], "--config",
            self.paths["config"], "--spm", self.paths["spm"], "--input", source,
            "--out-text", text, "--out-ids", source)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn(f"output {source} is the input {source}", result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertFalse(os.path.exists(text))
        with open(source, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), before)


if __name__ == "__main__":
    unittest.main()
