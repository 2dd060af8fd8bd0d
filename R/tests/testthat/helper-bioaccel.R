has_cli <- function() nzchar(Sys.which(getOption("bioaccel.command", Sys.getenv("BIOACCEL", "bioaccel"))))

woodmouse_strings <- function() {
  data(woodmouse, package = "ape", envir = environment())
  seqs <- vapply(seq_len(nrow(woodmouse)), function(i) paste(toupper(as.character(woodmouse[i, ])), collapse = ""), "")
  setNames(seqs, rownames(woodmouse))
}

# Evaluates `expr` while the package `ns` calls `spy(original)` in place of its function
# (or imported function) `name`: a spy calls the original and records what it drew.
with_spy <- function(name, ns, spy, expr) {
  env <- asNamespace(ns)
  if (!exists(name, envir = env, inherits = FALSE)) env <- parent.env(env)  # the imports
  original <- get(name, envir = env, inherits = FALSE)
  unlockBinding(name, env)
  assign(name, spy(original), envir = env)
  on.exit({
    assign(name, original, envir = env)
    lockBinding(name, env)
  })
  expr
}

# Files left in a directory, hidden ones included.
files_in <- function(dir) list.files(dir, all.files = TRUE, no.. = TRUE)
