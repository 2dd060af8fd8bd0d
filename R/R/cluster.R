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
#' @param abundance for a character vector: the abundance of each sequence, by position, or
#'   by name when named (then exactly the sequences' names, each once); `NULL` reads them
#'   from `;size=N` in the names (those without one take `default_abundance` when given).
#'   A FASTA file carries them in its headers.
#' @param method `swarm`, `linkage` or `greedy`.
#' @param d the number of differences that links two amplicons (swarm, linkage; 1 to 255);
#'   `NULL`: the command line's default, 1. Only the settings given are passed on, and the
#'   command line refuses those that do not apply to the method (`d` with `greedy`).
#' @param fastidious,boundary swarm's `-f` (`TRUE` or `FALSE`) and `-b` (with `d = 1`).
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
#' @param ... further options of `bioaccel cluster`, e.g. `threads = 2`, `backend = "cpu"`,
#'   `default_abundance = 1` (swarm's `-a`: the abundance of records without one). The
#'   extra outputs `seeds`, `statistics_file` and `uclust_file` are written where given
#'   (for a FASTA file given as `amplicons` only); `output` and `assignments` are refused:
#'   this function writes and reads those itself.
#' @return a data.frame with one row per amplicon, in input order: `id`, `cluster`
#'   (1-based, in the order of bioaccel's OTU list), `seed` (the id of the OTU's seed),
#'   `abundance` (the abundance the clustering used: integer, or double for values past
#'   R's integers, 2^31 - 1).
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
  # only the settings given go to the command line, whose rules decide which apply to the
  # method ("-d does not apply to --method greedy"); a default is never sent in their place
  differences <- if (!missing(differences)) match.arg(differences)
  identity_definition <- if (!missing(identity_definition)) match.arg(identity_definition)
  given_annotation <- !missing(abundance_annotation)
  abundance_annotation <- match.arg(abundance_annotation)
  underscore <- abundance_annotation == "underscore"
  if (!is.null(edges) && (!is.character(edges) || !length(edges) || anyNA(edges))) {
    stop("edges: expected the paths of .npz neighbour tables (bioaccel neighbors -o pairs.npz)",
         call. = FALSE)
  }
  extra <- list(...)
  # the OTU list and the assignment table are this function's: it reads them back
  managed <- intersect(names(extra), c("output", "assignments"))
  if (length(managed)) {
    stop(sprintf(paste("%s: bioaccel_cluster() writes the %s itself and returns it as a data.frame;",
                       "leave %s out (seeds, statistics_file and uclust_file are written where given)"),
                 managed[1], c(output = "OTU list", assignments = "assignment table")[[managed[1]]],
                 managed[1]), call. = FALSE)
  }
  default <- extra[["default_abundance", exact = TRUE]]  # swarm's -a
  if (!is.null(default) && !(is.numeric(default) && length(default) == 1 && !is.na(default) &&
                             default >= 1 && default == round(default))) {
    stop(sprintf("default_abundance = %s: expected a positive whole number",
                 paste(deparse(default), collapse = "")), call. = FALSE)
  }
  dir <- .scratch()
  if (is.character(amplicons) && length(amplicons) == 1 && is.null(names(amplicons))) {
    if (!is.null(abundance)) {
      stop("abundance: a FASTA file carries its abundances as ;size=N in the headers", call. = FALSE)
    }
    path <- .input_file(amplicons, "amplicons", "a FASTA file of amplicons")
    input <- list(path = path, label = amplicons, ids = NULL, keys = NULL)
    sizes <- NULL  # read from the headers once the command has accepted the file
  } else {
    if (!is.character(amplicons)) {
      stop("amplicons: expected a named character vector of sequences or a FASTA path", call. = FALSE)
    }
    names0 <- .check_named(amplicons, "amplicons")
    # the outputs that name the records would name them by this function's placeholders
    named_out <- intersect(names(extra), c("seeds", "statistics_file", "uclust_file"))
    if (length(named_out)) {
      stop(sprintf(paste("%s: written only for a FASTA file given as amplicons (sequences given in R",
                         "are written under placeholder ids, which it would hold)"), named_out[1]),
           call. = FALSE)
    }
    from_names <- is.null(abundance)
    if (from_names) {
      split <- .split_size(names0, underscore)
      if (!is.null(default)) split$size[is.na(split$size)] <- default
      if (anyNA(split$size)) {
        stop(sprintf(paste("amplicons: '%s' has no %s annotation; give abundance = c(...)",
                           "or name the sequences %s"), names0[which(is.na(split$size))[1]],
                     if (underscore) "_N" else ";size=N", if (underscore) "id_N" else "id;size=N"),
             call. = FALSE)
      }
      ids <- split$ids
      abundance <- split$size
    } else {
      abundance <- .match_abundance(abundance, names0)
      ids <- names0
    }
    dup <- anyDuplicated(ids)
    if (dup) stop(sprintf("amplicons: the id '%s' is used twice", ids[dup]), call. = FALSE)
    sizes_text <- format(abundance, scientific = FALSE, trim = TRUE)
    # swarm breaks ties of abundance on the headers in byte order: the placeholders sort as
    # the headers of the same records in a file do (the names, or name;size=N where the
    # abundance is given apart), so the OTUs and their order are the file's
    raw <- if (from_names) names0 else paste0(names0, ";size=", sizes_text)
    rank <- integer(length(raw))
    rank[order(raw, method = "radix")] <- seq_along(raw)
    keys <- sprintf("bioaccel.amplicons%0*d.", nchar(length(raw)), rank)
    path <- file.path(dir, "amplicons.fasta")
    writeLines(paste0(">", keys, ";size=", sizes_text, "\n", unname(amplicons)), path, useBytes = TRUE)
    if (!is.null(edges)) {
      stop(paste("edges: a neighbour table names the records of the FASTA file it was computed",
                 "on; give that file as amplicons"), call. = FALSE)
    }
    input <- list(path = path, label = "amplicons", ids = ids, keys = keys)
    sizes <- setNames(as.numeric(abundance), keys)
    # sequences passed from R are written with ;size=N whatever their names held
    given_annotation <- FALSE
  }
  out <- file.path(dir, "assignments.tsv")
  opts <- list(method = method, max_distance = d, fastidious = fastidious, boundary = boundary,
               differences = differences, identity = identity,
               identity_definition = identity_definition,
               abundance_annotation = if (given_annotation) abundance_annotation)
  args <- c("cluster", shQuote(input$path), .cli_args(c(opts, extra), own = c(max_distance = "d")),
            if (!is.null(edges)) as.vector(rbind("--edges", shQuote(path.expand(edges)))),
            "-o", shQuote(file.path(dir, "otus.txt")), "--assignments", shQuote(out))
  .run(args, list(input))
  if (is.null(sizes)) {
    con <- gzfile(path)
    on.exit(close(con), add = TRUE)
    lines <- readLines(con, warn = FALSE)
    headers <- sub("^>([^ \t\r]*).*$", "\\1", lines[startsWith(lines, ">")])
    split <- .split_size(headers, underscore)
    # records without an annotation have the abundance the clustering gave them (-a)
    if (!is.null(default)) split$size[is.na(split$size)] <- as.numeric(default)
    sizes <- setNames(split$size, split$ids)
  }
  tab <- read.delim(out, quote = "", comment.char = "", na.strings = character(),
                    colClasses = c(id = "character", cluster = "integer", seed = "character"))
  tab$abundance <- .as_counts(unname(sizes[tab$id]))
  tab$id <- .real_ids(tab$id, input)
  tab$seed <- .real_ids(tab$seed, input)
  tab
}

