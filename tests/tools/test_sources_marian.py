"""--from marian and --from hf-marian, end to end on the committed fixture
(tests/fixtures/marian/: a model Marian itself trained on Multi30k, as a
Marian release folder and as the Hugging Face folder of the same weights;
its README says how each file and reference was made):

- fp32 greedy and beam-4 output equals Marian's own (pymarian) for the
  Marian folder and transformers' generate() for the Hugging Face folder on
  >= 99.5% of test_2016, with each framework's own length rules;
- int8: the quality guard (framework_fixtures.assert_int8_quality: lines
  identical to fp32, BLEU within 0.3 but for one runaway line);
- both folders give the same edgemt output wherever Marian and
  transformers themselves agree (they compute different position tables);
- model.safetensors and pytorch_model.bin give the same file;
- broken or unsupported checkpoints are refused with one line, no file.
"""

import json
import os
import shutil
import subprocess
import unittest

import numpy as np

import framework_fixtures as ff
import helpers
from edgemt_tools.model_file import read_model

FIXTURE = os.path.join(ff.FIXTURES_DIR, "marian")
NPZ = os.path.join(FIXTURE, "npz")
HF = os.path.join(FIXTURE, "hf")
REFERENCE = os.path.join(FIXTURE, "reference")
SOURCE = os.path.join(REFERENCE, "source.en")
LANGS = ("--src-lang", "en", "--tgt-lang", "de")


def reference(name):
    return ff.read_lines(os.path.join(REFERENCE, name))


def convert_args(kind):
    """Both folders of the fixture: the Marian .npz and transformers' conversion."""
    return (["--from", "marian", "--checkpoint", NPZ, *LANGS] if kind == "npz"
            else ["--from", "hf-marian", "--checkpoint", HF])


MODELS = ff.ConvertedFixtures(convert_args, SOURCE)


def tearDownModule():
    MODELS.cleanup()


class MarianFolderTest(unittest.TestCase):
    def test_fp32_greedy_matches_marian(self):
        ff.assert_agreement(self, MODELS.translate(self, "npz", "fp32", 1),
                            reference("pymarian.greedy.de"), "marian fp32 greedy vs pymarian")

    def test_fp32_beam4_matches_marian(self):
        ff.assert_agreement(self, MODELS.translate(self, "npz", "fp32", 4),
                            reference("pymarian.beam4.de"), "marian fp32 beam 4 vs pymarian")

    def test_int8_quality_guard(self):
        for beam in (1, 4):
            ff.assert_int8_quality(self, ("marian", "npz", beam),
                                   MODELS.translate(self, "npz", "fp32", beam),
                                   MODELS.translate(self, "npz", "int8", beam))

    def test_translate_uses_the_recorded_defaults_unless_told_otherwise(self):
        """No flags: decoder.yml's beam 6 and Marian's rules; flags override."""
        workspace = ff.Workspace(self)
        source = workspace.path("fifty.en")
        with open(source, "w", encoding="utf-8") as handle:
            handle.write("\n".join(ff.read_lines(SOURCE)[:50]) + "\n")
        model = MODELS.model(self, "npz", "fp32")
        default = ff.translate(self, model, source)
        self.assertEqual(default, ff.translate(self, model, source, "--beam", "6"))
        self.assertNotEqual(default, ff.translate(self, model, source, "--beam", "1"))
        short = ff.translate(self, model, source, "--max-len-a", "0", "--max-len-b", "3")
        self.assertTrue(all(len(line.split()) <= 3 for line in short))

    def test_records_marian_decoding(self):
        header = read_model(MODELS.model(self, "npz", "fp32")).header
        self.assertEqual(header.decoding.rules, "marian")
        self.assertEqual(header.decoding.beam_size, 6)  # decoder.yml beam-size
        self.assertEqual(header.decoding.max_len_a, 3.0)  # Marian's max-length-factor
        self.assertEqual(header.decoding.banned_tokens, (1,))  # <unk>
        self.assertTrue(header.config.zero_decoder_start)
        self.assertEqual(header.config.layer_norm_eps, np.float32(1e-6))


VARIANT = os.path.join(ff.FIXTURES_DIR, "marian_variant")


