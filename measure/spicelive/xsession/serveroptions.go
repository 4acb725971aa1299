package xsession

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// serverOptions are the spice-server settings
// spicelive.Config.ServerOptions may name, as Xspice's options of the same
// names, each with the values it takes (nil: checked by serverOptionValue).
var serverOptions = map[string][]string{
	"jpeg-wan-compression":     {"auto", "never", "always"},
	"zlib-glz-wan-compression": {"auto", "never", "always"},
	"image-compression":        {"off", "auto_glz", "auto_lz", "quic", "glz", "lz"},
	"streaming-video":          {"off", "all", "filter"},
	"video-codecs":             nil,
	"deferred-fps":             nil,
}

// ServerOptionNames lists the spice-server settings spicelive.Config.ServerOptions
// may name.
func ServerOptionNames() []string {
	names := make([]string, 0, len(serverOptions))
	for n := range serverOptions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

var videoCodec = regexp.MustCompile(`^(spice:mjpeg|gstreamer:(mjpeg|vp8|vp9|h264|h265))$`)

// ParseServerOptions reads space-separated name=value spice-server
// settings, saying what is wrong with each.
func ParseServerOptions(s string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, f := range strings.Fields(s) {
		name, value, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("-server-options %q: want name=value, such as streaming-video=all", f)
		}
		if seen[name] {
			return nil, fmt.Errorf("-server-options: %s given twice", name)
		}
		seen[name] = true
		if err := checkServerOption(name, value); err != nil {
			return nil, err
		}
		out = append(out, name+"="+value)
	}
	return out, nil
}

// checkServerOption says what is wrong with one setting.
func checkServerOption(name, value string) error {
	values, known := serverOptions[name]
	switch {
	case !known:
		return fmt.Errorf("-server-options: unknown spice-server setting %q: want one of %s", name, strings.Join(ServerOptionNames(), ", "))
	case values != nil:
		if !slices.Contains(values, value) {
			return fmt.Errorf("-server-options %s=%q: want one of %s", name, value, strings.Join(values, ", "))
		}
	case name == "deferred-fps":
		if n, err := strconv.Atoi(value); err != nil || n < 0 || n > 100 {
			return fmt.Errorf("-server-options deferred-fps=%q: want 0 (off) to 100 frames a second", value)
		}
	case name == "video-codecs":
		for _, c := range strings.Split(value, ";") {
			if !videoCodec.MatchString(c) {
				return fmt.Errorf("-server-options video-codecs=%q: %q is not spice:mjpeg or gstreamer:mjpeg, vp8, vp9, h264 or h265 (list them with ;)", value, c)
			}
		}
	}
	return nil
}

// ServerEnv is the environment that hands options to Xspice's driver,
// which reads each setting from XSPICE_<NAME>.
func ServerEnv(options []string) []string {
	var env []string
	for _, o := range options {
		name, value, _ := strings.Cut(o, "=")
		env = append(env, "XSPICE_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))+"="+value)
	}
	return env
}
