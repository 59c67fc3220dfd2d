"""atomic_file.py: complete file or nothing, temp file cleaned up, and never
a rename over something that is not a regular file or is one of the inputs
(issue 38, defect 2)."""

import os
import stat
import tempfile
import unittest

import helpers  # noqa: F401
from edgemt_tools.atomic_file import atomic_write
from edgemt_tools.errors import UserError


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

    def test_a_fifo_is_never_replaced(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out.fifo")
            os.mkfifo(path)
            with self.assertRaisesRegex(UserError, "is not a regular file .it is a FIFO."):
                with atomic_write(path) as handle:
                    handle.write(b"abc")
            self.assertTrue(stat.S_ISFIFO(os.stat(path).st_mode))
            self.assertEqual(os.listdir(tmp), ["out.fifo"])

    def test_the_target_is_checked_again_right_before_the_rename(self):
        """A FIFO that appears while the file is written is not renamed over."""
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out.bin")
            with self.assertRaisesRegex(UserError, "FIFO"):
                with atomic_write(path) as handle:
                    handle.write(b"abc")
                    os.mkfifo(path)
            self.assertTrue(stat.S_ISFIFO(os.stat(path).st_mode))
            self.assertEqual(os.listdir(tmp), ["out.bin"])

    def test_an_input_is_never_replaced_under_any_name(self):
        with tempfile.TemporaryDirectory() as tmp:
            source = os.path.join(tmp, "input.bin")
            with open(source, "wb") as handle:
                handle.write(b"input")
            os.link(source, os.path.join(tmp, "hard.bin"))
            os.symlink(source, os.path.join(tmp, "soft.bin"))
            for name in ("input.bin", "hard.bin", "soft.bin", "../" + os.path.basename(tmp) +
                         "/input.bin"):
                with self.subTest(name=name):
                    with self.assertRaisesRegex(UserError, "is the input"):
                        with atomic_write(os.path.join(tmp, name), inputs=[source]) as handle:
                            handle.write(b"output")
                    with open(source, "rb") as handle:
                        self.assertEqual(handle.read(), b"input")
            self.assertEqual(sorted(os.listdir(tmp)), ["hard.bin", "input.bin", "soft.bin"])


if __name__ == "__main__":
    unittest.main()
