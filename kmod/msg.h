/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - the peer protocol above the transport: which messages there
 * are, how long each is, what must have happened on the connection
 * before it is taken, and whose it is (msg.c).
 */
#ifndef _RDMALOG_MSG_H
#define _RDMALOG_MSG_H

struct rdmalog_ep_ops;

/* The transport's view of the protocol: main.c registers it at init. */
extern const struct rdmalog_ep_ops rdmalog_msg_ops;

#endif /* _RDMALOG_MSG_H */
