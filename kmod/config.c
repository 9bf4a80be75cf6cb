// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - the values of a node's configuration: each setting on its
 * own, its range and form, with the reason for the operator (extack).
 * What cannot change while the log is up, and clashes with the peers,
 * are node.c's checks, which know the node's state.
 */
#include <linux/align.h>
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/netlink.h>
#include <linux/types.h>

#include "../uapi/rdmalog_genl.h"
#include "log.h"
#include "node.h"

int rdmalog_config_check(const struct rdmalog_node_config *cfg,
			 const struct rdmalog_node_config *cur,
			 struct netlink_ext_ack *extack)
{
	if (cfg->node_id > RDMALOG_MAX_NODE_ID ||
	    (!cfg->node_id && cur->node_id)) {
		NL_SET_ERR_MSG(extack, "node id must be 1 .. 255");
		return -EINVAL;
	}
	if (!cfg->cluster_id && cur->cluster_id) {
		NL_SET_ERR_MSG(extack, "cluster id must not be 0");
		return -EINVAL;
	}
	if (cfg->listen.len != 4 && cfg->listen.len != 16 &&
	    (cfg->listen.len || cur->listen.len)) {
		NL_SET_ERR_MSG(extack,
			       "listen address must be 4 (IPv4) or 16 (IPv6) bytes");
		return -EINVAL;
	}
	if (!cfg->listen.port) {
		NL_SET_ERR_MSG(extack, "port must be 1 .. 65535");
		return -EINVAL;
	}
	if (cfg->role != RDMALOG_ROLE_PRIMARY &&
	    cfg->role != RDMALOG_ROLE_BACKUP) {
		NL_SET_ERR_MSG(extack, "role must be primary or backup");
		return -EINVAL;
	}
	if (cfg->capacity < RDMALOG_MIN_CAPACITY ||
	    cfg->capacity > RDMALOG_MAX_CAPACITY) {
		NL_SET_ERR_MSG(extack, "capacity must be 64 KiB .. 16 GiB");
		return -EINVAL;
	}
	if (!IS_ALIGNED(cfg->capacity, RDMALOG_CAPACITY_ALIGN)) {
		NL_SET_ERR_MSG(extack,
			       "capacity must be a multiple of 4096 bytes");
		return -EINVAL;
	}
	if (!IS_ALIGNED(cfg->capacity, PAGE_SIZE)) {
		NL_SET_ERR_MSG(extack,
			       "capacity must be a multiple of the kernel's page size");
		return -EINVAL;
	}
	if (!cfg->max_record) {
		NL_SET_ERR_MSG(extack, "max record must be at least 1 byte");
		return -EINVAL;
	}
	if (cfg->max_record > RDMALOG_LOG_MAX_RECORD_LIMIT) {
		NL_SET_ERR_MSG(extack,
			       "max record must be below 2 GiB (one read or write)");
		return -EINVAL;
	}
	if (cfg->max_record > cfg->capacity / 4) {
		if (cfg->capacity != cur->capacity &&
		    cfg->max_record == cur->max_record)
			NL_SET_ERR_MSG(extack,
				       "capacity must be at least 4 x max record; lower the max record first");
		else
			NL_SET_ERR_MSG(extack,
				       "max record must be at most capacity / 4");
		return -EINVAL;
	}
	if (cfg->durability > RDMALOG_DURABLE_ALL) {
		NL_SET_ERR_MSG(extack,
			       "durability must be async, quorum or all");
		return -EINVAL;
	}
	if (!cfg->commit_timeout_ms ||
	    cfg->commit_timeout_ms > RDMALOG_MAX_COMMIT_TIMEOUT_MS) {
		NL_SET_ERR_MSG(extack,
			       "commit timeout must be 1 .. 3600000 ms");
		return -EINVAL;
	}
	if (cfg->heartbeat_ms < RDMALOG_MIN_HEARTBEAT_MS ||
	    cfg->heartbeat_ms > RDMALOG_MAX_HEARTBEAT_MS) {
		NL_SET_ERR_MSG(extack, "heartbeat must be 10 .. 60000 ms");
		return -EINVAL;
	}
	if (cfg->peer_timeout_ms > RDMALOG_MAX_PEER_TIMEOUT_MS) {
		NL_SET_ERR_MSG(extack, "peer timeout must be at most 600000 ms");
		return -EINVAL;
	}
	if (cfg->peer_timeout_ms < 2 * cfg->heartbeat_ms) {
		if (cfg->heartbeat_ms != cur->heartbeat_ms &&
		    cfg->peer_timeout_ms == cur->peer_timeout_ms)
			NL_SET_ERR_MSG(extack,
				       "peer timeout must be at least twice the heartbeat; raise the peer timeout first");
		else
			NL_SET_ERR_MSG(extack,
				       "peer timeout must be at least twice the heartbeat");
		return -EINVAL;
	}
	if (cfg->failover > RDMALOG_FAILOVER_MANUAL) {
		NL_SET_ERR_MSG(extack, "failover must be auto or manual");
		return -EINVAL;
	}
	if (cfg->priority > RDMALOG_MAX_PRIORITY) {
		NL_SET_ERR_MSG(extack, "priority must be 0 .. 255");
		return -EINVAL;
	}
	return 0;
}
