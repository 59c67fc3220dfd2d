"""`pip install <checkout>` into a fresh venv, as a new user would: the
Python module translates, the CLI runs as `edgemt` and `python -m edgemt`,
`edgemt-convert` converts the committed Marian fixtures (--from hf-marian
and --from marian), and every place that states the version agrees with
CMakeLists.txt's project() line.

The venv is made without --system-site-packages, so nothing of Debian's
Python (numpy, sentencepiece, flatbuffers, torch) is seen: the package's
declared dependencies come from PyPI. Without PyPI (no network) the test
prints "SKIPPED:" (ctest reports it skipped); any other failure fails.

The wheel is built by scikit-build-core into <checkout>/build/pip/ (ccache
makes a rebuild of unchanged sources cheap).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import helpers

FIXTURES = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian")
# Signs that pip could not reach PyPI (then the test is skipped, not failed).
NO_NETWORK = re.compile(r"(Failed to establish a new connection|Temporary failure in name "
                        r"resolution|Network is unreachable|No matching distribution found for "
                        r"scikit-build-core)")
SENTENCES = ["A man in an orange hat starring at something.",
             "Two dogs play in the snow. A cat sleeps."]


class PipPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="edgemt-pip-")
        venv = os.path.join(cls.work, "venv")
        subprocess.run(["/usr/bin/python3", "-m", "venv", venv], check=True)
        cls.bin = os.path.join(venv, "bin")
        cls.env = {k: v for k, v in os.environ.items()
                   if k not in ("PYTHONPATH", "EDGEMT_LIBRARY", "EDGEMT_CLI")}
        cls.env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        cls.env.setdefault("CCACHE_BASEDIR", helpers.REPO_ROOT)
        install = subprocess.run([cls.tool("pip"), "install", helpers.REPO_ROOT],
                                 capture_output=True, text=True, env=cls.env, check=False)
        cls.install = install

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.work, ignore_errors=True)

    @classmethod
    def tool(cls, name: str) -> str:
        return os.path.join(cls.bin, name)

    def setUp(self):
        if self.install.returncode != 0:
            if NO_NETWORK.search(self.install.stdout + self.install.stderr):
                print("SKIPPED: PyPI not reachable", file=sys.stderr)
                self.skipTest("PyPI not reachable")
            self.fail("pip install failed:\n" + self.install.stdout[-3000:]
                      + self.install.stderr[-3000:])

    def run_in_venv(self, *command, stdin=None):
        """Runs `command` from a folder outside the checkout, so that nothing
        is imported from it."""
        result = subprocess.run(list(command), input=stdin, capture_output=True, text=True,
                                env=self.env, cwd=self.work, check=False)
        self.assertEqual(result.returncode, 0, f"{command}: {result.stderr}")
        return result.stdout

    def convert(self, name, *arguments):
        output = os.path.join(self.work, name)
        self.run_in_venv(self.tool("edgemt-convert"), *arguments, "-o", output)
        return output

    def test_the_venv_sees_no_system_packages(self):
        code = "import importlib.util as u; print(u.find_spec('torch') is None)"
        self.assertEqual(self.run_in_venv(self.tool("python"), "-c", code).strip(), "True")

    def test_converts_marian_folders_and_translates_as_the_build_does(self):
        hf = self.convert("hf.emt", "--from", "hf-marian", "--checkpoint",
                          os.path.join(FIXTURES, "hf"), "--dtype", "fp32")
        npz = self.convert("npz.emt", "--from", "marian", "--checkpoint",
                           os.path.join(FIXTURES, "npz"), "--src-lang", "en", "--tgt-lang", "de",
                           "--dtype", "fp32")
        text = "\n".join(SENTENCES) + "\n"
        for model in (hf, npz):
            want = subprocess.run([helpers.CLI, "translate", "-m", model], input=text,
                                  capture_output=True, text=True, check=True).stdout
            self.assertEqual(len(want.splitlines()), 2)
            self.assertEqual(self.run_in_venv(self.tool("edgemt"), "translate", "-m", model,
                                              stdin=text), want)
            self.assertEqual(self.run_in_venv(self.tool("python"), "-m", "edgemt", "translate",
                                              "-m", model, stdin=text), want)
            code = ("import sys, edgemt\n"
                    "translator = edgemt.Translator(edgemt.Model(sys.argv[1]))\n"
                    "for t in translator.translate(sys.stdin.read().splitlines()):\n"
                    "    print(t.text)\n")
            self.assertEqual(self.run_in_venv(self.tool("python"), "-c", code, model,
                                              stdin=text), want)

    def test_torch_source_without_torch_is_one_line(self):
        paths = helpers.checkpoint_paths()
        if paths is None:
            self.skipTest("needs ../shared's checkpoint")
        result = subprocess.run(
            [self.tool("edgemt-convert"), "--from", "torch", "--checkpoint", paths["checkpoint"],
             "--config", paths["config"], "--spm", paths["spm"], "--src-lang", "en",
             "--tgt-lang", "de", "-o", os.path.join(self.work, "t.emt")],
            capture_output=True, text=True, env=self.env, cwd=self.work, check=False)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
        self.assertIn("pip install 'edgemt[torch]'", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.work, "t.emt")))

    def test_the_module_and_the_cli_come_from_the_package(self):
        code = "import edgemt, edgemt.__main__ as m; print(edgemt.library_path()); print(m.cli_path())"
        library, cli = self.run_in_venv(self.tool("python"), "-c", code).split()
        site = os.path.join(self.work, "venv", "lib")
        self.assertTrue(library.startswith(site), library)
        self.assertTrue(cli.startswith(site), cli)

    def test_pip_wheel_installs_into_another_venv(self):
        """`pip wheel .` makes a wheel that installs elsewhere on the same
        machine (here a venv that takes the dependencies from Debian's
        Python, so the test needs no second download)."""
        wheels = os.path.join(self.work, "wheels")
        self.run_in_venv(self.tool("pip"), "wheel", "--no-deps", "-w", wheels, helpers.REPO_ROOT)
        [wheel] = [name for name in os.listdir(wheels) if name.endswith(".whl")]
        other = os.path.join(self.work, "other")
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", other],
                       check=True)
        pip = os.path.join(other, "bin", "pip")
        self.run_in_venv(pip, "install", "--no-deps", os.path.join(wheels, wheel))
        code = ("import edgemt; t = edgemt.Translator(edgemt.Model(%r)); "
                "print(t.translate(['A dog runs.'])[0].text)" % helpers.BUNDLED_MODEL)
        out = self.run_in_venv(os.path.join(other, "bin", "python"), "-c", code)
        self.assertEqual(out.strip(), subprocess.run(
            [helpers.CLI, "translate", "-m", helpers.BUNDLED_MODEL, "A dog runs."],
            capture_output=True, text=True, check=True).stdout.strip())
        self.assertRegex(self.run_in_venv(os.path.join(other, "bin", "edgemt"), "--version"),
                         r"^edgemt \d+\.\d+\.\d+ ")

    def test_every_version_is_the_project_version(self):
        version = helpers.project_version()
        self.assertRegex(self.run_in_venv(self.tool("edgemt"), "--version"),
                         rf"^edgemt {re.escape(version)} ")
        code = "import edgemt, importlib.metadata as m; print(edgemt.version(), m.version('edgemt'))"
        self.assertEqual(self.run_in_venv(self.tool("python"), "-c", code).split(),
                         [version, version])
        self.assertEqual(self.run_in_venv(self.tool("edgemt-convert"), "--version").split(),
                         ["edgemt-convert", version])
        model = self.convert("version.emt", "--from", "hf-marian", "--checkpoint",
                             os.path.join(FIXTURES, "hf"), "--dtype", "fp32")
        inspect = self.run_in_venv(self.tool("edgemt"), "inspect", model)
        self.assertRegex(inspect, rf"(?m)^format version +\d+ \(edgemt {re.escape(version)} reads ")
        self.assertRegex(inspect, rf"(?m)^converter +edgemt-convert {re.escape(version)},")


if __name__ == "__main__":
    unittest.main()
