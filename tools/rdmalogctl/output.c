// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalogctl - rendering what the kernel reports, as text or JSON. JSON
 * key names are part of the interface (see rdmalogctl(8)): keep them.
 */
#include <arpa/inet.h>
#include <string.h>
#include <time.h>

#include "rdmalogctl.h"

#define HAS(in, a) ((in)->has[RDMALOG_A_##a])

static void jw_u64_if(const char *key, bool has, uint64_t v)
{
	if (has)
		jw_u64(key, v);
	else
		jw_null(key);
}

static void jw_addr_if(const char *key, bool has, const struct rl_addr *addr)
{
	char buf[INET6_ADDRSTRLEN];

	if (has && addr->len)
		jw_str(key, addr_str(addr, buf, sizeof(buf)));
	else
		jw_null(key);
}

/*
 * {"id","cluster_id","address","port","role","epoch","heartbeat_ms",
 *  "peer_timeout_ms","auth","failover","priority","lead"}
 */
void out_node_json(const char *key, const struct rl_info *in)
{
	jw_begin_obj(key);
	jw_u64_if("id", HAS(in, NODE_ID), in->node_id);
	jw_u64_if("cluster_id", HAS(in, CLUSTER_ID), in->cluster_id);
	jw_addr_if("address", HAS(in, ADDR), &in->addr);
	jw_u64_if("port", HAS(in, PORT), in->port);
	if (HAS(in, ROLE))
		jw_str("role", role_name(in->role));
	else
		jw_null("role");
	jw_u64_if("epoch", HAS(in, EPOCH), in->epoch);
	jw_u64_if("heartbeat_ms", HAS(in, HEARTBEAT_MS), in->heartbeat_ms);
	jw_u64_if("peer_timeout_ms", HAS(in, PEER_TIMEOUT_MS),
		  in->peer_timeout_ms);
	if (HAS(in, AUTH))
		jw_str("auth", auth_name(in->auth));
	else
		jw_null("auth");
	if (HAS(in, FAILOVER))
		jw_str("failover", failover_name(in->failover));
	else
		jw_null("failover");
	jw_u64_if("priority", HAS(in, PRIORITY), in->priority);
	if (HAS(in, LEAD))
		jw_bool("lead", in->lead);
	else
		jw_null("lead");
	jw_end_obj();
}

/* {"capacity","max_record","durability","commit_timeout_ms"} */
void out_log_json(const char *key, const struct rl_info *in)
{
	jw_begin_obj(key);
	jw_u64_if("capacity", HAS(in, CAPACITY), in->capacity);
	jw_u64_if("max_record", HAS(in, MAX_RECORD), in->max_record);
	if (HAS(in, DURABILITY))
		jw_str("durability", durability_name(in->durability));
	else
		jw_null("durability");
	jw_u64_if("commit_timeout_ms", HAS(in, COMMIT_TIMEOUT_MS),
		  in->commit_timeout_ms);
	jw_end_obj();
}

/*
 * {"id","address","port","state","msg","reconnects","refusals",
 *  "last_rx_ms","epoch","first_lsn","commit_lsn","next_lsn",
 *  "replicating","bytes_sent","records_sent","acked_lsn","lag",
 *  "repl_errors","catchup","catchup_left","catchup_rate","catchup_bytes",
 *  "sync","refusal","role","priority","lead","vote_path","vote_path_why",
 *  "ballot_granted"}
 */
