# Computing with bioaccel from R, through its command line.

#' The bioaccel executable: option `bioaccel.command`, else the BIOACCEL environment
#' variable, else `bioaccel` on the PATH.
bioaccel_command <- function() {
  cmd <- getOption("bioaccel.command", Sys.getenv("BIOACCEL", "bioaccel"))
  path <- Sys.which(cmd)
  if (!nzchar(path) && !file.exists(cmd)) {
    stop(sprintf("the bioaccel command (%s) is not found; install it with `pip install bioaccel` ",
                 cmd), "or set options(bioaccel.command = '/path/to/bioaccel')", call. = FALSE)
  }
  if (nzchar(path)) unname(path) else cmd
}

.run <- function(args) {
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
    stop(sprintf("bioaccel %s failed (status %s): %s", args[1], status, msg), call. = FALSE)
  }
  invisible(TRUE)
}

.as_fasta <- function(seqs, dir) {
  if (is.character(seqs) && length(seqs) == 1 && is.null(names(seqs)) && file.exists(seqs)) {
    return(seqs)
  }
  if (!is.character(seqs)) seqs <- vapply(seqs, function(s) paste(as.character(s), collapse = ""), "")
  ids <- names(seqs)
  if (is.null(ids) || any(!nzchar(ids))) stop("seqs must be a named character vector or a file path", call. = FALSE)
  if (anyDuplicated(ids)) stop(sprintf("sequence name %s repeated", ids[anyDuplicated(ids)]), call. = FALSE)
  path <- file.path(dir, "input.fasta")
  writeLines(paste0(">", ids, "\n", seqs), path)
  path
}

#' All-vs-all distances with bioaccel.
#'
#' @param seqs a named character vector of sequences, or a FASTA/FASTQ/alignment file.
#' @param model raw, jc69, k80, f81, tn93, logdet (aligned DNA); identity, scoredist, edit,
#'   kmer, jaccard, mash (unaligned).
#' @param ... further options of `bioaccel distance`, e.g. `backend = "cpu"`, `k = 15`.
#' @return a `dist`.
bioaccel_distance <- function(seqs, model = "k80", ...) {
  dir <- tempfile("bioaccel")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  out <- file.path(dir, "d.cdist")
  .run(c("distance", shQuote(.as_fasta(seqs, dir)), "-m", model, "--float64",
         .options(list(...)), "-o", shQuote(out)))
  read_bioaccel_dist(out)
}

#' Optimal alignment scores (global, local or semiglobal) with bioaccel.
#'
#' @return an integer matrix, queries in rows, targets in columns.
bioaccel_align_scores <- function(queries, targets = NULL, mode = "global", matrix = NULL,
                                  gap_open = NULL, gap_extend = NULL, ...) {
  dir <- tempfile("bioaccel")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  qdir <- file.path(dir, "q"); dir.create(qdir)
  args <- c("align", shQuote(.as_fasta(queries, qdir)))
  if (!is.null(targets)) {
    tdir <- file.path(dir, "t"); dir.create(tdir)
    args <- c(args, shQuote(.as_fasta(targets, tdir)))
  }
  out <- file.path(dir, "scores.tsv")
  args <- c(args, "--mode", mode, .options(list(matrix = matrix, gap_open = gap_open,
                                                gap_extend = gap_extend, ...)), "-o", shQuote(out))
  .run(args)
  tab <- read.delim(out, row.names = 1, check.names = FALSE, quote = "")
  m <- as.matrix(tab)
  storage.mode(m) <- "integer"
  m
}

#' A guide tree (NJ or UPGMA) of a `dist`, computed by bioaccel.
bioaccel_tree <- function(d, method = c("nj", "upgma")) {
  method <- match.arg(method)
  dir <- tempfile("bioaccel")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  write_bioaccel_dist(d, file.path(dir, "d.cdist"))
  .run(c("tree", shQuote(file.path(dir, "d.cdist")), "--method", method, "-o",
         shQuote(file.path(dir, "t.nwk"))))
  read_bioaccel_tree(file.path(dir, "t.nwk"))
}

.options <- function(opts) {
  opts <- opts[!vapply(opts, is.null, TRUE)]
  if (!length(opts)) return(character())
  flags <- paste0("--", gsub("_", "-", names(opts)))
  flags[names(opts) == "k"] <- "-k"
  as.vector(rbind(flags, vapply(opts, function(v) shQuote(as.character(v)), "")))
}
