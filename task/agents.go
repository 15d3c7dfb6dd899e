package task

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// Agent is an agent that takes tasks: it says what it can do (for
// GET /api/agents and a marketplace), which intents it handles, and
// makes the plan for one it was given.
type Agent struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Capabilities lists what the agent may do, as "<what>:<capability>"
	// ("knowledge.search:low", "calendar.write:medium").
	Capabilities []string `json:"capabilities"`
	// Handles are its canHandle rules: the router scores an intent by the
	// best rule whose expression holds.
	Handles []Rule `json:"handles"`
	// Plan makes the plan for a task routed to the agent.
	Plan func(ctx context.Context, r PlanRequest) (Plan, error) `json:"-"`
}

// Rule is one canHandle rule: an expr-lang boolean over the intent's
// fields (action, object, target, raw, when, duration) and a score in
// (0, 1]; or, with Judge set instead, a description of what the agent
// handles that a model scores each intent against (Options.Judge), its
// score capped at Score.
type Rule struct {
	When  string  `json:"when,omitempty"`
	Judge string  `json:"judge,omitempty"`
	Score float64 `json:"score"`
}

// Judge scores how well an agent described by what handles an intent,
// from 0 to 1 (ModelJudge asks a model).
type Judge interface {
	Score(ctx context.Context, workspaceID string, in Intent, what string) (float64, error)
}

// PlanRequest is what an agent plans from.
type PlanRequest struct {
	WorkspaceID string
	TaskID      string
	Intent      Intent
	// Model is the model ("provider/model") the task service words
	// answers with; empty when none is configured.
	Model string
	Now   time.Time
}

// ErrNoAgent: no registered agent handles the intent.
var ErrNoAgent = errors.New("task: no agent handles this request")

// Router picks the agent for an intent. It is safe for concurrent use
// once built.
type Router struct {
	agents []routed
}

type routed struct {
	Agent
	rules []*vm.Program
}

// NewRouter compiles the agents' rules; a rule that does not compile is
// an error naming the agent.
func NewRouter(agents ...Agent) (*Router, error) {
	r := &Router{}
	seen := map[string]bool{}
	for _, a := range agents {
		if a.Name == "" || a.Plan == nil {
			return nil, fmt.Errorf("task: agent %q needs a name and a Plan", a.Name)
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("task: agent %q registered twice", a.Name)
		}
		seen[a.Name] = true
		ra := routed{Agent: a}
		for i, rule := range a.Handles {
			if rule.Score <= 0 || rule.Score > 1 {
				return nil, fmt.Errorf("task: agent %s: rule %d: score %v is not in (0, 1]", a.Name, i+1, rule.Score)
			}
			if (rule.When == "") == (rule.Judge == "") {
				return nil, fmt.Errorf("task: agent %s: rule %d: set when (an expression) or judge (a description), not both", a.Name, i+1)
			}
			if rule.Judge != "" {
				ra.rules = append(ra.rules, nil)
				continue
			}
			p, err := expr.Compile(rule.When, expr.Env(intentEnv{}), expr.AsBool())
			if err != nil {
				return nil, fmt.Errorf("task: agent %s: rule %d: %w", a.Name, i+1, err)
			}
			ra.rules = append(ra.rules, p)
		}
		r.agents = append(r.agents, ra)
	}
	return r, nil
}

// intentEnv is what a rule sees.
type intentEnv struct {
	Action   string `expr:"action"`
	Object   string `expr:"object"`
	Target   string `expr:"target"`
	Raw      string `expr:"raw"`
	When     string `expr:"when"`
	Duration string `expr:"duration"`
}

// Agents lists the registered agents in registration order.
func (r *Router) Agents() []Agent {
	out := make([]Agent, len(r.agents))
	for i, a := range r.agents {
		out[i] = a.Agent
	}
	return out
}

// Route returns the agent whose expression rules score the intent
// highest (the first registered on a tie) and the score, or ErrNoAgent.
// Judged rules are left out: RouteJudged asks a model for them.
func (r *Router) Route(in Intent) (Agent, float64, error) {
	return r.RouteJudged(context.Background(), "", in, nil)
}

