"""Which distance options each model uses. An option given for a model that ignores it is
refused, naming the option and the models it applies to, instead of being silently dropped
(``-k`` with k80, ``--pairwise-deletion`` with mash)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..errors import ModelError
from ._aa import AA_MODELS as _AA
from ._dna import MODELS as _DNA
from ._kmers import KMER_MODELS as _KMER
from ._protein import ALIGNMENT_MODELS as _ALIGNMENT

#: option -> (the models that use it, what it does)
USED_BY: dict[str, tuple[tuple[str, ...], str]] = {
    "pairwise_deletion": (_DNA + _AA, "drops missing sites per pair in aligned sequences"),
    "k": (_KMER, "sets the k-mer length"),
    "sketch_size": (("mash",), "sets the MinHash sketch size"),
    "seed": (("mash",), "seeds the MinHash hashes"),
    "matrix": (_ALIGNMENT, "scores the pairwise alignments"),
    "gap_open": (_ALIGNMENT, "scores the pairwise alignments"),
    "gap_extend": (_ALIGNMENT, "scores the pairwise alignments"),
    "ungap": (_ALIGNMENT + ("edit",) + _KMER, "removes alignment gaps before comparing"),
}


def check_model_options(
    model: str, given: Iterable[str], spell: Callable[[str], str] = lambda name: f"{name}="
) -> None:
    """Raise :class:`ModelError` for the first option of ``given`` that ``model`` ignores.

    ``spell`` names an option as the caller's user wrote it (``--pairwise-deletion``).

    >>> check_model_options("k80", ["pairwise_deletion"])
    >>> check_model_options("k80", ["k"])
    Traceback (most recent call last):
    ...
    bioaccel.errors.ModelError: k= does nothing for model 'k80': it sets the k-mer length for kmer, jaccard and mash only
    """
    key = str(model).lower()
    for name in given:
        models, does = USED_BY[name]
        if key in models or key not in _DNA + _AA + _ALIGNMENT + _KMER + ("edit",):
            continue  # an unknown model is named by the model check itself
        listed = models[0] if len(models) == 1 else ", ".join(models[:-1]) + " and " + models[-1]
        raise ModelError(
            f"{spell(name)} does nothing for model {model!r}: it {does} for {listed} only"
        )


def given_options(
    pairwise_deletion: bool = False,
    k=None,
    matrix=None,
    gap_open=None,
    gap_extend=None,
    sketch_size=None,
    seed=None,
) -> list[str]:
    """The options of a Python call that were given (not left at their "unset" value)."""
    values = dict(
        pairwise_deletion=pairwise_deletion or None,
        k=k,
        matrix=matrix,
        gap_open=gap_open,
        gap_extend=gap_extend,
        sketch_size=sketch_size,
        seed=seed,
    )
    return [name for name, v in values.items() if v is not None]
