test_that("bioaccel_cluster gives swarm's OTUs from a vector and from a FASTA file", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  seqs <- c(a = "ACGTACGTACGTAAAA", b = "ACGTACGTACGTAAAT", c = "ACGTACGTACGTAATT",
            d = "TTTTACGTACGTAAAA", e = "GGGGGGGGCCCCAAAA", f = "GGGGGGGGCCCCAAAT")
  ab <- c(10, 3, 3, 1, 2, 1)
  res <- bioaccel_cluster(seqs, abundance = ab, backend = "cpu", threads = 1)
  expect_identical(names(res), c("id", "cluster", "seed", "abundance"))
  expect_identical(res$id, names(seqs))
  expect_identical(res$cluster, c(1L, 1L, 1L, 3L, 2L, 2L))
  expect_identical(res$seed, c("a", "a", "a", "d", "e", "e"))
  expect_identical(res$abundance, as.integer(ab))  # integer where it fits (was double)
  # ids holding ;size=N, and single linkage at d = 4 joins d to a's OTU
  named <- setNames(seqs, paste0(names(seqs), ";size=", ab))
  link <- bioaccel_cluster(named, method = "linkage", d = 4)
  expect_identical(link$id, names(seqs))
  expect_identical(link$cluster, c(1L, 1L, 1L, 1L, 2L, 2L))
  # a FASTA file; fastidious grafting at a boundary of 4 leaves e's swarm (mass 3) light
  path <- tempfile(fileext = ".fa")
  on.exit(unlink(path))
  writeLines(paste0(">", names(named), "\n", seqs), path)
  f <- bioaccel_cluster(path, fastidious = TRUE, boundary = 4)
  expect_identical(f$cluster, res$cluster)
  expect_identical(f$abundance, as.integer(ab))
  # the pairs of `bioaccel neighbors`, in one table or in shards, give the same OTUs
  pairs <- tempfile(fileext = ".npz")
  shards <- c(tempfile(fileext = ".npz"), tempfile(fileext = ".npz"))
  on.exit(unlink(c(pairs, shards)), add = TRUE)
  bioaccel:::.run(c("neighbors", shQuote(path), "-d", "2", "-o", shQuote(pairs)))
  for (k in 1:2) {
    bioaccel:::.run(c("neighbors", shQuote(path), "-d", "2", "--shard", sprintf("%d/2", k),
                      "-o", shQuote(shards[k])))
  }
  for (d in 1:2) {
    searched <- bioaccel_cluster(path, d = d)
    expect_identical(bioaccel_cluster(path, d = d, edges = pairs), searched)
    expect_identical(bioaccel_cluster(path, d = d, edges = shards), searched)
  }
  expect_error(bioaccel_cluster(path, d = 3, edges = pairs), "-d 3 or more")
  expect_error(bioaccel_cluster(path, edges = shards[1]), "shard")
  expect_error(bioaccel_cluster(seqs, abundance = ab, edges = pairs), "give that file")
  # swarm's default annotation, id_N: in a file and in the names
  under <- tempfile(fileext = ".fa")
  on.exit(unlink(under), add = TRUE)
  writeLines(paste0(">", names(seqs), "_", ab, "\n", seqs), under)
  u <- bioaccel_cluster(under, abundance_annotation = "underscore")
  expect_identical(u, res)
  expect_identical(bioaccel_cluster(setNames(seqs, paste0(names(seqs), "_", ab)),
                                    abundance_annotation = "underscore"), res)
  expect_error(bioaccel_cluster(under), "give --abundance-annotation underscore")
  g <- bioaccel_cluster(seqs, abundance = ab, method = "greedy", identity = 0.9)
  expect_identical(g$seed[1:2], c("a", "a"))
  # ragged ends: x is y with 3 letters more at its start; free as an overhang, 3 edits else
  ragged <- c(y = "ACGTTGCAAGGCTTACCGATTGACCATG", x = "GGGACGTTGCAAGGCTTACCGATTGACCATG")
  lon <- bioaccel_cluster(ragged, abundance = c(5, 1), method = "greedy", identity = 0.95)
  sho <- bioaccel_cluster(ragged, abundance = c(5, 1), method = "greedy", identity = 0.95,
                          identity_definition = "shorter")
  expect_identical(lon$seed, c("y", "x"))
  expect_identical(sho$seed, c("y", "y"))
  expect_error(bioaccel_cluster(ragged, abundance = c(5, 1), identity_definition = "shorter"),
               "applies to --method greedy only")
})

