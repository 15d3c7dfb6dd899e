package server_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
)

type skillJSON struct {
	Name         string            `json:"name"`
	Description  string            `json:"description"`
	Instructions string            `json:"instructions"`
	License      string            `json:"license"`
	Metadata     map[string]string `json:"metadata"`
	Builtin      bool              `json:"builtin"`
	Files        []struct {
		Path string `json:"path"`
		Size int64  `json:"size"`
	} `json:"files"`
}

func skillZip(t *testing.T, files ...string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestSkillsAPI(t *testing.T) {
	t.Parallel()
	_, _, c := newEnv(t)

	var list struct{ Data []skillJSON }
	c.json("GET", "/api/skills", "", http.StatusOK, &list)
	var names []string
	for _, s := range list.Data {
		names = append(names, s.Name)
		if !s.Builtin || s.Instructions != "" || s.Description == "" {
			t.Errorf("GET /api/skills: %+v; want a built-in with its description and no instructions", s)
		}
	}
	if diff := cmp.Diff([]string{"japanese-business-email", "meeting-notes", "writing-style-guide"}, names); diff != "" {
		t.Errorf("built-ins listed (-want +got):\n%s", diff)
	}

	var got skillJSON
	c.json("POST", "/api/skills", `{"name":"release-notes","description":"Write release notes.","instructions":"# Release notes\n\nGroup by feature.",
		"license":"MIT","metadata":{"team":"docs"},"files":[{"path":"templates/notes.md","content":"## Added\n"},{"path":"logo.png","content_base64":"iVBORw0KGgo="}]}`,
		http.StatusCreated, &got)
	if got.Name != "release-notes" || got.Builtin || len(got.Files) != 2 || got.Files[0].Path != "logo.png" || got.Files[0].Size != 8 {
		t.Errorf("POST answer = %+v", got)
	}
	c.json("GET", "/api/skills/release-notes", "", http.StatusOK, &got)
	if got.Instructions != "# Release notes\n\nGroup by feature." || got.Metadata["team"] != "docs" || len(got.Files) != 2 {
		t.Errorf("GET /api/skills/release-notes = %+v", got)
	}
	var file struct {
		Path, Content string
		ContentBase64 *string `json:"content_base64"`
		Size          int
	}
	c.json("GET", "/api/skills/release-notes/files/templates/notes.md", "", http.StatusOK, &file)
	if file.Content != "## Added\n" || file.ContentBase64 != nil || file.Size != 9 {
		t.Errorf("GET file = %+v", file)
	}
	c.json("GET", "/api/skills/release-notes/files/logo.png", "", http.StatusOK, &file)
	if file.ContentBase64 == nil || *file.ContentBase64 != "iVBORw0KGgo=" {
		t.Errorf("GET binary file = %+v", file)
	}
	c.json("GET", "/api/skills/meeting-notes", "", http.StatusOK, &got)
	if !got.Builtin || !strings.Contains(got.Instructions, "Action items") || len(got.Files) != 1 {
		t.Errorf("GET built-in = %+v", got)
	}

	// PUT without files keeps them.
	got = skillJSON{}
	c.json("PUT", "/api/skills/release-notes", `{"description":"Write release notes for customers.","instructions":"Group by feature."}`, http.StatusOK, &got)
	if got.Description != "Write release notes for customers." || len(got.Files) != 2 || got.License != "" {
		t.Errorf("PUT answer = %+v", got)
	}
	c.json("PUT", "/api/skills/release-notes", `{"description":"d","instructions":"i","files":[]}`, http.StatusOK, &got)
	if len(got.Files) != 0 {
		t.Errorf("PUT files: [] kept %v", got.Files)
	}

	for _, tc := range []struct {
		method, path, body string
		status             int
		code, param, says  string
	}{
		{"POST", "/api/skills", `{"name":"Release Notes","description":"d","instructions":"i"}`, 400, "invalid_request", "name", "lowercase"},
		{"POST", "/api/skills", `{"name":"x","instructions":"i"}`, 400, "invalid_request", "description", "description"},
		{"POST", "/api/skills", `{"name":"x","description":"d"}`, 400, "invalid_request", "instructions", "empty"},
		{"POST", "/api/skills", `{"name":"x","description":"d","instructions":"i","files":[{"path":"../x","content":"a"}]}`, 400, "invalid_request", "files", "clean relative path"},
		{"POST", "/api/skills", `{"name":"x","description":"d","instructions":"i","files":[{"path":"a"}]}`, 400, "invalid_request", "files[0]", "content"},
		{"POST", "/api/skills", `{"name":"x","description":"d","instructions":"i","files":[{"path":"a","content_base64":"%%"}]}`, 400, "invalid_request", "files[0].content_base64", "base64"},
		{"POST", "/api/skills", `{"name":"x","description":"d","instructions":"i","nmae":"y"}`, 400, "invalid_request", "nmae", "nmae"},
		{"POST", "/api/skills", `{"name":"release-notes","description":"d","instructions":"i"}`, 409, "skill_exists", "name", "already exists"},
		{"POST", "/api/skills", `{"name":"meeting-notes","description":"d","instructions":"i"}`, 409, "builtin_skill", "name", "built in"},
		{"PUT", "/api/skills/meeting-notes", `{"description":"d","instructions":"i"}`, 409, "builtin_skill", "name", "read-only"},
		{"DELETE", "/api/skills/writing-style-guide", ``, 409, "builtin_skill", "name", "cannot be deleted"},
		{"PUT", "/api/skills/release-notes", `{"name":"other","description":"d","instructions":"i"}`, 400, "invalid_request", "name", "keeps its name"},
		{"PUT", "/api/skills/ghost", `{"description":"d","instructions":"i"}`, 404, "skill_not_found", "", "ghost"},
		{"GET", "/api/skills/ghost", ``, 404, "skill_not_found", "", "ghost"},
		{"GET", "/api/skills/release-notes/files/nope.md", ``, 404, "skill_not_found", "", "nope.md"},
	} {
		resp, body := c.do(tc.method, tc.path, tc.body)
		e := wantError(t, resp, body, tc.status, tc.code)
		param, _ := e.Param.(string)
		if param != tc.param || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%s %s %s = param %q %q; want param %q saying %q", tc.method, tc.path, tc.body, param, e.Message, tc.param, tc.says)
		}
	}

	resp, body := c.do("DELETE", "/api/skills/release-notes", "")
	if resp.StatusCode != http.StatusNoContent || len(body) != 0 {
		t.Errorf("DELETE = %d %s", resp.StatusCode, body)
	}
	resp, body = c.do("DELETE", "/api/skills/release-notes", "")
	wantError(t, resp, body, 404, "skill_not_found")

	actions := map[string]int{}
	for _, e := range c.waitAudit(4) {
		actions[e.Action+" "+e.Target]++
	}
	if diff := cmp.Diff(map[string]int{"skill.create skill:release-notes": 1, "skill.update skill:release-notes": 2, "skill.delete skill:release-notes": 1}, actions); diff != "" {
		t.Errorf("audit events (-want +got):\n%s", diff)
	}
}

