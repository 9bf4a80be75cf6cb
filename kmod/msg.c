// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the peer protocol, as a table.
 *
 * The transport (hello.c) checks every message's frame (header, sequence
 * number, credits, epochs) and handles its own messages: HELLO,
 * HEARTBEAT and RING. For every other type it asks this file, through
 * &struct rdmalog_ep_ops, whether the type is known and the length right
 * (before the frame's sequence number and credits are taken), and then
 * hands the message over to be acted on. One entry per type says all of
 * it: the length (exact, or a rule for the variable ones), the endpoint
 * flags that must be set before it is taken and what the peer is told
 * otherwise, whether it is a primary's data (of an epoch below ours it is
 * dropped), and whose it is: replication (repl.c), catch-up (catchup.c),
 * forwarding (forward.c) or elections (elect.c, candidacy.c). The "why"
 * texts are the wire protocol's visible reasons
 * (Documentation/protocol.rst, the rogue suite): they do not change with
 * the layout of the code.
 *
 * Everything here runs in the CQ handler (softirq) and holds no lock of
 * its own; the handlers take theirs.
 */
#include <linux/bitops.h>
#include <linux/kernel.h>
#include <linux/types.h>

#include "catchup.h"
#include "elect.h"
#include "ep.h"
#include "forward.h"
#include "msg.h"
#include "proto.h"
#include "repl.h"

/**
 * struct rdmalog_msg_rule - what the protocol says of one message type
 * @len: its exact length, or the fixed part of a variable one
 * @var_len: for a variable one: the length the message says it has
 *	(*@want), or why it cannot be taken; called once the fixed part
 *	(@len bytes) is known to be there
 * @needs: &rdmalog_ep.flags bits that must all be set before it is taken
 * @needs_why: what the peer is told when one is not
 * @data: a primary's data (the transport drops it from an older epoch)
 * @rx: its owner's handler
 */
struct rdmalog_msg_rule {
	u16 len;
	const char *(*var_len)(const union rdmalog_msg_any *m, u32 *want);
	unsigned long needs;
	const char *needs_why;
	bool data;
	const char *(*rx)(struct rdmalog_ep *ep,
			  const union rdmalog_msg_any *m, u32 len);
};

/* FWD: the fixed part, then an inline payload. */
static const char *rdmalog_msg_fwd_len(const union rdmalog_msg_any *m,
				       u32 *want)
{
	*want = sizeof(m->fwd);
	if (le32_to_cpu(m->fwd.flags) & RDMALOG_FWD_F_INLINE) {
		if (le32_to_cpu(m->fwd.len) > RDMALOG_FWD_INLINE_MAX)
			return "FWD with an inline payload too long";
		*want += le32_to_cpu(m->fwd.len);
	}
	return NULL;
}

/* CATCHUP: the fixed part, then its segments, as RING. */
static const char *rdmalog_msg_catchup_len(const union rdmalog_msg_any *m,
					   u32 *want)
{
	u32 n = le32_to_cpu(m->catchup.nr_segs);

	if (!n || n > RDMALOG_RING_MAX_SEGS)
		return "CATCHUP with a bad segment count";
	*want = RDMALOG_MSG_CATCHUP_LEN(n);
	return NULL;
}

static const char *rdmalog_msg_notify(struct rdmalog_ep *ep,
				      const union rdmalog_msg_any *m, u32 len)
{
	if (rdmalog_catchup_pulling(ep))
		return "NOTIFY while we catch up";
	return rdmalog_repl_notify_received(ep, &m->notify);
}

static const char *rdmalog_msg_wait(struct rdmalog_ep *ep,
				    const union rdmalog_msg_any *m, u32 len)
{
	return rdmalog_repl_wait_received(ep, &m->wait);
}

static const char *rdmalog_msg_ack(struct rdmalog_ep *ep,
				   const union rdmalog_msg_any *m, u32 len)
{
	return rdmalog_repl_ack_received(ep, &m->ack);
}

static const char *rdmalog_msg_fwd(struct rdmalog_ep *ep,
				   const union rdmalog_msg_any *m, u32 len)
{
	return rdmalog_fwd_received(ep, &m->fwd, len);
}

static const char *rdmalog_msg_fwd_done(struct rdmalog_ep *ep,
					const union rdmalog_msg_any *m,
					u32 len)
{
	return rdmalog_fwd_done_received(ep, &m->fwd_done);
}

