# The report's plots, each to PNG and/or PDF.

# Draws with `draw()` into `file` (a .png or .pdf), atomically: into a temporary file beside
# it, renamed when drawn; a failed drawing leaves no file. `file = NULL`: the current device.
.to_file <- function(file, width, height, draw) {
  if (is.null(file)) return(draw())
  ext <- tolower(tools::file_ext(file))
  if (!ext %in% c("png", "pdf")) stop(sprintf("%s: expected a .png or .pdf file name", file), call. = FALSE)
  if (!dir.exists(dirname(file))) stop(sprintf("%s: no such directory %s", file, dirname(file)), call. = FALSE)
  tmp <- tempfile(pattern = ".bioaccel", tmpdir = dirname(file), fileext = paste0(".", ext))
  # the temporary file is this package's business: a folder it cannot be made in names the
  # user's file (the devices open their file late, and name the temporary one)
  if (!suppressWarnings(file.create(tmp))) {
    stop(sprintf("cannot write %s: the folder %s is not writable", file, dirname(file)), call. = FALSE)
  }
  if (ext == "png") {
    png(tmp, width = width, height = height, units = "in", res = 150)
  } else {
    pdf(tmp, width = width, height = height)
  }
  device <- dev.cur()
  done <- FALSE
  on.exit({
    if (device %in% dev.list()) dev.off(device)
    if (!done) unlink(tmp)
  })
  result <- draw()
  dev.off(device)
  if (!file.rename(tmp, file)) stop(sprintf("cannot write %s", file), call. = FALSE)
  done <- TRUE
  result
}

.check_labels <- function(d, tree) {
  missing <- setdiff(tree$tip.label, attr(d, "Labels"))
  if (length(missing)) {
    stop(sprintf("tree tip %s is not in the distance matrix", missing[1]), call. = FALSE)
  }
}

# The group of each id as a factor, or NULL without groups. Groups are looked up by name,
# so an unnamed vector, or one without some id, is refused rather than guessed.
.groups_of <- function(groups, ids) {
  if (is.null(groups)) return(NULL)
  if (is.null(names(groups))) {
    stop(sprintf(paste("groups must be named by sequence id, e.g. setNames(samples, ids);",
                       "got an unnamed %s of length %d"), class(groups)[1], length(groups)),
         call. = FALSE)
  }
  missing <- setdiff(ids, names(groups))
  if (length(missing)) {
    stop(sprintf("groups has no entry for %d of the %d ids, e.g. '%s'", length(missing),
                 length(ids), missing[1]), call. = FALSE)
  }
  factor(groups[ids])
}

.palette <- function(k) {
  if (k <= 8) c("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666")[seq_len(k)]
  else hcl.colors(k, "Dark 3")
}

# Lines of right margin that hold a legend of these labels beside the plot.
.legend_lines <- function(labels, cex = 0.8) {
  1.5 + cex * (max(strwidth(labels, units = "inches")) / par("csi") + 2.5)
}

# The legend in the right margin, beside the plot region: it covers nothing drawn.
.legend_beside <- function(g, pal, pch, cex = 0.8) {
  usr <- par("usr")
  legend(usr[2], usr[4], legend = levels(g), col = pal, pch = pch, bty = "n", xpd = NA,
         cex = cex, xjust = 0, yjust = 1)
}

#' The tips of a tree, bottom to top as `plot.phylo` draws them
#'
#' @param tree an ape `phylo` (as drawn: ladderize it first if the plot does).
#' @return the tip labels, bottom to top.
#' @export
#' @examples
#' tree_order(ape::ladderize(ape::read.tree(text = "((a:1,b:1):1,(c:1,(d:1,e:1):1):1);")))
tree_order <- function(tree) {
  tips <- tree$edge[tree$edge[, 2] <= Ntip(tree), 2]
  tree$tip.label[tips]
}

