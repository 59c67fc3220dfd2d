"""`edgemt-convert` with careless input (issue 38, defect 9).

Each test is the regression test of a defect:
- `--calibrate /dev/zero` read forever (its first line never ends); the
  files of a checkpoint folder were opened whatever they were, so a FIFO
  or a link to /dev/zero as vocab.yml, source.spm or config.json blocked or
  read forever, and a FIFO as decoder.yml or generation_config.json was
  silently ignored. Now a calibration line is read up to 1 MiB, and every
  file the converter reads must be a regular file (refused, naming it).
- A zero-byte or truncated model.npz was reported as "Cannot load file
  containing pickled data when allow_pickle=False" (numpy's words for any
  file that is not an .npz); an empty pytorch_model.bin as "EOFError", an
  empty .spm without its path. Now: "is empty (0 bytes)" / "is not a valid
  .npz archive", with the file's name.

Every conversion runs as a subprocess with a timeout, so that a
regression fails instead of hanging the test run.
"""

import os
import shutil
import subprocess
import tempfile
import unittest

import helpers
from edgemt_tools.testing import write_tiny_checkpoint

MARIAN_FIXTURE = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian")
TIMEOUT = 120


class CarelessInputTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.output = os.path.join(self.tmp, "out.emt")

    def refused(self, *args_and_fragments):
        """Run edgemt-convert with args (before '--'), expect exit 1 with one
        error line holding every fragment (after '--'), and no output;
        returns the line."""
        split = args_and_fragments.index("--")
        args, fragments = args_and_fragments[:split], args_and_fragments[split + 1:]
        try:
            result = subprocess.run(
                ["/usr/bin/python3", os.path.join(helpers.TOOLS_DIR, "edgemt-convert"), *args,
                 "-o", self.output], capture_output=True, text=True, timeout=TIMEOUT,
                stdin=subprocess.DEVNULL, check=False)
        except subprocess.TimeoutExpired:
            self.fail(f"edgemt-convert {' '.join(args)} ran for over {TIMEOUT} s")
        self.assertEqual(result.returncode, 1, result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])
        self.assertFalse(os.path.exists(self.output))
        return lines[0]

    def folder(self, name):
        """A fresh copy of the fixture folder `name` (npz or hf)."""
        return shutil.copytree(os.path.join(MARIAN_FIXTURE, name),
                               os.path.join(tempfile.mkdtemp(dir=self.tmp), name))

    def marian(self, folder):
        return ["--from", "marian", "--checkpoint", folder, "--src-lang", "en", "--tgt-lang",
                "de", "--dtype", "fp32"]

    def hf(self, folder):
        return ["--from", "hf-marian", "--checkpoint", folder, "--dtype", "fp32"]

    # -- inputs that never end ------------------------------------------------------
    def test_calibrate_dev_zero_ends_with_a_message(self):
        paths = write_tiny_checkpoint(self.tmp)
        args = ["--from", "torch", "--checkpoint", paths["checkpoint"], "--config",
                paths["config"], "--spm", paths["spm"], "--dtype", "int8", "--calibrate"]
        self.refused(*args, "/dev/zero", "--", "calibration file /dev/zero is not text")
        endless = os.path.join(self.tmp, "one-line.en")
        with open(endless, "w", encoding="utf-8") as handle:
            handle.write("a" * (2 << 20))
        self.refused(*args, endless, "--", "line 1 is longer than 1048576 bytes")

    def test_files_of_a_folder_that_are_not_regular_files_are_refused(self):
        for fixture, name, make, fragment in (
                ("npz", "vocab.yml", "zero", "vocab.yml is not a regular file (it is a "
                                             "character device)"),
                ("npz", "source.spm", "fifo", "source.spm is not a regular file (it is a FIFO)"),
                ("npz", "decoder.yml", "fifo", "decoder.yml is not a regular file"),
                ("npz", "model.npz", "zero", "model.npz is not a regular file"),
                ("hf", "vocab.json", "zero", "vocab.json is not a regular file"),
                ("hf", "generation_config.json", "fifo", "generation_config.json is not a "
                                                         "regular file"),
                ("hf", "model.safetensors", "fifo", "model.safetensors is not a regular file"),
                ("hf", "target.spm", "zero", "target.spm is not a regular file")):
            with self.subTest(name=name, make=make):
                folder = self.folder(fixture)
                path = os.path.join(folder, name)
                os.remove(path)
                if make == "fifo":
                    os.mkfifo(path)
                else:
                    os.symlink("/dev/zero", path)
                args = self.marian(folder) if fixture == "npz" else self.hf(folder)
                self.refused(*args, "--", fragment)

    # -- empty and truncated files ----------------------------------------------------
    def test_empty_or_truncated_npz_says_so(self):
        folder = self.folder("npz")
        npz = os.path.join(folder, "model.npz")
        with open(npz, "rb") as handle:
            data = handle.read()
        for content, fragment in ((b"", "model.npz is empty (0 bytes)"),
                                  (data[:100000], "model.npz is not a valid .npz archive"),
                                  (b"not an archive\n", "model.npz is not a valid .npz archive")):
            with self.subTest(size=len(content)):
                with open(npz, "wb") as handle:
                    handle.write(content)
                self.assertNotIn("pickled", self.refused(*self.marian(folder), "--", fragment))

    def test_empty_weights_and_sentencepiece_models_say_so(self):
        folder = self.folder("hf")
        os.remove(os.path.join(folder, "model.safetensors"))
        open(os.path.join(folder, "pytorch_model.bin"), "wb").close()
        self.refused(*self.hf(folder), "--", "pytorch_model.bin is empty (0 bytes)")
        folder = self.folder("npz")
        open(os.path.join(folder, "source.spm"), "wb").close()
        self.refused(*self.marian(folder), "--", "source.spm is empty (0 bytes)")


if __name__ == "__main__":
    unittest.main()
