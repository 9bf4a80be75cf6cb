/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdmalog - the wire protocol between nodes.
 *
 * Documentation/protocol.rst describes the protocol as a whole; this file
 * holds the formats. Everything on the wire is little-endian and naturally
 * aligned; reserved fields are sent as zero and ignored on receipt. A peer
 * is untrusted: every length, magic and version is checked before anything
 * else of a structure is read (cm.c: the handshake's private data; hello.c:
 * every received message's frame and the transport's own types; msg.c:
 * the lengths of the types above the transport; ring_mr.c: the segments
 * of a RING or CATCHUP).
 *
 * There are three layers:
 *
 * 1. The rdma_cm handshake. The active side puts a &struct rdmalog_cm_hs
 *    in the private data of its connect request; the passive side checks
 *    it and answers with its own &struct rdmalog_cm_hs in the accept, or
 *    with a &struct rdmalog_cm_rej in the reject. 40 bytes fit the 56 bytes
 *    of user private data that a connect request carries on InfiniBand and
 *    RoCE (92 bytes minus the rdma_cm header).
 *
 * 2. Control messages over Send/Recv on the RC queue pair: a
 *    &struct rdmalog_msg_hdr followed by a body whose size is fixed by the
 *    type (HELLO, HEARTBEAT, NOTIFY, WAIT, ACK, FWD_DONE, JOIN), by its segment
 *    count (RING, CATCHUP) or by its inline payload (FWD). Receive buffers are
 *    %RDMALOG_MSG_SIZE bytes.
 *
 * 3. The data path: the primary RDMA-WRITEs its ring's bytes into the
 *    backups' rings at the same offsets (RING grants the access) and
 *    follows them, on the same queue pair, with an RDMA WRITE of its
 *    notice (&struct rdmalog_notice: an APPEND) into the backup's notice
 *    block. No backup CPU takes part: a backup reads its notice block
 *    when something needs it (a reader, a NOTIFY, its state shown). A
 *    backup that is behind first pulls the committed records it lacks
 *    from the primary's ring with RDMA READs (CATCHUP grants the access),
 *    then JOINs.
 */
#ifndef _RDMALOG_PROTO_H
#define _RDMALOG_PROTO_H

#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/types.h>

/** RDMALOG_PROTO_VERSION - the protocol version this module speaks */
#define RDMALOG_PROTO_VERSION		13

/** RDMALOG_CM_MAGIC - "RLCM": first bytes of the handshake and rejections */
#define RDMALOG_CM_MAGIC		0x4d434c52
/** RDMALOG_MSG_MAGIC - "RLMG": first bytes of every control message */
#define RDMALOG_MSG_MAGIC		0x474d4c52

/** RDMALOG_MSG_SIZE - bytes of each receive buffer: the largest message */
#define RDMALOG_MSG_SIZE		256

/**
 * enum rdmalog_cm_flags - &rdmalog_cm_hs.flags
 * @RDMALOG_CM_F_KNOCK: not a connection: the passive side of a pair (the
 *	larger node id) asks the smaller one to connect to it. Always
 *	rejected, with %RDMALOG_REJ_KNOCK_OK when the handshake is valid, so
 *	the knocking side learns both that the peer is there and whether it
 *	would be refused.
 * @RDMALOG_CM_F_AUTH: the sender has a shared secret: both HELLOs of the
 *	connection carry a MAC (&rdmalog_msg_hello.mac). Both sides must
 *	agree, or the request is refused with %RDMALOG_REJ_AUTH
 */
enum rdmalog_cm_flags {
	RDMALOG_CM_F_KNOCK		= 1 << 0,
	RDMALOG_CM_F_AUTH		= 1 << 1,
};

/** RDMALOG_NONCE_SIZE - bytes of each side's nonce in the handshake */
#define RDMALOG_NONCE_SIZE		16
/** RDMALOG_MAC_SIZE - bytes of an HMAC-SHA256 */
#define RDMALOG_MAC_SIZE		32

/**
 * struct rdmalog_cm_hs - handshake in connect and accept private data
 * @magic: %RDMALOG_CM_MAGIC
 * @version: %RDMALOG_PROTO_VERSION
 * @flags: &enum rdmalog_cm_flags; 0 in an accept
 * @recv_depth: receive buffers the sender has posted, 1 .. 1024: the
 *	receiver's initial send credits
 * @src_node: the sender's node id
 * @dst_node: the node id the sender expects at the other end
 * @msg_size: bytes of each of the sender's receive buffers; must be
 *	%RDMALOG_MSG_SIZE in version 1
 * @reserved: zero
 * @cluster_id: the sender's cluster id; must be equal on both sides
 * @epoch: the sender's current epoch (informational in version 1)
 * @capacity: the sender's ring capacity in bytes; must be equal on both
 *	sides (replication writes one ring into the other)
 * @nonce: random bytes, new for every connect and accept: what the
 *	HELLO MACs of the connection are bound to (zero in a knock)
 *
 * The receiver checks @magic and @version first (in the first 8 bytes),
 * then the private data length (at least the size of this structure:
 * InfiniBand pads private data with zeros), before it reads anything else.
 * 56 bytes: all a connect request's private data holds on InfiniBand and
 * RoCE behind the rdma_cm's own header.
 */
struct rdmalog_cm_hs {
	__le32 magic;
	__u8 version;
	__u8 flags;
	__le16 recv_depth;
	__le16 src_node;
	__le16 dst_node;
	__le16 msg_size;
	__le16 reserved;
	__le64 cluster_id;
	__le64 epoch;
	__le64 capacity;
	__u8 nonce[RDMALOG_NONCE_SIZE];
};

static_assert(sizeof(struct rdmalog_cm_hs) == 56);

/**
 * enum rdmalog_cm_reason - &rdmalog_cm_rej.reason
 * @RDMALOG_REJ_NONE: not sent
 * @RDMALOG_REJ_BAD_HANDSHAKE: private data too short or bad magic
 * @RDMALOG_REJ_VERSION: protocol version not spoken; detail: the
 *	rejecting side's version
 * @RDMALOG_REJ_CLUSTER_ID: cluster ids differ; detail: the rejecting
 *	side's cluster id
 * @RDMALOG_REJ_UNKNOWN_PEER: the source node id is not a configured peer
 *	of the rejecting side
 * @RDMALOG_REJ_ADDR_MISMATCH: the source node id is a configured peer,
 *	but the connection does not come from its configured address
 * @RDMALOG_REJ_NODE_ID: @dst_node is not the rejecting side's node id;
 *	detail: the rejecting side's node id
 * @RDMALOG_REJ_CAPACITY: ring capacities differ; detail: the rejecting
 *	side's capacity
 * @RDMALOG_REJ_DIRECTION: the larger node id tried to connect; only the
 *	smaller one connects (the larger one knocks)
 * @RDMALOG_REJ_NOT_READY: the rejecting side is stopping
 * @RDMALOG_REJ_NO_RESOURCES: the rejecting side could not set up the
 *	connection (memory, device limits, device going away)
 * @RDMALOG_REJ_BAD_PARAMS: @recv_depth or @msg_size out of range
 * @RDMALOG_REJ_KNOCK_OK: not a refusal: answer to a valid knock; the
 *	rejecting side (the smaller node id) will connect
 * @RDMALOG_REJ_AUTH: a shared secret is set on one side only; detail: 1
 *	when the rejecting side has one, 0 when not
 * @__RDMALOG_REJ_MAX: number of reasons
 */
