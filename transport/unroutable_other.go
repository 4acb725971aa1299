//go:build !linux

package transport

func isUnroutable(error) bool { return false }
