library(testthat)
library(bioaccel)
test_check("bioaccel")
