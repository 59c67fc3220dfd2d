"""`edgemt translate` inputs beyond lines of stdin or -i (issue 41):

- TEXTs after the options are the input, one output line each, as the
  same lines on stdin give them (a line break inside a TEXT is a space;
  `--` before a TEXT starting with '-').
- --paragraphs: hard-wrapped paragraphs come out as one line each, the
  translation of the paragraph joined onto one line; blank lines are kept.
- A sentence longer than the model takes is cut into pieces that fit and
  their translations joined, where it failed the line before; with
  --no-split-sentences it still fails (one line, status 1).

Needs the built binary (EDGEMT_CLI) and the bundled model.
"""

import json
import subprocess
import unittest

import helpers

CLI = helpers.CLI
MODEL = helpers.BUNDLED_MODEL
SOURCES = helpers.reference_lines("test_2016_flickr.en")


def run(*args, stdin=""):
    return subprocess.run([CLI, *args], input=stdin, capture_output=True, text=True,
                          check=False, timeout=300)


def translated(lines, *flags):
    result = run("translate", "-m", MODEL, *flags, stdin="".join(l + "\n" for l in lines))
    if result.returncode != 0:
        raise AssertionError(result.stderr)
    return result.stdout.split("\n")[:-1]


class TextArguments(unittest.TestCase):
    def test_texts_give_what_the_same_lines_on_stdin_give(self):
        texts = SOURCES[:5] + ["Two dogs play. A cat sleeps."]
        result = run("translate", "-m", MODEL, *texts)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.split("\n")[:-1], translated(texts))
        self.assertEqual(result.stderr, "")  # no progress bar, no note

    def test_a_line_break_inside_a_text_is_a_space(self):
        result = run("translate", "-m", MODEL, "A man is\nriding a bike.")
        self.assertEqual(result.stdout.split("\n")[:-1], translated(["A man is riding a bike."]))

    def test_double_dash_ends_the_options(self):
        result = run("translate", "-m", MODEL, "--", "-A dog runs.")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.split("\n")[:-1], translated(["-A dog runs."]))

    def test_texts_with_an_input_file_are_refused(self):
        result = run("translate", "-m", MODEL, "-i", "/dev/null", "A dog.")
        self.assertEqual(result.returncode, 2)
        self.assertIn("give texts to translate or '-i FILE', not both", result.stderr)

    def test_json_and_output_file_work_with_texts(self):
        result = run("translate", "-m", MODEL, "--json", SOURCES[0], SOURCES[1])
        objects = [json.loads(line) for line in result.stdout.splitlines()]
        self.assertEqual([o["line"] for o in objects], [1, 2])


class Paragraphs(unittest.TestCase):
    def test_wrapped_paragraphs_are_translated_whole_and_blank_lines_kept(self):
        wrapped = ["A man in a blue shirt is", "  standing on a ladder.", "", "",
                   "Two dogs are playing", "in the snow. A little girl", "is reading a book."]
        got = translated(wrapped, "--paragraphs")
        want = translated(["A man in a blue shirt is standing on a ladder.", "", "",
                           "Two dogs are playing in the snow. A little girl is reading a book."])
        self.assertEqual(got, want)

    def test_without_the_flag_each_line_is_its_own(self):
        lines = ["A man in a blue shirt is", "standing on a ladder."]
        self.assertEqual(len(translated(lines)), 2)
        self.assertEqual(len(translated(lines, "--paragraphs")), 1)

    def test_a_failed_paragraph_is_named_by_its_first_line(self):
        result = run("translate", "-m", MODEL, "--paragraphs", "--max-line-bytes", "20",
                     stdin="A dog.\n\nA man is riding\na bike.\n")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout.split("\n")[:-1][1:], ["", ""])
        self.assertIn("line 3", result.stderr)


class LongSentences(unittest.TestCase):
    LONG = ", ".join(["a man with a dog and a cat"] * 100)  # 900 tokens, the model takes 256

    def test_a_sentence_too_long_is_cut_and_its_pieces_joined(self):
        result = run("translate", "-m", MODEL, "--json", stdin=self.LONG + "\n")
        self.assertEqual(result.returncode, 0, result.stderr)
        line = json.loads(result.stdout)
        pieces = [s["source"] for s in line["sentences"]]
        self.assertGreater(len(pieces), 1)
        self.assertEqual(" ".join(pieces), self.LONG)  # cut at single spaces: nothing lost
        self.assertTrue(all(p.endswith(",") for p in pieces[:-1]), pieces)  # after commas
        # Each piece is translated as that piece alone on a line would be.
        self.assertEqual(line["translation"], " ".join(translated(pieces)))

    def test_without_splitting_it_still_fails_with_its_reason(self):
        result = run("translate", "-m", MODEL, "--no-split-sentences", stdin=self.LONG + "\n")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout, "\n")
        self.assertIn("more than the 256 the model takes", result.stderr)

    def test_one_enormous_word_is_cut_between_characters(self):
        word = "ä" * 3000
        result = run("translate", "-m", MODEL, "--json", stdin=word + "\n")
        self.assertEqual(result.returncode, 0, result.stderr)
        pieces = [s["source"] for s in json.loads(result.stdout)["sentences"]]
        self.assertEqual("".join(pieces), word)


if __name__ == "__main__":
    unittest.main()
