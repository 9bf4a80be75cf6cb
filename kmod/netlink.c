// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the "rdmalog" generic netlink family (uapi/rdmalog_genl.h).
 *
 * Every command is validated strictly (resv_start_op = 0, see
 * rdmalog_nl_family): unknown attributes, wrong lengths and out-of-range
 * values are refused by the policy below before a handler runs, and each
 * handler also refuses attributes its command does not take. Handlers
 * translate attributes into calls to node.c, which validates the
 * combination, applies all or nothing and sends the events.
 *
 * The family is parallel_ops: genetlink's global genl_mutex is not held
 * around our callbacks, so a command that waits (PROMOTE while its
 * candidacy and epoch-start record run, SWITCHOVER while the backup
 * drains and takes over: seconds) holds up neither the other families
 * nor our own GETs. node.c's config_mutex makes each change atomic
 * against the others and the character device: NODE_SET and LOG_SET
 * overlay the request on the configuration under it (their overlay
 * callbacks), so a change of role meanwhile (a PROMOTE, a step-down) is
 * not undone by a stale copy. A dump's state is its own (cb->ctx).
 *
 * The events on the family's group are nl_event.c's; the two files share
 * kmod/nl_priv.h.
 */
#include <linux/capability.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/genetlink.h>

#include "compat.h"
#include "netlink.h"
#include "nl_priv.h"
#include "node.h"
#include "stats.h"
#include "chardev.h"

bool rdmalog_nl_registered;

static const struct genl_multicast_group rdmalog_nl_mcgrps[] = {
	[RDMALOG_NL_GROUP_EVENTS] = { .name = RDMALOG_GENL_MCGRP_EVENTS },
};

static int rdmalog_nl_check_addr(const struct nlattr *attr,
				 struct netlink_ext_ack *extack)
{
	if (nla_len(attr) != 4 && nla_len(attr) != 16) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "address must be 4 (IPv4) or 16 (IPv6) bytes");
		return -EINVAL;
	}
	return 0;
}

/*
 * The policy checks types, exact lengths, nesting and unknown attributes.
 * Integer values are checked by rdmalog_nl_check_value() instead, before a
 * handler acts: in 6.1 the policy's own range checks fail with -ERANGE and
 * a generic "integer out of range" (the contract is -EINVAL and a message
 * naming the attribute), and a validation function on an integer
 * attribute breaks policy dumps and extack policy reports
 * (nla_get_range_unsigned() WARNs on it).
 */

/* Attributes the kernel sends but never accepts. */
#define RDMALOG_NL_READ_ONLY \
	{ .type = NLA_REJECT, .reject_message = "read-only attribute" }

static const struct nla_policy rdmalog_nl_policy[RDMALOG_A_MAX + 1] = {
	[RDMALOG_A_PAD]			= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_NODE_ID]		= { .type = NLA_U32 },
	[RDMALOG_A_CLUSTER_ID]		= { .type = NLA_U64 },
	[RDMALOG_A_ADDR]		=
		NLA_POLICY_VALIDATE_FN(NLA_BINARY, rdmalog_nl_check_addr),
	[RDMALOG_A_PORT]		= { .type = NLA_U16 },
	[RDMALOG_A_ROLE]		= { .type = NLA_U32 },
	[RDMALOG_A_EPOCH]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_CAPACITY]		= { .type = NLA_U64 },
	[RDMALOG_A_MAX_RECORD]		= { .type = NLA_U32 },
	[RDMALOG_A_DURABILITY]		= { .type = NLA_U32 },
	[RDMALOG_A_DURABILITY_EFFECTIVE] = RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_COMMIT_TIMEOUT_MS]	= { .type = NLA_U32 },
	[RDMALOG_A_UP]			= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_LSN]			= { .type = NLA_U64 },
	[RDMALOG_A_FIRST_LSN]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_COMMIT_LSN]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_NEXT_LSN]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_USED]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_OPENERS]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_STATUS_MSG]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_PEER]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_PEERS]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_STATS]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_EVENT]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_HEARTBEAT_MS]	= { .type = NLA_U32 },
	[RDMALOG_A_PEER_TIMEOUT_MS]	= { .type = NLA_U32 },
	[RDMALOG_A_DURABILITY_DEGRADED]	= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_BACKUPS_IN_SYNC]	= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_BACKUPS_NEEDED]	= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_LOG_ID]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_LOG_EPOCH]		= RDMALOG_NL_READ_ONLY,
	/* Any length up to the limit; empty clears it. */
	[RDMALOG_A_SECRET]		= { .type = NLA_BINARY,
					    .len = RDMALOG_MAX_SECRET },
	[RDMALOG_A_AUTH]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_FAILOVER]		= { .type = NLA_U32 },
	[RDMALOG_A_PRIORITY]		= { .type = NLA_U32 },
	[RDMALOG_A_LEAD]		= { .type = NLA_U8 },
	[RDMALOG_A_PRIMARY]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_PRIMARY_EPOCH]	= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_ELECT_EPOCH]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_VOTE_EPOCH]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_VOTE_FOR]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_LEARNED]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_LEARN_HEARD]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_LEARN_NEEDED]	= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_CHANGE]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_CHANGE_EPOCH]	= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_CHANGE_AGO_MS]	= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_CHANGE_DETECT_MS]	= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_CHANGE_ELECT_MS]	= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_CHANGE_FENCE_MS]	= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_CHANGE_RECONCILE_MS]	= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_BALLOT]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_BALLOT_WORD]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_BALLOT_MSG]		= RDMALOG_NL_READ_ONLY,
	[RDMALOG_A_LEARN_WAIT_MS]	= RDMALOG_NL_READ_ONLY,
};

/* The attributes each command takes. */
#define RDMALOG_NL_NODE_SET_ATTRS					\
	(BIT_ULL(RDMALOG_A_NODE_ID) | BIT_ULL(RDMALOG_A_CLUSTER_ID) |	\
	 BIT_ULL(RDMALOG_A_ADDR) | BIT_ULL(RDMALOG_A_PORT) |		\
	 BIT_ULL(RDMALOG_A_ROLE) | BIT_ULL(RDMALOG_A_HEARTBEAT_MS) |	\
	 BIT_ULL(RDMALOG_A_PEER_TIMEOUT_MS) | BIT_ULL(RDMALOG_A_SECRET) |	\
	 BIT_ULL(RDMALOG_A_FAILOVER) | BIT_ULL(RDMALOG_A_PRIORITY) |	\
	 BIT_ULL(RDMALOG_A_LEAD))
