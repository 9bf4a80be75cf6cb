// SPDX-License-Identifier: GPL-2.0
/*
 * rogue_peer: impersonate the primary towards a backup and check that the
 * backup's RDMA grant is least-privilege.
 *
 * The program speaks the wire protocol of kmod/proto.h (included as is)
 * with libibverbs and librdmacm: it connects to a backup as node --node
 * (the backup must be waiting for that node: the real one is down or has
 * dropped the backup), sends the handshake, pre-posts its receive
 * buffers, exchanges HELLOs and waits for the backup's RING. Then it
 * probes the grant, one connection per probe that must fail (a remote
 * access error puts the queue pair into the error state):
 *
 *   inside	RDMA WRITE of a few bytes inside the granted ring, at a free
 *		offset above the backup's head (the backup ignores bytes
 *		above its head until a primary covers them with an APPEND):
 *		must complete successfully.
 *   past_end	RDMA WRITE just past the end of the last segment, same
 *		rkey: must fail with a remote error.
 *   read	RDMA READ inside the ring with the granted rkey: must fail
 *		(the grant is REMOTE_WRITE only).
 *   stale	RDMA WRITE inside the ring with the rkey of the previous,
 *		closed connection: must fail (a grant dies with its
 *		connection). Skipped when the new grant happens to have
 *		the same rkey.
 *
 * With --listen it plays the accepting side instead (the backup of a
 * smaller node id connects to it), and with --addr/--rkey it writes to
 * memory granted to another connection: the "cross" probe, which shows
 * whether a grant is limited to the queue pair it was given to.
 *
 * With --listen and --fwd-len LEN it plays a backup instead (the primary
 * has the smaller node id and connects to it): after the HELLOs it sends
 * --fwd-count FWDs asking the primary to pull LEN bytes each from a
 * buffer that does not exist, and reports the FWD_DONE statuses in the
 * JSON ("fwd_status": status -> count). The primary must answer EMSGSIZE
 * when LEN is above what it can pull, before it allocates anything.
 *
 * With --garbage KIND it probes the backup's input checks instead: on one
 * connection, after the HELLOs and the RING, it sends one bad control
 * message of that kind (see garbage_kinds[]: bad magic, version, type or
 * length, truncated, oversized, sequence gap or repeat, too many credits,
 * a message of a stale epoch, a second HELLO, a RING, inconsistent or backward APPENDs, an APPEND
 * committing random ring bytes, a record of another epoch or a record
 * whose payload was torn, a HELLO of another log asking for a trim and
 * then an APPEND, an ACK, an unknown FWD_DONE, a JOIN, and
 * CATCHUPs with a range that ends before it starts, segments that do not
 * add up to the capacity, an unknown flag, a start that is not the
 * backup's head, a RESET that would move the backup's log back, or a
 * valid range over a ring of ours, registered REMOTE_READ, holding random
 * bytes or a record whose payload was torn, which the backup must pull
 * with RDMA READ and reject; BALLOT grants with a zero key, a misaligned
 * word or reserved bits, or a second one) and waits up to 15 s for the
 * backup to drop
 * the connection: a DISCONNECTED event or a failed or flushed completion.
 * KIND "valid" is the control: a valid HEARTBEAT, and the connection must
 * still be there 3 s later; so is "new_epoch": one sound record of our
 * epoch (--primary-epoch E: of the backup's log, or a later one, as a new
 * primary after a leader change) committed by our APPEND. With --vote-epoch N our HELLO and HEARTBEATs
 * announce the election epoch N (the backup must take it as the highest
 * epoch it knows of and announce it to its own peers). The JSON says "dropped" and "how".
 *
 * With --grant-probe it only asks for the grant: it connects as the
 * primary and reports whether the backup refused the connection request
 * ("rejected": the reason), dropped the connection after our HELLO
 * ("dropped") or granted its ring ("ring"). The tests run it without a
 * secret, with the wrong one and with the right one (--secret FILE: the
 * handshake carries our nonce and the AUTH flag, our HELLO its MAC,
 * computed here with our own SHA-256, not the kernel's), and as a second
 * primary while the real one holds the ring. Exit 0 when the protocol ran;
 * the JSON says what happened.
 *
 * With --listen --catchup-probe it plays a pristine backup towards the
 * primary (which connects to it): after the HELLOs it sends a RING of its
 * own (an empty log), waits for the CATCHUP the primary must answer with,
 * and READs the primary's ring: 16 bytes at the start of the range (must
 * work) and 16 bytes at its end, outside the range (must fail at the
 * primary's NIC: the grant covers [start, target) only).
 *
 * With --ballot-probe KIND it plays a backup whose device has atomics
 * (with --listen when its node id is the larger): its HELLO says
 * RDMALOG_HELLO_F_ATOMICS, it waits for the node's BALLOT and probes the
 * grant once (one connection per probe that must fail): "ok" a
 * fetch-and-add of 0 on the word and a READ of the block (both must
 * work: the JSON says the word and the block's magic); "word_read" a
 * READ of the word, "word_write" a WRITE to it, "block_write" a WRITE to
 * the block, "block_atomic" a fetch-and-add on the block's key and
 * "past_block" a READ just past the block (each must fail at the node's
 * NIC: the word is for atomics only, the block for READ only);
 * "tamper:E" reads the word (a fetch-and-add of 0) and compare-and-swaps
 * it, open or closed, to a vote for this node in epoch E with the same
 * sequence and open bit (the JSON says the word read and what the swap
 * returned: the node must catch a change of its closed word).
 *
 * With --vote EPOCH it plays a candidate (as a backup; with --listen when
 * its node id is the larger): after the HELLOs it sends a VOTE_REQ for
 * EPOCH with the position (--vote-pos-epoch E, --vote-gen G, the voter's
 * last LSN as its HELLO tells, or --vote-behind N below it), waits for the
 * VOTE and reports it in the JSON ("vote": reason, the voter's vote and
 * position). --vote-pre makes it a pre-vote ("pre": true in the answer).
 *
 * Output: TAP on stdout, then one line of JSON with every probe's result.
 * Exit status 0 when every probe behaved as required, 1 when one did not,
 * 2 when the protocol could not be run at all (no connection, no RING).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <endian.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "../kmod/proto.h"
#include "../uapi/rdmalog.h"
#include "../uapi/rdmalog_genl.h"

#define RECV_DEPTH	32
#define PROBE_BYTES	16
#define STEP_MS		15000
#define ROLE_PRIMARY	1
#define ROLE_BACKUP	2

/* wr_id of the work requests that are not receive buffers */
#define WRID_SEND	1000
#define WRID_PROBE	1001

struct opts {
	const char *addr;
	int port;
	unsigned int node;
	unsigned int dst;
	uint64_t cluster;
	uint64_t capacity;
	uint32_t max_record;
	bool listen;
	bool do_read;
	bool do_stale;
	/* --cross: write here with this rkey, granted to someone else */
	uint64_t cross_addr;
	uint32_t cross_rkey;
	bool cross;
	unsigned int hold_ms;
	/* --garbage: the kind of bad control message to send */
	const char *garbage;
	/* --fwd-len: as a backup, FWDs of this many bytes, --fwd-count */
	uint32_t fwd_len;
	unsigned int fwd_count;
	/* --secret FILE: the shared secret we claim to have */
	uint8_t secret[RDMALOG_MAX_SECRET];
	size_t secret_len;
	bool grant_probe;
	bool catchup_probe;
	/* --vote EPOCH: as a candidate, ask for a vote (--vote-behind N) */
	uint64_t vote;
	bool vote_pre;
	uint64_t vote_behind;
	uint32_t vote_gen;
	uint64_t vote_pos_epoch;
	/* --ballot-probe KIND: probe the node's ballot grant */
	const char *ballot_probe;
	/*
	 * --lead E (with --grant-probe): HELLO as a backup, then LEAD of the
	 * node's log in epoch E; --lead-other-log: HELLO naming no log, LEAD
	 * of another one
	 */
	uint64_t lead;
	bool lead_other_log;
	/*
	 * --lead-es POS,LSN,PREV_EPOCH,PREV_GEN[,nf] (with --lead): the LEAD
	 * names an epoch-start record at POS with LSN (timestamp 1, gen 0)
	 * after a record of PREV_EPOCH / PREV_GEN; ",nf": its fields without
	 * the flag
	 */
	const char *lead_es;
};

/*
 * --vote-epoch N: the election epoch our HELLO and every HEARTBEAT
 * announce (0 by default, as a node that never voted)
 */
static uint64_t opt_vote_epoch;

/*
 * --primary-epoch E: the epoch our messages and records are of (by
 * default the backup's handshake epoch, or 1): as a primary, the epoch
 * of the backup's log, or a later one after a leader change
 */
static uint64_t opt_primary_epoch;

/* One connection to (or from) the backup. */
struct session {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen_id;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *mem;		/* receive buffers, send buffer, probe buffer */
	uint32_t tx_seq;
	uint32_t rx_seq;
	uint16_t grant;		/* receive buffers re-posted since our last send */
	uint16_t peer_depth;
	uint32_t credits;	/* our send credits: the peer's free buffers */
	uint64_t epoch;
	bool connected;
	bool hello;
	bool ring;
	struct rdmalog_msg_hello peer_hello;
	struct rdmalog_msg_ring peer_ring;
	unsigned int nr_segs;
	/* a completion of WRID_PROBE that arrived while waiting for others */
	bool probe_done;
	enum ibv_wc_status probe_status;
	/* sends posted and completed (send_msg() has one buffer) */
	unsigned int sent;
	unsigned int send_done;
	/* --fwd-len: FWD_DONEs received, by status (the last slot: others) */
	unsigned int fwd_done;
	unsigned int fwd_status[136];
	/* --garbage catchup_*: our "ring", granted REMOTE_READ in a CATCHUP */
	uint8_t *cu_mem;
	struct ibv_mr *cu_mr;
	uint64_t cu_len;
	/* the handshake nonces: [0] the connecting side's, [1] the other's */
	uint8_t nonce[2][RDMALOG_NONCE_SIZE];
	/* --catchup-probe: the primary's CATCHUP, and our ring for the RING */
	bool catchup;
	bool vote_seen;
	struct rdmalog_msg_vote vote;
	bool ballot;
	struct rdmalog_msg_ballot peer_ballot;
	struct rdmalog_msg_catchup peer_cu;
	uint8_t *ring_mem;
	struct ibv_mr *ring_mr;
	/* as a primary: notices written to the backup's notice block */
	uint32_t notice_seq;
	/* ACKs received */
	unsigned int acks;
};

#define SEND_OFF	(RECV_DEPTH * RDMALOG_MSG_SIZE)
/* room for an oversized message (--garbage oversized) */
#define SEND_MAX	(2 * RDMALOG_MSG_SIZE)
#define PROBE_OFF	(SEND_OFF + SEND_MAX)
#define MEM_SIZE	(PROBE_OFF + 4096)

static int tap_n;
static int failures;
static char json[4096];
static size_t json_len;

static void tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d ", ok ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

