# Reading and writing bioaccel's files.

.read_u64 <- function(con) {
  b <- readBin(con, "raw", 8)
  if (length(b) < 8) stop("truncated header", call. = FALSE)
  sum(as.numeric(b) * 256^(0:7))
}

.write_u64 <- function(con, x) {
  bytes <- as.raw(floor(x / 256^(0:7)) %% 256)
  writeBin(bytes, con)
}

#' Read a bioaccel binary condensed distance matrix (.cdist) into a `dist`
#'
#' The format: 8 bytes "BACDIST1"; uint32 bytes per value (8 or 4); uint32 0; uint64 n;
#' uint64 byte length of the labels; the labels (UTF-8, each ending in a newline); then
#' n (n - 1) / 2 little-endian values, the upper triangle row by row, which is the order
#' of R's `dist`.
#'
#' @param path file written by `bioaccel distance -o x.cdist` or `bioaccel merge-tiles`.
#' @return a `dist` with the sequence ids as labels.
#' @export
#' @examples
#' path <- tempfile(fileext = ".cdist")
#' write_bioaccel_dist(dist(matrix(1:6, 3, dimnames = list(c("a", "b", "c"), NULL))), path)
#' read_bioaccel_dist(path)
read_bioaccel_dist <- function(path) {
  if (!file.exists(path)) stop(sprintf("%s: no such file", path), call. = FALSE)
  con <- file(path, "rb")
  on.exit(close(con))
  magic <- readBin(con, "raw", 8)
  if (length(magic) < 8 || !identical(magic, charToRaw("BACDIST1"))) {
    stop(sprintf("%s: not a bioaccel .cdist file (no BACDIST1 header)", path), call. = FALSE)
  }
  width <- readBin(con, "integer", 1, size = 4, endian = "little")
  readBin(con, "integer", 1, size = 4, endian = "little")
  if (!width %in% c(4L, 8L)) {
    stop(sprintf("%s: %d bytes per value; expected 4 or 8", path, width), call. = FALSE)
  }
  n <- .read_u64(con)
  nbytes <- .read_u64(con)
  raw_labels <- readBin(con, "raw", nbytes)
  labels <- strsplit(rawToChar(raw_labels), "\n", fixed = TRUE)[[1]]
  Encoding(labels) <- "UTF-8"
  if (length(labels) != n) {
    stop(sprintf("%s: header says %.0f labels, found %d", path, n, length(labels)), call. = FALSE)
  }
  m <- n * (n - 1) / 2
  values <- readBin(con, "double", m, size = width, endian = "little")
  if (length(values) != m) {
    stop(sprintf("%s: %d of %.0f values (truncated file?)", path, length(values), m), call. = FALSE)
  }
  structure(values, Size = as.integer(n), Labels = labels, Diag = FALSE, Upper = FALSE,
            method = "bioaccel", call = match.call(), class = "dist")
}

# The symmetry rule of bioaccel (Python: bioaccel.distances._matrix.SYMMETRY_RTOL): d[i, j] and
# d[j, i] agree when equal (NA with NA) or within a relative 1e-9; else an error naming a pair.
.check_symmetric <- function(m) {
  if (nrow(m) != ncol(m)) {
    stop(sprintf("d is a %d x %d matrix; a distance matrix is square", nrow(m), ncol(m)), call. = FALSE)
  }
  tm <- t(m)
  ok <- (m == tm) | (abs(m - tm) <= 1e-9 * pmax(abs(m), abs(tm)))
  ok[is.na(ok)] <- FALSE
  ok <- ok | (is.na(m) & is.na(tm))
  if (!all(ok)) {
    at <- which(!ok, arr.ind = TRUE)
    at <- at[order(at[, 1], at[, 2]), , drop = FALSE][1, ]
    lab <- rownames(m)
    if (is.null(lab)) lab <- as.character(seq_len(nrow(m)))
    i <- at[[1]]; j <- at[[2]]
    stop(sprintf("d is not symmetric: '%s'/'%s' = %s but '%s'/'%s' = %s (distances must agree to a relative 1e-09)",
                 lab[i], lab[j], format(m[i, j], digits = 17), lab[j], lab[i], format(m[j, i], digits = 17)),
         call. = FALSE)
  }
}

