package plan

import (
	"fmt"
	"math"
)

// The cap axis: each fraction in Matrix.BulkCapFractions is a cell of its
// own, the saturating (display) channel paced to that fraction of the
// link's rate (results.Cell.BulkCapFraction, "_cap0.5" in the cell's
// directory). This file is the axis: its values' check and
// what a value sets on a run (its flag is benchcmd.CapsFlag).

// capErrors says what is wrong with Matrix.BulkCapFractions: a fraction
// outside [0, 1], a workload with a cap of its own, or a cap between two
// hosts, where there is no emulated rate to take a fraction of.
func (m *Matrix) capErrors() []error {
	var errs []error
	for _, f := range m.BulkCapFractions {
		if !(f >= 0 && f <= 1) {
			errs = append(errs, fmt.Errorf("bulk cap %v is outside [0, 1]: give a fraction of the link rate, such as 0.5 (0 is uncapped)", f))
		}
	}
	if len(m.BulkCapFractions) > 0 && m.Workload.BulkRateCap != 0 {
		errs = append(errs, fmt.Errorf("the workload already caps the display at %d bit/s: give either that or cap fractions, not both", m.Workload.BulkRateCap))
	}
	if m.Remote != "" {
		for _, f := range m.BulkCapFractions {
			if f != 0 {
				errs = append(errs, fmt.Errorf("cap %v is a fraction of the emulated link's rate, and with -remote there is none: give -caps 0", f))
				break
			}
		}
	}
	return errs
}

// capAxis paces the saturating channel to a fraction of the profile's
// rate, 0 leaving it as the workload says (uncapped); nothing when
// Matrix.BulkCapFractions is empty.
func (m *Matrix) capAxis() []Axis {
	if len(m.BulkCapFractions) == 0 {
		return nil
	}
	return []Axis{newAxis(axisCap, "caps", floatTexts(m.BulkCapFractions), func(rc *Run, i int) {
		if f := m.BulkCapFractions[i]; f != 0 {
			rc.Cell.BulkCapFraction = f
			rc.Cell.BulkRateCapBps = bulkCap(rc.Profile.RateMbit, f)
			rc.Workload.BulkRateCap = rc.Cell.BulkRateCapBps
		}
	})}
}

// bulkCap is fraction of a link of rateMbit, in bits per second of payload
// (rounded to the nearest bit/s), the unit of spicelike's BulkRateCap. The
// link's rate counts wire bytes, so a cap of 1 is a little above what the
// link can carry as payload.
func bulkCap(rateMbit, fraction float64) int64 {
	return int64(math.Round(rateMbit * 1e6 * fraction))
}
