/*
 * proxy/proto/ocsf.h: an audit line as an OCSF 1.1.0 record (audit_format =
 * ocsf), with no I/O.  The input is a line as proxy/core/audit.c builds it:
 * one flat JSON object of string, number and null fields, "time" and
 * "event" first.  A tunnel's or a connection's line becomes a Network
 * Activity record (class 4001), an HTTP request's an HTTP Activity record
 * (4002): category_uid 4, activity_id, type_uid = class_uid * 100 +
 * activity_id, time in ms, severity_id, status and disposition for allow
 * and deny, src_endpoint, dst_endpoint {hostname, port, ip}, http_request
 * {http_method, url {hostname, path, port}}, traffic, metadata.  Every
 * other field (reason, rule and rule_at, session, generation, config, the
 * event's name...) goes, as it was, into "unmapped", the record's last
 * field, where the hash chain adds seq and prev.
 */
#ifndef POSTERN_PROXY_OCSF_H
#define POSTERN_PROXY_OCSF_H

#include <stddef.h>

#define PX_OCSF_VERSION "1.1.0"

/*
 * The record for LINE (LEN bytes, ending in "}\n") into OUT, ending in
 * "}\n" too; VERSION is the product's.  Returns its length, or 0 when LINE
 * is not such a line or OUTSZ is short (twice LEN and 1024 is enough).
 */
size_t px_ocsf_line(const char *line, size_t len, char *out, size_t outsz, const char *version);

#endif
