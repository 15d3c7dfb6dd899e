package platform_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentcraftlab/agentcraft/llm"
	"github.com/agentcraftlab/agentcraft/llm/llmtest"
	"github.com/agentcraftlab/agentcraft/platform"
	"github.com/agentcraftlab/agentcraft/skill"
	"github.com/agentcraftlab/agentcraft/store"
)

// Three skills whose instructions each carry a marker no description has.
var skillFixtures = []skill.Skill{
	{Name: "expense-report", Description: "File an expense report.", Instructions: "EXPENSE-MARKER: attach every receipt."},
	{Name: "meeting-minutes", Description: "Write minutes of a meeting.", Instructions: "MINUTES-MARKER: decisions first.",
		Files: []skill.File{{Path: "templates/minutes.md", Data: []byte("## Decisions\n")}}},
	{Name: "travel-policy", Description: "Answer questions on business travel.", Instructions: "TRAVEL-MARKER: economy class below 6 hours."},
}

func TestAgentSkillsProgressiveDisclosure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t,
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "load_skill", Arguments: `{"name":"meeting-minutes"}`}}},
		llmtest.Turn{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "read_skill_file", Arguments: `{"skill":"meeting-minutes","path":"templates/minutes.md"}`}}},
		llmtest.Turn{Text: "Minutes follow."},
	)
	st := newStore(t)
	p := newPlatform(t, st, platform.Options{Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")}})
	ws := p.DefaultWorkspace().ID
	for _, s := range skillFixtures {
		if _, err := p.Skills().Create(ctx, ws, s); err != nil {
			t.Fatal(err)
		}
	}
	spec := platform.AgentSpec{Name: "assistant", Model: "fake/fake-model", Instructions: "You help the office.",
		Skills: []string{"expense-report", "meeting-minutes", "travel-policy"}}
	row, err := spec.Row(ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.CreateAgent(ctx, row); err != nil {
		t.Fatalf("CreateAgent = %v", err)
	}
	a, err := p.Agent(ctx, ws, "assistant")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ask(ctx, a)
	if err != nil {
		t.Fatalf("run = %v", err)
	}
	if res.Message.Text() != "Minutes follow." {
		t.Errorf("answer = %q", res.Message.Text())
	}

	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	first, second, third := string(reqs[0].Body), string(reqs[1].Body), string(reqs[2].Body)
	for _, want := range []string{"You help the office.", "expense-report — File an expense report.",
		"meeting-minutes — Write minutes of a meeting.", "travel-policy — Answer questions on business travel.",
		`"name":"load_skill"`, `"name":"read_skill_file"`} {
		if !strings.Contains(first, want) {
			t.Errorf("first request lacks %q", want)
		}
	}
	for _, marker := range []string{"EXPENSE-MARKER", "MINUTES-MARKER", "TRAVEL-MARKER"} {
		if strings.Contains(first, marker) {
			t.Errorf("first request holds %s: instructions must wait for load_skill", marker)
		}
	}
	if !strings.Contains(second, "MINUTES-MARKER") || !strings.Contains(second, "templates/minutes.md") {
		t.Errorf("second request lacks the loaded skill's instructions and file list:\n%s", second)
	}
	for _, marker := range []string{"EXPENSE-MARKER", "TRAVEL-MARKER"} {
		if strings.Contains(second, marker) {
			t.Errorf("second request holds %s, a skill that was not loaded", marker)
		}
	}
	if !strings.Contains(third, "## Decisions") {
		t.Errorf("third request lacks the file read_skill_file returned")
	}
}

func TestAgentSkillsFollowEdits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "one"}, llmtest.Turn{Text: "two"}, llmtest.Turn{Text: "three"})
	st := newStore(t)
	p := newPlatform(t, st, platform.Options{Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")}})
	ws := p.DefaultWorkspace().ID
	if _, err := p.Skills().Create(ctx, ws, skillFixtures[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: ws, Name: "a", Model: "fake/m",
		Params: store.AgentParams{Skills: []string{"expense-report", "meeting-notes"}}}); err != nil {
		t.Fatal(err)
	}
	run := func() string {
		t.Helper()
		a, err := p.Agent(ctx, ws, "a")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ask(ctx, a); err != nil {
			t.Fatal(err)
		}
		reqs := fake.Requests()
		return string(reqs[len(reqs)-1].Body)
	}
	if body := run(); !strings.Contains(body, "File an expense report.") || !strings.Contains(body, "meeting-notes — Turn a meeting") {
		t.Errorf("request lacks the stored and the built-in skill's descriptions:\n%s", body)
	}
	// An edit in this process applies to the next run.
	edited := skillFixtures[0]
	edited.Description = "File an expense report within 30 days."
	if _, err := p.Skills().Update(ctx, ws, edited); err != nil {
		t.Fatal(err)
	}
	if body := run(); !strings.Contains(body, "within 30 days") {
		t.Errorf("request after the edit lacks the new description")
	}
	// Deleted: the agent runs on without it, warned.
	if err := p.Skills().Delete(ctx, ws, "expense-report"); err != nil {
		t.Fatal(err)
	}
	a, err := p.Agent(ctx, ws, "a")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Runtime.Warnings) != 1 || !strings.Contains(a.Runtime.Warnings[0], "expense-report") {
		t.Errorf("warnings = %v, want the deleted skill named", a.Runtime.Warnings)
	}
	if body := run(); strings.Contains(body, "expense-report") || !strings.Contains(body, "meeting-notes") {
		t.Errorf("request after the delete still lists it, or lost the other")
	}
}

