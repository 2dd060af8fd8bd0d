# The report's plots, each to PNG and/or PDF.

.open_device <- function(file, width = 8, height = 8) {
  ext <- tolower(tools::file_ext(file))
  if (ext == "png") {
    png(file, width = width, height = height, units = "in", res = 150)
  } else if (ext == "pdf") {
    pdf(file, width = width, height = height)
  } else {
    stop(sprintf("%s: expected a .png or .pdf file name", file), call. = FALSE)
  }
}

.check_labels <- function(d, tree) {
  missing <- setdiff(tree$tip.label, attr(d, "Labels"))
  if (length(missing)) {
    stop(sprintf("tree tip %s is not in the distance matrix", missing[1]), call. = FALSE)
  }
}

#' The tips of a (ladderized) tree, bottom to top as `plot.phylo` draws them.
tree_order <- function(tree) {
  tips <- tree$edge[tree$edge[, 2] <= Ntip(tree), 2]
  tree$tip.label[tips]
}

#' Heatmap of the distances, rows and columns in tree order, with the tree alongside.
#'
#' @param d a `dist`; @param tree an ape `phylo` with the same labels.
#' @param file a .png or .pdf file, or NULL for the current device.
plot_heatmap_tree <- function(d, tree, file = NULL, main = "Distances ordered by the tree") {
  .check_labels(d, tree)
  tree <- ladderize(tree)
  ord <- tree_order(tree)
  m <- as.matrix(d)[ord, ord, drop = FALSE]
  n <- length(ord)
  if (!is.null(file)) {
    .open_device(file, width = 11, height = 8)
    on.exit(dev.off())
  }
  layout(matrix(1:3, 1), widths = c(1.2, 3, 0.45))
  par(mar = c(2, 0.5, 3, 0))
  plot.phylo(tree, show.tip.label = n <= 60, cex = 0.5, y.lim = c(0.5, n + 0.5), no.margin = FALSE)
  finite <- m[is.finite(m)]
  zlim <- if (length(finite)) range(finite) else c(0, 1)
  if (zlim[1] == zlim[2]) zlim <- zlim + c(0, 1)
  cols <- hcl.colors(64, "YlOrRd", rev = TRUE)
  par(mar = c(2, 0.5, 3, 0.5))
  image(seq_len(n), seq_len(n), t(m), col = cols, zlim = zlim, axes = FALSE, xlab = "", ylab = "",
        main = main)
  par(mar = c(2, 0.5, 3, 3))
  image(1, seq(zlim[1], zlim[2], length.out = 64), t(matrix(seq(zlim[1], zlim[2], length.out = 64))),
        col = cols, axes = FALSE, xlab = "", ylab = "")
  axis(4, las = 1)
  invisible(ord)
}

#' The tree, tips coloured by group (e.g. sample).
plot_tree <- function(tree, groups = NULL, file = NULL, main = "Tree") {
  tree <- ladderize(tree)
  if (!is.null(file)) {
    .open_device(file, width = 8, height = max(6, min(40, Ntip(tree) * 0.12)))
    on.exit(dev.off())
  }
  tip_col <- "black"
  if (!is.null(groups)) {
    g <- factor(groups[tree$tip.label])
    pal <- .palette(nlevels(g))
    tip_col <- pal[as.integer(g)]
  }
  plot.phylo(tree, tip.color = tip_col, cex = if (Ntip(tree) > 80) 0.35 else 0.7, main = main)
  if (!is.null(groups)) legend("topright", legend = levels(g), col = pal, pch = 15, bty = "n")
  invisible(tree)
}

.palette <- function(k) {
  if (k <= 8) c("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")[seq_len(k)]
  else hcl.colors(k, "Dark 3")
}

#' Principal coordinates (classical MDS, `cmdscale`) coloured by group.
#'
#' @return the coordinates (invisibly), with the percentage of variance of each axis.
plot_pcoa <- function(d, groups = NULL, file = NULL, main = "PCoA") {
  if (any(!is.finite(d))) stop("PCoA needs finite distances (the matrix has NaN or Inf)", call. = FALSE)
  fit <- cmdscale(d, k = 2, eig = TRUE)
  pos <- fit$eig[fit$eig > 0]
  pct <- 100 * fit$eig[1:2] / sum(pos)
  if (!is.null(file)) {
    .open_device(file, width = 7, height = 6)
    on.exit(dev.off())
  }
  col <- "black"
  if (!is.null(groups)) {
    g <- factor(groups[attr(d, "Labels")])
    pal <- .palette(nlevels(g))
    col <- pal[as.integer(g)]
  }
  plot(fit$points[, 1], fit$points[, 2], col = col, pch = 19,
       xlab = sprintf("PCo1 (%.1f%%)", pct[1]), ylab = sprintf("PCo2 (%.1f%%)", pct[2]), main = main)
  if (!is.null(groups)) legend("topright", legend = levels(g), col = pal, pch = 19, bty = "n")
  invisible(structure(fit$points, percent = pct))
}

#' Clusters per threshold: size and members per sample.
#'
#' @param clusters a data.frame with columns id, sample and one `cluster_<threshold>`
#'   column per threshold (the workflow's clusters.tsv).
#' @return a data.frame: threshold, cluster, size, then one count column per sample.
cluster_table <- function(clusters) {
  cols <- grep("^cluster_", names(clusters), value = TRUE)
  if (!length(cols) || !"sample" %in% names(clusters)) {
    stop("expected columns 'sample' and cluster_<threshold>", call. = FALSE)
  }
  samples <- sort(unique(clusters$sample))
  out <- do.call(rbind, lapply(cols, function(col) {
    tab <- table(factor(clusters[[col]]), factor(clusters$sample, levels = samples))
    df <- data.frame(threshold = sub("^cluster_", "", col), cluster = as.integer(rownames(tab)),
                     size = as.integer(rowSums(tab)), check.names = FALSE)
    cbind(df, as.data.frame.matrix(tab))
  }))
  rownames(out) <- NULL
  out[order(as.numeric(out$threshold), -out$size, out$cluster), ]
}
