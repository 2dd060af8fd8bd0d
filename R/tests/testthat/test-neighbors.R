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
  expect_error(bioaccel_neighbors(seqs), "letter '-' of sequence 'beta' at position 4")
  expect_error(bioaccel_neighbors(c(a = "ACGT", b = "ACGA"), model = "mash"), "max_distance: required")
  expect_error(bioaccel_neighbors(c(a = "ACGT", b = "ACGA"), d = 1), "max_distance = ")
  expect_error(bioaccel_neighbors(c(a = "ACGT", b = "ACGA"), max_distance = 1.5), "whole numbers")
  expect_error(bioaccel_neighbors(c(a = "ACGT", b = "ACGA"), sparse = NA), "TRUE or FALSE")
  expect_error(bioaccel_neighbors("no/such/file.fa"), "no such file no/such/file.fa")
})

test_that("bioaccel_neighbors without a single pair gives an empty table, ids and all", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  # before: the empty <i8 arrays read as NA: "missing value where TRUE/FALSE needed"
  seqs <- c(a = "ACGT", b = "TTTTTT")
  got <- bioaccel_neighbors(seqs, max_distance = 0)
  expect_s3_class(got, "data.frame")
  expect_identical(nrow(got), 0L)
  expect_identical(names(got), c("id1", "id2", "distance"))
  expect_identical(got$distance, integer(0))
  expect_identical(attr(got, "ids"), c("a", "b"))
  expect_identical(attr(got, "model"), "edit")
  expect_identical(attr(got, "max_distance"), 0)
  path <- tempfile(fileext = ".fa")
  on.exit(unlink(path))
  writeLines(paste0(">", names(seqs), ";size=2\n", seqs), path)
  expect_identical(bioaccel_neighbors(path, max_distance = 0), got)
  one <- bioaccel_neighbors(c(solo = "ACGTACGT"), max_distance = 2)
  expect_identical(nrow(one), 0L)
  expect_identical(attr(one, "ids"), "solo")
  skip_if_not_installed("Matrix")
  m <- bioaccel_neighbors(seqs, max_distance = 0, sparse = TRUE)
  expect_identical(dim(m), c(2L, 2L))
  expect_identical(dimnames(m), list(c("a", "b"), c("a", "b")))
  expect_identical(length(m@x), 0L)
})

test_that("sequences given in R lose their abundance annotation as a file's records do", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  seqs <- c("a;size=3" = "ACGTACGTACGT", "b;size=2;sample=x" = "ACGTACGTACGA",
            "c" = "ACGTTCGTACGA", "d;size=1;" = "GGGGCCCCAAAA")
  path <- tempfile(fileext = ".fa")
  under <- tempfile(fileext = ".fa")
  on.exit(unlink(c(path, under)))
  writeLines(paste0(">", names(seqs), "\n", seqs), path)
  from_file <- bioaccel_neighbors(path, max_distance = 2)
  expect_identical(attr(from_file, "ids"), c("a", "b;sample=x", "c", "d"))
  # before: the placeholder ids carried no annotation, so the names came back whole
  expect_identical(bioaccel_neighbors(seqs, max_distance = 2), from_file)
  skip_if_not_installed("Biostrings")
  expect_identical(bioaccel_neighbors(Biostrings::DNAStringSet(seqs), max_distance = 2), from_file)
  # swarm's _N: before, every name given in R was refused as lacking one
  useqs <- c(a_3 = "ACGTACGTACGT", b_02 = "ACGTACGTACGA", x_1_7 = "ACGTTCGTACGA")
  writeLines(paste0(">", names(useqs), "\n", useqs), under)
  u_file <- bioaccel_neighbors(under, max_distance = 2, abundance_annotation = "underscore")
  expect_identical(attr(u_file, "ids"), c("a", "b", "x_1"))
  expect_identical(bioaccel_neighbors(useqs, max_distance = 2, abundance_annotation = "underscore"),
                   u_file)
  # a name without _N is refused by name, as the file's record is
  expect_error(bioaccel_neighbors(c(a_3 = "ACGT", b = "ACGA"), abundance_annotation = "underscore"),
               "record 2 'b' does not end in an abundance _N")
  expect_error(bioaccel_neighbors(c("a;size=3" = "ACGT", "a;size=2" = "ACGA")),
               "records 'a;size=3' \\(record 1\\) and 'a;size=2' \\(record 2\\) are both 'a'")
})

test_that("bioaccel_neighbors refuses empty, NA and directory input in one clear line", {
  # before: "the sequences have no names" for an empty vector
  expect_error(bioaccel_neighbors(character(0), 1), "^seqs: the input is empty")
  expect_error(bioaccel_neighbors(c(a = "ACGT", b = NA), 1), "^seqs: sequence 'b' is NA$")
  expect_error(bioaccel_neighbors(tempdir(), 1), "is a directory; expected a sequence file$")
  expect_error(bioaccel_neighbors(c("ACGT", "ACGA"), 1), "2 unnamed strings; expected one file path")
})
