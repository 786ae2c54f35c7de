# tests/bench/local.mk: filled in by its component
