# Computing with bioaccel from R, through its command line.

#' The bioaccel executable
#'
#' The option `bioaccel.command`, else the `BIOACCEL` environment variable, else
#' `bioaccel` on the `PATH`.
#'
#' @return the path of the executable.
#' @export
#' @examples
#' \dontrun{
#' bioaccel_command()
#' options(bioaccel.command = "/opt/venv/bin/bioaccel")
#' }
bioaccel_command <- function() {
  cmd <- getOption("bioaccel.command", Sys.getenv("BIOACCEL", "bioaccel"))
  path <- Sys.which(cmd)
  if (!nzchar(path) && !file.exists(cmd)) {
    stop(sprintf("the bioaccel command (%s) is not found; install it with `pip install bioaccel` ",
                 cmd), "or set options(bioaccel.command = '/path/to/bioaccel')", call. = FALSE)
  }
  if (nzchar(path)) unname(path) else cmd
}

# Runs `bioaccel ARGS`. On failure the message names what the user gave, not what this
# package made of it: `inputs` are the sequence files written by .seq_input, whose
# temporary paths and placeholder ids are put back as the argument name and the real ids.
.run <- function(args, inputs = list()) {
  err <- tempfile()
  # R puts its own library directories on LD_LIBRARY_PATH; a Python started with them can
  # load another installation's libpython and miss bioaccel. The child gets the variable
  # as it was before R started when R recorded it, else none.
  saved <- Sys.getenv("LD_LIBRARY_PATH", unset = NA)
  before <- Sys.getenv("BIOACCEL_LD_LIBRARY_PATH", unset = NA)
  if (is.na(before)) Sys.unsetenv("LD_LIBRARY_PATH") else Sys.setenv(LD_LIBRARY_PATH = before)
  on.exit({
    unlink(err)
    if (is.na(saved)) Sys.unsetenv("LD_LIBRARY_PATH") else Sys.setenv(LD_LIBRARY_PATH = saved)
  })
  status <- system2(bioaccel_command(), args, stdout = FALSE, stderr = err)
  if (!identical(status, 0L)) {
    msg <- paste(readLines(err, warn = FALSE), collapse = "\n")
    msg <- sub("^bioaccel: error: ", "", msg)
    for (input in inputs) msg <- .user_terms(msg, input)
    # what is left of this package's scratch folders: the file's own name
    msg <- gsub(file.path(tempdir(), "bioaccel[0-9a-f]+", ""), "", msg)
    stop(sprintf("bioaccel %s failed (status %s): %s", args[1], status, msg), call. = FALSE)
  }
  invisible(TRUE)
}

# --- command-line arguments ----------------------------------------------------------

# One option value as command-line text: whole numbers without scientific notation
# (1e5 -> "100000"), other numbers with enough digits to read back exactly, vectors
# joined by commas (devices = c(0, 2) -> "0,2", matrix = c(2, -3) -> "2,-3").
.cli_value <- function(name, v) {
  if (is.factor(v)) v <- as.character(v)
  if (!length(v) || anyNA(v) || !(is.numeric(v) || is.character(v))) {
    stop(sprintf("%s = %s: expected a number, a string or TRUE/FALSE", name,
                 paste(deparse(v), collapse = "")), call. = FALSE)
  }
  if (is.numeric(v)) {
    if (any(!is.finite(v))) stop(sprintf("%s = %s: expected finite numbers", name,
                                         paste(v, collapse = ",")), call. = FALSE)
    v <- vapply(v, function(x) {
      if (x == round(x) && abs(x) < 2^53) return(format(x, scientific = FALSE, trim = TRUE))
      for (digits in 15:17) {
        text <- format(x, scientific = FALSE, trim = TRUE, digits = digits)
        if (as.numeric(text) == x) break
      }
      text
    }, "")
  }
  paste(v, collapse = ",")
}

