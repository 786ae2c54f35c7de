/*
 * proxy/proto/sni.h: the TLS ClientHello inspector behind the SNI check
 * (sni = match).
 *
 * When a CONNECT tunnel is established the first bytes the client sends are
 * held, not forwarded, and fed to an inspector until it can say what they
 * are: a TLS ClientHello with a server_name, a ClientHello without one, not
 * TLS at all, or something refused.  The ClientHello is parsed by OpenSSL
 * (a throwaway server-side SSL object on memory BIOs stopped in its
 * ClientHello callback), never by hand, so a ClientHello split over many
 * records and segments is reassembled exactly as a real server would.  The
 * inspector writes nothing anywhere: the alert the SSL object produces is
 * discarded, and the caller forwards the client's original bytes.
 *
 * Classification of the first bytes, before OpenSSL sees them:
 *  - 0x16: a TLS handshake record (RFC 8446 §5.1, RFC 5246 §6.2.1),
 *    whatever its record version bytes say; handed to OpenSSL, which
 *    refuses a version other than 3.x (PX_SNI_BAD).  A lenient server (Go's
 *    crypto/tls) accepts "16 02 01", so such a stream is never "not TLS".
 *  - 0x14, 0x15, 0x17 or 0x18 followed by 0x03: a TLS record of another
 *    content type (change_cipher_spec, alert, application_data, heartbeat)
 *    before any ClientHello.  A client must open with a ClientHello
 *    (RFC 8446 §4.1.2); anything else could only serve to make a lenient
 *    server and this check disagree, so it is PX_SNI_BAD.
 *  - a two-byte SSLv2 record header with the high bit set, followed by
 *    CLIENT-HELLO (1) and version 0x0002 or 0x03xx: an SSLv2-compatible
 *    ClientHello.  It cannot carry extensions, hence no server_name, and
 *    RFC 6176 §3 forbids clients to send it; PX_SNI_BAD.
 *  - anything else: PX_SNI_NOT_TLS, decided on the first byte whenever the
 *    first byte alone settles it ("GET ", "SSH-"), so a plain-text protocol
 *    is never kept waiting for bytes it will not send.
 * Records of other content types interleaved inside a fragmented ClientHello
 * are OpenSSL's business; it refuses them (RFC 8446 §5.1), giving PX_SNI_BAD.
 */
#ifndef POSTERN_PROXY_SNI_H
#define POSTERN_PROXY_SNI_H

#include <stddef.h>

#include "conf/host.h"

struct px_sni;

/* Limits accepted by px_sni_new() for MAX_BYTES. */
#define PX_SNI_MIN_BYTES 64
#define PX_SNI_MAX_BYTES (1024 * 1024)

enum px_sni_result {
	PX_SNI_NEED_MORE = 0, /* undecided: feed the next bytes */
	PX_SNI_HELLO,         /* a complete ClientHello: see px_sni_name() */
	PX_SNI_NOT_TLS,       /* the stream does not start with TLS */
	PX_SNI_BAD,           /* TLS, but refused: malformed, bad server_name */
	PX_SNI_TOO_BIG,       /* no complete ClientHello within MAX_BYTES */
};

/*
 * Create an inspector that will look at no more than MAX_BYTES bytes of the
 * client stream (PX_SNI_MIN_BYTES..PX_SNI_MAX_BYTES; 64 KiB is a good value:
 * a ClientHello with post-quantum key shares is a few KiB).  The shared
 * OpenSSL context is created on the first call.  Returns the inspector,
 * owned by the caller and released with px_sni_free(), or NULL with errno
 * set to EINVAL (MAX_BYTES out of range), ENOMEM, or EPROTO (OpenSSL could
 * not set up; its error queue is cleared).
 */
struct px_sni *px_sni_new(size_t max_bytes);

/*
 * Release S and the OpenSSL objects it still holds.  px_sni_free(NULL) is a
 * no-op.
 */
void px_sni_free(struct px_sni *s);

/*
 * Append the next LEN bytes of the client stream at DATA (not retained: the
 * caller keeps and forwards its own copy) and say what is known now.
 * PX_SNI_NEED_MORE means more bytes are needed; every other result is final,
 * and once final, further calls ignore their bytes and return the same
 * result, so feeding zero bytes asks for the current state.  Bytes past
 * MAX_BYTES are not looked at: when MAX_BYTES bytes do not hold a complete
 * ClientHello the result is PX_SNI_TOO_BIG.  Bytes after the ClientHello in
 * the same call (early data, the next record) do not change the result.
 * When a final result is reached, the OpenSSL objects are released, so a
 * decided inspector costs only its small struct.  Never blocks, never
 * writes anywhere, leaves the calling thread's OpenSSL error queue empty.
 */
enum px_sni_result px_sni_feed(struct px_sni *s, const void *data, size_t len);

/*
 * After px_sni_feed() returned PX_SNI_HELLO: returns 1 and stores the
 * server_name, in the normal form of cf_host_parse() (always a
 * CF_HOST_NAME), in *HOST when the ClientHello carried one; returns 0 and
 * leaves *HOST alone when it carried no server_name extension.  Returns
 * -EINVAL in any other state.
 */
int px_sni_name(const struct px_sni *s, struct cf_host *host);

/* What px_sni_alpn() reports: the ClientHello's ALPN list offers "h2"
 * (RFC 9113 §3.2), "http/1.1". */
#define PX_SNI_ALPN_H2 0x1
#define PX_SNI_ALPN_HTTP11 0x2

/*
 * After px_sni_feed() returned PX_SNI_HELLO: the protocols the
 * ClientHello's application_layer_protocol_negotiation extension (RFC 7301)
 * offers among h2 and http/1.1, as PX_SNI_ALPN_* bits; 0 when it has no
 * such extension, offers neither, or its list does not parse.  A
 * terminating proxy offers the upstream h2 only when the client did.
 * Returns -EINVAL in any other state.
 */
int px_sni_alpn(const struct px_sni *s);

/*
 * Why S reached PX_SNI_BAD, PX_SNI_NOT_TLS or PX_SNI_TOO_BIG: a static
 * English phrase for the audit log (for a server_name that fails
 * normalisation, cf_host_parse()'s phrase).  NULL in the other states.
 */
const char *px_sni_why(const struct px_sni *s);

/*
 * Release the shared OpenSSL context (inspectors still alive keep their own
 * reference and stay usable; the next px_sni_new() makes a new context).
 * For a clean exit under leak checkers; calling it is optional.
 */
void px_sni_cleanup(void);

#endif