#define RDMALOG_NL_LOG_SET_ATTRS					\
	(BIT_ULL(RDMALOG_A_CAPACITY) | BIT_ULL(RDMALOG_A_MAX_RECORD) |	\
	 BIT_ULL(RDMALOG_A_DURABILITY) |				\
	 BIT_ULL(RDMALOG_A_COMMIT_TIMEOUT_MS))
#define RDMALOG_NL_PEER_ATTRS						\
	(BIT_ULL(RDMALOG_A_NODE_ID) | BIT_ULL(RDMALOG_A_ADDR) |		\
	 BIT_ULL(RDMALOG_A_PORT))
#define RDMALOG_NL_PEER_ID_ATTRS					\
	BIT_ULL(RDMALOG_A_NODE_ID)

/*
 * The value of a top-level attribute of type @type (or of the peer
 * attribute with the same meaning) against uapi/rdmalog_genl.h.
 * Return: 0 or -EINVAL with a message naming the attribute.
 */
static int rdmalog_nl_check_value(int type, const struct nlattr *attr,
				  struct netlink_ext_ack *extack)
{
	u64 v;

	switch (type) {
	case RDMALOG_A_NODE_ID:
		v = nla_get_u32(attr);
		if (v >= 1 && v <= RDMALOG_MAX_NODE_ID)
			return 0;
		NL_SET_ERR_MSG_ATTR(extack, attr, "node id must be 1 .. 255");
		return -EINVAL;
	case RDMALOG_A_CLUSTER_ID:
		if (nla_get_u64(attr))
			return 0;
		NL_SET_ERR_MSG_ATTR(extack, attr, "cluster id must not be 0");
		return -EINVAL;
	case RDMALOG_A_PORT:
		if (nla_get_u16(attr))
			return 0;
		NL_SET_ERR_MSG_ATTR(extack, attr, "port must be 1 .. 65535");
		return -EINVAL;
	case RDMALOG_A_ROLE:
		v = nla_get_u32(attr);
		if (v == RDMALOG_ROLE_PRIMARY || v == RDMALOG_ROLE_BACKUP)
			return 0;
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "role must be primary (1) or backup (2)");
		return -EINVAL;
	case RDMALOG_A_CAPACITY:
		v = nla_get_u64(attr);
		if (v < RDMALOG_MIN_CAPACITY || v > RDMALOG_MAX_CAPACITY) {
			NL_SET_ERR_MSG_ATTR(extack, attr,
					    "capacity must be 64 KiB .. 16 GiB");
			return -EINVAL;
		}
		if (!IS_ALIGNED(v, RDMALOG_CAPACITY_ALIGN)) {
			NL_SET_ERR_MSG_ATTR(extack, attr,
					    "capacity must be a multiple of 4096 bytes");
			return -EINVAL;
		}
		return 0;
	case RDMALOG_A_MAX_RECORD:
		if (nla_get_u32(attr))
			return 0;
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "max record must be at least 1 byte");
		return -EINVAL;
	case RDMALOG_A_DURABILITY:
		if (nla_get_u32(attr) <= RDMALOG_DURABLE_ALL)
			return 0;
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "durability must be async (0), quorum (1) or all (2)");
		return -EINVAL;
	case RDMALOG_A_COMMIT_TIMEOUT_MS:
		v = nla_get_u32(attr);
		if (v >= 1 && v <= RDMALOG_MAX_COMMIT_TIMEOUT_MS)
			return 0;
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "commit timeout must be 1 .. 3600000 ms");
		return -EINVAL;
	case RDMALOG_A_HEARTBEAT_MS:
		v = nla_get_u32(attr);
		if (v >= RDMALOG_MIN_HEARTBEAT_MS &&
		    v <= RDMALOG_MAX_HEARTBEAT_MS)
			return 0;
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "heartbeat must be 10 .. 60000 ms");
		return -EINVAL;
	case RDMALOG_A_PEER_TIMEOUT_MS:
		v = nla_get_u32(attr);
		if (v >= 2 * RDMALOG_MIN_HEARTBEAT_MS &&
		    v <= RDMALOG_MAX_PEER_TIMEOUT_MS)
			return 0;
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "peer timeout must be 20 .. 600000 ms");
		return -EINVAL;
	case RDMALOG_A_FAILOVER:
		if (nla_get_u32(attr) <= RDMALOG_FAILOVER_MANUAL)
			return 0;
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "failover must be auto (0) or manual (1)");
		return -EINVAL;
	case RDMALOG_A_PRIORITY:
		if (nla_get_u32(attr) <= RDMALOG_MAX_PRIORITY)
			return 0;
		NL_SET_ERR_MSG_ATTR(extack, attr, "priority must be 0 .. 255");
		return -EINVAL;
	case RDMALOG_A_LEAD:
		if (nla_get_u8(attr) <= 1)
			return 0;
		NL_SET_ERR_MSG_ATTR(extack, attr, "lead must be 0 or 1");
		return -EINVAL;
	default:
		return 0;
	}
}

/*
 * Refuse attributes that @info's command does not take, and values out of
 * range.
 * Return: how many of the @allowed attributes are present, or -EINVAL.
 */
static int rdmalog_nl_attrs(struct genl_info *info, u64 allowed)
{
	int type, err, n = 0;

	BUILD_BUG_ON(RDMALOG_A_MAX >= 64);
	for (type = RDMALOG_A_UNSPEC + 1; type <= RDMALOG_A_MAX; type++) {
		if (!info->attrs[type])
			continue;
		if (!(allowed & BIT_ULL(type))) {
			NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[type],
					    "attribute not valid for this command");
			return -EINVAL;
		}
		err = rdmalog_nl_check_value(type, info->attrs[type],
					     info->extack);
		if (err)
			return err;
		n++;
	}
	return n;
}

/*
 * Whether the sender of the request @skb may see the cluster id and the
 * addresses and ports in replies; events never carry them. Everyone else
 * gets replies without them (Documentation/netlink.rst): the cluster id
 * is a weak credential (it is all the handshake's cluster check asks
 * for), the addresses are the cluster's topology. The test is the one of
 * GENL_ADMIN_PERM: CAP_NET_ADMIN in the initial user namespace, for the
 * socket's opener and for the sender.
 */
static bool rdmalog_nl_privileged(const struct sk_buff *skb)
{
	return netlink_capable(skb, CAP_NET_ADMIN);
}

/*
 * @addr as @addr_type (left out while unset) and its port as @port_type;
 * nothing unless @priv.
 */
