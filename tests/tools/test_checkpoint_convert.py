"""Converter on the real multi30k-en-de checkpoint (needs ../shared; skips otherwise)."""

import calendar
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import numpy as np
import torch

import helpers
from edgemt_tools import fbs
from edgemt_tools.model_file import read_model


class CheckpointConvertTest(unittest.TestCase):
    def setUp(self):
        self.paths = helpers.require_checkpoint(self)
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def convert(self, dtype, output, epoch=None):
        env = dict(os.environ)
        if epoch is not None:
            env["SOURCE_DATE_EPOCH"] = str(epoch)
        subprocess.run(["/usr/bin/python3", os.path.join(helpers.TOOLS_DIR, "edgemt-convert"),
                        "--from", "torch", "--checkpoint", self.paths["checkpoint"],
                        "--config", self.paths["config"], "--spm", self.paths["spm"],
                        "--src-lang", "en", "--tgt-lang", "de", "--dtype", dtype, "-o", output],
                       check=True, env=env, capture_output=True)

    def test_bundled_models_are_fresh_conversions(self):
        """models/multi30k-en-de.{int8,fp16}.emt are byte-identical to converting again
        with the same created_utc (so they cannot silently go stale). They are of the
        converter's format version (5 for fp16; 11 for int8, whose tables have
        residual codes)."""
        for dtype, path, version in (
                ("int8", helpers.BUNDLED_MODEL, fbs.RESIDUAL_TABLES_FORMAT_VERSION),
                ("fp16", helpers.BUNDLED_FP16_MODEL, fbs.FORMAT_VERSION)):
            bundled = read_model(path)
            self.assertEqual(bundled.format_version, version)
            created = bundled.header.provenance.created_utc
            epoch = calendar.timegm(time.strptime(created, "%Y-%m-%dT%H:%M:%SZ"))
            output = os.path.join(self.tmp, f"again.{dtype}.emt")
            self.convert(dtype, output, epoch)
            with open(output, "rb") as a, open(path, "rb") as b:
                fresh, old = a.read(), b.read()
            self.assertTrue(fresh == old, f"{path} differs from a fresh conversion")

    def test_fp32_tensors_equal_state_dict(self):
        output = os.path.join(self.tmp, "m32.emt")
        self.convert("fp32", output)
        model = read_model(output)
        model.check_against_config()
        state = torch.load(self.paths["checkpoint"])
        d = model.header.config.d_model
        self.assertEqual(model.header.config.vocab_size, 8000)
        self.assertEqual(model.header.config.embedding_scale, 16.0)
        self.assertTrue(model.header.config.tied_output)
        for i in range(3):
            t, e = f"transformer.decoder.layers.{i}.", f"decoder.layers.{i}."
            w = state[t + "multihead_attn.in_proj_weight"].numpy()
            np.testing.assert_array_equal(model.array(e + "cross_attn.q.weight"), w[:d])
            np.testing.assert_array_equal(model.array(e + "cross_attn.kv.weight"), w[d:])
            np.testing.assert_array_equal(model.array(e + "ffn_norm.weight"),
                                          state[t + "norm3.weight"].numpy())
        np.testing.assert_array_equal(model.array("output.weight"),
                                      state["generator.weight"].numpy())
        np.testing.assert_array_equal(model.array("output.bias"), state["generator.bias"].numpy())


if __name__ == "__main__":
    unittest.main()
