package driverutil

// Positive returns v when it is above zero, else def. It is the one rule
// for options whose zero value means "the default": zero or negative takes
// the default, so that a negative duration or count never reaches a
// ticker, a timeout or a loop bound.
func Positive[T ~int | ~int64 | ~float64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
