"""The module's exceptions: edgemt.Error and the argument errors derived from it."""

# The C API's codes (edgemt_code in edgemt/edgemt.h), in order.
CODE_NAMES = ["ok", "invalid-argument", "out-of-range", "failed-precondition", "not-found",
              "io-error", "invalid-model", "unsupported-version", "unsupported",
              "out-of-memory", "backend-error", "numeric-error"]
INVALID_ARGUMENT = CODE_NAMES.index("invalid-argument")
OUT_OF_RANGE = CODE_NAMES.index("out-of-range")
FAILED_PRECONDITION = CODE_NAMES.index("failed-precondition")
UNSUPPORTED = CODE_NAMES.index("unsupported")


class Error(RuntimeError):
    """A failed call: .code is the C API's code name ("invalid-model", ...)."""

    def __init__(self, code: int, message: str):
        self.code = CODE_NAMES[code] if 0 <= code < len(CODE_NAMES) else "unknown"
        self.message = message
        super().__init__(f"{message} ({self.code})")


# Bad arguments are found before they reach the C API. They are both an
# edgemt.Error (code "invalid-argument", as the C API would say) and the
# exception Python programs expect for them, so either `except` catches them.

class ArgumentValueError(Error, ValueError):
    """An argument of the right type outside its range."""

    def __init__(self, message: str):
        super().__init__(INVALID_ARGUMENT, message)


class ArgumentTypeError(Error, TypeError):
    """An argument of the wrong type."""

    def __init__(self, message: str):
        super().__init__(INVALID_ARGUMENT, message)
