/*
 * conf/secret.c: named secrets (see secret.h): the inject line parser, the
 * built-in providers, the part of the build that resolves every session's
 * secrets = and reads the values, the placeholders, and the lookups the
 * proxy makes on a request.
 *
 * A value is held only in its struct cf_secret, in OpenSSL's secure heap
 * when the process set one up (px_engine_harden(): locked, never in a core
 * file) and on the plain heap when there is none or it is full, wiped when
 * the snapshot goes; no message here ever shows it.
 */
#include "conf/secmem.h"
#include "conf/secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "conf/awskey.h"
#include "conf/build.h"
#include "conf/config.h"
#include "conf/rule.h"

struct cf_secret {
	char *name;
	int builtin;
	int used;               /* some served session selects it */
	int named;              /* some session names it, served or not */
	char *from_env, *from_file, *placeholder_env;
	const char *also_env;   /* a built-in's second variable, or NULL */
	char *placeholder_prefix;       /* NULL: from the list of formats */
	char *source;           /* "env NAME" / "file PATH" */
	struct cf_inject *inject;
	size_t ninject;
	int always;             /* inject_when = always */
	enum cf_secret_kind kind;
	struct cf_aws *aws;     /* kind = aws-sigv4 */
	struct cf_inject aws_inj;       /* its binding: no CF_INJECT_* kind */
	char *mint[CF_MINT_NKEYS];      /* a minted kind's settings */
	char *value;            /* NULL until read; wiped when freed */
	size_t vlen;
	char *refresh;          /* a minted kind's refresh token, as VALUE */
	size_t rlen;
	char *pem;              /* a github-app's private key, as VALUE */
	size_t pemlen;
	const char *file;       /* NULL for a built-in */
	int line;
};

struct cfsec_set {
	struct cf_secret **v;   /* the file's [secret]s, then the built-ins */
	size_t n;
};

/* ---- the built-in providers -------------------------------------------- */

/*
 * Every config has these (design: one variable each, the one the
 * provider's own tools read first); a [secret] of the same name replaces
 * one.  They are read only when a session selects them.  PLACEHOLDER is
 * the prefix of the provider's usual key (a listed format, below), taken
 * when the value starts with no listed one.
 */
static const struct {
	const char *name, *env, *placeholder;
	const char *inject[3];
	int always;
	const char *also_env;	/* a client that reads the key from another name */
} builtins[] = {
	{ "anthropic", "ANTHROPIC_API_KEY", "sk-ant-api03-", { "api.anthropic.com header x-api-key", NULL }, 0, NULL },
	/* codex exec reads its key from CODEX_API_KEY. */
	{ "openai", "OPENAI_API_KEY", "sk-proj-",
	    { "api.openai.com header Authorization \"Bearer %s\"", NULL }, 0, "CODEX_API_KEY" },
	{ "openrouter", "OPENROUTER_API_KEY", "sk-or-v1-",
	    { "openrouter.ai header Authorization \"Bearer %s\"", NULL }, 0, NULL },
	{ "mistral", "MISTRAL_API_KEY", NULL,
	    { "api.mistral.ai header Authorization \"Bearer %s\"", NULL }, 0, NULL },
	{ "deepseek", "DEEPSEEK_API_KEY", "sk-",
	    { "api.deepseek.com header Authorization \"Bearer %s\"", NULL }, 0, NULL },
	{ "google", "GEMINI_API_KEY", "AIza",
	    { "generativelanguage.googleapis.com header x-goog-api-key", NULL }, 0, NULL },
	/* git sends a credential only after a 401: on every request. */
	{ "github", "GH_TOKEN", "ghp_", { "api.github.com header Authorization \"Bearer %s\"",
	    "github.com basic x-access-token", NULL }, 1, NULL },
};

/* ---- placeholders -------------------------------------------------------- */

static const char ALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
static const char HEX[] = "0123456789abcdef";

/*
 * The public formats a placeholder takes: PREFIX, then LEN characters of
 * ALPHABET, a length the vendor's keys have (clients that check a key's
 * shape take it).  An entry with a PROVIDER is for the secret of that name
 * only (DeepSeek's and OpenAI's legacy keys share "sk-").  Every prefix is
 * at most 16 URL-unreserved characters (the fuzz target relies on it), and
 * every LEN at least CF_PLACEHOLDER_MIN_RANDOM.
 */
static const struct ph_format {
	const char *provider;
	const char *prefix;
	unsigned len;
	const char *alphabet;
} formats[] = {
	{ NULL, "sk-ant-api03-", 95, ALNUM },           /* Anthropic API key */
	{ NULL, "sk-ant-admin01-", 95, ALNUM },         /* Anthropic admin key */
	{ NULL, "sk-ant-oat01-", 95, ALNUM },           /* Claude Code OAuth token */
	{ NULL, "sk-proj-", 156, ALNUM },               /* OpenAI project key */
	{ NULL, "sk-svcacct-", 156, ALNUM },            /* OpenAI service account */
	{ NULL, "sk-admin-", 156, ALNUM },              /* OpenAI admin key */
	{ NULL, "sk-or-v1-", 64, HEX },                 /* OpenRouter */
	{ "deepseek", "sk-", 32, HEX },                 /* DeepSeek */
	{ NULL, "sk-", 48, ALNUM },                     /* OpenAI legacy key */
	{ NULL, "AIza", 35, ALNUM },                    /* Google API key */
	{ NULL, "github_pat_", 82, ALNUM },             /* GitHub fine-grained */
	{ NULL, "ghp_", 36, ALNUM },                    /* GitHub classic */
	{ NULL, "gho_", 36, ALNUM },                    /* GitHub OAuth (gh) */
	{ NULL, "ghu_", 36, ALNUM },                    /* GitHub App user */
	{ NULL, "ghs_", 36, ALNUM },                    /* GitHub App server */
	{ NULL, "ghr_", 36, ALNUM },                    /* GitHub refresh */
	{ NULL, "glpat-", 20, ALNUM },                  /* GitLab */
	{ NULL, "hf_", 34, ALNUM },                     /* Hugging Face */
	{ NULL, "gsk_", 52, ALNUM },                    /* Groq */
	{ NULL, "xai-", 80, ALNUM },                    /* xAI */
};

/* Past a prefix of no listed format: this many random letters and digits. */
#define PH_DEFAULT_LEN 32

static unsigned char ph_key[32];
static int ph_key_ready;

/*
 * The process's placeholder key, drawn once.  Config snapshots are built
 * on one thread (start-up, then the loop's reloads), so no lock.
 */
