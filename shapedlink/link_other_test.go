//go:build !linux

package shapedlink

import (
	"context"
	"errors"
	"testing"
)

// Off Linux every constructor fails with errors.ErrUnsupported and the
// methods of nil values answer without panicking.
func TestUnsupported(t *testing.T) {
	ctx := context.Background()
	p, err := ParseProfile("80:10")
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(ctx, p, Options{})
	if !errors.Is(err, errors.ErrUnsupported) || l != nil {
		t.Fatalf("New = %v, %v; want nil and an error wrapping errors.ErrUnsupported", l, err)
	}
	if err := Reexec(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Reexec = %v, want errors.ErrUnsupported", err)
	}
	if _, err := NewQdiscSampler(nil, "lo"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("NewQdiscSampler = %v, want errors.ErrUnsupported", err)
	}
	if err := l.Err(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Link.Err = %v, want errors.ErrUnsupported", err)
	}
	if _, err := l.Server().DialContext(ctx, "tcp", "198.18.0.1:80"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Namespace.DialContext = %v, want errors.ErrUnsupported", err)
	}
	if err := l.Client().Do(func() error { t.Error("Do ran fn"); return nil }); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Namespace.Do = %v, want errors.ErrUnsupported", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("Link.Close = %v, want nil", err)
	}
}
