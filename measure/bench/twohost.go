package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/twohost"
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
	if spec.Sessions < 0 || spec.Sessions > plan.MaxSessions {
		return fmt.Errorf("sessions %d is outside 0..%d", spec.Sessions, plan.MaxSessions)
	}
	if name := spec.Transport.CongestionControl; !spec.Arm.QUIC() && name != "" {
		if err := transport.CheckCongestionControl(name); err != nil {
			return fmt.Errorf("on the server's host: %w", err)
		}
	}
	return nil
}

// ListenTwoHost listens as the two-host daemon of the matrix's runs: cfg
// with the matrix's role variables, its spec check and its longest run
// (twohost.Listen).
func ListenTwoHost(ctx context.Context, cfg twohost.DaemonConfig) (*twohost.Daemon, error) {
	cfg.Env, cfg.Check, cfg.MaxWithin = benchRoles, checkSpec, plan.MaxDuration+10*time.Minute
	return twohost.Listen(ctx, cfg)
}