enum rdmalog_cm_reason {
	RDMALOG_REJ_NONE,
	RDMALOG_REJ_BAD_HANDSHAKE,
	RDMALOG_REJ_VERSION,
	RDMALOG_REJ_CLUSTER_ID,
	RDMALOG_REJ_UNKNOWN_PEER,
	RDMALOG_REJ_ADDR_MISMATCH,
	RDMALOG_REJ_NODE_ID,
	RDMALOG_REJ_CAPACITY,
	RDMALOG_REJ_DIRECTION,
	RDMALOG_REJ_NOT_READY,
	RDMALOG_REJ_NO_RESOURCES,
	RDMALOG_REJ_BAD_PARAMS,
	RDMALOG_REJ_KNOCK_OK,
	RDMALOG_REJ_AUTH,

	__RDMALOG_REJ_MAX
};

/**
 * struct rdmalog_cm_rej - private data of an rdma_reject()
 * @magic: %RDMALOG_CM_MAGIC
 * @version: the rejecting side's %RDMALOG_PROTO_VERSION
 * @reason: &enum rdmalog_cm_reason
 * @node_id: the rejecting side's node id
 * @detail: reason-specific value, see &enum rdmalog_cm_reason; 0 if none
 *
 * Sent with IB_CM_REJ_CONSUMER_DEFINED; a rejection without it (or too
 * short, or with another magic) is one the rdma_cm or the peer's CM made
 * (for instance: nobody listens on the port).
 */
struct rdmalog_cm_rej {
	__le32 magic;
	__u8 version;
	__u8 reason;
	__le16 node_id;
	__le64 detail;
};

static_assert(sizeof(struct rdmalog_cm_rej) == 16);

/**
 * enum rdmalog_msg_type - &rdmalog_msg_hdr.type
 * @RDMALOG_MSG_HELLO: first message on each side after the connection is
 *	established: &struct rdmalog_msg_hello
 * @RDMALOG_MSG_HEARTBEAT: every heartbeat interval: &struct
 *	rdmalog_msg_heartbeat
 * @RDMALOG_MSG_RING: a backup grants the primary RDMA WRITE access to its
 *	ring, once per connection, after the primary's HELLO: &struct
 *	rdmalog_msg_ring
 * @RDMALOG_MSG_APPEND: primary to backup, after the RDMA WRITEs it covers:
 *	how far the ring was written, the commit point and the trim point:
 *	&struct rdmalog_msg_append. Since version 12 never sent as a
 *	message: it is RDMA-written into the backup's notice block (&struct
 *	rdmalog_notice); a receiver drops the connection on one
 * @RDMALOG_MSG_ACK: backup to primary: what the backup holds and where its
 *	tail is; also hands credits back: &struct rdmalog_msg_ack
 * @RDMALOG_MSG_FWD: backup to primary: append this record for me (a
 *	write() on the backup): &struct rdmalog_msg_fwd
 * @RDMALOG_MSG_FWD_DONE: primary to backup: the result of a FWD:
 *	&struct rdmalog_msg_fwd_done
 * @RDMALOG_MSG_CATCHUP: primary to a backup that is behind: pull this
 *	range of my ring with RDMA READ: &struct rdmalog_msg_catchup
 * @RDMALOG_MSG_JOIN: backup to primary: the catch-up is done, write to my
 *	ring from here on: &struct rdmalog_msg_join
 * @RDMALOG_MSG_VOTE_REQ: a candidate asks for the receiver's vote in an
 *	epoch: &struct rdmalog_msg_vote_req
 * @RDMALOG_MSG_VOTE: the answer to a VOTE_REQ: &struct rdmalog_msg_vote
 * @RDMALOG_MSG_TAKEOVER: a primary handing the log over (switchover) to
 *	the backup it chose, with its vote: &struct rdmalog_msg_takeover
 * @RDMALOG_MSG_FWD_CLOSE: primary to backup: every FWD received before
 *	this one is answered, every later one is refused (or, with
 *	%RDMALOG_FWD_CLOSE_F_REOPEN, served again): &struct
 *	rdmalog_msg_fwd_close
 * @RDMALOG_MSG_FWD_CLOSED: backup to primary, the answer to a
 *	FWD_CLOSE without %RDMALOG_FWD_CLOSE_F_REOPEN: no FWD of this
 *	connection is outstanding: &struct rdmalog_msg_fwd_close
 * @RDMALOG_MSG_BALLOT: a node grants its peer compare-and-swap on its
 *	ballot word and READ of its ballot block, once per connection,
 *	after the peer's HELLO said %RDMALOG_HELLO_F_ATOMICS: &struct
 *	rdmalog_msg_ballot
 * @RDMALOG_MSG_LEAD: a node that now leads tells a peer it was
 *	connected to as a backup: from here on it is that peer's primary on
 *	this connection, as if its HELLO had said so: &struct rdmalog_msg_lead
 * @RDMALOG_MSG_NOTIFY: primary to backup: read your notice block now
 *	(a reader waits, a trim, or enough was written since the last one):
 *	&struct rdmalog_msg_notify
 * @RDMALOG_MSG_WAIT: backup to primary: a reader here waits for a
 *	record; NOTIFY once the commit point written passes it: &struct
 *	rdmalog_msg_wait
 * @__RDMALOG_MSG_MAX: first unknown type; a receiver drops the connection
 *	on a type it does not know
 */
