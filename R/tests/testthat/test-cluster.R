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
  expect_identical(res$abundance, ab)
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
  expect_identical(f$abundance, ab)
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
