#' bioaccel: read, compute and plot bioaccel sequence distances from R
#'
#' Reads bioaccel's binary condensed distance matrices ([read_bioaccel_dist()]) and Newick
#' trees ([read_bioaccel_tree()]); computes distances, alignments and trees by calling the
#' `bioaccel` command line ([bioaccel_distance()], [bioaccel_align_scores()],
#' [bioaccel_tree()]; see [bioaccel_command()]); draws the report's plots
#' ([plot_heatmap_tree()], [plot_tree()], [plot_pcoa()]) and tables ([cluster_table()]).
#'
#' @keywords internal
#' @importFrom ape read.tree ladderize plot.phylo Ntip
#' @importFrom stats as.dist cmdscale
#' @importFrom utils read.delim
#' @importFrom graphics image layout par plot legend axis strwidth
#' @importFrom grDevices png pdf dev.off dev.cur dev.list hcl.colors
"_PACKAGE"
