package measure

import (
	"context"
	"regexp"
	"strings"

	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// TCPWith returns the tcp arm with its congestion control pinned to cc
// whatever the caller's options say, named "tcp-" + cc ("tcp-reno",
// "tcp-quicreno"), so that several controllers run side by side, as arms,
// in one cell of a matrix. Lookup makes one for any such name, so it need
// not be registered.
func TCPWith(cc string) Arm { return tcpWith{cc} }

type tcpWith struct{ cc string }

func (t tcpWith) Name() string { return "tcp-" + t.cc }

func (t tcpWith) Listen(ctx context.Context, addr string, o transport.Options) (Listener, error) {
	o.CongestionControl = t.cc
	ln, err := TCP.Listen(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	return tcpWithListener{ln, t.Name()}, nil
}

func (t tcpWith) Dial(ctx context.Context, addr string, o transport.Options) (Session, error) {
	o.CongestionControl = t.cc
	s, err := TCP.Dial(ctx, addr, o)
	if err != nil {
		return nil, err
	}
	return tcpWithSession{s, t.Name()}, nil
}

type tcpWithListener struct {
	Listener
	name string
}

func (l tcpWithListener) Accept(ctx context.Context) (Session, error) {
	s, err := l.Listener.Accept(ctx)
	if err != nil {
		return nil, err
	}
	return tcpWithSession{s, l.name}, nil
}

// tcpWithSession reports the arm's own name in its State.
type tcpWithSession struct {
	Session
	name string
}

func (s tcpWithSession) State() transport.State {
	st := s.Session.State()
	st.Arm = transport.Arm(s.name)
	return st
}

func (t tcpWith) Prepare(o transport.Options, _ spicelike.Config) (server, client transport.Options, err error) {
	o.CongestionControl = t.cc
	return o, o, nil
}

// ccName is a kernel congestion control's name that an arm's name and a
// record can carry (no underscores: results refuse them in arm names).
var ccName = regexp.MustCompile(`^[a-z][a-z0-9]{0,14}$`)

// PinnedCC returns the congestion control an arm named name pins
// (TCPWith's), and false for every other arm, an importer's registered
// arm named tcp-something among them.
func PinnedCC(name string) (string, bool) {
	cc, ok := strings.CutPrefix(name, "tcp-")
	if !ok || name == TCPMux.Name() || !ccName.MatchString(cc) {
		return "", false
	}
	registry.Lock()
	defer registry.Unlock()
	for _, a := range registry.arms {
		if a.Name() == name {
			_, ours := a.(tcpWith)
			return cc, ours
		}
	}
	return cc, true
}
