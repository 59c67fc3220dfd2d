"""The README is a short user's guide whose every command works (issue 41).

- README.md has at most 300 lines and no commit hash (those belong in
  docs/benchmarks/log.md);
- every relative link in README.md and docs/ points to an existing file (and
  an anchor to a heading of it);
- every command of the README's fenced shell blocks is in COMMANDS below,
  and every entry of COMMANDS is in the README: a new command fails here
  until it says how it is checked. Cheap commands run as written, in a
  scratch folder where each placeholder the README uses (input.en,
  opus-mt-en-de, model_step_20000.pt, ...) is a link to a fixture
  (PLACEHOLDERS) and `edgemt` / `edgemt-convert` are the built CLI
  (EDGEMT_CLI) and tools/edgemt-convert; expensive ones (installing,
  building, the test tiers) have the scripts and files they name checked
  (present, `bash -n`) instead;
- the README's Python block runs against the built module, every C API
  call of its C block is declared in edgemt.h, and every folder of its
  Layout table exists.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import helpers

ROOT = helpers.REPO_ROOT
README = os.path.join(ROOT, "README.md")
BUILD_DIR = os.path.dirname(os.path.abspath(helpers.CLI))
SHARED_CHECKPOINT = helpers.CHECKPOINT_DIR
FIXTURES = os.path.join(ROOT, "tests", "fixtures")

# README placeholder -> what it stands for in the scratch folder.
PLACEHOLDERS = {
    "models": os.path.join(ROOT, "models"),
    "runtime": os.path.join(ROOT, "runtime"),
    "build": BUILD_DIR,
    "opus-mt-en-de": os.path.join(FIXTURES, "marian", "hf"),
    "opus-2020-02-26": os.path.join(FIXTURES, "marian", "npz"),
    "model_step_20000.pt": os.path.join(FIXTURES, "opennmt", "A.pt"),
    "en.spm": os.path.join(FIXTURES, "opennmt", "A.src.spm"),
    "de.spm": os.path.join(FIXTURES, "opennmt", "A.tgt.spm"),
    "model.pt": os.path.join(SHARED_CHECKPOINT, "model.pt"),
    "config.json": os.path.join(SHARED_CHECKPOINT, "config.json"),
    "spm.model": os.path.join(SHARED_CHECKPOINT, "spm.model"),
    "rnn.pt": os.path.join(FIXTURES, "torch_rnn", "bahdanau-gru", "model.pt"),
    "rnn.json": os.path.join(FIXTURES, "torch_rnn", "bahdanau-gru", "config.json"),
    "rnn.spm": os.path.join(FIXTURES, "torch_rnn", "spm.model"),
}
INPUT_LINES = ["A man is riding a bike.", "Two dogs play in the snow. A cat sleeps."]


def run(expect, file=None, needs_shared=False, library_from_checkout=False):
    """Run as written in the scratch folder; `expect` must be in its stdout
    (or in `file`, which the command writes). library_from_checkout: without
    EDGEMT_LIBRARY, so the module finds the checkout's build/ itself."""
    return {"kind": "run", "expect": expect, "file": file, "needs_shared": needs_shared,
            "library_from_checkout": library_from_checkout}


def scripts(*paths, why):
    """Not run (`why`); each script must exist and pass `bash -n`."""
    return {"kind": "scripts", "paths": paths, "why": why}


def custom(method, why):
    """Not run (`why`); the named check of ReadmeTest instead."""
    return {"kind": "custom", "method": method, "why": why}


