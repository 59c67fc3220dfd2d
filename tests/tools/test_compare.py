"""edgemt-compare's argument checks: bad flags are refused with a message and
status 2 before anything is measured. (The measuring run and the missing
executable, which need ../shared, are test_checkpoint_compare.py.)"""

import unittest

import helpers


class CompareArgumentsTest(unittest.TestCase):
    def assert_refused(self, args, message):
        result = helpers.run_tool("edgemt-compare", *args)
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertIn(message, result.stderr)
        self.assertNotIn("threads 1", result.stdout)  # nothing was measured

    def test_bad_thread_counts(self):
        for threads in ("0", "1,x", "", "-2"):
            self.assert_refused(["--threads", threads], "--threads wants positive integers")

    def test_bad_counts(self):
        self.assert_refused(["--repeat", "0"], "--repeat must be >= 1")
        self.assert_refused(["--latency-sentences", "-1"], "--latency-sentences must be >= 0")
        self.assert_refused(["--throughput-sentences", "-5"],
                            "--throughput-sentences must be >= 0")


if __name__ == "__main__":
    unittest.main()