static const char *rdmalog_msg_fwd_close(struct rdmalog_ep *ep,
					 const union rdmalog_msg_any *m,
					 u32 len)
{
	return rdmalog_fwd_close_received(ep, &m->fwd_close);
}

static const char *rdmalog_msg_fwd_closed(struct rdmalog_ep *ep,
					  const union rdmalog_msg_any *m,
					  u32 len)
{
	return rdmalog_fwd_closed_received(ep, &m->fwd_close);
}

static const char *rdmalog_msg_catchup(struct rdmalog_ep *ep,
				       const union rdmalog_msg_any *m, u32 len)
{
	return rdmalog_catchup_received(ep, &m->catchup);
}

static const char *rdmalog_msg_join(struct rdmalog_ep *ep,
				    const union rdmalog_msg_any *m, u32 len)
{
	return rdmalog_catchup_join_received(ep, &m->join);
}

static const struct rdmalog_msg_rule rdmalog_msg_rules[__RDMALOG_MSG_MAX] = {
	[RDMALOG_MSG_NOTIFY] = {
		.len = sizeof(struct rdmalog_msg_notify),
		.needs = BIT(RDMALOG_EP_RING_REG),
		.needs_why = "NOTIFY before our RING",
		.data = true,
		.rx = rdmalog_msg_notify,
	},
	[RDMALOG_MSG_WAIT] = {
		.len = sizeof(struct rdmalog_msg_wait),
		.needs = BIT(RDMALOG_EP_RING_RX),
		.needs_why = "WAIT before RING",
		.rx = rdmalog_msg_wait,
	},
	[RDMALOG_MSG_ACK] = {
		.len = sizeof(struct rdmalog_msg_ack),
		.needs = BIT(RDMALOG_EP_RING_RX),
		.needs_why = "ACK before RING",
		.rx = rdmalog_msg_ack,
	},
	[RDMALOG_MSG_FWD] = {
		.len = sizeof(struct rdmalog_msg_fwd),
		.var_len = rdmalog_msg_fwd_len,
		.rx = rdmalog_msg_fwd,
	},
	[RDMALOG_MSG_FWD_DONE] = {
		.len = sizeof(struct rdmalog_msg_fwd_done),
		.rx = rdmalog_msg_fwd_done,
	},
	[RDMALOG_MSG_CATCHUP] = {
		.len = RDMALOG_MSG_CATCHUP_LEN(0),
		.var_len = rdmalog_msg_catchup_len,
		.needs = BIT(RDMALOG_EP_RING_REG) | BIT(RDMALOG_EP_PEER_PRIMARY),
		.needs_why = "CATCHUP before our RING, or not from the primary",
		.data = true,
		.rx = rdmalog_msg_catchup,
	},
	[RDMALOG_MSG_JOIN] = {
		.len = sizeof(struct rdmalog_msg_join),
		.needs = BIT(RDMALOG_EP_RING_RX),
		.needs_why = "JOIN before RING",
		.rx = rdmalog_msg_join,
	},
	[RDMALOG_MSG_VOTE_REQ] = {
		.len = sizeof(struct rdmalog_msg_vote_req),
		.rx = rdmalog_elect_rx_vote_req,
	},
	[RDMALOG_MSG_VOTE] = {
		.len = sizeof(struct rdmalog_msg_vote),
		.rx = rdmalog_elect_rx_vote,
	},
	[RDMALOG_MSG_TAKEOVER] = {
		.len = sizeof(struct rdmalog_msg_takeover),
		.needs = BIT(RDMALOG_EP_PEER_PRIMARY),
		.needs_why = "TAKEOVER not from a primary",
		.rx = rdmalog_elect_rx_takeover,
	},
	[RDMALOG_MSG_FWD_CLOSE] = {
		.len = sizeof(struct rdmalog_msg_fwd_close),
		.needs = BIT(RDMALOG_EP_PEER_PRIMARY),
		.needs_why = "FWD_CLOSE not from a primary",
		.rx = rdmalog_msg_fwd_close,
	},
	[RDMALOG_MSG_FWD_CLOSED] = {
		.len = sizeof(struct rdmalog_msg_fwd_close),
		.rx = rdmalog_msg_fwd_closed,
	},
};

