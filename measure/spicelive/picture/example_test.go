package picture_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/spicelive/picture"
)

// A video workload offers 25 frames a second: a client that saw 12.5 of
// them had a good picture, one that saw 12 did not.
func ExampleGoodPicture() {
	fmt.Println(picture.GoodPicture(12.5, 25), picture.GoodPicture(12, 25))
	// Output:
	// true false
}
