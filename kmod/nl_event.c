// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the events of the "rdmalog" generic netlink family, on its
 * "events" multicast group (uapi/rdmalog_genl.h, Documentation/netlink.rst
 * "Events"). node.c, node_up.c and role.c call the
 * rdmalog_netlink_notify_*() functions after a change (netlink.h says
 * under which locks); events are best effort: one that cannot be
 * built is dropped with a warning, and none ever fails the change it
 * reports. The family and the attribute helpers are netlink.c's
 * (kmod/nl_priv.h).
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <net/genetlink.h>

#include "netlink.h"
#include "nl_priv.h"
#include "node.h"

/*
 * Start an event message; NULL when it would reach nobody or cannot be
 * allocated (events are best effort and never fail the change they report).
 *
 * Events never carry the cluster id or an address: anyone may join the
 * group (monitoring needs no privilege), and 6.1 cannot send a message to
 * some members of a group only.
 */
static struct sk_buff *rdmalog_nl_event_new(enum rdmalog_event event,
					    u32 node_id, void **hdr)
{
	struct sk_buff *skb;

	if (!READ_ONCE(rdmalog_nl_registered) ||
	    !genl_has_listeners(&rdmalog_nl_family, &init_net,
				RDMALOG_NL_GROUP_EVENTS))
		return NULL;

	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		goto err;
	*hdr = genlmsg_put(skb, 0, 0, &rdmalog_nl_family, 0,
			   RDMALOG_CMD_EVENT);
	if (!*hdr)
		goto err_free;
	if (nla_put_u32(skb, RDMALOG_A_EVENT, event) ||
	    rdmalog_nl_put_node_id(skb, node_id))
		goto err_free;
	return skb;

err_free:
	nlmsg_free(skb);
err:
	pr_warn_ratelimited("event %u dropped: out of memory\n", event);
	return NULL;
}

/* Send (consuming @skb) or, when filling failed, drop the event. */
static void rdmalog_nl_event_send(struct sk_buff *skb, void *hdr,
				  enum rdmalog_event event, int err)
{
	if (err) {
		nlmsg_free(skb);
		pr_warn_ratelimited("event %u dropped: message too large\n",
				    event);
		return;
	}
	genlmsg_end(skb, hdr);
	/* -ESRCH: the last listener left meanwhile; nothing to do. */
	genlmsg_multicast(&rdmalog_nl_family, skb, 0, RDMALOG_NL_GROUP_EVENTS,
			  GFP_KERNEL);
}

/**
 * rdmalog_netlink_notify_node() - send an event about the node or log
 * @event: %RDMALOG_EVENT_UP, _DOWN, _NODE_CHANGED, _LOG_CHANGED or _ROLE
 * @cfg: the configuration after the change
 * @epoch: the epoch after the change
 */
void rdmalog_netlink_notify_node(enum rdmalog_event event,
				 const struct rdmalog_node_config *cfg,
				 u64 epoch)
{
	struct sk_buff *skb;
	void *hdr;
	int err = 0;

	skb = rdmalog_nl_event_new(event, cfg->node_id, &hdr);
	if (!skb)
		return;
	switch (event) {
	case RDMALOG_EVENT_UP:
	case RDMALOG_EVENT_DOWN:
		err = nla_put_u8(skb, RDMALOG_A_UP, event == RDMALOG_EVENT_UP);
		break;
	case RDMALOG_EVENT_NODE_CHANGED:
	case RDMALOG_EVENT_ROLE:
		err = rdmalog_nl_put_node(skb, cfg, epoch, false);
		break;
	case RDMALOG_EVENT_LOG_CHANGED:
		err = rdmalog_nl_put_log(skb, cfg);
		break;
	default:
		WARN_ON_ONCE(1);
		err = -EINVAL;
		break;
	}
	rdmalog_nl_event_send(skb, hdr, event, err);
}

