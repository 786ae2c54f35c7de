/*
 * tests/fuzz/fuzz-etchosts.c: the /etc/hosts reader behind the dns_failure
 * hint.  The input is "NAME\nTEXT".  Invariant checked: a name it reports
 * as listed occurs in TEXT (without case) as a whole blank-separated token
 * outside any comment, and never as the line's first field.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/etchosts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char
lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *nl = memchr(s, '\n', size);
	char name[256];
	size_t nlen, i;
	const char *text;
	size_t tlen;
	char *copy;
	int found = 0;

	if (nl == NULL || (size_t)(nl - s) >= sizeof(name))
		return 0;
	nlen = (size_t)(nl - s);
	for (i = 0; i < nlen; i++) {
		/* A normal-form name: lower case, no blanks, '#' or NUL. */
		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '#' || s[i] == '\0' ||
		    (s[i] >= 'A' && s[i] <= 'Z'))
			return 0;
		name[i] = s[i];
	}
	name[nlen] = '\0';
	text = nl + 1;
	tlen = size - nlen - 1;
	/* An exact-size heap copy, so that ASan sees any read past LEN. */
	copy = malloc(tlen ? tlen : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, text, tlen);
	if (cf_etchosts_lists(copy, tlen, name)) {
		/* Check it the slow way: line by line, token by token. */
		size_t ls = 0;
		while (ls < tlen && !found) {
			size_t le = ls, j, field = 0;
			while (le < tlen && copy[le] != '\n')
				le++;
			for (j = ls; j < le && copy[j] != '#'; ) {
				size_t k = j, n;
				while (k < le && copy[k] != '#' && copy[k] != ' ' && copy[k] != '\t' && copy[k] != '\r')
					k++;
				n = k - j;
				if (n > 0) {
					size_t m;
					if (n == nlen + 1 && copy[j + nlen] == '.')
						n = nlen;
					for (m = 0; n == nlen && m < n && lower(copy[j + m]) == name[m]; m++)
						;
					if (field > 0 && n == nlen && m == n)
						found = 1;
					field++;
				}
				j = k;
				while (j < le && (copy[j] == ' ' || copy[j] == '\t' || copy[j] == '\r'))
					j++;
			}
			ls = le + 1;
		}
		if (!found)
			abort();
	}
	free(copy);
	return 0;
}
