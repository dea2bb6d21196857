package guard

// BackendError marks an error the driver returned, as opposed to one a
// rule refused a call with. A server tells a client the code of a
// backend's error but not its text, which may hold what no client should
// learn (a file store's paths, a backend's raw message), while a refusal
// names what was wrong and is told in full. errors.Is and errors.As see
// through it.
type BackendError struct{ Err error }

func (e *BackendError) Error() string { return e.Err.Error() }

// Unwrap returns the driver's error.
func (e *BackendError) Unwrap() error { return e.Err }

// FromBackend marks err as an error of the backend: the NameService marks
// every error its driver returns, and a server marks what reaches it from
// the backend by another way (an event of a change feed, a record a
// listing could not read). nil stays nil.
func FromBackend(err error) error {
	if err == nil {
		return nil
	}
	return &BackendError{Err: err}
}
