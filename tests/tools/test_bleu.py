"""bleu.py / edgemt-bleu: sacreBLEU-compatible corpus BLEU and 13a tokenization."""

import gzip
import math
import os
import shutil
import tempfile
import unittest

import helpers
from edgemt_tools.bleu import corpus_bleu, score_from_stats, segment_stats, tokenize_13a


class Tokenize13aTest(unittest.TestCase):
    def test_cases(self):
        cases = {
            "Hello, world.": "Hello , world .",
            "3.14 and 1,000 items": "3.14 and 1,000 items",   # . , between digits kept
            "It costs 5.": "It costs 5 .",                   # . after a digit, before space
            "a-b": "a-b",                                    # dash after a letter: kept
            "2-3": "2 - 3",                                  # dash after a digit: split
            "it's": "it's",                                  # ' is not in the symbol class
            "$5 (100%) x/y": "$ 5 ( 100 % ) x / y",
            "&quot;Hi&quot; &amp; &lt;b&gt;": '" Hi " & < b >',
            "<skipped>foo": "foo",
            "line-\nbreak\nnext": "linebreak next",
            "Straße, Mädchen.": "Straße , Mädchen .",
            "  many   spaces\t": "many spaces",
            "a@b:c;d?e!f[g]h{i}j~k^l_m`n": "a @ b : c ; d ? e ! f [ g ] h { i } j ~ k ^ l _ m ` n",
            "Mr.Smith": "Mr . Smith",
            "": "",
        }
        for raw, want in cases.items():
            with self.subTest(raw=raw):
                self.assertEqual(tokenize_13a(raw), want)


class BleuTest(unittest.TestCase):
    def test_perfect_match_is_100(self):
        self.assertAlmostEqual(corpus_bleu(["the cat sat on the mat ."],
                                           ["the cat sat on the mat ."]).score, 100.0)

    def test_no_overlap_is_0(self):
        self.assertEqual(corpus_bleu(["a b c d"], ["w x y z"]).score, 0.0)

    def test_brevity_penalty(self):
        # All n-grams of the 4-token hypothesis match; c = 4, r = 6:
        # BP = exp(1 - 6/4) = exp(-0.5), precisions 100 -> BLEU = 100 * exp(-0.5) = 60.65.
        score = corpus_bleu(["the cat sat on"], ["the cat sat on the mat"])
        self.assertAlmostEqual(score.bp, math.exp(-0.5))
        self.assertAlmostEqual(score.score, 100 * math.exp(-0.5))

    def test_exp_smoothing_by_hand(self):
        # hyp "the cat the mat" vs ref "the cat sat on the mat":
        #   1-grams 4/4 (the x2 clipped to ref's 2), 2-grams 2/3 ("the cat", "the mat"),
        #   3-grams 0/2, 4-grams 0/1.
        # exp smoothing: first zero order -> 100/(2*2) = 25, second -> 100/(4*1) = 25.
        # BLEU = exp(-0.5) * (100 * 66.67 * 25 * 25) ** (1/4) = 27.40
        score = corpus_bleu(["the cat the mat"], ["the cat sat on the mat"])
        self.assertEqual(score.matches, (4, 2, 0, 0))
        self.assertEqual(score.totals, (4, 3, 2, 1))
        self.assertAlmostEqual(score.precisions[2], 25.0)
        self.assertAlmostEqual(score.precisions[3], 25.0)
        want = math.exp(-0.5) * (100 * (200 / 3) * 25 * 25) ** 0.25
        self.assertAlmostEqual(score.score, want)
        self.assertAlmostEqual(score.score, 27.40, places=2)

    def test_corpus_statistics_are_summed(self):
        # Sentence 1 matches fully (4 tokens), sentence 2 not at all (1 token vs 1):
        # 1-grams 4/5, 2-grams 3/3, 3-grams 2/2, 4-grams 1/1 -> (0.8)^(1/4) * 100.
        score = corpus_bleu(["a b c d", "x"], ["a b c d", "y"])
        self.assertEqual((score.sys_len, score.ref_len), (5, 5))
        self.assertAlmostEqual(score.score, 100 * 0.8 ** 0.25)

    def test_short_hypothesis_without_4grams(self):
        # 3 tokens: totals[3] = 0 -> that order stays 0 -> log -> BLEU ~ 0 (sacreBLEU).
        score = score_from_stats(3, 3, [3, 2, 1, 0], [3, 2, 1, 0])
        self.assertEqual(score.score, 0.0)

    def test_trailing_whitespace_ignored(self):
        self.assertEqual(segment_stats("a b c  \n", "a b c"), segment_stats("a b c", "a b c"))

    def test_mismatched_lengths(self):
        with self.assertRaises(ValueError):
            corpus_bleu(["a"], ["a", "b"])


class BleuCliTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def write(self, name, lines, compress=False):
        path = os.path.join(self.tmp, name)
        opener = gzip.open if compress else open
        with opener(path, "wt", encoding="utf-8") as handle:
            handle.write("".join(line + "\n" for line in lines))
        return path

    def test_plain_and_gz(self):
        hyp = self.write("hyp.txt", ["the cat sat on", "a b c d"])
        ref = self.write("ref.de.gz", ["the cat sat on the mat", "a b c d"], compress=True)
        result = helpers.run_tool("edgemt-bleu", hyp, ref)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.startswith("BLEU = "), result.stdout)
        result = helpers.run_tool("edgemt-bleu", "-b", hyp, ref)
        want = corpus_bleu(["the cat sat on", "a b c d"], ["the cat sat on the mat", "a b c d"])
        self.assertEqual(result.stdout.strip(), f"{want.score:.2f}")

    def test_errors(self):
        hyp = self.write("hyp.txt", ["a"])
        ref = self.write("ref.txt", ["a", "b"])
        result = helpers.run_tool("edgemt-bleu", hyp, ref)
        self.assertEqual(result.returncode, 1)
        self.assertIn("has 1 lines", result.stderr)
        result = helpers.run_tool("edgemt-bleu", hyp, os.path.join(self.tmp, "missing"))
        self.assertEqual(result.returncode, 1)
        self.assertNotIn("Traceback", result.stderr)


if __name__ == "__main__":
    unittest.main()
