/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rdmalog - the generic netlink control plane.
 *
 * Family RDMALOG_GENL_NAME, version RDMALOG_GENL_VERSION, one multicast
 * group RDMALOG_GENL_MCGRP_EVENTS. Every command that changes state needs
 * CAP_NET_ADMIN. Attributes are validated strictly: an unknown, malformed
 * or out-of-range attribute fails the whole request with -EINVAL and an
 * extack message naming the attribute; nothing is changed by a request
 * that fails.
 *
 * Commands and their attributes (-> reply):
 *
 * NODE_GET                  -> NODE_ID, CLUSTER_ID, ADDR, PORT, ROLE, EPOCH,
 *                              HEARTBEAT_MS, PEER_TIMEOUT_MS, FAILOVER,
 *                              PRIORITY, LEAD
 * NODE_SET  [NODE_ID] [CLUSTER_ID] [ADDR] [PORT] [ROLE] [HEARTBEAT_MS]
 *           [PEER_TIMEOUT_MS] [FAILOVER] [PRIORITY] [LEAD]
 *           NODE_ID, CLUSTER_ID, ADDR, PORT and ROLE only while down
 *           (-EBUSY);
 *           PEER_TIMEOUT_MS >= 2 * HEARTBEAT_MS (-EINVAL)
 * PEER_ADD  NODE_ID ADDR [PORT] (-EEXIST if the id or address is taken,
 *                                -EINVAL for our own id, -ENOSPC past
 *                                RDMALOG_MAX_PEERS)
 * PEER_DEL  NODE_ID             (-ENOENT if unknown)
 * PEER_GET  NODE_ID             -> PEER nest; as a dump: one PEER per peer
 * LOG_GET                   -> CAPACITY, MAX_RECORD, DURABILITY,
 *                              COMMIT_TIMEOUT_MS
 * LOG_SET   [CAPACITY] [MAX_RECORD] [DURABILITY] [COMMIT_TIMEOUT_MS]
 *           CAPACITY and MAX_RECORD only while down (-EBUSY);
 *           MAX_RECORD <= min(CAPACITY / 4, 0x7ffff000) (-EINVAL)
 * UP                        (-EALREADY if up; -EINVAL if NODE_ID unset)
 * DOWN                      (-EALREADY if down)
 * STATUS_GET                -> UP, NODE_ID, CLUSTER_ID, ROLE, EPOCH,
 *                              DURABILITY, DURABILITY_EFFECTIVE,
 *                              STATUS_MSG, FIRST_LSN, COMMIT_LSN,
 *                              NEXT_LSN, CAPACITY, USED, MAX_RECORD,
 *                              OPENERS, HEARTBEAT_MS, PEER_TIMEOUT_MS,
 *                              PEERS (nest of PEER nests),
 *                              DURABILITY_DEGRADED, BACKUPS_IN_SYNC,
 *                              BACKUPS_NEEDED, FAILOVER, PRIORITY, LEAD,
 *                              PRIMARY, PRIMARY_EPOCH, ELECT_EPOCH,
 *                              VOTE_EPOCH, VOTE_FOR, LEARNED,
 *                              LEARN_HEARD, LEARN_NEEDED
 * STATS_GET                 -> STATS (nest of enum rdmalog_stat, u64 each)
 * TRIM      LSN             (-ERANGE above the commit LSN, -ENETDOWN
 *                              when down)
 * EVENT     (multicast only) EVENT, NODE_ID, and what changed
 *
 * The rdmalog_peer_sync and rdmalog_refusal values are ABI: new ones are
 * only ever added at the end; a client shows an unknown one as unknown.
 */
#ifndef _UAPI_RDMALOG_GENL_H
#define _UAPI_RDMALOG_GENL_H

#define RDMALOG_GENL_NAME		"rdmalog"
#define RDMALOG_GENL_VERSION		1
#define RDMALOG_GENL_MCGRP_EVENTS	"events"

/** RDMALOG_MAX_NODE_ID - node ids are 1 .. RDMALOG_MAX_NODE_ID */
#define RDMALOG_MAX_NODE_ID		255
/** RDMALOG_MAX_PEERS - peers one node may have configured */
#define RDMALOG_MAX_PEERS		15
/** RDMALOG_MIN_CAPACITY - smallest ring, bytes (a multiple of 4096) */
#define RDMALOG_MIN_CAPACITY		(64ULL << 10)
/** RDMALOG_MAX_CAPACITY - largest ring, bytes */
#define RDMALOG_MAX_CAPACITY		(16ULL << 30)
/** RDMALOG_DEFAULT_CAPACITY - ring size until configured */
#define RDMALOG_DEFAULT_CAPACITY	(64ULL << 20)
/** RDMALOG_DEFAULT_MAX_RECORD - largest payload until configured */
#define RDMALOG_DEFAULT_MAX_RECORD	(1024U * 1024U)
/** RDMALOG_DEFAULT_PORT - rdma_cm port until configured */
#define RDMALOG_DEFAULT_PORT		7471
/** RDMALOG_DEFAULT_COMMIT_TIMEOUT_MS - how long a writer waits for quorum */
#define RDMALOG_DEFAULT_COMMIT_TIMEOUT_MS	5000
/** RDMALOG_DEFAULT_HEARTBEAT_MS - heartbeat interval until configured */
#define RDMALOG_DEFAULT_HEARTBEAT_MS	100
/** RDMALOG_MIN_HEARTBEAT_MS - shortest heartbeat interval */
#define RDMALOG_MIN_HEARTBEAT_MS	10
/** RDMALOG_MAX_HEARTBEAT_MS - longest heartbeat interval */
#define RDMALOG_MAX_HEARTBEAT_MS	60000
/** RDMALOG_DEFAULT_PEER_TIMEOUT_MS - peer timeout until configured */
#define RDMALOG_DEFAULT_PEER_TIMEOUT_MS	1000
/** RDMALOG_MAX_PEER_TIMEOUT_MS - longest peer timeout (at least 2 beats) */
#define RDMALOG_MAX_PEER_TIMEOUT_MS	600000
/** RDMALOG_MAX_PRIORITY - highest leadership priority (default 0) */
#define RDMALOG_MAX_PRIORITY		255

