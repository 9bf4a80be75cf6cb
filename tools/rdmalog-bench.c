// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalog-bench - append load generator for /dev/rdmalog.
 *
 *   rdmalog-bench [-t THREADS] [-s SIZE] [-n COUNT | -d SECONDS]
 *                 [-w WARMUP] [-r RATE] [-j] [--device PATH]
 *                 [--verify | --trim]
 *
 * THREADS threads each open the device and append records of SIZE bytes,
 * one write() per record, COUNT times (or for SECONDS). Every write() is
 * timed with CLOCK_MONOTONIC; a write() returns once the record is durable
 * per the log's durability mode, so the latency is the commit latency as an
 * application sees it. The first WARMUP appends of each thread are not
 * measured. The report gives appends/s, payload MiB/s, exact latency
 * percentiles over every measured append, and failed appends by errno.
 *
 * -r RATE is the open loop: the threads offer RATE appends/s in all, in
 * turn at fixed intervals from the start, and an append's
 * latency counts from the time it was meant to start, not from its
 * write(): a stall is charged to every append it held back (coordinated
 * omission), as an application with that arrival rate would see it.
 *
 * --verify reads every appended record back by LSN (RDMALOG_IOC_LAST_LSN
 * after each append, RDMALOG_IOC_READ_RECORD afterwards) and checks its
 * length, its CRC32C and its payload, so that a benchmark can never
 * silently measure failures. The LAST_LSN ioctl is outside the timed
 * write() but inside the run, so it slightly lowers appends/s.
 *
 * Exit status: 0 when every append succeeded (and verified), 1 when an
 * append failed or verification found a problem, 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "rdmalog.h"

#define PROG		"rdmalog-bench"
#define HDR_BYTES	((uint64_t)sizeof(struct rdmalog_ring_record))
#define MAX_ERRNO	256		/* errno values counted one by one */
#define GIVE_UP_AFTER	100		/* consecutive failures per thread */
#define STAMP_MAGIC	0x4e454252U	/* "RBEN" */

struct opts {
	unsigned int threads;
	uint64_t size;
	uint64_t count;			/* per thread; 0 with -d */
	double duration;		/* seconds; 0 with -n */
	uint64_t warmup;		/* per thread */
	int json;
	int verify;
	int trim;
	double rate;			/* -r: appends/s offered in all; 0 closed */
	const char *device;
};

struct sample_buf {
	uint64_t *v;
	size_t n, cap;
};

struct worker {
	pthread_t tid;
	unsigned int idx;
	int fd;
	unsigned char *buf;
	struct sample_buf lat;		/* ns, measured appends only */
	struct sample_buf lsns;		/* with --verify: every append's LSN */
	uint64_t ok, failed, warm_ok;
	uint64_t lsn_errs;		/* LAST_LSN failed after a write */
	uint64_t errs[MAX_ERRNO + 1];	/* [MAX_ERRNO]: anything larger */
	uint64_t first_lsn, last_lsn;
	uint64_t t_start, t_end;	/* ns, measured phase */
	int gave_up;
	int setup_err;			/* errno of a failed open, else 0 */
};

static struct opts o = {
	.threads = 1,
	.size = 64,
	.device = "/dev/" RDMALOG_DEV_NAME,
};

static pthread_barrier_t start_barrier;
static atomic_int stop_flag;
static atomic_int workers_done;

/* ------------------------------------------------------------- helpers */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int push(struct sample_buf *b, uint64_t v)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		uint64_t *p = realloc(b->v, cap * sizeof(*p));

		if (!p)
			return -1;
		b->v = p;
		b->cap = cap;
	}
	b->v[b->n++] = v;
	return 0;
}

static int reserve(struct sample_buf *b, size_t n)
{
	if (!n)
		return 0;
	b->v = malloc(n * sizeof(*b->v));
	if (!b->v)
		return -1;
	b->cap = n;
	return 0;
}

static uint32_t crc32c_table[256];

