"""Documents through `import edgemt` as `edgemt translate` does them (issue
40): lines of several sentences split, translated and joined, and word
alignments over the line's words, for the bundled Transformer and an RNN
fixture. The module reaches the library's splitter and aligner through the
C API (edgemt_split_sentences, edgemt_translate_document); the CLI calls the
same library functions from C++, so any difference in how the two compose
them shows here, line for line.

Run by ctest (runtime.python.edgemt_documents); by hand:

    EDGEMT_LIBRARY=build/runtime/libedgemt.so.0 EDGEMT_CLI=build/edgemt \\
      PYTHONPATH=runtime/python /usr/bin/python3 -m unittest \\
      tests/runtime/python/test_edgemt_documents.py -v
"""

import os
import subprocess
import unittest

import edgemt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BUNDLED = os.path.join(ROOT, "models", "multi30k-en-de.int8.emt")
RNN = os.path.join(ROOT, "tests", "fixtures", "torch_rnn", "luong-general-gru.fp32.emt")
SOURCES = os.path.join(ROOT, "models", "reference", "test_2016_flickr.en")
CLI = os.environ.get("EDGEMT_CLI", os.path.join(ROOT, "build", "edgemt"))


def documents():
    """Lines of one to three test sentences, joined by the spaces a
    document has between them, and a blank line."""
    with open(SOURCES, encoding="utf-8") as f:
        sentences = [line.rstrip("\n") for line in f][:60]
    gaps = [" ", "  ", "\t", " "]
    lines = ["Two dogs play. A cat sleeps."]
    for k in range(0, 48, 2):
        lines.append(sentences[k] + gaps[k % 4] + sentences[k + 1])
    for k in range(48, 60, 3):
        lines.append(" ".join(sentences[k:k + 3]))
    lines += [sentences[0], "   ", "He said \"Stop. Go away.\" Then he left!"]
    return lines


def cli_translate(model, lines, *options):
    """`edgemt translate` of `lines`: one output line each."""
    done = subprocess.run([CLI, "translate", "-m", model, *options], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, encoding="utf-8", check=True)
    return done.stdout.split("\n")[:-1]


def as_cli_line(translation):
    """A Translation as `edgemt translate --align` prints it."""
    links = " ".join(f"{s}-{t}" for s, t in translation.alignment)
    return f"{translation.text} ||| {links}"


class SplitSentences(unittest.TestCase):
    def test_a_line_of_two_sentences_is_two(self):
        self.assertEqual(edgemt.split_sentences("Two dogs play. A cat sleeps."),
                         ["Two dogs play.", "A cat sleeps."])

    def test_a_blank_line_has_none_and_one_sentence_is_one(self):
        self.assertEqual(edgemt.split_sentences(" \t "), [])
        self.assertEqual(edgemt.split_sentences("  A man rides a bike.  "), ["A man rides a bike."])

    def test_the_language_picks_the_rules(self):
        # A German ordinal before a month does not end a sentence in German.
        text = "Er kam am 3. Mai an. Dann ging er."
        self.assertEqual(edgemt.split_sentences(text, "de"), ["Er kam am 3. Mai an.", "Dann ging er."])
        self.assertEqual(edgemt.split_sentences(text, "en"),
                         ["Er kam am 3.", "Mai an.", "Dann ging er."])

    def test_many_sentences_and_non_ascii(self):
        text = " ".join(f"Satz Nummer {k} ist schön." for k in range(40))
        self.assertEqual(len(edgemt.split_sentences(text, "de")), 40)

    def test_careless_arguments_raise(self):
        with self.assertRaises(TypeError):
            edgemt.split_sentences(b"bytes")
        with self.assertRaises(ValueError):
            edgemt.split_sentences("x", "e\0n")


class TranslateAsTheCli(unittest.TestCase):
    def check_model(self, path, threads):
        model = edgemt.Model(path)
        lines = documents()
        translator = edgemt.Translator(model, threads=threads, max_batch=8, attention=True)
        got = translator.translate(lines, align=True)
        self.assertEqual([as_cli_line(t) for t in got], cli_translate(path, lines, "--align"))
        # More than one sentence somewhere, and nothing lost in the joins.
        self.assertGreater(sum(t.text.count(".") for t in got), len(lines))
        # Without splitting: whole lines, as --no-split-sentences.
        whole = translator.translate(lines, split_sentences=False)
        self.assertEqual([t.text for t in whole],
                         cli_translate(path, lines, "--no-split-sentences"))
        self.assertNotEqual([t.text for t in whole], [t.text for t in got])
        translator.close()
        model.close()

    def test_bundled_transformer(self):
        self.check_model(BUNDLED, threads=2)

    def test_rnn_fixture(self):
        self.check_model(RNN, threads=1)

    def test_the_issue_example(self):
        model = edgemt.Model(BUNDLED)
        translator = edgemt.Translator(model)
        [split] = translator.translate(["Two dogs play. A cat sleeps."])
        [first, second] = translator.translate(["Two dogs play.", "A cat sleeps."])
        self.assertEqual(split.text, first.text + " " + second.text)
        self.assertEqual(split.tokens, first.tokens + second.tokens)
        self.assertAlmostEqual(split.score, first.score + second.score, places=5)
        self.assertIsNone(split.alignment)

    def test_align_needs_attention(self):
        model = edgemt.Model(BUNDLED)
        translator = edgemt.Translator(model)
        with self.assertRaises(edgemt.Error) as raised:
            translator.translate(["A dog."], align=True)
        self.assertEqual(raised.exception.code, "failed-precondition")
        self.assertIn("limits.attention", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
