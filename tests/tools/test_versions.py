"""One version everywhere: CMakeLists.txt's project() line is what the CLI
(`edgemt --version`, `edgemt inspect`'s format version line), the library
(edgemt.version() through the Python module) and the converter
(`edgemt-convert --version`, the provenance it writes) report. The pip
package's metadata reads the same line (pyproject.toml; checked installed
by test_pip_package.py)."""

import os
import re
import subprocess
import tempfile
import unittest

import helpers

PYPROJECT = os.path.join(helpers.REPO_ROOT, "pyproject.toml")


class Versions(unittest.TestCase):
    def setUp(self):
        self.version = helpers.project_version()

    def cli(self, *arguments):
        return subprocess.run([helpers.CLI, *arguments], capture_output=True, text=True,
                              check=True).stdout

    def test_cli_version(self):
        self.assertRegex(self.cli("--version"),
                         rf"^edgemt {re.escape(self.version)} \(reads model format versions "
                         r"1 to \d+\)\n$")

    def test_library_version_through_the_python_module(self):
        library = os.environ.get("EDGEMT_LIBRARY")
        if not library:
            self.skipTest("EDGEMT_LIBRARY not set (ctest sets it)")
        code = "import edgemt; print(edgemt.version())"
        env = dict(os.environ, PYTHONPATH=os.path.join(helpers.REPO_ROOT, "runtime", "python"))
        out = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                             env=env, check=True).stdout
        self.assertEqual(out.strip(), self.version)

    def test_converter_version_and_the_provenance_it_writes(self):
        result = helpers.run_tool("edgemt-convert", "--version")
        self.assertEqual(result.stdout.split(), ["edgemt-convert", self.version])
        hf = os.path.join(helpers.REPO_ROOT, "tests", "fixtures", "marian", "hf")
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "m.emt")
            result = helpers.run_tool("edgemt-convert", "--from", "hf-marian", "--checkpoint", hf,
                                      "--dtype", "fp32", "-o", model)
            self.assertEqual(result.returncode, 0, result.stderr)
            inspect = self.cli("inspect", model)
        self.assertRegex(inspect, rf"(?m)^converter +edgemt-convert {re.escape(self.version)},")
        self.assertRegex(inspect, rf"(?m)^format version +\d+ \(edgemt {re.escape(self.version)} reads ")

    def test_the_package_metadata_reads_the_project_line(self):
        with open(PYPROJECT, encoding="utf-8") as handle:
            text = handle.read()
        self.assertIn('metadata.version.provider = "scikit_build_core.metadata.regex"', text)
        self.assertIn('metadata.version.input = "CMakeLists.txt"', text)
        regex = re.search(r"^metadata\.version\.regex = '(.*)'$", text, re.M).group(1)
        with open(os.path.join(helpers.REPO_ROOT, "CMakeLists.txt"), encoding="utf-8") as handle:
            self.assertEqual(re.search(regex, handle.read(), re.M).group("value"), self.version)


if __name__ == "__main__":
    unittest.main()
