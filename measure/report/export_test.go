package report

// The warning kinds and the fairness index, for the package's external tests.
const (
	WarnTimeout = kindTimeout
	WarnCC      = kindCC
)

var JainIndex = jainIndex
