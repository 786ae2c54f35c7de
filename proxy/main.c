/*
 * proxy/main.c: postern-proxy's command line: serve, --check, --explain,
 * ctl, audit.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "conf/config.h"
#include "conf/grantfile.h"
#include "proxy/audittool.h"
#include "proxy/check.h"
#include "proxy/ctl.h"
#include "proxy/engine.h"
#include "proxy/explain.h"
#include "proxy/core/mem.h"
#include "proxy/core/sockmaker.h"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: postern-proxy [-c FILE] [--allow PATTERN]... [--listen ADDR]...\n"
	    "                     serve (the built-in default without -c); --allow adds\n"
	    "                     allow_hosts items to [defaults], --listen replaces the\n"
	    "                     [proxy] listeners (unix:PATH or tcp:ADDR:PORT)\n"
	    "       postern-proxy --check [-c FILE]         validate and summarise a config\n"
	    "       postern-proxy --explain TARGET [--session NAME] [--resolve] [-c FILE]\n"
	    "                     TARGET is HOST:PORT or https://HOST[:PORT] (CONNECT), or\n"
	    "                     http://HOST[:PORT]/PATH (plain HTTP)\n"
	    "       postern-proxy ctl status|reload|metrics [--admin PATH] [-c FILE]\n"
	    "                     talk to a running proxy's admin socket\n"
	    "       postern-proxy audit verify [--pubkey FILE | -c FILE] LOG...\n"
	    "       postern-proxy audit pubkey [-c FILE]\n"
	    "                     check the audit log's chain and signatures; its key\n"
	    "       postern-proxy --default-config          print the built-in default\n"
	    "       postern-proxy -V|--version\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check", no_argument, NULL, 'C' },
		{ "explain", required_argument, NULL, 'E' },
		{ "session", required_argument, NULL, 's' },
		{ "resolve", no_argument, NULL, 'r' },
		{ "default-config", no_argument, NULL, 'D' },
		{ "allow", required_argument, NULL, 'a' },
		{ "listen", required_argument, NULL, 'l' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL, *target = NULL, *session = "default";
	int check = 0, resolve = 0, ch;
	const char **allow = NULL, **listen = NULL;
	size_t nallow = 0, nlisten = 0;

	/* The socket maker's internal mode: nothing of the proxy's runs
	 * first, no config is read. */
	if (argc > 1 && strcmp(argv[1], PX_SOCKMAKER_ARG) == 0)
		return px_sockmaker_main(argc, argv);
	px_mem_init();
	/* Before any config, and so any secret's value, is read. */
	px_engine_harden();
	/* A from_env secret's value stays in no /proc/PID/environ. */
	if (px_engine_env_take() < 0) {
		fprintf(stderr, "postern-proxy: out of memory\n");
		return 1;
	}
	/* "postern-proxy ctl ..." is the admin socket's client, with options
	 * of its own. */
	if (argc > 1 && strcmp(argv[1], "ctl") == 0)
		return px_ctl_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "audit") == 0)
		return px_audit_tool_main(argc - 1, argv + 1);
	while ((ch = getopt_long(argc, argv, "c:hV", opts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			path = optarg;
			break;
		case 'C':
			check = 1;
			break;
		case 'E':
			target = optarg;
			break;
		case 's':
			session = optarg;
			break;
		case 'r':
			resolve = 1;
			break;
		case 'a':
		case 'l': {
			const char ***v = ch == 'a' ? &allow : &listen;
			size_t *n = ch == 'a' ? &nallow : &nlisten;
			const char **nv = realloc(*v, (*n + 1) * sizeof(*nv));
			if (nv == NULL) {
				perror("postern-proxy");
				return 1;
			}
			nv[(*n)++] = optarg;
			*v = nv;
			break;
		}
		case 'D':
			fputs(cf_default_text(), stdout);
			return 0;
		case 'V':
			printf("postern-proxy %s\n", PACKAGE_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "postern-proxy: unexpected argument: %s\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	{
		struct cf_overrides ov;
		struct px_engine_opts eo;
		int rc;

		memset(&ov, 0, sizeof(ov));
		ov.extra_allow = allow;
		ov.n_extra_allow = nallow;
		ov.extra_listen = listen;
		ov.n_extra_listen = nlisten;
		ov.replace_listen = nlisten > 0;
		/* --check judges the file as the proxy would at start. */
		ov.strict_modes = 1;
		ov.trust_file_user = 1;
		if (check)
			rc = px_check(path, &ov, "postern-proxy", NULL);
		else if (target != NULL)
			rc = px_explain(path, &ov, target, session, resolve, stdout);
		else {
			memset(&eo, 0, sizeof(eo));
			eo.config_path = path;
			eo.extra_allow = allow;
			eo.n_extra_allow = nallow;
			eo.extra_listen = listen;
			eo.n_extra_listen = nlisten;
			eo.replace_listen = nlisten > 0;
			eo.ready_fd = -1;
			eo.strict_modes = 1;
			eo.sockmaker = 1;
			rc = px_engine_main(&eo);
		}
		free(allow);
		free(listen);
		return rc;
	}
}
