"""The Python API at the CLI's level (issue 41): per-text results with an
error field, pieces and source ids, attention from text, a lazy stream, and
a help(edgemt) that is a guide. Each text's Translation is held to what
`edgemt translate --json` prints for the same line (translation, error,
pieces, sentences), for the bundled Transformer and an RNN fixture.

Run by ctest (runtime.python.edgemt_results); by hand:

    EDGEMT_LIBRARY=build/runtime/libedgemt.so.0 EDGEMT_CLI=build/edgemt \\
      PYTHONPATH=runtime/python /usr/bin/python3 -m unittest \\
      tests/runtime/python/test_edgemt_results.py -v
"""

import contextlib
import inspect
import io
import json
import math
import os
import pydoc
import subprocess
import tempfile
import textwrap
import unittest

import edgemt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BUNDLED = os.path.join(ROOT, "models", "multi30k-en-de.int8.emt")
RNN = os.path.join(ROOT, "tests", "fixtures", "torch_rnn", "luong-general-gru.fp32.emt")
CLI = os.environ.get("EDGEMT_CLI", os.path.join(ROOT, "build", "edgemt"))

# A str with a lone surrogate: what a line that is not UTF-8 becomes when
# read with errors="surrogateescape" ("\udcff": the byte 0xff), or any
# other ("\ud800"). The CLI fails such a line alone; so must translate().
ACCEPTANCE = ["Two dogs play. A cat sleeps.", "A \ud800 cat.", "A man."]
MIXED = ACCEPTANCE + ["A dog runs. A \udcff cat.", "   ", "A b\0c.",
                      "Er sagte: \"Halt.\" Dann ging er."]
# Over the 256 tokens the bundled model (and the fixture) take, in one
# sentence: without splitting, the CLI fails such a line.
TOO_LONG = "Dogs " + " ".join(["dog"] * 300) + "."


def as_bytes(line):
    """The bytes a str stands for: UTF-8, or with lone surrogates the bytes
    surrogateescape (else surrogatepass) gives."""
    for errors in ("strict", "surrogateescape", "surrogatepass"):
        try:
            return line.encode("utf-8", errors)
        except UnicodeEncodeError:
            pass


def cli_json(model, lines, *options):
    """`edgemt translate --json` of `lines` (as their bytes): one object
    per line."""
    done = subprocess.run([CLI, "translate", "-m", model, "--json", *options],
                          input=b"".join(as_bytes(line) + b"\n" for line in lines),
                          capture_output=True)
    return [json.loads(line) for line in done.stdout.decode("utf-8").split("\n")[:-1]]


