#!/usr/bin/env bash
# test.sh: the project's one test command.
#
#   scripts/test.sh [go test flags] [packages]
#
# Starts the real test servers (scripts/testservers.sh: DynamoDB Local,
# versitygw for S3, fake-gcs-server, Azurite), installs Debian's Chromium for
# the console's browser test when none is there, exports the endpoints, runs
#   GOFLAGS=-trimpath go test -race -count=1 -timeout 45m -parallel 2 ./... "$@"
# (./... in an order that keeps apart the packages that load DynamoDB Local
# most, see below) and stops the servers on any exit. Exits with go test's status.
#
# When the arguments name packages (./x, ./x/..., nameservice.dev/...), they
# replace ./..., e.g. scripts/test.sh -run TestPut ./drivers/...
#
# -long (a flag of this script, not passed to go test) plays the soak-style
# loops at full length (NS_TEST_LONG=1; the conformance suite's
# PurgeRacesCreate: 200 rounds instead of 40; drivers/dynamodb's concurrent
# status pushes: 25 a writer instead of 8). CI runs with it.
#
# Each run uses its own run directory (NS_TEST_RUN, default a fresh temp dir), so
# runs can overlap; the install cache (NS_TEST_CACHE) is shared.
# NS_TEST_SERVERS selects the servers ("dynamodb s3 gcs azure" by default).
# With CI set, tests whose server is missing fail instead of skipping (see
# internal/testing/testenv).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

own_run=
if [[ -z ${NS_TEST_RUN:-} ]]; then
	NS_TEST_RUN=$(mktemp -d "${TMPDIR:-/tmp}/nameservice-test-run.XXXXXX")
	own_run=$NS_TEST_RUN
fi
export NS_TEST_RUN
export NS_TEST_ARTIFACTS=${NS_TEST_ARTIFACTS:-$NS_TEST_RUN/artifacts} # failing tests' files (internal/testing/robustness)

# shellcheck source=testservers.sh
. "$root/scripts/testservers.sh"

gotest_pid=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	if [[ -n $gotest_pid ]] && kill -0 "$gotest_pid" 2>/dev/null; then
		# go test does not pass signals on to its test binaries: signal its
		# whole process group (its own, see below), SIGKILL if it lingers.
		local target=$gotest_pid i
		kill -0 -- "-$gotest_pid" 2>/dev/null && target=-$gotest_pid
		kill -TERM -- "$target" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			kill -0 -- "$target" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL -- "$target" 2>/dev/null || true
		wait "$gotest_pid" 2>/dev/null || true
	fi
	ns_testservers_here stop || true
	[[ -z $(ls -A "$NS_TEST_ARTIFACTS" 2>/dev/null) ]] || { echo "test.sh: failing tests wrote files to $NS_TEST_ARTIFACTS (kept)" >&2; own_run=; }
	[[ -z $own_run ]] || rm -rf -- "$own_run"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

ns_testservers_here start
_ns_ensure_chromium
server_env=$(ns_testservers_here env) # separate step: a failure here must stop the script
eval "$server_env"

# The module's dependencies, quietly, before go list and go test fetch them:
# on a fresh machine go printed a line for each of about 90 modules. The log
# is named when the download fails, as the installers' logs are.
mkdir -p "$NS_CACHE" # not made yet when no server needed installing
mod_log=$NS_CACHE/go-mod-download.log
if ! go mod download >"$mod_log" 2>&1; then
	tail -n 20 "$mod_log" >&2 || true
	echo "test.sh: go mod download failed (its output: $mod_log)" >&2
	exit 1
fi
rm -f "$mod_log"

pkgs=(./...)
args=()
for arg in "$@"; do
	case $arg in
	-long | --long)
		export NS_TEST_LONG=1
		continue
		;;
	. | .. | ./* | ../* | nameservice.dev/*) pkgs=() ;;
	esac
	args+=("$arg")
done

# go test starts packages in the order given, two at a time on two cores.
# drivers/remote and drivers/s3etag load DynamoDB Local most (the remote
# driver over DynamoDB, S3 lock mode's locks): side by side, each waited on
# the emulator the other kept busy (533 s and 589 s in one run; 142 s and
# 366 s apart, with one DynamoDB Local). drivers/dynamodb, whose index
# upgrade under writes DynamoDB Local failed (HTTP 500) when it ran late,
# on a server with a long history, goes first, beside remote (the two
# servers keep them apart); s3etag follows dynamodb, and the robustness
# package comes fifth, when remote is done: beside it, remote's DynamoDB
# suite took 388 s and 537 s (106 s apart). Started late, remote was the
# run's tail.
shown="${pkgs[*]-}"
if [[ $shown == ./... ]]; then
	mod=$(go list -m)
	first=(drivers/dynamodb drivers/remote drivers/s3etag cmd/ns internal/testing/robustness)
	pkgs=("${first[@]/#/$mod/}")
	while IFS= read -r p; do
		[[ " ${pkgs[*]} " == *" $p "* ]] || pkgs+=("$p")
	done < <(go list ./...)
	shown="./... (first: ${first[*]})"
fi

# In the background, so a signal to this script stops go test and the servers
# at once rather than after go test finishes, and in its own process group
# (setsid execs in place here), so cleanup can stop the test binaries too.
setsid=()
command -v setsid >/dev/null 2>&1 && setsid=(setsid)
# -parallel 2: the conformance cases and the long tests (t.Parallel) run two
# at a time per package; four loaded the emulators (Azurite is one Node
# thread) on two busy cores until the suite's timed cases missed.
# nice 5: the servers every timed case waits on (leases, branch windows, S3
# lock mode's DynamoDB locks) get the processor first; on two busy cores the
# race-instrumented test processes starved DynamoDB Local until lock-mode
# branch creates missed their 20 s window.
nice=()
command -v nice >/dev/null 2>&1 && nice=(nice -n 5)
# GOFLAGS -trimpath (for go test and the builds tests run): without it a
# package's directory is part of its build, so a fresh clone compiled the
# whole module again; with it, what an earlier run compiled is reused.
GOFLAGS=$(go env GOFLAGS) # the environment's, or what go env -w set
[[ " $GOFLAGS " == *" -trimpath "* ]] || GOFLAGS="${GOFLAGS:+$GOFLAGS }-trimpath"
export GOFLAGS
goflags=(-race -count=1 -timeout 45m -parallel 2)
gotest=(${nice[@]+"${nice[@]}"} go test "${goflags[@]}" ${pkgs[@]+"${pkgs[@]}"} ${args[@]+"${args[@]}"})
printf 'test.sh: %s%s\n' "${NS_TEST_LONG:+NS_TEST_LONG=1 }GOFLAGS=$GOFLAGS " "${nice[*]-} go test ${goflags[*]} $shown ${args[*]-}" >&2
began=$SECONDS
${setsid[@]+"${setsid[@]}"} "${gotest[@]}" &
gotest_pid=$!
status=0
wait "$gotest_pid" || status=$?
gotest_pid=
printf 'test.sh: go test exited %d after %ds\n' "$status" "$((SECONDS - began))" >&2
exit "$status"