enum rdmalog_msg_type {
	RDMALOG_MSG_HELLO		= 1,
	RDMALOG_MSG_HEARTBEAT		= 2,
	RDMALOG_MSG_RING		= 3,
	RDMALOG_MSG_APPEND		= 4,
	RDMALOG_MSG_ACK			= 5,
	RDMALOG_MSG_FWD			= 6,
	RDMALOG_MSG_FWD_DONE		= 7,
	RDMALOG_MSG_CATCHUP		= 8,
	RDMALOG_MSG_JOIN		= 9,
	RDMALOG_MSG_VOTE_REQ		= 10,
	RDMALOG_MSG_VOTE		= 11,
	RDMALOG_MSG_TAKEOVER		= 12,
	RDMALOG_MSG_FWD_CLOSE		= 13,
	RDMALOG_MSG_FWD_CLOSED		= 14,
	RDMALOG_MSG_BALLOT		= 15,
	RDMALOG_MSG_LEAD		= 16,
	RDMALOG_MSG_NOTIFY		= 17,
	RDMALOG_MSG_WAIT		= 18,

	__RDMALOG_MSG_MAX
};

/**
 * struct rdmalog_msg_hdr - header of every control message
 * @magic: %RDMALOG_MSG_MAGIC
 * @version: %RDMALOG_PROTO_VERSION
 * @type: &enum rdmalog_msg_type
 * @length: bytes of the whole message, header included; must equal the
 *	received byte count and the size of @type's structure
 * @credits: receive buffers the sender re-posted since its previous
 *	message: send credits handed back to the receiver
 * @reserved: zero
 * @seq: 1 for the first message the sender sends on this connection, then
 *	one more for each; a gap or repeat drops the connection
 * @epoch: the sender's current epoch
 */
struct rdmalog_msg_hdr {
	__le32 magic;
	__u8 version;
	__u8 type;
	__le16 length;
	__le16 credits;
	__le16 reserved;
	__le32 seq;
	__le64 epoch;
};

static_assert(sizeof(struct rdmalog_msg_hdr) == 24);

/**
 * struct rdmalog_ring_desc - where a peer may write the sender's ring
 * @addr: remote address of the ring
 * @length: bytes; 0 when no ring is announced (always in version 1)
 * @rkey: remote key of the ring's registration
 * @reserved: zero
 *
 * Room for the data path (the next protocol version): version 1 senders
 * send zeros and receivers ignore it.
 */
struct rdmalog_ring_desc {
	__le64 addr;
	__le64 length;
	__le32 rkey;
	__le32 reserved;
};

static_assert(sizeof(struct rdmalog_ring_desc) == 24);

/**
 * enum rdmalog_hello_flags - &rdmalog_msg_hello.flags
 * @RDMALOG_HELLO_F_LOG_UP: the sender's log is up (always, in version 1)
 * @RDMALOG_HELLO_F_ATOMICS: the sender's RDMA device has atomics: it
 *	may be granted the receiver's ballot word (%RDMALOG_MSG_BALLOT) and
 *	vote into it by compare-and-swap
 */
enum rdmalog_hello_flags {
	RDMALOG_HELLO_F_LOG_UP		= 1 << 0,
	RDMALOG_HELLO_F_ATOMICS		= 1 << 1,
};

/**
 * struct rdmalog_msg_hello - what a node tells its peer once connected
 * @hdr: type %RDMALOG_MSG_HELLO
 * @node_id: the sender's node id; must be the one of the handshake
 * @role: the sender's &enum rdmalog_role
 * @interval_ms: the sender's heartbeat interval
 * @timeout_ms: the sender's peer timeout
 * @capacity: the sender's ring capacity; must be the one of the handshake
 * @max_record: the sender's largest record payload
 * @flags: &enum rdmalog_hello_flags
 * @first_lsn: the sender's oldest retained LSN
 * @commit_lsn: the sender's commit LSN
 * @next_lsn: the sender's next LSN
 * @ring: the sender's ring, for the data path (zero in version 2)
 * @log_id: the log the sender serves (a primary: a random non-zero id made
 *	when its log came up) or follows (a backup: its primary's log id, or
 *	0 while it follows none and holds no record). The @hdr epoch is the
 *	sender's (a primary's: its log's, stamped into its records)
 * @vote_epoch: the sender's election epoch: the highest epoch it voted
 *	in or heard any node report as its own (0: none since its module
 *	was loaded). What a node whose module was reloaded learns from a
 *	majority of the others before it votes (Documentation/protocol.rst,
 *	"Election state")
 * @mac: with %RDMALOG_CM_F_AUTH: HMAC-SHA256, keyed with the shared
 *	secret, of the 13 bytes "rdmalog-hello", one byte saying who sends
 *	it (1: the side that connected, 2: the side that accepted), the
 *	connecting side's handshake nonce, the accepting side's, and this
 *	message from @node_id up to @mac; the receiver drops the connection
 *	unless it is the MAC it computes. Zero without a secret
 */
struct rdmalog_msg_hello {
	struct rdmalog_msg_hdr hdr;
	__le32 node_id;
	__le32 role;
	__le32 interval_ms;
	__le32 timeout_ms;
	__le64 capacity;
	__le32 max_record;
	__le32 flags;
	__le64 first_lsn;
	__le64 commit_lsn;
	__le64 next_lsn;
	struct rdmalog_ring_desc ring;
	__le64 log_id;
	__le64 vote_epoch;
	__u8 mac[RDMALOG_MAC_SIZE];
};

static_assert(sizeof(struct rdmalog_msg_hello) == 152);

/**
 * RDMALOG_RING_MAX_SEGS - most segments one CATCHUP message describes: the
 * fixed part (64 bytes) and 12 segments of 16 bytes fill %RDMALOG_MSG_SIZE.
 * A ring is registered in at most %RDMALOG_RING_MSG_SEGS, the most a RING
 * describes (a read grant may split one in two)
 */
#define RDMALOG_RING_MAX_SEGS		12
/** RDMALOG_RING_MSG_SEGS - most segments a RING describes */
#define RDMALOG_RING_MSG_SEGS		10

/**
 * struct rdmalog_ring_seg - one registration of a backup's ring
 * @addr: remote address of its first byte
 * @length: bytes it covers, a non-zero multiple of 4096
 * @rkey: remote key, REMOTE_WRITE only, non-zero
 */
struct rdmalog_ring_seg {
	__le64 addr;
	__le32 length;
	__le32 rkey;
};

static_assert(sizeof(struct rdmalog_ring_seg) == 16);