static int rdmalog_nl_put_addr(struct sk_buff *skb, int addr_type,
			       int port_type, const struct rdmalog_addr *addr,
			       bool priv)
{
	if (!priv)
		return 0;
	if (addr->len && nla_put(skb, addr_type, addr->len, addr->addr))
		return -EMSGSIZE;
	return nla_put_u16(skb, port_type, addr->port);
}

/* Room a PEER nest takes at most, for sizing replies. */
#define RDMALOG_NL_PEER_SIZE						\
	(nla_total_size(0) + nla_total_size(4) + nla_total_size(16) +	\
	 nla_total_size(2) + nla_total_size(4) +			\
	 nla_total_size(RDMALOG_PEER_MSG_LEN) + 2 * nla_total_size(1) + \
	 5 * nla_total_size(4) + 15 * nla_total_size_64bit(8))

/* A PEER nest (type @type) describing @peer; its address only if @priv. */
int rdmalog_nl_put_peer(struct sk_buff *skb, int type,
			const struct rdmalog_peer_info *peer, bool priv)
{
	struct nlattr *nest;

	nest = nla_nest_start(skb, type);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, RDMALOG_PEER_A_NODE_ID, peer->node_id) ||
	    rdmalog_nl_put_addr(skb, RDMALOG_PEER_A_ADDR, RDMALOG_PEER_A_PORT,
				&peer->addr, priv) ||
	    nla_put_u32(skb, RDMALOG_PEER_A_STATE, peer->state) ||
	    nla_put_string(skb, RDMALOG_PEER_A_MSG, peer->msg) ||
	    nla_put_u64_64bit(skb, RDMALOG_PEER_A_RECONNECTS,
			      peer->reconnects, RDMALOG_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, RDMALOG_PEER_A_REFUSALS, peer->refusals,
			      RDMALOG_PEER_A_PAD))
		goto err;
	/* What the peer reported, once it reported anything. */
	if (peer->has_remote &&
	    (nla_put_u64_64bit(skb, RDMALOG_PEER_A_LAST_RX_MS,
			       peer->last_rx_ms, RDMALOG_PEER_A_PAD) ||
	     nla_put_u64_64bit(skb, RDMALOG_PEER_A_EPOCH, peer->remote_epoch,
			       RDMALOG_PEER_A_PAD) ||
	     nla_put_u64_64bit(skb, RDMALOG_PEER_A_FIRST_LSN,
			       peer->remote_first_lsn, RDMALOG_PEER_A_PAD) ||
	     nla_put_u64_64bit(skb, RDMALOG_PEER_A_COMMIT_LSN,
			       peer->remote_commit_lsn, RDMALOG_PEER_A_PAD) ||
	     nla_put_u64_64bit(skb, RDMALOG_PEER_A_NEXT_LSN,
			       peer->remote_next_lsn, RDMALOG_PEER_A_PAD)))
		goto err;
	/* Replication to the peer (primary side); zero when not connected. */
	if (nla_put_u8(skb, RDMALOG_PEER_A_REPLICATING, peer->repl.joined) ||
	    nla_put_u64_64bit(skb, RDMALOG_PEER_A_BYTES_SENT, peer->repl.bytes,
			      RDMALOG_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, RDMALOG_PEER_A_RECORDS_SENT,
			      peer->repl.records, RDMALOG_PEER_A_PAD) ||
	    nla_put_u64_64bit(skb, RDMALOG_PEER_A_REPL_ERRORS,
			      peer->repl.errors, RDMALOG_PEER_A_PAD))
		goto err;
	if (peer->repl.joined &&
	    (nla_put_u64_64bit(skb, RDMALOG_PEER_A_ACKED_LSN,
			       peer->repl.held_lsn, RDMALOG_PEER_A_PAD) ||
	     nla_put_u64_64bit(skb, RDMALOG_PEER_A_LAG, peer->repl.lag,
			       RDMALOG_PEER_A_PAD)))
		goto err;
	/* Catch-up on the connection (either side). */
	if (nla_put_u32(skb, RDMALOG_PEER_A_CATCHUP, peer->cu.state) ||
	    nla_put_u64_64bit(skb, RDMALOG_PEER_A_CATCHUP_BYTES, peer->cu.bytes,
			      RDMALOG_PEER_A_PAD))
		goto err;
	/* The judgement of the peer, and why it refuses (or is refused). */
	if (nla_put_u32(skb, RDMALOG_PEER_A_SYNC, peer->sync) ||
	    (peer->state == RDMALOG_PEER_REFUSED &&
	     nla_put_u32(skb, RDMALOG_PEER_A_REFUSAL, peer->refusal)))
		goto err;
	if (peer->has_role &&
	    nla_put_u32(skb, RDMALOG_PEER_A_ROLE, peer->remote_role))
		goto err;
	if (peer->has_standing &&
	    (nla_put_u32(skb, RDMALOG_PEER_A_PRIORITY, peer->remote_priority) ||
	     nla_put_u8(skb, RDMALOG_PEER_A_LEAD, peer->remote_lead)))
		goto err;
	if (peer->has_vote_path &&
	    (nla_put_u32(skb, RDMALOG_PEER_A_VOTE_PATH, peer->vote_path) ||
	     nla_put_u8(skb, RDMALOG_PEER_A_BALLOT_GRANTED,
			peer->ballot_granted) ||
	     (peer->vote_path == RDMALOG_VOTE_PATH_MESSAGES &&
	      nla_put_u32(skb, RDMALOG_PEER_A_VOTE_PATH_WHY, peer->vote_why))))
		goto err;
	if (peer->cu.state != RDMALOG_CATCHUP_NONE &&
	    (nla_put_u64_64bit(skb, RDMALOG_PEER_A_CATCHUP_LEFT, peer->cu.left,
			       RDMALOG_PEER_A_PAD) ||
	     nla_put_u64_64bit(skb, RDMALOG_PEER_A_CATCHUP_RATE, peer->cu.rate,
			       RDMALOG_PEER_A_PAD)))
		goto err;
	nla_nest_end(skb, nest);
	return 0;

err:
	nla_nest_cancel(skb, nest);
	return -EMSGSIZE;
}

/* This node's id; left out while unset (0). */
int rdmalog_nl_put_node_id(struct sk_buff *skb, u32 node_id)
{
	if (!node_id)
		return 0;
	return nla_put_u32(skb, RDMALOG_A_NODE_ID, node_id);
}

