// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalogctl - netlink plumbing: socket set-up, family resolution,
 * request/ACK/dump handling with extended ACK (extack) messages, reply
 * parsing and the event monitor loop.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <netlink/netlink.h>
#include <netlink/genl/genl.h>
#include <netlink/genl/ctrl.h>

#include "rdmalogctl.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

static int open_socket(struct rl_nl *nl, bool quiet)
{
	int one = 1, fd, err;

	memset(nl, 0, sizeof(*nl));
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		fprintf(stderr, PROG ": out of memory\n");
		return EXIT_KERNEL;
	}
	err = genl_connect(nl->sk);
	if (err < 0) {
		fprintf(stderr, PROG ": cannot open a generic netlink socket: %s\n",
			nl_geterror(err));
		rl_nl_close(nl);
		return EXIT_KERNEL;
	}
	fd = nl_socket_get_fd(nl->sk);
	/* Error messages from the kernel, without our request echoed back. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	nl_socket_enable_msg_peek(nl->sk);

	err = genl_ctrl_resolve(nl->sk, RDMALOG_GENL_NAME);
	if (err == -NLE_OBJ_NOTFOUND || err == -NLE_NOATTR) {
		if (!quiet)
			fprintf(stderr,
				PROG ": rdmalog module not loaded (genl family '%s' not found)\n",
				RDMALOG_GENL_NAME);
		rl_nl_close(nl);
		return EXIT_NOMOD;
	}
	if (err < 0) {
		fprintf(stderr, PROG ": cannot resolve genl family '%s': %s\n",
			RDMALOG_GENL_NAME, nl_geterror(err));
		rl_nl_close(nl);
		return EXIT_KERNEL;
	}
	nl->family = err;
	return EXIT_OK;
}

int rl_nl_open(struct rl_nl *nl)
{
	return open_socket(nl, false);
}

int rl_nl_open_quiet(struct rl_nl *nl)
{
	return open_socket(nl, true);
}

void rl_nl_close(struct rl_nl *nl)
{
	if (nl->sk)
		nl_socket_free(nl->sk);
	nl->sk = NULL;
}

struct nl_msg *rl_nl_msg(struct rl_nl *nl, uint8_t cmd, bool dump)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
			 dump ? NLM_F_DUMP : 0, cmd, RDMALOG_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* The CLI keyword for an attribute we send, for error messages. */
static const char *attr_keyword(int type)
{
	switch (type) {
	case RDMALOG_A_NODE_ID:
		return "id";
	case RDMALOG_A_CLUSTER_ID:
		return "cluster";
	case RDMALOG_A_ADDR:
		return "address";
	case RDMALOG_A_PORT:
		return "port";
	case RDMALOG_A_ROLE:
		return "role";
	case RDMALOG_A_CAPACITY:
		return "capacity";
	case RDMALOG_A_MAX_RECORD:
		return "max-record";
	case RDMALOG_A_DURABILITY:
		return "durability";
	case RDMALOG_A_COMMIT_TIMEOUT_MS:
		return "commit-timeout";
	case RDMALOG_A_LSN:
		return "lsn";
	case RDMALOG_A_HEARTBEAT_MS:
		return "heartbeat";
	case RDMALOG_A_PEER_TIMEOUT_MS:
		return "peer-timeout";
	case RDMALOG_A_FAILOVER:
		return "failover";
	case RDMALOG_A_PRIORITY:
		return "priority";
	case RDMALOG_A_LEAD:
		return "lead";
	default:
		return NULL;
	}
}

/* Name the attribute of @sent that starts at byte @offs of the message. */
static void name_attr_at(struct rl_nl *nl, struct nl_msg *sent, uint32_t offs)
{
	struct nlmsghdr *nlh = nlmsg_hdr(sent);
	struct nlattr *a;
	const char *kw;
	int rem;

	nla_for_each_attr(a, genlmsg_attrdata(nlmsg_data(nlh), 0),
			  genlmsg_attrlen(nlmsg_data(nlh), 0), rem) {
		uint32_t start = (uint32_t)((char *)a - (char *)nlh);

		if (offs >= start && offs < start + NLA_ALIGN(a->nla_len)) {
			kw = attr_keyword(nla_type(a));
			if (kw)
				snprintf(nl->errattr, sizeof(nl->errattr), "%s", kw);
			else
				snprintf(nl->errattr, sizeof(nl->errattr),
					 "attribute %d", nla_type(a));
			return;
		}
	}
}

