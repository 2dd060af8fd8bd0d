# Sequences of a few families: each a parent with up to 5 random edits.
family_strings <- function(n, seed) {
  set.seed(seed)
  parents <- replicate(4, paste(sample(c("A", "C", "G", "T"), 36, TRUE), collapse = ""))
  seqs <- vapply(seq_len(n), function(k) {
    s <- strsplit(parents[(k - 1) %% 4 + 1], "")[[1]]
    for (e in seq_len(sample(0:5, 1))) {
      p <- sample(length(s), 1)
      what <- sample(3, 1)
      if (what == 1) s[p] <- sample(c("A", "C", "G", "T"), 1)
      if (what == 2) s <- append(s, sample(c("A", "C", "G", "T"), 1), p)
      if (what == 3 && length(s) > 1) s <- s[-p]
    }
    paste(s, collapse = "")
  }, "")
  setNames(seqs, sprintf("seq %d", seq_len(n)))  # names with spaces survive
}

test_that("bioaccel_neighbors gives exactly the pairs within d of R's own Levenshtein distances", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  seqs <- family_strings(60, 7)
  oracle <- utils::adist(unname(seqs))  # generalized Levenshtein, unit costs
  for (d in c(0, 2, 5)) {
    got <- bioaccel_neighbors(seqs, max_distance = d, threads = 1)
    hit <- which(upper.tri(oracle) & oracle <= d, arr.ind = TRUE)
    hit <- hit[order(hit[, 1], hit[, 2]), , drop = FALSE]
    expect_identical(got$id1, names(seqs)[hit[, 1]])
    expect_identical(got$id2, names(seqs)[hit[, 2]])
    expect_identical(got$distance, as.integer(oracle[hit]))
    expect_identical(attr(got, "ids"), names(seqs))
    expect_identical(attr(got, "max_distance"), d)
  }
  expect_gt(nrow(bioaccel_neighbors(seqs, max_distance = 5)), 100)  # not a vacuous oracle
})

test_that("bioaccel_neighbors' sparse matrix holds the same pairs, both ways, every sequence a row", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  skip_if_not_installed("Matrix")
  seqs <- family_strings(60, 7)
  oracle <- utils::adist(unname(seqs))
  m <- bioaccel_neighbors(seqs, max_distance = 3, sparse = TRUE)
  expect_identical(dimnames(m), list(names(seqs), names(seqs)))
  dense <- as.matrix(m)
  want <- ifelse(oracle <= 3 & row(oracle) != col(oracle), oracle, 0)
  dimnames(want) <- dimnames(dense)
  expect_equal(dense, want)
  # identical sequences' pairs are stored entries (distance 0), not absent ones
  expect_true(any(oracle[upper.tri(oracle)] == 0))
  expect_identical(length(m@x), sum(oracle[upper.tri(oracle)] <= 3))
})

test_that("bioaccel_neighbors reads a FASTA file and drops ;size=N from the ids", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  seqs <- family_strings(20, 3)
  path <- tempfile(fileext = ".fa")
  on.exit(unlink(path))
  writeLines(paste0(">s", seq_along(seqs), ";size=", rev(seq_along(seqs)), "\n", seqs), path)
  got <- bioaccel_neighbors(path, max_distance = 4)
  from_r <- bioaccel_neighbors(setNames(seqs, paste0("s", seq_along(seqs))), max_distance = 4)
  expect_identical(attr(got, "ids"), paste0("s", seq_along(seqs)))
  expect_identical(as.data.frame(got), as.data.frame(from_r))
})

test_that("bioaccel_neighbors' MinHash pairs are the all-vs-all matrix's pairs within D", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  seqs <- family_strings(30, 11)
  full <- as.matrix(bioaccel_distance(seqs, "mash", k = 5, sketch_size = 64))
  got <- bioaccel_neighbors(seqs, max_distance = 0.3, model = "mash", k = 5, sketch_size = 64)
  hit <- which(upper.tri(full) & full <= 0.3, arr.ind = TRUE)
  hit <- hit[order(hit[, 1], hit[, 2]), , drop = FALSE]
  expect_gt(nrow(hit), 0)
  expect_identical(got$id1, names(seqs)[hit[, 1]])
  expect_identical(got$id2, names(seqs)[hit[, 2]])
  expect_equal(got$distance, unname(full[hit]), tolerance = 1e-6)
  expect_identical(attr(got, "model"), "mash")
})

test_that("bioaccel_neighbors refuses bad input in the user's terms", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  seqs <- c(alpha = "ACGTACGT", beta = "ACG-ACGT")
  expect_error(bioaccel_neighbors(seqs), "sequence 'beta' has a gap")
  expect_error(bioaccel_neighbors(c(a = "ACGT", b = "ACGA"), model = "mash"), "max_distance: required")
  expect_error(bioaccel_neighbors(c(a = "ACGT", b = "ACGA"), d = 1), "max_distance = ")
  expect_error(bioaccel_neighbors(c(a = "ACGT", b = "ACGA"), max_distance = 1.5), "whole numbers")
  expect_error(bioaccel_neighbors(c(a = "ACGT", b = "ACGA"), sparse = NA), "TRUE or FALSE")
  expect_error(bioaccel_neighbors("no/such/file.fa"), "no such file no/such/file.fa")
})
