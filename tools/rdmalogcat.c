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
 * -H adds the header (epoch, timestamp, CRC32C); -j prints JSON lines
 * (tools/lib/json.c). As text, a payload's bytes outside printable ASCII
 * are written as \xNN and a backslash as \\; in JSON, "data" is the payload as a string: valid
 * UTF-8 as it is, other bytes as \u00XX, and a payload that is not valid
 * UTF-8 also gets "data_hex", its exact bytes. rdmalogcat(1) has the
 * rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "json.h"
#include "rdmalog.h"

#define PROG "rdmalogcat"

static const char *dev_path = "/dev/" RDMALOG_DEV_NAME;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " -a [-d DEVICE] [TEXT...]\n"
		"       " PROG " [-s LSN] [-n COUNT] [-f] [-H] [-j] [-d DEVICE]\n"
		"Append records to the rdmalog log, or print its committed records.\n"
		"  -a, --append        append each TEXT (or each line of standard\n"
		"                      input) as one record; print its LSN\n"
		"  -s, --start LSN     start at LSN (default: the oldest retained\n"
		"                      record)\n"
		"  -n, --count COUNT   print at most COUNT records\n"
		"  -f, --follow        wait for new records instead of stopping at\n"
		"                      the commit point\n"
		"  -H, --headers       print each record's header too\n"
		"  -j, --json          one JSON object per record (UTF-8 payloads\n"
		"                      as they are, other bytes as \\u00XX plus\n"
		"                      \"data_hex\")\n"
		"  -d, --device DEV    device (default %s)\n"
		"  -h, --help          this help\n"
		"  -V, --version       print the version\n"
		"Exit status: 0 ok, 1 a call on the device failed, 2 usage error.\n"
		"See rdmalogcat(1) and rdmalog(4).\n", dev_path);
}

/* "rdmalogcat: WHAT: strerror", and what to do about the usual errors. */
static void report(const char *what, int err)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(err));
	switch (err) {
	case ENOENT:
	case ENODEV:
	case ENXIO:
		fprintf(stderr, PROG ": is the module loaded? (modprobe rdmalog)\n");
		break;
	case EACCES:
	case EPERM:
		fputs(PROG ": root and the group 'rdmalog' may open it (60-rdmalog.rules)\n",
		      stderr);
		break;
	case ENETDOWN:
		fprintf(stderr, PROG ": the log is down (rdmalogctl node up)\n");
		break;
	}
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
		report("write", errno);
		return -1;
	}
	if (ioctl(fd, RDMALOG_IOC_LAST_LSN, &lsn) < 0) {
		report("LAST_LSN", errno);
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
		report(dev_path, errno);
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

static void print_payload(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = p[i];

		if (c == '\\')
			fputs("\\\\", stdout);
		else if (c >= 0x20 && c < 0x7f)
			putchar(c);
		else
			printf("\\x%02x", c);
	}
}

static void print_json(const struct rdmalog_read_record *rr,
		       const unsigned char *buf, int headers)
{
	jw_begin_obj(NULL);
	jw_u64("lsn", rr->hdr.lsn);
	jw_u64("len", rr->hdr.len);
	if (headers) {
		jw_u64("epoch", rr->hdr.epoch);
		jw_u64("timestamp_ns", rr->hdr.timestamp_ns);
		jw_u64("crc32c", rr->hdr.crc32c);
		if (rr->hdr.flags & RDMALOG_RECORD_EPOCH_START)
			jw_bool("epoch_start", 1);
	}
	jw_bytes("data", buf, rr->hdr.len);
	if (!json_utf8_valid(buf, rr->hdr.len))
		jw_hex("data_hex", buf, rr->hdr.len);
	jw_end_obj();
	jw_finish();
}

static int do_read(__u64 start, int have_start, long count, int follow,
		   int headers, int json)
{
	struct rdmalog_read_record rr;
	struct rdmalog_state st;
	unsigned char *buf;
	char what[64];
	size_t buf_len;
	int fd;

	fd = open(dev_path, O_RDONLY);
	if (fd < 0) {
		report(dev_path, errno);
		return 1;
	}
	if (get_state(fd, &st) < 0) {
		report("GET_STATE", errno);
		close(fd);
		return 1;
	}
	buf_len = st.max_record ? st.max_record : 1;
	buf = malloc(buf_len);
	if (!buf) {
		perror(PROG);
		close(fd);
		return 1;
	}
	if (have_start && lseek(fd, (off_t)start, SEEK_SET) < 0) {
		snprintf(what, sizeof(what), "seek to %llu",
			 (unsigned long long)start);
		report(what, errno);
		free(buf);
		close(fd);
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
			int err = errno;

			/*
			 * A trim (or a backup's restart behind the primary)
			 * passed the cursor: say what was skipped, go on at
			 * the oldest record (Documentation/device.rst).
			 */
			if (err == ERANGE && get_state(fd, &st) == 0 &&
			    st.first_lsn > (__u64)cur &&
			    lseek(fd, (off_t)st.first_lsn, SEEK_SET) >= 0) {
				fprintf(stderr, PROG ": LSN %lld..%llu trimmed unread, going on at %llu\n",
					(long long)cur,
					(unsigned long long)st.first_lsn - 1,
					(unsigned long long)st.first_lsn);
				done--;
				continue;
			}
			snprintf(what, sizeof(what), "read at LSN %lld",
				 (long long)cur);
			report(what, err);
			free(buf);
			close(fd);
			return 1;
		}
		if (json) {
			print_json(&rr, buf, headers);
		} else {
			printf("%llu", (unsigned long long)rr.hdr.lsn);
			if (headers)
				printf(" epoch %llu ts %llu crc32c 0x%08x len %u%s",
				       (unsigned long long)rr.hdr.epoch,
				       (unsigned long long)rr.hdr.timestamp_ns,
				       rr.hdr.crc32c, rr.hdr.len,
				       rr.hdr.flags & RDMALOG_RECORD_EPOCH_START ?
				       " epoch-start" : "");
			printf("\t");
			print_payload(buf, rr.hdr.len);
			printf("\n");
			fflush(stdout);
		}
	}
	free(buf);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "append", no_argument, NULL, 'a' },
		{ "start", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "follow", no_argument, NULL, 'f' },
		{ "headers", no_argument, NULL, 'H' },
		{ "json", no_argument, NULL, 'j' },
		{ "device", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int append = 0, follow = 0, headers = 0, json = 0, have_start = 0, c;
	unsigned long long start = 0;
	long count = -1;
	char *end;

	while ((c = getopt_long(argc, argv, "as:n:fHjd:hV", lopts, NULL)) != -1) {
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
		case 'V':
			printf(PROG " " RDMALOG_VERSION "\n");
			return 0;
		default:
			fprintf(stderr, "see " PROG " --help\n");
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