void out_peer_json(const char *key, const struct rl_peer *p)
{
	jw_begin_obj(key);
	jw_u64_if("id", p->has_id, p->id);
	jw_addr_if("address", p->has_addr, &p->addr);
	jw_u64_if("port", p->has_port, p->port);
	if (p->has_state)
		jw_str("state", peer_state_name(p->state));
	else
		jw_null("state");
	if (p->has_msg)
		jw_str("msg", p->msg);
	else
		jw_null("msg");
	jw_u64_if("reconnects", p->has_reconnects, p->reconnects);
	jw_u64_if("refusals", p->has_refusals, p->refusals);
	jw_u64_if("last_rx_ms", p->has_last_rx, p->last_rx_ms);
	jw_u64_if("epoch", p->has_epoch, p->epoch);
	jw_u64_if("first_lsn", p->has_first_lsn, p->first_lsn);
	jw_u64_if("commit_lsn", p->has_commit_lsn, p->commit_lsn);
	jw_u64_if("next_lsn", p->has_next_lsn, p->next_lsn);
	if (p->has_replicating)
		jw_bool("replicating", p->replicating);
	else
		jw_null("replicating");
	jw_u64_if("bytes_sent", p->has_bytes_sent, p->bytes_sent);
	jw_u64_if("records_sent", p->has_records_sent, p->records_sent);
	jw_u64_if("acked_lsn", p->has_acked_lsn, p->acked_lsn);
	jw_u64_if("lag", p->has_lag, p->lag);
	jw_u64_if("repl_errors", p->has_repl_errors, p->repl_errors);
	if (p->has_catchup)
		jw_str("catchup", catchup_name(p->catchup));
	else
		jw_null("catchup");
	jw_u64_if("catchup_left", p->has_catchup_left, p->catchup_left);
	jw_u64_if("catchup_rate", p->has_catchup_rate, p->catchup_rate);
	jw_u64_if("catchup_bytes", p->has_catchup_bytes, p->catchup_bytes);
	if (p->has_sync)
		jw_str("sync", peer_sync_name(p->sync));
	else
		jw_null("sync");
	if (p->has_refusal)
		jw_str("refusal", refusal_name(p->refusal));
	else
		jw_null("refusal");
	if (p->has_role)
		jw_str("role", role_name(p->role));
	else
		jw_null("role");
	jw_u64_if("priority", p->has_priority, p->priority);
	if (p->has_lead)
		jw_bool("lead", p->lead);
	else
		jw_null("lead");
	if (p->has_vote_path)
		jw_str("vote_path", vote_path_name(p->vote_path));
	else
		jw_null("vote_path");
	if (p->has_vote_why)
		jw_str("vote_path_why", vote_why_name(p->vote_why));
	else
		jw_null("vote_path_why");
	if (p->has_ballot_granted)
		jw_bool("ballot_granted", p->ballot_granted);
	else
		jw_null("ballot_granted");
	jw_end_obj();
}

/*
 * "catchup pulling 12.3MiB left 4.1MiB/s" while a catch-up with @p is in
 * progress, "" otherwise. The rate is left out on the serving side,
 * where the kernel does not measure it (0).
 */
static const char *catchup_str(const struct rl_peer *p, char *buf,
			       size_t len)
{
	char left[40] = "", rate[40] = "", sz[32];

	buf[0] = '\0';
	if (!p->has_catchup || p->catchup == RDMALOG_CATCHUP_NONE)
		return buf;
	if (p->has_catchup_left)
		snprintf(left, sizeof(left), " %s left",
			 human_size(p->catchup_left, sz, sizeof(sz)));
	if (p->has_catchup_rate &&
	    (p->catchup != RDMALOG_CATCHUP_SERVING || p->catchup_rate))
		snprintf(rate, sizeof(rate), " %s/s",
			 human_size(p->catchup_rate, sz, sizeof(sz)));
	snprintf(buf, len, "catchup %s%s%s", catchup_name(p->catchup), left,
		 rate);
	return buf;
}

static void u64_or_dash(char *buf, size_t len, bool has, uint64_t v,
			const char *unit)
{
	if (has)
		snprintf(buf, len, "%llu%s", (unsigned long long)v, unit);
	else
		snprintf(buf, len, "-");
}

/*
 * ID ADDRESS PORT STATE RECONN REFUSED LAST-RX COMMIT SENT ACKED LAG
 * [MESSAGE]: what the peer reported last (COMMIT: its commit LSN), what
 * this node replicates to it (SENT: records written, ACKED: LSN below
 * which it holds every record, LAG: records it does not hold yet; ACKED
 * and LAG only while replicating) and why the state is what it is,
 * after the catch-up in progress with the peer if there is one.
 */
/* The VOTE column: how a candidacy of this node asks the peer. */
static const char *vote_col(const struct rl_peer *p)
{
	if (!p->has_vote_path || p->vote_path == RDMALOG_VOTE_PATH_NONE)
		return "-";
	return p->vote_path == RDMALOG_VOTE_PATH_CAS ? "cas" : "msg";
}

