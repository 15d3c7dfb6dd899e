package skill_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/skill"
)

const notesMD = "---\nname: notes\ndescription: Take notes.\n---\n# Notes\n\nUse templates/a.md.\n"

func paths(s skill.Skill) []string {
	var out []string
	for _, f := range s.Files {
		out = append(out, f.Path)
	}
	return out
}

func TestFromFS(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"SKILL.md":            {Data: []byte(notesMD)},
		"templates/a.md":      {Data: []byte("## A\n")},
		"scripts/run.sh":      {Data: []byte("echo hi\n")},
		".DS_Store":           {Data: []byte("junk")},
		"__MACOSX/._SKILL.md": {Data: []byte("junk")},
		"link":                {Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink},
	}
	s, err := skill.FromFS(fsys, "notes", nil)
	if err != nil {
		t.Fatalf("FromFS = %v", err)
	}
	if diff := cmp.Diff([]string{"scripts/run.sh", "templates/a.md"}, paths(s)); diff != "" {
		t.Errorf("files (-want +got); symlinks and desktop files are left out:\n%s", diff)
	}
	if s.Files[1].Size != 5 || string(s.Files[1].Data) != "## A\n" {
		t.Errorf("templates/a.md = %+v", s.Files[1])
	}
	_, err = skill.FromFS(fsys, "other-folder", nil)
	var fe *skill.FieldError
	if !errors.As(err, &fe) || fe.Field != "name" || !strings.Contains(fe.Message, "other-folder") {
		t.Errorf("FromFS(folder of another name) = %v; want a name error naming the folder", err)
	}
	_, err = skill.FromFS(fstest.MapFS{"README.md": {Data: []byte("x")}}, "", nil)
	if !errors.As(err, &fe) || fe.Field != "SKILL.md" {
		t.Errorf("FromFS(no SKILL.md) = %v", err)
	}
}

func TestFromFSIgnoresRealSymlinks(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "notes")
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(notesMD), 0o644)
	os.WriteFile(filepath.Join(dir, "templates", "a.md"), []byte("A"), 0o644)
	if err := os.Symlink(outside, filepath.Join(dir, "templates", "leak.txt")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(dir, "outdir")); err != nil {
		t.Fatal(err)
	}
	s, err := skill.FromFS(os.DirFS(dir), filepath.Base(dir), nil)
	if err != nil {
		t.Fatalf("FromFS = %v", err)
	}
	if diff := cmp.Diff([]string{"templates/a.md"}, paths(s)); diff != "" {
		t.Errorf("files (-want +got); a symlink to a file or folder outside must not be read:\n%s", diff)
	}
}

func TestFromFSLimits(t *testing.T) {
	t.Parallel()
	lim := &skill.Limits{MaxFiles: 2, MaxFileBytes: 100, MaxTotalBytes: 150}
	for _, tc := range []struct {
		name string
		fsys fstest.MapFS
		says string
	}{
		{"too many files", fstest.MapFS{"SKILL.md": {Data: []byte(notesMD)}, "a": {}, "b": {}, "c": {}}, "more than 2 resource files"},
		{"big file", fstest.MapFS{"SKILL.md": {Data: []byte(notesMD)}, "a": {Data: make([]byte, 101)}}, "most for one file"},
		{"big total", fstest.MapFS{"SKILL.md": {Data: []byte(notesMD)}, "a": {Data: make([]byte, 90)}, "b": {Data: make([]byte, 90)}}, "in all"},
	} {
		_, err := skill.FromFS(tc.fsys, "", lim)
		if !errors.Is(err, skill.ErrInvalid) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: FromFS = %v; want an error saying %q", tc.name, err, tc.says)
		}
	}
}