// RouteJudged is Route with judged rules scored by j (nil leaves them
// out): a model is asked only for agents whose judged rule could beat
// the best expression score.
func (r *Router) RouteJudged(ctx context.Context, workspaceID string, in Intent, j Judge) (Agent, float64, error) {
	env := intentEnv{Action: strings.ToLower(in.Action), Object: strings.ToLower(in.Object), Target: in.Target,
		Raw: in.Raw, When: in.When, Duration: in.Duration}
	var (
		best  *routed
		score float64
	)
	for i := range r.agents {
		a := &r.agents[i]
		for k, p := range a.rules {
			if p == nil {
				continue
			}
			ok, err := expr.Run(p, env)
			if err == nil && ok == true && a.Handles[k].Score > score {
				best, score = a, a.Handles[k].Score
			}
		}
	}
	if j != nil {
		for i := range r.agents {
			a := &r.agents[i]
			for k, p := range a.rules {
				rule := a.Handles[k]
				if p != nil || rule.Score <= score {
					continue
				}
				got, err := j.Score(ctx, workspaceID, in, rule.Judge)
				if err != nil {
					continue // a judge that fails routes nothing
				}
				// Below minJudged the model says "not really": no route.
				if got = min(got, rule.Score); got >= minJudged && got > score {
					best, score = a, got
				}
			}
		}
	}
	if best == nil {
		return Agent{}, 0, fmt.Errorf("%w: action %q, object %q", ErrNoAgent, in.Action, in.Object)
	}
	return best.Agent, score, nil
}

// minJudged is the least judged score that routes.
const minJudged = 0.5

// Built-in agents' names.
const (
	AgentResearch  = "research"
	AgentScheduler = "scheduler"
	AgentAdmin     = "admin"
)

// Tool names the built-in agents plan with.
const (
	ToolKBSearch    = "kb_search"
	ToolCreateEvent = "calendar_create_event"
	ToolRemind      = "task_remind"
)

// BuiltinAgents returns the three agents of the design's MVP: Research
// (knowledge search and a summary; low, sends nothing outside),
// Scheduler (reminders, low; calendar events through CalDAV, medium,
// undone by deleting the event) and Admin (knowledge Q&A, low).
func BuiltinAgents() []Agent {
	return []Agent{
		{
			Name:         AgentResearch,
			Description:  "Searches the workspace's knowledge and summarises what it found, with sources.",
			Capabilities: []string{"knowledge.search:low", "summarize:low"},
			Handles: []Rule{
				{When: `action in ["search", "research", "summarize", "summarise", "find", "investigate", "look_up", "compare"]`, Score: 0.9},
				{When: `object in ["document", "documents", "report", "topic", "knowledge"]`, Score: 0.6},
			},
			Plan: planResearch,
		},
		{
			Name:         AgentScheduler,
			Description:  "Sets reminders (sent on this channel at the time) and creates calendar events over CalDAV after approval.",
			Capabilities: []string{"reminder.create:low", "calendar.write:medium"},
			Handles: []Rule{
				{When: `action in ["schedule", "book", "create_event", "add_event"]`, Score: 0.95},
				{When: `action in ["remind", "reminder", "set_reminder"]`, Score: 0.95},
				// The object alone only decides when no agent claims the
				// action: "summarise yesterday's meeting" or "what is on
				// the calendar tomorrow" is about an event but asks for a
				// read, and must not become a calendar write.
				{When: `object in ["calendar_event", "event", "meeting", "appointment", "reminder"]`, Score: 0.5},
			},
			Plan: planScheduler,
		},
		{
			Name:         AgentAdmin,
			Description:  "Answers questions from the workspace's knowledge.",
			Capabilities: []string{"knowledge.search:low"},
			Handles: []Rule{
				{When: `action in ["answer", "ask", "explain", "question", "help"] || object in ["question", "policy", "faq"]`, Score: 0.8},
			},
			Plan: planAdmin,
		},
	}
}