void out_peers_table(const struct rl_peer *peers, unsigned int n,
		     const char *indent)
{
	char buf[INET6_ADDRSTRLEN];
	int w = (int)strlen("ADDRESS");
	unsigned int i;

	for (i = 0; i < n; i++) {
		int l = (int)strlen(addr_str(&peers[i].addr, buf, sizeof(buf)));

		if (l > w)
			w = l;
	}
	printf("%s%-5s %-*s %-6s %-12s %-6s %-7s %-8s %-7s %-7s %-7s %-5s %-4s %s\n",
	       indent, "ID", w, "ADDRESS", "PORT", "STATE", "RECONN", "REFUSED",
	       "LAST-RX", "COMMIT", "SENT", "ACKED", "LAG", "VOTE", "MESSAGE");
	for (i = 0; i < n; i++) {
		const struct rl_peer *p = &peers[i];
		char id[16] = "-", port[8] = "-", rc[24], rf[24], rx[32], cm[24];
		char sn[24], ak[24], lg[24], cu[96], msg[384];
		bool repl = p->has_replicating && p->replicating;
		const char *m = p->has_msg ? p->msg : "";

		if (p->has_id)
			snprintf(id, sizeof(id), "%u", p->id);
		if (p->has_port)
			snprintf(port, sizeof(port), "%u", p->port);
		u64_or_dash(rc, sizeof(rc), p->has_reconnects, p->reconnects, "");
		u64_or_dash(rf, sizeof(rf), p->has_refusals, p->refusals, "");
		u64_or_dash(rx, sizeof(rx), p->has_last_rx, p->last_rx_ms, "ms");
		u64_or_dash(cm, sizeof(cm), p->has_commit_lsn, p->commit_lsn, "");
		u64_or_dash(sn, sizeof(sn), p->has_records_sent &&
			    (repl || p->records_sent), p->records_sent, "");
		u64_or_dash(ak, sizeof(ak), repl && p->has_acked_lsn,
			    p->acked_lsn, "");
		u64_or_dash(lg, sizeof(lg), repl && p->has_lag, p->lag, "");
		catchup_str(p, cu, sizeof(cu));
		snprintf(msg, sizeof(msg), "%s%s%s", cu, cu[0] && m[0] ? "; " : "",
			 m);
		printf("%s%-5s %-*s %-6s %-12s %-6s %-7s %-8s %-7s %-7s %-7s %-5s %-4s %s\n",
		       indent, id, w,
		       p->has_addr ? addr_str(&p->addr, buf, sizeof(buf)) : "-",
		       port, p->has_state ? peer_state_name(p->state) : "-",
		       rc, rf, rx, cm, sn, ak, lg, vote_col(p), msg);
	}
}

static void kv_u64(const char *key, bool has, uint64_t v, bool zero_unset)
{
	if (has && !(zero_unset && !v))
		printf("%-16s%llu\n", key, (unsigned long long)v);
	else
		printf("%-16s-\n", key);
}

static void kv_size(const char *key, bool has, uint64_t v)
{
	char buf[32], num[32];

	if (!has) {
		printf("%-16s-\n", key);
		return;
	}
	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	size_str(v, buf, sizeof(buf));
	if (strcmp(buf, num))
		printf("%-16s%s (%s bytes)\n", key, buf, num);
	else
		printf("%-16s%s bytes\n", key, num);
}

void out_node(const struct rl_info *in)
{
	char buf[INET6_ADDRSTRLEN];

	if (opt.json) {
		out_node_json(NULL, in);
		jw_finish();
		return;
	}
	kv_u64("id", HAS(in, NODE_ID), in->node_id, true);
	kv_u64("cluster", HAS(in, CLUSTER_ID), in->cluster_id, true);
	printf("%-16s%s\n", "address",
	       HAS(in, ADDR) ? addr_str(&in->addr, buf, sizeof(buf)) : "-");
	kv_u64("port", HAS(in, PORT), in->port, true);
	printf("%-16s%s\n", "role", HAS(in, ROLE) ? role_name(in->role) : "-");
	kv_u64("epoch", HAS(in, EPOCH), in->epoch, false);
	if (HAS(in, HEARTBEAT_MS))
		printf("%-16s%u ms\n", "heartbeat", in->heartbeat_ms);
	else
		printf("%-16s-\n", "heartbeat");
	if (HAS(in, PEER_TIMEOUT_MS))
		printf("%-16s%u ms\n", "peer-timeout", in->peer_timeout_ms);
	else
		printf("%-16s-\n", "peer-timeout");
	if (HAS(in, AUTH))
		printf("%-16s%s\n", "auth", in->auth == RDMALOG_AUTH_NONE ?
		       "none (unauthenticated)" : auth_name(in->auth));
	else
		printf("%-16s-\n", "auth");
	printf("%-16s%s\n", "failover",
	       HAS(in, FAILOVER) ? failover_name(in->failover) : "-");
	kv_u64("priority", HAS(in, PRIORITY), in->priority, false);
	printf("%-16s%s\n", "lead",
	       HAS(in, LEAD) ? (in->lead ? "yes" : "no") : "-");
}

