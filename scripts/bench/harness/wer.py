"""Word error: the word-level edit distance between what was said and what was heard.

Contract: ``word_edits`` counts the substitutions, deletions and insertions that turn the reference
words into the hypothesis words (Levenshtein over words, each edit costing 1): the numerator of the word
error rate, whose denominator is ``len(reference)``.
Normalising the text (case, punctuation, numbers spelled out) is each bench's own business: it decides
what counts as the same word.

This is written here rather than taken from ``jiwer`` because jiwer is not among the project's
dependencies; with jiwer added, ``word_edits`` is ``jiwer.process_words(" ".join(reference),
" ".join(hypothesis))``'s substitutions + deletions + insertions.
"""

from __future__ import annotations

from collections.abc import Sequence


def word_edits(reference: Sequence[str], hypothesis: Sequence[str]) -> int:
    """The fewest single-word substitutions, deletions and insertions from reference to hypothesis."""
    row = list(range(len(hypothesis) + 1))
    for i, r in enumerate(reference, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hypothesis, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]