test_that("bioaccel_cluster refuses bad input in the user's terms", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  expect_error(bioaccel_cluster(c(a = "ACGT", b = "ACGA")), "no ;size=N annotation")
  expect_error(bioaccel_cluster(c(a = "ACGT", b = "ACGT"), abundance = c(2, 1)),
               "hold the same sequence")
  expect_error(bioaccel_cluster(c(a = "ACGT", b = "ACGA"), abundance = c(2, 0)), "positive whole")
  expect_error(bioaccel_cluster(c(a = "MKVL", b = "ACGA"), abundance = c(2, 1)),
               "invalid letter 'L'")
  expect_error(bioaccel_cluster("no/such.fa"), "no such file")
  # the command line's name for d, in ...: refused, not dropped for d's default
  expect_error(bioaccel_cluster(c(a = "ACGT", b = "ACGA"), abundance = c(2, 1), max_distance = 0),
               "max_distance is given twice: .* its own argument d .* as d = ")
})

test_that("a named abundance is matched by name, an unnamed one by position", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  seqs <- c(a = "ACGTACGTACGTAAAA", b = "ACGTACGTACGTAAAT")
  # before: by position whatever the names (a got 5 and seeded the OTU)
  got <- bioaccel_cluster(seqs, abundance = c(b = 5, a = 1))
  expect_identical(got$abundance, c(1L, 5L))
  expect_identical(got$seed, c("b", "b"))
  expect_identical(bioaccel_cluster(seqs, abundance = c(1, 5)), got)
  expect_error(bioaccel_cluster(seqs, abundance = c(b = 5, c = 1)),
               "^abundance: the name 'c' is not one of the sequences' names")
  expect_error(bioaccel_cluster(seqs, abundance = c(b = 5, b = 1)), "^abundance: the name 'b' is used twice")
  expect_error(bioaccel_cluster(c(seqs, c = "GGGG"), abundance = c(b = 5, a = 1)),
               "^abundance: no value named 'c'")
  expect_error(bioaccel_cluster(seqs, abundance = c("5", "1")), "positive whole numbers")
})

test_that("the abundance column is the one the clustering used: default_abundance included", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  path <- tempfile(fileext = ".fa")
  on.exit(unlink(path))
  writeLines(c(">x", "ACGTACGTACGTAAAA", ">y;size=4", "ACGTACGTACGTAAAT", ">z", "GGGGCCCCAAAATTTT"), path)
  # before: NA for the records without ;size=N
  got <- bioaccel_cluster(path, default_abundance = 3)
  expect_identical(got$id, c("x", "y", "z"))
  expect_identical(got$abundance, c(3L, 4L, 3L))
  expect_error(bioaccel_cluster(path), "default-abundance|;size=")
  seqs <- c(x = "ACGTACGTACGTAAAA", "y;size=4" = "ACGTACGTACGTAAAT", z = "GGGGCCCCAAAATTTT")
  expect_identical(bioaccel_cluster(seqs, default_abundance = 3), got)
  expect_error(bioaccel_cluster(seqs, default_abundance = 0),
               "^default_abundance = 0: expected a positive whole number$")
})

