package skill

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
)

// Limits bound what a skill may hold and what an import reads. A zero
// field takes its default.
type Limits struct {
	// MaxFiles is the most resource files a skill may have (SKILL.md not
	// counted). Default 64.
	MaxFiles int
	// MaxFileBytes bounds each file, SKILL.md included, as read (not as
	// an archive declares it). Default 1 MiB.
	MaxFileBytes int64
	// MaxTotalBytes bounds all files together, uncompressed. It is what
	// stops a zip bomb: reading stops at the first byte past it. Default
	// 4 MiB.
	MaxTotalBytes int64
}

// DefaultLimits are the limits a nil *Limits means.
var DefaultLimits = Limits{MaxFiles: 64, MaxFileBytes: 1 << 20, MaxTotalBytes: 4 << 20}

func (l *Limits) orDefault() Limits {
	var o Limits
	if l != nil {
		o = *l
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultLimits.MaxFiles
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultLimits.MaxFileBytes
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = DefaultLimits.MaxTotalBytes
	}
	return o
}

// maxEntries bounds the entries an import looks at (directories and
// ignored files included), so that an archive of a million empty
// entries is refused rather than walked.
func (l Limits) maxEntries() int { return 4*l.MaxFiles + 64 }

// ignored reports whether p is one of the files archivers and desktops
// add that belong to no skill.
func ignored(p string) bool {
	base := path.Base(p)
	return strings.HasPrefix(p, "__MACOSX/") || base == ".DS_Store" || base == "Thumbs.db" || strings.HasPrefix(base, "._")
}

// reader collects a skill's files within the limits.
type reader struct {
	lim   Limits
	files map[string][]byte
	total int64
	seen  int
}

func newReader(lim *Limits) *reader {
	return &reader{lim: lim.orDefault(), files: map[string][]byte{}}
}

// entry counts one entry looked at.
func (r *reader) entry() error {
	r.seen++
	if r.seen > r.lim.maxEntries() {
		return invalid("files", "more than %d entries: a skill has at most %d resource files", r.lim.maxEntries(), r.lim.MaxFiles)
	}
	return nil
}

// add reads the file at p from rc, stopping at the first byte past the
// limits; declared is its size as the archive or file system states it
// (-1 when unknown), checked first so that an honest large file is refused
// without reading it.
func (r *reader) add(p string, declared int64, rc io.Reader) error {
	if len(r.files) >= r.lim.MaxFiles+1 { // +1: SKILL.md
		return invalid("files", "more than %d resource files", r.lim.MaxFiles)
	}
	if declared > r.lim.MaxFileBytes {
		return invalid("files", "%q is %d bytes; the most for one file is %d", p, declared, r.lim.MaxFileBytes)
	}
	room := min(r.lim.MaxFileBytes, r.lim.MaxTotalBytes-r.total)
	data, err := io.ReadAll(io.LimitReader(rc, room+1))
	if err != nil {
		return fmt.Errorf("skill: read %s: %w", p, err)
	}
	if int64(len(data)) > room {
		if int64(len(data)) > r.lim.MaxFileBytes {
			return invalid("files", "%q is larger than %d bytes, the most for one file", p, r.lim.MaxFileBytes)
		}
		return invalid("files", "the files are larger than %d bytes in all", r.lim.MaxTotalBytes)
	}
	r.total += int64(len(data))
	r.files[p] = data
	return nil
}

// skill assembles the files read into a skill whose folder is called dir
// ("" when unknown): SKILL.md parsed, its name matched against dir, the
// other files its resources.
func (r *reader) skill(dir string) (Skill, error) {
	manifest, ok := r.files[ManifestName]
	if !ok {
		return Skill{}, invalid(ManifestName, "is missing: a skill is a folder with a SKILL.md file at its top")
	}
	s, err := Parse(manifest)
	if err != nil {
		return Skill{}, err
	}
	if dir != "" && s.Name != dir {
		return Skill{}, invalid("name", "%q does not match the skill's folder %q: a skill is named after its folder", s.Name, dir)
	}
	s.Files = []File{}
	for _, p := range slices.Sorted(maps.Keys(r.files)) {
		if p == ManifestName {
			continue
		}
		s.Files = append(s.Files, File{Path: p, Size: int64(len(r.files[p])), Data: r.files[p]})
	}
	if err := s.Validate(&r.lim); err != nil {
		return Skill{}, err
	}
	return s, nil
}

// FromFS reads the skill whose folder is the root of fsys, such as
// os.DirFS("skills/meeting-notes"); dir is the folder's name, which the
// skill's name must match ("" skips the check). Symlinks and other
// irregular files are ignored, as are the files desktops add (.DS_Store,
// __MACOSX/); lim nil means DefaultLimits.
func FromFS(fsys fs.FS, dir string, lim *Limits) (Skill, error) {
	r := newReader(lim)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("skill: read folder: %w", err)
		}
		if err := r.entry(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && ignored(p+"/") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || ignored(p) {
			return nil // symlinks, devices, desktop litter
		}
		if err := checkPath(p); err != nil && p != ManifestName {
			return err
		}
		declared := int64(-1)
		if info, err := d.Info(); err == nil {
			declared = info.Size()
		}
		f, err := fsys.Open(p)
		if err != nil {
			return fmt.Errorf("skill: open %s: %w", p, err)
		}
		defer f.Close()
		return r.add(p, declared, f)
	})
	if err != nil {
		return Skill{}, err
	}
	return r.skill(dir)
}

