"""Corpus BLEU, computed by sacreBLEU (PyPI `sacrebleu`, pinned in
platforms/debian12/install-deps.sh) with its defaults: tokenizer 13a, mixed
case, BLEU-4, 'exp' smoothing, one reference per segment.

edgemt used to carry its own reimplementation; it gave the same scores to
the last digit on every committed output (tests/tools/test_bleu.py holds
sacreBLEU to those figures), so what a well-kept library does is no longer
written here. This module only adapts the result to the figures edgemt's
reports print.
"""

from dataclasses import dataclass
from typing import Sequence, Tuple

SACREBLEU_VERSION = "2.4.3"  # the version install-deps.sh installs

try:
    import sacrebleu
    from sacrebleu.metrics import BLEU
except ImportError:  # pragma: no cover - exercised only on machines without it
    sacrebleu = None


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


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> BleuScore:
    """Corpus BLEU of parallel lists (one reference per hypothesis).
    ValueError when their lengths differ; ImportError without sacrebleu."""
    if sacrebleu is None:
        raise ImportError(f"BLEU needs sacrebleu {SACREBLEU_VERSION} (PyPI): run "
                          "platforms/debian12/install-deps.sh, or pip install "
                          f"sacrebleu=={SACREBLEU_VERSION}")
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    result = BLEU().corpus_score(list(hypotheses), [list(references)])
    return BleuScore(score=result.score, precisions=tuple(result.precisions), bp=result.bp,
                     sys_len=result.sys_len, ref_len=result.ref_len,
                     matches=tuple(result.counts), totals=tuple(result.totals))
