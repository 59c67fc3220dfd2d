"""`edgemt translate` for people and programs: interactive pipes, the
progress bar, --json and sentence splitting.

- A program that writes one line into a pipe and waits for its translation
  gets it (the reader translates what has arrived when no further whole
  line is waiting) instead of waiting for a full batch or EOF.
- The progress bar shows on stderr when stderr is a terminal and the input
  is not (checked in a pseudo-terminal), never in stdout, and is cleared at
  the end; --progress / --no-progress force it.
- --json writes one valid JSON object per input line, also for empty and
  failed lines.
- A line of several sentences is translated sentence by sentence and joined;
  a line of one sentence is translated exactly as without splitting.

Needs the built binary (EDGEMT_CLI) and the bundled model.
"""

import errno
import json
import os
import pty
import select
import shutil
import subprocess
import tempfile
import time
import unittest

import numpy as np

import helpers
from edgemt_tools.model_file import read_model
from edgemt_tools.testing import reseal

CLI = helpers.CLI
MODEL = helpers.BUNDLED_MODEL
SOURCES = helpers.reference_lines("test_2016_flickr.en")
INT8_REFERENCE = helpers.reference_lines("edgemt_int8_greedy.de")
TWO_SENTENCES = "Two dogs are playing in the snow. A little girl is reading a book."


def run(*args, stdin=b"", timeout=300):
    if isinstance(stdin, str):
        stdin = stdin.encode("utf-8")
    return subprocess.run([CLI, *args], input=stdin, capture_output=True, check=False,
                          timeout=timeout)


def translate_lines(lines, *flags):
    """The plain output lines of `lines` (each must translate)."""
    result = run("translate", "-m", MODEL, *flags, stdin="".join(l + "\n" for l in lines))
    if result.returncode != 0:
        raise AssertionError(result.stderr.decode("utf-8", "replace"))
    return result.stdout.decode("utf-8").split("\n")[:-1]


def read_line(fd, timeout):
    """Bytes of `fd` up to and including the next '\\n', or what came before
    the timeout ran out (no '\\n' then)."""
    data = b""
    deadline = time.monotonic() + timeout
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        byte = os.read(fd, 1)
        if not byte:
            break
        data += byte
    return data


def read_until_closed(fd):
    """Everything a pty master gives until the slave side is closed."""
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError as error:  # EIO: no process has the slave open any more
            if error.errno == errno.EIO:
                break
            raise
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


class InteractiveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        helpers.require_cli()

    def start(self, *flags):
        process = subprocess.Popen([CLI, "translate", "-m", MODEL, *flags],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        self.addCleanup(self.stop, process)
        return process

    @staticmethod
    def stop(process):
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream and not stream.closed:
                stream.close()

    def ask(self, process, text):
        process.stdin.write(text.encode("utf-8"))
        process.stdin.flush()

    def test_each_line_is_answered_before_the_next_is_written(self):
        """Before: one line in a pipe waited for 15 more (or EOF) forever."""
        process = self.start()
        for sentence, word in (("Two dogs are playing in the snow.", "Hunde"),
                               ("A little girl is reading a book.", "Buch")):
            self.ask(process, sentence + "\n")
            line = read_line(process.stdout.fileno(), 30)
            self.assertTrue(line.endswith(b"\n"), f"no translation within 30 s of {sentence!r}")
            self.assertIn(word, line.decode("utf-8"))
        # Three lines at once, then wait: all three come back.
        self.ask(process, "A man rides a bike.\n\nA dog runs.\n")
        answers = [read_line(process.stdout.fileno(), 30) for _ in range(3)]
        self.assertTrue(all(a.endswith(b"\n") for a in answers), answers)
        self.assertEqual(answers[1], b"\n")
        process.stdin.close()
        self.assertEqual(process.wait(timeout=60), 0, process.stderr.read())
        self.assertEqual(process.stdout.read(), b"")

    def test_json_lines_and_a_half_written_line(self):
        """A line written in two parts is answered once its end arrives."""
        process = self.start("--json")
        self.ask(process, "Two dogs are play")
        self.assertEqual(read_line(process.stdout.fileno(), 1), b"")
        self.ask(process, "ing in the snow.\n")
        answer = json.loads(read_line(process.stdout.fileno(), 30))
        self.assertEqual(answer["line"], 1)
        self.assertIn("Hunde", answer["translation"])
        process.stdin.close()
        self.assertEqual(process.wait(timeout=60), 0)

    def test_lines_from_a_file_fill_batches_and_match_the_reference(self):
        """Throughput input is unchanged: the whole file is read in batches."""
        result = run("translate", "-m", MODEL, "--batch", "16",
                     stdin="".join(s + "\n" for s in SOURCES[:48]))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.decode("utf-8").splitlines(), INT8_REFERENCE[:48])