static int
placeholder_key(void)
{
	size_t got = 0;

	while (!ph_key_ready && got < sizeof(ph_key)) {
		ssize_t n = getrandom(ph_key + got, sizeof(ph_key) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	ph_key_ready = 1;
	return 0;
}

/* A stream of bytes: HMAC-SHA-256(key, attempt | block | session NUL
 * secret NUL prefix NUL alphabet NUL), one 32-byte block at a time.  MSG
 * holds the input, its first 8 bytes rewritten for each block. */
struct stream {
	unsigned char *msg;
	size_t msglen;
	unsigned attempt, block;
	unsigned char buf[32];
	size_t pos;
};

static int
stream_byte(struct stream *st, unsigned char *out)
{
	if (st->pos == 0 || st->pos >= sizeof(st->buf)) {
		unsigned int n = 0;
		st->msg[0] = (unsigned char)st->attempt;
		st->msg[1] = (unsigned char)(st->attempt >> 8);
		st->msg[2] = (unsigned char)st->block;
		st->msg[3] = (unsigned char)(st->block >> 8);
		st->msg[4] = (unsigned char)(st->block >> 16);
		st->msg[5] = (unsigned char)(st->block >> 24);
		if (HMAC(EVP_sha256(), ph_key, sizeof(ph_key), st->msg, st->msglen, st->buf, &n) == NULL ||
		    n != sizeof(st->buf))
			return -EIO;
		st->block++;
		st->pos = 0;
	}
	*out = st->buf[st->pos++];
	return 0;
}

/* A random character of the N in SET, without modulo bias. */
static int
pick(struct stream *st, const char *set, size_t n, char *out)
{
	unsigned char c;
	unsigned limit = 256 - 256 % (unsigned)n;

	do {
		if (stream_byte(st, &c) != 0)
			return -EIO;
	} while (c >= limit);
	*out = set[c % n];
	return 0;
}

/* Nonzero when format F applies to the secret named SECRET. */
static int
format_for(const struct ph_format *f, const char *secret)
{
	return f->provider == NULL || strcmp(f->provider, secret) == 0;
}

/*
 * The format of the placeholder of SECRET: the listed one whose prefix is
 * PREFIX when one is set (else PREFIX and the default length); else the
 * listed one whose prefix starts VALUE, the longest, the provider's own on
 * a tie; else the provider's own; else no prefix.  Only which entry of the
 * list matched is learnt from VALUE.
 */
static void
choose_format(const char *secret, const char *prefix, const char *value, size_t vlen,
    struct ph_format *out)
{
	const struct ph_format *best = NULL;
	size_t i, pl, bl = 0;

	out->provider = NULL;
	out->prefix = "";
	out->len = PH_DEFAULT_LEN;
	out->alphabet = ALNUM;
	if (prefix == NULL) {
		for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
			if (strcmp(builtins[i].name, secret) == 0)
				prefix = builtins[i].placeholder;
		for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
			const struct ph_format *f = &formats[i];
			pl = strlen(f->prefix);
			if (!format_for(f, secret) || pl > vlen || memcmp(value, f->prefix, pl) != 0)
				continue;
			if (best == NULL || pl > bl || (pl == bl && f->provider != NULL)) {
				best = f;
				bl = pl;
			}
		}
		if (best != NULL) {
			*out = *best;
			return;
		}
		if (prefix == NULL)
			return;
	}
	out->prefix = prefix;
	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (format_for(&formats[i], secret) && strcmp(formats[i].prefix, prefix) == 0 &&
		    (best == NULL || formats[i].provider != NULL))
			best = &formats[i];
	if (best != NULL)
		*out = *best;
}

int
cf_placeholder_prefix_ok(const char *prefix)
{
	size_t i, len = strlen(prefix);

	if (len > CF_PLACEHOLDER_PREFIX_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (!((prefix[i] >= 'a' && prefix[i] <= 'z') || (prefix[i] >= 'A' && prefix[i] <= 'Z') ||
		    (prefix[i] >= '0' && prefix[i] <= '9') || strchr("-._~", prefix[i]) != NULL))
			return 0;
	return 1;
}

/* Draw the placeholder of format F for SECRET in SESSION into OUT (SIZE
 * bytes), never VALUE (VLEN bytes; VALUE NULL: no value to avoid). */
static long
draw(const char *session, const char *secret, const struct ph_format *fp, const char *value,
    size_t vlen, char *out, size_t size)
{
	struct ph_format f = *fp;
	struct stream st;
	size_t pl, n, i, sl, nl, fl, al;
	long rc = -EIO;

	if ((rc = placeholder_key()) != 0)
		return rc;
	pl = strlen(f.prefix);
	n = pl + f.len;
	if (size < n + 1)
		return -ENOSPC;
	/* The value is not an input: the same format gives the same
	 * placeholder whatever the value. */
	memset(&st, 0, sizeof(st));
	sl = strlen(session) + 1;
	nl = strlen(secret) + 1;
	fl = pl + 1;
	al = strlen(f.alphabet) + 1;
	st.msglen = 8 + sl + nl + fl + al;
	if ((st.msg = calloc(1, st.msglen)) == NULL)
		return -ENOMEM;
	memcpy(st.msg + 8, session, sl);
	memcpy(st.msg + 8 + sl, secret, nl);
	memcpy(st.msg + 8 + sl + nl, f.prefix, fl);
	memcpy(st.msg + 8 + sl + nl + fl, f.alphabet, al);
	memcpy(out, f.prefix, pl);
	out[n] = '\0';
	rc = -EIO;
	for (st.attempt = 0; st.attempt < 16; st.attempt++) {
		st.block = 0;
		st.pos = 0;
		for (i = pl; i < n; i++)
			if (pick(&st, f.alphabet, al - 1, &out[i]) != 0)
				goto out;
		/* A value that happens to be the placeholder: draw again. */
		if (value == NULL || n != vlen || CRYPTO_memcmp(out, value, vlen) != 0) {
			rc = (long)n;
			goto out;
		}
	}
out:
	if (rc < 0)
		OPENSSL_cleanse(out, n + 1);
	OPENSSL_cleanse(st.msg, st.msglen);
	free(st.msg);
	OPENSSL_cleanse(st.buf, sizeof(st.buf));
	return rc;
}

long
cf_placeholder_make(const char *session, const char *secret, const char *prefix,
    const char *value, size_t vlen, char *out, size_t size)
{
	struct ph_format f;

	if (vlen == 0 || vlen > CF_SECRET_MAX)
		return -EINVAL;
	if (prefix != NULL && !cf_placeholder_prefix_ok(prefix))
		return -EINVAL;
	choose_format(secret, prefix, value, vlen, &f);
	return draw(session, secret, &f, value, vlen, out, size);
}

/*
 * The placeholders of an aws-sigv4 secret: an access key id, a secret key
 * and a session token, each the shape AWS gives it (clients check none but
 * the key id's).  Each has its own prefix or alphabet, so the three draws
 * differ.  The key id's is 20 characters, under CF_PLACEHOLDER_MIN_RANDOM:
 * 16 of 36 are 82 bits, and the key id only names the session.
 */
static const char UPALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const struct ph_format aws_formats[] = {
	{ NULL, "AKIA", 16, UPALNUM },          /* AWS_ACCESS_KEY_ID */
	{ NULL, "", 40, B64 },                  /* AWS_SECRET_ACCESS_KEY */
	{ NULL, "FwoGZXIvYXdzE", 100, ALNUM },  /* AWS_SESSION_TOKEN */
};
static const char *const aws_vars[] = { "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN" };

/* The placeholders of aws-sigv4 secret SEC in SESSION into OUT (SIZE bytes),
 * one after the other, each NUL-terminated.  Returns 0 or a negative errno. */
static long
aws_placeholders(const char *session, const struct cf_secret *sec, char *out, size_t size)
{
	size_t i, used = 0, n = cf_aws_has_token(sec->aws) ? 3 : 2;

	for (i = 0; i < n; i++) {
		long r = draw(session, sec->name, &aws_formats[i], NULL, 0, out + used, size - used);
		if (r < 0)
			return r;
		used += (size_t)r + 1;
	}
	return 0;
}

/* ---- the build ----------------------------------------------------------- */

static void
secret_free(struct cf_secret *sec)
{
	size_t i;

	if (sec == NULL)
		return;
	/* Either heap's: the secure one wipes its whole block, the plain
	 * one these bytes. */
	if (sec->value != NULL)
		OPENSSL_secure_clear_free(sec->value, sec->vlen + 1);
	if (sec->refresh != NULL)
		OPENSSL_secure_clear_free(sec->refresh, sec->rlen + 1);
	if (sec->pem != NULL)
		OPENSSL_secure_clear_free(sec->pem, sec->pemlen + 1);
	for (i = 0; i < CF_MINT_NKEYS; i++)
		free(sec->mint[i]);
	for (i = 0; i < sec->ninject; i++)
		cf_inject_clear(&sec->inject[i]);
	free(sec->inject);
	cfaws_free(sec->aws);
	free(sec->name);
	free(sec->from_env);
	free(sec->from_file);
	free(sec->placeholder_env);
	free(sec->placeholder_prefix);
	free(sec->source);
	free(sec);
}

void
cfsec_free(struct cfsec_set *set)
{
	size_t i;

	if (set == NULL)
		return;
	for (i = 0; i < set->n; i++)
		secret_free(set->v[i]);
	free(set->v);
	free(set);
}

void
cfsec_session_clear(struct cf_session *s)
{
	size_t i;

	for (i = 0; i < s->nsecrets; i++) {
		if (s->placeholders != NULL && s->placeholders[i] != NULL) {
			/* Each is CF_PLACEHOLDER_MAX + 1 bytes, an aws-sigv4
			 * secret's three placeholders in one. */
			OPENSSL_cleanse(s->placeholders[i], CF_PLACEHOLDER_MAX + 1);
			free(s->placeholders[i]);
		}
	}
	free(s->placeholders);
	free(s->secrets);
	free(s->term_hosts);
	free(s->github[0]);
	free(s->github[1]);
	s->github[0] = s->github[1] = NULL;
	s->placeholders = NULL;
	s->secrets = NULL;
	s->term_hosts = NULL;
	s->nsecrets = s->nterm_hosts = 0;
}

static int
set_add(struct cfsec_set *set, struct cf_secret *sec)
{
	struct cf_secret **nv = realloc(set->v, (set->n + 1) * sizeof(*nv));

	if (nv == NULL)
		return -ENOMEM;
	nv[set->n++] = sec;
	set->v = nv;
	return 0;
}

static struct cf_secret *
set_find(const struct cfsec_set *set, const char *name)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->v[i]->name, name) == 0)
			return set->v[i];
	return NULL;
}