static void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void json_add(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (json_len >= sizeof(json))
		return;
	va_start(ap, fmt);
	n = vsnprintf(json + json_len, sizeof(json) - json_len, fmt, ap);
	va_end(ap);
	if (n > 0)
		json_len += n;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* SHA-256 (FIPS 180-4) and HMAC (RFC 2104), for the HELLO's MAC */

struct sha256 {
	uint32_t h[8];
	uint8_t buf[64];
	uint64_t len;
};

static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR32(x, n)	(((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(struct sha256 *c, const uint8_t *p)
{
	uint32_t w[64], v[8], t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++)
		w[i] = w[i - 16] + w[i - 7] +
		       (ROR32(w[i - 15], 7) ^ ROR32(w[i - 15], 18) ^
			(w[i - 15] >> 3)) +
		       (ROR32(w[i - 2], 17) ^ ROR32(w[i - 2], 19) ^
			(w[i - 2] >> 10));
	memcpy(v, c->h, sizeof(v));
	for (i = 0; i < 64; i++) {
		t1 = v[7] + (ROR32(v[4], 6) ^ ROR32(v[4], 11) ^ ROR32(v[4], 25)) +
		     ((v[4] & v[5]) ^ (~v[4] & v[6])) + sha256_k[i] + w[i];
		t2 = (ROR32(v[0], 2) ^ ROR32(v[0], 13) ^ ROR32(v[0], 22)) +
		     ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
		memmove(v + 1, v, 7 * sizeof(v[0]));
		v[4] += t1;
		v[0] = t1 + t2;
	}
	for (i = 0; i < 8; i++)
		c->h[i] += v[i];
}

static void sha256_init(struct sha256 *c)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(c->h, iv, sizeof(iv));
	c->len = 0;
}

static void sha256_update(struct sha256 *c, const void *data, size_t n)
{
	const uint8_t *p = data;

	while (n--) {
		c->buf[c->len++ % 64] = *p++;
		if (c->len % 64 == 0)
			sha256_block(c, c->buf);
	}
}

static void sha256_final(struct sha256 *c, uint8_t out[32])
{
	uint64_t bits = c->len * 8;
	uint8_t one = 0x80, zero = 0, be[8];
	int i;

	sha256_update(c, &one, 1);
	while (c->len % 64 != 56)
		sha256_update(c, &zero, 1);
	for (i = 0; i < 8; i++)
		be[i] = bits >> (56 - 8 * i);
	sha256_update(c, be, 8);
	for (i = 0; i < 32; i++)
		out[i] = c->h[i / 4] >> (24 - 8 * (i % 4));
}

/* HMAC-SHA256 of the @n pieces @part[i] of @len[i] bytes. */
static void hmac_sha256(const uint8_t *key, size_t key_len,
			const void *const *part, const size_t *len, int n,
			uint8_t out[32])
{
	uint8_t k[64] = { 0 }, pad[64], inner[32];
	struct sha256 c;
	int i;

	if (key_len > 64) {
		sha256_init(&c);
		sha256_update(&c, key, key_len);
		sha256_final(&c, k);
	} else {
		memcpy(k, key, key_len);
	}
	for (i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	sha256_init(&c);
	sha256_update(&c, pad, 64);
	for (i = 0; i < n; i++)
		sha256_update(&c, part[i], len[i]);
	sha256_final(&c, inner);
	for (i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	sha256_init(&c);
	sha256_update(&c, pad, 64);
	sha256_update(&c, inner, 32);
	sha256_final(&c, out);
}

/* The MAC of HELLO @m as side @side (1 connecting, 2 accepting) sends it. */
static void hello_mac(const struct opts *o, const struct session *s,
		      uint8_t side, struct rdmalog_msg_hello *m)
{
	static const char label[] = "rdmalog-hello";
	const void *part[5] = { label, &side, s->nonce[0], s->nonce[1],
				&m->node_id };
	const size_t len[5] = { sizeof(label) - 1, 1, RDMALOG_NONCE_SIZE,
				RDMALOG_NONCE_SIZE,
				offsetof(struct rdmalog_msg_hello, mac) -
				offsetof(struct rdmalog_msg_hello, node_id) };

	hmac_sha256(o->secret, o->secret_len, part, len, 5, m->mac);
}

static const char *rej_reason(unsigned int r)
{
	static const char * const names[] = {
		"none", "bad handshake", "version", "cluster id",
		"unknown peer", "address mismatch", "node id", "capacity",
		"direction", "not ready", "no resources", "bad params",
		"knock ok", "auth",
	};

	return r < sizeof(names) / sizeof(names[0]) ? names[r] : "unknown";
}

/* Wait for one rdma_cm event of type @want on the channel. */
static int cm_wait(struct session *s, enum rdma_cm_event_type want,
		   struct rdma_cm_event *copy, void *pdata, size_t pdata_len)
{
	struct rdma_cm_event *ev;
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
	enum rdma_cm_event_type got;
	int n, status;

again:
	n = poll(&pfd, 1, STEP_MS);
	if (n <= 0) {
		diag("no rdma_cm event (waiting for %s)", rdma_event_str(want));
		return -1;
	}
	if (rdma_get_cm_event(s->ch, &ev)) {
		diag("rdma_get_cm_event: %s", strerror(errno));
		return -1;
	}
	got = ev->event;
	if (got == RDMA_CM_EVENT_CONNECT_REQUEST && want != got &&
	    s->listen_id) {
		/* another node calls the one we play: not now */
		struct rdma_cm_id *id = ev->id;

		rdma_ack_cm_event(ev);
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		goto again;
	}
	if (copy)
		*copy = *ev;
	if (pdata) {
		memset(pdata, 0, pdata_len);
		if (ev->param.conn.private_data)
			memcpy(pdata, ev->param.conn.private_data,
			       ev->param.conn.private_data_len < pdata_len ?
			       ev->param.conn.private_data_len : pdata_len);
	}
	if (got == RDMA_CM_EVENT_REJECTED && ev->param.conn.private_data &&
	    ev->param.conn.private_data_len >= sizeof(struct rdmalog_cm_rej)) {
		struct rdmalog_cm_rej rej;

		memcpy(&rej, ev->param.conn.private_data, sizeof(rej));
		if (le32toh(rej.magic) == RDMALOG_CM_MAGIC) {
			diag("rejected by node %u: %s (detail %" PRIu64 ")",
			     le16toh(rej.node_id), rej_reason(rej.reason),
			     (uint64_t)le64toh(rej.detail));
			json_add(",\"rejected\":\"%s\"",
				 rej_reason(rej.reason));
		}
	}
	status = ev->status;
	rdma_ack_cm_event(ev);
	if (got != want) {
		diag("rdma_cm event %s (status %d), wanted %s",
		     rdma_event_str(got), status, rdma_event_str(want));
		return -1;
	}
	return 0;
}

static int post_recv(struct session *s, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->mem + i * RDMALOG_MSG_SIZE),
		.length = RDMALOG_MSG_SIZE,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(s->id->qp, &wr, &bad);
}

/* PD, CQ, QP, buffers on @s->id; the receive buffers posted. */
static int session_setup_qp(struct session *s)
{
	struct ibv_qp_init_attr qa = {};
	unsigned int i;

	s->pd = ibv_alloc_pd(s->id->verbs);
	if (!s->pd) {
		diag("ibv_alloc_pd: %s", strerror(errno));
		return -1;
	}
	s->cq = ibv_create_cq(s->id->verbs, 2 * RECV_DEPTH + 8, NULL, NULL, 0);
	if (!s->cq) {
		diag("ibv_create_cq: %s", strerror(errno));
		return -1;
	}
	s->mem = calloc(1, MEM_SIZE);
	if (!s->mem)
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->mem, MEM_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr) {
		diag("ibv_reg_mr: %s", strerror(errno));
		return -1;
	}
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = RECV_DEPTH;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_all = 1;
	if (rdma_create_qp(s->id, s->pd, &qa)) {
		diag("rdma_create_qp: %s", strerror(errno));
		return -1;
	}
	/* Receive buffers before the connection exists: the peer may send at once. */
	for (i = 0; i < RECV_DEPTH; i++)
		if (post_recv(s, i)) {
			diag("ibv_post_recv: %s", strerror(errno));
			return -1;
		}
	return 0;
}

/* Our handshake, with our nonce @nonce (made here). */
static void hs_fill(const struct opts *o, struct rdmalog_cm_hs *hs,
		    uint8_t *nonce)
{
	size_t i;

	for (i = 0; i < RDMALOG_NONCE_SIZE; i++)
		nonce[i] = random();
	memset(hs, 0, sizeof(*hs));
	if (o->secret_len)
		hs->flags = RDMALOG_CM_F_AUTH;
	memcpy(hs->nonce, nonce, RDMALOG_NONCE_SIZE);
	hs->magic = htole32(RDMALOG_CM_MAGIC);
	hs->version = RDMALOG_PROTO_VERSION;
	hs->recv_depth = htole16(RECV_DEPTH);
	hs->src_node = htole16(o->node);
	hs->dst_node = htole16(o->dst);
	hs->msg_size = htole16(RDMALOG_MSG_SIZE);
	hs->cluster_id = htole64(o->cluster);
	hs->epoch = htole64(1);
	hs->capacity = htole64(o->capacity);
}

static int hs_check(const struct opts *o, struct session *s,
		    const struct rdmalog_cm_hs *hs)
{
	if (le32toh(hs->magic) != RDMALOG_CM_MAGIC ||
	    hs->version != RDMALOG_PROTO_VERSION) {
		diag("peer's handshake not understood");
		return -1;
	}
	if (le16toh(hs->src_node) != o->dst || le16toh(hs->dst_node) != o->node) {
		diag("peer is node %u and expects node %u",
		     le16toh(hs->src_node), le16toh(hs->dst_node));
		return -1;
	}
	s->peer_depth = le16toh(hs->recv_depth);
	s->credits = s->peer_depth;
	/* a backup that never was a primary is at epoch 0; we speak in 1 */
	s->epoch = opt_primary_epoch ?: le64toh(hs->epoch) ?: 1;
	return 0;
}

static void conn_param_fill(struct rdma_conn_param *p, struct rdmalog_cm_hs *hs)
{
	memset(p, 0, sizeof(*p));
	p->private_data = hs;
	p->private_data_len = sizeof(*hs);
	p->responder_resources = 1;
	p->initiator_depth = 1;
	p->flow_control = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/* Connect to the backup as its primary; ESTABLISHED on return 0. */
static int session_connect(const struct opts *o, struct session *s)
{
	struct rdma_conn_param param;
	struct rdmalog_cm_hs hs, peer;
	struct addrinfo *ai, hints = { .ai_family = AF_UNSPEC };
	char port[16];
	int err;

	snprintf(port, sizeof(port), "%d", o->port);
	err = getaddrinfo(o->addr, port, &hints, &ai);
	if (err) {
		diag("%s: %s", o->addr, gai_strerror(err));
		return -1;
	}
	err = rdma_resolve_addr(s->id, NULL, ai->ai_addr, 2000);
	freeaddrinfo(ai);
	if (err) {
		diag("rdma_resolve_addr: %s", strerror(errno));
		return -1;
	}
	if (cm_wait(s, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, NULL, 0))
		return -1;
	if (rdma_resolve_route(s->id, 2000)) {
		diag("rdma_resolve_route: %s", strerror(errno));
		return -1;
	}
	if (cm_wait(s, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, NULL, 0))
		return -1;
	if (session_setup_qp(s))
		return -1;
	hs_fill(o, &hs, s->nonce[0]);
	conn_param_fill(&param, &hs);
	if (rdma_connect(s->id, &param)) {
		diag("rdma_connect: %s", strerror(errno));
		return -1;
	}
	if (cm_wait(s, RDMA_CM_EVENT_ESTABLISHED, NULL, &peer, sizeof(peer)))
		return -1;
	s->connected = true;
	memcpy(s->nonce[1], peer.nonce, RDMALOG_NONCE_SIZE);
	return hs_check(o, s, &peer);
}

/* Accept the backup's connection (it has the smaller node id). */
static int session_accept(const struct opts *o, struct session *s)
{
	struct rdma_conn_param param;
	struct rdmalog_cm_hs hs, peer;
	struct rdma_cm_event ev;
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(o->port),
	};

	if (inet_pton(AF_INET, o->addr, &sin.sin_addr) != 1) {
		diag("--listen takes an IPv4 address: %s", o->addr);
		return -1;
	}
	if (rdma_bind_addr(s->listen_id, (struct sockaddr *)&sin) ||
	    rdma_listen(s->listen_id, 4)) {
		diag("cannot listen on %s:%d: %s", o->addr, o->port,
		     strerror(errno));
		return -1;
	}
	diag("listening on %s:%d", o->addr, o->port);
	for (;;) {
		struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
		struct rdma_cm_event *e;

		/* the backup retries with a backoff of up to 5 s */
		if (poll(&pfd, 1, 30000) <= 0) {
			diag("nobody connected");
			return -1;
		}
		if (rdma_get_cm_event(s->ch, &e))
			return -1;
		ev = *e;
		memset(&peer, 0, sizeof(peer));
		if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST &&
		    e->param.conn.private_data)
			memcpy(&peer, e->param.conn.private_data,
			       e->param.conn.private_data_len < sizeof(peer) ?
			       e->param.conn.private_data_len : sizeof(peer));
		rdma_ack_cm_event(e);
		if (ev.event != RDMA_CM_EVENT_CONNECT_REQUEST)
			continue;
		if ((peer.flags & RDMALOG_CM_F_KNOCK) ||
		    le16toh(peer.src_node) != o->dst) {
			/*
			 * The passive side knocks (we are the smaller id
			 * here), or another node calls the one we play.
			 */
			rdma_reject(ev.id, NULL, 0);
			rdma_destroy_id(ev.id);
			continue;
		}
		break;
	}
	s->id = ev.id;
	if (hs_check(o, s, &peer))
		return -1;
	if (session_setup_qp(s))
		return -1;
	memcpy(s->nonce[0], peer.nonce, RDMALOG_NONCE_SIZE);
	hs_fill(o, &hs, s->nonce[1]);
	conn_param_fill(&param, &hs);
	if (rdma_accept(s->id, &param)) {
		diag("rdma_accept: %s", strerror(errno));
		return -1;
	}
	if (cm_wait(s, RDMA_CM_EVENT_ESTABLISHED, NULL, NULL, 0))
		return -1;
	s->connected = true;
	return 0;
}

/* Validate and note one received control message. */
static int handle_msg(struct session *s, const uint8_t *buf, uint32_t len)
{
	struct rdmalog_msg_hdr h;

	if (len < sizeof(h)) {
		diag("message of %u bytes", len);
		return -1;
	}
	memcpy(&h, buf, sizeof(h));
	if (le32toh(h.magic) != RDMALOG_MSG_MAGIC ||
	    h.version != RDMALOG_PROTO_VERSION || le16toh(h.length) != len) {
		diag("bad message header (type %u, %u bytes)", h.type, len);
		return -1;
	}
	if (le32toh(h.seq) != s->rx_seq + 1) {
		diag("message %u out of sequence (expected %u)",
		     le32toh(h.seq), s->rx_seq + 1);
		return -1;
	}
	s->rx_seq++;
	s->credits += le16toh(h.credits);
	switch (h.type) {
	case RDMALOG_MSG_HELLO:
		if (len != sizeof(s->peer_hello))
			return -1;
		memcpy(&s->peer_hello, buf, len);
		s->hello = true;
		break;
	case RDMALOG_MSG_RING:
		if (len < RDMALOG_MSG_RING_LEN(1) || len > sizeof(s->peer_ring))
			return -1;
		memcpy(&s->peer_ring, buf, len);
		s->nr_segs = le32toh(s->peer_ring.nr_segs);
		if (!s->nr_segs || s->nr_segs > RDMALOG_RING_MSG_SEGS ||
		    len != RDMALOG_MSG_RING_LEN(s->nr_segs)) {
			diag("RING with %u segments in %u bytes", s->nr_segs,
			     len);
			return -1;
		}
		s->ring = true;
		break;
	case RDMALOG_MSG_CATCHUP:
		if (len < RDMALOG_MSG_CATCHUP_LEN(1) ||
		    len > sizeof(s->peer_cu))
			return -1;
		memcpy(&s->peer_cu, buf, len);
		s->catchup = true;
		break;
	case RDMALOG_MSG_BALLOT:
		if (len != sizeof(s->peer_ballot))
			return -1;
		memcpy(&s->peer_ballot, buf, len);
		s->ballot = true;
		break;
	case RDMALOG_MSG_VOTE:
		if (len != sizeof(s->vote))
			return -1;
		memcpy(&s->vote, buf, len);
		s->vote_seen = true;
		break;
	case RDMALOG_MSG_FWD_DONE: {
		struct rdmalog_msg_fwd_done d;
		uint32_t st;

		if (len != sizeof(d))
			return -1;
		memcpy(&d, buf, len);
		st = le32toh(d.status);
		s->fwd_status[st < 135 ? st : 135]++;
		s->fwd_done++;
		break;
	}
	case RDMALOG_MSG_ACK:
		s->acks++;
		break;
	default:
		/* HEARTBEAT, WAIT: nothing to do but take the credits */
		break;
	}
	return 0;
}

/*
 * Poll the CQ until @done() is true, handling receives; a completion of
 * the probe is kept in @s. Return 0, -2 on a timeout, -1 on an error.
 */
static bool never(struct session *s);

static int progress(struct session *s, bool (*done)(struct session *s),
		    int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	struct ibv_wc wc[8];
	int n, i;

	while (!done(s)) {
		if (now_ms() > end) {
			if (done != never)
				diag("timed out");
			return -2;
		}
		n = ibv_poll_cq(s->cq, 8, wc);
		if (n < 0) {
			diag("ibv_poll_cq failed");
			return -1;
		}
		if (!n) {
			usleep(1000);
			continue;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id == WRID_PROBE) {
				s->probe_done = true;
				s->probe_status = wc[i].status;
				continue;
			}
			if (wc[i].wr_id == WRID_SEND) {
				if (wc[i].status != IBV_WC_SUCCESS) {
					diag("send: %s",
					     ibv_wc_status_str(wc[i].status));
					return -1;
				}
				s->send_done++;
				continue;
			}
			if (wc[i].status != IBV_WC_SUCCESS) {
				/* flushed after a probe broke the QP */
				if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
					continue;
				diag("receive: %s",
				     ibv_wc_status_str(wc[i].status));
				return -1;
			}
			if (handle_msg(s, s->mem + wc[i].wr_id * RDMALOG_MSG_SIZE,
				       wc[i].byte_len))
				return -1;
			if (post_recv(s, wc[i].wr_id))
				return -1;
			s->grant++;
		}
	}
	return 0;
}

