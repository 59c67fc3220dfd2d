"""Documents: `edgemt translate --split-sentences` on two sentences per line.

test_2016_flickr (1,000 single-sentence lines, models/reference/) is joined
into 500 lines of two consecutive sentences each, as a paragraph would come.
51 of its English lines end without punctuation ("... a truck"), and a
paragraph written that way has no sentence boundary any splitter could see;
as a writer would, the joined lines end such a first sentence with a period
(`punctuate`). The bundled int8 model (greedy) then translates:
  separate  the 1,000 (punctuated) sentences one per line
            (--no-split-sentences), the outputs joined in pairs: what a
            sentence-level model should get;
  split     the 500 joined lines with sentence splitting (the default);
  whole     the 500 joined lines fed whole (--no-split-sentences): what
            happens without splitting.
Corpus BLEU against the joined German references is printed for the three,
and for the raw joins (no period added) too. Splitting must match
translating separately: the same BLEU (within 0.05) and at least 99% of the
lines identical; and it must beat feeding lines whole.

Needs the built binary (EDGEMT_CLI) and the bundled model (label "model").
"""

import os
import subprocess
import tempfile
import unittest

import helpers
from edgemt_tools.bleu import corpus_bleu

CLI = helpers.CLI


def translate(lines, *flags):
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".en", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        path = f.name
    try:
        done = subprocess.run([CLI, "translate", "-m", helpers.BUNDLED_MODEL, "-i", path,
                               "--beam", "1", "--no-progress", *flags],
                              capture_output=True, check=False, timeout=900)
    finally:
        os.unlink(path)
    if done.returncode != 0:
        raise AssertionError(done.stderr.decode("utf-8", "replace"))
    return done.stdout.decode("utf-8").split("\n")[:-1]


class SplitSentencesBleuTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        helpers.require_cli()

    def test_splitting_matches_translating_sentences_separately(self):
        sources = helpers.reference_lines("test_2016_flickr.en")
        references = helpers.reference_lines("test_2016_flickr.de")
        self.assertEqual(len(sources), 1000)
        pairs = range(0, len(sources) - 1, 2)
        joined_references = [references[i] + " " + references[i + 1] for i in pairs]

        def measure(first_sentences):
            """BLEU of separate / split / whole for pairs (first_sentences[i], sources[i + 1])."""
            firsts = {i: first_sentences(sources[i]) for i in pairs}
            one_per_line = translate([firsts.get(i, line) for i, line in enumerate(sources)],
                                     "--no-split-sentences")
            joined = [firsts[i] + " " + sources[i + 1] for i in pairs]
            outputs = {"separate": [one_per_line[i] + " " + one_per_line[i + 1] for i in pairs],
                       "split": translate(joined),
                       "whole": translate(joined, "--no-split-sentences")}
            self.assertEqual(len(outputs["split"]), len(joined))
            scores = {name: corpus_bleu(lines, joined_references) for name, lines in outputs.items()}
            identical = sum(a == b for a, b in zip(outputs["separate"], outputs["split"]))
            return scores, identical

        for label, first_sentences in (("raw joins", lambda line: line),
                                       ("first sentence punctuated", punctuate)):
            scores, identical = measure(first_sentences)
            print(f"{label}:")
            for name, score in scores.items():
                print(f"  {name:8s} BLEU {score.score:.2f}  ({score})")
            print(f"  split == separate on {identical}/{len(pairs)} lines")
        # The punctuated pairs (the last measured) are the acceptance.
        self.assertAlmostEqual(scores["split"].score, scores["separate"].score, delta=0.05)
        self.assertGreaterEqual(identical, 0.99 * len(pairs))
        self.assertGreater(scores["split"].score, scores["whole"].score)


def punctuate(sentence):
    """The sentence ended with a period unless it ends with punctuation already."""
    stripped = sentence.rstrip()
    return stripped if stripped[-1:] in tuple(".!?\"')") else stripped + "."


if __name__ == "__main__":
    unittest.main()