// FromZip reads a skill from a zip archive of size bytes: its SKILL.md is
// either at the archive's top, or in its one top-level folder, which then
// names the skill. An entry with an absolute path, a backslash or a ".."
// part refuses the whole archive; symlinks and directories are skipped;
// every file is read through the limits (lim nil: DefaultLimits), whatever
// sizes the archive declares.
func FromZip(ra io.ReaderAt, size int64, lim *Limits) (Skill, error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return Skill{}, invalid("archive", "is not a zip archive: %v", err)
	}
	r := newReader(lim)
	type entry struct {
		name string
		f    *zip.File
	}
	var entries []entry
	for _, f := range zr.File {
		if err := r.entry(); err != nil {
			return Skill{}, err
		}
		name := strings.TrimPrefix(f.Name, "./")
		if err := entryPath(name); err != nil {
			return Skill{}, err
		}
		mode := f.Mode()
		if strings.HasSuffix(name, "/") || mode.IsDir() || !mode.IsRegular() || ignored(name) {
			continue // directories, symlinks, desktop litter
		}
		entries = append(entries, entry{name, f})
	}
	root, ok := zipRoot(entries, func(e entry) string { return e.name })
	if !ok {
		return Skill{}, invalid(ManifestName, "is missing: put SKILL.md at the archive's top, or zip the skill's one folder (meeting-notes/SKILL.md, …)")
	}
	dir := strings.TrimSuffix(root, "/")
	for _, e := range entries {
		rel, _ := strings.CutPrefix(e.name, root) // zipRoot checked every name has it
		if err := checkPath(rel); err != nil && rel != ManifestName {
			return Skill{}, err
		}
		if _, dup := r.files[rel]; dup {
			return Skill{}, invalid("files", "%q is in the archive twice", rel)
		}
		if err := readZipFile(r, rel, e.f); err != nil {
			return Skill{}, err
		}
	}
	return r.skill(dir)
}

func readZipFile(r *reader, rel string, f *zip.File) error {
	declared := int64(-1)
	if f.UncompressedSize64 <= 1<<62 {
		declared = int64(f.UncompressedSize64)
	}
	rc, err := f.Open()
	if err != nil {
		return invalid("archive", "cannot read %q: %v", f.Name, err)
	}
	defer rc.Close()
	err = r.add(rel, declared, rc)
	var fe *FieldError
	if err != nil && !errors.As(err, &fe) {
		// A corrupt entry (a checksum or inflate error) is bad input.
		return invalid("archive", "cannot read %q: %v", f.Name, errors.Unwrap(err))
	}
	return err
}

// entryPath refuses an archive entry that could land outside the skill's
// folder: an absolute path, a drive letter, a backslash, a ".." part.
func entryPath(name string) error {
	switch {
	case name == "":
		return invalid("archive", "has an entry with an empty name")
	case strings.HasPrefix(name, "/") || len(name) > 1 && name[1] == ':':
		return invalid("archive", "entry %q has an absolute path: the archive must hold the skill's folder with relative paths", name)
	case strings.Contains(name, "\\"):
		return invalid("archive", "entry %q has a backslash: zip paths use /", name)
	case slices.Contains(strings.Split(name, "/"), ".."):
		return invalid("archive", "entry %q has a .. part, which points outside the skill's folder", name)
	}
	return nil
}

// zipRoot returns the prefix below which the archive's skill lies: "" when
// SKILL.md is at the top, "dir/" when every file is under one top-level
// folder holding a SKILL.md; ok is false when neither holds.
func zipRoot[E any](entries []E, name func(E) string) (root string, ok bool) {
	top, atTop := "", false
	for _, e := range entries {
		n := name(e)
		if n == ManifestName {
			return "", true
		}
		first, _, nested := strings.Cut(n, "/")
		switch {
		case !nested:
			atTop = true // a file at the top: SKILL.md must be there too
		case top == "":
			top = first
		case first != top:
			atTop = true // two folders: the skill must be the top
		}
	}
	if atTop || top == "" {
		return "", false
	}
	for _, e := range entries {
		if name(e) == top+"/"+ManifestName {
			return top + "/", true
		}
	}
	return "", false
}

// Zip writes s with its files (their Data) as a zip archive of its
// folder, which FromZip reads back.
func (s Skill) Zip() ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	write := func(p string, data []byte) error {
		w, err := zw.Create(s.Name + "/" + p)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	if err := write(ManifestName, s.Markdown()); err != nil {
		return nil, fmt.Errorf("skill: zip: %w", err)
	}
	for _, f := range s.Files {
		if f.Data == nil && f.Size > 0 {
			return nil, fmt.Errorf("skill: zip: file %q was not read", f.Path)
		}
		if err := write(f.Path, f.Data); err != nil {
			return nil, fmt.Errorf("skill: zip: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("skill: zip: %w", err)
	}
	return buf.Bytes(), nil
}
