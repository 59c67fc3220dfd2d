"""Marian lexical shortlists in the converter (issue 42): shortlist.py's two
readers, `edgemt-convert --shortlist`, and the Shortlist table written and
read back by model_file.py.

The fixture tests/fixtures/marian_ssru holds lex.s2t and Marian's lex.bin
made from it by marian-conv with `50 50 0` (its README). Marian prunes the
text form in its translator and the binary form in marian-conv's import,
which differ only on ties, repeated pairs and the threshold
(docs/marian-formats.md, 3.2); the fixture has none of those, so the two
must give the same lists. The text rules themselves are checked on small
files written here.
"""

import dataclasses
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

import helpers  # noqa: F401 - puts tools/ on sys.path
import numpy as np

from edgemt_tools.errors import ModelFileError, UserError
from edgemt_tools.model_file import read_model, write_model, write_unvalidated
from edgemt_tools.shortlist import MAGIC, Vocabularies, marian_checksum, read_shortlist

FIXTURE = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian_ssru")
LANGS = ("--src-lang", "en", "--tgt-lang", "de")
VOCAB_SIZE = 2000  # the fixture's vocab.spm, both sides


def fixture_vocabularies() -> Vocabularies:
    """vocab.spm as --from marian reads it: SentencePiece's eos and unk are
    Marian's </s> and <unk>."""
    import sentencepiece  # pylint: disable=import-outside-toplevel
    sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(FIXTURE, "vocab.spm"))
    pieces = tuple("</s>" if i == sp.eos_id() else "<unk>" if i == sp.unk_id()
                   else sp.id_to_piece(i) for i in range(sp.get_piece_size()))
    return Vocabularies(pieces, pieces, len(pieces), len(pieces), sp.unk_id(), sp.unk_id())


