"""Untrusted checkpoints never run code (issue 38, defect 1).

A checkpoint that is otherwise valid but carries a pickled payload (an
object whose unpickling would run os.system or builtins.exec and create a
marker file), where each format would hide it (an extra state-dict entry,
the state dict's _metadata, OpenNMT-py's `opt`), is refused by every source
that reads pickles (--from torch, torch-rnn, opennmt Transformer and RNN,
hf-marian's pytorch_model.bin, and the detection that names the right
--from) with one line naming the forbidden class, exit 1, no traceback,
no output, and the marker NOT created:

- with checkpoints the installed torch saves here (Debian's 1.13 under
  ctest; 2.x when this module runs in a PyTorch 2.x interpreter), built
  from the repository's fixtures;
- with the PyTorch 2.5.1 files of tests/fixtures/untrusted/ (README there).

The converter runs with this module's interpreter (sys.executable).
test_torch_zip.py tests the loader itself.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import framework_fixtures as ff
import helpers
from edgemt_tools.testing import tiny_state_dict, tiny_torch_config, write_tiny_checkpoint

UNTRUSTED = os.path.join(ff.FIXTURES_DIR, "untrusted")
TORCH_RNN = os.path.join(ff.FIXTURES_DIR, "torch_rnn")
OPENNMT = os.path.join(ff.FIXTURES_DIR, "opennmt")
OPENNMT_RNN = os.path.join(ff.FIXTURES_DIR, "opennmt_rnn")
HF = os.path.join(ff.FIXTURES_DIR, "marian", "hf")
# The file the committed payloads create in the current directory (make_fixtures.py).
FIXTURE_MARKER = "edgemt-payload-ran"
LANGS = ("--src-lang", "en", "--tgt-lang", "de")


class SystemPayload:
    """Unpickling it runs `touch <marker>` (os.system: posix.system)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


class ExecPayload:
    """Unpickling it runs Python code (builtins.exec) creating <marker>."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({self.marker!r}, 'w').close()",)


class PayloadCase(unittest.TestCase):
    """Runs edgemt-convert in a fresh folder and checks the refusal."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="edgemt-untrusted-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.marker = os.path.join(self.tmp, FIXTURE_MARKER)

    def path(self, *names):
        return os.path.join(self.tmp, *names)

    def assert_refused(self, forbidden, *args):
        """exit 1, one `error:` line naming `forbidden` (or the text given),
        no traceback, no output, and no marker. Returns the line."""
        output = self.path("out.emt")
        result = subprocess.run(
            [sys.executable, os.path.join(helpers.TOOLS_DIR, "edgemt-convert"), *args,
             "--dtype", "fp32", "-o", output],
            capture_output=True, text=True, cwd=self.tmp, check=False)
        self.assertFalse(os.path.exists(self.marker), "the checkpoint's payload ran")
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        errors = [line for line in result.stderr.splitlines() if "error:" in line]
        self.assertEqual(len(errors), 1, result.stderr)
        self.assertIn(forbidden, errors[0])
        self.assertFalse(os.path.exists(output), "a refused conversion wrote a file")
        return errors[0]