/**
 * rdmalog_netlink_notify_peer() - send an event about a peer
 * @event: %RDMALOG_EVENT_PEER_ADDED, _PEER_REMOVED, _PEER_STATE,
 *	_PEER_JOINED or _PEER_DIVERGED
 * @node_id: this node's id
 * @peer: the peer (as it was, for _PEER_REMOVED)
 */
void rdmalog_netlink_notify_peer(enum rdmalog_event event, u32 node_id,
				 const struct rdmalog_peer_info *peer)
{
	struct sk_buff *skb;
	void *hdr;

	skb = rdmalog_nl_event_new(event, node_id, &hdr);
	if (!skb)
		return;
	rdmalog_nl_event_send(skb, hdr, event,
			      rdmalog_nl_put_peer(skb, RDMALOG_A_PEER, peer,
						  false));
}

/**
 * rdmalog_netlink_notify_trimmed() - send %RDMALOG_EVENT_TRIMMED
 * @node_id: this node's id
 * @first_lsn: the oldest retained LSN after the trim
 */
void rdmalog_netlink_notify_trimmed(u32 node_id, u64 first_lsn)
{
	struct sk_buff *skb;
	void *hdr;

	skb = rdmalog_nl_event_new(RDMALOG_EVENT_TRIMMED, node_id, &hdr);
	if (!skb)
		return;
	rdmalog_nl_event_send(skb, hdr, RDMALOG_EVENT_TRIMMED,
			      nla_put_u64_64bit(skb, RDMALOG_A_FIRST_LSN,
						first_lsn, RDMALOG_A_PAD));
}

/**
 * rdmalog_netlink_notify_log_reset() - send %RDMALOG_EVENT_LOG_RESET
 * @node_id: this node's id
 * @first_lsn: where the log restarted
 * @primary: the primary it catches up from
 */
void rdmalog_netlink_notify_log_reset(u32 node_id, u64 first_lsn,
				      const struct rdmalog_peer_info *primary)
{
	struct sk_buff *skb;
	void *hdr;

	skb = rdmalog_nl_event_new(RDMALOG_EVENT_LOG_RESET, node_id, &hdr);
	if (!skb)
		return;
	rdmalog_nl_event_send(skb, hdr, RDMALOG_EVENT_LOG_RESET,
			      nla_put_u64_64bit(skb, RDMALOG_A_FIRST_LSN,
						first_lsn, RDMALOG_A_PAD) ?:
			      rdmalog_nl_put_peer(skb, RDMALOG_A_PEER,
						  primary, false));
}

/**
 * rdmalog_netlink_notify_durability() - send %RDMALOG_EVENT_DURABILITY
 * @node_id: this node's id
 * @requested: &enum rdmalog_durability requested
 * @effective: &enum rdmalog_durability in force
 * @in_sync: backups in sync
 * @needed: backups @requested needs
 */
void rdmalog_netlink_notify_durability(u32 node_id, u32 requested,
				       u32 effective, u32 in_sync, u32 needed)
{
	struct sk_buff *skb;
	void *hdr;
	int err;

	skb = rdmalog_nl_event_new(RDMALOG_EVENT_DURABILITY, node_id, &hdr);
	if (!skb)
		return;
	err = nla_put_u32(skb, RDMALOG_A_DURABILITY, requested) ||
	      nla_put_u32(skb, RDMALOG_A_DURABILITY_EFFECTIVE, effective) ||
	      nla_put_u8(skb, RDMALOG_A_DURABILITY_DEGRADED,
			 effective != requested) ||
	      nla_put_u32(skb, RDMALOG_A_BACKUPS_IN_SYNC, in_sync) ||
	      nla_put_u32(skb, RDMALOG_A_BACKUPS_NEEDED, needed) ?
	      -EMSGSIZE : 0;
	rdmalog_nl_event_send(skb, hdr, RDMALOG_EVENT_DURABILITY, err);
}