#' Command-line arguments from R arguments
#'
#' `pairwise_deletion = TRUE` becomes `--pairwise-deletion`, `FALSE` nothing, `NULL` is
#' left out, `k` becomes `-k`, numbers are written without scientific notation.
#'
#' @param opts a named list of option values.
#' @param own for options the calling function sets under another argument name, that name
#'   (`c(max_distance = "d")`): an option given twice is refused naming it, and a bad value
#'   is refused naming the function's argument.
#' @return a character vector of (shell-quoted) arguments.
#' @noRd
.cli_args <- function(opts, own = NULL) {
  # the options of the command line that are flags (no value): TRUE gives the flag alone;
  # any other option given TRUE/FALSE would take the next argument as its value
  flags <- c("pairwise_deletion", "float64", "restart", "ungap", "traceback", "clamp_negative",
             "refine", "no_refine", "fastidious", "usearch_abundance", "low_memory",
             "keep_length", "fragments", "merge")
  if (!length(opts)) return(character())
  keys <- names(opts)
  if (is.null(keys) || any(!nzchar(keys))) {
    stop("options for bioaccel must be named, e.g. backend = \"cpu\"", call. = FALSE)
  }
  # an option in ... that the function already sets from its own arguments (max_distance
  # beside bioaccel_cluster's d): the command would take one of the two, silently. `own`
  # names the function's argument for an option where the two names differ. Checked before
  # the NULLs are dropped: the function's argument left at NULL still owns the option.
  twice <- keys[duplicated(keys)]
  if (length(twice)) {
    key <- twice[1]
    arg <- if (key %in% names(own)) own[[key]] else key
    stop(sprintf(paste("%s is given twice: the function sets it from its own argument %s",
                       "and ... gives it again; give it once, as %s = ..."), key, arg, arg),
         call. = FALSE)
  }
  opts <- opts[!vapply(opts, is.null, TRUE)]
  if (!length(opts)) return(character())
  keys <- names(opts)
  args <- lapply(keys, function(key) {
    v <- opts[[key]]
    name <- if (key %in% names(own)) own[[key]] else key  # the user's name for it
    shown <- paste(deparse(v), collapse = "")
    flag <- if (key == "k") "-k" else paste0("--", gsub("_", "-", key, fixed = TRUE))
    if (key %in% flags) {
      if (!is.logical(v) || length(v) != 1 || is.na(v)) {
        stop(sprintf("%s = %s: expected TRUE or FALSE", name, shown), call. = FALSE)
      }
      return(if (v) flag else character())
    }
    if (is.logical(v) && anyNA(v)) {
      stop(sprintf("%s = %s: expected a value, not NA", name, shown), call. = FALSE)
    }
    if (is.logical(v)) {
      stop(sprintf("%s = %s: expected a value, not TRUE/FALSE%s", name, shown,
                   if (key == "devices") " (e.g. devices = \"all\" or devices = c(0, 2))" else ""),
           call. = FALSE)
    }
    c(flag, shQuote(.cli_value(name, v)))
  })
  unlist(args)
}

# --- sequences ---------------------------------------------------------------------

