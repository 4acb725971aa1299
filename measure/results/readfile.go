package results

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxRecordBytes bounds every file ReadJSON reads (run.json, matrix.json,
// a role's result): 1 GiB, far above what a 24-hour run of many sessions
// writes, and far below what would exhaust a reader's memory.
const maxRecordBytes = 1 << 30

// ReadFile reads the regular file at path, of at most limit bytes. It
// refuses anything else in a record's place (a named pipe, a device, a
// socket, a directory), checking before it opens and again on what it
// opened, and it opens without waiting (O_NONBLOCK where the system has
// it), so a pipe with no writer cannot hang the reader and a link to
// /dev/zero cannot fill its memory. A missing file gives an error that
// matches fs.ErrNotExist.
func ReadFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regularUnder(path, fi, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNoWait, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// What was opened, not what the name pointed at a moment before.
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := regularUnder(path, fi, limit); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("results: reading %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("results: %s grew past the %s a record file may be while it was read: it is not one a quicbench command wrote; move it out of the way",
			path, bytesText(limit))
	}
	return b, nil
}

// regularUnder checks that fi is a regular file of at most limit bytes.
func regularUnder(path string, fi fs.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("results: %s is %s, not a regular file: a record is a file a quicbench command wrote; move this out of the way", path, kind(fi.Mode()))
	}
	if fi.Size() > limit {
		return fmt.Errorf("results: %s is %d bytes, over the %s a record file may be: it is not one a quicbench command wrote; move it out of the way",
			path, fi.Size(), bytesText(limit))
	}
	return nil
}

// kind names a file type for a message.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "a file of type " + m.Type().String()
}

// bytesText is n bytes as a reader would say it: "1 GiB", "256 MiB", or
// a count of bytes.
func bytesText(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
