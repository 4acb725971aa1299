package render

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
)

// PlotFormats are the formats every plot is written in.
var plotFormats = []string{"png", "svg"}

// PlotIndex is the file Plots writes beside the plots: a markdown list of
// every plot with its caption.
const PlotIndex = "plots.md"

// Plots builds a report from runs and writes its plots under dir (created
// if missing). It returns the files written.
func Plots(dir string, runs []results.Run, opts report.Options) ([]string, error) {
	rep, err := report.Build(runs, opts)
	if err != nil {
		return nil, err
	}
	return WritePlots(dir, rep)
}

// plotStem matches the names WritePlots writes under: one path element,
// letters, digits, '.', '_' and '-', not starting with a dot.
var plotStem = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// maxCDFPoints bounds the points drawn per CDF line; beyond it the line is
// thinned to evenly spaced ranks (the first and last always kept), which
// no one can see at plot resolution and keeps the SVGs small.
const maxCDFPoints = 2000

// WritePlots writes, for every cell, three plots in PNG and SVG:
//
//   - <cell>_rtt-cdf: the interactive round trip's empirical CDF, each arm's
//     post-warm-up samples pooled over its measured repeats;
//   - <cell>_p95-by-repeat: each repeat's p95 per arm, with the median, so
//     the spread the verdict turns on is visible;
//   - <cell>_throughput: each repeat's saturating-channel Mbit/s per arm,
//     with the median;
//
// and, for a cell whose link had a schedule, <cell>_<arm>_timeline: one
// run's interactive round trips against time with the scheduled changes
// marked; where <cell> is results.Cell.Dir(), and an index (PlotIndex)
// with a caption for each. It returns the files written.
func WritePlots(dir string, r *report.Report) ([]string, error) {
	if dir == "" {
		return nil, errors.New("report: no plot directory given")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: creating plot directory: %w", err)
	}
	var files []string
	var index bytes.Buffer
	fmt.Fprintf(&index, "# quicbench plots\n\n")
	type maker func() (*plot.Plot, string, string, error)
	for i := range r.Cells {
		c := &r.Cells[i]
		fmt.Fprintf(&index, "## %s\n\n", c.Label())
		var makers []maker
		for _, mk := range []func(*report.CellReport) (*plot.Plot, string, string, error){cdfPlot, p95Plot, throughputPlot} {
			makers = append(makers, func() (*plot.Plot, string, string, error) { return mk(c) })
		}
		for k := range c.Arms {
			makers = append(makers, func() (*plot.Plot, string, string, error) { return timelinePlot(c, &c.Arms[k]) })
		}
		for _, mk := range makers {
			p, stem, caption, err := mk()
			if err != nil {
				return files, fmt.Errorf("report: plotting %s: %w", c.Dir, err)
			}
			if p == nil {
				continue
			}
			if !plotStem.MatchString(stem) {
				// Names come from a record's fields; Validate checks those
				// when the record is read, and this keeps every write in
				// dir whoever built the report.
				return files, fmt.Errorf("report: the plot name %q made from cell %s is not a plain file name; a record's cell or arm holds a path (results.Run.Validate refuses such records)", stem, c.Dir)
			}
			for _, ext := range plotFormats {
				name := filepath.Join(dir, stem+"."+ext)
				if err := savePlot(p, name, ext); err != nil {
					return files, err
				}
				files = append(files, name)
			}
			fmt.Fprintf(&index, "![%s](%s.svg)\n\n%s\n\n", caption, stem, caption)
		}
	}
	name := filepath.Join(dir, PlotIndex)
	f, err := createPlotFile(name)
	if err == nil {
		_, err = f.Write(index.Bytes())
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		return files, fmt.Errorf("report: writing plot index: %w", err)
	}
	return append(files, name), nil
}

func savePlot(p *plot.Plot, name, ext string) error {
	wt, err := p.WriterTo(16*vg.Centimeter, 10*vg.Centimeter, ext)
	if err != nil {
		return fmt.Errorf("report: rendering %s: %w", name, err)
	}
	f, err := createPlotFile(name)
	if err != nil {
		return fmt.Errorf("report: writing plot: %w", err)
	}
	if _, err := wt.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("report: writing %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: writing %s: %w", name, err)
	}
	return nil
}

// createPlotFile creates name afresh, never through what is there: a
// regular file is replaced, and anything else (a symbolic link planted in
// the plot directory, a directory) is refused, so a write cannot leave
// the directory. O_EXCL makes the create fail should something appear
// at name between the two.
func createPlotFile(name string) (*os.File, error) {
	switch fi, err := os.Lstat(name); {
	case err == nil && !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file (%v): remove it, plots are not written through it", name, fi.Mode().Type())
	case err == nil:
		if err := os.Remove(name); err != nil {
			return nil, err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

// armColor gives each built-in arm its own colour in every plot, and
// every other arm grey.
func armColor(arm string) color.Color {
	switch arm {
	case report.ArmTCP:
		return color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff} // blue
	case report.ArmQUIC:
		return color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff} // red
	case report.ArmQUICPerChannel:
		return color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff} // green
	case report.ArmQUICPriority:
		return color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff} // purple
	case report.ArmTCPMux:
		return color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff} // orange
	}
	return color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff} // grey
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