func planResearch(_ context.Context, r PlanRequest) (Plan, error) {
	topic := firstNonEmpty(r.Intent.Target, r.Intent.Raw)
	p := Plan{Agent: AgentResearch, Steps: []Step{{Tool: ToolKBSearch, Input: map[string]any{"query": topic}, Summary: "search the knowledge for " + quote(topic)}}}
	if r.Model != "" {
		p.Answer = &Answer{Model: r.Model, Question: firstNonEmpty(r.Intent.Raw, topic), Instructions: "You are a research assistant. Summarise what the search found about the request in a few sentences, citing the sources by title. Say plainly when nothing relevant was found."}
	}
	return p, nil
}

func planAdmin(_ context.Context, r PlanRequest) (Plan, error) {
	q := firstNonEmpty(r.Intent.Target, r.Intent.Raw)
	p := Plan{Agent: AgentAdmin, Steps: []Step{{Tool: ToolKBSearch, Input: map[string]any{"query": q}, Summary: "look up " + quote(q) + " in the knowledge"}}}
	if r.Model != "" {
		p.Answer = &Answer{Model: r.Model, Question: firstNonEmpty(r.Intent.Raw, q), Instructions: "Answer the question briefly from the search results only, citing the source titles. If they do not answer it, say so."}
	}
	return p, nil
}

// planScheduler plans a reminder (low) or a calendar event (medium).
func planScheduler(_ context.Context, r PlanRequest) (Plan, error) {
	in := r.Intent
	what := firstNonEmpty(in.Target, in.Raw)
	if in.When == "" {
		return Plan{}, &ClarifyError{Question: "When should it be? Please give a date and time."}
	}
	when, err := parseWhen(in.When, r.Now.Location())
	if err != nil {
		return Plan{}, &ClarifyError{Question: "I could not read the time " + quote(in.When) + "; please give a date and time."}
	}
	if slices.Contains([]string{"remind", "reminder"}, strings.ToLower(in.Action)) || strings.EqualFold(in.Object, "reminder") {
		return Plan{Agent: AgentScheduler, Steps: []Step{{Tool: ToolRemind, Input: map[string]any{"text": what, "at": when.Format(time.RFC3339)},
			Summary: "remind " + quote(what) + " at " + when.Format("2006-01-02 15:04 MST")}}}, nil
	}
	d := time.Hour
	if in.Duration != "" {
		if d, err = parseDuration(in.Duration); err != nil || d <= 0 {
			return Plan{}, &ClarifyError{Question: "How long should " + quote(what) + " be?"}
		}
	}
	return Plan{Agent: AgentScheduler, Steps: []Step{{Tool: ToolCreateEvent,
		Input:   map[string]any{"summary": what, "start": when.Format(time.RFC3339), "end": when.Add(d).Format(time.RFC3339)},
		Summary: "create the calendar event " + quote(what) + " on " + when.Format("2006-01-02 15:04 MST") + " for " + d.String()}}}, nil
}

// zonelessLayouts are the shapes of a time a model writes when it leaves
// out the offset it was asked for.
var zonelessLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"}

// parseWhen reads an intent's time: RFC 3339, or a time without an
// offset ("2030-06-17T15:00:00"), which models asked for RFC 3339 often
// write. That one is read in loc, the zone of the clock the request was
// resolved against (the extraction prompt names it), instead of asking
// the person again for a time they gave.
func parseWhen(s string, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	t, err := time.Parse(time.RFC3339, s)
	if err == nil {
		return t, nil
	}
	for _, layout := range zonelessLayouts {
		if t, zerr := time.ParseInLocation(layout, s, loc); zerr == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}

// parseDuration reads an event's length: a Go duration ("30m", "1h30m")
// as the schema asks, or the ISO 8601 duration models often write
// instead ("PT45M", "PT1H30M"); a length in days or more is not read.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err == nil {
		return d, nil
	}
	if rest, ok := strings.CutPrefix(strings.ToUpper(s), "PT"); ok && rest != "" {
		if d, ierr := time.ParseDuration(strings.ToLower(rest)); ierr == nil {
			return d, nil
		}
	}
	return 0, err
}

// ClarifyError is a plan that cannot be made without an answer from the
// asker: the task ends needs_clarification with Question sent back.
type ClarifyError struct{ Question string }

func (e *ClarifyError) Error() string { return "task: needs clarification: " + e.Question }

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func quote(s string) string {
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return "“" + s + "”"
}