/**
 * enum rdmalog_cmd - generic netlink commands of family "rdmalog"
 * @RDMALOG_CMD_UNSPEC: invalid
 * @RDMALOG_CMD_NODE_GET: this node's identity
 * @RDMALOG_CMD_NODE_SET: set this node's identity and role (admin)
 * @RDMALOG_CMD_PEER_ADD: add a peer (admin)
 * @RDMALOG_CMD_PEER_DEL: remove a peer (admin)
 * @RDMALOG_CMD_PEER_GET: one peer, or all of them as a dump
 * @RDMALOG_CMD_LOG_GET: log settings
 * @RDMALOG_CMD_LOG_SET: change log settings (admin)
 * @RDMALOG_CMD_UP: allocate the ring and start serving (admin)
 * @RDMALOG_CMD_DOWN: stop serving; descriptors get -ENETDOWN (admin)
 * @RDMALOG_CMD_STATUS_GET: state of node, log and peers
 * @RDMALOG_CMD_STATS_GET: counters
 * @RDMALOG_CMD_TRIM: discard records below an LSN (admin)
 * @RDMALOG_CMD_EVENT: notification on the "events" multicast group
 * @RDMALOG_CMD_PROMOTE: (admin) a backup stands for election in the next
 *	epoch and, once a majority of the configured nodes granted it their
 *	votes, leads: it keeps its log, appends an epoch-start record and
 *	returns once that is committed (Documentation/netlink.rst gives
 *	every error)
 * @RDMALOG_CMD_SWITCHOVER: (admin) the primary hands the log over to the
 *	backup NODE_ID: it pauses its appends, waits until that backup holds
 *	every record, votes for it in the next epoch and returns once it has
 *	stepped down for the new primary (Documentation/netlink.rst)
 * @__RDMALOG_CMD_MAX: number of commands
 */
enum rdmalog_cmd {
	RDMALOG_CMD_UNSPEC,
	RDMALOG_CMD_NODE_GET,
	RDMALOG_CMD_NODE_SET,
	RDMALOG_CMD_PEER_ADD,
	RDMALOG_CMD_PEER_DEL,
	RDMALOG_CMD_PEER_GET,
	RDMALOG_CMD_LOG_GET,
	RDMALOG_CMD_LOG_SET,
	RDMALOG_CMD_UP,
	RDMALOG_CMD_DOWN,
	RDMALOG_CMD_STATUS_GET,
	RDMALOG_CMD_STATS_GET,
	RDMALOG_CMD_TRIM,
	RDMALOG_CMD_EVENT,
	RDMALOG_CMD_PROMOTE,
	RDMALOG_CMD_SWITCHOVER,

	__RDMALOG_CMD_MAX
};

#define RDMALOG_CMD_MAX (__RDMALOG_CMD_MAX - 1)

/**
 * enum rdmalog_attr - top-level attributes
 * @RDMALOG_A_UNSPEC: invalid
 * @RDMALOG_A_PAD: padding for 64-bit attributes
 * @RDMALOG_A_NODE_ID: u32, 1 .. %RDMALOG_MAX_NODE_ID
 * @RDMALOG_A_CLUSTER_ID: u64, non-zero; peers must agree on it
 * @RDMALOG_A_ADDR: binary, 4 (IPv4) or 16 (IPv6) bytes, network order
 * @RDMALOG_A_PORT: u16, 1 .. 65535, host order
 * @RDMALOG_A_ROLE: u32, &enum rdmalog_role (PRIMARY or BACKUP when set)
 * @RDMALOG_A_EPOCH: u64
 * @RDMALOG_A_CAPACITY: u64, bytes, multiple of 4096 and of the kernel's
 *	PAGE_SIZE (65536 on 64 KiB-page kernels), within
 *	%RDMALOG_MIN_CAPACITY .. %RDMALOG_MAX_CAPACITY
 * @RDMALOG_A_MAX_RECORD: u32, bytes, 1 .. min(CAPACITY / 4, 0x7ffff000):
 *	one read(2)/write(2) moves at most MAX_RW_COUNT bytes
 * @RDMALOG_A_DURABILITY: u32, &enum rdmalog_durability requested
 * @RDMALOG_A_DURABILITY_EFFECTIVE: u32, &enum rdmalog_durability in force
 * @RDMALOG_A_COMMIT_TIMEOUT_MS: u32, 1 .. 3600000
 * @RDMALOG_A_UP: u8, 1 when the log is up
 * @RDMALOG_A_LSN: u64, argument of TRIM
 * @RDMALOG_A_FIRST_LSN: u64, oldest retained record
 * @RDMALOG_A_COMMIT_LSN: u64, next LSN to be committed
 * @RDMALOG_A_NEXT_LSN: u64, next LSN to be assigned
 * @RDMALOG_A_USED: u64, ring bytes held by retained records
 * @RDMALOG_A_OPENERS: u32, open descriptors of /dev/rdmalog
 * @RDMALOG_A_STATUS_MSG: string, human-readable note on the state
 * @RDMALOG_A_PEER: nest of &enum rdmalog_peer_attr
 * @RDMALOG_A_PEERS: nest of %RDMALOG_A_PEER
 * @RDMALOG_A_STATS: nest of &enum rdmalog_stat
 * @RDMALOG_A_EVENT: u32, &enum rdmalog_event
 * @RDMALOG_A_HEARTBEAT_MS: u32, heartbeat interval to every peer,
 *	%RDMALOG_MIN_HEARTBEAT_MS .. %RDMALOG_MAX_HEARTBEAT_MS
 * @RDMALOG_A_PEER_TIMEOUT_MS: u32, silence after which a connected peer
 *	is declared dead, 2 * HEARTBEAT_MS .. %RDMALOG_MAX_PEER_TIMEOUT_MS
 *	(the peer's own heartbeat interval, times two, is waited at least)
 * @RDMALOG_A_DURABILITY_DEGRADED: u8, 1 while the log is up and the
 *	durability in force (DURABILITY_EFFECTIVE) is weaker than the one
 *	requested (DURABILITY): appends wait for the requested one, up to the
 *	commit timeout, then fail; 0 otherwise (always 0 while down)
 * @RDMALOG_A_BACKUPS_IN_SYNC: u32, backups that joined replication and
 *	count toward the commit rule (on the primary; 0 on a backup and
 *	while down)
 * @RDMALOG_A_BACKUPS_NEEDED: u32, backups the requested durability needs
 *	in sync (on the primary; 0 on a backup and while down)
 * @RDMALOG_A_LOG_ID: u64, while up: the log's identity (a primary's: made
 *	at random when its log came up; a backup's: its primary's, 0 until
 *	it follows one)
 * @RDMALOG_A_LOG_EPOCH: u64, while up: the epoch of the log's records (a
 *	backup's: its primary's, 0 until it follows one)
 * @RDMALOG_A_SECRET: binary, 1 .. %RDMALOG_MAX_SECRET bytes, NODE_SET only
 *	(write-only: never sent back): the cluster's shared secret; every
 *	peer must prove it knows it (Documentation/protocol.rst,
 *	"Authentication"). Empty: no secret. Cannot change while up
 * @RDMALOG_A_AUTH: u32, &enum rdmalog_auth: how peers are authenticated
 * @RDMALOG_A_FAILOVER: u32, &enum rdmalog_failover (default AUTO). May
 *	change while up (Documentation/protocol.rst, "Standing on its own")
 * @RDMALOG_A_PRIORITY: u32, 0 .. %RDMALOG_MAX_PRIORITY (default 0): among
 *	candidates of equal logs, a higher one stands for leadership first
 *	(its stand delay is shorter; Documentation/protocol.rst, "Standing on
 *	its own"). May change while up; peers learn it from its HEARTBEATs
 * @RDMALOG_A_LEAD: u8, 1 (default): this node may become the primary in a
 *	leader change; 0: never ("no-lead" in a cluster file: PROMOTE fails,
 *	and it does not stand on its own). May change while up
 * @RDMALOG_A_PRIMARY: u32, STATUS_GET while up: the primary this node
 *	knows of: itself when it is the primary, else the connected peer
 *	whose HELLO said it is; absent when none is known
 * @RDMALOG_A_PRIMARY_EPOCH: u64, with PRIMARY: that primary's epoch (its
 *	last message's)
 * @RDMALOG_A_ELECT_EPOCH: u64, STATUS_GET (up or down): the highest epoch
 *	this node knows of since its module was loaded (its own log's, any
 *	peer's, any election's)
 * @RDMALOG_A_VOTE_EPOCH: u64, STATUS_GET: the epoch this node last voted
 *	in; 0 when it has not voted since its module was loaded
 * @RDMALOG_A_VOTE_FOR: u32, STATUS_GET with a non-zero VOTE_EPOCH: the
 *	node it voted for
 * @RDMALOG_A_LEARNED: u8, STATUS_GET: 1 once this node has heard from a
 *	majority of its configured peers since its module was loaded (then
 *	until it is unloaded), or while it has no peer; a node votes only
 *	then
 * @RDMALOG_A_LEARN_HEARD: u32, STATUS_GET: configured peers heard from
 *	since the module was loaded
 * @RDMALOG_A_LEARN_NEEDED: u32, STATUS_GET: how many LEARNED needs (a
 *	majority of the configured peers; 0 without peers)
 * @RDMALOG_A_CHANGE: u32, STATUS_GET once this node's role changed while
 *	up since its module was loaded: &enum rdmalog_change, why the last
 *	change was (absent before any)
 * @RDMALOG_A_CHANGE_EPOCH: u64, with CHANGE: the epoch it leads since
 *	(it won) or led until then (it stepped down)
 * @RDMALOG_A_CHANGE_AGO_MS: u64, with CHANGE: milliseconds since the
 *	change was complete
 * @RDMALOG_A_CHANGE_DETECT_MS: u32, with CHANGE STOOD: from the loss of
 *	its primary's connection (a silent primary is declared dead after
 *	the peer timeout) to its standing: at least its stand delay
 * @RDMALOG_A_CHANGE_ELECT_MS: u32, with CHANGE PROMOTED or STOOD: from
 *	standing to a majority's votes (the pre-vote, the fencing of its
 *	own primary and the closing of its ballot word included), rounded
 *	to the nearest millisecond; with RECONCILE_MS it adds up to the
 *	whole time from standing to the commit, rounded
 * @RDMALOG_A_CHANGE_FENCE_MS: u32, with ELECT_MS: the part of it spent
 *	fencing its own primary
 * @RDMALOG_A_CHANGE_RECONCILE_MS: u32, with ELECT_MS: from the votes to
 *	its epoch-start record committed (it restarts as the primary, its
 *	backups join, the record commits)
 * @RDMALOG_A_BALLOT: u32, STATUS_GET: &enum rdmalog_ballot_state, where this
 *	node's ballot word stands (Documentation/leader-change.rst,
 *	"Compare-and-swap where the device has atomics")
 * @RDMALOG_A_BALLOT_WORD: u64, STATUS_GET with BALLOT READY: the word's
 *	value after this node's last atomic on it (what it read, or what its
 *	compare-and-swap put there; a vote recorded since may not be in it
 *	yet): the vote's epoch (bits 63..32), the node voted for (31..24),
 *	the count of the owner's openings and closings (23..1), open (0)
 * @RDMALOG_A_BALLOT_MSG: string, STATUS_GET with BALLOT NONE, FAILED or
 *	OFF: why the word is not in use
 * @RDMALOG_A_LEARN_WAIT_MS: u32, STATUS_GET while not LEARNED: how long
 *	this node still waits before what it hears counts towards LEARNED
 *	(candidacies that may count a vote it cast before its module was
 *	loaded end by then); absent once that time has passed
 * @__RDMALOG_A_MAX: number of attributes
 */
