package skill_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/skill"
)

func TestParse(t *testing.T) {
	t.Parallel()
	md := "\ufeff---\r\n" +
		"name: pdf-tools\r\n" +
		"description: >\r\n  Extract text and tables from PDF files.\r\n  Use when the user mentions PDFs.\r\n" +
		"license: Apache-2.0\r\n" +
		"compatibility: Needs nothing\r\n" +
		"metadata:\r\n  author: example-org\r\n  version: \"1.0\"\r\n" +
		"allowed-tools: calculator current_time\r\n" +
		"---\r\n\r\n# PDF tools\r\n\r\nRead the file first.\r\n"
	got, err := skill.Parse([]byte(md))
	if err != nil {
		t.Fatalf("Parse = %v", err)
	}
	want := skill.Skill{Name: "pdf-tools", Description: "Extract text and tables from PDF files. Use when the user mentions PDFs.",
		License: "Apache-2.0", Compatibility: "Needs nothing", AllowedTools: "calculator current_time",
		Metadata: map[string]string{"author": "example-org", "version": "1.0"}, Instructions: "# PDF tools\n\nRead the file first."}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
	// Markdown writes what Parse reads back.
	again, err := skill.Parse(got.Markdown())
	if err != nil {
		t.Fatalf("Parse(Markdown()) = %v\n%s", err, got.Markdown())
	}
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("Markdown round trip (-first +second):\n%s", diff)
	}

	// allowed-tools as a YAML list, as some authors write it.
	list, err := skill.Parse([]byte("---\nname: a\ndescription: d\nallowed-tools: [Read, Bash]\n---\nbody"))
	if err != nil || list.AllowedTools != "Read Bash" {
		t.Errorf("Parse(allowed-tools list) = %q, %v; want \"Read Bash\"", list.AllowedTools, err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, md, field, says string
	}{
		{"no front matter", "# Title\n", "SKILL.md", "must begin with YAML front matter"},
		{"unclosed", "---\nname: a\ndescription: d\n", "SKILL.md", "not closed"},
		{"not yaml", "---\nname: [a\n---\nbody", "front matter", "not valid YAML"},
		{"not a mapping", "---\n- a\n---\nbody", "front matter", "mapping"},
		{"missing name", "---\ndescription: d\n---\nbody", "name", "missing"},
		{"upper case", "---\nname: PDF-Tools\ndescription: d\n---\nbody", "name", "lowercase"},
		{"leading hyphen", "---\nname: -pdf\ndescription: d\n---\nbody", "name", "hyphen"},
		{"double hyphen", "---\nname: pdf--tools\ndescription: d\n---\nbody", "name", "two in a row"},
		{"too long", "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\nbody", "name", "1 to 64"},
		{"name a list", "---\nname: [a]\ndescription: d\n---\nbody", "name", "must be a string"},
		{"missing description", "---\nname: a\n---\nbody", "description", "missing"},
		{"empty description", "---\nname: a\ndescription: \"  \"\n---\nbody", "description", "missing"},
		{"null description", "---\nname: a\ndescription:\n---\nbody", "description", "must be a string"},
		{"long description", "---\nname: a\ndescription: " + strings.Repeat("é", 1025) + "\n---\nbody", "description", "1025 characters"},
		{"long compatibility", "---\nname: a\ndescription: d\ncompatibility: " + strings.Repeat("x", 501) + "\n---\nbody", "compatibility", "501"},
		{"unknown field", "---\nname: a\ndescription: d\nversion: 2\n---\nbody", "version", "put anything else under metadata"},
		{"twice", "---\nname: a\nname: b\ndescription: d\n---\nbody", "name", "twice"},
		{"metadata list", "---\nname: a\ndescription: d\nmetadata: [x]\n---\nbody", "metadata", "mapping"},
		{"metadata nested", "---\nname: a\ndescription: d\nmetadata:\n  tags: [x, y]\n---\nbody", "metadata.tags", "must be a string"},
		{"no instructions", "---\nname: a\ndescription: d\n---\n\n  \n", "instructions", "empty"},
		{"not utf-8", "---\nname: a\ndescription: \xff\n---\nbody", "SKILL.md", "UTF-8"},
	} {
		_, err := skill.Parse([]byte(tc.md))
		var fe *skill.FieldError
		if !errors.As(err, &fe) || !errors.Is(err, skill.ErrInvalid) {
			t.Errorf("%s: Parse = %v, want a *FieldError wrapping ErrInvalid", tc.name, err)
			continue
		}
		if fe.Field != tc.field || !strings.Contains(fe.Message, tc.says) {
			t.Errorf("%s: Parse = field %q %q; want field %q saying %q", tc.name, fe.Field, fe.Message, tc.field, tc.says)
		}
	}
}

