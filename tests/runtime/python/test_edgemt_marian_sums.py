"""`import edgemt` with Marian's int8 sums (issue 42): the Firefox-style
alphas file of tests/fixtures/marian_ssru translated with
marian_int8_sums="avx2" gives Bergamot's output on an AVX2 CPU
(reference/bergamot.alphas.avx2.greedy.de, INTGEMM_CPUID=AVX2), one
sentence per call; the default gives its output with exact sums (VNNI's);
the value must be one of four names, and a file not in Marian's int8
arithmetic refuses anything but "exact".

Run by ctest (runtime.python.edgemt_marian_sums); by hand:

    EDGEMT_LIBRARY=build/runtime/libedgemt.so.0 PYTHONPATH=runtime/python \\
      /usr/bin/python3 -m unittest tests/runtime/python/test_edgemt_marian_sums.py -v
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import edgemt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "marian_ssru")
LINES = 200


def lines_of(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read().split("\n")


def convert(root, name, model, *flags):
    folder = os.path.join(root, name)
    os.mkdir(folder)
    for file in (model, "vocab.spm"):
        shutil.copyfile(os.path.join(FIXTURE, file), os.path.join(folder, file))
    path = os.path.join(root, name + ".emt")
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "edgemt-convert"),
                    "--from", "marian", "--checkpoint", folder, "--src-lang", "en",
                    "--tgt-lang", "de", *flags, "-o", path], check=True, capture_output=True)
    return edgemt.Model(path)


class MarianSums(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="edgemt-py-marian-sums-")
        cls.addClassCleanup(shutil.rmtree, cls.root, True)
        cls.alphas = convert(cls.root, "alphas", "model.intgemm8.alphas.bin", "--dtype", "int8")
        cls.sources = lines_of(os.path.join(FIXTURE, "reference", "source.en"))[:LINES]

    def same_lines(self, translator, reference):
        got = [t.text for t in translator.translate(self.sources, beam_size=1,
                                                    split_sentences=False)]
        want = lines_of(os.path.join(FIXTURE, "reference", reference))[:LINES]
        return sum(g == w for g, w in zip(got, want))

    def test_avx2_gives_bergamot_s_avx2_output(self):
        avx2 = edgemt.Translator(self.alphas, max_batch=1, shortlist=False,
                                 marian_int8_sums="avx2")
        exact = edgemt.Translator(self.alphas, max_batch=1, shortlist=False)
        self.assertGreaterEqual(self.same_lines(avx2, "bergamot.alphas.avx2.greedy.de"), 198)
        self.assertGreaterEqual(self.same_lines(exact, "bergamot.alphas.greedy.de"), 198)
        self.assertLess(self.same_lines(exact, "bergamot.alphas.avx2.greedy.de"), 180)

    def test_the_value_is_one_of_four_names(self):
        with self.assertRaises(ValueError) as caught:
            edgemt.Translator(self.alphas, marian_int8_sums="avx3")
        self.assertIn("marian_int8_sums must be one of exact, avx2, avx512bw, ssse3",
                      str(caught.exception))

    def test_a_float_file_takes_only_exact(self):
        floats = convert(self.root, "floats", "model.npz")
        edgemt.Translator(floats, marian_int8_sums="exact").close()
        with self.assertRaises(edgemt.Error) as caught:
            edgemt.Translator(floats, marian_int8_sums="ssse3")
        self.assertIn("Marian's int8 sums apply to int8 files in Marian's arithmetic",
                      str(caught.exception))


if __name__ == "__main__":
    unittest.main()