#' Write a `dist` (or a symmetric matrix) as a bioaccel .cdist file, atomically
#'
#' @param d a `dist`, or a square matrix with dimnames, symmetric up to a relative 1e-9
#'   (else an error naming a pair; `as.dist` would silently keep the lower triangle).
#' @param path output file; written to a temporary file first, then renamed.
#' @return `path`, invisibly.
#' @export
#' @examples
#' path <- tempfile(fileext = ".cdist")
#' write_bioaccel_dist(dist(matrix(1:6, 3, dimnames = list(c("a", "b", "c"), NULL))), path)
write_bioaccel_dist <- function(d, path) {
  if (is.matrix(d)) {
    .check_symmetric(d)
    d <- as.dist(d)
  }
  if (!inherits(d, "dist")) stop("d must be a dist or a symmetric matrix", call. = FALSE)
  n <- attr(d, "Size")
  labels <- attr(d, "Labels")
  if (is.null(labels)) labels <- as.character(seq_len(n))
  if (any(grepl("\n", labels, fixed = TRUE))) stop("labels cannot contain newlines", call. = FALSE)
  lab <- charToRaw(enc2utf8(paste0(labels, "\n", collapse = "")))
  if (!dir.exists(dirname(path))) {
    stop(sprintf("cannot write %s: folder %s does not exist", path, dirname(path)), call. = FALSE)
  }
  tmp <- tempfile(pattern = paste0(".", basename(path), "."), tmpdir = dirname(path))
  con <- tryCatch(suppressWarnings(file(tmp, "wb")), error = function(e) {
    stop(sprintf("cannot write %s (permission denied?)", path), call. = FALSE)
  })
  ok <- FALSE
  on.exit({
    if (!ok) unlink(tmp)
  })
  writeBin(charToRaw("BACDIST1"), con)
  writeBin(c(8L, 0L), con, size = 4, endian = "little")
  .write_u64(con, n)
  .write_u64(con, length(lab))
  writeBin(lab, con)
  writeBin(as.double(d), con, size = 8, endian = "little")
  close(con)
  if (!file.rename(tmp, path)) stop(sprintf("cannot write %s", path), call. = FALSE)
  ok <- TRUE
  invisible(path)
}

#' Read a bioaccel Newick tree into an ape `phylo`
#'
#' bioaccel quotes labels with spaces or Newick punctuation (`'a b'`, `'it''s'`); ape's
#' reader keeps the quotes and cannot read a doubled quote, so quoted labels are swapped
#' for placeholders before parsing and restored, unquoted, afterwards (in time linear in
#' the length of the file).
#'
#' @param path a Newick file written by `bioaccel tree`.
#' @return an ape `phylo`.
#' @export
#' @examples
#' path <- tempfile(fileext = ".nwk")
#' writeLines("(('a b':1,c:2):0.5,'it''s':3,d:1);", path)
#' read_bioaccel_tree(path)$tip.label
read_bioaccel_tree <- function(path) {
  if (!file.exists(path)) stop(sprintf("%s: no such file", path), call. = FALSE)
  text <- paste(readLines(path, warn = FALSE, encoding = "UTF-8"), collapse = "")
  if (!nzchar(trimws(text))) stop(sprintf("%s: no Newick tree in the file", path), call. = FALSE)
  found <- gregexpr("'([^']|'')*'", text)
  quoted <- regmatches(text, found)[[1]]
  keys <- sprintf("bioaccelQ%dQ", seq_along(quoted))
  if (length(quoted)) {
    # the text between the quoted labels, interleaved with the placeholders: one pass
    between <- regmatches(text, found, invert = TRUE)[[1]]
    text <- paste(c(rbind(between, c(keys, ""))), collapse = "")
  }
  tr <- read.tree(text = text)
  if (is.null(tr)) stop(sprintf("%s: not a Newick tree", path), call. = FALSE)
  plain <- gsub("''", "'", substr(quoted, 2, nchar(quoted) - 1), fixed = TRUE)
  restore <- function(x) {
    hit <- match(x, keys)
    x[!is.na(hit)] <- plain[hit[!is.na(hit)]]
    x
  }
  tr$tip.label <- restore(tr$tip.label)
  if (!is.null(tr$node.label)) tr$node.label <- restore(tr$node.label)
  tr
}

