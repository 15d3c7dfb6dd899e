package task_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/server/servertest"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
	"github.com/agentcraftlab/agentcraft/workflow/contract"
)

// intentNow is the clock of the intent tests: a Wednesday morning in
// Tokyo, so "tomorrow" is Thursday the 13th, "Friday" the 14th, "next
// Monday" the 17th and 下週二 Tuesday the 18th.
var intentNow = time.Date(2030, time.June, 12, 9, 30, 0, 0, time.FixedZone("JST", 9*60*60))

// How a request ends when submitted as plain text.
type ending int

const (
	endDone     ending = iota // the run ran and the task is done
	endApproval               // the task waits for approval of its calendar write
	endClarify                // the task is cancelled with a question for the asker
	endError                  // the model's reply breaks the contract: Submit errs, no task
)

// intentOf is what an extraction is judged on.
type intentOf struct {
	Action, Object, When, Duration string
	NeedsClarification             bool
}

// phrasing is one request, what the fake model replies to it, and what
// must become of it.
type phrasing struct {
	lang, text string
	// reply is the model's whole answer, shaped as real models shape it.
	reply string
	want  intentOf
	// agent is the agent the router picks; "" is ErrNoAgent.
	agent string
	end   ending
	// step describes the first planned step (see plannedStep) of a task
	// that runs or waits for approval.
	step string
}

