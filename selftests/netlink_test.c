// SPDX-License-Identifier: GPL-2.0
/*
 * netlink_test: the "rdmalog" generic netlink family, spoken directly
 * with libnl (not through rdmalogctl) so that malformed requests can be
 * sent. Checks Documentation/netlink.rst and uapi/rdmalog_genl.h: strict
 * attribute validation with extended ACK messages that point at the
 * attribute, ranges, -EBUSY/-EALREADY/-EEXIST/-ENOSPC/-ENOENT/-ERANGE
 * paths, that a failed request changes nothing, unknown commands, the
 * replies of the GET commands, the events multicast group, that every
 * mutating command needs CAP_NET_ADMIN while GETs do not, and that GETs
 * show the cluster id and the addresses only to CAP_NET_ADMIN (events to
 * nobody).
 *
 * Runs as root in the test VM with rdmalog loaded (fixture "fresh"
 * reloads it: nothing may hold /dev/rdmalog open).
 */
#include <arpa/inet.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#include "rdmalog_test.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define MAX_REPLIES	64
#define NL_TIMEOUT_MS	30000

/* ------------------------------------------------------------------ */
/* A minimal request/reply layer on top of libnl's message builder. */

struct nlt {
	struct nl_sock *sk;
	int family;
	int fd;
};

struct reply {
	int err;		/* 0 or -errno from the ACK / DONE */
	bool has_msg;
	char msg[512];		/* NLMSGERR_ATTR_MSG */
	bool has_offs;
	uint32_t offs;		/* NLMSGERR_ATTR_OFFS */
	bool has_miss;
	uint32_t miss_type;	/* NLMSGERR_ATTR_MISS_TYPE */
	int n;			/* data messages */
	struct nlmsghdr *m[MAX_REPLIES];
};

static void reply_free(struct reply *r)
{
	int i;

	for (i = 0; i < r->n; i++)
		free(r->m[i]);
	memset(r, 0, sizeof(*r));
}

static int nlt_open(struct nlt *t)
{
	int one = 1;

	memset(t, 0, sizeof(*t));
	t->sk = nl_socket_alloc();
	if (!t->sk)
		return -ENOMEM;
	if (genl_connect(t->sk))
		return -ECONNREFUSED;
	/* replies are matched by req_send(); libnl's own helpers (genl_ctrl_*)
	 * must not trip over the sequence numbers used there
	 */
	nl_socket_disable_seq_check(t->sk);
	t->fd = nl_socket_get_fd(t->sk);
	if (setsockopt(t->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)))
		return -errno;
	t->family = genl_ctrl_resolve(t->sk, RDMALOG_GENL_NAME);
	if (t->family < 0)
		return -ENOENT;
	return 0;
}

static void nlt_close(struct nlt *t)
{
	if (t->sk)
		nl_socket_free(t->sk);
	t->sk = NULL;
}

static struct nl_msg *req_new(struct nlt *t, int cmd, int flags)
{
	struct nl_msg *m = nlmsg_alloc();

	if (!m)
		return NULL;
	if (!genlmsg_put(m, NL_AUTO_PORT, NL_AUTO_SEQ, t->family, 0, flags,
			 (uint8_t)cmd, RDMALOG_GENL_VERSION)) {
		nlmsg_free(m);
		return NULL;
	}
	return m;
}

/* Add an attribute; returns its offset from the start of the message. */
static uint32_t put(struct nl_msg *m, int type, const void *data, int len)
{
	struct nlattr *a = nla_reserve(m, type, len);

	if (!a)
		return 0;
	if (len)
		memcpy(nla_data(a), data, len);
	return (uint32_t)((char *)a - (char *)nlmsg_hdr(m));
}

static uint32_t put_u8(struct nl_msg *m, int type, uint8_t v)
{
	return put(m, type, &v, 1);
}

static uint32_t put_u16(struct nl_msg *m, int type, uint16_t v)
{
	return put(m, type, &v, 2);
}

static uint32_t put_u32(struct nl_msg *m, int type, uint32_t v)
{
	return put(m, type, &v, 4);
}

static uint32_t put_u64(struct nl_msg *m, int type, uint64_t v)
{
	return put(m, type, &v, 8);
}

static uint32_t put_ip4(struct nl_msg *m, int type, const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return put(m, type, &a, 4);
}

static void parse_ack_tlvs(struct reply *r, struct nlattr *head, int len)
{
	struct nlattr *a;
	int rem;

	nla_for_each_attr(a, head, len, rem) {
		switch (nla_type(a)) {
		case NLMSGERR_ATTR_MSG:
			r->has_msg = true;
			snprintf(r->msg, sizeof(r->msg), "%.*s",
				 nla_len(a), (char *)nla_data(a));
			break;
		case NLMSGERR_ATTR_OFFS:
			r->has_offs = true;
			r->offs = nla_get_u32(a);
			break;
		case NLMSGERR_ATTR_MISS_TYPE:
			r->has_miss = true;
			r->miss_type = nla_get_u32(a);
			break;
		}
	}
}

/*
 * Send @m (freed) and collect the replies until the ACK (or DONE for a
 * dump). Returns r->err; -ETIMEDOUT if the kernel did not answer.
 */
static int req_send(struct nlt *t, struct nl_msg *m, struct reply *r)
{
	static uint8_t buf[1 << 16];
	struct nlmsghdr *h;
	struct pollfd pfd;
	uint32_t seq;
	bool dump;
	ssize_t n;
	int len;

	memset(r, 0, sizeof(*r));
	dump = (nlmsg_hdr(m)->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
	if (!dump)
		nlmsg_hdr(m)->nlmsg_flags |= NLM_F_ACK;
	nl_complete_msg(t->sk, m);
	seq = nlmsg_hdr(m)->nlmsg_seq;
	if (nl_send(t->sk, m) < 0) {
		nlmsg_free(m);
		r->err = -EIO;
		return r->err;
	}
	nlmsg_free(m);
	for (;;) {
		pfd.fd = t->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, NL_TIMEOUT_MS) != 1) {
			r->err = -ETIMEDOUT;
			return r->err;
		}
		n = recv(t->fd, buf, sizeof(buf), MSG_TRUNC);
		if (n < 0) {
			r->err = -errno;
			return r->err;
		}
		if (n > (ssize_t)sizeof(buf)) {
			r->err = -EMSGSIZE;
			return r->err;
		}
		len = (int)n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);
				int off = sizeof(*e);

				r->err = e->error;
				if (!(h->nlmsg_flags & NLM_F_CAPPED))
					off += e->msg.nlmsg_len -
					       sizeof(struct nlmsghdr);
				off = NLMSG_ALIGN(off);
				if ((h->nlmsg_flags & NLM_F_ACK_TLVS) &&
				    h->nlmsg_len > NLMSG_HDRLEN + off)
					parse_ack_tlvs(r, (struct nlattr *)
						       ((char *)NLMSG_DATA(h) +
							off),
						       h->nlmsg_len -
						       NLMSG_HDRLEN - off);
				return r->err;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				int *e = NLMSG_DATA(h);

				r->err = *e;
				if (h->nlmsg_flags & NLM_F_ACK_TLVS)
					parse_ack_tlvs(r, (struct nlattr *)
						       ((char *)NLMSG_DATA(h) +
							NLMSG_ALIGN(sizeof(int))),
						       h->nlmsg_len -
						       NLMSG_HDRLEN -
						       NLMSG_ALIGN(sizeof(int)));
				return r->err;
			}
			if (r->n < MAX_REPLIES) {
				r->m[r->n] = malloc(h->nlmsg_len);
				memcpy(r->m[r->n], h, h->nlmsg_len);
				r->n++;
			}
		}
	}
}

/* Send a request with no attributes. */
static int req_simple(struct nlt *t, int cmd, int flags, struct reply *r)
{
	struct nl_msg *m = req_new(t, cmd, flags);

	if (!m)
		return -ENOMEM;
	return req_send(t, m, r);
}

/* ------------------------------------------------------------------ */
/* Parsed replies and events. */

struct peer {
	bool has_id, has_addr, has_port, has_state;
	uint32_t id;
	int addr_len;
	uint8_t addr[16];
	uint16_t port;
	uint32_t state;
};

struct info {
	uint8_t cmd;
	bool has[RDMALOG_A_MAX + 1];
	uint64_t v[RDMALOG_A_MAX + 1];	/* numeric attributes */
	int len[RDMALOG_A_MAX + 1];
	uint8_t addr[16];
	char status_msg[256];
	struct peer peer;		/* RDMALOG_A_PEER */
	int npeers;			/* RDMALOG_A_PEERS */
	struct peer peers[32];
	bool stat_has[RDMALOG_STAT_MAX + 1];
	uint64_t stat[RDMALOG_STAT_MAX + 1];
	int stat_len[RDMALOG_STAT_MAX + 1];
	int unknown_stats;
};

static uint64_t nla_num(struct nlattr *a)
{
	switch (nla_len(a)) {
	case 1: return nla_get_u8(a);
	case 2: return nla_get_u16(a);
	case 4: return nla_get_u32(a);
	case 8: return nla_get_u64(a);
	}
	return ~0ULL;
}

static void parse_peer(struct nlattr *nest, struct peer *p)
{
	struct nlattr *a;
	int rem;

	memset(p, 0, sizeof(*p));
	nla_for_each_nested(a, nest, rem) {
		switch (nla_type(a)) {
		case RDMALOG_PEER_A_NODE_ID:
			p->has_id = true;
			p->id = (uint32_t)nla_num(a);
			break;
		case RDMALOG_PEER_A_ADDR:
			p->has_addr = true;
			p->addr_len = nla_len(a);
			memcpy(p->addr, nla_data(a),
			       nla_len(a) > 16 ? 16 : nla_len(a));
			break;
		case RDMALOG_PEER_A_PORT:
			p->has_port = true;
			p->port = (uint16_t)nla_num(a);
			break;
		case RDMALOG_PEER_A_STATE:
			p->has_state = true;
			p->state = (uint32_t)nla_num(a);
			break;
		}
	}
}

static void parse_info(struct nlmsghdr *h, struct info *in)
{
	struct genlmsghdr *g = nlmsg_data(h);
	struct nlattr *a, *b;
	int rem, rem2, type;

	memset(in, 0, sizeof(*in));
	in->cmd = g->cmd;
	nla_for_each_attr(a, genlmsg_attrdata(g, 0), genlmsg_attrlen(g, 0),
			  rem) {
		type = nla_type(a);
		if (type <= 0 || type > RDMALOG_A_MAX)
			continue;
		in->has[type] = true;
		in->len[type] = nla_len(a);
		switch (type) {
		case RDMALOG_A_ADDR:
			memcpy(in->addr, nla_data(a),
			       nla_len(a) > 16 ? 16 : nla_len(a));
			break;
		case RDMALOG_A_STATUS_MSG:
			snprintf(in->status_msg, sizeof(in->status_msg),
				 "%.*s", nla_len(a), (char *)nla_data(a));
			break;
		case RDMALOG_A_PEER:
			parse_peer(a, &in->peer);
			break;
		case RDMALOG_A_PEERS:
			nla_for_each_nested(b, a, rem2) {
				if (nla_type(b) == RDMALOG_A_PEER &&
				    in->npeers < 32)
					parse_peer(b, &in->peers[in->npeers++]);
			}
			break;
		case RDMALOG_A_STATS:
			nla_for_each_nested(b, a, rem2) {
				int s = nla_type(b);

				if (s == RDMALOG_STAT_PAD)
					continue;
				if (s <= 0 || s > RDMALOG_STAT_MAX) {
					in->unknown_stats++;
					continue;
				}
				in->stat_has[s] = true;
				in->stat_len[s] = nla_len(b);
				in->stat[s] = nla_num(b);
			}
			break;
		default:
			in->v[type] = nla_num(a);
		}
	}
}

