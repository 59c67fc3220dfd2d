"""User-facing error type.

Commands catch `UserError` and print its message as one line on stderr with a
non-zero exit status; anything else is a bug and keeps its traceback.
"""


class UserError(Exception):
    """A problem with the user's input (files, options, checkpoint contents)."""