static bool have_hello(struct session *s)
{
	return s->hello;
}

static bool have_ring(struct session *s)
{
	return s->ring;
}

static bool have_vote(struct session *s)
{
	return s->vote_seen;
}

static bool have_probe(struct session *s)
{
	return s->probe_done;
}

static int send_msg(struct session *s, void *msg, uint16_t len, uint8_t type)
{
	struct rdmalog_msg_hdr *h = msg;
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->mem + SEND_OFF),
		.length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WRID_SEND,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (!s->credits) {
		diag("no send credits");
		return -1;
	}
	h->magic = htole32(RDMALOG_MSG_MAGIC);
	h->version = RDMALOG_PROTO_VERSION;
	h->type = type;
	h->length = htole16(len);
	h->credits = htole16(s->grant);
	h->reserved = 0;
	h->seq = htole32(++s->tx_seq);
	h->epoch = htole64(s->epoch);
	memcpy(s->mem + SEND_OFF, msg, len);
	if (ibv_post_send(s->id->qp, &wr, &bad)) {
		diag("ibv_post_send: %s", strerror(errno));
		return -1;
	}
	s->grant = 0;
	s->credits--;
	s->sent++;
	return 0;
}

static bool never(struct session *s)
{
	(void)s;
	return false;
}

/*
 * Keep the connection alive for @ms: receive, and send a HEARTBEAT every
 * half second (the backup's peer timeout is seconds).
 */
static int hold(struct session *s, unsigned int ms)
{
	long long end = now_ms() + ms;
	struct rdmalog_msg_heartbeat m = {};

	m.first_lsn = s->peer_hello.first_lsn;
	m.commit_lsn = s->peer_hello.commit_lsn;
	m.next_lsn = s->peer_hello.next_lsn;
	m.interval_ms = htole32(1000);
	m.vote_epoch = htole64(opt_vote_epoch);
	while (now_ms() < end) {
		/* progress() with never() returns -2 once the time is up */
		if (progress(s, never, 500) == -1)
			return -1;
		if (s->credits > 1 &&
		    send_msg(s, &m, sizeof(m), RDMALOG_MSG_HEARTBEAT))
			return -1;
	}
	return 0;
}

/*
 * HELLO as a primary, with the backup's own positions (so that it trims
 * nothing), after the backup's HELLO; then wait for the RING.
 */
static int session_hello_send(const struct opts *o, struct session *s,
			      bool primary)
{
	struct rdmalog_msg_hello m = {};

	if (progress(s, have_hello, STEP_MS)) {
		diag("no HELLO from the backup");
		return -1;
	}
	diag("backup HELLO: node %u role %u first %" PRIu64 " commit %" PRIu64
	     " next %" PRIu64, le32toh(s->peer_hello.node_id),
	     le32toh(s->peer_hello.role),
	     (uint64_t)le64toh(s->peer_hello.first_lsn),
	     (uint64_t)le64toh(s->peer_hello.commit_lsn),
	     (uint64_t)le64toh(s->peer_hello.next_lsn));
	m.node_id = htole32(o->node);
	m.role = htole32(primary ? ROLE_PRIMARY : ROLE_BACKUP);
	m.interval_ms = htole32(1000);
	m.timeout_ms = htole32(5000);
	m.capacity = htole64(o->capacity);
	m.max_record = htole32(o->max_record);
	m.flags = htole32(RDMALOG_HELLO_F_LOG_UP |
			  (o->ballot_probe ? RDMALOG_HELLO_F_ATOMICS : 0));
	m.first_lsn = s->peer_hello.first_lsn;
	m.commit_lsn = s->peer_hello.commit_lsn;
	m.next_lsn = s->peer_hello.next_lsn;
	/*
	 * The log the backup follows (its HELLO says): an impostor of its
	 * primary (nothing authenticates one yet). As a backup: the log we
	 * "follow" is the primary's, so that it judges us by position.
	 */
	m.log_id = o->lead_other_log ? 0 : s->peer_hello.log_id;
	m.vote_epoch = htole64(opt_vote_epoch);
	if (primary && o->garbage && !strcmp(o->garbage, "other_log")) {
		/* another log, asking for a trim of all it committed */
		m.log_id ^= htole64(0x5a5a5a5a5a5a5a5aULL);
		m.first_lsn = s->peer_hello.commit_lsn;
	}
	if (o->secret_len)
		hello_mac(o, s, o->listen ? 2 : 1, &m);
	return send_msg(s, &m, sizeof(m), RDMALOG_MSG_HELLO);
}

static int session_hello(const struct opts *o, struct session *s, bool primary)
{
	if (session_hello_send(o, s, primary))
		return -1;
	if (!primary)
		return 0;
	if (progress(s, have_ring, STEP_MS)) {
		diag("no RING from the backup");
		return -1;
	}
	return 0;
}

/* A compare-and-swap probe's operands. */
static uint64_t probe_cmp, probe_swap;

/*
 * Post one RDMA WRITE or READ of PROBE_BYTES, or a fetch-and-add of 0 or
 * a compare-and-swap from probe_cmp to probe_swap (8 bytes back at
 * PROBE_OFF), and wait for its completion.
 */
static int probe(struct session *s, enum ibv_wr_opcode op, uint64_t raddr,
		 uint32_t rkey, enum ibv_wc_status *status)
{
	bool atomic = op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
		      op == IBV_WR_ATOMIC_CMP_AND_SWP;
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->mem + PROBE_OFF),
		.length = atomic ? 8 : PROBE_BYTES,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WRID_PROBE,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	memcpy(s->mem + PROBE_OFF, "rogue-peer-probe", PROBE_BYTES);
	if (atomic) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add =
			op == IBV_WR_ATOMIC_CMP_AND_SWP ? probe_cmp : 0;
		wr.wr.atomic.swap = probe_swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	s->probe_done = false;
	if (ibv_post_send(s->id->qp, &wr, &bad)) {
		diag("ibv_post_send: %s", strerror(errno));
		return -1;
	}
	/* rxe retries a lost packet for a while: be generous */
	if (progress(s, have_probe, 60000))
		return -1;
	*status = s->probe_status;
	return 0;
}

static void session_close(struct session *s)
{
	if (s->connected)
		rdma_disconnect(s->id);
	if (s->id && s->id->qp)
		rdma_destroy_qp(s->id);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cu_mr)
		ibv_dereg_mr(s->cu_mr);
	free(s->cu_mem);
	if (s->ring_mr)
		ibv_dereg_mr(s->ring_mr);
	free(s->ring_mem);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	free(s->mem);
	if (s->id)
		rdma_destroy_id(s->id);
	if (s->listen_id)
		rdma_destroy_id(s->listen_id);
	if (s->ch)
		rdma_destroy_event_channel(s->ch);
	memset(s, 0, sizeof(*s));
}

static int session_open(const struct opts *o, struct session *s)
{
	memset(s, 0, sizeof(*s));
	s->ch = rdma_create_event_channel();
	if (!s->ch) {
		diag("rdma_create_event_channel: %s", strerror(errno));
		return -1;
	}
	if (o->listen) {
		if (rdma_create_id(s->ch, &s->listen_id, NULL, RDMA_PS_TCP))
			return -1;
		return session_accept(o, s);
	}
	if (rdma_create_id(s->ch, &s->id, NULL, RDMA_PS_TCP)) {
		diag("rdma_create_id: %s", strerror(errno));
		return -1;
	}
	return session_connect(o, s);
}

/* Connect, exchange HELLOs and get the RING; tap line "what". */
static int session_start(const struct opts *o, struct session *s,
			 const char *what)
{
	unsigned int i;

	if (session_open(o, s) || session_hello(o, s, true)) {
		tap(false, "%s: connected as node %u and got a RING", what,
		    o->node);
		return -1;
	}
	for (i = 0; i < s->nr_segs; i++)
		diag("segment %u: addr 0x%" PRIx64 " length %u rkey 0x%x", i,
		     (uint64_t)le64toh(s->peer_ring.seg[i].addr),
		     le32toh(s->peer_ring.seg[i].length),
		     le32toh(s->peer_ring.seg[i].rkey));
	diag("RING: head %" PRIu64 " tail %" PRIu64 " next %" PRIu64,
	     (uint64_t)le64toh(s->peer_ring.head),
	     (uint64_t)le64toh(s->peer_ring.tail),
	     (uint64_t)le64toh(s->peer_ring.next_lsn));
	tap(true, "%s: connected as node %u and got a RING (%u segment%s)",
	    what, o->node, s->nr_segs, s->nr_segs == 1 ? "" : "s");
	return 0;
}

/*
 * Remote address and rkey of ring offset @off of @s's RING, for @len
 * bytes that must not cross a segment. Return 0, or -1.
 */
static int ring_addr(const struct session *s, uint64_t off, uint32_t len,
		     uint64_t *addr, uint32_t *rkey)
{
	uint64_t start = 0;
	unsigned int i;

	for (i = 0; i < s->nr_segs; i++) {
		uint64_t l = le32toh(s->peer_ring.seg[i].length);

		if (off >= start && off + len <= start + l) {
			*addr = le64toh(s->peer_ring.seg[i].addr) + off - start;
			*rkey = le32toh(s->peer_ring.seg[i].rkey);
			return 0;
		}
		start += l;
	}
	return -1;
}

/* A free ring offset for PROBE_BYTES: above the head, below tail + capacity. */
static int free_offset(const struct opts *o, const struct session *s,
		       uint64_t *off)
{
	uint64_t head = le64toh(s->peer_ring.head);
	uint64_t tail = le64toh(s->peer_ring.tail);
	uint64_t pos = head + 64;

	if (pos + PROBE_BYTES > tail + o->capacity)
		return -1;
	*off = pos % o->capacity;
	/* at a segment end: take the next segment's start */
	if (*off + PROBE_BYTES > o->capacity)
		return -1;
	return 0;
}

static const char *status_name(enum ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_SUCCESS: return "IBV_WC_SUCCESS";
	case IBV_WC_REM_ACCESS_ERR: return "IBV_WC_REM_ACCESS_ERR";
	case IBV_WC_REM_INV_REQ_ERR: return "IBV_WC_REM_INV_REQ_ERR";
	case IBV_WC_REM_OP_ERR: return "IBV_WC_REM_OP_ERR";
	case IBV_WC_RETRY_EXC_ERR: return "IBV_WC_RETRY_EXC_ERR";
	case IBV_WC_WR_FLUSH_ERR: return "IBV_WC_WR_FLUSH_ERR";
	case IBV_WC_LOC_PROT_ERR: return "IBV_WC_LOC_PROT_ERR";
	case IBV_WC_LOC_QP_OP_ERR: return "IBV_WC_LOC_QP_OP_ERR";
	default: return ibv_wc_status_str(st);
	}
}

/* The remote errors a refused access may complete with. */
static bool remote_refusal(enum ibv_wc_status st)
{
	return st == IBV_WC_REM_ACCESS_ERR || st == IBV_WC_REM_INV_REQ_ERR ||
	       st == IBV_WC_REM_OP_ERR;
}

/*
 * One probe that must end as @want_ok says; records a tap line and a JSON
 * member "@key": "status". Return 0 when it behaved as required.
 */
static int expect(struct session *s, const char *key, const char *what,
		  enum ibv_wr_opcode op, uint64_t addr, uint32_t rkey,
		  bool want_ok)
{
	enum ibv_wc_status st;
	bool ok;

	if (probe(s, op, addr, rkey, &st)) {
		tap(false, "%s: no completion", what);
		json_add(",\"%s\":\"no completion\"", key);
		return -1;
	}
	ok = want_ok ? st == IBV_WC_SUCCESS : remote_refusal(st);
	tap(ok, "%s (0x%" PRIx64 " rkey 0x%x): %s", what, addr, rkey,
	    status_name(st));
	json_add(",\"%s\":\"%s\"", key, status_name(st));
	return ok ? 0 : -1;
}