void out_log(const struct rl_info *in)
{
	if (opt.json) {
		out_log_json(NULL, in);
		jw_finish();
		return;
	}
	kv_size("capacity", HAS(in, CAPACITY), in->capacity);
	kv_size("max-record", HAS(in, MAX_RECORD), in->max_record);
	printf("%-16s%s\n", "durability",
	       HAS(in, DURABILITY) ? durability_name(in->durability) : "-");
	if (HAS(in, COMMIT_TIMEOUT_MS))
		printf("%-16s%u ms\n", "commit-timeout", in->commit_timeout_ms);
	else
		printf("%-16s-\n", "commit-timeout");
}

/*
 * @st: STATUS_GET reply; @node: NODE_GET reply for the address and port
 * (STATUS_GET does not carry them), or NULL.
 */
void out_status(const struct rl_info *st, const struct rl_info *node)
{
	char buf[INET6_ADDRSTRLEN], b1[32], b2[32];
	struct rl_info merged = *st;
	unsigned int i;

	/* Address and port come from NODE_GET unless STATUS_GET has them. */
	if (node && !HAS(st, ADDR) && node->has[RDMALOG_A_ADDR]) {
		merged.has[RDMALOG_A_ADDR] = true;
		merged.addr = node->addr;
	}
	if (node && !HAS(st, PORT) && node->has[RDMALOG_A_PORT]) {
		merged.has[RDMALOG_A_PORT] = true;
		merged.port = node->port;
	}
	st = &merged;

	if (opt.json) {
		jw_begin_obj(NULL);
		out_node_json("node", st);
		jw_begin_obj("log");
		jw_bool("up", st->up);
		if (HAS(st, LOG_ID)) {
			snprintf(buf, sizeof(buf), "%016llx",
				 (unsigned long long)st->log_id);
			jw_str("id", buf);
		}
		jw_u64_if("epoch", HAS(st, LOG_EPOCH), st->log_epoch);
		jw_u64_if("first_lsn", HAS(st, FIRST_LSN), st->first_lsn);
		jw_u64_if("commit_lsn", HAS(st, COMMIT_LSN), st->commit_lsn);
		jw_u64_if("next_lsn", HAS(st, NEXT_LSN), st->next_lsn);
		jw_u64_if("capacity", HAS(st, CAPACITY), st->capacity);
		jw_u64_if("used", HAS(st, USED), st->used);
		jw_u64_if("max_record", HAS(st, MAX_RECORD), st->max_record);
		jw_u64_if("openers", HAS(st, OPENERS), st->openers);
		jw_end_obj();
		jw_begin_obj("durability");
		if (HAS(st, DURABILITY))
			jw_str("requested", durability_name(st->durability));
		else
			jw_null("requested");
		if (HAS(st, DURABILITY_EFFECTIVE))
			jw_str("effective",
			       durability_name(st->durability_effective));
		else
			jw_null("effective");
		if (HAS(st, DURABILITY_DEGRADED))
			jw_bool("degraded", st->durability_degraded);
		else
			jw_null("degraded");
		jw_u64_if("backups_in_sync", HAS(st, BACKUPS_IN_SYNC),
			  st->backups_in_sync);
		jw_u64_if("backups_needed", HAS(st, BACKUPS_NEEDED),
			  st->backups_needed);
		jw_end_obj();
		jw_str("message", st->status_msg);
		if (HAS(st, PRIMARY)) {
			jw_begin_obj("primary");
			jw_u64("id", st->primary);
			jw_u64_if("epoch", HAS(st, PRIMARY_EPOCH),
				  st->primary_epoch);
			jw_end_obj();
		} else {
			jw_null("primary");
		}
		if (HAS(st, ELECT_EPOCH)) {
			jw_begin_obj("election");
			jw_u64("epoch", st->elect_epoch);
			if (HAS(st, VOTE_EPOCH) && st->vote_epoch &&
			    HAS(st, VOTE_FOR)) {
				jw_begin_obj("vote");
				jw_u64("epoch", st->vote_epoch);
				jw_u64("for", st->vote_for);
				jw_end_obj();
			} else {
				jw_null("vote");
			}
			if (HAS(st, LEARNED))
				jw_bool("learned", st->learned);
			else
				jw_null("learned");
			jw_u64_if("heard", HAS(st, LEARN_HEARD),
				  st->learn_heard);
			jw_u64_if("needed", HAS(st, LEARN_NEEDED),
				  st->learn_needed);
			jw_u64_if("wait_ms", HAS(st, LEARN_WAIT_MS),
				  st->learn_wait_ms);
			jw_end_obj();
		} else {
			jw_null("election");
		}
		if (HAS(st, BALLOT)) {
			jw_begin_obj("ballot");
			jw_str("state", ballot_name(st->ballot));
			if (HAS(st, BALLOT_WORD)) {
				jw_u64("word", st->ballot_word);
				jw_u64("epoch", st->ballot_word >> 32);
				jw_u64("for",
				       (st->ballot_word >> 24) & 0xff);
				jw_u64("seq",
				       (st->ballot_word >> 1) & 0x7fffff);
				jw_bool("open", st->ballot_word & 1);
			}
			if (HAS(st, BALLOT_MSG))
				jw_str("message", st->ballot_msg);
			jw_end_obj();
		} else {
			jw_null("ballot");
		}
		if (HAS(st, CHANGE)) {
			jw_begin_obj("last_change");
			jw_str("why", change_name(st->change));
			jw_u64_if("epoch", HAS(st, CHANGE_EPOCH),
				  st->change_epoch);
			jw_u64_if("ago_ms", HAS(st, CHANGE_AGO_MS),
				  st->change_ago_ms);
			if (HAS(st, CHANGE_DETECT_MS))
				jw_u64("detect_ms", st->change_detect_ms);
			if (HAS(st, CHANGE_ELECT_MS))
				jw_u64("elect_ms", st->change_elect_ms);
			if (HAS(st, CHANGE_FENCE_MS))
				jw_u64("fence_ms", st->change_fence_ms);
			if (HAS(st, CHANGE_RECONCILE_MS))
				jw_u64("reconcile_ms", st->change_reconcile_ms);
			jw_end_obj();
		} else {
			jw_null("last_change");
		}
		jw_begin_arr("peers");
		for (i = 0; i < st->npeers; i++)
			out_peer_json(NULL, &st->peers[i]);
		jw_end_arr();
		jw_end_obj();
		jw_finish();
		return;
	}

	printf("%-16s", "node");
	if (HAS(st, NODE_ID) && st->node_id)
		printf("%u", st->node_id);
	else
		printf("- (not configured)");
	if (HAS(st, CLUSTER_ID) && st->cluster_id)
		printf("  cluster %llu", (unsigned long long)st->cluster_id);
	if (HAS(st, ROLE))
		printf("  role %s", role_name(st->role));
	if (HAS(st, EPOCH))
		printf("  epoch %llu", (unsigned long long)st->epoch);
	if (HAS(st, AUTH))
		printf("  %s", st->auth == RDMALOG_AUTH_NONE ?
		       "unauthenticated" : auth_name(st->auth));
	printf("\n");
	if (HAS(st, ADDR))
		printf("%-16s%s port %u\n", "address",
		       addr_str(&st->addr, buf, sizeof(buf)), st->port);
	printf("%-16s%s", "log", st->up ? "up" : "down");
	if (HAS(st, LOG_ID))
		printf("  id %016llx", (unsigned long long)st->log_id);
	if (HAS(st, LOG_EPOCH))
		printf("  epoch %llu", (unsigned long long)st->log_epoch);
	printf("\n");
	if (st->up) {
		printf("%-16sfirst %llu  commit %llu  next %llu\n", "lsn",
		       (unsigned long long)st->first_lsn,
		       (unsigned long long)st->commit_lsn,
		       (unsigned long long)st->next_lsn);
		printf("%-16s%s capacity, %llu bytes used", "ring",
		       size_str(st->capacity, b1, sizeof(b1)),
		       (unsigned long long)st->used);
		if (st->capacity) {
			uint64_t pm = st->used * 1000 / st->capacity;

			printf(" (%llu.%llu%%)", (unsigned long long)(pm / 10),
			       (unsigned long long)(pm % 10));
		}
		printf(", max-record %s\n",
		       size_str(st->max_record, b2, sizeof(b2)));
	} else if (HAS(st, CAPACITY)) {
		printf("%-16s%s capacity, max-record %s\n", "ring",
		       size_str(st->capacity, b1, sizeof(b1)),
		       size_str(st->max_record, b2, sizeof(b2)));
	}
	if (HAS(st, OPENERS))
		printf("%-16s%u\n", "openers", st->openers);
	printf("%-16s%s", "durability",
	       HAS(st, DURABILITY) ? durability_name(st->durability) : "-");
	if (HAS(st, DURABILITY_EFFECTIVE)) {
		if (!HAS(st, DURABILITY) ||
		    st->durability_effective != st->durability)
			printf(" (effective: %s)",
			       durability_name(st->durability_effective));
	}
	if (HAS(st, DURABILITY_DEGRADED) && st->durability_degraded)
		printf(" degraded");
	if (HAS(st, BACKUPS_NEEDED) && st->backups_needed)
		printf(", %u of %u backups in sync", st->backups_in_sync,
		       st->backups_needed);
	printf("\n");
	if (st->status_msg[0])
		printf("%-16s%s\n", "message", st->status_msg);
	if (HAS(st, HEARTBEAT_MS) && HAS(st, PEER_TIMEOUT_MS))
		printf("%-16sheartbeat %u ms, peer timeout %u ms\n", "timers",
		       st->heartbeat_ms, st->peer_timeout_ms);
	if (st->up) {
		printf("%-16s", "primary");
		if (!HAS(st, PRIMARY))
			printf("none known\n");
		else if (HAS(st, NODE_ID) && st->primary == st->node_id)
			printf("this node, epoch %llu\n",
			       (unsigned long long)st->primary_epoch);
		else
			printf("node %u, epoch %llu\n", st->primary,
			       (unsigned long long)st->primary_epoch);
	}
	if (HAS(st, ELECT_EPOCH) && HAS(st, LEARNED)) {
		printf("%-16sepoch %llu, ", "election",
		       (unsigned long long)st->elect_epoch);
		if (HAS(st, VOTE_EPOCH) && st->vote_epoch && HAS(st, VOTE_FOR))
			printf("voted for node %u in epoch %llu, ",
			       st->vote_for,
			       (unsigned long long)st->vote_epoch);
		else
			printf("no vote, ");
		if (st->learned)
			printf("may vote\n");
		else if (HAS(st, LEARN_WAIT_MS))
			printf("may not vote yet: waits %u ms more %s\n",
			       st->learn_wait_ms,
			       "for candidacies of before its load to end");
		else
			printf("may not vote yet: heard from %u of the %u peers it needs since loaded\n",
			       st->learn_heard, st->learn_needed);
	}
	if (HAS(st, BALLOT) && st->ballot != RDMALOG_BALLOT_DOWN) {
		printf("%-16s%s", "ballot word", ballot_name(st->ballot));
		if (HAS(st, BALLOT_WORD))
			printf(": 0x%016llx (epoch %llu, node %llu, %s)",
			       (unsigned long long)st->ballot_word,
			       (unsigned long long)(st->ballot_word >> 32),
			       (unsigned long long)((st->ballot_word >> 24) &
						    0xff),
			       st->ballot_word & 1 ? "open" : "closed");
		if (HAS(st, BALLOT_MSG))
			printf(": %s", st->ballot_msg);
		printf("\n");
	}
	if (HAS(st, CHANGE) && HAS(st, CHANGE_EPOCH) && HAS(st, CHANGE_AGO_MS)) {
		printf("%-16s%s, epoch %llu, %llu ms ago", "last change",
		       change_text(st->change),
		       (unsigned long long)st->change_epoch,
		       (unsigned long long)st->change_ago_ms);
		if (HAS(st, CHANGE_DETECT_MS))
			printf(": detection %u ms", st->change_detect_ms);
		if (HAS(st, CHANGE_ELECT_MS) && HAS(st, CHANGE_FENCE_MS) &&
		    HAS(st, CHANGE_RECONCILE_MS))
			printf("%s election %u ms (fencing %u ms), reconciliation %u ms",
			       HAS(st, CHANGE_DETECT_MS) ? "," : ":",
			       st->change_elect_ms, st->change_fence_ms,
			       st->change_reconcile_ms);
		printf("\n");
	}
	if (HAS(st, FAILOVER) && HAS(st, PRIORITY) && HAS(st, LEAD))
		printf("%-16s%s, priority %u, %s\n", "failover",
		       failover_name(st->failover), st->priority,
		       st->lead ? "may lead" : "never leads");
	printf("%-16s%u\n", "peers", st->npeers);
	if (st->npeers)
		out_peers_table(st->peers, st->npeers, "  ");
}

