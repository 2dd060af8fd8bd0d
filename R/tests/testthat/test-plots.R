png_ok <- function(path) {
  expect_true(file.exists(path))
  expect_gt(file.size(path), 2000)
  expect_identical(readBin(path, "raw", 8), as.raw(c(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)))
}

test_that("heatmap, tree and PCoA are drawn to PNG and PDF", {
  set.seed(2)
  x <- rbind(matrix(rnorm(60, 0), 20), matrix(rnorm(60, 4), 20))
  rownames(x) <- paste0("s", 1:40)
  d <- dist(x)
  tr <- ape::nj(d)
  groups <- setNames(rep(c("A", "B"), each = 20), rownames(x))
  dir <- tempfile()
  dir.create(dir)
  ord <- plot_heatmap_tree(d, tr, file.path(dir, "h.png"))
  png_ok(file.path(dir, "h.png"))
  expect_setequal(ord, rownames(x))
  plot_heatmap_tree(d, tr, file.path(dir, "h.pdf"))
  expect_identical(readBin(file.path(dir, "h.pdf"), "raw", 4), charToRaw("%PDF"))
  plot_tree(tr, groups, file.path(dir, "t.png"))
  png_ok(file.path(dir, "t.png"))
  pts <- plot_pcoa(d, groups, file.path(dir, "p.png"))
  png_ok(file.path(dir, "p.png"))
  # the two well-separated groups split along the first axis
  expect_true(all(sign(pts[1:20, 1]) == -sign(pts[21:40, 1])))
  expect_error(plot_pcoa(d, groups, file.path(dir, "p.gif")), "png or .pdf")
})

test_that("tree order follows the drawn tree", {
  tr <- ape::ladderize(ape::read.tree(text = "((a:1,b:1):1,(c:1,(d:1,e:1):1):1);"))
  pdf(NULL)
  ape::plot.phylo(tr)
  yy <- get("last_plot.phylo", envir = ape::.PlotPhyloEnv)$yy[seq_len(ape::Ntip(tr))]
  dev.off()
  # the oracle: where ape itself drew each tip, bottom to top
  expect_identical(tree_order(tr), tr$tip.label[order(yy)])
})

test_that("cluster table counts members per sample", {
  cl <- data.frame(id = paste0("x", 1:5), sample = c("s1", "s1", "s2", "s2", "s2"),
                   cluster_2 = c(1, 1, 1, 2, 2), cluster_5 = c(1, 1, 1, 1, 1))
  tab <- cluster_table(cl)
  expect_equal(nrow(tab), 3)
  one <- tab[tab$threshold == "2" & tab$cluster == 1, ]
  expect_equal(c(one$size, one$s1, one$s2), c(3, 2, 1))
  expect_equal(tab[tab$threshold == "5", "size"], 5)
})

# Where plot_heatmap_tree put each tip (ape's record of the drawn tree) and the centre of
# each heatmap row (the y given to image(), which centres cells there), in normalised
# device coordinates.
heatmap_geometry <- function(n) {
  set.seed(n)
  tr <- ape::rtree(n, tip.label = paste0("s", seq_len(n)))
  d <- dist(matrix(rnorm(3 * n), n, dimnames = list(tr$tip.label, NULL)))
  rec <- new.env()
  tree_spy <- function(original) function(x, ...) {
    out <- original(x, ...)
    yy <- get("last_plot.phylo", envir = ape::.PlotPhyloEnv)$yy[seq_len(ape::Ntip(x))]
    rec$tips <- setNames(grconvertY(yy, "user", "ndc"), x$tip.label)
    invisible(out)
  }
  image_spy <- function(original) function(x, y, ...) {
    original(x, y, ...)
    if (is.null(rec$rows)) rec$rows <- grconvertY(y, "user", "ndc")  # the heatmap, not the key
  }
  pdf(NULL, width = 11, height = 8)
  on.exit(dev.off())
  ord <- with_spy("plot.phylo", "bioaccel", tree_spy,
                  with_spy("image", "bioaccel", image_spy, plot_heatmap_tree(d, tr)))
  list(tip = unname(rec$tips[ord]), row = rec$rows)
}