static int run_cross(const struct opts *o)
{
	struct session s;
	int ret;

	/* we are the accepting side: a backup with a smaller id connects */
	if (session_open(o, &s) || session_hello(o, &s, false)) {
		tap(false, "cross: a backup connected to node %u", o->node);
		session_close(&s);
		return 2;
	}
	tap(true, "cross: node %u connected to us (node %u)",
	    le32toh(s.peer_hello.node_id), o->node);
	ret = expect(&s, "cross", "cross: WRITE with another connection's grant",
		     IBV_WR_RDMA_WRITE, o->cross_addr, o->cross_rkey, false);
	session_close(&s);
	return ret ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* --vote: a candidate asks the node for its vote */

static const char *const vote_reasons[] = {
	"granted", "not_learned", "voted", "stale", "behind", "other_log",
	"leading", "busy", "has_primary",
};

static int run_vote(const struct opts *o)
{
	struct rdmalog_msg_vote_req m = {};
	uint64_t next, lsn, pos_epoch;
	struct session s;
	uint32_t reason;

	/* either side: the larger node id listens (--listen) */
	if (session_open(o, &s) || session_hello(o, &s, false)) {
		tap(false, "vote: connected to node %u as node %u", o->dst,
		    o->node);
		session_close(&s);
		return 2;
	}
	tap(true, "vote: connected to node %u as node %u",
	    le32toh(s.peer_hello.node_id), o->node);
	/* its own position as its HELLO tells, or below it by --vote-behind */
	next = le64toh(s.peer_hello.next_lsn);
	lsn = next > 1 + o->vote_behind ? next - 1 - o->vote_behind : 0;
	pos_epoch = lsn ? o->vote_pos_epoch : 0;
	m.epoch = htole64(o->vote);
	m.log_id = s.peer_hello.log_id;
	m.pos.epoch = htole64(pos_epoch);
	m.pos.lsn = htole64(lsn);
	m.pos.gen = htole32(o->vote_gen);
	m.flags = htole32(o->vote_pre ? RDMALOG_VOTE_F_PRE : 0);
	if (send_msg(&s, &m, sizeof(m), RDMALOG_MSG_VOTE_REQ)) {
		tap(false, "vote: cannot send the VOTE_REQ");
		session_close(&s);
		return 2;
	}
	/* the voter may first fence its primary: up to its peer timeout */
	if (progress(&s, have_vote, 4 * STEP_MS)) {
		tap(false, "vote: no VOTE for epoch %" PRIu64, o->vote);
		json_add(",\"vote\":null");
		session_close(&s);
		return 1;
	}
	reason = le32toh(s.vote.reason);
	tap(true, "vote: epoch %" PRIu64 " position %" PRIu64 ".%u.%" PRIu64
	    ": reason %u", o->vote, pos_epoch, o->vote_gen, lsn, reason);
	json_add(",\"asked\":{\"epoch\":%" PRIu64 ",\"pos_epoch\":%" PRIu64
		 ",\"gen\":%u,\"lsn\":%" PRIu64 "}", o->vote, pos_epoch,
		 o->vote_gen, lsn);
	json_add(",\"vote\":{\"epoch\":%" PRIu64 ",\"reason\":\"%s\","
		 "\"vote_epoch\":%" PRIu64 ",\"vote_for\":%u,"
		 "\"pos\":{\"epoch\":%" PRIu64 ",\"gen\":%u,\"lsn\":%" PRIu64
		 "}%s}", (uint64_t)le64toh(s.vote.epoch),
		 reason < sizeof(vote_reasons) / sizeof(vote_reasons[0]) ?
		 vote_reasons[reason] : "unknown",
		 (uint64_t)le64toh(s.vote.vote_epoch), le32toh(s.vote.vote_for),
		 (uint64_t)le64toh(s.vote.pos.epoch), le32toh(s.vote.pos.gen),
		 (uint64_t)le64toh(s.vote.pos.lsn),
		 le32toh(s.vote.flags) & RDMALOG_VOTE_F_PRE ?
		 ",\"pre\":true" : "");
	session_close(&s);
	return 0;
}

/* ------------------------------------------------------------------ */
/* --ballot-probe: the node's ballot grant is least-privilege */

static bool have_ballot(struct session *s)
{
	return s->ballot;
}

static int run_ballot_probe(const struct opts *o)
{
	const char *k = o->ballot_probe;
	uint64_t word, block, w;
	uint32_t wkey, bkey;
	struct session s;
	int ret = 0;

	/* either side: the larger node id listens (--listen) */
	if (session_open(o, &s) || session_hello(o, &s, false) ||
	    progress(&s, have_ballot, STEP_MS)) {
		tap(false, "ballot: a BALLOT from node %u as node %u", o->dst,
		    o->node);
		json_add(",\"ballot\":null");
		session_close(&s);
		return 2;
	}
	word = le64toh(s.peer_ballot.word_addr);
	block = le64toh(s.peer_ballot.block_addr);
	wkey = le32toh(s.peer_ballot.word_rkey);
	bkey = le32toh(s.peer_ballot.block_rkey);
	tap(true, "ballot: word 0x%" PRIx64 " rkey 0x%x, block 0x%" PRIx64
	    " rkey 0x%x", word, wkey, block, bkey);
	json_add(",\"ballot\":{\"word_addr\":%" PRIu64 ",\"block_addr\":%"
		 PRIu64 "}", word, block);
	if (!strcmp(k, "ok")) {
		if (expect(&s, "word_atomic", "fetch-and-add 0 on the word",
			   IBV_WR_ATOMIC_FETCH_AND_ADD, word, wkey, true))
			ret = 1;
		memcpy(&w, s.mem + PROBE_OFF, sizeof(w));
		json_add(",\"word\":%" PRIu64, (uint64_t)le64toh(w));
		if (expect(&s, "block_read", "READ of the block",
			   IBV_WR_RDMA_READ, block, bkey, true))
			ret = 1;
		memcpy(&w, s.mem + PROBE_OFF, sizeof(w));
		json_add(",\"block_magic\":%u", le32toh((uint32_t)w));
	} else if (!strcmp(k, "word_read")) {
		ret = expect(&s, k, "READ of the word", IBV_WR_RDMA_READ,
			     word, wkey, false) ? 1 : 0;
	} else if (!strcmp(k, "word_write")) {
		ret = expect(&s, k, "WRITE to the word", IBV_WR_RDMA_WRITE,
			     word, wkey, false) ? 1 : 0;
	} else if (!strcmp(k, "block_write")) {
		ret = expect(&s, k, "WRITE to the block", IBV_WR_RDMA_WRITE,
			     block, bkey, false) ? 1 : 0;
	} else if (!strcmp(k, "block_atomic")) {
		ret = expect(&s, k, "fetch-and-add on the block's key",
			     IBV_WR_ATOMIC_FETCH_AND_ADD, block, bkey,
			     false) ? 1 : 0;
	} else if (!strcmp(k, "past_block")) {
		ret = expect(&s, k, "READ just past the block",
			     IBV_WR_RDMA_READ, block + 64, bkey, false) ? 1 : 0;
	} else if (!strncmp(k, "tamper:", 7)) {
		uint64_t e = strtoull(k + 7, NULL, 0), old;

		if (expect(&s, "word_atomic", "fetch-and-add 0 on the word",
			   IBV_WR_ATOMIC_FETCH_AND_ADD, word, wkey, true)) {
			session_close(&s);
			return 1;
		}
		memcpy(&w, s.mem + PROBE_OFF, sizeof(w));
		/* the device returns the word in host order (rxe, x86) */
		probe_cmp = w;
		probe_swap = e << 32 | (uint64_t)(o->node & 0xff) << 24 |
			     (w & 0xffffffULL);
		ret = expect(&s, "cas", "compare-and-swap of the word",
			     IBV_WR_ATOMIC_CMP_AND_SWP, word, wkey, true) ? 1 : 0;
		memcpy(&old, s.mem + PROBE_OFF, sizeof(old));
		json_add(",\"word\":%" PRIu64 ",\"swap\":%" PRIu64
			 ",\"cas_old\":%" PRIu64, w, probe_swap, old);
	} else {
		tap(false, "ballot: unknown probe %s", k);
		ret = 2;
	}
	session_close(&s);
	return ret;
}

/* ------------------------------------------------------------------ */
/* --fwd-len: a backup's FWDs the primary must refuse */

static bool sends_done(struct session *s)
{
	return s->send_done == s->sent && s->credits > 1;
}

static unsigned int fwd_want;

static bool fwds_done(struct session *s)
{
	return s->fwd_done >= fwd_want;
}

static int run_fwd(const struct opts *o)
{
	struct rdmalog_msg_heartbeat hb = {};
	struct rdmalog_msg_fwd m = {};
	struct session s;
	unsigned int i;
	bool first = true;
	long long end;

	/* we are the accepting side: the primary has the smaller id */
	if (session_open(o, &s) || session_hello(o, &s, false)) {
		tap(false, "fwd: the primary connected to node %u", o->node);
		session_close(&s);
		return 2;
	}
	tap(true, "fwd: node %u connected to us (node %u)",
	    le32toh(s.peer_hello.node_id), o->node);
	hb.first_lsn = s.peer_hello.first_lsn;
	hb.commit_lsn = s.peer_hello.commit_lsn;
	hb.next_lsn = s.peer_hello.next_lsn;
	hb.interval_ms = htole32(1000);
	for (i = 0; i < o->fwd_count; i++) {
		if (progress(&s, sends_done, STEP_MS))
			break;
		memset(&m, 0, sizeof(m));
		m.req_id = htole64(i + 1);
		m.len = htole32(o->fwd_len);
		/* a buffer we never registered: nothing must be read */
		m.addr = htole64(0x100000);
		m.rkey = htole32(0x1234);
		if (send_msg(&s, &m, sizeof(m), RDMALOG_MSG_FWD))
			break;
	}
	fwd_want = i;
	end = now_ms() + STEP_MS;
	while (!fwds_done(&s) && now_ms() < end) {
		if (progress(&s, fwds_done, 500) == -1)
			break;
		/* hand the primary back the buffers its answers took */
		if (s.send_done == s.sent && s.credits > 1 &&
		    send_msg(&s, &hb, sizeof(hb), RDMALOG_MSG_HEARTBEAT))
			break;
	}
	tap(i == o->fwd_count && s.fwd_done == i,
	    "fwd: %u of %u FWDs of %u bytes sent, %u answered", i,
	    o->fwd_count, o->fwd_len, s.fwd_done);
	json_add(",\"fwd_sent\":%u,\"fwd_done\":%u,\"fwd_status\":{", i,
		 s.fwd_done);
	for (i = 0; i < 136; i++) {
		if (!s.fwd_status[i])
			continue;
		json_add("%s\"%u\":%u", first ? "" : ",", i, s.fwd_status[i]);
		first = false;
	}
	json_add("}");
	session_close(&s);
	return failures ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* --grant-probe: does the backup grant its ring to us? */

static bool wait_dropped(struct session *s, int ms, bool keep_alive,
			 char *how, size_t how_len);

static void lead_fill(struct session *s, struct rdmalog_msg_lead *m);
static int lead_es_fill(const char *arg, struct rdmalog_msg_lead *m);
static int raw_send(struct session *s, const void *msg, uint32_t nbytes);

static int run_grant_probe(const struct opts *o)
{
	const char *outcome = "nothing within 15 s";
	struct session s;
	long long end;
	char how[64];

	if (session_open(o, &s)) {
		outcome = "no connection";
		goto out;
	}
	if (session_hello_send(o, &s, !o->lead)) {
		outcome = "cannot send HELLO";
		goto out;
	}
	if (o->lead) {
		struct rdmalog_msg_lead m;

		s.epoch = o->lead;
		lead_fill(&s, &m);
		if (o->lead_other_log)
			m.log_id ^= htole64(0x5a5a5a5a5a5a5a5aULL);
		if (o->lead_es && lead_es_fill(o->lead_es, &m)) {
			outcome = "bad --lead-es";
			goto out;
		}
		diag("LEAD of log 0x%" PRIx64 " in epoch %" PRIu64,
		     (uint64_t)le64toh(m.log_id), o->lead);
		if (raw_send(&s, &m, sizeof(m))) {
			outcome = "cannot send LEAD";
			goto out;
		}
	}
	/* Its HELLO may come before or after ours: it is not what we wait for. */
	end = now_ms() + STEP_MS;
	while (now_ms() < end) {
		if (wait_dropped(&s, 200, true, how, sizeof(how))) {
			diag("dropped: %s", how);
			outcome = "dropped";
			break;
		}
		if (s.ring) {
			outcome = "ring";
			break;
		}
	}
out:
	tap(true, "grant probe as node %u (%s%s): %s", o->node,
	    o->secret_len ? "with a secret" : "without a secret",
	    o->lead ? ", LEAD after a backup's HELLO" : "", outcome);
	json_add(",\"outcome\":\"%s\"", outcome);
	if (s.ring)
		json_add(",\"ring_flags\":%u", le32toh(s.peer_ring.flags));
	session_close(&s);
	return 0;
}

/* ------------------------------------------------------------------ */
/* --catchup-probe: READs inside and outside a catch-up grant */

static bool have_catchup(struct session *s)
{
	return s->catchup;
}

/* The primary's address and key for ring offset @off, for @len bytes. */
static int cu_addr(const struct session *s, uint64_t off, uint32_t len,
		   uint64_t *addr, uint32_t *rkey)
{
	uint32_t i, n = le32toh(s->peer_cu.nr_segs);
	uint64_t start = 0;

	for (i = 0; i < n && i < RDMALOG_RING_MAX_SEGS; i++) {
		uint64_t l = le32toh(s->peer_cu.seg[i].length);

		if (off >= start && off + len <= start + l) {
			*addr = le64toh(s->peer_cu.seg[i].addr) + off - start;
			*rkey = le32toh(s->peer_cu.seg[i].rkey);
			return 0;
		}
		start += l;
	}
	return -1;
}

static int run_catchup_probe(const struct opts *o)
{
	struct rdmalog_msg_ring m = {};
	uint64_t start, target, addr;
	struct session s;
	uint32_t rkey;
	int ret = 0;

	if (session_open(o, &s) || session_hello(o, &s, false)) {
		tap(false, "catch-up probe: the primary connected to node %u",
		    o->node);
		session_close(&s);
		return 2;
	}
	/* An empty log, so that the primary must have us pull. */
	/* the ring, then a page for our notice block */
	s.ring_mem = aligned_alloc(4096, o->capacity + 4096);
	if (!s.ring_mem || o->capacity > (1ULL << 31)) {
		session_close(&s);
		return 2;
	}
	memset(s.ring_mem, 0, o->capacity + 4096);
	s.ring_mr = ibv_reg_mr(s.pd, s.ring_mem, o->capacity + 4096,
			       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!s.ring_mr) {
		diag("ibv_reg_mr: %s", strerror(errno));
		session_close(&s);
		return 2;
	}
	m.next_lsn = htole64(1);
	m.commit_lsn = htole64(1);
	/* as our HELLO said: we follow its log */
	m.log_id = s.peer_hello.log_id;
	m.nr_segs = htole32(1);
	m.seg[0].addr = htole64((uintptr_t)s.ring_mem);
	m.seg[0].length = htole32(o->capacity);
	m.seg[0].rkey = htole32(s.ring_mr->rkey);
	m.notice_addr = htole64((uintptr_t)s.ring_mem + o->capacity);
	m.notice_rkey = htole32(s.ring_mr->rkey);
	m.notice_len = htole32(4096);
	if (send_msg(&s, &m, RDMALOG_MSG_RING_LEN(1), RDMALOG_MSG_RING) ||
	    progress(&s, have_catchup, STEP_MS)) {
		tap(false, "catch-up probe: a CATCHUP for our empty ring");
		session_close(&s);
		return 2;
	}
	start = le64toh(s.peer_cu.start_pos);
	target = le64toh(s.peer_cu.target_pos);
	tap(true, "catch-up probe: CATCHUP of [%" PRIu64 ", %" PRIu64
	    ") in %u segments", start, target, le32toh(s.peer_cu.nr_segs));
	json_add(",\"cu_start\":%" PRIu64 ",\"cu_target\":%" PRIu64, start,
		 target);
	if (target - start < PROBE_BYTES ||
	    target % o->capacity + PROBE_BYTES > o->capacity ||
	    cu_addr(&s, start % o->capacity, PROBE_BYTES, &addr, &rkey)) {
		tap(false, "catch-up probe: room for the probes");
		session_close(&s);
		return 2;
	}
	if (expect(&s, "cu_inside", "READ at the start of the catch-up range",
		   IBV_WR_RDMA_READ, addr, rkey, true))
		ret = 1;
	if (cu_addr(&s, target % o->capacity, PROBE_BYTES, &addr, &rkey)) {
		tap(false, "catch-up probe: an address past the range");
		ret = 1;
	} else if (expect(&s, "cu_past_target",
			  "READ just past the end of the catch-up range",
			  IBV_WR_RDMA_READ, addr, rkey, false)) {
		ret = 1;
	}
	session_close(&s);
	return ret;
}

/* ------------------------------------------------------------------ */
/* --garbage: one bad control message on a connection of its own */

/* CRC32C as the uapi defines it (seed ~0, final xor ~0), bit by bit. */
static uint32_t crc32c(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t crc = ~0U;
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78U & (0U - (crc & 1)));
	}
	return ~crc;
}

