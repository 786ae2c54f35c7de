# proxy/http.mk: filled in by its component
