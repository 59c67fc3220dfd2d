"""The error types of edgemt_tools.

Commands catch `UserError` and print its message as one line on stderr with a
non-zero exit status; anything else is a bug and keeps its traceback.
`ModelFileError` is the reader's (model_file.py); it lives here, below every
module, so that each family's config reader (families/) raises it too.
"""


class UserError(Exception):
    """A problem with the user's input (files, options, checkpoint contents)."""


class ModelFileError(Exception):
    """The file is not a valid edgemt model file (reader side)."""
