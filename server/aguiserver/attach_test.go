package aguiserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
)

// uploadFile posts one file to /api/upload and returns its fileId.
func uploadFile(t *testing.T, c servertest.Client, name, content string) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(fw, content)
	_ = mw.Close()
	req, err := http.NewRequest("POST", c.Base+"/api/upload", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+c.Key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var up struct {
		FileID string `json:"fileId"`
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &up) != nil || up.FileID == "" {
		t.Fatalf("POST /api/upload = %d %s, want 201 with a fileId", resp.StatusCode, b)
	}
	return up.FileID
}

func knowledgeEnv(t *testing.T, knowledge bool, turns ...llmtest.Turn) (*llmtest.Server, servertest.Client) {
	t.Helper()
	fake := llmtest.NewOpenAI(t, turns...)
	env := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)}, Knowledge: knowledge,
		Agents: []platform.AgentSpec{{Name: "helper", Model: "fake/m", Instructions: "Help.", MaxSteps: 3}}})
	return fake, servertest.Client{T: t, Base: env.URL, Key: env.Key}
}

// TestForwardedFileReachesModel: a file named by forwardedProps.fileId is
// attached as on /v1 (its passage reaches the model as a numbered
// source), and the stream carries the passage as a "citations" CUSTOM
// event before RUN_FINISHED, with its source name and text.
func TestForwardedFileReachesModel(t *testing.T) {
	fake, c := knowledgeEnv(t, true, llmtest.Turn{Text: "Refunds are paid within 14 days [1]."})
	id := uploadFile(t, c, "refunds.md", "# Refunds\n\nRefunds are paid within 14 days of the return reaching the warehouse.")
	evs := runAGUI(t, c, `{"threadId":"t","runId":"r","forwardedProps":{"fileId":"`+id+`"},
		"messages":[{"id":"u1","role":"user","content":"How fast are refunds paid?"}]}`)
	up := strings.Join(upstreamMessages(t, fake, 0), "\n")
	if !strings.Contains(up, "[1] refunds.md") || !strings.Contains(up, "within 14 days of the return reaching the warehouse") {
		t.Errorf("upstream messages %q do not hold the attached file's passage as source [1]", up)
	}
	var cites []event
	last := ""
	for _, e := range evs {
		if e.str("type") == "CUSTOM" && e.str("name") == "citations" {
			v, _ := e["value"].(map[string]any)
			for _, c := range v["citations"].([]any) {
				cites = append(cites, event(c.(map[string]any)))
			}
		}
		if e.str("type") != "" {
			last = e.str("type")
		}
	}
	if last != "RUN_FINISHED" {
		t.Errorf("the stream ends with %s, want RUN_FINISHED", last)
	}
	if len(cites) != 1 {
		t.Fatalf("citations %v, want the one passage of refunds.md (events %v)", cites, types(evs))
	}
	if cites[0]["n"] != float64(1) || cites[0].str("source") != "refunds.md" || !strings.Contains(cites[0].str("text"), "within 14 days of the return") {
		t.Errorf("citation %v, want [1] refunds.md with the passage's text", cites[0])
	}
}

// TestForwardedFileIDsList: fileIds attaches several files; each reaches
// the model.
func TestForwardedFileIDsList(t *testing.T) {
	fake, c := knowledgeEnv(t, true, llmtest.Turn{Text: "ok"})
	a := uploadFile(t, c, "a.txt", "Parcels ship from Osaka warehouse.")
	b := uploadFile(t, c, "b.md", "Parcels ship with tracking numbers.")
	runAGUI(t, c, `{"threadId":"t","runId":"r","forwardedProps":{"fileIds":["`+a+`","`+b+`"]},
		"messages":[{"id":"u1","role":"user","content":"Where do parcels ship from?"}]}`)
	up := strings.Join(upstreamMessages(t, fake, 0), "\n")
	if !strings.Contains(up, "Osaka warehouse") || !strings.Contains(up, "tracking numbers") {
		t.Errorf("upstream messages %q lack one of the two attached files", up)
	}
}

// TestForwardedFileRefused: an unknown fileId, a malformed one and a
// server without knowledge search are 400 JSON errors naming the problem,
// before any stream and without calling the model.
func TestForwardedFileRefused(t *testing.T) {
	fake, c := knowledgeEnv(t, true)
	_, plain := knowledgeEnv(t, false)
	for _, tc := range []struct {
		c     servertest.Client
		props string
		want  string
	}{
		{c, `{"fileId":"up_missing"}`, "does not exist or has expired"},
		{c, `{"fileId":42}`, "forwardedProps.fileId must be a non-empty string"},
		{c, `{"fileIds":["", "x"]}`, "forwardedProps.fileIds[0] is empty"},
		{c, `[1]`, "forwardedProps must be a JSON object"},
		{plain, `{"fileId":"up_x"}`, "does not accept file attachments"},
	} {
		resp, body := tc.c.Do("POST", "/agui/helper", `{"threadId":"t","runId":"r","forwardedProps":`+tc.props+`,
			"messages":[{"id":"u1","role":"user","content":"hi"}]}`)
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("forwardedProps %s: %d %s, want 400 saying %q", tc.props, resp.StatusCode, body, tc.want)
		}
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the model was called %d times for refused runs", n)
	}
}
