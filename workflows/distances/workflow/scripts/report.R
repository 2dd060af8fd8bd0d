# The workflow's report, drawn by the bioaccel R package (install it with R CMD INSTALL R/).
log <- file(snakemake@log[[1]], open = "wt")
sink(log, type = "message")
sink(log, type = "output")

if (!requireNamespace("bioaccel", quietly = TRUE)) {
  stop("the bioaccel R package is not installed: run `R CMD INSTALL R` in the bioaccel repository")
}
library(bioaccel)

d <- read_bioaccel_dist(snakemake@input[["matrix"]])
tree <- read_bioaccel_tree(snakemake@input[["tree"]])
samples <- read.delim(snakemake@input[["samples"]], quote = "", colClasses = "character")
groups <- setNames(samples$sample, samples$id)
clusters <- read.delim(snakemake@input[["clusters"]], quote = "", check.names = FALSE,
                       colClasses = c(id = "character", sample = "character"))

out <- snakemake@output
n <- attr(d, "Size")
title <- sprintf("%d sequences, %d samples", n, length(unique(groups)))
for (ext in c("png", "pdf")) {
  plot_heatmap_tree(d, tree, out[[paste0("heatmap_", ext)]], main = paste("Distances:", title))
  plot_tree(tree, groups, out[[paste0("tree_", ext)]], main = paste("Tree:", title))
  plot_pcoa(d, groups, out[[paste0("pcoa_", ext)]], main = paste("PCoA:", title))
}
tab <- cluster_table(clusters)
tmp <- paste0(out[["table"]], ".tmp")
write.table(tab, tmp, sep = "\t", quote = FALSE, row.names = FALSE)
file.rename(tmp, out[["table"]])
message(sprintf("report: %d sequences, %d cluster rows", n, nrow(tab)))