MODEL = "models/multi30k-en-de.int8.emt"
DEBIAN = "platforms/debian12/"
COMMANDS = {
    # Install
    f"bash {DEBIAN}demo.sh":
        scripts(f"{DEBIAN}demo.sh", f"{DEBIAN}install-deps.sh", f"{DEBIAN}build.sh",
                why="installs packages as root and builds"),
    f"bash {DEBIAN}install-deps.sh": scripts(f"{DEBIAN}install-deps.sh", why="installs packages as root"),
    f"bash {DEBIAN}build.sh": scripts(f"{DEBIAN}build.sh", why="a full build"),
    "python3 -m venv ~/edgemt-venv && ~/edgemt-venv/bin/pip install .":
        custom("check_pip_install", "builds the whole package into a venv"),
    # Translate
    f"edgemt translate -m {MODEL} < input.en > output.de":
        run("Ein Mann fährt auf einem Fahrrad.", file="output.de"),
    f"edgemt translate -m {MODEL} -i input.en --beam 4 --threads 2": run("Ein Mann"),
    f"edgemt translate -m {MODEL} -i input.en --align": run(" ||| 0-0 "),
    f"edgemt translate -m {MODEL} -i input.en --json": run('"translation"'),
    f'edgemt translate -m {MODEL} "A dog runs." "Two cats sleep on a sofa."': run("Ein Hund"),
    f"edgemt translate -m {MODEL} --paragraphs -i input.en": run("Ein Mann"),
    f"edgemt inspect {MODEL}": run("int8"),
    f"edgemt bench -m {MODEL} --threads 1,2 --batch 1,16 --beam 1,4": run("cpu family"),
    "edgemt --help": run("translate"),
    "edgemt translate --help": run("--align"),
    # Convert
    "edgemt-convert --from hf-marian --checkpoint opus-mt-en-de --dtype int8 -o en-de.emt":
        run("wrote en-de.emt"),
    "edgemt-convert --from marian --checkpoint opus-2020-02-26 --src-lang en --tgt-lang de "
    "--dtype int8 -o en-de.emt": run("wrote en-de.emt"),
    "edgemt-convert --from opennmt --checkpoint model_step_20000.pt --src-spm en.spm "
    "--tgt-spm de.spm --src-lang en --tgt-lang de --dtype int8 -o en-de.emt": run("wrote en-de.emt"),
    "edgemt-convert --from torch --checkpoint model.pt --config config.json --spm spm.model "
    "--src-lang en --tgt-lang de --dtype int8 -o model.emt": run("wrote model.emt", needs_shared=True),
    "edgemt-convert --from torch-rnn --checkpoint rnn.pt --config rnn.json --spm rnn.spm "
    "--dtype int8 -o rnn.emt": run("wrote rnn.emt"),
    "edgemt-convert --help": run("--from"),
    "edgemt translate -m en-de.emt -i input.en": run("\n"),
    "edgemt-convert firefox-en-de --src-lang en --tgt-lang de "
    "--shortlist firefox-en-de/lex.50.50.ende.s2t.bin -o en-de.emt":
        custom("check_firefox_folder", "a Firefox download folder: made from the SSRU fixture"),
    "edgemt-convert Helsinki-NLP/opus-mt-en-de --dtype int8 -o en-de.emt":
        custom("check_hub_conversion", "downloads from the Hub: run offline from a Hub-layout "
               "cache of the fixture instead"),
    # Python
    "PYTHONPATH=runtime/python python3 -c 'import edgemt; print(edgemt.version())'":
        run("0.", library_from_checkout=True),
    # Embedding
    "cmake --preset release && cmake --build build -j2":
        custom("check_release_preset", "a full build"),
    "cmake --install build --prefix /opt/edgemt":
        custom("check_install_tests", "writes to /opt; the install tests install and use a build"),
    # In the browser and Node.js
    "bash platforms/wasm/build.sh":
        scripts("platforms/wasm/build.sh", why="installs packages and builds the WebAssembly module "
                "(ctest wasm.build runs it)"),
    f"node platforms/wasm/translate.mjs -m {MODEL} < input.en > output.de":
        custom("check_wasm_translate", "needs the WebAssembly build: run as written when it is "
               "there (ctest wasm.node_outputs holds it to the CLI on 1,000 lines)"),
    # Tests
    f"bash {DEBIAN}test.sh": custom("check_quick_tier", "the whole quick tier"),
    f"bash {DEBIAN}test-extended.sh": custom("check_extended_tier", "the whole extended tier"),
    "ctest --test-dir build -L unit": custom("check_ctest_label", "runs every unit test"),
}

SHELL_FENCES = ("sh", "bash", "shell", "console")


def fenced_blocks(text):
    """(info string, body) of every fenced code block."""
    return re.findall(r"^```([^\n`]*)\n(.*?)^```", text, flags=re.M | re.S)