class PerTextResults(unittest.TestCase):
    def check_against_cli(self, path, lines=MIXED, *options, **keywords):
        model = edgemt.Model(path)
        translator = edgemt.Translator(model, max_batch=4)
        got = translator.translate(lines, **keywords)
        want = cli_json(path, lines, *options)
        self.assertEqual(len(got), len(want))
        for t, w in zip(got, want):
            self.assertEqual(t.text, w["translation"])
            self.assertEqual(t.error, w.get("error"))
            self.assertEqual(t.ok, "error" not in w)
            if not t.ok:
                self.assertTrue(math.isnan(t.score))
                self.assertEqual((t.tokens, t.pieces, t.sentences), ([], [], []))
                continue
            self.assertEqual(t.pieces, w.get("tokens", []))
            self.assertAlmostEqual(t.score, w.get("score", 0.0), places=3)
            if "sentences" in w:
                self.assertEqual([(s.source, s.text, s.pieces) for s in t.sentences],
                                 [(s["source"], s["translation"], s["tokens"])
                                  for s in w["sentences"]])
        return got

    def test_the_issue_acceptance_bundled_transformer(self):
        """Two good translations (the first split in two and joined) and one
        per-text error, each equal to the CLI's line."""
        model = edgemt.Model(BUNDLED)
        translator = edgemt.Translator(model)
        first, failed, third = translator.translate(ACCEPTANCE)
        want = cli_json(BUNDLED, ACCEPTANCE)
        self.assertEqual(first.text, want[0]["translation"])
        self.assertEqual(first.text, "Zwei Hunde spielen. Eine Katze schläft.")
        self.assertEqual([s.text for s in first.sentences],
                         [s["translation"] for s in want[0]["sentences"]])
        self.assertEqual(first.text, " ".join(s.text for s in first.sentences))
        self.assertEqual(third.text, want[2]["translation"])
        self.assertTrue(first.ok and third.ok)
        self.assertFalse(failed.ok)
        self.assertEqual(failed.text, "")
        self.assertEqual(failed.error, want[1]["error"])
        self.assertEqual(failed.error, "input is not valid UTF-8 (byte 2)")
        self.assertEqual(failed.source, ACCEPTANCE[1])

    def test_bundled_transformer_line_for_line(self):
        got = self.check_against_cli(BUNDLED)
        self.assertEqual(got[3].error, "input is not valid UTF-8 (byte 14)")

    def test_rnn_fixture_line_for_line(self):
        self.check_against_cli(RNN)

    def test_too_long_without_splitting_fails_alone(self):
        lines = ["A man.", TOO_LONG, "A dog. " + TOO_LONG]
        for path, count in ((BUNDLED, 304), (RNN, 305)):  # (their own vocabularies)
            got = self.check_against_cli(path, lines, "--no-split-sentences",
                                         split_sentences=False)
            self.assertEqual([t.error for t in got],
                             [None, f"source has {count} tokens, more than the 256 the model takes",
                              f"source has {count + 3} tokens, more than the 256 the model "
                              f"takes"])
        # A Translator's own max_source_len is named as such.
        small = edgemt.Translator(edgemt.Model(BUNDLED), max_source_len=8)
        [t] = small.translate(["A man in a blue shirt is riding a bike."], split_sentences=False)
        self.assertEqual(t.error, "source has 12 tokens, more than the 8 the translator's "
                                  "max_source_len allows")
        # With splitting (the default) it is cut into pieces that fit, as
        # `edgemt translate` cuts a sentence over the model's 256 tokens.
        [t] = small.translate(["A man in a blue shirt is riding a bike."])
        self.assertIsNone(t.error)
        self.assertGreater(len(t.sentences), 1)
        self.assertTrue(all(len(s.source_tokens) <= 8 for s in t.sentences))

    def test_too_long_with_splitting_is_cut_as_the_cli_cuts_it(self):
        got = self.check_against_cli(BUNDLED, ["A man.", TOO_LONG, "A dog. " + TOO_LONG])
        self.assertEqual([t.error for t in got], [None, None, None])
        self.assertGreater(len(got[1].sentences), 1)

    def test_lone_surrogates_stand_for_their_bytes(self):
        # A file's line read with errors="surrogateescape" (or os.fsdecode'd)
        # fails as the same bytes fail in the CLI, naming the same byte.
        translator = edgemt.Translator(edgemt.Model(BUNDLED))
        good, bad = translator.translate(["A dog.", b"A \xff cat.".decode("utf-8",
                                                                         "surrogateescape")])
        self.assertTrue(good.ok)
        self.assertEqual(bad.error, "input is not valid UTF-8 (byte 2)")
        cli = subprocess.run([CLI, "translate", "-m", BUNDLED], input=b"A \xff cat.\n",
                             capture_output=True)
        self.assertIn(b"line 1: input is not valid UTF-8 (byte 2)", cli.stderr)

    def test_errors_raise_keeps_the_old_behaviour(self):
        translator = edgemt.Translator(edgemt.Model(BUNDLED))
        with self.assertRaises(edgemt.Error) as raised:
            translator.translate(ACCEPTANCE, errors="raise")
        self.assertEqual(raised.exception.code, "invalid-argument")
        self.assertIn("text 1: input is not valid UTF-8", str(raised.exception))
        self.assertEqual(len(translator.translate(["A dog."], errors="raise")), 1)

    def test_programming_errors_still_raise(self):
        model = edgemt.Model(BUNDLED)
        translator = edgemt.Translator(model)
        with self.assertRaises(TypeError):
            translator.translate(["A dog.", 5])
        with self.assertRaises(ValueError):
            translator.translate(["A dog."], errors="ignore")
        with self.assertRaises(edgemt.Error):  # an unknown target prefix: the whole call
            translator.translate(["A dog."], target_prefix=">>xx<<")
        translator.close()
        with self.assertRaises(edgemt.Error) as raised:
            translator.translate(["A dog."])
        self.assertEqual(raised.exception.code, "failed-precondition")

    def test_old_positional_construction(self):
        t = edgemt.Translation("Ein Hund.", -1.5, [5, 6], None, [(0, 0)])
        self.assertEqual((t.text, t.score, t.tokens, t.alignment, t.error), ("Ein Hund.", -1.5,
                                                                           [5, 6], [(0, 0)], None))
        self.assertTrue(t.ok)


