"""Acceptance: edgemt fp32 decoder logits equal PyTorch's within 1e-3.

For the first 50 sentences of test_2016_flickr, the decoder is teacher-forced
along PyTorch's greedy output (committed in models/reference/) and the logits
of the first 5 steps are compared: PyTorch (fp32, the README's forward pass)
against edgemt (`edgemt_force_decode`, a build helper, on a file converted
from the same checkpoint). Needs ../shared (label checkpoint).
"""

import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import helpers
from edgemt_tools.torch_reference import TorchReference

FORCE_DECODE = os.environ.get("EDGEMT_FORCE_DECODE",
                              os.path.join(helpers.REPO_ROOT, "build", "tests",
                                           "edgemt_force_decode"))
SENTENCES = 50
STEPS = 5
TOLERANCE = 1e-3


def read_ids(name):
    with open(os.path.join(helpers.REFERENCE_DIR, name), encoding="utf-8") as handle:
        return [[int(t) for t in line.split()] for line in handle.read().splitlines()]


class CheckpointLogitsTest(unittest.TestCase):
    def test_first_steps_match_pytorch(self):
        paths = helpers.require_checkpoint(self)
        self.assertTrue(os.path.isfile(FORCE_DECODE), f"not built: {FORCE_DECODE}")
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        model = os.path.join(tmp, "fp32.emt")
        result = helpers.run_tool("edgemt-convert", "--from", "torch", "--checkpoint",
                                  paths["checkpoint"], "--config", paths["config"], "--spm",
                                  paths["spm"], "--src-lang", "en", "--tgt-lang", "de",
                                  "--dtype", "fp32", "-o", model)
        self.assertEqual(result.returncode, 0, result.stderr)

        reference = TorchReference(paths["checkpoint"], paths["config"])
        sources = read_ids("test_2016_flickr.en.ids")[:SENTENCES]
        greedy = read_ids("torch_fp32_greedy.ids")[:SENTENCES]
        cases = []
        for src, out in zip(sources, greedy):
            target = (out + [reference.eos])[:STEPS]
            cases.append((src, target))
        case_file = os.path.join(tmp, "cases.txt")
        with open(case_file, "w", encoding="utf-8") as handle:
            for src, target in cases:
                handle.write(" ".join(map(str, src)) + "\t" + " ".join(map(str, target)) + "\n")
        logits_file = os.path.join(tmp, "logits.f32")
        run = subprocess.run([FORCE_DECODE, model, case_file, logits_file],
                             capture_output=True, text=True, check=False)
        self.assertEqual(run.returncode, 0, run.stderr)
        edgemt = np.fromfile(logits_file, dtype="<f4")
        vocab = reference.config["vocab_size"]

        worst = 0.0
        offset = 0
        for src, target in cases:
            for step in range(len(target)):
                torch_logits = reference.step_logits(src, [reference.bos] + target[:step])
                ours = edgemt[offset:offset + vocab]
                offset += vocab
                worst = max(worst, float(np.max(np.abs(ours - torch_logits))))
        self.assertEqual(offset, edgemt.size)
        print(f"max |edgemt - PyTorch| over {SENTENCES} sentences x {STEPS} steps: {worst:.2e}")
        self.assertLessEqual(worst, TOLERANCE)


if __name__ == "__main__":
    unittest.main()
