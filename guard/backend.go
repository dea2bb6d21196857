package guard

// BackendError marks an error the driver returned, as opposed to one the
// guard refused a call with. A server tells a client the code of a
// backend's error but not its text, which may hold what no client should
// learn (a file store's paths, a backend's raw message), while a refusal
// names what was wrong and is told in full. errors.Is and errors.As see
// through it.
type BackendError struct{ Err error }

func (e *BackendError) Error() string { return e.Err.Error() }

// Unwrap returns the driver's error.
func (e *BackendError) Unwrap() error { return e.Err }

// FromBackend marks err as an error of the backend: the guard marks every
// error its driver returns, and callers that reach a driver's capabilities
// beside the guard (a change feed) mark theirs. nil stays nil.
func FromBackend(err error) error {
	if err == nil {
		return nil
	}
	return &BackendError{Err: err}
}
