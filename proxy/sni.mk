# proxy/sni.mk: filled in by its component
