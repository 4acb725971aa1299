package plan

import (
	"errors"

	"github.com/shakenfist/quicbench/shapedlink"
)

// validateRemote checks a two-host matrix: nothing that only an emulated
// link can give. The daemon's address and the secret are the runner's to
// check (bench.Run).
func (m *Matrix) validateRemote() []error {
	var errs []error
	if len(m.Profiles) > 0 || len(m.Losses) > 0 {
		errs = append(errs, errors.New("with -remote the path is used as found: link profiles and loss levels do not apply"))
	}
	if m.Link.Backend != "" || m.Link.Mode != "" || m.Link.Seed != 0 || m.Link.Offload != shapedlink.OffloadWire ||
		m.Link.EmulatorKeepAwake || m.Link.EmulatorDepartureWindow != 0 {
		errs = append(errs, errors.New("with -remote no link is built: a backend, privilege mode, emulator seed, offload mode or emulator setting does not apply"))
	}
	return errs
}