class MarianVariantTest(unittest.TestCase):
    """The other Marian paths (tests/fixtures/marian_variant/: also trained by
    Marian): pre-norm (n / da / top n) with Marian's raw self-attention
    memory, relu, no tied embeddings (encoder_Wemb, decoder_Wemb,
    decoder_ff_logit_out_Wt), SentencePiece vocabularies Marian applies
    itself, normalize 0.6 and word-penalty 0.1; 300 lines, of which many
    greedy ones run to Marian's 3 x source length cap."""

    @classmethod
    def setUpClass(cls):
        cls.workspace = ff.Workspace(unittest.TestCase())
        cls.model = os.path.join(cls.workspace.root, "variant.fp32.emt")
        result = helpers.run_tool("edgemt-convert", "--from", "marian", "--checkpoint",
                                  os.path.join(VARIANT, "model"), *LANGS, "--dtype", "fp32",
                                  "-o", cls.model)
        assert result.returncode == 0, result.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.workspace.root, ignore_errors=True)

    def test_matches_marian(self):
        source = os.path.join(VARIANT, "reference", "source.en")
        for beam, name in ((1, "greedy"), (4, "beam4")):
            ff.assert_agreement(self, ff.translate(self, self.model, source, "--beam", str(beam)),
                                ff.read_lines(os.path.join(VARIANT, "reference",
                                                           f"pymarian.{name}.de")),
                                f"marian variant fp32 beam {beam} vs pymarian")

    def test_records_the_variant(self):
        header = read_model(self.model).header
        self.assertEqual(header.config.norm_placement, "pre")
        self.assertTrue(header.config.raw_decoder_self_memory)
        self.assertFalse(header.config.tied_output or header.config.shared_embeddings)
        self.assertEqual(header.config.activation, "relu")
        self.assertAlmostEqual(header.decoding.length_penalty, 0.6, places=6)
        self.assertAlmostEqual(header.decoding.word_penalty, 0.1, places=6)