/* A header as send_msg() writes it, taking the next sequence number. */
static void hdr_fill(struct session *s, void *msg, uint8_t type, uint16_t len)
{
	struct rdmalog_msg_hdr *h = msg;

	h->magic = htole32(RDMALOG_MSG_MAGIC);
	h->version = RDMALOG_PROTO_VERSION;
	h->type = type;
	h->length = htole16(len);
	h->credits = htole16(s->grant);
	h->reserved = 0;
	h->seq = htole32(++s->tx_seq);
	h->epoch = htole64(s->epoch);
}

/* Send the first @nbytes of @msg as they are; wait for nothing. */
static int raw_send(struct session *s, const void *msg, uint32_t nbytes)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->mem + SEND_OFF),
		.length = nbytes,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WRID_SEND,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (nbytes > SEND_MAX || !s->credits) {
		diag("cannot send %u bytes (%u credits)", nbytes, s->credits);
		return -1;
	}
	memcpy(s->mem + SEND_OFF, msg, nbytes);
	if (ibv_post_send(s->id->qp, &wr, &bad)) {
		diag("ibv_post_send: %s", strerror(errno));
		return -1;
	}
	s->grant = 0;
	s->credits--;
	return 0;
}

/* The backup's positions, from its HELLO and RING. */
struct positions {
	uint64_t head, next, commit, first, tail;
};

static void positions(const struct session *s, struct positions *p)
{
	p->head = le64toh(s->peer_ring.head);
	p->next = le64toh(s->peer_ring.next_lsn);
	p->commit = le64toh(s->peer_ring.commit_lsn);
	p->tail = le64toh(s->peer_ring.tail);
	p->first = le64toh(s->peer_hello.first_lsn);
}

/*
 * --lead-es POS,LSN,PREV_EPOCH,PREV_GEN[,nf]: the epoch-start record @m
 * names (its header filled again). Return: 0, or -1 when @arg is wrong.
 */
static int lead_es_fill(const char *arg, struct rdmalog_msg_lead *m)
{
	unsigned long long pos, lsn, prev_epoch;
	unsigned int prev_gen;
	char nf[4] = "";
	int n;

	n = sscanf(arg, "%llu,%llu,%llu,%u,%3s", &pos, &lsn, &prev_epoch,
		   &prev_gen, nf);
	if (n < 4 || (n == 5 && strcmp(nf, "nf")))
		return -1;
	m->flags = htole32(n == 5 ? 0 : RDMALOG_LEAD_F_EPOCH_START);
	m->es_pos = htole64(pos);
	m->es_lsn = htole64(lsn);
	m->es_timestamp_ns = htole64(1);
	m->es_prev_epoch = htole64(prev_epoch);
	m->es_prev_gen = htole32(prev_gen);
	/* Our log holds it: our next LSN is past it. */
	if (le64toh(m->next_lsn) <= lsn)
		m->next_lsn = htole64(lsn + 1);
	diag("LEAD names an epoch-start record at %llu, LSN %llu, after epoch %llu generation %u%s",
	     pos, lsn, prev_epoch, prev_gen,
	     n == 5 ? " (without the flag)" : "");
	return 0;
}

/*
 * A LEAD of the node's log (its HELLO's log id) in our epoch, with its
 * own positions, header filled.
 */
static void lead_fill(struct session *s, struct rdmalog_msg_lead *m)
{
	memset(m, 0, sizeof(*m));
	m->log_id = s->peer_hello.log_id;
	m->first_lsn = s->peer_hello.first_lsn;
	m->commit_lsn = s->peer_hello.commit_lsn;
	m->next_lsn = s->peer_hello.next_lsn;
	m->vote_epoch = htole64(opt_vote_epoch);
	hdr_fill(s, m, RDMALOG_MSG_LEAD, sizeof(*m));
}

/* A valid HEARTBEAT with the backup's own positions, header filled. */
static void hb_fill(struct session *s, struct rdmalog_msg_heartbeat *m)
{
	memset(m, 0, sizeof(*m));
	m->first_lsn = s->peer_hello.first_lsn;
	m->commit_lsn = s->peer_ring.commit_lsn;
	m->next_lsn = s->peer_ring.next_lsn;
	m->interval_ms = htole32(1000);
	m->vote_epoch = htole64(opt_vote_epoch);
	hdr_fill(s, m, RDMALOG_MSG_HEARTBEAT, sizeof(*m));
}

/*
 * A notice (an APPEND) with these positions, its header filled as a
 * notice's (epoch: the session's; its number: append_send()'s).
 */
static void append_fill(struct session *s, struct rdmalog_msg_append *m,
			uint64_t head, uint64_t next, uint64_t cpos,
			uint64_t clsn, uint64_t first)
{
	memset(m, 0, sizeof(*m));
	m->head = htole64(head);
	m->next_lsn = htole64(next);
	m->commit_pos = htole64(cpos);
	m->commit_lsn = htole64(clsn);
	m->first_lsn = htole64(first);
	m->gen = htole32(1);
	m->hdr.magic = htole32(RDMALOG_MSG_MAGIC);
	m->hdr.version = RDMALOG_PROTO_VERSION;
	m->hdr.type = RDMALOG_MSG_APPEND;
	m->hdr.length = htole16(sizeof(*m));
	m->hdr.epoch = htole64(s->epoch);
}

/*
 * RDMA WRITE @len bytes of @data at the backup's stream position @pos
 * (inside one segment) and wait for its completion: 0 when it succeeded.
 */
static int remote_write(struct session *s, uint64_t addr, uint32_t rkey,
			const void *data, uint32_t len);

static int ring_write(const struct opts *o, struct session *s, uint64_t pos,
		      const void *data, uint32_t len)
{
	uint64_t addr;
	uint32_t rkey;

	if (len > 4096 || ring_addr(s, pos % o->capacity, len, &addr, &rkey)) {
		diag("%u bytes at stream position %" PRIu64
		     " do not fit one segment", len, pos);
		return -1;
	}
	if (remote_write(s, addr, rkey, data, len))
		return -1;
	diag("wrote %u bytes at stream position %" PRIu64 " (0x%" PRIx64
	     " rkey 0x%x)", len, pos, addr, rkey);
	return 0;
}

/*
 * RDMA WRITE @len bytes (at most 4096) of @data to @addr / @rkey of the
 * peer and wait for its completion: 0 when it succeeded.
 */
static int remote_write(struct session *s, uint64_t addr, uint32_t rkey,
			const void *data, uint32_t len)
{
	enum ibv_wc_status st;

	memcpy(s->mem + PROBE_OFF, data, len);
	{
		struct ibv_sge sge = {
			.addr = (uintptr_t)(s->mem + PROBE_OFF),
			.length = len,
			.lkey = s->mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = WRID_PROBE,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
		};
		struct ibv_send_wr *bad;

		wr.wr.rdma.remote_addr = addr;
		wr.wr.rdma.rkey = rkey;
		s->probe_done = false;
		if (ibv_post_send(s->id->qp, &wr, &bad)) {
			diag("ibv_post_send: %s", strerror(errno));
			return -1;
		}
	}
	if (progress(s, have_probe, 60000))
		return -1;
	st = s->probe_status;
	if (st != IBV_WC_SUCCESS) {
		diag("WRITE to 0x%" PRIx64 ": %s", addr, status_name(st));
		return -1;
	}
	return 0;
}

/*
 * What a primary does with a notice since version 12: RDMA WRITE it into
 * the backup's notice block (the next notice number, its CRC32C) and send
 * a NOTIFY that names it.
 */
static int append_send(struct session *s, const struct rdmalog_msg_append *m)
{
	struct rdmalog_notice nb = {};
	struct rdmalog_msg_notify n = {};

	nb.append = *m;
	nb.append.hdr.seq = htole32(++s->notice_seq);
	nb.crc = htole32(crc32c(&nb.append, sizeof(nb.append)));
	if (remote_write(s, le64toh(s->peer_ring.notice_addr),
			 le32toh(s->peer_ring.notice_rkey), &nb, sizeof(nb)))
		return -1;
	diag("notice %u written: head %" PRIu64 ", commit LSN %" PRIu64,
	     s->notice_seq, le64toh(m->head), le64toh(m->commit_lsn));
	n.notice_seq = htole64(s->notice_seq);
	hdr_fill(s, &n, RDMALOG_MSG_NOTIFY, sizeof(n));
	return raw_send(s, &n, sizeof(n));
}

/* Wait up to @ms for the rdma_cm's DISCONNECTED event. */
static void wait_cm_disconnected(struct session *s, int ms)
{
	long long start = now_ms(), end = start + ms;

	while (now_ms() < end) {
		struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
		struct rdma_cm_event *ev;
		enum rdma_cm_event_type t;

		if (poll(&pfd, 1, 10) <= 0 || rdma_get_cm_event(s->ch, &ev))
			continue;
		t = ev->event;
		rdma_ack_cm_event(ev);
		diag("rdma_cm event %s after %lld ms more", rdma_event_str(t),
		     now_ms() - start);
		if (t == RDMA_CM_EVENT_DISCONNECTED ||
		    t == RDMA_CM_EVENT_TIMEWAIT_EXIT)
			return;
	}
	diag("no DISCONNECTED within %d ms: disconnecting", ms);
}

/*
 * Wait up to @ms for the backup to drop the connection: an rdma_cm
 * DISCONNECTED event, or a completion that failed or was flushed. With
 * @keep_alive, send a HEARTBEAT every half second meanwhile (the control
 * case). Return true when dropped, with what showed it in @how.
 */
static bool wait_dropped(struct session *s, int ms, bool keep_alive,
			 char *how, size_t how_len)
{
	long long start = now_ms(), end = start + ms, next_hb = start + 500;
	struct ibv_wc wc[8];
	int n, i;

	snprintf(how, how_len, "nothing");
	while (now_ms() < end) {
		struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };

		if (poll(&pfd, 1, 0) > 0) {
			struct rdma_cm_event *ev;

			if (rdma_get_cm_event(s->ch, &ev) == 0) {
				enum rdma_cm_event_type t = ev->event;

				rdma_ack_cm_event(ev);
				diag("rdma_cm event %s after %lld ms",
				     rdma_event_str(t), now_ms() - start);
				if (t == RDMA_CM_EVENT_DISCONNECTED ||
				    t == RDMA_CM_EVENT_TIMEWAIT_EXIT) {
					snprintf(how, how_len, "%s",
						 rdma_event_str(t));
					return true;
				}
			}
		}
		n = ibv_poll_cq(s->cq, 8, wc);
		if (n < 0) {
			snprintf(how, how_len, "ibv_poll_cq failed");
			return true;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				diag("completion of wr %" PRIu64 ": %s after %lld ms",
				     (uint64_t)wc[i].wr_id,
				     status_name(wc[i].status),
				     now_ms() - start);
				snprintf(how, how_len, "%s %s",
					 wc[i].wr_id < RECV_DEPTH ? "receive" :
					 "send", status_name(wc[i].status));
				return true;
			}
			if (wc[i].wr_id >= RECV_DEPTH)
				continue;
			/* the backup's own messages (an ACK for credits) */
			if (handle_msg(s, s->mem + wc[i].wr_id * RDMALOG_MSG_SIZE,
				       wc[i].byte_len))
				diag("the backup sent a message we do not understand");
			if (post_recv(s, wc[i].wr_id) == 0)
				s->grant++;
		}
		if (keep_alive && now_ms() >= next_hb && s->credits > 1) {
			struct rdmalog_msg_heartbeat m;

			hb_fill(s, &m);
			if (raw_send(s, &m, sizeof(m))) {
				snprintf(how, how_len, "cannot send");
				return true;
			}
			next_hb = now_ms() + 500;
		}
		if (!n)
			usleep(1000);
	}
	return false;
}

/*
 * One kind of bad input: send it on @s (connected, HELLOs exchanged, RING
 * received). Return 0 once sent, -1 when it could not be sent.
 */
struct garbage_kind {
	const char *name;
	const char *what;
	int (*send)(const struct opts *o, struct session *s);
};

static int g_valid(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	(void)o;
	hb_fill(s, &m);
	return raw_send(s, &m, sizeof(m));
}

static int g_stale_epoch(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	(void)o;
	hb_fill(s, &m);
	/* below the epoch of our HELLO: epochs only grow */
	m.hdr.epoch = htole64(s->epoch - 1);
	return raw_send(s, &m, sizeof(m));
}

static int g_magic(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	(void)o;
	hb_fill(s, &m);
	m.hdr.magic = htole32(RDMALOG_MSG_MAGIC ^ 0x20202020);
	return raw_send(s, &m, sizeof(m));
}