class PiecesAndIds(unittest.TestCase):
    def test_target_and_source_pieces_and_ids(self):
        model = edgemt.Model(BUNDLED)
        translator = edgemt.Translator(model)
        [t] = translator.translate(["Two dogs play. A cat sleeps."])
        self.assertEqual(t.pieces, translator.pieces(t.tokens))
        self.assertEqual("".join(t.pieces).replace("\u2581", " ").strip(), t.text)
        # Source: each sentence's pieces then its EOS, as the model read them.
        self.assertEqual(t.source_pieces, ["\u2581Two", "\u2581dogs", "\u2581play", ".", "</s>",
                                           "\u2581A", "\u2581cat", "\u2581sleeps", ".", "</s>"])
        self.assertEqual(t.source_tokens,
                         [i for s in t.sentences for i in s.source_tokens])
        self.assertEqual(translator.pieces(t.source_tokens, side="source"), t.source_pieces)
        # The source ids are what translate_ids takes: the same tokens.
        by_ids = translator.translate_ids([s.source_tokens for s in t.sentences])
        self.assertEqual([r.tokens for r in by_ids], [s.tokens for s in t.sentences])
        with self.assertRaises(ValueError):
            translator.pieces([1], side="left")
        with self.assertRaises(ValueError):
            translator.pieces([model.target_vocab_size])


class AttentionFromText(unittest.TestCase):
    def check_model(self, path):
        model = edgemt.Model(path)
        translator = edgemt.Translator(model, attention=True)
        lines = ["Two dogs play. A cat sleeps.", "A man.", "  "]
        got = translator.translate(lines, align=True)
        split, single, blank = got
        for t in (split, single):
            rows = sum(len(s.attention) for s in t.sentences)
            self.assertEqual(len(t.attention), rows)
            for s in t.sentences:
                self.assertIn(len(s.attention), (len(s.tokens), len(s.tokens) + 1))
                for row in s.attention:
                    self.assertEqual(len(row), len(s.source_tokens))
                    self.assertAlmostEqual(sum(row), 1.0, places=3)
            for row in t.attention:
                self.assertEqual(len(row), len(t.source_tokens))
        self.assertEqual(single.attention, single.sentences[0].attention)
        # Block-diagonal: the second sentence's rows weigh only its source.
        first = split.sentences[0]
        second_row = split.attention[len(first.attention)]
        self.assertEqual(second_row[:len(first.source_tokens)], [0.0] * len(first.source_tokens))
        self.assertEqual(second_row[len(first.source_tokens):], split.sentences[1].attention[0])
        self.assertEqual((blank.attention, blank.sentences), ([], []))
        # The weights translate_ids gives for the same source ids.
        by_ids = translator.translate_ids([s.source_tokens for s in split.sentences],
                                          attention=True)
        for r, s in zip(by_ids, split.sentences):
            self.assertEqual(r.tokens, s.tokens)
            for a, b in zip(r.attention, s.attention):
                self.assertEqual([round(x, 5) for x in a], [round(x, 5) for x in b])
        # Alignment over split sentences, as the CLI's --align.
        want = cli_json(path, lines, "--align")
        self.assertEqual([[list(p) for p in t.alignment] for t in got],
                         [w.get("alignment", []) for w in want])
        # attention=False turns them off; translate() without a request on a
        # Translator made without attention gives None, attention=True raises.
        self.assertIsNone(translator.translate(lines, attention=False)[0].attention)
        plain = edgemt.Translator(model)
        self.assertIsNone(plain.translate(lines)[0].attention)
        with self.assertRaises(edgemt.Error) as raised:
            plain.translate(lines, attention=True)
        self.assertEqual(raised.exception.code, "failed-precondition")

    def test_bundled_transformer(self):
        self.check_model(BUNDLED)

    def test_rnn_fixture(self):
        self.check_model(RNN)


