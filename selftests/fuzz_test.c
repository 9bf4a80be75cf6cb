// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_test: bounded, replayable fuzzing of rdmalog's two user interfaces
 * (issue 4, "bad input").
 *
 *  - the "rdmalog" generic netlink family, spoken over a raw
 *    NETLINK_GENERIC socket so that malformed messages can be built:
 *    random commands (valid and out of range), random flags, random
 *    attributes (valid types with right and wrong lengths, out-of-range
 *    types, oversized, nested where none is expected, a PEER nest,
 *    truncated TLVs, bad nla_len, trailing bytes);
 *  - /dev/rdmalog: random ioctl numbers, the real ones with wrong sizes
 *    and directions, bad argument pointers (NULL, unmapped, read-only,
 *    kernel, straddling a guard page), real structures with random
 *    contents, read()/write()/writev()/lseek()/pread() with bad pointers
 *    and sizes, on descriptors opened O_RDONLY, O_WRONLY and O_RDWR.
 *
 * Each runs as root and as uid 65534 without capabilities (the netlink
 * socket is opened after the privileges are dropped). Every request must
 * get an answer (exactly one ACK or error per netlink request, the errno
 * in an expected set), the GET answers must agree with a model of the
 * log kept from the results of the valid operations made meanwhile
 * (appends, trims, down/up), and afterwards the node must still work: the
 * log holds exactly what the model says, and a normal up/append/read/down
 * sequence succeeds.
 *
 * The seed is printed; RDMALOG_FUZZ_SEED=N replays a run, and
 * RDMALOG_FUZZ_ITERS=N changes the iteration count of every test.
 * Mutating netlink commands that look valid only ever carry the node's
 * current identity or invalid values (no NODE_SET may change the node id,
 * role, address, port, cluster id or ring size; no PEER_ADD can succeed),
 * and the log is brought down/up only a few times; the other settings
 * the fuzzer may change are restored at the end. The descriptors are
 * O_NONBLOCK, so no call can wait for a record that never comes.
 */
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "rdmalog_test.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

#define FZ_CAPACITY	(1ULL << 20)
#define FZ_MAX_RECORD	4096
#define FZ_NL_ROOT	14000
#define FZ_NL_NOBODY	6000
#define FZ_IOC_ROOT	14000
#define FZ_IOC_NOBODY	6000
#define FZ_NL_WAIT_MS	20000
#define FZ_MAX_LSN	65536
#define FZ_MAX_PRINT	30
#define FZ_TIMEOUT	600

/* ------------------------------------------------------------------ */
/* Seed, random numbers, logging. */

/*
 * One seed for the whole run, chosen before the harness forks the tests;
 * each test derives its own stream from it.
 */
static uint64_t fz_seed;

__attribute__((constructor)) static void fz_seed_init(void)
{
	const char *s = getenv("RDMALOG_FUZZ_SEED");

	fz_seed = s && *s ? strtoull(s, NULL, 0) :
		  rl_now_ns(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 32);
}

static uint64_t fz_base_seed(void)
{
	return fz_seed;
}

static int fz_iters(int def)
{
	const char *s = getenv("RDMALOG_FUZZ_ITERS");

	return s && *s ? atoi(s) : def;
}

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	/* splitmix64: any seed, 0 included, is a good one */
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static bool pct(struct rng *r, int p)
{
	return (int)below(r, 100) < p;
}

static uint64_t pick(struct rng *r, const uint64_t *v, int n)
{
	return v[below(r, n)];
}

#define PICK(r, ...) ({							\
	static const uint64_t __v[] = { __VA_ARGS__ };			\
	pick(r, __v, sizeof(__v) / sizeof(__v[0]));			\
})

static uint64_t interesting(struct rng *r)
{
	switch (below(r, 4)) {
	case 0:
		return PICK(r, 0, 1, 2, 3, 4, 7, 8, 15, 16, 255, 256, 4095,
			    4096, 65535, 65536, 0x7fffffff, 0x80000000,
			    0xffffffff, 0x100000000ULL, 0x7fffffffffffffffULL,
			    0x8000000000000000ULL, ~0ULL);
	case 1:
		return 1ULL << below(r, 64);
	case 2:
		return below(r, 1000);
	}
	return rnd(r);
}

static void fill(struct rng *r, void *p, size_t n)
{
	uint8_t *b = p;

	while (n--)
		*b++ = (uint8_t)rnd(r);
}

static void fz_vlog(const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "# %s\n", line);
}

static void fz_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fz_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fz_vlog(fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* The model of the log, in shared memory (the unprivileged runs fork). */

struct model {
	bool up;
	uint64_t first, next;		/* first_lsn, next_lsn (== commit) */
	uint32_t len[FZ_MAX_LSN];
	uint32_t crc[FZ_MAX_LSN];
	int failures;
	bool fatal;			/* stop: a call did not return */
	uint64_t n_ok, n_err;
	uint64_t errs[256];		/* count per errno */
	uint64_t appends, trims, toggles, ups;
};

static void fz_fail(struct model *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fz_fail(struct model *m, const char *fmt, ...)
{
	va_list ap;

	if (m->failures++ >= FZ_MAX_PRINT)
		return;
	va_start(ap, fmt);
	fz_vlog(fmt, ap);
	va_end(ap);
}

static void fz_count(struct model *m, int err)
{
	if (!err)
		m->n_ok++;
	else
		m->n_err++;
	if (err > 0 && err < 256)
		m->errs[err]++;
}

static void fz_histogram(struct model *m, const char *what)
{
	char line[1024];
	int i, n;

	n = snprintf(line, sizeof(line), "%s: %llu ok, %llu errors:", what,
		     (unsigned long long)m->n_ok,
		     (unsigned long long)m->n_err);
	for (i = 1; i < 256 && n < (int)sizeof(line) - 40; i++)
		if (m->errs[i])
			n += snprintf(line + n, sizeof(line) - n, " %s=%llu",
				      strerrorname_np(i),
				      (unsigned long long)m->errs[i]);
	fz_log("%s", line);
	fz_log("%s: %llu valid appends, %llu trims, %llu down/up", what,
	       (unsigned long long)m->appends, (unsigned long long)m->trims,
	       (unsigned long long)m->toggles);
}

static struct model *model_new(void)
{
	struct model *m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	memset(m, 0, sizeof(*m));
	return m;
}

/* ------------------------------------------------------------------ */
/* Raw generic netlink. */

struct nl {
	int fd;
	uint16_t family;
	uint32_t seq;
	uint8_t reply[16384];	/* the first data message of the last answer */
	int reply_len;
};

struct msg {
	uint8_t b[8192];
	int len;
};

static int nl_open(struct nl *n)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int one = 1, rcv = 1 << 20;

	n->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (n->fd < 0)
		return -errno;
	if (bind(n->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -errno;
	setsockopt(n->fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	setsockopt(n->fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	n->seq = (uint32_t)time(NULL);
	return 0;
}

static void m_init(struct msg *m, uint16_t type, uint16_t flags, uint8_t cmd,
		   uint8_t version)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->b;
	struct genlmsghdr *g = NLMSG_DATA(h);

	memset(m->b, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	h->nlmsg_type = type;
	h->nlmsg_flags = flags;
	g->cmd = cmd;
	g->version = version;
	m->len = NLMSG_HDRLEN + GENL_HDRLEN;
}

/* Append an attribute (header + @len bytes, padded); its offset or -1. */
static int m_put(struct msg *m, uint16_t type, const void *d, int len)
{
	struct nlattr *a = (struct nlattr *)(m->b + m->len);
	int off = m->len;

	if (m->len + NLA_ALIGN(NLA_HDRLEN + len) > (int)sizeof(m->b))
		return -1;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((char *)a + NLA_HDRLEN, d, len);
	memset((char *)a + NLA_HDRLEN + len, 0,
	       NLA_ALIGN(NLA_HDRLEN + len) - NLA_HDRLEN - len);
	m->len += NLA_ALIGN(NLA_HDRLEN + len);
	return off;
}

/*
 * Send @m (nlmsg_len = m->len) and wait for its answer: the ERROR or DONE
 * carrying its sequence number. 0 with *err set, -ETIMEDOUT, -EPROTO when
 * another message turned up (an answer to an earlier request).
 */
static int nl_xfer(struct nl *n, struct msg *m, int *err, int *ndata)
{
	static uint8_t buf[1 << 17];
	struct nlmsghdr *h = (struct nlmsghdr *)m->b;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct pollfd pfd;
	uint32_t seq = ++n->seq;
	int stray = 0;
	ssize_t r;
	int len;

	h->nlmsg_len = m->len;
	h->nlmsg_seq = seq;
	h->nlmsg_pid = 0;
	*ndata = 0;
	n->reply_len = 0;
	if (sendto(n->fd, m->b, m->len, 0, (struct sockaddr *)&sa,
		   sizeof(sa)) != m->len)
		return -errno;
	for (;;) {
		pfd.fd = n->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, FZ_NL_WAIT_MS) != 1)
			return -ETIMEDOUT;
		r = recv(n->fd, buf, sizeof(buf), MSG_TRUNC);
		if (r < 0)
			return -errno;
		if (r > (ssize_t)sizeof(buf))
			return -EMSGSIZE;
		len = (int)r;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != seq) {
				stray++;
				continue;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				*err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
				return stray ? -EPROTO : 0;
			}
			if (h->nlmsg_type == NLMSG_DONE) {
				*err = *(int *)NLMSG_DATA(h);
				return stray ? -EPROTO : 0;
			}
			if (!*ndata && h->nlmsg_len <= sizeof(n->reply)) {
				memcpy(n->reply, h, h->nlmsg_len);
				n->reply_len = h->nlmsg_len;
			}
			(*ndata)++;
		}
	}
}

/* Nothing more may arrive on the socket: 0, or the number of messages. */
static int nl_drain(struct nl *n, int ms)
{
	static uint8_t buf[1 << 16];
	struct pollfd pfd = { .fd = n->fd, .events = POLLIN };
	int extra = 0;

	while (poll(&pfd, 1, ms) == 1) {
		if (recv(n->fd, buf, sizeof(buf), MSG_DONTWAIT) < 0)
			break;
		extra++;
		ms = 0;
	}
	return extra;
}

/* Walk the attributes of the data message in n->reply. */
#define for_each_reply_attr(n, a, rem)					\
	for (a = (struct nlattr *)((n)->reply + NLMSG_HDRLEN + GENL_HDRLEN),\
	     rem = (n)->reply_len - NLMSG_HDRLEN - GENL_HDRLEN;		\
	     rem >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&		\
	     a->nla_len <= rem;						\
	     rem -= NLA_ALIGN(a->nla_len),				\
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))

