# proxy/dns.mk: filled in by its component
