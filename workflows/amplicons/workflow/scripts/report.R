# The amplicon report: a phyloseq object (OTU table, sample data with the read tracking,
# taxonomy and representative sequences when there), rarefaction curves (vegan), alpha
# diversity per sample, a Bray-Curtis PCoA (phyloseq::ordinate) and the read tracking,
# each as PNG and PDF.
log <- file(snakemake@log[[1]], open = "wt")
sink(log)
sink(log, type = "message")
# an error goes to the log with the rest, and its one line to the terminal too (fd 2 itself:
# the message stream is sunk into the log), so Snakemake's failure says what went wrong
options(error = function() {
  said <- trimws(gsub("\\s+", " ", geterrmessage()))
  err <- file("/dev/stderr", open = "w")
  cat(sprintf("%s: %s\n", "report", said), file = err)
  close(err)
  quit(save = "no", status = 1)
})
suppressPackageStartupMessages({
  library(phyloseq)
  library(vegan)
  library(ggplot2)
})
out <- snakemake@output
# every output is written to a temporary name first and renamed when complete
finish <- function(tmp, path) stopifnot(file.rename(tmp, path))
tmpname <- function(path) {
  ext <- tools::file_ext(path)
  sub(paste0("\\.", ext, "$"), paste0(".tmp.", ext), path)
}

counts <- read.delim(snakemake@input[["table"]], check.names = FALSE, row.names = 1,
                     colClasses = c("character"))
counts <- as.matrix(counts)
storage.mode(counts) <- "numeric"
tracking <- read.delim(snakemake@input[["tracking"]], check.names = FALSE,
                       colClasses = c(sample = "character"))
rownames(tracking) <- tracking$sample
parts <- list(
  otu_table(counts, taxa_are_rows = TRUE),
  sample_data(tracking[colnames(counts), , drop = FALSE])
)
if (length(snakemake@input[["taxonomy"]]) > 0) {
  tax <- read.delim(snakemake@input[["taxonomy"]], check.names = FALSE, row.names = 1,
                    colClasses = "character")
  tax <- as.matrix(tax[rownames(counts), , drop = FALSE])
  tax[tax == ""] <- NA
  parts <- c(parts, list(tax_table(tax)))
}
seqs <- Biostrings::readDNAStringSet(snakemake@input[["fasta"]])
parts <- c(parts, list(refseq(seqs[rownames(counts)])))
ps <- do.call(phyloseq, parts)
tmp <- paste0(out[["rds"]], ".tmp")
saveRDS(ps, tmp)
finish(tmp, out[["rds"]])
cat("phyloseq object:", ntaxa(ps), "OTUs x", nsamples(ps), "samples,",
    sum(sample_sums(ps)), "reads\n")

# draw(plot, png, pdf): one figure as PNG and PDF
draw <- function(plot, png_path, pdf_path, width = 8, height = 6) {
  for (kind in c("png", "pdf")) {
    path <- if (kind == "png") png_path else pdf_path
    tmp <- tmpname(path)
    if (kind == "png") {
      png(tmp, width = width, height = height, units = "in", res = 120)
    } else {
      pdf(tmp, width = width, height = height)
    }
    if (is.function(plot)) plot() else print(plot)
    dev.off()
    finish(tmp, path)
  }
}

# a figure that says why there is nothing to draw
message_plot <- function(text) {
  function() {
    plot.new()
    text(0.5, 0.5, text, cex = 1.2)
  }
}

samples_counts <- t(counts) # samples x OTUs, as vegan wants
nonempty <- rowSums(samples_counts) > 0

# rarefaction curves
draw(function() {
  if (!any(nonempty)) {
    message_plot("no reads in the OTU table")()
    return(invisible())
  }
  step <- max(1, floor(max(rowSums(samples_counts)) / 100))
  rarecurve(samples_counts[nonempty, , drop = FALSE], step = step, label = TRUE,
            col = seq_len(sum(nonempty)), xlab = "reads sampled", ylab = "OTUs",
            main = "Rarefaction curves")
}, out[["rarefaction_png"]], out[["rarefaction_pdf"]])

# alpha diversity
measures <- c("Observed", "Chao1", "Shannon", "Simpson")
alpha <- suppressWarnings(estimate_richness(ps, measures = measures))
alpha <- data.frame(sample = sample_names(ps), alpha, check.names = FALSE)
tmp <- tmpname(out[["alpha_tsv"]])
write.table(alpha, tmp, sep = "\t", quote = FALSE, row.names = FALSE)
finish(tmp, out[["alpha_tsv"]])
long <- do.call(rbind, lapply(intersect(c(measures, "se.chao1"), colnames(alpha)), function(m) {
  if (m == "se.chao1") return(NULL)
  data.frame(sample = alpha$sample, measure = m, value = alpha[[m]])
}))
long$measure <- factor(long$measure, levels = measures)
draw(
  ggplot(long, aes(sample, value)) +
    geom_point(size = 3, colour = "steelblue") +
    facet_wrap(~measure, scales = "free_y", nrow = 1) +
    theme_bw() +
    theme(axis.text.x = element_text(angle = 90, hjust = 1, vjust = 0.5)) +
    labs(x = NULL, y = "alpha diversity", title = "Alpha diversity per sample"),
  out[["alpha_png"]], out[["alpha_pdf"]], width = 10
)

# Bray-Curtis PCoA of the samples with reads
if (sum(nonempty) >= 3) {
  ps_nonempty <- prune_samples(names(which(nonempty)), ps)
  ord <- ordinate(ps_nonempty, method = "PCoA", distance = "bray")
  plot <- plot_ordination(ps_nonempty, ord, type = "samples") +
    geom_text(aes(label = sample), vjust = -0.8, size = 3) +
    theme_bw() +
    labs(title = "Bray-Curtis PCoA")
} else if (sum(nonempty) == 2) {
  d <- as.numeric(vegdist(samples_counts[nonempty, , drop = FALSE], method = "bray"))
  plot <- message_plot(sprintf("two samples: Bray-Curtis dissimilarity %.3f\n(a PCoA needs 3 or more)", d))
} else {
  plot <- message_plot("one sample: no ordination")
}
draw(plot, out[["ordination_png"]], out[["ordination_pdf"]])

# read tracking: reads left after each step, per sample
steps <- setdiff(colnames(tracking), c("sample", "uniques"))
track <- do.call(rbind, lapply(steps, function(s) {
  data.frame(sample = tracking$sample, step = s, reads = tracking[[s]])
}))
track$step <- factor(track$step, levels = steps)
draw(
  ggplot(track, aes(step, reads, group = sample, colour = sample)) +
    geom_line() +
    geom_point() +
    theme_bw() +
    expand_limits(y = 0) +
    labs(x = NULL, y = "reads", title = "Reads kept at each step"),
  out[["tracking_png"]], out[["tracking_pdf"]]
)
