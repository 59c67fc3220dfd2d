"""input_files.py's gzip reading: Firefox Translations' model repository
ships every file gzip-compressed (model.<pair>.intgemm.alphas.bin.gz,
vocab.<pair>.spm.gz, lex.50.50.<pair>.s2t.bin.gz). A compressed input gives
the bytes it holds; a broken one, or one that would decompress past its
limit, is refused by name, never read in part."""

import gzip
import os
import tempfile
import unittest
from unittest import mock

import helpers  # noqa: F401
from edgemt_tools import input_files
from edgemt_tools.errors import UserError
from edgemt_tools.input_files import gzip_head, read_bytes, without_gz

PAYLOAD = bytes(range(256)) * 64 + b"the end"   # 16,391 bytes


class ReadBytesTest(unittest.TestCase):
    def setUp(self):
        scratch = tempfile.TemporaryDirectory(prefix="edgemt-input-files-")
        self.addCleanup(scratch.cleanup)
        self.tmp = scratch.name

    def write(self, name: str, data: bytes) -> str:
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as handle:
            handle.write(data)
        return path

    def test_plain_bytes_are_returned_as_they_are(self):
        path = self.write("model.bin", PAYLOAD)
        self.assertEqual(read_bytes(path, "Marian model", len(PAYLOAD)), PAYLOAD)
        self.assertEqual(gzip_head(path, 5), PAYLOAD[:5])

    def test_gzip_is_told_by_its_bytes_not_its_name(self):
        for name in ("model.bin.gz", "model.bin"):
            path = self.write(name, gzip.compress(PAYLOAD))
            self.assertEqual(read_bytes(path, "Marian model", len(PAYLOAD)), PAYLOAD)
            self.assertEqual(gzip_head(path, 48), PAYLOAD[:48])

    def test_concatenated_members_are_one_file(self):
        path = self.write("lex.bin.gz", gzip.compress(PAYLOAD[:100]) + gzip.compress(PAYLOAD[100:]))
        self.assertEqual(read_bytes(path, "shortlist", len(PAYLOAD)), PAYLOAD)

    def test_a_truncated_stream_is_refused(self):
        packed = gzip.compress(PAYLOAD)
        path = self.write("model.bin.gz", packed[:len(packed) // 2])
        with self.assertRaises(UserError) as caught:
            read_bytes(path, "Marian model", 1 << 20)
        self.assertIn(f"Marian model {path} is gzip-compressed but cannot be decompressed",
                      str(caught.exception))
        self.assertEqual(gzip_head(path, 1 << 20), b"")

    def test_a_corrupt_stream_is_refused(self):
        packed = bytearray(gzip.compress(PAYLOAD))
        packed[-6] ^= 0xFF          # the CRC-32 of the trailer
        path = self.write("vocab.spm.gz", bytes(packed))
        with self.assertRaises(UserError) as caught:
            read_bytes(path, "the source SentencePiece model", 1 << 20)
        self.assertIn("cannot be decompressed (CRC check failed", str(caught.exception))

    def test_more_than_the_limit_is_refused_without_reading_it_all(self):
        path = self.write("bomb.bin.gz", gzip.compress(bytes(64 << 20)))  # 64 MiB of zeros
        self.assertLess(os.path.getsize(path), 1 << 20)
        self.assertEqual(read_bytes(path, "Marian model", 64 << 20), bytes(64 << 20))
        with self.assertRaises(UserError) as caught:
            read_bytes(path, "Marian model", (64 << 20) - 1)
        self.assertIn("decompresses to more than 67,108,863 bytes", str(caught.exception))

    def test_more_than_the_memory_available_is_refused(self):
        path = self.write("bomb.bin.gz", gzip.compress(bytes(64 << 20)))
        with mock.patch.object(input_files, "available_memory", return_value=32 << 20):
            with self.assertRaises(UserError) as caught:
                read_bytes(path, "Marian model", 1 << 40)
        self.assertIn("decompresses to more than the 32 MiB of memory available",
                      str(caught.exception))
        self.assertTrue(input_files.available_memory() is None
                        or input_files.available_memory() > 0)

    def test_an_unreadable_file_is_named(self):
        with self.assertRaises(UserError) as caught:
            read_bytes(self.tmp, "shortlist", 100)   # a directory
        self.assertIn(f"cannot read shortlist {self.tmp}", str(caught.exception))

    def test_without_gz(self):
        self.assertEqual(without_gz("vocab.enes.spm.gz"), "vocab.enes.spm")
        self.assertEqual(without_gz("vocab.enes.spm"), "vocab.enes.spm")
        self.assertEqual(without_gz("gz"), "gz")


if __name__ == "__main__":
    unittest.main()
