/*
 * bridge/nlerr.h: libnl's error codes, translated once.
 *
 * libnl reports NLE_* codes of its own; postern speaks negative errno.
 * Every module that calls libnl (bridge/link.c, sidecar/rules.c,
 * sidecar/nft.c) maps a libnl failure here, where it occurs, and passes
 * errno on.  In bridge/ because the bridge links libnl and nothing that
 * is the sidecar's; the sidecar links it from here.
 */
#ifndef POSTERN_BRIDGE_NLERR_H
#define POSTERN_BRIDGE_NLERR_H

/*
 * The negative errno for libnl error code NLE (negative or positive, as
 * libnl returns it).  Codes without a close errno are -EIO.
 */
int br_nlerr(int nle);

#endif
