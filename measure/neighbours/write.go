package neighbours

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// CSVFile is the name of the file WriteCSV's table goes to beside a
// summary.
const CSVFile = "neighbours.csv"

// csvHeader is WriteCSV's first row.
var csvHeader = []string{"cell", "arm", "repeat", "failed", "unmeasured", "window_from_utc", "window_to_utc",
	"session_mbit", "session_retransmit_pct", "cross_mbit", "cross_retransmit_pct", "jain",
	"flow_dir", "flow_kind", "flow_index", "flow_cc", "flow_mbit", "flow_retransmit_pct", "flow_retransmits", "flow_sent_packets",
	"reference", "arm_cross_ratio"}

// WriteMarkdown writes the table as markdown, under a paragraph that says
// what its columns are; no heading.
func (t *Table) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Cross flows beside the session, per cell and arm: medians over the measured runs (n) of the session's display goodput, " +
		"the cross flows' goodput in the display's direction over each run's measured window (after the warm-up), " +
		"that against the same cell's tcp arm on reno (the reference), Jain's fairness index over the session's display and each cross flow, " +
		"and the retransmission rates, the session's (server side, retransmitted over sent packets) and the cross flows' (as their senders counted).\n\n")
	b.WriteString("| cell | arm | n | session Mbit/s | cross Mbit/s | cross vs reference | reference | Jain | session retrans % | cross retrans % |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, a := range t.Arms {
		n := strconv.Itoa(a.Measured)
		if a.Measured != a.Runs {
			n = fmt.Sprintf("%d of %d", a.Measured, a.Runs)
		}
		cells := []string{"-", "-", "-", "-", "-"}
		ratio, ref := "-", "no reference"
		if a.Measured > 0 {
			cells = []string{f2(a.SessionMbit), f2(a.CrossMbit), f3(a.Jain), "-", f2(a.CrossRetransmitPct)}
			if a.SessionRetransmitRuns > 0 {
				cells[3] = f2(a.SessionRetransmitPct)
				if a.SessionRetransmitRuns != a.Measured {
					cells[3] += fmt.Sprintf(" (%d runs)", a.SessionRetransmitRuns)
				}
			}
			if a.Reference != "" {
				ref = "tcp on reno, " + a.Reference
				if a.Reference == a.Cell.Dir() {
					ref = "tcp on reno, this cell"
				}
				if a.CrossRatio > 0 {
					ratio = f2(a.CrossRatio)
				}
			}
		}
		row := []string{a.Cell.Dir(), a.Arm, n, cells[0], cells[1], ratio, ref, cells[2], cells[3], cells[4]}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	var notes []string
	for _, a := range t.Arms {
		for _, f := range a.Figures {
			if f.Unmeasured != "" {
				notes = append(notes, fmt.Sprintf("%s/%s/r%d not measured: %s", a.Cell.Dir(), a.Arm, f.Repeat, f.Unmeasured))
			}
		}
	}
	if t.Skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d runs without cross flows left out", t.Skipped))
	}
	if len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCSV writes a row per run and cross flow (one row, flow columns
// empty, for a run not measured), with the arm's reference and ratio.
func (t *Table) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, a := range t.Arms {
		ratio := ""
		if a.Reference != "" && a.CrossRatio > 0 {
			ratio = strconv.FormatFloat(a.CrossRatio, 'f', 4, 64)
		}
		for _, f := range a.Figures {
			base := []string{a.Cell.Dir(), a.Arm, strconv.Itoa(f.Repeat), f.Failed, f.Unmeasured, "", "", "", "", "", "", ""}
			if !f.From.IsZero() {
				base[5], base[6] = f.From.UTC().Format(timeCSV), f.To.UTC().Format(timeCSV)
			}
			if f.SessionRetransmitPct >= 0 {
				base[8] = f4(f.SessionRetransmitPct)
			}
			if f.Failed == "" && f.Unmeasured == "" {
				var s []string
				for _, m := range f.SessionMbit {
					s = append(s, f4(m))
				}
				base[7], base[9], base[10], base[11] = strings.Join(s, " "), f4(f.CrossMbit), f4(f.CrossRetransmitPct), f4(f.Jain)
			}
			tail := []string{a.Reference, ratio}
			if f.Failed != "" || f.Unmeasured != "" || len(f.Flows) == 0 {
				if err := cw.Write(slices.Concat(base, make([]string, 8), tail)); err != nil {
					return err
				}
				continue
			}
			for _, fl := range f.Flows {
				flow := []string{fl.Dir, fl.Kind, strconv.Itoa(fl.Index), fl.CC, f4(fl.Mbit), f4(fl.RetransmitPct),
					strconv.FormatUint(fl.Retransmits, 10), strconv.FormatUint(fl.SentPackets, 10)}
				if err := cw.Write(slices.Concat(base, flow, tail)); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

const timeCSV = "2006-01-02T15:04:05.000Z07:00"

func f2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
func f3(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
func f4(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