/* A GET (or bodyless request) parsed; returns the error. */
static int get(struct nlt *t, int cmd, struct info *in)
{
	struct reply r;
	int err;

	memset(in, 0, sizeof(*in));
	err = req_simple(t, cmd, 0, &r);
	if (!err && r.n == 1)
		parse_info(r.m[0], in);
	else if (!err)
		err = -EPROTO;	/* not exactly one reply */
	reply_free(&r);
	return err;
}

static int peer_dump(struct nlt *t, struct peer *peers, int max)
{
	struct info in;
	struct reply r;
	int i, n = 0, err;

	err = req_simple(t, RDMALOG_CMD_PEER_GET, NLM_F_DUMP, &r);
	if (err) {
		reply_free(&r);
		return err;
	}
	for (i = 0; i < r.n; i++) {
		parse_info(r.m[i], &in);
		if (in.has[RDMALOG_A_PEER] && n < max)
			peers[n++] = in.peer;
	}
	reply_free(&r);
	return n;
}

/* ------------------------------------------------------------------ */
/* Assertions */

static const char *errname(int err)
{
	const char *s = strerrorname_np(err < 0 ? -err : err);

	return err ? (s ? s : "?") : "0";
}

/* What the assertions below print along (the case being checked). */
static char nl_ctx[256];

/*
 * NLERR(K, r, e): @r failed with -@e and came with an extack message;
 * NLERR_AT(K, r, e, off): ... pointing at the attribute at offset @off.
 * K is ASSERT or EXPECT (EXPECT: keep going, to see every case).
 */
#define NLERR(K, r, e) do {						\
	K##_EQ(-(e), (r)->err) {					\
		TH_LOG("%s: expected %s, got %s (extack: \"%s\")",	\
		       nl_ctx, errname(e), errname((r)->err),		\
		       (r)->msg);					\
	}								\
	K##_TRUE((r)->has_msg && (r)->msg[0]) {				\
		TH_LOG("%s: %s came without an extack message",	\
		       nl_ctx, errname(e));				\
	}								\
} while (0)

#define NLERR_AT(K, r, e, off) do {					\
	NLERR(K, r, e);							\
	K##_TRUE((r)->has_offs) {					\
		TH_LOG("%s: extack \"%s\" does not point at the "	\
		       "attribute", nl_ctx, (r)->msg);			\
	}								\
	if ((r)->has_offs) {						\
		K##_EQ((off), (r)->offs) {				\
			TH_LOG("%s: extack \"%s\" points at offset %u, "	\
			       "the attribute is at %u", nl_ctx,	\
			       (r)->msg, (r)->offs,			\
			       (unsigned int)(off));			\
		}							\
	}								\
} while (0)

#define ASSERT_NLERR(r, e)		NLERR(ASSERT, r, e)
#define EXPECT_NLERR(r, e)		NLERR(EXPECT, r, e)
#define ASSERT_NLERR_AT(r, e, off)	NLERR_AT(ASSERT, r, e, off)
#define EXPECT_NLERR_AT(r, e, off)	NLERR_AT(EXPECT, r, e, off)

#define ASSERT_NLOK(r) do {						\
	ASSERT_EQ(0, (r)->err) {					\
		TH_LOG("%s: failed: %s (extack: \"%s\")", nl_ctx,	\
		       errname((r)->err), (r)->msg);			\
	}								\
} while (0)

/* ------------------------------------------------------------------ */
/* Known state: down, no peers, node 1 primary, 1 MiB ring, async. */

static int reset_state(struct nlt *t, char *why, size_t whylen)
{
	struct peer peers[64];
	struct nl_msg *m;
	struct reply r;
	int n, i, err;

	err = req_simple(t, RDMALOG_CMD_DOWN, 0, &r);
	reply_free(&r);
	if (err && err != -EALREADY) {
		snprintf(why, whylen, "DOWN: %s", errname(err));
		return -1;
	}
	n = peer_dump(t, peers, 64);
	if (n < 0) {
		snprintf(why, whylen, "PEER_GET dump: %s", errname(n));
		return -1;
	}
	for (i = 0; i < n; i++) {
		m = req_new(t, RDMALOG_CMD_PEER_DEL, 0);
		put_u32(m, RDMALOG_A_NODE_ID, peers[i].id);
		err = req_send(t, m, &r);
		reply_free(&r);
		if (err) {
			snprintf(why, whylen, "PEER_DEL %u: %s", peers[i].id,
				 errname(err));
			return -1;
		}
	}
	m = req_new(t, RDMALOG_CMD_NODE_SET, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 1);
	put_u32(m, RDMALOG_A_ROLE, RDMALOG_ROLE_PRIMARY);
	put_u16(m, RDMALOG_A_PORT, RDMALOG_DEFAULT_PORT);
	put_u32(m, RDMALOG_A_FAILOVER, RDMALOG_FAILOVER_AUTO);
	put_u32(m, RDMALOG_A_PRIORITY, 0);
	put_u8(m, RDMALOG_A_LEAD, 1);
	err = req_send(t, m, &r);
	if (err) {
		snprintf(why, whylen, "NODE_SET: %s %.200s", errname(err), r.msg);
		reply_free(&r);
		return -1;
	}
	m = req_new(t, RDMALOG_CMD_LOG_SET, 0);
	put_u64(m, RDMALOG_A_CAPACITY, 1ULL << 20);
	put_u32(m, RDMALOG_A_MAX_RECORD, 64 << 10);
	put_u32(m, RDMALOG_A_DURABILITY, RDMALOG_DURABLE_ASYNC);
	put_u32(m, RDMALOG_A_COMMIT_TIMEOUT_MS,
		RDMALOG_DEFAULT_COMMIT_TIMEOUT_MS);
	err = req_send(t, m, &r);
	if (err) {
		snprintf(why, whylen, "LOG_SET: %s %.200s", errname(err), r.msg);
		reply_free(&r);
		return -1;
	}
	reply_free(&r);
	return 0;
}

/* 4 KiB of payload for test records. */
static const void *rbuf_fill(void)
{
	static uint8_t buf[4096];

	rl_pattern(buf, sizeof(buf), 1);
	return buf;
}

static int do_simple(struct nlt *t, int cmd)
{
	struct reply r;
	int err = req_simple(t, cmd, 0, &r);

	reply_free(&r);
	return err;
}

FIXTURE(nl) {
	struct nlt t;
};

FIXTURE_SETUP(nl)
{
	char why[512];

	nl_ctx[0] = '\0';
	ASSERT_EQ(0, nlt_open(&self->t)) {
		TH_LOG("cannot open the rdmalog family (module loaded?)");
	}
	ASSERT_EQ(0, reset_state(&self->t, why, sizeof(why))) {
		TH_LOG("reset: %s", why);
	}
}

FIXTURE_TEARDOWN(nl)
{
	char why[512];

	if (self->t.sk)
		reset_state(&self->t, why, sizeof(why));
	nlt_close(&self->t);
}

/* A freshly loaded module: rmmod + modprobe. */
FIXTURE(fresh) {
	struct nlt t;
};

FIXTURE_SETUP(fresh)
{
	char out[1024];

	ASSERT_EQ(0, rl_sh(out, sizeof(out), "rmmod rdmalog")) {
		TH_LOG("rmmod rdmalog: %s", out);
	}
	ASSERT_EQ(0, rl_sh(out, sizeof(out), "modprobe rdmalog")) {
		TH_LOG("modprobe rdmalog: %s", out);
	}
	ASSERT_EQ(0, nlt_open(&self->t));
}

FIXTURE_TEARDOWN(fresh)
{
	nlt_close(&self->t);
}

/* ------------------------------------------------------------------ */

TEST_F_TIMEOUT(nl, family_and_group_resolve, RL_TIMEOUT)
{
	ASSERT_LT(0, self->t.family);
	ASSERT_LE(0, genl_ctrl_resolve_grp(self->t.sk, RDMALOG_GENL_NAME,
					   RDMALOG_GENL_MCGRP_EVENTS));
}

TEST_F_TIMEOUT(nl, unknown_attribute_einval, RL_TIMEOUT)
{
	static const int cmds[] = {
		RDMALOG_CMD_NODE_SET, RDMALOG_CMD_LOG_SET,
		RDMALOG_CMD_PEER_ADD, RDMALOG_CMD_NODE_GET,
		RDMALOG_CMD_STATUS_GET, RDMALOG_CMD_UP,
	};
	struct nl_msg *m;
	struct reply r;
	struct info in;
	uint32_t off;
	unsigned int i;
	int type;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		for (type = RDMALOG_A_MAX + 1; type <= 200;
		     type += 200 - RDMALOG_A_MAX - 1) {
			m = req_new(&self->t, cmds[i], 0);
			if (cmds[i] == RDMALOG_CMD_NODE_SET)
				put_u32(m, RDMALOG_A_NODE_ID, 9);
			if (cmds[i] == RDMALOG_CMD_PEER_ADD) {
				put_u32(m, RDMALOG_A_NODE_ID, 9);
				put_ip4(m, RDMALOG_A_ADDR, "198.18.0.9");
				put_u16(m, RDMALOG_A_PORT, 7471);
			}
			off = put_u32(m, type, 1);
			snprintf(nl_ctx, sizeof(nl_ctx),
				 "command %d, attribute type %d", cmds[i],
				 type);
			req_send(&self->t, m, &r);
			EXPECT_NLERR_AT(&r, EINVAL, off);
			reply_free(&r);
		}
	}
	/* nothing happened */
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_NODE_GET, &in));
	ASSERT_EQ(1, in.v[RDMALOG_A_NODE_ID]);
	ASSERT_EQ(0, peer_dump(&self->t, in.peers, 32));
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &in));
	ASSERT_EQ(0, in.v[RDMALOG_A_UP]);
}

