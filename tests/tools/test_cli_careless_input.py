"""`edgemt translate` with careless input (issue 38, defects 2 and 9).

Each test is the regression test of a defect:
- `-o` naming the input (`-i X -o X`, a hard link to it, or the file on
  stdin) or the model file: the output was opened first, which emptied the
  input (exit 0, no output) or the mapped model. Now refused, exit 2, the
  file unchanged.
- `/dev/zero` as input (-i or stdin) ran forever without a word: a line is
  reported only at its end, and that line never ends. Now a line passing
  --max-line-bytes is announced at once (after the lines before it are
  written), then skipped as before.
- `--source-lang xx` was accepted silently (generic splitting rules). Now
  what is not a language code is refused (exit 2), and a code without
  rules of its own gets a note on stderr.
- `--word-penalty` for a model whose search rules have none, and
  `--no-shortlist` for a model without a shortlist, were accepted silently
  (the penalty ignored). Now the first is refused (exit 2) unless 0, the
  second gets a note. `--marian-int8-sums` other than exact for a file not
  in Marian's int8 arithmetic is refused (exit 2) too.

Needs the built binary (EDGEMT_CLI) and the bundled int8 model.
"""

import hashlib
import os
import select
import shutil
import subprocess
import time
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


class CarelessInputTest(helpers.CliTestCase):
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

    # -- defect 9: input that never ends a line ------------------------------------
    def first_stderr_line(self, process, seconds=30):
        """The first line `process` writes on stderr within `seconds`, or None."""
        deadline = time.monotonic() + seconds
        data = b""
        while b"\n" not in data and time.monotonic() < deadline:
            ready, _, _ = select.select([process.stderr], [], [], deadline - time.monotonic())
            if not ready:
                break
            chunk = os.read(process.stderr.fileno(), 4096)
            if not chunk:
                break
            data += chunk
        return data.split(b"\n")[0].decode("utf-8", "replace") if b"\n" in data else None

    def test_dev_zero_is_reported_at_once(self):
        for how in ("-i", "stdin"):
            with self.subTest(how=how):
                args = [CLI, "translate", "-m", MODEL] + (["-i", "/dev/zero"] if how == "-i"
                                                          else [])
                with open("/dev/zero", "rb") as zero:
                    process = subprocess.Popen(args, stdin=zero if how == "stdin" else None,
                                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                try:
                    line = self.first_stderr_line(process)
                finally:
                    process.kill()
                    process.communicate()
                self.assertEqual(line, "edgemt: input line 1 is longer than --max-line-bytes "
                                       "(65536); reading on to its end to skip it")

    def test_lines_before_a_long_line_come_first_and_it_is_still_reported(self):
        source = self.write("long.en", "A dog runs.\n" + "x" * 200000 + "\nA cat sleeps.\n")
        result = run("translate", "-m", MODEL, "-i", source)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(len(result.stdout.splitlines()), 3)
        self.assertEqual(result.stdout.splitlines()[1], "")
        self.assertIn("edgemt: input line 2 is longer than --max-line-bytes (65536)",
                      result.stderr)
        self.assertIn("edgemt: line 2: 200000 bytes, more than --max-line-bytes (65536)",
                      result.stderr)

    # -- defect 9: --source-lang -----------------------------------------------------
    def test_source_lang_that_is_no_language_code_is_refused(self):
        for value in ("xx", "english", "12", "de AT"):
            with self.subTest(value=value):
                result = run("translate", "-m", MODEL, "--source-lang", value,
                             stdin=subprocess.DEVNULL)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn("option '--source-lang' takes a language code", result.stderr)
                self.assertIn(f"not '{value}'", result.stderr)
                self.assertEqual(result.stdout, "")

    def test_source_lang_without_rules_of_its_own_gets_a_note(self):
        source = self.write("two.en", "A dog runs. A cat sleeps.\n")
        for value, noted in (("es", True), ("de-AT", True), ("en", False), ("de", False)):
            with self.subTest(value=value):
                result = run("translate", "-m", MODEL, "-i", source, "--source-lang", value)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(len(result.stdout.splitlines()), 1)
                note = (f"edgemt: note: no sentence-splitting rules of its own for '{value}'"
                        " (en, de and fr have some): the generic rules are used")
                self.assertEqual(note in result.stderr, noted, result.stderr)

    # -- options that would change nothing for the model ----------------------------
    def test_word_penalty_is_refused_for_a_model_without_marian_rules(self):
        # The bundled model follows edgemt's rules: a word penalty would be
        # ignored, so the translation would not be what was asked for.
        for value, refused in (("1", True), ("-0.5", True), ("0", False)):
            with self.subTest(value=value):
                result = run("translate", "-m", MODEL, "--beam", "2", "--word-penalty", value,
                             SENTENCE.strip())
                self.assertEqual(result.returncode, 2 if refused else 0, result.stderr)
                self.assertEqual("is for models with Marian's search rules; this model follows "
                                 "edgemt's" in result.stderr, refused, result.stderr)
                self.assertEqual(len(result.stdout.splitlines()), 0 if refused else 1)

    def test_marian_int8_sums_need_a_marian_int8_file_and_a_known_cpu(self):
        # The bundled model is int8 in edgemt's own arithmetic (per row):
        # Marian's sums would change nothing, so asking for them is refused.
        for value, message in (
                ("avx2", "option '--marian-int8-sums' is for int8 files converted from a Marian "
                         "intgemm8 model (Marian's int8 arithmetic); this file's scheme is "
                         "int8-"),
                ("avx3", "option '--marian-int8-sums' takes exact, avx2, avx512bw or ssse3, not "
                         "'avx3'")):
            for command in (("translate", SENTENCE.strip()), ("bench", "--sentences", "1")):
                with self.subTest(value=value, command=command[0]):
                    result = run(command[0], "-m", MODEL, "--marian-int8-sums", value,
                                 *command[1:])
                    self.assertEqual(result.returncode, 2, result.stderr)
                    self.assertIn(message, result.stderr)
                    self.assertEqual(result.stdout, "")
        result = run("translate", "-m", MODEL, "--marian-int8-sums", "exact", SENTENCE.strip())
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(result.stdout.splitlines()), 1)

    def test_no_shortlist_for_a_model_without_one_gets_a_note(self):
        result = run("translate", "-m", MODEL, "--no-shortlist", SENTENCE.strip())
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(result.stdout.splitlines()), 1)
        self.assertIn("edgemt: note: the model has no lexical shortlist: --no-shortlist changes "
                      "nothing", result.stderr)

    def test_help_documents_source_lang_and_output(self):
        result = run("translate", "--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn("L is a language code", result.stdout)
        self.assertIn("not the input or the model file", result.stdout)


if __name__ == "__main__":
    unittest.main()
