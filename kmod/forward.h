/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - forwarded appends: a write() on a backup is sent to the
 * primary (FWD), appended there, and answered (FWD_DONE) once committed.
 */
#ifndef _RDMALOG_FORWARD_H
#define _RDMALOG_FORWARD_H

#include <linux/list.h>
#include <linux/types.h>
#include <linux/uio.h>

struct rdmalog_ep;
struct rdmalog_msg_fwd;
struct rdmalog_msg_fwd_done;

/**
 * struct rdmalog_fwd_ep - forwarding state of one connection
 * @placeholder: filled in by forward.c
 */
struct rdmalog_fwd_ep {
	int placeholder;
};

int rdmalog_fwd_init(void);
void rdmalog_fwd_exit(void);

/*
 * Append @from as one record through the primary (this node is a backup).
 * Return: as rdmalog_log_append(), plus -EHOSTUNREACH when no primary is
 * connected.
 */
int rdmalog_fwd_append(struct iov_iter *from, bool nonblock, u64 *lsn);

/* From conn.c. */
void rdmalog_fwd_ep_init(struct rdmalog_ep *ep);
/* Set up what sleeps (MRs); conn lock held, process context. */
int rdmalog_fwd_ep_setup(struct rdmalog_ep *ep);
/* After the QP is drained and destroyed: fail and free what is left. */
void rdmalog_fwd_ep_release(struct rdmalog_ep *ep);
const char *rdmalog_fwd_received(struct rdmalog_ep *ep,
				 const struct rdmalog_msg_fwd *m, u32 len);
const char *rdmalog_fwd_done_received(struct rdmalog_ep *ep,
				      const struct rdmalog_msg_fwd_done *m);

#endif /* _RDMALOG_FORWARD_H */
