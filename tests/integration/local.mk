# tests/integration/local.mk: filled in by its component
