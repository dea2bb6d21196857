package fs

import (
	"errors"
	"os"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2(2) turns out to be missing (Linux before
// 5.6, or a sandbox that refuses it).
var noOpenat2 atomic.Bool

// openNoLinks opens path for reading, refusing a symbolic link anywhere
// below root, in one system call: openat2 with RESOLVE_NO_SYMLINKS on the
// path below root's real (link-free) location. ok is false when openat2
// is not available; the caller then checks each element itself.
func openNoLinks(realRoot, rel string) (f *os.File, ok bool, err error) {
	if noOpenat2.Load() || realRoot == "" {
		return nil, false, nil
	}
	path := realRoot + string(os.PathSeparator) + rel
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW, Resolve: unix.RESOLVE_NO_SYMLINKS}
	for {
		fd, err := unix.Openat2(unix.AT_FDCWD, path, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), path), true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSYS):
			noOpenat2.Store(true)
			return nil, false, nil
		case errors.Is(err, unix.EPERM): // a sandbox refusing the call
			return nil, false, nil
		}
		return nil, true, &os.PathError{Op: "openat2", Path: path, Err: err}
	}
}

func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
