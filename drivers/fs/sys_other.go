//go:build !unix

package fs

import (
	"errors"
	"fmt"
	"os"

	"nameservice.dev/nameservice/model"
)

// The flags have no equivalent here; Open refuses to run anyway.
const (
	oNoFollow = 0
	oCloexec  = 0
)

// platformProblem says why the driver does not run here: its guarantees
// rest on flock, atomic rename over open files and O_NOFOLLOW, which this
// system does not give alike, and it has not been tested here.
func platformProblem() error {
	return fmt.Errorf("fs: %w: the file driver runs on Unix systems only (use mem://, an object store, DynamoDB, or http:// to an ns serve on Unix)", model.ErrUnsupported)
}

func tryLock(*os.File) (bool, error) { return false, errors.ErrUnsupported }

func unlock(*os.File) {}

func statOf(os.FileInfo) (dev, ino uint64, ctime int64, ok bool) { return 0, 0, 0, false }
