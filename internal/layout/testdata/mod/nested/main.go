// Command nested is a module of its own that uses lib.
package main

import "example.com/fixture/lib"

func main() { lib.ByNested() }