# The abundance given beside sequences given in R, one per sequence in their order: a named
# vector by name (exactly the sequences' names, each once), an unnamed one by position.
.match_abundance <- function(abundance, names0) {
  an <- names(abundance)
  if (!is.null(an)) {
    bad <- which(is.na(an) | !an %in% names0 | duplicated(an))
    if (length(bad)) {
      k <- bad[1]
      stop(sprintf(paste("abundance: the name '%s' %s; a named abundance is matched by name, one",
                         "per sequence (or leave it unnamed: by position)"), an[k],
                   if (!is.na(an[k]) && an[k] %in% an[seq_len(k - 1)]) "is used twice"
                   else "is not one of the sequences' names"), call. = FALSE)
    }
    lacking <- setdiff(names0, an)
    if (length(lacking)) {
      stop(sprintf(paste("abundance: no value named '%s'; a named abundance is matched by name,",
                         "one per sequence (or leave it unnamed: by position)"), lacking[1]),
           call. = FALSE)
    }
    abundance <- abundance[names0]
  }
  if (!is.numeric(abundance) || length(abundance) != length(names0) || anyNA(abundance) ||
      any(abundance < 1) || any(abundance != round(abundance))) {
    stop(sprintf("abundance: expected %d positive whole numbers, one per sequence",
                 length(names0)), call. = FALSE)
  }
  unname(abundance)
}

# Abundances as integers where they fit R's integers (doubles past 2^31 - 1, as swarm's up
# to 2^63 - 1 can be).
.as_counts <- function(x) {
  if (all(is.na(x) | abs(x) <= .Machine$integer.max)) as.integer(x) else x
}
