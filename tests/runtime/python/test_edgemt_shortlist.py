"""`import edgemt` with a lexical shortlist (issue 42): the Marian SSRU
student of tests/fixtures/marian_ssru converted with its lex.bin gives
Marian's own beam-4 output with the same shortlist one sentence per call
(max_batch=1, Marian's --mini-batch 1), and with shortlist=False Marian's
output without one; and shortlist must be a bool.

Run by ctest (runtime.python.edgemt_shortlist); by hand:

    EDGEMT_LIBRARY=build/runtime/libedgemt.so.0 PYTHONPATH=runtime/python \\
      /usr/bin/python3 -m unittest tests/runtime/python/test_edgemt_shortlist.py -v
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
LINES = 60


def lines_of(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read().split("\n")


class Shortlist(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="edgemt-py-shortlist-")
        cls.addClassCleanup(shutil.rmtree, cls.root, True)
        folder = os.path.join(cls.root, "firefox")
        os.mkdir(folder)
        for name in ("model.npz", "vocab.spm"):
            shutil.copyfile(os.path.join(FIXTURE, name), os.path.join(folder, name))
        cls.path = os.path.join(cls.root, "ssru.emt")
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "edgemt-convert"),
                        "--from", "marian", "--checkpoint", folder, "--src-lang", "en",
                        "--tgt-lang", "de", "--shortlist", os.path.join(FIXTURE, "lex.bin"),
                        "-o", cls.path], check=True, capture_output=True)
        cls.model = edgemt.Model(cls.path)
        cls.sources = lines_of(os.path.join(FIXTURE, "reference", "source.en"))[:LINES]

    def marian(self, name):
        """Marian's pieces of the first LINES lines, as piece lists."""
        return [line.split() for line in lines_of(os.path.join(FIXTURE, "reference", name))[:LINES]]

    def pieces(self, translator):
        got = translator.translate(self.sources, beam_size=4, length_penalty=1.0,
                                   split_sentences=False)
        return [list(t.pieces) for t in got]

    def test_on_and_off_give_marian_s_with_and_without_it(self):
        on = self.pieces(edgemt.Translator(self.model, max_batch=1))
        off = self.pieces(edgemt.Translator(self.model, max_batch=1, shortlist=False))
        self.assertEqual(on, self.marian("npz.beam4n1.shortlist.pieces"))
        self.assertEqual(off, self.marian("npz.beam4n1.pieces"))
        self.assertNotEqual(on, off)

    def test_shortlist_must_be_a_bool(self):
        with self.assertRaises(TypeError) as caught:
            edgemt.Translator(self.model, shortlist="no")
        self.assertIn("shortlist", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
