#!/usr/bin/env bash
# release.sh: build the release archives of ns, ns-migrate and ns-bench.
#
#   scripts/release.sh VERSION [OUTDIR]   build every target into OUTDIR (default dist/VERSION):
#                                         one archive per target (.tar.gz, .zip for windows)
#                                         holding the three commands, README.md, CHANGELOG.md
#                                         and docs/, plus SHA256SUMS over the archives
#   scripts/release.sh --check            cross-compile every command for every target and
#                                         write nothing (what CI runs)
#
# VERSION is the release's name, e.g. v1.2.0 (a tag, or any [A-Za-z0-9._+-] word); `ns version`
# and the --version flags of ns-migrate and ns-bench print it with the commit (git rev-parse
# HEAD) and the Go version. Builds are static (CGO_ENABLED=0) and reproducible (-trimpath, no
# build ID): the same commit, version and Go give the same bytes.
#
# NS_RELEASE_TARGETS overrides the targets (default: linux, darwin and windows on amd64 and
# arm64), e.g. NS_RELEASE_TARGETS="linux/amd64" scripts/release.sh v1.2.0-rc1.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

targets=${NS_RELEASE_TARGETS:-"linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64"}
commands=(ns ns-migrate ns-bench)
pkg=nameservice.dev/nameservice/internal/buildinfo

die() {
	echo "release: $*" >&2
	exit 1
}

check() {
	local t
	for t in $targets; do
		echo "release: building ./cmd/... for $t" >&2
		# Several main packages at once: compiled and type-checked, not linked.
		CGO_ENABLED=0 GOOS=${t%/*} GOARCH=${t#*/} go build -trimpath ./cmd/...
	done
}

release() {
	local version=$1 out=${2:-dist/$1} commit t goos goarch name stage c ext
	[[ $version =~ ^[A-Za-z0-9][A-Za-z0-9._+-]*$ ]] || die "VERSION '$version' must be a word of [A-Za-z0-9._+-], e.g. v1.2.0"
	commit=$(git rev-parse HEAD) || die "not in a git checkout: cannot name the commit"
	if [[ -n $(git status --porcelain) ]]; then
		echo "release: warning: the work tree has changes; the archives are built from it, not from $commit alone" >&2
	fi
	for t in $targets; do
		command -v zip >/dev/null 2>&1 || [[ $t != windows/* ]] || die "zip is needed for the windows archives"
	done
	rm -rf "$out"
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	local ldflags="-s -w -buildid= -X $pkg.version=$version -X $pkg.commit=$commit"
	for t in $targets; do
		goos=${t%/*} goarch=${t#*/}
		name=nameservice_${version}_${goos}_${goarch}
		stage=$(mktemp -d)
		mkdir "$stage/$name"
		ext=
		[[ $goos == windows ]] && ext=.exe
		for c in "${commands[@]}"; do
			echo "release: $t $c" >&2
			CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=false -ldflags "$ldflags" \
				-o "$stage/$name/$c$ext" "./cmd/$c"
		done
		cp README.md CHANGELOG.md "$stage/$name/"
		cp -r docs "$stage/$name/docs"
		if [[ $goos == windows ]]; then
			(cd "$stage" && zip -qrX "$out/$name.zip" "$name")
		else
			# Fixed owner, order and times, so the archive depends on its contents only.
			tar -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner \
				--mtime="@$(git log -1 --format=%ct)" -czf "$out/$name.tar.gz" "$name"
		fi
		rm -rf "$stage"
	done
	(cd "$out" && sha256sum -- nameservice_* >SHA256SUMS)
	echo "release: $out" >&2
	cat "$out/SHA256SUMS"
}

case ${1:-} in
--check) check ;;
"" | -h | --help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' ;;
*) release "$@" ;;
esac