struct req {
	struct rl_nl *nl;
	struct nl_msg *sent;
	rl_reply_cb cb;
	void *arg;
	bool done;
	int err;		/* negative errno */
};

/* Extended ACK TLVs that follow @off bytes of the payload of @nlh. */
static void parse_extack(struct req *rq, const struct nlmsghdr *nlh, size_t off)
{
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	struct rl_nl *nl = rq->nl;
	const char *kw;
	size_t len;

	off = NLMSG_ALIGN(off);
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS) ||
	    nlh->nlmsg_len < NLMSG_HDRLEN + off)
		return;
	len = nlh->nlmsg_len - NLMSG_HDRLEN - off;
	if (nla_parse(tb, NLMSGERR_ATTR_MAX,
		      (struct nlattr *)((char *)NLMSG_DATA(nlh) + off), (int)len,
		      NULL) < 0)
		return;
	if (tb[NLMSGERR_ATTR_MSG]) {
		len = nla_len(tb[NLMSGERR_ATTR_MSG]);
		if (len >= sizeof(nl->extack))
			len = sizeof(nl->extack) - 1;
		memcpy(nl->extack, nla_data(tb[NLMSGERR_ATTR_MSG]), len);
		nl->extack[len] = '\0';
		/* Drop a trailing newline some messages carry. */
		len = strlen(nl->extack);
		while (len && nl->extack[len - 1] == '\n')
			nl->extack[--len] = '\0';
	}
	if (tb[NLMSGERR_ATTR_OFFS] && nla_len(tb[NLMSGERR_ATTR_OFFS]) >= 4 &&
	    rq->sent)
		name_attr_at(nl, rq->sent, nla_get_u32(tb[NLMSGERR_ATTR_OFFS]));
	if (tb[NLMSGERR_ATTR_MISS_TYPE] &&
	    nla_len(tb[NLMSGERR_ATTR_MISS_TYPE]) >= 4) {
		int type = (int)nla_get_u32(tb[NLMSGERR_ATTR_MISS_TYPE]);

		kw = attr_keyword(type);
		if (kw)
			snprintf(nl->errattr, sizeof(nl->errattr), "missing %s", kw);
		else
			snprintf(nl->errattr, sizeof(nl->errattr),
				 "missing attribute %d", type);
	}
}

static int valid_cb(struct nl_msg *msg, void *arg)
{
	struct req *rq = arg;
	int err;

	if (!rq->cb)
		return NL_OK;
	err = rq->cb(nlmsg_hdr(msg), rq->arg);
	if (err < 0) {
		rq->err = err;
		return NL_STOP;
	}
	return NL_OK;
}

static int ack_cb(struct nl_msg *msg, void *arg)
{
	struct req *rq = arg;

	rq->done = true;
	/* A successful request may still carry a warning. */
	parse_extack(rq, nlmsg_hdr(msg), sizeof(struct nlmsgerr));
	if (rq->nl->extack[0])
		fprintf(stderr, PROG ": %s: warning: %s\n",
			rq->nl->what ? rq->nl->what : "request", rq->nl->extack);
	return NL_STOP;
}

static int finish_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct req *rq = arg;
	int err;

	rq->done = true;
	/* A dump that failed midway ends with the error in NLMSG_DONE. */
	if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(int)) {
		memcpy(&err, NLMSG_DATA(nlh), sizeof(err));
		if (err < 0) {
			rq->err = err;
			parse_extack(rq, nlh, sizeof(int));
		}
	}
	return NL_STOP;
}

static int error_cb(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	/* libnl hands us the payload of the NLMSG_ERROR message. */
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct req *rq = arg;
	size_t off = sizeof(*e);

	(void)nla;
	rq->err = e->error < 0 ? e->error : -EPROTO;
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED) &&
	    e->msg.nlmsg_len >= NLMSG_HDRLEN)
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	parse_extack(rq, nlh, off);
	return NL_STOP;
}

