// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalogcat - append records to /dev/rdmalog and print them back.
 *
 *   rdmalogcat -a [TEXT...]     append each TEXT (or each line of stdin)
 *                               as one record; print "LSN" per record
 *   rdmalogcat [-s LSN] [-n N] [-f] [-H] [-j]
 *                               print records from LSN (default: the
 *                               oldest retained), N of them (default: up
 *                               to the commit point; -f: wait for more)
 *
 * -H adds the header (epoch, timestamp, CRC32C); -j prints JSON lines.
 * Payloads are printed as text with non-printable bytes escaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rdmalog.h"

static const char *dev_path = "/dev/" RDMALOG_DEV_NAME;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rdmalogcat -a [TEXT...]\n"
		"       rdmalogcat [-s LSN] [-n COUNT] [-f] [-H] [-j] [-d DEVICE]\n"
		"  -a        append each TEXT (or each stdin line) as one record\n"
		"  -s LSN    start at LSN (default: oldest retained record)\n"
		"  -n COUNT  print at most COUNT records\n"
		"  -f        follow: wait for new records instead of stopping\n"
		"            at the commit point\n"
		"  -H        print each record's header too\n"
		"  -j        one JSON object per record\n"
		"  -d DEV    device (default %s)\n", dev_path);
}

static int get_state(int fd, struct rdmalog_state *st)
{
	memset(st, 0, sizeof(*st));
	st->version = RDMALOG_IOC_VERSION;
	return ioctl(fd, RDMALOG_IOC_GET_STATE, st);
}

static int append_one(int fd, const char *buf, size_t len)
{
	__u64 lsn = 0;

	if (write(fd, buf, len) < 0) {
		fprintf(stderr, "rdmalogcat: write: %s\n", strerror(errno));
		return -1;
	}
	if (ioctl(fd, RDMALOG_IOC_LAST_LSN, &lsn) < 0) {
		fprintf(stderr, "rdmalogcat: LAST_LSN: %s\n", strerror(errno));
		return -1;
	}
	printf("%" PRIu64 "\n", (uint64_t)lsn);
	return 0;
}

static int do_append(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int fd, rc = 0;

	fd = open(dev_path, O_WRONLY);
	if (fd < 0) {
		fprintf(stderr, "rdmalogcat: %s: %s\n", dev_path, strerror(errno));
		return 1;
	}
	if (argc > 0) {
		for (int i = 0; i < argc && !rc; i++)
			rc = append_one(fd, argv[i], strlen(argv[i]));
	} else {
		while (!rc && (n = getline(&line, &cap, stdin)) > 0) {
			if (line[n - 1] == '\n')
				n--;
			if (n > 0)
				rc = append_one(fd, line, n);
		}
		free(line);
	}
	close(fd);
	return rc ? 1 : 0;
}

static void print_payload(const unsigned char *p, size_t len, int json)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = p[i];

		if (json && (c == '"' || c == '\\'))
			printf("\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			putchar(c);
		else if (json)
			printf("\\u%04x", c);
		else
			printf("\\x%02x", c);
	}
}

static int do_read(__u64 start, int have_start, long count, int follow,
		   int headers, int json)
{
	struct rdmalog_read_record rr;
	struct rdmalog_state st;
	unsigned char *buf;
	size_t buf_len;
	int fd;

	fd = open(dev_path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "rdmalogcat: %s: %s\n", dev_path, strerror(errno));
		return 1;
	}
	if (get_state(fd, &st) < 0) {
		fprintf(stderr, "rdmalogcat: GET_STATE: %s\n", strerror(errno));
		return 1;
	}
	buf_len = st.max_record ? st.max_record : 1;
	buf = malloc(buf_len);
	if (!buf) {
		perror("rdmalogcat");
		return 1;
	}
	if (have_start && lseek(fd, (off_t)start, SEEK_SET) < 0) {
		fprintf(stderr, "rdmalogcat: seek to %llu: %s\n",
			(unsigned long long)start, strerror(errno));
		return 1;
	}
	for (long done = 0; count < 0 || done < count; done++) {
		off_t cur = lseek(fd, 0, SEEK_CUR);

		if (!follow) {
			if (get_state(fd, &st) < 0 || (__u64)cur >= st.commit_lsn)
				break;
		}
		memset(&rr, 0, sizeof(rr));
		rr.version = RDMALOG_IOC_VERSION;
		rr.flags = RDMALOG_RR_AT_CURSOR;
		rr.buf = (uintptr_t)buf;
		rr.buf_len = buf_len;
		if (ioctl(fd, RDMALOG_IOC_READ_RECORD, &rr) < 0) {
			fprintf(stderr, "rdmalogcat: read at LSN %lld: %s\n",
				(long long)cur, strerror(errno));
			free(buf);
			close(fd);
			return 1;
		}
		if (json) {
			printf("{\"lsn\":%llu,\"len\":%u", (unsigned long long)rr.hdr.lsn,
			       rr.hdr.len);
			if (headers)
				printf(",\"epoch\":%llu,\"timestamp_ns\":%llu,\"crc32c\":%u",
				       (unsigned long long)rr.hdr.epoch,
				       (unsigned long long)rr.hdr.timestamp_ns,
				       rr.hdr.crc32c);
			printf(",\"data\":\"");
			print_payload(buf, rr.hdr.len, 1);
			printf("\"}\n");
		} else {
			printf("%llu", (unsigned long long)rr.hdr.lsn);
			if (headers)
				printf(" epoch %llu ts %llu crc32c 0x%08x len %u",
				       (unsigned long long)rr.hdr.epoch,
				       (unsigned long long)rr.hdr.timestamp_ns,
				       rr.hdr.crc32c, rr.hdr.len);
			printf("\t");
			print_payload(buf, rr.hdr.len, 0);
			printf("\n");
		}
		fflush(stdout);
	}
	free(buf);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int append = 0, follow = 0, headers = 0, json = 0, have_start = 0, c;
	unsigned long long start = 0;
	long count = -1;
	char *end;

	while ((c = getopt(argc, argv, "as:n:fHjd:h")) != -1) {
		switch (c) {
		case 'a':
			append = 1;
			break;
		case 's':
			errno = 0;
			start = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg) {
				fprintf(stderr, "rdmalogcat: bad LSN '%s'\n", optarg);
				return 2;
			}
			have_start = 1;
			break;
		case 'n':
			count = strtol(optarg, &end, 0);
			if (*end || count < 0) {
				fprintf(stderr, "rdmalogcat: bad count '%s'\n", optarg);
				return 2;
			}
			break;
		case 'f':
			follow = 1;
			break;
		case 'H':
			headers = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'd':
			dev_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (append)
		return do_append(argc - optind, argv + optind);
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	return do_read(start, have_start, count, follow, headers, json);
}
