"""slrlib.book.plots.task.sentiment_sketch (Figure 1(a)): each pair of sentences differs in exactly
the one highlighted token, and the deciding token is not at the same position in every pair."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from slrlib.book.plots.task import SENTIMENT_PAIRS, sentiment_sketch  # noqa: E402


def _rows(fig):
    """The drawn sentences, row by row (texts grouped by y), with the highlighted tokens."""
    rows: dict[float, list] = {}
    for text in fig.axes[0].texts:
        if text.get_bbox_patch() is None:
            continue
        x, y = text.get_position()
        highlighted = text.get_bbox_patch().get_facecolor()[:3] != (1.0, 1.0, 1.0)
        rows.setdefault(y, []).append((x, text.get_text(), highlighted))
    return [sorted(r) for _, r in sorted(rows.items(), reverse=True)]


def test_sentiment_sketch_draws_each_pair_differing_in_the_highlighted_token():
    fig = sentiment_sketch()
    assert fig.number not in plt.get_fignums()
    rows = _rows(fig)
    assert len(rows) == 2 * len(SENTIMENT_PAIRS)
    positions = set()
    for first, second in zip(rows[::2], rows[1::2]):
        assert len(first) == len(second)
        differ = [i for i, (a, b) in enumerate(zip(first, second)) if a[1] != b[1]]
        lit = [i for i, (_, _, h) in enumerate(first) if h]
        assert differ == lit and len(lit) == 1 and second[lit[0]][2]
        positions.add(lit[0])
    assert len(positions) == len(SENTIMENT_PAIRS), "the deciding token should move between pairs"


def test_sentiment_sketch_rejects_a_pair_whose_replacement_changes_nothing():
    tokens, pos, labels, _ = SENTIMENT_PAIRS[0]
    with pytest.raises(ValueError, match="replacement"):
        sentiment_sketch([(tokens, pos, labels, tokens[pos])])