class HuggingFaceFolderTest(unittest.TestCase):
    def test_fp32_greedy_matches_transformers(self):
        ff.assert_agreement(self, MODELS.translate(self, "hf", "fp32", 1),
                            reference("hf.greedy.de"), "hf-marian fp32 greedy vs transformers")

    def test_fp32_beam4_matches_transformers(self):
        ff.assert_agreement(self, MODELS.translate(self, "hf", "fp32", 4),
                            reference("hf.beam4.de"), "hf-marian fp32 beam 4 vs transformers")

    def test_int8_quality_guard(self):
        for beam in (1, 4):
            ff.assert_int8_quality(self, ("hf-marian", "hf", beam),
                                   MODELS.translate(self, "hf", "fp32", beam),
                                   MODELS.translate(self, "hf", "int8", beam))

    def test_residual_codes_keep_more_lines_than_plain_int8(self):
        """The default int8 file (tables with residual codes; measured 898 /
        876 of 1,000) against --no-residual-embeddings (885 / 869), which
        keeps its own guard; `inspect` says which is which."""
        self.assertTrue(read_model(MODELS.model(self, "hf", "int8")).header.residual_tables)
        plain_model = read_model(MODELS.model(self, "hf", ff.INT8_PLAIN))
        self.assertFalse(plain_model.header.residual_tables)
        self.assertNotIn("embedding.source_residual", plain_model.entries)
        kept = plain = 0
        for beam in (1, 4):
            fp32 = MODELS.translate(self, "hf", "fp32", beam)
            without = MODELS.translate(self, "hf", ff.INT8_PLAIN, beam)
            ff.assert_int8_quality(self, ("hf-marian", "hf plain", beam), fp32, without)
            kept += sum(a == b for a, b in zip(fp32, MODELS.translate(self, "hf", "int8", beam)))
            plain += sum(a == b for a, b in zip(fp32, without))
        self.assertGreater(kept, plain)

    def test_int8_with_fp32_embeddings_keeps_more_lines(self):
        """--fp32-embeddings (the tied embedding and output matrix in fp32):
        the quality guard, and more lines identical to fp32 than the plain
        int8 file keeps (measured: 898 / 890 against 885 / 869 of 1,000)."""
        model = MODELS.model(self, "hf", ff.INT8_FP32_EMBEDDINGS)
        self.assertTrue(read_model(model).header.f32_tables)
        inspect = subprocess.run([helpers.CLI, "inspect", model], capture_output=True, text=True,
                                 check=False)
        self.assertEqual(inspect.returncode, 0, inspect.stderr)
        self.assertIn("int8-smoothed-per-row-dynamic (", inspect.stdout)
        self.assertIn("; embeddings f32", inspect.stdout)
        for beam in (1, 4):
            fp32 = MODELS.translate(self, "hf", "fp32", beam)
            kept = MODELS.translate(self, "hf", ff.INT8_FP32_EMBEDDINGS, beam)
            plain = MODELS.translate(self, "hf", ff.INT8_PLAIN, beam)
            ff.assert_int8_quality(self, ("hf-marian", "hf fp32-embeddings", beam), fp32, kept)
            self.assertGreater(sum(a == b for a, b in zip(fp32, kept)),
                               sum(a == b for a, b in zip(fp32, plain)), f"beam {beam}")

    def assert_untied_tables_keep_more_lines(self, dtype: str, key: str, table: str):
        """A file whose tables are `table` ("f32", "f16") and whose output
        projection is an int8 copy of its own: the quality guard, and more
        lines identical to fp32 than the plain int8 file keeps over both
        searches."""
        model = read_model(MODELS.model(self, "hf", dtype))
        self.assertEqual((model.header.f32_tables, model.header.f16_tables),
                         (table == "f32", table == "f16"))
        self.assertFalse(model.header.config.tied_output)
        self.assertEqual((model.entries["embedding.source"].dtype,
                          model.entries["output.weight"].dtype), (table, "i8"))
        kept = plain = 0
        for beam in (1, 4):
            fp32 = MODELS.translate(self, "hf", "fp32", beam)
            int8 = MODELS.translate(self, "hf", dtype, beam)
            ff.assert_int8_quality(self, ("hf-marian", key, beam), fp32, int8)
            kept += sum(a == b for a, b in zip(fp32, int8))
            plain += sum(a == b for a, b in zip(fp32, MODELS.translate(self, "hf", ff.INT8_PLAIN,
                                                                       beam)))
        self.assertGreater(kept, plain)

    def test_int8_with_fp32_lookup_tables_keeps_more_lines(self):
        """--fp32-embeddings lookup (measured: 886 / 875 against 885 / 869
        of 1,000)."""
        self.assert_untied_tables_keep_more_lines(ff.INT8_FP32_LOOKUP, "hf fp32-lookup", "f32")

    def test_int8_with_fp16_tables_keeps_more_lines(self):
        """--fp16-embeddings (measured: 891 / 878 of 1,000); `inspect` says
        so."""
        self.assert_untied_tables_keep_more_lines(ff.INT8_FP16_EMBEDDINGS, "hf fp16", "f16")
        inspect = subprocess.run([helpers.CLI, "inspect", MODELS.model(self, "hf",
                                                                       ff.INT8_FP16_EMBEDDINGS)],
                                 capture_output=True, text=True, check=False)
        self.assertEqual(inspect.returncode, 0, inspect.stderr)
        self.assertIn("; embeddings f16", inspect.stdout)

    def test_same_output_as_marian_folder_where_the_frameworks_agree(self):
        for beam, name in ((1, "greedy"), (4, "beam4")):
            marian = reference(f"pymarian.{name}.de")
            hf = reference(f"hf.{name}.de")
            agree = [i for i, (a, b) in enumerate(zip(marian, hf)) if a == b]
            self.assertGreater(len(agree), 500)  # they agree on most lines
            ours_npz = MODELS.translate(self, "npz", "fp32", beam)
            ours_hf = MODELS.translate(self, "hf", "fp32", beam)
            differing = [i for i in agree if ours_npz[i] != ours_hf[i]]
            print(f"beam {beam}: frameworks agree on {len(agree)} lines; edgemt's two files "
                  f"differ on {len(differing)} of them")
            self.assertEqual(differing, [])

    def test_safetensors_and_bin_give_the_same_file(self):
        workspace = ff.Workspace(self)
        files = {}
        for weights in ("model.safetensors", "pytorch_model.bin"):
            folder = workspace.path(weights)
            shutil.copytree(HF, folder)
            other = "pytorch_model.bin" if weights == "model.safetensors" else "model.safetensors"
            os.remove(os.path.join(folder, other))
            files[weights] = ff.convert(self, workspace.path(weights + ".emt"), "--from",
                                        "hf-marian", "--checkpoint", folder, "--dtype", "fp32")
        a = read_model(files["model.safetensors"])
        b = read_model(files["pytorch_model.bin"])
        self.assertEqual(sorted(a.entries), sorted(b.entries))
        for name in a.entries:
            np.testing.assert_array_equal(a.array(name), b.array(name), err_msg=name)

    def test_records_generation_config(self):
        header = read_model(MODELS.model(self, "hf", "fp32")).header
        self.assertEqual(header.decoding.rules, "huggingface")
        self.assertEqual(header.decoding.beam_size, 6)
        self.assertEqual(header.decoding.max_len_b, 511.0)  # max_length 512 decoder tokens
        self.assertEqual(header.decoding.banned_tokens, (3809,))  # bad_words_ids: pad