int rl_nl_request(struct rl_nl *nl, struct nl_msg *msg, rl_reply_cb cb,
		  void *arg)
{
	struct req rq = { .nl = nl, .sent = msg, .cb = cb, .arg = arg };
	struct nl_cb *nlcb;
	int r;

	nl->err = 0;
	nl->extack[0] = '\0';
	nl->errattr[0] = '\0';

	nlcb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!nlcb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(nlcb, NL_CB_VALID, NL_CB_CUSTOM, valid_cb, &rq);
	nl_cb_set(nlcb, NL_CB_ACK, NL_CB_CUSTOM, ack_cb, &rq);
	nl_cb_set(nlcb, NL_CB_FINISH, NL_CB_CUSTOM, finish_cb, &rq);
	nl_cb_err(nlcb, NL_CB_CUSTOM, error_cb, &rq);

	r = nl_send_auto(nl->sk, msg);
	if (r < 0) {
		snprintf(nl->extack, sizeof(nl->extack), "cannot send: %s",
			 nl_geterror(r));
		rq.err = -EIO;
	}
	while (!rq.done && !rq.err) {
		r = nl_recvmsgs(nl->sk, nlcb);
		if (r < 0 && !rq.err) {
			snprintf(nl->extack, sizeof(nl->extack),
				 "netlink receive failed: %s", nl_geterror(r));
			rq.err = -EIO;
		}
	}
	nl_cb_put(nlcb);
	nlmsg_free(msg);
	nl->err = -rq.err;
	return rq.err;
}

int rl_nl_report(struct rl_nl *nl, const char *what, int err)
{
	int e = err < 0 ? -err : err;

	fprintf(stderr, PROG ": %s: ", what);
	if (nl && nl->extack[0])
		fprintf(stderr, "%s ", nl->extack);
	if (nl && nl->errattr[0])
		fprintf(stderr, "[%s] ", nl->errattr);
	if (nl && (nl->extack[0] || nl->errattr[0]))
		fprintf(stderr, "(%s)\n", strerror(e));
	else
		fprintf(stderr, "%s\n", strerror(e));
	if (e == EPERM)
		fprintf(stderr, PROG ": hint: changing rdmalog's configuration needs CAP_NET_ADMIN (run as root)\n");
	return EXIT_KERNEL;
}

/* ------------------------------------------------------------------ */
/* Reply parsing. */

static bool get_int(const struct nlattr *a, void *v, int size)
{
	if (nla_len(a) < size)
		return false;
	memcpy(v, nla_data(a), size);
	return true;
}

static bool get_addr(const struct nlattr *a, struct rl_addr *addr)
{
	int len = nla_len(a);

	memset(addr, 0, sizeof(*addr));
	if (len != 4 && len != 16)
		return false;
	addr->len = (uint8_t)len;
	memcpy(addr->a, nla_data(a), len);
	return true;
}

static bool get_str(const struct nlattr *a, char *buf, size_t size)
{
	size_t len = (size_t)nla_len(a);

	if (len >= size)
		len = size - 1;
	memcpy(buf, nla_data(a), len);
	buf[len] = '\0';
	return true;
}

