package crash

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/server/lineapi/linetest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/store/sqlite"
	"github.com/agentcraftlab/agentcraft/tool/caldav/caldavtest"
)

const (
	lineSecret = "line-channel-secret"
	lineToken  = "line-channel-access-token"
)

// seedLINEUser makes alice an admin of the default workspace whose LINE
// account is linked (as signing in with LINE Login links it), before
// serve opens the database.
func seedLINEUser(t *testing.T, dbPath, lineUserID string) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	ws, err := st.Workspaces().GetOrCreate(t.Context(), "default")
	if err != nil {
		t.Fatal(err)
	}
	u, err := st.Users().Create(t.Context(), store.User{Email: "alice@example.com", DisplayName: "Alice"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Members().Add(t.Context(), store.Member{WorkspaceID: ws.ID, UserID: u.ID, Role: identity.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UserIdentities().Link(t.Context(), store.UserIdentity{Provider: "https://access.line.me", Subject: lineUserID, UserID: u.ID}); err != nil {
		t.Fatal(err)
	}
}

// webhook posts body to serve's LINE webhook, signed with secret.
func webhook(t *testing.T, addr, secret string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", "http://"+addr+"/api/line/webhook", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("x-line-signature", linetest.Sign(secret, body))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func lineTasks(t *testing.T, addr string) []store.Task {
	t.Helper()
	var page store.TaskPage
	api(t, addr, "GET", "/api/tasks?source=line", "", http.StatusOK, &page)
	return page.Tasks
}

// delivered returns every message LINE was asked to deliver (replies
// and pushes), in order of kind.
func delivered(line *linetest.Server) []linetest.Message {
	var out []linetest.Message
	for _, r := range line.Replies() {
		out = append(out, r.Messages...)
	}
	for _, p := range line.Pushes() {
		out = append(out, p.Messages...)
	}
	return out
}

func containsText(msgs []linetest.Message, s string) bool {
	for _, m := range msgs {
		for _, tx := range m.Texts() {
			if strings.Contains(tx, s) {
				return true
			}
		}
	}
	return false
}

// approvalCards returns the postback data of the approval cards sent so
// far, approve button first.
func approvalCards(msgs []linetest.Message) [][]string {
	var out [][]string
	for _, m := range msgs {
		if m.Type != "flex" {
			continue
		}
		var data []string
		for _, p := range m.Postbacks() {
			data = append(data, p.Data)
		}
		out = append(out, data)
	}
	return out
}

// TestBinaryLINE drives the real binary from LINE, against a strict fake
// of LINE's API and a CalDAV server: a signed text message becomes a
// task the Research agent answers by reply; a calendar request gets a
// Flex approval card whose approve postback creates the event exactly
// once; reject creates nothing; a bad signature is refused before
// anything; a redelivered webhook makes no second task.
func TestBinaryLINE(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "agentcraft.db")
	alice := linetest.UserID("alice")
	seedLINEUser(t, dbPath, alice)
	line := linetest.New(t, lineToken)
	cal := caldavtest.New(t, "team", "cal-secret")
	llm := llmtest.NewOpenAI(t)
	cfg := binConfig{dir: dir, dbURL: "sqlite://" + dbPath, llmURL: llm.URL, extra: fmt.Sprintf(`channels:
  line: {channel_secret: %q, channel_access_token: "${LINE_TOKEN}", api_base_url: %q, workspace: default}
tasks:
  model: fake/m
  calendar: {url: %q, username: team, password: cal-secret}
`, lineSecret, line.URL(), cal.URL())}
	addr := freeAddr(t)
	p := startServe(t, "serve", cfg, addr, "LINE_TOKEN="+lineToken)

	// The knowledge the Research agent searches.
	api(t, addr, "POST", "/api/kbs", `{"name":"handbook"}`, http.StatusCreated, nil)
	ingestText(t, addr, "handbook", "expenses.txt", "経費精算の締め日は毎月25日です。領収書は経理に提出してください。")

	// 1. A bad signature: 401, nothing made.
	body := linetest.Body("Ubot", linetest.TextEvent("01EV0000000000000000000001", alice, "経費精算の締め日は？", linetest.WithReplyToken(line.IssueReplyToken())))
	if status, b := webhook(t, addr, "wrong-secret", body); status != http.StatusUnauthorized || !strings.Contains(b, "x-line-signature") {
		t.Fatalf("bad signature = %d %s, want 401 naming the signature", status, b)
	}
	if status, _ := webhook(t, addr, "", body); status != http.StatusUnauthorized {
		t.Fatalf("no signature = %d, want 401", status)
	}
	if got := lineTasks(t, addr); len(got) != 0 {
		t.Fatalf("tasks after refused webhooks: %+v", got)
	}

	// 2. A research question: intent, plan, kb_search, answer by reply.
	llm.Push(
		llmtest.Turn{Text: `{"action":"search","object":"document","target":"経費精算の締め日"}`},
		llmtest.Turn{Text: "経費精算の締め日は毎月25日です（出典: expenses.txt）。"},
	)
	if status, b := webhook(t, addr, lineSecret, body); status != http.StatusOK {
		t.Fatalf("webhook = %d %s", status, b)
	}
	eventually(t, 20*time.Second, "the research answer on LINE", func() bool { return containsText(delivered(line), "毎月25日") })
	if len(line.Replies()) != 1 || !containsText(line.Replies()[0].Messages, "毎月25日") {
		t.Errorf("replies %+v; want the answer sent with the message's reply token", line.Replies())
	}
	tasks := lineTasks(t, addr)
	if len(tasks) != 1 || tasks[0].Status != store.TaskDone || tasks[0].Source != "line" || tasks[0].SourceRef != "01EV0000000000000000000001" {
		t.Fatalf("tasks %+v; want one done task from LINE", tasks)
	}
	reqs := llm.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[0].Body), "経費精算の締め日は？") || !strings.Contains(string(reqs[1].Body), "expenses.txt") {
		t.Errorf("model requests: %d; want the intent read from the text, then an answer from the search results", len(reqs))
	}

	// 3. LINE redelivers the same event: no second task, no second answer.
	redelivered := linetest.Body("Ubot", linetest.TextEvent("01EV0000000000000000000001", alice, "経費精算の締め日は？", linetest.Redelivered()))
	if status, _ := webhook(t, addr, lineSecret, redelivered); status != http.StatusOK {
		t.Fatalf("redelivery = %d", status)
	}
	if got := lineTasks(t, addr); len(got) != 1 {
		t.Errorf("tasks after a redelivery: %d, want 1", len(got))
	}
	if len(llm.Requests()) != 2 {
		t.Errorf("the redelivery reached the model (%d requests)", len(llm.Requests()))
	}

	// 4. A calendar event: an approval card; approve creates it once.
	start := time.Now().Add(72 * time.Hour).Truncate(time.Hour).UTC()
	llm.Push(llmtest.Turn{Text: fmt.Sprintf("```json\n{\"action\":\"schedule\",\"object\":\"calendar_event\",\"target\":\"定例会議\",\"when\":%q,\"duration\":\"30m\"}\n```", start.Format(time.RFC3339))})
	if status, _ := webhook(t, addr, lineSecret, linetest.Body("Ubot", linetest.TextEvent("01EV0000000000000000000002", alice, "3日後に定例会議を30分入れて",
		linetest.WithReplyToken(line.IssueReplyToken())))); status != http.StatusOK {
		t.Fatal("webhook failed")
	}
	eventually(t, 20*time.Second, "the approval card", func() bool { return len(approvalCards(delivered(line))) == 1 })
	card := approvalCards(delivered(line))[0]
	if len(card) != 2 || !strings.Contains(card[0], "decision=approve") || !strings.Contains(card[1], "decision=reject") {
		t.Fatalf("card buttons %v; want approve and reject postbacks", card)
	}
	if n := len(cal.Events()); n != 0 {
		t.Fatalf("%d events before approval", n)
	}
	approve := linetest.Body("Ubot", linetest.PostbackEvent("01EV0000000000000000000003", alice, card[0], linetest.WithReplyToken(line.IssueReplyToken())))
	if status, _ := webhook(t, addr, lineSecret, approve); status != http.StatusOK {
		t.Fatal("postback failed")
	}
	eventually(t, 20*time.Second, "the event on the CalDAV server", func() bool { return len(cal.Events()) == 1 })
	// The doubled tap (LINE redelivering the postback) changes nothing.
	if status, _ := webhook(t, addr, lineSecret, linetest.Body("Ubot", linetest.PostbackEvent("01EV0000000000000000000003", alice, card[0], linetest.Redelivered()))); status != http.StatusOK {
		t.Fatal("redelivered postback failed")
	}
	eventually(t, 20*time.Second, "the scheduling task done", func() bool {
		for _, tk := range lineTasks(t, addr) {
			if tk.SourceRef == "01EV0000000000000000000002" {
				return tk.Status == store.TaskDone
			}
		}
		return false
	})
	ev := cal.Events()[0]
	if ev.Summary != "定例会議" || !ev.Start.Equal(start) || !ev.End.Equal(start.Add(30*time.Minute)) || cal.Puts(ev.UID) != 1 {
		t.Errorf("event %+v (puts %d); want 定例会議 at %s for 30m, written once", ev, cal.Puts(ev.UID), start)
	}

	// 5. Another event, rejected: nothing is created.
	llm.Push(llmtest.Turn{Text: fmt.Sprintf(`{"action":"schedule","object":"calendar_event","target":"打ち上げ","when":%q}`, start.Add(24*time.Hour).Format(time.RFC3339))})
	if status, _ := webhook(t, addr, lineSecret, linetest.Body("Ubot", linetest.TextEvent("01EV0000000000000000000004", alice, "4日後に打ち上げを入れて"))); status != http.StatusOK {
		t.Fatal("webhook failed")
	}
	eventually(t, 20*time.Second, "the second approval card", func() bool { return len(approvalCards(delivered(line))) == 2 })
	card2 := approvalCards(delivered(line))[1]
	if status, _ := webhook(t, addr, lineSecret, linetest.Body("Ubot", linetest.PostbackEvent("01EV0000000000000000000005", alice, card2[1], linetest.WithReplyToken(line.IssueReplyToken())))); status != http.StatusOK {
		t.Fatal("reject postback failed")
	}
	eventually(t, 20*time.Second, "the rejected task cancelled", func() bool {
		for _, tk := range lineTasks(t, addr) {
			if tk.SourceRef == "01EV0000000000000000000004" {
				return tk.Status == store.TaskCancelled
			}
		}
		return false
	})
	time.Sleep(300 * time.Millisecond) // a wrongly resumed run would act now
	if n := len(cal.Events()); n != 1 {
		t.Errorf("%d events after a rejection, want still 1", n)
	}
	if got := lineTasks(t, addr); len(got) != 3 {
		t.Errorf("tasks = %d, want 3 (research, approved event, rejected event)", len(got))
	}
	p.kill()
}

// ingestText uploads one text file into knowledge base kb and waits for
// the ingest.
func ingestText(t *testing.T, addr, kb, name, text string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(fw, text)
	mw.Close()
	req, err := http.NewRequestWithContext(t.Context(), "POST", "http://"+addr+"/api/kbs/"+kb+"/ingest?wait=false", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var job store.IngestJob
	err = json.NewDecoder(resp.Body).Decode(&job)
	resp.Body.Close()
	if err != nil || resp.StatusCode >= 300 {
		t.Fatalf("ingest = %d, %v", resp.StatusCode, err)
	}
	eventually(t, 20*time.Second, "the ingest", func() bool {
		var j store.IngestJob
		api(t, addr, "GET", "/api/kbs/"+kb+"/jobs/"+job.ID, "", http.StatusOK, &j)
		return j.Status.Final()
	})
}
