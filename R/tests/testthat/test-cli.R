test_that("distances from R equal ape::dist.dna", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  data(woodmouse, package = "ape")
  seqs <- woodmouse_strings()
  for (model in c("raw", "JC69", "K80", "TN93")) {
    ours <- bioaccel_distance(seqs, tolower(model), backend = "cpu")
    ref <- ape::dist.dna(woodmouse, model = model)
    expect_equal(as.matrix(ours), as.matrix(ref), tolerance = 1e-12, ignore_attr = TRUE, label = model)
    expect_identical(attr(ours, "Labels"), attr(ref, "Labels"))
  }
})

test_that("alignment scores and trees from R", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  s <- bioaccel_align_scores(c(q = "HEAGAWGHEE"), c(t = "PAWHEAE"), mode = "global",
                             matrix = "BLOSUM50", gap_open = 8, gap_extend = 8)
  expect_identical(s["q", "t"], 1L)   # Durbin et al.'s textbook example
  d <- as.dist(matrix(c(0, 5, 9, 9, 8, 5, 0, 10, 10, 9, 9, 10, 0, 8, 7, 9, 10, 8, 0, 3, 8, 9, 7, 3, 0),
                      5, dimnames = list(letters[1:5], letters[1:5])))
  ours <- bioaccel_tree(d, "nj")
  expect_true(ape::all.equal.phylo(ape::unroot(ours), ape::unroot(ape::nj(d)), use.edge.length = TRUE))
  expect_error(bioaccel_distance(c(a = "ACGT", b = "AC"), "k80"), "bioaccel distance failed")
})

test_that("R arguments become command-line flags and plain numbers", {
  args <- bioaccel:::.cli_args(list(pairwise_deletion = TRUE, float64 = FALSE, traceback = NULL,
                                    sketch_size = 1e5, seed = 123456789, k = 15, gap_open = 2.5,
                                    devices = c(0, 2), matrix = c(2, -3), backend = "cpu",
                                    threads = 1e6 + 1, tiny = 1e-10))
  expect_identical(args, c("--pairwise-deletion", "--sketch-size", "'100000'", "--seed", "'123456789'",
                           "-k", "'15'", "--gap-open", "'2.5'", "--devices", "'0,2'",
                           "--matrix", "'2,-3'", "--backend", "'cpu'", "--threads", "'1000001'",
                           "--tiny", "'0.0000000001'"))
  expect_identical(bioaccel:::.cli_value("x", 0.1 + 0.2), "0.30000000000000004")
  expect_error(bioaccel:::.cli_args(list(float64 = NA)), "float64 = NA: expected TRUE or FALSE")
  expect_error(bioaccel:::.cli_args(list(k = Inf)), "k = Inf: expected finite numbers")
  expect_error(bioaccel:::.cli_args(list("cpu")), "must be named")
  expect_error(bioaccel:::.cli_args(list(max_distance = 1, threads = 2, max_distance = 0)),
               "max_distance is given twice")
  # NA names the user's argument and says NA (before: "expected a value, not TRUE/FALSE (e.g.
  # devices = ...)" under the command line's name)
  expect_error(bioaccel:::.cli_args(list(max_distance = NA), own = c(max_distance = "d")),
               "^d = NA: expected a value, not NA$")
  expect_error(bioaccel:::.cli_args(list(backend = NA)), "^backend = NA: expected a value, not NA$")
  expect_error(bioaccel:::.cli_args(list(max_distance = Inf), own = c(max_distance = "d")),
               "^d = Inf: expected finite numbers")
  # the function's own argument left at NULL still owns its option
  expect_error(bioaccel:::.cli_args(list(max_distance = NULL, max_distance = 0),
                                    own = c(max_distance = "d")),
               "max_distance is given twice: .* give it once, as d = ")
  # a flag takes TRUE or FALSE only (before: "yes" or 1 went on as the flag's value), and
  # every flag of the command lines is one (before: usearch_abundance = TRUE was refused)
  expect_error(bioaccel:::.cli_args(list(fastidious = "yes")), "^fastidious = \"yes\": expected TRUE or FALSE$")
  expect_error(bioaccel:::.cli_args(list(ungap = 1)), "^ungap = 1: expected TRUE or FALSE$")
  expect_identical(bioaccel:::.cli_args(list(usearch_abundance = TRUE, keep_length = TRUE)),
                   c("--usearch-abundance", "--keep-length"))
  expect_identical(bioaccel:::.cli_args(list(threads = NULL)), character())
})