static void crc32c_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82f63b78U : c >> 1;
		crc32c_table[i] = c;
	}
}

/* CRC32C (Castagnoli), seed ~0, final xor ~0: as the kernel stores it */
static uint32_t crc32c(const unsigned char *p, size_t len)
{
	uint32_t c = ~0U;

	while (len--)
		c = crc32c_table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

static const char *errname(int e)
{
	const char *n = e > 0 && e < MAX_ERRNO ? strerrorname_np(e) : NULL;
	static __thread char tmp[32];

	if (n)
		return n;
	if (e >= MAX_ERRNO)
		return "E_OTHER";
	snprintf(tmp, sizeof(tmp), "errno_%d", e);
	return tmp;
}

static int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	errno = 0;
	if (*s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		end++;
		break;
	case 'm': case 'M':
		shift = 20;
		end++;
		break;
	case 'g': case 'G':
		shift = 30;
		end++;
		break;
	}
	if (shift && (!strcmp(end, "iB") || !strcmp(end, "ib") ||
		      !strcmp(end, "B")))
		end += strlen(end);
	else if (!shift && !strcmp(end, "B"))
		end++;
	if (*end || v > (ULLONG_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	if (*s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

/* A positive number no larger than @max (-d seconds, -r appends/s). */
static int parse_positive(const char *s, double max, double *out)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v > 0) || v > max)
		return -1;
	*out = v;
	return 0;
}

static int get_state(int fd, struct rdmalog_state *st)
{
	memset(st, 0, sizeof(*st));
	st->version = RDMALOG_IOC_VERSION;
	return ioctl(fd, RDMALOG_IOC_GET_STATE, st);
}

static const char *durability_name(uint32_t d)
{
	switch (d) {
	case RDMALOG_DURABLE_ASYNC:
		return "async";
	case RDMALOG_DURABLE_QUORUM:
		return "quorum";
	case RDMALOG_DURABLE_ALL:
		return "all";
	}
	return "unknown";
}

static uint64_t ring_bytes(uint64_t size)
{
	uint64_t a = RDMALOG_RECORD_ALIGN;

	return (HDR_BYTES + size + a - 1) / a * a;
}

/*
 * The payload: a per-thread pattern, with (magic, thread, sequence) stamped
 * into the first 16 bytes when the record is large enough, so that a
 * record read back can be matched to the append that wrote it.
 */
static void fill_pattern(unsigned char *buf, uint64_t size, unsigned int idx)
{
	uint32_t x = 0x9e3779b9U * (idx + 1);

	for (uint64_t i = 0; i < size; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = (unsigned char)x;
	}
}

static void stamp(unsigned char *buf, uint64_t size, unsigned int idx,
		  uint64_t seq)
{
	uint32_t hdr[2] = { STAMP_MAGIC, idx };

	if (size < 16)
		return;
	memcpy(buf, hdr, sizeof(hdr));
	memcpy(buf + 8, &seq, sizeof(seq));
}

/* ------------------------------------------------------------- workers */

/*
 * Append one record; @due: in the open loop, when it was meant to start
 * (its latency counts from then; it waits for it if early), else 0.
 */
static int append_one(struct worker *w, uint64_t *seq, int measured,
		      uint64_t due)
{
	uint64_t t0, t1, lsn = 0;
	ssize_t r;

	stamp(w->buf, o.size, w->idx, *seq);
	if (due) {
		struct timespec ts = {
			.tv_sec = (time_t)(due / 1000000000ULL),
			.tv_nsec = (long)(due % 1000000000ULL),
		};

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
	}
	t0 = due ? due : now_ns();
	r = write(w->fd, w->buf, o.size);
	t1 = now_ns();
	if (r != (ssize_t)o.size) {
		int e = r < 0 ? errno : EIO;	/* a short write is a failure */

		w->failed++;
		w->errs[e > 0 && e < MAX_ERRNO ? e : MAX_ERRNO]++;
		return -1;
	}
	(*seq)++;
	if (measured) {
		w->ok++;
		if (push(&w->lat, t1 - t0))
			return -2;
	} else {
		w->warm_ok++;
	}
	if (o.verify || !w->first_lsn) {
		if (ioctl(w->fd, RDMALOG_IOC_LAST_LSN, &lsn) < 0 || !lsn) {
			w->lsn_errs++;
			lsn = 0;
		}
		if (!w->first_lsn)
			w->first_lsn = lsn;
		if (o.verify && push(&w->lsns, lsn))
			return -2;
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t seq = 0, consecutive = 0, deadline = 0;
	int r;

	w->fd = open(o.device, O_WRONLY | O_CLOEXEC);
	if (w->fd < 0)
		w->setup_err = errno;
	for (uint64_t i = 0; w->fd >= 0 && i < o.warmup; i++) {
		r = append_one(w, &seq, 0, 0);
		if (r == -2 || (r && ++consecutive >= GIVE_UP_AFTER)) {
			w->gave_up = 1;
			break;
		} else if (!r) {
			consecutive = 0;
		}
	}
	pthread_barrier_wait(&start_barrier);
	w->t_start = now_ns();
	w->t_end = w->t_start;
	if (w->fd < 0 || w->gave_up)
		goto out;
	if (o.duration > 0)
		deadline = w->t_start + (uint64_t)(o.duration * 1e9);
	for (uint64_t i = 0; ; i++) {
		if (o.count && i >= o.count)
			break;
		if (deadline && (now_ns() >= deadline ||
				 atomic_load(&stop_flag)))
			break;
		/* the threads in turn: append i of thread k is due at
		 * (i * threads + k) / rate from the start
		 */
		r = append_one(w, &seq, 1,
			       o.rate ? w->t_start +
			       (uint64_t)(((double)i * o.threads + w->idx) *
					  1e9 / o.rate) : 0);
		if (r == -2 || (r && ++consecutive >= GIVE_UP_AFTER)) {
			w->gave_up = 1;
			break;
		} else if (!r) {
			consecutive = 0;
		}
	}
	w->t_end = now_ns();
	if (ioctl(w->fd, RDMALOG_IOC_LAST_LSN, &w->last_lsn) < 0)
		w->last_lsn = 0;
out:
	atomic_fetch_add(&workers_done, 1);
	return NULL;
}

/*
 * With --trim, or in a timed run (-d), a watcher keeps an eye on the ring:
 * a full ring blocks writers until someone trims. --trim discards what
 * this run appended once the ring is half full; without it, a timed run
 * that fills the ring stops with an error instead of hanging.
 */
struct watcher {
	pthread_t tid;
	int fd;
	uint64_t trims;
	int ring_full;
};

static void *watcher_main(void *arg)
{
	struct watcher *wt = arg;
	struct rdmalog_state st;
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	while (atomic_load(&workers_done) < (int)o.threads) {
		nanosleep(&ts, NULL);
		if (get_state(wt->fd, &st) < 0 || !(st.flags & RDMALOG_STATE_UP))
			continue;
		if (o.trim && st.used > st.capacity / 2 &&
		    st.commit_lsn > st.first_lsn) {
			__u64 to = st.commit_lsn;

			if (ioctl(wt->fd, RDMALOG_IOC_TRIM, &to) == 0)
				wt->trims++;
		} else if (!o.trim &&
			   st.capacity - st.used < ring_bytes(o.size)) {
			wt->ring_full = 1;
			fprintf(stderr, PROG ": the ring is full (%llu of %llu "
				"bytes used) and nothing trims it: writers are "
				"blocked; use --trim or trim the log\n",
				(unsigned long long)st.used,
				(unsigned long long)st.capacity);
			_exit(1);
		}
	}
	return NULL;
}

/* ---------------------------------------------------------- verification */

struct vresult {
	uint64_t checked;
	uint64_t bad;			/* any problem, one per record */
	uint64_t read_err, bad_len, bad_crc, bad_data, bad_lsn;
	uint64_t dup_lsn;
	char first_problem[160];
};

static void __attribute__((format(printf, 3, 4)))
vproblem(struct vresult *v, uint64_t *counter, const char *fmt, ...)
{
	va_list ap;

	(*counter)++;
	v->bad++;
	if (v->first_problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(v->first_problem, sizeof(v->first_problem), fmt, ap);
	va_end(ap);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int verify(struct worker *ws, struct vresult *v)
{
	unsigned char *rbuf, *expect;
	struct rdmalog_read_record rr;
	uint64_t total = 0, *all, k = 0;
	int fd;

	memset(v, 0, sizeof(*v));
	fd = open(o.device, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, PROG ": verify: %s: %s\n", o.device,
			strerror(errno));
		return -1;
	}
	rbuf = malloc(o.size);
	expect = malloc(o.size);
	for (unsigned int t = 0; t < o.threads; t++)
		total += ws[t].lsns.n;
	all = malloc((total ? total : 1) * sizeof(*all));
	if (!rbuf || !expect || !all) {
		fprintf(stderr, PROG ": verify: out of memory\n");
		free(rbuf);
		free(expect);
		free(all);
		close(fd);
		return -1;
	}
	for (unsigned int t = 0; t < o.threads; t++) {
		struct worker *w = &ws[t];
		uint64_t prev = 0;

		fill_pattern(expect, o.size, w->idx);
		for (size_t i = 0; i < w->lsns.n; i++) {
			uint64_t lsn = w->lsns.v[i];

			all[k++] = lsn;
			v->checked++;
			if (!lsn) {
				vproblem(v, &v->bad_lsn, "thread %u append %zu: "
					 "LAST_LSN failed", t, i);
				continue;
			}
			if (lsn <= prev) {
				vproblem(v, &v->bad_lsn, "LSN %" PRIu64 " after %"
					 PRIu64 " on one descriptor", lsn, prev);
				continue;
			}
			prev = lsn;
			memset(&rr, 0, sizeof(rr));
			rr.version = RDMALOG_IOC_VERSION;
			rr.lsn = lsn;
			rr.buf = (uintptr_t)rbuf;
			rr.buf_len = (__u32)o.size;
			if (ioctl(fd, RDMALOG_IOC_READ_RECORD, &rr) < 0) {
				vproblem(v, &v->read_err, "READ_RECORD LSN %" PRIu64
					 ": %s", lsn, strerror(errno));
				continue;
			}
			if (rr.hdr.lsn != lsn || rr.hdr.len != o.size) {
				vproblem(v, &v->bad_len, "LSN %" PRIu64 ": header "
					 "says LSN %llu, length %u", lsn,
					 (unsigned long long)rr.hdr.lsn, rr.hdr.len);
				continue;
			}
			if (crc32c(rbuf, o.size) != rr.hdr.crc32c) {
				vproblem(v, &v->bad_crc, "LSN %" PRIu64 ": CRC32C "
					 "of the payload is not the header's "
					 "0x%08x", lsn, rr.hdr.crc32c);
				continue;
			}
			/* the i-th LSN of a thread is its append number i */
			stamp(expect, o.size, w->idx, i);
			if (memcmp(rbuf, expect, o.size)) {
				vproblem(v, &v->bad_data, "LSN %" PRIu64 ": payload "
					 "is not what thread %u wrote", lsn, t);
				continue;
			}
		}
	}
	qsort(all, k, sizeof(*all), cmp_u64);
	for (uint64_t i = 1; i < k; i++)
		if (all[i] && all[i] == all[i - 1])
			vproblem(v, &v->dup_lsn, "LSN %" PRIu64 " returned to "
				 "two appends", all[i]);
	free(all);
	free(rbuf);
	free(expect);
	close(fd);
	return 0;
}

/* ---------------------------------------------------------------- report */

static uint64_t pct(const uint64_t *v, uint64_t n, double p)
{
	double x;
	uint64_t r;

	if (!n)
		return 0;
	/* nearest rank: the smallest sample with at least p of them <= it */
	x = p * (double)n - 1e-9;
	r = (uint64_t)x;
	if ((double)r < x)
		r++;
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return v[r - 1];
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [-t THREADS] [-s SIZE] [-n COUNT | -d SECONDS] [-w WARMUP]\n"
		"                     [-r RATE] [-j] [--device PATH] [--verify | --trim]\n"
		"Append records to /dev/rdmalog from THREADS threads (one descriptor each),\n"
		"timing every write() (it returns when the record is durable).\n"
		"  -t, --threads N    writer threads (default 1)\n"
		"  -s, --size SIZE    payload bytes per record, K/M/G suffixes (default 64)\n"
		"  -n, --count N      measured appends per thread (default 1000)\n"
		"  -d, --duration S   append for S seconds instead of a count\n"
		"  -w, --warmup N     unmeasured appends per thread first (default 0)\n"
		"  -r, --rate N       open loop: offer N appends/s in all, each thread\n"
		"                     its share at fixed intervals; latency counts from\n"
		"                     when an append was due, so stalls are not hidden\n"
		"  -j, --json         print one JSON object\n"
		"      --device PATH  device (default /dev/" RDMALOG_DEV_NAME ")\n"
		"      --verify       read every appended record back by LSN; check\n"
		"                     length, CRC32C and payload\n"
		"      --trim         trim the log behind the writers when the ring is\n"
		"                     half full (needs CAP_NET_ADMIN; not with --verify)\n"
		"  -h, --help         this help\n"
		"      --version      print the version\n"
		"Latency is per append in microseconds (exact percentiles over every\n"
		"measured append); MiB/s counts payload bytes (2^20 bytes, as perftest).\n"
		"Exit status: 0 all appends succeeded (and verified), 1 otherwise,\n"
		"2 usage error.\n");
}

static void die_usage(const char *msg, const char *arg)
{
	fprintf(stderr, PROG ": %s%s%s (see " PROG " --help)\n", msg,
		arg ? ": " : "", arg ? arg : "");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "size", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "rate", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "device", required_argument, NULL, 'D' },
		{ "verify", no_argument, NULL, 'V' },
		{ "trim", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	struct rdmalog_state st, st_end;
	struct watcher wt = { .fd = -1 };
	struct vresult vr;
	struct worker *ws;
	uint64_t v, ok = 0, failed = 0, warm_ok = 0, t_start = UINT64_MAX;
	uint64_t t_end = 0, *lat, nlat = 0, sum = 0, min_lsn = 0, max_lsn = 0;
	uint64_t errs[MAX_ERRNO + 1] = { 0 }, lsn_errs = 0;
	int c, have_n = 0, have_d = 0, fd, rc = 0, gave_up = 0, open_err = 0;
	int have_watcher = 0, verified = 0;
	double secs, aps, mibs;

	while ((c = getopt_long(argc, argv, "t:s:n:d:w:r:jh", lopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if (parse_u64(optarg, &v) || v < 1 || v > 1024)
				die_usage("threads must be 1..1024", optarg);
			o.threads = (unsigned int)v;
			break;
		case 's':
			if (parse_size(optarg, &o.size) || o.size < 1 ||
			    o.size > UINT32_MAX)
				die_usage("invalid size", optarg);
			break;
		case 'n':
			if (parse_u64(optarg, &o.count) || !o.count)
				die_usage("count must be a positive number", optarg);
			have_n = 1;
			break;
		case 'd':
			if (parse_positive(optarg, 1e6, &o.duration))
				die_usage("duration must be a positive number of "
					  "seconds", optarg);
			have_d = 1;
			break;
		case 'w':
			if (parse_u64(optarg, &o.warmup))
				die_usage("invalid warmup count", optarg);
			break;
		case 'r':
			if (parse_positive(optarg, 1e9, &o.rate))
				die_usage("rate must be a positive number of "
					  "appends per second", optarg);
			break;
		case 'j':
			o.json = 1;
			break;
		case 'D':
			o.device = optarg;
			break;
		case 'V':
			o.verify = 1;
			break;
		case 'T':
			o.trim = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'v':
			printf(PROG " " RDMALOG_VERSION "\n");
			return 0;
		default:
			fprintf(stderr, "see " PROG " --help\n");
			return 2;
		}
	}
	if (optind < argc)
		die_usage("unexpected argument", argv[optind]);
	if (have_n && have_d)
		die_usage("-n and -d exclude each other", NULL);
	if (o.verify && o.trim)
		die_usage("--verify reads back what --trim would discard", NULL);
	if (!have_d && !have_n)
		o.count = 1000;
	crc32c_init();

	fd = open(o.device, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || get_state(fd, &st) < 0) {
		fprintf(stderr, PROG ": %s: %s\n", o.device, strerror(errno));
		return 1;
	}
	if (!(st.flags & RDMALOG_STATE_UP)) {
		fprintf(stderr, PROG ": the log is down (rdmalogctl node up)\n");
		return 1;
	}
	if (o.size > st.max_record) {
		fprintf(stderr, PROG ": size %llu is above the log's max_record "
			"(%llu)\n", (unsigned long long)o.size,
			(unsigned long long)st.max_record);
		return 1;
	}
	if (o.count && !o.trim) {
		long double need = (long double)ring_bytes(o.size) * o.threads *
				   ((long double)o.count + o.warmup);

		if (need > (long double)(st.capacity - st.used)) {
			fprintf(stderr, PROG ": %.0Lf bytes of ring needed, %llu "
				"free (capacity %llu): writers would block on a "
				"full ring; trim the log, use a larger capacity, "
				"fewer appends, or --trim\n", need,
				(unsigned long long)(st.capacity - st.used),
				(unsigned long long)st.capacity);
			return 1;
		}
	}

	ws = calloc(o.threads, sizeof(*ws));
	if (!ws) {
		perror(PROG);
		return 1;
	}
	for (unsigned int t = 0; t < o.threads; t++) {
		struct worker *w = &ws[t];

		w->idx = t;
		w->fd = -1;
		w->buf = malloc(o.size);
		if (!w->buf || reserve(&w->lat, o.count) ||
		    (o.verify && reserve(&w->lsns, o.count + o.warmup))) {
			perror(PROG);
			return 1;
		}
		fill_pattern(w->buf, o.size, t);
	}
	pthread_barrier_init(&start_barrier, NULL, o.threads);
	for (unsigned int t = 0; t < o.threads; t++) {
		errno = pthread_create(&ws[t].tid, NULL, worker_main, &ws[t]);
		if (errno) {
			perror(PROG ": pthread_create");
			return 1;
		}
	}
	if (o.trim || have_d) {
		wt.fd = fd;
		if (pthread_create(&wt.tid, NULL, watcher_main, &wt) == 0)
			have_watcher = 1;
	}
	for (unsigned int t = 0; t < o.threads; t++)
		pthread_join(ws[t].tid, NULL);
	if (have_watcher)
		pthread_join(wt.tid, NULL);
	if (get_state(fd, &st_end) < 0)
		st_end = st;

	for (unsigned int t = 0; t < o.threads; t++) {
		struct worker *w = &ws[t];

		ok += w->ok;
		failed += w->failed;
		warm_ok += w->warm_ok;
		lsn_errs += w->lsn_errs;
		gave_up |= w->gave_up;
		if (w->setup_err)
			open_err = w->setup_err;
		for (int e = 0; e <= MAX_ERRNO; e++)
			errs[e] += w->errs[e];
		if (w->t_start < t_start)
			t_start = w->t_start;
		if (w->t_end > t_end)
			t_end = w->t_end;
		if (w->first_lsn && (!min_lsn || w->first_lsn < min_lsn))
			min_lsn = w->first_lsn;
		if (w->last_lsn > max_lsn)
			max_lsn = w->last_lsn;
		nlat += w->lat.n;
	}
	lat = malloc((nlat ? nlat : 1) * sizeof(*lat));
	if (!lat) {
		perror(PROG);
		return 1;
	}
	nlat = 0;
	for (unsigned int t = 0; t < o.threads; t++) {
		memcpy(lat + nlat, ws[t].lat.v, ws[t].lat.n * sizeof(*lat));
		nlat += ws[t].lat.n;
	}
	qsort(lat, nlat, sizeof(*lat), cmp_u64);
	for (uint64_t i = 0; i < nlat; i++)
		sum += lat[i];
	secs = t_end > t_start ? (double)(t_end - t_start) / 1e9 : 0;
	aps = secs > 0 ? (double)ok / secs : 0;
	mibs = secs > 0 ? (double)ok * (double)o.size / secs / 1048576.0 : 0;

	if (open_err)
		fprintf(stderr, PROG ": %s: %s\n", o.device, strerror(open_err));
	if (o.verify && !open_err) {
		if (verify(ws, &vr) < 0)
			rc = 1;
		else
			verified = 1;
		if (verified && vr.bad) {
			fprintf(stderr, PROG ": verify: %llu of %llu records bad, "
				"first: %s\n", (unsigned long long)vr.bad,
				(unsigned long long)vr.checked, vr.first_problem);
			rc = 1;
		}
	}
	if (lsn_errs)
		fprintf(stderr, PROG ": RDMALOG_IOC_LAST_LSN failed after %llu "
			"successful append%s\n", (unsigned long long)lsn_errs,
			lsn_errs > 1 ? "s" : "");
	if (failed || lsn_errs || open_err || gave_up || !ok)
		rc = 1;

#define US(ns) ((double)(ns) / 1000.0)
	if (o.json) {
		bool degraded = st_end.flags & RDMALOG_STATE_DURABILITY_DEGRADED;

		jw_begin_obj(NULL);
		jw_str("tool", PROG);
		jw_str("device", o.device);
		jw_u64("threads", o.threads);
		jw_u64("size", o.size);
		if (o.count) {
			jw_u64("count_per_thread", o.count);
			jw_null("duration_s");
		} else {
			jw_null("count_per_thread");
			jw_double("duration_s", o.duration, -1);
		}
		jw_u64("warmup_per_thread", o.warmup);
		if (o.rate)
			jw_double("rate_offered", o.rate, 1);
		else
			jw_null("rate_offered");
		jw_u64("appends", ok);
		jw_u64("warmup_appends", warm_ok);
		jw_u64("failed", failed);
		jw_begin_obj("errors");
		for (int e = 0; e <= MAX_ERRNO; e++)
			if (errs[e])
				jw_u64(errname(e), errs[e]);
		jw_end_obj();
		jw_u64("lsn_errors", lsn_errs);
		jw_bool("gave_up", gave_up);
		jw_double("elapsed_s", secs, 6);
		jw_double("appends_per_s", aps, 1);
		jw_double("mib_per_s", mibs, 3);
		jw_begin_obj("latency_us");
		jw_u64("samples", nlat);
		jw_double("min", US(nlat ? lat[0] : 0), 1);
		jw_double("mean", nlat ? US(sum) / (double)nlat : 0, 1);
		jw_double("p50", US(pct(lat, nlat, 0.50)), 1);
		jw_double("p90", US(pct(lat, nlat, 0.90)), 1);
		jw_double("p99", US(pct(lat, nlat, 0.99)), 1);
		jw_double("p999", US(pct(lat, nlat, 0.999)), 1);
		jw_double("max", US(nlat ? lat[nlat - 1] : 0), 1);
		jw_end_obj();
		jw_begin_obj("lsn");
		jw_u64("first", min_lsn);
		jw_u64("last", max_lsn);
		jw_end_obj();
		jw_begin_obj("log");
		jw_u64("node_id", st_end.node_id);
		jw_u64("epoch", st_end.epoch);
		jw_u64("capacity", st_end.capacity);
		jw_u64("max_record", st_end.max_record);
		jw_str("durability", durability_name(st_end.durability));
		jw_bool("durability_degraded", degraded);
		jw_str("durability_effective", degraded ? "async" :
		       durability_name(st_end.durability));
		jw_end_obj();
		jw_u64("trims", wt.trims);
		if (verified) {
			jw_begin_obj("verify");
			jw_u64("checked", vr.checked);
			jw_u64("bad", vr.bad);
			jw_u64("read_errors", vr.read_err);
			jw_u64("bad_length", vr.bad_len);
			jw_u64("bad_crc", vr.bad_crc);
			jw_u64("bad_payload", vr.bad_data);
			jw_u64("bad_order", vr.bad_lsn);
			jw_u64("duplicate_lsn", vr.dup_lsn);
			jw_bool("ok", !vr.bad);
			jw_end_obj();
		} else {
			jw_null("verify");
		}
		jw_bool("ok", !rc);
		jw_end_obj();
		jw_finish();
	} else {
		printf(PROG ": %u thread%s x ", o.threads, o.threads > 1 ? "s" : "");
		if (o.count)
			printf("%llu", (unsigned long long)o.count);
		else
			printf("%gs of", o.duration);
		printf(" appends of %llu B (warmup %llu), %s\n",
		       (unsigned long long)o.size, (unsigned long long)o.warmup,
		       o.device);
		printf("durability   %s requested, %s in force%s\n",
		       durability_name(st_end.durability),
		       (st_end.flags & RDMALOG_STATE_DURABILITY_DEGRADED) ?
		       "async" : durability_name(st_end.durability),
		       (st_end.flags & RDMALOG_STATE_DURABILITY_DEGRADED) ?
		       " (degraded: no replication)" : "");
		printf("appends      %llu ok, %llu failed, in %.3f s (LSN %llu..%llu)\n",
		       (unsigned long long)ok, (unsigned long long)failed, secs,
		       (unsigned long long)min_lsn, (unsigned long long)max_lsn);
		if (failed) {
			printf("errors      ");
			for (int e = 0; e <= MAX_ERRNO; e++)
				if (errs[e])
					printf(" %s %llu", errname(e),
					       (unsigned long long)errs[e]);
			printf("%s\n", gave_up ? " (gave up)" : "");
		}
		printf("throughput   %.1f appends/s, %.3f MiB/s payload\n", aps, mibs);
		printf("latency us   min %.1f  p50 %.1f  p90 %.1f  p99 %.1f  "
		       "p99.9 %.1f  max %.1f  mean %.1f\n",
		       US(nlat ? lat[0] : 0), US(pct(lat, nlat, 0.50)),
		       US(pct(lat, nlat, 0.90)), US(pct(lat, nlat, 0.99)),
		       US(pct(lat, nlat, 0.999)), US(nlat ? lat[nlat - 1] : 0),
		       nlat ? US(sum) / (double)nlat : 0);
		if (o.trim)
			printf("trims        %llu\n", (unsigned long long)wt.trims);
		if (verified)
			printf("verify       %llu records read back by LSN: %s\n",
			       (unsigned long long)vr.checked,
			       vr.bad ? "PROBLEMS (see above)" :
			       "lengths, CRC32C and payloads OK");
	}
#undef US
	if (rc && !ok && !failed && !open_err)
		fprintf(stderr, PROG ": no append was measured\n");
	else if (failed)
		fprintf(stderr, PROG ": %llu append%s failed\n",
			(unsigned long long)failed, failed > 1 ? "s" : "");
	for (unsigned int t = 0; t < o.threads; t++) {
		if (ws[t].fd >= 0)
			close(ws[t].fd);
		free(ws[t].buf);
		free(ws[t].lat.v);
		free(ws[t].lsns.v);
	}
	free(ws);
	free(lat);
	close(fd);
	pthread_barrier_destroy(&start_barrier);
	return rc;
}
