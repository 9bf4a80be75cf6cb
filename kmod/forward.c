// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog - forwarded appends (placeholder until the FWD path lands):
 * a backup refuses local appends.
 */
#include <linux/errno.h>

#include "ep.h"
#include "forward.h"

int rdmalog_fwd_init(void)
{
	return 0;
}

void rdmalog_fwd_exit(void)
{
}

int rdmalog_fwd_append(struct iov_iter *from, bool nonblock, u64 *lsn)
{
	return -EHOSTUNREACH;
}

void rdmalog_fwd_ep_init(struct rdmalog_ep *ep)
{
}

int rdmalog_fwd_ep_setup(struct rdmalog_ep *ep)
{
	return 0;
}

void rdmalog_fwd_ep_release(struct rdmalog_ep *ep)
{
}

const char *rdmalog_fwd_received(struct rdmalog_ep *ep,
				 const struct rdmalog_msg_fwd *m, u32 len)
{
	return "FWD is not supported yet";
}

const char *rdmalog_fwd_done_received(struct rdmalog_ep *ep,
				      const struct rdmalog_msg_fwd_done *m)
{
	return "FWD_DONE is not supported yet";
}
