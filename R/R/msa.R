# Multiple alignments: computed by bioaccel, read back as ape alignments, and a phylogeny
# workflow family's outputs for plotting.

# TRUE when at least 90% of the letters of the rows (gaps, ? and * aside) are A, C, G, T,
# U or N (the rule of bioaccel's alphabet = "auto").
.looks_like_dna <- function(rows) {
  letters <- unlist(strsplit(toupper(paste(rows, collapse = "")), "", fixed = TRUE))
  letters <- letters[grepl("[A-Z]", letters)]
  !length(letters) || mean(letters %in% c("A", "C", "G", "T", "U", "N")) >= 0.9
}

#' Read an aligned FASTA file as an ape alignment
#'
#' @param path an aligned FASTA file (as written by `bioaccel msa` or the phylogeny
#'   workflow).
#' @param type `"auto"` (DNA when at least 90% of the letters are A, C, G, T, U or N, as
#'   bioaccel decides), `"AA"` or `"DNA"`.
#' @return an ape `AAbin` or `DNAbin` matrix, one row per sequence in file order, named by
#'   the ids. ape's `DNAbin` has no U: RNA is read with U as T (the same alignment; ape and
#'   phangorn treat DNA and RNA alike), never as missing data.
#' @export
#' @examples
#' \dontrun{
#' aln <- read_bioaccel_alignment("results/msa/globins45.fa")
#' phangorn::as.phyDat(aln)
#' }
read_bioaccel_alignment <- function(path, type = c("auto", "AA", "DNA")) {
  type <- match.arg(type)
  rows <- .fasta_rows(path)
  if (type == "auto") type <- if (.looks_like_dna(rows)) "DNA" else "AA"
  chars <- do.call(rbind, strsplit(gsub(".", "-", rows, fixed = TRUE), "", fixed = TRUE))
  rownames(chars) <- names(rows)
  if (type == "DNA") {
    chars <- tolower(chars)
    chars[chars == "u"] <- "t"  # DNAbin has no U: it would become NA (phangorn then crashes)
    ape::as.DNAbin(chars)
  } else {
    ape::as.AAbin(toupper(chars))
  }
}

# The rows of an aligned FASTA file as they are written (letters untouched), named by the
# ids; an error naming the row when they are not an alignment.
.fasta_rows <- function(path) {
  if (!file.exists(path)) stop(sprintf("alignment %s does not exist", path), call. = FALSE)
  lines <- readLines(path, warn = FALSE)
  lines <- lines[nzchar(trimws(lines))]
  head <- startsWith(lines, ">")
  if (!length(lines) || !head[1]) {
    stop(sprintf("%s: not an aligned FASTA file (the first line does not start with '>')", path),
         call. = FALSE)
  }
  ids <- sub("^>", "", lines[head])
  ids <- sub("[ \t].*$", "", ids)
  rows <- vapply(split(lines[!head], cumsum(head)[!head]), paste, "", collapse = "")
  if (length(rows) != length(ids)) {
    stop(sprintf("%s: a record without sequence letters", path), call. = FALSE)
  }
  widths <- nchar(rows)
  if (any(widths != widths[1])) {
    k <- which(widths != widths[1])[1]
    stop(sprintf("%s: row %d (%s) has %d columns, row 1 (%s) has %d: not an alignment", path,
                 k, ids[k], widths[k], ids[1], widths[1]), call. = FALSE)
  }
  stats::setNames(unname(rows), ids)
}