func TestParseEmptyFrontMatterNamesName(t *testing.T) {
	t.Parallel()
	_, err := skill.Parse([]byte("---\n---\nbody"))
	var fe *skill.FieldError
	if !errors.As(err, &fe) || fe.Field != "name" {
		t.Errorf("Parse(empty front matter) = %v, want the name reported missing", err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := skill.Skill{Name: "a", Description: "d", Instructions: "i"}
	lim := &skill.Limits{MaxFiles: 2, MaxFileBytes: 10, MaxTotalBytes: 15}
	for _, tc := range []struct {
		name  string
		files []skill.File
		says  string
	}{
		{"absolute", []skill.File{{Path: "/etc/passwd"}}, "absolute"},
		{"backslash", []skill.File{{Path: `a\b`}}, "backslash"},
		{"drive", []skill.File{{Path: "C:/x"}}, "absolute"},
		{"dot dot", []skill.File{{Path: "a/../../b"}}, "not a clean relative path"},
		{"empty part", []skill.File{{Path: "a//b"}}, "not a clean relative path"},
		{"manifest", []skill.File{{Path: "SKILL.md"}}, "the skill itself"},
		{"twice", []skill.File{{Path: "a"}, {Path: "a"}}, "twice"},
		{"too many", []skill.File{{Path: "a"}, {Path: "b"}, {Path: "c"}}, "3 resource files"},
		{"big file", []skill.File{{Path: "a", Data: make([]byte, 11)}}, "most for one file"},
		{"big by size", []skill.File{{Path: "a", Size: 11}}, "most for one file"},
		{"big total", []skill.File{{Path: "a", Data: make([]byte, 10)}, {Path: "b", Data: make([]byte, 5)}}, "16 bytes in all"},
	} {
		s := ok
		s.Files = tc.files
		err := s.Validate(lim)
		var fe *skill.FieldError
		if !errors.As(err, &fe) || fe.Field != "files" || !strings.Contains(fe.Message, tc.says) {
			t.Errorf("%s: Validate = %v; want a files error saying %q", tc.name, err, tc.says)
		}
	}
	s := ok
	s.Files = []skill.File{{Path: "references/a.md", Data: []byte("0123456789")}, {Path: "b", Data: []byte("1234")}}
	if err := s.Validate(lim); err != nil {
		t.Errorf("Validate(within limits) = %v", err)
	}
}

func TestValidName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"a": true, "meeting-notes": true, "v2-api": true, "9": true, strings.Repeat("a", 64): true,
		"": false, "-a": false, "a-": false, "a--b": false, "A": false, "a_b": false, "a.b": false, "ä": false,
		strings.Repeat("a", 65): false, "a b": false,
	} {
		if got := skill.ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: d\n---\nbody"))
	f.Add([]byte("---\nname: a\ndescription: >\n  folded\nmetadata: {k: v}\n---\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\n&a [*a]\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := skill.Parse(data)
		if err != nil {
			if !errors.Is(err, skill.ErrInvalid) {
				t.Fatalf("Parse error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if !skill.ValidName(s.Name) || s.Description == "" || s.Instructions == "" {
			t.Fatalf("Parse accepted %+v", s)
		}
		again, err := skill.Parse(s.Markdown())
		if err != nil {
			t.Fatalf("Parse(Markdown()) = %v for %+v", err, s)
		}
		if diff := cmp.Diff(s, again); diff != "" {
			t.Fatalf("Markdown round trip (-first +second):\n%s", diff)
		}
	})
}
