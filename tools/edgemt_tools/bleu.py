"""Corpus BLEU compatible with sacreBLEU's defaults.

sacreBLEU 2.x `BLEU()` defaults reproduced here: tokenizer 13a, mixed case,
max n-gram order 4, uniform weights, smooth_method 'exp', no effective order,
one reference per segment. Each segment is `rstrip()`ed before tokenizing.

Tokenizer 13a (mteval-v13a.pl, as sacreBLEU's tokenizer_13a):
  1. remove "<skipped>", join "-\\n" line breaks, turn "\\n" into " ";
  2. unescape &quot; &amp; &lt; &gt; (in that order, only if "&" occurs);
  3. on " line ", apply in order:
       ([\\{-\\~\\[-\\` -\\&\\(-\\+\\:-\\@\\/])  -> " \\1 "   (punctuation and symbols)
       ([^0-9])([\\.,])                -> "\\1 \\2 "   (period/comma not after a digit)
       ([\\.,])([^0-9])                -> " \\1 \\2"   (period/comma not before a digit)
       ([0-9])(-)                      -> "\\1 \\2 "   (dash after a digit)
  4. collapse whitespace: " ".join(line.split()).

Score: BP = 1 if c >= r else exp(1 - r/c) (0 if c = 0); p_n = 100 * m_n / t_n;
when m_n = 0 ('exp' smoothing, NIST): the k-th such order gets
p_n = 100 / (2^k * t_n); if t_n = 0 the remaining orders count as 0 (log 0 ->
-9999999999). BLEU = BP * exp(mean(log p_n)); 0 when no n-gram matches at all.
"""

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import List, Sequence, Tuple

MAX_ORDER = 4

_REGEXES = [
    (re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])"), r" \1 "),
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),
]


def tokenize_13a(line: str) -> str:
    """mteval-v13a tokenization; returns tokens joined by single spaces."""
    line = line.replace("<skipped>", "")
    line = line.replace("-\n", "")
    line = line.replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"')
        line = line.replace("&amp;", "&")
        line = line.replace("&lt;", "<")
        line = line.replace("&gt;", ">")
    line = f" {line} "
    for regex, replacement in _REGEXES:
        line = regex.sub(replacement, line)
    return " ".join(line.split())


def _ngrams(tokens: Sequence[str], max_order: int) -> Counter:
    counts: Counter = Counter()
    for n in range(1, max_order + 1):
        for i in range(len(tokens) - n + 1):
            counts[tuple(tokens[i:i + n])] += 1
    return counts


def segment_stats(hypothesis: str, reference: str,
                  max_order: int = MAX_ORDER) -> Tuple[int, int, List[int], List[int]]:
    """(hyp_len, ref_len, matches[n], totals[n]) for one segment, clipped counts."""
    hyp = tokenize_13a(hypothesis.rstrip()).split()
    ref = tokenize_13a(reference.rstrip()).split()
    hyp_counts, ref_counts = _ngrams(hyp, max_order), _ngrams(ref, max_order)
    matches = [0] * max_order
    for gram, count in hyp_counts.items():
        matches[len(gram) - 1] += min(count, ref_counts.get(gram, 0))
    totals = [max(0, len(hyp) - n + 1) for n in range(1, max_order + 1)]
    return len(hyp), len(ref), matches, totals


@dataclass(frozen=True)
class BleuScore:
    score: float
    precisions: Tuple[float, ...]
    bp: float
    sys_len: int
    ref_len: int
    matches: Tuple[int, ...]
    totals: Tuple[int, ...]

    def __str__(self) -> str:
        precisions = "/".join(f"{p:.1f}" for p in self.precisions)
        ratio = self.sys_len / self.ref_len if self.ref_len else 0.0
        return (f"BLEU = {self.score:.2f} {precisions} (BP = {self.bp:.3f} ratio = {ratio:.3f} "
                f"hyp_len = {self.sys_len} ref_len = {self.ref_len})")


def _log(value: float) -> float:
    return -9999999999 if value == 0 else math.log(value)


def score_from_stats(sys_len: int, ref_len: int, matches: Sequence[int],
                     totals: Sequence[int]) -> BleuScore:
    """BLEU from corpus sufficient statistics with 'exp' smoothing."""
    order = len(matches)
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    else:
        bp = 1.0
    precisions = [0.0] * order
    if not any(matches):
        return BleuScore(0.0, tuple(precisions), bp, sys_len, ref_len, tuple(matches),
                         tuple(totals))
    smooth = 1.0
    for n in range(order):
        if totals[n] == 0:
            break
        if matches[n] == 0:
            smooth *= 2
            precisions[n] = 100.0 / (smooth * totals[n])
        else:
            precisions[n] = 100.0 * matches[n] / totals[n]
    score = bp * math.exp(sum(_log(p) for p in precisions) / order)
    return BleuScore(score, tuple(precisions), bp, sys_len, ref_len, tuple(matches),
                     tuple(totals))


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str],
                max_order: int = MAX_ORDER) -> BleuScore:
    """Corpus BLEU of parallel lists (one reference per hypothesis)."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    sys_len = ref_len = 0
    matches, totals = [0] * max_order, [0] * max_order
    for hyp, ref in zip(hypotheses, references):
        h_len, r_len, m, t = segment_stats(hyp, ref, max_order)
        sys_len += h_len
        ref_len += r_len
        matches = [a + b for a, b in zip(matches, m)]
        totals = [a + b for a, b in zip(totals, t)]
    return score_from_stats(sys_len, ref_len, matches, totals)