/**
 * struct rdmalog_msg_ring - a backup's ring, writable by the primary
 * @hdr: type %RDMALOG_MSG_RING; @hdr.length is 88 + 16 * @nr_segs
 * @head: the sender's stream position where its next record starts
 * @next_lsn: the sender's next LSN
 * @commit_lsn: the sender's commit LSN
 * @tail: the sender's stream position of its first retained record: the
 *	primary writes no stream position at or above @tail + capacity
 *	(that would overwrite a record the backup still holds)
 * @log_id: the log the sender follows (0: none yet): what the primary
 *	judges it by, rather than the HELLO's (a LEAD comes on a connection
 *	whose HELLO is older than what the backup follows now)
 * @nr_segs: segments that follow, 1 .. %RDMALOG_RING_MSG_SEGS
 * @flags: %RDMALOG_RING_F_EPOCH_START or 0
 * @notice_addr: remote address of the sender's notice block: the primary
 *	RDMA-writes its notices (&struct rdmalog_notice) there, at offset 0
 * @notice_rkey: its remote key, REMOTE_WRITE only, on this connection's
 *	queue pair only, non-zero
 * @notice_len: bytes the key covers, at least %RDMALOG_NOTICE_LEN
 * @seg: the registrations, in ring order: @seg[i] covers ring offsets
 *	[sum of the lengths of @seg[0 .. i - 1], that + @seg[i].length), so
 *	ring byte B (stream position P at B = P mod capacity) is at remote
 *	address @seg[i].addr + (B - that start). The lengths add up to the
 *	ring capacity. Every rkey grants REMOTE_WRITE only, to this
 *	connection's queue pair only (FRWR on the sender's PD; no global
 *	rkey), and is invalid once the connection ends
 *
 * Variable length: only the first @nr_segs entries of @seg are sent.
 * Sent only by a backup, only to the primary, only after the primary's
 * HELLO, at most once per connection. The primary drops the connection on
 * a second one, a segment count of 0 or above %RDMALOG_RING_MSG_SEGS, a
 * length that does not match the count, a zero or unaligned segment
 * length, lengths that do not add up to its capacity, a zero rkey or a
 * segment whose address range wraps, a zero notice key, a notice block
 * shorter than %RDMALOG_NOTICE_LEN or one whose range wraps. It writes to
 * the ring only while the
 * backup is in sync: @next_lsn is one of the primary's retained LSNs (from
 * its first LSN to its next LSN) and @head is where that record starts in
 * the primary's stream and the backup lacks no committed record; the
 * primary then writes everything from @head on. Otherwise the backup is
 * "behind": the primary answers with a CATCHUP (&struct
 * rdmalog_msg_catchup), or, when the backup holds what the primary never
 * had (diverged), does not replicate to it at all.
 */
struct rdmalog_msg_ring {
	struct rdmalog_msg_hdr hdr;
	__le64 head;
	__le64 next_lsn;
	__le64 commit_lsn;
	__le64 tail;
	__le64 log_id;
	__le32 nr_segs;
	__le32 flags;
	__le64 notice_addr;
	__le32 notice_rkey;
	__le32 notice_len;
	struct rdmalog_ring_seg seg[RDMALOG_RING_MSG_SEGS];
};

/**
 * RDMALOG_RING_F_EPOCH_START - &rdmalog_msg_ring.flags: the sender's ring
 * holds the epoch-start record its primary's LEAD on this connection
 * named (%RDMALOG_LEAD_F_EPOCH_START), at the stream position the LEAD
 * gave, and every record before it, as the primary's log holds them
 * (Documentation/protocol.rst, "The epoch-start record travels with the
 * LEAD"): the primary counts the backup as holding it, as if an ACK had
 * said so. Only in answer to such a LEAD; the primary drops the
 * connection on the flag otherwise, and on any other bit.
 */
#define RDMALOG_RING_F_EPOCH_START	0x1U

/**
 * RDMALOG_RING_F_NOTICE_READ - &rdmalog_msg_ring.flags: @notice_rkey also
 * grants REMOTE_READ, so that the primary may read its notice back: a
 * trailing RDMA READ after the notice's WRITE, whose completion proves
 * that every WRITE before it on the queue pair was placed (on iWARP a
 * WRITE's own completion does not; Documentation/protocol.rst, "The held
 * LSN and the read-back"). Set by a backup whose device is iWARP, or with
 * the force_read module parameter.
 */
#define RDMALOG_RING_F_NOTICE_READ	0x2U

/** RDMALOG_MSG_RING_LEN - bytes of a RING message with @n segments */
#define RDMALOG_MSG_RING_LEN(n) \
	(offsetof(struct rdmalog_msg_ring, seg) + \
	 (n) * sizeof(struct rdmalog_ring_seg))

static_assert(offsetof(struct rdmalog_msg_ring, seg) == 88);
static_assert(sizeof(struct rdmalog_msg_ring) == 248);

/**
 * enum rdmalog_append_flags - &rdmalog_msg_append.flags
 * @RDMALOG_APPEND_F_ACK: answer with an ACK once this is taken: the
 *	primary counts the WRITEs before it as held only then (iWARP, where
 *	a WRITE's completion does not prove remote placement); the primary
 *	sends a NOTIFY after every such notice
 */
enum rdmalog_append_flags {
	RDMALOG_APPEND_F_ACK		= 1 << 0,
};

/**
 * struct rdmalog_msg_append - the primary's notice to a backup
 * @hdr: type %RDMALOG_MSG_APPEND; @hdr.seq numbers the notices of the
 *	connection (1 for the first, one more for each), apart from the
 *	messages' sequence; @hdr.credits 0
 * @head: every stream byte below @head that the primary appended after the
 *	backup's RING was RDMA-written into the backup's ring before this
 *	notice (same queue pair: placed before it)
 * @next_lsn: the LSN of the record that starts at @head
 * @commit_pos: stream position where record @commit_lsn starts
 * @commit_lsn: the primary's commit LSN: every record below it is held by
 *	enough nodes. The backup verifies each record from its own head up
 *	to @commit_pos (header, LSN continuity, epoch, both CRC32C) and then
 *	exposes them as committed; a record that fails drops the connection
 * @first_lsn: the primary's first retained LSN: the backup trims to it
 *	(but never above its own commit LSN)
 * @flags: &enum rdmalog_append_flags
 * @gen: the primary's truncation generation: it grows whenever the
 *	primary removes uncommitted records (a commit timeout); an ACK
 *	echoes it, and the primary ignores ACKs of older generations
 *
 * @commit_pos <= @head, @commit_lsn <= @next_lsn, @first_lsn <=
 * @commit_lsn, and none of them ever moves back; @head and @next_lsn move
 * back only together with a new @gen, never below @commit_pos.
 */
struct rdmalog_msg_append {
	struct rdmalog_msg_hdr hdr;
	__le64 head;
	__le64 next_lsn;
	__le64 commit_pos;
	__le64 commit_lsn;
	__le64 first_lsn;
	__le32 flags;
	__le32 gen;
};

static_assert(sizeof(struct rdmalog_msg_append) == 72);