class Stream(unittest.TestCase):
    def test_reads_lazily_and_gives_translate_s_results(self):
        model = edgemt.Model(BUNDLED)
        translator = edgemt.Translator(model, max_batch=4)
        lines = [f"A dog number {k} runs. It is fast." if k % 3 == 0 else f"A cat sleeps {k}."
                 for k in range(40)] + ["\ud800"]
        read = []

        def source():
            for line in lines:
                read.append(line)
                yield line

        stream = translator.translate_iter(source())
        self.assertEqual(read, [])  # nothing read before the first result is asked for
        first = next(stream)
        self.assertTrue(first.ok)
        self.assertLessEqual(len(read), 4)  # one batch of at most max_batch sentences
        rest = list(stream)
        self.assertEqual(len(read), len(lines))
        want = translator.translate(lines)
        self.assertEqual([(t.text, t.error, t.tokens) for t in [first] + rest],
                         [(t.text, t.error, t.tokens) for t in want])
        self.assertFalse(rest[-1].ok)

    def test_careless_input_raises_when_reached(self):
        translator = edgemt.Translator(edgemt.Model(BUNDLED), max_batch=2)
        with self.assertRaises(TypeError):
            translator.translate_iter("A dog.")
        with self.assertRaises(ValueError):
            translator.translate_iter(["A dog."], errors="never")
        stream = translator.translate_iter(iter(["A dog.", "A cat.", None]))
        self.assertEqual([t.ok for t in (next(stream), next(stream))], [True, True])
        with self.assertRaises(TypeError):
            next(stream)


class Help(unittest.TestCase):
    def test_help_is_a_guide(self):
        text = pydoc.render_doc(edgemt, renderer=pydoc.plaintext)
        for name in ("translate_iter", "translate(", "Translation.error", "errors=\"raise\"",
                     "split_sentences", "attention"):
            self.assertIn(name, text)
        doc = edgemt.__doc__
        example = textwrap.dedent(doc[doc.index("    import edgemt"):].split("\n\n")[0])
        self.assertGreaterEqual(len(example.split("\n")), 10)
        # The example runs, from the checkout's root, with a big.en.
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "big.en"), "w", encoding="utf-8",
                      errors="surrogateescape") as f:
                f.write("A dog runs.\nA \udcff cat.\n")
            example = example.replace('"models/', json.dumps(ROOT + "/models/")[:-1]) \
                .replace('"big.en"', json.dumps(os.path.join(folder, "big.en")))
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(example, "edgemt.__doc__", "exec"), {})
        lines = printed.getvalue().split("\n")
        self.assertEqual(len(lines), 5)
        self.assertTrue(lines[0].startswith("Zwei Hunde spielen. Eine Katze schläft. -"), lines)
        self.assertIn("'\u2581Zwei', '\u2581Hunde'", lines[0])
        self.assertEqual(lines[2:], [edgemt.Translator(edgemt.Model(BUNDLED)).translate(
            ["A dog runs."])[0].text, "", ""])  # the bad line failed: "" printed

    def test_public_names_have_docstrings_and_hints(self):
        for name in edgemt.__all__:
            thing = getattr(edgemt, name)
            self.assertTrue(inspect.getdoc(thing), name)
            if not inspect.isclass(thing):
                continue
            for attribute, member in vars(thing).items():
                if attribute.startswith("_") and attribute != "__init__":
                    continue
                if inspect.isfunction(member):
                    self.assertTrue(inspect.getdoc(member), f"{name}.{attribute}")
                    hints = inspect.signature(member)
                    for parameter in list(hints.parameters.values())[1:]:
                        if parameter.kind is parameter.VAR_KEYWORD:
                            continue
                        self.assertIsNot(parameter.annotation, inspect.Parameter.empty,
                                         f"{name}.{attribute}({parameter.name})")
        for name in ("version", "library_path", "split_sentences"):
            self.assertIsNot(inspect.signature(getattr(edgemt, name)).return_annotation,
                             inspect.Signature.empty, name)


if __name__ == "__main__":
    unittest.main()
