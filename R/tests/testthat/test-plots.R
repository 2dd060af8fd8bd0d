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