/* The secret that reads its value from the variable VAR or gives its
 * placeholder in it (the file's [secret]s first), or NULL. */
static struct cf_secret *
set_find_var(const struct cfsec_set *set, const char *var)
{
	size_t i;

	for (i = 0; i < set->n; i++)
		if ((set->v[i]->from_env != NULL && strcmp(set->v[i]->from_env, var) == 0) ||
		    (set->v[i]->placeholder_env != NULL && strcmp(set->v[i]->placeholder_env, var) == 0))
			return set->v[i];
	return NULL;
}

/* The variables the built-ins read, "A, B and C", into BUF. */
static void
set_vars(const struct cfsec_set *set, char *buf, size_t size)
{
	size_t i, used = 0, n = 0, k = 0;

	buf[0] = '\0';
	for (i = 0; i < set->n; i++)
		n += set->v[i]->builtin && set->v[i]->from_env != NULL;
	for (i = 0; i < set->n && used < size; i++) {
		int w;
		if (!set->v[i]->builtin || set->v[i]->from_env == NULL)
			continue;
		k++;
		w = snprintf(buf + used, size - used, "%s%s", k == 1 ? "" : k == n ? " and " : ", ",
		    set->v[i]->from_env);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/* The AWS part of [secret] SB: its keys are for kind = aws-sigv4 only, and
 * such a secret is bound by hosts =, not by inject lines.  Returns 1 when
 * SEC is an aws-sigv4 secret (its checks made), else 0. */
static int
aws_from_build(struct cf_build *b, struct cf_secret_build *sb, struct cf_secret *sec)
{
	size_t k;

	if (sec->kind != CF_SECRET_AWS_SIGV4) {
		for (k = 0; k < CF_AWS_NKEYS; k++)
			if (sb->aws[k] != NULL)
				cfb_err(b, sb->line, "secret %s: %s is for kind = aws-sigv4", sec->name,
				    cf_aws_key_name((enum cf_aws_key)k));
		return 0;
	}
	if (sec->ninject > 0)
		cfb_err(b, sb->line, "secret %s (kind aws-sigv4) is bound by hosts =, not by inject lines",
		    sec->name);
	if (sec->placeholder_env == NULL && (sec->placeholder_env = strdup("AWS_ACCESS_KEY_ID")) == NULL)
		cfb_err(b, sb->line, "out of memory");
	if ((sec->aws = cfaws_new(b, sb->line, sec->name, sb->aws)) != NULL)
		sec->aws_inj.text = cf_aws_hosts_text(sec->aws);
	sec->aws_inj.port = 443;
	sec->aws_inj.name = "";	/* no header: nothing injected by it */
	sec->aws_inj.file = b->file;
	sec->aws_inj.line = sb->line;
	if (asprintf(&sec->source, sec->from_env != NULL ? "env %s" : "file %s",
	    sec->from_env != NULL ? sec->from_env : sec->from_file != NULL ? sec->from_file : "?") < 0)
		sec->source = NULL;
	if (sec->source == NULL)
		cfb_err(b, sb->line, "out of memory");
	return 1;
}

/* The keys of each minted kind: which it needs, which it takes. */
static const struct {
	enum cf_secret_kind kind;
	unsigned need, take;    /* bits by enum cf_mint_key */
} mint_keys[] = {
	{ CF_SECRET_OAUTH2, 1u << CF_MINT_TOKEN_URL | 1u << CF_MINT_CLIENT_ID,
	    1u << CF_MINT_TOKEN_URL | 1u << CF_MINT_CLIENT_ID | 1u << CF_MINT_SCOPE |
	    1u << CF_MINT_REFRESH_ENV | 1u << CF_MINT_REFRESH_FILE },
	{ CF_SECRET_GITHUB_APP, 1u << CF_MINT_APP_ID | 1u << CF_MINT_INSTALLATION | 1u << CF_MINT_KEY_FILE,
	    1u << CF_MINT_APP_ID | 1u << CF_MINT_INSTALLATION | 1u << CF_MINT_KEY_FILE |
	    1u << CF_MINT_API_URL },
};
static const char *const mint_names[CF_MINT_NKEYS] = {
	"token_url", "client_id", "scope", "refresh_token_env", "refresh_token_file",
	"app_id", "installation_id", "api_url", "private_key_file",
};

/* SEC's minted-kind keys: those its kind needs are there, no other. */
static void
mint_check(struct cf_build *b, struct cf_secret *sec, int line)
{
	unsigned need = 0, take = 0;
	size_t i;

	for (i = 0; i < sizeof(mint_keys) / sizeof(mint_keys[0]); i++)
		if (mint_keys[i].kind == sec->kind) {
			need = mint_keys[i].need;
			take = mint_keys[i].take;
		}
	for (i = 0; i < CF_MINT_NKEYS; i++) {
		if (sec->mint[i] != NULL && !(take & 1u << i))
			cfb_err(b, line, "secret %s: %s is not a key of kind = %s", sec->name, mint_names[i],
			    cf_secret_kind_name(sec->kind));
		else if (sec->mint[i] == NULL && (need & 1u << i))
			cfb_err(b, line, "secret %s: kind = %s needs %s", sec->name,
			    cf_secret_kind_name(sec->kind), mint_names[i]);
	}
	if (sec->mint[CF_MINT_REFRESH_ENV] != NULL && sec->mint[CF_MINT_REFRESH_FILE] != NULL)
		cfb_err(b, line, "secret %s: refresh_token_env and refresh_token_file are one or the other",
		    sec->name);
}

/* The [secret] SB as a secret, its own checks made (B->file:SB->line). */
static struct cf_secret *
from_build(struct cf_build *b, struct cf_secret_build *sb)
{
	struct cf_secret *sec = calloc(1, sizeof(*sec));
	size_t i;
	int r;

	if (sec == NULL)
		return NULL;
	sec->name = sb->name;
	sb->name = NULL;
	sec->from_env = sb->from_env;
	sec->from_file = sb->from_file;
	sec->placeholder_env = sb->placeholder_env;
	sec->placeholder_prefix = sb->placeholder_prefix;
	sb->from_env = sb->from_file = sb->placeholder_env = sb->placeholder_prefix = NULL;
	sec->inject = sb->inject;
	sec->ninject = sb->ninject;
	sec->always = sb->always;
	sec->kind = (enum cf_secret_kind)sb->kind;
	for (i = 0; i < CF_MINT_NKEYS; i++) {
		sec->mint[i] = sb->mint[i];
		sb->mint[i] = NULL;
	}
	sb->inject = NULL;
	sb->ninject = 0;
	sec->file = b->file;
	sec->line = sb->line;
	mint_check(b, sec, sb->line);
	if (sec->kind == CF_SECRET_GITHUB_APP) {
		/* Its credential is the private key; the sandbox's variables
		 * are gh's and git's own. */
		if (sec->from_env != NULL || sec->from_file != NULL)
			cfb_err(b, sb->line, "secret %s: kind = github-app takes private_key_file, not "
			    "from_env or from_file", sec->name);
		if (sec->placeholder_env == NULL && (sec->placeholder_env = strdup("GH_TOKEN")) == NULL) {
			secret_free(sec);
			return NULL;
		}
		if (strcmp(sec->placeholder_env, "GITHUB_TOKEN") != 0)
			sec->also_env = "GITHUB_TOKEN";
	} else if (sec->from_env != NULL && sec->from_file != NULL)
		cfb_err(b, sb->line, "secret %s needs exactly one of from_env and from_file", sec->name);
	else if (sec->from_env == NULL && sec->from_file == NULL && (sec->kind != CF_SECRET_OAUTH2 ||
	    (sec->mint[CF_MINT_REFRESH_ENV] == NULL && sec->mint[CF_MINT_REFRESH_FILE] == NULL)))
		cfb_err(b, sb->line, "secret %s needs exactly one of from_env and from_file%s", sec->name,
		    sec->kind == CF_SECRET_OAUTH2 ? " (the client secret), or a refresh token "
		    "(refresh_token_env or refresh_token_file)" : "");
	if (aws_from_build(b, sb, sec) != 0)
		return sec;
	if (sec->placeholder_env == NULL && sec->from_env != NULL)
		sec->placeholder_env = strdup(sec->from_env);
	else if (sec->placeholder_env == NULL && sec->from_file == NULL)
		cfb_err(b, sb->line, "secret %s: name the sandbox's variable with placeholder_env", sec->name);
	else if (sec->placeholder_env == NULL)
		cfb_err(b, sb->line, "secret %s reads from_file: name the sandbox's variable with placeholder_env",
		    sec->name);
	if (sec->ninject == 0 && sec->kind == CF_SECRET_GITHUB_APP) {
		/* GitHub's own hosts, as the built-in github secret's. */
		static const char *const gh[] = { "api.github.com header Authorization \"Bearer %s\"",
		    "github.com basic x-access-token" };
		const char *why;
		if ((sec->inject = calloc(2, sizeof(*sec->inject))) == NULL) {
			secret_free(sec);
			return NULL;
		}
		for (i = 0; i < 2; i++) {
			if (cf_inject_parse(gh[i], &sec->inject[i], &why) != 0) {
				secret_free(sec);
				return NULL;
			}
			sec->ninject++;
		}
	}
	if (sec->ninject == 0)
		cfb_err(b, sb->line, "secret %s has no inject line: it could be sent nowhere", sec->name);
	r = sec->from_env != NULL ? asprintf(&sec->source, "env %s", sec->from_env) :
	    sec->from_file != NULL ? asprintf(&sec->source, "file %s", sec->from_file) :
	    sec->mint[CF_MINT_REFRESH_ENV] != NULL ? asprintf(&sec->source, "env %s",
	    sec->mint[CF_MINT_REFRESH_ENV]) : sec->mint[CF_MINT_REFRESH_FILE] != NULL ?
	    asprintf(&sec->source, "file %s", sec->mint[CF_MINT_REFRESH_FILE]) :
	    sec->mint[CF_MINT_KEY_FILE] != NULL ? asprintf(&sec->source, "file %s",
	    sec->mint[CF_MINT_KEY_FILE]) :
	    asprintf(&sec->source, "nowhere");
	if (r < 0)
		sec->source = NULL;
	if (sec->source == NULL || (sec->from_env != NULL && sec->placeholder_env == NULL)) {
		secret_free(sec);
		return NULL;
	}
	return sec;
}

static struct cf_secret *
from_builtin(size_t bi)
{
	struct cf_secret *sec = calloc(1, sizeof(*sec));
	size_t i;

	if (sec == NULL)
		return NULL;
	sec->builtin = 1;
	sec->always = builtins[bi].always;
	sec->also_env = builtins[bi].also_env;
	sec->name = strdup(builtins[bi].name);
	sec->from_env = strdup(builtins[bi].env);
	sec->placeholder_env = strdup(builtins[bi].env);
	if (asprintf(&sec->source, "env %s", builtins[bi].env) < 0)
		sec->source = NULL;
	for (i = 0; builtins[bi].inject[i] != NULL; i++)
		;
	sec->inject = calloc(i, sizeof(*sec->inject));
	if (sec->name == NULL || sec->from_env == NULL || sec->placeholder_env == NULL ||
	    sec->source == NULL || sec->inject == NULL)
		goto fail;
	for (i = 0; builtins[bi].inject[i] != NULL; i++) {
		const char *why;
		if (cf_inject_parse(builtins[bi].inject[i], &sec->inject[i], &why) != 0)
			goto fail; /* the table is ours: only memory can run out */
		sec->ninject++;
	}
	return sec;
fail:
	secret_free(sec);
	return NULL;
}

/* A value as the proxy may put it on a request: 1-4096 bytes, no control
 * byte (no CR, LF or NUL to split a header with).  WHY never shows it. */
static const char *
value_bad(const char *v, size_t n)
{
	size_t i;

	if (n == 0)
		return "is empty";
	if (n > CF_SECRET_MAX)
		return "is longer than 4096 bytes";
	for (i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return "holds a control character (CR, LF, NUL, ...)";
	return NULL;
}

/* A copy of the N bytes at V, NUL-terminated, for SEC's value: in the
 * secure heap, or on the plain heap when it is full or absent. */
static char *
value_dup(const char *v, size_t n)
{
	char *p = cf_secmem_alloc(n + 1);

	if (p == NULL)
		return NULL;
	memcpy(p, v, n);
	p[n] = '\0';
	return p;
}

/* Read the value of SEC, reporting at LINE (the secrets = that selects
 * it) why it cannot be had. */
static void
read_source(struct cf_build *b, struct cf_secret *sec, const char *from_env, const char *from_file,
    char **value, size_t *vlen, int line)
{
	const char *bad;

	if (from_env == NULL && from_file == NULL)
		return; /* reported with the [secret] */
	if (from_env != NULL) {
		const char *v = getenv(from_env);
		if (v == NULL) {
			cfb_err(b, line, "secret %s: $%s is not set", sec->name, from_env);
			return;
		}
		if ((bad = value_bad(v, strlen(v))) != NULL) {
			cfb_err(b, line, "secret %s: $%s %s", sec->name, from_env, bad);
			return;
		}
		*vlen = strlen(v);
		if ((*value = value_dup(v, *vlen)) == NULL)
			cfb_err(b, line, "out of memory");
		return;
	}
	{
		char path[4096 + 256], buf[CF_SECRET_MAX + 3];
		const char *dir = getenv("CREDENTIALS_DIRECTORY");
		size_t len = 0;
		struct stat st;
		int fd;

		if (from_file[0] == '/') {
			snprintf(path, sizeof(path), "%s", from_file);
		} else if (dir == NULL || dir[0] != '/') {
			cfb_err(b, line, "secret %s: from_file %s is relative and $CREDENTIALS_DIRECTORY "
			    "is not set to an absolute path", sec->name, from_file);
			return;
		} else if (snprintf(path, sizeof(path), "%s/%s", dir, from_file) >= (int)sizeof(path)) {
			cfb_err(b, line, "secret %s: path too long", sec->name);
			return;
		}
		/* Symlinks followed: a Kubernetes Secret volume is made of them. */
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
			cfb_err(b, line, "secret %s: cannot read %s: %s", sec->name, path,
			    fd < 0 || errno != 0 ? strerror(fd < 0 ? errno : EINVAL) : "not a regular file");
			if (fd >= 0)
				close(fd);
			return;
		}
		for (;;) {
			ssize_t n = read(fd, buf + len, sizeof(buf) - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				cfb_err(b, line, "secret %s: cannot read %s: %s", sec->name, path, strerror(errno));
				close(fd);
				OPENSSL_cleanse(buf, sizeof(buf));
				return;
			}
			if (n == 0 || (len += (size_t)n) == sizeof(buf))
				break;
		}
		close(fd);
		/* One trailing newline (echo, kubectl create secret) is not
		 * part of the value. */
		if (len > 0 && buf[len - 1] == '\n')
			len--;
		if (len > 0 && buf[len - 1] == '\r')
			len--;
		if ((bad = value_bad(buf, len)) != NULL)
			cfb_err(b, line, "secret %s: %s %s", sec->name, path, bad);
		else if ((*value = value_dup(buf, len)) == NULL)
			cfb_err(b, line, "out of memory");
		else
			*vlen = len;
		OPENSSL_cleanse(buf, sizeof(buf));
	}
}

/* Read a github-app's private key: a PEM file of at most 16 KiB (it has
 * lines, so it is no header value and value_bad() does not apply). */
static void
read_pem(struct cf_build *b, struct cf_secret *sec, int line)
{
	const char *path = sec->mint[CF_MINT_KEY_FILE];
	char buf[16384 + 1];
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0) {
		cfb_err(b, line, "secret %s: cannot read %s: %s", sec->name, path, strerror(errno));
		return;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (len += (size_t)n) == sizeof(buf) - 1)
			break;
	}
	close(fd);
	buf[len] = '\0';
	if (len == 0 || len == sizeof(buf) - 1 || strstr(buf, "-----BEGIN ") == NULL ||
	    strstr(buf, "PRIVATE KEY-----") == NULL)
		cfb_err(b, line, "secret %s: %s is not a PEM private key of at most 16 KiB", sec->name, path);
	else if ((sec->pem = value_dup(buf, len)) == NULL)
		cfb_err(b, line, "out of memory");
	else
		sec->pemlen = len;
	OPENSSL_cleanse(buf, sizeof(buf));
}

