"""`import edgemt` (runtime/python/edgemt) against the CLI: the same model,
the same sentences, the same output, line for line.

Run by ctest (runtime.python.edgemt_module) with EDGEMT_LIBRARY pointing at
the built libedgemt.so and EDGEMT_CLI at the built edgemt; by hand:

    EDGEMT_LIBRARY=build/runtime/libedgemt.so.0 EDGEMT_CLI=build/edgemt PYTHONPATH=runtime/python \
      /usr/bin/python3 -m unittest tests/runtime/python/test_edgemt_module.py -v
"""

import os
import subprocess
import tempfile
import unittest

import edgemt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MODEL = os.path.join(ROOT, "models", "multi30k-en-de.int8.emt")
SOURCES = os.path.join(ROOT, "models", "reference", "test_2016_flickr.en")
CLI = os.environ.get("EDGEMT_CLI", os.path.join(ROOT, "build", "edgemt"))


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def cli_translate(*args, input_path=SOURCES):
    done = subprocess.run([CLI, "translate", "-m", MODEL, "-i", input_path, *args],
                          capture_output=True, text=True, check=True)
    return done.stdout.split("\n")[:-1]


class ModuleMatchesCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = edgemt.Model(MODEL)
        cls.sources = read_lines(SOURCES)

    def test_test_2016_greedy_identical_to_cli(self):
        """Every line of test_2016 (1,000), the model's default decoding."""
        self.assertEqual(len(self.sources), 1000)
        translator = edgemt.Translator(self.model)
        got = [t.text for t in translator.translate(self.sources)]
        want = cli_translate()
        self.assertEqual(len(got), len(want))
        differ = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
        self.assertEqual(differ, [], f"{len(differ)} lines differ, first: {differ[:5]}")
        # And the bundled reference the CLI is held to.
        self.assertEqual(got, read_lines(os.path.join(ROOT, "models", "reference",
                                                      "edgemt_int8_greedy.de")))

    def test_beam_and_length_options_identical_to_cli(self):
        lines = self.sources[:120]
        with tempfile.NamedTemporaryFile("w", suffix=".en", delete=False) as f:
            f.write("\n".join(lines) + "\n")
        try:
            want = cli_translate("--beam", "4", "--length-penalty", "0.6", "--max-len-a", "1.5",
                                 "--max-len-b", "5", "--threads", "2", input_path=f.name)
        finally:
            os.unlink(f.name)
        translator = edgemt.Translator(self.model, threads=2, max_batch=7)
        got = translator.translate(lines, beam_size=4, length_penalty=0.6, max_len_a=1.5,
                                   max_len_b=5)
        self.assertEqual([t.text for t in got], want)
        for t in got:
            self.assertLess(t.score, 0.0)
            self.assertTrue(t.tokens)

    def test_ids_detokenize_and_from_bytes(self):
        translator = edgemt.Translator(self.model)
        by_text = translator.translate(self.sources[:20])
        ids = [[int(x) for x in line.split()]
               for line in read_lines(SOURCES + ".ids")[:20]]
        by_ids = translator.translate_ids(ids)
        self.assertEqual([t.tokens for t in by_ids], [t.tokens for t in by_text])
        self.assertEqual([t.text for t in by_ids], [t.text for t in by_text])
        with open(MODEL, "rb") as f:
            in_memory = edgemt.Model.from_bytes(f.read())
        self.assertEqual([t.text for t in edgemt.Translator(in_memory).translate(self.sources[:20])],
                         [t.text for t in by_text])

    def test_greedy_scores_false_same_tokens_score_nan(self):
        """greedy_scores=False on the fp16 model (f32 compute here: the arg-max
        shortcut): the same translations, scores NaN; beam still scored."""
        import math
        fp16 = edgemt.Model(os.path.join(ROOT, "models", "multi30k-en-de.fp16.emt"))
        lines = self.sources[:60]
        scored = edgemt.Translator(fp16).translate(lines)
        fast = edgemt.Translator(fp16, greedy_scores=False)
        unscored = fast.translate(lines)
        self.assertEqual([t.tokens for t in unscored], [t.tokens for t in scored])
        self.assertTrue(all(math.isfinite(t.score) for t in scored))
        self.assertTrue(all(math.isnan(t.score) for t in unscored))
        self.assertTrue(all(math.isfinite(t.score) for t in fast.translate(lines[:5], beam_size=2)))

    def test_model_info_and_version(self):
        self.assertRegex(edgemt.version(), r"^\d+\.\d+\.\d+$")
        self.assertEqual(self.model.family, "transformer")
        self.assertEqual((self.model.source_language, self.model.target_language), ("en", "de"))
        self.assertEqual(self.model.weight_dtype, "i8")
        self.assertEqual(self.model.decode_defaults()["beam_size"], 1)

    def test_errors_are_exceptions_with_codes(self):
        with self.assertRaises(edgemt.Error) as caught:
            edgemt.Model("/nonexistent/model.emt")
        self.assertEqual(caught.exception.code, "not-found")
        with tempfile.NamedTemporaryFile(suffix=".emt") as f:
            f.write(b"not a model" * 100)
            f.flush()
            with self.assertRaises(edgemt.Error) as caught:
                edgemt.Model(f.name)
            self.assertEqual(caught.exception.code, "invalid-model")
        translator = edgemt.Translator(self.model)
        with self.assertRaises(edgemt.Error) as caught:
            translator.translate(["Hello."], target_prefix="fra")
        self.assertEqual(caught.exception.code, "invalid-argument")
        with self.assertRaises(edgemt.Error) as caught:
            translator.translate(["Hello."], beam_size=9)  # over max_beam 4
        self.assertEqual(caught.exception.code, "invalid-argument")
        with self.assertRaises(edgemt.Error):
            edgemt.Translator(self.model, threads=0)
        # Blank lines come back empty, as from the CLI.
        self.assertEqual([t.text for t in translator.translate(["", "  "])], ["", ""])

    def test_one_string_or_one_id_list_is_a_type_error(self):
        # Iterating a string or a flat id list would translate each character
        # or id as a sentence of its own: a silent wrong answer.
        translator = edgemt.Translator(self.model)
        with self.assertRaises(TypeError) as caught:
            translator.translate("A man is sleeping.")
        self.assertIn("translate([text])", str(caught.exception))
        with self.assertRaises(TypeError):
            translator.translate(b"A man is sleeping.")
        with self.assertRaises(TypeError) as caught:
            translator.translate_ids([5, 6, 7])
        self.assertIn("source 0 is of type int", str(caught.exception))
        with self.assertRaises(TypeError):
            translator.translate_ids("5 6 7")
        with self.assertRaises(TypeError):
            translator.translate_ids([[5, 6], "7"])
        # The list forms work.
        self.assertEqual(len(translator.translate(["A man is sleeping."])), 1)
        self.assertEqual(len(translator.translate_ids([[5, 6, 7]])), 1)