enum rdmalog_attr {
	RDMALOG_A_UNSPEC,
	RDMALOG_A_PAD,
	RDMALOG_A_NODE_ID,
	RDMALOG_A_CLUSTER_ID,
	RDMALOG_A_ADDR,
	RDMALOG_A_PORT,
	RDMALOG_A_ROLE,
	RDMALOG_A_EPOCH,
	RDMALOG_A_CAPACITY,
	RDMALOG_A_MAX_RECORD,
	RDMALOG_A_DURABILITY,
	RDMALOG_A_DURABILITY_EFFECTIVE,
	RDMALOG_A_COMMIT_TIMEOUT_MS,
	RDMALOG_A_UP,
	RDMALOG_A_LSN,
	RDMALOG_A_FIRST_LSN,
	RDMALOG_A_COMMIT_LSN,
	RDMALOG_A_NEXT_LSN,
	RDMALOG_A_USED,
	RDMALOG_A_OPENERS,
	RDMALOG_A_STATUS_MSG,
	RDMALOG_A_PEER,
	RDMALOG_A_PEERS,
	RDMALOG_A_STATS,
	RDMALOG_A_EVENT,
	RDMALOG_A_HEARTBEAT_MS,
	RDMALOG_A_PEER_TIMEOUT_MS,
	RDMALOG_A_DURABILITY_DEGRADED,
	RDMALOG_A_BACKUPS_IN_SYNC,
	RDMALOG_A_BACKUPS_NEEDED,
	RDMALOG_A_LOG_ID,
	RDMALOG_A_LOG_EPOCH,
	RDMALOG_A_SECRET,
	RDMALOG_A_AUTH,
	RDMALOG_A_FAILOVER,
	RDMALOG_A_PRIORITY,
	RDMALOG_A_LEAD,
	RDMALOG_A_PRIMARY,
	RDMALOG_A_PRIMARY_EPOCH,
	RDMALOG_A_ELECT_EPOCH,
	RDMALOG_A_VOTE_EPOCH,
	RDMALOG_A_VOTE_FOR,
	RDMALOG_A_LEARNED,
	RDMALOG_A_LEARN_HEARD,
	RDMALOG_A_LEARN_NEEDED,
	RDMALOG_A_CHANGE,
	RDMALOG_A_CHANGE_EPOCH,
	RDMALOG_A_CHANGE_AGO_MS,
	RDMALOG_A_CHANGE_DETECT_MS,
	RDMALOG_A_CHANGE_ELECT_MS,
	RDMALOG_A_CHANGE_FENCE_MS,
	RDMALOG_A_CHANGE_RECONCILE_MS,
	RDMALOG_A_BALLOT,
	RDMALOG_A_BALLOT_WORD,
	RDMALOG_A_BALLOT_MSG,
	RDMALOG_A_LEARN_WAIT_MS,