/* Read the value of SEC, and a minted kind's refresh token. */
static void
read_value(struct cf_build *b, struct cf_secret *sec, int line)
{
	read_source(b, sec, sec->from_env, sec->from_file, &sec->value, &sec->vlen, line);
	read_source(b, sec, sec->mint[CF_MINT_REFRESH_ENV], sec->mint[CF_MINT_REFRESH_FILE],
	    &sec->refresh, &sec->rlen, line);
	if (sec->mint[CF_MINT_KEY_FILE] != NULL)
		read_pem(b, sec, line);
}

/* Two bindings that would both set the same header (BASIC is
 * Authorization) or the same query parameter of one host:port. */
static int
inject_clash(const struct cf_inject *x, const struct cf_inject *y)
{
	int xh = x->kind != CF_INJECT_QUERY, yh = y->kind != CF_INJECT_QUERY;

	/* Each secret replaces its own placeholder: no two clash. */
	if (x->kind == CF_INJECT_REPLACE || y->kind == CF_INJECT_REPLACE)
		return 0;
	if (strcmp(x->host, y->host) != 0 || x->port != y->port || xh != yh)
		return 0;
	return xh ? strcasecmp(x->name, y->name) == 0 : strcmp(x->name, y->name) == 0;
}

/* The known names, for "did you mean". */
static const char *
nearest_secret(const struct cfsec_set *set, const char *name)
{
	const char *names[128];
	size_t i, n = 0;

	for (i = 0; i < set->n && n + 1 < sizeof(names) / sizeof(names[0]); i++)
		names[n++] = set->v[i]->name;
	names[n] = NULL;
	return cfb_nearest(name, names);
}