static void parse_peer(const struct nlattr *nest, struct rl_peer *p)
{
	struct nlattr *a;
	uint8_t u8v = 0;
	int rem;

	memset(p, 0, sizeof(*p));
	nla_for_each_nested(a, nest, rem) {
		switch (nla_type(a)) {
		case RDMALOG_PEER_A_NODE_ID:
			p->has_id = get_int(a, &p->id, 4);
			break;
		case RDMALOG_PEER_A_ADDR:
			p->has_addr = get_addr(a, &p->addr);
			break;
		case RDMALOG_PEER_A_PORT:
			p->has_port = get_int(a, &p->port, 2);
			break;
		case RDMALOG_PEER_A_STATE:
			p->has_state = get_int(a, &p->state, 4);
			break;
		case RDMALOG_PEER_A_MSG:
			p->has_msg = get_str(a, p->msg, sizeof(p->msg));
			break;
		case RDMALOG_PEER_A_RECONNECTS:
			p->has_reconnects = get_int(a, &p->reconnects, 8);
			break;
		case RDMALOG_PEER_A_REFUSALS:
			p->has_refusals = get_int(a, &p->refusals, 8);
			break;
		case RDMALOG_PEER_A_LAST_RX_MS:
			p->has_last_rx = get_int(a, &p->last_rx_ms, 8);
			break;
		case RDMALOG_PEER_A_EPOCH:
			p->has_epoch = get_int(a, &p->epoch, 8);
			break;
		case RDMALOG_PEER_A_FIRST_LSN:
			p->has_first_lsn = get_int(a, &p->first_lsn, 8);
			break;
		case RDMALOG_PEER_A_COMMIT_LSN:
			p->has_commit_lsn = get_int(a, &p->commit_lsn, 8);
			break;
		case RDMALOG_PEER_A_NEXT_LSN:
			p->has_next_lsn = get_int(a, &p->next_lsn, 8);
			break;
		case RDMALOG_PEER_A_REPLICATING:
			p->has_replicating = get_int(a, &u8v, 1);
			p->replicating = u8v;
			break;
		case RDMALOG_PEER_A_BYTES_SENT:
			p->has_bytes_sent = get_int(a, &p->bytes_sent, 8);
			break;
		case RDMALOG_PEER_A_RECORDS_SENT:
			p->has_records_sent = get_int(a, &p->records_sent, 8);
			break;
		case RDMALOG_PEER_A_ACKED_LSN:
			p->has_acked_lsn = get_int(a, &p->acked_lsn, 8);
			break;
		case RDMALOG_PEER_A_LAG:
			p->has_lag = get_int(a, &p->lag, 8);
			break;
		case RDMALOG_PEER_A_REPL_ERRORS:
			p->has_repl_errors = get_int(a, &p->repl_errors, 8);
			break;
		case RDMALOG_PEER_A_CATCHUP:
			p->has_catchup = get_int(a, &p->catchup, 4);
			break;
		case RDMALOG_PEER_A_CATCHUP_LEFT:
			p->has_catchup_left = get_int(a, &p->catchup_left, 8);
			break;
		case RDMALOG_PEER_A_CATCHUP_RATE:
			p->has_catchup_rate = get_int(a, &p->catchup_rate, 8);
			break;
		case RDMALOG_PEER_A_CATCHUP_BYTES:
			p->has_catchup_bytes = get_int(a, &p->catchup_bytes, 8);
			break;
		case RDMALOG_PEER_A_SYNC:
			p->has_sync = get_int(a, &p->sync, 4);
			break;
		case RDMALOG_PEER_A_REFUSAL:
			p->has_refusal = get_int(a, &p->refusal, 4);
			break;
		case RDMALOG_PEER_A_ROLE:
			p->has_role = get_int(a, &p->role, 4);
			break;
		case RDMALOG_PEER_A_PRIORITY:
			p->has_priority = get_int(a, &p->priority, 4);
			break;
		case RDMALOG_PEER_A_LEAD:
			p->has_lead = get_int(a, &p->lead, 1);
			break;
		case RDMALOG_PEER_A_VOTE_PATH:
			p->has_vote_path = get_int(a, &p->vote_path, 4);
			break;
		case RDMALOG_PEER_A_VOTE_PATH_WHY:
			p->has_vote_why = get_int(a, &p->vote_why, 4);
			break;
		case RDMALOG_PEER_A_BALLOT_GRANTED:
			p->has_ballot_granted = get_int(a, &p->ballot_granted,
							1);
			break;
		}
	}
}

