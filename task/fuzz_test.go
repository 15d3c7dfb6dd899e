package task_test

import (
	"encoding/json"
	"testing"

	"github.com/agentcraftlab/agentcraft/task"
	"github.com/agentcraftlab/agentcraft/workflow/contract"
)

// FuzzParseIntent: whatever a model replies, reading its intent never
// panics, and an intent that needs clarification always carries the
// question to send back.
func FuzzParseIntent(f *testing.F) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(task.IntentSchema), &doc); err != nil {
		f.Fatal(err)
	}
	schema, err := contract.Compile(doc)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		`{"action":"search","object":"document","target":"経費"}`,
		"```json\n{\"action\":\"schedule\",\"object\":\"calendar_event\",\"target\":\"会議\",\"when\":\"2030-01-01T10:00:00+09:00\"}\n```",
		`{"result":{"action":"remind","object":"reminder","target":"薬"}}`,
		`{"action":"","object":"","target":"","needs_clarification":"true"}`,
		`not json at all`, `{"action": 3}`, `[]`, `{`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		in, err := task.ParseIntent(reply, schema)
		if err != nil {
			return
		}
		if in.NeedsClarification && in.Question == "" {
			t.Fatalf("needs_clarification without a question: %+v", in)
		}
	})
}
