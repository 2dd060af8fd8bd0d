# The pairs within a threshold with bioaccel from R, through its command line.

#' Every pair of sequences within a threshold, with bioaccel (never all pairs)
#'
#' Runs `bioaccel neighbors` and reads its edge table: every pair whose distance is at most
#' `max_distance`, found without computing all pairs (a partition filter, then the exact
#' distance of each candidate), so it scales to the 10^5-10^6 unique amplicons of a
#' sequencing run where [bioaccel_distance()]'s all-vs-all matrix does not.
#'
#' @param seqs sequences as for [bioaccel_distance()]: a named character vector, an ape
#'   `DNAbin`/`AAbin`, a Biostrings `XStringSet` or `MultipleAlignment`, or the path of a
#'   sequence file (FASTA, plain or gzip, FASTQ, ...). Names given in R lose their abundance
#'   annotation (`;size=N`, or `_N` with `abundance_annotation = "underscore"`) as a file's
#'   headers do: the same records give the same table either way.
#' @param max_distance the threshold: a whole number of edits for `model = "edit"` (default
#'   1; 0 finds identical sequences), a distance in \[0, 1\] for `"mash"` and `"jaccard"`
#'   (required there).
#' @param model `edit` (global Levenshtein distance, unit costs; N and IUPAC codes are
#'   letters equal only to themselves), `mash` (MinHash distance of k-mer sketches) or
#'   `jaccard` (1 - the exact k-mer Jaccard index).
#' @param sparse `FALSE` for the table of pairs; `TRUE` for a symmetric sparse matrix of the
#'   `Matrix` package (every sequence a row and a column, named by its id; a pair's distance
#'   as its entry, stored even where it is 0: identical sequences).
#' @param ... further options of `bioaccel neighbors`, named as there with `_` for `-`: e.g.
#'   `threads = 2`, `backend = "cpu"`, `k = 15`, `sketch_size = 1000`,
#'   `abundance_annotation = "underscore"`.
#' @return `sparse = FALSE`: a data.frame with one row per pair, `id1`, `id2` (`id1` before
#'   `id2` in input order, ids without a `;size=N` annotation) and `distance` (integer for
#'   `edit`, double otherwise), with attributes `ids` (every sequence id, in input order,
#'   those without a pair too), `model` and `max_distance`; no pair within the threshold
#'   gives 0 rows. `sparse = TRUE`: a `Matrix::dsCMatrix` of `length(ids)` rows and columns.
#' @export
#' @examples
#' \dontrun{
#' seqs <- c(a = "ACGTACGTACGT", b = "ACGTACGTACGA", c = "ACGTTCGTACGA", d = "GGGGCCCCAAAA")
#' bioaccel_neighbors(seqs, max_distance = 2)
#' pairs <- bioaccel_neighbors("amplicons.fa.gz", max_distance = 2, threads = 4)
#' # a graph of the pairs, isolated sequences included
#' g <- igraph::graph_from_data_frame(pairs, directed = FALSE,
#'                                    vertices = data.frame(name = attr(pairs, "ids")))
#' }
bioaccel_neighbors <- function(seqs, max_distance = NULL, model = c("edit", "mash", "jaccard"),
                               sparse = FALSE, ...) {
  model <- match.arg(model)
  if ("d" %in% names(list(...))) {
    stop("d: bioaccel_neighbors() takes the threshold as max_distance = ...", call. = FALSE)
  }
  if (!is.logical(sparse) || length(sparse) != 1 || is.na(sparse)) {
    stop("sparse: expected TRUE or FALSE", call. = FALSE)
  }
  if (sparse && !requireNamespace("Matrix", quietly = TRUE)) {
    stop("sparse = TRUE needs the Matrix package (install.packages(\"Matrix\"))", call. = FALSE)
  }
  if (model != "edit" && is.null(max_distance)) {
    stop(sprintf("max_distance: required for model = \"%s\" (a distance in [0, 1])", model),
         call. = FALSE)
  }
  # the annotation the ids lose: sequences given in R lose it as a file's records do
  annotation <- list(...)[["abundance_annotation", exact = TRUE]]
  annotation <- if (identical(annotation, "underscore")) "underscore" else "size"
  dir <- .scratch()
  input <- .seq_input(seqs, dir, annotation = annotation)
  out <- file.path(dir, "pairs.npz")
  .run(c("neighbors", shQuote(input$path), "-m", model,
         .cli_args(c(list(max_distance = max_distance), list(...))), "-o", shQuote(out)),
       list(input))
  arrays <- .read_npz(out, file.path(dir, "arrays"))
  ids <- .real_ids(as.vector(arrays$ids), input)
  i <- as.vector(arrays$i) + 1
  j <- as.vector(arrays$j) + 1
  distance <- as.vector(arrays$distance)
  if (sparse) {
    return(Matrix::sparseMatrix(i = i, j = j, x = as.double(distance), dims = rep(length(ids), 2),
                                dimnames = list(ids, ids), symmetric = TRUE))
  }
  structure(data.frame(id1 = ids[i], id2 = ids[j], distance = distance, stringsAsFactors = FALSE),
            ids = ids, model = as.vector(arrays$model), max_distance = as.vector(arrays$max_distance))
}