/*
 * Nonzero when session S may open a tunnel to H:PORT as cf_decide() judges
 * CONNECT (deny rules win), but for one thing: an allow rule with a path
 * prefix counts, since inside a terminated tunnel every request is decided
 * on its own, path included.  Not cf_decide() itself: conf/decide uses the
 * snapshot, which uses this module.
 */
static int
session_allows(const struct cf_session *s, const struct cf_host *h, uint16_t port)
{
	size_t i;

	for (i = 0; i < s->ndeny; i++)
		if (cf_rule_match_host(s->deny[i], h) && cf_rule_match_port(s->deny[i], CF_MODE_CONNECT, port))
			return 0;
	for (i = 0; i < s->nallow; i++)
		if (cf_rule_match_host(s->allow[i], h) && cf_rule_match_port(s->allow[i], CF_MODE_CONNECT, port))
			return 1;
	return 0;
}

/* Give session S (SB, and [defaults]' DEF when S is not the default one)
 * its secrets. */
static int
attach_session(struct cf_build *b, struct cfsec_set *set, struct cf_session *s,
    const struct cf_sess_build *sb, const struct cf_sess_build *def)
{
	const struct cf_sess_build *from[2] = { def, sb };
	int *lines = NULL;
	size_t f, i, j, k;
	int rc = -ENOMEM;

	for (k = 0; k < 2; k++) {
		const char *g = sb->github[k] != NULL ? sb->github[k] : def != NULL ? def->github[k] : NULL;
		if (g != NULL && s->github[k] == NULL && (s->github[k] = strdup(g)) == NULL)
			return -ENOMEM;
	}
	for (f = 0; f < 2; f++) {
		if (from[f] == NULL)
			continue;
		for (i = 0; i < from[f]->nsecret_names; i++) {
			const char *name = from[f]->secret_names[i];
			int line = from[f]->secret_lines[i], *nl;
			struct cf_secret *sec = set_find(set, name);
			const struct cf_secret **ns;
			if (sec == NULL && line == 0)
				sec = set_find_var(set, name);
			if (sec == NULL && line == 0) {
				char vars[400];
				set_vars(set, vars, sizeof(vars));
				cfb_err(b, 0, "--secret %s: no secret is named so or reads $%s (the built-in "
				    "ones read %s); for another, write a [secret] in a config file (-c)",
				    name, name, vars);
				continue;
			}
			if (sec == NULL) {
				const char *near = nearest_secret(set, name);
				cfb_err(b, line, "unknown secret %s (not a [secret] of the file nor a built-in)%s%s%s",
				    name, near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
				continue;
			}
			sec->named = 1;
			for (j = 0; j < s->nsecrets && s->secrets[j] != sec; j++)
				;
			if (j < s->nsecrets)
				continue; /* named twice, or in [defaults] too: once */
			/* A session that listens nowhere is never served: it
			 * needs no value (postern-sidecar run --session leaves
			 * the file's other sessions so). */
			if (!cf_session_served(s))
				continue;
			ns = realloc(s->secrets, (s->nsecrets + 1) * sizeof(*ns));
			if (ns == NULL)
				goto out;
			s->secrets = ns;
			nl = realloc(lines, (s->nsecrets + 1) * sizeof(*nl));
			if (nl == NULL)
				goto out;
			lines = nl;
			ns[s->nsecrets] = sec;
			lines[s->nsecrets++] = line;
			if (!sec->used) {
				sec->used = 1;
				read_value(b, sec, line);
				if (sec->aws != NULL)
					cfaws_read(b, sec->aws, sec->name, line);
			}
		}
	}
	for (i = 0; i < s->nsecrets; i++) {
		const struct cf_secret *sec = s->secrets[i];
		/* A GitHub App token is minted for the session's repositories
		 * only: never for all the installation can reach. */
		if (sec->kind == CF_SECRET_GITHUB_APP && s->github[0] == NULL)
			cfb_err(b, lines[i], "secret %s (kind = github-app) needs github_repositories in "
			    "session %s (or [defaults])", sec->name, s->name);
		/* One variable holds one placeholder. */
		for (k = 0; k < i; k++)
			if (sec->placeholder_env != NULL && s->secrets[k]->placeholder_env != NULL &&
			    strcmp(sec->placeholder_env, s->secrets[k]->placeholder_env) == 0)
				cfb_err(b, lines[i], "secrets %s and %s both put their placeholder in $%s "
				    "(session %s)", s->secrets[k]->name, sec->name, sec->placeholder_env, s->name);
		for (j = 0; j < sec->ninject; j++) {
			const struct cf_inject *inj = &sec->inject[j];
			struct cf_host h;
			size_t i2, j2;

			/* A terminated host must be one the session may reach:
			 * a secret never widens what a session allows. */
			memset(&h, 0, sizeof(h));
			h.kind = CF_HOST_NAME;
			memcpy(h.name, inj->host, sizeof(h.name));
			if (!session_allows(s, &h, inj->port))
				cfb_err(b, lines[i], "secret %s is bound to %s:%u, which session %s does not allow",
				    sec->name, inj->host, inj->port, s->name);
			/* Two bindings setting one header on one host: which
			 * would win is nobody's guess. */
			for (i2 = 0; i2 <= i; i2++) {
				const struct cf_secret *o = s->secrets[i2];
				for (j2 = 0; j2 < (i2 == i ? j : o->ninject); j2++)
					if (inject_clash(inj, &o->inject[j2])) {
						if (o == sec)
							cfb_err(b, inj->line > 0 ? inj->line : lines[i],
							    "secret %s sets %s on %s:%u twice", sec->name, inj->name,
							    inj->host, inj->port);
						else
							cfb_err(b, lines[i], "secrets %s and %s both set %s on %s:%u "
							    "(session %s)", o->name, sec->name, inj->name,
							    inj->host, inj->port, s->name);
						goto next;
					}
			}
			for (k = 0; k < s->nterm_hosts && strcmp(s->term_hosts[k], inj->host) != 0; k++)
				;
			if (k == s->nterm_hosts) {
				const char **nh = realloc(s->term_hosts, (k + 1) * sizeof(*nh));
				if (nh == NULL)
					goto out;
				nh[s->nterm_hosts++] = inj->host;
				s->term_hosts = nh;
			}
next:
			;
		}
	}
	/* An aws-sigv4 secret's hosts are terminated; the name constraint of
	 * "*.DOMAIN" is DOMAIN, which admits every name below it. */
	for (i = 0; i < s->nsecrets; i++) {
		const char *name;
		for (j = 0; s->secrets[i]->aws != NULL &&
		    (name = cf_aws_term_name(s->secrets[i]->aws, j)) != NULL; j++) {
			for (k = 0; k < s->nterm_hosts && strcmp(s->term_hosts[k], name) != 0; k++)
				;
			if (k == s->nterm_hosts) {
				const char **nh = realloc(s->term_hosts, (k + 1) * sizeof(*nh));
				if (nh == NULL)
					goto out;
				nh[s->nterm_hosts++] = name;
				s->term_hosts = nh;
			}
		}
	}
	/* Hosts an allow rule asks to inspect are terminated as a secret's
	 * are (each an exact name: cf_rule_parse() says so), and their names
	 * join the CA's name constraints; nothing is injected on them.  A
	 * session that listens nowhere is never served: no CA for it. */
	for (i = 0; cf_session_served(s) && i < s->nallow; i++) {
		const struct cf_rule *r = s->allow[i];
		if (!r->inspect || r->kind != CF_PAT_EXACT)
			continue;
		for (k = 0; k < s->nterm_hosts && strcmp(s->term_hosts[k], r->name) != 0; k++)
			;
		if (k == s->nterm_hosts) {
			const char **nh = realloc(s->term_hosts, (k + 1) * sizeof(*nh));
			if (nh == NULL)
				goto out;
			nh[s->nterm_hosts++] = r->name;
			s->term_hosts = nh;
		}
	}
	/* Placeholders: only once every value could be read. */
	if (b->nerrors == 0 && s->nsecrets > 0) {
		s->placeholders = calloc(s->nsecrets, sizeof(*s->placeholders));
		if (s->placeholders == NULL)
			goto out;
		for (i = 0; i < s->nsecrets; i++) {
			const struct cf_secret *sec = s->secrets[i];
			long n;
			if ((s->placeholders[i] = malloc(CF_PLACEHOLDER_MAX + 1)) == NULL)
				goto out;
			if (sec->aws != NULL)
				n = aws_placeholders(s->name, sec, s->placeholders[i], CF_PLACEHOLDER_MAX + 1);
			else
				/* A minted secret with no value of its own takes
				 * its kind's form: GitHub's installation tokens'
				 * for a github-app, no vendor's for an oauth2 one. */
				n = cf_placeholder_make(s->name, sec->name, sec->placeholder_prefix,
				    sec->value != NULL ? sec->value : sec->kind == CF_SECRET_GITHUB_APP ? "ghs_" : "-",
				    sec->value != NULL ? sec->vlen : sec->kind == CF_SECRET_GITHUB_APP ? 4 : 1,
				    s->placeholders[i], CF_PLACEHOLDER_MAX + 1);
			if (n < 0) {
				cfb_err(b, lines[i], "secret %s: no placeholder could be made: %s",
				    sec->name, strerror((int)-n));
				s->placeholders[i][0] = '\0';
			}
		}
	}
	rc = 0;
out:
	free(lines);
	return rc;
}

int
cfsec_attach(struct cf_build *b, struct cf_session *sessions, size_t n,
    struct cf_sess_build *const *sbs, struct cfsec_set **out)
{
	struct cfsec_set *set = calloc(1, sizeof(*set));
	size_t i;
	int rc = -ENOMEM;

	*out = NULL;
	if (set == NULL)
		return -ENOMEM;
	for (i = 0; i < b->nsecrets; i++) {
		struct cf_secret *sec = from_build(b, &b->secrets[i]);
		if (sec == NULL || set_add(set, sec) != 0) {
			secret_free(sec);
			goto out;
		}
	}
	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
		struct cf_secret *sec;
		if (set_find(set, builtins[i].name) != NULL)
			continue; /* the file's [secret] replaces it */
		sec = from_builtin(i);
		if (sec == NULL || set_add(set, sec) != 0) {
			secret_free(sec);
			goto out;
		}
	}
	for (i = 0; i < n; i++)
		if (attach_session(b, set, &sessions[i], sbs[i], i == 0 ? NULL : sbs[0]) != 0)
			goto out;
	for (i = 0; i < set->n; i++) {
		const struct cf_secret *sec = set->v[i];
		if (!sec->builtin && !sec->named)
			cfb_warn(b->diag, "%s:%d: secret %s is given to no session", b->file, sec->line,
			    sec->name);
	}
	rc = 0;
out:
	if (rc != 0) {
		cfsec_free(set);
		return rc;
	}
	*out = set;
	return 0;
}

