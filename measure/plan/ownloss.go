package plan

import "github.com/shakenfist/quicbench/shapedlink"

// OwnLoss reports whether p has a loss model of its own (a loss option:
// Gilbert-Elliott, 4-state or a direction's own loss), which runs as
// given rather than at each loss level, and the loss a cell records for
// it: the mean over its directions of each one's long-run loss, in
// percent.
func OwnLoss(p shapedlink.Profile) (bool, float64) {
	if !p.Down.Has("loss") && !p.Up.Has("loss") {
		return false, 0
	}
	return true, ownLoss(p)
}
