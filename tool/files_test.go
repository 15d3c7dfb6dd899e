package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t testing.TB, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sandbox builds
//
//	outside/secret.txt          next to the sandbox, must stay unreadable
//	box/notes/todo.txt
//	box/notes/deep/more.md
//	box/big.txt                 100 000 bytes
//	box/jp.txt                  Japanese text
//	box/image.png               binary
//	box/link-in.txt -> notes/todo.txt
//	box/link-dir -> notes
//	box/link-out.txt -> ../outside/secret.txt
//	box/link-abs -> /etc/passwd (absolute)
func sandbox(t *testing.T, opts *FileOptions) *FileTools {
	t.Helper()
	base := t.TempDir()
	writeFile(t, base, "outside/secret.txt", "TOP SECRET")
	box := filepath.Join(base, "box")
	writeFile(t, box, "notes/todo.txt", "buy milk\n")
	writeFile(t, box, "notes/deep/more.md", "# more\n")
	writeFile(t, box, "big.txt", strings.Repeat("0123456789", 10000))
	writeFile(t, box, "jp.txt", "日本語のテキスト")
	writeFile(t, box, "image.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
	for link, target := range map[string]string{
		"link-in.txt":  "notes/todo.txt",
		"link-dir":     "notes",
		"link-out.txt": filepath.Join("..", "outside", "secret.txt"),
		"link-abs":     filepath.Join(base, "outside", "secret.txt"),
	} {
		if err := os.Symlink(target, filepath.Join(box, link)); err != nil {
			t.Skipf("symlinks unsupported: %v", err)
		}
	}
	f, err := NewFileTools(box, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func call(t *testing.T, tl Tool, args string) Result {
	t.Helper()
	res, err := tl.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s.Call(%s) returned Go error %v", tl.Name(), args, err)
	}
	return res
}

func TestFileRead(t *testing.T) {
	f := sandbox(t, &FileOptions{ReadBytes: 1000, MaxRead: 4000})
	read := FileRead{f}
	tests := []struct {
		args    string
		want    string // exact content, or a substring when wantErr
		wantErr bool
	}{
		{args: `{"path":"notes/todo.txt"}`, want: "buy milk\n"},
		{args: `{"path":"./notes/../notes/todo.txt"}`, want: "buy milk\n"},
		{args: `{"path":"link-in.txt"}`, want: "buy milk\n"},
		{args: `{"path":"link-dir/todo.txt"}`, want: "buy milk\n"},
		{args: `{"path":"notes/todo.txt","offset":4}`, want: "milk\n"},
		{args: `{"path":"notes/todo.txt","offset":4,"max_bytes":2}`, want: "mi\n[truncated: this is bytes 4 to 6 of 9; call file_read with offset 6 to continue]"},
		{args: `{"path":"jp.txt","max_bytes":4}`, want: "日\n[truncated: this is bytes 0 to 3 of 24; call file_read with offset 3 to continue]"},
		{args: `{"path":"jp.txt","offset":1,"max_bytes":5}`, want: "本\n[truncated: this is bytes 3 to 6 of 24; call file_read with offset 6 to continue]"},
		{args: `{"path":"notes/todo.txt","offset":9}`, want: ""},
		// escapes
		{args: `{"path":"../outside/secret.txt"}`, want: "leaves the sandbox", wantErr: true},
		{args: `{"path":"notes/../../outside/secret.txt"}`, want: "leaves the sandbox", wantErr: true},
		{args: `{"path":"/etc/passwd"}`, want: "is absolute", wantErr: true},
		{args: `{"path":"link-out.txt"}`, want: "outside the sandbox", wantErr: true},
		{args: `{"path":"link-abs"}`, want: "outside the sandbox", wantErr: true},
		// other failures
		{args: `{"path":"nope.txt"}`, want: "does not exist", wantErr: true},
		{args: `{"path":"notes"}`, want: "is a directory", wantErr: true},
		{args: `{"path":"image.png"}`, want: `"image.png" is a binary file (image/png, 18 bytes)`, wantErr: true},
		{args: `{"path":"notes/todo.txt","offset":10}`, want: "past the end", wantErr: true},
		{args: `{"path":"notes/todo.txt","offset":-1}`, want: `"offset"`, wantErr: true},
		{args: `{}`, want: `missing required argument "path"`, wantErr: true},
	}
	for _, tt := range tests {
		res := call(t, read, tt.args)
		if res.IsError != tt.wantErr {
			t.Errorf("file_read %s = %+v, want error %v", tt.args, res, tt.wantErr)
			continue
		}
		if tt.wantErr && !strings.Contains(res.Content, tt.want) || !tt.wantErr && res.Content != tt.want {
			t.Errorf("file_read %s = %q, want %q", tt.args, res.Content, tt.want)
		}
		if strings.Contains(res.Content, "TOP SECRET") {
			t.Errorf("file_read %s read outside the sandbox: %q", tt.args, res.Content)
		}
	}

	// The default read is ReadBytes; max_bytes is capped by MaxRead.
	res := call(t, read, `{"path":"big.txt"}`)
	if !strings.HasPrefix(res.Content, strings.Repeat("0123456789", 100)+"\n[truncated: this is bytes 0 to 1000 of 100000") {
		t.Errorf("default read = %.80q…, want 1000 bytes and a note", res.Content)
	}
	res = call(t, read, `{"path":"big.txt","max_bytes":1000000}`)
	if !strings.Contains(res.Content, "bytes 0 to 4000 of 100000; call file_read with offset 4000") {
		t.Errorf("max_bytes beyond MaxRead: %q", res.Content[len(res.Content)-100:])
	}
	res = call(t, read, `{"path":"big.txt","offset":99990}`)
	if res.Content != "0123456789" {
		t.Errorf("read at the end = %q", res.Content)
	}
}

func TestFileList(t *testing.T) {
	f := sandbox(t, nil)
	list := FileList{f}
	tests := []struct {
		args    string
		want    string
		wantErr bool
	}{
		{args: `{}`, want: "big.txt (100000 bytes)\nimage.png (18 bytes)\njp.txt (24 bytes)\nlink-abs (link outside the sandbox or broken)\nlink-dir/ (link)\nlink-in.txt (link, 9 bytes)\nlink-out.txt (link outside the sandbox or broken)\nnotes/"},
		{args: `{"path":"notes"}`, want: "notes/deep/\nnotes/todo.txt (9 bytes)"},
		{args: `{"path":"notes","recursive":true}`, want: "notes/deep/\nnotes/deep/more.md (7 bytes)\nnotes/todo.txt (9 bytes)"},
		{args: `{"path":"link-dir"}`, want: "link-dir/deep/\nlink-dir/todo.txt (9 bytes)"},
		{args: `{"path":"notes/deep/"}`, want: "notes/deep/more.md (7 bytes)"},
		{args: `{"path":".."}`, want: "leaves the sandbox", wantErr: true},
		{args: `{"path":"/"}`, want: "is absolute", wantErr: true},
		{args: `{"path":"link-out.txt"}`, want: "outside the sandbox", wantErr: true},
		{args: `{"path":"notes/todo.txt"}`, want: "is a file", wantErr: true},
		{args: `{"path":"missing"}`, want: "does not exist", wantErr: true},
		{args: `{"recursive":"yes"}`, want: `"recursive" must be boolean`, wantErr: true},
	}
	for _, tt := range tests {
		res := call(t, list, tt.args)
		if res.IsError != tt.wantErr || tt.wantErr && !strings.Contains(res.Content, tt.want) || !tt.wantErr && res.Content != tt.want {
			t.Errorf("file_list %s = %+v, want %q (error %v)", tt.args, res, tt.want, tt.wantErr)
		}
	}

	small := sandbox(t, &FileOptions{MaxListEntries: 3})
	res := call(t, FileList{small}, `{"recursive":true}`)
	if !strings.HasSuffix(res.Content, "[truncated at 3 entries: list a subdirectory, or without recursive]") || strings.Count(res.Content, "\n") != 3 {
		t.Errorf("capped listing = %q", res.Content)
	}
}

func TestNewFileTools(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "f", "x")
	for _, d := range []string{"", filepath.Join(dir, "missing"), filepath.Join(dir, "f")} {
		if _, err := NewFileTools(d, nil); err == nil {
			t.Errorf("NewFileTools(%q) succeeded", d)
		}
	}
}