TEST_F_TIMEOUT(nl, wrong_attribute_length_einval, RL_TIMEOUT)
{
	static const uint8_t five[5] = { 198, 18, 0, 9, 1 };
	static const uint8_t seventeen[17] = { 0 };
	static const struct {
		int cmd, type, len;
		const void *data;
	} cases[] = {
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_NODE_ID, 1, "\x02" },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_NODE_ID, 2, "\x02\x00" },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_NODE_ID, 8,
		  "\x02\x00\x00\x00\x00\x00\x00\x00" },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_PORT, 4, "\x01\x02\x00\x00" },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_ROLE, 1, "\x01" },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_CLUSTER_ID, 4,
		  "\x01\x00\x00\x00" },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_ADDR, 5, five },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_ADDR, 0, NULL },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_ADDR, 3, five },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_ADDR, 17, seventeen },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_CAPACITY, 4,
		  "\x00\x00\x20\x00" },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_MAX_RECORD, 8,
		  "\x00\x10\x00\x00\x00\x00\x00\x00" },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_DURABILITY, 1, "\x00" },
		{ RDMALOG_CMD_TRIM, RDMALOG_A_LSN, 4, "\x01\x00\x00\x00" },
	};
	struct nl_msg *m;
	struct reply r;
	struct info in;
	uint32_t off;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = req_new(&self->t, cases[i].cmd, 0);
		off = put(m, cases[i].type, cases[i].data, cases[i].len);
		snprintf(nl_ctx, sizeof(nl_ctx),
			 "case %u: command %d attribute %d, %d bytes",
			 i, cases[i].cmd, cases[i].type, cases[i].len);
		req_send(&self->t, m, &r);
		EXPECT_NLERR_AT(&r, EINVAL, off);
		reply_free(&r);
	}
	/* a peer address of 5 or 17 bytes */
	for (i = 5; i <= 17; i += 12) {
		m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
		put_u32(m, RDMALOG_A_NODE_ID, 9);
		off = put(m, RDMALOG_A_ADDR, seventeen, i);
		put_u16(m, RDMALOG_A_PORT, 7471);
		snprintf(nl_ctx, sizeof(nl_ctx), "PEER_ADD, ADDR of %u bytes",
			 i);
		req_send(&self->t, m, &r);
		EXPECT_NLERR_AT(&r, EINVAL, off);
		reply_free(&r);
	}
	nl_ctx[0] = '\0';
	ASSERT_EQ(0, peer_dump(&self->t, in.peers, 32));
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_NODE_GET, &in));
	ASSERT_EQ(1, in.v[RDMALOG_A_NODE_ID]);
	ASSERT_EQ(RDMALOG_DEFAULT_PORT, in.v[RDMALOG_A_PORT]);
	ASSERT_EQ(RDMALOG_ROLE_PRIMARY, in.v[RDMALOG_A_ROLE]);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_LOG_GET, &in));
	ASSERT_EQ(1ULL << 20, in.v[RDMALOG_A_CAPACITY]);
	ASSERT_EQ(64 << 10, in.v[RDMALOG_A_MAX_RECORD]);
}

/* Malformed contents of a PEER nest: strict validation reaches inside. */
/*
 * PEER is a nest the kernel sends (STATUS_GET, PEER_GET, events); a
 * request carrying one, well-formed or not, is refused with EINVAL at the
 * nest, and nothing is added.
 */
TEST_F_TIMEOUT(nl, peer_nest_in_request_einval, RL_TIMEOUT)
{
	struct peer peers[4];
	struct nlattr *nest;
	struct nl_msg *m;
	struct reply r;
	uint32_t off;
	int kase;

	for (kase = 0; kase < 3; kase++) {
		m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
		switch (kase) {
		case 0:		/* a well-formed peer as a nest */
			nest = nla_nest_start(m, RDMALOG_A_PEER);
			off = (uint32_t)((char *)nest - (char *)nlmsg_hdr(m));
			put_u32(m, RDMALOG_PEER_A_NODE_ID, 9);
			put_ip4(m, RDMALOG_PEER_A_ADDR, "198.18.0.9");
			nla_nest_end(m, nest);
			snprintf(nl_ctx, sizeof(nl_ctx), "PEER nest in PEER_ADD");
			break;
		case 1:		/* the same next to top-level attributes */
			put_u32(m, RDMALOG_A_NODE_ID, 9);
			put_ip4(m, RDMALOG_A_ADDR, "198.18.0.9");
			nest = nla_nest_start(m, RDMALOG_A_PEER);
			off = (uint32_t)((char *)nest - (char *)nlmsg_hdr(m));
			put_u32(m, RDMALOG_PEER_A_NODE_ID, 9);
			nla_nest_end(m, nest);
			snprintf(nl_ctx, sizeof(nl_ctx),
				 "PEER nest beside NODE_ID/ADDR");
			break;
		default:	/* too short to hold an attribute header */
			off = put(m, RDMALOG_A_PEER | NLA_F_NESTED, "\x01\x02", 2);
			snprintf(nl_ctx, sizeof(nl_ctx), "PEER nest of 2 bytes");
		}
		req_send(&self->t, m, &r);
		EXPECT_NLERR_AT(&r, EINVAL, off);
		reply_free(&r);
	}
	ASSERT_EQ(0, peer_dump(&self->t, peers, 4));
}

TEST_F_TIMEOUT(nl, out_of_range_einval, RL_TIMEOUT)
{
	static const struct {
		int cmd, type, width;
		uint64_t v;
	} cases[] = {
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_NODE_ID, 4, 0 },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_NODE_ID, 4, 256 },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_NODE_ID, 4, 0xffffffff },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_PORT, 2, 0 },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_ROLE, 4, 0 },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_ROLE, 4, 3 },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_ROLE, 4, 9 },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_CLUSTER_ID, 8, 0 },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_FAILOVER, 4, 2 },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_PRIORITY, 4, 256 },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_LEAD, 1, 2 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_CAPACITY, 8, 0 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_CAPACITY, 8, (1 << 20) + 1 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_CAPACITY, 8,
		  (1 << 20) + 2048 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_CAPACITY, 8, 100000 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_CAPACITY, 8,
		  RDMALOG_MIN_CAPACITY - 4096 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_CAPACITY, 8,
		  RDMALOG_MAX_CAPACITY + 4096 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_CAPACITY, 8, ~0ULL << 12 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_MAX_RECORD, 4, 0 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_DURABILITY, 4, 3 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_DURABILITY, 4, 7 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_COMMIT_TIMEOUT_MS, 4, 0 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_COMMIT_TIMEOUT_MS, 4,
		  3600001 },
		{ RDMALOG_CMD_PEER_ADD, RDMALOG_A_NODE_ID, 4, 0 },
		{ RDMALOG_CMD_PEER_ADD, RDMALOG_A_NODE_ID, 4, 256 },
		{ RDMALOG_CMD_PEER_ADD, RDMALOG_A_PORT, 2, 0 },
	};
	struct nl_msg *m;
	struct reply r;
	struct info in;
	uint32_t off;
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = req_new(&self->t, cases[i].cmd, 0);
		if (cases[i].cmd == RDMALOG_CMD_PEER_ADD) {
			if (cases[i].type != RDMALOG_A_NODE_ID)
				put_u32(m, RDMALOG_A_NODE_ID, 9);
			put_ip4(m, RDMALOG_A_ADDR, "198.18.0.9");
			if (cases[i].type != RDMALOG_A_PORT)
				put_u16(m, RDMALOG_A_PORT, 7471);
		}
		switch (cases[i].width) {
		case 1:
			off = put_u8(m, cases[i].type, (uint8_t)cases[i].v);
			break;
		case 2:
			off = put_u16(m, cases[i].type, (uint16_t)cases[i].v);
			break;
		case 4:
			off = put_u32(m, cases[i].type, (uint32_t)cases[i].v);
			break;
		default:
			off = put_u64(m, cases[i].type, cases[i].v);
		}
		snprintf(nl_ctx, sizeof(nl_ctx),
			 "case %u: command %d attribute %d value %llu",
			 i, cases[i].cmd, cases[i].type,
			 (unsigned long long)cases[i].v);
		req_send(&self->t, m, &r);
		EXPECT_NLERR_AT(&r, EINVAL, off);
		reply_free(&r);
	}
	ASSERT_EQ(0, peer_dump(&self->t, in.peers, 32));
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_NODE_GET, &in));
	ASSERT_EQ(1, in.v[RDMALOG_A_NODE_ID]);
	ASSERT_EQ(RDMALOG_ROLE_PRIMARY, in.v[RDMALOG_A_ROLE]);
	ASSERT_EQ(RDMALOG_DEFAULT_PORT, in.v[RDMALOG_A_PORT]);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_LOG_GET, &in));
	ASSERT_EQ(1ULL << 20, in.v[RDMALOG_A_CAPACITY]);
	ASSERT_EQ(64 << 10, in.v[RDMALOG_A_MAX_RECORD]);
	ASSERT_EQ(RDMALOG_DURABLE_ASYNC, in.v[RDMALOG_A_DURABILITY]);
	ASSERT_EQ(RDMALOG_DEFAULT_COMMIT_TIMEOUT_MS,
		  in.v[RDMALOG_A_COMMIT_TIMEOUT_MS]);

	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_NODE_GET, &in));
	ASSERT_EQ(RDMALOG_FAILOVER_AUTO, in.v[RDMALOG_A_FAILOVER]);
	ASSERT_EQ(0, in.v[RDMALOG_A_PRIORITY]);
	ASSERT_EQ(1, in.v[RDMALOG_A_LEAD]);

	/* the edges of the ranges are accepted */
	m = req_new(&self->t, RDMALOG_CMD_NODE_SET, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 255);
	put_u16(m, RDMALOG_A_PORT, 65535);
	put_u32(m, RDMALOG_A_FAILOVER, RDMALOG_FAILOVER_MANUAL);
	put_u32(m, RDMALOG_A_PRIORITY, RDMALOG_MAX_PRIORITY);
	put_u8(m, RDMALOG_A_LEAD, 0);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	m = req_new(&self->t, RDMALOG_CMD_LOG_SET, 0);
	put_u64(m, RDMALOG_A_CAPACITY, RDMALOG_MIN_CAPACITY);
	put_u32(m, RDMALOG_A_MAX_RECORD, 1);
	put_u32(m, RDMALOG_A_COMMIT_TIMEOUT_MS, 3600000);
	put_u32(m, RDMALOG_A_DURABILITY, RDMALOG_DURABLE_ALL);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	m = req_new(&self->t, RDMALOG_CMD_LOG_SET, 0);
	put_u64(m, RDMALOG_A_CAPACITY, RDMALOG_MAX_CAPACITY);
	put_u32(m, RDMALOG_A_COMMIT_TIMEOUT_MS, 1);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_LOG_GET, &in));
	ASSERT_EQ(RDMALOG_MAX_CAPACITY, in.v[RDMALOG_A_CAPACITY]);
	ASSERT_EQ(1, in.v[RDMALOG_A_MAX_RECORD]);
	ASSERT_EQ(1, in.v[RDMALOG_A_COMMIT_TIMEOUT_MS]);
	ASSERT_EQ(RDMALOG_DURABLE_ALL, in.v[RDMALOG_A_DURABILITY]);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_NODE_GET, &in));
	ASSERT_EQ(255, in.v[RDMALOG_A_NODE_ID]);
	ASSERT_EQ(65535, in.v[RDMALOG_A_PORT]);
	ASSERT_EQ(RDMALOG_FAILOVER_MANUAL, in.v[RDMALOG_A_FAILOVER]);
	ASSERT_EQ(RDMALOG_MAX_PRIORITY, in.v[RDMALOG_A_PRIORITY]);
	ASSERT_EQ(0, in.v[RDMALOG_A_LEAD]);
}