# Sequences as named strings: a character vector, ape's DNAbin / AAbin (a matrix of an
# alignment or a list of sequences), or Biostrings' XStringSet (DNAStringSet, RNAStringSet,
# AAStringSet) / MultipleAlignment (DNAMultipleAlignment, ...; a masked one is refused, not
# cut silently). Biostrings is not needed unless such an object is given (its methods come
# with the object).
.seq_strings <- function(seqs, what) {
  if (methods::is(seqs, "MultipleAlignment")) {
    masked <- c(rows = length(Biostrings::rowmask(seqs)), columns = length(Biostrings::colmask(seqs)))
    if (any(masked > 0)) {
      stop(sprintf(paste("%s: the %s has masked %s; unmask it (Biostrings::unmasked(x)) or drop",
                         "them first: masked sequences are not left out silently"),
                   what, class(seqs)[1], paste(names(masked)[masked > 0], collapse = " and ")),
           call. = FALSE)
    }
    seqs <- Biostrings::unmasked(seqs)  # the XStringSet of the rows, names kept
  }
  if (methods::is(seqs, "XStringSet")) {
    if (!length(seqs)) stop(sprintf("%s: the %s holds no sequences", what, class(seqs)[1]), call. = FALSE)
    return(stats::setNames(as.character(seqs), names(seqs)))
  }
  if (inherits(seqs, c("DNAbin", "AAbin"))) {
    chars <- as.character(seqs)
    if (is.matrix(chars)) {
      strings <- apply(chars, 1, paste, collapse = "")
      names(strings) <- rownames(chars)
    } else if (is.list(chars)) {
      strings <- vapply(chars, paste, "", collapse = "")
    } else {
      stop(sprintf("%s: a single unnamed %s sequence; give a named list or matrix of sequences",
                   what, class(seqs)[1]), call. = FALSE)
    }
    if (!length(strings)) stop(sprintf("%s: the %s holds no sequences", what, class(seqs)[1]), call. = FALSE)
    return(strings)
  }
  if (!is.character(seqs)) {
    stop(sprintf(paste("%s: got an object of class %s; expected a named character vector of",
                       "sequences, an ape DNAbin or AAbin, a Biostrings XStringSet or",
                       "MultipleAlignment, or a sequence file path"),
                 what, paste(class(seqs), collapse = "/")), call. = FALSE)
  }
  seqs
}

# The path of a sequence file given as one unnamed string, checked: it exists and is a file
# (R reading a directory leaks a connection and says only "cannot open").
.input_file <- function(x, what, expected = "a sequence file") {
  if (is.na(x)) {
    stop(sprintf("%s: NA; expected the path of %s or a named character vector of sequences",
                 what, expected), call. = FALSE)
  }
  path <- path.expand(x)
  if (!file.exists(path)) {
    stop(sprintf(paste("%s: no such file %s (a single unnamed string is taken as a file path;",
                       "give sequences as a named character vector)"), what, x), call. = FALSE)
  }
  if (dir.exists(path)) stop(sprintf("%s: %s is a directory; expected %s", what, x, expected), call. = FALSE)
  path
}

# Sequences given in R as named strings: none, unnamed, unnamed or NA ones are refused
# naming the first. Several unnamed strings that are all files are file paths, not sequences.
# plain: the strings are what the user gave (not made from an ape or Biostrings object).
.check_named <- function(strings, what, plain = TRUE) {
  if (!length(strings)) {
    stop(sprintf("%s: the input is empty (no sequences and no file path)", what), call. = FALSE)
  }
  ids <- names(strings)
  if (is.null(ids)) {
    # file.exists expands ~ itself (path.expand warns on a long sequence, holding it whole)
    if (all(!is.na(strings) & file.exists(strings))) {
      stop(sprintf("%s: %d file paths; give one file (a single string)", what, length(strings)),
           call. = FALSE)
    }
    if (plain) {
      stop(sprintf(paste("%s: %d unnamed strings; expected one file path (a single string) or",
                         "sequences named by their ids, e.g. c(a = \"ACGT\", b = \"ACCT\")"),
                   what, length(strings)), call. = FALSE)
    }
    stop(sprintf("%s: the sequences have no names; name them with their ids, e.g. c(a = \"ACGT\", b = \"ACCT\")",
                 what), call. = FALSE)
  }
  bad <- which(is.na(ids) | !nzchar(ids))
  if (length(bad)) stop(sprintf("%s: sequence %d has no name", what, bad[1]), call. = FALSE)
  if (anyNA(strings)) stop(sprintf("%s: sequence '%s' is NA", what, ids[which(is.na(strings))[1]]), call. = FALSE)
  invisible(ids)
}