/**
 * struct rdmalog_notice - what the primary RDMA-writes into a backup's
 * notice block (&rdmalog_msg_ring.notice_addr) after each batch of ring
 * WRITEs, and after a commit moved
 * @append: the notice, as an APPEND would say it
 * @crc: CRC32C of @append (as a record's: seed ~0, inverted): a backup
 *	that reads the block while a WRITE lands in it sees the mismatch and
 *	reads again
 * @reserved: zero
 *
 * The backup's CPU does nothing when one lands. It takes the latest one
 * when something needs it (Documentation/protocol.rst, "The notice
 * block"): a reader that finds no record, a NOTIFY, its state being
 * shown. A notice whose
 * @append.hdr.seq is the one taken last is not new; one below it, or one
 * that fails the checks of an APPEND (header, epoch, positions), drops
 * the connection, as does a block that does not verify after a few
 * reads.
 */
struct rdmalog_notice {
	struct rdmalog_msg_append append;
	__le32 crc;
	__le32 reserved;
};

static_assert(sizeof(struct rdmalog_notice) == 80);

/** RDMALOG_NOTICE_LEN - bytes a notice block must have */
#define RDMALOG_NOTICE_LEN		sizeof(struct rdmalog_notice)

/**
 * struct rdmalog_msg_notify - the primary asks a backup to take its
 * notice now
 * @hdr: type %RDMALOG_MSG_NOTIFY
 * @notice_seq: the notice written before it (same queue pair: it is in
 *	the block, or a later one is); a block behind it drops the connection
 * @reserved: zero
 *
 * Sent when a backup's WAIT is answered (the commit point written passed
 * the record it named), after the first notice of a trim, once every
 * notify_kib of stream (what a leader change must verify stays bounded),
 * and after every notice in ACK mode.
 */
struct rdmalog_msg_notify {
	struct rdmalog_msg_hdr hdr;
	__le64 notice_seq;
	__le64 reserved;
};

static_assert(sizeof(struct rdmalog_msg_notify) == 40);

/**
 * struct rdmalog_msg_wait - a reader on the backup waits
 * @hdr: type %RDMALOG_MSG_WAIT
 * @lsn: the record it waits for, which the backup's notice block does not
 *	say is committed: the primary NOTIFYs once a notice it wrote says a
 *	commit LSN above @lsn (at once if one did already). One NOTIFY
 *	answers every WAIT received before it
 * @reserved: zero
 */
struct rdmalog_msg_wait {
	struct rdmalog_msg_hdr hdr;
	__le64 lsn;
	__le64 reserved;
};

static_assert(sizeof(struct rdmalog_msg_wait) == 40);

/**
 * struct rdmalog_msg_ack - a backup's answer to the primary
 * @hdr: type %RDMALOG_MSG_ACK
 * @held_pos: @head of the last notice taken
 * @held_lsn: @next_lsn of the last notice taken
 * @commit_lsn: the backup's commit LSN (what its readers see)
 * @tail: the backup's tail (stream position of its first retained record)
 * @first_lsn: the backup's first retained LSN
 * @gen: @gen of the last notice taken
 * @reserved: zero
 *
 * Sent when a notice asks for it, when the backup's tail moved, and
 * whenever the backup has re-posted a quarter of its receive buffers
 * since its last message (credits).
 */
struct rdmalog_msg_ack {
	struct rdmalog_msg_hdr hdr;
	__le64 held_pos;
	__le64 held_lsn;
	__le64 commit_lsn;
	__le64 tail;
	__le64 first_lsn;
	__le32 gen;
	__le32 reserved;
};

static_assert(sizeof(struct rdmalog_msg_ack) == 72);

/**
 * enum rdmalog_fwd_flags - &rdmalog_msg_fwd.flags
 * @RDMALOG_FWD_F_INLINE: the payload follows the fixed part (@len bytes,
 *	at most %RDMALOG_FWD_INLINE_MAX); otherwise the primary pulls it with
 *	one RDMA READ from @addr/@rkey
 */
enum rdmalog_fwd_flags {
	RDMALOG_FWD_F_INLINE		= 1 << 0,
};

/**
 * struct rdmalog_msg_fwd - a backup asks the primary to append a record
 * @hdr: type %RDMALOG_MSG_FWD; @hdr.length is 56, plus @len when inline
 * @req_id: the backup's id of the request, echoed in FWD_DONE
 * @len: payload bytes, 1 .. the primary's max_record
 * @flags: &enum rdmalog_fwd_flags
 * @addr: where the payload is on the backup (not inline)
 * @rkey: REMOTE_READ key covering [@addr, @addr + @len) (not inline),
 *	valid on this connection until the FWD_DONE for @req_id is received
 * @reserved: zero
 * @data: the payload (inline)
 *
 * The primary answers every FWD with exactly one FWD_DONE, in any order.
 */
struct rdmalog_msg_fwd {
	struct rdmalog_msg_hdr hdr;
	__le64 req_id;
	__le32 len;
	__le32 flags;
	__le64 addr;
	__le32 rkey;
	__le32 reserved;
	__u8 data[];
};

static_assert(sizeof(struct rdmalog_msg_fwd) == 56);

/** RDMALOG_FWD_INLINE_MAX - largest payload sent inline in a FWD */
#define RDMALOG_FWD_INLINE_MAX \
	(RDMALOG_MSG_SIZE - sizeof(struct rdmalog_msg_fwd))

/**
 * struct rdmalog_msg_fwd_done - the primary's answer to a FWD
 * @hdr: type %RDMALOG_MSG_FWD_DONE
 * @req_id: the FWD's @req_id
 * @lsn: the record's LSN when @status is 0, else 0
 * @status: 0 (appended and committed), or a positive errno: EMSGSIZE
 *	(above max_record, or not inline and above what one registration of
 *	the primary covers), EINVAL (empty, malformed), ETIMEDOUT (not
 *	committed in time: not in the log), ENETDOWN (log going down), EIO
 *	(the payload could not be read), ENOSPC/EAGAIN (no room), EROFS (not
 *	the primary)
 * @reserved: zero
 */
struct rdmalog_msg_fwd_done {
	struct rdmalog_msg_hdr hdr;
	__le64 req_id;
	__le64 lsn;
	__le32 status;
	__le32 reserved;
};

static_assert(sizeof(struct rdmalog_msg_fwd_done) == 48);

/**
 * enum rdmalog_catchup_flags - &rdmalog_msg_catchup.flags
 * @RDMALOG_CATCHUP_F_RESET: the primary no longer retains the records
 *	that follow the backup's head: the backup discards its log and
 *	restarts it empty at @start_lsn / @start_pos (&struct
 *	rdmalog_msg_catchup), then pulls from there
 */
enum rdmalog_catchup_flags {
	RDMALOG_CATCHUP_F_RESET		= 1 << 0,
};

