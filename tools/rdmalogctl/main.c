// SPDX-License-Identifier: GPL-2.0
/*
 * rdmalogctl - configure and inspect rdmalog nodes.
 *
 *   rdmalogctl [OPTIONS] OBJECT {COMMAND | help}
 *
 * Objects and commands may be abbreviated; when an abbreviation fits
 * several, the first in the order of the usage text wins (as in ip(8)).
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rdmalogctl.h"

struct options opt;

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry '" PROG " help' for more information.\n", stderr);
	return EXIT_USAGE;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " [ OPTIONS ] OBJECT { COMMAND | help }\n"
		"       " PROG " [ OPTIONS ] apply FILE [ --node ID ] [ --dry-run ]\n"
		"where  OBJECT := { node | peer | log | status | stats | monitor | apply |\n"
		"                   wait | help }\n"
		"       OPTIONS := { -j[son] | -p[retty] | -V[ersion] | -h[elp] |\n"
		"                    -t[imestamp] | --node ID | --dry-run | --check |\n"
		"                    --count N | --now | --timeout S }\n"
		"\n"
		"  node show | set [id ID] [cluster CLUSTER_ID] [address ADDR] [port PORT]\n"
		"                  [role primary|backup] | up | down\n"
		"  peer add id ID address ADDR [port PORT] | del id ID | show [id ID]\n"
		"  log show | set [capacity SIZE] [max-record SIZE]\n"
		"                 [durability async|quorum|all] [commit-timeout MS] | trim LSN\n"
		"  status                     node, log, durability and peers at a glance\n"
		"  stats                      counters\n"
		"  monitor [--now] [--count N] print events until interrupted (-t: with times)\n"
		"  apply FILE [--node ID] [--dry-run] | apply --check FILE\n"
		"                             make this node match a cluster file\n"
		"  wait {up | connected [ID] | in-sync [ID] | durable | primary}\n"
		"       [--timeout S]\n"
		"                             return once the state is reached (5: timeout)\n"
		"\n"
		"  -j, --json      JSON output (one document; one object per line for monitor)\n"
		"  -p, --pretty    indented JSON (implies --json)\n"
		"  -V, --version   print the version and exit\n"
		"  -h, --help      print this help and exit\n"
		"\n"
		"See rdmalogctl(8) for details.\n");
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return EXIT_OK;
}

static const struct object {
	const char *name;
	int (*fn)(int argc, char **argv);
} objects[] = {
	{ "node", do_node },
	{ "peer", do_peer },
	{ "log", do_log },
	{ "status", do_status },
	{ "stats", do_stats },
	{ "monitor", do_monitor },
	{ "apply", do_apply },
	{ "help", do_help },
	{ "wait", do_wait },
	{ NULL, NULL },
};

enum { OPT_NODE = 256, OPT_DRY_RUN, OPT_COUNT, OPT_NOW, OPT_CHECK,
	OPT_TIMEOUT };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "node", required_argument, NULL, OPT_NODE },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "now", no_argument, NULL, OPT_NOW },
		{ "timestamp", no_argument, NULL, 't' },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ NULL, 0, NULL, 0 },
	};
	const char *names[sizeof(objects) / sizeof(objects[0])];
	const char *obj_name;
	int c, i, k;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jpVht", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opt.json = true;
			break;
		case 'p':
			opt.json = true;
			opt.pretty = true;
			jw_pretty = true;
			break;
		case 'V':
			printf(PROG " " RDMALOGCTL_VERSION
			       " (genl family '%s' version %d)\n",
			       RDMALOG_GENL_NAME, RDMALOG_GENL_VERSION);
			return EXIT_OK;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case OPT_NODE:
			if (parse_u32_range(optarg, 1, RDMALOG_MAX_NODE_ID,
					    &opt.node))
				return usage_error("invalid --node '%s' (1..%d)",
						   optarg, RDMALOG_MAX_NODE_ID);
			opt.have_node = true;
			break;
		case OPT_DRY_RUN:
			opt.dry_run = true;
			break;
		case OPT_CHECK:
			opt.check = true;
			break;
		case OPT_NOW:
			opt.now = true;
			break;
		case 't':
			opt.timestamps = true;
			break;
		case OPT_TIMEOUT: {
			char *end;

			opt.timeout = strtod(optarg, &end);
			if (end == optarg || *end || !(opt.timeout >= 0) ||
			    opt.timeout > 31536000)
				return usage_error("invalid --timeout '%s' (seconds)",
						   optarg);
			opt.have_timeout = true;
			break;
		}
		case OPT_COUNT:
			if (parse_u64(optarg, &opt.count) || !opt.count)
				return usage_error("invalid --count '%s' (a positive number)",
						   optarg);
			opt.have_count = true;
			break;
		case ':':
			return usage_error("option '%s' needs an argument",
					   argv[optind - 1]);
		default:
			if (optopt && optopt < 256)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	argc -= optind;
	argv += optind;

	if (argc < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	for (i = 0; objects[i].name; i++)
		names[i] = objects[i].name;
	names[i] = NULL;
	k = match_word(argv[0], names);
	if (k < 0)
		return usage_error("unknown object '%s'", argv[0]);
	obj_name = objects[k].name;

	if ((opt.have_node || opt.dry_run || opt.check) &&
	    strcmp(obj_name, "apply"))
		return usage_error("--node, --dry-run and --check only go with 'apply'");
	if (opt.check && (opt.have_node || opt.dry_run))
		return usage_error("apply: --check takes neither --node nor --dry-run");
	if ((opt.have_count || opt.now || opt.timestamps) &&
	    strcmp(obj_name, "monitor"))
		return usage_error("--count, --now and -t only go with 'monitor'");
	if (opt.have_timeout && strcmp(obj_name, "wait"))
		return usage_error("--timeout only goes with 'wait'");

	return objects[k].fn(argc - 1, argv + 1);
}
