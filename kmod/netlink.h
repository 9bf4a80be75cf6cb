/* SPDX-License-Identifier: GPL-2.0 */
/* rdmalog - the "rdmalog" generic netlink family. */
#ifndef _RDMALOG_NETLINK_H
#define _RDMALOG_NETLINK_H

#include <linux/types.h>
#include "../uapi/rdmalog_genl.h"

struct rdmalog_node_config;
struct rdmalog_peer_info;

int rdmalog_netlink_init(void);
void rdmalog_netlink_exit(void);

/*
 * Notifications on the "events" group (RDMALOG_CMD_EVENT), sent by
 * node.c, node_up.c and role.c. The node's own events (UP, DOWN, ROLE,
 * NODE_CHANGED, LOG_CHANGED, PEER_ADDED, PEER_REMOVED, TRIMMED,
 * DURABILITY) are sent with the node's config_mutex held, so that they
 * leave in the order the changes were made. The connections' events come
 * through node_up.c's callback (&struct rdmalog_conn_events), which must
 * not take config_mutex: PEER_STATE is sent under the connection's lock
 * (rdmalog_conn_change_state() in conn.c; config_mutex may or may not be
 * held above it), PEER_JOINED, PEER_DIVERGED and LOG_RESET from the
 * catch-up work with none of our locks held (rdmalog_conn_notify_ep() in
 * conn.c). All allocate with GFP_KERNEL (may sleep), never call back into
 * the node, and are dropped when nobody listens, when memory is short,
 * or when the family is not registered.
 * Every event carries EVENT and this node's NODE_ID (left out while
 * unset), plus what is listed; never the cluster id, an address or a
 * port (see rdmalog_nl_event_new()).
 */

/*
 * @event: RDMALOG_EVENT_UP or _DOWN (NODE_ID, UP), _NODE_CHANGED or _ROLE
 * (the NODE_GET attributes) or _LOG_CHANGED (NODE_ID and the LOG_GET
 * ones).
 */
void rdmalog_netlink_notify_node(enum rdmalog_event event,
				 const struct rdmalog_node_config *cfg,
				 u64 epoch);
/*
 * @event: RDMALOG_EVENT_PEER_ADDED, _REMOVED, _STATE, _JOINED or
 * _DIVERGED (NODE_ID, PEER).
 */
void rdmalog_netlink_notify_peer(enum rdmalog_event event, u32 node_id,
				 const struct rdmalog_peer_info *peer);
/* RDMALOG_EVENT_TRIMMED (NODE_ID, FIRST_LSN). */
void rdmalog_netlink_notify_trimmed(u32 node_id, u64 first_lsn);
/* RDMALOG_EVENT_LOG_RESET (NODE_ID, FIRST_LSN, PEER: the primary). */
void rdmalog_netlink_notify_log_reset(u32 node_id, u64 first_lsn,
				      const struct rdmalog_peer_info *primary);
/*
 * RDMALOG_EVENT_DURABILITY (NODE_ID, DURABILITY, DURABILITY_EFFECTIVE,
 * DURABILITY_DEGRADED, BACKUPS_IN_SYNC, BACKUPS_NEEDED).
 */
void rdmalog_netlink_notify_durability(u32 node_id, u32 requested,
				       u32 effective, u32 in_sync, u32 needed);

#endif /* _RDMALOG_NETLINK_H */
