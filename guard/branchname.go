package guard

import (
	"fmt"
	"strings"

	"nameservice.dev/nameservice/internal/text"
	"nameservice.dev/nameservice/model"
)

// MaxBranchNameBytes is the longest branch name CreateBranch accepts, as
// Fluree's validate_branch_name.
const MaxBranchNameBytes = 128

// maxEchoed is how much of a refused name an error repeats.
const maxEchoed = 80

// CheckBranchName returns an error wrapping model.ErrInvalidID when branch may
// not name a new branch. Besides the rules of ParseID (no ':', NUL or ".."
// segment), Fluree's rule refuses '@' (its time-travel suffix) and names
// over MaxBranchNameBytes. Existing records with such branches stay
// readable; only new branches are refused.
func CheckBranchName(branch string) error {
	switch {
	case strings.Contains(branch, "@"):
		return fmt.Errorf("%w: branch %q contains '@', reserved for time travel (name@t:42)", model.ErrInvalidID, text.Clip(branch, maxEchoed))
	case len(branch) > MaxBranchNameBytes:
		return fmt.Errorf("%w: branch %q is longer than %d bytes (%d)", model.ErrInvalidID, text.Clip(branch, maxEchoed), MaxBranchNameBytes, len(branch))
	}
	if _, err := model.ParseID("x:" + branch); err != nil {
		return fmt.Errorf("branch %q: %w", text.Clip(branch, maxEchoed), err)
	}
	return nil
}

// CheckNewID returns an error wrapping model.ErrInvalidID when no new
// record may take id: its branch breaks CheckBranchName, or its name holds
// '@', which Fluree reads as the start of a time-travel suffix in any ID
// (so it could not address the record). Existing records with such IDs
// stay readable and writable.
func CheckNewID(id model.ID) error {
	if strings.Contains(id.Name, "@") {
		return fmt.Errorf("%w: name %q contains '@', reserved for time travel (name@t:42)", model.ErrInvalidID, text.Clip(id.Name, maxEchoed))
	}
	return CheckBranchName(id.Branch)
}
