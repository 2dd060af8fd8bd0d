test_that("a dist survives write and read exactly, labels included", {
  set.seed(1)
  x <- matrix(rnorm(40), 10)
  rownames(x) <- c(paste0("seq", 1:8), "with space", "\u00e9t\u00e9")
  d <- dist(x)
  path <- tempfile(fileext = ".cdist")
  write_bioaccel_dist(d, path)
  back <- read_bioaccel_dist(path)
  expect_s3_class(back, "dist")
  expect_identical(as.vector(back), as.vector(d))
  expect_identical(attr(back, "Labels"), attr(d, "Labels"))
  expect_identical(as.matrix(back), as.matrix(d))
})

test_that("NaN and Inf are kept", {
  m <- matrix(c(0, NaN, Inf, NaN, 0, 1, Inf, 1, 0), 3, dimnames = list(letters[1:3], letters[1:3]))
  path <- tempfile(fileext = ".cdist")
  write_bioaccel_dist(m, path)
  back <- as.matrix(read_bioaccel_dist(path))
  expect_true(is.nan(back["a", "b"]))
  expect_equal(back["a", "c"], Inf)
})

test_that("bad files give clear errors", {
  path <- tempfile(fileext = ".cdist")
  writeBin(charToRaw("NOTADIST0000"), path)
  expect_error(read_bioaccel_dist(path), "not a bioaccel .cdist file")
  write_bioaccel_dist(dist(matrix(1:20, 5)), path)
  raw <- readBin(path, "raw", file.size(path))
  writeBin(raw[seq_len(length(raw) - 8)], path)
  expect_error(read_bioaccel_dist(path), "truncated")
  expect_error(read_bioaccel_dist(tempfile()), "no such file")
})

test_that("a failed write leaves no file behind", {
  dir <- tempfile()
  dir.create(dir)
  expect_error(write_bioaccel_dist("not a dist", file.path(dir, "x.cdist")))
  expect_length(list.files(dir, all.files = TRUE, no.. = TRUE), 0)
})

test_that("trees round-trip through Newick and quoted labels lose their quotes", {
  tr <- ape::read.tree(text = "((x:1,c:2):0.5,y:3,d:1);")
  path <- tempfile(fileext = ".nwk")
  writeLines("(('a b':1,c:2):0.5,'it''s':3,d:1);", path)
  back <- read_bioaccel_tree(path)
  expect_identical(back$tip.label, c("a b", "c", "it's", "d"))
  expect_equal(back$edge.length, tr$edge.length)
})

test_that("reading a tree takes time linear in its quoted labels", {
  # 16S-like labels that bioaccel quotes (spaces, punctuation); ape reads the same tree
  # with plain labels in a time to compare with
  set.seed(3)
  n <- 6000
  tr <- ape::rtree(n, tip.label = sprintf("OTU_%d", seq_len(n)))
  labels <- sprintf("'Bacteria;Firmicutes;Bacilli %d (sample %d, read %d)'", seq_len(n), n - seq_len(n), seq_len(n))
  plain_path <- tempfile(fileext = ".nwk")
  ape::write.tree(tr, plain_path)
  text <- readLines(plain_path)
  m <- gregexpr("OTU_[0-9]+", text)
  regmatches(text, m) <- list(labels[as.integer(sub("OTU_", "", regmatches(text, m)[[1]]))])
  path <- tempfile(fileext = ".nwk")
  writeLines(text, path)
  ape_time <- system.time(ref <- ape::read.tree(plain_path))[["elapsed"]]
  ours_time <- system.time(back <- read_bioaccel_tree(path))[["elapsed"]]
  expect_identical(back$tip.label, gsub("^'|'$", "", labels)[as.integer(sub("OTU_", "", ref$tip.label))])
  expect_identical(back$edge, ref$edge)
  expect_identical(back$edge.length, ref$edge.length)
  # here: 0.15 s (ape 0.05 s); the quadratic reader took 20 s
  expect_lt(ours_time, 20 * ape_time + 2)
})

test_that("an asymmetric matrix is refused, naming the pair; rounding is tolerated", {
  m <- matrix(c(0, 1, 2, 1, 0, 3, 2, 3.5, 0), 3, dimnames = list(letters[1:3], letters[1:3]))
  path <- tempfile(fileext = ".cdist")
  expect_error(write_bioaccel_dist(m, path), "not symmetric: 'b'/'c' = 3.5 but 'c'/'b' = 3")
  expect_false(file.exists(path))
  m["b", "c"] <- 3 * (1 + 1e-12)
  write_bioaccel_dist(m, path)
  expect_equal(as.matrix(read_bioaccel_dist(path))["b", "c"], 3)
})

test_that(".read_npy reads the arrays bioaccel's .npz tables hold", {
  # .npy bytes as NumPy writes them (format 1.0: magic, header length, padded dict)
  npy <- function(descr, shape, payload) {
    dict <- sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape)
    pad <- 64 - (10 + nchar(dict) + 1) %% 64
    header <- paste0(dict, strrep(" ", pad), "\n")
    path <- tempfile(fileext = ".npy")
    writeBin(c(as.raw(c(0x93)), charToRaw("NUMPY"), as.raw(c(1, 0)),
               writeBin(nchar(header), raw(), size = 2, endian = "little"), charToRaw(header),
               payload), path)
    path
  }
  int64 <- function(x) unlist(lapply(x, function(v) {
    low <- v %% 2^32
    c(writeBin(as.integer(if (low >= 2^31) low - 2^32 else low), raw(), size = 4, endian = "little"),
      writeBin(as.integer(floor(v / 2^32)), raw(), size = 4, endian = "little"))
  }))
  big <- bioaccel:::.read_npy(npy("<i8", "(3,)", int64(c(1, 2^40 + 5, -3))))
  expect_identical(as.vector(big), c(1, 2^40 + 5, -3))
  small <- bioaccel:::.read_npy(npy("<i8", "(2,)", int64(c(7, -2))))
  expect_identical(as.vector(small), c(7L, -2L))
  expect_identical(attr(small, "shape"), 2)
  codes <- c(utf8ToInt("ab"), 0L, utf8ToInt("\u00e9"), 0L, 0L, utf8ToInt("xyz"))
  words <- bioaccel:::.read_npy(npy("<U3", "(3,)", writeBin(codes, raw(), size = 4, endian = "little")))
  expect_identical(as.vector(words), c("ab", "\u00e9", "xyz"))
  scalar <- bioaccel:::.read_npy(npy("<f8", "()", writeBin(2.5, raw(), size = 8, endian = "little")))
  expect_identical(as.vector(scalar), 2.5)
  expect_identical(attr(scalar, "shape"), numeric(0))
  # an empty table (no pairs): empty arrays, not NA (before: c(TRUE, FALSE) indexing gave NA
  # and "missing value where TRUE/FALSE needed")
  none <- bioaccel:::.read_npy(npy("<i8", "(0,)", raw()))
  expect_identical(as.vector(none), integer(0))
  expect_identical(attr(none, "shape"), 0)
  expect_identical(as.vector(bioaccel:::.read_npy(npy("<i4", "(0,)", raw()))), integer(0))
  expect_identical(as.vector(bioaccel:::.read_npy(npy("<f8", "(0,)", raw()))), numeric(0))
  expect_error(bioaccel:::.read_npy(npy("<i8", "(3,)", int64(c(1, 2)))), "2 of 3 values")
  expect_error(bioaccel:::.read_npy(npy("|b1", "(1,)", as.raw(1))), "NumPy type \\|b1")
})
