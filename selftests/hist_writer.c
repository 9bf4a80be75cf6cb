// SPDX-License-Identifier: GPL-2.0
/*
 * hist_writer - writer and log reader of the history checker
 * (selftests/history.py, suite selftests/suites/history.py)
 *
 *   hist_writer -w WID [-s SEED] [-m MAXLEN] [-n COUNT] [-o FILE] [-H PORT]
 *   hist_writer -D [-f FROM] [-t TO]
 *   hist_writer -F
 *
 * Writer (-w): appends records to /dev/rdmalog, one write(2) each, until
 * COUNT attempts were made (default: no limit) or SIGTERM/SIGINT arrives,
 * and writes its history, one line per event, to standard output (and to
 * FILE with -o), each line flushed before the next operation starts, so
 * that a SIGKILL of the writer loses nothing but the outcome of the write
 * in flight. With -H PORT every line is also written, as "H SEED:WID
 * LINE" in one write(2), to PORT: the harness's /dev/rdmalog-hist, a
 * virtio-serial port whose write(2) returns once the host has the bytes,
 * so that not even the loss of the VM loses more (the writers of a node
 * take turns: PORT_LOCK):
 *
 *   B WID PID SEED MAXLEN          the writer started
 *   W SEQ LEN HASH                 about to write record SEQ
 *   A SEQ LSN LEN HASH             acknowledged: committed at LSN
 *   F SEQ ERRNAME                  write(2) failed with ERRNAME
 *   E SEQ                          stopped; SEQ attempts were made
 *
 * SEQ counts from 0; HASH is the 64-bit FNV-1a of the payload (16 hex
 * digits). Whether a failure means "not in the log" or "unknown" is for
 * the checker to decide (Documentation/device.rst). After a failure the
 * writer waits 20 to 100 ms and goes on with the next SEQ (a failed record
 * is never written again). ENETDOWN makes it reopen the device.
 *
 * Record SEQ of writer WID is self-describing: its length LEN is
 * hist_len(SEED, WID, SEQ) (from 24 to 200 bytes or from 201 to MAXLEN,
 * half of each: inline and RDMA READ forwards), and its payload is
 * "hw:WID:SEQ:LEN:" followed by filler bytes that depend on WID, SEQ and
 * the offset (hist_fill()). selftests/history.py computes the same lengths.
 *
 * Reader (-D): prints "S FIRST COMMIT NEXT" (the log's state) then, for
 * every committed record from max(FROM, FIRST) to min(TO, COMMIT) (TO 0:
 * up to the commit point read at the start):
 *
 *   R LSN LEN HASH WID SEQ         a well-formed writer record
 *   P LSN LEN HASH EPOCH           a new primary's epoch-start record
 *   X LSN LEN HASH WHY             anything else (not a writer's record,
 *                                  wrong length, wrong filler byte, ...)
 *   T LSN                          LSN was trimmed meanwhile (skipped)
 *
 * Follower (-F): reads the log from its first record on, one read(2) per
 * record, sleeping at the commit point, until SIGTERM/SIGINT, and prints
 * (each line flushed):
 *
 *   S FIRST COMMIT NEXT            the log's state: at the start, after
 *                                  every 64 records and after a jump
 *   R LSN LEN HASH                 the record read at LSN
 *   J LSN                          the cursor was below the first LSN
 *                                  (ERANGE): it goes on at LSN
 *   N ERRNAME                      the log is down: reopened and read from
 *                                  its first record again
 *   E                              stopped
 *
 * Exit status: 0; 1 on a system error (message on standard output, line
 * "ERR ..."); 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "rdmalog.h"

#define HIST_MIN_LEN	24
#define HIST_INLINE	200

static volatile sig_atomic_t stop;
static int hist_fd = -1;
/*
 * The history port: one opener at a time (virtio-serial: EBUSY), so every
 * line is written under an flock of PORT_LOCK between open and close.
 */
#define PORT_LOCK	"/run/rdmalog-hist.lock"
static const char *port_path;
static int port_lock = -1;
static char port_tag[48];		/* "SEED:WID" */

/*
 * One write(2) of the line to the port; 0, or -1 with errno set.  The
 * writer's SIGTERM handler has no SA_RESTART (a blocked append must end),
 * so a signal can interrupt the flock, the open or the write here: each is
 * tried again, as the line must reach the port (the checker reads the
 * history from there and an "E" lost to a second SIGTERM fails the run).
 */
