// Command printinfo prints buildinfo.Read(), for buildinfo's tests.
package main

import (
	"fmt"

	"nameservice.dev/nameservice/internal/buildinfo"
)

func main() { fmt.Print(buildinfo.Read()) }