def binary_shortlist(first: int, best: int, offsets, targets) -> bytes:
    """A binary shortlist as marian-conv writes it, with its checksum."""
    body = (struct.pack("<4Q", first, best, len(offsets), len(targets))
            + np.asarray(offsets, "<u8").tobytes() + np.asarray(targets, "<u4").tobytes())
    checksum = marian_checksum(np.frombuffer(body, "<u8", len(body) // 8))
    return struct.pack("<2Q", MAGIC, checksum) + body


def lists(shortlist):
    return [shortlist.targets_of(s).tolist() for s in range(len(shortlist.offsets) - 1)]


class Readers(unittest.TestCase):
    """shortlist.read_shortlist on the fixture and on small files."""

    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="edgemt-shortlist-")
        cls.addClassCleanup(shutil.rmtree, cls.root, True)
        cls.vocab = fixture_vocabularies()

    def write(self, name: str, data) -> str:
        path = os.path.join(self.root, name)
        with open(path, "wb") as handle:
            handle.write(data if isinstance(data, bytes) else data.encode("utf-8"))
        return path

    def test_binary_fixture(self):
        shortlist, notes = read_shortlist(os.path.join(FIXTURE, "lex.bin"), self.vocab)
        self.assertEqual(notes, [])
        self.assertEqual((shortlist.first, shortlist.best, shortlist.add_source_ids),
                         (50, 50, True))
        self.assertEqual(shortlist.offsets.dtype, np.uint32)
        self.assertEqual(shortlist.targets.dtype, np.uint32)
        self.assertEqual(len(shortlist.offsets), VOCAB_SIZE + 1)
        self.assertEqual(len(shortlist.targets), 52935)
        self.assertEqual(sum(1 for row in lists(shortlist) if row), 1222)  # fixture README
        self.assertTrue(all(row == sorted(set(row)) for row in lists(shortlist)))

    def test_text_fixture_gives_marian_s_binary_lists(self):
        binary, _ = read_shortlist(os.path.join(FIXTURE, "lex.bin"), self.vocab)
        text, notes = read_shortlist(os.path.join(FIXTURE, "lex.s2t"), self.vocab, 50, 50, "0")
        self.assertEqual(notes, [])
        differing = [s for s, (a, b) in enumerate(zip(lists(binary), lists(text))) if a != b]
        print(f"text against binary: {len(differing)} of {VOCAB_SIZE} lists differ")
        self.assertEqual(differing, [])
        self.assertEqual((text.first, text.best, text.add_source_ids), (50, 50, True))
        self.assertTrue(np.array_equal(text.offsets, binary.offsets))
        defaults, _ = read_shortlist(os.path.join(FIXTURE, "lex.s2t"), self.vocab)
        self.assertEqual((defaults.first, defaults.best), (100, 100))  # Marian's defaults

    def test_text_rules_are_the_translator_s(self):
        """NULL skipped, unknown pieces as <unk>, the last of a repeated pair,
        ties to the larger target id, prob > threshold strictly, BEST kept,
        triples across lines; lists stored ascending."""
        pieces = ("</s>", "<unk>", "a", "b", "c", "d", "e")
        vocab = Vocabularies(pieces, pieces, 8, 7, 1, 1)  # one spare source id
        path = self.write("rules.s2t", "\n".join([
            "a a 0.5", "b a 0.5", "c a 0.9", "d a 0.1", "e a 0.2",  # tie: b (3) before a (2)
            "c b 0.3", "c b 0.05",           # repeated pair: the last wins
            "d b 0.15", "NULL b 0.9", "a NULL 0.9",
            "zz c 0.4", "a zz 0.6",          # unknown target -> <unk> 1; source -> <unk>
            "e d 0.25 a", "d 0.25",          # a triple over two lines
            "b e 0.1"]) + "\n")              # == THRESHOLD: dropped
        shortlist, _ = read_shortlist(path, vocab, 3, 3, "0.1")
        self.assertEqual(lists(shortlist), [[], [2], [2, 3, 4], [5], [1], [2, 6], [], []])
        self.assertFalse(shortlist.add_source_ids)  # sizes differ
        self.assertEqual(read_shortlist(path, vocab, 3, 2, "0.1")[0].targets_of(2).tolist(),
                         [3, 4])

    def test_probabilities_are_float32(self):
        """Marian reads PROB into a float, rounded once from the decimal: two
        values of one float32 are a tie, which goes to the larger target id.
        (1 + 2^-24 is halfway between two float32s: a decimal just above it
        rounds up, though its nearest float64 is that halfway point.)"""
        pieces = ("</s>", "<unk>", "a", "b")
        vocab = Vocabularies(pieces, pieces, 4, 4, 1, 1)
        for lines in ("b a 0.1\na a 0.10000000001\n",
                      "b a 1.00000005960464477539062500001\na a 1.0000001\n"):
            with self.subTest(lines):
                path = self.write("float.s2t", lines)
                self.assertEqual(read_shortlist(path, vocab, 0, 1)[0].targets_of(2).tolist(), [3])

    def test_text_that_is_not_triples(self):
        pieces = ("</s>", "<unk>", "a")
        vocab = Vocabularies(pieces, pieces, 3, 3, 1, 1)
        for name, text, fragment in (("empty.s2t", "\n", "no TARGET SOURCE PROB"),
                                     ("pairs.s2t", "a a 0.5\na a\n", "5 words"),
                                     ("words.s2t", "a a 0.5\na a x\n", "line 2: 'x'"),
                                     ("huge.s2t", "a a 1e39\n", "beyond the float range")):
            with self.subTest(name):
                with self.assertRaisesRegex(UserError, fragment):
                    read_shortlist(self.write(name, text), vocab)

    def test_first_zero_best_zero(self):
        shortlist, _ = read_shortlist(os.path.join(FIXTURE, "lex.s2t"), self.vocab, 0, 0)
        self.assertEqual((shortlist.first, shortlist.best), (0, 0))
        self.assertEqual(len(shortlist.targets), 0)
        self.assertEqual(shortlist.offsets.tolist(), [0] * (VOCAB_SIZE + 1))

    def test_binary_checks(self):
        good = binary_shortlist(2, 2, [0, 1, 3, 3], [4, 0, 5])
        vocab = Vocabularies((), (), 3, 6, 1, 1)
        self.assertEqual(lists(read_shortlist(self.write("good.bin", good), vocab)[0]),
                         [[4], [0, 5], []])
        for name, data, fragment in (
                ("short.bin", good[:-4], "header implies"),
                ("tiny.bin", good[:20], "fewer than"),
                ("outside.bin", binary_shortlist(2, 2, [0, 1, 3, 3], [4, 0, 6]), "target id 6"),
                ("unsorted.bin", binary_shortlist(2, 2, [0, 1, 3, 3], [4, 5, 0]), "ascending"),
                ("falling.bin", binary_shortlist(2, 2, [0, 2, 1, 3], [4, 0, 5]), "fall"),
                ("bigger.bin", binary_shortlist(2, 2, [0, 1, 3, 3, 3], [4, 0, 5]),
                 "4 source ids, the model's source vocabulary 3")):
            with self.subTest(name):
                with self.assertRaisesRegex(UserError, fragment):
                    read_shortlist(self.write(name, data), vocab)

    def test_early_marian_conv_files_end_at_their_last_list(self):
        """browsermt's marian-conv of spring 2021 wrote S = the last source id
        with a list + 1: the later ids list nothing (a note says so)."""
        vocab = Vocabularies((), (), 4, 6, 1, 1)
        path = self.write("early.bin", binary_shortlist(2, 2, [0, 1, 3], [4, 0, 5]))
        shortlist, notes = read_shortlist(path, vocab)
        self.assertEqual(lists(shortlist), [[4], [0, 5], [], []])
        self.assertEqual(len(notes), 1)
        path = self.write("other.bin", binary_shortlist(2, 2, [0, 1, 3, 3], [4, 0, 5]))
        with self.assertRaisesRegex(UserError, "made for another vocabulary"):
            read_shortlist(path, vocab)


class Convert(unittest.TestCase):
    """edgemt-convert --shortlist and the model file's Shortlist table."""

    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="edgemt-shortlist-")
        cls.addClassCleanup(shutil.rmtree, cls.root, True)
        cls.folder = cls.path("firefox")  # as Firefox Translations ships a model
        os.mkdir(cls.folder)
        for name in ("model.npz", "vocab.spm", "lex.bin", "lex.s2t"):
            shutil.copyfile(os.path.join(FIXTURE, name), os.path.join(cls.folder, name))
        cls.lex_bin = os.path.join(cls.folder, "lex.bin")
        with open(cls.lex_bin, "rb") as handle:
            cls.lex_bin_bytes = handle.read()
        cls.expected, _ = read_shortlist(cls.lex_bin, fixture_vocabularies())

    @classmethod
    def path(cls, name: str) -> str:
        return os.path.join(cls.root, name)

    def convert(self, output: str, *args: str):
        result = helpers.run_tool("edgemt-convert", self.folder, *LANGS, *args,
                                  "-o", self.path(output))
        self.assertEqual(result.returncode, 0, result.stderr)
        return result, self.path(output)

    def refused(self, output: str, fragment: str, *args: str, status: int = 1) -> None:
        result = helpers.run_tool("edgemt-convert", self.folder, *LANGS, *args,
                                  "-o", self.path(output))
        self.assertEqual(result.returncode, status, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len([line for line in lines if "error:" in line]), 1, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        self.assertIn(fragment, lines[-1])
        self.assertFalse(os.path.exists(self.path(output)))

    def damaged(self, name: str, data: bytes) -> str:
        path = self.path(name)
        with open(path, "wb") as handle:
            handle.write(data)
        return path

    def test_every_dtype_stores_the_shortlist(self):
        for dtype, extra in (("fp32", ()), ("fp16", ()), ("int8", ("--no-calibration",))):
            with self.subTest(dtype=dtype):
                result, output = self.convert(f"{dtype}.emt", "--dtype", dtype, *extra,
                                              "--shortlist", self.lex_bin)
                self.assertNotIn("note:", result.stderr)  # the folder's lex.* is named
                self.assertIn("shortlist of 52935 ids for 2000 source ids", result.stdout)
                stored = read_model(output).header.shortlist
                self.assertEqual((stored.first, stored.best, stored.add_source_ids),
                                 (50, 50, True))
                self.assertTrue(np.array_equal(stored.offsets, self.expected.offsets))
                self.assertTrue(np.array_equal(stored.targets, self.expected.targets))

    def test_a_shortlist_leaves_the_format_version(self):
        result, without = self.convert("without.emt")
        notes = [line for line in result.stderr.splitlines() if "note:" in line]
        self.assertEqual(len(notes), 1)
        self.assertIn(f"--shortlist {self.lex_bin}", notes[0])
        _, with_text = self.convert("text.emt", "--shortlist",
                                    os.path.join(self.folder, "lex.s2t"), "50", "50", "0")
        self.assertIsNone(read_model(without).header.shortlist)
        self.assertEqual(read_model(with_text).format_version, read_model(without).format_version)

    def test_first_zero_best_zero_converts(self):
        _, output = self.convert("zero.emt", "--shortlist",
                                 os.path.join(self.folder, "lex.s2t"), "0", "0")
        stored = read_model(output).header.shortlist
        self.assertEqual((stored.first, stored.best, len(stored.targets)), (0, 0, 0))
        self.assertEqual(stored.offsets.tolist(), [0] * (VOCAB_SIZE + 1))

    def test_damaged_binary_files_are_refused(self):
        data = self.lex_bin_bytes
        flipped = bytearray(data)
        flipped[9] ^= 0x40  # inside the checksum
        no_magic = bytearray(data)
        no_magic[0] ^= 0xFF
        body = np.frombuffer(data, "<u8", 2001, 48)
        targets = np.frombuffer(data, "<u4", 52935, 48 + 8 * 2001)
        outside = targets.copy()
        outside[100] = VOCAB_SIZE
        shorter = np.concatenate([body[:1999], [body[-1]]])  # S 1999, its last list empty
        for name, contents, fragment in (
                ("no-magic.bin", bytes(no_magic), "neither a binary shortlist"),
                ("checksum.bin", bytes(flipped), "checksum does not match"),
                ("truncated.bin", data[:-6], "header implies"),
                ("outside.bin", binary_shortlist(50, 50, body, outside), "target id 2000"),
                ("vocabulary.bin", binary_shortlist(50, 50, shorter, targets),
                 "1999 source ids, the model's source vocabulary 2000")):
            with self.subTest(name):
                self.refused(name + ".emt", fragment, "--shortlist", self.damaged(name, contents))

    def test_bad_arguments_are_one_line(self):
        lex = os.path.join(self.folder, "lex.s2t")
        for args, fragment, status in (
                ((lex, "50"), "got 2 values", 2),
                ((lex, "50", "x"), "BEST 'x'", 2),
                ((lex, "-1", "50"), "FIRST '-1'", 2),
                ((lex, "50", "50", "nan"), "THRESHOLD 'nan'", 2),
                ((lex, "1", "2", "3", "4"), "got 5 values", 2),
                ((self.path("missing.s2t"),), "shortlist not found", 1)):
            with self.subTest(args=args):
                self.refused("bad.emt", fragment, "--shortlist", *args, status=status)

    def test_bench_compares_shortlisted_outputs_per_batch_size(self):
        # A batch's candidates are its sentences': batches of 8 choose other
        # tokens than sentences alone on some of these 40 lines (9 here), and
        # that is no fault. Each batch size is compared across thread counts.
        if not os.path.isfile(helpers.CLI):
            self.skipTest(f"edgemt binary not built: {helpers.CLI}")
        _, model = self.convert("bench.emt", "--shortlist", self.lex_bin)
        source = os.path.join(FIXTURE, "reference", "source.en")
        result = subprocess.run([helpers.CLI, "bench", "-m", model, "-i", source, "--sentences", "40",
                                 "--threads", "1,2", "--batch", "1,8", "--idle-seconds", "0",
                                 "--warmup", "0"], capture_output=True, check=False, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        out = result.stdout.decode("utf-8")
        self.assertNotIn("WARNING", out)
        self.assertIn("outputs identical across configurations of the same beam size (with the "
                      "shortlist, of the same batch size too", out)
        off = subprocess.run([helpers.CLI, "bench", "-m", model, "-i", source, "--sentences", "40",
                              "--batch", "1,8", "--shortlist", "off", "--idle-seconds", "0",
                              "--warmup", "0"], capture_output=True, check=False, timeout=300)
        self.assertEqual(off.returncode, 0, off.stderr)
        self.assertIn("outputs identical across configurations of the same beam size\n",
                      off.stdout.decode("utf-8"))

    def test_writer_and_reader_check_the_table(self):
        model = read_model(self.convert("fp32-checked.emt", "--shortlist", self.lex_bin)[1])
        tensors, aliases = model.stored_tensors()
        targets = model.header.shortlist.targets.copy()
        targets[0] = VOCAB_SIZE
        bad = dataclasses.replace(model.header, shortlist=dataclasses.replace(
            model.header.shortlist, targets=targets))
        with self.assertRaisesRegex(UserError, "target id 2000"):
            write_model(self.path("bad-table.emt"), bad, tensors, aliases)
        write_unvalidated(self.path("bad-table.emt"), bad, tensors, aliases)
        with self.assertRaisesRegex(ModelFileError, "target id 2000"):
            read_model(self.path("bad-table.emt"))


if __name__ == "__main__":
    unittest.main()