/* The cluster id; left out while unset (0), and unless @priv. */
static int rdmalog_nl_put_cluster_id(struct sk_buff *skb, u64 cluster_id,
				     bool priv)
{
	if (!cluster_id || !priv)
		return 0;
	return nla_put_u64_64bit(skb, RDMALOG_A_CLUSTER_ID, cluster_id,
				 RDMALOG_A_PAD);
}

/* Who may lead, and how a leader change starts. */
static int rdmalog_nl_put_lead(struct sk_buff *skb,
			       const struct rdmalog_node_config *cfg)
{
	if (nla_put_u32(skb, RDMALOG_A_FAILOVER, cfg->failover) ||
	    nla_put_u32(skb, RDMALOG_A_PRIORITY, cfg->priority) ||
	    nla_put_u8(skb, RDMALOG_A_LEAD, cfg->lead))
		return -EMSGSIZE;
	return 0;
}

/*
 * NODE_GET's attributes but NODE_ID (the caller puts that one first);
 * settings not made yet (cluster id, address) are left out, and unless
 * @priv the cluster id, address and port.
 */
int rdmalog_nl_put_node(struct sk_buff *skb,
			const struct rdmalog_node_config *cfg, u64 epoch,
			bool priv)
{
	if (rdmalog_nl_put_cluster_id(skb, cfg->cluster_id, priv) ||
	    rdmalog_nl_put_addr(skb, RDMALOG_A_ADDR, RDMALOG_A_PORT,
				&cfg->listen, priv) ||
	    nla_put_u32(skb, RDMALOG_A_ROLE, cfg->role) ||
	    nla_put_u64_64bit(skb, RDMALOG_A_EPOCH, epoch, RDMALOG_A_PAD) ||
	    nla_put_u32(skb, RDMALOG_A_HEARTBEAT_MS, cfg->heartbeat_ms) ||
	    nla_put_u32(skb, RDMALOG_A_PEER_TIMEOUT_MS, cfg->peer_timeout_ms) ||
	    nla_put_u32(skb, RDMALOG_A_AUTH, cfg->auth ?
			RDMALOG_AUTH_HMAC_SHA256 : RDMALOG_AUTH_NONE) ||
	    rdmalog_nl_put_lead(skb, cfg))
		return -EMSGSIZE;
	return 0;
}

/* LOG_GET's attributes. */
int rdmalog_nl_put_log(struct sk_buff *skb,
		       const struct rdmalog_node_config *cfg)
{
	if (nla_put_u64_64bit(skb, RDMALOG_A_CAPACITY, cfg->capacity,
			      RDMALOG_A_PAD) ||
	    nla_put_u32(skb, RDMALOG_A_MAX_RECORD, cfg->max_record) ||
	    nla_put_u32(skb, RDMALOG_A_DURABILITY, cfg->durability) ||
	    nla_put_u32(skb, RDMALOG_A_COMMIT_TIMEOUT_MS,
			cfg->commit_timeout_ms))
		return -EMSGSIZE;
	return 0;
}

static struct sk_buff *rdmalog_nl_reply_new_size(struct genl_info *info,
						 void **hdr, size_t size)
{
	struct sk_buff *skb;

	skb = genlmsg_new(size, GFP_KERNEL);
	if (!skb)
		return NULL;
	*hdr = genlmsg_put_reply(skb, info, &rdmalog_nl_family, 0,
				 info->genlhdr->cmd);
	if (!*hdr) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

static struct sk_buff *rdmalog_nl_reply_new(struct genl_info *info,
					    void **hdr)
{
	return rdmalog_nl_reply_new_size(info, hdr, NLMSG_GOODSIZE);
}

/* Send the reply, or free it and return @err when filling it failed. */
static int rdmalog_nl_reply_send(struct sk_buff *skb, void *hdr,
				 struct genl_info *info, int err)
{
	if (err) {
		nlmsg_free(skb);
		return err;
	}
	genlmsg_end(skb, hdr);
	return genlmsg_reply(skb, info);
}

/*
 * For a GET that takes no attribute: a consistent snapshot of the node,
 * allocated (several KiB with the peers: too much for the stack). The
 * caller kfree()s it.
 */
static struct rdmalog_node_status *
rdmalog_nl_status_snapshot(struct genl_info *info)
{
	struct rdmalog_node_status *st;
	int err;

	err = rdmalog_nl_attrs(info, 0);
	if (err < 0)
		return ERR_PTR(err);
	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return ERR_PTR(-ENOMEM);
	rdmalog_node_get_status(st);
	return st;
}

static int rdmalog_nl_node_get(struct sk_buff *skb, struct genl_info *info)
{
	struct rdmalog_node_status *st;
	struct sk_buff *msg;
	void *hdr;
	int err;

	/* The status, for the config and epoch read together. */
	st = rdmalog_nl_status_snapshot(info);
	if (IS_ERR(st))
		return PTR_ERR(st);

	err = -ENOMEM;
	msg = rdmalog_nl_reply_new(info, &hdr);
	if (!msg)
		goto out_free;
	err = -EMSGSIZE;
	if (!rdmalog_nl_put_node_id(msg, st->config.node_id) &&
	    !rdmalog_nl_put_node(msg, &st->config, st->epoch,
				 rdmalog_nl_privileged(skb)))
		err = 0;
	err = rdmalog_nl_reply_send(msg, hdr, info, err);
out_free:
	kfree(st);
	return err;
}

/*
 * The start of NODE_SET and LOG_SET: only @allowed attributes and at least
 * one of them.
 */
static int rdmalog_nl_set_begin(struct genl_info *info, u64 allowed)
{
	int n = rdmalog_nl_attrs(info, allowed);

	if (n < 0)
		return n;
	if (!n) {
		NL_SET_ERR_MSG(info->extack, "nothing to set");
		return -EINVAL;
	}
	return 0;
}

/*
 * NODE_SET's attributes (@arg: the request's) overlaid on @cfg, a copy of
 * the current configuration: called by rdmalog_node_set_config() under
 * the node's config_mutex, so that the rest of the configuration is what
 * it is when the change applies, not when the request came.
 */
static void rdmalog_nl_node_overlay(struct rdmalog_node_config *cfg,
				    const void *arg)
{
	struct nlattr *const *a = arg;

	if (a[RDMALOG_A_NODE_ID])
		cfg->node_id = nla_get_u32(a[RDMALOG_A_NODE_ID]);
	if (a[RDMALOG_A_CLUSTER_ID])
		cfg->cluster_id = nla_get_u64(a[RDMALOG_A_CLUSTER_ID]);
	if (a[RDMALOG_A_ADDR]) {
		memset(cfg->listen.addr, 0, sizeof(cfg->listen.addr));
		cfg->listen.len = nla_len(a[RDMALOG_A_ADDR]);
		nla_memcpy(cfg->listen.addr, a[RDMALOG_A_ADDR],
			   sizeof(cfg->listen.addr));
	}
	if (a[RDMALOG_A_PORT])
		cfg->listen.port = nla_get_u16(a[RDMALOG_A_PORT]);
	if (a[RDMALOG_A_ROLE])
		cfg->role = nla_get_u32(a[RDMALOG_A_ROLE]);
	if (a[RDMALOG_A_HEARTBEAT_MS])
		cfg->heartbeat_ms = nla_get_u32(a[RDMALOG_A_HEARTBEAT_MS]);
	if (a[RDMALOG_A_PEER_TIMEOUT_MS])
		cfg->peer_timeout_ms =
			nla_get_u32(a[RDMALOG_A_PEER_TIMEOUT_MS]);
	if (a[RDMALOG_A_FAILOVER])
		cfg->failover = nla_get_u32(a[RDMALOG_A_FAILOVER]);
	if (a[RDMALOG_A_PRIORITY])
		cfg->priority = nla_get_u32(a[RDMALOG_A_PRIORITY]);
	if (a[RDMALOG_A_LEAD])
		cfg->lead = nla_get_u8(a[RDMALOG_A_LEAD]);
}

static int rdmalog_nl_node_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	int err;

	err = rdmalog_nl_set_begin(info, RDMALOG_NL_NODE_SET_ATTRS);
	if (err)
		return err;
	/* The secret is used where it lies in the request, never copied. */
	if (a[RDMALOG_A_SECRET])
		return rdmalog_node_set_config(rdmalog_nl_node_overlay, a,
					       nla_data(a[RDMALOG_A_SECRET]),
					       nla_len(a[RDMALOG_A_SECRET]),
					       info->extack);
	return rdmalog_node_set_config(rdmalog_nl_node_overlay, a, NULL, -1,
				       info->extack);
}