	__RDMALOG_A_MAX
};

/**
 * enum rdmalog_failover - %RDMALOG_A_FAILOVER
 * @RDMALOG_FAILOVER_AUTO: when the primary is lost, a backup that may
 *	lead stands for election on its own
 * @RDMALOG_FAILOVER_MANUAL: only an operator's promote starts an election
 */
enum rdmalog_failover {
	RDMALOG_FAILOVER_AUTO,
	RDMALOG_FAILOVER_MANUAL,
};

/**
 * enum rdmalog_change - %RDMALOG_A_CHANGE: why this node's role changed
 * @RDMALOG_CHANGE_NONE: never reported
 * @RDMALOG_CHANGE_PROMOTED: it won an election an operator started
 *	(%RDMALOG_CMD_PROMOTE) and leads
 * @RDMALOG_CHANGE_STOOD: it won an election it started on its own (its
 *	primary was lost; failover auto) and leads
 * @RDMALOG_CHANGE_DEPOSED: it stepped down: a primary of a later epoch
 *	leads its log, or a later election epoch was announced
 * @RDMALOG_CHANGE_CUT_OFF: it stepped down: it was cut off from a
 *	majority of the configured nodes for the peer timeout
 * @RDMALOG_CHANGE_JOINED: configured as the primary (failover auto), it
 *	came up and found a peer leading or holding a log: it follows that
 *	log as a backup instead of leading a new one
 * @RDMALOG_CHANGE_TOOK_OVER: its primary handed the log over to it
 *	(%RDMALOG_CMD_SWITCHOVER there): it won the election and leads
 * @RDMALOG_CHANGE_HANDED_OVER: it stepped down for the backup it handed
 *	the log over to (%RDMALOG_CMD_SWITCHOVER)
 */
enum rdmalog_change {
	RDMALOG_CHANGE_NONE,
	RDMALOG_CHANGE_PROMOTED,
	RDMALOG_CHANGE_STOOD,
	RDMALOG_CHANGE_DEPOSED,
	RDMALOG_CHANGE_CUT_OFF,
	RDMALOG_CHANGE_JOINED,
	RDMALOG_CHANGE_TOOK_OVER,
	RDMALOG_CHANGE_HANDED_OVER,
};

/** RDMALOG_MAX_SECRET - longest shared secret, bytes */
#define RDMALOG_MAX_SECRET	64

/**
 * enum rdmalog_ballot_state - %RDMALOG_A_BALLOT: this node's ballot word
 * @RDMALOG_BALLOT_DOWN: the node is down
 * @RDMALOG_BALLOT_NONE: the RDMA device of the listen address has no
 *	atomics (siw, iWARP): votes run over Send/Recv only
 * @RDMALOG_BALLOT_CONNECTING: its loopback queue pair is being set up
 * @RDMALOG_BALLOT_READY: the word holds this node's vote and changes only
 *	by RDMA atomics, its own through the loopback
 * @RDMALOG_BALLOT_FAILED: the loopback could not be set up, or failed;
 *	it is tried again every 2 s
 * @RDMALOG_BALLOT_OFF: the word cannot hold this node's vote (an epoch
 *	above 2^32 - 1, or atomics whose results this node cannot read)
 *	until the module is reloaded
 */
enum rdmalog_ballot_state {
	RDMALOG_BALLOT_DOWN,
	RDMALOG_BALLOT_NONE,
	RDMALOG_BALLOT_CONNECTING,
	RDMALOG_BALLOT_READY,
	RDMALOG_BALLOT_FAILED,
	RDMALOG_BALLOT_OFF,
};

/**
 * enum rdmalog_auth - %RDMALOG_A_AUTH
 * @RDMALOG_AUTH_NONE: no secret: peers are accepted on cluster id, node id
 *	and source address alone ("unauthenticated")
 * @RDMALOG_AUTH_HMAC_SHA256: a secret is set: every connection proves it
 *	in both directions (HMAC-SHA256 over the HELLO and both sides'
 *	nonces), and a peer without it is refused
 */
enum rdmalog_auth {
	RDMALOG_AUTH_NONE,
	RDMALOG_AUTH_HMAC_SHA256,
};

#define RDMALOG_A_MAX (__RDMALOG_A_MAX - 1)

