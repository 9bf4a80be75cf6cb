/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - private to the netlink family's two files: netlink.c (the
 * family, its policy and commands) and nl_event.c (the events on its
 * "events" group). Nothing else includes it; the rest of the module sees
 * netlink.h.
 */
#ifndef _RDMALOG_NL_PRIV_H
#define _RDMALOG_NL_PRIV_H

#include <linux/types.h>
#include <net/genetlink.h>

struct rdmalog_node_config;
struct rdmalog_peer_info;

enum rdmalog_nl_groups {
	RDMALOG_NL_GROUP_EVENTS,
};

/* netlink.c: the family, registered by rdmalog_netlink_init(). */
extern struct genl_family rdmalog_nl_family;
/*
 * Set once the family is registered, cleared before it is unregistered:
 * events are sent only in between. Written in module init and exit only.
 */
extern bool rdmalog_nl_registered;

/*
 * The attributes of a reply or event (netlink.c); each returns 0 or
 * -EMSGSIZE. @priv: the receiver may see the cluster id and addresses.
 */
/* A PEER nest of type @type describing @peer. */
int rdmalog_nl_put_peer(struct sk_buff *skb, int type,
			const struct rdmalog_peer_info *peer, bool priv);
/* NODE_ID, unless 0 (not set yet). */
int rdmalog_nl_put_node_id(struct sk_buff *skb, u32 node_id);
/* NODE_GET's attributes but NODE_ID. */
int rdmalog_nl_put_node(struct sk_buff *skb,
			const struct rdmalog_node_config *cfg, u64 epoch,
			bool priv);
/* LOG_GET's attributes. */
int rdmalog_nl_put_log(struct sk_buff *skb,
		       const struct rdmalog_node_config *cfg);

#endif /* _RDMALOG_NL_PRIV_H */
