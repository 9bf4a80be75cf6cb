/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - peer authentication (auth.c): with a shared secret set, both
 * sides of every connection prove that they know it, with an HMAC-SHA256
 * over their HELLO bound to both sides' handshake nonces
 * (Documentation/protocol.rst, "Authentication").
 */
#ifndef _RDMALOG_AUTH_H
#define _RDMALOG_AUTH_H

#include <linux/types.h>

struct crypto_shash;
struct rdmalog_msg_hello;

/* Who sends a HELLO, in its MAC. */
enum rdmalog_auth_side {
	RDMALOG_AUTH_CONNECTING		= 1,
	RDMALOG_AUTH_ACCEPTING		= 2,
};

/*
 * A keyed hmac(sha256) transform for @len bytes of @key (copied: the
 * caller may wipe its copy). Process context. Return: the transform
 * (rdmalog_auth_free()) or an ERR_PTR.
 */
struct crypto_shash *rdmalog_auth_alloc(const u8 *key, unsigned int len);
/* Free (and wipe) a transform of rdmalog_auth_alloc(); NULL is ignored. */
void rdmalog_auth_free(struct crypto_shash *tfm);

/*
 * The MAC of @m as @side sends it, with the connecting side's nonce
 * @nonce_c and the accepting side's @nonce_a, into @mac (ignoring what
 * @m->mac holds). Any context. Return: 0 or a negative errno.
 */
int rdmalog_auth_hello_mac(struct crypto_shash *tfm,
			   enum rdmalog_auth_side side, const u8 *nonce_c,
			   const u8 *nonce_a, const struct rdmalog_msg_hello *m,
			   u8 *mac);
/* Whether @m->mac is the MAC of @m as @side sends it. Any context. */
bool rdmalog_auth_hello_ok(struct crypto_shash *tfm,
			   enum rdmalog_auth_side side, const u8 *nonce_c,
			   const u8 *nonce_a, const struct rdmalog_msg_hello *m);

#endif /* _RDMALOG_AUTH_H */
