#!/usr/bin/env bash
# vmtest/break.sh TREE NAME: apply one deliberate breakage of shapedlink's
# netem encoding to a scratch copy of the source tree at TREE, so that
# `VMTEST_BREAK=NAME bash vmtest/run.sh` can show the in-VM tests catch it.
# Never run it on the checkout itself (run.sh copies the tree first).
#
# Each breakage replaces one exact piece of
# shapedlink/internal/netemnl/netem_linux.go (or chain_linux.go there, or
# shapedlink's shaper_netem_linux.go or netemschedule_linux.go); if
# that text is no longer there (shapedlink changed), this script fails
# loudly instead of silently testing an unbroken tree: update the table.
#
#   loss   loss percentage divided by 10 (1% configured, 0.1% applied)
#   delay  twice each direction's one-way delay (the whole RTT, for a
#          profile without options)
#   rate   the rate in bits per second passed where bytes per second go
#   limit  twice the configured packet limit
#   noloss a loss term (0.5%) added to every profile, even loss-free ones
#   swap   the server-to-client direction applied at both ends
#   ge     Gilbert-Elliott's 1-h written as h (netem's h is its complement)
#   fourstate the 4-state model's p14 and p23 written in tc's argument
#          order, not struct tc_netem_gimodel's (p23 where p14 goes)
#   jitter half the jitter applied
#   dist   the distribution table's entries halved (a normal of half the
#          spread)
#   reorder the reorder probability halved
#   dup    the duplication probability halved
#   corr   the delay correlation halved
#   corrupt the corruption probability halved
#   qrate  netem keeps the rate under a queue discipline (the queue then
#          builds in netem, where the discipline cannot manage it)
#   qecn   the discipline's ECN setting inverted
#   seed   another attribute (netem always reports TCA_NETEM_CORR) read
#          back as the PRNG seed, so 6.1's netem looks seedable
#   sched  a schedule's rate change not applied to the qdisc
#   schedadd  a schedule's change made by deleting and re-adding netem
#          (which drops its queue) instead of changing it in place
#
# It prints the -test.run pattern that covers the breakage on stdout.
set -euo pipefail
tree=$1
name=$2
file=$tree/shapedlink/internal/netemnl/netem_linux.go
[ -f "$file" ] || { echo "break.sh: $file not found" >&2; exit 1; }
[ "$(cd "$tree" && pwd)" != "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)" ] ||
	{ echo "break.sh: refusing to break the checkout itself; pass a scratch copy" >&2; exit 1; }

case $name in
loss)
	old='a.Loss = float32(d.LossPct)'
	new='a.Loss = float32(d.LossPct / 10)'
	tests='TestNetemReadBack|TestNetemLoss' ;;
delay)
	old='options.AddRtAttr(tcaNetemLatency64, nl.Uint64Attr(uint64(d.Delay)))'
	new='options.AddRtAttr(tcaNetemLatency64, nl.Uint64Attr(uint64(2*d.Delay)))'
	tests='TestNetemReadBack|TestNetemIdleRTT' ;;
rate)
	old='Rate64:  uint64(math.Round(d.RateMbit * 1e6 / 8))'
	new='Rate64:  uint64(math.Round(d.RateMbit * 1e6))'
	tests='TestNetemReadBack|TestNetemRate' ;;
limit)
	old='Limit:   uint32(d.Limit),'
	new='Limit:   uint32(2 * d.Limit),'
	tests='TestNetemReadBack|TestNetemLimit' ;;
noloss)
	old='if d.LossPct > 0 {
		a.Loss = float32(d.LossPct)'
	new='if d.LossPct >= 0 {
		a.Loss = float32(d.LossPct + 0.5)'
	tests='TestNetemReadBack' ;;
jitter)
	old='options.AddRtAttr(tcaNetemJitter64, nl.Uint64Attr(uint64(d.Jitter)))'
	new='options.AddRtAttr(tcaNetemJitter64, nl.Uint64Attr(uint64(d.Jitter/2)))'
	tests='TestNetemJitter' ;;
ge)
	file=$tree/shapedlink/internal/netemnl/netem_linux.go
	old='H: math.MaxUint32 - netemProb(g.OneMinusH)'
	new='H: netemProb(g.OneMinusH)'
	tests='TestNetemGilbertElliott' ;;