void
cfsec_set_file(struct cfsec_set *set, const char *file)
{
	size_t i, j;

	for (i = 0; set != NULL && i < set->n; i++) {
		if (set->v[i]->builtin)
			continue;
		set->v[i]->file = file;
		for (j = 0; j < set->v[i]->ninject; j++)
			set->v[i]->inject[j].file = file;
	}
}

size_t
cfsec_count(const struct cfsec_set *set)
{
	size_t i, n = 0;

	for (i = 0; set != NULL && i < set->n; i++)
		n += !set->v[i]->builtin || set->v[i]->used;
	return n;
}

const struct cf_secret *
cfsec_at(const struct cfsec_set *set, size_t i)
{
	size_t k;

	for (k = 0; set != NULL && k < set->n; k++)
		if (!set->v[k]->builtin || set->v[k]->used) {
			if (i == 0)
				return set->v[k];
			i--;
		}
	return NULL;
}

/* ---- the lookups ---------------------------------------------------------- */

size_t cf_session_nsecrets(const struct cf_session *s) { return s->nsecrets; }

const struct cf_secret *
cf_session_secret(const struct cf_session *s, size_t i)
{
	return i < s->nsecrets ? s->secrets[i] : NULL;
}

const char *
cf_session_placeholder(const struct cf_session *s, size_t i)
{
	return i < s->nsecrets && s->placeholders != NULL ? s->placeholders[i] : NULL;
}