test_that("msa(refine = FALSE) passes --no-refine, not nothing (the command's default refines)", {
  seen <- NULL
  spy <- function(original) function(args, inputs = list()) {
    seen <<- args
    stop("spied")
  }
  seqs <- c(a = "MKVLAAGIV", b = "MKVLGIV")
  with_spy(".run", "bioaccel", spy, expect_error(bioaccel_msa(seqs, refine = FALSE), "spied"))
  expect_true("--no-refine" %in% seen)
  expect_false("--refine" %in% seen)
  with_spy(".run", "bioaccel", spy, expect_error(bioaccel_msa(seqs, refine = TRUE), "spied"))
  expect_true("--refine" %in% seen)
  expect_false("--no-refine" %in% seen)
  with_spy(".run", "bioaccel", spy, expect_error(bioaccel_msa(seqs), "spied"))
  expect_false(any(c("--refine", "--no-refine") %in% seen))
  expect_error(bioaccel_msa(seqs, refine = NA), "^refine = NA: expected NULL, TRUE or FALSE$")
  expect_error(bioaccel_msa(seqs, no_refine = TRUE), "give it once, as refine = ")
})

test_that("pairwise deletion, large numbers and tracebacks reach the command line", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  data(woodmouse, package = "ape")
  seqs <- woodmouse_strings()
  ours <- bioaccel_distance(seqs, "k80", pairwise_deletion = TRUE, backend = "cpu")
  ref <- ape::dist.dna(woodmouse, model = "K80", pairwise.deletion = TRUE)
  expect_equal(as.matrix(ours), as.matrix(ref), tolerance = 1e-12, ignore_attr = TRUE)
  # woodmouse has missing sites, so deleting them per pair changes the distances
  expect_gt(max(abs(as.matrix(ours) - as.matrix(bioaccel_distance(seqs, "k80", backend = "cpu")))), 1e-4)
  # float64 = FALSE: the values pass through single precision
  single <- bioaccel_distance(seqs, "k80", float64 = FALSE, backend = "cpu")
  expect_equal(as.vector(single), as.vector(ape::dist.dna(woodmouse, "K80")), tolerance = 1e-6)
  expect_false(identical(as.vector(single), as.vector(ape::dist.dna(woodmouse, "K80"))))
  # a sketch size of 1e5 is passed as 100000
  short <- c(a = "ACGTACGTTAGCATCGATCGATCGGGCTAGCTAGCTAGCATCGAT", b = "ACGTACGTTAGCATCGATCGTTCGGGCTAGCTAGCAAGCATCGAT")
  expect_s3_class(bioaccel_distance(short, "mash", k = 5, sketch_size = 1e5, seed = 1e5), "dist")
  aln <- bioaccel_align_scores(c("query one" = "HEAGAWGHEE"), c("the target" = "PAWHEAE"),
                               matrix = "BLOSUM50", gap_open = 8, gap_extend = 8, traceback = TRUE)
  expect_identical(nrow(aln), 1L)
  expect_identical(c(aln$query, aln$target), c("query one", "the target"))
  expect_identical(aln$score, 1L)  # Durbin et al.'s textbook example
  expect_identical(gsub("-", "", c(aln$query_aligned, aln$target_aligned)), c("HEAGAWGHEE", "PAWHEAE"))
})