// phrasings are requests in Japanese, English and Chinese: research,
// Q&A, calendar events and reminders with times, and ambiguous ones.
// The replies vary the shapes models produce, so that the contract
// gate's repairs (fence, preamble, wrapper, string booleans, defaults)
// are all needed somewhere.
var phrasings = []phrasing{
	// Japanese.
	{lang: "ja", text: "経費精算のルールを調べて",
		reply: `{"action":"research","object":"policy","target":"経費精算のルール"}`,
		want:  intentOf{Action: "research", Object: "policy"}, agent: task.AgentResearch, end: endDone,
		step: "kb_search 経費精算のルール"},
	{lang: "ja", text: "有給は何日？",
		reply: "```json\n{\"action\":\"answer\",\"object\":\"question\",\"target\":\"有給休暇の日数\",\"when\":\"\",\"duration\":\"\",\"needs_clarification\":false,\"question\":\"\"}\n```",
		want:  intentOf{Action: "answer", Object: "question"}, agent: task.AgentAdmin, end: endDone,
		step: "kb_search 有給休暇の日数"},
	{lang: "ja", text: "明日10時に定例会議を30分入れて",
		reply: "承知しました。以下がJSONです。\n{\"action\":\"schedule\",\"object\":\"calendar_event\",\"target\":\"定例会議\",\"when\":\"2030-06-13T10:00:00+09:00\",\"duration\":\"30m\"}",
		want:  intentOf{Action: "schedule", Object: "calendar_event", When: "2030-06-13T10:00:00+09:00", Duration: "30m"}, agent: task.AgentScheduler, end: endApproval,
		step: "calendar_create_event 定例会議 2030-06-13T10:00:00+09:00 → 2030-06-13T10:30:00+09:00"},
	{lang: "ja", text: "金曜の朝9時に請求書の件をリマインドして",
		reply: `{"result":{"action":"remind","object":"reminder","target":"請求書の件","when":"2030-06-14T09:00:00+09:00"}}`,
		want:  intentOf{Action: "remind", Object: "reminder", When: "2030-06-14T09:00:00+09:00"}, agent: task.AgentScheduler, end: endDone,
		step: "task_remind 請求書の件 2030-06-14T09:00:00+09:00"},
	{lang: "ja", text: "あれやっといて",
		reply: `{"action":"unknown","object":"unknown","target":"あれ","needs_clarification":"true","question":"「あれ」とは何のことでしょうか？"}`,
		want:  intentOf{Action: "unknown", Object: "unknown", NeedsClarification: true}, agent: "", end: endClarify},
	{lang: "ja", text: "薬を飲むのをリマインドして", // a reminder without a time
		reply: `{"action":"remind","object":"reminder","target":"薬を飲む"}`,
		want:  intentOf{Action: "remind", Object: "reminder"}, agent: task.AgentScheduler, end: endClarify},
	{lang: "ja", text: "来週どこかで会議を入れて", // an event without a time
		reply: `{"action":"schedule","object":"calendar_event","target":"会議","needs_clarification":true,"question":"何曜日の何時からにしますか？"}`,
		want:  intentOf{Action: "schedule", Object: "calendar_event", NeedsClarification: true}, agent: task.AgentScheduler, end: endClarify},
	{lang: "ja", text: "社内wikiで新人研修の資料を探して",
		reply: "```\n{\"action\":\"search\",\"object\":\"document\",\"target\":\"新人研修の資料\"}\n```",
		want:  intentOf{Action: "search", Object: "document"}, agent: task.AgentResearch, end: endDone,
		step: "kb_search 新人研修の資料"},
	{lang: "ja", text: "明日の予定は？", // a question about the calendar is no request to write to it
		reply: `{"action":"answer","object":"calendar_event","target":"明日の予定","when":"2030-06-13T00:00:00+09:00"}`,
		want:  intentOf{Action: "answer", Object: "calendar_event", When: "2030-06-13T00:00:00+09:00"}, agent: task.AgentAdmin, end: endDone,
		step: "kb_search 明日の予定"},
	{lang: "ja", text: "昨日の会議の議事録を要約して",
		reply: `{"action":"summarize","object":"meeting","target":"昨日の会議の議事録"}`,
		want:  intentOf{Action: "summarize", Object: "meeting"}, agent: task.AgentResearch, end: endDone,
		step: "kb_search 昨日の会議の議事録"},
	{lang: "ja", text: "来週の月曜15時に佐藤さんと打ち合わせを入れて", // the model leaves out the offset
		reply: `{"action":"schedule","object":"calendar_event","target":"佐藤さんと打ち合わせ","when":"2030-06-17T15:00:00"}`,
		want:  intentOf{Action: "schedule", Object: "calendar_event", When: "2030-06-17T15:00:00"}, agent: task.AgentScheduler, end: endApproval,
		step: "calendar_create_event 佐藤さんと打ち合わせ 2030-06-17T15:00:00+09:00 → 2030-06-17T16:00:00+09:00"},
	{lang: "ja", text: "この文章を英語に翻訳して",
		reply: `{"action":"translate","object":"text","target":"この文章"}`,
		want:  intentOf{Action: "translate", Object: "text"}, agent: "", end: endClarify},
	{lang: "ja", text: "経費の締め日はいつ？", // the model answers instead of extracting
		reply: "経費精算の締め日は毎月25日です。",
		end:   endError},
	{lang: "ja", text: "出張規程について教えて",
		reply: "{\"action\":\"explain\",\"object\":\"policy\",\"target\":\"出張規程\"}\n\n以上です。",
		want:  intentOf{Action: "explain", Object: "policy"}, agent: task.AgentAdmin, end: endDone,
		step: "kb_search 出張規程"},

	// English.
	{lang: "en", text: "Find our travel policy",
		reply: `{"action":"find","object":"policy","target":"travel policy"}`,
		want:  intentOf{Action: "find", Object: "policy"}, agent: task.AgentResearch, end: endDone,
		step: "kb_search travel policy"},
	{lang: "en", text: "How many vacation days do I get?",
		reply: `{"action":"answer","object":"question","target":"How many vacation days do I get?","needs_clarification":false}`,
		want:  intentOf{Action: "answer", Object: "question"}, agent: task.AgentAdmin, end: endDone,
		step: "kb_search How many vacation days do I get?"},
	{lang: "en", text: "Book a meeting with Sato next Monday at 3pm",
		reply: "```json\n{\"action\":\"book\",\"object\":\"meeting\",\"target\":\"Meeting with Sato\",\"when\":\"2030-06-17T15:00:00+09:00\",\"duration\":\"\"}\n```",
		want:  intentOf{Action: "book", Object: "meeting", When: "2030-06-17T15:00:00+09:00"}, agent: task.AgentScheduler, end: endApproval,
		step: "calendar_create_event Meeting with Sato 2030-06-17T15:00:00+09:00 → 2030-06-17T16:00:00+09:00"},
	{lang: "en", text: "Remind me to call the bank at 5pm",
		reply: "Sure! Here's the JSON:\n\n{\"action\":\"Remind\",\"object\":\"Reminder\",\"target\":\"call the bank\",\"when\":\"2030-06-12T17:00:00+09:00\"}",
		want:  intentOf{Action: "remind", Object: "reminder", When: "2030-06-12T17:00:00+09:00"}, agent: task.AgentScheduler, end: endDone,
		step: "task_remind call the bank 2030-06-12T17:00:00+09:00"},
	{lang: "en", text: "Do the thing",
		reply: `{"action":"","object":"","target":"the thing","needs_clarification":true,"question":"Which thing would you like me to do?"}`,
		want:  intentOf{NeedsClarification: true}, agent: "", end: endClarify},
	{lang: "en", text: "Remind me to submit the report", // a reminder without a time
		reply: `{"result":{"action":"remind","object":"reminder","target":"submit the report"}}`,
		want:  intentOf{Action: "remind", Object: "reminder"}, agent: task.AgentScheduler, end: endClarify},
	{lang: "en", text: "Set up a call with the design team", // an event without a time
		reply: `{"action":"schedule","object":"calendar_event","target":"Call with the design team","when":null,"duration":null}`,
		want:  intentOf{Action: "schedule", Object: "calendar_event"}, agent: task.AgentScheduler, end: endClarify},
	{lang: "en", text: "Summarize the Q3 sales report",
		reply: `{"data":{"action":"summarize","object":"report","target":"Q3 sales report"}}`,
		want:  intentOf{Action: "summarize", Object: "report"}, agent: task.AgentResearch, end: endDone,
		step: "kb_search Q3 sales report"},
	{lang: "en", text: "Schedule a 1:1 with Maria tomorrow at 10:30 for 45 minutes", // an ISO 8601 duration
		reply: `{"action":"schedule","object":"calendar_event","target":"1:1 with Maria","when":"2030-06-13T10:30:00+09:00","duration":"PT45M"}`,
		want:  intentOf{Action: "schedule", Object: "calendar_event", When: "2030-06-13T10:30:00+09:00", Duration: "PT45M"}, agent: task.AgentScheduler, end: endApproval,
		step: "calendar_create_event 1:1 with Maria 2030-06-13T10:30:00+09:00 → 2030-06-13T11:15:00+09:00"},
	{lang: "en", text: "What's the dress code?",
		reply: `{"intent":{"action":"answer","object":"policy","target":"dress code"}}`,
		want:  intentOf{Action: "answer", Object: "policy"}, agent: task.AgentAdmin, end: endDone,
		step: "kb_search dress code"},
	{lang: "en", text: "Look up the onboarding checklist",
		reply: `{"action":"look_up","object":"document","target":"onboarding checklist","when":"","duration":""}`,
		want:  intentOf{Action: "look_up", Object: "document"}, agent: task.AgentResearch, end: endDone,
		step: "kb_search onboarding checklist"},
	{lang: "en", text: "Can you help?", // no action: the contract refuses it
		reply: `{"object":"question","target":"help","needs_clarification":true,"question":"What do you need help with?"}`,
		end:   endError},
	{lang: "en", text: "Order pizza for the team",
		reply: `{"action":"order","object":"food","target":"pizza for the team"}`,
		want:  intentOf{Action: "order", Object: "food"}, agent: "", end: endClarify},
	{lang: "en", text: "What meetings do I have tomorrow?", // a read, not a booking
		reply: `{"action":"search","object":"calendar_event","target":"tomorrow's meetings","when":"2030-06-13T00:00:00+09:00"}`,
		want:  intentOf{Action: "search", Object: "calendar_event", When: "2030-06-13T00:00:00+09:00"}, agent: task.AgentResearch, end: endDone,
		step: "kb_search tomorrow's meetings"},

	// Chinese, Traditional and Simplified.
	{lang: "zh", text: "幫我查一下請假規定",
		reply: `{"action":"search","object":"policy","target":"請假規定"}`,
		want:  intentOf{Action: "search", Object: "policy"}, agent: task.AgentResearch, end: endDone,
		step: "kb_search 請假規定"},
	{lang: "zh", text: "年假有幾天？",
		reply: "```json\n{\"action\":\"answer\",\"object\":\"question\",\"target\":\"年假天數\"}\n```",
		want:  intentOf{Action: "answer", Object: "question"}, agent: task.AgentAdmin, end: endDone,
		step: "kb_search 年假天數"},
	{lang: "zh", text: "下週二下午三點安排會議",
		reply: "好的，以下是 JSON：\n{\"action\":\"schedule\",\"object\":\"calendar_event\",\"target\":\"會議\",\"when\":\"2030-06-18T15:00:00+09:00\",\"duration\":\"1h\"}",
		want:  intentOf{Action: "schedule", Object: "calendar_event", When: "2030-06-18T15:00:00+09:00", Duration: "1h"}, agent: task.AgentScheduler, end: endApproval,
		step: "calendar_create_event 會議 2030-06-18T15:00:00+09:00 → 2030-06-18T16:00:00+09:00"},
	{lang: "zh", text: "明天早上八點提醒我吃藥",
		reply: `{"action":"remind","object":"reminder","target":"吃藥","when":"2030-06-13T08:00:00+09:00","needs_clarification":"false"}`,
		want:  intentOf{Action: "remind", Object: "reminder", When: "2030-06-13T08:00:00+09:00"}, agent: task.AgentScheduler, end: endDone,
		step: "task_remind 吃藥 2030-06-13T08:00:00+09:00"},
	{lang: "zh", text: "那個處理一下",
		reply: `{"action":"unknown","object":"unknown","target":"那個","needs_clarification":"true","question":"請問「那個」指的是什麼？"}`,
		want:  intentOf{Action: "unknown", Object: "unknown", NeedsClarification: true}, agent: "", end: endClarify},
	{lang: "zh", text: "提醒我交報告", // a reminder without a time
		reply: `{"action":"remind","object":"reminder","target":"交報告","when":"","needs_clarification":true,"question":"請問要在什麼時候提醒您？"}`,
		want:  intentOf{Action: "remind", Object: "reminder", NeedsClarification: true}, agent: task.AgentScheduler, end: endClarify},
	{lang: "zh", text: "帮我总结一下上周的项目周报",
		reply: `{"action":"summarize","object":"report","target":"上周的项目周报"}`,
		want:  intentOf{Action: "summarize", Object: "report"}, agent: task.AgentResearch, end: endDone,
		step: "kb_search 上周的项目周报"},
	{lang: "zh", text: "报销流程是什么？",
		reply: `{"response":{"action":"answer","object":"faq","target":"报销流程"}}`,
		want:  intentOf{Action: "answer", Object: "faq"}, agent: task.AgentAdmin, end: endDone,
		step: "kb_search 报销流程"},
	{lang: "zh", text: "明天下午两点和客户开会，一个小时",
		reply: "```json\n{\"action\":\"schedule\",\"object\":\"meeting\",\"target\":\"和客户开会\",\"when\":\"2030-06-13T14:00:00+09:00\",\"duration\":\"1h\"}\n```\n时间按东京时间计算。",
		want:  intentOf{Action: "schedule", Object: "meeting", When: "2030-06-13T14:00:00+09:00", Duration: "1h"}, agent: task.AgentScheduler, end: endApproval,
		step: "calendar_create_event 和客户开会 2030-06-13T14:00:00+09:00 → 2030-06-13T15:00:00+09:00"},
	{lang: "zh", text: "幫我安排會議", // an event without a time
		reply: `{"action":"schedule","object":"calendar_event","target":"會議"}`,
		want:  intentOf{Action: "schedule", Object: "calendar_event"}, agent: task.AgentScheduler, end: endClarify},
	{lang: "zh", text: "查一下明天有什麼會議", // a read, not a booking
		reply: `{"action":"search","object":"meeting","target":"明天的會議","when":"2030-06-13T00:00:00+09:00"}`,
		want:  intentOf{Action: "search", Object: "meeting", When: "2030-06-13T00:00:00+09:00"}, agent: task.AgentResearch, end: endDone,
		step: "kb_search 明天的會議"},
	{lang: "zh", text: "下午5點提醒我開會", // the model leaves out the offset
		reply: `{"action":"remind","object":"reminder","target":"開會","when":"2030-06-12T17:00:00"}`,
		want:  intentOf{Action: "remind", Object: "reminder", When: "2030-06-12T17:00:00"}, agent: task.AgentScheduler, end: endDone,
		step: "task_remind 開會 2030-06-12T17:00:00+09:00"},
	{lang: "zh", text: "天气怎么样？",
		reply: `{"action":"check","object":"weather","target":"天气"}`,
		want:  intentOf{Action: "check", Object: "weather"}, agent: "", end: endClarify},
	{lang: "zh", text: "帮我找一下员工手册", // the model stopped mid-answer
		reply: `{"action":"search","object":"document","target":"员工手`,
		end:   endError},
}

