// Package skill is AgentCraft's support for Agent Skills
// (https://agentskills.io): reusable instruction packages, each a folder
// with a SKILL.md file — YAML front matter naming and describing the
// skill, then Markdown instructions — and optional resource files
// (references, templates, assets).
//
// Parse reads a SKILL.md strictly: a missing or malformed name or
// description, an unknown front matter field or an empty body is an
// error naming the field. FromFS and FromZip import a whole folder, with
// bounded reads (Limits): a file count, per-file and total sizes checked
// against what is read rather than what an archive claims, "../" and
// absolute paths refused, symlinks ignored. Builtins are the skills
// embedded in the binary; Service keeps a workspace's own skills in the
// store beside them (built-ins are read-only) and records every change
// in the audit log.
//
// Agents use skills by progressive disclosure: an agent whose spec lists
// skills gets only their names and descriptions in its system prompt
// (Prompt) and two tools (Tools): load_skill returns one skill's
// instructions and the names of its files, read_skill_file one file, each
// in pages that fit a tool result. The instructions reach the model only
// when it decides a skill applies.
package skill

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits of the format (the Agent Skills specification).
const (
	// MaxNameLen bounds a skill's name, in characters.
	MaxNameLen = 64
	// MaxDescriptionLen bounds its description, in characters.
	MaxDescriptionLen = 1024
	// MaxCompatibilityLen bounds its compatibility note, in characters.
	MaxCompatibilityLen = 500
)

// Our own bounds on front matter fields the specification leaves open,
// so that what lands in a system prompt or the store stays small.
const (
	maxLicenseLen      = 500
	maxAllowedToolsLen = 1024
	maxMetadataEntries = 64
	maxMetadataLen     = 1024
	maxPathLen         = 512
)

// ManifestName is the file that makes a folder a skill.
const ManifestName = "SKILL.md"

// ErrInvalid is wrapped by every error about a malformed skill; the
// error is a *FieldError naming what is wrong.
var ErrInvalid = errors.New("invalid skill")

// FieldError is a malformed skill: Field names the front matter field
// ("name", "metadata.author"), "instructions", "files" or "SKILL.md",
// Message what is wrong and how to fix it.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return "skill: " + e.Field + ": " + e.Message }

// Unwrap makes the error match ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

