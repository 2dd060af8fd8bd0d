# Amplicon clustering with bioaccel from R, through its command line.

# The abundance annotation of FASTA headers as swarm and vsearch write it: the first
# `size=N` at the start or after `;`, followed by `;` or the end. Returns the ids (the
# header without the annotation, as bioaccel's assignments table names them) and sizes
# (NA where there is none). underscore: swarm's default annotation instead, a `_N` suffix.
.split_size <- function(headers, underscore = FALSE) {
  if (underscore) {
    hit <- grepl("_[0-9]+$", headers, perl = TRUE)
    size <- rep(NA_real_, length(headers))
    size[hit] <- as.numeric(sub("^.*_([0-9]+)$", "\\1", headers[hit], perl = TRUE))
    ids <- headers
    ids[hit] <- sub("_[0-9]+$", "", headers[hit], perl = TRUE)
    return(list(ids = ids, size = size))
  }
  m <- regexpr("(^|;)size=[0-9]+(;|$)", headers, perl = TRUE)
  size <- rep(NA_real_, length(headers))
  ids <- headers
  hit <- m > 0
  if (any(hit)) {
    start <- m[hit]
    len <- attr(m, "match.length")[hit]
    h <- headers[hit]
    token <- substr(h, start, start + len - 1L)
    size[hit] <- as.numeric(gsub("[^0-9]", "", token))
    head <- substr(h, 1L, start - 1L)
    tail <- substr(h, start + len, nchar(h))
    lead <- startsWith(token, ";")
    trail <- endsWith(token, ";")
    ids[hit] <- ifelse(lead & trail & nzchar(tail), paste0(head, ";", tail), paste0(head, tail))
  }
  list(ids = ids, size = size)
}