func TestPhrasingsCoverEachLanguage(t *testing.T) {
	got := map[string]int{}
	for _, p := range phrasings {
		got[p.lang]++
	}
	for _, lang := range []string{"ja", "en", "zh"} {
		if got[lang] < 12 {
			t.Errorf("%d %s phrasings, want at least 12", got[lang], lang)
		}
	}
}

// intentEnv is a server whose only provider is the fake model, and a task
// service over its store that reads plain text with a ModelExtractor.
type intentEnv struct {
	*env
	fake    *llmtest.Server
	extract *task.ModelExtractor
	router  *task.Router
}

func newIntentEnv(t *testing.T) *intentEnv {
	t.Helper()
	fake := llmtest.NewOpenAI(t)
	srv := servertest.New(t, &servertest.Options{Providers: []platform.ProviderConfig{servertest.FakeProvider(fake)}})
	ex := task.NewModelExtractor(srv.Runner, "fake/fake-model")
	router, err := task.NewRouter(task.BuiltinAgents()...)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{store: srv.Store, workspace: srv.Workspace.ID, extractor: ex, now: func() time.Time { return intentNow }})
	return &intentEnv{env: e, fake: fake, extract: ex, router: router}
}

// sentMessages returns the role and text of each message of the fake's
// last request.
func (e *intentEnv) sentMessages(t *testing.T) (model string, msgs [][2]string) {
	t.Helper()
	reqs := e.fake.Requests()
	if len(reqs) == 0 {
		t.Fatal("the fake model received no request")
	}
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	for _, m := range body.Messages {
		var text string
		if err := json.Unmarshal(m.Content, &text); err != nil { // content as parts
			var parts []struct{ Text string }
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				t.Fatalf("message content %s: %v", m.Content, err)
			}
			for _, p := range parts {
				text += p.Text
			}
		}
		msgs = append(msgs, [2]string{m.Role, text})
	}
	return body.Model, msgs
}

