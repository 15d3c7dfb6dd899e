package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Defaults of FileOptions.
const (
	DefaultFileReadBytes  = 64 << 10
	DefaultMaxFileRead    = 1 << 20
	DefaultMaxListEntries = 1000
)

// FileOptions configure FileTools. Nil or zero fields mean the defaults.
type FileOptions struct {
	// ReadBytes is how much file_read returns when the model does not
	// say. Default DefaultFileReadBytes.
	ReadBytes int
	// MaxRead caps what one file_read returns, whatever max_bytes the
	// model asks for. Default DefaultMaxFileRead.
	MaxRead int
	// MaxListEntries caps the entries one file_list returns. Default
	// DefaultMaxListEntries.
	MaxListEntries int
}

// FileTools are the built-in "file_read" and "file_list" tools over one
// sandbox directory. Every path the model gives is relative to it and is
// opened through os.Root, which refuses any path that leaves the directory:
// "..", absolute paths, and symbolic links whose target is outside (links
// that stay inside are followed). Create it with NewFileTools.
type FileTools struct {
	dir  string
	opts FileOptions
}

// NewFileTools returns the file tools over the directory dir, which must
// exist. opts nil means defaults; it is copied. The directory is opened
// anew on each call, so FileTools holds no descriptor and needs no Close.
func NewFileTools(dir string, opts *FileOptions) (*FileTools, error) {
	if dir == "" {
		return nil, errors.New("tool: file tools: the sandbox directory is empty: set the directory the file tools may read")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("tool: file tools: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("tool: file tools: sandbox directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("tool: file tools: sandbox %s is not a directory", abs)
	}
	f := &FileTools{dir: abs}
	if opts != nil {
		f.opts = *opts
	}
	f.opts.ReadBytes = orDefault(f.opts.ReadBytes, DefaultFileReadBytes)
	f.opts.MaxRead = orDefault(f.opts.MaxRead, DefaultMaxFileRead)
	f.opts.ReadBytes = min(f.opts.ReadBytes, f.opts.MaxRead)
	f.opts.MaxListEntries = orDefault(f.opts.MaxListEntries, DefaultMaxListEntries)
	return f, nil
}

// Dir returns the sandbox directory, absolute.
func (f *FileTools) Dir() string { return f.dir }

// Tools returns file_read and file_list.
func (f *FileTools) Tools() []Tool { return []Tool{FileRead{f}, FileList{f}} }

// cleanPath checks a model-supplied path and returns it in the form
// os.Root takes. os.Root would refuse an escape anyway; checking first
// gives the model a message it can act on.
func cleanPath(p string) (string, error) {
	if p == "" || p == "." || p == "./" {
		return ".", nil
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains a NUL byte")
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return "", fmt.Errorf("path %q is absolute: give a path relative to the sandbox directory, such as \"notes/todo.txt\"", p)
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q leaves the sandbox directory: give a path inside it, such as \"notes/todo.txt\"", p)
	}
	return c, nil
}

// open opens the sandbox root; the caller closes it.
func (f *FileTools) open() (*os.Root, error) {
	r, err := os.OpenRoot(f.dir)
	if err != nil {
		return nil, fmt.Errorf("tool: open file sandbox: %w", err)
	}
	return r, nil
}

// fsMessage words an error of os.Root for the model.
func fsMessage(p string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%q does not exist: call file_list to see what there is", p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%q cannot be read: permission denied", p)
	case strings.Contains(err.Error(), "escapes from parent"):
		return fmt.Sprintf("%q leads outside the sandbox directory (through \"..\" or a symbolic link): only files inside it can be read", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%q: %v", p, pe.Err)
	}
	return fmt.Sprintf("%q: %v", p, err)
}

// FileRead is the "file_read" tool of a FileTools.
type FileRead struct{ f *FileTools }