static int nl_resolve(struct nl *n)
{
	struct nlattr *a;
	struct msg m;
	int err, nd, rem;

	m_init(&m, GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK,
	       CTRL_CMD_GETFAMILY, 1);
	m_put(&m, CTRL_ATTR_FAMILY_NAME, RDMALOG_GENL_NAME,
	      sizeof(RDMALOG_GENL_NAME));
	if (nl_xfer(n, &m, &err, &nd) || err || !nd)
		return -ENOENT;
	for_each_reply_attr(n, a, rem)
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID) {
			memcpy(&n->family, (char *)a + NLA_HDRLEN, 2);
			return 0;
		}
	return -ENOENT;
}

/* A well-formed request with up to two u32/u64 attributes; the error. */
static int nl_cmd(struct nl *n, uint8_t cmd, int t1, uint64_t v1, int l1,
		  int t2, uint64_t v2, int l2)
{
	struct msg m;
	int err, nd, rc;

	m_init(&m, n->family, NLM_F_REQUEST | NLM_F_ACK, cmd,
	       RDMALOG_GENL_VERSION);
	if (t1)
		m_put(&m, t1, &v1, l1);	/* little-endian host */
	if (t2)
		m_put(&m, t2, &v2, l2);
	rc = nl_xfer(n, &m, &err, &nd);
	return rc ? rc : err;
}

/* The numeric attributes of a GET's reply. */
struct snap {
	bool has[RDMALOG_A_MAX + 1];
	uint64_t v[RDMALOG_A_MAX + 1];
	int len[RDMALOG_A_MAX + 1];
	uint8_t addr[16];
};