TEST_F_TIMEOUT(nl, max_record_vs_capacity_einval, RL_TIMEOUT)
{
	struct nl_msg *m;
	struct reply r;
	struct info in;

	/* capacity 1 MiB: max_record up to 256 KiB */
	m = req_new(&self->t, RDMALOG_CMD_LOG_SET, 0);
	put_u32(m, RDMALOG_A_MAX_RECORD, (256 << 10) + 1);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, EINVAL);
	TH_LOG("max_record > capacity/4: \"%s\"", r.msg);
	/* the new pair counts: shrinking capacity below 4 * max_record */
	m = req_new(&self->t, RDMALOG_CMD_LOG_SET, 0);
	put_u64(m, RDMALOG_A_CAPACITY, 128 << 10);
	put_u32(m, RDMALOG_A_DURABILITY, RDMALOG_DURABLE_QUORUM);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, EINVAL);
	m = req_new(&self->t, RDMALOG_CMD_LOG_SET, 0);
	put_u64(m, RDMALOG_A_CAPACITY, 64 << 10);
	put_u32(m, RDMALOG_A_MAX_RECORD, (16 << 10) + 1);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, EINVAL);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_LOG_GET, &in));
	ASSERT_EQ(1 << 20, in.v[RDMALOG_A_CAPACITY]);
	ASSERT_EQ(64 << 10, in.v[RDMALOG_A_MAX_RECORD]);
	ASSERT_EQ(RDMALOG_DURABLE_ASYNC, in.v[RDMALOG_A_DURABILITY]);

	/* exactly a quarter is fine, in either order of change */
	m = req_new(&self->t, RDMALOG_CMD_LOG_SET, 0);
	put_u32(m, RDMALOG_A_MAX_RECORD, 256 << 10);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	m = req_new(&self->t, RDMALOG_CMD_LOG_SET, 0);
	put_u64(m, RDMALOG_A_CAPACITY, 64 << 10);
	put_u32(m, RDMALOG_A_MAX_RECORD, 16 << 10);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_LOG_GET, &in));
	ASSERT_EQ(64 << 10, in.v[RDMALOG_A_CAPACITY]);
	ASSERT_EQ(16 << 10, in.v[RDMALOG_A_MAX_RECORD]);
}

TEST_F_TIMEOUT(nl, set_without_attributes_einval, RL_TIMEOUT)
{
	struct reply r;

	req_simple(&self->t, RDMALOG_CMD_NODE_SET, 0, &r);
	ASSERT_NLERR(&r, EINVAL);
	reply_free(&r);
	req_simple(&self->t, RDMALOG_CMD_LOG_SET, 0, &r);
	ASSERT_NLERR(&r, EINVAL);
	reply_free(&r);
}

TEST_F_TIMEOUT(nl, missing_attributes_einval, RL_TIMEOUT)
{
	struct nl_msg *m;
	struct reply r;
	struct peer peers[4];

	/* PEER_ADD without ADDR */
	m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 2);
	put_u16(m, RDMALOG_A_PORT, 7471);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, EINVAL);
	reply_free(&r);
	/* PEER_ADD without NODE_ID */
	m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
	put_ip4(m, RDMALOG_A_ADDR, "198.18.0.2");
	put_u16(m, RDMALOG_A_PORT, 7471);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, EINVAL);
	reply_free(&r);
	/* PEER_DEL without NODE_ID */
	req_simple(&self->t, RDMALOG_CMD_PEER_DEL, 0, &r);
	ASSERT_NLERR(&r, EINVAL);
	reply_free(&r);
	/* TRIM without LSN (log up) */
	ASSERT_EQ(0, do_simple(&self->t, RDMALOG_CMD_UP));
	req_simple(&self->t, RDMALOG_CMD_TRIM, 0, &r);
	ASSERT_NLERR(&r, EINVAL);
	reply_free(&r);
	ASSERT_EQ(0, peer_dump(&self->t, peers, 4));
}

TEST_F_TIMEOUT(nl, busy_while_up, RL_TIMEOUT)
{
	static const struct {
		int cmd, type, width;
		uint64_t v;
	} cases[] = {
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_CAPACITY, 8, 2 << 20 },
		{ RDMALOG_CMD_LOG_SET, RDMALOG_A_MAX_RECORD, 4, 4096 },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_NODE_ID, 4, 2 },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_CLUSTER_ID, 8, 77 },
		{ RDMALOG_CMD_NODE_SET, RDMALOG_A_PORT, 2, 7000 },
	};
	struct rdmalog_state st;
	struct nl_msg *m;
	struct reply r;
	struct info in, node0;
	unsigned int i;
	int fd;

	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_NODE_GET, &node0));
	ASSERT_EQ(0, do_simple(&self->t, RDMALOG_CMD_UP));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = req_new(&self->t, cases[i].cmd, 0);
		if (cases[i].width == 2)
			put_u16(m, cases[i].type, (uint16_t)cases[i].v);
		else if (cases[i].width == 4)
			put_u32(m, cases[i].type, (uint32_t)cases[i].v);
		else
			put_u64(m, cases[i].type, cases[i].v);
		snprintf(nl_ctx, sizeof(nl_ctx), "busy case %u", i);
		req_send(&self->t, m, &r);
		EXPECT_NLERR(&r, EBUSY);
		reply_free(&r);
	}
	m = req_new(&self->t, RDMALOG_CMD_NODE_SET, 0);
	put_ip4(m, RDMALOG_A_ADDR, "198.18.0.77");
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, EBUSY);
	/* all or nothing: a legal change next to a busy one is not made */
	m = req_new(&self->t, RDMALOG_CMD_LOG_SET, 0);
	put_u32(m, RDMALOG_A_DURABILITY, RDMALOG_DURABLE_ALL);
	put_u64(m, RDMALOG_A_CAPACITY, 2 << 20);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, EBUSY);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_LOG_GET, &in));
	ASSERT_EQ(1 << 20, in.v[RDMALOG_A_CAPACITY]);
	ASSERT_EQ(64 << 10, in.v[RDMALOG_A_MAX_RECORD]);
	ASSERT_EQ(RDMALOG_DURABLE_ASYNC, in.v[RDMALOG_A_DURABILITY]);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_NODE_GET, &in));
	ASSERT_EQ(1, in.v[RDMALOG_A_NODE_ID]);
	ASSERT_EQ(node0.has[RDMALOG_A_CLUSTER_ID],
		  in.has[RDMALOG_A_CLUSTER_ID]);
	ASSERT_EQ(node0.v[RDMALOG_A_CLUSTER_ID], in.v[RDMALOG_A_CLUSTER_ID]);
	ASSERT_EQ(node0.v[RDMALOG_A_PORT], in.v[RDMALOG_A_PORT]);
	ASSERT_EQ(0, memcmp(node0.addr, in.addr, 16));

	/* durability, commit timeout and role may change while up */
	m = req_new(&self->t, RDMALOG_CMD_LOG_SET, 0);
	put_u32(m, RDMALOG_A_DURABILITY, RDMALOG_DURABLE_QUORUM);
	put_u32(m, RDMALOG_A_COMMIT_TIMEOUT_MS, 1000);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	m = req_new(&self->t, RDMALOG_CMD_NODE_SET, 0);
	put_u32(m, RDMALOG_A_ROLE, RDMALOG_ROLE_PRIMARY);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_LOG_GET, &in));
	ASSERT_EQ(RDMALOG_DURABLE_QUORUM, in.v[RDMALOG_A_DURABILITY]);
	ASSERT_EQ(1000, in.v[RDMALOG_A_COMMIT_TIMEOUT_MS]);
	/* the device sees it too */
	fd = open(RL_DEV, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rl_get_state(fd, &st));
	close(fd);
	ASSERT_EQ(RDMALOG_DURABLE_QUORUM, st.durability);
	ASSERT_EQ(1 << 20, st.capacity);
}

TEST_F_TIMEOUT(nl, up_down_twice_ealready, RL_TIMEOUT)
{
	struct reply r;
	struct info in;

	req_simple(&self->t, RDMALOG_CMD_DOWN, 0, &r);
	ASSERT_NLERR(&r, EALREADY);
	reply_free(&r);
	req_simple(&self->t, RDMALOG_CMD_UP, 0, &r);
	ASSERT_NLOK(&r);
	reply_free(&r);
	req_simple(&self->t, RDMALOG_CMD_UP, 0, &r);
	ASSERT_NLERR(&r, EALREADY);
	reply_free(&r);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &in));
	ASSERT_EQ(1, in.v[RDMALOG_A_UP]);
	req_simple(&self->t, RDMALOG_CMD_DOWN, 0, &r);
	ASSERT_NLOK(&r);
	reply_free(&r);
	req_simple(&self->t, RDMALOG_CMD_DOWN, 0, &r);
	ASSERT_NLERR(&r, EALREADY);
	reply_free(&r);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &in));
	ASSERT_EQ(0, in.v[RDMALOG_A_UP]);
	ASSERT_SYSERR(open(RL_DEV, O_RDONLY), ENETDOWN);
}

TEST_F_TIMEOUT(nl, peers_add_del_get, RL_TIMEOUT)
{
	struct peer peers[32];
	struct nl_msg *m;
	struct reply r;
	struct info in;
	uint8_t a2[4] = { 198, 18, 0, 2 }, a3[4] = { 198, 18, 0, 3 };

	m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 2);
	put(m, RDMALOG_A_ADDR, a2, 4);
	put_u16(m, RDMALOG_A_PORT, 7471);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	/* same id, other address */
	m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 2);
	put(m, RDMALOG_A_ADDR, a3, 4);
	put_u16(m, RDMALOG_A_PORT, 7471);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, EEXIST);
	/* other id, same address and port */
	m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 3);
	put(m, RDMALOG_A_ADDR, a2, 4);
	put_u16(m, RDMALOG_A_PORT, 7471);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, EEXIST);
	/* our own id */
	m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 1);
	put(m, RDMALOG_A_ADDR, a3, 4);
	put_u16(m, RDMALOG_A_PORT, 7471);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, EINVAL);
	/* a second, different peer is fine */
	m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 3);
	put(m, RDMALOG_A_ADDR, a3, 4);
	put_u16(m, RDMALOG_A_PORT, 7000);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);

	ASSERT_EQ(2, peer_dump(&self->t, peers, 32));
	if (peers[0].id == 3) {
		struct peer x = peers[0];

		peers[0] = peers[1];
		peers[1] = x;
	}
	ASSERT_TRUE(peers[0].has_id && peers[0].has_addr &&
		    peers[0].has_port && peers[0].has_state);
	ASSERT_EQ(2, peers[0].id);
	ASSERT_EQ(4, peers[0].addr_len);
	ASSERT_EQ(0, memcmp(a2, peers[0].addr, 4));
	ASSERT_EQ(7471, peers[0].port);
	ASSERT_EQ(3, peers[1].id);
	ASSERT_EQ(0, memcmp(a3, peers[1].addr, 4));
	ASSERT_EQ(7000, peers[1].port);
	/* down and no replication: just configured */
	ASSERT_EQ(RDMALOG_PEER_CONFIGURED, peers[1].state);

	/* PEER_GET one */
	m = req_new(&self->t, RDMALOG_CMD_PEER_GET, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 3);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	ASSERT_EQ(1, r.n);
	parse_info(r.m[0], &in);
	reply_free(&r);
	ASSERT_TRUE(in.has[RDMALOG_A_PEER]);
	ASSERT_EQ(3, in.peer.id);
	ASSERT_EQ(7000, in.peer.port);
	m = req_new(&self->t, RDMALOG_CMD_PEER_GET, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 99);
	req_send(&self->t, m, &r);
	ASSERT_EQ(-ENOENT, r.err);
	reply_free(&r);

	/* PEER_DEL */
	m = req_new(&self->t, RDMALOG_CMD_PEER_DEL, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 99);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, ENOENT);
	m = req_new(&self->t, RDMALOG_CMD_PEER_DEL, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 2);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	m = req_new(&self->t, RDMALOG_CMD_PEER_DEL, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 2);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, ENOENT);
	ASSERT_EQ(1, peer_dump(&self->t, peers, 32));
	ASSERT_EQ(3, peers[0].id);
	/* STATUS_GET lists it as well */
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &in));
	ASSERT_EQ(1, in.npeers);
	ASSERT_EQ(3, in.peers[0].id);
	ASSERT_EQ(7000, in.peers[0].port);
}

