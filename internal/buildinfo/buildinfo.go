// Package buildinfo tells which build a command is: the version, the commit
// it was built from and the Go toolchain, for `ns version` and the
// --version flags of the other commands.
//
// A release build sets the version (and, when it builds outside a git work
// tree, the commit) with the linker, as scripts/release.sh does:
//
//	go build -ldflags "-X nameservice.dev/nameservice/internal/buildinfo.version=v1.2.0" ./cmd/ns
//
// Otherwise both come from the module and VCS information the go command
// stamps into every binary (runtime/debug.ReadBuildInfo).
package buildinfo

import (
	"cmp"
	"runtime/debug"
)

// Set with -ldflags -X; empty unless a release build sets them.
var (
	version string
	commit  string
)

// Info describes one build.
type Info struct {
	Version  string `json:"version"`            // the release, module version, or "(devel)"
	Commit   string `json:"commit,omitempty"`   // the VCS revision it was built from
	Time     string `json:"time,omitempty"`     // that revision's commit time
	Modified bool   `json:"modified,omitempty"` // built from a work tree with changes
	Go       string `json:"go"`                 // the Go toolchain
	Platform string `json:"platform"`           // GOOS/GOARCH
}

// Read returns the running binary's build information.
func Read() Info {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: cmp.Or(version, "unknown"), Commit: commit}
	}
	i := Info{Version: info.Main.Version, Go: info.GoVersion}
	var goos, goarch string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
		case "vcs.time":
			i.Time = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	i.Platform = goos + "/" + goarch
	i.Version = cmp.Or(version, i.Version, "(devel)")
	i.Commit = cmp.Or(commit, i.Commit)
	return i
}

// String is the one-line form the commands print after their name:
// "v1.2.0 (commit 0123abcd, 2026-01-02T03:04:05Z) go1.26.8 linux/amd64".
func (i Info) String() string {
	s := i.Version
	if i.Commit != "" {
		s += " (commit " + i.Commit
		if i.Time != "" {
			s += ", " + i.Time
		}
		if i.Modified {
			s += ", modified"
		}
		s += ")"
	}
	s += " " + i.Go
	if i.Platform != "/" && i.Platform != "" {
		s += " " + i.Platform
	}
	return s
}
