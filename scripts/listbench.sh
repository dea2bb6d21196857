#!/usr/bin/env bash
# listbench.sh: the listing-at-scale table of docs/performance.md, in one command.
#
#   scripts/listbench.sh [SIZES] [DRIVERS]
#   scripts/listbench.sh --table FILE      the table of a run's raw output (a partial one too)
#
# SIZES are record counts, comma-separated (default 1000,10000,100000); DRIVERS
# are among mem fs s3 dynamodb (default all four, space- or comma-separated).
# For each driver it runs that driver's own listing benchmark (BenchmarkList
# in drivers/mem, drivers/fs, drivers/s3etag, drivers/dynamodb) once per size
# with NS_BENCH_LIST_SIZES=SIZES, and prints one Markdown table: the driver's
# listing, the raw floor measured in the same run, their ratio, the growth
# from the previous size, and the peak RSS of `ns list` over the same records
# in a process of its own (mem: of the benchmark process, store included).
#
# S3 (versitygw) and DynamoDB Local are started with scripts/testservers.sh in
# a run directory of this script's own, unless NAMESERVICE_TEST_S3_ENDPOINT /
# NAMESERVICE_TEST_DYNAMODB_ENDPOINT already name running servers. The raw
# `go test` output goes to stderr and to $NS_BENCH_OUT (default a temp file).
# NS_BENCH_SUB narrows the sub-benchmarks (e.g. /layout=b for layout B only).
# NS_BENCH_TIMES is -benchtime (default 1x; 3x reports medians of 3). Seeding
# 100,000 records takes minutes per store; seeding is not timed.
set -euo pipefail

# table FILE prints the Markdown table of the benchmark lines in FILE.
table() {
	echo "| store | records | list | raw floor | list/raw | growth from the previous size (list / raw) | peak RSS |"
	echo "|---|---|---|---|---|---|---|"
	awk '
	/^pkg: / { n = split($2, p, "/"); drv = p[n] }
	/^BenchmarkList\// && /list-ms/ {
		name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkList\//, "", name)
		lay = ""; recs = name
		if (match(name, /layout=[a-z]+/)) lay = " " toupper(substr(name, RSTART + 7, RLENGTH - 7))
		sub(/.*n=/, "", recs); sub(/.*\//, "", recs)
		delete v
		for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
		store = drv lay
		if (drv == "s3etag") store = "s3 (versitygw)" lay
		if (drv == "dynamodb") store = "dynamodb (Local)"
		growth = "–"
		if (store in lastList && lastList[store] > 0 && lastRaw[store] > 0)
			growth = sprintf("×%.1f / ×%.1f (records ×%g)", v["list-ms"] / lastList[store], v["raw-ms"] / lastRaw[store], recs / lastN[store])
		rss = sprintf("%.0f MB", v["rss-MB"])
		if ("store-MB" in v) rss = rss sprintf(" (%.0f MB before the listing: the store)", v["store-MB"])
		printf "| %s | %d | %s | %s | %.2f | %s | %s |\n", store, recs, ms(v["list-ms"]), ms(v["raw-ms"]), v["ratio"], growth, rss
		lastList[store] = v["list-ms"]; lastRaw[store] = v["raw-ms"]; lastN[store] = recs
	}
	function ms(x) { return x >= 10000 ? sprintf("%.1f s", x / 1000) : x >= 10 ? sprintf("%.0f ms", x) : sprintf("%.2f ms", x) }
	' "$1"
}

if [[ ${1:-} == --table ]]; then
	table "$2"
	exit
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

sizes=${1:-1000,10000,100000}
drivers=${2:-mem fs s3 dynamodb}
drivers=${drivers//,/ }
out=${NS_BENCH_OUT:-$(mktemp "${TMPDIR:-/tmp}/listbench.XXXXXX")}

need=()
for d in $drivers; do
	case $d in
	mem | fs) ;;
	s3) [[ -n ${NAMESERVICE_TEST_S3_ENDPOINT:-} ]] || need+=(s3) ;;
	dynamodb) [[ -n ${NAMESERVICE_TEST_DYNAMODB_ENDPOINT:-} ]] || need+=(dynamodb) ;;
	*)
		echo "listbench: unknown driver $d (want mem, fs, s3, dynamodb)" >&2
		exit 2
		;;
	esac
done

if ((${#need[@]})); then
	export NS_TEST_RUN=${NS_TEST_RUN:-$(mktemp -d "${TMPDIR:-/tmp}/nameservice-listbench.XXXXXX")}
	export NS_TEST_SERVERS="${need[*]}"
	# shellcheck source=testservers.sh
	. "$root/scripts/testservers.sh"
	trap 'ns_testservers_here stop || true' EXIT
	ns_testservers_here start
	eval "$(ns_testservers_here env)"
fi

start_load=$(uptime)
status=0
for d in $drivers; do
	pkg=./drivers/$d
	[[ $d == s3 ]] && pkg=./drivers/s3etag
	NS_BENCH_LIST_SIZES=$sizes go test -run '^$' -bench "^BenchmarkList\$${NS_BENCH_SUB:-}" -benchtime "${NS_BENCH_TIMES:-1x}" -timeout 4h "$pkg" 2>&1 |
		tee -a "$out" >&2 || status=1
done
end_load=$(uptime)

echo "Command: \`scripts/listbench.sh $sizes ${drivers// /,}\` ($(go version | cut -d' ' -f3), $(nproc) cores)."
echo "Load at the start: ${start_load#*load average: }; at the end: ${end_load#*load average: } (1, 5, 15 min)."
echo
table "$out"
exit $status