/**
 * struct rdmalog_msg_catchup - the primary lets a backup that is behind
 * read the committed part of its ring
 * @hdr: type %RDMALOG_MSG_CATCHUP; @hdr.length is 64 + 16 * @nr_segs;
 *	@hdr.epoch is the epoch every pulled record must carry
 * @start_pos: stream position where the backup starts pulling: its head,
 *	or with %RDMALOG_CATCHUP_F_RESET the primary's tail
 * @start_lsn: LSN of the record at @start_pos
 * @target_pos: stream position where record @target_lsn starts: the
 *	primary's commit point when it sent this
 * @target_lsn: the primary's commit LSN when it sent this
 * @flags: &enum rdmalog_catchup_flags
 * @nr_segs: segments that follow, 1 .. %RDMALOG_RING_MAX_SEGS
 * @seg: the primary's ring, laid out as in &struct rdmalog_msg_ring; every
 *	rkey grants REMOTE_READ only, to this connection's queue pair only,
 *	and is invalidated when the backup's JOIN arrives or the connection
 *	ends
 *
 * The primary keeps [@start_pos, @target_pos) in its ring (its floor, see
 * &struct rdmalog_msg_ring's @tail) until the JOIN. The backup reads the
 * range with RDMA READs of at most 1 MiB into the same offsets of its own
 * ring, several in flight, verifies every record (magic, version, LSN
 * continuity from @start_lsn, epoch, both CRC32C, ending exactly at
 * @target_pos), exposes them committed and answers with a JOIN. Sent only
 * by the primary, only after the backup's RING, and never while a catch-up
 * is in progress on the connection. The backup drops the connection when
 * anything here is out of range: @start_pos > @target_pos, @start_lsn >
 * @target_lsn, a range longer than the ring, segments as RING checks them,
 * unknown flags, or (without %RDMALOG_CATCHUP_F_RESET) a start that is not
 * its head and next LSN, or (with it) a start at or below them.
 */
struct rdmalog_msg_catchup {
	struct rdmalog_msg_hdr hdr;
	__le64 start_pos;
	__le64 start_lsn;
	__le64 target_pos;
	__le64 target_lsn;
	__le32 flags;
	__le32 nr_segs;
	struct rdmalog_ring_seg seg[RDMALOG_RING_MAX_SEGS];
};

/** RDMALOG_MSG_CATCHUP_LEN - bytes of a CATCHUP message with @n segments */
#define RDMALOG_MSG_CATCHUP_LEN(n) \
	(offsetof(struct rdmalog_msg_catchup, seg) + \
	 (n) * sizeof(struct rdmalog_ring_seg))

static_assert(offsetof(struct rdmalog_msg_catchup, seg) == 64);
static_assert(sizeof(struct rdmalog_msg_catchup) == 256);

/**
 * struct rdmalog_msg_join - a backup finished its catch-up
 * @hdr: type %RDMALOG_MSG_JOIN
 * @head: the backup's head (its next record starts there)
 * @next_lsn: the backup's next LSN
 * @commit_lsn: the backup's commit LSN
 * @tail: the backup's tail, as in &struct rdmalog_msg_ring
 *
 * Sent once per CATCHUP, after the whole range was pulled and verified.
 * The primary revokes the ring's read access, then judges the backup as
 * it judges a RING: it joins (replication WRITEs what it still lacks), or
 * is sent another CATCHUP (the primary trimmed past it meanwhile), or the
 * connection is dropped. A JOIN without a CATCHUP before it drops the
 * connection.
 */
struct rdmalog_msg_join {
	struct rdmalog_msg_hdr hdr;
	__le64 head;
	__le64 next_lsn;
	__le64 commit_lsn;
	__le64 tail;
};

static_assert(sizeof(struct rdmalog_msg_join) == 56);

/**
 * struct rdmalog_pos_wire - a position: the last record a node holds
 * @epoch: that record's epoch (0: it holds none)
 * @lsn: its LSN (0: it holds none)
 * @gen: its truncation generation (&rdmalog_ring_record.gen)
 * @reserved: zero
 *
 * Positions compare by @epoch, then @gen, then @lsn.
 */
struct rdmalog_pos_wire {
	__le64 epoch;
	__le64 lsn;
	__le32 gen;
	__le32 reserved;
};

static_assert(sizeof(struct rdmalog_pos_wire) == 24);

/** RDMALOG_BALLOT_MAGIC - "RLBB": first bytes of a ballot block */
#define RDMALOG_BALLOT_MAGIC		0x42424c52

/**
 * struct rdmalog_ballot_block - what a voter's open ballot word is for
 * (Documentation/leader-change.rst, "Compare-and-swap where the device
 * has atomics"): written by the owner while its word is closed, in force
 * while the word is open with the same @seq, read by candidates
 * @magic: %RDMALOG_BALLOT_MAGIC
 * @seq: the word's sequence (its bits 23..1) while this block is in
 *	force
 * @node_id: the owner
 * @flags: zero
 * @log_id: the log it holds (0: none yet)
 * @log_epoch: the highest epoch of a log it knows of
 * @pos: its position
 * @reserved: zero
 */
struct rdmalog_ballot_block {
	__le32 magic;
	__le32 seq;
	__le32 node_id;
	__le32 flags;
	__le64 log_id;
	__le64 log_epoch;
	struct rdmalog_pos_wire pos;
	__le64 reserved;
};

static_assert(sizeof(struct rdmalog_ballot_block) == 64);

/**
 * struct rdmalog_msg_heartbeat - sent every heartbeat interval
 * @hdr: type %RDMALOG_MSG_HEARTBEAT
 * @first_lsn: the sender's oldest retained LSN
 * @commit_lsn: the sender's commit LSN
 * @next_lsn: the sender's next LSN
 * @interval_ms: the sender's heartbeat interval (may change while
 *	connected); the receiver waits at least twice as long before it
 *	declares the sender dead
 * @standing: the sender's candidacy: its priority (0 ..
 *	%RDMALOG_STANDING_PRIO) in the low byte, %RDMALOG_STANDING_NO_LEAD
 *	when it never leads; the other bits zero. Orders the candidates'
 *	stand delays (Documentation/protocol.rst, "Standing on its own")
 * @vote_epoch: the sender's election epoch, as in &rdmalog_msg_hello
 * @ballot: while the sender's ballot word is open, the block in force
 *	(its @seq the word's), as a candidate would read it; all zero while
 *	the word is closed or the sender has none. A candidate whose read of
 *	the word finds it open with that sequence judges by this block
 *	without reading it (Documentation/protocol.rst, "By
 *	compare-and-swap"); the owner sends a HEARTBEAT as it opens the word
 */