/**
 * enum rdmalog_peer_attr - attributes inside %RDMALOG_A_PEER
 * @RDMALOG_PEER_A_UNSPEC: invalid
 * @RDMALOG_PEER_A_PAD: padding
 * @RDMALOG_PEER_A_NODE_ID: u32
 * @RDMALOG_PEER_A_ADDR: binary, 4 or 16 bytes
 * @RDMALOG_PEER_A_PORT: u16
 * @RDMALOG_PEER_A_STATE: u32, &enum rdmalog_peer_state
 * @RDMALOG_PEER_A_MSG: string, why the state is what it is (the reason
 *	of a refusal, of a disconnection...); empty when connected
 * @RDMALOG_PEER_A_RECONNECTS: u64, connections established again after
 *	the first one of this up period
 * @RDMALOG_PEER_A_REFUSALS: u64, handshakes refused, by either side,
 *	in this up period
 * @RDMALOG_PEER_A_LAST_RX_MS: u64, milliseconds since the last message
 *	from the peer; absent until one arrived
 * @RDMALOG_PEER_A_EPOCH: u64, the peer's epoch per its last message
 * @RDMALOG_PEER_A_FIRST_LSN: u64, the peer's first LSN per its last message
 * @RDMALOG_PEER_A_COMMIT_LSN: u64, the peer's commit LSN per its last
 *	message
 * @RDMALOG_PEER_A_NEXT_LSN: u64, the peer's next LSN per its last message
 *	(EPOCH and the LSNs are absent until a message arrived)
 * @RDMALOG_PEER_A_REPLICATING: u8, 1 while this node (a primary)
 *	replicates to the peer: the peer's ring was accepted and is in sync
 * @RDMALOG_PEER_A_BYTES_SENT: u64, ring bytes RDMA-written to the peer
 *	on the current connection (0 when not connected)
 * @RDMALOG_PEER_A_RECORDS_SENT: u64, records written to the peer on the
 *	current connection (0 when not connected)
 * @RDMALOG_PEER_A_ACKED_LSN: u64, every record below it is held by the
 *	peer (completed WRITEs, or its ACKs where completions do not prove
 *	it); present while REPLICATING
 * @RDMALOG_PEER_A_LAG: u64, records appended here that the peer does not
 *	hold yet (NEXT_LSN minus ACKED_LSN); present while REPLICATING
 * @RDMALOG_PEER_A_REPL_ERRORS: u64, replication work requests to the peer
 *	that failed to post or completed in error on the current connection
 *	(flushes of a connection going away included; 0 when not connected)
 * @RDMALOG_PEER_A_CATCHUP: u32, &enum rdmalog_catchup_state of the
 *	connection: whether a catch-up with the peer is in progress, and in
 *	which direction
 * @RDMALOG_PEER_A_CATCHUP_LEFT: u64, bytes of the catch-up not pulled
 *	yet; present while CATCHUP is not NONE
 * @RDMALOG_PEER_A_CATCHUP_RATE: u64, bytes per second pulled since the
 *	catch-up started (on the pulling side; 0 on the serving side);
 *	present while CATCHUP is not NONE
 * @RDMALOG_PEER_A_CATCHUP_BYTES: u64, bytes pulled with RDMA READ from
 *	the peer on the current connection (0 when not connected)
 * @RDMALOG_PEER_A_SYNC: u32, &enum rdmalog_peer_sync: this node's
 *	judgement of the peer's copy of the log (always present)
 * @RDMALOG_PEER_A_REFUSAL: u32, &enum rdmalog_refusal: why the handshake
 *	was refused (by either side); present while STATE is REFUSED
 * @RDMALOG_PEER_A_ROLE: u32, &enum rdmalog_role: the peer's role per its
 *	HELLO on the current (or last) connection; absent until one arrived
 * @RDMALOG_PEER_A_PRIORITY: u32, the peer's priority as a candidate per
 *	its last HEARTBEAT (Documentation/protocol.rst, "Standing on its
 *	own"); absent until one arrived
 * @RDMALOG_PEER_A_LEAD: u8, 1 when the peer may lead, 0 when it never
 *	does ("lead no"), per its last HEARTBEAT; absent until one arrived
 * @RDMALOG_PEER_A_VOTE_PATH: u32, &enum rdmalog_vote_path: how this node,
 *	standing, asks the peer for its vote; present while connected
 * @RDMALOG_PEER_A_VOTE_PATH_WHY: u32, &enum rdmalog_vote_path_why: why by
 *	message; present with VOTE_PATH MESSAGES
 * @RDMALOG_PEER_A_BALLOT_GRANTED: u8, 1 when this node granted the peer
 *	its ballot word on the connection; present while connected
 * @__RDMALOG_PEER_A_MAX: number of attributes
 */
enum rdmalog_peer_attr {
	RDMALOG_PEER_A_UNSPEC,
	RDMALOG_PEER_A_PAD,
	RDMALOG_PEER_A_NODE_ID,
	RDMALOG_PEER_A_ADDR,
	RDMALOG_PEER_A_PORT,
	RDMALOG_PEER_A_STATE,
	RDMALOG_PEER_A_MSG,
	RDMALOG_PEER_A_RECONNECTS,
	RDMALOG_PEER_A_REFUSALS,
	RDMALOG_PEER_A_LAST_RX_MS,
	RDMALOG_PEER_A_EPOCH,
	RDMALOG_PEER_A_FIRST_LSN,
	RDMALOG_PEER_A_COMMIT_LSN,
	RDMALOG_PEER_A_NEXT_LSN,
	RDMALOG_PEER_A_REPLICATING,
	RDMALOG_PEER_A_BYTES_SENT,
	RDMALOG_PEER_A_RECORDS_SENT,
	RDMALOG_PEER_A_ACKED_LSN,
	RDMALOG_PEER_A_LAG,
	RDMALOG_PEER_A_REPL_ERRORS,
	RDMALOG_PEER_A_CATCHUP,
	RDMALOG_PEER_A_CATCHUP_LEFT,
	RDMALOG_PEER_A_CATCHUP_RATE,
	RDMALOG_PEER_A_CATCHUP_BYTES,
	RDMALOG_PEER_A_SYNC,
	RDMALOG_PEER_A_REFUSAL,
	RDMALOG_PEER_A_ROLE,
	RDMALOG_PEER_A_PRIORITY,
	RDMALOG_PEER_A_LEAD,
	RDMALOG_PEER_A_VOTE_PATH,
	RDMALOG_PEER_A_VOTE_PATH_WHY,
	RDMALOG_PEER_A_BALLOT_GRANTED,

	__RDMALOG_PEER_A_MAX
};

#define RDMALOG_PEER_A_MAX (__RDMALOG_PEER_A_MAX - 1)

/**
 * enum rdmalog_catchup_state - %RDMALOG_PEER_A_CATCHUP
 * @RDMALOG_CATCHUP_NONE: no catch-up on this connection
 * @RDMALOG_CATCHUP_PULLING: this node (a backup behind the primary) pulls
 *	the committed records it lacks from the peer's ring with RDMA READ;
 *	it joins replication when done
 * @RDMALOG_CATCHUP_SERVING: the peer (a backup) pulls from this node's
 *	ring; it does not count toward the commit rule until it joins
 */
enum rdmalog_catchup_state {
	RDMALOG_CATCHUP_NONE,
	RDMALOG_CATCHUP_PULLING,
	RDMALOG_CATCHUP_SERVING,
};

/**
 * enum rdmalog_vote_path - %RDMALOG_PEER_A_VOTE_PATH, how a candidate asks
 * the peer for its vote (Documentation/protocol.rst, "Votes")
 * @RDMALOG_VOTE_PATH_NONE: not at all: not connected
 * @RDMALOG_VOTE_PATH_CAS: by compare-and-swap on the ballot word the peer
 *	granted on the connection (by message when the word is closed then)
 * @RDMALOG_VOTE_PATH_MESSAGES: by VOTE_REQ; %RDMALOG_PEER_A_VOTE_PATH_WHY
 *	says why
 */
enum rdmalog_vote_path {
	RDMALOG_VOTE_PATH_NONE,
	RDMALOG_VOTE_PATH_CAS,
	RDMALOG_VOTE_PATH_MESSAGES,
};

/**
 * enum rdmalog_vote_path_why - %RDMALOG_PEER_A_VOTE_PATH_WHY
 * @RDMALOG_VOTE_WHY_NONE: (not by message)
 * @RDMALOG_VOTE_WHY_NO_ATOMICS: this node's device has no atomics
 * @RDMALOG_VOTE_WHY_PEER_NO_ATOMICS: the peer's HELLO said its device has
 *	none
 * @RDMALOG_VOTE_WHY_NOT_GRANTED: the peer did not grant its ballot word on
 *	this connection: its word is not ready (its loopback is being set up,
 *	failed or is off), or not on the connection's device
 */
