"""`edgemt translate --align / --attention DIR / --show-attention`: word
alignments and pictures from the decoder's attention weights.

On all 1,000 lines of models/reference/test_2016_flickr.en for the bundled
Transformer (its translations must stay those of
models/reference/edgemt_int8_greedy.de), and on the first 200 for the RNN
fixtures (tests/fixtures/torch_rnn/), `--align` prints `translation ||| i-j ...` (as Marian's --alignment) with every i a
whitespace word of the source line, every j one of the translation, and
every target word aligned; `--json --align` carries the same pairs. Split
lines number the words of the whole line. SVG files and terminal heat maps
come out where they should, and a wrong layer or head is a usage error.

Needs the built binary (EDGEMT_CLI), the bundled model and the fixtures.
"""

import json
import os
import re
import subprocess
import unittest
import xml.etree.ElementTree as ElementTree

import helpers

CLI = helpers.CLI
TRANSFORMER = helpers.BUNDLED_MODEL
RNN_DIR = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "torch_rnn")
RNN_MODELS = [os.path.join(RNN_DIR, "bahdanau-lstm.int8.emt"),
              os.path.join(RNN_DIR, "luong-general-gru.fp32.emt")]
SOURCES = helpers.reference_lines("test_2016_flickr.en")[:200]
LINK = re.compile(r"^(\d+)-(\d+)$")


def run(*args, stdin=b"", timeout=600):
    if isinstance(stdin, str):
        stdin = stdin.encode("utf-8")
    return subprocess.run([CLI, *args], input=stdin, capture_output=True, check=False,
                          timeout=timeout)


def parse_aligned(line):
    """'text ||| 0-0 1-2' -> (text, [(0, 0), (1, 2)])."""
    text, separator, links = line.partition(" ||| ")
    if not separator:
        raise AssertionError(f"no ' ||| ' in {line!r}")
    pairs = []
    for link in links.split():
        match = LINK.match(link)
        if not match:
            raise AssertionError(f"bad link {link!r} in {line!r}")
        pairs.append((int(match.group(1)), int(match.group(2))))
    return text, pairs


