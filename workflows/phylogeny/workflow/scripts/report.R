# The workflow's report, drawn with ape, phangorn and the bioaccel R package
# (R CMD INSTALL R/ of the bioaccel repository).
log <- file(snakemake@log[[1]], open = "wt")
sink(log, type = "message")
sink(log, type = "output")

for (pkg in c("bioaccel", "ape", "phangorn")) {
  if (!requireNamespace(pkg, quietly = TRUE)) {
    stop(sprintf("the R package %s is not installed (bioaccel: R CMD INSTALL R in the bioaccel repository; ape/phangorn: apt-get install r-cran-ape r-cran-phangorn)", pkg))
  }
}
library(bioaccel)

results <- snakemake@params[["results"]]
out <- snakemake@output
summary <- read.delim(snakemake@input[["summary"]], quote = "", colClasses = c(family = "character", gpu = "character", tree = "character"))

# phangorn: the parsimony score of each NJ tree on its alignment
summary$parsimony <- NA_integer_
fams <- lapply(summary$family, function(f) read_family(results, f))
names(fams) <- summary$family
for (f in summary$family) {
  fam <- fams[[f]]
  if (!is.null(fam$tree)) {
    # the tree's rows only: rows without a residue are left out of the tree (distances.py)
    aln <- fam$alignment[fam$tree$tip.label, , drop = FALSE]
    summary[summary$family == f, "parsimony"] <- phangorn::parsimony(fam$tree, phangorn::as.phyDat(aln))
  }
}

atomic <- function(path, write) {
  tmp <- paste0(path, ".tmp")
  write(tmp)
  if (!file.rename(tmp, path)) stop(sprintf("cannot write %s", path))
}
atomic(out[["tsv"]], function(p) write.table(summary, p, sep = "\t", quote = FALSE, row.names = FALSE))

draw_family <- function(fam, row) {
  if (is.null(fam$tree)) {
    plot.new()
    title(main = sprintf("%s: no tree", fam$family))
    text(0.5, 0.5, sprintf("%s holds %d sequence(s) with residues: a tree needs at least two", fam$family, row$sequences))
  } else {
    plot_tree(fam$tree, main = sprintf("%s: NJ tree, %d sequences, %d columns (GPU %s, %.2f s)",
                                       fam$family, row$sequences, row$columns, row$gpu, row$alignment_seconds))
  }
}

# one PNG per family, and every family on a page of one PDF
pngs <- unlist(out[["trees"]])
for (k in seq_along(summary$family)) {
  f <- summary$family[k]
  target <- pngs[basename(pngs) == paste0(f, ".png")]
  dir.create(dirname(target), showWarnings = FALSE, recursive = TRUE)
  h <- max(6, 0.15 * summary$sequences[k])
  atomic(target, function(p) {
    png(p, width = 9, height = h, units = "in", res = 120, type = "cairo")
    on.exit(dev.off())
    draw_family(fams[[f]], summary[k, ])
  })
}
atomic(out[["pdf"]], function(p) {
  pdf(p, width = 9, height = 11)
  on.exit(dev.off())
  for (k in seq_along(summary$family)) draw_family(fams[[summary$family[k]]], summary[k, ])
})

# the summary table as an image
atomic(out[["table"]], function(p) {
  shown <- summary
  # NA (the parsimony of a family without a tree) as "-": nchar(NA) is NA, which made every
  # column position NA and the whole table blank
  shown$parsimony <- ifelse(is.na(shown$parsimony), "-", as.character(shown$parsimony))
  shown$gap_fraction <- sprintf("%.3f", shown$gap_fraction)
  shown$alignment_seconds <- sprintf("%.2f", shown$alignment_seconds)
  rows <- nrow(shown) + 1
  png(p, width = 11, height = max(2.5, 0.35 * rows + 1), units = "in", res = 120, type = "cairo")
  on.exit(dev.off())
  par(mar = c(0.5, 0.5, 2, 0.5))
  plot.new()
  title(main = sprintf("%d families", nrow(shown)))
  cols <- names(shown)
  widths <- vapply(cols, function(col) max(nchar(c(col, as.character(shown[[col]]))), na.rm = TRUE), 1) + 2
  x <- c(0, cumsum(widths)[-length(widths)]) / sum(widths)
  y <- 1 - (seq_len(rows) - 0.5) / rows
  text(x, y[1], cols, adj = 0, font = 2, cex = 0.8)
  for (i in seq_len(nrow(shown))) {
    cells <- as.character(unlist(shown[i, ]))
    cells[is.na(cells)] <- "-"
    text(x, y[i + 1], cells, adj = 0, cex = 0.8)
  }
})

# the heatmap of one family's distances, ordered by its tree
hf <- snakemake@params[["heatmap_family"]]
if (length(out[["heatmap"]]) && !is.null(hf)) {
  fam <- fams[[hf]]
  plot_heatmap_tree(fam$distances, fam$tree, unlist(out[["heatmap"]]),
                    main = sprintf("%s: distances ordered by the NJ tree", hf))
}
message(sprintf("report: %d families, %d with a tree", nrow(summary), sum(!is.na(summary$parsimony))))