enum rdmalog_vote_path_why {
	RDMALOG_VOTE_WHY_NONE,
	RDMALOG_VOTE_WHY_NO_ATOMICS,
	RDMALOG_VOTE_WHY_PEER_NO_ATOMICS,
	RDMALOG_VOTE_WHY_NOT_GRANTED,
};

/**
 * enum rdmalog_peer_sync - %RDMALOG_PEER_A_SYNC, how the peer's copy of the
 * log stands. The primary judges each backup; a backup judges only its
 * connection to the primary, and only while it pulls (CATCHING_UP) or is
 * refused; every other pair of nodes is UNKNOWN.
 * @RDMALOG_PEER_SYNC_UNKNOWN: no judgement: not connected yet, connected
 *	but not judged yet (the primary judges a backup when its RING
 *	arrives), the log is down, or nothing to judge (see above)
 * @RDMALOG_PEER_SYNC_IN_SYNC: (primary) the backup joined replication: it
 *	holds every committed record and counts toward the commit rule
 * @RDMALOG_PEER_SYNC_BEHIND: (primary) the backup was connected in this up
 *	period and lost the connection (state DISCONNECTED): it misses what
 *	is appended meanwhile and will catch up when it is back
 * @RDMALOG_PEER_SYNC_CATCHING_UP: a catch-up is in progress on the
 *	connection (CATCHUP is PULLING or SERVING); the backup joins when
 *	done
 * @RDMALOG_PEER_SYNC_DIVERGED: (primary) the backup holds records this
 *	node never had, or retains what it cannot reach: it is not
 *	replicated to and never counts until its log is restarted (down/up)
 * @RDMALOG_PEER_SYNC_REFUSED: the handshake was refused (state REFUSED);
 *	the reason is in %RDMALOG_PEER_A_REFUSAL
 */
enum rdmalog_peer_sync {
	RDMALOG_PEER_SYNC_UNKNOWN,
	RDMALOG_PEER_SYNC_IN_SYNC,
	RDMALOG_PEER_SYNC_BEHIND,
	RDMALOG_PEER_SYNC_CATCHING_UP,
	RDMALOG_PEER_SYNC_DIVERGED,
	RDMALOG_PEER_SYNC_REFUSED,
};

/**
 * enum rdmalog_refusal - %RDMALOG_PEER_A_REFUSAL, why a handshake with a
 * peer was refused (by this node or by the peer)
 * @RDMALOG_REFUSAL_OTHER: a reason this version does not name
 * @RDMALOG_REFUSAL_BAD_HANDSHAKE: the connection request was not an
 *	rdmalog handshake (too short, bad magic)
 * @RDMALOG_REFUSAL_VERSION: the protocol versions differ
 * @RDMALOG_REFUSAL_CLUSTER_ID: the cluster ids differ
 * @RDMALOG_REFUSAL_UNKNOWN_PEER: the connecting node id is not a
 *	configured peer of the refusing side
 * @RDMALOG_REFUSAL_ADDR_MISMATCH: the node id is configured, with another
 *	address
 * @RDMALOG_REFUSAL_NODE_ID: the request was meant for another node id
 * @RDMALOG_REFUSAL_CAPACITY: the ring capacities differ
 * @RDMALOG_REFUSAL_DIRECTION: the node with the larger id tried to
 *	connect (only the smaller one connects)
 * @RDMALOG_REFUSAL_BAD_PARAMS: connection parameters out of range
 * @RDMALOG_REFUSAL_AUTH: authentication failed: a shared secret is set on
 *	one side only, or the peer's HELLO does not prove ours
 * @RDMALOG_REFUSAL_SECOND_PRIMARY: the peer says it is primary, and this
 *	backup's ring is already granted to another primary
 */
enum rdmalog_refusal {
	RDMALOG_REFUSAL_OTHER,
	RDMALOG_REFUSAL_BAD_HANDSHAKE,
	RDMALOG_REFUSAL_VERSION,
	RDMALOG_REFUSAL_CLUSTER_ID,
	RDMALOG_REFUSAL_UNKNOWN_PEER,
	RDMALOG_REFUSAL_ADDR_MISMATCH,
	RDMALOG_REFUSAL_NODE_ID,
	RDMALOG_REFUSAL_CAPACITY,
	RDMALOG_REFUSAL_DIRECTION,
	RDMALOG_REFUSAL_BAD_PARAMS,
	RDMALOG_REFUSAL_AUTH,
	RDMALOG_REFUSAL_SECOND_PRIMARY,
};

/**
 * enum rdmalog_peer_state - connection state of a peer
 * @RDMALOG_PEER_CONFIGURED: known, no connection attempted (log down)
 * @RDMALOG_PEER_CONNECTING: not connected yet in this up period; the node
 *	with the smaller id connects (retrying with backoff), the other one
 *	waits (and knocks)
 * @RDMALOG_PEER_CONNECTED: connected and handshake done
 * @RDMALOG_PEER_DISCONNECTED: was connected in this up period and lost the
 *	connection; reconnecting as for CONNECTING
 * @RDMALOG_PEER_REFUSED: handshake refused by either side (reason in
 *	%RDMALOG_PEER_A_MSG and the kernel log); retried with backoff
 */
enum rdmalog_peer_state {
	RDMALOG_PEER_CONFIGURED,
	RDMALOG_PEER_CONNECTING,
	RDMALOG_PEER_CONNECTED,
	RDMALOG_PEER_DISCONNECTED,
	RDMALOG_PEER_REFUSED,
};