static int g_version(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	(void)o;
	hb_fill(s, &m);
	m.hdr.version = RDMALOG_PROTO_VERSION + 1;
	return raw_send(s, &m, sizeof(m));
}

static int g_type(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	(void)o;
	hb_fill(s, &m);
	m.hdr.type = 0x7f;
	return raw_send(s, &m, sizeof(m));
}

static int g_length(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	(void)o;
	hb_fill(s, &m);
	/* says 64 bytes, 56 are sent */
	m.hdr.length = htole16(sizeof(m) + 8);
	return raw_send(s, &m, sizeof(m));
}

static int g_short_hdr(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	(void)o;
	hb_fill(s, &m);
	m.hdr.length = htole16(16);
	return raw_send(s, &m, 16);
}

static int g_short_body(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	(void)o;
	hb_fill(s, &m);
	/* consistent with the bytes sent, short of a HEARTBEAT */
	m.hdr.length = htole16(40);
	return raw_send(s, &m, 40);
}

static int g_standing(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	(void)o;
	hb_fill(s, &m);
	/* a bit above the priority and NO_LEAD */
	m.standing = htole32(RDMALOG_STANDING_NO_LEAD << 1);
	return raw_send(s, &m, sizeof(m));
}

static int g_ballot_block(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	hb_fill(s, &m);
	/* a block announced as another node's: the sender is not its owner */
	m.ballot.magic = htole32(RDMALOG_BALLOT_MAGIC);
	m.ballot.seq = htole32(3);
	m.ballot.node_id = htole32(o->node + 1);
	return raw_send(s, &m, sizeof(m));
}

static int g_oversized(const struct opts *o, struct session *s)
{
	uint8_t buf[RDMALOG_MSG_SIZE + 64];
	struct rdmalog_msg_heartbeat m;

	(void)o;
	memset(buf, 0xa5, sizeof(buf));
	hb_fill(s, &m);
	m.hdr.length = htole16(sizeof(buf));
	memcpy(buf, &m, sizeof(m));
	return raw_send(s, buf, sizeof(buf));
}

static int g_seq_gap(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	(void)o;
	s->tx_seq++;		/* skip one */
	hb_fill(s, &m);
	return raw_send(s, &m, sizeof(m));
}

static int g_seq_repeat(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	(void)o;
	s->tx_seq--;		/* the HELLO's number again */
	hb_fill(s, &m);
	return raw_send(s, &m, sizeof(m));
}

static int g_credits(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_heartbeat m;

	(void)o;
	hb_fill(s, &m);
	/* more than we have receive buffers, whatever the backup holds */
	m.hdr.credits = htole16(RECV_DEPTH + 1);
	return raw_send(s, &m, sizeof(m));
}

static int g_hello2(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_hello m = {};

	m.node_id = htole32(o->node);
	m.role = htole32(ROLE_PRIMARY);
	m.interval_ms = htole32(1000);
	m.timeout_ms = htole32(5000);
	m.capacity = htole64(o->capacity);
	m.max_record = htole32(o->max_record);
	m.flags = htole32(RDMALOG_HELLO_F_LOG_UP);
	m.first_lsn = s->peer_hello.first_lsn;
	m.commit_lsn = s->peer_ring.commit_lsn;
	m.next_lsn = s->peer_ring.next_lsn;
	hdr_fill(s, &m, RDMALOG_MSG_HELLO, sizeof(m));
	return raw_send(s, &m, sizeof(m));
}

static int g_ring(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_ring m = {};

	/* a well-formed one: one segment covering the capacity */
	m.head = s->peer_ring.head;
	m.next_lsn = s->peer_ring.next_lsn;
	m.commit_lsn = s->peer_ring.commit_lsn;
	m.tail = s->peer_ring.tail;
	m.nr_segs = htole32(1);
	m.seg[0].addr = htole64(0x10000000);
	m.seg[0].length = htole32(o->capacity);
	m.seg[0].rkey = htole32(0x1234);
	hdr_fill(s, &m, RDMALOG_MSG_RING, RDMALOG_MSG_RING_LEN(1));
	return raw_send(s, &m, RDMALOG_MSG_RING_LEN(1));
}

static int g_append_pos(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_append m;
	struct positions p;

	(void)o;
	positions(s, &p);
	/* commit_pos above head */
	append_fill(s, &m, p.head, p.next, p.head + 64, p.commit, p.first);
	return append_send(s, &m);
}

static int g_append_lsn(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_append m;
	struct positions p;

	(void)o;
	positions(s, &p);
	/* first_lsn above commit_lsn */
	append_fill(s, &m, p.head, p.next, p.head, p.commit, p.commit + 1);
	return append_send(s, &m);
}

/* An ACK arrived since the last look (see g_append_back()). */
static unsigned int acks_seen;

static bool have_ack(struct session *s)
{
	if (s->acks == acks_seen)
		return false;
	acks_seen = s->acks;
	return true;
}

static int g_append_back(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_append m;
	struct positions p;
	unsigned int acks;

	(void)o;
	positions(s, &p);
	if (p.commit <= p.first) {
		diag("the backup's commit LSN %" PRIu64 " cannot move back",
		     p.commit);
		return -1;
	}
	/* the backup's own positions: accepted, nothing to apply */
	append_fill(s, &m, p.head, p.next, p.head, p.commit, p.first);
	m.flags = htole32(RDMALOG_APPEND_F_ACK);
	acks = acks_seen = s->acks;
	if (append_send(s, &m) || progress(s, have_ack, STEP_MS))
		return -1;
	if (s->acks == acks) {
		diag("no ACK for the first notice");
		return -1;
	}
	/* then the commit LSN one back, everything else consistent */
	append_fill(s, &m, p.head, p.next, p.head, p.commit - 1, p.first);
	return append_send(s, &m);
}

/*
 * Our HELLO said another log (session_hello()), and a first LSN at the
 * backup's commit: it must have trimmed nothing, and must refuse even an
 * APPEND with its own positions.
 */
static int g_other_log(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_append m;
	struct positions p;

	(void)o;
	positions(s, &p);
	append_fill(s, &m, p.head, p.next, p.head, p.commit, p.first);
	return append_send(s, &m);
}

static int g_append_garbage(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_append m;
	struct positions p;
	uint8_t junk[64];
	unsigned int i;

	positions(s, &p);
	srandom(now_ms());
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = random();
	junk[0] = (uint8_t)~RDMALOG_RECORD_MAGIC;	/* never a record */
	if (ring_write(o, s, p.head, junk, sizeof(junk)))
		return -1;
	/* one committed record in those bytes */
	append_fill(s, &m, p.head + sizeof(junk), p.next + 1,
		    p.head + sizeof(junk), p.next + 1, p.first);
	return append_send(s, &m);
}

/*
 * One record at the backup's head, sound in every respect, of @rec_epoch
 * (generation @gen), committed by an APPEND of @append_epoch.
 */
static int append_one(const struct opts *o, struct session *s,
		      uint64_t rec_epoch, uint32_t gen, uint64_t append_epoch)
{
	static const char payload[] = "rogue-record-of-an-epoch";
	struct rdmalog_ring_record rec = {};
	uint8_t buf[128] = {};
	struct rdmalog_msg_append m;
	struct positions p;
	uint32_t len = sizeof(payload) - 1;
	uint32_t fp = (sizeof(rec) + len + RDMALOG_RECORD_ALIGN - 1) &
		      ~(RDMALOG_RECORD_ALIGN - 1);

	positions(s, &p);
	/* a record that is valid in every respect, of epoch rec_epoch */
	rec.magic = htole32(RDMALOG_RECORD_MAGIC);
	rec.version = htole16(RDMALOG_RECORD_VERSION);
	rec.len = htole32(len);
	rec.data_crc = htole32(crc32c(payload, len));
	rec.lsn = htole64(p.next);
	rec.epoch = htole64(rec_epoch);
	rec.timestamp_ns = htole64((uint64_t)time(NULL) * 1000000000ULL);
	rec.gen = htole32(gen);
	rec.hdr_crc = htole32(crc32c(&rec, offsetof(struct rdmalog_ring_record,
						     hdr_crc)));
	memcpy(buf, &rec, sizeof(rec));
	memcpy(buf + sizeof(rec), payload, len);
	if (ring_write(o, s, p.head, buf, fp))
		return -1;
	append_fill(s, &m, p.head + fp, p.next + 1, p.head + fp, p.next + 1,
		    p.first);
	m.hdr.epoch = htole64(append_epoch);
	diag("LSN %" PRIu64 ": record epoch %" PRIu64 " generation %u, APPEND "
	     "epoch %" PRIu64, p.next, rec_epoch, gen, append_epoch);
	return append_send(s, &m);
}

/* An APPEND of the next epoch on a connection whose HELLO was of ours. */
static int g_epoch(const struct opts *o, struct session *s)
{
	return append_one(o, s, s->epoch, 0, s->epoch + 1);
}

/* A record of a later epoch than the primary's. */
static int g_record_epoch(const struct opts *o, struct session *s)
{
	return append_one(o, s, s->epoch + 1, 0, s->epoch);
}

/*
 * Valid: a record of our epoch, committed by our APPEND. With
 * --primary-epoch above the backup's epoch, what a new primary of the
 * same log sends after a leader change.
 */
static int g_new_epoch(const struct opts *o, struct session *s)
{
	return append_one(o, s, s->epoch, 0, s->epoch);
}

static int g_ack(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_ack m = {};

	(void)o;
	m.held_pos = s->peer_ring.head;
	m.held_lsn = s->peer_ring.next_lsn;
	m.commit_lsn = s->peer_ring.commit_lsn;
	m.tail = s->peer_ring.tail;
	m.first_lsn = s->peer_hello.first_lsn;
	m.gen = htole32(1);
	hdr_fill(s, &m, RDMALOG_MSG_ACK, sizeof(m));
	return raw_send(s, &m, sizeof(m));
}

static int g_fwd_done(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_fwd_done m = {};

	(void)o;
	m.req_id = htole64(0x5eed0000beefULL);
	m.lsn = s->peer_ring.next_lsn;
	hdr_fill(s, &m, RDMALOG_MSG_FWD_DONE, sizeof(m));
	return raw_send(s, &m, sizeof(m));
}

static int g_fwd_close_flags(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_fwd_close m = {};

	(void)o;
	m.flags = htole32(0x80);
	hdr_fill(s, &m, RDMALOG_MSG_FWD_CLOSE, sizeof(m));
	return raw_send(s, &m, sizeof(m));
}

static int g_fwd_closed(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_fwd_close m = {};

	(void)o;
	hdr_fill(s, &m, RDMALOG_MSG_FWD_CLOSED, sizeof(m));
	return raw_send(s, &m, sizeof(m));
}

/*
 * A record of footprint @fp (header included, a multiple of
 * RDMALOG_RECORD_ALIGN) for LSN @lsn of the session's epoch into @buf,
 * valid in every respect as g_epoch builds one, then torn as by a crash
 * in the middle of its write: the second half of its payload zeroed after
 * both CRCs were taken. Only the payload CRC32C can tell.
 */
static void torn_record(struct session *s, uint64_t lsn, uint8_t *buf,
			uint32_t fp)
{
	struct rdmalog_ring_record rec = {};
	uint32_t len = fp - sizeof(rec), i;
	uint8_t *payload = buf + sizeof(rec);

	for (i = 0; i < len; i++)
		payload[i] = 'a' + i % 26;	/* no zero byte */
	rec.magic = htole32(RDMALOG_RECORD_MAGIC);
	rec.version = htole16(RDMALOG_RECORD_VERSION);
	rec.len = htole32(len);
	rec.data_crc = htole32(crc32c(payload, len));
	rec.lsn = htole64(lsn);
	rec.epoch = htole64(s->epoch);
	rec.timestamp_ns = htole64((uint64_t)time(NULL) * 1000000000ULL);
	rec.hdr_crc = htole32(crc32c(&rec, offsetof(struct rdmalog_ring_record,
						     hdr_crc)));
	memcpy(buf, &rec, sizeof(rec));
	memset(payload + len / 2, 0, len - len / 2);
	diag("torn record: LSN %" PRIu64 " epoch %" PRIu64
	     ", %u payload bytes, the last %u zeroed after the CRCs", lsn,
	     s->epoch, len, len - len / 2);
}

/*
 * Our own "ring" for a CATCHUP: as many bytes as the backup's capacity,
 * random, registered REMOTE_READ on the session's PD (the queue pair's:
 * a READ with its rkey from the backup's side of this connection works).
 */
static int cu_grant(const struct opts *o, struct session *s)
{
	uint64_t i;

	if (!o->capacity || o->capacity % 4096 ||
	    o->capacity > (uint64_t)RDMALOG_RING_MAX_SEGS << 31) {
		diag("capacity %" PRIu64 " cannot be granted", o->capacity);
		return -1;
	}
	s->cu_len = o->capacity;
	s->cu_mem = aligned_alloc(4096, s->cu_len);
	if (!s->cu_mem) {
		diag("no memory for %" PRIu64 " bytes", s->cu_len);
		return -1;
	}
	srandom(now_ms() ^ getpid());
	for (i = 0; i < s->cu_len; i++)
		s->cu_mem[i] = random();
	s->cu_mr = ibv_reg_mr(s->pd, s->cu_mem, s->cu_len,
			      IBV_ACCESS_REMOTE_READ);
	if (!s->cu_mr) {
		diag("ibv_reg_mr REMOTE_READ: %s", strerror(errno));
		return -1;
	}
	diag("our ring for the CATCHUP: 0x%" PRIx64 ", %" PRIu64
	     " bytes, rkey 0x%x", (uint64_t)(uintptr_t)s->cu_mem, s->cu_len,
	     s->cu_mr->rkey);
	json_add(",\"cu_rkey\":%u", s->cu_mr->rkey);
	return 0;
}

/* Copy @len bytes to stream position @pos of our ring (it wraps). */
static void cu_put(struct session *s, uint64_t pos, const void *data,
		   uint32_t len)
{
	const uint8_t *d = data;
	uint32_t i;

	for (i = 0; i < len; i++)
		s->cu_mem[(pos + i) % s->cu_len] = d[i];
}

/*
 * A CATCHUP for this range granting our ring (segments of at most 2 GiB),
 * header filled. Return its length.
 */
