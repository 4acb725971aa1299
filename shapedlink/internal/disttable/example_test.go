package disttable_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/shapedlink/internal/disttable"
)

// The normal table: its lowest entries, the two around the median and the
// highest, each a number of sigmas times Scale; then the other tables'
// medians and tops (clamped to the int16 range), and an unknown name.
func Example() {
	t, err := disttable.Table("normal")
	if err != nil {
		fmt.Println(err)
		return
	}
	n := len(t)
	fmt.Println(n, t[:3], t[n/2-1:n/2+1], t[n-1])
	fmt.Printf("top %.3f sigma\n", float64(t[n-1])/disttable.Scale)
	for _, name := range disttable.Names()[1:] {
		t, _ := disttable.Table(name)
		fmt.Printf("%s: median %d, top %d\n", name, t[n/2], t[n-1])
	}
	_, err = disttable.Table("uniform")
	fmt.Println(err)
	// Output:
	// 4096 [-30051 -27666 -26493] [-3 3] 30051
	// top 3.668 sigma
	// pareto: median -2270, top 32767
	// paretonormal: median -97, top 32767
	// disttable: unknown distribution "uniform"; the distributions are normal, pareto and paretonormal
}