#' Cluster amplicons with bioaccel: swarm, single linkage or greedy centroids
#'
#' Runs `bioaccel cluster` on dereplicated amplicons and reads its assignment table.
#' `method = "swarm"` grows OTUs from abundance peaks as swarm 3 does (with OTU breaking;
#' `fastidious = TRUE` is swarm's `-f`); `"linkage"` gives the connected components of the
#' pairs within `d`; `"greedy"` clusters around centroids in decreasing abundance at
#' `identity` (Levenshtein distance over the longer length; with
#' `identity_definition = "shorter"`, edits aligning the shorter sequence within the longer
#' over the shorter length: overhangs free, as cd-hit-est and vsearch's terminal gaps).
#'
#' @param amplicons a named character vector of dereplicated sequences (names are the ids),
#'   or the path of a FASTA file whose headers carry `;size=N` abundances.
#' @param abundance for a character vector: the abundance of each sequence; `NULL` reads
#'   them from `;size=N` in the names.
#' @param method `swarm`, `linkage` or `greedy`.
#' @param d the number of differences that links two amplicons (swarm, linkage; 1 to 255).
#' @param fastidious,boundary swarm's `-f` and `-b` (with `d = 1`).
#' @param differences `edit` (Levenshtein) or `swarm` (the differences of swarm's optimal
#'   alignment, for parity with swarm at `d >= 2`).
#' @param identity the greedy method's threshold (default 0.97).
#' @param identity_definition greedy: `longer` (the Levenshtein distance over the longer
#'   length: overhangs count) or `shorter` (the edits aligning the shorter sequence within the
#'   longer, over the shorter length: overhangs free).
#' @param abundance_annotation how the headers (or names) carry abundances: `"size"`
#'   (`id;size=N`, as vsearch and `swarm -z` write them) or `"underscore"` (`id_N`, swarm's
#'   default).
#' @param edges the neighbour table of `bioaccel neighbors` on the same FASTA file (an `.npz`
#'   written with `-d D`, `D >= d`), or all its `--shard k/N` files: swarm and linkage then
#'   grow on those pairs instead of searching for them (the same OTUs). Only with a FASTA
#'   path: a table names its file's records, which sequences passed from R are not.
#' @param ... further options of `bioaccel cluster`, e.g. `threads = 2`, `backend = "cpu"`.
#' @return a data.frame with one row per amplicon, in input order: `id`, `cluster`
#'   (1-based, in the order of bioaccel's OTU list), `seed` (the id of the OTU's seed),
#'   `abundance`.
#' @export
#' @examples
#' \dontrun{
#' seqs <- c(a = "ACGTACGTACGTAAAA", b = "ACGTACGTACGTAAAT", c = "GGGGGGGGCCCCAAAA")
#' bioaccel_cluster(seqs, abundance = c(10, 2, 5))
#' }
bioaccel_cluster <- function(amplicons, abundance = NULL, method = c("swarm", "linkage", "greedy"),
                             d = NULL, fastidious = FALSE, boundary = NULL,
                             differences = c("edit", "swarm"), identity = NULL, edges = NULL,
                             abundance_annotation = c("size", "underscore"),
                             identity_definition = c("longer", "shorter"), ...) {
  method <- match.arg(method)
  differences <- match.arg(differences)
  identity_definition <- match.arg(identity_definition)
  abundance_annotation <- match.arg(abundance_annotation)
  underscore <- abundance_annotation == "underscore"
  if (!is.null(edges) && (!is.character(edges) || !length(edges) || anyNA(edges))) {
    stop("edges: expected the paths of .npz neighbour tables (bioaccel neighbors -o pairs.npz)",
         call. = FALSE)
  }
  dir <- .scratch()
  if (is.character(amplicons) && length(amplicons) == 1 && is.null(names(amplicons))) {
    if (!is.null(abundance)) {
      stop("abundance: a FASTA file carries its abundances as ;size=N in the headers", call. = FALSE)
    }
    path <- path.expand(amplicons)
    if (!file.exists(path)) {
      stop(sprintf(paste("amplicons: no such file %s (a single unnamed string is taken as a file",
                         "path; give sequences as a named character vector)"), amplicons), call. = FALSE)
    }
    input <- list(path = path, label = amplicons, ids = NULL, keys = NULL)
    con <- gzfile(path)
    lines <- readLines(con, warn = FALSE)
    close(con)
    headers <- sub("^>([^ \t\r]*).*$", "\\1", lines[startsWith(lines, ">")])
    split <- .split_size(headers, underscore)
    sizes <- setNames(split$size, split$ids)
  } else {
    if (!is.character(amplicons)) {
      stop("amplicons: expected a named character vector of sequences or a FASTA path", call. = FALSE)
    }
    names0 <- names(amplicons)
    if (is.null(names0) || any(is.na(names0) | !nzchar(names0))) {
      stop("amplicons: every sequence needs a name (its id)", call. = FALSE)
    }
    if (is.null(abundance)) {
      split <- .split_size(names0, underscore)
      if (anyNA(split$size)) {
        stop(sprintf(paste("amplicons: '%s' has no %s annotation; give abundance = c(...)",
                           "or name the sequences %s"), names0[which(is.na(split$size))[1]],
                     if (underscore) "_N" else ";size=N", if (underscore) "id_N" else "id;size=N"),
             call. = FALSE)
      }
      ids <- split$ids
      abundance <- split$size
    } else {
      if (length(abundance) != length(amplicons) || anyNA(abundance) || any(abundance < 1) ||
          any(abundance != round(abundance))) {
        stop(sprintf("abundance: expected %d positive whole numbers, one per sequence",
                     length(amplicons)), call. = FALSE)
      }
      ids <- names0
    }
    dup <- anyDuplicated(ids)
    if (dup) stop(sprintf("amplicons: the id '%s' is used twice", ids[dup]), call. = FALSE)
    keys <- sprintf("bioaccel.amplicons%d.", seq_along(ids))
    path <- file.path(dir, "amplicons.fasta")
    writeLines(paste0(">", keys, ";size=", format(abundance, scientific = FALSE, trim = TRUE),
                      "\n", unname(amplicons)), path, useBytes = TRUE)
    if (!is.null(edges)) {
      stop(paste("edges: a neighbour table names the records of the FASTA file it was computed",
                 "on; give that file as amplicons"), call. = FALSE)
    }
    input <- list(path = path, label = "amplicons", ids = ids, keys = keys)
    sizes <- setNames(as.numeric(abundance), keys)
  }
  out <- file.path(dir, "assignments.tsv")
  opts <- list(method = method, differences = differences, identity = identity)
  if (identity_definition != "longer") opts$identity_definition <- identity_definition
  if (method != "greedy") opts$max_distance <- if (is.null(d)) 1 else d
  if (isTRUE(fastidious)) opts$fastidious <- TRUE
  # sequences passed from R are written with ;size=N whatever their names held
  if (underscore && is.null(input$ids)) opts$abundance_annotation <- "underscore"
  opts$boundary <- boundary
  args <- c("cluster", shQuote(input$path), .cli_args(c(opts, list(...)), own = c(max_distance = "d")),
            if (!is.null(edges)) as.vector(rbind("--edges", shQuote(path.expand(edges)))),
            "-o", shQuote(file.path(dir, "otus.txt")), "--assignments", shQuote(out))
  .run(args, list(input))
  tab <- read.delim(out, quote = "", comment.char = "", na.strings = character(),
                    colClasses = c(id = "character", cluster = "integer", seed = "character"))
  tab$abundance <- unname(sizes[tab$id])
  tab$id <- .real_ids(tab$id, input)
  tab$seed <- .real_ids(tab$seed, input)
  tab
}