fourstate)
	old='for i, v := range []uint32{m.P13, m.P31, m.P32, m.P14, m.P23} {'
	new='for i, v := range []uint32{m.P13, m.P31, m.P32, m.P23, m.P14} {'
	tests='TestFourStateBothBackends' ;;
dist)
	file=$tree/shapedlink/internal/netemnl/netem_linux.go
	old='binary.NativeEndian.PutUint16(b[2*i:], uint16(v))'
	new='binary.NativeEndian.PutUint16(b[2*i:], uint16(v/2))'
	tests='TestNetemJitterNormal' ;;
reorder)
	old='a.ReorderProb, a.ReorderCorr, a.Gap = float32(d.ReorderPct),'
	new='a.ReorderProb, a.ReorderCorr, a.Gap = float32(d.ReorderPct/2),'
	tests='TestReorderBothBackends|TestNetemCorrelationsReadBack' ;;
dup)
	old='a.Duplicate, a.DuplicateCorr = float32(d.DupPct),'
	new='a.Duplicate, a.DuplicateCorr = float32(d.DupPct/2),'
	tests='TestDuplicateBothBackends|TestNetemCorrelationsReadBack' ;;
corr)
	old='delayCorr = netlink.Percentage2u32(float32(d.JitterCorr))'
	new='delayCorr = netlink.Percentage2u32(float32(d.JitterCorr / 2))'
	tests='TestNetemCorrelationsReadBack' ;;
corrupt)
	old='a.CorruptProb, a.CorruptCorr = float32(d.CorruptPct),'
	new='a.CorruptProb, a.CorruptCorr = float32(d.CorruptPct/2),'
	tests='TestCorruptBothBackends' ;;
qrate)
	old='na.Rate64, na.Limit = 0, uint32(d.HeldLimit())'
	new='na.Limit = uint32(d.HeldLimit())'
	tests='TestNetemQueueDiscipline' ;;
qecn)
	file=$tree/shapedlink/internal/netemnl/chain_linux.go
	old='opts.AddRtAttr(tcaCodelECN, nl.Uint32Attr(ecn))'
	new='opts.AddRtAttr(tcaCodelECN, nl.Uint32Attr(1-ecn))'
	tests='TestNetemQueueDisciplineReadBack' ;;
seed)
	file=$tree/shapedlink/internal/netemnl/netem_linux.go
	old='tcaNetemPRNGSeed = 14'
	new='tcaNetemPRNGSeed = 1'
	tests='TestNetemQueueDisciplineReadBack' ;;
sched)
	file=$tree/shapedlink/netemschedule_linux.go
	old='tl.state.RateMbit = c.Value'
	new='tl.state.RateMbit += 0'
	tests='TestNetemScheduleInPlace' ;;
schedadd)
	file=$tree/shapedlink/netemschedule_linux.go
	old='return changeQdiscRaw(tl.ns, tl.ifindex, netlink.MakeHandle(1, 0), netlink.HANDLE_ROOT, "netem", opts)'
	new='h, err := tl.ns.handle()
			if err != nil {
				return err
			}
			defer h.Close()
			if err := h.QdiscDel(q); err != nil {
				return err
			}
			return addQdiscRaw(tl.ns, tl.ifindex, netlink.MakeHandle(1, 0), netlink.HANDLE_ROOT, "netem", opts)'
	tests='TestNetemScheduleInPlace' ;;
swap)
	file=$tree/shapedlink/shaper_netem_linux.go
	old='ns, dev, d := s.ends.ns[end], s.ends.dev[end], s.dirs[end.dir()]'
	new='ns, dev, d := s.ends.ns[end], s.ends.dev[end], s.dirs[Down]'
	tests='TestNetemAsymmetric' ;;
*)
	echo "break.sh: unknown breakage '$name'; one of: loss delay rate limit noloss swap ge fourstate jitter dist reorder dup corr corrupt qrate qecn seed sched schedadd" >&2
	exit 1 ;;
esac

OLD=$old NEW=$new perl -0pi -e 's/\Q$ENV{OLD}\E/$ENV{NEW}/ or die "break.sh: the text to break is not in '"$file"' (shapedlink changed?): $ENV{OLD}\n"' "$file"
echo "break.sh: applied '$name' to $file:" >&2
echo "  - $old" >&2
echo "  + $new" >&2
echo "$tests"