/*
 * The peer of PEER_ADD (NODE_ID ADDR [PORT], PORT defaulting to
 * RDMALOG_DEFAULT_PORT), PEER_DEL or PEER_GET (NODE_ID), as top-level
 * attributes; the PEER nest only ever goes from the kernel to users.
 */
static int rdmalog_nl_get_peer(struct genl_info *info, bool need_addr,
			       struct rdmalog_peer_info *peer)
{
	struct nlattr **a = info->attrs;

	memset(peer, 0, sizeof(*peer));
	if (GENL_REQ_ATTR_CHECK(info, RDMALOG_A_NODE_ID)) {
		NL_SET_ERR_MSG(info->extack, "missing attribute: NODE_ID");
		return -EINVAL;
	}
	if (need_addr && GENL_REQ_ATTR_CHECK(info, RDMALOG_A_ADDR)) {
		NL_SET_ERR_MSG(info->extack, "missing attribute: ADDR");
		return -EINVAL;
	}
	if (!need_addr && (a[RDMALOG_A_ADDR] || a[RDMALOG_A_PORT])) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    a[RDMALOG_A_ADDR] ?: a[RDMALOG_A_PORT],
				    "attribute not valid for this command");
		return -EINVAL;
	}

	peer->node_id = nla_get_u32(a[RDMALOG_A_NODE_ID]);
	if (a[RDMALOG_A_ADDR]) {
		peer->addr.len = nla_len(a[RDMALOG_A_ADDR]);
		nla_memcpy(peer->addr.addr, a[RDMALOG_A_ADDR],
			   sizeof(peer->addr.addr));
	}
	peer->addr.port = a[RDMALOG_A_PORT] ? nla_get_u16(a[RDMALOG_A_PORT]) :
			  RDMALOG_DEFAULT_PORT;
	peer->state = RDMALOG_PEER_CONFIGURED;
	return 0;
}

static int rdmalog_nl_peer_add(struct sk_buff *skb, struct genl_info *info)
{
	struct rdmalog_peer_info peer;
	int err;

	err = rdmalog_nl_attrs(info, RDMALOG_NL_PEER_ATTRS);
	if (err < 0)
		return err;
	err = rdmalog_nl_get_peer(info, true, &peer);
	if (err)
		return err;
	return rdmalog_node_peer_add(&peer, info->extack);
}

static int rdmalog_nl_peer_del(struct sk_buff *skb, struct genl_info *info)
{
	struct rdmalog_peer_info peer;
	int err;

	err = rdmalog_nl_attrs(info, RDMALOG_NL_PEER_ID_ATTRS);
	if (err < 0)
		return err;
	err = rdmalog_nl_get_peer(info, false, &peer);
	if (err)
		return err;
	err = rdmalog_node_peer_del(peer.node_id, info->extack);
	if (err == -ENOENT)
		NL_SET_BAD_ATTR(info->extack, info->attrs[RDMALOG_A_NODE_ID]);
	return err;
}

static int rdmalog_nl_peer_get(struct sk_buff *skb, struct genl_info *info)
{
	struct rdmalog_peer_info peer;
	struct sk_buff *msg;
	void *hdr;
	int err;

	err = rdmalog_nl_attrs(info, RDMALOG_NL_PEER_ID_ATTRS);
	if (err < 0)
		return err;
	err = rdmalog_nl_get_peer(info, false, &peer);
	if (err)
		return err;
	err = rdmalog_node_peer_get(peer.node_id, &peer);
	if (err) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[RDMALOG_A_NODE_ID],
				    "no peer with this node id");
		return err;
	}

	msg = rdmalog_nl_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;
	err = rdmalog_nl_put_peer(msg, RDMALOG_A_PEER, &peer,
				  rdmalog_nl_privileged(skb));
	return rdmalog_nl_reply_send(msg, hdr, info, err);
}

/*
 * A peer dump works on a snapshot taken in .start, so it is consistent
 * however many messages it takes; .done frees it. Whether the requester
 * sees addresses is decided in .start too: the later rounds run in
 * whichever process reads the socket.
 */
struct rdmalog_nl_peer_dump {
	struct rdmalog_peer_info *peers;
	u32 npeers;
	u32 next;
	bool priv;
};

static struct rdmalog_nl_peer_dump *
rdmalog_nl_peer_dump_ctx(struct netlink_callback *cb)
{
	BUILD_BUG_ON(sizeof(struct rdmalog_nl_peer_dump) > sizeof(cb->ctx));
	return (struct rdmalog_nl_peer_dump *)cb->ctx;
}