# The ids of `bioaccel neighbors`' table for the names of sequences given in R, as the
# command line makes them from a file's headers (bioaccel.neighbors.display_ids): the first
# `;size=N` followed by `;` or the end removed (`a;size=3;x=1` -> `a;x=1`), or with
# annotation "underscore" a trailing `_N` (N >= 1; a name without one is left whole: the
# command line refuses it). suffix: the annotation, written after the placeholder id so
# that the command line checks and removes it as it does in a file.
.strip_annotation <- function(names, annotation) {
  suffix <- rep("", length(names))
  ids <- names
  if (annotation == "underscore") {
    hit <- grepl("^(.+)_0*[1-9][0-9]*$", names, perl = TRUE)
    ids[hit] <- sub("^(.+)(_0*[1-9][0-9]*)$", "\\1", names[hit], perl = TRUE)
    suffix[hit] <- sub("^(.+)(_0*[1-9][0-9]*)$", "\\2", names[hit], perl = TRUE)
    return(list(ids = ids, suffix = suffix))
  }
  m <- regexpr(";size=[0-9]+(;|$)", names, perl = TRUE)
  hit <- m > 0
  if (any(hit)) {
    start <- m[hit]
    end <- start + attr(m, "match.length")[hit] - 1L
    h <- names[hit]
    token <- substr(h, start, end)
    tail <- substr(h, end + 1L, nchar(h))
    ids[hit] <- paste0(substr(h, 1L, start - 1L), ifelse(nzchar(tail), ";", ""), tail)
    suffix[hit] <- sub(";$", "", token)
  }
  list(ids = ids, suffix = suffix)
}

# The sequences as a FASTA file for the command line. Returns list(path, label, ids, keys):
# a sequence file given by path is used as it is (ids from the file); sequences given in R
# are written under placeholder ids (so that names with spaces or any other character
# survive the FASTA header) that are put back on the results. annotation ("size" or
# "underscore", for `bioaccel neighbors`, whose ids lose their abundance annotation): the
# ids put back are the names without it, and its annotation follows each placeholder in
# the file, so that the sequences given in R give what the same records in a file give.
.seq_input <- function(seqs, dir, what = "seqs", annotation = NULL) {
  if (is.character(seqs) && length(seqs) == 1 && is.null(names(seqs))) {
    return(list(path = .input_file(seqs, what), label = seqs, ids = NULL, keys = NULL))
  }
  strings <- .seq_strings(seqs, what)
  ids <- unname(.check_named(strings, what, plain = is.character(seqs)))
  dup <- anyDuplicated(ids)
  if (dup) {
    stop(sprintf("%s: sequence name '%s' is used twice (sequences %d and %d); names must be unique",
                 what, ids[dup], match(ids[dup], ids), dup), call. = FALSE)
  }
  suffix <- ""
  if (!is.null(annotation)) {
    split <- .strip_annotation(ids, annotation)
    dup <- anyDuplicated(split$ids)
    if (dup) {
      first <- match(split$ids[dup], split$ids)
      stop(sprintf(paste("%s: records '%s' (record %d) and '%s' (record %d) are both '%s' without",
                         "their abundance annotation; dereplicate the sequences first"),
                   what, ids[first], first, ids[dup], dup, split$ids[dup]), call. = FALSE)
    }
    ids <- split$ids
    suffix <- split$suffix
  }
  keys <- sprintf("bioaccel.%s%d.", what, seq_along(ids))
  path <- file.path(dir, paste0(what, ".fasta"))
  writeLines(paste0(">", keys, suffix, "\n", unname(strings)), path, useBytes = TRUE)
  list(path = path, label = what, ids = ids, keys = keys)
}

# Real ids for the ids of a result.
.real_ids <- function(x, input) {
  if (is.null(input$keys)) return(x)
  hit <- match(x, input$keys)
  x[!is.na(hit)] <- input$ids[hit[!is.na(hit)]]
  x
}

