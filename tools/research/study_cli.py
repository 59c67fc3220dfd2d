"""What the research studies' command lines share: errors prefixed with the
study's name, and the model they read (the multi30k en->de checkpoint in
../shared unless named)."""

import argparse
import os
from typing import Dict

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class StudyParser(argparse.ArgumentParser):
    """Usage errors as `PROG: error: ... (see --help)`, status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def add_model_arguments(parser: argparse.ArgumentParser, shared_contents: str) -> None:
    """--shared, --checkpoint, --config, --spm; `shared_contents` says what
    the study reads from the shared folder."""
    parser.add_argument("--shared", default=os.environ.get(
        "EDGEMT_SHARED_DIR", os.path.join(os.path.dirname(REPO_ROOT), "shared")),
        help=f"folder with {shared_contents} (default: $EDGEMT_SHARED_DIR or ../shared "
             "beside the repository)")
    parser.add_argument("--checkpoint", metavar="FILE", help="default SHARED/models/"
                        "multi30k-en-de/model.pt (likewise --config config.json, --spm spm.model)")
    parser.add_argument("--config", metavar="FILE")
    parser.add_argument("--spm", metavar="FILE")


def model_paths(args: argparse.Namespace) -> Dict[str, str]:
    """checkpoint, config and spm: as named, else from SHARED."""
    model_dir = os.path.join(args.shared, "models", "multi30k-en-de")
    return {"checkpoint": args.checkpoint or os.path.join(model_dir, "model.pt"),
            "config": args.config or os.path.join(model_dir, "config.json"),
            "spm": args.spm or os.path.join(model_dir, "spm.model")}