func TestIntentFromPhrasings(t *testing.T) {
	e := newIntentEnv(t)
	for i, p := range phrasings {
		t.Run(fmt.Sprintf("%s/%02d", p.lang, i), func(t *testing.T) {
			t.Logf("%s → %s", p.text, p.reply)
			e.fake.Push(llmtest.Turn{Text: p.reply})
			in, err := e.extract.Extract(t.Context(), e.ws, p.text, intentNow)

			model, msgs := e.sentMessages(t)
			if model != "fake-model" {
				t.Errorf("model sent %q, want fake-model", model)
			}
			if len(msgs) != 2 || msgs[0][0] != "system" || msgs[1][0] != "user" {
				t.Fatalf("messages %q; want the instructions, then the request", msgs)
			}
			if msgs[1][1] != p.text {
				t.Errorf("user message %q, want the phrasing %q", msgs[1][1], p.text)
			}
			if sys := msgs[0][1]; !strings.Contains(sys, intentNow.Format(time.RFC3339)) || !strings.Contains(sys, "Wednesday") {
				t.Errorf("instructions do not name the current time %s (Wednesday):\n%s", intentNow.Format(time.RFC3339), sys)
			}

			if p.end == endError {
				if err == nil {
					t.Fatalf("Extract(%q) = %+v; want an error for a reply that breaks the contract", p.reply, in)
				}
				e.submitBroken(t, p, i)
				return
			}
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			got := intentOf{Action: in.Action, Object: in.Object, When: in.When, Duration: in.Duration, NeedsClarification: in.NeedsClarification}
			if diff := cmp.Diff(p.want, got); diff != "" {
				t.Errorf("intent (-want +got):\n%s", diff)
			}
			if in.NeedsClarification && in.Question == "" {
				t.Errorf("an ambiguous intent without a question: %+v", in)
			}

			ag, _, err := e.router.Route(in)
			switch {
			case p.agent == "" && !errors.Is(err, task.ErrNoAgent):
				t.Errorf("Route = %s, %v; want ErrNoAgent", ag.Name, err)
			case p.agent != "" && (err != nil || ag.Name != p.agent):
				t.Errorf("Route = %q, %v; want %s", ag.Name, err, p.agent)
			}

			e.submitText(t, p, i, in)
		})
	}
	if n := e.fake.Remaining(); n != 0 {
		t.Errorf("%d scripted replies left unread", n)
	}
}

