"""Checkpoints by Hugging Face Hub model id: `edgemt-convert --from hf-marian
Helsinki-NLP/opus-mt-en-de -o en-de.emt`.

Id or path: an argument that exists on disk (a file, a folder, even a broken
link) is a path; otherwise one shaped `org/name`, optionally `@revision`, is
a Hub model id (`parse`); anything else is a path that does not exist.

The download is huggingface_hub's `snapshot_download`, with its cache
(HF_HOME, HF_HUB_CACHE), progress bars, token (HF_TOKEN) and offline mode
(HF_HUB_OFFLINE): nothing of that is redone here. It fetches only the files
the source reads (its HUB_FILES): never a code file, and nothing fetched
runs; the folder then goes to the source as a folder on disk would, its
pickled .bin through torch_zip (sources/__init__.py). Of the weight files
the source accepts, the first the repository has is fetched, not all.

huggingface_hub is imported only here, only when an id is given; every
failure (not installed, offline and not cached, unknown repository or
revision, network) is a UserError of one line.
"""

import os
import re
from dataclasses import dataclass
from typing import Optional, Tuple

from .errors import UserError

INSTALL_HINT = "pip install huggingface_hub"

# A repository's owner or name: letters, digits, '-', '_', '.', at most 96,
# not starting or ending with '-' or '.', no '--' or '..' (the Hub's rules).
_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?"
_ID = re.compile(rf"({_PART})/({_PART})(?:@([^\s@]+))?")


@dataclass(frozen=True)
class HubFiles:
    """The files of a Hub repository a source reads (glob patterns as
    snapshot_download takes them): `required` and `optional` ones, and the
    weight files it accepts, by preference (only the first present is fetched)."""
    required: Tuple[str, ...]
    optional: Tuple[str, ...]
    weights: Tuple[str, ...]


@dataclass(frozen=True)
class HubId:
    repo_id: str            # "org/name"
    revision: Optional[str]  # a branch, tag or commit; None: the default branch

    @property
    def name(self) -> str:
        """The repository's name, as a clone's folder is called (what the
        model file's provenance records, so that both give the same file)."""
        return self.repo_id.split("/", 1)[1]

    def __str__(self) -> str:
        return self.repo_id + (f"@{self.revision}" if self.revision else "")


def parse(argument: str) -> Optional[HubId]:
    """The Hub model id `argument` names, or None: a path (it exists on disk)
    or not shaped as an id."""
    if os.path.lexists(argument):
        return None
    match = _ID.fullmatch(argument)
    if match is None or any(".." in part or "--" in part for part in match.group(1, 2)):
        return None
    return HubId(f"{match.group(1)}/{match.group(2)}", match.group(3))


def with_revision(hub_id: HubId, revision: Optional[str]) -> HubId:
    """`hub_id` at --revision `revision` (None: as it is); refuses two revisions."""
    if revision is None or revision == hub_id.revision:
        return hub_id
    if hub_id.revision is not None:
        raise UserError(f"{hub_id} names revision {hub_id.revision} and --revision says "
                        f"{revision}: give one")
    return HubId(hub_id.repo_id, revision)


def _huggingface_hub(hub_id: HubId):
    try:
        import huggingface_hub
    except ModuleNotFoundError as err:
        if err.name != "huggingface_hub":
            raise UserError(f"{hub_id} is a Hugging Face Hub model id, and huggingface_hub "
                            f"cannot be imported: {err}") from None
        raise UserError(f"{hub_id} is a Hugging Face Hub model id (no such file or folder "
                        f"here), and downloading it needs huggingface_hub: {INSTALL_HINT}") \
            from None
    except ImportError as err:
        raise UserError(f"{hub_id} is a Hugging Face Hub model id, and huggingface_hub "
                        f"cannot be imported: {_first_line(err)}") from None
    return huggingface_hub


def _first_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return lines[0].strip() if lines else type(err).__name__