func TestSkillsImport(t *testing.T) {
	t.Parallel()
	_, _, c := newEnv(t)
	md := "---\nname: onboarding\ndescription: Welcome new hires.\n---\n# Onboarding\n\nSee checklists/day-one.md.\n"
	archive := skillZip(t, "onboarding/SKILL.md", md, "onboarding/checklists/day-one.md", "- laptop\n")

	// A raw zip body.
	resp, body := c.send("POST", "/api/skills/import", "application/zip", archive)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("import (zip body) = %d %s", resp.StatusCode, body)
	}
	var got skillJSON
	json.Unmarshal(body, &got)
	if got.Name != "onboarding" || len(got.Files) != 1 || got.Files[0].Path != "checklists/day-one.md" {
		t.Errorf("import answer = %+v", got)
	}
	// Again: taken, unless replace.
	resp, body = c.send("POST", "/api/skills/import", "application/zip", archive)
	if e := wantError(t, resp, body, 409, "skill_exists"); !strings.Contains(e.Message, "replace=true") {
		t.Errorf("second import says %q; want it to point at ?replace=true", e.Message)
	}
	// Multipart, replacing; a lone SKILL.md drops the files.
	mp, ct := multipartBody(t, file{name: "SKILL.md", contentType: "text/markdown", body: strings.Replace(md, "Welcome", "Greet", 1)})
	resp, body = c.send("POST", "/api/skills/import?replace=true", ct, mp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("import (multipart, replace) = %d %s", resp.StatusCode, body)
	}
	json.Unmarshal(body, &got)
	if got.Description != "Greet new hires." || len(got.Files) != 0 {
		t.Errorf("replaced = %+v", got)
	}

	for _, tc := range []struct {
		name, ct, body string
		param, says    string
	}{
		{"traversal", "application/zip", skillZip(t, "SKILL.md", md, "../../etc/cron.d/x", "x"), "file", ".. part"},
		{"absolute", "application/zip", skillZip(t, "SKILL.md", md, "/etc/passwd", "x"), "file", "absolute"},
		{"folder mismatch", "application/zip", skillZip(t, "welcome/SKILL.md", md), "name", "does not match"},
		{"no SKILL.md", "application/zip", skillZip(t, "README.md", "x"), "file", "SKILL.md"},
		{"bad front matter", "text/markdown", "---\nname: onboarding\n---\nbody", "description", "missing"},
		{"not a skill", "application/octet-stream", "hello", "file", "zip archive"},
		{"empty", "application/zip", "", "file", "empty"},
		{"built-in name", "text/markdown", "---\nname: meeting-notes\ndescription: d\n---\nbody", "name", "built in"},
	} {
		resp, body := c.send("POST", "/api/skills/import", tc.ct, tc.body)
		if resp.StatusCode/100 != 4 {
			t.Errorf("%s: import = %d %s, want 4xx", tc.name, resp.StatusCode, body)
			continue
		}
		var e struct {
			Error struct{ Message, Param string }
		}
		json.Unmarshal(body, &e)
		if e.Error.Param != tc.param || !strings.Contains(e.Error.Message, tc.says) {
			t.Errorf("%s: import = %d param %q %q; want param %q saying %q", tc.name, resp.StatusCode, e.Error.Param, e.Error.Message, tc.param, tc.says)
		}
	}
	// A body past the size limit is refused before it is read whole.
	resp, body = c.send("POST", "/api/skills/import", "application/zip", "PK\x03\x04"+strings.Repeat("x", 6<<20))
	wantError(t, resp, body, http.StatusRequestEntityTooLarge, "request_too_large")
}

