globins <- c(HBB_HUMAN = "VHLTPEEKSAVTALWGKVNVDEVGGEALGRLLVVYPWTQRFFESFGDLSTPDAVMGNPKVKAHGKKVLGAFSDGLAHLDNLKGTFATLSELHCDKLHVDPENFRLLGNVLVCVLAHHFGKEFTPPVQAAYQKVVAGVANALAHKYH",
             HBA_HUMAN = "VLSPADKTNVKAAWGKVGAHAGEYGAEALERMFLSFPTTKTYFPHFDLSHGSAQVKGHGKKVADALTNAVAHVDDMPNALSALSDLHAHKLRVDPVNFKLLSHCLLVTLAAHLPAEFTPAVHASLDKFLASVSTVLTSKYR",
             `MYG PHYCA` = "VLSEGEWQLVLHVWAKVEADVAGHGQDILIRLFKSHPETLEKFDRVKHLKTEAEMKASEDLKKHGVTVLTALGAILKKKGHHEAELKPLAQSHATKHKIPIKYLEFISEAIIHVLHSRHPGDFGADAQGAMNKALELFRKDIAAKYKELGYQG",
             GLB5_PETMA = "PIVDTGSVAPLSAAEKTKIRSAWAPVYSTYETSGVDILVKFFTSTPAAQEFFPKFKGLTTADQLKKSADVRWHAERIINAVNDAVASMDDTEKMSMKLRDLSGKHAKSFQVDPQYFKVLAAVIADTVAAGDAGFEKLMSMICILLRSAY")

test_that("msa() returns an ape alignment whose rows, gaps removed, are the input", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  aln <- msa(globins, threads = 1)
  expect_s3_class(aln, "AAbin")
  expect_true(is.matrix(aln))
  expect_identical(rownames(aln), names(globins))          # input order, names with spaces kept
  rows <- apply(as.character(aln), 1, paste, collapse = "")
  expect_identical(unname(toupper(gsub("-", "", rows))), unname(globins))
  # phangorn takes it as it is, and ape's distances run on it
  pd <- phangorn::as.phyDat(aln)
  expect_s3_class(pd, "phyDat")
  expect_identical(names(pd), names(globins))
  d <- ape::dist.aa(aln)
  expect_identical(attr(d, "Labels"), names(globins))
  # an alignment given back is realigned from its letters: the same result
  expect_identical(as.character(msa(aln, threads = 1)), as.character(aln))
})

test_that("msa() on DNA gives a DNAbin that dist.dna reads", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  data(woodmouse, package = "ape")
  seqs <- woodmouse_strings()[1:5]
  seqs <- vapply(seqs, function(s) gsub("N", "", substr(s, 1, 200)), "")
  aln <- msa(seqs, alphabet = "dna", threads = 1)
  expect_s3_class(aln, "DNAbin")
  rows <- apply(as.character(aln), 1, paste, collapse = "")
  expect_identical(unname(toupper(gsub("-", "", rows))), unname(seqs))
  expect_equal(dim(as.matrix(ape::dist.dna(aln))), c(5L, 5L))
  expect_error(msa(c(a = "MKV", a = "MKL")), "used twice")
})

test_that("msa(as = \"character\") gives the input's own letters: RNA keeps its U", {
  skip_if_not(has_cli(), "the bioaccel command is not installed")
  # five rows of an Rfam seed (RF01855 snR75, Infernal's test suite), one of them in lower
  # case and one written as DNA (T), so the rows mix DNA and RNA
  rna <- c(`AATT01000026.1/6566-6482` = "UCAAAAUGAGGAAACGAUGACGAGUCAGACGAGUUUCUCGAUGCUGCAUAAUCUUUUUUUUUAUUCAUUCAUGCCAAAACUGAUU",
           `AAGI01000315.1/11447-11360` = "uggagaugaugcgacuucagaugacgagucugacgggcucgcccugugacgaccucauuuaaaauauccauucaugccuuuucugauc",
           `AAXI01000054.1/31430-31511` = "AAATGATGAACACTTGATGACGAGTCCGATGGGTTCGCCCGGTGAAGACTTAAATCAAAATATCCATTCATGTCAACTGATC",
           `AACD01000097.1/11630-11717` = "CUCACAUGAUGAUCUUCUAGAUGACGAGUCUUAUUUGAGUUUUCAAUGCAGACAACAUCUUUUUUUUACCAUUCAUGCAAAACUGACA",
           `AAKE03000005.1 1118422-1118509` = "ACACUGUGAUGAUUCCCUAGAUGACGAGUCUUAUUCGAGUUAUCGAUGCAGACAACAUUCUUUUUUUACCAUUCAUGCAUUUCUGACG")
  aln <- msa(rna, threads = 1, as = "character")
  expect_type(aln, "character")
  expect_identical(names(aln), names(rna))
  expect_identical(gsub("-", "", aln, fixed = TRUE), rna)
  expect_identical(length(unique(nchar(aln))), 1L)
  # from a file too, and the same columns as the ape alignment (which has no U: U as T)
  path <- tempfile(fileext = ".fa")
  on.exit(unlink(path))
  writeLines(paste0(">", sub(" .*", "", names(rna)), "\n", rna), path)
  from_file <- msa(path, threads = 1, as = "character")
  expect_identical(unname(gsub("-", "", from_file, fixed = TRUE)), unname(rna))
  dna <- apply(as.character(msa(rna, threads = 1)), 1, paste, collapse = "")
  expect_identical(unname(dna), unname(gsub("u", "t", tolower(aln))))
  expect_error(msa(rna, as = "DNAbin"), "should be one of")
})

test_that("read_family reads a family's alignment, tree, distances and job record", {
  dir <- tempfile("results")
  on.exit(unlink(dir, recursive = TRUE))
  for (sub in c("msa", "tree", "distances")) dir.create(file.path(dir, sub), recursive = TRUE)
  writeLines(c(">a", "MK-V", ">b", "MKLV", ">c", "M--V"), file.path(dir, "msa", "fam.fa"))
  writeLines('{"gpu": "2", "start": 1.0, "end": 3.5, "seconds": 2.5, "exit_status": 0}',
             file.path(dir, "msa", "fam.json"))
  writeLines("((a:1,b:2):0.5,c:3);", file.path(dir, "tree", "fam.nwk"))
  d <- as.dist(matrix(c(0, 1, 2, 1, 0, 3, 2, 3, 0), 3, dimnames = list(c("a", "b", "c"), c("a", "b", "c"))))
  write_bioaccel_dist(d, file.path(dir, "distances", "fam.cdist"))
  fam <- read_family(dir, "fam")
  expect_s3_class(fam$alignment, "AAbin")
  expect_identical(dim(fam$alignment), c(3L, 4L))
  expect_s3_class(fam$tree, "phylo")
  expect_setequal(fam$tree$tip.label, c("a", "b", "c"))
  expect_null(fam$ml_tree)
  expect_equal(as.matrix(fam$distances), as.matrix(d))
  expect_identical(fam$gpu, "2")
  expect_equal(fam$seconds, 2.5)
  # a family of one sequence: its alignment, no tree
  writeLines(c(">x", "ACGTACGT"), file.path(dir, "msa", "one.fa"))
  one <- read_family(dir, "one")
  expect_s3_class(one$alignment, "DNAbin")
  expect_null(one$tree)
  expect_error(read_family(dir, "nope"), "family nope: no alignment.*fam, one")
  writeLines(c(">a", "MKV", ">b", "MK"), file.path(dir, "msa", "bad.fa"))
  expect_error(read_family(dir, "bad"), "row 2 \\(b\\) has 2 columns")
})