var fileReadArgs = mustArgSchema("file_read",
	`{"type":"object","properties":{`+
		`"path":{"type":"string","minLength":1,"description":"File path relative to the sandbox directory, e.g. \"reports/q3.md\"."},`+
		`"offset":{"type":"integer","minimum":0,"description":"Byte offset to start reading at, to continue a truncated read. Default 0."},`+
		`"max_bytes":{"type":"integer","minimum":1,"description":"How many bytes to return at most. Default 65536."}},`+
		`"required":["path"],"additionalProperties":false}`,
	`{"path": "reports/q3.md"}`)

// Name implements Tool.
func (FileRead) Name() string { return "file_read" }

// Description implements Tool.
func (t FileRead) Description() string {
	return fmt.Sprintf("Read a text file from the shared files directory. Paths are relative to that directory; call file_list to find them. "+
		"Returns at most %d bytes per call; a longer file is cut with a note giving the offset to continue from. Binary files are reported, not returned.", t.f.opts.MaxRead)
}

// Schema implements Tool.
func (FileRead) Schema() json.RawMessage { return fileReadArgs.raw }

// Capability implements Tool: it reads data the operator put in the
// sandbox, which may be confidential.
func (FileRead) Capability() Capability { return CapabilityMedium }

// Call implements Tool.
func (t FileRead) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	var in struct {
		Path     string `json:"path"`
		Offset   int64  `json:"offset"`
		MaxBytes int    `json:"max_bytes"`
	}
	if res, ok := fileReadArgs.parse(args, &in); !ok {
		return res, nil
	}
	p, err := cleanPath(in.Path)
	if err != nil {
		return ErrorResult("%v", err), nil
	}
	limit := t.f.opts.ReadBytes
	if in.MaxBytes > 0 {
		limit = min(in.MaxBytes, t.f.opts.MaxRead)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	root, err := t.f.open()
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	file, err := root.Open(p)
	if err != nil {
		return ErrorResult("%s", fsMessage(in.Path, err)), nil
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return ErrorResult("%s", fsMessage(in.Path, err)), nil
	}
	if fi.IsDir() {
		return ErrorResult("%q is a directory: call file_list with this path to see its files", in.Path), nil
	}
	if !fi.Mode().IsRegular() {
		return ErrorResult("%q is not a regular file (%v): only files can be read", in.Path, fi.Mode().Type()), nil
	}
	size := fi.Size()
	if in.Offset > size {
		return ErrorResult("offset %d is past the end of %q (%d bytes)", in.Offset, in.Path, size), nil
	}
	// Read one extra rune's worth, to tell a cut rune from a binary byte.
	buf := make([]byte, min(int64(limit+utf8.UTFMax), size-in.Offset))
	n, err := file.ReadAt(buf, in.Offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return ErrorResult("%s", fsMessage(in.Path, err)), nil
	}
	buf = buf[:n]
	if isBinary(buf) {
		sniff := buf[:min(len(buf), 512)]
		return ErrorResult("%q is a binary file (%s, %d bytes): file_read returns text only", in.Path, http.DetectContentType(sniff), size), nil
	}
	// Never split a UTF-8 character: skip the tail of one cut by the
	// offset, and end before one cut by the limit.
	start := in.Offset
	text := buf
	if in.Offset > 0 {
		for k := 0; k < utf8.UTFMax-1 && len(text) > 0 && !utf8.RuneStart(text[0]); k++ {
			text = text[1:]
			start++
		}
	}
	if len(text) > limit {
		text = trimCutRunes(text[:limit], false)
	}
	end := start + int64(len(text))
	if end < size {
		return Result{Content: fmt.Sprintf("%s\n[truncated: this is bytes %d to %d of %d; call file_read with offset %d to continue]", text, start, end, size, end)}, nil
	}
	return Result{Content: string(text)}, nil
}

// isBinary reports whether b looks like binary data: a NUL byte, or bytes
// that are not UTF-8 beyond a character cut at either end.
func isBinary(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if strings.IndexByte(string(b), 0) >= 0 {
		return true
	}
	return !utf8.Valid(trimCutRunes(b, true))
}