int rl_parse(struct nlmsghdr *nlh, struct rl_info *in)
{
	struct genlmsghdr *gh;
	struct nlattr *a, *b;
	bool ok;
	int rem, rem2, type;
	uint8_t up;

	memset(in, 0, sizeof(*in));
	if (!genlmsg_valid_hdr(nlh, 0))
		return -EPROTO;
	gh = nlmsg_data(nlh);
	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
			  rem) {
		type = nla_type(a);
		if (type <= 0 || type > RDMALOG_A_MAX)
			continue;	/* newer kernel: ignore */
		switch (type) {
		case RDMALOG_A_NODE_ID:
			ok = get_int(a, &in->node_id, 4);
			break;
		case RDMALOG_A_CLUSTER_ID:
			ok = get_int(a, &in->cluster_id, 8);
			break;
		case RDMALOG_A_ADDR:
			ok = get_addr(a, &in->addr);
			break;
		case RDMALOG_A_PORT:
			ok = get_int(a, &in->port, 2);
			break;
		case RDMALOG_A_ROLE:
			ok = get_int(a, &in->role, 4);
			break;
		case RDMALOG_A_EPOCH:
			ok = get_int(a, &in->epoch, 8);
			break;
		case RDMALOG_A_CAPACITY:
			ok = get_int(a, &in->capacity, 8);
			break;
		case RDMALOG_A_MAX_RECORD:
			ok = get_int(a, &in->max_record, 4);
			break;
		case RDMALOG_A_DURABILITY:
			ok = get_int(a, &in->durability, 4);
			break;
		case RDMALOG_A_DURABILITY_EFFECTIVE:
			ok = get_int(a, &in->durability_effective, 4);
			break;
		case RDMALOG_A_COMMIT_TIMEOUT_MS:
			ok = get_int(a, &in->commit_timeout_ms, 4);
			break;
		case RDMALOG_A_UP:
			ok = get_int(a, &up, 1);
			in->up = ok && up;
			break;
		case RDMALOG_A_LSN:
			ok = get_int(a, &in->lsn, 8);
			break;
		case RDMALOG_A_FIRST_LSN:
			ok = get_int(a, &in->first_lsn, 8);
			break;
		case RDMALOG_A_COMMIT_LSN:
			ok = get_int(a, &in->commit_lsn, 8);
			break;
		case RDMALOG_A_NEXT_LSN:
			ok = get_int(a, &in->next_lsn, 8);
			break;
		case RDMALOG_A_USED:
			ok = get_int(a, &in->used, 8);
			break;
		case RDMALOG_A_OPENERS:
			ok = get_int(a, &in->openers, 4);
			break;
		case RDMALOG_A_STATUS_MSG:
			ok = get_str(a, in->status_msg, sizeof(in->status_msg));
			break;
		case RDMALOG_A_PEER:
			parse_peer(a, &in->peer);
			ok = true;
			break;
		case RDMALOG_A_PEERS:
			nla_for_each_nested(b, a, rem2) {
				if (nla_type(b) != RDMALOG_A_PEER ||
				    in->npeers >= RL_MAX_PEERS_SEEN)
					continue;
				parse_peer(b, &in->peers[in->npeers++]);
			}
			ok = true;
			break;
		case RDMALOG_A_STATS:
			nla_for_each_nested(b, a, rem2) {
				int s = nla_type(b);

				if (s <= RDMALOG_STAT_PAD || s >= RL_MAX_STATS)
					continue;
				if (nla_len(b) >= 8) {
					in->stat_has[s] = get_int(b, &in->stats[s], 8);
				} else if (nla_len(b) >= 4) {
					uint32_t v = 0;

					in->stat_has[s] = get_int(b, &v, 4);
					in->stats[s] = v;
				}
			}
			ok = true;
			break;
		case RDMALOG_A_EVENT:
			ok = get_int(a, &in->event, 4);
			break;
		case RDMALOG_A_HEARTBEAT_MS:
			ok = get_int(a, &in->heartbeat_ms, 4);
			break;
		case RDMALOG_A_PEER_TIMEOUT_MS:
			ok = get_int(a, &in->peer_timeout_ms, 4);
			break;
		case RDMALOG_A_DURABILITY_DEGRADED:
			ok = get_int(a, &up, 1);
			in->durability_degraded = ok && up;
			break;
		case RDMALOG_A_BACKUPS_IN_SYNC:
			ok = get_int(a, &in->backups_in_sync, 4);
			break;
		case RDMALOG_A_BACKUPS_NEEDED:
			ok = get_int(a, &in->backups_needed, 4);
			break;
		case RDMALOG_A_LOG_ID:
			ok = get_int(a, &in->log_id, 8);
			break;
		case RDMALOG_A_AUTH:
			ok = get_int(a, &in->auth, 4);
			break;
		case RDMALOG_A_LOG_EPOCH:
			ok = get_int(a, &in->log_epoch, 8);
			break;
		case RDMALOG_A_FAILOVER:
			ok = get_int(a, &in->failover, 4);
			break;
		case RDMALOG_A_PRIORITY:
			ok = get_int(a, &in->priority, 4);
			break;
		case RDMALOG_A_LEAD:
			ok = get_int(a, &up, 1);
			in->lead = ok && up;
			break;
		case RDMALOG_A_PRIMARY:
			ok = get_int(a, &in->primary, 4);
			break;
		case RDMALOG_A_PRIMARY_EPOCH:
			ok = get_int(a, &in->primary_epoch, 8);
			break;
		case RDMALOG_A_ELECT_EPOCH:
			ok = get_int(a, &in->elect_epoch, 8);
			break;
		case RDMALOG_A_VOTE_EPOCH:
			ok = get_int(a, &in->vote_epoch, 8);
			break;
		case RDMALOG_A_VOTE_FOR:
			ok = get_int(a, &in->vote_for, 4);
			break;
		case RDMALOG_A_LEARNED:
			ok = get_int(a, &up, 1);
			in->learned = ok && up;
			break;
		case RDMALOG_A_LEARN_HEARD:
			ok = get_int(a, &in->learn_heard, 4);
			break;
		case RDMALOG_A_LEARN_NEEDED:
			ok = get_int(a, &in->learn_needed, 4);
			break;
		case RDMALOG_A_CHANGE:
			ok = get_int(a, &in->change, 4);
			break;
		case RDMALOG_A_CHANGE_EPOCH:
			ok = get_int(a, &in->change_epoch, 8);
			break;
		case RDMALOG_A_CHANGE_AGO_MS:
			ok = get_int(a, &in->change_ago_ms, 8);
			break;
		case RDMALOG_A_CHANGE_DETECT_MS:
			ok = get_int(a, &in->change_detect_ms, 4);
			break;
		case RDMALOG_A_CHANGE_ELECT_MS:
			ok = get_int(a, &in->change_elect_ms, 4);
			break;
		case RDMALOG_A_CHANGE_FENCE_MS:
			ok = get_int(a, &in->change_fence_ms, 4);
			break;
		case RDMALOG_A_CHANGE_RECONCILE_MS:
			ok = get_int(a, &in->change_reconcile_ms, 4);
			break;
		case RDMALOG_A_LEARN_WAIT_MS:
			ok = get_int(a, &in->learn_wait_ms, 4);
			break;
		case RDMALOG_A_BALLOT:
			ok = get_int(a, &in->ballot, 4);
			break;
		case RDMALOG_A_BALLOT_WORD:
			ok = get_int(a, &in->ballot_word, 8);
			break;
		case RDMALOG_A_BALLOT_MSG:
			ok = get_str(a, in->ballot_msg, sizeof(in->ballot_msg));
			break;
		default:
			ok = false;	/* PAD and friends */
			break;
		}
		in->has[type] = ok;
	}
	return 0;
}

