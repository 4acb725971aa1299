package lib

// short is documented by a block of fourteen lines, one short of long.
//
// 3
// 4
// 5
// 6
// 7
// 8
// 9
// 10
// 11
// 12
// 13
// 14
func short() {}

// long is documented by a block of fifteen lines.
//
// 3
// 4
// 5
// 6
// 7
// 8
// 9
// 10
// 11
// 12
// 13
// 14
// 15
func long() { short() }