class ModuleOnAMarianModel(unittest.TestCase):
    """A model of another source (the Marian fixture: separate source and
    target SentencePiece models, piece vocabularies, Marian's beam 6 as its
    default): the module follows its defaults as the CLI does, and
    Model.detokenize (no SentencePiece) gives SentencePiece's text."""

    @classmethod
    def setUpClass(cls):
        cls.workspace = tempfile.TemporaryDirectory()
        cls.path = os.path.join(cls.workspace.name, "marian.emt")
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "edgemt-convert"),
                        "--from", "marian", "--checkpoint",
                        os.path.join(ROOT, "tests", "fixtures", "marian", "npz"),
                        "--src-lang", "en", "--tgt-lang", "de", "--dtype", "fp32",
                        "-o", cls.path], check=True, capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.workspace.cleanup()

    def test_defaults_text_and_detokenize(self):
        model = edgemt.Model(self.path)
        self.assertEqual(model.decode_defaults()["beam_size"], 6)
        translator = edgemt.Translator(model)
        self.assertEqual(translator.limits.max_beam, 6)
        lines = read_lines(SOURCES)[:40]
        with tempfile.NamedTemporaryFile("w", suffix=".en", delete=False) as f:
            f.write("\n".join(lines) + "\n")
        try:
            done = subprocess.run([CLI, "translate", "-m", self.path, "-i", f.name],
                                  capture_output=True, text=True, check=True)
        finally:
            os.unlink(f.name)
        got = translator.translate(lines)
        self.assertEqual([t.text for t in got], done.stdout.split("\n")[:-1])
        self.assertEqual([model.detokenize(t.tokens) for t in got], [t.text for t in got])


if __name__ == "__main__":
    unittest.main()