test_that("heatmap rows are level with the tree's tips", {
  for (n in c(15, 1500)) {
    g <- heatmap_geometry(n)
    expect_length(g$row, n)
    height <- mean(diff(g$row))
    expect_gt(height, 0)
    # each tip within 5% of a row height of the centre of its row
    expect_lt(max(abs(g$tip - g$row)) / height, 0.05, label = sprintf("n = %d: worst offset in rows", n))
  }
})

test_that("a plot that fails leaves no file, and an older file stays as it was", {
  tr <- ape::read.tree(text = "((a:1,b:1):1,(c:1,(d:1,e:1):1):1);")
  groups <- c(a = "x", b = "x", c = "y", d = "y", e = "y")
  dir <- tempfile()
  dir.create(dir)
  out <- file.path(dir, "t.png")
  expect_error(plot_tree(tr, unname(groups), out), "groups must be named by sequence id")
  expect_length(files_in(dir), 0)
  expect_error(plot_tree(tr, groups[1:4], out), "no entry for 1 of the 5 ids, e.g. 'e'")
  expect_error(plot_pcoa(as.dist(ape::cophenetic.phylo(tr)), unname(groups), out), "must be named")
  expect_length(files_in(dir), 0)
  # failing half-way through drawing (a title that is not text)
  writeLines("old", out)
  expect_error(plot_tree(tr, groups, out, main = sum))
  expect_error(plot_heatmap_tree(as.dist(ape::cophenetic.phylo(tr)), tr, out, main = sum))
  expect_identical(files_in(dir), "t.png")
  expect_identical(readLines(out), "old")
  plot_tree(tr, groups, out)
  png_ok(out)
  expect_identical(files_in(dir), "t.png")
})

test_that("the PCoA legend covers no point and stays on the page", {
  # a 10 x 6 grid: PCoA gives the grid back, so points fill the plot up to its corners
  xy <- as.matrix(expand.grid(x = 1:10, y = 1:6))
  rownames(xy) <- sprintf("p%02d", seq_len(nrow(xy)))
  d <- dist(xy)
  groups <- setNames(rep(c("first sample", "second sample", "third"), length.out = nrow(xy)), rownames(xy))
  rec <- new.env()
  legend_spy <- function(original) function(...) {
    out <- original(...)
    rec$rect <- out$rect
    rec$page <- grconvertX(1, "ndc", "user")
    invisible(out)
  }
  dir <- tempfile()
  dir.create(dir)
  pts <- with_spy("legend", "bioaccel", legend_spy, plot_pcoa(d, groups, file.path(dir, "p.png")))
  png_ok(file.path(dir, "p.png"))
  r <- rec$rect
  expect_type(r, "list")
  inside <- pts[, 1] >= r$left & pts[, 1] <= r$left + r$w & pts[, 2] <= r$top & pts[, 2] >= r$top - r$h
  expect_equal(sum(inside), 0)
  expect_lte(r$left + r$w, rec$page)
})

test_that("a plot into a folder that cannot be written names the user's file", {
  # the package's temporary file (.bioaccel7aa6c2125c6.png) was named instead
  d <- as.dist(matrix(c(0, 1, 2, 1, 0, 3, 2, 3, 0), 3, dimnames = list(letters[1:3], letters[1:3])))
  if (identical(Sys.info()[["effective_user"]], "root")) {
    ro <- "/proc"  # not writable even by root
  } else {
    ro <- file.path(tempfile("ro"))
    dir.create(ro)
    Sys.chmod(ro, "0555")
    on.exit(unlink(ro, recursive = TRUE, force = TRUE))
  }
  for (ext in c("png", "pdf")) {
    out <- file.path(ro, paste0("p.", ext))
    err <- tryCatch(plot_pcoa(d, NULL, out), error = conditionMessage)
    expect_identical(err, sprintf("cannot write %s: the folder %s is not writable", out, ro))
    expect_false(any(grepl("^\\.bioaccel", list.files(ro, all.files = TRUE))))
  }
})