class TargetPrefixTest(unittest.TestCase):
    """A multi-target model (the Hugging Face fixture given two target-language
    tokens, >>fra<< and >>deu<<, with embedding rows of their own):
    `--target-prefix` puts the token first in every source."""

    @classmethod
    def setUpClass(cls):
        from safetensors.numpy import load_file, save_file
        cls.workspace = ff.Workspace(unittest.TestCase())
        folder = os.path.join(cls.workspace.root, "multi")
        shutil.copytree(HF, folder)
        os.remove(os.path.join(folder, "pytorch_model.bin"))
        path = os.path.join(folder, "model.safetensors")
        tensors = dict(load_file(path))
        rows = np.random.default_rng(3).normal(0.0, 0.5, (2, tensors["model.shared.weight"].shape[1]))
        tensors["model.shared.weight"] = np.concatenate(
            [tensors["model.shared.weight"], rows.astype(np.float32)])
        tensors["final_logits_bias"] = np.concatenate(
            [tensors["final_logits_bias"], np.zeros((1, 2), np.float32)], axis=1)
        save_file(tensors, path)
        for name, update in (("config.json", {"vocab_size": 3812, "decoder_vocab_size": 3812}),
                             ("vocab.json", {">>fra<<": 3810, ">>deu<<": 3811})):
            with open(os.path.join(folder, name), encoding="utf-8") as handle:
                value = json.load(handle)
            value.update(update)
            with open(os.path.join(folder, name), "w", encoding="utf-8") as handle:
                json.dump(value, handle, ensure_ascii=False)
        cls.model = os.path.join(cls.workspace.root, "multi.emt")
        result = helpers.run_tool("edgemt-convert", "--from", "hf-marian", "--checkpoint",
                                  folder, "--dtype", "fp32", "-o", cls.model)
        assert result.returncode == 0, result.stderr
        cls.source = os.path.join(cls.workspace.root, "ten.en")
        with open(cls.source, "w", encoding="utf-8") as handle:
            handle.write("\n".join(ff.read_lines(SOURCE)[:10]) + "\n")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.workspace.root, ignore_errors=True)

    def run_cli(self, *args):
        import subprocess
        return subprocess.run([helpers.CLI, *args], capture_output=True, text=True, check=False)

    def test_inspect_lists_the_target_languages(self):
        result = self.run_cli("inspect", self.model)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("target languages >>fra<< >>deu<<", result.stdout)

    def test_the_token_reaches_the_model(self):
        plain = ff.translate(self, self.model, self.source, "--beam", "1")
        fra = ff.translate(self, self.model, self.source, "--beam", "1", "--target-prefix", "fra")
        fra_token = ff.translate(self, self.model, self.source, "--beam", "1",
                                 "--target-prefix", ">>fra<<")
        deu = ff.translate(self, self.model, self.source, "--beam", "1", "--target-prefix", "deu")
        self.assertEqual(fra, fra_token)
        self.assertNotEqual(fra, plain)
        self.assertNotEqual(fra, deu)

    def test_unknown_language_names_the_known_ones(self):
        result = self.run_cli("translate", "-m", self.model, "-i", self.source,
                              "--target-prefix", "ita")
        self.assertEqual(result.returncode, 2)
        self.assertIn("no token >>ita<<; it has >>fra<< >>deu<<", result.stderr)
        self.assertEqual(result.stdout, "")

    def test_single_target_model_refuses_a_prefix(self):
        result = self.run_cli("translate", "-m", MODELS.model(self, "hf", "fp32"), "-i",
                              self.source, "--target-prefix", "fra")
        self.assertEqual(result.returncode, 2)
        self.assertIn("no target-language tokens", result.stderr)