// submitText submits the phrasing as plain text, the model answering as
// it did to Extract, and checks how the task ends.
func (e *intentEnv) submitText(t *testing.T, p phrasing, i int, extracted task.Intent) {
	t.Helper()
	e.fake.Push(llmtest.Turn{Text: p.reply})
	out, err := e.svc.Submit(t.Context(), task.Request{WorkspaceID: e.ws, Text: p.text, Source: "line", SourceRef: fmt.Sprint("phrasing-", i),
		Requester: alice, ReplyTo: task.Address{Channel: "line", Target: "Ualice"}})
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if _, msgs := e.sentMessages(t); msgs[len(msgs)-1][1] != p.text {
		t.Errorf("Submit sent %q to the model, want the phrasing", msgs[len(msgs)-1][1])
	}
	if p.end == endClarify {
		if out.Question == "" || out.Task.Status != store.TaskCancelled || out.RunID != "" || out.Agent != "" {
			t.Fatalf("outcome %s; want a question and a cancelled task without a run", brief(out))
		}
		if extracted.NeedsClarification && out.Question != extracted.Question {
			t.Errorf("question %q, want the model's %q", out.Question, extracted.Question)
		}
		evs, err := e.st.Tasks().Events(t.Context(), e.ws, out.Task.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		last := evs[len(evs)-1]
		var note struct{ Reason, Question string }
		_ = json.Unmarshal(last.Payload, &note)
		if last.Type != store.TaskEventNote || note.Reason != task.NeedsClarification || note.Question != out.Question {
			t.Errorf("last event %s %s; want the needs_clarification note with the question", last.Type, last.Payload)
		}
		return
	}
	if out.Agent != p.agent || out.RunID == "" || out.Question != "" {
		t.Fatalf("outcome %s; want agent %s and a run", brief(out), p.agent)
	}
	want := store.TaskDone
	if p.end == endApproval {
		want = store.TaskAwaitingApproval
	}
	e.waitTask(t, out.Task.ID, want)
	if got := plannedStep(t, e.env, out.Task.ID); got != p.step {
		t.Errorf("planned step %q, want %q", got, p.step)
	}
}

// brief shows what a failing test needs of an outcome.
func brief(o task.Outcome) string {
	return fmt.Sprintf("{task %s %s, intent %s, agent %q, run %q, question %q}", o.Task.ID, o.Task.Status, o.Task.Intent, o.Agent, o.RunID, o.Question)
}

// submitBroken checks that a reply breaking the contract fails Submit and
// makes no task.
func (e *intentEnv) submitBroken(t *testing.T, p phrasing, i int) {
	t.Helper()
	e.fake.Push(llmtest.Turn{Text: p.reply})
	ref := fmt.Sprint("phrasing-", i)
	out, err := e.svc.Submit(t.Context(), task.Request{WorkspaceID: e.ws, Text: p.text, Source: "line", SourceRef: ref, Requester: alice})
	if err == nil {
		t.Fatalf("Submit = %s; want an error", brief(out))
	}
	if !strings.Contains(err.Error(), "contract") {
		t.Errorf("Submit error %q does not say the reply broke the contract", err)
	}
	if tk, err := e.st.Tasks().GetBySource(t.Context(), e.ws, "line", ref); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a broken reply made task %+v (%v)", tk, err)
	}
}