TEST_F_TIMEOUT(nl, peer_limit_enospc, RL_TIMEOUT)
{
	struct peer peers[32];
	struct nl_msg *m;
	struct reply r;
	uint8_t a[16];
	bool seen[32] = { false };
	int i, n;

	for (i = 0; i < RDMALOG_MAX_PEERS; i++) {
		m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
		put_u32(m, RDMALOG_A_NODE_ID, 2 + i);
		if (i == 0) {	/* one IPv6 peer: fd00::2 */
			memset(a, 0, 16);
			a[0] = 0xfd;
			a[15] = 2;
			put(m, RDMALOG_A_ADDR, a, 16);
		} else {
			uint8_t v4[4] = { 198, 18, 1, (uint8_t)(2 + i) };

			put(m, RDMALOG_A_ADDR, v4, 4);
		}
		put_u16(m, RDMALOG_A_PORT, 7471);
		snprintf(nl_ctx, sizeof(nl_ctx), "peer %d", 2 + i);
		req_send(&self->t, m, &r);
		ASSERT_NLOK(&r);
	}
	m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 100);
	put_ip4(m, RDMALOG_A_ADDR, "198.18.2.100");
	put_u16(m, RDMALOG_A_PORT, 7471);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, ENOSPC);

	n = peer_dump(&self->t, peers, 32);
	ASSERT_EQ(RDMALOG_MAX_PEERS, n);
	for (i = 0; i < n; i++) {
		ASSERT_LE(2, peers[i].id);
		ASSERT_GE(16, peers[i].id);
		ASSERT_FALSE(seen[peers[i].id]);
		seen[peers[i].id] = true;
		ASSERT_EQ(peers[i].id == 2 ? 16 : 4, peers[i].addr_len);
		if (peers[i].id == 2) {
			ASSERT_EQ(0xfd, peers[i].addr[0]);
		} else {
			ASSERT_EQ(peers[i].id, peers[i].addr[3]);
		}
	}
	/* removing one makes room again */
	m = req_new(&self->t, RDMALOG_CMD_PEER_DEL, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 9);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 100);
	put_ip4(m, RDMALOG_A_ADDR, "198.18.2.100");
	put_u16(m, RDMALOG_A_PORT, 7471);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
}

/*
 * Node 1 up as the primary with peer 2 configured at an address that
 * leads nowhere: it leads at once (failover manual: with auto it would
 * look for a log among its peers first). 0, or the failed step's error
 * (its reply in @r).
 */
static int up_with_lost_peer(struct nlt *t, struct reply *r)
{
	struct nl_msg *m;

	m = req_new(t, RDMALOG_CMD_PEER_ADD, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 2);
	put_ip4(m, RDMALOG_A_ADDR, "198.18.0.2");
	put_u16(m, RDMALOG_A_PORT, 7471);
	if (req_send(t, m, r))
		return r->err;
	m = req_new(t, RDMALOG_CMD_NODE_SET, 0);
	put_u32(m, RDMALOG_A_FAILOVER, RDMALOG_FAILOVER_MANUAL);
	if (req_send(t, m, r))
		return r->err;
	r->msg[0] = '\0';
	return do_simple(t, RDMALOG_CMD_UP);
}

/*
 * SWITCHOVER's refusals, each with its reason (Documentation/netlink.rst):
 * no NODE_ID, down, this node's own id, a node that is not a peer, a
 * backup, and a peer that does not replicate from it (its address leads
 * nowhere): the appends it paused for that one go on.
 */
static void switchover_req(struct nlt *t, uint32_t id, struct reply *r)
{
	struct nl_msg *m = req_new(t, RDMALOG_CMD_SWITCHOVER, 0);

	put_u32(m, RDMALOG_A_NODE_ID, id);
	req_send(t, m, r);
}

TEST_F_TIMEOUT(nl, switchover_refusals, RL_TIMEOUT)
{
	struct nl_msg *m;
	struct reply r;
	int fd, err;

	m = req_new(&self->t, RDMALOG_CMD_SWITCHOVER, 0);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, EINVAL);
	ASSERT_NE(NULL, strstr(r.msg, "NODE_ID")) TH_LOG("%s", r.msg);
	switchover_req(&self->t, 2, &r);
	ASSERT_NLERR(&r, ENETDOWN);

	err = up_with_lost_peer(&self->t, &r);
	ASSERT_EQ(0, err) {
		TH_LOG("up with peer 2: %s (extack: \"%s\")", errname(err),
		       r.msg);
	}

	switchover_req(&self->t, 1, &r);
	ASSERT_NLERR(&r, EINVAL);
	ASSERT_NE(NULL, strstr(r.msg, "the primary already")) TH_LOG("%s", r.msg);
	switchover_req(&self->t, 5, &r);
	ASSERT_NLERR(&r, ENOENT);
	ASSERT_NE(NULL, strstr(r.msg, "no such peer")) TH_LOG("%s", r.msg);
	switchover_req(&self->t, 2, &r);
	ASSERT_NLERR(&r, ENOTCONN);
	ASSERT_NE(NULL, strstr(r.msg, "does not replicate")) TH_LOG("%s", r.msg);
	fd = open(RL_DEV, O_WRONLY | O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(3, write(fd, "abc", 3));
	close(fd);

	ASSERT_EQ(0, do_simple(&self->t, RDMALOG_CMD_DOWN));
	m = req_new(&self->t, RDMALOG_CMD_NODE_SET, 0);
	put_u32(m, RDMALOG_A_ROLE, RDMALOG_ROLE_BACKUP);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	ASSERT_EQ(0, do_simple(&self->t, RDMALOG_CMD_UP));
	switchover_req(&self->t, 2, &r);
	ASSERT_NLERR(&r, EINVAL);
	ASSERT_NE(NULL, strstr(r.msg, "only the primary")) TH_LOG("%s", r.msg);
}

TEST_F_TIMEOUT(nl, trim_erange_enetdown, RL_TIMEOUT)
{
	struct nl_msg *m;
	struct reply r;
	struct info in;
	int fd, i;

	/* down: -ENETDOWN */
	m = req_new(&self->t, RDMALOG_CMD_TRIM, 0);
	put_u64(m, RDMALOG_A_LSN, 1);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, ENETDOWN);

	ASSERT_EQ(0, do_simple(&self->t, RDMALOG_CMD_UP));
	fd = open(RL_DEV, O_WRONLY);
	ASSERT_LE(0, fd);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(10, write(fd, "0123456789", 10));
	close(fd);
	m = req_new(&self->t, RDMALOG_CMD_TRIM, 0);
	put_u64(m, RDMALOG_A_LSN, 7);
	req_send(&self->t, m, &r);
	ASSERT_NLERR(&r, ERANGE);
	m = req_new(&self->t, RDMALOG_CMD_TRIM, 0);
	put_u64(m, RDMALOG_A_LSN, 3);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &in));
	ASSERT_EQ(3, in.v[RDMALOG_A_FIRST_LSN]);
	ASSERT_EQ(6, in.v[RDMALOG_A_COMMIT_LSN]);
	ASSERT_EQ(3 * rl_rec_bytes(10), in.v[RDMALOG_A_USED]);
	/* at or below first: no-op */
	m = req_new(&self->t, RDMALOG_CMD_TRIM, 0);
	put_u64(m, RDMALOG_A_LSN, 2);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	m = req_new(&self->t, RDMALOG_CMD_TRIM, 0);
	put_u64(m, RDMALOG_A_LSN, 6);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &in));
	ASSERT_EQ(6, in.v[RDMALOG_A_FIRST_LSN]);
	ASSERT_EQ(0, in.v[RDMALOG_A_USED]);
}

TEST_F_TIMEOUT(nl, unknown_command_eopnotsupp, RL_TIMEOUT)
{
	static const int cmds[] = {
		RDMALOG_CMD_UNSPEC, RDMALOG_CMD_EVENT, __RDMALOG_CMD_MAX,
		__RDMALOG_CMD_MAX + 1, 100, 255,
	};
	struct reply r;
	unsigned int i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		req_simple(&self->t, cmds[i], 0, &r);
		ASSERT_EQ(-EOPNOTSUPP, r.err) {
			TH_LOG("command %d: %s", cmds[i], errname(r.err));
		}
		reply_free(&r);
	}
}