static int parse_cb(struct nlmsghdr *nlh, void *arg)
{
	return rl_parse(nlh, arg);
}

int rl_get(struct rl_nl *nl, uint8_t cmd, struct rl_info *info)
{
	struct nl_msg *msg = rl_nl_msg(nl, cmd, false);

	memset(info, 0, sizeof(*info));
	if (!msg)
		return -ENOMEM;
	return rl_nl_request(nl, msg, parse_cb, info);
}

static int peer_dump_cb(struct nlmsghdr *nlh, void *arg)
{
	struct rl_info *all = arg;
	static struct rl_info one;
	int err = rl_parse(nlh, &one);

	if (err)
		return err;
	if (one.has[RDMALOG_A_PEER] && all->npeers < RL_MAX_PEERS_SEEN)
		all->peers[all->npeers++] = one.peer;
	return 0;
}

/* Every peer (@node_id 0: a dump), or the one with @node_id. */
int rl_get_peers(struct rl_nl *nl, struct rl_info *info, uint32_t node_id)
{
	struct nl_msg *msg = rl_nl_msg(nl, RDMALOG_CMD_PEER_GET, !node_id);

	memset(info, 0, sizeof(*info));
	if (!msg)
		return -ENOMEM;
	if (node_id && nla_put_u32(msg, RDMALOG_A_NODE_ID, node_id) < 0) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return rl_nl_request(nl, msg, peer_dump_cb, info);
}