/* The rule of @type, or NULL: not a type of the protocol above. */
static const struct rdmalog_msg_rule *rdmalog_msg_rule(u8 type)
{
	if (type >= ARRAY_SIZE(rdmalog_msg_rules) ||
	    !rdmalog_msg_rules[type].rx)
		return NULL;
	return &rdmalog_msg_rules[type];
}

static const char *rdmalog_msg_check(const union rdmalog_msg_any *m,
				     u32 len, bool *data)
{
	const struct rdmalog_msg_rule *r = rdmalog_msg_rule(m->hdr.type);
	const char *why;
	u32 want;

	if (!r)
		return "unknown message type";
	if (len < r->len)
		return "message length wrong for its type";
	want = r->len;
	if (r->var_len) {
		why = r->var_len(m, &want);
		if (why)
			return why;
	}
	if (len != want)
		return "message length wrong for its type";
	*data = r->data;
	return NULL;
}

static const char *rdmalog_msg_rx(struct rdmalog_ep *ep,
				  const union rdmalog_msg_any *m, u32 len)
{
	const struct rdmalog_msg_rule *r = rdmalog_msg_rule(m->hdr.type);

	/* rdmalog_msg_check() passed: @r is there. */
	if ((READ_ONCE(ep->flags) & r->needs) != r->needs)
		return r->needs_why;
	return r->rx(ep, m, len);
}

/* The users' per-endpoint state, in this order. */
static void rdmalog_msg_ep_init(struct rdmalog_ep *ep)
{
	rdmalog_repl_ep_init(ep);
	rdmalog_fwd_ep_init(ep);
	rdmalog_catchup_ep_init(ep);
	rdmalog_elect_ep_init(ep);
}

/* Only forwarding has resources of its own on the endpoint. */
static int rdmalog_msg_ep_setup(struct rdmalog_ep *ep, const char **what)
{
	int err = rdmalog_fwd_ep_setup(ep);

	if (err)
		*what = "forwarding";
	return err;
}

/* Catch-up first: its works may hold replication back. */
static void rdmalog_msg_ep_stop(struct rdmalog_ep *ep)
{
	rdmalog_catchup_ep_stop(ep);
	rdmalog_repl_ep_stop(ep);
	rdmalog_elect_ep_stop(ep);
}

/* Nothing is in flight: replication forgets it, forwards fail. */
static void rdmalog_msg_ep_release(struct rdmalog_ep *ep)
{
	rdmalog_repl_ep_leave(ep);
	rdmalog_fwd_ep_release(ep);
}

static void rdmalog_msg_ep_info(struct rdmalog_ep *ep,
				struct rdmalog_repl_peer_info *repl,
				struct rdmalog_catchup_info *cu)
{
	rdmalog_repl_ep_info(ep, repl);
	rdmalog_catchup_ep_info(ep, cu);
}

/* Nothing of the node's old role on @ep: each user in turn. */
static const char *rdmalog_msg_role_check(struct rdmalog_ep *ep)
{
	const char *why = rdmalog_repl_ep_idle(ep);

	if (!why)
		why = rdmalog_catchup_ep_idle(ep);
	if (!why)
		why = rdmalog_fwd_ep_idle(ep);
	return why;
}

static void rdmalog_msg_heard(struct rdmalog_ep *ep, u64 epoch,
			      u64 vote_epoch)
{
	/* A primary's messages say which log it leads. */
	rdmalog_elect_heard(ep->conn->peer_id, epoch, vote_epoch,
			    test_bit(RDMALOG_EP_PEER_PRIMARY, &ep->flags) ?
			    ep->peer_log_id : 0);
}

const struct rdmalog_ep_ops rdmalog_msg_ops = {
	.check = rdmalog_msg_check,
	.rx = rdmalog_msg_rx,
	.rx_done = rdmalog_repl_after_rx,
	.init = rdmalog_msg_ep_init,
	.setup = rdmalog_msg_ep_setup,
	.stop = rdmalog_msg_ep_stop,
	.release = rdmalog_msg_ep_release,
	.info = rdmalog_msg_ep_info,
	.ring = rdmalog_catchup_ring,
	.ring_sent = rdmalog_repl_ring_sent,
	.heard = rdmalog_msg_heard,
	.role_check = rdmalog_msg_role_check,
};