const char *cf_secret_name(const struct cf_secret *sec) { return sec->name; }
const char *cf_secret_placeholder_env(const struct cf_secret *sec) { return sec->placeholder_env; }
const char *cf_secret_also_env(const struct cf_secret *sec) { return sec->also_env; }
const char *cf_secret_source(const struct cf_secret *sec) { return sec->source; }
const char *cf_secret_from_env(const struct cf_secret *sec) { return sec->from_env; }
int cf_secret_builtin(const struct cf_secret *sec) { return sec->builtin; }
size_t cf_secret_ninject(const struct cf_secret *sec) { return sec->ninject; }
int cf_secret_inject_always(const struct cf_secret *sec) { return sec->always; }
enum cf_secret_kind cf_secret_kind(const struct cf_secret *sec) { return sec->kind; }

const char *
cf_secret_mint(const struct cf_secret *sec, enum cf_mint_key k)
{
	return k < CF_MINT_NKEYS ? sec->mint[k] : NULL;
}

const char *
cf_secret_private_key(const struct cf_secret *sec, size_t *len)
{
	*len = sec->pemlen;
	return sec->pem;
}

const char *
cf_session_github(const struct cf_session *s, int which)
{
	return which == 0 || which == 1 ? s->github[which] : NULL;
}

const char *
cf_secret_refresh_token(const struct cf_secret *sec, size_t *len)
{
	*len = sec->rlen;
	return sec->refresh;
}

