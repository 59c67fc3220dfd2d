"""The RNN family end to end on the committed trained fixtures
(tests/fixtures/torch_rnn/: 8 models of ../shared/training/
train_rnn_attention.py, every attention variant with both cells, and the
trainer's own outputs on test_2016; its README says how they were made):

- fp32 greedy equals the trainer's own greedy() on >= 99.5% of the 1000
  lines, and beam 4 equals the PyTorch beam search under edgemt's rules
  (make_references.py) likewise;
- int8: the quality guard (framework_fixtures.assert_int8_quality: lines
  identical to fp32, BLEU within 0.3 but for one runaway line); fp16 within 0.5 BLEU of fp32.

Needs only the repository (the converter reads model.pt with Debian's torch).
"""

import dataclasses
import os
import subprocess
import unittest

import framework_fixtures as ff
import helpers  # puts tools/ on sys.path
from edgemt_tools.model_file import read_model, write_unvalidated

FIXTURE = os.path.join(ff.FIXTURES_DIR, "torch_rnn")
SPM = os.path.join(FIXTURE, "spm.model")
SOURCE = os.path.join(helpers.REFERENCE_DIR, "test_2016_flickr.en")
VARIANTS = sorted(name for name in os.listdir(FIXTURE)
                  if os.path.exists(os.path.join(FIXTURE, name, "model.pt")))


def convert_args(name):
    folder = os.path.join(FIXTURE, name)
    return ("--from", "torch-rnn", "--checkpoint", os.path.join(folder, "model.pt"), "--config",
            os.path.join(folder, "config.json"), "--spm", SPM)


CONVERTED = ff.ConvertedFixtures(convert_args, SOURCE)


def tearDownModule():
    CONVERTED.cleanup()


class TorchRnnFixturesTest(unittest.TestCase):
    def test_fixtures_cover_every_variant(self):
        self.assertEqual(VARIANTS, sorted(f"{a}-{c}" for a in ("bahdanau", "luong-concat", "luong-dot",
                                                               "luong-general")
                                          for c in ("gru", "lstm")))

    def test_fp32_greedy_equals_the_trainer(self):
        for name in VARIANTS:
            with self.subTest(name):
                ff.assert_agreement(self, CONVERTED.translate(self, name, "fp32", 1),
                                    ff.read_lines(os.path.join(FIXTURE, name, "greedy.de")),
                                    f"torch-rnn {name} fp32 greedy vs the trainer's greedy()")

    def test_fp32_beam4_equals_pytorch(self):
        for name in VARIANTS:
            with self.subTest(name):
                ff.assert_agreement(self, CONVERTED.translate(self, name, "fp32", 4),
                                    ff.read_lines(os.path.join(FIXTURE, name, "beam4.de")),
                                    f"torch-rnn {name} fp32 beam 4 vs PyTorch beam 4")

    def test_int8_quality_guard_and_fp16_within_half_a_bleu_point(self):
        for name in VARIANTS:
            fp32 = CONVERTED.translate(self, name, "fp32", 1)
            with self.subTest(f"{name} int8"):
                ff.assert_int8_quality(self, ("torch-rnn", name, 1), fp32,
                                       CONVERTED.translate(self, name, "int8", 1))
            with self.subTest(f"{name} fp16"):
                score = ff.bleu(CONVERTED.translate(self, name, "fp16", 1))
                print(f"torch-rnn {name}: BLEU fp32 {ff.bleu(fp32):.2f}, fp16 {score:.2f}")
                self.assertGreaterEqual(score, ff.bleu(fp32) - 0.5)

    def test_calibration_is_a_usage_error(self):
        # The source writes only RNN models, whose int8 files are not calibrated.
        result = helpers.run_tool("edgemt-convert", *convert_args(VARIANTS[0]), "--dtype", "int8",
                                  "--calibrate", SOURCE, "-o", os.devnull)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("--calibrate is for Transformer models; RNN int8 files use nearest "
                      "rounding (drop --calibrate)", result.stderr)

    def test_table_options_are_refused(self):
        # Float tables and residual codes are defined for the Transformer
        # family's embedding tables only.
        workspace = ff.Workspace(self)
        for option in ("--fp32-embeddings", "--fp16-embeddings", "--residual-embeddings"):
            ff.refused(self, workspace.path("rnn.int8.emt"),
                       f"{option} is for Transformer models; this is an RNN model",
                       *convert_args(VARIANTS[0]), "--dtype", "int8", option)
        # A file that says so anyway is refused at load, whatever its tables.
        model = read_model(CONVERTED.model(self, VARIANTS[0], "int8"))
        flagged = workspace.path("flagged.emt")
        tensors = {name: model.array(name) for name in model.table_order}
        for flag in ("f32_tables", "f16_tables", "residual_tables"):
            write_unvalidated(flagged, dataclasses.replace(model.header, **{flag: True}),
                              tensors, {})
            result = subprocess.run([helpers.CLI, "inspect", flagged], capture_output=True,
                                    text=True, check=False)
            self.assertEqual(result.returncode, 1, result.stderr)
            self.assertIn(f"{flag} is set in a rnn model (its family's int8 files keep their "
                          "tables as plain int8)", result.stderr)


if __name__ == "__main__":
    unittest.main()
