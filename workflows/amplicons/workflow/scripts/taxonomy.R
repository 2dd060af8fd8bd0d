# Taxonomy of the OTU representatives with DADA2's naive Bayesian classifier.
log <- file(snakemake@log[[1]], open = "wt")
sink(log)
sink(log, type = "message")
# an error goes to the log with the rest, and its one line to the terminal too (fd 2 itself:
# the message stream is sunk into the log), so Snakemake's failure says what went wrong
options(error = function() {
  said <- trimws(gsub("\\s+", " ", geterrmessage()))
  err <- file("/dev/stderr", open = "w")
  cat(sprintf("%s: %s\n", sprintf("taxonomy against %s", snakemake@input[["reference"]]), said), file = err)
  close(err)
  quit(save = "no", status = 1)
})
suppressPackageStartupMessages(library(dada2))
seqs <- Biostrings::readDNAStringSet(snakemake@input[["fasta"]])
set.seed(100) # the bootstrap draws: the same taxonomy on every run
tax <- assignTaxonomy(
  as.character(seqs), snakemake@input[["reference"]],
  minBoot = snakemake@params[["min_boot"]], multithread = snakemake@threads,
  verbose = TRUE
)
out <- data.frame(OTU = names(seqs), tax, check.names = FALSE, stringsAsFactors = FALSE)
out[is.na(out)] <- ""
tmp <- paste0(snakemake@output[[1]], ".tmp")
write.table(out, tmp, sep = "\t", quote = FALSE, row.names = FALSE)
file.rename(tmp, snakemake@output[[1]])
cat(nrow(out), "OTUs classified against", snakemake@input[["reference"]], "\n")