static uint16_t catchup_fill(struct session *s, struct rdmalog_msg_catchup *m,
			     uint64_t spos, uint64_t slsn, uint64_t tpos,
			     uint64_t tlsn, uint32_t flags)
{
	uint64_t addr = (uintptr_t)s->cu_mem, left = s->cu_len;
	unsigned int n = 0;
	uint16_t len;

	memset(m, 0, sizeof(*m));
	while (left && n < RDMALOG_RING_MAX_SEGS) {
		uint64_t l = left < (1ULL << 31) ? left : 1ULL << 31;

		m->seg[n].addr = htole64(addr);
		m->seg[n].length = htole32(l);
		m->seg[n].rkey = htole32(s->cu_mr->rkey);
		addr += l;
		left -= l;
		n++;
	}
	m->start_pos = htole64(spos);
	m->start_lsn = htole64(slsn);
	m->target_pos = htole64(tpos);
	m->target_lsn = htole64(tlsn);
	m->flags = htole32(flags);
	m->nr_segs = htole32(n);
	len = RDMALOG_MSG_CATCHUP_LEN(n);
	hdr_fill(s, m, RDMALOG_MSG_CATCHUP, len);
	diag("CATCHUP: pos %" PRIu64 " LSN %" PRIu64 " to pos %" PRIu64
	     " LSN %" PRIu64 ", flags 0x%x, %u segment%s", spos, slsn, tpos,
	     tlsn, flags, n, n == 1 ? "" : "s");
	return len;
}

/* The CATCHUP kinds: range, flags and what our ring holds. */
enum cu_kind {
	CU_RANGE, CU_SEGS, CU_FLAGS, CU_START, CU_BACK, CU_GARBAGE, CU_TORN,
};

static int g_catchup(const struct opts *o, struct session *s, enum cu_kind k)
{
	struct rdmalog_msg_catchup m;
	uint64_t spos, slsn, tpos, tlsn;
	uint32_t flags = 0, last;
	struct positions p;
	uint8_t rec[4096];
	uint16_t len;

	positions(s, &p);
	/*
	 * Every kind grants real memory: a backup that failed to check what
	 * it is told would pull random bytes, and say so differently.
	 */
	if (cu_grant(o, s))
		return -1;
	/* by default: one record of 4096 bytes from the backup's head */
	spos = p.head;
	slsn = p.next;
	tpos = p.head + sizeof(rec);
	tlsn = p.next + 1;
	switch (k) {
	case CU_RANGE:
		/* start_pos above target_pos, the LSNs as by default */
		spos = p.head + sizeof(rec);
		tpos = p.head;
		break;
	case CU_FLAGS:
		flags = 1U << 7;
		break;
	case CU_START:
		/* no RESET, one record beyond the backup's head and next LSN */
		spos = p.head + sizeof(rec);
		slsn = p.next + 1;
		tpos = spos + sizeof(rec);
		tlsn = slsn + 1;
		break;
	case CU_BACK:
		/* RESET to an LSN the backup has, at a position ahead */
		if (p.next <= 1) {
			diag("the backup's next LSN %" PRIu64
			     " has nothing below it", p.next);
			return -1;
		}
		flags = RDMALOG_CATCHUP_F_RESET;
		spos = p.head + sizeof(rec);
		slsn = p.next - 1;
		tpos = spos + sizeof(rec);
		tlsn = slsn + 1;
		break;
	case CU_GARBAGE:
		/* random bytes where the record should start: never a record */
		rec[0] = (uint8_t)~RDMALOG_RECORD_MAGIC;
		cu_put(s, p.head, rec, 1);
		break;
	case CU_TORN:
		torn_record(s, p.next, rec, sizeof(rec));
		cu_put(s, p.head, rec, sizeof(rec));
		break;
	case CU_SEGS:
		break;
	}
	len = catchup_fill(s, &m, spos, slsn, tpos, tlsn, flags);
	if (k == CU_SEGS) {
		/* 4 KiB short of the capacity (or over it: a 4 KiB ring) */
		last = le32toh(m.seg[le32toh(m.nr_segs) - 1].length);
		last = last > 4096 ? last - 4096 : last + 4096;
		m.seg[le32toh(m.nr_segs) - 1].length = htole32(last);
		diag("last segment: %u bytes", last);
	}
	return raw_send(s, &m, len);
}

static int g_catchup_range(const struct opts *o, struct session *s)
{
	return g_catchup(o, s, CU_RANGE);
}

static int g_catchup_segs(const struct opts *o, struct session *s)
{
	return g_catchup(o, s, CU_SEGS);
}

static int g_catchup_flags(const struct opts *o, struct session *s)
{
	return g_catchup(o, s, CU_FLAGS);
}

static int g_catchup_start(const struct opts *o, struct session *s)
{
	return g_catchup(o, s, CU_START);
}

static int g_catchup_back(const struct opts *o, struct session *s)
{
	return g_catchup(o, s, CU_BACK);
}

static int g_catchup_garbage(const struct opts *o, struct session *s)
{
	return g_catchup(o, s, CU_GARBAGE);
}

static int g_catchup_torn(const struct opts *o, struct session *s)
{
	return g_catchup(o, s, CU_TORN);
}

static int g_append_torn(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_append m;
	struct positions p;
	uint8_t rec[128];

	positions(s, &p);
	torn_record(s, p.next, rec, sizeof(rec));
	if (ring_write(o, s, p.head, rec, sizeof(rec)))
		return -1;
	/* committed by an APPEND of the session's epoch: only torn */
	append_fill(s, &m, p.head + sizeof(rec), p.next + 1,
		    p.head + sizeof(rec), p.next + 1, p.first);
	return append_send(s, &m);
}

static int g_join(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_join m = {};

	(void)o;
	m.head = s->peer_ring.head;
	m.next_lsn = s->peer_ring.next_lsn;
	m.commit_lsn = s->peer_ring.commit_lsn;
	m.tail = s->peer_ring.tail;
	hdr_fill(s, &m, RDMALOG_MSG_JOIN, sizeof(m));
	return raw_send(s, &m, sizeof(m));
}

enum ballot_bad { BB_KEY, BB_ALIGN, BB_RESERVED, BB_SECOND };

/* A BALLOT grant (of memory we never registered) that is bad as @k says. */
static int g_ballot(const struct opts *o, struct session *s,
		    enum ballot_bad k)
{
	struct rdmalog_msg_ballot m = {};

	(void)o;
	m.word_addr = htole64(0x10000);
	m.block_addr = htole64(0x10040);
	m.word_rkey = htole32(0x1234);
	m.block_rkey = htole32(0x5678);
	switch (k) {
	case BB_KEY:
		m.block_rkey = 0;
		break;
	case BB_ALIGN:
		m.word_addr = htole64(0x10004);
		break;
	case BB_RESERVED:
		m.reserved = htole64(1);
		break;
	case BB_SECOND:
		/* the first is well formed: taken */
		hdr_fill(s, &m, RDMALOG_MSG_BALLOT, sizeof(m));
		if (raw_send(s, &m, sizeof(m)))
			return -1;
		break;
	}
	hdr_fill(s, &m, RDMALOG_MSG_BALLOT, sizeof(m));
	return raw_send(s, &m, sizeof(m));
}

static int g_ballot_key(const struct opts *o, struct session *s)
{
	return g_ballot(o, s, BB_KEY);
}

static int g_ballot_align(const struct opts *o, struct session *s)
{
	return g_ballot(o, s, BB_ALIGN);
}

static int g_ballot_reserved(const struct opts *o, struct session *s)
{
	return g_ballot(o, s, BB_RESERVED);
}

static int g_ballot2(const struct opts *o, struct session *s)
{
	return g_ballot(o, s, BB_SECOND);
}

/* --garbage lead_*: a LEAD in a later epoch, @how wrong in it */
enum { LEAD_VALID, LEAD_RESERVED, LEAD_LOG0, LEAD_EPOCH, LEAD_OTHER_LOG };

static int g_lead(struct session *s, int how)
{
	struct rdmalog_msg_lead m;
	uint64_t hello = s->epoch;

	if (how != LEAD_EPOCH)
		s->epoch++;
	lead_fill(s, &m);
	if (how == LEAD_RESERVED)
		m.reserved = htole32(1);
	else if (how == LEAD_LOG0)
		m.log_id = 0;
	else if (how == LEAD_OTHER_LOG)
		m.log_id ^= htole64(0x5a5a5a5a5a5a5a5aULL);
	diag("LEAD in epoch %" PRIu64 " (HELLO's %" PRIu64 ")", s->epoch,
	     hello);
	return raw_send(s, &m, sizeof(m));
}

static int g_lead_primary(const struct opts *o, struct session *s)
{
	(void)o;
	return g_lead(s, LEAD_VALID);
}

static int g_lead_reserved(const struct opts *o, struct session *s)
{
	(void)o;
	return g_lead(s, LEAD_RESERVED);
}

static int g_lead_log0(const struct opts *o, struct session *s)
{
	(void)o;
	return g_lead(s, LEAD_LOG0);
}

static int g_lead_epoch(const struct opts *o, struct session *s)
{
	(void)o;
	return g_lead(s, LEAD_EPOCH);
}

static int g_lead_other_log(const struct opts *o, struct session *s)
{
	(void)o;
	return g_lead(s, LEAD_OTHER_LOG);
}

/*
 * --garbage vote_unasked: a VOTE for a candidacy node 2 never had, which
 * announces an election epoch far above any node 2 knows: dropped, and
 * nothing of it used (node 2's election epoch stays as it was).
 */
#define VOTE_UNASKED_EPOCH	(1ULL << 40)

static int g_vote_unasked(const struct opts *o, struct session *s)
{
	struct rdmalog_msg_vote m;

	(void)o;
	memset(&m, 0, sizeof(m));
	hdr_fill(s, &m, RDMALOG_MSG_VOTE, sizeof(m));
	m.epoch = htole64(VOTE_UNASKED_EPOCH);
	m.reason = htole32(RDMALOG_VOTE_GRANTED);
	m.vote_for = htole32(2);
	m.vote_epoch = htole64(VOTE_UNASKED_EPOCH);
	return raw_send(s, &m, sizeof(m));
}

static const struct garbage_kind garbage_kinds[] = {
	{ "valid", "a valid HEARTBEAT (control: kept)", g_valid },
	{ "magic", "bad magic", g_magic },
	{ "stale_epoch", "a HEARTBEAT of an epoch below the HELLO's",
	  g_stale_epoch },
	{ "version", "bad version", g_version },
	{ "type", "unknown type", g_type },
	{ "length", "length field 8 bytes more than sent", g_length },
	{ "short_hdr", "16 bytes: shorter than a header", g_short_hdr },
	{ "short_body", "a HEARTBEAT of 40 bytes", g_short_body },
	{ "standing", "a HEARTBEAT with an unknown standing bit", g_standing },
	{ "ballot_block", "a HEARTBEAT announcing another node's ballot block",
	  g_ballot_block },
	{ "oversized", "a Send larger than the receive buffers", g_oversized },
	{ "seq_gap", "sequence number skipped", g_seq_gap },
	{ "seq_repeat", "sequence number repeated", g_seq_repeat },
	{ "credits", "more credits than our receive depth", g_credits },
	{ "hello2", "a second HELLO", g_hello2 },
	{ "ring", "a RING sent to a backup", g_ring },
	{ "append_pos", "APPEND with commit_pos above head", g_append_pos },
	{ "append_lsn", "APPEND with first_lsn above commit_lsn", g_append_lsn },
	{ "append_back", "APPEND moving the commit LSN back", g_append_back },
	{ "append_garbage", "APPEND committing random ring bytes",
	  g_append_garbage },
	{ "epoch", "APPEND of another epoch than our HELLO's", g_epoch },
	{ "record_epoch", "a record of a later epoch than ours", g_record_epoch },
	{ "new_epoch", "a record of our epoch (valid: kept)", g_new_epoch },
	{ "ack", "an ACK sent to a backup", g_ack },
	{ "fwd_done", "FWD_DONE for an unknown request", g_fwd_done },
	{ "fwd_close_flags", "FWD_CLOSE with an unknown flag",
	  g_fwd_close_flags },
	{ "fwd_closed", "FWD_CLOSED that no FWD_CLOSE asked for",
	  g_fwd_closed },
	{ "catchup_range", "CATCHUP with start_pos above target_pos",
	  g_catchup_range },
	{ "catchup_segs", "CATCHUP whose segments miss the capacity",
	  g_catchup_segs },
	{ "catchup_flags", "CATCHUP with an unknown flag", g_catchup_flags },
	{ "catchup_start", "CATCHUP not starting at the backup's head",
	  g_catchup_start },
	{ "catchup_back", "CATCHUP with RESET below the backup's next LSN",
	  g_catchup_back },
	{ "catchup_garbage", "CATCHUP granting a ring of random bytes",
	  g_catchup_garbage },
	{ "catchup_torn", "CATCHUP granting a record with a torn payload",
	  g_catchup_torn },
	{ "append_torn", "APPEND committing a record with a torn payload",
	  g_append_torn },
	{ "join", "a JOIN sent to a backup", g_join },
	{ "other_log", "HELLO of another log (first LSN: the backup's commit), "
	  "then an APPEND", g_other_log },
	{ "ballot_key", "BALLOT with a zero key", g_ballot_key },
	{ "ballot_align", "BALLOT with a misaligned ballot word",
	  g_ballot_align },
	{ "ballot_reserved", "BALLOT with reserved bits set",
	  g_ballot_reserved },
	{ "ballot2", "a valid BALLOT, then a second one", g_ballot2 },
	{ "vote_unasked", "a VOTE that answers no VOTE_REQ, of a far epoch",
	  g_vote_unasked },
	{ "lead_primary", "a valid LEAD after a HELLO that said primary",
	  g_lead_primary },
	/* these HELLO as a backup first (garbage_as_backup()) */
	{ "lead_reserved", "LEAD with a reserved bit set", g_lead_reserved },
	{ "lead_log0", "LEAD with log id 0", g_lead_log0 },
	{ "lead_epoch", "LEAD in the epoch of our HELLO", g_lead_epoch },
	{ "lead_other_log", "LEAD of another log than our HELLO's",
	  g_lead_other_log },
};

/* Kinds sent on a connection whose HELLO said backup (no RING). */
static bool garbage_as_backup(const struct garbage_kind *k)
{
	return k->send == g_lead_reserved || k->send == g_lead_log0 ||
	       k->send == g_lead_epoch || k->send == g_lead_other_log;
}