static int rdmalog_nl_peer_dump_start(struct netlink_callback *cb)
{
	struct rdmalog_nl_peer_dump *ctx = rdmalog_nl_peer_dump_ctx(cb);
	struct nlattr **attrs = rdmalog_genl_dump_attrs(cb);
	u32 i, n, only = 0;
	int type;

	/*
	 * Every peer, or with NODE_ID just that one (none if unknown). Any
	 * other attribute is refused; in 6.1 .start has no extack to say so.
	 */
	for (type = RDMALOG_A_UNSPEC + 1; attrs && type <= RDMALOG_A_MAX;
	     type++) {
		if (!attrs[type])
			continue;
		if (type != RDMALOG_A_NODE_ID ||
		    rdmalog_nl_check_value(type, attrs[type], NULL))
			return -EINVAL;
		only = nla_get_u32(attrs[type]);
	}

	ctx->peers = kcalloc(RDMALOG_MAX_PEERS, sizeof(*ctx->peers),
			     GFP_KERNEL);
	if (!ctx->peers)
		return -ENOMEM;
	n = rdmalog_node_peers(ctx->peers, RDMALOG_MAX_PEERS);
	ctx->npeers = 0;
	for (i = 0; i < n; i++)
		if (!only || ctx->peers[i].node_id == only)
			ctx->peers[ctx->npeers++] = ctx->peers[i];
	ctx->next = 0;
	ctx->priv = rdmalog_nl_privileged(cb->skb);
	return 0;
}

static int rdmalog_nl_peer_dump(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct rdmalog_nl_peer_dump *ctx = rdmalog_nl_peer_dump_ctx(cb);
	void *hdr;

	while (ctx->next < ctx->npeers) {
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &rdmalog_nl_family,
				  NLM_F_MULTI, RDMALOG_CMD_PEER_GET);
		if (!hdr)
			break;
		if (rdmalog_nl_put_peer(skb, RDMALOG_A_PEER,
					&ctx->peers[ctx->next], ctx->priv)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		ctx->next++;
	}
	return skb->len;
}

static int rdmalog_nl_peer_dump_done(struct netlink_callback *cb)
{
	struct rdmalog_nl_peer_dump *ctx = rdmalog_nl_peer_dump_ctx(cb);

	kfree(ctx->peers);
	ctx->peers = NULL;
	return 0;
}

static int rdmalog_nl_log_get(struct sk_buff *skb, struct genl_info *info)
{
	struct rdmalog_node_config cfg;
	struct sk_buff *msg;
	void *hdr;
	int err;

	err = rdmalog_nl_attrs(info, 0);
	if (err < 0)
		return err;
	rdmalog_node_get_config(&cfg);
	msg = rdmalog_nl_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;
	err = rdmalog_nl_put_log(msg, &cfg);
	return rdmalog_nl_reply_send(msg, hdr, info, err);
}

/* LOG_SET's attributes overlaid, as rdmalog_nl_node_overlay(). */
static void rdmalog_nl_log_overlay(struct rdmalog_node_config *cfg,
				   const void *arg)
{
	struct nlattr *const *a = arg;

	if (a[RDMALOG_A_CAPACITY])
		cfg->capacity = nla_get_u64(a[RDMALOG_A_CAPACITY]);
	if (a[RDMALOG_A_MAX_RECORD])
		cfg->max_record = nla_get_u32(a[RDMALOG_A_MAX_RECORD]);
	if (a[RDMALOG_A_DURABILITY])
		cfg->durability = nla_get_u32(a[RDMALOG_A_DURABILITY]);
	if (a[RDMALOG_A_COMMIT_TIMEOUT_MS])
		cfg->commit_timeout_ms =
			nla_get_u32(a[RDMALOG_A_COMMIT_TIMEOUT_MS]);
}

static int rdmalog_nl_log_set(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	err = rdmalog_nl_set_begin(info, RDMALOG_NL_LOG_SET_ATTRS);
	if (err)
		return err;
	return rdmalog_node_set_config(rdmalog_nl_log_overlay, info->attrs,
				       NULL, -1, info->extack);
}

static int rdmalog_nl_up(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	err = rdmalog_nl_attrs(info, 0);
	if (err < 0)
		return err;
	return rdmalog_node_up(info->extack);
}

static int rdmalog_nl_down(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	err = rdmalog_nl_attrs(info, 0);
	if (err < 0)
		return err;
	return rdmalog_node_down(info->extack);
}

static int rdmalog_nl_promote(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	err = rdmalog_nl_attrs(info, 0);
	if (err < 0)
		return err;
	return rdmalog_node_promote(info->extack);
}

static int rdmalog_nl_switchover(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	err = rdmalog_nl_attrs(info, BIT_ULL(RDMALOG_A_NODE_ID));
	if (err < 0)
		return err;
	if (GENL_REQ_ATTR_CHECK(info, RDMALOG_A_NODE_ID)) {
		NL_SET_ERR_MSG(info->extack, "missing attribute: NODE_ID");
		return -EINVAL;
	}
	err = rdmalog_node_switchover(nla_get_u32(info->attrs[RDMALOG_A_NODE_ID]),
				      info->extack);
	if (err == -ENOENT)
		NL_SET_BAD_ATTR(info->extack, info->attrs[RDMALOG_A_NODE_ID]);
	return err;
}

/* The last change of role, if any (STATUS_GET). */
static int rdmalog_nl_put_change(struct sk_buff *skb,
				 const struct rdmalog_node_change *ch)
{
	u64 ago = div_u64(ktime_get_boottime_ns() - ch->done_ns,
			  NSEC_PER_MSEC);
	bool won = ch->why == RDMALOG_CHANGE_PROMOTED ||
		   ch->why == RDMALOG_CHANGE_STOOD ||
		   ch->why == RDMALOG_CHANGE_TOOK_OVER;

	if (!ch->why)
		return 0;
	if (nla_put_u32(skb, RDMALOG_A_CHANGE, ch->why) ||
	    nla_put_u64_64bit(skb, RDMALOG_A_CHANGE_EPOCH, ch->epoch,
			      RDMALOG_A_PAD) ||
	    nla_put_u64_64bit(skb, RDMALOG_A_CHANGE_AGO_MS, ago,
			      RDMALOG_A_PAD))
		return -EMSGSIZE;
	if (ch->why == RDMALOG_CHANGE_STOOD &&
	    nla_put_u32(skb, RDMALOG_A_CHANGE_DETECT_MS, ch->detect_ms))
		return -EMSGSIZE;
	if (won &&
	    (nla_put_u32(skb, RDMALOG_A_CHANGE_ELECT_MS, ch->elect_ms) ||
	     nla_put_u32(skb, RDMALOG_A_CHANGE_FENCE_MS, ch->fence_ms) ||
	     nla_put_u32(skb, RDMALOG_A_CHANGE_RECONCILE_MS,
			 ch->reconcile_ms)))
		return -EMSGSIZE;
	return 0;
}