# One array of a NumPy .npy file, of the kinds bioaccel writes: little-endian floats
# (<f4, <f8), integers (<i4, <i8: whole doubles where past R's integers) and fixed-width
# unicode strings (<UW). Returns the values in file order with attributes `shape` and
# `fortran` (column-major); a scalar has shape integer(0).
.read_npy <- function(path) {
  con <- file(path, "rb")
  on.exit(close(con))
  magic <- readBin(con, "raw", 8)
  if (length(magic) < 8 || !identical(magic[1:6], c(as.raw(0x93), charToRaw("NUMPY")))) {
    stop(sprintf("%s: not a NumPy .npy file", path), call. = FALSE)
  }
  size <- if (as.integer(magic[7]) == 1L) 2 else 4
  header_len <- sum(as.numeric(readBin(con, "raw", size)) * 256^(seq_len(size) - 1))
  header <- rawToChar(readBin(con, "raw", header_len))
  descr <- sub(".*'descr': *'([^']*)'.*", "\\1", header)
  dims <- trimws(strsplit(sub(".*'shape': *\\(([^)]*)\\).*", "\\1", header), ",")[[1]])
  shape <- as.numeric(dims[nzchar(dims)])
  count <- prod(shape)
  short <- function(got) {
    stop(sprintf("%s: %.0f of %.0f values (truncated file?)", path, got, count), call. = FALSE)
  }
  if (descr %in% c("<f8", "<f4")) {
    values <- readBin(con, "double", count, size = if (descr == "<f8") 8L else 4L, endian = "little")
  } else if (descr == "<i4") {
    values <- readBin(con, "integer", count, size = 4L, endian = "little")
  } else if (descr == "<i8") {
    halves <- readBin(con, "integer", 2 * count, size = 4L, endian = "little")
    if (length(halves) != 2 * count) short(length(halves) / 2)
    # by position, not c(TRUE, FALSE): that gives NA for an empty array (no pairs)
    low <- halves[seq.int(1, by = 2, length.out = count)]
    values <- (low + ifelse(low < 0, 2^32, 0)) + halves[seq.int(2, by = 2, length.out = count)] * 2^32
    if (all(abs(values) <= .Machine$integer.max)) values <- as.integer(values)
  } else if (grepl("^<U[0-9]+$", descr)) {
    width <- as.integer(substring(descr, 3))
    points <- readBin(con, "integer", count * width, size = 4L, endian = "little")
    if (length(points) != count * width) short(length(points) / max(width, 1))
    points <- matrix(points, nrow = width)
    values <- vapply(seq_len(count), function(k) intToUtf8(points[points[, k] != 0L, k]), "")
  } else {
    stop(sprintf("%s: an array of NumPy type %s; expected floats, integers or strings", path, descr),
         call. = FALSE)
  }
  if (length(values) != count) short(length(values))
  structure(values, shape = shape, fortran = grepl("'fortran_order': *True", header))
}

# The arrays of a NumPy .npz file (a zip of .npy files), by name, unpacked into `dir`.
.read_npz <- function(path, dir) {
  files <- utils::unzip(path, exdir = dir)
  if (!length(files)) stop(sprintf("%s: not a NumPy .npz file (no arrays)", path), call. = FALSE)
  stats::setNames(lapply(files, .read_npy), sub("\\.npy$", "", basename(files)))
}

# A square float matrix saved by NumPy (.npy, C or Fortran order) with its ids in the side
# file PATH.ids.txt (what `bioaccel distance -o x.npy` writes), as a `dist`.
.read_npy_dist <- function(path) {
  values <- .read_npy(path)
  shape <- attr(values, "shape")
  if (!is.double(values) || length(shape) != 2 || shape[1] != shape[2]) {
    stop(sprintf("%s: expected a square float matrix, found %s values of shape (%s)", path,
                 typeof(values), paste(shape, collapse = ", ")), call. = FALSE)
  }
  n <- shape[1]
  m <- matrix(as.vector(values), n, n, byrow = !attr(values, "fortran"))
  ids_path <- paste0(path, ".ids.txt")
  ids <- if (file.exists(ids_path)) readLines(ids_path, warn = FALSE, encoding = "UTF-8")
  if (length(ids) != n) {
    stop(sprintf("%s: %d ids for a %.0f x %.0f matrix", ids_path, length(ids), n, n), call. = FALSE)
  }
  dimnames(m) <- list(ids, ids)
  as.dist(m)
}
