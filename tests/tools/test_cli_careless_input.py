"""`edgemt translate` with careless input (issue 38, defects 2 and 9).

Each test is the regression test of a defect:
- `-o` naming the input (`-i X -o X`, a hard link to it, or the file on
  stdin) or the model file: the output was opened first, which emptied the
  input (exit 0, no output) or the mapped model. Now refused, exit 2, the
  file unchanged.

Needs the built binary (EDGEMT_CLI) and the bundled int8 model.
"""

import hashlib
import os
import shutil
import subprocess
import tempfile
import unittest

import helpers

CLI = helpers.CLI
MODEL = helpers.BUNDLED_MODEL
SENTENCE = "A man is riding a bike.\n"


def run(*args, stdin=None, timeout=120):
    return subprocess.run([CLI, *args], stdin=stdin, capture_output=True, text=True,
                          check=False, timeout=timeout)


def digest(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


class CarelessInputTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.isfile(CLI):
            raise unittest.SkipTest(f"edgemt binary not built: {CLI}")
        cls.tmp = tempfile.mkdtemp()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def write(self, name, text):
        with open(self.path(name), "w", encoding="utf-8") as handle:
            handle.write(text)
        return self.path(name)

    # -- defect 2: -o naming the input or the model ---------------------------------
    def test_output_naming_the_input_is_refused_and_the_input_kept(self):
        source = self.write("same.en", SENTENCE)
        hard = self.path("same-hard.en")
        os.link(source, hard)
        for output in (source, hard, os.path.join(self.tmp, ".", "same.en")):
            with self.subTest(output=output):
                result = run("translate", "-m", MODEL, "-i", source, "-o", output)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(f"output '{output}' is the input file", result.stderr)
                with open(source, encoding="utf-8") as handle:
                    self.assertEqual(handle.read(), SENTENCE)
        with open(source, "rb") as stdin:
            result = run("translate", "-m", MODEL, "-o", source, stdin=stdin)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("is the input file", result.stderr)
        with open(source, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), SENTENCE)

    def test_output_naming_the_model_is_refused_and_the_model_kept(self):
        model = self.path("model.emt")
        shutil.copyfile(MODEL, model)
        before = digest(model)
        result = run("translate", "-m", model, "-o", model, stdin=subprocess.DEVNULL)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("is the model file", result.stderr)
        self.assertEqual(digest(model), before)

    def test_other_outputs_still_work(self):
        source = self.write("other.en", SENTENCE)
        output = self.path("other.de")
        result = run("translate", "-m", MODEL, "-i", source, "-o", output)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(output, encoding="utf-8") as handle:
            self.assertEqual(len(handle.read().splitlines()), 1)
        result = run("translate", "-m", MODEL, "-i", source, "-o", os.devnull)
        self.assertEqual(result.returncode, 0, result.stderr)


if __name__ == "__main__":
    unittest.main()
