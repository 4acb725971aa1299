package lib_test

import (
	"testing"

	"example.com/fixture/lib"
)

func TestUnused(t *testing.T) { lib.Unused(); _ = lib.Limit }
