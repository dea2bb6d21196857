//go:build unix

package fs

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Open flags of record and lock files.
const (
	oNoFollow = unix.O_NOFOLLOW
	oCloexec  = unix.O_CLOEXEC
)

// platformProblem is nil: the driver's guarantees rest on flock, rename and
// O_NOFOLLOW, which every Unix has.
func platformProblem() error { return nil }

// tryLock takes an exclusive flock of f without waiting; busy reports that
// another holder has it (or a signal interrupted the call): try again.
func tryLock(f *os.File) (busy bool, err error) {
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) || errors.Is(err, unix.EINTR) {
		return true, err
	}
	return false, err
}

func unlock(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// statOf returns the device, inode and change time of fi; ok is false when
// the system does not give them.
func statOf(fi os.FileInfo) (dev, ino uint64, ctime int64, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return uint64(st.Dev), st.Ino, ctimeOf(st), true
}