def shell_commands(text):
    """Each command of the shell blocks: comment lines dropped, continued
    lines joined, whitespace collapsed; in the order they appear."""
    commands = []
    for info, body in fenced_blocks(text):
        if info.strip() not in SHELL_FENCES:
            continue
        pending = ""
        for line in body.splitlines():
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            commands.append(" ".join((pending + line).split()))
            pending = ""
    return commands


def slug(heading):
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def markdown_files():
    files = [README]
    for folder, _, names in os.walk(os.path.join(ROOT, "docs")):
        files += [os.path.join(folder, n) for n in sorted(names) if n.endswith(".md")]
    return files


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class ReadmeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.text = read(README)

    def test_at_most_300_lines(self):
        self.assertLessEqual(len(self.text.splitlines()), 300)

    def test_no_commit_hash(self):
        hashes = [w for w in re.findall(r"\b[0-9a-f]{7,40}\b", self.text)
                  if re.search(r"[0-9]", w) and re.search(r"[a-f]", w)]
        self.assertEqual(hashes, [], "commit hashes belong in docs/benchmarks/log.md")

    def test_relative_links_resolve(self):
        broken = []
        for path in markdown_files():
            text = re.sub(r"^```.*?^```", "", read(path), flags=re.M | re.S)
            for target in re.findall(r"\]\(([^)\s]+)\)", text):
                if re.match(r"[a-z][a-z0-9+.-]*:", target):
                    continue  # https:, mailto:
                file_part, _, anchor = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                    if file_part else path
                where = f"{os.path.relpath(path, ROOT)}: {target}"
                if not os.path.exists(resolved):
                    broken.append(where)
                elif anchor and resolved.endswith(".md"):
                    headings = re.findall(r"^#+ (.*)$", re.sub(r"^```.*?^```", "", read(resolved),
                                                               flags=re.M | re.S), flags=re.M)
                    if anchor not in {slug(h) for h in headings}:
                        broken.append(where + " (no such heading)")
        self.assertEqual(broken, [])

    def test_layout_folders_exist(self):
        layout = self.text.split("\n## Layout", 1)[1].split("\n## ", 1)[0]
        folders = re.findall(r"^\| `([^`]+/)` \|", layout, flags=re.M)
        self.assertIn("runtime/models/", folders)
        self.assertIn("runtime/text/", folders)
        for folder in folders:
            self.assertTrue(os.path.isdir(os.path.join(ROOT, folder)), folder)

    def test_every_command_is_known(self):
        commands = shell_commands(self.text)
        self.assertTrue(commands, "no shell block found")
        unknown = [c for c in commands if c not in COMMANDS]
        self.assertEqual(unknown, [], "README commands that COMMANDS in this test does not know: "
                         "add each with how it is checked")
        stale = [c for c in COMMANDS if c not in commands]
        self.assertEqual(stale, [], "COMMANDS entries no longer in the README")

    def test_commands(self):
        with tempfile.TemporaryDirectory() as scratch:
            self.make_scratch(scratch)
            done = set()
            for command in shell_commands(self.text):
                if command in done or command not in COMMANDS:
                    continue
                done.add(command)
                check = COMMANDS[command]
                with self.subTest(command=command):
                    if check["kind"] == "run":
                        self.run_command(command, check, scratch)
                    elif check["kind"] == "scripts":
                        for script in check["paths"]:
                            self.check_script(script)
                    else:
                        getattr(self, check["method"])()

    def test_python_block(self):
        blocks = [body for info, body in fenced_blocks(self.text) if info.strip() == "python"]
        self.assertEqual(len(blocks), 1)
        with tempfile.TemporaryDirectory() as scratch:
            self.make_scratch(scratch)
            result = subprocess.run([sys.executable, "-c", blocks[0]], cwd=scratch, env=self.env(scratch),
                                    capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("Ein Mann fährt auf einem Fahrrad.", result.stdout)
        self.assertIn("['Two dogs play.', 'A cat sleeps.']", result.stdout)

    def test_c_block_calls_exist(self):
        [block] = [body for info, body in fenced_blocks(self.text) if info.strip() == "c"]
        header = read(os.path.join(ROOT, "runtime", "include", "edgemt", "edgemt.h"))
        calls = set(re.findall(r"\b(edgemt_\w+)\(", block))
        self.assertTrue(calls)
        for name in sorted(calls):
            self.assertRegex(header, rf"EDGEMT_API [^;]*\b{name}\(", name)
        self.assertTrue(os.path.exists(os.path.join(ROOT, "tests", "install", "c_shared", "translate.c")))

    # ---- the scratch folder and running a command

    def make_scratch(self, scratch):
        for name, target in PLACEHOLDERS.items():
            if os.path.exists(target):
                os.symlink(target, os.path.join(scratch, name))
        with open(os.path.join(scratch, "input.en"), "w", encoding="utf-8") as f:
            f.write("\n".join(INPUT_LINES) + "\n")
        bin_dir = os.path.join(scratch, ".bin")
        os.mkdir(bin_dir)
        os.symlink(os.path.abspath(helpers.CLI), os.path.join(bin_dir, "edgemt"))
        os.symlink(os.path.join(ROOT, "tools", "edgemt-convert"), os.path.join(bin_dir, "edgemt-convert"))
        os.symlink(sys.executable, os.path.join(bin_dir, "python3"))

    def env(self, scratch):
        env = dict(os.environ)
        env["PATH"] = os.path.join(scratch, ".bin") + os.pathsep + env.get("PATH", "")
        env["PYTHONPATH"] = os.path.join(ROOT, "runtime", "python")
        if "EDGEMT_LIBRARY" not in env:
            env["EDGEMT_LIBRARY"] = os.path.join(BUILD_DIR, "runtime", "libedgemt.so.0")
        return env

    def run_command(self, command, check, scratch):
        if check["needs_shared"] and not os.path.isdir(SHARED_CHECKPOINT):
            self.skipTest(f"needs {SHARED_CHECKPOINT}")
        env = self.env(scratch)
        if check["library_from_checkout"]:
            if os.path.realpath(BUILD_DIR) != os.path.realpath(os.path.join(ROOT, "build")):
                self.skipTest("the build is not the checkout's build/")
            env.pop("EDGEMT_LIBRARY")
        result = subprocess.run(["bash", "-c", command], cwd=scratch, env=env,
                                capture_output=True, text=True, timeout=600)
        self.assertEqual(result.returncode, 0, f"{command}\n{result.stdout}\n{result.stderr}")
        output = read(os.path.join(scratch, check["file"])) if check["file"] else result.stdout
        self.assertIn(check["expect"], output, command)
        if check["file"]:
            self.assertEqual(len(output.splitlines()), len(INPUT_LINES))

    def check_script(self, script):
        path = os.path.join(ROOT, script)
        self.assertTrue(os.path.isfile(path), script)
        result = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, f"bash -n {script}: {result.stderr}")

    # ---- the commands too expensive to run here

    def check_hub_conversion(self):
        """The command as written, offline, with a Hub-layout cache holding
        the MarianMT fixture as Helsinki-NLP/opus-mt-en-de."""
        import test_convert_hub as hub  # pylint: disable=import-outside-toplevel
        hub.require_hub(self)
        command = "edgemt-convert Helsinki-NLP/opus-mt-en-de --dtype int8 -o en-de.emt"
        with tempfile.TemporaryDirectory() as scratch:
            self.make_scratch(scratch)
            os.remove(os.path.join(scratch, "opus-mt-en-de"))  # the id, not the folder
            cache = os.path.join(scratch, ".hub")
            hub.cache_repo(cache, "Helsinki-NLP/opus-mt-en-de", hub.fixture_files())
            env = dict(self.env(scratch), HF_HUB_OFFLINE="1", HF_HUB_CACHE=cache)
            result = subprocess.run(["bash", "-c", command], cwd=scratch, env=env,
                                    capture_output=True, text=True, timeout=600)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("wrote en-de.emt", result.stdout)

    def check_firefox_folder(self):
        """The command as written, in a folder laid out as Firefox downloads
        a model (the SSRU fixture's intgemm8 .bin, a shortlist, one vocab)."""
        fixture = os.path.join(FIXTURES, "marian_ssru")
        with tempfile.TemporaryDirectory() as scratch:
            self.make_scratch(scratch)
            folder = os.path.join(scratch, "firefox-en-de")
            os.mkdir(folder)
            for name, target in (("model.intgemm8.bin", "model.ende.intgemm.alphas.bin"),
                                 ("lex.bin", "lex.50.50.ende.s2t.bin"),
                                 ("vocab.spm", "vocab.ende.spm")):
                shutil.copyfile(os.path.join(fixture, name), os.path.join(folder, target))
            command = ("edgemt-convert firefox-en-de --src-lang en --tgt-lang de "
                       "--shortlist firefox-en-de/lex.50.50.ende.s2t.bin -o en-de.emt")
            result = subprocess.run(["bash", "-c", command], cwd=scratch, env=self.env(scratch),
                                    capture_output=True, text=True, timeout=600)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("wrote en-de.emt", result.stdout)
            self.assertIn("shortlist of", result.stdout)

    def check_pip_install(self):
        pyproject = os.path.join(ROOT, "pyproject.toml")
        self.assertTrue(os.path.isfile(pyproject), "pip install . needs pyproject.toml")
        text = read(pyproject)
        for script in ("edgemt-convert", "edgemt"):
            self.assertRegex(text, rf'(?m)^\s*"?{re.escape(script)}"?\s*=', f"console script {script}")
        result = subprocess.run([sys.executable, "-c", "import venv, ensurepip"], capture_output=True)
        self.assertEqual(result.returncode, 0, "python3 -m venv needs the venv and ensurepip modules")
        # tools.python.pip_package runs the install itself, into a fresh venv.
        self.assertIn("tools.python.pip_package", self.ctest_listing("-R", "pip_package"))

    def check_wasm_translate(self):
        """The command as written, with the scratch folder's platforms/ the
        checkout's; skipped without node or platforms/wasm/dist."""
        wasm = os.path.join(ROOT, "platforms", "wasm", "dist", "edgemt-module.wasm")
        if shutil.which("node") is None or not os.path.isfile(wasm):
            self.skipTest("no node or no WebAssembly build (bash platforms/wasm/build.sh)")
        command = f"node platforms/wasm/translate.mjs -m {MODEL} < input.en > output.de"
        with tempfile.TemporaryDirectory() as scratch:
            self.make_scratch(scratch)
            os.symlink(os.path.join(ROOT, "platforms"), os.path.join(scratch, "platforms"))
            self.run_command(command, run("Ein Mann fährt auf einem Fahrrad.", file="output.de"), scratch)

    def check_release_preset(self):
        with open(os.path.join(ROOT, "CMakePresets.json"), encoding="utf-8") as f:
            presets = json.load(f)
        [release] = [p for p in presets["configurePresets"] if p["name"] == "release"]
        self.assertEqual(release["binaryDir"], "${sourceDir}/build")

    def ctest_listing(self, *args):
        ctest = shutil.which("ctest")
        self.assertIsNotNone(ctest, "ctest not found")
        result = subprocess.run([ctest, "--test-dir", BUILD_DIR, "-N", *args],
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(result.returncode, 0, result.stderr)
        return re.findall(r"Test\s+#\d+: (\S+)", result.stdout)

    def check_install_tests(self):
        self.assertTrue(os.path.isfile(os.path.join(BUILD_DIR, "cmake_install.cmake")))
        self.assertTrue(self.ctest_listing("-L", "install"), "no test with label install")

    def check_ctest_label(self):
        self.assertTrue(self.ctest_listing("-L", "unit"), "no test with label unit")

    def ci_commands(self):
        ci = read(os.path.join(ROOT, ".ci", "run"))
        return [" ".join(line.split()) for line in ci.splitlines()
                if line.strip() and not line.lstrip().startswith("#")]

    def check_quick_tier(self):
        self.check_script(f"{DEBIAN}test.sh")
        for script in ("stages.sh", "install-deps.sh", "build.sh"):
            self.check_script(DEBIAN + script)
        # .ci/run ends in the README's test command.
        self.assertEqual(self.ci_commands()[-1], f"exec bash {DEBIAN}test.sh")

    def check_extended_tier(self):
        self.check_script(f"{DEBIAN}test-extended.sh")
        self.assertIn(f"bash {DEBIAN}test-extended.sh", self.ci_commands())


if __name__ == "__main__":
    unittest.main()
