package results

import "testing"

// TestTitleOptions: a cell's title names the profile's options, so cells
// that differ only in them are told apart, and a short-form profile's
// title is what it always was; cells of one profile sort together.
func TestTitleOptions(t *testing.T) {
	for profile, want := range map[string]string{
		"80:10":                     "80 ms / 10 Mbit",
		"80:10,qdisc=fq_codel":      "80 ms / 10 Mbit, qdisc=fq_codel",
		"80:10@200":                 "80 ms / 10 Mbit, limit 200",
		"80:10@200,up.rate=5,dup=1": "80 ms / 10 Mbit, limit 200, up.rate=5,dup=1",
		"80:10,loss=ge:0.1/10":      "80 ms / 10 Mbit, loss=ge:0.1/10",
	} {
		c := Cell{Profile: profile, RTTms: 80, RateMbit: 10}
		if got := c.Title(); got != want {
			t.Errorf("Title of %q = %q, want %q", profile, got, want)
		}
	}
	plain := Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, CC: "reno", LossPct: 1}
	fq := Cell{Profile: "80:10,qdisc=fq_codel", RTTms: 80, RateMbit: 10, CC: "reno", LossPct: 0}
	if !Less(plain, fq) || Less(fq, plain) {
		t.Error("a profile's cells do not sort before the next profile's, whatever their loss")
	}
}
