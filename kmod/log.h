/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - the log: an in-memory ring of records with LSNs.
 *
 * One struct rdmalog_log exists per "up" period of the node. It is created
 * by rdmalog_node_up(), shut down by rdmalog_node_down() and freed when
 * its last reference goes (every open descriptor holds one).
 */
#ifndef _RDMALOG_LOG_H
#define _RDMALOG_LOG_H

#include <linux/types.h>
#include <linux/poll.h>
#include <linux/uio.h>
#include "../uapi/rdmalog.h"

struct rdmalog_log;

/**
 * struct rdmalog_log_params - what a log is created with
 * @capacity: ring bytes, multiple of PAGE_SIZE
 * @max_record: largest payload, <= capacity / 4
 * @epoch: epoch stamped into appended records
 */
struct rdmalog_log_params {
	u64 capacity;
	u32 max_record;
	u64 epoch;
};

/**
 * struct rdmalog_log_state - a consistent snapshot of the log's indices
 * @first_lsn: oldest retained record (== @next_lsn when empty)
 * @commit_lsn: every LSN below it is committed
 * @next_lsn: LSN of the next append
 * @capacity: ring bytes
 * @used: bytes held by retained records
 * @max_record: largest payload
 * @epoch: current epoch
 */
struct rdmalog_log_state {
	u64 first_lsn;
	u64 commit_lsn;
	u64 next_lsn;
	u64 capacity;
	u64 used;
	u64 max_record;
	u64 epoch;
};

struct rdmalog_log *rdmalog_log_create(const struct rdmalog_log_params *p);
void rdmalog_log_get(struct rdmalog_log *log);
void rdmalog_log_put(struct rdmalog_log *log);
void rdmalog_log_shutdown(struct rdmalog_log *log);
bool rdmalog_log_is_dead(struct rdmalog_log *log);

int rdmalog_log_append(struct rdmalog_log *log, struct iov_iter *from,
		       bool nonblock, u64 *lsn);
ssize_t rdmalog_log_read(struct rdmalog_log *log, u64 lsn,
			 struct iov_iter *to, bool nonblock, bool wait,
			 struct rdmalog_record_header *hdr);
int rdmalog_log_trim(struct rdmalog_log *log, u64 lsn);
void rdmalog_log_get_state(struct rdmalog_log *log,
			   struct rdmalog_log_state *st);
__poll_t rdmalog_log_poll(struct rdmalog_log *log, struct file *file,
			  poll_table *wait, u64 cursor);

#endif /* _RDMALOG_LOG_H */
