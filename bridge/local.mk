# bridge/local.mk: filled in by its component