# A message of the command line in the user's terms: the temporary file as the argument
# name, placeholder ids as the real ids.
.user_terms <- function(msg, input) {
  msg <- gsub(input$path, input$label, msg, fixed = TRUE)
  if (is.null(input$keys)) return(msg)
  pattern <- sprintf("bioaccel\\.%s[0-9]+\\.", input$label)
  m <- gregexpr(pattern, msg)
  regmatches(msg, m) <- list(.real_ids(regmatches(msg, m)[[1]], input))
  msg
}

# A temporary directory, removed when the calling function exits.
.scratch <- function(env = parent.frame()) {
  dir <- tempfile("bioaccel")
  dir.create(dir)
  do.call(on.exit, list(substitute(unlink(d, recursive = TRUE), list(d = dir)), add = TRUE),
          envir = env)
  dir
}

#' All-vs-all distances with bioaccel
#'
#' Runs `bioaccel distance` and reads its result.
#'
#' @param seqs a named character vector of sequences (names are the ids; any character,
#'   spaces included), an ape `DNAbin` or `AAbin` (an alignment matrix or a list), a
#'   Biostrings `DNAStringSet`/`RNAStringSet`/`AAStringSet` or `MultipleAlignment`
#'   (`DNAMultipleAlignment`, ...), or the path of a FASTA, FASTQ, Clustal, PHYLIP, Stockholm
#'   or NEXUS file.
#' @param model `raw`, `jc69`, `k80`, `f81`, `tn93`, `logdet` (aligned DNA); `identity`,
#'   `scoredist`, `edit`, `kmer`, `jaccard`, `mash` (unaligned).
#' @param pairwise_deletion drop missing sites per pair rather than for all pairs.
#' @param devices spread the work over these GPUs: `"all"` or ids such as `c(0, 2)`
#'   (`NULL`: none).
#' @param float64 keep the distances as double precision (else they pass through single
#'   precision on the way to R).
#' @param ... further options of `bioaccel distance`, named as there with `_` for `-`:
#'   e.g. `backend = "cpu"`, `threads = 4`, `k = 15`, `sketch_size = 1e5`, `seed = 7`,
#'   `matrix = "BLOSUM62"`. `TRUE` gives a flag, `FALSE` leaves it out.
#' @return a `dist` labelled with the sequence ids.
#' @export
#' @examples
#' \dontrun{
#' bioaccel_distance(c(a = "ACGTACGT", b = "ACGTTCGT", c = "ACGAACGA"), "k80")
#' data(woodmouse, package = "ape")
#' bioaccel_distance(woodmouse, "tn93", pairwise_deletion = TRUE)
#' }
bioaccel_distance <- function(seqs, model = "k80", pairwise_deletion = FALSE, devices = NULL,
                              float64 = TRUE, ...) {
  dir <- .scratch()
  input <- .seq_input(seqs, dir)
  # the streamed .cdist output does not take --devices; the in-memory .npy output does
  out <- file.path(dir, if (is.null(devices)) "d.cdist" else "d.npy")
  .run(c("distance", shQuote(input$path), "-m", shQuote(model),
         .cli_args(c(list(pairwise_deletion = pairwise_deletion, devices = devices,
                          float64 = float64 && is.null(devices)), list(...))),
         "-o", shQuote(out)), list(input))
  d <- if (is.null(devices)) read_bioaccel_dist(out) else .read_npy_dist(out)
  attr(d, "Labels") <- .real_ids(attr(d, "Labels"), input)
  d
}