/* The kinds kind = names, one a line. */
static const struct {
	const char *name;
	enum cf_secret_kind kind;
} secret_kinds[] = {
	{ "static", CF_SECRET_STATIC },
	{ "aws-sigv4", CF_SECRET_AWS_SIGV4 },
	{ "oauth2", CF_SECRET_OAUTH2 },
	{ "github-app", CF_SECRET_GITHUB_APP },
};

const char *
cf_secret_kind_name(enum cf_secret_kind kind)
{
	size_t i;

	for (i = 0; i < sizeof(secret_kinds) / sizeof(secret_kinds[0]); i++)
		if (secret_kinds[i].kind == kind)
			return secret_kinds[i].name;
	return "?";
}

int
cf_secret_kind_parse(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(secret_kinds) / sizeof(secret_kinds[0]); i++)
		if (strcmp(secret_kinds[i].name, name) == 0)
			return (int)secret_kinds[i].kind;
	return -1;
}

const struct cf_aws *cf_secret_aws(const struct cf_secret *sec) { return sec->aws; }

long
cf_session_aws_secret(const struct cf_session *s, const char *host, uint16_t port)
{
	size_t i;

	for (i = 0; i < s->nsecrets; i++)
		if (s->secrets[i]->aws != NULL && cf_aws_binds(s->secrets[i]->aws, host, port))
			return (long)i;
	return -1;
}

const char *
cf_secret_more_env(const struct cf_secret *sec, size_t k)
{
	if (sec->aws == NULL || k >= (cf_aws_has_token(sec->aws) ? 2u : 1u))
		return NULL;
	return aws_vars[k];
}

const char *
cf_session_placeholder_more(const struct cf_session *s, size_t i, size_t k)
{
	const char *p = cf_session_placeholder(s, i);
	size_t j;

	if (p == NULL || p[0] == '\0' || cf_secret_more_env(s->secrets[i], k) == NULL)
		return NULL;
	for (j = 0; j <= k; j++)
		p += strlen(p) + 1;
	return p;
}

const char *
cf_secret_value(const struct cf_secret *sec, size_t *len)
{
	if (len != NULL)
		*len = sec->vlen;
	return sec->value;
}

const struct cf_inject *
cf_secret_inject(const struct cf_secret *sec, size_t i)
{
	return i < sec->ninject ? &sec->inject[i] : NULL;
}

const struct cf_inject *
cf_secret_binding(const struct cf_secret *sec, const char *host, uint16_t port,
    const char *path, size_t len)
{
	const struct cf_inject *best = NULL;
	size_t i, best_len = 0;

	if (sec->aws != NULL)
		return cf_aws_binds(sec->aws, host, port) ? &sec->aws_inj : NULL;
	for (i = 0; i < sec->ninject; i++) {
		const struct cf_inject *inj = &sec->inject[i];
		struct cf_rule r;
		size_t pl;

		if (inj->port != port || strcmp(inj->host, host) != 0)
			continue;
		if (inj->path != NULL) {
			if (path == NULL)
				continue;
			/* The same prefix match as an allow rule's path. */
			memset(&r, 0, sizeof(r));
			r.path = (char *)inj->path;
			if (!cf_rule_match_path(&r, path, len))
				continue;
		}
		pl = inj->path != NULL ? strlen(inj->path) : 0;
		if (best == NULL || pl > best_len) {
			best = inj;
			best_len = pl;
		}
	}
	return best;
}

long
cf_session_bound_secret(const struct cf_session *s, const char *host, uint16_t port)
{
	size_t i, j;

	for (i = 0; i < s->nsecrets; i++)
		for (j = 0; j < s->secrets[i]->ninject; j++)
			if (s->secrets[i]->inject[j].port == port &&
			    strcmp(s->secrets[i]->inject[j].host, host) == 0)
				return (long)i;
	return -1;
}

int
cf_session_terminates(const struct cf_session *s, const char *host, uint16_t port)
{
	return cf_session_bound_secret(s, host, port) >= 0 ||
	    cf_session_aws_secret(s, host, port) >= 0 ||
	    cf_session_inspects(s, host, port) != NULL;
}

const struct cf_rule *
cf_session_inspects(const struct cf_session *s, const char *host, uint16_t port)
{
	size_t i;

	if (!cf_session_served(s))
		return NULL;
	for (i = 0; i < s->nallow; i++) {
		const struct cf_rule *r = s->allow[i];
		if (r->inspect && r->kind == CF_PAT_EXACT && strcmp(r->name, host) == 0 &&
		    cf_rule_match_port(r, CF_MODE_CONNECT, port))
			return r;
	}
	return NULL;
}

size_t
cf_session_terminated_hosts(const struct cf_session *s, const char *const **names)
{
	*names = s->nterm_hosts > 0 ? s->term_hosts : NULL;
	return s->nterm_hosts;
}

long
cf_session_find_placeholder(const struct cf_session *s, const void *buf, size_t len)
{
	size_t i;

	for (i = 0; i < s->nsecrets; i++)
		if (cf_session_has_placeholder(s, i, buf, len))
			return (long)i;
	return -1;
}

int
cf_session_has_placeholder(const struct cf_session *s, size_t i, const void *buf, size_t len)
{
	const char *p = i < s->nsecrets && s->placeholders != NULL ? s->placeholders[i] : NULL;
	size_t pl = p != NULL ? strlen(p) : 0;

	return pl > 0 && pl <= len && memmem(buf, len, p, pl) != NULL;
}
