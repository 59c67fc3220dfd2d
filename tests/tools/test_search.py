"""search.py against hand-built next-token distributions (the SEARCH.md rules).

Vocabulary of 8: pad 0, unk 1, bos 2, eos 3, words 4..7. `table_fn` maps a
generated prefix (without bos) to {token: probability}; the rest of the mass is
spread evenly over the other tokens (pad and bos included, so masking after
log_softmax is observable). Logits are log-probabilities, so log_softmax
returns them unchanged and scores are sums of log(p).
"""

import math
import unittest

import numpy as np
import torch

import helpers  # noqa: F401
from edgemt_tools import search

PAD, UNK, BOS, EOS = 0, 1, 2, 3
V = 8
BANNED = [PAD, BOS]


def table_fn(table):
    def logits_fn(prefixes):
        rows = []
        for prefix in prefixes.tolist():
            assert prefix[0] == BOS
            probs = dict(table.get(tuple(prefix[1:]), {}))
            rest = [t for t in range(V) if t not in probs]
            left = 1.0 - sum(probs.values())
            row = [math.log(probs[t]) if t in probs else math.log(left / len(rest))
                   for t in range(V)]
            rows.append(row)
        return torch.tensor(rows, dtype=torch.float32)
    return logits_fn


def lp(p):
    return float(np.float32(math.log(p)))


class LimitsTest(unittest.TestCase):
    def test_max_target_length(self):
        self.assertEqual(search.max_target_length(11, 256), 32)         # floor(2*11 + 10)
        self.assertEqual(search.max_target_length(7, 256, 1.5, 0.0), 10)  # floor(10.5)
        self.assertEqual(search.max_target_length(200, 256), 256)       # capped at P
        self.assertEqual(search.max_target_length(3, 256, 0.0, 0.0), 1)  # at least 1

    def test_length_normalized_is_float32(self):
        got = search.length_normalized(-3.0, 4, 0.6)
        want = float(np.float32(-3.0) / np.float32(4 ** 0.6))
        self.assertEqual(got, want)


class GreedyTest(unittest.TestCase):
    def test_banned_and_ties(self):
        # pad (banned) is most likely; 5 and 4 tie -> lowest id 4; then eos.
        fn = table_fn({(): {PAD: 0.4, 5: 0.25, 4: 0.25}, (4,): {EOS: 0.9}})
        self.assertEqual(search.greedy(fn, BOS, EOS, BANNED, 10), [4])

    def test_max_len_without_eos(self):
        fn = table_fn({(): {6: 0.9}, (6,): {7: 0.9}, (6, 7): {6: 0.9}})
        self.assertEqual(search.greedy(fn, BOS, EOS, BANNED, 3), [6, 7, 6])


class BeamTest(unittest.TestCase):
    def test_eos_rank_rule(self):
        # Step 0 order: 4 (.5), 5 (.3), eos (.15), others. eos has rank 2.
        table = {(): {4: 0.5, 5: 0.3, EOS: 0.15}, (4,): {EOS: 0.9}, (5,): {EOS: 0.9}}
        finished = search.beam_search(table_fn(table), BOS, EOS, BANNED, 2, 1.0, 10)
        self.assertNotIn([], [h.tokens for h in finished])  # rank 2 >= K=2: dropped
        finished = search.beam_search(table_fn(table), BOS, EOS, BANNED, 3, 1.0, 10)
        self.assertEqual(finished[0].tokens, [])             # rank 2 < K=3: finished
        self.assertEqual(finished[0].score, lp(0.15))

    def test_length_penalty_decides(self):
        # [] finishes at step 0 with log .45; [4] at step 1 with log(.5*.8) = log .4.
        table = {(): {4: 0.5, EOS: 0.45}, (4,): {EOS: 0.8}}
        fn = table_fn(table)
        alpha0 = search.best(search.beam_search(fn, BOS, EOS, BANNED, 2, 0.0, 10))
        alpha1 = search.best(search.beam_search(fn, BOS, EOS, BANNED, 2, 1.0, 10))
        self.assertEqual(alpha0.tokens, [])    # -0.799 > -0.916
        self.assertEqual(alpha1.tokens, [4])   # -0.916 / 2 > -0.799 / 1
        self.assertAlmostEqual(alpha1.normalized, (lp(0.5) + lp(0.8)) / 2, places=6)

    def test_mask_after_log_softmax(self):
        # pad takes half the mass; eos keeps log(.3), NOT log(.3 / .5).
        table = {(): {PAD: 0.5, EOS: 0.3, 4: 0.15}}
        finished = search.beam_search(table_fn(table), BOS, EOS, BANNED, 1, 1.0, 10)
        self.assertEqual(finished[0].tokens, [])
        self.assertEqual(finished[0].score, lp(0.3))

    def test_tie_goes_to_earliest(self):
        # 4 and 5 tie at step 0 (4 first: lower flat index); both then end with
        # identical scores; the first appended ([4]) wins.
        table = {(): {4: 0.4, 5: 0.4}, (4,): {EOS: 0.5}, (5,): {EOS: 0.5}}
        finished = search.beam_search(table_fn(table), BOS, EOS, BANNED, 2, 1.0, 10)
        self.assertEqual([h.tokens for h in finished], [[4], [5]])
        self.assertEqual(finished[0].normalized, finished[1].normalized)
        self.assertEqual(search.best(finished).tokens, [4])

    def test_max_len_finalizes_live(self):
        table = {(): {4: 0.6, 5: 0.3}, (4,): {6: 0.7}, (5,): {7: 0.9}}
        finished = search.beam_search(table_fn(table), BOS, EOS, BANNED, 2, 1.0, 2)
        self.assertTrue(all(not h.finished_by_eos for h in finished))
        # .6 * .7 = .42 beats .3 * .9 = .27; live order is by score.
        self.assertEqual([h.tokens for h in finished], [[4, 6], [5, 7]])
        self.assertAlmostEqual(finished[0].normalized, (lp(0.6) + lp(0.7)) / 2, places=6)
        self.assertEqual(search.best(finished).tokens, [4, 6])

    def test_stops_at_k_finished(self):
        calls = []
        base = table_fn({(): {4: 0.5, 5: 0.4}, (4,): {EOS: 0.9}, (5,): {EOS: 0.9}})

        def counting(prefixes):
            calls.append(prefixes.shape)
            return base(prefixes)
        finished = search.beam_search(counting, BOS, EOS, BANNED, 2, 1.0, 50)
        self.assertEqual(len(finished), 2)
        self.assertEqual([tuple(c) for c in calls], [(1, 1), (2, 2)])  # step 0: one hyp


if __name__ == "__main__":
    unittest.main()