#' Pairwise alignments with bioaccel: scores or the alignments themselves
#'
#' Runs `bioaccel align`: every query against every target (or all pairs of queries).
#'
#' @param queries,targets sequences as for [bioaccel_distance()]; `targets = NULL` aligns
#'   the queries with each other.
#' @param mode `global`, `local` or `semiglobal`.
#' @param matrix a substitution matrix name (`BLOSUM62`, `PAM250`, ...) or match and
#'   mismatch scores such as `c(2, -3)`; `NULL` for the default of the alphabet.
#' @param gap_open,gap_extend gap penalties: a gap of length L costs
#'   `gap_open + (L - 1) * gap_extend`, with `gap_open >= gap_extend`.
#' @param traceback `FALSE` for the score matrix, `TRUE` for the alignments.
#' @param ... further options of `bioaccel align`, e.g. `backend = "cpu"`, `threads = 2`.
#' @return `traceback = FALSE`: an integer matrix of scores, queries in rows, targets in
#'   columns. `traceback = TRUE`: a data.frame with one row per pair: `query`, `target`,
#'   `score`, `query_start`, `query_end`, `target_start`, `target_end` (0-based, end
#'   exclusive), `cigar`, `identity`, `aligned_length`, `query_aligned`, `target_aligned`.
#' @export
#' @examples
#' \dontrun{
#' bioaccel_align_scores(c(q = "HEAGAWGHEE"), c(t = "PAWHEAE"), matrix = "BLOSUM50",
#'                       gap_open = 8, gap_extend = 8)
#' bioaccel_align_scores(c(q = "HEAGAWGHEE"), c(t = "PAWHEAE"), matrix = "BLOSUM50",
#'                       gap_open = 8, gap_extend = 8, traceback = TRUE)
#' }
bioaccel_align_scores <- function(queries, targets = NULL, mode = "global", matrix = NULL,
                                  gap_open = NULL, gap_extend = NULL, traceback = FALSE, ...) {
  dir <- .scratch()
  q <- .seq_input(queries, dir, "queries")
  inputs <- list(q)
  args <- c("align", shQuote(q$path))
  if (!is.null(targets)) {
    t <- .seq_input(targets, dir, "targets")
    inputs <- c(inputs, list(t))
    args <- c(args, shQuote(t$path))
  } else {
    t <- q
  }
  out <- file.path(dir, "scores.tsv")
  args <- c(args, "--mode", shQuote(mode),
            .cli_args(c(list(matrix = matrix, gap_open = gap_open, gap_extend = gap_extend,
                             traceback = traceback), list(...))), "-o", shQuote(out))
  .run(args, inputs)
  if (isTRUE(traceback)) {
    tab <- read.delim(out, quote = "", comment.char = "", na.strings = character(),
                      colClasses = c(query = "character", target = "character",
                                     cigar = "character", query_aligned = "character",
                                     target_aligned = "character"))
    tab$query <- .real_ids(tab$query, q)
    tab$target <- .real_ids(tab$target, t)
    return(tab)
  }
  tab <- read.delim(out, row.names = 1, check.names = FALSE, quote = "", comment.char = "",
                    na.strings = character())
  m <- as.matrix(tab)
  storage.mode(m) <- "integer"
  dimnames(m) <- list(.real_ids(rownames(m), q), .real_ids(colnames(m), t))
  m
}

#' A guide tree (neighbour joining or UPGMA) of a `dist`, computed by bioaccel
#'
#' @param d a `dist` (or a symmetric matrix with dimnames).
#' @param method `nj` or `upgma`.
#' @return an ape `phylo`.
#' @export
#' @examples
#' \dontrun{
#' d <- dist(matrix(rnorm(20), 5, dimnames = list(letters[1:5], NULL)))
#' plot(bioaccel_tree(d, "nj"))
#' }
bioaccel_tree <- function(d, method = c("nj", "upgma")) {
  method <- match.arg(method)
  dir <- .scratch()
  write_bioaccel_dist(d, file.path(dir, "d.cdist"))
  .run(c("tree", shQuote(file.path(dir, "d.cdist")), "--method", method, "-o",
         shQuote(file.path(dir, "t.nwk"))), list(list(path = file.path(dir, "d.cdist"), label = "d")))
  read_bioaccel_tree(file.path(dir, "t.nwk"))
}
