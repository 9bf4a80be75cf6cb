// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - module init and exit only.
 *
 * Init order: the counters (static per-CPU memory, nothing to set up),
 * the replication and forwarding workqueues, the protocol's ops (msg.c)
 * registered with the transport, the peer connections (their
 * workqueue and the ib_client, whose callbacks tear down the connections
 * on a device that goes), the node (which owns the log and starts the
 * connections when it comes up), the character device, and the netlink
 * family last, so that nothing can reach the module before all of it is
 * ready. Exit is the exact reverse: once the netlink family and the
 * character device are gone, the node goes down, which closes every
 * connection and waits until they are released; only then is the
 * ib_client unregistered and the workqueues destroyed. Last, the RDMA
 * device objects and the ring mappings (none may be left) and the
 * counters of live objects are checked.
 * The module cannot be unloaded while a descriptor of /dev/rdmalog is open
 * (the file operations' owner pins it), and netlink requests are drained
 * by genl_unregister_family().
 */
#include <linux/module.h>
#include <linux/init.h>
#include <net/genetlink.h>

#include "chardev.h"
#include "conn.h"
#include "ep.h"
#include "forward.h"
#include "msg.h"
#include "netlink.h"
#include "node.h"
#include "rdma_dev.h"
#include "repl.h"
#include "ring_map.h"
#include "stats.h"

/* From dkms.conf's PACKAGE_VERSION, the one place it is written (Kbuild). */
#ifndef RDMALOG_VERSION
#error "RDMALOG_VERSION is not defined: build with the Kbuild file"
#endif

static int __init rdmalog_init(void)
{
	int ret;

	ret = rdmalog_repl_init();
	if (ret)
		goto err_repl;
	ret = rdmalog_fwd_init();
	if (ret)
		goto err_fwd;
	/* Before the connections: every endpoint's messages go there. */
	rdmalog_ep_set_ops(&rdmalog_msg_ops);
	ret = rdmalog_conn_init();
	if (ret)
		goto err_conn;
	ret = rdmalog_node_init();
	if (ret)
		goto err_node;
	ret = rdmalog_chardev_init();
	if (ret)
		goto err_chardev;
	ret = rdmalog_netlink_init();
	if (ret)
		goto err_netlink;

	pr_info("version " RDMALOG_VERSION " loaded\n");
	return 0;

err_netlink:
	rdmalog_chardev_exit();
err_chardev:
	rdmalog_node_exit();
err_node:
	rdmalog_conn_exit();
err_conn:
	rdmalog_fwd_exit();
err_fwd:
	rdmalog_repl_exit();
err_repl:
	return ret;
}

static void __exit rdmalog_exit(void)
{
	rdmalog_netlink_exit();
	rdmalog_chardev_exit();
	rdmalog_node_exit();
	rdmalog_conn_exit();
	rdmalog_fwd_exit();
	rdmalog_repl_exit();
	rdmalog_rdma_dev_exit();
	rdmalog_ring_map_exit();
	rdmalog_stats_check_exit();
}

module_init(rdmalog_init);
module_exit(rdmalog_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Replicated append-only log over RDMA");
MODULE_AUTHOR("rdmalog developers");
MODULE_VERSION(RDMALOG_VERSION);
MODULE_ALIAS_GENL_FAMILY(RDMALOG_GENL_NAME);
