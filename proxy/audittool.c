/*
 * proxy/audittool.c: `postern-proxy audit verify|pubkey` (see audittool.h).
 * The checks are proxy/proto/auditline.c's; this reads the files and says
 * where.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "conf/config.h"
#include "proxy/audittool.h"
#include "proxy/core/audit.h"
#include "proxy/proto/auditline.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: postern-proxy audit verify [--pubkey FILE | -c FILE] LOG...\n"
	    "                     check the chain and the signed checkpoints of LOG, its\n"
	    "                     files oldest first (audit.log.2 audit.log.1 audit.log)\n"
	    "       postern-proxy audit pubkey [-c FILE]\n"
	    "                     print the public key of audit_signing_key (PEM)\n");
}

/* The signing key named by the config at PATH (NULL: the built-in one). */
static EVP_PKEY *
config_key(const char *path)
{
	struct cf_overrides ov;
	struct cf_diag diag;
	struct cf_config *c;
	const char *kp;
	EVP_PKEY *key = NULL;
	char err[512];
	size_t i;

	static const char *listen[] = { "unix:/nonexistent" };

	/* Only the key is read: a file with no listener of its own (run -c's)
	 * is taken too. */
	memset(&ov, 0, sizeof(ov));
	ov.extra_listen = listen;
	ov.n_extra_listen = 1;
	ov.replace_listen = 1;
	memset(&diag, 0, sizeof(diag));
	c = cf_config_load(path, &ov, &diag);
	if (c == NULL) {
		for (i = 0; i < diag.nerrors; i++)
			fprintf(stderr, "%s\n", diag.errors[i]);
		cf_diag_free(&diag);
		return NULL;
	}
	cf_diag_free(&diag);
	kp = cf_config_proxy(c)->audit_signing_key;
	if (kp == NULL)
		fprintf(stderr, "postern-proxy: %s has no audit_signing_key\n",
		    path != NULL ? path : "the built-in config");
	else if ((key = px_audit_key_load(kp, 0, err, sizeof(err))) == NULL)
		fprintf(stderr, "postern-proxy: audit_signing_key %s\n", err);
	cf_config_free(c);
	return key;
}

static EVP_PKEY *
pubkey_file(const char *path)
{
	EVP_PKEY *key;
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		fprintf(stderr, "postern-proxy: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	key = PEM_read_PUBKEY(f, NULL, NULL, NULL);
	fclose(f);
	if (key == NULL || EVP_PKEY_get_id(key) != EVP_PKEY_ED25519) {
		fprintf(stderr, "postern-proxy: %s: not an Ed25519 public key in PEM\n", path);
		EVP_PKEY_free(key);
		return NULL;
	}
	return key;
}

static int
exit_of(enum ac_verdict v)
{
	switch (v) {
	case AC_OK:
		return PX_AUDIT_EXIT_OK;
	case AC_UNSIGNED:
		return PX_AUDIT_EXIT_UNSIGNED;
	case AC_BROKEN:
		return PX_AUDIT_EXIT_BROKEN;
	case AC_FILE_GAP:
		return PX_AUDIT_EXIT_FILE_GAP;
	case AC_BAD_SIG:
		return PX_AUDIT_EXIT_BAD_SIG;
	}
	return PX_AUDIT_EXIT_BROKEN;
}

/* Where the lines not yet under a checkpoint begin. */
struct tail_at {
	const char *file;
	unsigned long line;
};

/* One file through V; *WORST is raised to what it found.  -1 when it
 * cannot be read. */
static int
verify_file(struct ac_verify *v, const char *path, enum ac_verdict *worst, struct tail_at *ta)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL, why[512];
	size_t cap = 0;
	ssize_t n;
	unsigned long lineno = 0;

	if (f == NULL) {
		fprintf(stderr, "postern-proxy: %s: %s\n", path, strerror(errno));
		return -1;
	}
	ac_verify_file(v);
	while ((n = getline(&buf, &cap, f)) > 0) {
		enum ac_verdict r;
		size_t len = (size_t)n;
		uint64_t before = v->unsigned_lines;

		lineno++;
		if (buf[len - 1] != '\n') {
			printf("%s:%lu: the last line is cut (no newline): the file was truncated\n",
			    path, lineno);
			if (*worst < AC_BROKEN)
				*worst = AC_BROKEN;
			break;
		}
		r = ac_verify_line(v, buf, len - 1, why, sizeof(why));
		if (r != AC_OK) {
			printf("%s:%lu: %s%s\n", path, lineno, r == AC_UNSIGNED ? "warning: " : "", why);
			if (r > *worst)
				*worst = r;
		}
		if (v->unsigned_lines == 1 || (before == 0 && v->unsigned_lines > 0)) {
			ta->file = path;
			ta->line = lineno;
		}
	}
	if (ferror(f)) {
		fprintf(stderr, "postern-proxy: %s: %s\n", path, strerror(errno));
		free(buf);
		fclose(f);
		return -1;
	}
	if (lineno == 0) {
		printf("%s:0: the file is empty (the proxy writes an audit_open line first)\n", path);
		if (*worst < AC_BROKEN)
			*worst = AC_BROKEN;
	}
	free(buf);
	fclose(f);
	return 0;
}