#define GARBAGE_WAIT_MS		15000
#define CONTROL_WAIT_MS		3000

static int run_garbage(const struct opts *o)
{
	const struct garbage_kind *k = NULL;
	bool control, dropped;
	struct session s;
	long long t0;
	char how[96];
	unsigned int i;

	for (i = 0; i < sizeof(garbage_kinds) / sizeof(garbage_kinds[0]); i++)
		if (!strcmp(o->garbage, garbage_kinds[i].name))
			k = &garbage_kinds[i];
	if (!k) {
		fprintf(stderr, "unknown --garbage kind %s; one of:", o->garbage);
		for (i = 0; i < sizeof(garbage_kinds) / sizeof(garbage_kinds[0]); i++)
			fprintf(stderr, " %s", garbage_kinds[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	control = k->send == g_valid || k->send == g_new_epoch;
	json_add(",\"garbage\":\"%s\"", k->name);
	if (garbage_as_backup(k)) {
		if (session_open(o, &s) || session_hello(o, &s, false)) {
			tap(false, "%s: connected as node %u, a backup",
			    k->name, o->node);
			session_close(&s);
			return 2;
		}
		tap(true, "%s: connected as node %u, a backup", k->name,
		    o->node);
	} else if (session_start(o, &s, k->name)) {
		session_close(&s);
		return 2;
	}
	json_add(",\"head\":%" PRIu64 ",\"next_lsn\":%" PRIu64,
		 (uint64_t)le64toh(s.peer_ring.head),
		 (uint64_t)le64toh(s.peer_ring.next_lsn));
	if (k->send(o, &s)) {
		tap(false, "%s: sent %s", k->name, k->what);
		session_close(&s);
		return 2;
	}
	tap(true, "%s: sent %s", k->name, k->what);
	t0 = now_ms();
	dropped = wait_dropped(&s, control ? CONTROL_WAIT_MS : GARBAGE_WAIT_MS,
			       control, how, sizeof(how));
	json_add(",\"dropped\":%s,\"how\":\"%s\",\"ms\":%lld",
		 dropped ? "true" : "false", how, now_ms() - t0);
	if (control)
		tap(!dropped, "%s: the backup kept the connection for %d ms (%s)",
		    k->name, CONTROL_WAIT_MS, how);
	else
		tap(dropped, "%s: the backup dropped the connection within %d ms (%s)",
		    k->name, GARBAGE_WAIT_MS, how);
	/*
	 * A failed completion shows the drop here before the backup has
	 * closed its side: let it disconnect first, so that it closes for
	 * its own reason rather than for our DREQ.
	 */
	if (dropped && strncmp(how, "RDMA_CM", 7))
		wait_cm_disconnected(&s, 2000);
	session_close(&s);
	return failures ? 1 : 0;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s -a ADDR [-p PORT] [-n NODE] [-d DST] -c CLUSTER -C CAPACITY\n"
		"          [--max-record N] [--no-read] [--no-stale] [--hold MS]\n"
		"       %s --listen -a OUR_ADDR -n NODE -d DST -c CLUSTER -C CAPACITY\n"
		"          --cross-addr ADDR --cross-rkey RKEY\n"
		"       %s --listen -a OUR_ADDR -n NODE -d DST -c CLUSTER -C CAPACITY\n"
		"          --fwd-len LEN [--fwd-count N]\n"
		"       %s -a ADDR [-p PORT] [-n NODE] [-d DST] -c CLUSTER -C CAPACITY\n"
		"          --garbage KIND [--vote-epoch N] [--primary-epoch E]\n"
		"       %s -a ADDR [-p PORT] [-n NODE] [-d DST] -c CLUSTER -C CAPACITY\n"
		"          --grant-probe [--secret FILE] [--lead EPOCH [--lead-other-log]\n"
		"          [--lead-es POS,LSN,PREV_EPOCH,PREV_GEN[,nf]]]\n"
		"       %s --listen -a OUR_ADDR -n NODE -d DST -c CLUSTER -C CAPACITY\n"
		"          --catchup-probe [--secret FILE]\n"
		"       %s [--listen] -a ADDR -n NODE -d DST -c CLUSTER -C CAPACITY\n"
		"          --vote EPOCH --vote-pos-epoch E [--vote-behind N] [--vote-pre]\n"
		"          [--vote-gen G]\n"
		"       %s [--listen] -a ADDR -n NODE -d DST -c CLUSTER -C CAPACITY\n"
		"          --ballot-probe ok|word_read|word_write|block_write|block_atomic|past_block|tamper:EPOCH\n",
		argv0, argv0, argv0, argv0, argv0, argv0, argv0, argv0);
	exit(2);
}

/* --secret FILE: its bytes, without one trailing newline (as rdmalogctl). */
static void read_secret(const char *file, struct opts *o)
{
	FILE *f = fopen(file, "r");
	uint8_t buf[RDMALOG_MAX_SECRET + 2];
	size_t n;

	if (!f) {
		fprintf(stderr, "%s: %s\n", file, strerror(errno));
		exit(2);
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (n && buf[n - 1] == '\n')
		n--;
	if (!n || n > RDMALOG_MAX_SECRET) {
		fprintf(stderr, "%s: a secret is 1..%d bytes\n", file,
			RDMALOG_MAX_SECRET);
		exit(2);
	}
	memcpy(o->secret, buf, n);
	o->secret_len = n;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "node", required_argument, NULL, 'n' },
		{ "dst", required_argument, NULL, 'd' },
		{ "cluster", required_argument, NULL, 'c' },
		{ "capacity", required_argument, NULL, 'C' },
		{ "max-record", required_argument, NULL, 'm' },
		{ "no-read", no_argument, NULL, 'R' },
		{ "no-stale", no_argument, NULL, 'S' },
		{ "listen", no_argument, NULL, 'l' },
		{ "cross-addr", required_argument, NULL, 'x' },
		{ "cross-rkey", required_argument, NULL, 'k' },
		{ "hold", required_argument, NULL, 'h' },
		{ "garbage", required_argument, NULL, 'g' },
		{ "fwd-len", required_argument, NULL, 'F' },
		{ "fwd-count", required_argument, NULL, 'N' },
		{ "secret", required_argument, NULL, 'K' },
		{ "grant-probe", no_argument, NULL, 'G' },
		{ "catchup-probe", no_argument, NULL, 'U' },
		{ "vote-epoch", required_argument, NULL, 'V' },
		{ "vote", required_argument, NULL, 'E' },
		{ "vote-behind", required_argument, NULL, 'B' },
		{ "vote-pre", no_argument, NULL, 'W' },
		{ "vote-gen", required_argument, NULL, 'J' },
		{ "vote-pos-epoch", required_argument, NULL, 'P' },
		{ "primary-epoch", required_argument, NULL, 'Q' },
		{ "ballot-probe", required_argument, NULL, 'Y' },
		{ "lead", required_argument, NULL, 'L' },
		{ "lead-other-log", no_argument, NULL, 'O' },
		{ "lead-es", required_argument, NULL, 'Z' },
		{}
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->port = 7471;
	o->node = 1;
	o->dst = 2;
	o->max_record = 65536;
	o->do_read = true;
	o->do_stale = true;
	while ((c = getopt_long(argc, argv, "a:p:n:d:c:C:m:", lo, NULL)) != -1) {
		switch (c) {
		case 'a': o->addr = optarg; break;
		case 'p': o->port = atoi(optarg); break;
		case 'n': o->node = strtoul(optarg, NULL, 0); break;
		case 'd': o->dst = strtoul(optarg, NULL, 0); break;
		case 'c': o->cluster = strtoull(optarg, NULL, 0); break;
		case 'C': o->capacity = strtoull(optarg, NULL, 0); break;
		case 'm': o->max_record = strtoul(optarg, NULL, 0); break;
		case 'R': o->do_read = false; break;
		case 'S': o->do_stale = false; break;
		case 'l': o->listen = true; break;
		case 'x': o->cross_addr = strtoull(optarg, NULL, 0); o->cross = true; break;
		case 'k': o->cross_rkey = strtoul(optarg, NULL, 0); break;
		case 'h': o->hold_ms = strtoul(optarg, NULL, 0); break;
		case 'g': o->garbage = optarg; break;
		case 'F': o->fwd_len = strtoul(optarg, NULL, 0); break;
		case 'N': o->fwd_count = strtoul(optarg, NULL, 0); break;
		case 'K': read_secret(optarg, o); break;
		case 'G': o->grant_probe = true; break;
		case 'U': o->catchup_probe = true; break;
		case 'V': opt_vote_epoch = strtoull(optarg, NULL, 0); break;
		case 'E': o->vote = strtoull(optarg, NULL, 0); break;
		case 'B': o->vote_behind = strtoull(optarg, NULL, 0); break;
		case 'W': o->vote_pre = true; break;
		case 'J': o->vote_gen = strtoul(optarg, NULL, 0); break;
		case 'P': o->vote_pos_epoch = strtoull(optarg, NULL, 0); break;
		case 'Q': opt_primary_epoch = strtoull(optarg, NULL, 0); break;
		case 'Y': o->ballot_probe = optarg; break;
		case 'L': o->lead = strtoull(optarg, NULL, 0); break;
		case 'O': o->lead_other_log = true; break;
		case 'Z': o->lead_es = optarg; break;
		default: usage(argv[0]);
		}
	}
	if (!o->addr || !o->cluster || !o->capacity || !o->node || !o->dst ||
	    (!o->vote && !o->ballot_probe &&
	     o->listen != (o->cross || o->fwd_len || o->catchup_probe)) ||
	    (o->ballot_probe && (o->vote || o->cross || o->fwd_len ||
				 o->catchup_probe || o->garbage ||
				 o->grant_probe)) ||
	    (o->vote && (o->cross || o->fwd_len || o->catchup_probe ||
			 o->garbage || o->grant_probe || !o->vote_pos_epoch)) ||
	    (o->cross + !!o->fwd_len + o->catchup_probe > 1) ||
	    (o->grant_probe && o->listen) ||
	    ((o->lead || o->lead_other_log) && !o->grant_probe) ||
	    ((o->lead_other_log || o->lead_es) && !o->lead))
		usage(argv[0]);
	if (o->fwd_len && !o->fwd_count)
		o->fwd_count = 1;
}

int main(int argc, char **argv)
{
	struct session s, s2;
	uint64_t off, addr, last_end;
	uint32_t rkey, old_rkey;
	struct opts o;
	unsigned int last;
	int ret = 0;

	parse(argc, argv, &o);
	printf("TAP version 13\n");
	json_add("{\"node\":%u,\"dst\":%u", o.node, o.dst);
	srandom(now_ms() ^ getpid());
	if (o.grant_probe) {
		ret = run_grant_probe(&o);
		goto out;
	}
	if (o.vote) {
		ret = run_vote(&o);
		goto out;
	}
	if (o.ballot_probe) {
		ret = run_ballot_probe(&o);
		goto out;
	}
	if (o.listen) {
		ret = o.catchup_probe ? run_catchup_probe(&o) :
		      o.fwd_len ? run_fwd(&o) : run_cross(&o);
		goto out;
	}
	if (o.garbage) {
		ret = run_garbage(&o);
		goto out;
	}

	/* 1: a WRITE inside the grant works, one past its end does not */
	if (session_start(&o, &s, "first connection")) {
		session_close(&s);
		ret = 2;
		goto out;
	}
	json_add(",\"segments\":%u,\"head\":%" PRIu64, s.nr_segs,
		 (uint64_t)le64toh(s.peer_ring.head));
	if (free_offset(&o, &s, &off) || ring_addr(&s, off, PROBE_BYTES,
						   &addr, &rkey)) {
		tap(false, "no free ring offset above the head");
		session_close(&s);
		ret = 2;
		goto out;
	}
	if (expect(&s, "inside", "WRITE inside the ring above the head",
		   IBV_WR_RDMA_WRITE, addr, rkey, true))
		ret = 1;
	last = s.nr_segs - 1;
	last_end = le64toh(s.peer_ring.seg[last].addr) +
		   le32toh(s.peer_ring.seg[last].length);
	if (o.hold_ms) {
		/* for --cross from another node: print the grant and wait */
		json_add(",\"grant_addr\":%" PRIu64 ",\"grant_rkey\":%u", addr,
			 rkey);
		printf("GRANT addr 0x%" PRIx64 " rkey 0x%x\n", addr, rkey);
		fflush(stdout);
		if (hold(&s, o.hold_ms)) {
			tap(false, "connection kept for %u ms", o.hold_ms);
			ret = 1;
		}
	}
	if (expect(&s, "past_end", "WRITE just past the end of the ring",
		   IBV_WR_RDMA_WRITE, last_end,
		   le32toh(s.peer_ring.seg[last].rkey), false))
		ret = 1;
	old_rkey = rkey;
	session_close(&s);

	/* 2: the grant is REMOTE_WRITE only */
	if (o.do_read) {
		if (session_start(&o, &s2, "second connection")) {
			session_close(&s2);
			ret = 2;
			goto out;
		}
		if (ring_addr(&s2, off, PROBE_BYTES, &addr, &rkey)) {
			session_close(&s2);
			ret = 2;
			goto out;
		}
		if (expect(&s2, "read", "READ inside the ring",
			   IBV_WR_RDMA_READ, addr, rkey, false))
			ret = 1;
		old_rkey = rkey;
		session_close(&s2);
	}

	/* 3: a grant dies with its connection */
	if (o.do_stale) {
		if (session_start(&o, &s2, "third connection")) {
			session_close(&s2);
			ret = 2;
			goto out;
		}
		if (ring_addr(&s2, off, PROBE_BYTES, &addr, &rkey)) {
			session_close(&s2);
			ret = 2;
			goto out;
		}
		if (rkey == old_rkey) {
			printf("ok %d stale rkey: # SKIP the new grant has the same rkey 0x%x\n",
			       ++tap_n, rkey);
			json_add(",\"stale\":\"skip\"");
		} else if (expect(&s2, "stale",
				  "WRITE with the previous connection's rkey",
				  IBV_WR_RDMA_WRITE, addr, old_rkey, false)) {
			ret = 1;
		}
		session_close(&s2);
	}
out:
	if (ret == 0 && failures)
		ret = 1;
	printf("1..%d\n", tap_n);
	json_add(",\"pass\":%s}", ret ? "false" : "true");
	printf("%s\n", json);
	return ret;
}
