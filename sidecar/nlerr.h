/*
 * sidecar/nlerr.h: libnl's error codes, translated once (STYLE.md).
 *
 * libnl reports NLE_* codes of its own; the sidecar speaks negative errno.
 * Every module that calls libnl (sidecar/rules.c, sidecar/nft.c) maps a
 * libnl failure here, where it occurs, and passes errno on.
 */
#ifndef POSTERN_SIDECAR_NLERR_H
#define POSTERN_SIDECAR_NLERR_H

/*
 * The negative errno for libnl error code NLE (negative or positive, as
 * libnl returns it).  Codes without a close errno are -EIO.
 */
int sc_nlerr(int nle);

#endif