/* ------------------------------------------------------------------ */
/* Monitor. */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

struct mon {
	int (*cb)(struct rl_info *, void *);
	void *arg;
	bool done;
	bool gone;		/* nlctrl said our family went away */
	int family;
	struct rl_info info;
};

/* Events are not answers to requests: no sequence numbers to check. */
static int no_seq_check(struct nl_msg *msg, void *arg)
{
	(void)msg;
	(void)arg;
	return NL_OK;
}

/* An nlctrl notification: is it our family being unregistered? */
static void ctrl_event(struct mon *m, struct nlmsghdr *nlh)
{
	struct genlmsghdr *gh = nlmsg_data(nlh);
	struct nlattr *a;
	uint16_t id = 0;
	char name[GENL_NAMSIZ] = "";
	int rem;

	if (gh->cmd != CTRL_CMD_DELFAMILY)
		return;
	nla_for_each_attr(a, genlmsg_attrdata(gh, 0), genlmsg_attrlen(gh, 0),
			  rem) {
		if (nla_type(a) == CTRL_ATTR_FAMILY_ID)
			get_int(a, &id, 2);
		else if (nla_type(a) == CTRL_ATTR_FAMILY_NAME)
			get_str(a, name, sizeof(name));
	}
	if (!strcmp(name, RDMALOG_GENL_NAME) || id == m->family)
		m->gone = true;
}

static int event_cb(struct nl_msg *msg, void *arg)
{
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct mon *m = arg;
	struct genlmsghdr *gh;

	if (!genlmsg_valid_hdr(nlh, 0))
		return NL_SKIP;
	if (nlh->nlmsg_type == GENL_ID_CTRL) {
		ctrl_event(m, nlh);
		return m->gone ? NL_STOP : NL_OK;
	}
	gh = nlmsg_data(nlh);
	if (nlh->nlmsg_type != m->family || gh->cmd != RDMALOG_CMD_EVENT ||
	    rl_parse(nlh, &m->info))
		return NL_SKIP;
	if (m->cb(&m->info, m->arg)) {
		m->done = true;
		return NL_STOP;
	}
	return NL_OK;
}

/*
 * The id of a multicast group; 0 or an exit status through @status.
 * Resolve every group before joining any: once the socket is in a group,
 * an event can arrive where genl_ctrl_resolve_grp() waits for its reply
 * and be taken for it ("group not found").
 */
static int resolve_group(struct rl_nl *nl, const char *family,
			 const char *grp, int *status)
{
	int id;

	id = genl_ctrl_resolve_grp(nl->sk, family, grp);
	if (id < 0) {
		fprintf(stderr, PROG ": %s: multicast group '%s' of '%s' not found: %s\n",
			nl->what ? nl->what : "monitor", grp, family,
			nl_geterror(id));
		*status = id == -NLE_OBJ_NOTFOUND ? EXIT_NOMOD : EXIT_KERNEL;
		return 0;
	}
	*status = EXIT_OK;
	return id;
}

