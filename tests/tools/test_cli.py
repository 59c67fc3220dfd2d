"""The `edgemt` command line on good and bad input.

Needs the built binary, whose path ctest passes in EDGEMT_CLI. Every bad
input must give a clear message on stderr and a non-zero status, never a
crash (a negative return code, i.e. a signal, fails the test).
"""

import os
import struct
import subprocess
import unittest

import numpy as np

import helpers
from edgemt_tools import fbs
from edgemt_tools.model_file import read_model, write_unvalidated

CLI = helpers.CLI
MODEL = helpers.BUNDLED_MODEL


def run(*args, stdin=""):
    return subprocess.run([CLI, *args], input=stdin.encode("utf-8") if isinstance(stdin, str)
                          else stdin, capture_output=True, check=False, timeout=300)


class CliTest(helpers.CliTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(MODEL, "rb") as handle:
            cls.model_bytes = handle.read()

    def write(self, name, data):
        path = self.path(name)
        with open(path, "wb") as handle:
            handle.write(data)
        return path

    def assert_clean_failure(self, result, *fragments):
        self.assertGreater(result.returncode, 0, "expected a non-zero exit, not a signal")
        stderr = result.stderr.decode("utf-8", "replace")
        for fragment in fragments:
            self.assertIn(fragment, stderr)
        return stderr

    # -- good input ---------------------------------------------------------------
    def test_translates_lines_in_order_and_keeps_empty_lines(self):
        text = "Two dogs are playing in the snow.\n\n   \nA little girl is reading a book.\n"
        result = run("translate", "-m", MODEL, "--batch", "2", stdin=text)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.decode("utf-8").split("\n")
        self.assertEqual(len(lines), 5)  # four lines and the final newline
        self.assertEqual(lines[1], "")
        self.assertEqual(lines[2], "")
        self.assertIn("Hunde", lines[0])
        self.assertIn("Buch", lines[3])

    def test_output_matches_the_pytorch_reference(self):
        sources = helpers_lines("test_2016_flickr.en")[:40]
        expected = helpers_lines("torch_fp16_greedy.de")[:40]
        result = run("translate", "-m", helpers.BUNDLED_FP16_MODEL,
                     stdin="".join(s + "\n" for s in sources))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.decode("utf-8").splitlines(), expected)

    def test_greedy_shortcut_changes_no_output(self):
        # The fp16 model computes in f32 here: greedy output without --json
        # takes the arg-max shortcut, --no-greedy-shortcut and --json do not.
        import json
        import math
        sources = "".join(s + "\n" for s in helpers_lines("test_2016_flickr.en")[:60])
        fast = run("translate", "-m", helpers.BUNDLED_FP16_MODEL, stdin=sources)
        full = run("translate", "-m", helpers.BUNDLED_FP16_MODEL, "--no-greedy-shortcut",
                   stdin=sources)
        scored = run("translate", "-m", helpers.BUNDLED_FP16_MODEL, "--json", stdin=sources)
        for result in (fast, full, scored):
            self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(fast.stdout, full.stdout)
        objects = [json.loads(line) for line in scored.stdout.decode("utf-8").splitlines()]
        self.assertEqual([o["translation"] for o in objects], fast.stdout.decode("utf-8").splitlines())
        self.assertTrue(all(math.isfinite(o["score"]) and o["score"] < 0 for o in objects))

    def test_int8_output_is_the_same_on_every_int8_kernel(self):
        """models/reference/edgemt_int8_greedy.de is this runtime's int8 output; the
        fastest kernel of this CPU, the portable one and, on x86, the AVX-VNNI,
        AVX-512 BW and AVX2 ones where the CPU has them (EDGEMT_CPU_FEATURES hides
        what is faster) must all reproduce it (the aarch64 build holds its NEON kernels to
        the same file)."""
        sources = helpers_lines("test_2016_flickr.en")[:60]
        expected = helpers_lines("edgemt_int8_greedy.de")[:60]
        stdin = "".join(s + "\n" for s in sources)
        for features in (None, "portable", "avx-vnni", "avx512bw", "avx2"):
            with self.subTest(EDGEMT_CPU_FEATURES=features):
                env = dict(os.environ)
                env.pop("EDGEMT_CPU_FEATURES", None)
                if features:
                    env["EDGEMT_CPU_FEATURES"] = features
                result = subprocess.run([CLI, "translate", "-m", MODEL], input=stdin.encode(),
                                        capture_output=True, env=env, timeout=300)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(result.stdout.decode("utf-8").splitlines(), expected)

    def test_input_and_output_files(self):
        source = self.write("in.en", b"A man is riding a bike.\r\n")
        output = self.path("out.de")
        result = run("translate", "-m", MODEL, "-i", source, "-o", output, "--beam", "4")
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(output, encoding="utf-8") as handle:
            self.assertIn("Mann", handle.read())

    def test_more_threads_than_cpus_still_translates_without_warning(self):
        """Pinned to one CPU with taskset, --threads 2 oversubscribes: the same
        output, status 0 and no warning (the workers sleep instead of spinning
        and the caller never waits for one to get the CPU)."""
        cpu = min(os.sched_getaffinity(0))
        text = "Two dogs are playing in the snow.\nA little girl is reading a book.\n"
        outputs = {}
        for threads in ("1", "2"):
            result = subprocess.run(["taskset", "-c", str(cpu), CLI, "translate", "-m", MODEL,
                                     "--threads", threads], input=text.encode(),
                                    capture_output=True, timeout=300)
            self.assertEqual(result.returncode, 0, result.stderr)
            outputs[threads] = result.stdout
            self.assertNotIn("warning", result.stderr.decode("utf-8"))
        self.assertEqual(outputs["1"], outputs["2"])
        bench = subprocess.run(["taskset", "-c", str(cpu), CLI, "bench", "-m", MODEL,
                                "--sentences", "2", "--threads", "1,2"],
                               capture_output=True, timeout=300)
        self.assertEqual(bench.returncode, 0, bench.stderr)
        self.assertNotIn("warning", bench.stderr.decode("utf-8"))
        self.assertIn("usable CPUs: 1; competing busy processes: 0", bench.stdout.decode("utf-8"))
        self.assertEqual(bench.stdout.decode("utf-8").count("idle CPU (threads"), 2)

    def test_bench_busy_starts_and_reaps_competing_processes(self):
        """--busy=N forks N spinning processes for the timed part and reaps them;
        the bare --busy starts one per usable CPU; idle CPU is printed per
        thread count."""
        cpu = min(os.sched_getaffinity(0))
        result = subprocess.run(["taskset", "-c", str(cpu), CLI, "bench", "-m", MODEL,
                                 "--sentences", "2", "--threads", "1,2", "--busy",
                                 "--idle-seconds", "1"], capture_output=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        out = result.stdout.decode("utf-8")
        self.assertIn("usable CPUs: 1; competing busy processes: 1", out)
        self.assertRegex(out, r"idle CPU \(threads 2, translator alive, no call\): [0-9.]+ ms over")
        result = run("bench", "-m", MODEL, "--sentences", "2", "--busy=2", "--idle-seconds", "0")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("competing busy processes: 2", result.stdout.decode("utf-8"))
        self.assertNotIn("idle CPU", result.stdout.decode("utf-8"))
        self.assert_clean_failure(run("bench", "-m", MODEL, "--busy=0"), "--busy")

    def test_inspect_prints_config_tensors_and_totals(self):
        # The summary; --tensors adds every tensor and the totals
        # (tests/tools/test_cli_inspect.py checks both in detail).
        result = run("inspect", MODEL)
        self.assertEqual(result.returncode, 0, result.stderr)
        out = result.stdout.decode("utf-8")
        for fragment in ("format version     11", "family             transformer", "en -> de",
                         "d_model          256", "max length       256 tokens",
                         "precision          i8, int8-smoothed-per-row-dynamic",
                         "compute path       int8 (int8-smoothed-per-row-dynamic: own int8 GEMM",
                         "tensors            176 entries"):
            self.assertIn(fragment, out)
        result = run("inspect", "--tensors", MODEL)
        self.assertEqual(result.returncode, 0, result.stderr)
        out = result.stdout.decode("utf-8")
        for fragment in ("encoder.layers.0.self_attn.qkv.weight", "encoder.layers.0.ffn.in.weight_scale",
                         "[768, 256]", "file size"):
            self.assertIn(fragment, out)

    def test_bench_prints_figures_and_checks_outputs(self):
        result = run("bench", "-m", MODEL, "--sentences", "4", "--batch", "1,2", "--beam", "1",
                     "--profile")
        self.assertEqual(result.returncode, 0, result.stderr)
        out = result.stdout.decode("utf-8")
        for fragment in ("load ", "lat p50", "sent/s", "GEMM total", "peak RSS",
                         "outputs identical across configurations"):
            self.assertIn(fragment, out)
        self.assert_clean_failure(run("bench", "-m", MODEL, "--batch", "0"), "--batch")

    def test_bench_greedy_scores_on_and_off(self):
        result = run("bench", "-m", helpers.BUNDLED_FP16_MODEL, "--sentences", "6",
                     "--greedy-scores", "on,off", "--idle-seconds", "0")
        self.assertEqual(result.returncode, 0, result.stderr)
        out = result.stdout.decode("utf-8")
        self.assertIn("greedy scores on\n", out)
        self.assertIn("greedy scores off (", out)
        self.assertIn("outputs identical across configurations", out)
        self.assert_clean_failure(run("bench", "-m", MODEL, "--greedy-scores", "maybe"),
                                  "--greedy-scores", "'maybe'")

    def test_bench_default_input_is_found_beside_the_model(self):
        # Nothing of the build machine is compiled in: without -i, bench reads
        # reference/test_2016_flickr.en in the model's folder (the bundled
        # model has it), and without that file it asks for -i.
        model = self.write("bench_model.emt", self.model_bytes)
        stderr = self.assert_clean_failure(run("bench", "-m", model, "--sentences", "1"),
                                           "-i FILE", "reference/test_2016_flickr.en")
        self.assertIn(self.tmp, stderr)
        os.makedirs(self.path("reference"), exist_ok=True)
        self.write("reference/test_2016_flickr.en", b"A man is riding a bike.\n")
        result = run("bench", "-m", model, "--sentences", "1", "--warmup", "0")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("lat p50", result.stdout.decode("utf-8"))

    def test_help_tells_the_options(self):
        for command in ("translate", "inspect", "bench"):
            result = run(command, "--help")
            self.assertEqual(result.returncode, 0)
            self.assertIn(b"usage: edgemt " + command.encode(), result.stdout)
        self.assertIn(b"--beam", run("translate", "--help").stdout)

    # -- bad input: the line ------------------------------------------------------
    def test_invalid_utf8_line_is_reported_and_left_empty(self):
        result = run("translate", "-m", MODEL, stdin=b"A dog runs.\n\xff\xfe bad\nA cat sleeps.\n")
        stderr = self.assert_clean_failure(result, "line 2", "UTF-8")
        lines = result.stdout.decode("utf-8").split("\n")
        self.assertEqual(len(lines), 4, stderr)
        self.assertEqual(lines[1], "")
        self.assertNotEqual(lines[0], "")
        self.assertNotEqual(lines[2], "")

    def test_line_longer_than_the_position_table(self):
        long_line = " ".join(["elephant"] * 300)
        # Without splitting (with it, the line is cut into pieces that fit:
        # test_cli_inputs.py).
        result = run("translate", "-m", MODEL, "--no-split-sentences",
                     stdin=f"A dog runs.\n{long_line}\n")
        self.assert_clean_failure(result, "line 2", "more than the 256")
        lines = result.stdout.decode("utf-8").split("\n")
        self.assertEqual(lines[1], "")
        self.assertNotEqual(lines[0], "")

    # -- bad input: flags -----------------------------------------------------------
    def test_bad_flags(self):
        cases = [(["translate", "-m", MODEL, "--beam", "0"], "--beam"),
                 (["translate", "-m", MODEL, "--beam", "x"], "--beam"),
                 (["translate", "-m", MODEL, "--threads", "-2"], "--threads"),
                 (["translate", "-m", MODEL, "--bogus"], "unknown option '--bogus'"),
                 (["translate"], "a model is required"),
                 (["translate", "-m"], "needs a value"),
                 (["frobnicate"], "unknown command"),
                 (["inspect"], "expected one model file")]
        for args, fragment in cases:
            with self.subTest(args=args):
                result = run(*args)
                self.assertEqual(result.returncode, 2)
                self.assertIn(fragment, result.stderr.decode("utf-8"))

    # -- bad input: the model file ------------------------------------------------
    def check_bad_model(self, data, *fragments):
        path = self.write("bad.emt", data)
        for args in (["inspect", path], ["translate", "-m", path]):
            with self.subTest(args=args[0]):
                self.assert_clean_failure(run(*args, stdin="A dog.\n"), *fragments)

    def test_missing_file(self):
        missing = self.path("nope.emt")
        self.assert_clean_failure(run("inspect", missing), "nope.emt", "No such file")
        self.assert_clean_failure(run("translate", "-m", missing), "No such file")

    def test_truncated_file(self):
        for cut in (3, 100, 4096, len(self.model_bytes) // 2, len(self.model_bytes) - 1):
            with self.subTest(cut=cut):
                self.check_bad_model(self.model_bytes[:cut], "cannot load model")

    def test_wrong_identifier(self):
        data = bytearray(self.model_bytes)
        data[8:12] = b"ONNX"
        self.check_bad_model(bytes(data), "identifier")

    def test_unsupported_version(self):
        data = self.model_bytes
        # Locate the version field: patch via the FlatBuffers root table.
        root = struct.unpack_from("<I", data, 4)[0] + 4
        vtable = root - struct.unpack_from("<i", data, root)[0]
        field_offset = struct.unpack_from("<H", data, vtable + 4)[0]  # field 0: format_version
        self.assertNotEqual(field_offset, 0)
        patched = bytearray(data)
        unknown = fbs.NEWEST_FORMAT_VERSION + 1  # one past what this runtime reads
        struct.pack_into("<I", patched, root + field_offset, unknown)
        self.check_bad_model(bytes(patched), f"version {unknown}")

    def test_corrupted_bytes_never_crash(self):
        rng = np.random.default_rng(5)
        flatbuffer_end = struct.unpack_from("<I", self.model_bytes, 0)[0] + 4
        for trial in range(40):
            data = bytearray(self.model_bytes)
            for position in rng.integers(0, flatbuffer_end, size=8):
                data[int(position)] ^= 0xA5
            path = self.write("corrupt.emt", bytes(data))
            result = run("inspect", path)
            self.assertGreaterEqual(result.returncode, 0, f"trial {trial} crashed")

    def test_tensor_shape_disagrees_with_config(self):
        model = read_model(MODEL)
        tensors = {}
        aliases = {}
        for name in model.table_order:
            entry = model.entries[name]
            owner = next((n for n in model.table_order if model.entries[n].offset == entry.offset
                          and n < name), None)
            if owner is not None:
                aliases[name] = owner
                continue
            tensors[name] = model.array(name)
        name = "encoder.layers.1.ffn.in.weight"
        tensors[name] = tensors[name][:, :255]
        path = self.path("shape.emt")
        write_unvalidated(path, model.header, tensors, aliases)
        with open(path, "rb") as handle:
            self.check_bad_model(handle.read(), name, "[1024, 255]", "[1024, 256]")


def helpers_lines(name):
    with open(os.path.join(helpers.REFERENCE_DIR, name), encoding="utf-8") as handle:
        return handle.read().splitlines()


if __name__ == "__main__":
    unittest.main()