static int port_write(const char *buf, int len)
{
	int fd, tries = 0, ret = -1, err;
	ssize_t n;

	while (flock(port_lock, LOCK_EX) < 0)
		if (errno != EINTR)
			return -1;
	while ((fd = open(port_path, O_WRONLY)) < 0 &&
	       (errno == EINTR || (errno == EBUSY && ++tries < 5000)))
		if (errno == EBUSY)
			usleep(1000);
	if (fd >= 0) {
		while ((n = write(fd, buf, len)) < 0 && errno == EINTR)
			;
		ret = n == len ? 0 : -1;
		if (n >= 0 && n != len)
			errno = EIO;	/* one line, one write: never split */
		err = errno;
		close(fd);
		errno = err;
	}
	err = errno;
	flock(port_lock, LOCK_UN);
	errno = err;
	return ret;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hist_writer -w WID [-s SEED] [-m MAXLEN] [-n COUNT] [-o FILE] [-H PORT]\n"
		"       hist_writer -D [-f FROM] [-t TO]\n"
		"       hist_writer -F\n");
}

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Length of record SEQ of writer WID; history.py: hist_len(). */
static uint32_t hist_len(uint64_t seed, uint32_t wid, uint64_t seq,
			 uint32_t maxlen)
{
	uint64_t r = splitmix64(seed ^ ((uint64_t)wid << 40) ^ seq);

	if (maxlen <= HIST_INLINE || !(r & 1))
		return HIST_MIN_LEN + (uint32_t)((r >> 1) %
			((maxlen < HIST_INLINE ? maxlen : HIST_INLINE) -
			 HIST_MIN_LEN + 1));
	return HIST_INLINE + 1 + (uint32_t)((r >> 1) % (maxlen - HIST_INLINE));
}

static char hist_byte(uint32_t wid, uint64_t seq, uint32_t k)
{
	uint32_t x = wid * 0x9e3779b1U + (uint32_t)seq * 0x85ebca77U +
		     k * 0xc2b2ae3dU;

	x ^= x >> 15;
	x *= 0x2c1b3c6dU;
	x ^= x >> 12;
	return (char)(33 + x % 94);
}

static uint32_t hist_fill(char *buf, uint32_t wid, uint64_t seq, uint32_t len)
{
	int n = snprintf(buf, len + 1, "hw:%u:%" PRIu64 ":%u:", wid, seq, len);
	uint32_t k;

	for (k = (uint32_t)n; k < len; k++)
		buf[k] = hist_byte(wid, seq, k);
	return (uint32_t)n;
}

