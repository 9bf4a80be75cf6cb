// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - peer authentication.
 *
 * A cluster may share a secret (RDMALOG_A_SECRET, set by rdmalogctl; never
 * read back). With one, the handshake of every connection carries a fresh
 * random nonce from each side (struct rdmalog_cm_hs), and each side's
 * HELLO carries HMAC-SHA256(secret, "rdmalog-hello" || side || connecting
 * nonce || accepting nonce || the HELLO from its node id up to the MAC).
 * A receiver acts on nothing of a connection before that HELLO arrived
 * and verified (hello.c), so a peer that does not know the secret is
 * granted nothing. A replayed HELLO fails: the other side's nonce is new.
 * This authenticates the start of a connection, as DRBD's cram-hmac
 * does, not every message after it: the reliable connection's queue
 * pair numbers and packet sequence numbers are what binds the rest.
 *
 * The transform is keyed once per up period (conn.c) and only read
 * afterwards: any context may compute with it (shash: no sleeping).
 */
#include <crypto/hash.h>
#include <crypto/algapi.h>
#include <linux/err.h>
#include <linux/string.h>

#include "auth.h"
#include "proto.h"

static const char rdmalog_auth_label[] = "rdmalog-hello";

struct crypto_shash *rdmalog_auth_alloc(const u8 *key, unsigned int len)
{
	struct crypto_shash *tfm;
	int err;

	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm))
		return tfm;
	err = crypto_shash_setkey(tfm, key, len);
	if (err) {
		crypto_free_shash(tfm);
		return ERR_PTR(err);
	}
	return tfm;
}

void rdmalog_auth_free(struct crypto_shash *tfm)
{
	/* crypto_free_shash() wipes the transform's context (the key). */
	if (!IS_ERR_OR_NULL(tfm))
		crypto_free_shash(tfm);
}

int rdmalog_auth_hello_mac(struct crypto_shash *tfm,
			   enum rdmalog_auth_side side, const u8 *nonce_c,
			   const u8 *nonce_a, const struct rdmalog_msg_hello *m,
			   u8 *mac)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	const u8 *body = (const u8 *)&m->node_id;
	u8 who = side;
	int err;

	desc->tfm = tfm;
	err = crypto_shash_init(desc) ?:
	      crypto_shash_update(desc, rdmalog_auth_label,
				  sizeof(rdmalog_auth_label) - 1) ?:
	      crypto_shash_update(desc, &who, 1) ?:
	      crypto_shash_update(desc, nonce_c, RDMALOG_NONCE_SIZE) ?:
	      crypto_shash_update(desc, nonce_a, RDMALOG_NONCE_SIZE) ?:
	      crypto_shash_update(desc, body,
				  offsetof(struct rdmalog_msg_hello, mac) -
				  offsetof(struct rdmalog_msg_hello, node_id)) ?:
	      crypto_shash_final(desc, mac);
	shash_desc_zero(desc);
	return err;
}

bool rdmalog_auth_hello_ok(struct crypto_shash *tfm,
			   enum rdmalog_auth_side side, const u8 *nonce_c,
			   const u8 *nonce_a, const struct rdmalog_msg_hello *m)
{
	u8 want[RDMALOG_MAC_SIZE];
	bool ok;

	ok = !rdmalog_auth_hello_mac(tfm, side, nonce_c, nonce_a, m, want) &&
	     !crypto_memneq(want, m->mac, sizeof(want));
	memzero_explicit(want, sizeof(want));
	return ok;
}
