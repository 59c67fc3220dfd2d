"""`edgemt-convert -o` writes only regular files, and never an input (issue
38, defect 2).

Before: the atomic writer renamed its temporary file over any target, so
`-o` naming a FIFO or (as root) a device node replaced it with a plain file,
and `-o` naming the checkpoint, or a file of the checkpoint folder, replaced
the input with the converted model; each printed "wrote ..." and exit 0.
Now each is one `edgemt-convert: error:` line, exit 1, and the target is
left exactly as it was. Inputs are compared by device and inode, so a hard
link, a symlink or another spelling of an input is that input.

Conversions run in this process (edgemt_tools.convert.main), like
test_convert_validation.py.
"""

import contextlib
import hashlib
import io
import os
import shutil
import stat
import sys
import tempfile
import unittest

import helpers
from edgemt_tools import convert
from edgemt_tools.testing import write_tiny_checkpoint

MARIAN_FIXTURE = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian")


def digest(path):
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def run_convert(argv):
    """edgemt-convert in this process: (exit status, stderr)."""
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = convert.main(argv)
    return code, stderr.getvalue()


class OutputTargetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.paths = write_tiny_checkpoint(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def setUp(self):
        self.out_dir = tempfile.mkdtemp(dir=self.tmp)

    def torch_args(self, output, *extra):
        return ["--from", "torch", "--checkpoint", self.paths["checkpoint"], "--config",
                self.paths["config"], "--spm", self.paths["spm"], "--dtype", "fp32", *extra,
                "-o", output]

    def assert_refused(self, argv, *fragments):
        code, stderr = run_convert(argv)
        self.assertEqual(code, 1, stderr)
        lines = stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, stderr)
        self.assertTrue(lines[0].startswith("edgemt-convert: error: output "), stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])
        # No temporary file left behind beside the target.
        for folder in {self.out_dir, os.path.dirname(os.path.abspath(argv[-1]))}:
            self.assertEqual([n for n in os.listdir(folder) if n.endswith(".tmp")], [])

    # -- targets that are not regular files ---------------------------------------------
    def test_a_fifo_is_refused_and_stays_a_fifo(self):
        fifo = os.path.join(self.out_dir, "model.emt")
        os.mkfifo(fifo)
        self.assert_refused(self.torch_args(fifo), "is not a regular file (it is a FIFO)")
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    def test_a_symlink_to_a_fifo_is_refused_and_both_stay(self):
        fifo = os.path.join(self.out_dir, "real.fifo")
        os.mkfifo(fifo)
        link = os.path.join(self.out_dir, "model.emt")
        os.symlink(fifo, link)
        self.assert_refused(self.torch_args(link), "(it is a FIFO)")
        self.assertTrue(os.path.islink(link))
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode))

    def test_a_character_device_is_refused_and_stays_a_device(self):
        if os.geteuid() != 0:
            print("SKIPPED (part): making a device node needs root", file=sys.stderr)
            self.skipTest("making a device node needs root")
        device = os.path.join(self.out_dir, "null")
        try:
            os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
        except PermissionError:
            print("SKIPPED (part): mknod is not permitted here", file=sys.stderr)
            self.skipTest("mknod is not permitted here")
        self.assert_refused(self.torch_args(device), "(it is a character device)")
        info = os.stat(device)
        self.assertTrue(stat.S_ISCHR(info.st_mode))
        self.assertEqual(info.st_rdev, os.makedev(1, 3))

    def test_a_directory_is_refused(self):
        folder = os.path.join(self.out_dir, "model.emt")
        os.mkdir(folder)
        self.assert_refused(self.torch_args(folder), "(it is a directory)")
        self.assertEqual(os.listdir(folder), [])

    # -- targets that are inputs ----------------------------------------------------------
    def test_the_named_inputs_are_refused_under_any_name(self):
        checkpoint, config, spm = (self.paths[k] for k in ("checkpoint", "config", "spm"))
        hard = os.path.join(self.out_dir, "hard.pt")
        os.link(checkpoint, hard)
        soft = os.path.join(self.out_dir, "soft.json")
        os.symlink(config, soft)
        other_spelling = os.path.join(self.tmp, "..", os.path.basename(self.tmp), "spm.model")
        before = {path: digest(path) for path in (checkpoint, config, spm)}
        for target, named in ((checkpoint, checkpoint), (hard, checkpoint), (soft, config),
                              (other_spelling, spm)):
            with self.subTest(target=os.path.basename(target)):
                self.assert_refused(self.torch_args(target), f"is the input {named}")
        self.assertEqual({path: digest(path) for path in before}, before)
        self.assertTrue(os.path.islink(soft))

    def test_the_calibration_text_is_refused(self):
        text = os.path.join(self.out_dir, "calibration.en")
        with open(text, "w", encoding="utf-8") as handle:
            handle.write("a b c\n")
        argv = self.torch_args(text, "--calibrate", text)
        argv[argv.index("fp32")] = "int8"
        self.assert_refused(argv, f"is the input {text}")
        with open(text, encoding="utf-8") as handle:
            self.assertEqual(handle.read(), "a b c\n")

    def test_files_read_from_a_checkpoint_folder_are_refused(self):
        """A folder's files are inputs once read: the model, the vocabulary,
        the SentencePiece models, decoder.yml, config.json, ..."""
        marian = shutil.copytree(os.path.join(MARIAN_FIXTURE, "npz"),
                                 os.path.join(self.out_dir, "npz"))
        hf = shutil.copytree(os.path.join(MARIAN_FIXTURE, "hf"), os.path.join(self.out_dir, "hf"))
        vocab_link = os.path.join(self.out_dir, "vocab-link.yml")
        os.link(os.path.join(marian, "vocab.yml"), vocab_link)
        before = {os.path.join(folder, name): digest(os.path.join(folder, name))
                  for folder in (marian, hf) for name in os.listdir(folder)}
        marian_args = ["--from", "marian", "--checkpoint", marian, "--src-lang", "en",
                       "--tgt-lang", "de", "--dtype", "fp32", "-o"]
        hf_args = ["--from", "hf-marian", "--checkpoint", hf, "--dtype", "fp32", "-o"]
        for args, target, named in (
                (marian_args, os.path.join(marian, "model.npz"), "model.npz"),
                (marian_args, vocab_link, "vocab.yml"),
                (marian_args, os.path.join(marian, "target.spm"), "target.spm"),
                (hf_args, os.path.join(hf, "model.safetensors"), "model.safetensors"),
                (hf_args, os.path.join(hf, "vocab.json"), "vocab.json")):
            with self.subTest(target=target):
                self.assert_refused(args + [target], "is the input", named)
        self.assertEqual({path: digest(path) for path in before}, before)

    # -- what stays allowed ---------------------------------------------------------------
    def test_a_regular_file_that_is_no_input_is_replaced(self):
        """Also one inside the checkpoint folder that the conversion does not
        read (a model converted there before)."""
        for output in (os.path.join(self.out_dir, "model.emt"),
                       os.path.join(self.tmp, "previous.emt")):
            with open(output, "wb") as handle:
                handle.write(b"old")
            code, stderr = run_convert(self.torch_args(output))
            self.assertEqual(code, 0, stderr)
            self.assertGreater(os.path.getsize(output), 1000)
            os.remove(output)


if __name__ == "__main__":
    unittest.main()