struct rdmalog_msg_heartbeat {
	struct rdmalog_msg_hdr hdr;
	__le64 first_lsn;
	__le64 commit_lsn;
	__le64 next_lsn;
	__le32 interval_ms;
	__le32 standing;
	__le64 vote_epoch;
	struct rdmalog_ballot_block ballot;
};

/** RDMALOG_STANDING_PRIO - &rdmalog_msg_heartbeat.standing: priority mask */
#define RDMALOG_STANDING_PRIO		0xffU
/** RDMALOG_STANDING_NO_LEAD - &rdmalog_msg_heartbeat.standing: never leads */
#define RDMALOG_STANDING_NO_LEAD	0x100U

static_assert(sizeof(struct rdmalog_msg_heartbeat) == 128);

/**
 * struct rdmalog_msg_ballot - the sender grants the receiver its ballot
 * (Documentation/protocol.rst, "Ballot grant")
 * @hdr: type %RDMALOG_MSG_BALLOT
 * @word_addr: the ballot word's address in @word_rkey's region: 8 bytes,
 *	8-byte aligned, for RDMA compare-and-swap and fetch-and-add only
 * @word_rkey: its key, good on this connection only
 * @block_addr: the ballot block's address in @block_rkey's region
 *	(&struct rdmalog_ballot_block, 64 bytes), for RDMA READ only
 * @block_rkey: its key, good on this connection only
 * @reserved: zero
 */
struct rdmalog_msg_ballot {
	struct rdmalog_msg_hdr hdr;
	__le64 word_addr;
	__le64 block_addr;
	__le32 word_rkey;
	__le32 block_rkey;
	__le64 reserved;
};

/**
 * struct rdmalog_msg_lead - the sender leads now (Documentation/protocol.rst,
 * "LEAD")
 * @hdr: type %RDMALOG_MSG_LEAD; its epoch is the one the sender leads,
 *	above the epoch of its HELLO on this connection
 * @log_id: the log it leads; non-zero, and the one its HELLO named if
 *	that was not 0
 * @first_lsn: its oldest retained LSN (a backup trims to it, as after a
 *	primary's HELLO)
 * @commit_lsn: its commit LSN
 * @next_lsn: its next LSN
 * @vote_epoch: its election epoch, as in HELLO and HEARTBEAT
 * @flags: %RDMALOG_LEAD_F_EPOCH_START or 0
 * @reserved: zero
 * @es_pos: with %RDMALOG_LEAD_F_EPOCH_START, the stream position of its
 *	epoch-start record (a multiple of %RDMALOG_RECORD_ALIGN); else 0
 * @es_lsn: its LSN (the first of the epoch, below @next_lsn); else 0
 * @es_timestamp_ns: the record header's @timestamp_ns; else 0
 * @es_prev_epoch: the epoch of the record before it (0: it is LSN 1),
 *	below the LEAD's; else 0
 * @es_gen: the record header's @gen; else 0
 * @es_prev_gen: the generation of the record before it; else 0
 *
 * Sent at most once per connection, and never by a node whose HELLO on
 * it said primary: a peer stops being primary only by closing.
 *
 * The epoch-start record's header is the LEAD's epoch, @es_lsn,
 * @es_timestamp_ns, @es_gen, %RDMALOG_RECORD_EPOCH_START and a payload
 * of 8 bytes, the epoch: a backup whose ring holds, verified, records
 * that end exactly at @es_pos with LSN @es_lsn - 1, epoch @es_prev_epoch
 * and generation @es_prev_gen writes the same bytes there before it sends
 * its RING (%RDMALOG_RING_F_EPOCH_START).
 */
struct rdmalog_msg_lead {
	struct rdmalog_msg_hdr hdr;
	__le64 log_id;
	__le64 first_lsn;
	__le64 commit_lsn;
	__le64 next_lsn;
	__le64 vote_epoch;
	__le32 flags;
	__le32 reserved;
	__le64 es_pos;
	__le64 es_lsn;
	__le64 es_timestamp_ns;
	__le64 es_prev_epoch;
	__le32 es_gen;
	__le32 es_prev_gen;
};

static_assert(sizeof(struct rdmalog_msg_lead) == 112);

/**
 * RDMALOG_LEAD_F_EPOCH_START - &rdmalog_msg_lead.flags: the sender
 * appended its epoch-start record before the LEAD, and the es_ fields
 * name it
 */
#define RDMALOG_LEAD_F_EPOCH_START	0x1U

/**
 * struct rdmalog_msg_vote_req - a candidate asks for a vote
 * @hdr: type %RDMALOG_MSG_VOTE_REQ
 * @epoch: the epoch the sender stands for; above every epoch it knows of
 * @log_id: the log the sender would continue (its log's id)
 * @pos: the sender's position
 * @flags: %RDMALOG_VOTE_F_PRE or 0; other bits are reserved (zero)
 * @reserved: zero
 *
 * At most one is outstanding per connection: a second one before the
 * VOTE drops the connection.
 */
struct rdmalog_msg_vote_req {
	struct rdmalog_msg_hdr hdr;
	__le64 epoch;
	__le64 log_id;
	struct rdmalog_pos_wire pos;
	__le32 flags;
	__le32 reserved;
};

static_assert(sizeof(struct rdmalog_msg_vote_req) == 72);

/*
 * RDMALOG_VOTE_F_PRE - &rdmalog_msg_vote_req.flags and
 * &rdmalog_msg_vote.flags: a pre-vote, "would you vote for me in @epoch?"
 * The voter judges it as a vote (and also refuses while it follows a live
 * primary: %RDMALOG_VOTE_HAS_PRIMARY) but records, fences and announces
 * nothing; its answer carries the flag too.
 */
#define RDMALOG_VOTE_F_PRE		0x1

/**
 * enum rdmalog_vote_reason - &rdmalog_msg_vote.reason
 * @RDMALOG_VOTE_GRANTED: the vote is the candidate's
 * @RDMALOG_VOTE_NOT_LEARNED: the voter's module was loaded and it has not
 *	heard from a majority of its peers since
 * @RDMALOG_VOTE_VOTED: it voted for another candidate in this epoch or
 *	in a higher one
 * @RDMALOG_VOTE_STALE: the epoch is below the highest the voter knows of
 * @RDMALOG_VOTE_BEHIND: the candidate's position is below the voter's
 * @RDMALOG_VOTE_OTHER_LOG: the voter holds records of another log
 * @RDMALOG_VOTE_LEADING: the voter is a primary (it does not step down
 *	for a candidate)
 * @RDMALOG_VOTE_BUSY: the voter could not fence the primary it follows in
 *	time; the candidate may ask again
 * @RDMALOG_VOTE_HAS_PRIMARY: (pre-votes only) the voter follows a primary
 *	whose connection is alive: its primary is not lost
 * @__RDMALOG_VOTE_MAX: number of reasons
 */