// trimCutRunes drops a UTF-8 character cut at the end of b and, if head,
// continuation bytes at its start (a character cut by the offset).
func trimCutRunes(b []byte, head bool) []byte {
	if head {
		for k := 0; k < utf8.UTFMax-1 && len(b) > 0 && !utf8.RuneStart(b[0]); k++ {
			b = b[1:]
		}
	}
	// Look back at most UTFMax-1 bytes for the start of the last rune.
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if r, _ := utf8.DecodeRune(b[len(b)-i:]); r == utf8.RuneError && !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// FileList is the "file_list" tool of a FileTools.
type FileList struct{ f *FileTools }

var fileListArgs = mustArgSchema("file_list",
	`{"type":"object","properties":{`+
		`"path":{"type":"string","description":"Directory relative to the sandbox directory. Default: the sandbox directory itself."},`+
		`"recursive":{"type":"boolean","description":"Also list the files of subdirectories. Default false."}},`+
		`"additionalProperties":false}`,
	`{"path": "reports", "recursive": true}`)

// Name implements Tool.
func (FileList) Name() string { return "file_list" }

// Description implements Tool.
func (FileList) Description() string {
	return "List the files in the shared files directory, or in one of its subdirectories. " +
		"Each line is a path relative to that directory: directories end in \"/\", files show their size in bytes."
}

// Schema implements Tool.
func (FileList) Schema() json.RawMessage { return fileListArgs.raw }

// Capability implements Tool: file names can be confidential too.
func (FileList) Capability() Capability { return CapabilityMedium }

// Call implements Tool.
func (t FileList) Call(ctx context.Context, args json.RawMessage) (Result, error) {
	var in struct {
		Path      string `json:"path"`
		Recursive bool   `json:"recursive"`
	}
	if res, ok := fileListArgs.parse(args, &in); !ok {
		return res, nil
	}
	p, err := cleanPath(in.Path)
	if err != nil {
		return ErrorResult("%v", err), nil
	}
	root, err := t.f.open()
	if err != nil {
		return Result{}, err
	}
	defer root.Close()
	// Stat through the root first: fs.WalkDir would report an escaping
	// link as a plain error.
	fi, err := root.Stat(p)
	if err != nil {
		return ErrorResult("%s", fsMessage(in.Path, err)), nil
	}
	if !fi.IsDir() {
		return ErrorResult("%q is a file, not a directory: call file_read to read it", in.Path), nil
	}
	var lines []string
	maxEntries := t.f.opts.MaxListEntries
	truncated := false
	errStop := errors.New("stop")
	err = fs.WalkDir(root.FS(), p, func(name string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if name == p {
			return err // the directory itself: not listed
		}
		if len(lines) >= maxEntries {
			truncated = true
			return errStop
		}
		if err != nil {
			lines = append(lines, fmt.Sprintf("%s (unreadable: %v)", name, errors.Unwrap(err)))
			return nil
		}
		switch {
		case d.IsDir():
			lines = append(lines, name+"/")
			if !in.Recursive {
				return fs.SkipDir
			}
		case d.Type()&fs.ModeSymlink != 0:
			// WalkDir does not follow links; say where it leads, as
			// file_read would see it.
			if st, err := root.Stat(name); err == nil && st.IsDir() {
				lines = append(lines, name+"/ (link)")
			} else if err == nil {
				lines = append(lines, fmt.Sprintf("%s (link, %d bytes)", name, st.Size()))
			} else {
				lines = append(lines, name+" (link outside the sandbox or broken)")
			}
		default:
			info, err := d.Info()
			if err != nil {
				lines = append(lines, name)
				return nil
			}
			lines = append(lines, fmt.Sprintf("%s (%d bytes)", name, info.Size()))
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		if cerr := ctx.Err(); cerr != nil {
			return Result{}, cerr
		}
		return ErrorResult("%s", fsMessage(in.Path, err)), nil
	}
	if len(lines) == 0 {
		return Result{Content: "(empty directory)"}, nil
	}
	out := strings.Join(lines, "\n")
	if truncated {
		out += fmt.Sprintf("\n[truncated at %d entries: list a subdirectory, or without recursive]", maxEntries)
	}
	return Result{Content: out}, nil
}
