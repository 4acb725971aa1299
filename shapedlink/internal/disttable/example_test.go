package disttable_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/shapedlink/internal/disttable"
)

// The normal table: its lowest entries, the two around the median, the
// highest, and the mean and standard deviation a netem delay drawn from it
// has, in units of sigma.
func Example() {
	t, err := disttable.Table("normal")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(t), t[:3], t[disttable.Size/2-1:disttable.Size/2+1], t[disttable.Size-1])
	q, _ := disttable.Quantile("normal", 0.975)
	fmt.Printf("Q(0.975) = %.5f\n", q)
	mean, sd := disttable.Moments(t)
	fmt.Printf("mean %.4f sd %.4f\n", mean, sd)
	for _, name := range disttable.Names()[1:] {
		t, _ := disttable.Table(name)
		mean, sd := disttable.Moments(t)
		fmt.Printf("%s: median %d, top %d, mean %.4f sd %.4f\n", name, t[disttable.Size/2], t[disttable.Size-1], mean, sd)
	}
	_, err = disttable.Table("uniform")
	fmt.Println(err)
	// Output:
	// 4096 [-30051 -27666 -26493] [-3 3] 30051
	// Q(0.975) = 1.95996
	// mean 0.0000 sd 0.9998
	// pareto: median -2270, top 32767, mean -0.0234 sd 0.7372
	// paretonormal: median -97, top 32767, mean -0.0014 sd 0.9887
	// disttable: unknown distribution "uniform"; the distributions are normal, pareto and paretonormal
}
