"""Word error: the word-level edit distance between what was said and what was heard, by ``jiwer``.

Contract: ``word_edits`` counts the substitutions, deletions and insertions that turn the reference
words into the hypothesis words (each edit costing 1): the numerator of the word error rate, whose
denominator is ``len(reference)``. Normalising the text (case, punctuation, numbers spelled out) is
each bench's own business: it decides what counts as the same word.
"""

from __future__ import annotations

from collections.abc import Sequence

import jiwer


def word_edits(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """The fewest single-word substitutions, deletions and insertions from reference to hypothesis."""
    if not reference:
        return len(hypothesis)  # jiwer needs a reference: every word heard is one inserted
    if not hypothesis:
        return len(reference)
    out = jiwer.process_words(" ".join(reference), " ".join(hypothesis))
    return int(out.substitutions + out.deletions + out.insertions)