class RefusalTest(unittest.TestCase):
    """Broken or unsupported checkpoints: one clear line, nothing written."""

    def setUp(self):
        self.workspace = ff.Workspace(self)
        self.output = self.workspace.path("out.emt")

    def copy(self, folder):
        path = self.workspace.path(os.path.basename(folder))
        shutil.copytree(folder, path)
        return path

    def rewrite_npz(self, folder, change):
        path = os.path.join(folder, "model.npz")
        with np.load(path) as archive:
            tensors = {name: archive[name] for name in archive.files}
        change(tensors)
        np.savez(path, **tensors)

    def rewrite_model_yml(self, tensors, old, new):
        text = tensors["special:model.yml"].tobytes().split(b"\0")[0].decode()
        self.assertIn(old, text)
        data = text.replace(old, new).encode() + b"\0"
        tensors["special:model.yml"] = np.frombuffer(data, dtype=np.int8)

    def marian(self, folder, fragment):
        return ff.refused(self, self.output, fragment, "--from", "marian", "--checkpoint",
                          folder, *LANGS, "--dtype", "fp32")

    def hf(self, folder, fragment):
        return ff.refused(self, self.output, fragment, "--from", "hf-marian", "--checkpoint",
                          folder, "--dtype", "fp32")

    def test_marian_missing_tensor(self):
        folder = self.copy(NPZ)
        self.rewrite_npz(folder, lambda t: t.pop("decoder_l2_ffn_W1"))
        self.marian(folder, "missing tensor decoder_l2_ffn_W1")

    def test_marian_wrong_shape(self):
        folder = self.copy(NPZ)
        self.rewrite_npz(folder, lambda t: t.update(encoder_l1_self_Wq=t["encoder_l1_self_Wq"][:, :50]))
        self.marian(folder, "encoder_l1_self_Wq")

    def test_marian_unsupported_options(self):
        for old, new, option in (
                ("transformer-decoder-autoreg: self-attention",
                 "transformer-decoder-autoreg: rnn", "transformer-decoder-autoreg"),
                ("transformer-postprocess: dan", "transformer-postprocess: dna",
                 "transformer-preprocess/postprocess"),
                ("transformer-ffn-activation: swish", "transformer-ffn-activation: tanh",
                 "transformer-ffn-activation")):
            with self.subTest(option=option):
                folder = self.copy(NPZ)
                self.rewrite_npz(folder, lambda t: self.rewrite_model_yml(t, old, new))
                self.marian(folder, option)
                shutil.rmtree(folder)

    def test_marian_extra_tensor(self):
        folder = self.copy(NPZ)
        self.rewrite_npz(folder, lambda t: t.update(encoder_l1_rnn_W=np.zeros((4, 4), "f4")))
        self.marian(folder, "does not understand: encoder_l1_rnn_W")

    def save_safetensors(self, folder, change):
        from safetensors.numpy import load_file, save_file
        path = os.path.join(folder, "model.safetensors")
        tensors = dict(load_file(path))
        change(tensors)
        save_file(tensors, path)

    def test_hf_missing_tensor(self):
        folder = self.copy(HF)
        self.save_safetensors(folder, lambda t: t.pop("model.decoder.layers.1.fc2.weight"))
        self.hf(folder, "missing tensor model.decoder.layers.1.fc2.weight")

    def test_hf_wrong_shape(self):
        folder = self.copy(HF)
        key = "model.encoder.layers.0.self_attn.k_proj.weight"
        self.save_safetensors(folder, lambda t: t.update({key: np.ascontiguousarray(t[key][:10])}))
        self.hf(folder, key)

    def test_hf_unsupported_options(self):
        for key, value, fragment in (("activation_function", "gelu_new", "activation_function"),
                                     ("decoder_attention_heads", 2, "head counts"),
                                     ("model_type", "bart", "model_type")):
            with self.subTest(key=key):
                folder = self.copy(HF)
                path = os.path.join(folder, "config.json")
                with open(path, encoding="utf-8") as handle:
                    config = json.load(handle)
                config[key] = value
                with open(path, "w", encoding="utf-8") as handle:
                    json.dump(config, handle)
                self.hf(folder, fragment)
                shutil.rmtree(folder)

    def test_wrong_from_names_what_it_found(self):
        self.hf(NPZ, "this is a Marian model (.npz or .bin): use --from marian")
        ff.refused(self, self.output, "this is a Hugging Face MarianMT folder: use --from "
                   "hf-marian", "--from", "marian", "--checkpoint", HF, *LANGS, "--dtype", "fp32")


if __name__ == "__main__":
    unittest.main()
