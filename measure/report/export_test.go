package report

// The warning kinds, for the package's external tests.
const (
	WarnTimeout = kindTimeout
	WarnCC      = kindCC
)
