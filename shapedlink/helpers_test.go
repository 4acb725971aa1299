package shapedlink

// emulatorOnly says why netem cannot build p, loading its schedules and
// traces, or "".
func (p Profile) emulatorOnly() string {
	dirs, err := p.load()
	if err != nil {
		return err.Error()
	}
	return notOnNetem(dirs)
}
