package skill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentcraftlab/agentcraft/tool"
)

// Names of the tools an agent with skills gets.
const (
	LoadSkillTool     = "load_skill"
	ReadSkillFileTool = "read_skill_file"
)

// DefaultPageBytes is how much of a skill's instructions or of a file one
// call returns when ToolOptions.PageBytes is not set: under the agent
// runtime's default cut of tool results (16 KiB), with room for the
// header and the note saying where to continue.
const DefaultPageBytes = 12 << 10

// Prompt is the section an agent's system prompt gets for its skills:
// how to use them, then one line per skill, "name — description". The
// instructions are not in it; load_skill returns them when the model
// chooses a skill. It is "" for no skills.
func Prompt(skills []Skill) string {
	if len(skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Skills\n\n")
	b.WriteString("You have skills: instructions for particular tasks, which you load when you need them. ")
	b.WriteString("When a request matches a skill's description, call " + LoadSkillTool + " with its name before you answer, and follow what it returns. ")
	b.WriteString("A skill may name resource files; read them with " + ReadSkillFileTool + " when its instructions say to.\n\n")
	for _, s := range skills {
		b.WriteString("- " + s.Name + " — " + oneLine(s.Description) + "\n")
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Reader is where the tools read skills at call time, so that an edit
// applies to the next call; *Service implements it.
type Reader interface {
	Get(ctx context.Context, workspaceID, name string) (Skill, error)
	ReadFile(ctx context.Context, workspaceID, name, path string) ([]byte, error)
}

// ToolOptions configure Tools.
type ToolOptions struct {
	// PageBytes bounds the text one call returns; a longer text comes in
	// pages, each saying at which offset the next begins. Default
	// DefaultPageBytes; at least 1024.
	PageBytes int
}

// Tools returns load_skill and read_skill_file for an agent of the
// workspace whose skills are skills: both read through r, and only
// those skills (the names are an enum in the schemas). Both are of low
// capability: they read instructions, nothing else. Nil for no skills.
func Tools(r Reader, workspaceID string, skills []Skill, opts *ToolOptions) []tool.Tool {
	if len(skills) == 0 {
		return nil
	}
	page := DefaultPageBytes
	if opts != nil && opts.PageBytes > 0 {
		page = max(opts.PageBytes, 1024)
	}
	names := make([]string, len(skills))
	for i, s := range skills {
		names[i] = s.Name
	}
	enum, _ := json.Marshal(names)
	k := &kit{r: r, workspaceID: workspaceID, names: names, page: page}
	return []tool.Tool{
		&loadSkill{kit: k, schema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","enum":` + string(enum) + `,"description":"the skill to load"},` +
			`"offset":{"type":"integer","minimum":0,"description":"where to continue a long skill: the offset the previous page ended at"}},` +
			`"required":["name"],"additionalProperties":false}`)},
		&readSkillFile{kit: k, schema: json.RawMessage(`{"type":"object","properties":{` +
			`"skill":{"type":"string","enum":` + string(enum) + `,"description":"the skill the file belongs to"},` +
			`"path":{"type":"string","description":"the file's path as load_skill lists it, such as references/guide.md"},` +
			`"offset":{"type":"integer","minimum":0,"description":"where to continue a long file: the offset the previous page ended at"}},` +
			`"required":["skill","path"],"additionalProperties":false}`)},
	}
}

// kit is what the two tools share.
type kit struct {
	r           Reader
	workspaceID string
	names       []string
	page        int
}

// known returns an error result unless name is one of the agent's skills.
func (k *kit) known(name string) (tool.Result, bool) {
	if slices.Contains(k.names, name) {
		return tool.Result{}, true
	}
	return tool.ErrorResult("%q is not one of your skills; use one of: %s", name, strings.Join(k.names, ", ")), false
}

// paged returns the page of text starting at offset (snapped back to a
// character boundary) and where the next begins, 0 when this is the last.
func (k *kit) paged(text string, offset int) (page string, next int, res tool.Result, ok bool) {
	if offset > len(text) {
		return "", 0, tool.ErrorResult("offset %d is past the end (%d bytes): start at 0", offset, len(text)), false
	}
	for offset > 0 && offset < len(text) && !utf8.RuneStart(text[offset]) {
		offset--
	}
	end := offset + k.page
	if end >= len(text) {
		return text[offset:], 0, tool.Result{}, true
	}
	// End at a line break in the page's last quarter, else at a
	// character boundary.
	if nl := strings.LastIndexByte(text[offset:end], '\n'); nl > k.page*3/4 {
		end = offset + nl + 1
	}
	for end > offset && !utf8.RuneStart(text[end]) {
		end--
	}
	return text[offset:end], end, tool.Result{}, true
}

func continued(name string, shown, total, next int, args string) string {
	return fmt.Sprintf("\n\n[continued: %d of %d bytes shown so far; call %s with %s\"offset\": %d for the rest]", shown, total, name, args, next)
}

type loadSkill struct {
	*kit
	schema json.RawMessage
}

func (t *loadSkill) Name() string { return LoadSkillTool }
func (t *loadSkill) Description() string {
	return "Load one of your skills: returns its instructions, which you then follow, and the names of its resource files (read them with " + ReadSkillFileTool + ")."
}
func (t *loadSkill) Schema() json.RawMessage     { return t.schema }
func (t *loadSkill) Capability() tool.Capability { return tool.CapabilityLow }

func (t *loadSkill) Call(ctx context.Context, raw json.RawMessage) (tool.Result, error) {
	args, res, ok := tool.CheckArguments(t.schema, raw)
	if !ok {
		return res, nil
	}
	var in struct {
		Name   string `json:"name"`
		Offset int    `json:"offset"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return tool.ErrorResult("invalid arguments: %v", err), nil
	}
	if res, ok := t.known(in.Name); !ok {
		return res, nil
	}
	s, err := t.r.Get(ctx, t.workspaceID, in.Name)
	if errors.Is(err, ErrNotFound) {
		return tool.ErrorResult("skill %q was deleted from this workspace; go on without it", in.Name), nil
	}
	if err != nil {
		return tool.ErrorResult("skill %q could not be read: %v", in.Name, err), nil
	}
	page, next, res, ok := t.paged(s.Instructions, in.Offset)
	if !ok {
		return res, nil
	}
	var b strings.Builder
	if in.Offset == 0 {
		fmt.Fprintf(&b, "# Skill: %s\n\n", s.Name)
	} else {
		fmt.Fprintf(&b, "# Skill: %s (from offset %d)\n\n", s.Name, in.Offset)
	}
	b.WriteString(page)
	if next > 0 {
		b.WriteString(continued(LoadSkillTool, next, len(s.Instructions), next, fmt.Sprintf("\"name\": %q, ", s.Name)))
		return tool.Result{Content: b.String()}, nil
	}
	if len(s.Files) > 0 {
		b.WriteString("\n\n## Resource files (read them with " + ReadSkillFileTool + ")\n\n")
		for _, f := range s.Files {
			fmt.Fprintf(&b, "- %s (%d bytes)\n", f.Path, f.Size)
		}
	}
	return tool.Result{Content: b.String()}, nil
}

type readSkillFile struct {
	*kit
	schema json.RawMessage
}

func (t *readSkillFile) Name() string { return ReadSkillFileTool }
func (t *readSkillFile) Description() string {
	return "Read a resource file of one of your skills (a reference, template or example its instructions name), as text."
}
func (t *readSkillFile) Schema() json.RawMessage     { return t.schema }
func (t *readSkillFile) Capability() tool.Capability { return tool.CapabilityLow }

func (t *readSkillFile) Call(ctx context.Context, raw json.RawMessage) (tool.Result, error) {
	args, res, ok := tool.CheckArguments(t.schema, raw)
	if !ok {
		return res, nil
	}
	var in struct {
		Skill  string `json:"skill"`
		Path   string `json:"path"`
		Offset int    `json:"offset"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return tool.ErrorResult("invalid arguments: %v", err), nil
	}
	if res, ok := t.known(in.Skill); !ok {
		return res, nil
	}
	p := strings.TrimPrefix(strings.TrimSpace(in.Path), "./")
	data, err := t.r.ReadFile(ctx, t.workspaceID, in.Skill, p)
	if errors.Is(err, ErrNotFound) {
		return t.noFile(ctx, in.Skill, p), nil
	}
	if err != nil {
		return tool.ErrorResult("file %q of skill %q could not be read: %v", p, in.Skill, err), nil
	}
	if !utf8.Valid(data) || slices.Contains(data, 0) {
		return tool.ErrorResult("%q of skill %q is a binary file (%d bytes); only text files can be read", p, in.Skill, len(data)), nil
	}
	text := string(data)
	page, next, res, ok := t.paged(text, in.Offset)
	if !ok {
		return res, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s/%s\n\n", in.Skill, p)
	b.WriteString(page)
	if next > 0 {
		b.WriteString(continued(ReadSkillFileTool, next, len(text), next, fmt.Sprintf("\"skill\": %q, \"path\": %q, ", in.Skill, p)))
	}
	return tool.Result{Content: b.String()}, nil
}

// noFile is the error result for a path the skill does not have, naming
// the paths it has.
func (t *readSkillFile) noFile(ctx context.Context, name, path string) tool.Result {
	s, err := t.r.Get(ctx, t.workspaceID, name)
	if err != nil || len(s.Files) == 0 {
		return tool.ErrorResult("skill %q has no file %q (it has no resource files)", name, path)
	}
	paths := make([]string, len(s.Files))
	for i, f := range s.Files {
		paths[i] = f.Path
	}
	return tool.ErrorResult("skill %q has no file %q; its files are: %s", name, path, strings.Join(paths, ", "))
}
