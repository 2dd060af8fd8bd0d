# What R users give and get back (messages, flags, RNA, TSV ids).

test_that("an option that takes a value refuses TRUE/FALSE (devices = TRUE)", {
  # before: --devices took the next argument (-o) as its value: "Missing option -o"
  expect_error(bioaccel:::.cli_args(list(devices = TRUE)),
               "devices = TRUE: expected a value, not TRUE/FALSE")
  expect_error(bioaccel:::.cli_args(list(backend = FALSE)), "backend = FALSE: expected a value")
  expect_identical(bioaccel:::.cli_args(list(ungap = TRUE, clamp_negative = FALSE)), "--ungap")
  expect_error(bioaccel_distance(c(a = "ACGT", b = "ACGA"), "raw", devices = TRUE),
               "devices = TRUE: expected a value")
})

test_that("writing into a folder that does not exist names the user's file", {
  d <- dist(matrix(1:6, 3, dimnames = list(c("a", "b", "c"), NULL)))
  path <- file.path(tempdir(), "nodir", "x.cdist")
  err <- tryCatch(write_bioaccel_dist(d, path), error = conditionMessage)
  expect_match(err, "cannot write .*nodir/x.cdist: folder .*nodir does not exist")
  expect_no_match(err, ".x.cdist.", fixed = TRUE)  # before: the temporary file's name
})

test_that("a command-line error names the argument, not this package's scratch file", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  dir <- bioaccel:::.scratch()
  path <- file.path(dir, "d.cdist")  # as bioaccel_tree(d) writes it; missing here
  err <- tryCatch(bioaccel:::.run(c("tree", shQuote(path), "-o", shQuote(file.path(dir, "t.nwk"))),
                                  list(list(path = path, label = "d"))), error = conditionMessage)
  expect_match(err, "d: no such file", fixed = TRUE)
  expect_no_match(err, tempdir(), fixed = TRUE)
})

test_that("RNA alignments keep their U as T in a DNAbin (never NA), and phangorn takes them", {
  path <- tempfile(fileext = ".fa")
  writeLines(c(">r1", "ACGUUGCA-U", ">r2", "ACGU-GCAAU", ">r3", "ACCUUGCAAU"), path)
  aln <- read_bioaccel_alignment(path)
  expect_s3_class(aln, "DNAbin")
  chars <- as.character(aln)
  expect_false(anyNA(chars))
  expect_identical(unname(chars[1, ]), strsplit("acgttgca-t", "")[[1]])
  expect_equal(ape::base.freq(aln)[["t"]] > 0, TRUE)
  skip_if_not_installed("phangorn")
  pd <- phangorn::as.phyDat(aln)
  tr <- ape::read.tree(text = "((r1,r2),r3);")
  expect_true(is.finite(phangorn::parsimony(tr, pd)))
})

test_that("auto reads by composition, as bioaccel does", {
  path <- tempfile(fileext = ".fa")
  writeLines(c(">p1", "MKWVTGHRSACDNK", ">p2", "MKWVTGHRSACDNR"), path)
  expect_s3_class(read_bioaccel_alignment(path), "AAbin")  # every letter an IUPAC code
})

test_that("Biostrings' sequence sets and alignments are accepted", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  skip_if_not_installed("Biostrings")
  seqs <- woodmouse_strings()[1:6]
  data(woodmouse, package = "ape")
  ref <- ape::dist.dna(woodmouse[1:6, ], model = "K80")
  for (x in list(Biostrings::DNAStringSet(seqs), Biostrings::DNAMultipleAlignment(seqs))) {
    d <- bioaccel_distance(x, "k80", backend = "cpu")
    expect_equal(as.matrix(d), as.matrix(ref), tolerance = 1e-12, label = class(x)[1])
    expect_identical(attr(d, "Labels"), names(seqs))
  }
  rna <- Biostrings::RNAStringSet(Biostrings::DNAStringSet(seqs))
  expect_equal(as.matrix(bioaccel_distance(rna, "k80", backend = "cpu")), as.matrix(ref), tolerance = 1e-12)
  prot <- c(q1 = "HEAGAWGHEE", q2 = "PAWHEAE", q3 = "HEAGAWHEE")
  aa <- Biostrings::AAStringSet(prot)
  expect_identical(bioaccel_align_scores(aa, backend = "cpu"), bioaccel_align_scores(prot, backend = "cpu"))
  aln <- bioaccel_msa(aa)
  expect_identical(rownames(aln), names(prot))
  expect_identical(rownames(bioaccel_msa(Biostrings::AAMultipleAlignment(c(q1 = "HEAG-AWGHEE", q2 = "PAWHEAE----")))),
                   c("q1", "q2"))
  masked <- Biostrings::DNAMultipleAlignment(seqs)
  Biostrings::rowmask(masked) <- IRanges::IRanges(2, 2)
  expect_error(bioaccel_distance(masked, "k80"), "masked rows; unmask it", fixed = TRUE)
  expect_error(bioaccel_distance(Biostrings::DNAStringSet(unname(seqs)), "k80"), "the sequences have no names")
})