test_that("bioaccel_cluster passes on only the settings given, and refuses bad ones by name", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  path <- tempfile(fileext = ".fa")
  seeds <- tempfile(fileext = ".fa")
  on.exit(unlink(c(path, seeds)))
  writeLines(c(">a;size=5", "ACGTACGTACGTAAAA", ">b;size=1", "ACGTACGTACGTAAAT"), path)
  # before: d was dropped for greedy, and "edit" / "longer" were sent when not given
  expect_error(bioaccel_cluster(path, method = "greedy", d = 5), "-d does not apply to --method greedy")
  expect_error(bioaccel_cluster(path, method = "greedy", differences = "swarm"),
               "--differences swarm does not apply to --method greedy")
  expect_identical(bioaccel_cluster(path, method = "greedy", identity = 0.9)$seed, c("a", "a"))
  # before: anything but TRUE ran non-fastidious
  for (bad in list("yes", 1, NA)) {
    expect_error(bioaccel_cluster(path, fastidious = bad),
                 sprintf("^fastidious = %s: expected TRUE or FALSE$", deparse(bad)))
  }
  expect_error(bioaccel_cluster(path, d = NA), "^d = NA: expected a value, not NA$")
  # before: overridden silently and never written
  expect_error(bioaccel_cluster(path, output = "x.txt"), "^output: bioaccel_cluster\\(\\) writes the OTU list")
  expect_error(bioaccel_cluster(path, assignments = "ra.tsv"), "^assignments: bioaccel_cluster\\(\\) writes")
  bioaccel_cluster(path, seeds = seeds)
  expect_identical(readLines(seeds), c(">a;size=6;", "ACGTACGTACGTAAAA"))
  expect_error(bioaccel_cluster(c(a = "ACGT", b = "ACGA"), abundance = c(2, 1), seeds = seeds),
               "^seeds: written only for a FASTA file")
})

test_that("bioaccel_cluster refuses NA sequences, directories, several paths and no input clearly", {
  # before: NA became the sequence "NA"
  expect_error(bioaccel_cluster(c(a = "ACGT", b = NA), abundance = c(2, 1)), "^amplicons: sequence 'b' is NA$")
  # before: "cannot open the connection", a warning and a leaked connection
  open_before <- nrow(showConnections())
  expect_error(bioaccel_cluster(tempdir()), "is a directory; expected a FASTA file of amplicons$")
  expect_identical(nrow(showConnections()), open_before)
  # before: "every sequence needs a name"
  a <- tempfile(fileext = ".fa")
  b <- tempfile(fileext = ".fa")
  on.exit(unlink(c(a, b)))
  writeLines(c(">a;size=1", "ACGT"), a)
  writeLines(c(">b;size=1", "ACGT"), b)
  expect_error(bioaccel_cluster(c(a, b)), "^amplicons: 2 file paths; give one file")
  expect_error(bioaccel_cluster(character(0)), "^amplicons: the input is empty")
  expect_error(bioaccel_cluster(NA_character_), "^amplicons: NA; expected the path of a FASTA file")
})

test_that("sequences given in R give the OTUs of the same records in a file, in its order", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  # swarm breaks ties of abundance on the headers: before, on this package's placeholders
  # (bioaccel.amplicons1., bioaccel.amplicons10., ...), so the OTUs came in another order
  set.seed(5)
  seqs <- replicate(12, paste(sample(c("A", "C", "G", "T"), 30, TRUE), collapse = ""))
  ids <- rev(sprintf("otu%02d", 1:12))
  ab <- rep(c(3, 1), 6)
  path <- tempfile(fileext = ".fa")
  on.exit(unlink(path))
  writeLines(paste0(">", ids, ";size=", ab, "\n", seqs), path)
  from_file <- bioaccel_cluster(path)
  expect_identical(from_file$cluster[match(c("otu02", "otu12"), from_file$id)], c(1L, 6L))
  expect_identical(bioaccel_cluster(setNames(seqs, paste0(ids, ";size=", ab))), from_file)
  expect_identical(bioaccel_cluster(setNames(seqs, ids), abundance = ab), from_file)
  expect_identical(bioaccel_cluster(setNames(seqs, ids), abundance = setNames(ab, ids)[12:1]),
                   from_file)
})
