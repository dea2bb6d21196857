//go:build !linux

package fs

import "os"

// openNoLinks reports that the system has no single call that refuses
// symbolic links on the way: the caller checks each element itself.
func openNoLinks(realRoot, rel string) (*os.File, bool, error) { return nil, false, nil }
