// SPDX-License-Identifier: GPL-2.0
/*
 * dp_writer - one writer of the datapath suite (selftests/suites/datapath.py)
 *
 *   dp_writer [-n COUNT] [-S SIZE,SIZE...] [-N] [-T] [-k KEEP] [-p PREFIX]
 *
 * Appends COUNT records to /dev/rdmalog, one write(2) each, with payload
 * sizes taken in turn from the -S list (default: sizes from 1 byte to
 * 16384, most of them odd, so that records and their headers end anywhere
 * in the ring). Payload of the i-th append (from 0): "PREFIX:i:" then printable
 * bytes that depend on i and on the offset, cut to the size.
 *
 * -N  open with O_NONBLOCK: a write that finds the ring full fails with
 *     EAGAIN; the run then stops, prints "EAGAIN" and exits with 3. With
 *     -N, COUNT 0 means: until EAGAIN.
 * -T  trim as it goes: after each append, when more than half the ring is
 *     in use, trim to (commit LSN - KEEP) (RDMALOG_IOC_TRIM, as
 *     "rdmalogctl log trim" does).
 * -k  KEEP for -T (default 4).
 *
 * Prints one line per append, "LSN SIZE", then a summary line
 *   "done appends A trims T bytes B capacity C first F commit M next N"
 * where B is the ring bytes (headers and alignment included) of this run's
 * records: B / C is how many times this run went round the ring. A failed
 * append prints "ERR errno-name message" and exits with 1 (3 for EAGAIN
 * with -N). Usage errors exit with 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rdmalog.h"

#define MAX_SIZES	64

static const unsigned long default_sizes[] = {
	1, 3, 17, 255, 1001, 4097, 16383, 9999, 77, 2049, 511, 12345, 33, 7,
	3001, 15001, 129, 6553, 16384,
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: dp_writer [-n COUNT] [-S SIZE,...] [-N] [-T] [-k KEEP] [-p PREFIX]\n");
}

static int get_state(int fd, struct rdmalog_state *st)
{
	memset(st, 0, sizeof(*st));
	st->version = RDMALOG_IOC_VERSION;
	return ioctl(fd, RDMALOG_IOC_GET_STATE, st);
}

static uint64_t footprint(uint64_t len)
{
	uint64_t a = RDMALOG_RECORD_ALIGN;

	return (sizeof(struct rdmalog_ring_record) + len + a - 1) / a * a;
}

static void fill(char *buf, size_t size, const char *prefix, uint64_t i)
{
	char head[96];
	size_t n, k;

	n = (size_t)snprintf(head, sizeof(head), "%s:%" PRIu64 ":", prefix, i);
	for (k = 0; k < size; k++)
		buf[k] = k < n ? head[k] : (char)('a' + (i * 31 + k * 7) % 26);
}

/* The "done" line; -1 when the log's state cannot be read. */
static int summary(int fd, uint64_t appends, uint64_t trims, uint64_t bytes)
{
	struct rdmalog_state st;

	if (get_state(fd, &st) < 0) {
		printf("ERR %s GET_STATE: %s\n", strerrorname_np(errno),
		       strerror(errno));
		return -1;
	}
	printf("done appends %" PRIu64 " trims %" PRIu64 " bytes %" PRIu64
	       " capacity %llu first %llu commit %llu next %llu\n",
	       appends, trims, bytes, (unsigned long long)st.capacity,
	       (unsigned long long)st.first_lsn,
	       (unsigned long long)st.commit_lsn,
	       (unsigned long long)st.next_lsn);
	return 0;
}

static int parse_sizes(char *arg, unsigned long *sizes)
{
	int n = 0;
	char *tok, *end;

	for (tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
		if (n == MAX_SIZES)
			return -1;
		sizes[n] = strtoul(tok, &end, 0);
		if (*end || !sizes[n])
			return -1;
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned long sizes[MAX_SIZES], max_size = 0;
	uint64_t count = 1, keep = 4, i, bytes = 0, trims = 0;
	int nsizes = 0, nonblock = 0, trim = 0, fd, c, j;
	const char *prefix = "dp";
	struct rdmalog_state st;
	char *buf, *end;

	while ((c = getopt(argc, argv, "n:S:NTk:p:h")) != -1) {
		switch (c) {
		case 'n':
			count = strtoull(optarg, &end, 0);
			if (*end || !*optarg)
				goto bad;
			break;
		case 'S':
			nsizes = parse_sizes(optarg, sizes);
			if (nsizes <= 0)
				goto bad;
			break;
		case 'N':
			nonblock = 1;
			break;
		case 'T':
			trim = 1;
			break;
		case 'k':
			keep = strtoull(optarg, &end, 0);
			if (*end || !*optarg)
				goto bad;
			break;
		case 'p':
			prefix = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (optind != argc || (!count && !nonblock))
		goto bad;
	if (!nsizes) {
		nsizes = sizeof(default_sizes) / sizeof(default_sizes[0]);
		memcpy(sizes, default_sizes, sizeof(default_sizes));
	}
	for (j = 0; j < nsizes; j++)
		if (sizes[j] > max_size)
			max_size = sizes[j];
	buf = malloc(max_size);
	if (!buf) {
		perror("dp_writer");
		return 1;
	}

	fd = open("/dev/" RDMALOG_DEV_NAME, O_RDWR | (nonblock ? O_NONBLOCK : 0));
	if (fd < 0 || get_state(fd, &st) < 0) {
		printf("ERR %s open: %s\n", strerrorname_np(errno), strerror(errno));
		return 1;
	}

	for (i = 0; !count || i < count; i++) {
		size_t size = sizes[i % nsizes];
		uint64_t lsn = 0;

		fill(buf, size, prefix, i);
		if (write(fd, buf, size) != (ssize_t)size) {
			int e = errno;

			if (nonblock && e == EAGAIN) {
				printf("EAGAIN\n");
				return summary(fd, i, trims, bytes) ? 1 : 3;
			}
			printf("ERR %s write: %s\n", strerrorname_np(e), strerror(e));
			return 1;
		}
		if (ioctl(fd, RDMALOG_IOC_LAST_LSN, &lsn) < 0) {
			printf("ERR %s LAST_LSN: %s\n", strerrorname_np(errno),
			       strerror(errno));
			return 1;
		}
		printf("%llu %zu\n", (unsigned long long)lsn, size);
		bytes += footprint(size);
		if (!trim)
			continue;
		if (get_state(fd, &st) < 0) {
			printf("ERR %s GET_STATE: %s\n", strerrorname_np(errno),
			       strerror(errno));
			return 1;
		}
		if (st.used > st.capacity / 2 && st.commit_lsn > st.first_lsn + keep) {
			__u64 to = st.commit_lsn - keep;

			if (ioctl(fd, RDMALOG_IOC_TRIM, &to) < 0) {
				printf("ERR %s TRIM %llu: %s\n", strerrorname_np(errno),
				       (unsigned long long)to, strerror(errno));
				return 1;
			}
			trims++;
		}
	}
	if (summary(fd, i, trims, bytes))
		return 1;
	free(buf);
	close(fd);
	return 0;
bad:
	usage(stderr);
	return 2;
}