func cdfPlot(c *report.CellReport) (*plot.Plot, string, string, error) {
	p := newPlot(c.Label()+": interactive round trip", "round trip (ms)", "fraction of round trips at or below")
	p.Legend.Top = false
	p.Legend.Left = false
	p.Y.Min, p.Y.Max = 0, 1
	var counts []string
	drawn := 0
	for _, a := range c.Arms {
		if len(a.Pooled()) == 0 {
			continue
		}
		xs := slices.Clone(a.Pooled())
		slices.Sort(xs)
		n := len(xs)
		pts := plotter.XYs{{X: xs[0], Y: 0}}
		step := max(1, n/maxCDFPoints)
		for i := 0; i < n; i += step {
			pts = append(pts, plotter.XY{X: xs[i], Y: float64(i+1) / float64(n)})
		}
		if (n-1)%step != 0 {
			pts = append(pts, plotter.XY{X: xs[n-1], Y: 1})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, "", "", err
		}
		l.StepStyle = plotter.PostStep
		l.Color = armColor(a.Arm)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (%d samples, %d repeats)", a.Arm, n, a.Measured), l)
		counts = append(counts, fmt.Sprintf("%s %d from %d repeats", a.Arm, n, a.Measured))
		drawn++
	}
	if drawn == 0 {
		return nil, "", "", nil
	}
	caption := fmt.Sprintf(captionCDF,
		c.Label(), strings.Join(counts, ", "))
	return p, c.Dir + "_rtt-cdf", caption, nil
}

// dots draws per-repeat values per arm, side by side along a nominal X axis,
// with a short bar at each arm's median.
func dots(p *plot.Plot, c *report.CellReport, values func(*report.ArmReport) []float64, median func(*report.ArmReport) float64) (int, error) {
	var names []string
	drawn := 0
	for i := range c.Arms {
		a := &c.Arms[i]
		names = append(names, a.Arm)
		vs := values(a)
		if len(vs) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(vs))
		for k, v := range vs {
			off := 0.0
			if len(vs) > 1 {
				off = 0.3 * (float64(k)/float64(len(vs)-1) - 0.5)
			}
			pts[k] = plotter.XY{X: float64(i) + off, Y: v}
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return 0, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: armColor(a.Arm), Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
		p.Add(s)
		m, err := plotter.NewLine(plotter.XYs{{X: float64(i) - 0.25, Y: median(a)}, {X: float64(i) + 0.25, Y: median(a)}})
		if err != nil {
			return 0, err
		}
		m.Color = armColor(a.Arm)
		m.Width = vg.Points(2)
		p.Add(m)
		drawn++
	}
	if len(names) > 0 {
		p.NominalX(names...)
		p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	}
	return drawn, nil
}

func p95Plot(c *report.CellReport) (*plot.Plot, string, string, error) {
	p := newPlot(c.Label()+": p95 of each repeat", "", "repeat p95 round trip (ms)")
	drawn, err := dots(p, c, func(a *report.ArmReport) []float64 { return a.RepeatP95Ms }, func(a *report.ArmReport) float64 { return a.P95Ms })
	if err != nil || drawn == 0 {
		return nil, "", "", err
	}
	// Pad the axis so no dot sits on its edge; zero spread everywhere
	// would otherwise leave it with no height.
	pad := max(0.5, 0.05*(p.Y.Max-p.Y.Min))
	p.Y.Min, p.Y.Max = p.Y.Min-pad, p.Y.Max+pad
	var spreads []string
	for _, a := range c.Arms {
		if a.Measured > 0 {
			spreads = append(spreads, fmt.Sprintf("%s %s ms", a.Arm, f1(a.SpreadMs)))
		}
	}
	caption := fmt.Sprintf(captionP95,
		c.Label(), strings.Join(spreads, ", "))
	return p, c.Dir + "_p95-by-repeat", caption, nil
}

func throughputPlot(c *report.CellReport) (*plot.Plot, string, string, error) {
	p := newPlot(c.Label()+": saturating channel throughput", "", "goodput after warm-up (Mbit/s)")
	drawn, err := dots(p, c, func(a *report.ArmReport) []float64 { return a.RepeatThroughputMbit }, func(a *report.ArmReport) float64 { return a.ThroughputMbit.Median })
	if err != nil || drawn == 0 {
		return nil, "", "", err
	}
	p.Y.Min = 0
	if c.Cell.RateMbit > 0 {
		p.Y.Max = max(p.Y.Max, c.Cell.RateMbit)
	}
	caption := fmt.Sprintf(captionThroughput,
		c.Label(), fmt.Sprint(c.Cell.RateMbit))
	return p, c.Dir + "_throughput", caption, nil
}