TEST_F_TIMEOUT(nl, get_replies_consistent, RL_TIMEOUT)
{
	struct rdmalog_state st;
	struct nl_msg *m;
	struct reply r;
	struct info node, log, status;
	uint8_t a[4] = { 198, 18, 0, 7 };
	int fd, fd2;

	m = req_new(&self->t, RDMALOG_CMD_NODE_SET, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 7);
	put_u64(m, RDMALOG_A_CLUSTER_ID, 0x123456789aULL);
	put(m, RDMALOG_A_ADDR, a, 4);
	put_u16(m, RDMALOG_A_PORT, 9000);
	put_u32(m, RDMALOG_A_ROLE, RDMALOG_ROLE_BACKUP);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	m = req_new(&self->t, RDMALOG_CMD_LOG_SET, 0);
	put_u64(m, RDMALOG_A_CAPACITY, 2 << 20);
	put_u32(m, RDMALOG_A_MAX_RECORD, 128 << 10);
	put_u32(m, RDMALOG_A_DURABILITY, RDMALOG_DURABLE_ALL);
	put_u32(m, RDMALOG_A_COMMIT_TIMEOUT_MS, 1234);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);

	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_NODE_GET, &node));
	ASSERT_EQ(RDMALOG_CMD_NODE_GET, node.cmd);
	ASSERT_TRUE(node.has[RDMALOG_A_NODE_ID]);
	ASSERT_EQ(4, node.len[RDMALOG_A_NODE_ID]);
	ASSERT_EQ(7, node.v[RDMALOG_A_NODE_ID]);
	ASSERT_TRUE(node.has[RDMALOG_A_CLUSTER_ID]);
	ASSERT_EQ(0x123456789aULL, node.v[RDMALOG_A_CLUSTER_ID]);
	ASSERT_TRUE(node.has[RDMALOG_A_ADDR]);
	ASSERT_EQ(4, node.len[RDMALOG_A_ADDR]);
	ASSERT_EQ(0, memcmp(a, node.addr, 4));
	ASSERT_TRUE(node.has[RDMALOG_A_PORT]);
	ASSERT_EQ(2, node.len[RDMALOG_A_PORT]);
	ASSERT_EQ(9000, node.v[RDMALOG_A_PORT]);
	ASSERT_TRUE(node.has[RDMALOG_A_ROLE]);
	ASSERT_EQ(RDMALOG_ROLE_BACKUP, node.v[RDMALOG_A_ROLE]);
	ASSERT_TRUE(node.has[RDMALOG_A_EPOCH]);

	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_LOG_GET, &log));
	ASSERT_EQ(2 << 20, log.v[RDMALOG_A_CAPACITY]);
	ASSERT_EQ(8, log.len[RDMALOG_A_CAPACITY]);
	ASSERT_EQ(128 << 10, log.v[RDMALOG_A_MAX_RECORD]);
	ASSERT_EQ(RDMALOG_DURABLE_ALL, log.v[RDMALOG_A_DURABILITY]);
	ASSERT_EQ(1234, log.v[RDMALOG_A_COMMIT_TIMEOUT_MS]);

	/* down: no log indices */
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &status));
	ASSERT_TRUE(status.has[RDMALOG_A_UP]);
	ASSERT_EQ(0, status.v[RDMALOG_A_UP]);
	ASSERT_EQ(7, status.v[RDMALOG_A_NODE_ID]);
	ASSERT_EQ(0x123456789aULL, status.v[RDMALOG_A_CLUSTER_ID]);
	ASSERT_EQ(RDMALOG_ROLE_BACKUP, status.v[RDMALOG_A_ROLE]);
	ASSERT_EQ(RDMALOG_DURABLE_ALL, status.v[RDMALOG_A_DURABILITY]);
	ASSERT_TRUE(status.has[RDMALOG_A_DURABILITY_EFFECTIVE]);
	ASSERT_TRUE(status.has[RDMALOG_A_STATUS_MSG]);
	ASSERT_TRUE(status.has[RDMALOG_A_OPENERS]);
	/* "indices only while up" */
	EXPECT_FALSE(status.has[RDMALOG_A_FIRST_LSN]);
	EXPECT_FALSE(status.has[RDMALOG_A_COMMIT_LSN]);
	EXPECT_FALSE(status.has[RDMALOG_A_NEXT_LSN]);

	/* up as the primary */
	m = req_new(&self->t, RDMALOG_CMD_NODE_SET, 0);
	put_u32(m, RDMALOG_A_ROLE, RDMALOG_ROLE_PRIMARY);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	ASSERT_EQ(0, do_simple(&self->t, RDMALOG_CMD_UP));
	fd = open(RL_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	fd2 = open(RL_DEV, O_RDONLY);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(100, write(fd, rbuf_fill(), 100));
	ASSERT_EQ(3000, write(fd, rbuf_fill(), 3000));
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &status));
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_NODE_GET, &node));
	ASSERT_EQ(0, rl_get_state(fd, &st));
	ASSERT_EQ(1, status.v[RDMALOG_A_UP]);
	ASSERT_EQ(1, status.v[RDMALOG_A_FIRST_LSN]);
	ASSERT_EQ(3, status.v[RDMALOG_A_COMMIT_LSN]);
	ASSERT_EQ(3, status.v[RDMALOG_A_NEXT_LSN]);
	ASSERT_EQ(rl_rec_bytes(100) + rl_rec_bytes(3000),
		  status.v[RDMALOG_A_USED]);
	ASSERT_EQ(st.used, status.v[RDMALOG_A_USED]);
	ASSERT_EQ(2 << 20, status.v[RDMALOG_A_CAPACITY]);
	ASSERT_EQ(128 << 10, status.v[RDMALOG_A_MAX_RECORD]);
	ASSERT_EQ(2, status.v[RDMALOG_A_OPENERS]);
	ASSERT_EQ(RDMALOG_DURABLE_ALL, status.v[RDMALOG_A_DURABILITY]);
	/* no peers: the node alone is the whole cluster "all" asks for */
	ASSERT_EQ(RDMALOG_DURABLE_ALL,
		  status.v[RDMALOG_A_DURABILITY_EFFECTIVE]);
	ASSERT_FALSE(st.flags & RDMALOG_STATE_DURABILITY_DEGRADED);
	ASSERT_LE(1, status.v[RDMALOG_A_EPOCH]);
	ASSERT_EQ(node.v[RDMALOG_A_EPOCH], status.v[RDMALOG_A_EPOCH]);
	ASSERT_EQ(st.epoch, status.v[RDMALOG_A_EPOCH]);
	ASSERT_EQ(st.node_id, status.v[RDMALOG_A_NODE_ID]);
	close(fd2);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &status));
	ASSERT_EQ(1, status.v[RDMALOG_A_OPENERS]);
	close(fd);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &status));
	ASSERT_EQ(0, status.v[RDMALOG_A_OPENERS]);
}

TEST_F_TIMEOUT(nl, stats_count, RL_TIMEOUT)
{
	struct info a, b;
	struct nl_msg *m;
	struct reply r;
	char buf[256];
	int fd, s;

	ASSERT_EQ(0, do_simple(&self->t, RDMALOG_CMD_UP));
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATS_GET, &a));
	ASSERT_TRUE(a.has[RDMALOG_A_STATS]);
	for (s = RDMALOG_STAT_APPENDS; s <= RDMALOG_STAT_MAX; s++) {
		ASSERT_TRUE(a.stat_has[s]) TH_LOG("counter %d missing", s);
		ASSERT_EQ(8, a.stat_len[s]);
	}
	fd = open(RL_DEV, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(10, write(fd, rbuf_fill(), 10));
	ASSERT_EQ(200, write(fd, rbuf_fill(), 200));
	ASSERT_EQ(3000, write(fd, rbuf_fill(), 3000));
	ASSERT_EQ(10, read(fd, buf, sizeof(buf)));
	ASSERT_EQ(200, read(fd, buf, sizeof(buf)));
	m = req_new(&self->t, RDMALOG_CMD_TRIM, 0);
	put_u64(m, RDMALOG_A_LSN, 3);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	m = req_new(&self->t, RDMALOG_CMD_TRIM, 0);	/* no-op */
	put_u64(m, RDMALOG_A_LSN, 2);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	close(fd);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATS_GET, &b));
#define DELTA(s) (b.stat[RDMALOG_STAT_##s] - a.stat[RDMALOG_STAT_##s])
	ASSERT_EQ(3, DELTA(APPENDS));
	ASSERT_EQ(3210, DELTA(APPEND_BYTES));
	ASSERT_EQ(0, DELTA(APPEND_ERRORS));
	ASSERT_EQ(2, DELTA(READS));
	ASSERT_EQ(210, DELTA(READ_BYTES));
	ASSERT_EQ(0, DELTA(CRC_ERRORS));
	ASSERT_EQ(1, DELTA(TRIMS));
	ASSERT_EQ(2, DELTA(TRIMMED_RECORDS));
	ASSERT_EQ(0, DELTA(WRITER_WAITS));
	ASSERT_EQ(0, DELTA(READER_WAITS));
#undef DELTA
}

/* ------------------------------------------------------------------ */
/* Events */

struct mon {
	struct nl_sock *sk;
	int fd;
};

static int mon_open(struct mon *mo)
{
	int grp;

	memset(mo, 0, sizeof(*mo));
	mo->sk = nl_socket_alloc();
	if (!mo->sk || genl_connect(mo->sk))
		return -1;
	grp = genl_ctrl_resolve_grp(mo->sk, RDMALOG_GENL_NAME,
				    RDMALOG_GENL_MCGRP_EVENTS);
	if (grp < 0)
		return -1;
	nl_socket_disable_seq_check(mo->sk);
	if (nl_socket_add_membership(mo->sk, grp))
		return -1;
	mo->fd = nl_socket_get_fd(mo->sk);
	return 0;
}

/* Next event within @ms: 0 and @in filled, or -1. */
static int mon_next(struct mon *mo, struct info *in, int ms)
{
	static uint8_t buf[1 << 16];
	static int have, pos;
	struct nlmsghdr *h;
	struct pollfd pfd;
	ssize_t n;

	for (;;) {
		while (pos < have) {
			h = (struct nlmsghdr *)(buf + pos);
			if (!NLMSG_OK(h, have - pos)) {
				have = pos = 0;
				break;
			}
			pos += NLMSG_ALIGN(h->nlmsg_len);
			if (h->nlmsg_type < NLMSG_MIN_TYPE)
				continue;
			parse_info(h, in);
			if (in->cmd == RDMALOG_CMD_EVENT)
				return 0;
		}
		pfd.fd = mo->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, ms) != 1)
			return -1;
		n = recv(mo->fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return -1;
		have = (int)n;
		pos = 0;
	}
}

static void mon_close(struct mon *mo)
{
	if (mo->sk)
		nl_socket_free(mo->sk);
}

static const char *event_str(uint64_t ev)
{
	static const char *const names[] = {
		"UNSPEC", "UP", "DOWN", "NODE_CHANGED", "LOG_CHANGED",
		"PEER_ADDED", "PEER_REMOVED", "PEER_STATE", "TRIMMED",
	};

	return ev < sizeof(names) / sizeof(names[0]) ? names[ev] : "?";
}

#define EXPECT_EVENT(mo, in, ev) do {					\
	ASSERT_EQ(0, mon_next(mo, in, 10000)) {				\
		TH_LOG("no %s event", event_str(ev));			\
	}								\
	ASSERT_TRUE((in)->has[RDMALOG_A_EVENT]);			\
	ASSERT_EQ((ev), (in)->v[RDMALOG_A_EVENT]) {			\
		TH_LOG("expected %s, got %s", event_str(ev),		\
		       event_str((in)->v[RDMALOG_A_EVENT]));		\
	}								\
	ASSERT_TRUE((in)->has[RDMALOG_A_NODE_ID]);			\
} while (0)

