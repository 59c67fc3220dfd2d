"""A few sentences through every mode of the `edgemt` CLI (ctest: tools.cli.smoke).

Short on purpose: the extended tier runs it against the CLI built under
AddressSanitizer + UBSan (platforms/debian12/test-extended.sh), where what
counts is that every code path of translate, inspect and bench runs once,
error paths included; the quick tier runs it natively too. The long
end-to-end checks (all 1,000 reference lines, BLEU, the converters) are
Python tests of the native run only: they measure numbers a sanitizer does
not change.

Every run must end with the expected status, never a signal, and without a
sanitizer report on stderr (UBSan, built with -fno-sanitize-recover, exits
with status 1 like a clean input error would, so its message is checked
too). The bundled int8 model's outputs are held to the committed references
(models/reference/edgemt_int8_*.de): int8 gives the same bits on every CPU
and every kernel, the portable one included.

Standard library only (no numpy, no torch): it starts in milliseconds.

    EDGEMT_CLI=build/edgemt /usr/bin/python3 tests/tools/cli_smoke.py -v
"""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("EDGEMT_CLI", os.path.join(REPO_ROOT, "build", "edgemt"))
MODELS = os.path.join(REPO_ROOT, "models")
REFERENCE = os.path.join(MODELS, "reference")
INT8_MODEL = os.path.join(MODELS, "multi30k-en-de.int8.emt")
FP16_MODEL = os.path.join(MODELS, "multi30k-en-de.fp16.emt")
RNN_LSTM_INT8 = os.path.join(REPO_ROOT, "tests", "fixtures", "torch_rnn", "bahdanau-lstm.int8.emt")
RNN_GRU_FP32 = os.path.join(REPO_ROOT, "tests", "fixtures", "torch_rnn", "luong-general-gru.fp32.emt")
# Random-weight models of the other variants (made by tests/fuzz/make_seed_models.cc).
SEED_MODELS = os.path.join(REPO_ROOT, "tests", "fuzz", "corpus", "model_file")
MARIAN_TINY = os.path.join(SEED_MODELS, "tiny-f32-format-v3-marian.emt")
PRENORM_F16_TINY = os.path.join(SEED_MODELS, "tiny-f16-prenorm.emt")

LINES = 6
SANITIZER_MARKERS = ("Sanitizer", "runtime error:", "LeakSanitizer")


def read_lines(path, count=None):
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    return lines if count is None else lines[:count]


SOURCES = read_lines(os.path.join(REFERENCE, "test_2016_flickr.en"), LINES)
GREEDY = read_lines(os.path.join(REFERENCE, "edgemt_int8_greedy.de"), LINES)
BEAM4 = read_lines(os.path.join(REFERENCE, "edgemt_int8_beam4.de"), LINES)


def text_of(lines):
    return "".join(line + "\n" for line in lines).encode("utf-8")


class Run:
    """One CLI run: status, stdout lines, stderr text."""

    def __init__(self, args, stdin=b"", env=None, timeout=600):
        merged = dict(os.environ)
        merged.update(env or {})
        result = subprocess.run([CLI, *args], input=stdin, capture_output=True, check=False,
                                timeout=timeout, env=merged)
        self.args = args
        self.code = result.returncode
        self.stdout = result.stdout.decode("utf-8", "replace")
        self.stderr = result.stderr.decode("utf-8", "replace")
        self.lines = self.stdout.split("\n")[:-1] if self.stdout else []

    def describe(self):
        return f"edgemt {' '.join(self.args)}: status {self.code}\nstderr:\n{self.stderr[-4000:]}"


class CliSmokeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(CLI, os.X_OK):
            raise unittest.SkipTest(f"edgemt binary not built: {CLI}")
        cls.tmp = tempfile.mkdtemp(prefix="edgemt-smoke-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def run_cli(self, *args, stdin=b"", env=None, status=0):
        run = Run(args, stdin=stdin, env=env)
        self.assertGreaterEqual(run.code, 0, "killed by a signal: " + run.describe())
        for marker in SANITIZER_MARKERS:
            self.assertNotIn(marker, run.stderr, run.describe())
        self.assertEqual(run.code, status, run.describe())
        return run

    def translate(self, model, *flags, lines=SOURCES, status=0, env=None):
        return self.run_cli("translate", "-m", model, *flags, stdin=text_of(lines), status=status,
                            env=env)

    # -- translate: the bundled int8 model against the committed references ----------
    def test_greedy_with_and_without_the_shortcut_and_on_every_kernel(self):
        self.assertEqual(self.translate(INT8_MODEL).lines, GREEDY)
        self.assertEqual(self.translate(INT8_MODEL, "--no-greedy-shortcut", "--threads", "2").lines,
                         GREEDY)
        self.assertEqual(self.translate(INT8_MODEL, "--batch", "1", env={"EDGEMT_CPU_FEATURES": "portable"}).lines,
                         GREEDY)

    def test_beam_search(self):
        self.assertEqual(self.translate(INT8_MODEL, "--beam", "4", "--threads", "2").lines, BEAM4)

    def test_files_and_a_copied_model(self):
        source, output = self.path("in.en"), self.path("out.de")
        with open(source, "wb") as handle:
            handle.write(text_of(SOURCES))
        self.run_cli("translate", "-m", INT8_MODEL, "-i", source, "-o", output, "--copy-model",
                     "--batch", "4")
        self.assertEqual(read_lines(output), GREEDY)

    def test_json_with_alignment(self):
        run = self.translate(INT8_MODEL, "--json", "--align")
        self.assertEqual(len(run.lines), LINES)
        for number, (line, want) in enumerate(zip(run.lines, GREEDY), start=1):
            record = json.loads(line)
            self.assertEqual(record["line"], number)
            self.assertEqual(record["translation"], want)
            self.assertTrue(record["tokens"])
            self.assertLess(record["score"], 0.0)
            for source_word, target_word in record["alignment"]:
                self.assertLess(source_word, len(SOURCES[number - 1].split()))
                self.assertLess(target_word, len(want.split()))

    def test_alignment_text(self):
        run = self.translate(INT8_MODEL, "--align", "--beam", "2")
        for line in run.lines:
            translation, pairs = line.split(" ||| ")
            self.assertTrue(translation)
            for pair in pairs.split():
                source_word, target_word = (int(n) for n in pair.split("-"))
                self.assertGreaterEqual(source_word, 0)
                self.assertLess(target_word, len(translation.split()))

    def test_attention_pictures_and_terminal_heat_map(self):
        folder = self.path("attention")
        run = self.translate(INT8_MODEL, "--attention", folder, "--show-attention",
                             "--attention-layer", "1", "--attention-head", "2", lines=SOURCES[:2])
        self.assertEqual(run.lines, GREEDY[:2])
        self.assertTrue(run.stderr.strip(), "no heat map on stderr")
        pictures = sorted(os.listdir(folder))
        self.assertEqual(pictures, ["1.svg", "2.svg"])
        for name in pictures:
            ElementTree.parse(os.path.join(folder, name))  # well-formed SVG

    def test_sentence_splitting(self):
        paragraph = SOURCES[0] + " " + SOURCES[1]
        split = self.translate(INT8_MODEL, "--source-lang", "en", lines=[paragraph])
        self.assertEqual(split.lines, [GREEDY[0] + " " + GREEDY[1]])
        whole = self.translate(INT8_MODEL, "--no-split-sentences", "--json", lines=[paragraph])
        self.assertNotIn("sentences", json.loads(whole.lines[0]))
        split_json = self.translate(INT8_MODEL, "--json", "--align", lines=[paragraph, ""])
        record = json.loads(split_json.lines[0])
        self.assertEqual([s["translation"] for s in record["sentences"]], GREEDY[:2])
        self.assertEqual(json.loads(split_json.lines[1])["translation"], "")

    def test_decoding_options(self):
        run = self.translate(INT8_MODEL, "--beam", "3", "--length-penalty", "0.6", "--max-len", "5")
        self.assertEqual(len(run.lines), LINES)
        for line in run.lines:
            self.assertLessEqual(len(line.split()), 5)
        run = self.translate(INT8_MODEL, "--max-len-a", "0.5", "--max-len-b", "2", "--progress")
        self.assertEqual(len(run.lines), LINES)

    # -- translate: other precisions and families --------------------------------------
    def test_fp16_and_native_f16_paths(self):
        self.assertEqual(len(self.translate(FP16_MODEL, lines=SOURCES[:3]).lines), 3)
        run = self.translate(FP16_MODEL, "--beam", "2", lines=SOURCES[:2],
                             env={"EDGEMT_CPU_FEATURES": "fp16"})
        self.assertEqual(len(run.lines), 2)

    def test_rnn_models(self):
        for model in (RNN_LSTM_INT8, RNN_GRU_FP32):
            greedy = self.translate(model, "--align", lines=SOURCES[:3])
            self.assertEqual(len(greedy.lines), 3)
            beam = self.translate(model, "--beam", "3", "--json", lines=SOURCES[:3])
            for line in beam.lines:
                self.assertIn("translation", json.loads(line))
            # One attention: head 0 or none.
            bad = self.translate(model, "--attention-head", "1", "--align", lines=SOURCES[:1],
                                 status=2)
            self.assertIn("attention", bad.stderr)

    def test_other_transformer_variants(self):
        for model in (MARIAN_TINY, PRENORM_F16_TINY):
            for flags in ([], ["--beam", "2", "--align"]):
                run = self.translate(model, "--max-len", "8", *flags, lines=["a b c", "d e"])
                self.assertEqual(len(run.lines), 2)

    # -- translate: input and usage errors -----------------------------------------------
    def test_bad_lines_fail_alone(self):
        stdin = (SOURCES[0] + "\n").encode() + b"\xff\xfe bad\n\n" + b"x" * 200 + b"\n" + \
            (SOURCES[1] + "\n").encode()
        run = self.run_cli("translate", "-m", INT8_MODEL, "--max-line-bytes", "100", stdin=stdin,
                           status=1)
        self.assertEqual(run.lines, [GREEDY[0], "", "", "", GREEDY[1]])
        self.assertIn("line 2: input is not valid UTF-8", run.stderr)
        self.assertIn("line 4: 200 bytes, more than --max-line-bytes (100)", run.stderr)

    def test_a_damaged_model_is_refused_unless_the_checksum_is_skipped(self):
        with open(INT8_MODEL, "rb") as handle:
            data = bytearray(handle.read())
        self.assertEqual(data[-12:-8], b"EMTC")
        data[-13] ^= 0x01  # the last weight byte: still a valid int8 code
        damaged = self.path("damaged.emt")
        with open(damaged, "wb") as handle:
            handle.write(data)
        refused = self.translate(damaged, lines=SOURCES[:1], status=1)
        self.assertIn("the weights' CRC-32C", refused.stderr)
        self.assertIn("CRC-32C", self.run_cli("inspect", damaged, status=1).stderr)
        self.assertEqual(len(self.translate(damaged, "--skip-checksum", lines=SOURCES[:1]).lines), 1)
        bench = self.run_cli("bench", "-m", damaged, "--skip-checksum", "--sentences", "1",
                             "--idle-seconds", "0", "-i", os.path.join(REFERENCE, "test_2016_flickr.en"))
        self.assertIn("load", bench.stdout)

    def test_bad_models_and_usage(self):
        missing = self.translate(self.path("missing.emt"), status=1)
        self.assertIn("missing.emt", missing.stderr)
        fifo = self.path("model.fifo")
        os.mkfifo(fifo)
        self.assertIn("regular file", self.translate(fifo, status=1).stderr)
        with open(INT8_MODEL, "rb") as handle:
            head = handle.read(1 << 16)
        truncated = self.path("truncated.emt")
        with open(truncated, "wb") as handle:
            handle.write(head)
        self.translate(truncated, status=1)
        self.run_cli("inspect", truncated, status=1)
        flipped = self.path("flipped.emt")
        with open(flipped, "wb") as handle:
            handle.write(head[:64] + bytes(b ^ 0x5A for b in head[64:4096]) + head[4096:])
        self.translate(flipped, status=1)
        self.run_cli("translate", status=2)
        self.run_cli("translate", "-m", INT8_MODEL, "--beam", "0", status=2)
        self.run_cli("translate", "-m", INT8_MODEL, "--no-such-option", status=2)
        self.run_cli("no-such-command", status=2)
        self.assertIn("usage", self.run_cli("translate", "--help").stdout)

    # -- inspect and bench ----------------------------------------------------------------
    def test_inspect(self):
        for model in (INT8_MODEL, FP16_MODEL, RNN_LSTM_INT8, MARIAN_TINY):
            summary = self.run_cli("inspect", model)
            self.assertIn("family", summary.stdout)
            full = self.run_cli("inspect", "--all", "-m", model)
            self.assertIn("tensors", full.stdout)
            self.assertGreater(len(full.lines), len(summary.lines))

    def test_bench(self):
        run = self.run_cli("bench", "-m", INT8_MODEL, "--sentences", "2", "--threads", "1,2",
                           "--batch", "1,2", "--beam", "1,2", "--idle-seconds", "0", "--profile")
        self.assertIn("outputs identical", run.stdout)
        self.assertIn("peak RSS", run.stdout)
        self.assertRegex(run.stdout, r"checksum CRC-32C verified at load: load [0-9.]+ ms with it")


if __name__ == "__main__":
    unittest.main()