// zipOf writes an archive of name → content; a name ending in @link is
// stored as a symlink (without the suffix).
func zipOf(t testing.TB, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		name, data := files[i], files[i+1]
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		if n, ok := strings.CutSuffix(name, "@link"); ok {
			h.Name = n
			h.SetMode(fs.ModeSymlink | 0o777)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func fromZip(b []byte, lim *skill.Limits) (skill.Skill, error) {
	return skill.FromZip(bytes.NewReader(b), int64(len(b)), lim)
}

func TestFromZip(t *testing.T) {
	t.Parallel()
	// The skill's folder zipped, as "Compress" makes it.
	s, err := fromZip(zipOf(t, "notes/", "", "notes/SKILL.md", notesMD, "notes/templates/a.md", "A", "notes/link@link", "/etc/passwd",
		"__MACOSX/notes/._SKILL.md", "junk"), nil)
	if err != nil {
		t.Fatalf("FromZip(folder) = %v", err)
	}
	if s.Name != "notes" || !cmp.Equal(paths(s), []string{"templates/a.md"}) {
		t.Errorf("FromZip(folder) = %s %v; want notes with templates/a.md (symlink and __MACOSX left out)", s.Name, paths(s))
	}
	// The folder's contents zipped: SKILL.md at the top, no folder to match.
	s, err = fromZip(zipOf(t, "./SKILL.md", notesMD, "templates/a.md", "A"), nil)
	if err != nil || s.Name != "notes" || !cmp.Equal(paths(s), []string{"templates/a.md"}) {
		t.Errorf("FromZip(top) = %+v, %v", s, err)
	}
	// Round trip through Zip.
	b, err := s.Zip()
	if err != nil {
		t.Fatal(err)
	}
	again, err := fromZip(b, nil)
	if err != nil || !cmp.Equal(again, s) {
		t.Errorf("FromZip(Zip()) = %+v, %v; want %+v", again, err, s)
	}
}

func TestFromZipRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		files []string
		field string
		says  string
	}{
		{"traversal", []string{"SKILL.md", notesMD, "../evil.sh", "x"}, "archive", ".. part"},
		{"nested traversal", []string{"notes/SKILL.md", notesMD, "notes/a/../../../evil", "x"}, "archive", ".. part"},
		{"absolute", []string{"SKILL.md", notesMD, "/etc/cron.d/x", "x"}, "archive", "absolute"},
		{"drive", []string{"SKILL.md", notesMD, "C:/x", "x"}, "archive", "absolute"},
		{"backslash", []string{"SKILL.md", notesMD, `..\evil`, "x"}, "archive", "backslash"},
		{"folder mismatch", []string{"other/SKILL.md", notesMD}, "name", "folder \"other\""},
		{"no manifest", []string{"notes/README.md", "x"}, "SKILL.md", "missing"},
		{"two folders", []string{"a/SKILL.md", notesMD, "b/SKILL.md", notesMD}, "SKILL.md", "missing"},
		{"file beside a folder", []string{"README.md", "x", "notes/SKILL.md", notesMD}, "SKILL.md", "missing"},
		{"twice", []string{"SKILL.md", notesMD, "a.md", "1", "./a.md", "2"}, "files", "twice"},
		{"bad manifest", []string{"SKILL.md", "---\nname: Notes\ndescription: d\n---\nx"}, "name", "lowercase"},
	} {
		_, err := fromZip(zipOf(t, tc.files...), nil)
		var fe *skill.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !strings.Contains(fe.Message, tc.says) {
			t.Errorf("%s: FromZip = %v; want field %q saying %q", tc.name, err, tc.field, tc.says)
		}
	}
	_, err := fromZip([]byte("not a zip"), nil)
	if !errors.Is(err, skill.ErrInvalid) || !strings.Contains(err.Error(), "not a zip archive") {
		t.Errorf("FromZip(garbage) = %v", err)
	}
}

func TestFromZipStopsBombs(t *testing.T) {
	t.Parallel()
	lim := &skill.Limits{MaxFiles: 4, MaxFileBytes: 1 << 20, MaxTotalBytes: 2 << 20}
	// Honest headers: 8 MiB of zeros deflates to a few KiB; refused by its
	// declared size before it is read.
	big := zipOf(t, "SKILL.md", notesMD, "zeros.bin", string(make([]byte, 8<<20)))
	if len(big) > 64<<10 {
		t.Fatalf("test archive is %d bytes; want a small bomb", len(big))
	}
	_, err := fromZip(big, lim)
	if !errors.Is(err, skill.ErrInvalid) || !strings.Contains(err.Error(), "zeros.bin") {
		t.Errorf("FromZip(8 MiB of zeros) = %v; want it refused", err)
	}
	// Lying headers: each entry claims 10 bytes and inflates to 1 MiB;
	// the reads stop at the limits, not at what the archive claims.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("SKILL.md")
	w.Write([]byte(notesMD))
	var packed bytes.Buffer
	fw, _ := flate.NewWriter(&packed, flate.BestCompression)
	fw.Write(make([]byte, 1<<20))
	fw.Close()
	for _, name := range []string{"a", "b", "c"} {
		raw, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CompressedSize64: uint64(packed.Len()), UncompressedSize64: 10})
		if err != nil {
			t.Fatal(err)
		}
		raw.Write(packed.Bytes())
	}
	zw.Close()
	_, err = fromZip(buf.Bytes(), lim)
	if !errors.Is(err, skill.ErrInvalid) {
		t.Errorf("FromZip(lying sizes) = %v; want it refused", err)
	}
	// Many entries: refused without reading them all.
	var files []string
	for i := range 400 {
		files = append(files, "d"+strings.Repeat("x", i%7)+"/"+string(rune('a'+i%26))+"/", "")
	}
	_, err = fromZip(zipOf(t, append([]string{"SKILL.md", notesMD}, files...)...), lim)
	if !errors.Is(err, skill.ErrInvalid) || !strings.Contains(err.Error(), "entries") {
		t.Errorf("FromZip(400 entries) = %v; want the entry count refused", err)
	}
}

func FuzzFromZip(f *testing.F) {
	f.Add(zipOf(f, "SKILL.md", notesMD, "a.md", "A"))
	f.Add(zipOf(f, "notes/SKILL.md", notesMD, "notes/../x", "A"))
	f.Add([]byte("PK\x03\x04"))
	lim := &skill.Limits{MaxFiles: 8, MaxFileBytes: 64 << 10, MaxTotalBytes: 128 << 10}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := fromZip(data, lim)
		if err != nil {
			return
		}
		if err := s.Validate(lim); err != nil {
			t.Fatalf("FromZip returned a skill Validate refuses: %v", err)
		}
		for _, file := range s.Files {
			if !fs.ValidPath(file.Path) || strings.Contains(file.Path, "..") && strings.Contains("/"+file.Path+"/", "/../") {
				t.Fatalf("FromZip returned path %q", file.Path)
			}
		}
	})
}
