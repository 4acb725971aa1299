package emulator

import "github.com/shakenfist/quicbench/shapedlink/internal/linkspec"

// Direction is linkspec's, by a shorter name for the tests.
type Direction = linkspec.Direction
