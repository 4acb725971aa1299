package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
)

func mdHost(r *report.Report, m *md) {
	m.p("## Host state and link")
	m.p("")
	kv, err := flattenJSON(r.Host)
	switch {
	case len(r.Host) == 0:
		m.p(proseNoHost)
	case err != nil:
		m.p(proseBadHost, err)
	default:
		m.header("host", "value")
		for _, p := range kv {
			if p[0] == "applied" && len(r.Link.Applied) > 0 {
				continue // the link as applied is printed below
			}
			m.row("`"+p[0]+"`", p[1])
		}
	}
	m.p("")
	l := r.Link
	line := fmt.Sprintf("Link backend: %s; queue limit %d packets", orNone(l.Backend), l.Limit)
	if l.Seed != 0 {
		line += fmt.Sprintf("; loss seed %d", l.Seed)
	}
	if l.Offload == string(shapedlink.OffloadKeep) {
		line += fmt.Sprintf("; offload %s (%s)", l.Offload, offloadMeaning(l))
	}
	m.p("%s. As applied for %s:", line, r.LinkFrom)
	m.p("")
	m.p("```")
	if len(l.Applied) == 0 {
		m.p("(not recorded)")
	}
	for _, a := range l.Applied {
		m.p("%s", a)
	}
	m.p("```")
}

// flattenJSON turns a JSON object into dotted key/value pairs in document
// order; arrays of scalars become space-separated values.
func flattenJSON(raw json.RawMessage) ([][2]string, error) {
	var out [][2]string
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var walk func(prefix string) error
	walk = func(prefix string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				for dec.More() {
					k, err := dec.Token()
					if err != nil {
						return err
					}
					name := fmt.Sprint(k)
					if prefix != "" {
						name = prefix + "." + name
					}
					if err := walk(name); err != nil {
						return err
					}
				}
				_, err := dec.Token() // '}'
				return err
			case '[':
				var vals []string
				for dec.More() {
					var el json.RawMessage
					if err := dec.Decode(&el); err != nil {
						return err
					}
					if t := bytes.TrimSpace(el); len(t) > 0 && t[0] == '{' {
						// An object inside a list: one k=v line, in order.
						kv, err := flattenJSON(el)
						if err != nil {
							return err
						}
						var parts []string
						for _, p := range kv {
							parts = append(parts, p[0]+"="+p[1])
						}
						vals = append(vals, "("+strings.Join(parts, " ")+")")
						continue
					}
					var v any
					if err := json.Unmarshal(el, &v); err != nil {
						return err
					}
					if s, ok := v.(string); ok {
						vals = append(vals, s)
					} else {
						vals = append(vals, string(bytes.TrimSpace(el)))
					}
				}
				out = append(out, [2]string{prefix, strings.Join(vals, " ")})
				_, err := dec.Token() // ']'
				return err
			}
		case nil:
			out = append(out, [2]string{prefix, "(null)"})
		default:
			out = append(out, [2]string{prefix, fmt.Sprint(t)})
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	return out, nil
}

// offloadMeaning says what a link that kept its ends' segmentation
// offload (Link.Offload "keep") did with kernel TCP's super-packets.
func offloadMeaning(l results.Link) string {
	if report.NetemKeptOffload(l) {
		return "the ends kept the kernel's offloads (TSO, GSO, checksum; GRO as the kernel sets it, off on a veth); netem judged each super-packet whole, see the warnings"
	}
	return "the ends kept the kernel's offloads (TSO, GSO, checksum; GRO as the kernel sets it, off on a veth); the link judged every wire segment of a super-packet on its own"
}
