package shapedlink

// ns is end e's namespace.
func (l *Link) ns(e End) *Namespace { return l.Namespace(e) }

// dev is the veth device at end e.
func (l *Link) dev(e End) string {
	if e == ClientEnd {
		return clientDev
	}
	return serverDev
}
