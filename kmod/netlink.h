/* SPDX-License-Identifier: GPL-2.0 */
/* rdmalog - the "rdmalog" generic netlink family. */
#ifndef _RDMALOG_NETLINK_H
#define _RDMALOG_NETLINK_H

#include <linux/types.h>
#include "../uapi/rdmalog_genl.h"

struct rdmalog_peer_info;

int rdmalog_netlink_init(void);
void rdmalog_netlink_exit(void);

/* Notifications on the "events" group; GFP_KERNEL, may sleep. */
void rdmalog_netlink_notify(enum rdmalog_event event);
void rdmalog_netlink_notify_peer(enum rdmalog_event event,
				 const struct rdmalog_peer_info *peer);

#endif /* _RDMALOG_NETLINK_H */