static int join_group(struct rl_nl *nl, int id, const char *grp)
{
	int r;

	r = nl_socket_add_membership(nl->sk, id);
	if (r < 0) {
		fprintf(stderr, PROG ": %s: cannot join group '%s': %s\n",
			nl->what ? nl->what : "monitor", grp, nl_geterror(r));
		return EXIT_KERNEL;
	}
	return EXIT_OK;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

int rl_nl_monitor(struct rl_nl *nl, int (*cb)(struct rl_info *, void *),
		  int (*resync)(void *arg, bool lost), void *arg,
		  long timeout_ms)
{
	static struct mon m;
	struct sigaction sa = { .sa_handler = on_signal };
	const char *what = nl->what ? nl->what : "monitor";
	long deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : 0;
	sigset_t block, orig;
	struct timespec tmo, *ptmo;
	struct pollfd pfd;
	struct nl_cb *nlcb;
	int r, status, ev_grp, ctrl_grp;

	m.cb = cb;
	m.arg = arg;
	m.done = false;
	m.gone = false;
	m.family = nl->family;

	ev_grp = resolve_group(nl, RDMALOG_GENL_NAME, RDMALOG_GENL_MCGRP_EVENTS,
			       &status);
	if (status)
		return status;
	/* To notice the module going away (a reload gives a new family). */
	ctrl_grp = resolve_group(nl, "nlctrl", "notify", &status);
	if (status)
		return status;
	status = join_group(nl, ev_grp, RDMALOG_GENL_MCGRP_EVENTS);
	if (status)
		return status;
	status = join_group(nl, ctrl_grp, "notify");
	if (status)
		return status;
	nl_socket_set_buffer_size(nl->sk, 1 << 20, 0);
	nl_socket_set_nonblocking(nl->sk);

	nlcb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!nlcb) {
		fprintf(stderr, PROG ": out of memory\n");
		return EXIT_KERNEL;
	}
	nl_cb_set(nlcb, NL_CB_VALID, NL_CB_CUSTOM, event_cb, &m);
	nl_cb_set(nlcb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, no_seq_check, NULL);

	/* Signals only interrupt ppoll(), so none is lost between checks. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* Joined first, then the state: no change falls in between. */
	if (resync) {
		r = resync(arg, false);
		if (r) {
			status = r > 0 ? EXIT_OK : -r;
			goto out;
		}
	}

	pfd.fd = nl_socket_get_fd(nl->sk);
	pfd.events = POLLIN;
	while (!stop_signal && !m.done && !m.gone) {
		long left = -1;

		ptmo = NULL;
		if (timeout_ms >= 0) {
			left = deadline - now_ms();
			if (left <= 0) {
				status = EXIT_TIMEOUT;
				break;
			}
		}
		if (resync && nl->resync_ms > 0 &&
		    (left < 0 || left > nl->resync_ms))
			left = nl->resync_ms;
		if (left >= 0) {
			tmo.tv_sec = left / 1000;
			tmo.tv_nsec = (left % 1000) * 1000000L;
			ptmo = &tmo;
		}
		r = ppoll(&pfd, 1, ptmo, &orig);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, PROG ": %s: poll: %s\n", what,
				strerror(errno));
			status = EXIT_KERNEL;
			break;
		}
		if (!r && resync && nl->resync_ms > 0) {
			r = resync(arg, false);
			if (r) {
				status = r > 0 ? EXIT_OK : -r;
				break;
			}
			continue;
		}
		if (!r)
			continue;	/* the deadline is checked above */
		r = nl_recvmsgs(nl->sk, nlcb);
		if (r == -NLE_NOMEM) {
			/* ENOBUFS: the socket overran; some events are lost. */
			fprintf(stderr, PROG ": %s: events lost (receive buffer overrun)%s\n",
				what, resync ? "; state follows again" : "");
			if (resync) {
				r = resync(arg, true);
				if (r) {
					status = r > 0 ? EXIT_OK : -r;
					break;
				}
			}
			continue;
		}
		if (r < 0 && r != -NLE_AGAIN && r != -NLE_INTR) {
			fprintf(stderr, PROG ": %s: %s\n", what, nl_geterror(r));
			status = EXIT_KERNEL;
			break;
		}
	}
	if (m.gone) {
		fprintf(stderr,
			PROG ": %s: the rdmalog genl family went away (module unloaded)\n",
			what);
		status = EXIT_NOMOD;
	}
out:
	nl_cb_put(nlcb);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	return status;
}
