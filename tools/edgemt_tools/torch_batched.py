"""Batched beam search in PyTorch eager, for the throughput comparison.

What a PyTorch user of this checkpoint would run for a batch: the encoder on a
padded batch (src_key_padding_mask), the beams of every sentence in one
decoder call per step (memory_key_padding_mask), full decoder recompute per
step (nn.Transformer has no K/V cache). Selection follows search.py /
SEARCH.md exactly, per sentence. In eval mode nn.TransformerEncoder may take
the nested-tensor fast path for padded batches, which rounds differently from
batch 1, so a rare near-tie can pick another hypothesis than the per-sentence
reference; the unit test compares on a tiny model.
"""

import math
from typing import List, Sequence

import torch

from . import search


def _top_candidates(candidates: torch.Tensor, k: int):
    """The first k of `candidates` [n] in (score desc, index asc) order, as a
    full stable sort would give them (SEARCH.md), without sorting all n: the
    k-th best score bounds the set, every candidate at or above it (ties
    included, in index order) is stable-sorted. Returns (scores, indices),
    possibly longer than k when scores tie at the bound."""
    k = min(k, candidates.numel())
    bound = torch.topk(candidates, k, sorted=False).values.min()
    chosen = torch.nonzero(candidates >= bound).squeeze(1)        # ascending indices
    order = torch.sort(candidates[chosen], descending=True, stable=True).indices
    return candidates[chosen][order], chosen[order]


@torch.no_grad()
def beam_search_batch(reference, sources: Sequence[Sequence[int]], beam: int,
                      alpha: float = search.DEFAULT_LENGTH_PENALTY) -> List[List[int]]:
    """Best hypothesis (ids without bos/eos) for each source id list."""
    model = reference.model
    if model.quantize_activations:
        raise ValueError("beam_search_batch calls the model's layers directly and would skip "
                         "the int8 activation quantization; use TorchReference.beam_search")
    pad, bos, eos = reference.pad, reference.bos, reference.eos
    banned = list(reference.banned)
    batch = len(sources)
    longest = max(len(s) for s in sources)
    src = torch.full((batch, longest), pad, dtype=torch.long)
    for i, ids in enumerate(sources):
        src[i, :len(ids)] = torch.tensor(list(ids), dtype=torch.long)
    src_mask = src == pad                                                  # [B, S]
    memory = model.transformer.encoder(model.embed_tokens(src),
                                       src_key_padding_mask=src_mask)      # [B, S, d]
    max_lens = [reference.max_len(len(s)) for s in sources]
    live = [[[bos]] for _ in range(batch)]                 # per sentence: token lists
    live_scores = [torch.zeros(1, dtype=torch.float32) for _ in range(batch)]
    finished: List[List[search.Hypothesis]] = [[] for _ in range(batch)]
    done = [False] * batch
    step = 0
    while not all(done):
        active = [b for b in range(batch) if not done[b]]
        prefixes = torch.tensor([tokens for b in active for tokens in live[b]], dtype=torch.long)
        owner = torch.tensor([b for b in active for _ in live[b]], dtype=torch.long)
        t = prefixes.shape[1]
        causal = torch.triu(torch.full((t, t), -math.inf), diagonal=1)
        hidden = model.transformer.decoder(model.embed_tokens(prefixes), memory[owner],
                                           tgt_mask=causal,
                                           memory_key_padding_mask=src_mask[owner])
        logprobs = torch.log_softmax(model.generator(hidden[:, -1]).float(), dim=-1)  # [N, V]
        logprobs[:, banned] = -math.inf
        vocab = logprobs.shape[1]
        offset = 0
        for b in active:
            n = len(live[b])
            candidates = (live_scores[b].unsqueeze(1) + logprobs[offset:offset + n]).reshape(-1)
            offset += n
            ordered_scores, ordered_index = _top_candidates(candidates, 2 * beam)
            next_tokens, next_scores = [], []
            for rank in range(min(2 * beam, candidates.numel())):
                score = float(ordered_scores[rank])
                if score == -math.inf:
                    break
                hyp, token = divmod(int(ordered_index[rank]), vocab)
                if token == eos:
                    if rank < beam:
                        finished[b].append(search.Hypothesis(
                            live[b][hyp][1:], score,
                            search.length_normalized(score, step + 1, alpha), True))
                    continue
                if len(next_tokens) < beam:
                    next_tokens.append(live[b][hyp] + [token])
                    next_scores.append(score)
            if len(finished[b]) >= beam or not next_tokens:
                done[b] = True
                continue
            live[b] = next_tokens
            live_scores[b] = torch.tensor(next_scores, dtype=torch.float32)
            if step + 1 >= max_lens[b]:
                for tokens, score in zip(live[b], live_scores[b].tolist()):
                    finished[b].append(search.Hypothesis(
                        tokens[1:], score, search.length_normalized(score, max_lens[b], alpha),
                        False))
                done[b] = True
        step += 1
    return [search.best(f).tokens for f in finished]