static int rdmalog_nl_put_status(struct sk_buff *skb,
				 const struct rdmalog_node_status *st, bool priv)
{
	const struct rdmalog_node_config *cfg = &st->config;
	struct nlattr *peers;
	u32 i;

	if (nla_put_u8(skb, RDMALOG_A_UP, st->up) ||
	    rdmalog_nl_put_node_id(skb, cfg->node_id) ||
	    rdmalog_nl_put_cluster_id(skb, cfg->cluster_id, priv) ||
	    nla_put_u32(skb, RDMALOG_A_ROLE, cfg->role) ||
	    nla_put_u64_64bit(skb, RDMALOG_A_EPOCH, st->epoch,
			      RDMALOG_A_PAD) ||
	    nla_put_u32(skb, RDMALOG_A_DURABILITY, cfg->durability) ||
	    nla_put_u32(skb, RDMALOG_A_DURABILITY_EFFECTIVE,
			st->durability_effective) ||
	    nla_put_string(skb, RDMALOG_A_STATUS_MSG, st->msg) ||
	    nla_put_u64_64bit(skb, RDMALOG_A_CAPACITY, st->log.capacity,
			      RDMALOG_A_PAD) ||
	    nla_put_u32(skb, RDMALOG_A_MAX_RECORD, st->log.max_record) ||
	    nla_put_u32(skb, RDMALOG_A_OPENERS, rdmalog_chardev_openers()) ||
	    nla_put_u32(skb, RDMALOG_A_HEARTBEAT_MS, cfg->heartbeat_ms) ||
	    nla_put_u32(skb, RDMALOG_A_PEER_TIMEOUT_MS, cfg->peer_timeout_ms) ||
	    nla_put_u32(skb, RDMALOG_A_AUTH, cfg->auth ?
			RDMALOG_AUTH_HMAC_SHA256 : RDMALOG_AUTH_NONE) ||
	    nla_put_u8(skb, RDMALOG_A_DURABILITY_DEGRADED,
		       st->up &&
		       st->durability_effective != cfg->durability) ||
	    nla_put_u32(skb, RDMALOG_A_BACKUPS_IN_SYNC, st->in_sync) ||
	    nla_put_u32(skb, RDMALOG_A_BACKUPS_NEEDED, st->needed) ||
	    rdmalog_nl_put_lead(skb, cfg))
		return -EMSGSIZE;
	if (st->primary &&
	    (nla_put_u32(skb, RDMALOG_A_PRIMARY, st->primary) ||
	     nla_put_u64_64bit(skb, RDMALOG_A_PRIMARY_EPOCH,
			       st->primary_epoch, RDMALOG_A_PAD)))
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, RDMALOG_A_ELECT_EPOCH, st->elect.epoch,
			      RDMALOG_A_PAD) ||
	    nla_put_u64_64bit(skb, RDMALOG_A_VOTE_EPOCH, st->elect.vote_epoch,
			      RDMALOG_A_PAD) ||
	    (st->elect.vote_epoch &&
	     nla_put_u32(skb, RDMALOG_A_VOTE_FOR, st->elect.vote_for)) ||
	    nla_put_u8(skb, RDMALOG_A_LEARNED, st->elect.learned) ||
	    nla_put_u32(skb, RDMALOG_A_LEARN_HEARD, st->elect.heard) ||
	    nla_put_u32(skb, RDMALOG_A_LEARN_NEEDED, st->elect.needed) ||
	    nla_put_u32(skb, RDMALOG_A_BALLOT, st->ballot.state) ||
	    (st->elect.wait_ms &&
	     nla_put_u32(skb, RDMALOG_A_LEARN_WAIT_MS, st->elect.wait_ms)))
		return -EMSGSIZE;
	if (st->ballot.state == RDMALOG_BALLOT_READY &&
	    nla_put_u64_64bit(skb, RDMALOG_A_BALLOT_WORD, st->ballot.word,
			      RDMALOG_A_PAD))
		return -EMSGSIZE;
	if (st->ballot.state != RDMALOG_BALLOT_READY &&
	    st->ballot.state != RDMALOG_BALLOT_DOWN && st->ballot.msg[0] &&
	    nla_put_string(skb, RDMALOG_A_BALLOT_MSG, st->ballot.msg))
		return -EMSGSIZE;
	if (rdmalog_nl_put_change(skb, &st->change))
		return -EMSGSIZE;

	/* The indices of a log exist only while it is up. */
	if (st->up &&
	    (nla_put_u64_64bit(skb, RDMALOG_A_FIRST_LSN, st->log.first_lsn,
			       RDMALOG_A_PAD) ||
	     nla_put_u64_64bit(skb, RDMALOG_A_COMMIT_LSN, st->log.commit_lsn,
			       RDMALOG_A_PAD) ||
	     nla_put_u64_64bit(skb, RDMALOG_A_NEXT_LSN, st->log.next_lsn,
			       RDMALOG_A_PAD) ||
	     nla_put_u64_64bit(skb, RDMALOG_A_USED, st->log.used,
			       RDMALOG_A_PAD) ||
	     nla_put_u64_64bit(skb, RDMALOG_A_LOG_ID, st->log.id,
			       RDMALOG_A_PAD) ||
	     nla_put_u64_64bit(skb, RDMALOG_A_LOG_EPOCH, st->log.epoch,
			       RDMALOG_A_PAD)))
		return -EMSGSIZE;

	peers = nla_nest_start(skb, RDMALOG_A_PEERS);
	if (!peers)
		return -EMSGSIZE;
	for (i = 0; i < st->npeers; i++)
		if (rdmalog_nl_put_peer(skb, RDMALOG_A_PEER, &st->peers[i],
					priv))
			return -EMSGSIZE;
	nla_nest_end(skb, peers);
	return 0;
}