def _reason(err: BaseException) -> str:
    """What went wrong under a download error, in a few words: the system's
    message of the first errno in its chain (`[Errno -2] Name or service not
    known` -> "Name or service not known"), else its cause's first line."""
    seen = err
    while seen is not None:
        match = _ERRNO.search(str(seen))
        if match:
            return match.group(1).strip()
        seen = seen.__cause__ or seen.__context__
    return _first_line(err.__cause__ or err.__context__ or err)


_ERRNO = re.compile(r"\[Errno [^\]]*\] ([^'\"()\n]+)")


def _is_network_error(err: BaseException) -> bool:
    """An error of the HTTP stack under huggingface_hub (requests in 0.x,
    httpx since 1.0) or of huggingface_hub itself."""
    module = type(err).__module__ or ""
    return module.split(".")[0] in ("requests", "urllib3", "httpx", "httpcore",
                                    "huggingface_hub")


def download(hub_id: HubId, files: HubFiles, library_version: str) -> str:
    """The snapshot folder (in the Hub's cache) holding `files` of `hub_id`,
    downloaded when not cached."""
    hf = _huggingface_hub(hub_id)
    from huggingface_hub import constants
    try:
        from huggingface_hub import errors
    except ImportError:  # before 0.24 the error types lived in utils
        from huggingface_hub import utils as errors
    offline = bool(constants.HF_HUB_OFFLINE)

    def snapshot(revision: Optional[str], patterns) -> str:
        return hf.snapshot_download(hub_id.repo_id, revision=revision,
                                    allow_patterns=list(patterns), library_name="edgemt",
                                    library_version=library_version)

    try:
        folder = snapshot(hub_id.revision, files.required + files.optional + files.weights[:1])
        # The rest from the same commit (the snapshot folder is named by it).
        for index, weight in enumerate(files.weights[1:], start=1):
            if any(os.path.isfile(os.path.join(folder, w)) for w in files.weights[:index]):
                break
            folder = snapshot(os.path.basename(folder), (weight,))
    except errors.GatedRepoError:
        raise UserError(f"{hub_id} is a gated model: accept its conditions on the Hugging Face "
                        "Hub and set HF_TOKEN") from None
    except errors.RepositoryNotFoundError:
        raise UserError(f"{hub_id}: no such file or folder, and no such model on the Hugging "
                        "Face Hub (a private one needs HF_TOKEN)") from None
    except errors.RevisionNotFoundError:
        raise UserError(f"{hub_id.repo_id} has no revision {hub_id.revision}") from None
    except errors.LocalEntryNotFoundError as err:
        where = (f"{hub_id} is not a file or folder here, and as a Hugging Face Hub model id "
                 f"it is not in the cache {constants.HF_HUB_CACHE}")
        if offline:
            raise UserError(f"{where} (HF_HUB_OFFLINE is set: download it once online)") \
                from None
        raise UserError(f"{where} and the Hub cannot be reached ({_reason(err)})") from None
    except Exception as err:  # pylint: disable=broad-except
        if not _is_network_error(err):
            raise
        raise UserError(f"{hub_id}: download from the Hugging Face Hub failed: "
                        f"{_reason(err)}") from None
    _check_complete(hub_id, files, folder, offline)
    return folder


def _check_complete(hub_id: HubId, files: HubFiles, folder: str, offline: bool) -> None:
    missing = [name for name in files.required if not os.path.isfile(os.path.join(folder, name))]
    if not any(os.path.isfile(os.path.join(folder, name)) for name in files.weights):
        missing.append(" or ".join(files.weights))
    if not missing:
        return
    if offline:
        raise UserError(f"{hub_id} is only partly in the Hugging Face cache (no "
                        f"{', '.join(missing)} in {folder}) and HF_HUB_OFFLINE is set: "
                        "download it once online")
    raise UserError(f"{hub_id} has no {', '.join(missing)}: not a model this source reads")