class AlignTest(helpers.CliTestCase):
    def translate(self, model, lines, *flags):
        """The output lines (every family provides attention weights)."""
        result = run("translate", "-m", model, *flags, stdin="".join(l + "\n" for l in lines))
        stderr = result.stderr.decode("utf-8", "replace")
        self.assertEqual(result.returncode, 0, stderr)
        out = result.stdout.decode("utf-8")
        self.assertTrue(out.endswith("\n"))
        lines_out = out.split("\n")[:-1]
        self.assertEqual(len(lines_out), len(lines))
        return lines_out

    def check_alignment(self, sources, outputs, label):
        for number, (source, output) in enumerate(zip(sources, outputs), 1):
            text, pairs = parse_aligned(output)
            source_words, target_words = len(source.split()), len(text.split())
            where = f"{label} line {number}: {source!r} -> {output!r}"
            for i, j in pairs:
                self.assertLess(i, source_words, where)
                self.assertLess(j, target_words, where)
            self.assertEqual({j for _, j in pairs}, set(range(target_words)), where)
        return [parse_aligned(output) for output in outputs]

    def check_model(self, model):
        name = os.path.basename(model)
        plain = self.translate(model, SOURCES)
        aligned = self.check_alignment(SOURCES, self.translate(model, SOURCES, "--align"), name)
        # The alignment changes nothing in the translations.
        self.assertEqual([text for text, _ in aligned], plain)
        objects = [json.loads(line) for line in self.translate(model, SOURCES, "--json", "--align")]
        self.assertEqual([o["translation"] for o in objects], plain)
        self.assertEqual([[tuple(pair) for pair in o["alignment"]] for o in objects],
                         [pairs for _, pairs in aligned])

    def test_rnn_fixtures(self):
        for model in RNN_MODELS:
            with self.subTest(model=os.path.basename(model)):
                self.check_model(model)

    def test_bundled_transformer(self):
        self.check_model(TRANSFORMER)

    def test_bundled_transformer_on_all_of_test_2016(self):
        sources = helpers.reference_lines("test_2016_flickr.en")
        self.assertEqual(len(sources), 1000)
        aligned = self.check_alignment(
            sources, self.translate(TRANSFORMER, sources, "--align", "--beam", "1"), "test_2016")
        helpers.assert_same_lines(self, [text for text, _ in aligned],
                                  helpers.reference_lines("edgemt_int8_greedy.de"),
                                  "edgemt_int8_greedy.de")

    def test_transformer_layer_and_head(self):
        lines = SOURCES[:20]
        default = self.translate(TRANSFORMER, lines, "--align")
        last_mean = self.translate(TRANSFORMER, lines, "--align", "--attention-layer", "2")
        self.assertEqual(default, last_mean)  # the defaults: the last layer, mean of heads
        for layer, head in (("0", "0"), ("1", "3")):
            with self.subTest(layer=layer, head=head):
                outputs = self.translate(TRANSFORMER, lines, "--align", "--attention-layer", layer,
                                         "--attention-head", head)
                self.check_alignment(lines, outputs, f"layer {layer} head {head}")
        for flags in (["--attention-layer", "3"], ["--attention-head", "4"]):
            with self.subTest(flags=flags):
                result = run("translate", "-m", TRANSFORMER, "--align", *flags, stdin=b"A dog.\n")
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(b"layers 0..2 and heads 0..3", result.stderr)
        result = run("translate", "-m", RNN_MODELS[0], "--align", "--attention-layer", "1",
                     stdin=b"A dog.\n")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn(b"one attention", result.stderr)

    def test_split_lines_number_the_words_of_the_whole_line(self):
        first, second = "Two dogs are playing in the snow.", "A little girl is reading a book."
        for model in (RNN_MODELS[0], TRANSFORMER):
            with self.subTest(model=os.path.basename(model)):
                alone = self.translate(model, [first, second], "--align")
                joined = self.translate(model, [first + "  " + second, ""], "--align")
                self.check_alignment([first + "  " + second, ""], joined, "split")
                (text_1, pairs_1), (text_2, pairs_2) = map(parse_aligned, alone)
                offset_source, offset_target = len(first.split()), len(text_1.split())
                expected = pairs_1 + [(i + offset_source, j + offset_target) for i, j in pairs_2]
                self.assertEqual(parse_aligned(joined[0]),
                                 (text_1 + "  " + text_2, sorted(expected, key=lambda p: (p[1], p[0]))))
                self.assertEqual(joined[1], " ||| ")
                objects = [json.loads(line) for line in
                           self.translate(model, [first + "  " + second], "--json", "--align")]
                sentences = objects[0]["sentences"]
                self.assertEqual([[tuple(p) for p in s["alignment"]] for s in sentences],
                                 [pairs_1, pairs_2])

    def test_attention_pictures(self):
        folder = os.path.join(self.tmp, "pictures", "new")
        lines = [SOURCES[0], "", "Two dogs play. A girl reads."]
        data = "\n".join(lines).encode() + b"\n\xff bad\n"
        result = run("translate", "-m", RNN_MODELS[1], "--attention", folder, "--show-attention",
                     stdin=data)
        self.assertEqual(result.returncode, 1)  # line 4 is not UTF-8
        self.assertEqual(len(result.stdout.decode("utf-8").split("\n")), 5)
        self.assertEqual(sorted(os.listdir(folder)), ["1.svg", "3-1.svg", "3-2.svg"])
        for name in os.listdir(folder):
            root = ElementTree.parse(os.path.join(folder, name)).getroot()
            self.assertTrue(root.tag.endswith("svg"), name)
        stderr = result.stderr.decode("utf-8")
        for heading in ("attention of line 1:", "attention of line 3, sentence 1:",
                        "attention of line 3, sentence 2:"):
            self.assertIn(heading, stderr)
        self.assertIn("</s>", stderr)
        self.assertNotIn("attention of line 2", stderr)

    def test_an_attention_folder_that_cannot_be_made(self):
        blocker = self.path("a_file")
        with open(blocker, "w") as handle:
            handle.write("x")
        output = self.path("untouched.de")
        result = run("translate", "-m", RNN_MODELS[0], "--attention",
                     os.path.join(blocker, "pictures"), "-o", output, stdin=b"A dog.\n")
        self.assertEqual(result.returncode, 1)
        self.assertIn(b"cannot create the --attention folder", result.stderr)
        self.assertIn(b"Not a directory", result.stderr)
        self.assertFalse(os.path.exists(output))


if __name__ == "__main__":
    unittest.main()
