"""The files of a Marian model folder found by kind, for compare.py and
bergamot_alphas.py: named as Firefox downloads them or as
mozilla/firefox-translations-models keeps them (each file may be .gz),
and the uncompressed copies both engines read."""

import gzip
import os
import shutil


def plain(name: str) -> str:
    """A file name without .gz: the kind of file it holds."""
    return name[:-3] if name.endswith(".gz") else name


class Folder:
    """The names in `folder`; pick() finds one by a test of its plain name."""

    def __init__(self, folder: str, script: str):
        self.folder, self.script = folder, script
        self.names = sorted(os.listdir(folder))

    def pick(self, role: str, test, required: bool = True, prefer=None):
        """The one name whose plain name passes `test` (of several, those
        `prefer` keeps, when that leaves one); None when there is none and
        it is not `required`; SystemExit naming what was found otherwise."""
        found = [n for n in self.names if test(plain(n))]
        if prefer is not None and len(found) > 1:
            found = [n for n in found if prefer(n)] or found
        if len(found) > 1 or (required and not found):
            raise SystemExit(f"{self.script}: {self.folder}: expected one {role}, found "
                             f"{', '.join(found) or 'none'}")
        return found[0] if found else None

    def vocabularies(self) -> dict:
        """{"source_vocab", "target_vocab"}: one vocab*.spm for both sides,
        or srcvocab*.spm and trgvocab*.spm."""
        def named(prefix: str):
            return lambda n: n.startswith(prefix) and n.endswith(".spm")
        if any(n.startswith("srcvocab") for n in self.names):
            return {"source_vocab": self.pick("srcvocab*.spm", named("srcvocab")),
                    "target_vocab": self.pick("trgvocab*.spm", named("trgvocab"))}
        joint = self.pick("vocab*.spm", named("vocab"))
        return {"source_vocab": joint, "target_vocab": joint}


def uncompressed_copy(path: str, directory: str) -> str:
    """A copy of `path` in `directory` under its plain name, decompressed
    when it is .gz (once: an existing copy is kept)."""
    os.makedirs(directory, exist_ok=True)
    target = os.path.join(directory, plain(os.path.basename(path)))
    if not os.path.exists(target):
        with (gzip.open if path.endswith(".gz") else open)(path, "rb") as source, \
                open(target, "wb") as out:
            shutil.copyfileobj(source, out)
    return target
