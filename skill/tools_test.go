package skill_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/skill"
	"github.com/agentcraftlab/agentcraft/tool"
)

func call(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	res, err := tl.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s) Go error %v; tools fail with error results", tl.Name(), args, err)
	}
	return res
}

func TestPrompt(t *testing.T) {
	t.Parallel()
	if skill.Prompt(nil) != "" {
		t.Error("Prompt(nil) is not empty")
	}
	p := skill.Prompt([]skill.Skill{
		{Name: "notes", Description: "Take notes.\nUse for meetings.", Instructions: "SECRET STEPS"},
		{Name: "email", Description: "Write e-mail."},
	})
	for _, want := range []string{"- notes — Take notes. Use for meetings.\n", "- email — Write e-mail.\n", "load_skill", "read_skill_file"} {
		if !strings.Contains(p, want) {
			t.Errorf("Prompt lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "SECRET STEPS") {
		t.Errorf("Prompt has the instructions:\n%s", p)
	}
}

func TestTools(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	svc, ws, _, _ := newService(t)
	long := strings.Repeat("Step with ünïcödé text that goes on.\n", 200) // about 7.8 KiB
	if _, err := svc.Create(ctx, ws, skill.Skill{Name: "notes", Description: "Take notes.", Instructions: long,
		Files: []skill.File{{Path: "templates/a.md", Data: []byte("## Template\n")}, {Path: "logo.png", Data: []byte("\x89PNG\x00\x01")}}}); err != nil {
		t.Fatal(err)
	}
	set, err := svc.Resolve(ctx, ws, []string{"notes", "meeting-notes"})
	if err != nil {
		t.Fatal(err)
	}
	tools := skill.Tools(svc, ws, set.Skills, &skill.ToolOptions{PageBytes: 3000})
	if len(tools) != 2 || tools[0].Name() != "load_skill" || tools[1].Name() != "read_skill_file" {
		t.Fatalf("Tools = %v", tools)
	}
	load, read := tools[0], tools[1]
	for _, tl := range tools {
		if tl.Capability() != tool.CapabilityLow {
			t.Errorf("%s capability %v, want low", tl.Name(), tl.Capability())
		}
		if !strings.Contains(string(tl.Schema()), `"enum":["notes","meeting-notes"]`) {
			t.Errorf("%s schema %s does not enumerate the agent's skills", tl.Name(), tl.Schema())
		}
	}

	// Paged: each page under the bound, on a character boundary, and the
	// pages together are the instructions.
	var got strings.Builder
	offset := 0
	for range 10 {
		res := call(t, load, `{"name":"notes","offset":`+strconv.Itoa(offset)+`}`)
		if res.IsError {
			t.Fatalf("load_skill = %s", res.Content)
		}
		body := res.Content[strings.Index(res.Content, "\n\n")+2:]
		next := 0
		if i := strings.Index(body, "\n\n[continued: "); i >= 0 {
			m := regexp.MustCompile(`"offset": (\d+) for the rest\]$`).FindStringSubmatch(body[i:])
			if m == nil {
				t.Fatalf("continuation note %q names no offset", body[i:])
			}
			next, _ = strconv.Atoi(m[1])
			body = body[:i]
		} else {
			if !strings.Contains(body, "- templates/a.md (12 bytes)") {
				t.Errorf("last page lacks the file list:\n%s", body[max(0, len(body)-200):])
			}
			body = body[:strings.Index(body, "\n\n## Resource files")]
		}
		if len(body) > 3000 || !utf8.ValidString(body) {
			t.Errorf("page at %d is %d bytes, valid UTF-8 %v", offset, len(body), utf8.ValidString(body))
		}
		got.WriteString(body)
		if next == 0 {
			break
		}
		offset = next
	}
	if got.String() != long {
		t.Errorf("pages joined are %d bytes, want the %d of the instructions", got.Len(), len(long))
	}

	if res := call(t, load, `{"name":"meeting-notes"}`); res.IsError || !strings.Contains(res.Content, "# Skill: meeting-notes") ||
		!strings.Contains(res.Content, "templates/minutes.md") {
		t.Errorf("load_skill(built-in) = %.300s", res.Content)
	}
	for args, says := range map[string]string{
		`{"name":"writing-style-guide"}`:  "must be one of 'notes', 'meeting-notes'", // exists, but is not this agent's
		`{"name":"notes","offset":-1}`:    "offset",
		`{"name":"notes","offset":99999}`: "past the end",
		`{"nmae":"notes"}`:                "nmae",
		`not json`:                        "not valid JSON",
	} {
		if res := call(t, load, args); !res.IsError || !strings.Contains(res.Content, says) {
			t.Errorf("load_skill(%s) = %+v; want an error saying %q", args, res, says)
		}
	}

	if res := call(t, read, `{"skill":"notes","path":"./templates/a.md"}`); res.IsError || res.Content != "# notes/templates/a.md\n\n## Template\n" {
		t.Errorf("read_skill_file = %+v", res)
	}
	if res := call(t, read, `{"skill":"meeting-notes","path":"templates/minutes.md"}`); res.IsError || !strings.Contains(res.Content, "## Action items") {
		t.Errorf("read_skill_file(built-in) = %.200s", res.Content)
	}
	for args, says := range map[string]string{
		`{"skill":"notes","path":"logo.png"}`:         "binary",
		`{"skill":"notes","path":"missing.md"}`:       "its files are: logo.png, templates/a.md",
		`{"skill":"notes","path":"../../etc/passwd"}`: "has no file",
		`{"skill":"other","path":"a"}`:                "must be one of",
	} {
		if res := call(t, read, args); !res.IsError || !strings.Contains(res.Content, says) {
			t.Errorf("read_skill_file(%s) = %+v; want an error saying %q", args, res, says)
		}
	}

	// Deleted after the agent was built: an error result, not a failure.
	if err := svc.Delete(ctx, ws, "notes"); err != nil {
		t.Fatal(err)
	}
	if res := call(t, load, `{"name":"notes"}`); !res.IsError || !strings.Contains(res.Content, "deleted") {
		t.Errorf("load_skill(deleted) = %+v", res)
	}
	if skill.Tools(svc, ws, nil, nil) != nil {
		t.Error("Tools(no skills) is not nil")
	}
}
