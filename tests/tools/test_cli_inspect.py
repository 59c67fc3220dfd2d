"""`edgemt inspect`: a summary that fits a screen, everything else behind flags.

The summary (no flag) must fit one terminal screen (at most 40 lines of at
most 100 columns) for every kind of model and still name what a user looks
for: family, layers, precision, languages, tensor count. --tensors must list
every entry of the file's tensor table exactly as the Python reader
(edgemt_tools.model_file) reads it; --all must hold what the summary
abridges. Bad usage and bad files give a clear message and a non-zero exit.

Needs the built binary, whose path ctest passes in EDGEMT_CLI.
"""

import dataclasses
import os
import re
import subprocess
import unittest

import numpy as np

import helpers
from edgemt_tools import fbs
from edgemt_tools.model_file import read_model, write_model

NEWEST = str(fbs.NEWEST_FORMAT_VERSION)  # the newest version the runtime reads

CLI = helpers.CLI
MODEL = helpers.BUNDLED_MODEL
FP16_MODEL = helpers.BUNDLED_FP16_MODEL
FIXTURES = os.path.join(helpers.REPO_ROOT, "tests", "fixtures")
RNN_LSTM = os.path.join(FIXTURES, "torch_rnn", "bahdanau-lstm.int8.emt")
RNN_GRU = os.path.join(FIXTURES, "torch_rnn", "luong-general-gru.fp32.emt")
FORMAT_V1 = os.path.join(FIXTURES, "format_v1", "tiny.int8.emt")
MARIAN_HF = os.path.join(FIXTURES, "marian", "hf")
MAX_LINES = 40
MAX_COLUMNS = 100
# A row of the --tensors table: name, dtype, shape, bytes, and "= OWNER" for an alias.
TABLE_ROW = re.compile(r"^  (\S+) +(f32|f16|i8) +(\[[0-9, ]*\]) +([0-9]+)(?:  = (\S+))?$")


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, check=False, timeout=300)


def stored_tensors(model):
    """name -> array of the stored tensors, and alias -> owner (same bytes)."""
    tensors, aliases, owners = {}, {}, {}
    for name in model.table_order:
        entry = model.entries[name]
        owner = owners.setdefault((entry.offset, entry.size), name)
        if owner != name:
            aliases[name] = owner
        else:
            tensors[name] = np.array(model.array(name))
    return tensors, aliases