static int rdmalog_nl_status_get(struct sk_buff *skb, struct genl_info *info)
{
	struct rdmalog_node_status *st;
	struct sk_buff *msg;
	void *hdr;
	int err;

	st = rdmalog_nl_status_snapshot(info);
	if (IS_ERR(st))
		return PTR_ERR(st);

	err = -ENOMEM;
	/* Every peer may carry a status message: more than a page. */
	msg = rdmalog_nl_reply_new_size(info, &hdr, NLMSG_GOODSIZE +
					RDMALOG_MAX_PEERS *
					RDMALOG_NL_PEER_SIZE);
	if (!msg)
		goto out_free;
	err = rdmalog_nl_put_status(msg, st, rdmalog_nl_privileged(skb));
	err = rdmalog_nl_reply_send(msg, hdr, info, err);
out_free:
	kfree(st);
	return err;
}

static int rdmalog_nl_stats_get(struct sk_buff *skb, struct genl_info *info)
{
	u64 stats[__RDMALOG_STAT_MAX] = {};
	struct sk_buff *msg;
	struct nlattr *nest;
	void *hdr;
	int err, i;

	err = rdmalog_nl_attrs(info, 0);
	if (err < 0)
		return err;
	rdmalog_stats_read(stats);

	msg = rdmalog_nl_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;
	err = -EMSGSIZE;
	nest = nla_nest_start(msg, RDMALOG_A_STATS);
	if (!nest)
		goto out;
	for (i = RDMALOG_STAT_PAD + 1; i <= RDMALOG_STAT_MAX; i++)
		if (nla_put_u64_64bit(msg, i, stats[i], RDMALOG_STAT_PAD))
			goto out;
	nla_nest_end(msg, nest);
	err = 0;
out:
	return rdmalog_nl_reply_send(msg, hdr, info, err);
}

static int rdmalog_nl_trim(struct sk_buff *skb, struct genl_info *info)
{
	int err;

	err = rdmalog_nl_attrs(info, BIT(RDMALOG_A_LSN));
	if (err < 0)
		return err;
	if (GENL_REQ_ATTR_CHECK(info, RDMALOG_A_LSN)) {
		NL_SET_ERR_MSG(info->extack, "missing attribute: LSN");
		return -EINVAL;
	}
	err = rdmalog_node_trim(nla_get_u64(info->attrs[RDMALOG_A_LSN]),
				info->extack);
	if (err == -ERANGE)
		NL_SET_BAD_ATTR(info->extack, info->attrs[RDMALOG_A_LSN]);
	return err;
}

/*
 * GET commands are open to everyone, but show the cluster id and the
 * addresses only to CAP_NET_ADMIN (rdmalog_nl_privileged()); every
 * command that changes something needs CAP_NET_ADMIN in the initial
 * network namespace's user namespace (the family is not netnsok).
 */
static const struct genl_ops rdmalog_nl_ops[] = {
	{
		.cmd = RDMALOG_CMD_NODE_GET,
		.doit = rdmalog_nl_node_get,
	},
	{
		.cmd = RDMALOG_CMD_NODE_SET,
		.doit = rdmalog_nl_node_set,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = RDMALOG_CMD_PEER_ADD,
		.doit = rdmalog_nl_peer_add,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = RDMALOG_CMD_PEER_DEL,
		.doit = rdmalog_nl_peer_del,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = RDMALOG_CMD_PEER_GET,
		.doit = rdmalog_nl_peer_get,
		.start = rdmalog_nl_peer_dump_start,
		.dumpit = rdmalog_nl_peer_dump,
		.done = rdmalog_nl_peer_dump_done,
	},
	{
		.cmd = RDMALOG_CMD_LOG_GET,
		.doit = rdmalog_nl_log_get,
	},
	{
		.cmd = RDMALOG_CMD_LOG_SET,
		.doit = rdmalog_nl_log_set,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = RDMALOG_CMD_UP,
		.doit = rdmalog_nl_up,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = RDMALOG_CMD_DOWN,
		.doit = rdmalog_nl_down,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = RDMALOG_CMD_STATUS_GET,
		.doit = rdmalog_nl_status_get,
	},
	{
		.cmd = RDMALOG_CMD_STATS_GET,
		.doit = rdmalog_nl_stats_get,
	},
	{
		.cmd = RDMALOG_CMD_TRIM,
		.doit = rdmalog_nl_trim,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = RDMALOG_CMD_PROMOTE,
		.doit = rdmalog_nl_promote,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = RDMALOG_CMD_SWITCHOVER,
		.doit = rdmalog_nl_switchover,
		.flags = GENL_ADMIN_PERM,
	},
};

/*
 * Registered by rdmalog_netlink_init() during module init, hence
 * __ro_after_init (genl_register_family() writes id and mcgrp_offset).
 * parallel_ops: our callbacks run without genl_mutex (see the top).
 *
 * resv_start_op is the first command that genetlink checks fully: reserved
 * genlmsghdr byte 0, only REQUEST/ACK/ECHO/DUMP in nlmsg_flags, and no
 * attribute without a policy. 0 (as for every new family) makes that every
 * command; a value past the last command would switch it off for all.
 * Attribute parsing is strict for every command either way (no op sets
 * GENL_DONT_VALIDATE_*).
 */
struct genl_family rdmalog_nl_family __ro_after_init = {
	.name = RDMALOG_GENL_NAME,
	.version = RDMALOG_GENL_VERSION,
	.maxattr = RDMALOG_A_MAX,
	.policy = rdmalog_nl_policy,
	.netnsok = false,
	.parallel_ops = true,
	.resv_start_op = 0,
	.module = THIS_MODULE,
	.ops = rdmalog_nl_ops,
	.n_ops = ARRAY_SIZE(rdmalog_nl_ops),
	.mcgrps = rdmalog_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(rdmalog_nl_mcgrps),
};

/**
 * rdmalog_netlink_init() - register the family; the last step of module init
 *
 * Return: 0 or the error of genl_register_family().
 */
int rdmalog_netlink_init(void)
{
	int err;

	err = genl_register_family(&rdmalog_nl_family);
	if (err)
		return err;
	WRITE_ONCE(rdmalog_nl_registered, true);
	return 0;
}

/**
 * rdmalog_netlink_exit() - unregister the family; the first step of exit
 *
 * Waits for running requests (genl_unregister_family() takes genetlink's
 * cb_lock for writing; every request holds it for reading);
 * events from node.c after this are dropped.
 */
void rdmalog_netlink_exit(void)
{
	WRITE_ONCE(rdmalog_nl_registered, false);
	genl_unregister_family(&rdmalog_nl_family);
}