/**
 * enum rdmalog_stat - counters inside %RDMALOG_A_STATS, all u64, counted
 * since the module was loaded
 * @RDMALOG_STAT_UNSPEC: invalid
 * @RDMALOG_STAT_PAD: padding
 * @RDMALOG_STAT_APPENDS: records appended
 * @RDMALOG_STAT_APPEND_BYTES: payload bytes appended
 * @RDMALOG_STAT_APPEND_ERRORS: appends that failed after validation
 * @RDMALOG_STAT_READS: records returned to readers
 * @RDMALOG_STAT_READ_BYTES: payload bytes returned to readers
 * @RDMALOG_STAT_CRC_ERRORS: records whose CRC32C did not match on read
 * @RDMALOG_STAT_TRIMS: trim operations that discarded records
 * @RDMALOG_STAT_TRIMMED_RECORDS: records discarded by trims
 * @RDMALOG_STAT_WRITER_WAITS: times a writer blocked on a full ring
 * @RDMALOG_STAT_READER_WAITS: times a reader blocked on an empty log
 * @RDMALOG_STAT_CONNECTS: peer connections established
 * @RDMALOG_STAT_DISCONNECTS: established peer connections lost or closed
 * @RDMALOG_STAT_CONNECT_FAILURES: connection attempts that failed before
 *	being established (refusals included, knocks not counted)
 * @RDMALOG_STAT_REFUSALS_SENT: connection requests this node refused
 * @RDMALOG_STAT_REFUSALS_RECEIVED: connection attempts peers refused
 * @RDMALOG_STAT_HEARTBEAT_TIMEOUTS: peers declared dead after a silence
 * @RDMALOG_STAT_MSGS_SENT: control messages sent
 * @RDMALOG_STAT_MSGS_RECEIVED: valid control messages received
 * @RDMALOG_STAT_BAD_MSGS: invalid control messages (connection dropped)
 * @RDMALOG_STAT_COMPLETION_ERRORS: failed work completions and fatal
 *	queue pair events (connection dropped)
 * @RDMALOG_STAT_SEND_STALLS: control messages not sent for lack of send
 *	credits or buffers
 * @RDMALOG_STAT_COMMIT_TIMEOUTS: appends whose commit timeout ran out
 * @RDMALOG_STAT_TRUNCATED_RECORDS: uncommitted records removed after a
 *	commit timeout (their appends failed with ETIMEDOUT)
 * @RDMALOG_STAT_REPL_WRITES: RDMA WRITEs posted to backups
 * @RDMALOG_STAT_REPL_BYTES: bytes RDMA-written to backups
 * @RDMALOG_STAT_REPL_BATCHES: notices RDMA-written to backups' notice
 *	blocks (each closes a batch of WRITEs: group commit)
 * @RDMALOG_STAT_APPLIED_RECORDS: records a backup verified and exposed
 * @RDMALOG_STAT_FWD_SENT: appends a backup forwarded to the primary
 * @RDMALOG_STAT_FWD_SERVED: forwarded appends the primary answered
 * @RDMALOG_STAT_FWD_ERRORS: forwarded appends that failed (either side)
 * @RDMALOG_STAT_CATCHUPS: catch-ups a backup started (one per CATCHUP
 *	message received)
 * @RDMALOG_STAT_CATCHUP_BYTES: bytes a backup pulled with RDMA READ
 * @RDMALOG_STAT_LOG_RESETS: times a backup restarted its log at the
 *	primary's first retained LSN (what it held was discarded)
 * @RDMALOG_STAT_JOINS: backups that joined replication (primary side)
 * @RDMALOG_STAT_LIVE_LOGS: logs allocated now (a gauge, like every
 *	``LIVE_`` value: objects that exist at the moment of reading, not a
 *	count since load; all are 0 once the module's objects are gone)
 * @RDMALOG_STAT_LIVE_RING_PAGES: pages of ring memory allocated now
 * @RDMALOG_STAT_LIVE_CONNS: peer connection objects (one per peer, held
 *	while anything refers to them)
 * @RDMALOG_STAT_LIVE_EPS: rdma_cm endpoints (each a cm_id, with a QP,
 *	CQ and PD once set up; closed ones until released)
 * @RDMALOG_STAT_LIVE_QPS: queue pairs
 * @RDMALOG_STAT_LIVE_MRS: memory regions (ring grants, forwarding
 *	registrations)
 * @RDMALOG_STAT_LIVE_FWD_REQS: forwarded appends in progress on a backup
 * @RDMALOG_STAT_LIVE_FWD_BUFS: forwarding payload buffers (either side)
 * @RDMALOG_STAT_LIVE_PEERS: configured peers
 * @RDMALOG_STAT_BALLOT_OPENS: times this node opened its ballot word to
 *	candidates' compare-and-swap
 * @RDMALOG_STAT_BALLOT_FOLDS: votes candidates cast into it that this
 *	node then took as its own (closing it, or reading it)
 * @RDMALOG_STAT_BALLOT_TAMPERED: times it found its word changed while
 *	closed (then no longer used)
 * @RDMALOG_STAT_BALLOT_GRANTS: connections on which this node granted
 *	its peer its ballot word (BALLOT sent)
 * @RDMALOG_STAT_VOTE_REQS_RECEIVED: VOTE_REQs (and pre-vote requests)
 *	this node was sent by candidates
 * @RDMALOG_STAT_CAS_VOTES: votes (and pre-votes) this node, standing,
 *	got by compare-and-swap on a peer's ballot word (or by reading it)
 * @RDMALOG_STAT_CAS_REFUSED: peers whose open ballot word refused this
 *	node a vote, judged from what it read there
 * @RDMALOG_STAT_CAS_RACES: compare-and-swaps of this node's that found
 *	the peer's word changed since it read it
 * @RDMALOG_STAT_CAS_READS: reads of a peer's ballot word this node
 *	posted, standing; a candidacy right after its pre-vote does not read
 *	again the words that granted the pre-vote
 * @RDMALOG_STAT_LEADS_RECEIVED: LEAD messages this node took: a peer it
 *	was connected to as a backup said it leads now
 * @RDMALOG_STAT_LEADS_SENT: LEAD messages this node posted: it started
 *	to lead and kept a connection whose peer knew it as a backup
 * @RDMALOG_STAT_CAS_BLOCK_READS: of the reads of a peer's ballot word,
 *	those that read its block too: the peer's HEARTBEAT had not told the
 *	block of the word's opening (Documentation/protocol.rst, "By
 *	compare-and-swap")
 * @RDMALOG_STAT_NOTIFIES_SENT: NOTIFY messages a primary sent: a backup
 *	asked to take its notice block now (a reader waits, a trim, every
 *	notify_kib of stream, or every notice in ACK mode)
 * @RDMALOG_STAT_APPLY_RUNS: times a backup took a new notice from its
 *	notice block and verified and exposed what it says is committed
 * @RDMALOG_STAT_WAITS_SENT: WAIT messages a backup sent: a reader there
 *	waits for a record its notice block does not say is committed
 * @RDMALOG_STAT_APPEND_OVERLAPS: appends that reserved their record's
 *	space while another appender was still copying its own: the copies
 *	and checksums of appenders run side by side, not one at a time
 * @RDMALOG_STAT_APPEND_RETRIES: appends whose record, copied, was given
 *	back to be reserved and copied again, because the copy of a record
 *	reserved before it failed (-EFAULT) and left a hole
 * @RDMALOG_STAT_POLLED_COMPLETIONS: completions an appender spinning for
 *	its commit reaped itself (the poll_us module parameter), not the
 *	softirq after an interrupt
 * @__RDMALOG_STAT_MAX: number of counters
 */