static int
verify_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pubkey", required_argument, NULL, 'p' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pubpath = NULL, *conf = NULL;
	enum ac_verdict worst = AC_OK;
	struct tail_at ta = { NULL, 0 };
	struct ac_verify v;
	EVP_PKEY *pub;
	int ch, i, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "c:p:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			pubpath = optarg;
			break;
		case 'c':
			conf = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return PX_AUDIT_EXIT_USAGE;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "postern-proxy: audit verify: no log file given\n");
		usage(stderr);
		return PX_AUDIT_EXIT_USAGE;
	}
	if (pubpath == NULL && conf == NULL) {
		fprintf(stderr, "postern-proxy: audit verify: no key: give --pubkey FILE (from "
		    "postern-proxy audit pubkey) or -c FILE with audit_signing_key\n");
		return PX_AUDIT_EXIT_USAGE;
	}
	pub = pubpath != NULL ? pubkey_file(pubpath) : config_key(conf);
	if (pub == NULL)
		return PX_AUDIT_EXIT_USAGE;
	ac_verify_init(&v, pub);
	rc = PX_AUDIT_EXIT_OK;
	for (i = optind; i < argc; i++)
		if (verify_file(&v, argv[i], &worst, &ta) < 0) {
			rc = PX_AUDIT_EXIT_USAGE;
			break;
		}
	if (rc == PX_AUDIT_EXIT_OK && v.unsigned_lines > 0 && ta.file != NULL) {
		printf("%s:%lu: warning: this line and the %llu after it come after the last checkpoint "
		    "(unsigned: they could be changed or cut unseen)\n", ta.file, ta.line,
		    (unsigned long long)(v.unsigned_lines - 1));
		if (worst < AC_UNSIGNED)
			worst = AC_UNSIGNED;
	}
	if (rc == PX_AUDIT_EXIT_OK) {
		rc = exit_of(worst);
		printf("%d file(s), %llu line(s), %llu checkpoint(s), key %s: %s\n", argc - optind,
		    (unsigned long long)v.lines, (unsigned long long)v.checkpoints, v.keyid,
		    worst == AC_OK ? "ok" : worst == AC_UNSIGNED ? "ok but an unsigned tail" :
		    "NOT intact");
	}
	EVP_PKEY_free(pub);
	return rc;
}

static int
pubkey_main(int argc, char **argv)
{
	const char *conf = NULL;
	EVP_PKEY *key;
	int ch, ok;

	optind = 1;
	while ((ch = getopt(argc, argv, "c:h")) != -1) {
		switch (ch) {
		case 'c':
			conf = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return PX_AUDIT_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return PX_AUDIT_EXIT_USAGE;
	}
	if ((key = config_key(conf)) == NULL)
		return PX_AUDIT_EXIT_USAGE;
	ok = PEM_write_PUBKEY(stdout, key) == 1 && fflush(stdout) == 0;
	EVP_PKEY_free(key);
	return ok ? 0 : 1;
}

int
px_audit_tool_main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "verify") == 0)
		return verify_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "pubkey") == 0)
		return pubkey_main(argc - 1, argv + 1);
	usage(stderr);
	return PX_AUDIT_EXIT_USAGE;
}
