/*
 * proxy/audittool.h: `postern-proxy audit verify|pubkey`: check an audit
 * log's hash chain and signed checkpoints across its files, print the
 * public key that signs them (postern-proxy(8), AUDIT LOG).
 */
#ifndef POSTERN_PROXY_AUDITTOOL_H
#define POSTERN_PROXY_AUDITTOOL_H

/* Exit statuses of `audit verify`; the weightiest fault found wins. */
#define PX_AUDIT_EXIT_OK 0
#define PX_AUDIT_EXIT_UNSIGNED 1  /* lines after the last checkpoint */
#define PX_AUDIT_EXIT_USAGE 2     /* bad arguments, a file or key unreadable */
#define PX_AUDIT_EXIT_BROKEN 3    /* a line edited, removed, reordered, cut */
#define PX_AUDIT_EXIT_FILE_GAP 4  /* a file missing, cut or out of order */
#define PX_AUDIT_EXIT_BAD_SIG 5   /* a bad signature, or another key's */

/* ARGV[0] is "audit".  Returns the exit status. */
int px_audit_tool_main(int argc, char **argv);

#endif