class CliInspectTest(helpers.CliTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # A Marian model with 60 target-language tokens and 196 banned tokens:
        # the summary abridges both lists, --all prints them whole.
        marian = os.path.join(cls.tmp, "marian.emt")
        result = helpers.run_tool("edgemt-convert", "--from", "hf-marian", "--checkpoint",
                                  MARIAN_HF, "--dtype", "fp32", "-o", marian)
        assert result.returncode == 0, result.stderr
        model = read_model(marian)
        pieces = list(model.header.source_pieces)
        cls.languages = [f">>l{i:02d}<<" for i in range(60)]
        pieces[1000:1000 + len(cls.languages)] = cls.languages
        cls.banned = tuple(range(4, 200))
        header = dataclasses.replace(
            model.header, source_pieces=tuple(pieces),
            decoding=dataclasses.replace(model.header.decoding, banned_tokens=cls.banned))
        cls.multi_target = os.path.join(cls.tmp, "multi-target.emt")
        write_model(cls.multi_target, header, *stored_tensors(model))

    def write(self, name, data):
        path = self.path(name)
        with open(path, "wb") as handle:
            handle.write(data)
        return path

    def inspect(self, *args):
        result = run("inspect", *args)
        self.assertEqual(result.returncode, 0, result.stderr.decode("utf-8", "replace"))
        self.assertEqual(result.stderr, b"")
        return result.stdout.decode("utf-8")

    def assert_fits_a_screen(self, out, label):
        lines = out.splitlines()
        self.assertLessEqual(len(lines), MAX_LINES, f"{label}: {len(lines)} lines\n{out}")
        widest = max(lines, key=len)
        self.assertLessEqual(len(widest), MAX_COLUMNS, f"{label}: widest line {widest!r}")

    def assert_line(self, out, pattern):
        self.assertRegex(out, re.compile(pattern, re.MULTILINE))

    def tensor_table(self, out):
        """The rows of the --tensors table: [(name, dtype, shape, bytes, owner or None)]."""
        lines = out.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("tensors (every entry"))
        self.assertRegex(lines[start + 1], r"^  name +dtype +shape +bytes$")
        rows = []
        for line in lines[start + 2:]:
            if not line:
                break
            match = TABLE_ROW.match(line)
            self.assertIsNotNone(match, f"not a table row: {line!r}")
            rows.append(match.groups())
        return rows

    def assert_table_is_the_files(self, path):
        model = read_model(path)
        out = self.inspect("--tensors", path)
        rows = self.tensor_table(out)
        self.assertEqual([row[0] for row in rows], model.table_order)
        owners = {}
        for name, dtype, shape, size, owner in rows:
            entry = model.entries[name]
            with self.subTest(tensor=name):
                self.assertEqual(dtype, entry.dtype)
                self.assertEqual(shape, "[" + ", ".join(str(n) for n in entry.shape) + "]")
                self.assertEqual(int(size), entry.size)
                first = owners.setdefault(entry.offset, name) if entry.size else name
                self.assertEqual(owner, first if first != name else None)
        stored = {owners.get(model.entries[n].offset, n) for n in model.table_order}
        weight_bytes = sum(model.entries[n].size for n in stored)
        self.assertIn(f"weight bytes     {weight_bytes} (", out)
        self.assertIn(f"file size        {os.path.getsize(path)} bytes", out)
        aliases = len(rows) - len(stored)
        self.assertIn(f"tensors          {len(rows)} entries, {aliases} of them aliases", out)
        return out

    # -- the summary ------------------------------------------------------------
    def test_bundled_summary_fits_a_screen_and_names_the_essentials(self):
        out = self.inspect(MODEL)
        self.assert_fits_a_screen(out, "bundled model")
        entries = len(read_model(MODEL).table_order)
        for pattern in (r"^file +.*multi30k-en-de\.int8\.emt \(\d+ bytes\)$",
                        r"^format version +11 \(edgemt [0-9.]+ reads 1 to " + NEWEST + r"\)$",
                        r"^checksum +CRC-32C header [0-9a-f]{8}, weights [0-9a-f]{8}: verified at load$",
                        r"^languages +en -> de$",
                        r"^precision +i8, int8-smoothed-per-row-dynamic \(\d+ of 33 projections "
                        r"smoothed\)$",
                        r"^parameters +[0-9,]+ \+ [0-9,]+ int8 row scales \+ [0-9,]+ smoothing "
                        r"values \+ [0-9.]+ MiB of$",
                        r"^ +residual codes; weights [0-9.]+ MiB",
                        r"^converted from +torch checkpoint 'model\.pt', "
                        r"sha256 [0-9a-f]{16}\.\.\.$",
                        r"^converter +edgemt-convert ",
                        r"^family +transformer$",
                        r"^  layers +3 encoder, 3 decoder$",
                        r"^  d_model +256$",
                        r"^  heads +4 ",
                        r"^  norm +post-norm",
                        r"^  max length +256 tokens",
                        r"^tokenizer +SentencePiece, \d+ bytes$",
                        r"^  vocab +SentencePiece ids \(8000 source, 8000 target\)$",
                        r"^decoding defaults +beam 1, length penalty 1, edgemt search rules$",
                        r"^  max length +floor\(2 \* source tokens \+ 10\)$",
                        rf"^tensors +{entries} entries \(4 aliases\), [0-9.]+ MiB: "
                        r"i8 [0-9.]+ MiB, f32 ",
                        r"^  encoder +62 entries: 3 layers x 20, final_norm 2 +[0-9.]+ MiB  "
                        r"i8 f32$",
                        r"^  decoder +104 entries: 3 layers x 34, final_norm 2 ",
                        r"^tokenizer check +loads$",
                        r"^compute path +int8 \(int8-smoothed-per-row-dynamic",
                        r"^arena +[0-9.]+ MiB \(batch 1, beam 1, 128 tokens\) to [0-9.]+ MiB "):
            self.assert_line(out, pattern)
        # The tensors are grouped, not listed.
        self.assertNotIn("encoder.layers.0.", out)

    def test_every_kind_of_model_fits_a_screen(self):
        for path, family in ((MODEL, "transformer"), (FP16_MODEL, "transformer"),
                             (RNN_LSTM, "rnn"), (RNN_GRU, "rnn"), (FORMAT_V1, "transformer"),
                             (self.multi_target, "transformer")):
            with self.subTest(model=os.path.basename(path)):
                out = self.inspect(path)
                self.assert_fits_a_screen(out, path)
                self.assert_line(out, rf"^family +{family}$")
                self.assert_line(out, rf"^tensors +{len(read_model(path).table_order)} entries")

    def test_rnn_summary_names_cell_attention_and_groups(self):
        out = self.inspect(RNN_LSTM)
        for pattern in (r"^family +rnn$", r"^  cell +LSTM, 2 layers, hidden 64$",
                        r"^  encoder +bidirectional", r"^  attention +additive score",
                        r"^precision +i8, int8-per-row-dynamic",
                        r"^format version +3 \(edgemt [0-9.]+ reads 1 to " + NEWEST + r"\)$",
                        r"^checksum +none \(files before format version 4 have none\)$",
                        r"^converted from +torch-rnn checkpoint",
                        r"^  max length +60 tokens, whatever the source length$",
                        r"^  encoder +24 entries: 2 layers x 12 ", r"^  attention +5 entries ",
                        r"^  decoder +12 entries: 2 layers x 6 ",
                        r"^compute path +int8 .*\n +.*own RNN cell and attention kernels\)$"):
            self.assert_line(out, pattern)
        out = self.inspect(RNN_GRU)
        self.assert_line(out, r"^  cell +GRU, 2 layers, hidden 64$")
        self.assert_line(out, r"^  attention +general score")
        self.assert_line(out, r"^precision +f32, no quantization$")

    def test_groups_add_up_to_the_table(self):
        for path in (MODEL, RNN_LSTM, self.multi_target):
            with self.subTest(model=os.path.basename(path)):
                out = self.inspect(path)
                names = read_model(path).table_order
                groups = re.findall(r"^  (\S+) +(\d+) entr(?:y|ies)", out.split("\ntensors ")[1],
                                    re.MULTILINE)
                self.assertEqual(sorted(g for g, _ in groups),
                                 sorted({n.split(".")[0] for n in names}))
                for group, count in groups:
                    self.assertEqual(int(count), sum(n.split(".")[0] == group for n in names),
                                     group)

    def test_many_target_languages_and_banned_tokens_are_abridged(self):
        out = self.inspect(self.multi_target)
        self.assert_fits_a_screen(out, "multi-target model")
        self.assert_line(out, r"^  target languages >>l00<< >>l01<< .* "
                              r"\.\.\. \(60 in all; --all lists them\)  \(--target-prefix\)$")
        self.assert_line(out, r"^  banned tokens +4 5 6 .* "
                              r"\.\.\. \(196 in all; --all lists them\)$")
        self.assert_line(out, r"^tokenizers +SentencePiece: source \d+ bytes, target \d+ bytes$")
        self.assert_line(out, r"^decoding defaults +beam 6, length penalty 1, huggingface search")
        self.assertNotIn(">>l59<<", out)

    # -- the flags ----------------------------------------------------------------
    def test_tensors_lists_every_tensor_of_the_file(self):
        for path in (MODEL, RNN_LSTM, RNN_GRU):
            with self.subTest(model=os.path.basename(path)):
                out = self.assert_table_is_the_files(path)
                self.assertTrue(out.startswith(self.inspect(path)),
                                "--tensors adds to the summary")

    def test_all_prints_what_the_summary_abridges(self):
        out = self.inspect("--all", self.multi_target)
        header = read_model(self.multi_target).header
        self.assertEqual(self.tensor_table(out)[0][0], read_model(self.multi_target).table_order[0])
        self.assertIn(header.provenance.source_sha256, out)
        self.assertIn("\narena (run-phase memory", out)
        self.assertNotIn("in all; --all", out)
        value_lines = " ".join(line.strip() for line in out.split("target languages")[1]
                               .split("\nprecision")[0].splitlines())
        self.assertEqual(value_lines.split()[:len(self.languages)], self.languages)
        banned = " ".join(line.strip() for line in out.split("banned tokens")[1]
                          .split("\n\n")[0].splitlines())
        self.assertEqual(banned.split(), [str(token) for token in self.banned])
        self.assert_table_is_the_files(self.multi_target)

    def test_arena_adds_the_table(self):
        out = self.inspect("--arena", MODEL)
        table = out.split("\narena (run-phase memory")[1].splitlines()[1:]
        self.assertRegex(table[0], r"^  tokens +batch +beam +arena +unshared$")
        rows = [line.split() for line in table[1:] if line]
        self.assertEqual([(r[0], r[1], r[2]) for r in rows],
                         [(t, b, k) for t in ("128", "256")
                          for b, k in (("1", "1"), ("16", "1"), ("16", "4"), ("32", "4"))])
        self.assertNotIn("tensors (every entry", out)

    def test_model_flag_equals_the_argument(self):
        want = self.inspect(RNN_GRU)
        self.assertEqual(self.inspect("-m", RNN_GRU), want)
        self.assertEqual(self.inspect("--model", RNN_GRU), want)
        self.assertEqual(self.inspect("--tensors", "-m", RNN_GRU),
                         self.inspect(RNN_GRU, "--tensors"))

    def test_help_tells_every_flag(self):
        result = run("inspect", "--help")
        self.assertEqual(result.returncode, 0)
        out = result.stdout.decode("utf-8")
        self.assertTrue(out.startswith("usage: edgemt inspect"))
        for flag in ("-m, --model MODEL", "--tensors", "--arena", "--all", "-h, --help",
                     "exit status"):
            self.assertIn(flag, out)
        self.assertLessEqual(max(len(line) for line in out.splitlines()), 80)

    # -- bad input ------------------------------------------------------------------
    def assert_clean_failure(self, result, status, *fragments):
        self.assertEqual(result.returncode, status, result.stderr)
        self.assertEqual(result.stdout, b"")
        stderr = result.stderr.decode("utf-8", "replace")
        for fragment in fragments:
            self.assertIn(fragment, stderr)

    def test_bad_usage(self):
        cases = [([], "expected one model file"),
                 (["--tensors"], "expected one model file"),
                 ([MODEL, FP16_MODEL], "expected one model file, got 2"),
                 (["-m", MODEL, FP16_MODEL], "expected one model file, got 2"),
                 (["-m"], "needs a value"),
                 (["--bogus", MODEL], "unknown option '--bogus'"),
                 (["-t", MODEL], "unknown option '-t'"),
                 (["--tensors=yes", MODEL], "option '--tensors' takes no value"),
                 (["--all=1", MODEL], "option '--all' takes no value")]
        for args, fragment in cases:
            with self.subTest(args=args):
                self.assert_clean_failure(run("inspect", *args), 2, fragment,
                                          "run 'edgemt inspect --help'")

    def test_missing_or_corrupt_file(self):
        missing = self.path("nope.emt")
        with open(MODEL, "rb") as handle:
            data = handle.read()
        wrong_identifier = bytearray(data)
        wrong_identifier[8:12] = b"ONNX"
        cases = [(missing, ["nope.emt", "No such file"]),
                 (self.tmp, ["cannot load model", "directory"]),
                 (self.write("truncated.emt", data[:len(data) // 2]), ["cannot load model"]),
                 (self.write("empty.emt", b""), ["cannot load model"]),
                 (self.write("identifier.emt", bytes(wrong_identifier)),
                  ["cannot load model", "identifier"])]
        for path, fragments in cases:
            for flags in ([], ["--tensors"], ["--all"]):
                with self.subTest(path=os.path.basename(path), flags=flags):
                    self.assert_clean_failure(run("inspect", *flags, path), 1, *fragments)


if __name__ == "__main__":
    unittest.main()