static int nl_get(struct nl *n, uint8_t cmd, struct snap *s)
{
	struct nlattr *a;
	int err, rem, t;

	memset(s, 0, sizeof(*s));
	err = nl_cmd(n, cmd, 0, 0, 0, 0, 0, 0);
	if (err)
		return err;
	if (!n->reply_len)
		return -EPROTO;
	for_each_reply_attr(n, a, rem) {
		t = a->nla_type & NLA_TYPE_MASK;
		if (t <= 0 || t > RDMALOG_A_MAX)
			continue;
		s->has[t] = true;
		s->len[t] = a->nla_len - NLA_HDRLEN;
		if (t == RDMALOG_A_ADDR) {
			memcpy(s->addr, (char *)a + NLA_HDRLEN,
			       s->len[t] > 16 ? 16 : s->len[t]);
		} else if (s->len[t] <= 8) {
			s->v[t] = 0;
			memcpy(&s->v[t], (char *)a + NLA_HDRLEN, s->len[t]);
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Valid operations on the device, recorded in the model. */

static int dev_open(int flags)
{
	return open(RL_DEV, flags | O_CLOEXEC);
}

/* Record a successful append of @len bytes at @buf made through @fd. */
static void model_appended(struct model *m, int fd, const void *buf,
			   size_t len, const char *how)
{
	uint64_t lsn = rl_last_lsn(fd);

	if (lsn != m->next) {
		fz_fail(m, "%s of %zu bytes: LAST_LSN %llu, expected %llu",
			how, len, (unsigned long long)lsn,
			(unsigned long long)m->next);
		if (lsn == ~0ULL || lsn < m->next)
			return;
		m->next = lsn;
	}
	if (lsn < FZ_MAX_LSN) {
		m->len[lsn] = (uint32_t)len;
		m->crc[lsn] = rl_crc32c(buf, len);
	}
	m->next = lsn + 1;
}

/* A normal append of a pattern record; the model follows. */
static void valid_append(struct model *m, struct rng *r)
{
	static uint8_t buf[FZ_MAX_RECORD];
	size_t len = 1 + below(r, 512);
	ssize_t w;
	int fd;

	if (!m->up || m->next >= FZ_MAX_LSN - 1)
		return;
	fd = dev_open(O_WRONLY);
	if (fd < 0) {
		fz_fail(m, "valid append: open: %s", strerrorname_np(errno));
		return;
	}
	rl_pattern(buf, len, rnd(r));
	w = write(fd, buf, len);
	if (w != (ssize_t)len)
		fz_fail(m, "valid append of %zu bytes at LSN %llu: %zd (%s)",
			len, (unsigned long long)m->next, w,
			w < 0 ? strerrorname_np(errno) : "short");
	else {
		model_appended(m, fd, buf, len, "valid append");
		m->appends++;
	}
	close(fd);
}

/*
 * The log as seen through a new descriptor must be exactly the model:
 * up or down, first/commit/next LSN, and every retained record (length
 * and CRC of the payload read back). Returns the number of mismatches.
 */
static int model_verify(struct model *m, const char *when)
{
	static uint8_t buf[FZ_MAX_RECORD + 64];
	struct rdmalog_read_record rr;
	struct rdmalog_state st;
	int bad = 0, fd;
	uint64_t lsn;
	long n;

	fd = dev_open(O_RDONLY | O_NONBLOCK);
	if (!m->up) {
		if (fd >= 0 || errno != ENETDOWN) {
			fz_fail(m, "%s: log should be down, open: %s", when,
				fd >= 0 ? "succeeded" : strerrorname_np(errno));
			bad++;
		}
		if (fd >= 0)
			close(fd);
		return bad;
	}
	if (fd < 0) {
		fz_fail(m, "%s: open: %s", when, strerrorname_np(errno));
		return 1;
	}
	if (rl_get_state(fd, &st) || !(st.flags & RDMALOG_STATE_UP) ||
	    st.first_lsn != m->first || st.next_lsn != m->next ||
	    st.commit_lsn != m->next || st.node_id != 1 ||
	    st.role != RDMALOG_ROLE_PRIMARY || st.capacity != FZ_CAPACITY ||
	    st.max_record != FZ_MAX_RECORD) {
		fz_fail(m, "%s: state flags %#x first %llu commit %llu next "
			"%llu node %u role %u capacity %llu max_record %llu; "
			"expected up, first %llu next %llu", when, st.flags,
			(unsigned long long)st.first_lsn,
			(unsigned long long)st.commit_lsn,
			(unsigned long long)st.next_lsn, st.node_id, st.role,
			(unsigned long long)st.capacity,
			(unsigned long long)st.max_record,
			(unsigned long long)m->first,
			(unsigned long long)m->next);
		bad++;
	}
	for (lsn = m->first; lsn < m->next && lsn < FZ_MAX_LSN; lsn++) {
		n = rl_read_record(fd, lsn, 0, buf, sizeof(buf), &rr);
		if (n != m->len[lsn] || rr.hdr.lsn != lsn ||
		    rr.hdr.len != m->len[lsn] || rr.hdr.crc32c != m->crc[lsn] ||
		    rl_crc32c(buf, m->len[lsn]) != m->crc[lsn]) {
			fz_fail(m, "%s: LSN %llu: read %ld (%s), len %u crc "
				"%#x; expected len %u crc %#x", when,
				(unsigned long long)lsn, n,
				n < 0 ? strerrorname_np(errno) : "ok",
				rr.hdr.len, rr.hdr.crc32c, m->len[lsn],
				m->crc[lsn]);
			if (++bad > 5)
				break;
		}
	}
	/* nothing past the model's end */
	if (rl_read_record(fd, m->next, 0, buf, sizeof(buf), &rr) != -1 ||
	    errno != ENODATA) {
		fz_fail(m, "%s: LSN %llu past the end: not ENODATA (%s)", when,
			(unsigned long long)m->next, strerrorname_np(errno));
		bad++;
	}
	close(fd);
	return bad;
}

/*
 * After the fuzzing, as root: settings back to @node/@log, the log as the
 * model says, then a normal down/up/append/read/down/up sequence.
 */
static int after_fuzz(struct model *m, struct nl *n, struct snap *node,
		      struct snap *log, const char *what)
{
	char buf[64], when[64];
	struct snap s;
	int bad, fd, err, i;

	snprintf(when, sizeof(when), "after %s", what);
	bad = model_verify(m, when);
	err = nl_cmd(n, RDMALOG_CMD_LOG_SET,
		     RDMALOG_A_DURABILITY, log->v[RDMALOG_A_DURABILITY], 4,
		     RDMALOG_A_COMMIT_TIMEOUT_MS,
		     log->v[RDMALOG_A_COMMIT_TIMEOUT_MS], 4);
	if (err) {
		fz_fail(m, "%s: restoring LOG_SET: %d", when, err);
		bad++;
	}
	err = nl_cmd(n, RDMALOG_CMD_NODE_SET,
		     RDMALOG_A_HEARTBEAT_MS, node->v[RDMALOG_A_HEARTBEAT_MS], 4,
		     RDMALOG_A_PEER_TIMEOUT_MS,
		     node->v[RDMALOG_A_PEER_TIMEOUT_MS], 4);
	if (err) {
		fz_fail(m, "%s: restoring NODE_SET: %d", when, err);
		bad++;
	}
	if (nl_get(n, RDMALOG_CMD_NODE_GET, &s) ||
	    s.v[RDMALOG_A_NODE_ID] != node->v[RDMALOG_A_NODE_ID] ||
	    s.v[RDMALOG_A_ROLE] != node->v[RDMALOG_A_ROLE] ||
	    s.v[RDMALOG_A_PORT] != node->v[RDMALOG_A_PORT] ||
	    s.v[RDMALOG_A_CLUSTER_ID] != node->v[RDMALOG_A_CLUSTER_ID] ||
	    s.has[RDMALOG_A_ADDR] != node->has[RDMALOG_A_ADDR] ||
	    memcmp(s.addr, node->addr, 16)) {
		fz_fail(m, "%s: node identity changed: id %llu role %llu "
			"port %llu", when,
			(unsigned long long)s.v[RDMALOG_A_NODE_ID],
			(unsigned long long)s.v[RDMALOG_A_ROLE],
			(unsigned long long)s.v[RDMALOG_A_PORT]);
		bad++;
	}
	if (nl_get(n, RDMALOG_CMD_LOG_GET, &s) ||
	    s.v[RDMALOG_A_CAPACITY] != FZ_CAPACITY ||
	    s.v[RDMALOG_A_MAX_RECORD] != FZ_MAX_RECORD) {
		fz_fail(m, "%s: log settings changed: capacity %llu "
			"max_record %llu", when,
			(unsigned long long)s.v[RDMALOG_A_CAPACITY],
			(unsigned long long)s.v[RDMALOG_A_MAX_RECORD]);
		bad++;
	}
	/* the normal sequence */
	if (m->up && (err = nl_cmd(n, RDMALOG_CMD_DOWN, 0, 0, 0, 0, 0, 0))) {
		fz_fail(m, "%s: DOWN: %d", when, err);
		bad++;
	}
	if ((err = nl_cmd(n, RDMALOG_CMD_UP, 0, 0, 0, 0, 0, 0))) {
		fz_fail(m, "%s: UP: %d", when, err);
		return bad + 1;
	}
	fd = dev_open(O_RDWR);
	if (fd < 0) {
		fz_fail(m, "%s: open: %s", when, strerrorname_np(errno));
		return bad + 1;
	}
	for (i = 1; i <= 3; i++) {
		snprintf(buf, sizeof(buf), "record %d after %s", i, what);
		if (write(fd, buf, strlen(buf)) != (ssize_t)strlen(buf) ||
		    rl_last_lsn(fd) != (uint64_t)i) {
			fz_fail(m, "%s: append %d: %s", when, i,
				strerrorname_np(errno));
			bad++;
		}
	}
	for (i = 1; i <= 3; i++) {
		char got[64] = "";
		ssize_t r = read(fd, got, sizeof(got) - 1);

		snprintf(buf, sizeof(buf), "record %d after %s", i, what);
		if (r != (ssize_t)strlen(buf) || memcmp(got, buf, r)) {
			fz_fail(m, "%s: read %d: %zd '%s'", when, i, r, got);
			bad++;
		}
	}
	close(fd);
	if ((err = nl_cmd(n, RDMALOG_CMD_DOWN, 0, 0, 0, 0, 0, 0)) ||
	    (err = nl_cmd(n, RDMALOG_CMD_UP, 0, 0, 0, 0, 0, 0))) {
		fz_fail(m, "%s: final DOWN/UP: %d", when, err);
		bad++;
	}
	return bad;
}

/* ------------------------------------------------------------------ */
/* The netlink fuzzer. */

static bool is_admin_cmd(int cmd)
{
	switch (cmd) {
	case RDMALOG_CMD_NODE_SET:
	case RDMALOG_CMD_PEER_ADD:
	case RDMALOG_CMD_PEER_DEL:
	case RDMALOG_CMD_LOG_SET:
	case RDMALOG_CMD_UP:
	case RDMALOG_CMD_DOWN:
	case RDMALOG_CMD_TRIM:
		return true;
	}
	return false;
}

/* Length the policy wants for a top-level attribute (0: any). */
static int attr_len(int type)
{
	switch (type) {
	case RDMALOG_A_PORT:
		return 2;
	case RDMALOG_A_CLUSTER_ID:
	case RDMALOG_A_CAPACITY:
	case RDMALOG_A_LSN:
	case RDMALOG_A_EPOCH:
	case RDMALOG_A_FIRST_LSN:
	case RDMALOG_A_COMMIT_LSN:
	case RDMALOG_A_NEXT_LSN:
	case RDMALOG_A_USED:
		return 8;
	case RDMALOG_A_ADDR:
		return 4;	/* or 16 */
	case RDMALOG_A_UP:
		return 1;
	}
	return 4;
}

struct nlfuzz {
	struct nl *n;
	struct model *m;
	struct rng *r;
	struct snap node, log;
	bool root;
	bool may_toggle;
	uint64_t trim_lsn;	/* value of the last well-formed LSN sent */
};

/*
 * The value of a well-formed attribute @type of @len bytes in @cmd. For
 * the commands that change the node, only the current value or invalid
 * ones, so that no request can change the identity or ring size (nor add
 * a peer). Returns the length actually to use (ADDR may become invalid).
 */
static int attr_value(struct nlfuzz *f, int cmd, int type, uint8_t *out,
		      int len)
{
	struct snap *nd = &f->node, *lg = &f->log;
	struct rng *r = f->r;
	uint64_t v = interesting(r);
	bool guard = cmd == RDMALOG_CMD_NODE_SET ||
		     cmd == RDMALOG_CMD_PEER_ADD ||
		     cmd == RDMALOG_CMD_LOG_SET;

	if (guard) {
		switch (type) {
		case RDMALOG_A_NODE_ID:
			v = pct(r, 50) ? nd->v[RDMALOG_A_NODE_ID] :
			    PICK(r, 0, 256, 1000, 0xffffffff, 0x100);
			break;
		case RDMALOG_A_CLUSTER_ID:
			v = pct(r, 50) ? nd->v[RDMALOG_A_CLUSTER_ID] : 0;
			break;
		case RDMALOG_A_ADDR:
			if (cmd == RDMALOG_CMD_PEER_ADD)
				break;
			if (nd->has[RDMALOG_A_ADDR] &&
			    nd->len[RDMALOG_A_ADDR] == len) {
				memcpy(out, nd->addr, len);
				return len;
			}
			fill(r, out, 5);
			return 5;
		case RDMALOG_A_PORT:
			v = pct(r, 50) ? nd->v[RDMALOG_A_PORT] : 0;
			break;
		case RDMALOG_A_ROLE:
			v = pct(r, 50) ? nd->v[RDMALOG_A_ROLE] :
			    PICK(r, 0, 3, 4, 0xffffffff);
			break;
		case RDMALOG_A_CAPACITY:
			v = pct(r, 50) ? lg->v[RDMALOG_A_CAPACITY] :
			    PICK(r, 0, 4095, 4096, FZ_CAPACITY + 1,
				 FZ_CAPACITY - 1, 1ULL << 40, ~0ULL,
				 (64ULL << 10) - 4096);
			break;
		case RDMALOG_A_MAX_RECORD:
			v = pct(r, 50) ? lg->v[RDMALOG_A_MAX_RECORD] :
			    PICK(r, 0, FZ_CAPACITY / 4 + 1, 0x7ffff001,
				 0x80000000, 0xffffffff);
			break;
		case RDMALOG_A_DURABILITY:
			v = PICK(r, 0, 1, 2, 3, 0xffffffff);
			break;
		case RDMALOG_A_COMMIT_TIMEOUT_MS:
			v = PICK(r, 0, 1, 100, 5000, 3600000, 3600001,
				 0xffffffff);
			break;
		case RDMALOG_A_HEARTBEAT_MS:
		case RDMALOG_A_PEER_TIMEOUT_MS:
			v = PICK(r, 0, 9, 10, 11, 100, 1000, 60000, 60001,
				 600000, 600001, 0xffffffff);
			break;
		}
	} else if (type == RDMALOG_A_LSN && pct(r, 60)) {
		v = f->m->first + below(r, f->m->next - f->m->first + 3);
		if (pct(r, 20))
			v = PICK(r, 0, 1, ~0ULL);
	} else if (type == RDMALOG_A_NODE_ID && pct(r, 50)) {
		v = below(r, 260);
	}
	if (type == RDMALOG_A_ADDR)
		fill(r, out, len);
	else
		memcpy(out, &v, len > 8 ? 8 : len);
	if (type == RDMALOG_A_LSN && len == 8)
		f->trim_lsn = v;
	return len;
}

/* Inner attributes of a nest: random types and lengths. */
static void put_nest(struct nlfuzz *f, struct msg *m, uint16_t type,
		     bool peer)
{
	struct rng *r = f->r;
	uint8_t d[64];
	int start = m->len, i, k = below(r, 4);
	struct nlattr *a;

	if (m_put(m, type, NULL, 0) < 0)
		return;
	for (i = 0; i < k; i++) {
		int t = peer ? below(r, RDMALOG_PEER_A_MAX + 3) :
			below(r, RDMALOG_A_MAX + 3);
		int l = pct(r, 70) ? PICK(r, 0, 1, 2, 4, 8, 16) : below(r, 64);

		fill(r, d, l);
		if (peer && t == RDMALOG_PEER_A_NODE_ID && l == 4)
			memcpy(d, &(uint32_t){ below(r, 300) }, 4);
		if (pct(r, 10))
			t |= NLA_F_NESTED;
		if (m_put(m, t, d, l) < 0)
			break;
	}
	a = (struct nlattr *)(m->b + start);
	a->nla_len = m->len - start;
}

/* An attribute @cmd takes (60%), or any known one. */
static int cmd_attr(struct rng *r, uint8_t cmd)
{
	if (pct(r, 60)) {
		switch (cmd) {
		case RDMALOG_CMD_NODE_SET:
			return PICK(r, RDMALOG_A_NODE_ID, RDMALOG_A_CLUSTER_ID,
				    RDMALOG_A_ADDR, RDMALOG_A_PORT,
				    RDMALOG_A_ROLE, RDMALOG_A_HEARTBEAT_MS,
				    RDMALOG_A_PEER_TIMEOUT_MS, RDMALOG_A_SECRET);
		case RDMALOG_CMD_PEER_ADD:
			return PICK(r, RDMALOG_A_NODE_ID, RDMALOG_A_ADDR,
				    RDMALOG_A_PORT);
		case RDMALOG_CMD_PEER_DEL:
		case RDMALOG_CMD_PEER_GET:
			return RDMALOG_A_NODE_ID;
		case RDMALOG_CMD_LOG_SET:
			return PICK(r, RDMALOG_A_CAPACITY,
				    RDMALOG_A_MAX_RECORD, RDMALOG_A_DURABILITY,
				    RDMALOG_A_COMMIT_TIMEOUT_MS);
		case RDMALOG_CMD_TRIM:
			return RDMALOG_A_LSN;
		}
	}
	return 1 + below(r, RDMALOG_A_MAX);
}

static uint8_t gen_cmd(struct nlfuzz *f)
{
	struct rng *r = f->r;
	uint8_t cmd;

	switch (below(r, 10)) {
	case 0:
		cmd = PICK(r, RDMALOG_CMD_UNSPEC, RDMALOG_CMD_EVENT,
			   __RDMALOG_CMD_MAX, __RDMALOG_CMD_MAX + 1, 0x7f, 0xff);
		break;
	case 1:
		cmd = (uint8_t)rnd(r);
		break;
	default:
		cmd = 1 + below(r, RDMALOG_CMD_MAX);
	}
	/* down/up only now and then: otherwise the no-op one (-EALREADY) */
	if (f->root && (cmd == RDMALOG_CMD_UP || cmd == RDMALOG_CMD_DOWN) &&
	    !f->may_toggle)
		cmd = f->m->up ? RDMALOG_CMD_UP : RDMALOG_CMD_DOWN;
	return cmd;
}

/* One random request; the caller sends it. Fills *cmd, *processed. */
static void gen_msg(struct nlfuzz *f, struct msg *m, uint8_t *cmdp,
		    bool *processed)
{
	struct rng *r = f->r;
	uint16_t flags = NLM_F_REQUEST;
	uint8_t d[3000];
	uint8_t cmd = gen_cmd(f);
	int i, k, t, l;

	if (pct(r, 10))
		flags |= NLM_F_DUMP;
	if (pct(r, 10))
		flags |= (uint16_t)rnd(r);
	if (pct(r, 3))
		flags &= ~NLM_F_REQUEST;
	flags |= NLM_F_ACK;
	*processed = flags & NLM_F_REQUEST;
	*cmdp = cmd;
	m_init(m, f->n->family, flags, cmd,
	       pct(r, 90) ? RDMALOG_GENL_VERSION : (uint8_t)rnd(r));
	if (pct(r, 5))
		((struct genlmsghdr *)(m->b + NLMSG_HDRLEN))->reserved =
			(uint16_t)rnd(r);
	f->trim_lsn = ~0ULL;
	if (pct(r, 3)) {	/* shorter than the genetlink header */
		m->len = NLMSG_HDRLEN + below(r, GENL_HDRLEN);
		return;
	}
	k = PICK(r, 0, 0, 1, 1, 1, 2, 2, 3, 4, 6);
	for (i = 0; i < k; i++) {
		switch (below(r, 20)) {
		case 0: case 1: case 2: case 3: case 4:
		case 5: case 6: case 7: case 8: case 9:
			/* a known attribute with the length it should have,
			 * mostly one that the command takes
			 */
			t = cmd_attr(r, cmd);
			l = attr_len(t);
			if (t == RDMALOG_A_ADDR && pct(r, 50))
				l = 16;
			l = attr_value(f, cmd, t, d, l);
			if (pct(r, 3))
				t |= NLA_F_NET_BYTEORDER;
			m_put(m, t, d, l);
			break;
		case 10: case 11: case 12:
			/* a known attribute with a random length */
			t = below(r, RDMALOG_A_MAX + 1);
			l = pct(r, 80) ? below(r, 24) :
			    PICK(r, 64, 255, 256, 1024, 2999);
			fill(r, d, l);
			m_put(m, t, d, l);
			break;
		case 13: case 14:
			/* out of range types */
			t = pct(r, 50) ? RDMALOG_A_MAX + 1 + below(r, 4) :
			    below(r, NLA_TYPE_MASK + 1);
			l = below(r, 16);
			fill(r, d, l);
			m_put(m, t, d, l);
			break;
		case 15: case 16:
			/* nested where none is expected */
			put_nest(f, m, (1 + below(r, RDMALOG_A_MAX)) |
				 (pct(r, 80) ? NLA_F_NESTED : 0), false);
			break;
		case 17:
			/* a PEER nest, as PEER_GET and the events carry */
			put_nest(f, m, RDMALOG_A_PEER |
				 (pct(r, 80) ? NLA_F_NESTED : 0), true);
			break;
		case 18: {
			/* bad nla_len: shorter than the header or longer
			 * than the rest of the message
			 */
			int off = m_put(m, 1 + below(r, RDMALOG_A_MAX), d,
					below(r, 12));
			struct nlattr *a;

			if (off < 0)
				break;
			a = (struct nlattr *)(m->b + off);
			a->nla_len = pct(r, 50) ? below(r, NLA_HDRLEN) :
				     m->len - off + 1 + below(r, 200);
			break;
		}
		case 19:
			/* trailing bytes: a truncated TLV */
			l = 1 + below(r, NLA_HDRLEN - 1);
			fill(r, m->b + m->len, l);
			m->len += l;
			return;	/* nothing can follow */
		}
	}
}

static bool nl_errno_expected(int e, bool root)
{
	switch (e) {
	case EINVAL: case ERANGE: case EOPNOTSUPP: case EMSGSIZE:
	case ENOENT: case EBUSY: case EALREADY: case EEXIST: case ENOSPC:
	case ENODEV: case ENETDOWN:
		return true;
	case EPERM:
		return !root;
	}
	return false;
}

/* Would genetlink's header check (resv_start_op 0) pass @m? */
static bool hdr_ok(struct msg *m)
{
	struct nlmsghdr *h = (struct nlmsghdr *)m->b;
	struct genlmsghdr *g = NLMSG_DATA(h);
	uint16_t flags = h->nlmsg_flags;

	if ((flags & NLM_F_DUMP) == NLM_F_DUMP)
		flags &= ~NLM_F_DUMP;
	return !g->reserved &&
	       !(flags & ~(NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO));
}

/* Fuzz @iters requests through @f->n; the model follows the results. */
static void nl_fuzz(struct nlfuzz *f, int iters)
{
	struct model *m = f->m;
	struct msg msg;
	uint8_t cmd;
	bool processed;
	int it, err, nd, rc, toggle_every = iters / 4 + 1;

	for (it = 0; it < iters && !m->fatal; it++) {
		if (f->root && it % toggle_every == toggle_every / 2)
			f->may_toggle = true;
		gen_msg(f, &msg, &cmd, &processed);
		rc = nl_xfer(f->n, &msg, &err, &nd);
		if (rc == -ETIMEDOUT) {
			fz_fail(m, "iteration %d: cmd %u: no answer in %d ms",
				it, cmd, FZ_NL_WAIT_MS);
			m->fatal = true;
			break;
		}
		if (rc == -EPROTO) {
			fz_fail(m, "iteration %d: cmd %u: a message answering "
				"an earlier request arrived", it, cmd);
		} else if (rc) {
			fz_fail(m, "iteration %d: cmd %u: %s", it, cmd,
				strerrorname_np(-rc));
			m->fatal = true;
			break;
		}
		fz_count(m, -err);
		if (err > 0 || (err && !nl_errno_expected(-err, f->root)))
			fz_fail(m, "iteration %d: cmd %u flags %#x len %d: "
				"unexpected error %d (%s)", it, cmd,
				((struct nlmsghdr *)msg.b)->nlmsg_flags,
				msg.len, err, strerrorname_np(-err));
		if (!processed)
			continue;
		/*
		 * genetlink checks the header (reserved byte, flags) before
		 * the permission, the attributes after it
		 */
		if (!f->root && is_admin_cmd(cmd) &&
		    msg.len >= NLMSG_HDRLEN + GENL_HDRLEN && hdr_ok(&msg) &&
		    err != -EPERM)
			fz_fail(m, "iteration %d: unprivileged cmd %u flags "
				"%#x: %d (%s), expected EPERM", it, cmd,
				((struct nlmsghdr *)msg.b)->nlmsg_flags, err,
				strerrorname_np(-err));
		if (err)
			goto next;
		switch (cmd) {
		case RDMALOG_CMD_UP:
			if (m->up)
				fz_fail(m, "iteration %d: UP while up "
					"succeeded", it);
			m->up = true;
			m->first = m->next = 1;
			m->ups++;
			f->may_toggle = false;
			m->toggles++;
			break;
		case RDMALOG_CMD_DOWN:
			if (!m->up)
				fz_fail(m, "iteration %d: DOWN while down "
					"succeeded", it);
			m->up = false;
			/* and back up a little later */
			f->may_toggle = true;
			break;
		case RDMALOG_CMD_TRIM:
			if (f->trim_lsn > m->next)
				fz_fail(m, "iteration %d: TRIM %llu above the "
					"commit LSN %llu succeeded", it,
					(unsigned long long)f->trim_lsn,
					(unsigned long long)m->next);
			else if (f->trim_lsn > m->first)
				m->first = f->trim_lsn;
			m->trims++;
			break;
		}
next:
		if (f->root && it % 50 == 25)
			valid_append(m, f->r);
		if (f->root && it % 1000 == 999 &&
		    model_verify(m, "during the fuzzing"))
			break;
	}
	if (nl_drain(f->n, 200))
		fz_fail(m, "messages arrived after the last answer");
}

/* ------------------------------------------------------------------ */
/* The device fuzzer. */

#define NFD 7

struct devfuzz {
	struct model *m;
	struct rng *r;
	struct nl *n;		/* root: to bring the log down and up */
	bool root;
	int fd[NFD];		/* fd[NFD-1] stays on an old log once down */
	int mode[NFD];
	uint64_t gen[NFD];	/* m->ups when opened */
	long page;
	uint8_t *good;		/* 2 pages RW, then a PROT_NONE guard page */
	uint8_t *ro;		/* 1 page read-only, known contents */
	uint8_t *gone;		/* unmapped */
};

static const int open_modes[] = { O_RDONLY, O_WRONLY, O_RDWR };

static void dev_reopen(struct devfuzz *f, int i)
{
	if (f->fd[i] >= 0)
		close(f->fd[i]);
	f->mode[i] = open_modes[below(f->r, 3)];
	f->fd[i] = dev_open(f->mode[i] | O_NONBLOCK);
	f->gen[i] = f->m->ups;
	if (f->fd[i] < 0 && errno != ENETDOWN && errno != EACCES)
		fz_fail(f->m, "open %s mode %d: %s", RL_DEV, f->mode[i],
			strerrorname_np(errno));
}

enum ptr_kind { P_GOOD, P_EDGE, P_RO, P_GONE, P_KERNEL, P_NULL, P_SMALL };

/*
 * A pointer to @size bytes: mostly into the good area (P_GOOD, at an
 * offset where @size bytes fit), else straddling the guard page or bad.
 */
static void *gen_ptr(struct devfuzz *f, size_t size, int good_pct,
		     enum ptr_kind *kind)
{
	struct rng *r = f->r;
	size_t room = 2 * f->page;

	if (pct(r, good_pct)) {
		*kind = P_GOOD;
		if (size > room)
			return f->good;
		return f->good + (below(r, room - size + 1) & ~7UL);
	}
	switch (below(r, 6)) {
	case 0:	/* always runs into the guard page */
		*kind = P_EDGE;
		if (size < 2)
			return f->good + room;
		return f->good + room - 1 -
		       below(r, (size < room ? size : room) - 1);
	case 1:
		*kind = P_RO;
		return f->ro + (size < (size_t)f->page ?
				below(r, f->page - size + 1) : 0);
	case 2:
		*kind = P_GONE;
		return f->gone + below(r, f->page);
	case 3:
		*kind = P_KERNEL;
		return (void *)(uintptr_t)PICK(r, 0xffff888000000000ULL,
					      0xffffffff81000000ULL,
					      0xffffffffff600000ULL,
					      0xfffffffffffff000ULL,
					      0x0000800000000000ULL);
	case 4:
		*kind = P_NULL;
		return NULL;
	}
	*kind = P_SMALL;
	return (void *)(uintptr_t)(1 + below(r, 4096));
}

/* @len bytes at @p can be read (the good area or the read-only page) */
static bool readable(struct devfuzz *f, const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, g = (uintptr_t)f->good,
		  ro = (uintptr_t)f->ro;

	return (a >= g && a + len <= g + 2 * f->page && a + len >= a) ||
	       (a >= ro && a + len <= ro + f->page && a + len >= a);
}

static bool dev_errno_expected(int e)
{
	switch (e) {
	case ENOTTY: case EINVAL: case EFAULT: case EPERM: case ENETDOWN:
	case ERANGE: case ENODATA: case EAGAIN: case EBADF: case EMSGSIZE:
	case ESPIPE:
		return true;
	}
	return false;
}

/* ioctl types the VFS answers itself for every file: not ours to fuzz */
static bool vfs_ioctl_type(unsigned int cmd)
{
	switch (_IOC_TYPE(cmd)) {
	case 0x00: case 'T': case 'X': case 'f': case 0x94:
		return true;
	}
	return false;
}

static const unsigned int real_cmds[] = {
	RDMALOG_IOC_GET_STATE, RDMALOG_IOC_READ_RECORD, RDMALOG_IOC_LAST_LSN,
	RDMALOG_IOC_TRIM,
};

static uint64_t gen_lsn(struct devfuzz *f)
{
	struct model *m = f->m;

	if (pct(f->r, 80))
		return m->first + below(f->r, m->next - m->first + 3) -
		       (pct(f->r, 10) ? 1 : 0);
	return interesting(f->r);
}

/* Check a READ_RECORD / read() result of @n bytes at @lsn against the model. */
static void check_record(struct devfuzz *f, const char *what, uint64_t lsn,
			 long n, const struct rdmalog_record_header *hdr,
			 const void *data, bool dead)
{
	struct model *m = f->m;

	if (dead || !m->up) {
		fz_fail(m, "%s on a dead log returned %ld", what, n);
		return;
	}
	if (lsn < m->first || lsn >= m->next || lsn >= FZ_MAX_LSN) {
		fz_fail(m, "%s: LSN %llu outside [%llu, %llu) returned %ld",
			what, (unsigned long long)lsn,
			(unsigned long long)m->first,
			(unsigned long long)m->next, n);
		return;
	}
	if (n != m->len[lsn] || (hdr && (hdr->lsn != lsn ||
					 hdr->len != m->len[lsn] ||
					 hdr->crc32c != m->crc[lsn])) ||
	    (data && rl_crc32c(data, n) != m->crc[lsn]))
		fz_fail(m, "%s: LSN %llu: %ld bytes, expected %u (crc %#x)",
			what, (unsigned long long)lsn, n, m->len[lsn],
			m->crc[lsn]);
}

static void fuzz_ioctl(struct devfuzz *f, int fd, bool dead)
{
	struct model *m = f->m;
	struct rng *r = f->r;
	unsigned int cmd;
	enum ptr_kind kind, bkind = P_GOOD;
	void *arg;
	size_t sz;
	long ret;
	int e, which = -1;
	uint64_t lsn = 0;
	struct rdmalog_read_record *rr = NULL;
	struct rdmalog_state *st = NULL;

	switch (below(r, 5)) {
	case 0: case 1:
		which = below(r, 4);
		cmd = real_cmds[which];
		break;
	case 2:	/* a real one with another size or direction */
		cmd = real_cmds[below(r, 4)];
		cmd = _IOC(pct(r, 50) ? below(r, 4) : _IOC_DIR(cmd),
			   RDMALOG_IOC_MAGIC, _IOC_NR(cmd),
			   pct(r, 50) ? below(r, 256) : _IOC_SIZE(cmd) +
			   (pct(r, 50) ? 8 : -8));
		break;
	case 3:
		cmd = _IOC(below(r, 4), RDMALOG_IOC_MAGIC, below(r, 256),
			   below(r, 1 << 14));
		break;
	default:
		cmd = (unsigned int)rnd(r);
	}
	if (vfs_ioctl_type(cmd))
		cmd = _IOC(_IOC_DIR(cmd), RDMALOG_IOC_MAGIC, _IOC_NR(cmd),
			   _IOC_SIZE(cmd));
	for (e = 0; e < 4; e++)
		if (cmd == real_cmds[e])
			which = e;
	sz = which >= 0 ? _IOC_SIZE(cmd) : 8;
	arg = gen_ptr(f, sz, which >= 0 ? 60 : 30, &kind);
	if (kind == P_GOOD) {
		fill(r, arg, sz);
		switch (which) {
		case 0:
			st = arg;
			st->version = pct(r, 85) ? RDMALOG_IOC_VERSION :
				      (uint32_t)interesting(r);
			if (pct(r, 80))
				memset(st->reserved, 0, sizeof(st->reserved));
			break;
		case 1: {
			rr = arg;
			rr->version = pct(r, 85) ? RDMALOG_IOC_VERSION :
				      (uint32_t)interesting(r);
			rr->flags = pct(r, 90) ? PICK(r, 0, 0,
						      RDMALOG_RR_AT_CURSOR) :
				    (uint32_t)interesting(r);
			rr->lsn = gen_lsn(f);
			rr->buf_len = pct(r, 70) ?
				PICK(r, 0, 1, 47, 48, 511, 512, 4096, 8192) :
				(uint32_t)interesting(r);
			/* the payload buffer: anywhere but the struct */
			rr->buf = (uintptr_t)gen_ptr(f, rr->buf_len, 50,
						     &bkind);
			if (bkind == P_GOOD)
				rr->buf = (uintptr_t)f->good;
			if (bkind == P_GOOD && rr->buf_len > f->page)
				bkind = P_EDGE;	/* may run into the guard */
			if ((uintptr_t)rr < rr->buf + f->page &&
			    (uintptr_t)rr + sizeof(*rr) > rr->buf)
				rr = memmove(f->good + 2 * f->page -
					     sizeof(*rr), rr, sizeof(*rr));
			arg = rr;
			if (pct(r, 90))
				rr->reserved = 0;
			break;
		}
		case 3:
			lsn = gen_lsn(f);
			memcpy(arg, &lsn, 8);
			break;
		}
	}
	if (which == 3 && readable(f, arg, 8))
		memcpy(&lsn, arg, 8);
	errno = 0;
	ret = ioctl(fd, cmd, arg);
	e = ret < 0 ? errno : 0;
	fz_count(m, e);
	if (ret < 0 && !dev_errno_expected(e)) {
		fz_fail(m, "ioctl(%#x, kind %d): unexpected %s", cmd, kind,
			strerrorname_np(e));
		return;
	}
	if (which < 0 || kind == P_GONE || kind == P_KERNEL ||
	    kind == P_NULL || kind == P_SMALL) {
		if (ret >= 0)
			fz_fail(m, "ioctl(%#x) with a bad or unknown argument "
				"(kind %d) returned %ld", cmd, kind, ret);
		return;
	}
	if (which == 3 && !f->root && e != EPERM)
		fz_fail(m, "unprivileged TRIM: %ld (%s), expected EPERM", ret,
			strerrorname_np(e));
	if (ret < 0)
		return;
	switch (which) {
	case 0:
		if (kind != P_GOOD) {
			fz_fail(m, "GET_STATE into a read-only page or across "
				"the guard page (kind %d) succeeded", kind);
			break;
		}
		st = arg;
		if (!dead && m->up &&
		    (!(st->flags & RDMALOG_STATE_UP) ||
		     st->first_lsn != m->first || st->next_lsn != m->next ||
		     st->commit_lsn != m->next ||
		     st->version != RDMALOG_IOC_VERSION))
			fz_fail(m, "GET_STATE: flags %#x first %llu commit "
				"%llu next %llu; model first %llu next %llu",
				st->flags, (unsigned long long)st->first_lsn,
				(unsigned long long)st->commit_lsn,
				(unsigned long long)st->next_lsn,
				(unsigned long long)m->first,
				(unsigned long long)m->next);
		if (dead && (st->flags & RDMALOG_STATE_UP))
			fz_fail(m, "GET_STATE on a dead descriptor says up");
		break;
	case 1:
		if (kind != P_GOOD) {
			fz_fail(m, "READ_RECORD with an argument of kind %d "
				"returned %ld", kind, ret);
			break;
		}
		check_record(f, "READ_RECORD", rr->lsn, ret, &rr->hdr,
			     bkind == P_GOOD ? (void *)(uintptr_t)rr->buf :
			     NULL, dead);
		break;
	case 2:
		if (kind != P_GOOD)
			fz_fail(m, "LAST_LSN into a read-only page or across "
				"the guard page (kind %d) succeeded", kind);
		break;
	case 3:
		if (dead || !m->up || lsn > m->next) {
			fz_fail(m, "TRIM %llu succeeded (dead %d, up %d, "
				"commit %llu)", (unsigned long long)lsn, dead,
				m->up, (unsigned long long)m->next);
			break;
		}
		if (lsn > m->first)
			m->first = lsn;
		m->trims++;
		break;
	}
}

/* read(), write(), writev(), lseek(), pread(), pwrite(), poll() */
static void fuzz_rw(struct devfuzz *f, int fd, int mode, bool dead)
{
	struct model *m = f->m;
	struct rng *r = f->r;
	enum ptr_kind kind;
	struct iovec iov[3];
	size_t len, total;
	uint64_t cur;
	uint8_t *p;
	long ret;
	int e, op = below(r, 10), i, niov;

	len = pct(r, 80) ? PICK(r, 0, 1, 7, 48, 100, 512, FZ_MAX_RECORD - 1,
				FZ_MAX_RECORD, FZ_MAX_RECORD + 1, 8192) :
	      (size_t)interesting(r);
	p = gen_ptr(f, len, 50, &kind);
	errno = 0;
	switch (op) {
	case 0: case 1: case 2:	/* read */
		cur = (uint64_t)lseek(fd, 0, SEEK_CUR);
		ret = read(fd, p, len);
		e = ret < 0 ? errno : 0;
		if (ret >= 0 && (kind == P_GOOD || kind == P_EDGE) &&
		    readable(f, p, ret))
			check_record(f, "read()", cur, ret, NULL, p, dead);
		else if (ret >= 0)
			fz_fail(m, "read() into a bad buffer (kind %d, %zu "
				"bytes) returned %ld", kind, len, ret);
		break;
	case 3: case 4: case 5:	/* write */
		if (kind == P_GOOD && len <= 2 * (size_t)f->page)
			fill(r, p, len);
		ret = write(fd, p, len);
		e = ret < 0 ? errno : 0;
		if (ret >= 0) {
			if (ret != (long)len || mode == O_RDONLY || dead ||
			    !readable(f, p, len))
				fz_fail(m, "write(kind %d, %zu) on mode %d "
					"(dead %d) returned %ld", kind, len,
					mode, dead, ret);
			else
				model_appended(m, fd, p, len, "write()");
		}
		break;
	case 6: {	/* writev of good pieces, sometimes a bad one */
		static uint8_t flat[3 * 1500];
		int bad = -1;
		uint8_t *q = flat;

		niov = 1 + below(r, 3);
		total = 0;
		for (i = 0; i < niov; i++) {
			iov[i].iov_len = below(r, 1500);
			iov[i].iov_base = f->good + i * 1500;
			fill(r, iov[i].iov_base, iov[i].iov_len);
			memcpy(q, iov[i].iov_base, iov[i].iov_len);
			q += iov[i].iov_len;
			total += iov[i].iov_len;
		}
		if (pct(r, 30) && (kind == P_GONE || kind == P_KERNEL ||
				   kind == P_NULL || kind == P_SMALL)) {
			bad = below(r, niov);
			iov[bad].iov_base = p;
		}
		ret = writev(fd, iov, niov);
		e = ret < 0 ? errno : 0;
		/* the VFS answers 0 for 0 bytes without asking the driver */
		if (ret == 0 && total == 0)
			break;
		if (ret >= 0) {
			if (ret != (long)total || mode == O_RDONLY || dead ||
			    (bad >= 0 && iov[bad].iov_len))
				fz_fail(m, "writev(%d pieces, %zu bytes, bad "
					"piece %d) on mode %d (dead %d) "
					"returned %ld", niov, total, bad, mode,
					dead, ret);
			else
				model_appended(m, fd, flat, total, "writev()");
		}
		break;
	}
	case 7:	/* lseek */
		ret = lseek(fd, (off_t)(pct(r, 50) ? gen_lsn(f) :
					interesting(r)),
			    below(r, 6));
		e = ret < 0 ? errno : 0;
		break;
	case 8:	/* pread/pwrite: the device is a stream */
		if (pct(r, 50))
			ret = pread(fd, p, len, (off_t)gen_lsn(f));
		else
			ret = pwrite(fd, p, len, (off_t)gen_lsn(f));
		e = ret < 0 ? errno : 0;
		if (ret >= 0)
			fz_fail(m, "pread/pwrite returned %ld", ret);
		break;
	default: {
		struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT };

		ret = poll(&pfd, 1, 0);
		e = ret < 0 ? errno : 0;
		if (ret < 0)
			fz_fail(m, "poll: %s", strerrorname_np(e));
		break;
	}
	}
	fz_count(m, e);
	if (ret < 0 && !dev_errno_expected(e))
		fz_fail(m, "op %d (kind %d, %zu bytes) on mode %d: unexpected "
			"%s", op, kind, len, mode, strerrorname_np(e));
}

static void dev_toggle(struct devfuzz *f)
{
	struct model *m = f->m;
	int err, i;

	err = nl_cmd(f->n, m->up ? RDMALOG_CMD_DOWN : RDMALOG_CMD_UP,
		     0, 0, 0, 0, 0, 0);
	if (err) {
		fz_fail(m, "%s: %d", m->up ? "DOWN" : "UP", err);
		return;
	}
	m->toggles++;
	m->up = !m->up;
	if (m->up) {
		m->ups++;
		m->first = m->next = 1;
		/* fresh descriptors, but one stays on the old log */
		for (i = 0; i < NFD - 1; i++)
			dev_reopen(f, i);
	}
}

static void dev_fuzz(struct devfuzz *f, int iters)
{
	struct model *m = f->m;
	struct rng *r = f->r;
	int it, i, toggle_every = iters / 4 + 1;
	bool dead;

	for (it = 0; it < iters; it++) {
		if (f->root && it % toggle_every == toggle_every / 2)
			dev_toggle(f);	/* down here, up on the next pass */
		if (f->root && !m->up && it % toggle_every ==
		    toggle_every / 2 + toggle_every / 10)
			dev_toggle(f);
		i = below(r, NFD);
		if (f->root && pct(r, 2))
			dev_reopen(f, i);
		if (f->fd[i] < 0)
			continue;
		/* dead: opened on a log that went down since */
		dead = !m->up || f->gen[i] != m->ups;
		if (pct(r, 50))
			fuzz_ioctl(f, f->fd[i], dead);
		else
			fuzz_rw(f, f->fd[i], f->mode[i], dead);
		if (f->root && it % 100 == 50)
			valid_append(m, r);
		if (f->root && it % 1000 == 999 &&
		    model_verify(m, "during the fuzzing"))
			break;
	}
	for (i = 0; i < NFD; i++)
		if (f->fd[i] >= 0)
			close(f->fd[i]);
}

static int dev_mem(struct devfuzz *f)
{
	int i;

	for (i = 0; i < NFD; i++) {
		f->fd[i] = -1;
		dev_reopen(f, i);
	}
	f->page = sysconf(_SC_PAGESIZE);
	f->good = mmap(NULL, 3 * f->page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f->ro = mmap(NULL, f->page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f->gone = mmap(NULL, f->page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->good == MAP_FAILED || f->ro == MAP_FAILED ||
	    f->gone == MAP_FAILED)
		return -1;
	rl_pattern(f->ro, f->page, 4);
	if (mprotect(f->good + 2 * f->page, f->page, PROT_NONE) ||
	    mprotect(f->ro, f->page, PROT_READ) || munmap(f->gone, f->page))
		return -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The tests. */

FIXTURE(fz) {
	struct model *m;
	struct nl nl;
	struct snap node, log;
	struct rng rng;
	uint64_t seed;
	pid_t child;
};

FIXTURE_SETUP(fz)
{
	char err[2048];

	self->child = -1;
	self->nl.fd = -1;
	ASSERT_EQ(0, rl_log_reset(FZ_CAPACITY, FZ_MAX_RECORD, "async", err,
				  sizeof(err))) {
		TH_LOG("%s", err);
	}
	self->m = model_new();
	ASSERT_NE(NULL, self->m);
	self->m->up = true;
	self->m->first = self->m->next = 1;
	ASSERT_EQ(0, nl_open(&self->nl));
	ASSERT_EQ(0, nl_resolve(&self->nl));
	ASSERT_EQ(0, nl_get(&self->nl, RDMALOG_CMD_NODE_GET, &self->node));
	ASSERT_EQ(0, nl_get(&self->nl, RDMALOG_CMD_LOG_GET, &self->log));
	ASSERT_EQ(1, self->node.v[RDMALOG_A_NODE_ID]);
	ASSERT_EQ(FZ_CAPACITY, self->log.v[RDMALOG_A_CAPACITY]);
	self->seed = fz_base_seed();
	TH_LOG("seed %llu: replay with RDMALOG_FUZZ_SEED=%llu",
	       (unsigned long long)self->seed,
	       (unsigned long long)self->seed);
	/* a few records before the fuzzing starts */
	self->rng.s = self->seed ^ 0x5eed;
	for (int i = 0; i < 5; i++)
		valid_append(self->m, &self->rng);
	ASSERT_EQ(0, self->m->failures);
}

FIXTURE_TEARDOWN(fz)
{
	rl_reap(self->child);
	if (self->nl.fd >= 0)
		close(self->nl.fd);
	if (self->m)
		munmap(self->m, sizeof(*self->m));
}

/* Run @fn in a child as uid 65534 without capabilities; its exit status. */
#define AS_NOBODY(self, timeout_ms, ...) do {				\
	int __st;							\
	self->child = fork();						\
	ASSERT_LE(0, self->child);					\
	if (self->child == 0) {						\
		if (rl_drop_to_nobody())				\
			_exit(10);					\
		__VA_ARGS__;						\
		_exit(0);						\
	}								\
	ASSERT_EQ(self->child,						\
		  rl_waitpid_ms(self->child, &__st, timeout_ms)) {	\
		TH_LOG("the unprivileged fuzzer did not finish");	\
	}								\
	self->child = -1;						\
	ASSERT_TRUE(WIFEXITED(__st) && WEXITSTATUS(__st) == 0) {	\
		TH_LOG("unprivileged fuzzer: %s", rl_status_str(__st));	\
	}								\
} while (0)

TEST_F_TIMEOUT(fz, netlink_root, FZ_TIMEOUT)
{
	struct nlfuzz f = {
		.n = &self->nl, .m = self->m, .r = &self->rng,
		.node = self->node, .log = self->log, .root = true,
	};

	self->rng.s = self->seed ^ 0x6e6c726f6f74ULL;	/* "nlroot" */
	nl_fuzz(&f, fz_iters(FZ_NL_ROOT));
	fz_histogram(self->m, "netlink as root");
	ASSERT_FALSE(self->m->fatal);
	after_fuzz(self->m, &self->nl, &self->node, &self->log,
		   "the netlink fuzzing as root");
	ASSERT_EQ(0, self->m->failures) {
		TH_LOG("seed %llu", (unsigned long long)self->seed);
	}
}

TEST_F_TIMEOUT(fz, netlink_nobody, FZ_TIMEOUT)
{
	self->rng.s = self->seed ^ 0x6e6c6e6f626fULL;	/* "nlnobo" */
	AS_NOBODY(self, (FZ_TIMEOUT - 60) * 1000, {
		struct nl n;
		struct nlfuzz f = {
			.n = &n, .m = self->m, .r = &self->rng,
			.node = self->node, .log = self->log, .root = false,
		};

		/* opened after the drop: the kernel sees nobody */
		if (nl_open(&n))
			_exit(11);
		n.family = self->nl.family;
		nl_fuzz(&f, fz_iters(FZ_NL_NOBODY));
		close(n.fd);
	});
	fz_histogram(self->m, "netlink as nobody");
	ASSERT_FALSE(self->m->fatal);
	after_fuzz(self->m, &self->nl, &self->node, &self->log,
		   "the netlink fuzzing as nobody");
	ASSERT_EQ(0, self->m->failures) {
		TH_LOG("seed %llu", (unsigned long long)self->seed);
	}
}

TEST_F_TIMEOUT(fz, device_root, FZ_TIMEOUT)
{
	struct devfuzz f = {
		.m = self->m, .r = &self->rng, .n = &self->nl, .root = true,
	};

	self->rng.s = self->seed ^ 0x646576726f6fULL;	/* "devroo" */
	ASSERT_EQ(0, dev_mem(&f));
	dev_fuzz(&f, fz_iters(FZ_IOC_ROOT));
	fz_histogram(self->m, "device as root");
	if (!self->m->up)
		dev_toggle(&f);
	after_fuzz(self->m, &self->nl, &self->node, &self->log,
		   "the device fuzzing as root");
	ASSERT_EQ(0, self->m->failures) {
		TH_LOG("seed %llu", (unsigned long long)self->seed);
	}
}

TEST_F_TIMEOUT(fz, device_nobody, FZ_TIMEOUT)
{
	struct devfuzz f = {
		.m = self->m, .r = &self->rng, .n = NULL, .root = false,
	};

	self->rng.s = self->seed ^ 0x6465766e6f62ULL;	/* "devnob" */
	ASSERT_EQ(0, dev_mem(&f));
	AS_NOBODY(self, (FZ_TIMEOUT - 60) * 1000, {
		/* descriptors opened by root (kept) and by nobody */
		dev_fuzz(&f, fz_iters(FZ_IOC_NOBODY));
	});
	fz_histogram(self->m, "device as nobody");
	after_fuzz(self->m, &self->nl, &self->node, &self->log,
		   "the device fuzzing as nobody");
	ASSERT_EQ(0, self->m->failures) {
		TH_LOG("seed %llu", (unsigned long long)self->seed);
	}
}

TEST_HARNESS_MAIN