static uint64_t fnv1a(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (len--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* One history line, flushed to stdout and written to the -o file. */
static void hist(const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	fwrite(line, 1, n, stdout);
	fflush(stdout);
	if (hist_fd >= 0 && write(hist_fd, line, n) != n)
		fprintf(stderr, "hist_writer: history file: %s\n",
			strerror(errno));
	if (port_path) {
		char tagged[sizeof(line) + sizeof(port_tag) + 4];
		int m = snprintf(tagged, sizeof(tagged), "H %s %.*s", port_tag,
				 n, line);

		if (m > 0 && port_write(tagged, m) < 0)
			fprintf(stderr, "hist_writer: history port: %s\n",
				strerror(errno));
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int get_state(int fd, struct rdmalog_state *st)
{
	memset(st, 0, sizeof(*st));
	st->version = RDMALOG_IOC_VERSION;
	return ioctl(fd, RDMALOG_IOC_GET_STATE, st);
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int open_dev(void)
{
	int fd;

	while ((fd = open("/dev/" RDMALOG_DEV_NAME, O_RDWR)) < 0 && !stop)
		pause_ms(100);
	return fd;
}

static int do_write(uint32_t wid, uint64_t seed, uint32_t maxlen,
		    uint64_t count)
{
	struct sigaction sa;
	uint64_t seq;
	char *buf;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: a blocked write ends */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	buf = malloc(maxlen + 1);
	if (!buf) {
		printf("ERR ENOMEM malloc\n");
		return 1;
	}
	hist("B %u %d %" PRIu64 " %u", wid, (int)getpid(), seed, maxlen);
	fd = open_dev();
	for (seq = 0; !stop && (!count || seq < count); seq++) {
		uint32_t len = hist_len(seed, wid, seq, maxlen);
		uint64_t h, lsn = 0;
		ssize_t n;

		hist_fill(buf, wid, seq, len);
		h = fnv1a(buf, len);
		hist("W %" PRIu64 " %u %016" PRIx64, seq, len, h);
		n = fd < 0 ? (errno = ENETDOWN, -1) : write(fd, buf, len);
		if (n == (ssize_t)len) {
			if (ioctl(fd, RDMALOG_IOC_LAST_LSN, &lsn) < 0) {
				hist("F %" PRIu64 " LAST_LSN_%s", seq,
				     strerrorname_np(errno));
				continue;
			}
			hist("A %" PRIu64 " %" PRIu64 " %u %016" PRIx64, seq,
			     lsn, len, h);
			continue;
		}
		if (n >= 0) {
			hist("F %" PRIu64 " SHORT_%zd", seq, n);
			continue;
		}
		hist("F %" PRIu64 " %s", seq, strerrorname_np(errno));
		if (errno == ENETDOWN) {
			if (fd >= 0)
				close(fd);
			pause_ms(100);
			fd = open_dev();
		}
		pause_ms(20 + rand() % 81);
	}
	hist("E %" PRIu64, seq);
	free(buf);
	return 0;
}

/* Check that buf is record SEQ of writer WID; NULL when it is, else why. */
static const char *parse(const char *buf, uint32_t len, uint32_t *wid,
			 uint64_t *seq)
{
	char head[64], *p, *end;
	unsigned long long v;
	uint32_t k, hl;

	if (len < HIST_MIN_LEN || memcmp(buf, "hw:", 3))
		return "not-a-writer-record";
	memcpy(head, buf, sizeof(head) - 1 < len ? sizeof(head) - 1 : len);
	head[sizeof(head) - 1 < len ? sizeof(head) - 1 : len] = 0;
	p = head + 3;
	v = strtoull(p, &end, 10);
	if (end == p || *end != ':' || v > UINT32_MAX)
		return "bad-writer-id";
	*wid = (uint32_t)v;
	p = end + 1;
	*seq = strtoull(p, &end, 10);
	if (end == p || *end != ':')
		return "bad-seq";
	p = end + 1;
	v = strtoull(p, &end, 10);
	if (end == p || *end != ':')
		return "bad-len";
	if (v != len)
		return "wrong-len";
	hl = (uint32_t)(end + 1 - head);
	{
		char expect[64];

		snprintf(expect, sizeof(expect), "hw:%u:%" PRIu64 ":%u:",
			 *wid, *seq, len);
		if (strlen(expect) != hl || memcmp(expect, buf, hl))
			return "non-canonical-header";
	}
	for (k = hl; k < len; k++)
		if (buf[k] != hist_byte(*wid, *seq, k))
			return "wrong-filler";
	return NULL;
}

static int do_dump(uint64_t from, uint64_t to)
{
	struct rdmalog_read_record rr;
	struct rdmalog_state st;
	uint64_t lsn;
	char *buf;
	int fd;

	fd = open("/dev/" RDMALOG_DEV_NAME, O_RDONLY);
	if (fd < 0 || get_state(fd, &st) < 0) {
		printf("ERR %s open: %s\n", strerrorname_np(errno),
		       strerror(errno));
		return 1;
	}
	printf("S %llu %llu %llu\n", (unsigned long long)st.first_lsn,
	       (unsigned long long)st.commit_lsn,
	       (unsigned long long)st.next_lsn);
	buf = malloc(st.max_record ? st.max_record : 1);
	if (!buf) {
		printf("ERR ENOMEM malloc\n");
		return 1;
	}
	if (!to || to > st.commit_lsn)
		to = st.commit_lsn;
	lsn = from > st.first_lsn ? from : st.first_lsn;
	for (; lsn < to; lsn++) {
		const char *why;
		uint32_t wid = 0;
		uint64_t seq = 0;

		memset(&rr, 0, sizeof(rr));
		rr.version = RDMALOG_IOC_VERSION;
		rr.lsn = lsn;
		rr.buf = (uintptr_t)buf;
		rr.buf_len = st.max_record;
		if (ioctl(fd, RDMALOG_IOC_READ_RECORD, &rr) < 0) {
			if (errno == ERANGE) {
				printf("T %llu\n", (unsigned long long)lsn);
				continue;
			}
			printf("ERR %s READ_RECORD %llu: %s\n",
			       strerrorname_np(errno),
			       (unsigned long long)lsn, strerror(errno));
			return 1;
		}
		if (rr.hdr.lsn != lsn) {
			printf("X %llu %u %016" PRIx64 " header-lsn-%llu\n",
			       (unsigned long long)lsn, rr.hdr.len,
			       fnv1a(buf, rr.hdr.len),
			       (unsigned long long)rr.hdr.lsn);
			continue;
		}
		if (rr.hdr.flags & RDMALOG_RECORD_EPOCH_START) {
			/* a new primary's first record: no writer's */
			printf("P %llu %u %016" PRIx64 " %llu\n",
			       (unsigned long long)lsn, rr.hdr.len,
			       fnv1a(buf, rr.hdr.len),
			       (unsigned long long)rr.hdr.epoch);
			continue;
		}
		why = parse(buf, rr.hdr.len, &wid, &seq);
		if (why)
			printf("X %llu %u %016" PRIx64 " %s\n",
			       (unsigned long long)lsn, rr.hdr.len,
			       fnv1a(buf, rr.hdr.len), why);
		else
			printf("R %llu %u %016" PRIx64 " %u %" PRIu64 "\n",
			       (unsigned long long)lsn, rr.hdr.len,
			       fnv1a(buf, rr.hdr.len), wid, seq);
	}
	free(buf);
	close(fd);
	return 0;
}

static int follow_state(int fd)
{
	struct rdmalog_state st;

	if (get_state(fd, &st) < 0)
		return -1;
	hist("S %llu %llu %llu", (unsigned long long)st.first_lsn,
	     (unsigned long long)st.commit_lsn,
	     (unsigned long long)st.next_lsn);
	return 0;
}

/* The log is down (or gone): said once per errno, then reopened. */
static void follow_down(int *fd, int *down)
{
	if (errno != *down)
		hist("N %s", strerrorname_np(errno));
	*down = errno;
	close(*fd);
	*fd = -1;
	pause_ms(100);
}

static int do_follow(void)
{
	struct rdmalog_state st;
	struct sigaction sa;
	unsigned int n = 0;
	char *buf = NULL;
	int fd = -1, down = 0;	/* the errno of the last N line */

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: a blocked read ends */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	while (!stop) {
		off_t lsn;
		ssize_t len;

		if (fd < 0) {
			fd = open_dev();
			if (fd < 0)
				break;
			if (get_state(fd, &st) < 0 ||
			    lseek(fd, (off_t)st.first_lsn, SEEK_SET) < 0) {
				follow_down(&fd, &down);
				continue;
			}
			free(buf);
			buf = malloc(st.max_record ? st.max_record : 1);
			if (!buf) {
				printf("ERR ENOMEM malloc\n");
				return 1;
			}
			if (follow_state(fd) < 0)
				continue;
			down = 0;
		}
		lsn = lseek(fd, 0, SEEK_CUR);
		len = lsn < 0 ? -1 : read(fd, buf, st.max_record);
		if (len >= 0) {
			hist("R %lld %zd %016" PRIx64, (long long)lsn, len,
			     fnv1a(buf, (size_t)len));
			if (++n % 64 == 0)
				follow_state(fd);
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == ERANGE && get_state(fd, &st) == 0 &&
		    lseek(fd, (off_t)st.first_lsn, SEEK_SET) >= 0) {
			hist("J %llu", (unsigned long long)st.first_lsn);
			follow_state(fd);
			continue;
		}
		/* down, or anything else: from the first record again */
		follow_down(&fd, &down);
	}
	hist("E");
	free(buf);
	if (fd >= 0)
		close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t seed = 1, count = 0, from = 0, to = 0;
	unsigned long maxlen = 4096, wid = 0;
	int c, write_mode = 0, dump_mode = 0, follow_mode = 0;
	char *end;

	while ((c = getopt(argc, argv, "w:s:m:n:o:H:DFf:t:h")) != -1) {
		switch (c) {
		case 'w':
			write_mode = 1;
			wid = strtoul(optarg, &end, 0);
			if (*end || !*optarg || wid > UINT32_MAX)
				goto bad;
			break;
		case 's':
			seed = strtoull(optarg, &end, 0);
			if (*end || !*optarg)
				goto bad;
			break;
		case 'm':
			maxlen = strtoul(optarg, &end, 0);
			if (*end || maxlen < HIST_MIN_LEN || maxlen > (1UL << 24))
				goto bad;
			break;
		case 'n':
			count = strtoull(optarg, &end, 0);
			if (*end || !*optarg)
				goto bad;
			break;
		case 'o':
			hist_fd = open(optarg, O_WRONLY | O_CREAT | O_APPEND |
				       O_TRUNC, 0644);
			if (hist_fd < 0) {
				printf("ERR %s %s: %s\n", strerrorname_np(errno),
				       optarg, strerror(errno));
				return 1;
			}
			break;
		case 'H':
			port_path = optarg;
			port_lock = open(PORT_LOCK, O_RDWR | O_CREAT, 0644);
			if (port_lock < 0 || access(port_path, W_OK) < 0) {
				printf("ERR %s %s: %s\n", strerrorname_np(errno),
				       port_lock < 0 ? PORT_LOCK : optarg,
				       strerror(errno));
				return 1;
			}
			break;
		case 'D':
			dump_mode = 1;
			break;
		case 'F':
			follow_mode = 1;
			break;
		case 'f':
			from = strtoull(optarg, &end, 0);
			if (*end || !*optarg)
				goto bad;
			break;
		case 't':
			to = strtoull(optarg, &end, 0);
			if (*end || !*optarg)
				goto bad;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc || write_mode + dump_mode + follow_mode != 1)
		goto bad;
	snprintf(port_tag, sizeof(port_tag), "%" PRIu64 ":%lu", seed, wid);
	srand((unsigned int)(seed ^ wid ^ (uint64_t)getpid()));
	if (dump_mode)
		return do_dump(from, to);
	if (follow_mode)
		return do_follow();
	return do_write((uint32_t)wid, seed, (uint32_t)maxlen, count);
bad:
	usage(stderr);
	return 2;
}
