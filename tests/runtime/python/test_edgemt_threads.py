"""One `edgemt.Translator` shared by 8 Python threads (issue 38, defect 3).

ctypes releases the GIL during every C call, so without the module's own
lock two threads ran edgemt_translate() on one translator at once: a crash
(SIGSEGV) or a wrong "numeric-error". Here 8 threads share one translator
for 100 calls in all, mixing translate() and translate_ids(), greedy and
beam; every result must equal the single-threaded one. close() racing
translations must neither crash nor lose a call in flight.

Run by ctest (runtime.python.edgemt_threads); by hand:

    EDGEMT_LIBRARY=build/runtime/libedgemt.so.0 PYTHONPATH=runtime/python \
      /usr/bin/python3 -m unittest tests/runtime/python/test_edgemt_threads.py -v
"""

import os
import threading
import unittest

import edgemt

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MODEL = os.path.join(ROOT, "models", "multi30k-en-de.int8.emt")
SOURCES = os.path.join(ROOT, "models", "reference", "test_2016_flickr.en")
THREADS = 8
ROUNDS = 100   # calls in all, shared among the threads
SENTENCES = 3  # per call


def read_lines(path, count):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:count]


def as_tuples(translations):
    """Everything a translation says, attention weights included."""
    return [(t.text, t.score, tuple(t.tokens),
             None if t.attention is None else tuple(map(tuple, t.attention)))
            for t in translations]


class OneTranslatorManyThreads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model = edgemt.Model(MODEL)
        cls.texts = read_lines(SOURCES, 12)
        cls.ids = [[int(x) for x in line.split()] for line in read_lines(SOURCES + ".ids", 12)]

    def calls(self, translator):
        """The kinds of call a round makes, in turn: every path of the module
        (text and ids, greedy and beam, with and without attention weights)."""
        def text(first, beam):
            return lambda: translator.translate(self.texts[first:first + SENTENCES],
                                                beam_size=beam)

        def ids(first, beam, attention=False):
            return lambda: translator.translate_ids(self.ids[first:first + SENTENCES],
                                                    beam_size=beam, attention=attention)
        return [text(0, 1), ids(3, 1), text(6, 2), ids(9, 2, attention=True),
                ids(0, 1, attention=True), text(3, 2)]

    def test_eight_threads_one_translator_same_results_as_one_thread(self):
        translator = edgemt.Translator(self.model, threads=2, max_beam=2, attention=True)
        calls = self.calls(translator)
        want = [as_tuples(call()) for call in calls]
        got = [None] * ROUNDS
        failures = []
        start = threading.Barrier(THREADS)

        def worker(first_round):
            start.wait()  # all threads call at once
            for n in range(first_round, ROUNDS, THREADS):
                try:
                    got[n] = as_tuples(calls[n % len(calls)]())
                except Exception as e:  # reported below with its round
                    failures.append(f"round {n}: {type(e).__name__}: {e}")

        workers = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        self.assertEqual(failures, [])
        differing = [n for n in range(ROUNDS) if got[n] != want[n % len(calls)]]
        self.assertEqual(differing, [], f"{len(differing)} of {ROUNDS} calls differ")

    def test_close_waits_for_calls_in_flight_and_later_calls_raise(self):
        translator = edgemt.Translator(self.model, threads=2)
        want = as_tuples(translator.translate(self.texts[:SENTENCES]))
        results = []
        errors = []
        start = threading.Barrier(THREADS + 1)

        def worker():
            start.wait()
            for _ in range(5):
                try:
                    results.append(as_tuples(translator.translate(self.texts[:SENTENCES])))
                except edgemt.Error as e:
                    errors.append(str(e))

        workers = [threading.Thread(target=worker) for _ in range(THREADS)]
        for w in workers:
            w.start()
        start.wait()
        translator.close()  # while translations run or wait
        for w in workers:
            w.join()
        # Each call either finished with the right result or was refused
        # cleanly because the translator was closed; none was lost.
        self.assertEqual(len(results) + len(errors), THREADS * 5)
        self.assertTrue(all(r == want for r in results))
        self.assertTrue(all("closed" in e for e in errors), errors[:3])
        with self.assertRaises(edgemt.Error) as caught:
            translator.translate_ids(self.ids[:1])
        self.assertIn("closed", str(caught.exception))
        translator.close()  # twice: no-op

    def test_model_closed_under_translators_stays_alive_until_they_close(self):
        """Model.close() with translators open (or in flight on other threads)
        must not free what they use: the model goes when the last one closes."""
        model = edgemt.Model(MODEL)
        translator = edgemt.Translator(model)
        want = as_tuples(translator.translate_ids(self.ids[:SENTENCES]))
        results = []
        start = threading.Barrier(THREADS + 1)

        def worker():
            start.wait()
            for _ in range(3):
                results.append(as_tuples(translator.translate_ids(self.ids[:SENTENCES])))

        workers = [threading.Thread(target=worker) for _ in range(THREADS)]
        for w in workers:
            w.start()
        start.wait()
        model.close()
        for w in workers:
            w.join()
        self.assertEqual(results, [want] * (THREADS * 3))
        with self.assertRaises(edgemt.Error) as caught:
            edgemt.Translator(model)
        self.assertIn("closed", str(caught.exception))
        with self.assertRaises(edgemt.Error):
            model.detokenize([5, 6])
        translator.close()
        with self.assertRaises(edgemt.Error):
            translator.translate(self.texts[:1])


if __name__ == "__main__":
    unittest.main()
