# tests/integration/proxy.mk: the proxy's scenarios (issue 3).
