"""Greedy and beam search, exactly as the edgemt runtime implements them.

This module is the executable form of SEARCH.md (same folder); the C++ search
copies those rules literally, so change both together. The model is abstracted
as `logits_fn(prefixes) -> logits`: prefixes is a LongTensor [N, t] of target
ids (each starting with decoder_start), the result a float32 tensor [N, V] of
next-token logits after the last position.

Summary (details and rationale in SEARCH.md):
  * max_len = max(1, min(floor(a * src_len + b), max_positions)), src_len
    counting the appended eos; defaults a = 2.0, b = 10. A step generates one
    token; at most max_len tokens are generated, the eos included.
  * Banned tokens (pad and bos) are never emitted.
  * Greedy: masked logits, argmax, ties -> lowest id; stop at eos or max_len.
  * Beam (K, alpha): float32 sums of log_softmax; banned entries set to -inf
    AFTER log_softmax; top 2K of live x vocab by (score desc, flat index asc);
    eos candidates finish only when their rank < K; other candidates fill the
    next K live hypotheses; stop at K finished or after max_len steps
    (then all live hypotheses finish); best normalized score wins, ties ->
    earliest finished. normalized = score / float32(len ** alpha), len
    counting the eos (or max_len for unfinished hypotheses).
Outputs exclude bos and eos.
"""

import math
from dataclasses import dataclass
from typing import Callable, List, Sequence

import numpy as np
import torch

LogitsFn = Callable[[torch.Tensor], torch.Tensor]

DEFAULT_MAX_LEN_A = 2.0
DEFAULT_MAX_LEN_B = 10.0
DEFAULT_BEAM = 4
DEFAULT_LENGTH_PENALTY = 1.0


def max_target_length(src_len: int, max_positions: int, a: float = DEFAULT_MAX_LEN_A,
                      b: float = DEFAULT_MAX_LEN_B) -> int:
    """Largest number of generated tokens (eos included) for a source of
    `src_len` ids (eos included). a*src_len+b is evaluated in double."""
    return max(1, min(int(math.floor(a * float(src_len) + b)), max_positions))


def length_normalized(score: float, length: int, alpha: float) -> float:
    """score / length**alpha with float32 operands: the penalty length**alpha is
    computed in double and rounded to float32, then divided in float32."""
    penalty = np.float32(float(length) ** float(alpha))
    return float(np.float32(score) / penalty)


def greedy(logits_fn: LogitsFn, start: int, eos: int, banned: Sequence[int],
           max_len: int) -> List[int]:
    """Greedy decoding; returns generated ids without start and eos."""
    tokens = [start]
    for _ in range(max_len):
        logits = logits_fn(torch.tensor([tokens], dtype=torch.long))[0].clone()  # [V]
        logits[list(banned)] = -math.inf
        token = int(torch.argmax(logits))  # first maximal index = lowest id on ties
        if token == eos:
            break
        tokens.append(token)
    return tokens[1:]


@dataclass(frozen=True)
class Hypothesis:
    tokens: List[int]      # generated ids, without start and eos
    score: float           # float32 sum of log-probabilities (eos included)
    normalized: float      # score / length ** alpha
    finished_by_eos: bool


def beam_search(logits_fn: LogitsFn, start: int, eos: int, banned: Sequence[int],
                beam: int, alpha: float, max_len: int) -> List[Hypothesis]:
    """Beam search; returns every finished hypothesis in finishing order.
    The translation is `best(result)`."""
    if beam < 1:
        raise ValueError("beam must be >= 1")
    live_tokens: List[List[int]] = [[start]]
    live_scores = torch.zeros(1, dtype=torch.float32)              # [n]
    finished: List[Hypothesis] = []
    for step in range(max_len):
        logits = logits_fn(torch.tensor(live_tokens, dtype=torch.long))  # [n, V]
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        logprobs[:, list(banned)] = -math.inf
        candidates = (live_scores.unsqueeze(1) + logprobs).reshape(-1)   # [n*V], float32
        vocab = logprobs.shape[1]
        ordered_scores, ordered_index = torch.sort(candidates, descending=True, stable=True)
        top = min(2 * beam, candidates.numel())
        next_tokens: List[List[int]] = []
        next_scores: List[float] = []
        for rank in range(top):
            score = float(ordered_scores[rank])
            if score == -math.inf:
                break  # only banned continuations remain
            hyp, token = divmod(int(ordered_index[rank]), vocab)
            if token == eos:
                if rank < beam:
                    length = step + 1
                    finished.append(Hypothesis(live_tokens[hyp][1:], score,
                                               length_normalized(score, length, alpha), True))
                continue
            if len(next_tokens) < beam:
                next_tokens.append(live_tokens[hyp] + [token])
                next_scores.append(score)
        if len(finished) >= beam:
            return finished
        live_tokens = next_tokens
        live_scores = torch.tensor(next_scores, dtype=torch.float32)
        if not live_tokens:
            return finished
    for tokens, score in zip(live_tokens, live_scores.tolist()):
        finished.append(Hypothesis(tokens[1:], score, length_normalized(score, max_len, alpha),
                                   False))
    return finished


def best(finished: Sequence[Hypothesis]) -> Hypothesis:
    """Highest normalized score; ties -> the earliest finished."""
    winner = finished[0]
    for hyp in finished[1:]:
        if hyp.normalized > winner.normalized:
            winner = hyp
    return winner
