"""atomic_file.py: complete file or nothing, temp file cleaned up."""

import os
import tempfile
import unittest

import helpers  # noqa: F401
from edgemt_tools.atomic_file import atomic_write


class AtomicWriteTest(unittest.TestCase):
    def test_writes_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out.bin")
            with atomic_write(path) as handle:
                handle.write(b"abc")
            with open(path, "rb") as handle:
                self.assertEqual(handle.read(), b"abc")
            self.assertEqual(os.listdir(tmp), ["out.bin"])

    def test_failure_leaves_nothing_and_keeps_old_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out.bin")
            with open(path, "wb") as handle:
                handle.write(b"old")
            with self.assertRaises(RuntimeError):
                with atomic_write(path) as handle:
                    handle.write(b"half")
                    raise RuntimeError("boom")
            self.assertEqual(os.listdir(tmp), ["out.bin"])
            with open(path, "rb") as handle:
                self.assertEqual(handle.read(), b"old")


if __name__ == "__main__":
    unittest.main()
