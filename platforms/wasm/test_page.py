#!/usr/bin/env python3
"""The demo page (platforms/wasm/demo/) in headless Chromium: it loads the
bundled model, translates the model's test sentences in its worker, and the
translations it shows must be those of `edgemt translate` (greedy), line for
line.

    /usr/bin/python3 platforms/wasm/test_page.py [--lines N] [--screenshot PATH]

The repository root is served by http.server on a free port (a thread) and
the page is opened with ?model=/models/multi30k-en-de.int8.emt&test=...&lines=N
&beam=1: in that test mode it translates the first N lines of
models/reference/test_2016_flickr.en as its Translate button would and writes
them into <pre id="test-output" data-state="done">, which is compared with
models/reference/edgemt_int8_greedy.de. --screenshot PATH then loads the page
without the test mode, presses Translate on its sample text and saves the
page, heat map shown, as a PNG.

Chromium is driven over --remote-debugging-pipe (DevTools messages, NUL-
terminated JSON, on file descriptors 3 and 4), polling the page until the
output is there. `--dump-dom --virtual-time-budget=...` does not work for
this page: virtual time advances while the main thread is idle and the
worker computes, so the DOM is dumped before the translations arrive.

Prints "SKIPPED: ..." and exits 0 when chromium or platforms/wasm/dist (the
WebAssembly build, platforms/wasm/build.sh) is missing; exits 1 with the
differing lines, or the page's message, when the test fails. Standard
library only; everything has a deadline (--timeout).
"""

import argparse
import base64
import fcntl
import functools
import http.server
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIST = os.path.join(REPO, "platforms", "wasm", "dist")
PAGE = "/platforms/wasm/demo/"
MODEL = "/models/multi30k-en-de.int8.emt"
TEST_TEXT = "/models/reference/test_2016_flickr.en"
REFERENCE = os.path.join(REPO, "models", "reference", "edgemt_int8_greedy.de")
WIDTH = 1024  # the page's width in the screenshot, px


class Failure(Exception):
    pass


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


def serve(root):
    """Serves `root` on 127.0.0.1 and a free port, from a daemon thread."""
    handler = functools.partial(QuietHandler, directory=root)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class Chromium:
    """Headless Chromium with one page, spoken to over the DevTools pipe.

    Every call waits at most until `deadline` (time.monotonic()); close()
    ends the browser (killing its process group if it does not quit).
    """

    def __init__(self, binary, deadline, user_data_dir):
        self.deadline = deadline
        self.errors = []  # the page's uncaught exceptions and console errors
        # The browser reads fd 3 and writes fd 4: a Python exec wrapper puts the
        # pipe ends there, from numbers above 9 so that neither overwrites the
        # other.
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        to_browser_read, from_browser_write = (
            self._above_9(to_browser_read), self._above_9(from_browser_write))
        self._buffer = b""
        self._next_id = 1
        self._loaded = False  # since the last navigate()
        self._stderr = tempfile.TemporaryFile()
        flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
                 f"--user-data-dir={user_data_dir}", "--no-first-run",
                 "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update",
                 "--hide-scrollbars", "--mute-audio", f"--window-size={WIDTH},800", "about:blank"]
        wrapper = ("import os, sys\n"
                   "os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4)\n"
                   "os.close(int(sys.argv[1])); os.close(int(sys.argv[2]))\n"
                   "os.execv(sys.argv[3], sys.argv[3:])")
        self._process = subprocess.Popen(
            [sys.executable, "-c", wrapper, str(to_browser_read), str(from_browser_write),
             binary, *flags], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=self._stderr, pass_fds=(to_browser_read, from_browser_write),
            start_new_session=True)
        os.close(to_browser_read)
        os.close(from_browser_write)
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self.call("Target.attachToTarget",
                                  {"targetId": target, "flatten": True})["sessionId"]
        self.page("Runtime.enable")
        self.page("Page.enable")
        self.resize(800)

    @staticmethod
    def _above_9(fd):
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(fd)
        return moved

    def _left(self):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise Failure("timed out (see --timeout)")
        return left

    def _message(self):
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], self._left())
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise Failure(f"chromium exited; its last words:\n{self.stderr_tail()}")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None):
        """Sends a DevTools command and returns its result."""
        id_ = self._next_id
        self._next_id += 1
        command = {"id": id_, "method": method, "params": params or {}}
        if session is not None:
            command["sessionId"] = session
        try:
            os.write(self._to_browser, json.dumps(command).encode() + b"\0")
        except BrokenPipeError:
            raise Failure(f"chromium exited; its last words:\n{self.stderr_tail()}") from None
        while True:
            message = self._message()
            if message.get("id") == id_:
                if "error" in message:
                    raise Failure(f"{method}: {message['error'].get('message')}")
                return message["result"]
            self._note(message)

    def _note(self, event):
        params = event.get("params", {})
        if event.get("method") == "Page.loadEventFired":
            self._loaded = True
        elif event.get("method") == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append(details.get("exception", {}).get("description", details["text"]))
        elif event.get("method") == "Runtime.consoleAPICalled" and params["type"] == "error":
            self.errors.append(" ".join(str(a.get("value", a.get("description")))
                                        for a in params["args"]))

    def page(self, method, params=None):
        return self.call(method, params, self._session)

    def resize(self, height):
        self.page("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (None while the page
        is between documents)."""
        try:
            reply = self.page("Runtime.evaluate", {"expression": expression,
                                                   "returnByValue": True})
        except Failure as error:
            if "context" in str(error):  # navigating: no document to ask yet
                return None
            raise
        if "exceptionDetails" in reply:
            raise Failure(f"{expression}: {reply['exceptionDetails']['text']}")
        return reply["result"].get("value")

    def wait_for(self, expression, what):
        """Polls until `expression` is truthy; returns its value."""
        while True:
            try:
                value = self.evaluate(expression)
            except Failure as error:
                raise Failure(f"waiting for {what}: {error}") from None
            if value:
                return value
            if time.monotonic() + 0.1 >= self.deadline:
                status = self.evaluate("document.getElementById('status')?.textContent") or "-"
                raise Failure(f"timed out waiting for {what}; the page says: {status}")
            time.sleep(0.1)

    def navigate(self, url):
        """Opens `url` and waits for its load event."""
        self._loaded = False
        reply = self.page("Page.navigate", {"url": url})
        if "errorText" in reply:
            raise Failure(f"cannot open {url}: {reply['errorText']}")
        while not self._loaded:
            self._note(self._message())

    def screenshot(self, path):
        height = self.evaluate("document.documentElement.scrollHeight")
        self.resize(int(height))
        time.sleep(0.3)  # one frame at the new size
        png = base64.b64decode(self.page("Page.captureScreenshot", {"format": "png"})["data"])
        with open(path, "wb") as out:
            out.write(png)
        return len(png), int(height)

    def stderr_tail(self):
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").splitlines()
        return "\n".join([line for line in lines if "dbus" not in line][-10:])

    def close(self):
        try:
            if self._process.poll() is None:
                os.write(self._to_browser, json.dumps(
                    {"id": self._next_id, "method": "Browser.close"}).encode() + b"\0")
                self._process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait(timeout=10)
        finally:
            os.close(self._to_browser)
            os.close(self._from_browser)
            self._stderr.close()


def page_url(base, **query):
    return f"{base}{PAGE}?{urllib.parse.urlencode(query, safe='/')}"


def compare(browser, base, lines):
    """Runs the test mode on `lines` lines; returns the page's status line."""
    with open(REFERENCE, encoding="utf-8") as file:
        expected = file.read().split("\n")
    if expected[-1] == "":
        expected.pop()  # the final newline
    expected = expected[:lines]
    if len(expected) < lines:
        raise Failure(f"{os.path.relpath(REFERENCE, REPO)} has only {len(expected)} lines, "
                      f"not {lines}")
    browser.navigate(page_url(base, model=MODEL, test=TEST_TEXT, lines=lines, beam=1))
    state = browser.wait_for(
        "document.getElementById('test-output')?.dataset.state", "the page's translations")
    text = browser.evaluate("document.getElementById('test-output').textContent")
    if state != "done":
        raise Failure(f"the page failed: {text}")
    got = text.split("\n")
    if len(got) != lines:
        raise Failure(f"the page gave {len(got)} lines for {lines}")
    different = [i for i in range(lines) if got[i] != expected[i]]
    if different:
        shown = "\n".join(f"  line {i + 1}:\n    page:   {got[i]}\n    native: {expected[i]}"
                          for i in different[:5])
        raise Failure(f"{len(different)}/{lines} lines differ from "
                      f"{os.path.relpath(REFERENCE, REPO)}:\n{shown}")
    print(f"{lines}/{lines} lines identical")
    return browser.evaluate("document.getElementById('status').textContent")