TEST_F_TIMEOUT(nl, events, RL_TIMEOUT)
{
	struct mon mo;
	struct info in;
	struct nl_msg *m;
	struct reply r;
	int fd, i;

	ASSERT_EQ(0, mon_open(&mo));

	m = req_new(&self->t, RDMALOG_CMD_NODE_SET, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 4);
	put_u64(m, RDMALOG_A_CLUSTER_ID, 0x4444);
	put_ip4(m, RDMALOG_A_ADDR, "198.18.0.4");
	put_u16(m, RDMALOG_A_PORT, 7474);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	EXPECT_EVENT(&mo, &in, RDMALOG_EVENT_NODE_CHANGED);
	ASSERT_EQ(4, in.v[RDMALOG_A_NODE_ID]);
	ASSERT_TRUE(in.has[RDMALOG_A_ROLE]);
	/* events never carry the cluster id or an address */
	ASSERT_FALSE(in.has[RDMALOG_A_CLUSTER_ID]);
	ASSERT_FALSE(in.has[RDMALOG_A_ADDR]);
	ASSERT_FALSE(in.has[RDMALOG_A_PORT]);

	m = req_new(&self->t, RDMALOG_CMD_LOG_SET, 0);
	put_u64(m, RDMALOG_A_CAPACITY, 2 << 20);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	EXPECT_EVENT(&mo, &in, RDMALOG_EVENT_LOG_CHANGED);
	ASSERT_EQ(2 << 20, in.v[RDMALOG_A_CAPACITY]);
	ASSERT_EQ(64 << 10, in.v[RDMALOG_A_MAX_RECORD]);
	ASSERT_TRUE(in.has[RDMALOG_A_DURABILITY]);
	ASSERT_TRUE(in.has[RDMALOG_A_COMMIT_TIMEOUT_MS]);

	m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 5);
	put_ip4(m, RDMALOG_A_ADDR, "198.18.0.5");
	put_u16(m, RDMALOG_A_PORT, 7475);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	EXPECT_EVENT(&mo, &in, RDMALOG_EVENT_PEER_ADDED);
	ASSERT_TRUE(in.has[RDMALOG_A_PEER]);
	ASSERT_EQ(5, in.peer.id);
	ASSERT_TRUE(in.peer.has_state);
	ASSERT_FALSE(in.peer.has_addr);
	ASSERT_FALSE(in.peer.has_port);

	m = req_new(&self->t, RDMALOG_CMD_PEER_DEL, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 5);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	EXPECT_EVENT(&mo, &in, RDMALOG_EVENT_PEER_REMOVED);
	ASSERT_TRUE(in.has[RDMALOG_A_PEER]);
	ASSERT_EQ(5, in.peer.id);

	ASSERT_EQ(0, do_simple(&self->t, RDMALOG_CMD_UP));
	EXPECT_EVENT(&mo, &in, RDMALOG_EVENT_UP);
	ASSERT_EQ(4, in.v[RDMALOG_A_NODE_ID]);

	fd = open(RL_DEV, O_WRONLY);
	ASSERT_LE(0, fd);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(5, write(fd, "hello", 5));
	close(fd);
	/* a trim that discards nothing emits nothing; one that does, does */
	m = req_new(&self->t, RDMALOG_CMD_TRIM, 0);
	put_u64(m, RDMALOG_A_LSN, 1);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	m = req_new(&self->t, RDMALOG_CMD_TRIM, 0);
	put_u64(m, RDMALOG_A_LSN, 3);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	EXPECT_EVENT(&mo, &in, RDMALOG_EVENT_TRIMMED);
	ASSERT_TRUE(in.has[RDMALOG_A_FIRST_LSN]);
	ASSERT_EQ(3, in.v[RDMALOG_A_FIRST_LSN]);

	/* failed requests emit nothing: the next event is DOWN's */
	m = req_new(&self->t, RDMALOG_CMD_LOG_SET, 0);
	put_u64(m, RDMALOG_A_CAPACITY, 4 << 20);	/* busy */
	req_send(&self->t, m, &r);
	ASSERT_EQ(-EBUSY, r.err);
	m = req_new(&self->t, RDMALOG_CMD_NODE_SET, 0);
	put_u32(m, RDMALOG_A_ROLE, 9);
	req_send(&self->t, m, &r);
	ASSERT_EQ(-EINVAL, r.err);
	ASSERT_EQ(-EALREADY, do_simple(&self->t, RDMALOG_CMD_UP));

	ASSERT_EQ(0, do_simple(&self->t, RDMALOG_CMD_DOWN));
	EXPECT_EVENT(&mo, &in, RDMALOG_EVENT_DOWN);
	ASSERT_EQ(4, in.v[RDMALOG_A_NODE_ID]);
	ASSERT_EQ(-1, mon_next(&mo, &in, 500)) {
		TH_LOG("unexpected event %s",
		       event_str(in.v[RDMALOG_A_EVENT]));
	}
	mon_close(&mo);
}

/* ------------------------------------------------------------------ */
/* Privileges */

/*
 * In a child without CAP_NET_ADMIN (mode 0: uid/gid 65534 and no
 * capabilities; mode 1: root without CAP_NET_ADMIN) every mutating
 * command fails with -EPERM and every GET works. Returns the number of
 * failures; reasons go to stderr.
 */
/*
 * Run @call in a child that dropped to uid 65534 (@mode 0) or only lost
 * CAP_NET_ADMIN (@mode 1); it must exit 0 (its number of failures).
 */
#define RUN_DROPPED(mode, call)						\
	do {								\
		pid_t __pid;						\
		int __st;						\
									\
		fflush(stderr);						\
		__pid = fork();						\
		ASSERT_LE(0, __pid);					\
		if (__pid == 0) {					\
			if ((mode) == 0 ? rl_drop_to_nobody() :		\
					  rl_drop_net_admin()) {		\
				fprintf(stderr,				\
					"# cannot drop privileges\n");	\
				_exit(100);				\
			}						\
			_exit(call);					\
		}							\
		ASSERT_EQ(__pid, rl_waitpid_ms(__pid, &__st, 60000));	\
		ASSERT_TRUE(WIFEXITED(__st) && WEXITSTATUS(__st) == 0) {	\
			TH_LOG("mode %d (%s): %s failures", (mode),	\
			       (mode) ? "root without CAP_NET_ADMIN" :	\
					"uid 65534, no capabilities",	\
			       rl_status_str(__st));			\
		}							\
	} while (0)

static int unprivileged_checks(void)
{
	static const int getters[] = {
		RDMALOG_CMD_NODE_GET, RDMALOG_CMD_LOG_GET,
		RDMALOG_CMD_STATUS_GET, RDMALOG_CMD_STATS_GET,
	};
	static const int mutating[] = {
		RDMALOG_CMD_NODE_SET, RDMALOG_CMD_PEER_ADD,
		RDMALOG_CMD_PEER_DEL, RDMALOG_CMD_LOG_SET, RDMALOG_CMD_UP,
		RDMALOG_CMD_DOWN, RDMALOG_CMD_TRIM, RDMALOG_CMD_PROMOTE,
		RDMALOG_CMD_SWITCHOVER,
	};
	struct peer peers[32];
	struct nl_msg *m;
	struct reply r;
	struct info in;
	struct nlt t;
	int fails = 0, cmd, err;
	unsigned int i;

	if (nlt_open(&t)) {
		fprintf(stderr, "# unprivileged: cannot open the family\n");
		return 1;
	}
	for (i = 0; i < sizeof(mutating) / sizeof(mutating[0]); i++) {
		cmd = mutating[i];
		/* a request that would work for root */
		m = req_new(&t, cmd, 0);
		switch (cmd) {
		case RDMALOG_CMD_NODE_SET:
			put_u32(m, RDMALOG_A_ROLE, RDMALOG_ROLE_PRIMARY);
			break;
		case RDMALOG_CMD_PEER_ADD:
			put_u32(m, RDMALOG_A_NODE_ID, 12);
			put_ip4(m, RDMALOG_A_ADDR, "198.18.0.12");
			put_u16(m, RDMALOG_A_PORT, 7471);
			break;
		case RDMALOG_CMD_PEER_DEL:
		case RDMALOG_CMD_SWITCHOVER:
			put_u32(m, RDMALOG_A_NODE_ID, 2);
			break;
		case RDMALOG_CMD_LOG_SET:
			put_u32(m, RDMALOG_A_DURABILITY, RDMALOG_DURABLE_ALL);
			break;
		case RDMALOG_CMD_TRIM:
			put_u64(m, RDMALOG_A_LSN, 2);
			break;
		}
		err = req_send(&t, m, &r);
		reply_free(&r);
		if (err != -EPERM) {
			fprintf(stderr, "# unprivileged: command %d: %s, "
				"expected EPERM\n", cmd, errname(err));
			fails++;
		}
	}
	for (i = 0; i < sizeof(getters) / sizeof(getters[0]); i++) {
		err = get(&t, getters[i], &in);
		if (err) {
			fprintf(stderr, "# unprivileged: GET command %d: %s\n",
				getters[i], errname(err));
			fails++;
		}
		if (getters[i] == RDMALOG_CMD_NODE_GET &&
		    in.v[RDMALOG_A_NODE_ID] != 1) {
			fprintf(stderr, "# unprivileged: NODE_GET id %llu\n",
				(unsigned long long)in.v[RDMALOG_A_NODE_ID]);
			fails++;
		}
	}
	err = peer_dump(&t, peers, 32);
	if (err != 1) {
		fprintf(stderr, "# unprivileged: PEER_GET dump: %d\n", err);
		fails++;
	}
	m = req_new(&t, RDMALOG_CMD_PEER_GET, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 2);
	err = req_send(&t, m, &r);
	reply_free(&r);
	if (err) {
		fprintf(stderr, "# unprivileged: PEER_GET 2: %s\n",
			errname(err));
		fails++;
	}
	nlt_close(&t);
	return fails;
}

TEST_F_TIMEOUT(nl, mutating_commands_need_cap_net_admin, RL_TIMEOUT)
{
	struct peer peers[4];
	struct reply r;
	struct info in;
	int mode, fd, err;

	err = up_with_lost_peer(&self->t, &r);
	ASSERT_EQ(0, err) {
		TH_LOG("up with peer 2: %s (extack: \"%s\")", errname(err),
		       r.msg);
	}
	fd = open(RL_DEV, O_WRONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(3, write(fd, "abc", 3));
	ASSERT_EQ(3, write(fd, "def", 3));
	close(fd);

	for (mode = 0; mode < 2; mode++)
		RUN_DROPPED(mode, unprivileged_checks());
	/* nothing changed */
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &in));
	ASSERT_EQ(1, in.v[RDMALOG_A_UP]);
	ASSERT_EQ(1, in.v[RDMALOG_A_FIRST_LSN]);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_LOG_GET, &in));
	ASSERT_EQ(RDMALOG_DURABLE_ASYNC, in.v[RDMALOG_A_DURABILITY]);
	ASSERT_EQ(1, peer_dump(&self->t, peers, 4));
	ASSERT_EQ(2, peers[0].id);
}

/*
 * The cluster id and the addresses (the node's listen address and port,
 * every peer's) are withheld from a caller without CAP_NET_ADMIN; the
 * rest of NODE_GET, STATUS_GET and PEER_GET is not. hidden_checks() expect
 * node 1, primary, cluster HIDDEN_CLUSTER, listening on 198.18.0.1 port
 * 7471, with peers 2 (198.18.0.2 port 7472) and 3 (fd00::3 port 7473).
 */
#define HIDDEN_CLUSTER	0x5eed0c1a55e5ULL

/* One peer as @priv should see it; "" when it does, else the mismatch. */
static const char *hidden_peer_check(const struct peer *p, bool priv)
{
	static const uint8_t a2[4] = { 198, 18, 0, 2 };
	static const uint8_t a3[16] = { 0xfd, [15] = 3 };

	if (!p->has_id || (p->id != 2 && p->id != 3))
		return "no known NODE_ID";
	if (!p->has_state)
		return "no STATE";
	if (!priv)
		return p->has_addr ? "ADDR shown" :
		       p->has_port ? "PORT shown" : "";
	if (!p->has_addr || !p->has_port)
		return "ADDR or PORT missing";
	if (p->id == 2 && (p->addr_len != 4 || memcmp(p->addr, a2, 4) ||
			   p->port != 7472))
		return "wrong ADDR or PORT";
	if (p->id == 3 && (p->addr_len != 16 || memcmp(p->addr, a3, 16) ||
			   p->port != 7473))
		return "wrong ADDR or PORT";
	return "";
}