void out_stats(const struct rl_info *in)
{
	char buf[32];
	unsigned int s;

	if (opt.json)
		jw_begin_obj(NULL);
	for (s = 0; s < RL_MAX_STATS; s++) {
		const char *name;

		if (!in->stat_has[s])
			continue;
		name = stat_name(s, buf, sizeof(buf));
		if (opt.json)
			jw_u64(name, in->stats[s]);
		else
			printf("%-20s%llu\n", name,
			       (unsigned long long)in->stats[s]);
	}
	if (opt.json) {
		jw_end_obj();
		jw_finish();
	}
}

/* "2026-12-01T10:20:30.123456+0000", for monitor -t. */
static const char *timestamp_str(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char frac[24];

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(frac, sizeof(frac), ".%06ld", ts.tv_nsec / 1000);
	strncat(buf, frac, len - strlen(buf) - 1);
	strftime(frac, sizeof(frac), "%z", &tm);
	strncat(buf, frac, len - strlen(buf) - 1);
	return buf;
}

void out_separator(void)
{
	char ts[48];

	if (opt.json) {
		jw_begin_obj(NULL);
		if (opt.timestamps)
			jw_str("time", timestamp_str(ts, sizeof(ts)));
		jw_str("event", "exists_done");
		jw_end_obj();
		jw_finish();
		return;
	}
	if (opt.timestamps)
		printf("%s ", timestamp_str(ts, sizeof(ts)));
	printf("exists -\n");
	fflush(stdout);
}