class ProgressTest(helpers.CliTestCase):
    LINES = 60

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.source = os.path.join(cls.tmp, "sixty.en")
        with open(cls.source, "w", encoding="utf-8") as handle:
            handle.write("".join(s + "\n" for s in SOURCES[:cls.LINES]))

    def run_with_terminal_stderr(self, *flags, stdin=subprocess.DEVNULL, stdin_data=None):
        """Runs translate with stderr on a pty: (pty output, stdout, status)."""
        master, slave = pty.openpty()
        try:
            process = subprocess.Popen([CLI, "translate", "-m", MODEL, *flags], stdin=stdin,
                                       stdout=subprocess.PIPE, stderr=slave)
        finally:
            os.close(slave)
        try:
            if stdin_data is not None:
                process.stdin.write(stdin_data)
                process.stdin.close()
            terminal = read_until_closed(master)
            stdout = process.stdout.read()
            status = process.wait(timeout=300)
        finally:
            os.close(master)
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdout.close()
        return terminal.decode("utf-8", "replace"), stdout.decode("utf-8"), status

    def assert_translations(self, stdout):
        self.assertEqual(stdout.splitlines(), INT8_REFERENCE[:self.LINES])

    def test_bar_on_a_terminal_with_counts_speed_eta_and_cleared_at_the_end(self):
        for how in ("-i FILE", "stdin from the file"):
            with self.subTest(input=how):
                if how == "-i FILE":
                    terminal, stdout, status = self.run_with_terminal_stderr("-i", self.source)
                else:
                    with open(self.source, "rb") as handle:
                        terminal, stdout, status = self.run_with_terminal_stderr(stdin=handle)
                self.assertEqual(status, 0, terminal)
                self.assert_translations(stdout)
                self.assertNotIn("sent/s", stdout)
                self.assertIn("\r", terminal)
                self.assertIn("sent/s", terminal)
                self.assertIn("ETA", terminal)  # the input's size is known
                self.assertRegex(terminal, r"\] 100%  60 lines  60 sent")
                # Cleared: the last thing written is spaces between two '\r'.
                self.assertRegex(terminal, r"\r +\r$")

    def test_no_eta_without_the_input_size_and_no_bar_when_switched_off(self):
        data = "".join(s + "\n" for s in SOURCES[:self.LINES]).encode("utf-8")
        terminal, stdout, status = self.run_with_terminal_stderr(stdin=subprocess.PIPE,
                                                                 stdin_data=data)
        self.assertEqual(status, 0, terminal)
        self.assert_translations(stdout)
        self.assertIn("60 lines  60 sent", terminal)
        self.assertIn("sent/s", terminal)
        self.assertNotIn("ETA", terminal)
        self.assertNotIn("%", terminal)
        terminal, stdout, status = self.run_with_terminal_stderr("-i", self.source,
                                                                 "--no-progress")
        self.assertEqual(status, 0, terminal)
        self.assert_translations(stdout)
        self.assertEqual(terminal, "")

    def test_no_bar_when_stderr_is_not_a_terminal_unless_forced(self):
        result = run("translate", "-m", MODEL, "-i", self.source)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, b"")
        self.assert_translations(result.stdout.decode("utf-8"))
        forced = run("translate", "-m", MODEL, "-i", self.source, "--progress")
        self.assertEqual(forced.returncode, 0, forced.stderr)
        self.assertIn(b"60 lines  60 sent", forced.stderr)
        self.assert_translations(forced.stdout.decode("utf-8"))

    def test_errors_are_printed_on_their_own_line_above_the_bar(self):
        data = ("A dog runs.\n".encode() + b"\xff bad\n" +
                "".join(s + "\n" for s in SOURCES[:20]).encode())
        path = self.path("bad.en")
        with open(path, "wb") as handle:
            handle.write(data)
        terminal, stdout, status = self.run_with_terminal_stderr("-i", path, "--batch", "1")
        self.assertEqual(status, 1, terminal)
        self.assertEqual(len(stdout.split("\n")), 23)
        # The message starts a line: the bar before it was cleared with '\r'.
        self.assertRegex(terminal, r"\r +\redgemt: line 2: input is not valid UTF-8")


class JsonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.isfile(CLI):
            raise unittest.SkipTest(f"edgemt binary not built: {CLI}")

    def test_one_object_per_line_with_empty_and_failed_lines(self):
        lines = ["Two dogs are playing in the snow.".encode(), b"", b"   ",
                 b"\xff\xfe bad", 'A man says "hello" to a dog.\tTwice.'.encode(),
                 TWO_SENTENCES.encode(), "Ein Mädchen".encode()]
        result = run("translate", "-m", MODEL, "--json", stdin=b"\n".join(lines) + b"\n")
        self.assertEqual(result.returncode, 1)  # the invalid line
        self.assertIn(b"line 4: input is not valid UTF-8", result.stderr)
        out = result.stdout.decode("utf-8")
        self.assertTrue(out.endswith("\n"))
        objects = [json.loads(text) for text in out.split("\n")[:-1]]
        self.assertEqual(len(objects), len(lines))
        self.assertEqual([o["line"] for o in objects], list(range(1, len(lines) + 1)))
        plain = translate_lines(["Two dogs are playing in the snow.", TWO_SENTENCES])
        first = objects[0]
        self.assertEqual(first["translation"], plain[0])
        self.assertLess(first["score"], 0.0)
        self.assertEqual("".join(first["tokens"]).replace("\u2581", " ").strip(), plain[0])
        self.assertNotIn("sentences", first)
        self.assertNotIn("alignment", first)
        for empty in objects[1:3]:
            self.assertEqual(empty, {"line": empty["line"], "translation": "", "score": 0,
                                     "tokens": []})
        failed = objects[3]
        self.assertEqual(failed["translation"], "")
        self.assertIn("not valid UTF-8", failed["error"])
        self.assertNotIn("error", objects[4])
        split = objects[5]
        self.assertEqual(split["translation"], plain[1])
        self.assertEqual([s["source"] for s in split["sentences"]],
                         ["Two dogs are playing in the snow.", "A little girl is reading a book."])
        self.assertAlmostEqual(split["score"], sum(s["score"] for s in split["sentences"]),
                               places=4)
        self.assertEqual(split["tokens"], [t for s in split["sentences"] for t in s["tokens"]])
        self.assertEqual(split["translation"],
                         " ".join(s["translation"] for s in split["sentences"]))

    def test_json_of_a_too_long_line_and_a_too_long_sentence(self):
        long_sentence = "Elephants " + " ".join(["elephant"] * 300) + "."
        stdin = ("x" * 4000 + "\n" + "A dog runs. " + long_sentence + "\n").encode()
        result = run("translate", "-m", MODEL, "--json", "--max-line-bytes", "3000",
                     stdin=stdin)
        self.assertEqual(result.returncode, 1)
        objects = [json.loads(t) for t in result.stdout.decode("utf-8").splitlines()]
        self.assertEqual(len(objects), 2)
        self.assertEqual(objects[0]["error"], "4000 bytes, more than --max-line-bytes (3000)")
        # The sentence over the model's 256 tokens is cut into pieces that
        # fit (test_cli_inputs.py); whole, without splitting, it fails.
        self.assertNotIn("error", objects[1])
        self.assertGreater(len(objects[1]["sentences"]), 2)
        whole = run("translate", "-m", MODEL, "--json", "--no-split-sentences",
                    stdin=(long_sentence + "\n").encode())
        self.assertEqual(whole.returncode, 1)
        self.assertIn("source has", json.loads(whole.stdout)["error"])
        self.assertIn(b"line 1: source has", whole.stderr)


class SentenceSplittingTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.isfile(CLI):
            raise unittest.SkipTest(f"edgemt binary not built: {CLI}")

    def test_sentences_are_translated_alone_and_joined(self):
        first, second = "Two dogs are playing in the snow.", "A little girl is reading a book."
        alone = translate_lines([first, second])
        self.assertEqual(translate_lines([TWO_SENTENCES]), [alone[0] + " " + alone[1]])
        # The model was trained on single sentences: whole, the line comes out
        # differently (here the two sentences become one).
        whole = translate_lines([TWO_SENTENCES], "--no-split-sentences")
        self.assertEqual(len(whole), 1)
        self.assertNotEqual(whole, [alone[0] + " " + alone[1]])

    def test_lines_of_one_sentence_are_unchanged_by_splitting(self):
        lines = SOURCES[:40] + ["  Two dogs are playing in the snow.  ", "Mr. Smith rides a bike."]
        self.assertEqual(translate_lines(lines), translate_lines(lines, "--no-split-sentences"))

    def test_a_line_of_more_sentences_than_a_batch(self):
        paragraph = "A dog runs. A cat sleeps. A man rides a bike. A girl reads."
        lines = [paragraph, "Two dogs are playing in the snow.", "", paragraph]
        expected = translate_lines(lines, "--batch", "16")
        self.assertEqual(len(expected), 4)
        self.assertEqual(expected[2], "")
        self.assertEqual(expected[0], expected[3])
        for batch in ("1", "2", "3"):
            with self.subTest(batch=batch):
                self.assertEqual(translate_lines(lines, "--batch", batch), expected)

    def test_a_sentence_that_fails_fails_its_line_once(self):
        """Every weight of the first encoder FFN of the fp16 model at 65504: on
        f16 GEMMs (EDGEMT_CPU_FEATURES=fp16) every sentence's scores overflow.
        With --batch 1 a split line's sentences fail in separate batches: the
        line is reported once, after all of them, and the run ends."""
        model = read_model(helpers.BUNDLED_FP16_MODEL)
        entry = model.entries["encoder.layers.0.ffn.in.weight"]
        with open(helpers.BUNDLED_FP16_MODEL, "rb") as handle:
            data = bytearray(handle.read())
        at = model.segment_start + entry.offset
        data[at:at + entry.size] = np.full(entry.size // 2, 65504.0, np.float16).tobytes()
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "overflow.fp16.emt")
        with open(path, "wb") as handle:
            handle.write(reseal(data))
        env = dict(os.environ, EDGEMT_CPU_FEATURES="fp16")
        stdin = "A dog runs. A cat sleeps. A man rides.\n\nA girl reads.\n".encode()
        for batch in ("1", "2", "16"):
            with self.subTest(batch=batch):
                result = subprocess.run([CLI, "translate", "-m", path, "--batch", batch, "--json"],
                                        input=stdin, capture_output=True, env=env, timeout=120)
                stderr = result.stderr.decode("utf-8", "replace")
                self.assertEqual(result.returncode, 1, stderr)
                self.assertEqual(stderr.count("edgemt: line 1: sentence 1 of 3: "), 1, stderr)
                self.assertEqual(stderr.count("edgemt: line 3: "), 1, stderr)
                self.assertNotIn("line 2", stderr)
                objects = [json.loads(t) for t in result.stdout.decode("utf-8").splitlines()]
                self.assertEqual([o["line"] for o in objects], [1, 2, 3])
                self.assertIn("NaN or infinite", objects[0]["error"])
                self.assertNotIn("error", objects[1])

    def test_source_lang_chooses_the_rules(self):
        # German: "am 3. Mai" does not end a sentence; English rules split it.
        line = "Er kam am 3. Mai zum Haus."
        default = run("translate", "-m", MODEL, "--json", "--source-lang", "de", stdin=line + "\n")
        english = run("translate", "-m", MODEL, "--json", "--source-lang", "en", stdin=line + "\n")
        self.assertEqual(default.returncode, 0, default.stderr)
        self.assertEqual(english.returncode, 0, english.stderr)
        self.assertNotIn("sentences", json.loads(default.stdout))
        self.assertEqual(len(json.loads(english.stdout)["sentences"]), 2)


class FlagsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.isfile(CLI):
            raise unittest.SkipTest(f"edgemt binary not built: {CLI}")

    def test_bad_flags_and_combinations_exit_2_with_a_message(self):
        cases = [(["--progress", "--no-progress"], "contradict"),
                 (["--split-sentences", "--no-split-sentences"], "contradict"),
                 (["--no-split-sentences", "--source-lang", "en"], "--source-lang"),
                 (["--source-lang="], "--source-lang"),
                 (["--json=yes"], "'--json' takes no value"),
                 (["--attention-layer", "1"], "--attention-layer"),
                 (["--attention-head", "0"], "--attention-head"),
                 (["--align", "--attention-layer", "x"], "--attention-layer"),
                 (["--align", "--attention-head", "-1"], "--attention-head"),
                 (["--attention="], "--attention"),
                 (["--align", "--attention-layer", "7"], "--attention-layer")]
        for flags, fragment in cases:
            with self.subTest(flags=flags):
                result = run("translate", "-m", MODEL, *flags, stdin=b"A dog.\n")
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(fragment, result.stderr.decode("utf-8"))
                self.assertEqual(result.stdout, b"")

    def test_help_names_the_new_flags_and_the_splitting_decision(self):
        result = run("translate", "--help")
        self.assertEqual(result.returncode, 0)
        text = result.stdout.decode("utf-8")
        for flag in ("--json", "--progress", "--no-progress", "--split-sentences",
                     "--no-split-sentences", "--source-lang", "--align", "--attention DIR",
                     "--show-attention", "--attention-layer", "--attention-head"):
            self.assertIn(flag, text)
        self.assertIn("trained on single sentences", text)


if __name__ == "__main__":
    unittest.main()
