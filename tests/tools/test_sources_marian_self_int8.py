"""An int8 file of a Marian intgemm8 .bin with a self-attention decoder
translates as Marian's int8 translator (tests/fixtures/marian_self_int8).

Marian's decoder multiplies the self-attention inputs of every earlier
position again at each step, in one product whose input is quantized with
one range (Int8PerTensorDynamic): the keys and values of a position change
as later positions widen that range. edgemt's int8 files in Marian's
arithmetic do the same (models/transformer/decoder.cc, self_kv_again).
"""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

import helpers

FIXTURE = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian_self_int8")
VOCAB = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian_ssru", "vocab.spm")
SOURCE = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian_ssru", "reference", "source.en")
LINES = 150
MIN_IDENTICAL = 147  # random weights: flat, fragile outputs (README.md)


def reference(name: str) -> list:
    with open(os.path.join(FIXTURE, "reference", name), encoding="utf-8") as handle:
        return [line.split() for line in handle.read().splitlines()]


class MarianSelfAttentionInt8Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="edgemt-self-int8-")
        folder = os.path.join(cls.work, "model")
        os.makedirs(folder)
        shutil.copyfile(os.path.join(FIXTURE, "model.intgemm8.bin"),
                        os.path.join(folder, "model.intgemm8.bin"))
        shutil.copyfile(VOCAB, os.path.join(folder, "vocab.spm"))
        with open(os.path.join(folder, "decoder.yml"), "w", encoding="utf-8") as handle:
            handle.write("models:\n  - model.intgemm8.bin\nvocabs:\n  - vocab.spm\n  - vocab.spm\n")
        cls.model = os.path.join(cls.work, "int8.emt")
        cls.convert = helpers.run_tool("edgemt-convert", "--from", "marian", "--checkpoint", folder,
                                       "--src-lang", "en", "--tgt-lang", "de", "--dtype", "int8",
                                       "--no-calibration", "-o", cls.model)
        cls.source = os.path.join(cls.work, "source.en")
        with open(SOURCE, encoding="utf-8") as handle:
            lines = handle.read().splitlines()[:LINES]
        with open(cls.source, "w", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    def pieces(self, beam: int) -> list:
        result = subprocess.run(
            [helpers.CLI, "translate", "-m", self.model, "-i", self.source, "--beam", str(beam),
             "--batch", "1", "--threads", "1", "--no-split-sentences", "--no-progress",
             "--max-len-a", "1.2", "--max-len-b", "0", "--json"],
            capture_output=True, text=True, check=True)
        return [json.loads(line)["tokens"] for line in result.stdout.splitlines()]

    def test_the_file_is_in_marian_s_arithmetic(self):
        self.assertEqual(self.convert.returncode, 0, self.convert.stderr)
        self.assertIn("Marian's arithmetic: Int8PerTensorDynamic",
                      self.convert.stdout + self.convert.stderr)

    def test_greedy_and_beam_4_lines_are_marian_s(self):
        self.assertEqual(self.convert.returncode, 0, self.convert.stderr)
        for beam, name in ((1, "int8.greedy.pieces"), (4, "int8.beam4.pieces")):
            got, want = self.pieces(beam), reference(name)
            self.assertEqual(len(got), LINES)
            same = sum(g == w for g, w in zip(got, want))
            print(f"{name}: {same}/{LINES} lines identical to Marian's int8 translator")
            self.assertGreaterEqual(same, MIN_IDENTICAL, name)


if __name__ == "__main__":
    unittest.main()