enum rdmalog_stat {
	RDMALOG_STAT_UNSPEC,
	RDMALOG_STAT_PAD,
	RDMALOG_STAT_APPENDS,
	RDMALOG_STAT_APPEND_BYTES,
	RDMALOG_STAT_APPEND_ERRORS,
	RDMALOG_STAT_READS,
	RDMALOG_STAT_READ_BYTES,
	RDMALOG_STAT_CRC_ERRORS,
	RDMALOG_STAT_TRIMS,
	RDMALOG_STAT_TRIMMED_RECORDS,
	RDMALOG_STAT_WRITER_WAITS,
	RDMALOG_STAT_READER_WAITS,
	RDMALOG_STAT_CONNECTS,
	RDMALOG_STAT_DISCONNECTS,
	RDMALOG_STAT_CONNECT_FAILURES,
	RDMALOG_STAT_REFUSALS_SENT,
	RDMALOG_STAT_REFUSALS_RECEIVED,
	RDMALOG_STAT_HEARTBEAT_TIMEOUTS,
	RDMALOG_STAT_MSGS_SENT,
	RDMALOG_STAT_MSGS_RECEIVED,
	RDMALOG_STAT_BAD_MSGS,
	RDMALOG_STAT_COMPLETION_ERRORS,
	RDMALOG_STAT_SEND_STALLS,
	RDMALOG_STAT_COMMIT_TIMEOUTS,
	RDMALOG_STAT_TRUNCATED_RECORDS,
	RDMALOG_STAT_REPL_WRITES,
	RDMALOG_STAT_REPL_BYTES,
	RDMALOG_STAT_REPL_BATCHES,
	RDMALOG_STAT_APPLIED_RECORDS,
	RDMALOG_STAT_FWD_SENT,
	RDMALOG_STAT_FWD_SERVED,
	RDMALOG_STAT_FWD_ERRORS,
	RDMALOG_STAT_CATCHUPS,
	RDMALOG_STAT_CATCHUP_BYTES,
	RDMALOG_STAT_LOG_RESETS,
	RDMALOG_STAT_JOINS,
	RDMALOG_STAT_LIVE_LOGS,
	RDMALOG_STAT_LIVE_RING_PAGES,
	RDMALOG_STAT_LIVE_CONNS,
	RDMALOG_STAT_LIVE_EPS,
	RDMALOG_STAT_LIVE_QPS,
	RDMALOG_STAT_LIVE_MRS,
	RDMALOG_STAT_LIVE_FWD_REQS,
	RDMALOG_STAT_LIVE_FWD_BUFS,
	RDMALOG_STAT_LIVE_PEERS,
	RDMALOG_STAT_BALLOT_OPENS,
	RDMALOG_STAT_BALLOT_FOLDS,
	RDMALOG_STAT_BALLOT_TAMPERED,
	RDMALOG_STAT_BALLOT_GRANTS,
	RDMALOG_STAT_VOTE_REQS_RECEIVED,
	RDMALOG_STAT_CAS_VOTES,
	RDMALOG_STAT_CAS_REFUSED,
	RDMALOG_STAT_CAS_RACES,
	RDMALOG_STAT_CAS_READS,
	RDMALOG_STAT_LEADS_RECEIVED,
	RDMALOG_STAT_LEADS_SENT,
	RDMALOG_STAT_CAS_BLOCK_READS,
	RDMALOG_STAT_NOTIFIES_SENT,
	RDMALOG_STAT_APPLY_RUNS,
	RDMALOG_STAT_WAITS_SENT,
	RDMALOG_STAT_APPEND_OVERLAPS,
	RDMALOG_STAT_APPEND_RETRIES,
	RDMALOG_STAT_POLLED_COMPLETIONS,

	__RDMALOG_STAT_MAX
};

#define RDMALOG_STAT_MAX (__RDMALOG_STAT_MAX - 1)

/**
 * enum rdmalog_event - value of %RDMALOG_A_EVENT in %RDMALOG_CMD_EVENT
 * @RDMALOG_EVENT_UNSPEC: invalid
 * @RDMALOG_EVENT_UP: the log came up
 * @RDMALOG_EVENT_DOWN: the log went down
 * @RDMALOG_EVENT_NODE_CHANGED: node identity or role changed (carries the
 *	NODE_GET attributes)
 * @RDMALOG_EVENT_LOG_CHANGED: log settings changed (carries LOG_GET's)
 * @RDMALOG_EVENT_PEER_ADDED: a peer was added (carries PEER)
 * @RDMALOG_EVENT_PEER_REMOVED: a peer was removed (carries PEER)
 * @RDMALOG_EVENT_PEER_STATE: a peer's connection state changed (PEER)
 * @RDMALOG_EVENT_TRIMMED: records were trimmed (carries FIRST_LSN)
 * @RDMALOG_EVENT_PEER_JOINED: on the primary: a backup joined replication
 *	(it is in sync, or caught up) and now counts toward the commit rule
 *	(carries PEER)
 * @RDMALOG_EVENT_LOG_RESET: on a backup: the primary no longer retains
 *	what this node needs to catch up, so its log restarted empty at the
 *	primary's first retained LSN (carries FIRST_LSN and PEER: the
 *	primary)
 * @RDMALOG_EVENT_DURABILITY: the durability in force changed: it became
 *	weaker than the one requested (degraded: a backup it needs left or
 *	has not joined yet) or equal to it again (restored), or the requested
 *	one changed with it. Carries DURABILITY, DURABILITY_EFFECTIVE,
 *	DURABILITY_DEGRADED, BACKUPS_IN_SYNC and BACKUPS_NEEDED. While up
 *	only: UP is followed by one when the requested durability is not in
 *	force at once; DOWN implies the requested one (no event)
 * @RDMALOG_EVENT_PEER_DIVERGED: on the primary: a backup was judged
 *	diverged and is not replicated to: its log holds records ours never
 *	had, or is another log's (another history), or retains bytes we
 *	would overwrite (carries PEER)
 * @RDMALOG_EVENT_ROLE: this node's role changed while up: it won an
 *	election and leads now, or a primary of a later epoch leads its log
 *	and it stepped down to a backup (carries NODE_GET's attributes: the
 *	new ROLE, and EPOCH, the epoch it leads now or led)
 * @__RDMALOG_EVENT_MAX: number of events
 */
enum rdmalog_event {
	RDMALOG_EVENT_UNSPEC,
	RDMALOG_EVENT_UP,
	RDMALOG_EVENT_DOWN,
	RDMALOG_EVENT_NODE_CHANGED,
	RDMALOG_EVENT_LOG_CHANGED,
	RDMALOG_EVENT_PEER_ADDED,
	RDMALOG_EVENT_PEER_REMOVED,
	RDMALOG_EVENT_PEER_STATE,
	RDMALOG_EVENT_TRIMMED,
	RDMALOG_EVENT_PEER_JOINED,
	RDMALOG_EVENT_LOG_RESET,
	RDMALOG_EVENT_DURABILITY,
	RDMALOG_EVENT_PEER_DIVERGED,
	RDMALOG_EVENT_ROLE,

	__RDMALOG_EVENT_MAX
};

#define RDMALOG_EVENT_MAX (__RDMALOG_EVENT_MAX - 1)

#endif /* _UAPI_RDMALOG_GENL_H */
