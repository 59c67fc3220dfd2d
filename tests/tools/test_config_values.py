"""Configuration values are type- and range-checked where they enter (issue
38, defect 5; and defect 9's "beam-size is 1.5, not a number").

Before: a non-numeric `length_penalty` ("abc", null, [1]) or
`bad_words_ids: 5` in generation_config.json or config.json gave a
ValueError / TypeError traceback; `true` passed as the number 1; a list as
activation_function crashed (unhashable); a quoted "false" in config.json
or model.yml meant true; decoder.yml's `beam-size: 1.5` was "not a number".
Now each is one `edgemt-convert: error:` line naming the file, the key and
the value, exit 1, nothing written.
"""

import contextlib
import io
import json
import os
import shutil
import tempfile
import unittest

import numpy as np

import helpers
from edgemt_tools import convert
from edgemt_tools.errors import UserError
from edgemt_tools.sources.config_values import finite_number, flag, text, whole_number

FIXTURE = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian")


def run_convert(argv):
    """edgemt-convert in this process: (exit status, stderr)."""
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = convert.main(argv)
    return code, stderr.getvalue()


class ReadersTest(unittest.TestCase):
    def assert_refused(self, reader, value, *fragments, **options):
        with self.assertRaises(UserError) as caught:
            reader({"k": value}, "k", "f.json", **options)
        message = str(caught.exception)
        self.assertEqual(len(message.splitlines()), 1)
        for fragment in ("f.json: k is ",) + fragments:
            self.assertIn(fragment, message)

    def test_whole_number(self):
        self.assertEqual(whole_number({"k": 6}, "k", "f"), 6)
        self.assertEqual(whole_number({}, "k", "f", 3), 3)
        self.assertEqual(whole_number({"k": "6"}, "k", "f", numeric_text=True), 6)
        for value in (1.5, 6.0, "6", True, None, [1], float("nan")):
            self.assert_refused(whole_number, value, "expected a whole number")
        self.assert_refused(whole_number, 0, "expected a whole number 1 to 16", low=1, high=16)
        self.assert_refused(whole_number, 17, "1 to 16", low=1, high=16)
        self.assert_refused(whole_number, "1.5", "1.5", numeric_text=True)
        with self.assertRaisesRegex(UserError, "f: k is missing"):
            whole_number({}, "k", "f")

    def test_finite_number(self):
        self.assertEqual(finite_number({"k": 1}, "k", "f"), 1.0)
        self.assertEqual(finite_number({"k": "0.6"}, "k", "f", numeric_text=True), 0.6)
        for value in ("abc", None, [1], True, False, float("nan"), float("inf"), -float("inf"),
                      "0.6", {"a": 1}):
            self.assert_refused(finite_number, value, "expected a finite number")
        for text_value in ("nan", "inf", "abc"):
            self.assert_refused(finite_number, text_value, "finite", numeric_text=True)
        self.assert_refused(finite_number, 0, "expected a finite number > 0", above=0.0)
        self.assert_refused(finite_number, -1, ">= 0", low=0.0)

    def test_flag(self):
        self.assertTrue(flag({"k": True}, "k", "f"))
        self.assertFalse(flag({"k": None}, "k", "f", False))
        self.assertFalse(flag({"k": "false"}, "k", "f", True, yaml_cpp_text=True))
        self.assertTrue(flag({"k": "on"}, "k", "f", False, yaml_cpp_text=True))
        for value in ("false", "true", 0, 1, "maybe", [True]):
            self.assert_refused(flag, value, "expected true or false")

    def test_text(self):
        self.assertEqual(text({"k": "en"}, "k", "f"), "en")
        self.assertIsNone(text({}, "k", "f", None))
        for value in (5, ["en"], True):
            self.assert_refused(text, value, "expected a string")


class HuggingFaceValuesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.folder = os.path.join(cls.tmp, "hf")
        shutil.copytree(os.path.join(FIXTURE, "hf"), cls.folder)
        os.remove(os.path.join(cls.folder, "pytorch_model.bin"))
        cls.originals = {}
        for name in ("config.json", "generation_config.json", "tokenizer_config.json"):
            with open(os.path.join(cls.folder, name), encoding="utf-8") as handle:
                cls.originals[name] = handle.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def setUp(self):
        for name, original in self.originals.items():
            with open(os.path.join(self.folder, name), "w", encoding="utf-8") as handle:
                handle.write(original)
        self.output = os.path.join(self.tmp, "out.emt")

    def set_values(self, name, **values):
        """Rewrite one JSON file of the folder with values (raw JSON text)."""
        path = os.path.join(self.folder, name)
        config = json.loads(self.originals[name])
        text_of = {key: json.dumps(key) + ": " + raw for key, raw in values.items()}
        body = ",\n".join([json.dumps(k) + ": " + json.dumps(v)
                           for k, v in config.items() if k not in values] +
                          list(text_of.values()))
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("{\n" + body + "\n}\n")

    def assert_refused(self, name, fragment, **values):
        self.set_values(name, **values)
        code, stderr = run_convert(["--from", "hf-marian", "--checkpoint", self.folder,
                                    "--dtype", "fp32", "-o", self.output])
        self.assertEqual(code, 1, stderr)
        lines = stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, stderr)
        self.assertIn(f"{name}: ", lines[0])
        self.assertIn(fragment, lines[0])
        self.assertNotIn("Traceback", stderr)
        self.assertFalse(os.path.exists(self.output))

    def test_length_penalty_must_be_a_finite_number(self):
        for raw in ('"abc"', "null", "[1]", "true", "NaN", "Infinity", "1e999", '{"a": 1}'):
            for name in ("generation_config.json", "config.json"):
                with self.subTest(raw=raw, name=name):
                    if name == "config.json":
                        os.remove(os.path.join(self.folder, "generation_config.json"))
                    self.assert_refused(name, "length_penalty is ", length_penalty=raw)
                    self.setUp()

    def test_bad_words_ids_must_be_lists_of_token_ids(self):
        for raw in ("5", '"x"', "[5]", "[[true]]", "[[3810]]", "[[-1]]", "[[]]", '[["a"]]',
                    "{}"):
            with self.subTest(raw=raw):
                self.assert_refused("generation_config.json", "bad_words_ids", bad_words_ids=raw)

    def test_beams_and_max_length_are_whole_numbers_in_range(self):
        for key, raw in (("num_beams", "true"), ("num_beams", "0"), ("num_beams", "2.5"),
                         ("num_beams", "1000"), ("max_length", "1"), ("max_length", '"512"'),
                         ("max_length", "null")):
            with self.subTest(key=key, raw=raw):
                self.assert_refused("generation_config.json", f"{key} is ", **{key: raw})

    def test_config_json_types(self):
        for key, raw, fragment in (
                ("activation_function", '["swish"]', "expected a string"),
                ("d_model", "true", "expected a whole number"),
                ("d_model", "96.0", "expected a whole number"),
                ("decoder_vocab_size", '"3810"', "expected a whole number"),
                ("share_encoder_decoder_embeddings", '"false"', "expected true or false"),
                ("scale_embedding", "1", "expected true or false"),
                ("normalize_before", '"no"', "expected true or false"),
                ("pad_token_id", "null", "expected a whole number"),
                ("d_model", "1000000", "expected a whole number 1 to"),
                ("encoder_layers", "0", "expected a whole number 1 to"),
                ("max_position_embeddings", "1e9", "expected a whole number 1 to"),
                ("max_position_embeddings", "10000000", "expected a whole number 1 to")):
            with self.subTest(key=key, raw=raw):
                self.assert_refused("config.json", f"{key} is ", **{key: raw})

    def test_tokenizer_config_languages_are_strings(self):
        self.assert_refused("tokenizer_config.json", "target_lang is 5, expected a string",
                            target_lang="5")

    def test_unchanged_folder_still_converts(self):
        code, stderr = run_convert(["--from", "hf-marian", "--checkpoint", self.folder,
                                    "--dtype", "fp32", "-o", self.output])
        self.assertEqual(code, 0, stderr)


class MarianValuesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.folder = shutil.copytree(os.path.join(FIXTURE, "npz"), os.path.join(self.tmp, "m"))
        self.output = os.path.join(self.tmp, "out.emt")

    def convert(self):
        return run_convert(["--from", "marian", "--checkpoint", self.folder, "--src-lang", "en",
                            "--tgt-lang", "de", "--dtype", "fp32", "-o", self.output])

    def assert_refused(self, *fragments):
        code, stderr = self.convert()
        self.assertEqual(code, 1, stderr)
        lines = stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])
        self.assertFalse(os.path.exists(self.output))

    def set_decoder_option(self, line):
        path = os.path.join(self.folder, "decoder.yml")
        key = line.split(":")[0]
        with open(os.path.join(FIXTURE, "npz", "decoder.yml"), encoding="utf-8") as handle:
            lines = [kept for kept in handle.read().splitlines()
                     if not kept.startswith(key + ":")]
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines + [line]) + "\n")

    def test_decoder_yml_values(self):
        for line, fragment in (
                ("beam-size: 1.5", "beam-size is 1.5, expected a whole number 1 to"),
                ("beam-size: abc", "beam-size is 'abc', expected a whole number"),
                ("beam-size: true", "beam-size is True"),
                ("beam-size: 0", "beam-size is 0"),
                ("normalize: abc", "normalize is 'abc', expected a finite number"),
                ("normalize: .nan", "normalize is nan"),
                ("word-penalty: .inf", "word-penalty is inf"),
                ("word-penalty: [1]", "word-penalty is [1]"),
                ("max-length-factor: 0", "max-length-factor is 0, expected a finite number > 0"),
                ("max-length: 0", "max-length is 0"),
                ("max-length: 1.5", "max-length is 1.5"),
                ("allow-unk: maybe", "allow-unk is 'maybe', expected true or false")):
            with self.subTest(line=line):
                self.set_decoder_option(line)
                self.assert_refused("decoder.yml: ", fragment)

    def test_decoder_yml_numbers_written_as_text_read_as_marian_reads_them(self):
        self.set_decoder_option('beam-size: "4"')
        code, stderr = self.convert()
        self.assertEqual(code, 0, stderr)

    def rewrite_model_yml(self, old, new):
        path = os.path.join(self.folder, "model.npz")
        with np.load(path) as archive:
            tensors = {name: archive[name] for name in archive.files}
        yml = tensors["special:model.yml"].tobytes().split(b"\0")[0].decode()
        self.assertIn(old, yml)
        tensors["special:model.yml"] = np.frombuffer(yml.replace(old, new).encode() + b"\0",
                                                     dtype=np.int8)
        np.savez(path, **tensors)

    def test_model_yml_flags_and_activation(self):
        for old, new, fragments in (
                ("tied-embeddings-all: true", "tied-embeddings-all: maybe",
                 ("model.npz special:model.yml: tied-embeddings-all is 'maybe', expected true "
                  "or false",)),
                ("transformer-ffn-activation: swish", "transformer-ffn-activation: [swish]",
                 ("model.npz: ", "transformer-ffn-activation: ['swish'] is not supported"))):
            with self.subTest(new=new):
                self.rewrite_model_yml(old, new)
                self.assert_refused(*fragments)
                shutil.copyfile(os.path.join(FIXTURE, "npz", "model.npz"),
                                os.path.join(self.folder, "model.npz"))

    def test_model_yml_quoted_boolean_reads_as_marian_reads_it(self):
        """`tied-embeddings-all: "true"` is true to Marian (yaml-cpp), and
        still converts the tied fixture."""
        self.rewrite_model_yml("tied-embeddings-all: true", 'tied-embeddings-all: "true"')
        code, stderr = self.convert()
        self.assertEqual(code, 0, stderr)


if __name__ == "__main__":
    unittest.main()
