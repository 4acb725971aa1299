// Package files has three files: a and b use each other, c uses a.
package files

func a() { b() }
