package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentcraftlab/agentcraft/agent"
	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/run"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/workflow/contract"
)

// Extractor turns a request's text into an intent.
type Extractor interface {
	Extract(ctx context.Context, workspaceID, text string, now time.Time) (Intent, error)
}

// IntentSchema is the JSON Schema contract an extracted intent must meet.
const IntentSchema = `{
  "type": "object",
  "properties": {
    "action": {"type": "string", "description": "what to do, one English verb: search, research, summarize, answer, schedule, remind, ..."},
    "object": {"type": "string", "description": "what it is about: calendar_event, reminder, document, question, ..."},
    "target": {"type": "string", "description": "the specifics: the question, the event's title, the topic, in the request's language"},
    "when": {"type": "string", "description": "the time the request names, RFC 3339 with offset; empty when it names none", "default": ""},
    "duration": {"type": "string", "description": "an event's length as a Go duration such as 30m or 1h; empty when not named", "default": ""},
    "needs_clarification": {"type": "boolean", "description": "true when the request does not say enough to act", "default": false},
    "question": {"type": "string", "description": "when needs_clarification, what to ask back, in the request's language", "default": ""}
  },
  "required": ["action", "object", "target"],
  "additionalProperties": false
}`

// intentInstructions is the extraction prompt; %s is the current time
// and its zone.
const intentInstructions = `You turn a request someone sent to a team assistant into JSON, and nothing else.
The request may be in any language (Japanese, English, Chinese, ...); keep "target" and "question" in the request's language and use English words for "action" and "object".
Actions: "search" / "research" / "summarize" to look into a topic, "answer" for a question about the team's documents or rules, "schedule" to put an event in the calendar, "remind" for a reminder at a time.
Resolve relative times ("tomorrow at 10", "明日10時", "明天下午三點") against the current time %s and write "when" in RFC 3339 with the same offset.
If the request is too vague to act on (no topic, an event without a time, a pronoun with nothing to refer to), set "needs_clarification": true and write the one question to ask back.
Answer with one JSON object matching this schema:
%s`

// ModelExtractor extracts intents with a model through the run seam
// (usage recorded as surface "task"), checking the answer against
// IntentSchema with the workflow contract gate: safe repairs only, and a
// reply that still does not match is an error rather than a guess.
type ModelExtractor struct {
	m      jsonModel
	schema lazySchema
}

// NewModelExtractor extracts with model ("provider/model") of each
// workspace's providers.
func NewModelExtractor(runner *run.Runner, model string) *ModelExtractor {
	return &ModelExtractor{m: jsonModel{runner: runner, model: model, actor: "task-intent"}, schema: lazySchema{src: IntentSchema}}
}

// ErrNoModel: plain-text requests need a model to read them.
var ErrNoModel = errors.New("task: no model is configured to read requests; set tasks.model in agentcraft.yaml, or send a structured intent")

// Extract implements Extractor.
func (m *ModelExtractor) Extract(ctx context.Context, workspaceID, text string, now time.Time) (Intent, error) {
	s, err := m.schema.get()
	if err != nil {
		return Intent{}, err
	}
	reply, err := m.m.ask(ctx, workspaceID, fmt.Sprintf(intentInstructions, now.Format(time.RFC3339)+" ("+now.Weekday().String()+")", IntentSchema), text)
	if err != nil {
		return Intent{}, fmt.Errorf("task: read intent: %w", err)
	}
	return parseIntent(reply, s)
}

// jsonModel asks a model, through the run seam as the system actor
// named actor (surface "task"), for one answer to one message.
type jsonModel struct {
	runner *run.Runner
	model  string
	actor  string
}

