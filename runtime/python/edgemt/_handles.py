"""Lifetimes of the C handles, safe from any number of Python threads.

ctypes releases the GIL during each C call, so Python threads really do run
C calls at the same time. edgemt/edgemt.h allows a model's calls from any
number of threads, a translator's from one thread at a time, and neither
handle's free during another call on it. Freeing a handle that another
thread is using is a use after free: a crash, or worse.
"""

import threading
from contextlib import contextmanager

from ._errors import FAILED_PRECONDITION, Error


class SharedHandle:
    """A handle that calls may use concurrently (a model). Each use holds it;
    close() refuses new uses at once and frees the handle when the last use
    ends (a call in flight, or a translator that still needs the model), so
    a handle is never freed under a user and close() never waits."""

    def __init__(self, pointer: int, free, what: str):
        self._lock = threading.Lock()
        self._pointer = pointer
        self._free = free
        self._what = what
        self._users = 0
        self._closing = False

    def acquire(self) -> int:
        """The pointer, held until the matching release()."""
        with self._lock:
            if self._closing:
                raise Error(FAILED_PRECONDITION, f"the {self._what} is closed")
            self._users += 1
            return self._pointer

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            pointer = self._take_if_unused()
        if pointer:
            self._free(pointer)

    @contextmanager
    def use(self):
        """`with handle.use() as pointer:` the pointer, for one call."""
        pointer = self.acquire()
        try:
            yield pointer
        finally:
            self.release()

    def close(self) -> None:
        """No new uses; the handle is freed now or when its last use ends.
        A second close() does nothing."""
        with self._lock:
            self._closing = True
            pointer = self._take_if_unused()
        if pointer:
            self._free(pointer)

    def _take_if_unused(self):
        """The pointer to free, once (called with the lock held)."""
        if not self._closing or self._users != 0 or not self._pointer:
            return None
        pointer, self._pointer = self._pointer, None
        return pointer


class ExclusiveHandle:
    """A handle that one call at a time may use (a translator). Each use
    holds a lock; close() waits for the call in flight, frees the handle,
    and later uses raise edgemt.Error instead of touching freed memory."""

    def __init__(self, pointer: int, free, what: str):
        self._lock = threading.Lock()
        self._pointer = pointer
        self._free = free
        self._what = what

    @contextmanager
    def use(self):
        """`with handle.use() as pointer:` the pointer, for this thread alone
        (other threads' uses wait)."""
        with self._lock:
            if not self._pointer:
                raise Error(FAILED_PRECONDITION, f"the {self._what} is closed")
            yield self._pointer

    def close(self, after_free=None) -> None:
        """Frees the handle once no call is using it, then calls after_free
        (still under the lock: no call can start in between)."""
        with self._lock:
            if not self._pointer:
                return
            pointer, self._pointer = self._pointer, None
            self._free(pointer)
            if after_free is not None:
                after_free()
