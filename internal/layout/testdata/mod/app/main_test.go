package main

import (
	"testing"

	"example.com/fixture/helper"
	"example.com/fixture/lib"
)

func TestOther(t *testing.T) { lib.OnlyOtherTests(); helper.Assist() }