def screenshot(browser, base, path):
    """The page after translating its sample text, with the heat map."""
    browser.navigate(page_url(base, model=MODEL))
    browser.wait_for("!document.getElementById('translate')?.disabled", "the model to load")
    browser.evaluate("document.getElementById('translate').click()")
    browser.wait_for("!document.getElementById('attention').hidden && "
                     "document.getElementById('status').textContent.startsWith('Translated')",
                     "the translation and the heat map")
    size, height = browser.screenshot(path)
    print(f"wrote {path}: {WIDTH}x{height} px, {size} bytes")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100,
                        help="how many test lines to translate (1..1000; default 100)")
    parser.add_argument("--screenshot", metavar="PATH",
                        help="also save the page with a translation and its heat map as a PNG")
    parser.add_argument("--timeout", type=float, default=180,
                        help="seconds for everything (default 180)")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "chromium"),
                        help="the browser (default: $CHROMIUM or chromium)")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # in order with stderr
    if args.lines < 1:
        parser.error("--lines must be at least 1")

    binary = shutil.which(args.chromium)
    if binary is None:
        print(f"SKIPPED: no '{args.chromium}' on PATH (Debian: apt-get install chromium)")
        return 0
    if not os.path.isfile(os.path.join(DIST, "edgemt-module.wasm")):
        print(f"SKIPPED: no WebAssembly build in {os.path.relpath(DIST, REPO)} "
              "(bash platforms/wasm/build.sh)")
        return 0

    started = time.monotonic()
    server, base = serve(REPO)
    browser = None
    try:
        with tempfile.TemporaryDirectory(prefix="edgemt-chromium-") as profile:
            browser = Chromium(binary, started + args.timeout, profile)
            try:
                status = compare(browser, base, args.lines)
                print(f"the page: {status}")
                if args.screenshot:
                    screenshot(browser, base, args.screenshot)
            finally:
                browser.close()
    except Failure as error:
        print(f"FAILED: {error}", file=sys.stderr)
        if browser is not None and browser.errors:
            print("the page's errors:\n  " + "\n  ".join(browser.errors), file=sys.stderr)
        return 1
    finally:
        server.shutdown()
    print(f"took {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