func (m jsonModel) ask(ctx context.Context, workspaceID, instructions, message string) (string, error) {
	if m.model == "" {
		return "", ErrNoModel
	}
	a, err := m.runner.Inline(ctx, run.Caller{Principal: run.Principal{WorkspaceID: workspaceID, Actor: run.ActorSystem, ActorID: m.actor},
		Surface: run.SurfaceTask}, store.Agent{Name: m.actor, Model: m.model, Instructions: instructions})
	if err != nil {
		return "", fmt.Errorf("model %s: %w", m.model, err)
	}
	res, err := a.Generate(ctx, agent.Input{Messages: []llm.Message{llm.Text(llm.RoleUser, message)}, Buffered: true})
	if err != nil {
		return "", err
	}
	return res.Message.Text(), nil
}

// lazySchema compiles a contract schema once, on first use.
type lazySchema struct {
	src    string
	once   sync.Once
	schema *contract.Schema
	err    error
}

func (l *lazySchema) get() (*contract.Schema, error) {
	l.once.Do(func() {
		var doc map[string]any
		if l.err = json.Unmarshal([]byte(l.src), &doc); l.err == nil {
			l.schema, l.err = contract.Compile(doc)
		}
	})
	return l.schema, l.err
}

// parseIntent checks a model's reply against the intent contract.
func parseIntent(reply string, s *contract.Schema) (Intent, error) {
	r := contract.Check(reply, s, true, nil)
	if r.Contract.Status == contract.StatusFailed {
		return Intent{}, fmt.Errorf("task: the model's intent breaks its contract: %s", strings.Join(r.Contract.Notes, "; "))
	}
	b, err := json.Marshal(r.Normalized)
	if err != nil {
		return Intent{}, err
	}
	var in Intent
	if err := json.Unmarshal(b, &in); err != nil {
		return Intent{}, fmt.Errorf("task: decode intent: %w", err)
	}
	in.Action, in.Object = strings.ToLower(strings.TrimSpace(in.Action)), strings.ToLower(strings.TrimSpace(in.Object))
	if in.NeedsClarification && strings.TrimSpace(in.Question) == "" {
		in.Question = "Could you say a little more about what you need?"
	}
	return in, nil
}

// judgeInstructions asks for a score; %s is what the agent handles.
const judgeInstructions = `You route requests to agents. An agent's owner describes what it handles as:
%s
Rate from 0 to 1 how well that agent can handle the request the user sends (as a structured intent): 1 when it is exactly what the agent is for, 0 when it is not.
Answer with one JSON object {"score": <number>} and nothing else.`

const judgeSchema = `{"type":"object","properties":{"score":{"type":"number","minimum":0,"maximum":1}},"required":["score"],"additionalProperties":false}`

// ModelJudge scores judged canHandle rules with a model through the run
// seam (surface "task"), its answer checked against a contract.
type ModelJudge struct {
	m      jsonModel
	schema lazySchema
}

// NewModelJudge judges with model ("provider/model").
func NewModelJudge(runner *run.Runner, model string) *ModelJudge {
	return &ModelJudge{m: jsonModel{runner: runner, model: model, actor: "task-router"}, schema: lazySchema{src: judgeSchema}}
}

// Score implements Judge.
func (m *ModelJudge) Score(ctx context.Context, workspaceID string, in Intent, what string) (float64, error) {
	s, err := m.schema.get()
	if err != nil {
		return 0, err
	}
	b, _ := json.Marshal(in)
	reply, err := m.m.ask(ctx, workspaceID, fmt.Sprintf(judgeInstructions, what), string(b))
	if err != nil {
		return 0, fmt.Errorf("task: judge: %w", err)
	}
	r := contract.Check(reply, s, true, nil)
	if r.Contract.Status == contract.StatusFailed {
		return 0, fmt.Errorf("task: the judge's answer breaks its contract: %s", strings.Join(r.Contract.Notes, "; "))
	}
	var out struct {
		Score float64 `json:"score"`
	}
	if b, err = json.Marshal(r.Normalized); err == nil {
		err = json.Unmarshal(b, &out)
	}
	return out.Score, err
}
