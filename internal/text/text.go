// Package text holds what messages need of strings.
package text

import (
	"fmt"
	"unicode/utf8"
)

// Clip returns s cut to at most n bytes (on a rune boundary) with "..." and
// the full length appended when it was cut, for repeating outside input in
// messages.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s...(%d bytes)", s[:cut], len(s))
}
