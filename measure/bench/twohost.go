package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/twohost"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// checkSpec says why the two-host daemon will not run the server a driver
// asks for: an arm it does not know, a workload that does not validate, a
// session count out of range, or a congestion control its host lacks.
func checkSpec(raw json.RawMessage) error {
	var spec roleSpec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return err
	}
	if _, err := measure.Lookup(string(spec.Arm)); err != nil {
		return err
	}
	if err := spec.Workload.Validate(); err != nil {
		return err
	}
	if spec.Sessions < 0 || spec.Sessions > maxSessions {
		return fmt.Errorf("sessions %d is outside 0..%d", spec.Sessions, maxSessions)
	}
	if name := spec.Transport.CongestionControl; !spec.Arm.QUIC() && name != "" {
		if err := transport.CheckCongestionControl(name); err != nil {
			return fmt.Errorf("on the server's host: %w", err)
		}
	}
	return nil
}

// validateRemote checks a two-host matrix: the daemon's address and the
// secret, and nothing that only an emulated link can give.
func (m *Matrix) validateRemote() []error {
	errs := m.Remote.Validate()
	if len(m.Profiles) > 0 || len(m.Losses) > 0 {
		errs = append(errs, errors.New("with -remote the path is used as found: link profiles and loss levels do not apply"))
	}
	if m.Link.Backend != "" || m.Link.Mode != "" || m.Link.Seed != 0 || m.Link.Offload != shapedlink.OffloadWire ||
		m.Link.EmulatorKeepAwake || m.Link.EmulatorDepartureWindow != 0 {
		errs = append(errs, errors.New("with -remote no link is built: a backend, privilege mode, emulator seed, offload mode or emulator setting does not apply"))
	}
	return errs
}

// remoteAddr is the daemon's address for matrix.json, or "".
func (m *Matrix) remoteAddr() string {
	if m.Remote == nil {
		return ""
	}
	return m.Remote.Addr
}

// ListenTwoHost listens as the two-host daemon of the matrix's runs: cfg
// with the matrix's role variables, its spec check and its longest run
// (twohost.Listen).
func ListenTwoHost(ctx context.Context, cfg twohost.DaemonConfig) (*twohost.Daemon, error) {
	cfg.Env, cfg.Check, cfg.MaxWithin = benchRoles, checkSpec, MaxDuration+10*time.Minute
	return twohost.Listen(ctx, cfg)
}
