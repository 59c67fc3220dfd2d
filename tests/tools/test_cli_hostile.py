"""`edgemt translate` and `inspect` against hostile input (issue 13).

Each test is the regression test of a defect found by trying the CLI as a
hostile user would: a 50 MB line among short ones, a FIFO as model path,
the model file truncated while mapped, NaN or infinite weights written into
a model file by hand, an fp16 model whose activations overflow. Whatever
happens, the process must end with a clear message and status 1 (never a
signal), and every input line must still give exactly one output line.

Needs the built binary (EDGEMT_CLI) and the bundled models.
"""

import os
import shutil
import subprocess
import sys
import unittest

import numpy as np

import helpers
from edgemt_tools.model_file import read_model
from edgemt_tools.testing import reseal

CLI = helpers.CLI
INT8_MODEL = helpers.BUNDLED_MODEL
FP16_MODEL = helpers.BUNDLED_FP16_MODEL
SOURCES = os.path.join(helpers.REFERENCE_DIR, "test_2016_flickr.en")
INT8_REFERENCE = os.path.join(helpers.REFERENCE_DIR, "edgemt_int8_greedy.de")
MIB = 1 << 20


def read_lines(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read().splitlines()


def read_bytes(path):
    with open(path, "rb") as handle:
        return handle.read()


def run(*args, stdin=b"", env=None, timeout=300):
    return subprocess.run([CLI, *args], input=stdin, capture_output=True, check=False,
                          timeout=timeout, env=env)


def peak_rss_mib(args):
    """Runs `edgemt args` in a child of a fresh Python process and returns
    (returncode, stderr, peak RSS of edgemt alone in MiB): RUSAGE_CHILDREN of
    that process covers exactly one child."""
    probe = ("import resource, subprocess, sys\n"
             "r = subprocess.run(sys.argv[1:], capture_output=True)\n"
             "sys.stderr.buffer.write(r.stderr)\n"
             "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    result = subprocess.run([sys.executable, "-c", probe, CLI, *args], capture_output=True,
                            check=True, timeout=600)
    code, kib = result.stdout.decode().split()
    return int(code), result.stderr.decode("utf-8", "replace"), int(kib) / 1024.0


class HostileInputTest(helpers.CliTestCase):
    def assert_clean_failure(self, result, *fragments):
        self.assertEqual(result.returncode, 1, result.stderr.decode("utf-8", "replace"))
        stderr = result.stderr.decode("utf-8", "replace")
        for fragment in fragments:
            self.assertIn(fragment, stderr)
        return stderr

    # -- defect 4: memory bounded per line ------------------------------------------
    def test_a_50_mb_line_among_1000_is_reported_with_bounded_memory(self):
        """Acceptance 4: 1,000 lines with a 50 MB line in the middle: 1,000 output
        lines, the long line reported, the others as translated alone (the int8
        reference file), peak RSS within 32 MiB of the same run without it."""
        sources = read_lines(SOURCES)[:1000]
        reference = read_lines(INT8_REFERENCE)[:1000]
        middle = 500
        long_line = ("A man in a blue shirt is riding a bike down the street. " * 940000)[:50 * MIB]
        with_long = self.path("with_long.en")
        without = self.path("without_long.en")
        with open(with_long, "w", encoding="utf-8") as handle:
            handle.write("\n".join(sources[:middle] + [long_line] + sources[middle + 1:]) + "\n")
        with open(without, "w", encoding="utf-8") as handle:
            handle.write("\n".join(sources[:middle] + [""] + sources[middle + 1:]) + "\n")
        out_long, out_short = self.path("with_long.de"), self.path("without_long.de")
        code, stderr, rss_long = peak_rss_mib(
            ["translate", "-m", INT8_MODEL, "-i", with_long, "-o", out_long])
        self.assertEqual(code, 1, stderr)
        self.assertIn(f"line {middle + 1}: {50 * MIB} bytes, more than --max-line-bytes (65536)",
                      stderr)
        self.assertEqual(stderr.count("edgemt: line"), 1, stderr)
        code, stderr, rss_short = peak_rss_mib(
            ["translate", "-m", INT8_MODEL, "-i", without, "-o", out_short])
        self.assertEqual(code, 0, stderr)
        translated = read_lines(out_long)
        self.assertEqual(len(translated), 1000)
        self.assertEqual(translated[middle], "")
        expected = reference[:middle] + [""] + reference[middle + 1:]
        self.assertEqual(translated, expected)
        self.assertEqual(read_lines(out_short), expected)
        print(f"peak RSS: {rss_long:.1f} MiB with the 50 MB line, {rss_short:.1f} MiB without")
        self.assertLess(rss_long - rss_short, 32.0)

    def test_max_line_bytes_is_exact_and_checked(self):
        line = "A dog runs."
        ok = run("translate", "-m", INT8_MODEL, "--max-line-bytes", str(len(line)),
                 stdin=(line + "\n").encode())
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertNotEqual(ok.stdout.strip(), b"")
        over = run("translate", "-m", INT8_MODEL, "--max-line-bytes", str(len(line) - 1),
                   stdin=(line + "\nA cat.\n").encode())
        self.assert_clean_failure(over, "line 1: 11 bytes, more than --max-line-bytes (10)")
        self.assertEqual(len(over.stdout.decode().split("\n")), 3)  # two lines, both answered
        for bad in ("0", "67108865", "-1", "lots"):
            result = run("translate", "-m", INT8_MODEL, "--max-line-bytes", bad)
            self.assertEqual(result.returncode, 2)
            self.assertIn("--max-line-bytes", result.stderr.decode())

    def test_a_last_line_without_newline_and_a_directory_as_input(self):
        result = run("translate", "-m", INT8_MODEL, stdin=b"A dog runs.\nA cat sleeps.")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(len(result.stdout.decode().splitlines()), 2)
        result = run("translate", "-m", INT8_MODEL, "-i", self.tmp)
        self.assert_clean_failure(result, "error reading the input", "Is a directory")

    # -- defect 5: non-regular files as model path ----------------------------------
    def test_a_fifo_or_device_as_model_is_refused_at_once(self):
        fifo = self.path("model.fifo")
        os.mkfifo(fifo)
        for args in (["translate", "-m", fifo], ["inspect", fifo],
                     ["translate", "--copy-model", "-m", fifo]):
            with self.subTest(args=args):
                # Before the fix open() waited for a writer: the timeout fails the test.
                result = run(*args, stdin=b"A dog.\n", timeout=30)
                self.assert_clean_failure(result, "is a FIFO, not a regular file")
        self.assert_clean_failure(run("inspect", "/dev/zero"), "is a character device")

    # -- defect 6: the model file truncated while mapped ------------------------------
    def translate_around(self, model, change, *flags):
        """Starts `edgemt translate` on `model` (batch 1), translates one line,
        calls change(), then sends a second line; returns (first output line,
        the process's stdout rest, stderr, returncode)."""
        process = subprocess.Popen([CLI, "translate", "-m", model, "--batch", "1", *flags],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        try:
            process.stdin.write(b"Two dogs are playing in the snow.\n")
            process.stdin.flush()
            first = process.stdout.readline().decode().rstrip("\n")
            change()
            rest, stderr = process.communicate(b"A little girl is reading a book.\n", timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        return first, rest.decode(), stderr.decode("utf-8", "replace"), process.returncode

    def test_truncating_the_mapped_model_ends_cleanly_and_copy_model_survives_it(self):
        model = self.path("truncated.emt")

        def truncate():
            with open(model, "r+b") as handle:
                handle.truncate(0)

        shutil.copyfile(INT8_MODEL, model)
        first, rest, stderr, code = self.translate_around(model, truncate)
        self.assertIn("Hunde", first)
        self.assertEqual(code, 1, f"expected status 1, not a signal; stderr: {stderr}")
        self.assertIn("bus error reading the model file", stderr)
        self.assertIn("--copy-model", stderr)

        shutil.copyfile(INT8_MODEL, model)
        first, rest, stderr, code = self.translate_around(model, truncate, "--copy-model")
        self.assertEqual(code, 0, stderr)
        self.assertIn("Hunde", first)
        self.assertIn("Buch", rest)

    def test_replacing_the_model_by_rename_is_safe_while_mapped(self):
        model = self.path("renamed.emt")
        shutil.copyfile(INT8_MODEL, model)

        def replace():
            fresh = self.path("renamed.emt.new")
            with open(fresh, "wb") as handle:
                handle.write(b"something else entirely")
            os.replace(fresh, model)

        first, rest, stderr, code = self.translate_around(model, replace)
        self.assertEqual(code, 0, stderr)
        self.assertIn("Buch", rest)

    # -- defects 1 and 3, acceptance 5: non-finite weights written by hand -----------
    def patched_model(self, source, tensor, value, name):
        """A copy of `source` with element 0 of `tensor` set to `value` (in the
        tensor's own dtype), bypassing the converter as a hostile file would."""
        model = read_model(source)
        entry = model.entries[tensor]
        data = bytearray(read_bytes(source))
        dtype = {"f32": np.float32, "f16": np.float16}[entry.dtype]
        encoded = np.array([value], dtype=dtype).tobytes()
        at = model.segment_start + entry.offset
        data[at:at + len(encoded)] = encoded
        path = self.path(name)
        with open(path, "wb") as handle:
            handle.write(reseal(data))
        return path

    def test_non_finite_weights_anywhere_are_refused_at_load(self):
        placements = {
            INT8_MODEL: ["embedding.source_scale", "encoder.layers.0.ffn.in.weight_scale",
                         "decoder.layers.2.ffn_norm.weight", "decoder.final_norm.bias",
                         "output.bias", "position.table"],
            FP16_MODEL: ["embedding.source", "encoder.layers.1.self_attn.qkv.weight",
                         "decoder.layers.0.cross_attn_norm.bias", "decoder.final_norm.weight",
                         "output.bias"],
        }
        for source, tensors in placements.items():
            for tensor in tensors:
                for value, shown in ((np.nan, "NaN"), (np.inf, "+inf"), (-np.inf, "-inf")):
                    with self.subTest(model=os.path.basename(source), tensor=tensor, value=shown):
                        path = self.patched_model(source, tensor, value, "nonfinite.emt")
                        for args in (["inspect", path], ["translate", "-m", path]):
                            result = run(*args, stdin=b"A dog runs.\n")
                            self.assert_clean_failure(
                                result, f"tensor '{tensor}' holds {shown} at [0",
                                "weights must be finite")
                            self.assertEqual(result.stdout if args[0] == "translate" else b"",
                                             b"")

    def filled_model(self, source, tensors, value, name, first=None):
        """A copy of `source` with every element of each f32 tensor set to
        `value`, and element 0 of the first tensor to `first` if given."""
        model = read_model(source)
        data = bytearray(read_bytes(source))
        for i, tensor in enumerate(tensors):
            entry = model.entries[tensor]
            self.assertEqual(entry.dtype, "f32")
            values = np.full(entry.size // 4, value, np.float32)
            if i == 0 and first is not None:
                values[0] = first
            at = model.segment_start + entry.offset
            data[at:at + entry.size] = values.tobytes()
        path = self.path(name)
        with open(path, "wb") as handle:
            handle.write(reseal(data))
        return path

    def test_subnormal_activations_into_an_int8_linear_act_as_zeros(self):
        """Found by the model_file fuzzer under UBSan: a row whose max|x| is
        subnormal made the int8 activation quantizer's 127 / max|x| inf, and
        its zeros times inf NaN, cast to int (undefined). Here the norm before
        the cross-attention query (post-norm: its output is that int8
        linear's input) puts out zeros and one value near 1e-39; the
        translation must equal the one whose norm puts out only zeros."""
        norm = ["decoder.layers.0.self_attn_norm.weight", "decoder.layers.0.self_attn_norm.bias"]
        tiny = self.filled_model(INT8_MODEL, norm, 0.0, "subnormal.emt", first=1e-39)
        zero = self.filled_model(INT8_MODEL, norm, 0.0, "zero.emt")
        lines = b"Two dogs are playing in the snow.\nA little girl is reading a book.\n"
        for beam in ("1", "4"):
            with self.subTest(beam=beam):
                got = run("translate", "-m", tiny, "--beam", beam, stdin=lines)
                want = run("translate", "-m", zero, "--beam", beam, stdin=lines)
                self.assertEqual(got.returncode, 0, got.stderr.decode("utf-8", "replace"))
                self.assertEqual(want.returncode, 0, want.stderr.decode("utf-8", "replace"))
                self.assertEqual(got.stdout.count(b"\n"), 2)
                self.assertEqual(got.stdout, want.stdout)

    # -- defect 8: the embedded tokenizer ---------------------------------------------
    def test_a_corrupt_tokenizer_is_refused_by_inspect_and_translate(self):
        """inspect used to pass a tokenizer with 3,900 bytes overwritten, and
        translate then failed inside SentencePiece. Now both refuse it at load,
        whether the damage breaks its structure or not (one changed byte)."""
        model = read_model(INT8_MODEL)
        data = read_bytes(INT8_MODEL)
        blob = model.header.tokenizer_model
        start = data.find(blob)
        self.assertGreater(start, 0)
        rng = np.random.default_rng(8)
        for length in (1, 4, 3900):
            for at in (start + 100, start + len(blob) // 2, start + len(blob) - length - 1):
                with self.subTest(length=length, offset=at - start):
                    corrupt = bytearray(data)
                    corrupt[at:at + length] = rng.integers(0, 256, length, dtype=np.uint8).tobytes()
                    if corrupt == bytearray(data):
                        continue
                    path = self.path("tokenizer.emt")
                    with open(path, "wb") as handle:
                        handle.write(reseal(corrupt))
                    for args in (["inspect", path], ["translate", "-m", path]):
                        self.assert_clean_failure(run(*args, stdin=b"A dog.\n"),
                                                  "tokenizer model:")

    def test_fp16_activations_that_overflow_fail_each_line_clearly(self):
        """Every weight of the first encoder FFN at 65504 (the largest half):
        on XNNPACK's f16 GEMMs (forced with EDGEMT_CPU_FEATURES=fp16, as on an
        fp16-arithmetic ARM core) the activations overflow to inf."""
        model = read_model(FP16_MODEL)
        entry = model.entries["encoder.layers.0.ffn.in.weight"]
        data = bytearray(read_bytes(FP16_MODEL))
        at = model.segment_start + entry.offset
        data[at:at + entry.size] = np.full(entry.size // 2, 65504.0, np.float16).tobytes()
        path = self.path("overflow.fp16.emt")
        with open(path, "wb") as handle:
            handle.write(reseal(data))
        env = dict(os.environ, EDGEMT_CPU_FEATURES="fp16")
        lines = b"Two dogs are playing in the snow.\nA little girl is reading a book.\n"
        for beam in ("1", "4"):
            with self.subTest(beam=beam):
                result = run("translate", "-m", path, "--beam", beam, stdin=lines, env=env)
                stderr = self.assert_clean_failure(result, "line 1:", "line 2:",
                                                   "NaN or infinite scores")
                self.assertEqual(result.stdout, b"\n\n", stderr)


if __name__ == "__main__":
    unittest.main()