func TestAgentSkillsChecked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t)
	st := newStore(t)
	p := newPlatform(t, st, platform.Options{Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")}})
	ws := p.DefaultWorkspace().ID
	_, err := p.CreateAgent(ctx, store.Agent{WorkspaceID: ws, Name: "a", Model: "fake/m",
		Params: store.AgentParams{Skills: []string{"meeting-notes", "no-such-skill"}}})
	var ne *skill.NameError
	if !errors.Is(err, platform.ErrInvalidAgent) || !errors.As(err, &ne) || ne.Index != 1 {
		t.Errorf("CreateAgent(unknown skill) = %v; want ErrInvalidAgent naming skills[1]", err)
	}

	// A file agent naming an unknown skill stops the platform, naming
	// agents[i].skills[j].
	_, err = platform.New(ctx, st, newBox(t), &platform.Options{
		Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")},
		OllamaURL: deadURL, Getenv: func(string) string { return "" },
		Agents: []platform.AgentSpec{
			{Name: "ok", Model: "fake/m", Skills: []string{"meeting-notes"}},
			{Name: "bad", Model: "fake/m", Skills: []string{"writing-style-guide", "ghost"}},
		},
	})
	if err == nil || !strings.Contains(err.Error(), `agents[1].skills[1]: "ghost"`) {
		t.Errorf("New(file agent with an unknown skill) = %v; want agents[1].skills[1] named", err)
	}
}

func TestAgentSkillsFollowOtherProcesses(t *testing.T) { // not parallel: SetAgentRecheck
	platform.SetAgentRecheck(t, 0) // re-read on every call, as after 2 s
	ctx := context.Background()
	fake := llmtest.NewOpenAI(t, llmtest.Turn{Text: "one"}, llmtest.Turn{Text: "two"})
	st := newStore(t)
	opts := platform.Options{Providers: []platform.ProviderConfig{fakeProvider("fake", fake, "k")}}
	here, there := newPlatform(t, st, opts), newPlatform(t, st, opts)
	ws := here.DefaultWorkspace().ID
	if _, err := here.Skills().Create(ctx, ws, skillFixtures[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := here.CreateAgent(ctx, store.Agent{WorkspaceID: ws, Name: "a", Model: "fake/m",
		Params: store.AgentParams{Skills: []string{"travel-policy"}}}); err != nil {
		t.Fatal(err)
	}
	a, err := here.Agent(ctx, ws, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ask(ctx, a); err != nil {
		t.Fatal(err)
	}
	edited := skillFixtures[2]
	edited.Description = "Answer questions on business travel and per diems."
	if _, err := there.Skills().Update(ctx, ws, edited); err != nil {
		t.Fatal(err)
	}
	a, err = here.Agent(ctx, ws, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ask(ctx, a); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if body := string(reqs[1].Body); !strings.Contains(body, "per diems") {
		t.Errorf("the edit another process made did not reach the agent:\n%s", body)
	}
}