// TestAgentSkillsOverAPI: an agent created through the API with skills
// answers with only their descriptions in its prompt until it loads one;
// an unknown skill is refused naming the field.
func TestAgentSkillsOverAPI(t *testing.T) {
	t.Parallel()
	fake := llmtest.NewOpenAI(t,
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "load_skill", Arguments: `{"name":"writing-style-guide"}`}}},
		llmtest.Turn{Text: "Done."})
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{fakeProvider(fake)}})
	c := client{t: t, base: env.URL, key: env.Key}
	resp, body := c.do("POST", "/api/agents", `{"name":"editor","model":"fake/m","skills":["writing-style-guide","no-such-skill"]}`)
	if e := wantError(t, resp, body, 400, "invalid_request"); e.Param != "skills" || !strings.Contains(e.Message, `skills[1]: "no-such-skill"`) {
		t.Errorf("POST agent with an unknown skill = %+v", e)
	}
	var a store.Agent
	c.json("POST", "/api/agents", `{"name":"editor","model":"fake/m","skills":["writing-style-guide","meeting-notes"]}`, http.StatusCreated, &a)
	if diff := cmp.Diff([]string{"writing-style-guide", "meeting-notes"}, a.Params.Skills); diff != "" {
		t.Errorf("stored skills (-want +got):\n%s", diff)
	}
	c.json("POST", "/api/chat", `{"agent":"editor","messages":[{"role":"user","content":"Tighten: in order to begin"}]}`, http.StatusOK, nil)
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	first, second := string(reqs[0].Body), string(reqs[1].Body)
	if !strings.Contains(first, "writing-style-guide — ") || strings.Contains(first, "Write for a busy reader") {
		t.Errorf("first request: want the description only")
	}
	if !strings.Contains(second, "Write for a busy reader") || strings.Contains(second, "Action items") {
		t.Errorf("second request: want the loaded skill's instructions and not the other's")
	}
}
