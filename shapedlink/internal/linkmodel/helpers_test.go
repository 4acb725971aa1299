package linkmodel

import "github.com/shakenfist/quicbench/shapedlink/internal/linkspec"

// Shorter names for the tests.
type (
	Direction = linkspec.Direction
	GE        = linkspec.GE
	Change    = linkspec.Change
)
