package xsession

import (
	"slices"
	"strings"
	"testing"
)

func TestParseServerOptions(t *testing.T) {
	got, err := ParseServerOptions(" streaming-video=all  video-codecs=gstreamer:vp8;spice:mjpeg deferred-fps=10 ")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"streaming-video=all", "video-codecs=gstreamer:vp8;spice:mjpeg", "deferred-fps=10"}
	if !slices.Equal(got, want) {
		t.Fatalf("ParseServerOptions = %q, want %q", got, want)
	}
	env := ServerEnv(got)
	wantEnv := []string{"XSPICE_STREAMING_VIDEO=all", "XSPICE_VIDEO_CODECS=gstreamer:vp8;spice:mjpeg", "XSPICE_DEFERRED_FPS=10"}
	if !slices.Equal(env, wantEnv) {
		t.Errorf("serverEnv = %q, want %q", env, wantEnv)
	}
	if got, err := ParseServerOptions(""); err != nil || got != nil {
		t.Errorf("no options: %q, %v", got, err)
	}
	for _, c := range []struct{ in, want string }{
		{"streaming-video", "want name=value"},
		{"streaming-video=sometimes", "want one of off, all, filter"},
		{"port=5901", `unknown spice-server setting "port"`},
		{"deferred-fps=-1", "want 0 (off) to 100"},
		{"deferred-fps=x", "want 0 (off) to 100"},
		{"video-codecs=gstreamer:av1", `"gstreamer:av1" is not`},
		{"image-compression=glz image-compression=lz", "given twice"},
	} {
		if _, err := ParseServerOptions(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseServerOptions(%q) = %v, want an error saying %q", c.in, err, c.want)
		}
	}
}
