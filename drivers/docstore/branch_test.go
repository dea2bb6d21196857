package docstore

import (
	"testing"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/testing/resendtest"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// TestBranchResend: a resend of a branch create or drop writes nothing and
// is done only when the files show the write (resendtest).
func TestBranchResend(t *testing.T) {
	stores(t, false, func(t *testing.T, open func() *Driver) {
		resendtest.Branches(t, nameservice.New(open()), nameservice.New(open()), "resend"+testenv.RandomHex(3), resendtest.Memory{})
	})
}