/*
 * One line (or one JSON object) per event, with whatever it carries; an
 * event of value 0 is the "exists" of monitor --now.
 */
void out_event(const struct rl_info *ev)
{
	char buf[INET6_ADDRSTRLEN], sz[32], cu[96], ts[48];
	const char *name = !HAS(ev, EVENT) ? "exists" : event_name(ev->event);

	if (opt.json) {
		jw_begin_obj(NULL);
		if (opt.timestamps)
			jw_str("time", timestamp_str(ts, sizeof(ts)));
		jw_str("event", name);
		if (HAS(ev, NODE_ID))
			jw_u64("node_id", ev->node_id);
		if (HAS(ev, CLUSTER_ID))
			jw_u64("cluster_id", ev->cluster_id);
		if (HAS(ev, ADDR))
			jw_str("address", addr_str(&ev->addr, buf, sizeof(buf)));
		if (HAS(ev, PORT))
			jw_u64("port", ev->port);
		if (HAS(ev, ROLE))
			jw_str("role", role_name(ev->role));
		if (HAS(ev, EPOCH))
			jw_u64("epoch", ev->epoch);
		if (HAS(ev, UP))
			jw_bool("up", ev->up);
		if (HAS(ev, CAPACITY))
			jw_u64("capacity", ev->capacity);
		if (HAS(ev, MAX_RECORD))
			jw_u64("max_record", ev->max_record);
		if (HAS(ev, DURABILITY))
			jw_str("durability", durability_name(ev->durability));
		if (HAS(ev, DURABILITY_EFFECTIVE))
			jw_str("durability_effective",
			       durability_name(ev->durability_effective));
		if (HAS(ev, COMMIT_TIMEOUT_MS))
			jw_u64("commit_timeout_ms", ev->commit_timeout_ms);
		if (HAS(ev, FIRST_LSN))
			jw_u64("first_lsn", ev->first_lsn);
		if (HAS(ev, COMMIT_LSN))
			jw_u64("commit_lsn", ev->commit_lsn);
		if (HAS(ev, NEXT_LSN))
			jw_u64("next_lsn", ev->next_lsn);
		if (HAS(ev, STATUS_MSG))
			jw_str("message", ev->status_msg);
		if (HAS(ev, HEARTBEAT_MS))
			jw_u64("heartbeat_ms", ev->heartbeat_ms);
		if (HAS(ev, PEER_TIMEOUT_MS))
			jw_u64("peer_timeout_ms", ev->peer_timeout_ms);
		if (HAS(ev, FAILOVER))
			jw_str("failover", failover_name(ev->failover));
		if (HAS(ev, PRIORITY))
			jw_u64("priority", ev->priority);
		if (HAS(ev, LEAD))
			jw_bool("lead", ev->lead);
		if (HAS(ev, DURABILITY_DEGRADED))
			jw_bool("durability_degraded", ev->durability_degraded);
		if (HAS(ev, BACKUPS_IN_SYNC))
			jw_u64("backups_in_sync", ev->backups_in_sync);
		if (HAS(ev, BACKUPS_NEEDED))
			jw_u64("backups_needed", ev->backups_needed);
		if (HAS(ev, PEER))
			out_peer_json("peer", &ev->peer);
		jw_end_obj();
		jw_finish();
		return;
	}

	if (opt.timestamps)
		printf("%s ", timestamp_str(ts, sizeof(ts)));
	printf("%s", name);
	if (HAS(ev, UP) && !HAS(ev, EVENT))
		printf(" log %s", ev->up ? "up" : "down");
	if (HAS(ev, NODE_ID))
		printf(" node %u", ev->node_id);
	if (HAS(ev, CLUSTER_ID))
		printf(" cluster %llu", (unsigned long long)ev->cluster_id);
	if (HAS(ev, ADDR))
		printf(" address %s", addr_str(&ev->addr, buf, sizeof(buf)));
	if (HAS(ev, PORT))
		printf(" port %u", ev->port);
	if (HAS(ev, ROLE))
		printf(" role %s", role_name(ev->role));
	if (HAS(ev, EPOCH))
		printf(" epoch %llu", (unsigned long long)ev->epoch);
	if (HAS(ev, CAPACITY))
		printf(" capacity %s", size_str(ev->capacity, sz, sizeof(sz)));
	if (HAS(ev, MAX_RECORD))
		printf(" max-record %s", size_str(ev->max_record, sz, sizeof(sz)));
	if (HAS(ev, DURABILITY))
		printf(" durability %s", durability_name(ev->durability));
	if (HAS(ev, DURABILITY_EFFECTIVE))
		printf(" effective %s",
		       durability_name(ev->durability_effective));
	if (HAS(ev, COMMIT_TIMEOUT_MS))
		printf(" commit-timeout %u", ev->commit_timeout_ms);
	if (HAS(ev, FIRST_LSN))
		printf(" first-lsn %llu", (unsigned long long)ev->first_lsn);
	if (HAS(ev, COMMIT_LSN))
		printf(" commit-lsn %llu", (unsigned long long)ev->commit_lsn);
	if (HAS(ev, NEXT_LSN))
		printf(" next-lsn %llu", (unsigned long long)ev->next_lsn);
	if (HAS(ev, HEARTBEAT_MS))
		printf(" heartbeat %u", ev->heartbeat_ms);
	if (HAS(ev, PEER_TIMEOUT_MS))
		printf(" peer-timeout %u", ev->peer_timeout_ms);
	if (HAS(ev, FAILOVER))
		printf(" failover %s", failover_name(ev->failover));
	if (HAS(ev, PRIORITY))
		printf(" priority %u", ev->priority);
	if (HAS(ev, LEAD))
		printf(" lead %s", ev->lead ? "yes" : "no");
	if (HAS(ev, DURABILITY_DEGRADED))
		printf(" %s", ev->durability_degraded ? "degraded" : "restored");
	if (HAS(ev, BACKUPS_IN_SYNC) && HAS(ev, BACKUPS_NEEDED))
		printf(" in-sync %u needed %u", ev->backups_in_sync,
		       ev->backups_needed);
	if (HAS(ev, PEER)) {
		const struct rl_peer *p = &ev->peer;

		if (p->has_id)
			printf(" peer %u", p->id);
		if (p->has_addr)
			printf(" address %s", addr_str(&p->addr, buf, sizeof(buf)));
		if (p->has_port)
			printf(" port %u", p->port);
		if (p->has_state)
			printf(" state %s", peer_state_name(p->state));
		if (p->has_sync)
			printf(" sync %s", peer_sync_name(p->sync));
		if (p->has_refusal)
			printf(" refusal %s", refusal_name(p->refusal));
		if (catchup_str(p, cu, sizeof(cu))[0])
			printf(" %s", cu);
		if (p->has_msg && p->msg[0])
			printf(" peer-message \"%s\"", p->msg);
	}
	if (HAS(ev, STATUS_MSG) && ev->status_msg[0])
		printf(" message \"%s\"", ev->status_msg);
	printf("\n");
	fflush(stdout);
}

void out_empty(void)
{
	if (opt.json) {
		jw_begin_obj(NULL);
		jw_end_obj();
		jw_finish();
	}
}