#' Heatmap of the distances with the tree alongside
#'
#' Rows and columns are in the order of the (ladderized) tree's tips; row i is level with
#' tip i.
#'
#' @param d a `dist`.
#' @param tree an ape `phylo` whose tips are labels of `d`.
#' @param file a .png or .pdf file (written atomically), or `NULL` for the current device.
#' @param main the title.
#' @return the labels in row order (bottom to top), invisibly.
#' @export
#' @examples
#' d <- dist(matrix(rnorm(30), 10, dimnames = list(paste0("s", 1:10), NULL)))
#' plot_heatmap_tree(d, ape::nj(d))
plot_heatmap_tree <- function(d, tree, file = NULL, main = "Distances ordered by the tree") {
  .check_labels(d, tree)
  tree <- ladderize(tree)
  ord <- tree_order(tree)
  m <- as.matrix(d)[ord, ord, drop = FALSE]
  n <- length(ord)
  .to_file(file, 11, 8, function() {
    op <- par(no.readonly = TRUE)
    on.exit(par(op))
    layout(matrix(1:3, 1), widths = c(1.2, 3, 0.45))
    # tip i at y = i, the centre of heatmap row i: both panels span y = 0.5 .. n + 0.5
    # exactly (yaxs = "i"; plot.phylo would otherwise widen its range by 4%)
    par(mar = c(2, 0.5, 3, 0), yaxs = "i")
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
  })
  invisible(ord)
}

#' The tree, tips coloured by group
#'
#' @param tree an ape `phylo`.
#' @param groups `NULL`, or a vector of groups (e.g. samples) named by tip label.
#' @param file a .png or .pdf file (written atomically), or `NULL` for the current device.
#' @param main the title.
#' @return the ladderized tree, invisibly.
#' @export
#' @examples
#' tr <- ape::read.tree(text = "((a:1,b:1):1,(c:1,(d:1,e:1):1):1);")
#' plot_tree(tr, c(a = "x", b = "x", c = "y", d = "y", e = "y"))
plot_tree <- function(tree, groups = NULL, file = NULL, main = "Tree") {
  tree <- ladderize(tree)
  g <- .groups_of(groups, tree$tip.label)
  .to_file(file, 8, max(6, min(40, Ntip(tree) * 0.12)), function() {
    op <- par(no.readonly = TRUE)
    on.exit(par(op))
    tip_col <- "black"
    if (!is.null(g)) {
      pal <- .palette(nlevels(g))
      tip_col <- pal[as.integer(g)]
      par(mar = c(1, 1, 3, .legend_lines(levels(g))))
    }
    plot.phylo(tree, tip.color = tip_col, cex = if (Ntip(tree) > 80) 0.35 else 0.7, main = main,
               no.margin = FALSE)
    if (!is.null(g)) .legend_beside(g, pal, 15)
  })
  invisible(tree)
}

#' Principal coordinates of a `dist`, coloured by group
#'
#' Classical multidimensional scaling (`cmdscale`); the legend is drawn beside the plot.
#'
#' @param d a `dist` of finite distances.
#' @param groups `NULL`, or a vector of groups named by the labels of `d`.
#' @param file a .png or .pdf file (written atomically), or `NULL` for the current device.
#' @param main the title.
#' @return the coordinates (invisibly), with the percentage of variance of each axis as
#'   attribute `percent`.
#' @export
#' @examples
#' d <- dist(matrix(rnorm(30), 10, dimnames = list(paste0("s", 1:10), NULL)))
#' plot_pcoa(d, setNames(rep(c("A", "B"), 5), paste0("s", 1:10)))
plot_pcoa <- function(d, groups = NULL, file = NULL, main = "PCoA") {
  if (any(!is.finite(d))) stop("PCoA needs finite distances (the matrix has NaN or Inf)", call. = FALSE)
  g <- .groups_of(groups, attr(d, "Labels"))
  fit <- cmdscale(d, k = 2, eig = TRUE)
  pos <- fit$eig[fit$eig > 0]
  pct <- 100 * fit$eig[1:2] / sum(pos)
  .to_file(file, 7, 6, function() {
    op <- par(no.readonly = TRUE)
    on.exit(par(op))
    col <- "black"
    if (!is.null(g)) {
      pal <- .palette(nlevels(g))
      col <- pal[as.integer(g)]
      par(mar = c(5.1, 4.1, 4.1, .legend_lines(levels(g))))
    }
    plot(fit$points[, 1], fit$points[, 2], col = col, pch = 19,
         xlab = sprintf("PCo1 (%.1f%%)", pct[1]), ylab = sprintf("PCo2 (%.1f%%)", pct[2]), main = main)
    if (!is.null(g)) .legend_beside(g, pal, 19)
  })
  invisible(structure(fit$points, percent = pct))
}

#' Clusters per threshold: size and members per sample
#'
#' @param clusters a data.frame with columns id, sample and one `cluster_<threshold>`
#'   column per threshold (the workflow's clusters.tsv).
#' @return a data.frame: threshold, cluster, size, then one count column per sample.
#' @export
#' @examples
#' cluster_table(data.frame(id = c("x", "y", "z"), sample = c("s1", "s1", "s2"),
#'                          cluster_0.02 = c(1, 1, 2)))
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
