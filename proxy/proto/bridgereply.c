/*
 * proxy/proto/bridgereply.c: the answer to a bridge's session request (see
 * bridgereply.h; the bridge's parser is bridge/session.c, and the grammar
 * checked here is the one it enforces).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <event2/buffer.h>

#include "base/text.h"
#include "proxy/proto/bridgereply.h"

#define VALUE_MAX_LEN 4096

static bool
value_ok(const char *s)
{
	size_t i;

	if (s == NULL || s[0] == '\0')
		return false;
	for (i = 0; s[i] != '\0'; i++)
		if (i >= VALUE_MAX_LEN || s[i] < 0x21 || s[i] > 0x7e)
			return false;
	return true;
}

int
px_bridgereply_render(struct evbuffer *out, const char *const *names,
    const char *const *values, size_t n, const char *ca_pem)
{
	struct evbuffer *body = NULL, *all = NULL;
	size_t i, j, len;
	int err = -EINVAL;

	for (i = 0; i < n; i++) {
		if (!bs_env_name_ok(names[i]) || !value_ok(values[i]))
			goto out;
		for (j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				goto out;
	}
	if (ca_pem != NULL && (ca_pem[0] == '\0' || strchr(ca_pem, '\r') != NULL))
		goto out;
	err = -ENOMEM;
	body = evbuffer_new();
	all = evbuffer_new();
	if (body == NULL || all == NULL)
		goto out;
	if (evbuffer_add_printf(body, "postern-session 1\n") < 0)
		goto out;
	for (i = 0; i < n; i++)
		if (evbuffer_add_printf(body, "env %s %s\n", names[i], values[i]) < 0)
			goto out;
	if (ca_pem != NULL) {
		len = strlen(ca_pem);
		if (evbuffer_add(body, "ca\n", 3) < 0 || evbuffer_add(body, ca_pem, len) < 0 ||
		    (ca_pem[len - 1] != '\n' && evbuffer_add(body, "\n", 1) < 0))
			goto out;
	}
	/* RFC 9112 §6.3: a Content-Length, so that a cut body is seen as one. */
	if (evbuffer_add_printf(all, "HTTP/1.1 200 OK\r\n"
	    "Content-Type: text/plain; charset=utf-8\r\n"
	    "Content-Length: %zu\r\n"
	    "Cache-Control: no-store\r\n"
	    "Connection: close\r\n\r\n", evbuffer_get_length(body)) < 0 ||
	    evbuffer_add_buffer(all, body) < 0 || evbuffer_add_buffer(out, all) < 0)
		goto out;
	err = 0;
out:
	/* evbuffer_free(NULL) is not a no-op. */
	if (body != NULL)
		evbuffer_free(body);
	if (all != NULL)
		evbuffer_free(all);
	return err;
}