test_that("ape's DNAbin and AAbin are accepted", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  data(woodmouse, package = "ape")
  for (x in list(woodmouse, as.list(woodmouse))) {
    ours <- bioaccel_distance(x, "tn93", backend = "cpu")
    expect_equal(as.matrix(ours), as.matrix(ape::dist.dna(woodmouse, "TN93")), tolerance = 1e-12)
  }
  prot <- ape::trans(woodmouse[1:4, 1:300])
  strings <- setNames(apply(as.character(prot), 1, paste, collapse = ""), rownames(prot))
  expect_identical(bioaccel_align_scores(prot, backend = "cpu"),
                   bioaccel_align_scores(strings, backend = "cpu"))
  expect_identical(rownames(bioaccel_align_scores(prot, backend = "cpu")), rownames(woodmouse)[1:4])
  expect_error(bioaccel_distance(list(a = 1, b = 2)), "class list; expected a named character vector")
})

test_that("names keep their spaces, and problems are told in the caller's terms", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  seqs <- c("a x" = "ACGTACGTAC", "a y" = "ACGTACGTAT", "b" = "ACGAACGTAC", "\u00e9t\u00e9 #1" = "ACGAACGTAA")
  d <- bioaccel_distance(seqs, "raw", backend = "cpu")
  expect_identical(attr(d, "Labels"), names(seqs))
  expect_equal(as.matrix(d)["a x", "a y"], 0.1)
  s <- bioaccel_align_scores(seqs[1:2], seqs[3:4], backend = "cpu")
  expect_identical(dimnames(s), list(names(seqs)[1:2], names(seqs)[3:4]))
  tr <- bioaccel_tree(d)
  expect_setequal(tr$tip.label, names(seqs))
  missing <- file.path(tempdir(), "no-such.fasta")
  expect_error(bioaccel_distance(missing), "seqs: no such file .*no-such.fasta")
  expect_error(bioaccel_align_scores(c(q = "ACGT"), "HEAGAWGHEE"), "targets: no such file HEAGAWGHEE")
  expect_error(bioaccel_distance(c(a = "ACGT", a = "ACGA")), "sequence name 'a' is used twice")
  expect_error(bioaccel_distance(c("ACGT", "ACGA")), "seqs: 2 unnamed strings; expected one file path")
  # the command line's complaint names the sequence and the argument, not a temporary file
  err <- tryCatch(bioaccel_distance(c("first one" = "ACGT", "second one" = "ACG"), "k80"),
                  error = conditionMessage)
  expect_match(err, "'second one' has length 3", fixed = TRUE)
  expect_match(err, "^bioaccel distance failed \\(status 2\\): seqs: ")
  expect_no_match(err, tempdir(), fixed = TRUE)
  expect_no_match(err, "bioaccel.seqs", fixed = TRUE)
})

test_that("devices= reaches the command line", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  old <- Sys.getenv("BIOACCEL_VIRTUAL_GPUS", unset = NA)
  Sys.setenv(BIOACCEL_VIRTUAL_GPUS = "2")  # two GPUs simulated on the CPU
  on.exit(if (is.na(old)) Sys.unsetenv("BIOACCEL_VIRTUAL_GPUS") else Sys.setenv(BIOACCEL_VIRTUAL_GPUS = old))
  data(woodmouse, package = "ape")
  seqs <- woodmouse_strings()
  for (devices in list("all", c(0, 1))) {
    ours <- bioaccel_distance(seqs, "k80", devices = devices, backend = "cpu")
    expect_equal(as.matrix(ours), as.matrix(ape::dist.dna(woodmouse, "K80")), tolerance = 1e-12)
    expect_identical(attr(ours, "Labels"), rownames(woodmouse))
  }
  expect_error(bioaccel_distance(seqs, "k80", devices = 5, backend = "cpu"), "valid ids")
})

test_that("a usage error of the command line reaches R as one line", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  # click printed four lines (Usage, Try, a blank, Error), which R joined into one message
  err <- tryCatch(bioaccel_distance(c(a = "ACGT", b = "ACGA"), "k80", threads = "abc"),
                  error = conditionMessage)
  expect_match(err, paste0("^bioaccel distance failed \\(status 2\\): Invalid value for '-t' / ",
                           "'--threads': 'abc' is not a number: expected an integer from 0"))
  expect_no_match(err, "\n", fixed = TRUE)
  expect_no_match(err, "Usage:", fixed = TRUE)
})