#' Multiple sequence alignment with bioaccel
#'
#' Runs `bioaccel msa` (bioaccel's progressive aligner) and returns the alignment as an
#' ape object, rows in input order; `phangorn::as.phyDat()` takes it as it is. `msa()` and
#' `bioaccel_msa()` are the same function (the Bioconductor package msa also has an
#' `msa()`: call `bioaccel::msa()` when both are attached).
#'
#' @param seqs a named character vector of sequences (names are the ids; any character),
#'   an ape `AAbin` or `DNAbin` (a list or an alignment matrix; gaps are removed first), a
#'   Biostrings `DNAStringSet`/`RNAStringSet`/`AAStringSet` or `MultipleAlignment`
#'   (`DNAMultipleAlignment`, ...; gaps are removed first), or the path of a FASTA file.
#' @param alphabet `"auto"`, `"protein"`, `"dna"` or `"rna"`.
#' @param guide_tree `"auto"`, a guide-tree method of `bioaccel msa`, or a Newick file.
#' @param refine `NULL` (the default of `bioaccel msa`), `TRUE` (`--refine`) or `FALSE`
#'   (`--no-refine`).
#' @param threads CPU threads (0 = all cores); the alignment does not depend on it.
#' @param ... further options of `bioaccel msa`, named as there with `_` for `-`:
#'   `matrix`, `gap_open`, `gap_extend`, `term_gap` (the fast mode's scoring: with the
#'   default `mode = "auto"` giving one chooses the fast mode; `mode = "accurate"` refuses
#'   them), `mode`.
#' @param as `"ape"`: an ape alignment matrix; `"character"`: the aligned rows as a named
#'   character vector in the input's own letters (RNA keeps its U, each row of a DNA/RNA mix
#'   its own T or U, lower case stays lower case), each row without gaps its input sequence.
#' @return `as = "ape"`: an ape `AAbin` (proteins) or `DNAbin` (nucleotides) matrix named by
#'   the ids; ape's `DNAbin` has no U and no case, so RNA comes back with U as T (the same
#'   alignment). `as = "character"`: a named character vector of the rows, in input order.
#' @export
#' @examples
#' \dontrun{
#' aln <- msa(c(a = "MKVLAAGIV", b = "MKVLGIV", c = "MRVLAAGLV"))
#' phangorn::as.phyDat(aln)
#' ape::dist.aa(aln)
#' msa(c(a = "GGCUAGCUAGCU", b = "GGCUAGCAGCU"), as = "character")  # U kept
#' }
bioaccel_msa <- function(seqs, alphabet = c("auto", "protein", "dna", "rna"), guide_tree = "auto",
                         refine = NULL, threads = 0, ..., as = c("ape", "character")) {
  alphabet <- match.arg(alphabet)
  as <- match.arg(as)
  dir <- .scratch()
  if ((inherits(seqs, c("AAbin", "DNAbin")) && is.matrix(seqs)) ||
      methods::is(seqs, "MultipleAlignment")) {
    strings <- .seq_strings(seqs, "seqs")
    seqs <- gsub("-", "", strings, fixed = TRUE)
  }
  # FALSE is --no-refine: the flag left out would be the command's default, which refines
  if (!is.null(refine) && !isTRUE(refine) && !isFALSE(refine)) {
    stop(sprintf("refine = %s: expected NULL, TRUE or FALSE", paste(deparse(refine), collapse = "")),
         call. = FALSE)
  }
  input <- .seq_input(seqs, dir)
  out <- file.path(dir, "aln.fa")
  .run(c("msa", shQuote(input$path), "--alphabet", alphabet, "--guide-tree", shQuote(guide_tree),
         .cli_args(c(list(refine = refine, no_refine = if (isFALSE(refine)) TRUE, threads = threads),
                     list(...)), own = c(no_refine = "refine")), "-o", shQuote(out)),
       list(input))
  if (as == "character") {
    rows <- .fasta_rows(out)
    names(rows) <- .real_ids(names(rows), input)
    return(rows)
  }
  type <- switch(alphabet, protein = "AA", dna = , rna = "DNA", auto = "auto")
  aln <- read_bioaccel_alignment(out, type)
  rownames(aln) <- .real_ids(rownames(aln), input)
  aln
}

#' @rdname bioaccel_msa
#' @export
msa <- bioaccel_msa

#' A gene family's outputs of the phylogeny workflow
#'
#' Reads what `workflows/phylogeny` wrote for one family under `results`: its alignment
#' (the trimmed one when trimming was on), NJ tree, distances, the ML tree when there is
#' one, and where and how long the alignment ran.
#'
#' @param results the workflow's `results` folder.
#' @param family the family name (its file name without `.fa`/`.fasta`).
#' @return a list: `family`, `alignment` (ape `AAbin`/`DNAbin` matrix), `tree` (ape `phylo`,
#'   `NULL` for a family of one sequence, which gets no tree), `ml_tree` (`phylo` or
#'   `NULL`), `distances` (`dist` or `NULL`), `gpu` and `seconds` (of the alignment job;
#'   `NA` when not recorded).
#' @export
#' @examples
#' \dontrun{
#' fam <- read_family("workflows/phylogeny/results", "globins45")
#' plot_tree(fam$tree, main = fam$family)
#' plot_heatmap_tree(fam$distances, fam$tree)
#' }
read_family <- function(results, family) {
  aln_file <- file.path(results, "msa", paste0(family, ".fa"))
  if (!file.exists(aln_file)) {
    have <- sub("\\.fa$", "", list.files(file.path(results, "msa"), pattern = "\\.fa$"))
    stop(sprintf("family %s: no alignment %s (families in %s: %s)", family, aln_file, results,
                 if (length(have)) paste(have, collapse = ", ") else "none"), call. = FALSE)
  }
  trimmed <- file.path(results, "trim", paste0(family, ".fa"))
  optional <- function(dir, ext, read) {
    f <- file.path(results, dir, paste0(family, ext))
    if (file.exists(f)) read(f) else NULL
  }
  stats_file <- file.path(results, "msa", paste0(family, ".json"))
  gpu <- NA_character_
  seconds <- NA_real_
  if (file.exists(stats_file)) {
    text <- paste(readLines(stats_file, warn = FALSE), collapse = "")
    gpu <- sub('.*"gpu": *"([^"]*)".*', "\\1", text)
    seconds <- as.numeric(sub('.*"seconds": *([0-9.eE+-]+).*', "\\1", text))
  }
  list(family = family,
       alignment = read_bioaccel_alignment(if (file.exists(trimmed)) trimmed else aln_file),
       tree = optional("tree", ".nwk", read_bioaccel_tree),
       ml_tree = optional("ml_tree", ".nwk", read_bioaccel_tree),
       distances = optional("distances", ".cdist", read_bioaccel_dist),
       gpu = gpu, seconds = seconds)
}

#' phangorn's phyDat from an ape AAbin alignment
#'
#' phangorn 2.11 defines `as.phyDat.AAbin` but does not register it as an S3 method, so
#' `phangorn::as.phyDat(aln)` fails unless phangorn is attached; this package registers
#' one (when phangorn is loaded) that gives the same result.
#'
#' @param x an ape `AAbin` alignment matrix (e.g. from [msa()]).
#' @param ... passed on to `phangorn::phyDat()`.
#' @return a `phyDat` of type `"AA"`.
#' @exportS3Method phangorn::as.phyDat
as.phyDat.AAbin <- function(x, ...) {
  if (!is.matrix(x)) x <- as.matrix(x)
  phangorn::phyDat(as.character(x), type = "AA", ...)
}