enum rdmalog_vote_reason {
	RDMALOG_VOTE_GRANTED,
	RDMALOG_VOTE_NOT_LEARNED,
	RDMALOG_VOTE_VOTED,
	RDMALOG_VOTE_STALE,
	RDMALOG_VOTE_BEHIND,
	RDMALOG_VOTE_OTHER_LOG,
	RDMALOG_VOTE_LEADING,
	RDMALOG_VOTE_BUSY,
	RDMALOG_VOTE_HAS_PRIMARY,

	__RDMALOG_VOTE_MAX
};

/**
 * struct rdmalog_msg_vote - a voter's answer
 * @hdr: type %RDMALOG_MSG_VOTE
 * @epoch: the epoch of the VOTE_REQ answered
 * @reason: &enum rdmalog_vote_reason; %RDMALOG_VOTE_GRANTED: granted
 * @vote_for: the node the voter's vote of @vote_epoch went to (0: none)
 * @vote_epoch: the epoch of the voter's vote after this answer
 * @pos: the voter's position; after a grant, what it held once the
 *	primary it followed was fenced (no WRITE of it lands any more)
 * @flags: the request's flags (%RDMALOG_VOTE_F_PRE): what it answers
 * @reserved: zero
 */
struct rdmalog_msg_vote {
	struct rdmalog_msg_hdr hdr;
	__le64 epoch;
	__le32 reason;
	__le32 vote_for;
	__le64 vote_epoch;
	struct rdmalog_pos_wire pos;
	__le32 flags;
	__le32 reserved;
};

static_assert(sizeof(struct rdmalog_msg_vote) == 80);

/**
 * struct rdmalog_msg_takeover - the primary hands the log over
 * @hdr: type %RDMALOG_MSG_TAKEOVER, from the primary holding our ring
 * @vote_epoch: the epoch in which the sender voted for the receiver: it
 *	stands in that epoch with that vote counted
 * @next_lsn: the sender's next LSN: its appends are paused, every record
 *	below is committed and held by the receiver
 */
struct rdmalog_msg_takeover {
	struct rdmalog_msg_hdr hdr;
	__le64 vote_epoch;
	__le64 next_lsn;
};

static_assert(sizeof(struct rdmalog_msg_takeover) == 40);

/**
 * enum rdmalog_fwd_close_flags - &rdmalog_msg_fwd_close.flags
 * @RDMALOG_FWD_CLOSE_F_REOPEN: the switchover that closed the forwarding
 *	failed: the primary serves FWDs again (not answered)
 */
enum rdmalog_fwd_close_flags {
	RDMALOG_FWD_CLOSE_F_REOPEN	= 1 << 0,
};

/**
 * struct rdmalog_msg_fwd_close - a primary closes forwarding on a
 * connection before it hands the log over (switchover), and the answer
 * @hdr: type %RDMALOG_MSG_FWD_CLOSE, from the primary holding our ring;
 *	or %RDMALOG_MSG_FWD_CLOSED, from a backup we sent a FWD_CLOSE
 * @flags: &enum rdmalog_fwd_close_flags (FWD_CLOSE); zero (FWD_CLOSED)
 * @seq: FWD_CLOSE: the primary's count of the closes it sent on the
 *	connection; FWD_CLOSED: the @seq of the last FWD_CLOSE it answers
 *	(the primary ignores an older one)
 *
 * The primary sends a FWD_CLOSE once its appends are refused and it has
 * answered every FWD it received on the connection: whatever FWD the
 * backup has outstanding there now was not appended, and will be answered
 * EROFS (or not at all, if the connection ends first). The backup fails
 * each of them with -EROFS at once (the writer goes on to the next
 * primary), ignores their late FWD_DONEs, sends no FWD on the connection
 * until a FWD_CLOSE with %RDMALOG_FWD_CLOSE_F_REOPEN, and answers
 * FWD_CLOSED once no writer of its is still posting a FWD there. From
 * the FWD_CLOSE until that FWD_CLOSED the primary answers every FWD of
 * the connection EROFS without serving it, whatever becomes of the
 * switchover: so a FWD the backup failed is never appended. The primary
 * hands the log over only after every backup it is connected to
 * answered (or a peer timeout passed).
 */
struct rdmalog_msg_fwd_close {
	struct rdmalog_msg_hdr hdr;
	__le32 flags;
	__le32 seq;
};

static_assert(sizeof(struct rdmalog_msg_fwd_close) == 32);

/*
 * Every message type this version knows: a received message is copied out
 * of its receive buffer into one (ep.c's receive completion) and read
 * through it (hello.c, ring_mr.c, ballot_mr.c, and the handlers of msg.c's
 * table).
 */
union rdmalog_msg_any {
	struct rdmalog_msg_hdr hdr;
	struct rdmalog_msg_hello hello;
	struct rdmalog_msg_heartbeat heartbeat;
	struct rdmalog_msg_ring ring;
	struct rdmalog_msg_append append;
	struct rdmalog_msg_ack ack;
	struct rdmalog_msg_fwd fwd;
	struct rdmalog_msg_fwd_done fwd_done;
	struct rdmalog_msg_catchup catchup;
	struct rdmalog_msg_join join;
	struct rdmalog_msg_vote_req vote_req;
	struct rdmalog_msg_vote vote;
	struct rdmalog_msg_takeover takeover;
	struct rdmalog_msg_fwd_close fwd_close;
	struct rdmalog_msg_ballot ballot;
	struct rdmalog_msg_lead lead;
	struct rdmalog_msg_notify notify;
	struct rdmalog_msg_wait wait;
	__u8 raw[RDMALOG_MSG_SIZE];
};

static_assert(sizeof(struct rdmalog_msg_hello) <= RDMALOG_MSG_SIZE);
static_assert(sizeof(struct rdmalog_msg_ring) <= RDMALOG_MSG_SIZE);
static_assert(sizeof(struct rdmalog_msg_heartbeat) <= RDMALOG_MSG_SIZE);
static_assert(sizeof(struct rdmalog_msg_append) <= RDMALOG_MSG_SIZE);
static_assert(sizeof(struct rdmalog_msg_ack) <= RDMALOG_MSG_SIZE);
static_assert(sizeof(struct rdmalog_msg_catchup) <= RDMALOG_MSG_SIZE);
static_assert(sizeof(struct rdmalog_msg_join) <= RDMALOG_MSG_SIZE);

#endif /* _RDMALOG_PROTO_H */