class InstalledTorchPayloadTest(PayloadCase):
    """Payload checkpoints the installed torch saves, one per source."""

    def save(self, obj, *names):
        import torch
        path = self.path(*names)
        torch.save(obj, path)
        return path

    def trusted(self, path):
        """A repository fixture, loaded with torch itself (it is ours)."""
        import torch
        return torch.load(path, map_location="cpu")

    def test_torch_state_dict_with_an_extra_entry(self):
        config = tiny_torch_config()
        state = tiny_state_dict(config)
        state["payload"] = SystemPayload(self.marker)
        paths = write_tiny_checkpoint(self.tmp, config, state=state)
        self.assert_refused("holds a posix.system, which a PyTorch state dict does not",
                            "--from", "torch", "--checkpoint", paths["checkpoint"],
                            "--config", paths["config"], "--spm", paths["spm"])

    def test_torch_rnn_payload_in_the_state_dicts_metadata(self):
        folder = os.path.join(TORCH_RNN, "luong-dot-gru")
        state = self.trusted(os.path.join(folder, "model.pt"))
        state._metadata[""]["hook"] = ExecPayload(self.marker)
        self.assert_refused("holds a builtins.exec", "--from", "torch-rnn",
                            "--checkpoint", self.save(state, "model.pt"),
                            "--config", os.path.join(folder, "config.json"),
                            "--spm", os.path.join(TORCH_RNN, "spm.model"))

    def test_opennmt_transformer_payload_in_opt(self):
        checkpoint = self.trusted(os.path.join(OPENNMT, "A.pt"))
        checkpoint["opt"].lr_schedule = SystemPayload(self.marker)
        self.assert_refused("holds a posix.system, which an OpenNMT-py v3 checkpoint does not",
                            "--from", "opennmt", "--checkpoint", self.save(checkpoint, "A.pt"),
                            "--src-spm", os.path.join(OPENNMT, "A.src.spm"),
                            "--tgt-spm", os.path.join(OPENNMT, "A.tgt.spm"), *LANGS)

    def test_opennmt_rnn_payload_in_opt(self):
        checkpoint = self.trusted(os.path.join(OPENNMT_RNN, "G1.pt"))
        checkpoint["opt"].rnn_type = ExecPayload(self.marker)
        self.assert_refused("holds a builtins.exec", "--from", "opennmt",
                            "--checkpoint", self.save(checkpoint, "G1.pt"),
                            "--spm", os.path.join(OPENNMT_RNN, "R.spm"), *LANGS)

    def test_hf_marian_pytorch_model_bin(self):
        folder = self.path("hf")
        shutil.copytree(HF, folder, ignore=shutil.ignore_patterns("model.safetensors"))
        state = self.trusted(os.path.join(HF, "pytorch_model.bin"))
        state["model.encoder.layers.0.payload"] = SystemPayload(self.marker)
        self.save(state, "hf", "pytorch_model.bin")
        self.assert_refused("holds a posix.system", "--from", "hf-marian", "--checkpoint", folder)

    def test_detection_reads_names_only(self):
        """A --from that does not fit makes the converter tell what the
        file is: from the names in its pickle, nothing unpickled."""
        checkpoint = self.trusted(os.path.join(OPENNMT, "B.pt"))
        checkpoint["opt"].lr_schedule = SystemPayload(self.marker)
        path = self.save(checkpoint, "B.pt")
        self.assert_refused("this is an OpenNMT-py checkpoint: use --from opennmt",
                            "--from", "torch-rnn", "--checkpoint", path,
                            "--config", os.path.join(TORCH_RNN, "luong-dot-gru", "config.json"),
                            "--spm", os.path.join(TORCH_RNN, "spm.model"))


class TorchTwoPayloadTest(PayloadCase):
    """The payload files PyTorch 2.5.1 wrote (tests/fixtures/untrusted/),
    through each source that reads them."""

    STATE_DICTS = {"payload_state_dict_entry.pt": "posix.system",
                   "payload_state_dict_metadata.pt": "builtins.exec"}

    def test_state_dict_sources(self):
        tiny = write_tiny_checkpoint(self.path(), tiny_torch_config())
        rnn = os.path.join(TORCH_RNN, "luong-dot-gru")
        for name, forbidden in self.STATE_DICTS.items():
            checkpoint = os.path.join(UNTRUSTED, name)
            with self.subTest(name=name, source="torch"):
                self.assert_refused(f"holds a {forbidden}", "--from", "torch", "--checkpoint",
                                    checkpoint, "--config", tiny["config"], "--spm", tiny["spm"])
            with self.subTest(name=name, source="torch-rnn"):
                self.assert_refused(f"holds a {forbidden}", "--from", "torch-rnn",
                                    "--checkpoint", checkpoint,
                                    "--config", os.path.join(rnn, "config.json"),
                                    "--spm", os.path.join(TORCH_RNN, "spm.model"))
            with self.subTest(name=name, source="hf-marian"):
                folder = self.path(f"hf-{name}")
                shutil.copytree(HF, folder, ignore=shutil.ignore_patterns("model.safetensors"))
                shutil.copyfile(checkpoint, os.path.join(folder, "pytorch_model.bin"))
                self.assert_refused(f"holds a {forbidden}", "--from", "hf-marian",
                                    "--checkpoint", folder)

    def test_opennmt(self):
        self.assert_refused("holds a posix.system, which an OpenNMT-py v3 checkpoint does not",
                            "--from", "opennmt", "--checkpoint",
                            os.path.join(UNTRUSTED, "payload_opennmt_opt.pt"),
                            "--spm", os.path.join(OPENNMT_RNN, "R.spm"), *LANGS)

    def test_detection(self):
        self.assert_refused("this is an OpenNMT-py checkpoint: use --from opennmt",
                            "--from", "hf-marian", "--checkpoint",
                            os.path.join(UNTRUSTED, "payload_opennmt_opt.pt"))


if __name__ == "__main__":
    unittest.main()
