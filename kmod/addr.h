/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - a peer's address and the length of its status message: what
 * the node's configuration (node.h) and the connections (conn.h, ep.h)
 * both speak of, so that the transport needs nothing else of node.h.
 */
#ifndef _RDMALOG_ADDR_H
#define _RDMALOG_ADDR_H

#include <linux/types.h>

/* Bytes of a peer's status message (uapi: RDMALOG_PEER_A_MSG), NUL included. */
#define RDMALOG_PEER_MSG_LEN		128

/**
 * struct rdmalog_addr - an IPv4 or IPv6 address and port
 * @len: 4 or 16; 0 when unset
 * @addr: the address, network order, in the first @len bytes
 * @port: host order
 */
struct rdmalog_addr {
	u8 len;
	u8 addr[16];
	u16 port;
};

#endif /* _RDMALOG_ADDR_H */