// plannedStep describes the first step of the task's plan: the tool and
// what it acts on, with the times as the tool receives them.
func plannedStep(t *testing.T, e *env, taskID string) string {
	t.Helper()
	evs, err := e.st.Tasks().Events(t.Context(), e.ws, taskID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Type != store.TaskEventPlanned {
			continue
		}
		var p struct{ Plan task.Plan }
		if err := json.Unmarshal(ev.Payload, &p); err != nil || len(p.Plan.Steps) == 0 {
			t.Fatalf("planned event %s: %v", ev.Payload, err)
		}
		s := p.Plan.Steps[0]
		switch s.Tool {
		case task.ToolKBSearch:
			return fmt.Sprint(s.Tool, " ", s.Input["query"])
		case task.ToolRemind:
			return fmt.Sprint(s.Tool, " ", s.Input["text"], " ", s.Input["at"])
		case task.ToolCreateEvent:
			return fmt.Sprint(s.Tool, " ", s.Input["summary"], " ", s.Input["start"], " → ", s.Input["end"])
		}
		return s.Tool
	}
	t.Fatalf("task %s has no planned event", taskID)
	return ""
}

func BenchmarkRoute(b *testing.B) {
	r, err := task.NewRouter(task.BuiltinAgents()...)
	if err != nil {
		b.Fatal(err)
	}
	in := task.Intent{Action: "schedule", Object: "calendar_event", Target: "定例会議", Raw: "明日10時に定例会議を30分入れて",
		When: "2030-06-13T10:00:00+09:00", Duration: "30m"}
	b.ReportAllocs()
	for b.Loop() {
		if a, _, err := r.Route(in); err != nil || a.Name != task.AgentScheduler {
			b.Fatalf("Route = %s, %v", a.Name, err)
		}
	}
}

func BenchmarkParseIntent(b *testing.B) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(task.IntentSchema), &doc); err != nil {
		b.Fatal(err)
	}
	s, err := contract.Compile(doc)
	if err != nil {
		b.Fatal(err)
	}
	// A typical reply: a sentence of preamble, a fence, optional fields
	// left out (defaults filled).
	reply := "承知しました。\n```json\n{\"action\":\"schedule\",\"object\":\"calendar_event\",\"target\":\"定例会議\",\"when\":\"2030-06-13T10:00:00+09:00\",\"duration\":\"30m\"}\n```"
	b.ReportAllocs()
	for b.Loop() {
		if in, err := task.ParseIntent(reply, s); err != nil || in.Action != "schedule" {
			b.Fatalf("ParseIntent = %+v, %v", in, err)
		}
	}
}