/* NODE_GET or STATUS_GET's node attributes as @priv should see them. */
static const char *hidden_node_check(const struct info *in, bool priv)
{
	static const uint8_t a1[4] = { 198, 18, 0, 1 };

	if (!in->has[RDMALOG_A_NODE_ID] || in->v[RDMALOG_A_NODE_ID] != 1)
		return "NODE_ID missing or wrong";
	if (!in->has[RDMALOG_A_ROLE] ||
	    in->v[RDMALOG_A_ROLE] != RDMALOG_ROLE_PRIMARY)
		return "ROLE missing or wrong";
	if (!in->has[RDMALOG_A_EPOCH])
		return "EPOCH missing";
	if (!priv)
		return in->has[RDMALOG_A_CLUSTER_ID] ? "CLUSTER_ID shown" :
		       in->has[RDMALOG_A_ADDR] ? "ADDR shown" :
		       in->has[RDMALOG_A_PORT] ? "PORT shown" : "";
	if (!in->has[RDMALOG_A_CLUSTER_ID] ||
	    in->v[RDMALOG_A_CLUSTER_ID] != HIDDEN_CLUSTER)
		return "CLUSTER_ID missing or wrong";
	if (in->cmd == RDMALOG_CMD_STATUS_GET)
		return "";	/* STATUS_GET has no address of its own */
	if (!in->has[RDMALOG_A_ADDR] || in->len[RDMALOG_A_ADDR] != 4 ||
	    memcmp(in->addr, a1, 4))
		return "ADDR missing or wrong";
	if (!in->has[RDMALOG_A_PORT] ||
	    in->v[RDMALOG_A_PORT] != RDMALOG_DEFAULT_PORT)
		return "PORT missing or wrong";
	return "";
}

/*
 * NODE_GET, STATUS_GET, PEER_GET (dump, and peer 2 alone) as this process
 * is, checked against what @priv may see. Returns the number of failures;
 * reasons go to stderr, after @who.
 */
static int hidden_checks(const char *who, bool priv)
{
	struct peer peers[32];
	struct nl_msg *m;
	struct reply r;
	struct info in;
	struct nlt t;
	char what[64];
	int fails = 0, err, n, i;

#define HIDDEN_FAIL(fmt, ...) do {					\
	fprintf(stderr, "# %s: " fmt "\n", who, ##__VA_ARGS__);		\
	fails++;							\
} while (0)
/* @why: "" or what is wrong with @what */
#define HIDDEN_CHECK(what, why) do {					\
	const char *__why = (why);					\
									\
	if (__why[0])							\
		HIDDEN_FAIL("%s: %s", what, __why);			\
} while (0)

	if (nlt_open(&t)) {
		fprintf(stderr, "# %s: cannot open the family\n", who);
		return 1;
	}
	err = get(&t, RDMALOG_CMD_NODE_GET, &in);
	if (err)
		HIDDEN_FAIL("NODE_GET: %s", errname(err));
	else
		HIDDEN_CHECK("NODE_GET", hidden_node_check(&in, priv));

	err = get(&t, RDMALOG_CMD_STATUS_GET, &in);
	if (err) {
		HIDDEN_FAIL("STATUS_GET: %s", errname(err));
	} else {
		HIDDEN_CHECK("STATUS_GET", hidden_node_check(&in, priv));
		if (in.has[RDMALOG_A_ADDR] || in.has[RDMALOG_A_PORT])
			HIDDEN_FAIL("STATUS_GET: ADDR or PORT at the top");
		if (in.npeers != 2)
			HIDDEN_FAIL("STATUS_GET: %d peers", in.npeers);
		for (i = 0; i < in.npeers; i++) {
			snprintf(what, sizeof(what), "STATUS_GET: peer %u",
				 in.peers[i].id);
			HIDDEN_CHECK(what, hidden_peer_check(&in.peers[i],
							     priv));
		}
	}

	n = peer_dump(&t, peers, 32);
	if (n != 2)
		HIDDEN_FAIL("PEER_GET dump: %d", n);
	for (i = 0; i < n && i < 32; i++) {
		snprintf(what, sizeof(what), "PEER_GET dump: peer %u",
			 peers[i].id);
		HIDDEN_CHECK(what, hidden_peer_check(&peers[i], priv));
	}

	m = req_new(&t, RDMALOG_CMD_PEER_GET, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 2);
	err = req_send(&t, m, &r);
	if (err || r.n != 1) {
		HIDDEN_FAIL("PEER_GET 2: %s, %d replies", errname(err), r.n);
	} else {
		parse_info(r.m[0], &in);
		if (!in.has[RDMALOG_A_PEER])
			HIDDEN_FAIL("PEER_GET 2: no PEER");
		else
			HIDDEN_CHECK("PEER_GET 2",
				     hidden_peer_check(&in.peer, priv));
	}
	reply_free(&r);
	nlt_close(&t);
	return fails;
#undef HIDDEN_CHECK
#undef HIDDEN_FAIL
}

TEST_F_TIMEOUT(nl, cluster_id_and_addresses_hidden_without_cap_net_admin,
	       RL_TIMEOUT)
{
	static const uint8_t a1[4] = { 198, 18, 0, 1 };
	static const uint8_t a3[16] = { 0xfd, [15] = 3 };
	struct nl_msg *m;
	struct reply r;
	int mode;

	m = req_new(&self->t, RDMALOG_CMD_NODE_SET, 0);
	put_u64(m, RDMALOG_A_CLUSTER_ID, HIDDEN_CLUSTER);
	put(m, RDMALOG_A_ADDR, a1, 4);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 2);
	put_ip4(m, RDMALOG_A_ADDR, "198.18.0.2");
	put_u16(m, RDMALOG_A_PORT, 7472);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 3);
	put(m, RDMALOG_A_ADDR, a3, 16);
	put_u16(m, RDMALOG_A_PORT, 7473);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);

	/* root sees everything */
	ASSERT_EQ(0, hidden_checks("root", true));

	for (mode = 0; mode < 2; mode++)
		RUN_DROPPED(mode, hidden_checks(mode ? "root without CAP_NET_ADMIN" :
						"uid 65534", false));
}

/* ------------------------------------------------------------------ */
/* A freshly loaded module */

TEST_F_TIMEOUT(fresh, up_without_node_id_einval, RL_TIMEOUT)
{
	struct reply r;
	struct info in;

	req_simple(&self->t, RDMALOG_CMD_UP, 0, &r);
	ASSERT_NLERR(&r, EINVAL);
	TH_LOG("UP without a node id: \"%s\"", r.msg);
	reply_free(&r);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &in));
	ASSERT_EQ(0, in.v[RDMALOG_A_UP]);
	ASSERT_SYSERR(open(RL_DEV, O_RDONLY), ENETDOWN);
}

TEST_F_TIMEOUT(fresh, defaults, RL_TIMEOUT)
{
	struct info in;
	int s;

	/* "attributes not set yet are left out" */
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_NODE_GET, &in));
	EXPECT_FALSE(in.has[RDMALOG_A_NODE_ID]) {
		TH_LOG("NODE_ID %llu on a fresh module",
		       (unsigned long long)in.v[RDMALOG_A_NODE_ID]);
	}
	EXPECT_FALSE(in.has[RDMALOG_A_CLUSTER_ID]) {
		TH_LOG("CLUSTER_ID %llu on a fresh module",
		       (unsigned long long)in.v[RDMALOG_A_CLUSTER_ID]);
	}
	EXPECT_FALSE(in.has[RDMALOG_A_ADDR]) TH_LOG("ADDR on a fresh module");
	/* anyone may lead, and a lost primary is replaced on its own */
	EXPECT_EQ(RDMALOG_FAILOVER_AUTO, in.v[RDMALOG_A_FAILOVER]);
	EXPECT_EQ(0, in.v[RDMALOG_A_PRIORITY]);
	EXPECT_EQ(1, in.v[RDMALOG_A_LEAD]);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_LOG_GET, &in));
	EXPECT_EQ(RDMALOG_DEFAULT_CAPACITY, in.v[RDMALOG_A_CAPACITY]);
	EXPECT_EQ(RDMALOG_DEFAULT_MAX_RECORD, in.v[RDMALOG_A_MAX_RECORD]);
	EXPECT_EQ(RDMALOG_DURABLE_QUORUM, in.v[RDMALOG_A_DURABILITY]);
	EXPECT_EQ(RDMALOG_DEFAULT_COMMIT_TIMEOUT_MS,
		  in.v[RDMALOG_A_COMMIT_TIMEOUT_MS]);
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATS_GET, &in));
	for (s = RDMALOG_STAT_APPENDS; s <= RDMALOG_STAT_MAX; s++) {
		EXPECT_TRUE(in.stat_has[s]) TH_LOG("counter %d missing", s);
		EXPECT_EQ(0, in.stat[s]) TH_LOG("counter %d", s);
	}
}

/*
 * The election state of a freshly loaded module: no vote, and it may vote
 * while it has no peer; peers it has not heard from (here: never, its log
 * is down) must be heard first, a majority of them; the attributes are
 * read-only.
 */
TEST_F_TIMEOUT(fresh, election_state, RL_TIMEOUT)
{
	static const struct {
		uint32_t peers, needed;
	} steps[] = { { 0, 0 }, { 1, 1 }, { 2, 2 }, { 3, 2 }, { 4, 3 } };
	struct nl_msg *m;
	struct reply r;
	struct info in;
	uint32_t off;
	unsigned int i;
	char addr[32];

	m = req_new(&self->t, RDMALOG_CMD_NODE_SET, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 1);
	req_send(&self->t, m, &r);
	ASSERT_NLOK(&r);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (i) {
			m = req_new(&self->t, RDMALOG_CMD_PEER_ADD, 0);
			put_u32(m, RDMALOG_A_NODE_ID, i + 1);
			snprintf(addr, sizeof(addr), "198.18.0.%u", i + 1);
			put_ip4(m, RDMALOG_A_ADDR, addr);
			put_u16(m, RDMALOG_A_PORT, 7471);
			req_send(&self->t, m, &r);
			ASSERT_NLOK(&r);
		}
		ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &in));
		ASSERT_TRUE(in.has[RDMALOG_A_ELECT_EPOCH]);
		EXPECT_EQ(0, in.v[RDMALOG_A_ELECT_EPOCH]);
		EXPECT_EQ(0, in.v[RDMALOG_A_VOTE_EPOCH]);
		EXPECT_FALSE(in.has[RDMALOG_A_VOTE_FOR]);
		EXPECT_EQ(0, in.v[RDMALOG_A_LEARN_HEARD]);
		EXPECT_EQ(steps[i].needed, in.v[RDMALOG_A_LEARN_NEEDED])
			TH_LOG("%u peers", steps[i].peers);
		EXPECT_EQ(steps[i].peers == 0, in.v[RDMALOG_A_LEARNED])
			TH_LOG("%u peers", steps[i].peers);
	}
	/* the peers go: nobody left to learn from, it may vote again */
	for (i = 1; i < sizeof(steps) / sizeof(steps[0]); i++) {
		m = req_new(&self->t, RDMALOG_CMD_PEER_DEL, 0);
		put_u32(m, RDMALOG_A_NODE_ID, i + 1);
		req_send(&self->t, m, &r);
		ASSERT_NLOK(&r);
	}
	ASSERT_EQ(0, get(&self->t, RDMALOG_CMD_STATUS_GET, &in));
	EXPECT_EQ(1, in.v[RDMALOG_A_LEARNED]);
	EXPECT_EQ(0, in.v[RDMALOG_A_LEARN_NEEDED]);
	/* read-only: a request carrying one is refused at it */
	m = req_new(&self->t, RDMALOG_CMD_NODE_SET, 0);
	put_u32(m, RDMALOG_A_NODE_ID, 1);
	off = put_u8(m, RDMALOG_A_LEARNED, 1);
	req_send(&self->t, m, &r);
	EXPECT_NLERR_AT(&r, EINVAL, off);
	reply_free(&r);
}

TEST_HARNESS_MAIN
