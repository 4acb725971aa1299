//go:build !linux

package shapedlink

import (
	"context"
	"errors"
	"testing"
)

// Off Linux every backend with namespaces fails with
// errors.ErrUnsupported, and says the in-process one works.
func TestUnsupported(t *testing.T) {
	ctx := context.Background()
	p, err := ParseProfile("80:10")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []Backend{BackendAuto, BackendNetem, BackendEmulator, BackendNone} {
		l, err := New(ctx, p, Options{Backend: b})
		if !errors.Is(err, errors.ErrUnsupported) || l != nil {
			t.Fatalf("New(%q) = %v, %v; want nil and an error wrapping errors.ErrUnsupported", b, l, err)
		}
	}
	if err := Reexec(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Reexec = %v, want errors.ErrUnsupported", err)
	}
	if _, err := NewQdiscSampler(nil, "lo"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("NewQdiscSampler = %v, want errors.ErrUnsupported", err)
	}
}
