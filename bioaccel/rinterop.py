"""bioaccel results in R, through rpy2 (``pip install 'bioaccel[r]'``; R with ape).

- :func:`to_r_dist` / :func:`from_r_dist`: :class:`~bioaccel.distances._matrix.DistanceMatrix`
  <-> R ``dist`` (built from the condensed vector; labels kept; NaN/Inf kept);
- :func:`to_r_alignment` / :func:`from_r_alignment`:
  :class:`~bioaccel.msa_engine.MultipleAlignment` <-> ape ``AAbin`` (proteins) / ``DNAbin``
  (nucleotides) matrix, rows named by the ids, gaps as ``-`` (exact round trip for
  upper-case rows of letters ape knows);
- :func:`tree_to_phylo` / :func:`phylo_to_tree`: :class:`~bioaccel.trees._tree.Tree` <-> ape
  ``phylo`` (built from the edge list, not through Newick text, so labels with quotes or
  spaces survive);
- :func:`scores_to_dataframe`, :func:`alignments_to_dataframe`: R ``data.frame``;
- :func:`neighbors_to_r` (the pairs within a threshold: a ``data.frame`` of id1, id2,
  distance, or a symmetric ``Matrix`` sparse matrix) and :func:`clusters_to_r` (amplicon
  clusters: id, cluster, seed, abundance), as the R package's ``bioaccel_neighbors()`` and
  ``bioaccel_cluster()`` return them;
- :func:`hclust`, :func:`cutree`, :func:`pcoa`, :func:`plot_tree`: R's statistics and ape's
  plotting, called from Python.

Two rpy2 traps this module avoids: R functions with dots in their names are taken as
``ro.r["dist.dna"]`` (``importr`` renames them), and no R function is called inside a NumPy
conversion context (it drops R classes such as ``dist``); NumPy arrays cross as plain R
vectors. Starting R, rpy2 prepends R's library directories to ``LD_LIBRARY_PATH`` in this
process's environment; that is too late to matter to this process, but every child inherits
it, and a Python child then loads the system's libpython and finds none of its packages.
:func:`_ro` puts the variable back as it was once R has started.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from .distances import DistanceMatrix
from .trees import Tree


def _ro():
    """rpy2's robjects, R started, with this process's ``LD_LIBRARY_PATH`` as it was."""
    before = os.environ.get("LD_LIBRARY_PATH")
    try:
        import rpy2.robjects as ro
    except ImportError as exc:  # rpy2 missing, or R not found by it
        raise ImportError(
            f"bioaccel.rinterop needs rpy2 and R ({exc}); "
            "pip install 'bioaccel[r]' and install R (r-base-core)"
        ) from exc
    finally:
        _restore_env("LD_LIBRARY_PATH", before)
    return ro


def _restore_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def _ape(ro):
    try:
        ro.r("suppressMessages(library(ape))")
    except Exception as exc:  # rpy2 raises RRuntimeError
        raise ImportError(
            f"the R package ape is not installed ({exc}); "
            "apt-get install r-cran-ape or install.packages('ape')"
        ) from None


def _numbers(vector) -> np.ndarray:
    """An R numeric vector as float64, without a conversion context."""
    try:
        return np.array(memoryview(vector), dtype=np.float64)
    except (TypeError, ValueError):
        return np.array(list(vector), dtype=np.float64)


def to_r_dist(dm: DistanceMatrix):
    """An R ``dist`` with the ids as ``Labels`` (condensed order = R's ``dist`` order).

    Examples
    --------
    >>> dm = DistanceMatrix([[0, 1, 2], [1, 0, 3], [2, 3, 0]], ["a", "b", "c"])
    >>> d = to_r_dist(dm)                                     # doctest: +SKIP
    >>> list(d.rclass)                                        # doctest: +SKIP
    ['dist']
    """
    ro = _ro()
    make = ro.r(
        "function(v, n, labels) structure(v, Size = as.integer(n), Labels = labels, "
        "Diag = FALSE, Upper = FALSE, method = 'bioaccel', class = 'dist')"
    )
    return make(ro.FloatVector(dm.condensed()), len(dm), ro.StrVector(dm.ids))


def from_r_dist(d) -> DistanceMatrix:
    """A :class:`DistanceMatrix` from an R ``dist`` (labels ``1..n`` when it has none)."""
    ro = _ro()
    if "dist" not in list(d.rclass):
        raise TypeError(f"expected an R dist, got an R object of class {list(d.rclass)}")
    n = int(ro.r["attr"](d, "Size")[0])
    labels = ro.r["attr"](d, "Labels")
    ids = [str(x) for x in labels] if labels is not ro.NULL else [str(i + 1) for i in range(n)]
    return DistanceMatrix.from_condensed(_numbers(d), ids)


def to_r_alignment(aln):
    """An ape ``AAbin`` (protein) or ``DNAbin`` (DNA/RNA) matrix of a
    :class:`~bioaccel.msa_engine.MultipleAlignment`, or of an aligned
    :class:`~bioaccel.SeqBatch` (``read_sequences`` of an alignment file): one row per
    sequence, named by its id, one column per alignment column. ``phangorn::as.phyDat`` and
    ``ape::dist.aa`` / ``ape::dist.dna`` take it as it is. ape's ``DNAbin`` has no U: RNA
    goes with U as T (never as missing data).

    Raises
    ------
    ValueError
        An alignment of no rows (ape has no empty alignment matrix); a SeqBatch whose rows
        differ in length (:class:`~bioaccel.errors.AlignmentLengthError`, naming the row).
    TypeError
        Neither a MultipleAlignment nor a SeqBatch.
    """
    from .sequences import SeqBatch

    if isinstance(aln, SeqBatch):
        aln.as_alignment()  # equal lengths, or an error naming the first row that differs
        ids, rows, alphabet = (
            list(aln.ids),
            [aln.sequence(i) for i in range(len(aln))],
            aln.alphabet,
        )
    elif all(hasattr(aln, a) for a in ("ids", "sequences", "alphabet")):
        ids, rows, alphabet = list(aln.ids), list(aln.sequences), aln.alphabet
    else:
        raise TypeError(
            f"to_r_alignment: expected a MultipleAlignment or an aligned SeqBatch, "
            f"got {type(aln).__name__}"
        )
    ro = _ro()
    _ape(ro)
    if len(ids) == 0:
        raise ValueError("to_r_alignment: the alignment has no rows")
    dna = alphabet.name in ("dna", "rna")
    letters = "".join(rows)
    letters = letters.lower().replace("u", "t") if dna else letters.upper()
    make = ro.r(
        "function(chars, n, ids, dna) { m <- matrix(strsplit(chars, '')[[1]], nrow = n, "
        "byrow = TRUE, dimnames = list(ids, NULL)); if (dna) as.DNAbin(m) else as.AAbin(m) }"
    )
    return make(ro.StrVector([letters]), len(ids), ro.StrVector(ids), dna)


def from_r_alignment(x):
    """A :class:`~bioaccel.msa_engine.MultipleAlignment` from an ape ``AAbin`` / ``DNAbin``
    alignment (a matrix, or a list of sequences of one length), rows in R's order, letters in
    upper case, ids from the row names (``seq1``, ``seq2``... when it has none).

    Raises
    ------
    TypeError
        Not an AAbin/DNAbin.
    ValueError
        A list whose sequences differ in length (naming the first one that does).
    """
    from .msa_engine import MultipleAlignment
    from .sequences import DNA, PROTEIN

    ro = _ro()
    _ape(ro)
    classes = list(x.rclass)
    if "DNAbin" not in classes and "AAbin" not in classes:
        raise TypeError(f"expected an ape DNAbin or AAbin, got an R object of class {classes}")
    rows_of = ro.r(
        "function(x) { ch <- as.character(x); if (!is.list(ch)) "
        "ch <- lapply(seq_len(nrow(ch)), function(i) ch[i, ]); "
        "vapply(ch, paste, '', collapse = '') }"
    )
    names_of = ro.r(
        "function(x) { n <- if (is.list(x)) names(x) else rownames(x); "
        "if (is.null(n)) character() else n }"
    )
    rows = [str(r).upper() for r in rows_of(x)]
    ids = [str(i) for i in names_of(x)] or [f"seq{k + 1}" for k in range(len(rows))]
    for k, row in enumerate(rows):
        if len(row) != len(rows[0]):
            raise ValueError(
                f"from_r_alignment: sequence {k + 1} ({ids[k]!r}) has {len(row)} "
                f"sites, sequence 1 ({ids[0]!r}) {len(rows[0])}: not an alignment"
            )
    return MultipleAlignment(ids, rows, DNA if "DNAbin" in classes else PROTEIN)


def tree_to_phylo(tree: Tree):
    """An ape ``phylo`` (cladewise edge order, children in the tree's order)."""
    ro = _ro()
    _ape(ro)
    n = tree.n_tips
    number = {}
    nxt = n + 1
    edges, lengths = [], []
    stack = [tree.root]
    while stack:  # preorder
        node = stack.pop()
        if node >= n:
            number[node] = nxt
            nxt += 1
        kids = [int(e) for e in tree._children[node]]
        for e in kids:
            child = int(tree.child[e])
            edges.append((node, child))
            lengths.append(float(tree.length[e]))
        stack.extend(int(tree.child[e]) for e in reversed(kids))
    # cladewise: the edges in the order a preorder walk meets them
    order = _cladewise(edges, tree.root)
    num = lambda v: v + 1 if v < n else number[v]  # noqa: E731
    edge = [num(edges[k][0]) for k in order] + [num(edges[k][1]) for k in order]
    make = ro.r(
        "function(edge, len, tips, nnode) { x <- list(edge = matrix(as.integer(edge), "
        "ncol = 2), edge.length = len, tip.label = tips, Nnode = as.integer(nnode)); "
        "class(x) <- 'phylo'; attr(x, 'order') <- 'cladewise'; x }"
    )
    return make(
        ro.IntVector(edge),
        ro.FloatVector([lengths[k] for k in order]),
        ro.StrVector(tree.labels),
        len(number),
    )


def _cladewise(edges: list[tuple[int, int]], root: int) -> list[int]:
    by_parent: dict[int, list[int]] = {}
    for k, (p, _) in enumerate(edges):
        by_parent.setdefault(p, []).append(k)
    out: list[int] = []
    stack = list(reversed(by_parent.get(root, [])))
    while stack:
        k = stack.pop()
        out.append(k)
        stack.extend(reversed(by_parent.get(edges[k][1], [])))
    return out


def phylo_to_tree(phylo) -> Tree:
    """A :class:`~bioaccel.trees._tree.Tree` from an ape ``phylo`` (branch lengths 0 if absent)."""
    ro = _ro()
    if "phylo" not in list(phylo.rclass):
        raise TypeError(f"expected an ape phylo, got an R object of class {list(phylo.rclass)}")
    get = ro.r("function(x, name) x[[name]]")
    labels = [str(s) for s in get(phylo, "tip.label")]
    edge = _numbers(get(phylo, "edge")).astype(np.int64).reshape(2, -1)
    lengths = get(phylo, "edge.length")
    length = np.zeros(edge.shape[1]) if lengths is ro.NULL else _numbers(lengths)
    # ape: tips 1..n, root n + 1, other internal nodes after it -> 0-based, same order
    return Tree(labels, edge[0] - 1, edge[1] - 1, length, len(labels))


def scores_to_dataframe(
    scores: np.ndarray, query_ids: Sequence[str], target_ids: Sequence[str] | None = None
):
    """Alignment scores (queries x targets) as a long R data.frame: query, target, score."""
    ro = _ro()
    scores = np.asarray(scores)
    target_ids = list(query_ids if target_ids is None else target_ids)
    if scores.shape != (len(query_ids), len(target_ids)):
        raise ValueError(
            f"scores of shape {scores.shape} do not fit {len(query_ids)} queries x "
            f"{len(target_ids)} targets"
        )
    q = np.repeat(np.asarray(query_ids, dtype=object), len(target_ids))
    t = np.tile(np.asarray(target_ids, dtype=object), len(query_ids))
    values = (
        ro.IntVector(scores.ravel().tolist())
        if np.issubdtype(scores.dtype, np.integer)
        else ro.FloatVector(scores.ravel().astype(float))
    )
    return ro.r["data.frame"](
        query=ro.StrVector(q.tolist()),
        target=ro.StrVector(t.tolist()),
        score=values,
        stringsAsFactors=False,
    )


def alignments_to_dataframe(alignments):
    """:class:`~bioaccel.pairwise._align.Alignment` records as an R data.frame, one row each."""
    ro = _ro()
    fields = (
        "query_id",
        "target_id",
        "score",
        "query_start",
        "query_end",
        "target_start",
        "target_end",
        "cigar",
        "identity",
        "query_aligned",
        "target_aligned",
    )
    cols = {f: [getattr(a, f) for a in alignments] for f in fields}
    conv = {}
    for f, values in cols.items():
        if f in ("score", "query_start", "query_end", "target_start", "target_end"):
            conv[f] = ro.IntVector([int(v) for v in values])
        elif f == "identity":
            conv[f] = ro.FloatVector([float(v) for v in values])
        else:
            conv[f] = ro.StrVector([str(v) for v in values])
    return ro.r["data.frame"](**conv, stringsAsFactors=False)


def _int_vector(ro, values) -> object:
    """Whole numbers as an R integer vector (R's integers stop at 2^31 - 1)."""
    values = np.asarray(values, dtype=np.int64)
    # compared both ways: np.abs of the most negative int64 is itself, negative
    outside = np.flatnonzero((values > 2**31 - 1) | (values < -(2**31 - 1)))
    if len(outside):
        raise ValueError(f"{values[outside[0]]}: past R's integers (|x| <= 2^31 - 1)")
    return ro.IntVector(values.tolist())


def neighbors_to_r(nb, sparse: bool = False):
    """The pairs of a :class:`~bioaccel.neighbors.Neighbors` table in R, as the R package's
    ``bioaccel_neighbors()`` returns them.

    ``sparse=False``: a ``data.frame`` of ``id1``, ``id2`` (``id1`` first in input order)
    and ``distance`` (integer for ``edit``, double otherwise), one row per pair, with
    attributes ``ids`` (every sequence, those without a pair too), ``model`` and
    ``max_distance``. ``sparse=True``: a symmetric ``Matrix::dsCMatrix`` (R's Matrix
    package), every sequence a row and a column named by its id, a pair's distance its entry
    (stored where it is 0: identical sequences).
    """
    ro = _ro()
    if not isinstance(sparse, bool):
        raise TypeError(f"sparse={sparse!r}: expected True or False")
    ids = ro.StrVector([str(x) for x in nb.ids])
    i = _int_vector(ro, np.asarray(nb.i) + 1)
    j = _int_vector(ro, np.asarray(nb.j) + 1)
    distance = np.asarray(nb.distance)
    x = (
        _int_vector(ro, distance)
        if np.issubdtype(distance.dtype, np.integer)
        else ro.FloatVector(distance.astype(np.float64))
    )
    if sparse:
        if not ro.r('isTRUE(requireNamespace("Matrix", quietly = TRUE))')[0]:
            raise ImportError(
                "neighbors_to_r(sparse=True) needs the R package Matrix "
                "(apt-get install r-cran-matrix or install.packages('Matrix'))"
            )
        make = ro.r(
            "function(i, j, x, ids) Matrix::sparseMatrix(i = i, j = j, x = as.double(x), "
            "dims = rep(length(ids), 2), dimnames = list(ids, ids), symmetric = TRUE)"
        )
        return make(i, j, x, ids)
    make = ro.r(
        "function(i, j, x, ids, model, d) structure(data.frame(id1 = ids[i], id2 = ids[j], "
        "distance = x, stringsAsFactors = FALSE), ids = ids, model = model, max_distance = d)"
    )
    return make(i, j, x, ids, str(nb.model), float(nb.max_distance))


def clusters_to_r(clusters):
    """Amplicon clusters (:func:`bioaccel.cluster`'s result) as an R ``data.frame``, one row
    per amplicon in input order: ``id``, ``cluster`` (1-based, in the OTU list's order),
    ``seed`` (the id of its OTU's seed), ``abundance``: what the R package's
    ``bioaccel_cluster()`` returns."""
    ro = _ro()
    rows = clusters.assignment_rows()
    return ro.r["data.frame"](
        id=ro.StrVector([r[0] for r in rows]),
        cluster=_int_vector(ro, [r[1] for r in rows]),
        seed=ro.StrVector([r[2] for r in rows]),
        abundance=ro.FloatVector([float(r[3]) for r in rows]),
        stringsAsFactors=False,
    )


def hclust(dm: DistanceMatrix, method: str = "average"):
    """R's ``hclust`` of the matrix (``average`` = UPGMA)."""
    ro = _ro()
    return ro.r["hclust"](to_r_dist(dm), method=method)


def cutree(hc, h: float) -> np.ndarray:
    """Cluster numbers (R's ``cutree`` at height ``h``), in the order of the labels."""
    ro = _ro()
    return _numbers(ro.r["cutree"](hc, h=h)).astype(np.int64)


def pcoa(dm: DistanceMatrix, k: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Principal coordinates (R's ``cmdscale``): points (n x k) and all eigenvalues."""
    ro = _ro()
    fit = ro.r["cmdscale"](to_r_dist(dm), k=k, eig=True)
    get = ro.r("function(x, name) x[[name]]")
    points = _numbers(get(fit, "points")).reshape(k, len(dm)).T
    return points, _numbers(get(fit, "eig"))


def plot_tree(
    tree: Tree, path: str, *, width: float = 7, height: float = 7, title: str | None = None
) -> None:
    """Draw the tree with ``ape::plot.phylo`` into a PNG or PDF file."""
    ro = _ro()
    _ape(ro)
    suffix = str(path).lower().rsplit(".", 1)[-1]
    if suffix not in ("png", "pdf"):
        raise ValueError(f"{path}: expected a .png or .pdf file name")
    draw = ro.r(
        "function(tr, path, w, h, kind, main) { if (kind == 'png') png(path, width = w, "
        "height = h, units = 'in', res = 150) else pdf(path, width = w, height = h); "
        "on.exit(dev.off()); plot.phylo(ladderize(tr), main = main, cex = 0.6) }"
    )
    draw(tree_to_phylo(tree), str(path), width, height, suffix, title or "")
