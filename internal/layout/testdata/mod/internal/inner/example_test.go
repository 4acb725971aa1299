package inner_test

import "example.com/fixture/internal/inner"

func ExampleShown() { inner.Shown() }
