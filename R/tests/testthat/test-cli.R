has_cli <- function() nzchar(Sys.which(getOption("bioaccel.command", Sys.getenv("BIOACCEL", "bioaccel"))))

test_that("distances from R equal ape::dist.dna", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  data(woodmouse, package = "ape")
  seqs <- vapply(seq_len(nrow(woodmouse)), function(i) paste(toupper(as.character(woodmouse[i, ])), collapse = ""), "")
  names(seqs) <- rownames(woodmouse)
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