func invalid(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Skill is one skill: its front matter, its instructions and its resource
// files.
type Skill struct {
	// Name identifies the skill: 1 to 64 lowercase letters, digits and
	// hyphens, no hyphen first, last or twice in a row; the name of the
	// skill's folder.
	Name string `json:"name"`
	// Description says what the skill does and when to use it; it is all
	// an agent sees of the skill until it loads it. 1 to 1024 characters.
	Description string `json:"description"`
	// License, Compatibility and AllowedTools are the optional front
	// matter fields (allowed-tools is space-delimited and, as the
	// specification marks it experimental, kept but not enforced).
	License       string `json:"license,omitempty"`
	Compatibility string `json:"compatibility,omitempty"`
	AllowedTools  string `json:"allowed_tools,omitempty"`
	// Metadata is the front matter's string-to-string mapping.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Instructions is the Markdown below the front matter.
	Instructions string `json:"instructions,omitempty"`
	// Files are the resource files, SKILL.md excluded, ordered by path.
	Files []File `json:"files,omitzero"`

	// Builtin marks a skill embedded in the binary (read-only).
	Builtin bool `json:"builtin"`
	// CreatedAt and UpdatedAt are a stored skill's; zero for built-ins
	// and skills not stored.
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// File is one resource file of a skill.
type File struct {
	// Path is relative to the skill's folder, slash-separated.
	Path string `json:"path"`
	Size int64  `json:"size"`
	// Data is the content when it was read (an import, a write); nil
	// when the skill was listed from the store, which reads files one at
	// a time (Service.ReadFile).
	Data []byte `json:"-"`
}

// frontMatter fields, in the order Markdown writes them.
var fields = []string{"name", "description", "license", "compatibility", "metadata", "allowed-tools"}

// Parse reads a SKILL.md: front matter between "---" lines, then the
// instructions. It checks the fields as Validate does, and refuses an
// unknown front matter field (the specification defines six; put others
// under metadata). The skill it returns has no files.
func Parse(data []byte) (Skill, error) {
	if !utf8.Valid(data) {
		return Skill{}, invalid(ManifestName, "is not UTF-8 text")
	}
	text := strings.ReplaceAll(string(bytes.TrimPrefix(data, []byte("\ufeff"))), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return Skill{}, invalid(ManifestName, "must begin with YAML front matter: a line \"---\", then name: and description:, then a line \"---\"")
	}
	var head, body string
	if i := strings.Index(rest, "\n---\n"); i >= 0 {
		head, body = rest[:i], rest[i+len("\n---\n"):]
	} else if h, ok := strings.CutSuffix(rest, "\n---"); ok {
		head = h
	} else if strings.HasPrefix(rest, "---\n") || rest == "---" {
		head, body = "", strings.TrimPrefix(strings.TrimPrefix(rest, "---"), "\n")
	} else {
		return Skill{}, invalid(ManifestName, "front matter is not closed: end it with a line \"---\" before the instructions")
	}
	s, err := parseFrontMatter(head)
	if err != nil {
		return Skill{}, err
	}
	s.Instructions = strings.TrimSpace(body)
	if err := s.validateManifest(); err != nil {
		return Skill{}, err
	}
	return s, nil
}

func parseFrontMatter(head string) (Skill, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(head), &doc); err != nil {
		return Skill{}, invalid("front matter", "is not valid YAML: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var s Skill
	if len(doc.Content) == 0 {
		return s, nil // empty: Validate names the missing name
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return Skill{}, invalid("front matter", "must be a mapping of fields (name: ..., description: ...)")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, val := m.Content[i].Value, m.Content[i+1]
		if seen[key] {
			return Skill{}, invalid(key, "is given twice in the front matter")
		}
		seen[key] = true
		var err error
		switch key {
		case "name":
			s.Name, err = scalar(key, val)
		case "description":
			s.Description, err = scalar(key, val)
		case "license":
			s.License, err = scalar(key, val)
		case "compatibility":
			s.Compatibility, err = scalar(key, val)
		case "allowed-tools":
			s.AllowedTools, err = toolList(val)
		case "metadata":
			s.Metadata, err = metadata(val)
		default:
			return Skill{}, invalid(key, "is not a field of SKILL.md: the fields are %s; put anything else under metadata", strings.Join(fields, ", "))
		}
		if err != nil {
			return Skill{}, err
		}
	}
	return s, nil
}

// scalar is a field's text: a string, or a number or boolean as written.
func scalar(field string, n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", invalid(field, "must be a string")
	}
	return strings.TrimSpace(n.Value), nil
}

// toolList reads allowed-tools: the specification's space-delimited
// string, or a YAML list of names as some authors write it.
func toolList(n *yaml.Node) (string, error) {
	if n.Kind == yaml.SequenceNode {
		names := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := scalar("allowed-tools", c)
			if err != nil {
				return "", err
			}
			names = append(names, v)
		}
		return strings.Join(names, " "), nil
	}
	return scalar("allowed-tools", n)
}

func metadata(n *yaml.Node) (map[string]string, error) {
	if n.Kind != yaml.MappingNode {
		return nil, invalid("metadata", "must be a mapping of strings to strings, such as author: example-org")
	}
	out := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		if _, dup := out[key]; dup {
			return nil, invalid("metadata."+key, "is given twice")
		}
		v, err := scalar("metadata."+key, n.Content[i+1])
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

// ValidName reports whether name is a skill name: 1 to 64 lowercase ASCII
// letters, digits and hyphens, neither starting nor ending with a hyphen,
// never two in a row.
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameLen || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// nameRule is what an invalid name is told.
const nameRule = "must be 1 to 64 lowercase letters, digits and hyphens, not starting or ending with a hyphen nor with two in a row, such as meeting-notes"

// validateManifest checks what SKILL.md holds: the front matter fields
// and the instructions.
func (s Skill) validateManifest() error {
	switch {
	case s.Name == "":
		return invalid("name", "is missing: add name: to the front matter (%s)", nameRule)
	case !ValidName(s.Name):
		return invalid("name", "%q %s", s.Name, nameRule)
	case strings.TrimSpace(s.Description) == "":
		return invalid("description", "is missing: say in the front matter what the skill does and when to use it")
	case utf8.RuneCountInString(s.Description) > MaxDescriptionLen:
		return invalid("description", "is %d characters; the most is %d", utf8.RuneCountInString(s.Description), MaxDescriptionLen)
	case utf8.RuneCountInString(s.Compatibility) > MaxCompatibilityLen:
		return invalid("compatibility", "is %d characters; the most is %d", utf8.RuneCountInString(s.Compatibility), MaxCompatibilityLen)
	case utf8.RuneCountInString(s.License) > maxLicenseLen:
		return invalid("license", "is %d characters; the most is %d", utf8.RuneCountInString(s.License), maxLicenseLen)
	case len(s.AllowedTools) > maxAllowedToolsLen:
		return invalid("allowed-tools", "is %d bytes; the most is %d", len(s.AllowedTools), maxAllowedToolsLen)
	case len(s.Metadata) > maxMetadataEntries:
		return invalid("metadata", "has %d entries; the most is %d", len(s.Metadata), maxMetadataEntries)
	case strings.TrimSpace(s.Instructions) == "":
		return invalid("instructions", "are empty: write the skill's Markdown instructions below the front matter")
	}
	for _, k := range slices.Sorted(maps.Keys(s.Metadata)) {
		if k == "" || len(k)+len(s.Metadata[k]) > maxMetadataLen {
			return invalid("metadata."+k, "keys must be non-empty and a key with its value at most %d bytes", maxMetadataLen)
		}
	}
	return nil
}

// Validate reports whether s is a skill lim allows: its front matter
// fields and instructions as Parse checks them, and its files — valid
// relative paths, none repeated, SKILL.md not among them, within the
// count and sizes of lim (nil: DefaultLimits). The instructions count
// toward the total size. Files without Data count by Size.
func (s Skill) Validate(lim *Limits) error {
	if err := s.validateManifest(); err != nil {
		return err
	}
	l := lim.orDefault()
	if len(s.Instructions) > int(l.MaxFileBytes) {
		return invalid("instructions", "are %d bytes; the most is %d: move detail into resource files the instructions name", len(s.Instructions), l.MaxFileBytes)
	}
	if len(s.Files) > l.MaxFiles {
		return invalid("files", "there are %d resource files; the most is %d", len(s.Files), l.MaxFiles)
	}
	total := int64(len(s.Instructions))
	seen := make(map[string]bool, len(s.Files))
	for _, f := range s.Files {
		if err := checkPath(f.Path); err != nil {
			return err
		}
		if seen[f.Path] {
			return invalid("files", "%q is listed twice", f.Path)
		}
		seen[f.Path] = true
		size := f.Size
		if f.Data != nil {
			size = int64(len(f.Data))
		}
		if size > l.MaxFileBytes {
			return invalid("files", "%q is %d bytes; the most for one file is %d", f.Path, size, l.MaxFileBytes)
		}
		total += size
	}
	if total > l.MaxTotalBytes {
		return invalid("files", "the skill is %d bytes in all; the most is %d", total, l.MaxTotalBytes)
	}
	return nil
}

// checkPath refuses a resource file path that is not a clean relative
// slash-separated path inside the skill's folder.
func checkPath(p string) error {
	switch {
	case p == "":
		return invalid("files", "a file has an empty path")
	case len(p) > maxPathLen:
		return invalid("files", "path %.40q… is longer than %d bytes", p, maxPathLen)
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || len(p) > 1 && p[1] == ':':
		return invalid("files", "path %q is absolute or uses backslashes: give it relative to the skill's folder with /", p)
	case !fs.ValidPath(p) || p == ".":
		return invalid("files", "path %q is not a clean relative path (no .. , . or empty parts)", p)
	case p == ManifestName:
		return invalid("files", "%s is the skill itself, not a resource file", ManifestName)
	case !utf8.ValidString(p) || strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return invalid("files", "path %q has control characters", p)
	}
	return nil
}

// Markdown writes s as a SKILL.md that Parse reads back.
func (s Skill) Markdown() []byte {
	type manifest struct {
		Name          string            `yaml:"name"`
		Description   string            `yaml:"description"`
		License       string            `yaml:"license,omitempty"`
		Compatibility string            `yaml:"compatibility,omitempty"`
		Metadata      map[string]string `yaml:"metadata,omitempty"`
		AllowedTools  string            `yaml:"allowed-tools,omitempty"`
	}
	head, err := yaml.Marshal(manifest{s.Name, s.Description, s.License, s.Compatibility, s.Metadata, s.AllowedTools})
	if err != nil {
		// Strings and a map of strings always encode.
		panic("skill: encode front matter: " + err.Error())
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(head)
	b.WriteString("---\n\n")
	b.WriteString(s.Instructions)
	b.WriteString("\n")
	return b.Bytes()
}
